/* test_compare_stats.c: src/cmd/compare/compare_stats.c against scipy.stats (tests/unit/compare_oracle.py, run with Debian's
 * python3-scipy, which launch/test.sh installs): U, the two-sided p-value (exact and normal with tie
 * correction) and the shift confidence interval, on fixed and seeded data sets. Tolerances: U exactly;
 * p within 1e-9 relative (1e-15 absolute); the interval ends exactly (both sides pick the same pairwise
 * difference). Also, without scipy: the k-th pairwise difference against a brute-force sort, and edge cases.
 * Usage: test_compare_stats compare_oracle.py. Exits 77 when python3-scipy is missing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "compare_synth.h"
#include "compare_stats.h"

#define MAXN 200

typedef struct {
  const char *name;
  int nx, ny;
  double x[MAXN], y[MAXN];
} data_set;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void set_fixed(data_set *d, const char *name, const double *x, int nx, const double *y, int ny) {
  d->name = name, d->nx = nx, d->ny = ny;
  memcpy(d->x, x, nx * sizeof *x);
  memcpy(d->y, y, ny * sizeof *y);
}

/* centre/noise as in synth_fill; digits > 0 rounds to that many decimals (makes ties). */
static void set_random(data_set *d, const char *name, uint64_t seed, int nx, int ny, double shift, double noise,
                       int digits) {
  synth_rng r = {seed};
  d->name = name, d->nx = nx, d->ny = ny;
  synth_fill(&r, d->x, nx, 100, noise);
  synth_fill(&r, d->y, ny, 100 * (1 + shift), noise);
  if (digits > 0) {
    double s = pow(10, digits);
    for (int i = 0; i < nx; i++) d->x[i] = round(d->x[i] * s) / s;
    for (int i = 0; i < ny; i++) d->y[i] = round(d->y[i] * s) / s;
  }
}

static void write_array(FILE *f, const double *x, int n) {
  fputc('[', f);
  for (int i = 0; i < n; i++) fprintf(f, "%s%.17g", i ? "," : "", x[i]);
  fputc(']', f);
}

static int rel_close(double a, double b, double rel, double abs_tol) {
  return fabs(a - b) <= abs_tol || fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

static void test_kth_brute_force(void) {
  synth_rng r = {7};
  for (int trial = 0; trial < 20; trial++) {
    int nx = 1 + (int)(synth_next(&r) % 30), ny = 1 + (int)(synth_next(&r) % 30);
    double x[30], y[30], d[900];
    for (int i = 0; i < nx; i++) x[i] = trial % 3 ? synth_normal(&r) : (double)(synth_next(&r) % 5); /* ties */
    for (int j = 0; j < ny; j++) y[j] = trial % 3 ? synth_normal(&r) + 0.3 : (double)(synth_next(&r) % 5);
    qsort(x, nx, sizeof *x, cmp_double);
    qsort(y, ny, sizeof *y, cmp_double);
    for (int i = 0; i < nx; i++)
      for (int j = 0; j < ny; j++) d[i * ny + j] = y[j] - x[i];
    qsort(d, (size_t)nx * ny, sizeof *d, cmp_double);
    int bad = 0;
    for (long long k = 1; k <= (long long)nx * ny; k++)
      if (pairwise_diff_kth(x, nx, y, ny, k) != d[k - 1]) bad++;
    CHECK(bad == 0, "trial %d (%dx%d): %d of %d k-th differences differ from the sorted list", trial, nx, ny, bad,
          nx * ny);
  }
}

static void test_edges(void) {
  double a[5] = {3, 3, 3, 3, 3}, b[5] = {3, 3, 3, 3, 3}, nan_[2] = {1, NAN};
  mwu_result m;
  CHECK(mwu_test(a, 5, b, 5, &m) == 0 && m.p == 1.0 && m.u == 12.5, "all tied: p %g u %g (want 1, 12.5)", m.p,
        m.u);
  CHECK(mwu_test(a, 0, b, 5, &m) == -1, "empty sample accepted");
  CHECK(mwu_test(nan_, 2, b, 5, &m) == -1, "NaN accepted");
  double lo, hi;
  double x3[3] = {1, 2, 3}, y3[3] = {4, 5, 6};
  CHECK(shift_ci(x3, 3, y3, 3, 0.05, &lo, &hi) == 1 && isinf(lo) && isinf(hi),
        "3 vs 3 cannot reject any shift at 5 %%: got [%g, %g]", lo, hi);
  double x4[4] = {1, 2, 3, 4}, y4[4] = {11, 12, 13, 14};
  CHECK(mwu_test(x4, 4, y4, 4, &m) == 0 && m.exact && rel_close(m.p, 2.0 / 70, 1e-12, 0),
        "4 vs 4 separated: p %.17g (want 2/70)", m.p);
  CHECK(shift_ci(x4, 4, y4, 4, 0.05, &lo, &hi) == 0 && lo == 7 && hi == 13,
        "4 vs 4 separated: CI [%g, %g] (want [7, 13]: the extreme differences are rejected)", lo, hi);
  CHECK(shift_ci(x4, 4, y4, 4, 0.0, &lo, &hi) == -1, "alpha 0 accepted");
}

int main(int argc, char **argv) {
  test_kth_brute_force();
  test_edges();
  if (argc < 2) {
    fprintf(stderr, "usage: test_compare_stats ORACLE.py\n");
    return 2;
  }
  const char *py = getenv("DDPBENCH_PYTHON");
  if (!py) py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s -c 'import scipy' 2>/dev/null", py);
  if (system(cmd) != 0) {
    fprintf(stderr, "test_compare_stats: %s cannot import scipy (install python3-scipy; launch/test.sh does)\n", py);
    check_summary();
    return check_failed_ ? 1 : CHECK_SKIP;
  }

  static data_set sets[16];
  int ns = 0;
  {
    double x[] = {1.1, 2.3, 3.5, 4.2}, y[] = {5.1, 6.3, 2.9, 7.7, 8.0};
    set_fixed(&sets[ns++], "small exact 4x5", x, 4, y, 5);
    double tx[] = {1, 2, 2, 3, 4}, ty[] = {2, 3, 3, 5, 6, 6};
    set_fixed(&sets[ns++], "small with ties", tx, 5, ty, 6);
    double sx[] = {12.51, 12.48, 12.60, 12.55}, sy[] = {12.31, 12.35, 12.29, 12.40, 12.33, 12.38, 12.30,
                                                         12.36, 12.34, 12.37, 12.32, 12.39};
    set_fixed(&sets[ns++], "unequal 4x12 exact", sx, 4, sy, 12);
  }
  set_random(&sets[ns++], "10x10 1% noise 1% shift", 1, 10, 10, 0.01, 0.01, 0);
  set_random(&sets[ns++], "20x20 1% noise, no shift", 2, 20, 20, 0.0, 0.01, 0);
  set_random(&sets[ns++], "50x50 exact limit", 3, 50, 50, 0.002, 0.01, 0);
  set_random(&sets[ns++], "51x20 past the exact limit", 4, 51, 20, 0.003, 0.01, 0);
  set_random(&sets[ns++], "60x80 normal", 5, 60, 80, 0.001, 0.01, 0);
  set_random(&sets[ns++], "70x55 ties (1 decimal)", 6, 70, 55, 0.002, 0.01, 1);
  set_random(&sets[ns++], "8x9 ties (0 decimals)", 7, 8, 9, 0.01, 0.01, 0);
  for (int i = 0; i < sets[ns - 1].nx; i++) sets[ns - 1].x[i] = round(sets[ns - 1].x[i]);
  for (int i = 0; i < sets[ns - 1].ny; i++) sets[ns - 1].y[i] = round(sets[ns - 1].y[i]);
  set_random(&sets[ns++], "200x150 pooled-size", 8, 200, 150, 0.001, 0.02, 3);

  char in_path[] = "/tmp/ddpbench-test-compare-XXXXXX";
  int fd = mkstemp(in_path);
  if (fd < 0) {
    perror("mkstemp");
    return 1;
  }
  FILE *f = fdopen(fd, "w");
  for (int s = 0; s < ns; s++) {
    fputs("{\"x\":", f);
    write_array(f, sets[s].x, sets[s].nx);
    fputs(",\"y\":", f);
    write_array(f, sets[s].y, sets[s].ny);
    fputs(",\"alpha\":0.05}\n", f);
  }
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s %s < %s", py, argv[1], in_path);
  FILE *o = popen(cmd, "r");
  static char line[1 << 16];
  int got = 0;
  for (int s = 0; o && s < ns && fgets(line, sizeof line, o); s++, got++) {
    const data_set *d = &sets[s];
    cJSON *j = cJSON_Parse(line);
    if (!j) {
      CHECK(0, "%s: oracle line unreadable: %s", d->name, line);
      continue;
    }
    double u = cJSON_GetObjectItem(j, "u")->valuedouble, p = cJSON_GetObjectItem(j, "p")->valuedouble;
    int exact = cJSON_IsTrue(cJSON_GetObjectItem(j, "exact"));
    cJSON *ci = cJSON_GetObjectItem(j, "ci");
    mwu_result m;
    CHECK(mwu_test(d->x, d->nx, d->y, d->ny, &m) == 0, "%s: mwu_test failed", d->name);
    CHECK(m.u == u, "%s: U %.17g, scipy %.17g", d->name, m.u, u);
    CHECK(m.exact == exact, "%s: exact %d, oracle %d", d->name, m.exact, exact);
    CHECK(rel_close(m.p, p, 1e-9, 1e-15), "%s: p %.17g, scipy %.17g", d->name, m.p, p);
    double lo, hi;
    int rc = shift_ci(d->x, d->nx, d->y, d->ny, 0.05, &lo, &hi);
    if (cJSON_IsNull(ci)) {
      CHECK(rc == 1, "%s: scipy accepts every shift, shift_ci gave [%g, %g]", d->name, lo, hi);
    } else {
      double elo = cJSON_GetArrayItem(ci, 0)->valuedouble, ehi = cJSON_GetArrayItem(ci, 1)->valuedouble;
      CHECK(rc == 0 && rel_close(lo, elo, 1e-12, 0) && rel_close(hi, ehi, 1e-12, 0),
            "%s: CI [%.17g, %.17g], scipy inversion [%.17g, %.17g]", d->name, lo, hi, elo, ehi);
    }
    printf("%-28s U %8.1f p %.6g (%s) CI [%.6g, %.6g]\n", d->name, m.u, m.p, m.exact ? "exact" : "normal", lo, hi);
    cJSON_Delete(j);
  }
  int prc = o ? pclose(o) : -1;
  unlink(in_path);
  CHECK(prc == 0 && got == ns, "oracle exited %d after %d of %d answers", prc, got, ns);
  return check_summary();
}
