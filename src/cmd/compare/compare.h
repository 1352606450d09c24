/* compare.h: `ddpbench compare A.json [A2.json ...] -- B.json [B2.json ...]`: decides whether side B differs
 * from side A, benchstat's way. Each run is one sample (steps inside a run are not independent); per metric
 * it reports the two medians, the change, a 95 % confidence interval of the change, the two-sided
 * Mann-Whitney p-value and a verdict (~ no significant change, + better, - worse, with each metric's
 * direction), after the provenance diff that says what changed. Never claims significance with fewer than
 * 4 runs a side; never calls a change inside the noise floor. Reads result files, prints a report, writes
 * nothing else; no MPI, no device.
 *
 * Layers, each usable alone (tests drive the inner two with synthetic samples):
 *   cmp_evaluate      one metric's samples -> medians, change, CI, p, verdict          (compare_stats.h)
 *   cmp_report_*      rows + provenance diff -> text | md | csv | json, exit code
 *   compare_main      command line, result files -> runs -> metrics and provenance -> report */
#ifndef DDPBENCH_COMPARE_H
#define DDPBENCH_COMPARE_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit code for a significant regression beyond --threshold-pct (0 none, 2 bad input as everywhere). */
enum { CMP_EXIT_REGRESSION = 5 };
/* Fewer runs than this on a side: medians only, no significance claimed (benchstat's limit at alpha 0.05). */
enum { CMP_MIN_RUNS = 4 };

typedef enum { CMP_LOWER_BETTER = -1, CMP_HIGHER_BETTER = 1 } cmp_better;
typedef enum { CMP_TEXT, CMP_MD, CMP_CSV, CMP_JSON } cmp_format;

typedef struct {
  double alpha;         /* significance level, 0.05 */
  double threshold_pct; /* a significant regression beyond this exits CMP_EXIT_REGRESSION; 2 */
  double noise_pct;     /* floor for every metric, below which no change is called; 0 */
  int pool_steps;       /* samples are the steps of every run, not one value per run */
} cmp_options;

void cmp_options_defaults(cmp_options *o);

/* One metric's samples. With pooling, na/nb count steps and runs_a/runs_b the runs behind them. */
typedef struct {
  const double *a, *b;
  int na, nb;
  int runs_a, runs_b;
  cmp_better better;
  double floor_pct; /* this metric's noise floor (from --noise), combined with options' noise_pct */
} cmp_input;

typedef struct {
  double med_a, med_b;
  double change_pct;           /* 100 (med_b / med_a - 1); NaN when med_a is 0 (from_zero) */
  int from_zero;               /* med_a is 0 and med_b is not: a change no percentage measures (0 wrong
                                * elements -> 1, exposed communication 0 -> 2 ms); judged on the absolute
                                * shift's CI, and beyond any --threshold-pct when it is worse */
  double ci_lo_pct, ci_hi_pct; /* 95 % CI of the change; -inf/+inf when too few samples to bound it */
  double p;                    /* two-sided Mann-Whitney; NaN when not tested */
  double floor_pct;            /* the noise floor applied */
  int tested;                  /* 0: fewer than CMP_MIN_RUNS runs on a side, medians only */
  int exact;                   /* p from the exact distribution */
  char verdict;                /* '~', '+', '-'; ' ' when not tested */
  int regression;              /* verdict '-' and |change| > threshold */
} cmp_row;

/* Medians, change, CI of the change (of log values when every sample is positive, so that the interval is
 * one of ratios; of plain differences over |median A| otherwise), p and verdict. Returns 0, -1 when a side
 * is empty or holds a non-finite value. */
int cmp_evaluate(const cmp_input *in, const cmp_options *o, cmp_row *out);

/* ---- report ------------------------------------------------------------------------------------------ */
/* One provenance key whose values differ between the sides or inside one: a and b list the distinct
 * values of that side ("x" or "x (3 runs), y (2 runs)"); "(unset)" where a run lacks the key. */
typedef struct {
  char *key;
  char *a, *b;
  int mixed_a, mixed_b; /* the side's runs disagree */
  int refused;          /* a model config key that differs between the sides */
} cmp_prov_diff;

typedef struct {
  char *name, *unit;
  cmp_better better;
  int na, nb; /* samples */
  cmp_row row;
} cmp_line;

typedef struct {
  cmp_options opt;
  char *label_a, *label_b; /* what each side was given as */
  int runs_a, runs_b;
  int same_provenance;     /* A/A: the CIs are the noise floor of each metric */
  int nprov_same;          /* provenance keys equal everywhere */
  cmp_prov_diff *diff;
  int ndiff;
  char **notes; /* one line each, printed after the diff */
  int nnotes;
  cmp_line *lines;
  int nlines;
} cmp_report;

void cmp_report_init(cmp_report *r, const cmp_options *o);
void cmp_report_free(cmp_report *r);
/* Copies name and unit. Evaluates and appends; returns 0 or -1 (see cmp_evaluate). */
int cmp_report_add(cmp_report *r, const char *name, const char *unit, const cmp_input *in);
void cmp_report_note(cmp_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cmp_report_add_diff(cmp_report *r, const char *key, const char *a, const char *b, int mixed_a, int mixed_b,
                         int refused);
void cmp_report_print(const cmp_report *r, cmp_format f, FILE *out);
/* 0, or CMP_EXIT_REGRESSION when any line is a significant regression beyond the threshold. */
int cmp_report_exit_code(const cmp_report *r);

/* Reads a recorded A/A comparison (`compare --format json`) into per-metric floors: for each metric with a
 * bounded CI, the larger of |CI end|. Returns 0, or 2 after a one-line error naming the file. */
typedef struct {
  char **name;
  double *floor_pct;
  int n;
} cmp_noise;
int cmp_noise_read(const char *path, cmp_noise *out);
void cmp_noise_free(cmp_noise *n);
/* The floor recorded for a metric; 0 when absent. */
double cmp_noise_floor(const cmp_noise *n, const char *name);

/* ---- result files (compare_load.c) ------------------------------------------------------------------ */
/* Reads every result file of both sides (a path may be a directory: its *.json files, in name order),
 * diffs their provenance into r, and adds one line per metric all runs share. A model config key that differs
 * between the sides is refused unless allow_config_diff. noise may be NULL. Returns 0, or 2 after a
 * one-line error naming the file and what is wrong (unreadable, truncated, not a ddpbench result, unknown
 * schema_version, a metric missing from one run of a side, an empty side, a refused config difference). */
int cmp_load(char **a, int na, char **b, int nb, const cmp_noise *noise, int allow_config_diff, cmp_report *r);


#ifdef __cplusplus
}
#endif
#endif
