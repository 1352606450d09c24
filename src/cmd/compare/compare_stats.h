/* compare_stats.h: the two-sample statistics behind `ddpbench compare`: the Mann-Whitney U test (two-sided;
 * exact distribution for small samples without ties, normal approximation with tie and continuity correction
 * otherwise, as scipy.stats.mannwhitneyu computes them) and the distribution-free confidence interval of a
 * location shift that inverts the same test (Hodges-Lehmann / Moses). Pure: no I/O, no allocation that
 * outlives a call, the inputs are not modified; every result is checked against scipy in tests/. */
#ifndef DDPBENCH_COMPARE_STATS_H
#define DDPBENCH_COMPARE_STATS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Largest side for which the exact null distribution of U is used (when neither side has ties). */
#define MWU_EXACT_MAX 50

typedef struct {
  double u;   /* U of the first sample: #{(i,j): x_i > y_j} + 0.5 #{x_i == y_j} (scipy's statistic) */
  double p;   /* two-sided p-value in [0, 1] */
  int exact;  /* 1: exact null distribution; 0: normal approximation */
} mwu_result;

/* Two-sided Mann-Whitney U test of x (nx) against y (ny), both >= 1 and finite. Returns 0, or -1 when an
 * argument is out of range or memory runs out. All values tied gives p = 1. */
int mwu_test(const double *x, int nx, const double *y, int ny, mwu_result *out);

/* Confidence interval (level 1 - alpha) of the shift d in "y - d has the distribution of x": the set of d
 * for which mwu_test(x, y - d) gives p >= alpha, i.e. [D(k), D(nx*ny+1-k)] over the sorted pairwise
 * differences D = y_j - x_i. The exact distribution is used under the same condition as mwu_test's, with
 * only the ties inside each sample counted (a shifted sample ties the other only at the D themselves).
 * Returns 0 with *lo, *hi set; 1 when the samples are too small for any shift to be rejected at alpha
 * (*lo = -inf, *hi = +inf); -1 on bad arguments or no memory. */
int shift_ci(const double *x, int nx, const double *y, int ny, double alpha, double *lo, double *hi);

/* The k-th smallest (1-based, 1 <= k <= nx*ny) of the differences y_j - x_i, without forming them:
 * O((nx + ny) log) time. xs and ys must be sorted ascending. */
double pairwise_diff_kth(const double *xs, int nx, const double *ys, int ny, long long k);

#ifdef __cplusplus
}
#endif
#endif
