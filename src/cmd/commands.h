/* commands.h: the subcommands of ddpbench, each a cmd_def (cmd.h) in its own file, and their table. */
#ifndef DDPBENCH_COMMANDS_H
#define DDPBENCH_COMMANDS_H

#include "cmd.h"
#include "gpu_default.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const cmd_def cmd_run, cmd_accept, cmd_collectives, cmd_doctor, cmd_topo, cmd_compare, cmd_export;
/* The GPU default job's model for this job (run.c; collective over d->world): gpu_default_size from the
 * smallest GPU memory of the job (*mem, bytes), its bf16 peak (*peak, 0 when unknown) and the GPUs per node;
 * *fits = 0 when that memory is below 2 GiB (g is then not set). The run's default job and accept --soak's
 * training size their model with it. */
ddp_result cmd_gpu_default(const ddp_dist *d, const ddp_device *dev, gpu_default *g, double *mem, double *peak,
                           int *fits);

/* All of them, NULL-terminated (commands.c). */
extern const cmd_def *const ddpbench_commands[];

#ifdef __cplusplus
}
#endif
#endif
