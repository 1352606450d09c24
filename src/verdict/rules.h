/* rules.h: the judgement rules of cluster acceptance, as pure functions over measured numbers: the
 * straggler rule, relative checks against peers of the same GPU model, warn/fail verdicts with a margin,
 * the node-pair schedule (tournament, ring) and the localisation of a slow node or a slow pair from the pair
 * matrix, and the link checks. No measuring, no MPI, no printing here: callers measure, these
 * functions judge, and every verdict they return carries the numbers it was made from.
 *
 * defines: accept_robust_z, accept_stragglers, straggler_judge, straggler_gap, straggler_spread,
 *          straggler_baseline_floor, steady_judge, accept_group_median, accept_judge,
 *          accept_relative_small, accept_localize, accept_link_checks */
#ifndef DDPBENCH_RULES_H
#define DDPBENCH_RULES_H

#include <stddef.h>

#include "common.h"
#include "pairs.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { ACCEPT_PASS = 0, ACCEPT_WARN, ACCEPT_FAIL } accept_severity;
const char *accept_severity_str(accept_severity s); /* "pass", "warn", "fail" */

/* ---- robust statistics ---- */

/* Iglewicz-Hoaglin modified z-scores: z[i] = 0.6745 (x[i] - median) / MAD. When MAD is 0 (more than half
 * the values equal) the mean absolute deviation stands in: z = (x - median) / (1.253314 * meanAD). Both 0:
 * all z = 0. Returns the median. z may be NULL. */
double accept_robust_z(const double *x, int n, double *z);

/* The straggler rule: value i (a median compute time: larger is slower) is a straggler when it is more than
 * pct % above the median of all values AND its robust z-score exceeds zmin (3.5 by convention). Both are
 * needed: the percentage alone names noise on a quiet job, the z-score alone names a 0.2 % outlier on a job
 * where every rank is within 0.2 %. Writes the indices to out (capacity n) and the z-scores to z (may be
 * NULL); returns their count. Fewer than 3 values: nobody (a z-score over 2 values is always 0.6745). */
int accept_stragglers(const double *x, int n, double pct, double zmin, int *out, double *z);

/* The run's straggler rule (docs/straggler.md), over each rank's step statistics st[W] (median, p10, p90 and
 * the timed steps n of its compute time, or of its step time where compute was not timed):
 *  - too short to judge (too_short = 1, nobody named) below min_steps timed steps, or when the median rank's
 *    median is below min_ms: a few steps of microseconds give gaps that flip from run to run;
 *  - otherwise the gap that may name a rank is threshold_pct = max(pct, floor_pct): the user's --straggler-pct
 *    and the run-to-run floor (the largest gap identical healthy runs showed: the device's, or a --baseline's
 *    straggler_baseline_floor);
 *  - 3 ranks or more: rank i is named (who[], n_named) when its median is beyond the threshold over the
 *    median rank's, its robust z-score exceeds 3.5 (accept_stragglers), and its p10 is above the median
 *    rank's p90 (slower beyond the steps' noise);
 *  - 2 ranks: nobody can be named; pair_warn = 1 when the slower is beyond the threshold and its p10 above
 *    the other's p90 (one of the two is off, which one cannot be told).
 * slowest, excess (its median over the median rank's, minus 1), median and z[] (may be NULL) are filled in
 * every case. DDP_ERR_SYSTEM when out of memory (nothing judged). */
typedef struct {
  double pct, floor_pct, min_ms;
  int min_steps;
} straggler_rule;
typedef struct {
  int too_short, n_named, pair_warn, slowest, steps;
  double threshold_pct, median, excess;
} straggler_verdict;
enum { STRAGGLER_MIN_STEPS = 10 };
ddp_result straggler_judge(const ddp_stats *st, int W, const straggler_rule *rule, int *who, double *z,
                           straggler_verdict *v);

/* --baseline (docs/straggler.md, "A baseline's spread"): the floor from earlier healthy runs of the same job
 * instead of the device's. straggler_gap: the slowest of med[W] over their median, minus 1, in % (the excess
 * straggler_judge measures; NaN when W < 1 or the median is not above 0). straggler_spread: the largest gap over
 * nruns runs, med[nruns][W] (each run's per-rank medians, run-major); NaN when a run has no gap.
 * straggler_baseline_floor: spread x (1 + STRAGGLER_BASELINE_MARGIN) + STRAGGLER_BASELINE_MARGIN_PP, the floor_pct
 * of the rule (the largest of a few runs' gaps underestimates the next healthy run's: half again covers that; the
 * point covers a spread near 0, where timer and scheduler jitter alone move a gap by a fraction of a percent). */
#define STRAGGLER_BASELINE_MARGIN 0.5
#define STRAGGLER_BASELINE_MARGIN_PP 1.0
double straggler_gap(const double *med, int W);
double straggler_spread(const double *med, int nruns, int W);
double straggler_baseline_floor(double spread_pct);

/* The steady-state rule (docs/steady.md), over one rank's timed step times x[n] in the order they ran: the
 * drift is the second half's median over the first half's, minus 1. Judged (judged = 1) from
 * STEADY_MIN_STEPS steps on; the phase did not hold one state (drifted = 1) when |drift| is beyond floor_pct
 * (the device's floor: what identical healthy runs drift by) and beyond the halves' noise,
 * |z| > STEADY_ZMIN with z = (m2 - m1) / sqrt(se1^2 + se2^2) and se = 1.2533 * 1.4826 * MAD / sqrt(half), a
 * median's standard error from a robust sigma (so a few outliers neither make nor hide a drift). NaN steps
 * (none timed) judge nothing. DDP_ERR_SYSTEM when out of memory. */
typedef struct {
  int judged, drifted, n;
  double first_ms, second_ms, drift, z;
} steady_verdict;
enum { STEADY_MIN_STEPS = 20 };
#define STEADY_ZMIN 5.0
ddp_result steady_judge(const double *x, int n, double floor_pct, steady_verdict *v);

/* Relative reference: ref[i] = median of the x[j] whose group[j] equals group[i] (the GPU model, say),
 * x[i] included. NaN values are ignored; a group with no finite value gives NaN. */
void accept_group_median(const double *x, const char *const *group, int n, double *ref);
/* As accept_group_median, and z[i] = value i's robust z-score within its group (accept_robust_z over the
 * group's finite values), size[i] = how many finite values its group has. A relative verdict needs both a
 * margin and an outlier: a group of fewer than 4 (a MAD over 3 values is noise), or |z| <= 3.5, names nobody. */
void accept_group_stats(const double *x, const char *const *group, int n, double *ref, double *z, int *size);
/* The relative verdict of value x against its group (higher is better): accept_judge against ref, then
 * downgraded to pass unless the group has >= 4 values and z < -zmin (an outlier on the bad side). */
accept_severity accept_relative(double x, double ref, double z, int size, double warn_pct, double fail_pct,
                                double zmin, double *margin_pct);

/* The relative verdict of a GPU in a group of 2 or 3 of its model, where a MAD across GPUs is noise and
 * accept_relative names nobody. The noise comes from each GPU's own repeats instead: spread[j] is GPU j's robust
 * spread on a log scale (for a GEMM, the largest |ln| of its first- and last-second medians over its run median:
 * how far its per-interval figures wandered; NaN: not measured). Beyond the floor, a gap must pass 5 x 5 % = 25 %
 * on a log scale (the slower at 78 % of the reference) to be named. The rule, higher is better:
 *  - noise = the largest finite spread[j] of the group, at least ACCEPT_SMALL_NOISE_FLOOR (5 %: what healthy parts
 *    of one model differ by, board to board and run to run, which a run's own repeats do not show: a few % between
 *    GPUs, up to 20 % between CPU ranks sharing cores); NaN when no GPU of the group measured one;
 *  - reference: the median of 3; with 2, the other GPU. gap = ln(ref / x[i]), margin = x[i] / ref - 1;
 *  - short of the reference by more than fail_pct AND gap beyond ACCEPT_SMALL_K (5) noise units: FAIL, except with
 *    2 GPUs when the faster one is not known healthy (top_ok = 0: it has no floor, or is below it): then WARN
 *    "cannot tell which of the two", since a pair's gap says one is off, not which;
 *  - short by more than fail_pct but within K noise units (or the noise unmeasured): WARN "cannot tell", with
 *    what would decide it (more intervals, a --baseline);
 *  - short by more than warn_pct: WARN when beyond K noise units (and, with 2, top_ok), PASS otherwise;
 *  - otherwise PASS.
 * cannot_tell = 1 on the WARNs that say "cannot tell"; why holds the sentence the finding carries. */
#define ACCEPT_SMALL_K 5.0
#define ACCEPT_SMALL_NOISE_FLOOR 0.05
typedef struct {
  accept_severity sev;
  int cannot_tell;
  double ref, margin_pct, gap, noise;
  char why[224];
} accept_small_verdict;
void accept_relative_small(const double *x, const double *spread, int n, int i, double warn_pct, double fail_pct,
                           int top_ok, accept_small_verdict *v);

/* Verdict of measured against expected, with the margin (measured - expected) / expected in %.
 * higher_better: fail when measured < expected (1 - fail_pct/100), warn when below expected (1 - warn_pct/100);
 * lower_better mirrors it above. A missing measurement or expectation (NaN) fails closed for the measured
 * side (ACCEPT_FAIL, margin NaN) and passes for the expected side (nothing to judge: ACCEPT_PASS, NaN). */
accept_severity accept_judge(double measured, double expected, int higher_better, double warn_pct,
                             double fail_pct, double *margin_pct);

/* ---- a GPU's links, as NVML reads them ---- */

/* What the link checks need of a GPU (the device layer's nvml_gpu, or the records a run wrote). */
typedef struct {
  int known;                                                   /* 0: NVML could not tell; nothing is checked */
  int nvlink_known, links_active, links_total;
  unsigned pcie_gen, pcie_gen_max, pcie_width, pcie_width_max; /* 0 = unknown */
} accept_links;

typedef struct {
  accept_severity sev;
  char check[16];         /* "nvlink", "pcie_width", "pcie_gen" */
  double measured, expected;
  char text[192];
} accept_link_verdict;

/* The link checks of one GPU: NVLinks down (active < total while the GPU has any
 * active link) fail where the part is an SXM part of the expectations table (sxm = 1) and warn elsewhere (PCIe
 * and NVL cards may have fewer links by design); a PCIe width below the maximum fails (a lane trained down is a
 * fault at any load); a generation below the maximum warns (an idle GPU lowers its generation to save power;
 * the bandwidth check under load is the judge). Writes at most 3 verdicts, only the failing or warning ones;
 * returns their count (0: links as they should be, or NVML could not tell). */
int accept_link_checks(const accept_links *g, int sxm, accept_link_verdict *out);

/* ---- node pairs (their schedule: pairs.h) ---- */

/* Localisation from a pair matrix. value[p] is pair p's bandwidth (higher is better; NaN = not measured).
 * A pair is slow when below (1 - slow_pct/100) of the reference, the median over healthy nodes of each
 * node's median pair value (robust while fewer than half a node's partners are bad), AND an outlier: its
 * shortfall, log(reference / value), exceeds zmin (3.5) robust standard deviations of the pairs' log-ratios
 * between healthy-looking nodes (so a noisy fabric names nobody). A node is bad when it
 * has at least two measured pairs with healthy partners and all of them are slow; bad nodes are taken
 * worst first and their pairs set aside before the next is looked for, so two bad nodes do not make their
 * common partners look bad. A slow pair between two healthy nodes is named as a pair (the path). */
typedef struct {
  double reference;  /* the pair reference after the bad nodes were set aside */
  double scale;      /* the pairs' robust standard deviation of log(value / reference) (0: no noise at all) */
  int *node_bad;     /* [nnodes] 1 = every pair of this node is slow */
  double *node_value;/* [nnodes] median of the node's pair values */
  int *pair_state;   /* [npairs] 0 fine, 1 slow pair (path), 2 slow because a bad node is in it, -1 unmeasured */
} accept_localization;

/* Fills loc (its arrays are allocated here; free with accept_localization_free). */
ddp_result accept_localize(int nnodes, const node_pair *pairs, const double *value, int npairs,
                           double slow_pct, double zmin, accept_localization *loc);
void accept_localization_free(accept_localization *loc);

#ifdef __cplusplus
}
#endif
#endif
