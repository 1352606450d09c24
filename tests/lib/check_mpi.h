/* check_mpi.h: check.h's closing line for a test that runs on several ranks: the pass/fail counts summed over
 * MPI_COMM_WORLD, printed once by rank 0, the same exit status on every rank. Header-only, like check.h, whose
 * counters are per program: include it after check.h. */
#ifndef DDPBENCH_TESTS_CHECK_MPI_H
#define DDPBENCH_TESTS_CHECK_MPI_H

#include <mpi.h>

#include "check.h"

/* Collective over MPI_COMM_WORLD: sums the counts over ranks (every rank holds the sums afterwards); rank 0
 * prints the closing line; every rank returns its status. */
static inline int check_summary_world(void) {
  int counts[2] = {check_passed_, check_failed_}, rank, rc = 0;
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  check_passed_ = counts[0];
  check_failed_ = counts[1];
  if (rank == 0) rc = check_summary();
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc;
}

#endif
