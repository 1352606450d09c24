/* test_compare_side.c: compare's side summary (src/cmd/compare/side.c). Two modes: the rule's rates measured by a
 * seeded simulation (seed 20261207, 20,000 sides each): unimodal normal sides of 6 runs (falsely flagged: about 5 %
 * is the rule's design) and sides of 6 runs of which 2 are 1.6x slower (found: about 97 %), at a spread of 3 %;
 * and hand-made cases. Integrity: cmp_sides_judge's three outcomes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare.h"
#include "compare_synth.h"
#include "side.h"

enum { SIDES = 20000, RUNS = 6 };
static const uint64_t SEED = 20261207;

/* The share of SIDES seeded sides of RUNS runs (spread cv, the first slow of them slowed by factor) flagged. */
static double flag_rate(double cv, int slow, double factor, uint64_t seed) {
  synth_rng r = {seed};
  int flagged = 0;
  for (int s = 0; s < SIDES; s++) {
    double x[RUNS];
    synth_fill(&r, x, RUNS, 1.0, cv);
    for (int i = 0; i < slow; i++) x[i] *= factor;
    cmp_modes m;
    cmp_modes_find(x, RUNS, &m);
    flagged += m.two;
  }
  return (double)flagged / SIDES;
}

static void test_rates(void) {
  double fp = flag_rate(0.03, 0, 1, SEED), tp = flag_rate(0.03, 2, 1.6, SEED + 1);
  printf("two modes, 6 runs a side, spread 3 %%, seed %llu, %d sides: unimodal flagged %.2f %%, 2 runs 1.6x slower "
         "found %.2f %%\n", (unsigned long long)SEED, SIDES, 100 * fp, 100 * tp);
  /* the spread does not matter to the false rate (the rule is scale-free in log values) */
  double fp1 = flag_rate(0.01, 0, 1, SEED + 2), tp1 = flag_rate(0.01, 2, 1.6, SEED + 3);
  double tp10 = flag_rate(0.10, 2, 1.6, SEED + 4);
  printf("  spread 1 %%: unimodal %.2f %%, 2 slow found %.2f %%; spread 10 %%: 2 slow found %.2f %%\n", 100 * fp1,
         100 * tp1, 100 * tp10);
  /* an A/A of unimodal sides: how often compare's verdict would be "intermittent" (B two modes, A one, the slow
   * mode beyond the default 2 % threshold) */
  synth_rng r = {SEED + 5};
  int aa = 0;
  for (int s = 0; s < SIDES; s++) {
    double x[RUNS], y[RUNS];
    synth_fill(&r, x, RUNS, 1.0, 0.03), synth_fill(&r, y, RUNS, 1.0, 0.03);
    cmp_modes ma, mb;
    cmp_modes_find(x, RUNS, &ma), cmp_modes_find(y, RUNS, &mb);
    aa += mb.two && !ma.two && mb.med_hi / mb.med_lo > 1.02;
  }
  printf("  A/A of unimodal sides (spread 3 %%): 'intermittent' in %.2f %%\n", 100.0 * aa / SIDES);
  CHECK(fp > 0.03 && fp < 0.07, "unimodal sides flagged %.2f %% (about 5 %%)", 100 * fp);
  CHECK(tp > 0.94, "2 of 6 runs 1.6x slower found %.2f %% (about 97 %%)", 100 * tp);
}

static void test_cases(void) {
  cmp_modes m;
  double two[] = {10, 10.1, 9.9, 16, 16.2, 15.9};
  cmp_modes_find(two, 6, &m);
  CHECK(m.two && m.nlo == 3 && m.nhi == 3 && fabs(m.med_lo - 10) < 1e-9 && fabs(m.med_hi - 16) < 1e-9,
        "3 at 10 and 3 at 16: two modes (%d: %d at %g, %d at %g)", m.two, m.nlo, m.med_lo, m.nhi, m.med_hi);
  double outlier[] = {10, 10.1, 9.9, 10.05, 9.95, 30};
  cmp_modes_find(outlier, 6, &m);
  CHECK(!m.two, "one slow run of 6 is an outlier, not a mode");
  double same[] = {5, 5, 5, 5, 5};
  cmp_modes_find(same, 5, &m);
  CHECK(!m.two, "identical runs: one mode");
  double few[] = {1, 1, 2};
  cmp_modes_find(few, 3, &m);
  CHECK(!m.two, "3 runs: too few for two groups of 2");
  double bad[] = {1, 1, -2, 2, 2};
  cmp_modes_find(bad, 5, &m);
  CHECK(!m.two, "a non-positive value: no claim");
}

static void test_judge(void) {
  unsigned char ca[4] = {0}, cb[4] = {1, 0, 0, 0};
  cmp_side s[2] = {{4, 0, ca, ""}, {4, 1, cb, "collectives_data"}};
  char why[400];
  CHECK(cmp_sides_judge(s, why, sizeof why) == CMP_EXIT_REGRESSION &&
            !strcmp(why, "side B: 1 of 4 runs corrupted data (collectives_data)"),
        "B corrupt once: %s", why);
  ca[2] = 1, s[0].ncorrupt = 1, snprintf(s[0].checks, sizeof s[0].checks, "weights");
  CHECK(cmp_sides_judge(s, why, sizeof why) == CMP_EXIT_REGRESSION &&
            !strncmp(why, "both sides corrupt data: no A/B verdict", 39),
        "both: %s", why);
  cb[0] = 0, s[1].ncorrupt = 0;
  CHECK(cmp_sides_judge(s, why, sizeof why) == 0 && !why[0], "A alone corrupt: B's improvement, no verdict of its own");
  CHECK(!cmp_side_clean(&s[0], 2) && cmp_side_clean(&s[0], 1), "clean runs");
}

int main(void) {
  test_cases();
  test_judge();
  test_rates();
  return check_summary();
}
