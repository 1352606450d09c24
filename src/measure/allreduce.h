/* allreduce.h: the "allreduce" measurement (allreduce.c): in-place fp32 allreduces over a group at a few
 * sizes, nccl-tests' busbw of the median over iterations of each iteration's slowest rank. Acceptance runs it
 * over each node and over node pairs (with its own sizes); a run's --groups over any group.
 *
 * defines: measure_allreduce, allreduce_params, ALLREDUCE_MAX_SIZES */
#ifndef DDPBENCH_ALLREDUCE_H
#define DDPBENCH_ALLREDUCE_H

#include "measure.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ALLREDUCE_MAX_SIZES 4
typedef struct {
  int nsizes;
  double mib[ALLREDUCE_MAX_SIZES]; /* message sizes, MiB */
  int iters;                        /* timed allreduces per size (after one warm-up) */
} allreduce_params;
/* Per size, a record busbw_gbs labelled bytes, ranks (the group's size) and the group's host ("host" when it is
 * one host, else "hosts", comma-separated in rank order). Options allreduce_mib (64) and allreduce_iters (5). */
extern const measurement measure_allreduce;

#ifdef __cplusplus
}
#endif
#endif
