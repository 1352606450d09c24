/* side.h: one side of a comparison summed up before any A/B statistics, in one place for compare and for
 * whatever else judges sides of runs (an NCCL A/B explainer): which runs broke their own integrity, and whether a
 * figure's runs form two modes. A run's integrity failures are not a distribution to take a median of, and a side
 * that is sometimes slow is not a side that is a little slower: both are said, never averaged away.
 *
 *   cmp_side_read     the runs' integrity: weights that differ between ranks, collectives with wrong elements
 *                     (nwrong > 0), non-finite results; per run, and the checks that failed
 *   cmp_sides_judge   A against B on integrity: exit 5 and the sentence when B has more corrupt runs than A, or
 *                     when both sides have some (no A/B verdict then)
 *   cmp_modes_find    two modes among a side's runs of one figure (the rule below)
 * Reads documents the reader loaded; prints nothing, writes nothing. */
#ifndef DDPBENCH_SIDE_H
#define DDPBENCH_SIDE_H

#include <stddef.h>

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int n;                  /* runs */
  int ncorrupt;           /* runs with an integrity failure */
  unsigned char *corrupt; /* per run: 1 when it failed its own integrity (malloc'ed; n entries) */
  char checks[200];       /* what failed over the side's runs, "collectives_data,weights" ("" when nothing) */
} cmp_side;

/* Reads the integrity of n runs into s. A run is corrupt when its weights differ between ranks (weights_identical
 * 0, or a failing "weights" / "soak_weights" finding), a collectives record "nwrong" is above 0 (or a failing
 * "collectives_data" finding), or a result was not finite (a failing "nonfinite" / "soak_nonfinite" finding).
 * Returns 0, or -1 when out of memory. */
int cmp_side_read(const result_doc *docs, int n, cmp_side *s);
void cmp_side_free(cmp_side *s);
/* 1 when run i of s is clean. */
int cmp_side_clean(const cmp_side *s, int i);

/* Integrity of A (s[0]) against B (s[1]): 0 when B has no more corrupt runs than A and A has none (A alone
 * corrupt is B's improvement); else CMP_EXIT_REGRESSION (5) with the sentence in why: "side B: 1 of 4 runs
 * corrupted data (collectives_data)", or "both sides corrupt data: no A/B verdict (A: 1 of 4 runs, weights; B:
 * 2 of 4 runs, collectives_data)". */
int cmp_sides_judge(const cmp_side s[2], char *why, size_t n);

/* Two modes among n positive values (one per run): the largest gap between consecutive sorted log values
 * splits them into a fast and a slow group; they are two modes when each group holds at least 2 runs and 20 %
 * of them, and the gap exceeds 8 times the larger of the groups' median absolute deviations (of log values).
 * On seeded unimodal normal sides of 6 runs this flags about 5 %; test_compare_side measures both rates. */
typedef struct {
  int two;               /* 1: two modes */
  int nlo, nhi;          /* runs in the low and the high mode (nlo + nhi = n when two) */
  double med_lo, med_hi; /* each mode's median (of the values, not the logs) */
} cmp_modes;
void cmp_modes_find(const double *x, int n, cmp_modes *m);

#ifdef __cplusplus
}
#endif
#endif
