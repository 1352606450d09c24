/* side.c: one side of a comparison summed up (side.h): its runs' integrity, A against B on it, and two modes
 * among a side's runs. The integrity checks are a table: a row per finding that says a run corrupted data.
 * Never prints; never reads a file. */
#include "side.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "compare.h"

/* The failing findings that say a run's own data is wrong, and the name said for each. */
static const struct {
  const char *finding, *said;
} INTEGRITY[] = {
    {"weights", "weights"},
    {"soak_weights", "weights"},
    {"collectives_data", "collectives_data"},
    {"nonfinite", "nonfinite"},
    {"soak_nonfinite", "nonfinite"},
};
enum { NINTEGRITY = sizeof INTEGRITY / sizeof *INTEGRITY };

static void add_check(char *list, size_t n, const char *check) {
  if (ddp_list_has(list, check)) return;
  size_t u = strlen(list);
  snprintf(list + u, n - u, "%s%s", u ? "," : "", check);
}

int cmp_side_read(const result_doc *docs, int n, cmp_side *s) {
  memset(s, 0, sizeof *s);
  s->n = n;
  if (!(s->corrupt = calloc((size_t)n + 1, 1))) return -1;
  for (int i = 0; i < n; i++) {
    const result_doc *d = &docs[i];
    char mine[200] = "";
    if (d->weights_identical == 0) add_check(mine, sizeof mine, "weights");
    for (int k = 0; k < d->nrecords; k++)
      if (!strcmp(d->records[k].metric, "nwrong") && d->records[k].value > 0)
        add_check(mine, sizeof mine, "collectives_data");
    for (int k = 0; k < d->findings.n; k++) {
      if (d->findings.v[k].severity != SEV_FAIL) continue;
      for (int c = 0; c < NINTEGRITY; c++)
        if (!strcmp(d->findings.v[k].check, INTEGRITY[c].finding)) add_check(mine, sizeof mine, INTEGRITY[c].said);
    }
    if (!mine[0]) continue;
    s->corrupt[i] = 1, s->ncorrupt++;
    for (char *save = NULL, *t = strtok_r(mine, ",", &save); t; t = strtok_r(NULL, ",", &save))
      add_check(s->checks, sizeof s->checks, t);
  }
  return 0;
}

void cmp_side_free(cmp_side *s) {
  free(s->corrupt);
  memset(s, 0, sizeof *s);
}

int cmp_side_clean(const cmp_side *s, int i) { return i >= 0 && i < s->n && !s->corrupt[i]; }

int cmp_sides_judge(const cmp_side s[2], char *why, size_t n) {
  why[0] = 0;
  if (s[0].ncorrupt && s[1].ncorrupt) {
    snprintf(why, n, "both sides corrupt data: no A/B verdict (A: %d of %d runs, %s; B: %d of %d runs, %s)",
             s[0].ncorrupt, s[0].n, s[0].checks, s[1].ncorrupt, s[1].n, s[1].checks);
    return CMP_EXIT_REGRESSION;
  }
  if (s[1].ncorrupt > s[0].ncorrupt) {
    snprintf(why, n, "side B: %d of %d run%s corrupted data (%s)", s[1].ncorrupt, s[1].n, s[1].n == 1 ? "" : "s",
             s[1].checks);
    return CMP_EXIT_REGRESSION;
  }
  return 0;
}

/* ---- two modes ------------------------------------------------------------------------------------------- */

static int dbl_cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The median of sorted x[0..n). */
static double median_sorted(const double *x, int n) { return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2; }

/* The median absolute deviation of sorted x[0..n) (tmp: n scratch values). */
static double mad(const double *x, int n, double *tmp) {
  double m = median_sorted(x, n);
  for (int i = 0; i < n; i++) tmp[i] = fabs(x[i] - m);
  qsort(tmp, (size_t)n, sizeof *tmp, dbl_cmp);
  return median_sorted(tmp, n);
}

void cmp_modes_find(const double *x, int n, cmp_modes *m) {
  memset(m, 0, sizeof *m);
  if (n < 4) return; /* two groups of at least 2 */
  double *lx = malloc(2 * (size_t)n * sizeof *lx);
  if (!lx) return; /* out of memory: no modes claimed */
  for (int i = 0; i < n; i++) {
    if (!(x[i] > 0) || !isfinite(x[i])) return free(lx);
    lx[i] = log(x[i]);
  }
  qsort(lx, (size_t)n, sizeof *lx, dbl_cmp);
  int cut = 0; /* the largest gap is between lx[cut - 1] and lx[cut] */
  for (int i = 1; i < n; i++)
    if (!cut || lx[i] - lx[i - 1] > lx[cut] - lx[cut - 1]) cut = i;
  int nlo = cut, nhi = n - cut, least = (int)ceil(0.2 * n) > 2 ? (int)ceil(0.2 * n) : 2;
  if (nlo >= least && nhi >= least) {
    double spread = fmax(mad(lx, nlo, lx + n), mad(lx + cut, nhi, lx + n));
    if (lx[cut] - lx[cut - 1] > 8 * spread) {
      m->two = 1, m->nlo = nlo, m->nhi = nhi;
      m->med_lo = exp(median_sorted(lx, nlo)), m->med_hi = exp(median_sorted(lx + cut, nhi));
    }
  }
  free(lx);
}
