/* pair_judge.h: the node-pair verdict of an acceptance run from the pair model (pair_model.h): the model's
 * observations read from a result document, its options from the acceptance rules, and its answer written as
 * findings. A node whose P(bad) exceeds the drain threshold fails on its host (so the drain list has it); a bad
 * path between two nodes that stay fails as the path "a<->b", never as its hosts (a warning, "cannot tell", when it
 * was not slow in every pass, or when every pair of its round in the run's schedule is named with it: pairs that run
 * at once share the fabric); a node in the grey zone is a
 * warning of check PAIR_RETEST_CHECK on its host (--retest-hosts lists them; never drained, even with --strict);
 * "cannot tell: every pair at one level" is a warning, never a pass. With one figure per pair (no repeats: the
 * noise not measured) nothing is drained or failed on the model's word: those nodes are retested, paths warned. Every node's P(bad) is an info finding of
 * check PAIR_PROB_CHECK (measured = P(bad)): the JSON and Prometheus read it there. One info finding of check
 * "pair_model" states the list's expected false drains and misses and what they assume. Pure: no MPI, no I/O.
 *
 * defines: pair_judge, pair_judge_obs, pair_judge_opts, pair_retest_text, accept_baseline_pair_level,
 *          PAIR_PROB_CHECK, PAIR_RETEST_CHECK, PAIR_BAD_PCT_{MIN,MAX}, PAIR_PRIOR_{MIN,MAX}, PAIR_DRAIN_{MIN,MAX},
 *          PAIR_BASELINE_CV */
#ifndef DDPBENCH_PAIR_JUDGE_H
#define DDPBENCH_PAIR_JUDGE_H

#include <stddef.h>

#include "accept_verdicts.h"
#include "pair_model.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PAIR_PROB_CHECK "pair_bad_probability" /* src/result/prom.c reads findings of this check */
#define PAIR_RETEST_CHECK "pair_retest"
#define PAIR_BAD_PCT_MAX 89 /* the model's bad levels span --bad-pct to PM_BAD_MAX (99.9 %) */
/* the options' ranges, the same in accept and judge: --bad-pct (PCT), --prior-bad, --drain-threshold */
#define PAIR_BAD_PCT_MIN 0.1
#define PAIR_PRIOR_MIN 1e-6
#define PAIR_PRIOR_MAX 0.5
#define PAIR_DRAIN_MIN 0.01
#define PAIR_DRAIN_MAX 0.99
#define PAIR_BASELINE_CV 0.05 /* the between-run CV a one-run baseline is widened by (stated in its finding) */

/* The model's observations from d: every sample of every "pair_pass" record (one round id for all: the passes' differences are noise too)
 * when d has any, else the samples of the "allreduce" pair:<a>-<b> busbw records (round 0; a record without
 * samples gives its value). y = log busbw; figures that are not finite and positive are left out. Pairs
 * with an end outside [0, nnodes) are left out. *obs is malloc'ed (free it); *from_passes says which source. */
ddp_result pair_judge_obs(const result_doc *d, int nnodes, pm_obs **obs, int *nobs, int *from_passes);

/* The healthy pair level of rules' baseline, for the pair model (pair_model.h's baseline_log, baseline_sd,
 * baseline_runs): *log_level the median over the runs of log(each run's median pair busbw, GB/s); *log_sd their
 * between-run spread (log; baseline.h: 2 runs half the difference, 3 or more 1.4826 x MAD), and with fewer than 3
 * runs at least the spread of the run's own pair figures (0 when unknown; the model adds its assumed CV); *runs
 * the runs with pair figures. Returns 1 when set; 0 when there is no baseline, no pair figure in it, or the
 * baseline is too noisy for a pair level (accept_verdicts.c's baseline_noisy finding says so); the outputs are then
 * untouched. */
int accept_baseline_pair_level(const accept_rules *r, double *log_level, double *log_sd, int *runs);

/* The model's options from the rules: bad_pct, prior_bad, drain_threshold (0: the defaults 10 %, 0.01, 0.5) and
 * the baseline, when rules->baseline has pair figures. */
void pair_judge_opts(const accept_rules *rules, pm_opts *o);

/* Judges the pairs of d (nodes 0..nnodes-1, host[n] each node's host) with the model and appends the
 * findings above; *judged = 0 when the model cannot take the run (more than PM_MAX_NODES nodes, or no pair
 * figure): the caller judges it otherwise (nothing appended). floor_gbs: the --expect floor every pair is judged
 * against (pair_busbw_gbps, the same for every node; NaN when none). When the model cannot tell because every pair
 * sits at one level and no node is slower than the rest, that floor decides (the caller's pair_busbw.abs findings):
 * the model says so in an info finding instead of its "cannot tell" warning. */
ddp_result pair_judge(result_doc *d, const accept_rules *rules, int nnodes, const char *const *host, double floor_gbs,
                      int *judged);

/* The hosts of d's PAIR_RETEST_CHECK findings, one per line, each once, less those a failing finding names (they
 * are drained) (malloc'ed text; "" when none). */
ddp_result pair_retest_text(const result_doc *d, char **text, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
