/* compare.h: `ddpbench compare A.json [A2.json ...] -- B.json [B2.json ...]`: decides whether side B differs
 * from side A, benchstat's way. Each run is one sample (steps inside a run are not independent); per metric
 * it reports the two medians, the change, a 95 % confidence interval of the change, the two-sided
 * Mann-Whitney p-value and a verdict (~ no significant change, + better, - worse, with each metric's
 * direction), after the provenance diff that says what changed. Never claims significance with fewer than
 * 4 runs a side; never calls a change inside the noise floor. Reads result files, prints a report, writes
 * nothing else; no MPI, no device.
 *
 * The text report says what happened first: a summary (regressions beyond the threshold, worse within it,
 * better, unchanged, not tested, with the noise floor used), then the detail (provenance diff, notes, the
 * table: compact by default, at most CMP_TEXT_COLS columns, --wide for every metric and column), and ends with
 * the bottom line, "ddpbench compare: VERDICT  figures  (context; N fail, N warn)":
 *   FAIL  a significant regression beyond --threshold-pct, or a side judged on its own (side.h: more runs that
 *         corrupted data on B than on A, corrupt runs on both sides, a slow mode on B that A lacks) (exit
 *         CMP_EXIT_REGRESSION);
 *   WARN  none, but a metric that could not be tested (fewer than CMP_MIN_RUNS runs a side) has medians worse
 *         beyond the threshold and the noise floor: a regression the runs can neither confirm nor rule out
 *         (exit 0); an untested improvement does not warn;
 *   PASS  otherwise (exit 0).
 *
 * Layers, each usable alone (tests drive the inner two with synthetic samples):
 *   cmp_evaluate      one metric's samples -> medians, change, CI, p, verdict          (compare_stats.h)
 *   cmp_report_*      rows + provenance diff -> summary, text | md | csv | json, exit code, bottom line
 *   compare_main      command line, result files -> runs -> metrics and provenance -> report */
#ifndef DDPBENCH_COMPARE_H
#define DDPBENCH_COMPARE_H

#include <stdio.h>

#include <cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit code for a significant regression beyond --threshold-pct (0 none, 2 bad input as everywhere). */
enum { CMP_EXIT_REGRESSION = 5 };
/* Fewer runs than this on a side: medians only, no significance claimed (benchstat's limit at alpha 0.05). */
enum { CMP_MIN_RUNS = 4 };
/* The default text report's widest line (--wide: no limit). */
enum { CMP_TEXT_COLS = 120 };

typedef enum { CMP_LOWER_BETTER = -1, CMP_HIGHER_BETTER = 1 } cmp_better;
typedef enum { CMP_TEXT, CMP_MD, CMP_CSV, CMP_JSON } cmp_format;

typedef struct {
  double alpha;         /* significance level, 0.05 */
  double threshold_pct; /* a significant regression beyond this exits CMP_EXIT_REGRESSION; 2 */
  double noise_pct;     /* floor for every metric, below which no change is called; 0 */
  int pool_steps;       /* samples are the steps of every run, not one value per run */
  int wide;             /* text: every metric with every column, as wide as it takes */
  const char *noise_file; /* --noise FILE (the per-metric floors' origin, for the summary), or NULL */
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
  int moved_worse;             /* not tested, and the medians are worse beyond the threshold and the floor (from
                                * 0: any worse change): what makes the bottom line WARN */
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
  char *brief; /* the compact view's name ("allreduce 32 KiB busbw"), or NULL: name */
  int detail;  /* shown only with --wide (a collectives figure other than the out-of-place busbw) */
  cmp_better better;
  int na, nb; /* samples */
  cmp_row row;
} cmp_line;

/* One label (--label key=value) that every run of a side carries. */
typedef struct {
  char *key, *value;
} cmp_label;

/* ---- NCCL's account on each side (compare_nccl_diff.c) ------------------------------------------------- */
/* One thing NCCL did differently on side B. */
typedef struct {
  char *what;  /* "version", "training: coll channels", "training: transport", "collectives: AllReduce 64 MiB-1 GiB" */
  char *a, *b; /* each side's value ("not reported" where the side's account lacks it) */
  char *text;  /* the change in words: "2.27.7 -> 2.28.3", "P2P/CUMEM/read -> SHM/direct/direct for 1 peer",
                * "channels 32 -> 16, RING/SIMPLE both" */
  int peers;   /* a transport change: how many (rank, peer) pairs made it; else 0 */
  char coll[24];            /* an algorithm change: NCCL's collective ("AllReduce"); else "" */
  double lo_bytes, hi_bytes; /* and its size range */
  char choice_a[72], choice_b[72]; /* what changed, in words: "32" / "16 channels", "RING/LL" / "TREE/LL" */
} cmp_nccl_diff;

typedef struct {
  int reported[2];      /* every run of side A (0) or B (1) carries an account */
  char *why[2];         /* a side not reported: why, in words */
  char *disagree[2];    /* the side's runs disagree on NCCL's account: on what, in words; NULL when they agree */
  cmp_nccl_diff *diff;  /* B against A (each side's first run where its runs disagree) */
  int ndiff;
  char **says;          /* the sentences that tie NCCL's choices to the metric table */
  int nsays;
} cmp_nccl;

typedef struct {
  cmp_options opt;
  char *label_a, *label_b; /* what each side was given as */
  char *name_a, *name_b;   /* the labels that tell the sides apart ("nccl=2.21.5"), or NULL (both or neither) */
  cmp_label *labels[2];    /* the labels every run of side A (0) or B (1) shares, sorted by key */
  int nlabels[2];
  int runs_a, runs_b;
  char start_time[32], end_time[32]; /* ISO 8601 UTC; "" when not set (the JSON then leaves them out) */
  double duration_s;
  int same_provenance;     /* A/A: the CIs are the noise floor of each metric */
  int size_differs;        /* --allow-config-diff and the job's size differs: 1 world size, 2 node count, 3 both */
  int nprov_same;          /* provenance keys equal everywhere */
  cmp_prov_diff *diff;
  int ndiff;
  char **notes; /* one line each, printed after the diff */
  int nnotes;
  cmp_line *lines;
  int nlines;
  char *brief_note; /* the compact view's one line on what it leaves out, or NULL */
  cmp_nccl nccl;    /* NCCL's account: what differs, and what it explains */
  char train_label[80]; /* sides of different strategies: "ddp | fsdp", the "train ..." lines' label; "" else */
  char *side_verdict; /* the sides judged on their own (side.h), "; "-joined: "side B: 1 of 4 runs corrupted data
                       * (collectives_data)", "intermittent: 2 of 6 runs slow (ddp step_ms 1.60x)"; NULL: none */
} cmp_report;

void cmp_report_init(cmp_report *r, const cmp_options *o);
void cmp_report_free(cmp_report *r);
/* Copies name and unit. Evaluates and appends; returns 0 or -1 (see cmp_evaluate). */
int cmp_report_add(cmp_report *r, const char *name, const char *unit, const cmp_input *in);
void cmp_report_note(cmp_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cmp_report_add_diff(cmp_report *r, const char *key, const char *a, const char *b, int mixed_a, int mixed_b,
                         int refused);
void cmp_report_print(const cmp_report *r, cmp_format f, FILE *out);
/* A verdict on the sides themselves, not on a metric (side.h: corrupted data, an intermittent slow mode): appended
 * to side_verdict; the report then FAILs with CMP_EXIT_REGRESSION whatever its lines say. */
void cmp_report_side(cmp_report *r, const char *why);
/* Sets the last line's compact name (copied; NULL: its name) and whether only --wide shows it. */
void cmp_report_brief(cmp_report *r, const char *brief, int detail);
/* 0, or CMP_EXIT_REGRESSION when any line is a significant regression beyond the threshold or a side was judged
 * on its own (cmp_report_side). */
int cmp_report_exit_code(const cmp_report *r);

/* What the lines add up to: each line in exactly one class. */
typedef enum { CMP_REGRESSED, CMP_WORSE, CMP_BETTER, CMP_SAME, CMP_UNTESTED_WORSE, CMP_UNTESTED, CMP_NCLASS } cmp_class;
cmp_class cmp_line_class(const cmp_line *l);
typedef struct {
  int n[CMP_NCLASS];
  int untested;        /* n[CMP_UNTESTED_WORSE] + n[CMP_UNTESTED] */
  const char *verdict; /* "PASS", "WARN" or "FAIL" */
  int exit_code;       /* cmp_report_exit_code */
} cmp_summary;
void cmp_report_summarize(const cmp_report *r, cmp_summary *s);
/* The lines of class c in the order a person reads them: the compact view's rows before the details, each by
 * the size of its change (from 0 first). Returns how many, with their indexes in *idx (malloc'ed; NULL and 0
 * when none or out of memory). */
int cmp_class_lines(const cmp_report *r, cmp_class c, int **idx);
/* The noise floor used, in words ("none", "2 % (--noise-pct)", "per metric from aa.json (0.4 % to 3.1 %)"). */
void cmp_noise_words(const cmp_report *r, char *buf, size_t n);
/* The last line of the report (no newline): "ddpbench compare: VERDICT  figures  (context; N fail, N warn)". */
void cmp_bottom_line(const cmp_report *r, char *buf, size_t n);
/* s as a printer of text or markdown may write it: every control character (C0 with newlines, tabs and ESC,
 * DEL, and C1 encoded in UTF-8) as \n, \t, \r or \xNN, a backslash doubled; with md also the table's | as \|.
 * Writes at most n - 1 bytes and a NUL into buf, never a partial escape; returns buf. Every printer of a string
 * read from a file (names, labels, provenance, NCCL's account) goes through it: a crafted result file must
 * write no line and no terminal escape of its own. */
const char *cmp_escape(char *buf, size_t n, const char *s, int md);
/* A side's name for people: its distinguishing labels, else "A" / "B" (side 0 / 1). */
const char *cmp_side_name(const cmp_report *r, int side);

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

/* ---- NCCL's account (compare_nccl_diff.c: the diff, below the model; compare_nccl_explain.c: its sentences) - */
/* Diffs NCCL's account of the runs into r->nccl: a[i] / b[i] is run i's "nccl" section (NULL: the file has none,
 * as files from before ddpbench recorded it: "not reported", never an error). Per side, the runs should agree;
 * where they do not, r->nccl.disagree says on what and side's first run stands for it. Compared: the version,
 * the network, per communicator label its collective channels, NVLS and CollNet, the transport of each (rank,
 * peer) and each collective's algorithm, protocol and channels per size (consecutive sizes with the same change
 * make one range). Returns 0, or -1 when out of memory. */
int cmp_nccl_build(const cJSON *const *a, int na, const cJSON *const *b, int nb, cmp_report *r);
/* After the metric lines are in r: the sentences that tie the two. Where a collective's NCCL choice changed
 * over a size range and its out-of-place busbw rows there moved (worse or better), "B uses 16 channels instead
 * of 32 at 64 MiB-1 GiB; busbw -18 % there"; where nothing in NCCL's account differs and a metric is worse,
 * "same NCCL choices; the kernel got slower"; a side without an account, "NCCL's account not reported on side A:
 * why". Returns 0, or -1 when out of memory. */
int cmp_nccl_explain(cmp_report *r);
void cmp_nccl_free(cmp_nccl *n);
/* "64 MiB" or "64 MiB-1 GiB": a size range of the diff, in the largest unit each size is a whole number of. */
void cmp_nccl_fmt_range(char *buf, size_t n, double lo, double hi);


#ifdef __cplusplus
}
#endif
#endif
