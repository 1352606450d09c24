/* commands.h: the subcommands of ddpbench, each a cmd_def (cmd.h) in its own file, and their table. */
#ifndef DDPBENCH_COMMANDS_H
#define DDPBENCH_COMMANDS_H

#include "cmd.h"
#include "default_job.h" /* accept_soak.c reaches cmd_gpu_default through here; not a subcommand */

#ifdef __cplusplus
extern "C" {
#endif

extern const cmd_def cmd_run, cmd_accept, cmd_collectives, cmd_doctor, cmd_topo, cmd_compare, cmd_export, cmd_judge;

/* All of them, NULL-terminated (commands.c). */
extern const cmd_def *const ddpbench_commands[];

#ifdef __cplusplus
}
#endif
#endif
