/* accept_main.h: `ddpbench accept`, the per-GPU and per-node acceptance checks (accept_main.c). */
#ifndef DDPBENCH_ACCEPT_MAIN_H
#define DDPBENCH_ACCEPT_MAIN_H

#include "dist.h"

/* Runs the checks on every rank of d; returns the process exit code (same on every rank): 0 pass, 2 bad
 * input, 4 a check failed (--strict: or warned). Runtime errors end the job through dist_abort. */
int accept_main(const ddp_dist *d, int argc, char **argv);

#endif
