/* baseline.h: a --baseline of one or more known-good runs, made into floors that carry their spread. Each figure
 * the baseline judges has a level, the median over the runs, and a spread in log terms (robust): between the
 * runs (2 runs: half their difference; 3 or more: 1.4826 x the MAD about their median) and inside a run (the
 * figure's own samples, or what the caller measures of it: a GEMM's first and last seconds, the spread of a
 * run's pair figures). Repeats inside one run understate how two runs differ, so with fewer than 3 runs the
 * between-run spread is at least a stated CV (--baseline-cv, BASELINE_CV_PCT); with any number of runs it is at
 * least the baseline's own within-run spread. The floor is level x (1 - m), m = max(--tolerance-pct, 1 - exp(-z s)) with z = BASELINE_Z
 * and s the between-run spread combined with the judged run's own noise (1 - exp(-z s) is z s for small s, and
 * never reaches 100 %). --tolerance-pct is the least margin, a hard floor. A spread measured above
 * BASELINE_NOISY_PCT marks the baseline noisy for that figure (its floor says so); a floor whose noise margin
 * would exceed both --tolerance-pct and BASELINE_REFUSE_PCT is refused: no floor, and the reason. Pure arithmetic
 * and record look-ups, but for baseline_docs_load, which reads the files; nothing here prints but that one
 * usage-error line, and nothing judges a run: accept_verdicts.c does, with these floors.
 *
 * defines: BASELINE_Z, BASELINE_CV_PCT, BASELINE_NOISY_PCT, BASELINE_REFUSE_PCT, baseline_spread_log,
 *          baseline_samples_spread, baseline_figure, baseline_figure_of, baseline_floor, baseline_floor_make,
 *          baseline_shared_shift, BASELINE_SHIFT_MIN, baseline_doc_figures, baseline_doc_pair, baseline_doc_pairs,
 *          baseline_docs_load, baseline_docs_free */
#ifndef DDPBENCH_BASELINE_H
#define DDPBENCH_BASELINE_H

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BASELINE_Z 3.0          /* a floor sits z spreads below the baseline's level (a healthy run falls below z = 3
                                 * about once in 740 figures under Gaussian noise; heavier tails more often) */
#define BASELINE_CV_PCT 5.0     /* one or two runs: the between-run CV assumed at least (--baseline-cv) */
#define BASELINE_NOISY_PCT 10.0 /* a figure spreading more than this, inside a run or between runs: a poor baseline */
#define BASELINE_SHIFT_MIN 4    /* figures needed to estimate the shift a whole run shares (baseline_shared_shift) */
#define BASELINE_REFUSE_PCT 50.0 /* a floor that the noise would put more than this below the level (and more than
                                  * --tolerance-pct): refused, never a point floor */

/* The robust spread of n log values (NaN ignored): 2 of them, half their difference; 3 or more, 1.4826 x the
 * median absolute deviation about their median (the standard deviation under Gaussian noise). NaN below 2. */
double baseline_spread_log(const double *logv, int n);
/* The spread of a record's samples in log terms (baseline_spread_log of the logs of its positive finite samples,
 * 3 at least); NaN when it has fewer. */
double baseline_samples_spread(const result_record *x);

/* One figure over the baseline's runs. */
typedef struct {
  double level;   /* exp of the median over the runs that have it of log(value); NaN when none has it */
  double between; /* baseline_spread_log of those logs (NaN with fewer than 2 runs) */
  double within;  /* the largest within-run spread (log) of the runs that have it; NaN when none is known */
  int runs;       /* the runs that have it */
} baseline_figure;
/* From v[k] (run k's figure, NaN or <= 0 when it has none) and within[k] (its within-run spread in log, NaN
 * when unknown; within may be NULL), k < n. */
void baseline_figure_of(const double *v, const double *within, int n, baseline_figure *f);

/* A floor from a baseline figure. */
typedef struct {
  double floor;      /* NaN: no floor (the figure has no level, or the floor is refused) */
  double margin_pct; /* how far below the level it sits */
  double spread_pct; /* s, the spread it was widened by, as a percentage (100 (e^s - 1)) */
  double noisy_pct;  /* the largest measured spread of the baseline's figure, as a percentage (NaN: none known) */
  int noisy;         /* noisy_pct above BASELINE_NOISY_PCT */
  int refused;       /* the noise margin exceeds both the tolerance and BASELINE_REFUSE_PCT: no floor */
  char src[224];     /* "baseline 0.0227 (3 runs, spread 2.1 %) less 10 % (--tolerance-pct)", or why refused */
} baseline_floor;
/* f's floor for a run whose own figure has noise run_sd (log; NaN or 0: none known): s = sqrt(b^2 + run_sd^2)
 * where b is f->between, at least f->within (a figure that spreads inside a run supports no tighter floor), and
 * with fewer than 3 runs at least log(1 + cv_pct / 100). */
void baseline_floor_make(const baseline_figure *f, double run_sd, double tolerance_pct, double cv_pct,
                         baseline_floor *out);

/* The shift a whole run shares against its baseline, from x[n] (each GPU's or pair's log(measured / baseline
 * level); NaN skipped): the upper quartile of the finite ones, when there are BASELINE_SHIFT_MIN or more and it is
 * below -0.1 %; else 0. The upper quartile, not the median: with 2 slow GPUs of 4 the shift stays the healthy
 * ones'. A shared shift is the run's (the machine's load, clocks, a power cap, a driver),
 * not a host's: the floors move down with it (never up), so that a figure fails only when it is also slower than
 * the rest. On a loaded machine a healthy re-run's GEMMs fell 13 % below a 3-run baseline whose spread was 0.6 %,
 * and drained 2 of 4 healthy hosts. */
double baseline_shared_shift(const double *x, int n);

/* The number of acceptance figures in a document: per-GPU records (measurement "accept") and allreduces (inside
 * a node or over a node pair). 0: it cannot serve as a baseline. */
int baseline_doc_figures(const result_doc *d);
/* d's busbw for the node pair of hosts ha and hb: its allreduce record of group pair:<a>-<b> with label hosts
 * "A,B" in either order (node numbers may differ between runs; host names do not); NaN when none. */
double baseline_doc_pair(const result_doc *d, const char *ha, const char *hb);
/* The median of d's node-pair busbw figures, with the robust spread (log) of those figures (NaN below 3 pairs)
 * and the lowest and highest of them (any may be NULL); returns the number of pair figures (0: median NaN). */
int baseline_doc_pairs(const result_doc *d, double *median, double *spread, double *lo, double *hi);

/* Reads a comma-separated list of result files ("a.json,b.json,c.json"; one name is one run) into *docs (n of
 * them, owned: baseline_docs_free). An empty name, a file result_load refuses (its own line, "FILE: what is
 * wrong"), one with no acceptance figures or the same run_id as an earlier one ("WHERE FILE: ...", where e.g.
 * "accept: --baseline"): DDP_ERR_USAGE
 * through ddp_usage_error (a caller's capture keeps it), and nothing kept. */
ddp_result baseline_docs_load(const char *list, const char *where, result_doc **docs, int *n);
void baseline_docs_free(result_doc *docs, int n);

#ifdef __cplusplus
}
#endif
#endif
