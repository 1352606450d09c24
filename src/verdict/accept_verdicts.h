/* accept_verdicts.h: every check of an acceptance run, from its records alone. The same code reads a run's
 * own document and a --baseline (a known-good run's file), so the two can never be told apart by accident.
 * Per GPU: each figure against its floor (the built-in table for its model and link, an --expect file, or
 * the baseline's runs' level less their spread) with a warn band above it, and against the median of the GPUs of
 * the same model (a robust outlier in groups of 4 or more; in groups of 2 or 3, a gap beyond the run's own GEMM
 * spread, accept_relative_small, else "cannot tell"); the clocks' throttle reasons; its
 * links as NVML read them; its memory health. Per node: the allreduce inside it, against the other nodes and
 * the 8-GPU floor. Node pairs: each node's probability of being bad from the pair model (pair_judge.h; up to 16
 * nodes, fixed cut-offs above), a node above --drain-threshold drained, a bad path named as a path, the grey
 * zone left to a retest; and every pair against its absolute floor. A check that passed is an info finding
 * marked passed (its figure and bound stay in the document). Pure: no MPI, no measuring, no printing.
 *
 * defines: accept_rules, accept_judge_doc, accept_confirm_plan, accept_baseline_usable,
 *          gpu_view(s), accept_view(s)_* */
#ifndef DDPBENCH_ACCEPT_VERDICTS_H
#define DDPBENCH_ACCEPT_VERDICTS_H

#include "expect.h"
#include "pairs.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double rel_warn_pct, rel_fail_pct; /* relative checks: this far below the median of the same model */
  double tolerance_pct;              /* --baseline: the least margin of a floor below the baseline's level */
  const char *expect_file;           /* an INI file of expectations ("" or NULL: the built-in table) */
  const result_doc *baseline;        /* known-good runs' records (an array of baseline_runs), or NULL */
  int baseline_runs;                 /* how many (0 with baseline set: one) */
  double baseline_cv_pct;            /* --baseline-cv: the between-run CV assumed below 3 runs (0: baseline.h's) */
  double bad_pct;         /* --bad-pct: a node, GPU or path is bad this far below the healthy level (accept's default 10; 0: the default) */
  double prior_bad;       /* --prior-bad: the prior probability that a node is bad (accept's default 0.01; 0: the default) */
  double drain_threshold; /* --drain-threshold: drain a node whose probability of being bad exceeds this (default 0.5; 0: the default) */
} accept_rules;

/* A document's per-GPU records, one view per rank that has any, in rank order (the run's and a baseline's
 * alike; printing reads them too). */
typedef struct {
  int rank, node;
  const char *host, *bus, *model; /* labels of its records ("" where absent) */
  const result_record **v;
  int n, cap;
  expect_set exp; /* its floors, once accept_judge_doc has set them */
  double base_level[EXP_COUNT]; /* the baseline's level behind a floor from --baseline (0: none) */
} gpu_view;
typedef struct {
  gpu_view *g;
  int n;
} gpu_views;
ddp_result accept_views_build(const result_doc *d, gpu_views *vs);
void accept_views_free(gpu_views *vs);
/* The value of a metric (NaN when absent), of one pair's ("a-b" label), and whether it is there. */
double accept_view_value(const gpu_view *g, const char *metric);
double accept_view_pair(const gpu_view *g, const char *metric, int a, int b);
int accept_view_has(const gpu_view *g, const char *metric);

/* Appends the findings of d's acceptance records (measurement "accept" per GPU, "allreduce" over node:<host>
 * and pair:<a>-<b> groups) to d->findings. d's ranks (provenance) give each rank's node and host. */
ddp_result accept_judge_doc(result_doc *d, const accept_rules *rules);
/* The confirmation pass: judges d as accept_judge_doc does (d's findings are left as they were) and
 * writes to out (at most cap; *n of them) the node pairs to measure before the judgement: each node that the pairs
 * would name as the culprit, or leave a suspect, none of whose failed pairs is with a node that passed with another
 * partner (a ring with two slow hosts two apart would name the healthy host between them), paired with a node
 * that passed and that it has not met, in rounds of disjoint pairs (a < b, sorted by round). Only the pairs'
 * absolute or baseline verdicts ask for it; none on 2 nodes (no third) or when every pair fails. */
ddp_result accept_confirm_plan(result_doc *d, const accept_rules *rules, node_pair *out, int cap, int *n);
/* The number of acceptance figures in a document (per-GPU or node and pair allreduces): 0 means it cannot
 * serve as a --baseline. */
int accept_baseline_usable(const result_doc *b);

#ifdef __cplusplus
}
#endif
#endif
