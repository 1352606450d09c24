/* stats.h: order statistics of a sample of step times: median, p10, p90, min, max, mean. Percentiles are
 * linearly interpolated between closest ranks (numpy's default), so p50 of an even count is the mean of
 * the two middle values. Pure: no I/O, the input is not modified. */
#ifndef DDPBENCH_STATS_H
#define DDPBENCH_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double median, p10, p90, min, max, mean;
  int n;
} ddp_stats;

/* q in [0, 1]. x need not be sorted; n >= 1. */
double stats_percentile(const double *x, int n, double q);
/* All of ddp_stats at once (NaN fields when n == 0). */
ddp_stats stats_compute(const double *x, int n);

#ifdef __cplusplus
}
#endif
#endif
