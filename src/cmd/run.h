/* run.h: the main job, `mpirun -np N ddpbench [options]`: parse the configuration, start MPI, choose the
 * device and comm the same way on every rank, bind and report the topology, run the phases, verify that
 * every rank ended with the same weights, gather everything to rank 0, print and write the results. Every
 * failure comes back here and leaves through dist_abort, so no rank is left waiting for another. */
#ifndef DDPBENCH_RUN_H
#define DDPBENCH_RUN_H

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the process exit code (0 ok, 1 verification failed, 2 bad input); runtime errors abort the job
 * with exit code 3. */
int run_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
