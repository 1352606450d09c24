/* pair_model.h: the measurement model of node-pair bandwidth and the posterior it gives: for every node and
 * every measured path the probability that it is bad, a drain list with its expected false drains and misses,
 * the grey-zone nodes with the evidence that would decide them, and the "cannot tell: every pair at one level"
 * state. Pure arithmetic on numbers the caller measured: no MPI, no I/O, no printing, no global state; every
 * answer carries the figures it was made from (scale, healthy level, states summed).
 *
 * The model (docs/design/noise-model.md says it in an operator's words). One iteration k of pair (i,j) in
 * round r gives the log busbw
 *     y = mu + o_r + min(a_i, a_j, e_ij) + s * eps
 * mu the healthy level; o_r the round's offset (drift, shared load; see round_offsets); a_i = log(1 - d_i)
 * the node's level, d_i its degradation; e_ij = 0 for a good path, log(1 - d) for a bad one (prior
 * path_prior); eps noise with a Student-t (3 dof) tail downwards and a Gaussian tail upwards (a pair cannot
 * beat its slower end's healthy rate by more than the noise), and a fraction PM_OUTLIER_FRAC of iterations
 * from a wide t(3) either way (a hiccup, a flapping link's good moment: one iteration must not decide a node);
 * s the scale, from the spread between repeats of the same pair in the same round.
 * A node is bad when d_i > bad_pct. Prior: P(bad) = prior; a bad node's d is log-uniform on (bad_pct, PM_BAD_MAX);
 * a good node's d is 0 with probability 0.8, else uniform on (0, bad_pct). A bad path's d has the bad prior.
 * Inference: exact sum over the 2^N good/bad states of the nodes (N <= PM_MAX_NODES; the sum stops once a whole
 * number of bad nodes carries under 1e-12 of the mass and less than the number before), the healthy level summed
 * on a grid, each bad node's degradation summed over 16 bins of equal prior mass (each bin's likelihood averaged
 * on sub-levels half a scale apart). Approximations, each measured by test_pair_model_sim: a good node's slight
 * slowness (under bad_pct) takes its single most likely value in its pairs, the prior weight of the levels that
 * fit as well paid once per node (each end of a slightly slow pair pays it: P(bad) reads high among 2-4 nodes;
 * good_levels_exact sums them exactly instead); pairs between two bad
 * nodes are independent given each end's posterior from its pairs with good nodes (exact for two bad nodes).
 *
 * defines: pm_opts, pm_obs, pm_grey, pm_result, pm_state, pm_opts_default, pm_judge, pm_state_str,
 *          pm_noise_logpdf, PM_MAX_NODES, PM_EXACT_GOOD_MAX, PM_OUTLIER_FRAC, PM_OUTLIER_SCALE,
 *          PM_SCALE_DIFF_MEDIAN */
#ifndef DDPBENCH_PAIR_MODEL_H
#define DDPBENCH_PAIR_MODEL_H

#ifdef __cplusplus
extern "C" {
#endif

#define PM_MAX_NODES 16
/* The deepest slowdown a bad node or path may have: a pair stalled to 0.0012 GB/s among pairs at 0.5-0.9 (a path
 * at 20 Mbit/s, 99.8 % down) fitted no level of the 95 % it stopped at before, and with the iterations' weight below 1
 * its path was not named; 99.9 % (a thousandth of the healthy level) is deeper than the tests shape */
#define PM_BAD_MAX 0.999
#define PM_EXACT_GOOD_MAX 12 /* good_levels_exact: the most nodes summed exactly (2^n sets, n 2^n steps) */
#define PM_OUTLIER_FRAC 0.01  /* iterations that follow neither tail: from t(3) at PM_OUTLIER_SCALE scales */
#define PM_OUTLIER_SCALE 3.0
/* The median of |x - y| for x, y independent draws of the unit noise eps (Monte Carlo, 4e6 pairs: 1.0880;
 * test_pair_model_sim checks it): the run's scale is the median |difference| of repeats over this. */
#define PM_SCALE_DIFF_MEDIAN 1.0880

typedef struct {
  double bad_pct;          /* a node or path is bad when its figure is more than this below healthy (0.10) */
  double prior;            /* P(a node is bad) before the run (0.01); < 0: estimate (N >= 64, not yet: TODO) */
  double path_prior;       /* P(a path is bad) (0.001) */
  double drain_threshold;  /* drain a node when P(bad) > this (0.5) */
  double grey_lo;          /* grey zone: grey_lo < P(bad) < grey_hi and not drained... (0.05) */
  double grey_hi;          /* ...or drained with P(bad) < grey_hi (0.95) */
  /* The healthy level from earlier runs: its log busbw, its between-run standard deviation (log) and the
   * number of runs it comes from. With fewer than 3 runs the spread is at least log(1 + baseline_cv). */
  int have_baseline;
  double baseline_log, baseline_sd, baseline_cv;
  int baseline_runs;
  double scale;            /* > 0: the noise scale s (log) to use instead of the run's repeats */
  double scale_floor;      /* the least scale believed (0.002: 0.2 %), whatever the repeats say */
  double scale_default;    /* the scale when the run has no repeats and none is given (0.03) */
  /* 1: estimate each round's offset o_r from its second-highest pair (rounds of 4 pairs or more). 0 (the
   * default): o_r = 0, drift left to the noise's lower tail. The estimate misleads when a round holds fewer
   * than 2 healthy pairs (test_pair_model_sim measured it: a quarter of 8 nodes slow moved the healthy level
   * up by 3 baseline spreads and drained healthy nodes); a fit of o_r inside the model is still to come. */
  int round_offsets;
  int gauss_likelihood;    /* 1: a Gaussian likelihood instead of the skewed t (tests show what it costs) */
  /* 1: sum the good nodes' slight slowness exactly (n <= PM_EXACT_GOOD_MAX; above, as 0). 0 (the default): each
   * good node's single most likely level. The exact sum is calibrated on the model's own noise, where 0 states
   * P(bad) too high for a slightly slow node among 2-4; under Student-t noise it states the misses too low for
   * 1 slow of 2 and 3 slow of 4 with a baseline (docs/design/noise-model.md has the figures of both). Its
   * p_path of a pair between good nodes still comes from their single most likely levels: it can name a path for
   * a pair the exact sum explains by a slightly slow end (a 7 % pair of 2 nodes: 0.32). */
  int good_levels_exact;
  /* (0, 1]: what one iteration counts for in a pair's likelihood (0 is taken as 1). Iterations of one pass that
   * move together (a burst of load, a round-mate's share of the fabric) are worth fewer independent ones: summed at
   * full weight, 10 iterations of a pair's lucky pass set the healthy level with the weight of 10 (pair_judge.c
   * sets it from how the passes' medians differ against the iterations' spread inside a pass). */
  double iter_weight;
} pm_opts;

pm_opts pm_opts_default(void);

/* One iteration of one pair: nodes a != b in [0, n), the round it ran in (any integer id; rounds of the
 * same id share an offset; a second pass is a new id), y = log busbw. Keep every iteration. */
typedef struct {
  int a, b, round;
  double y;
} pm_obs;

typedef enum {
  PM_OK = 0,            /* the posterior below is the answer */
  PM_CANNOT_TELL,       /* "cannot tell: every pair at one level", no baseline and: half the nodes or more
                         * look slow; or no node and no path differs (all healthy and all but one slow look
                         * alike); or 2 nodes (one pair cannot separate its ends). p_node etc. still given:
                         * the nodes named are slower than the rest, but the rest are not shown healthy */
  PM_BAD_INPUT,         /* why in result.why; nothing else is filled */
} pm_state;
const char *pm_state_str(pm_state s); /* "ok", "cannot tell: every pair at one level", "bad input" */

typedef struct {
  int node;
  double p;             /* its P(bad) */
  int pairs_needed;     /* pair rounds with nodes that passed that would decide it (P < grey_lo or > grey_hi)
                         * if its level is what the run suggests; 99: not within reach, needs a baseline or
                         * less noise */
} pm_grey;

typedef struct {
  pm_state state;
  char why[160];                       /* PM_BAD_INPUT, PM_CANNOT_TELL: the reason in words */
  int n;                               /* nodes */
  double p_node[PM_MAX_NODES];         /* P(node bad) */
  double d_node[PM_MAX_NODES];         /* E[degradation | bad] (fraction), the size of the gap if bad */
  double p_path[PM_MAX_NODES][PM_MAX_NODES]; /* P(path bad), symmetric; -1 for a pair never measured */
  int drain[PM_MAX_NODES], ndrain;     /* nodes with P(bad) > drain_threshold, ascending */
  double exp_false_drains;             /* sum over drained of 1 - p */
  double exp_misses;                   /* sum over not drained of p */
  double exp_bad;                      /* sum of p: the expected number of bad nodes */
  double p_half_bad;                   /* P(half the nodes or more are bad) */
  pm_grey grey[PM_MAX_NODES];
  int ngrey;
  /* what the answer was made from */
  double scale;                        /* s used (log) */
  int scale_from_repeats;              /* 1: from the run's repeats; 0: given or default */
  long scale_diffs;                    /* differences of repeats it came from */
  double mu;                           /* posterior mean healthy level (log) */
  double prior_used;
  long states;                         /* node states summed */
  double mass_dropped;                 /* the share of the last number of bad nodes summed, where the sum
                                        * stopped: the ones after it carry less (0: all 2^N summed) */
} pm_result;

/* The posterior for n nodes (2 <= n <= PM_MAX_NODES) from obs[0..nobs). Bad input (n out of range, a node
 * index out of range or a == b, a non-finite y, options out of range, no observation): PM_BAD_INPUT with the
 * reason. Fills *r in full; allocates nothing that outlives the call. Returns r->state. */
pm_state pm_judge(int n, const pm_obs *obs, int nobs, const pm_opts *o, pm_result *r);

/* log density of s*eps at x (the noise above): t(3) below 0, Gaussian above, continuous at 0, mixed with the
 * outliers' wide t(3). */
double pm_noise_logpdf(double x, double s);

#ifdef __cplusplus
}
#endif
#endif
