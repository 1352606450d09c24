/* commands.c: the table of ddpbench's subcommands, in the order --help lists them. A new subcommand: its
 * file (a cmd_def, cmd.h) and one line here. */
#include "commands.h"

const cmd_def *const ddpbench_commands[] = {&cmd_run,  &cmd_accept,  &cmd_collectives, &cmd_doctor,
                                            &cmd_topo, &cmd_compare, &cmd_export, &cmd_judge,      NULL};
