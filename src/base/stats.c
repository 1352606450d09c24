/* stats.c: percentiles by sorting a copy. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double sorted_percentile(const double *s, int n, double q) {
  double pos = q * (double)(n - 1);
  int lo = (int)floor(pos);
  int hi = lo + 1 < n ? lo + 1 : lo;
  double frac = pos - (double)lo;
  return s[lo] + (s[hi] - s[lo]) * frac;
}

double stats_percentile(const double *x, int n, double q) {
  if (n <= 0) return NAN;
  double *s = malloc((size_t)n * sizeof *s);
  if (!s) return NAN;
  memcpy(s, x, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  double v = sorted_percentile(s, n, q);
  free(s);
  return v;
}

ddp_stats stats_compute(const double *x, int n) {
  ddp_stats st = {NAN, NAN, NAN, NAN, NAN, NAN, n};
  if (n <= 0) return st;
  double *s = malloc((size_t)n * sizeof *s);
  if (!s) return st;
  memcpy(s, x, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += s[i];
  st.median = sorted_percentile(s, n, 0.5);
  st.p10 = sorted_percentile(s, n, 0.1);
  st.p90 = sorted_percentile(s, n, 0.9);
  st.min = s[0];
  st.max = s[n - 1];
  st.mean = sum / n;
  free(s);
  return st;
}
