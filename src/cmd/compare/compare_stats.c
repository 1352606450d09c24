/* compare_stats.c: Mann-Whitney U and the shift confidence interval that inverts it.
 *
 * Exact distribution: the number of orderings of m x's and n y's with a given U obeys
 * c(m,n,u) = c(m-1,n,u-n) + c(m,n-1,u) (the largest value is either an x, beating all n y's, or a y); the
 * table is filled row by row with additions only, so no cancellation, and divided by C(m+n, m) at the end.
 * Normal approximation: z = (U - mn/2 - 1/2) / sqrt(mn/12 ((N+1) - sum(t^3-t)/(N(N-1)))), the form scipy
 * uses (U the larger of the two statistics, continuity-corrected). */
#include "compare_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double *sorted_copy(const double *x, int n) {
  double *s = malloc((size_t)n * sizeof *s);
  if (!s) return NULL;
  memcpy(s, x, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  return s;
}

/* sum over groups of equal values of t^3 - t, for a sorted array. */
static double tie_term_sorted(const double *s, int n) {
  double t3 = 0;
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && s[j] == s[i]) j++;
    double t = j - i;
    t3 += t * t * t - t;
    i = j;
  }
  return t3;
}

/* cdf[u] = P(U <= u) under the null for sample sizes m, n (u = 0..mn). Caller frees. */
static double *mwu_exact_cdf(int m, int n) {
  size_t len = (size_t)m * n + 1, row = (size_t)(n + 1) * len;
  double *prev = calloc(row, sizeof *prev), *cur = calloc(row, sizeof *cur);
  double *cdf = malloc(len * sizeof *cdf);
  if (!prev || !cur || !cdf) {
    free(prev), free(cur), free(cdf);
    return NULL;
  }
  for (int j = 0; j <= n; j++) prev[(size_t)j * len] = 1; /* m = 0: U = 0 in one way */
  for (int i = 1; i <= m; i++) {
    memset(cur, 0, row * sizeof *cur);
    cur[0] = 1; /* n = 0 */
    for (int j = 1; j <= n; j++) {
      double *c = cur + (size_t)j * len, *left = cur + (size_t)(j - 1) * len, *up = prev + (size_t)j * len;
      size_t top = (size_t)i * j;
      for (size_t u = 0; u <= top; u++) c[u] = (u >= (size_t)j ? up[u - (size_t)j] : 0) + left[u];
    }
    double *t = prev;
    prev = cur, cur = t;
  }
  const double *c = prev + (size_t)n * len;
  double total = 0;
  for (size_t u = 0; u < len; u++) total += c[u];
  double acc = 0;
  for (size_t u = 0; u < len; u++) acc += c[u], cdf[u] = acc / total;
  free(prev), free(cur);
  return cdf;
}

/* Two-sided p for the larger statistic umax by the normal approximation. */
static double mwu_normal_p(double umax, int m, int n, double tie_term) {
  double mn = (double)m * n, nn = (double)m + n;
  double var = mn / 12.0 * ((nn + 1) - tie_term / (nn * (nn - 1)));
  if (!(var > 0)) return 1.0;
  double z = (umax - mn / 2 - 0.5) / sqrt(var);
  double p = erfc(z / sqrt(2.0));
  return p > 1 ? 1 : p < 0 ? 0 : p;
}

static int all_finite(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

int mwu_test(const double *x, int nx, const double *y, int ny, mwu_result *out) {
  if (!x || !y || !out || nx < 1 || ny < 1 || !all_finite(x, nx) || !all_finite(y, ny)) return -1;
  double *xs = sorted_copy(x, nx), *ys = sorted_copy(y, ny);
  int nn = nx + ny;
  double *all = malloc((size_t)nn * sizeof *all);
  if (!xs || !ys || !all) {
    free(xs), free(ys), free(all);
    return -1;
  }
  /* U_x by merging: for each x, the y's below it count 1, the y's equal to it 1/2. */
  double u = 0;
  for (int i = 0, lo = 0, hi = 0; i < nx; i++) {
    while (lo < ny && ys[lo] < xs[i]) lo++;
    if (hi < lo) hi = lo;
    while (hi < ny && ys[hi] <= xs[i]) hi++;
    u += lo + 0.5 * (hi - lo);
  }
  memcpy(all, xs, (size_t)nx * sizeof *all);
  memcpy(all + nx, ys, (size_t)ny * sizeof *all);
  qsort(all, (size_t)nn, sizeof *all, cmp_double);
  double ties = tie_term_sorted(all, nn);
  double mn = (double)nx * ny, umax = u > mn - u ? u : mn - u;
  out->u = u;
  out->exact = ties == 0 && nx <= MWU_EXACT_MAX && ny <= MWU_EXACT_MAX;
  int rc = 0;
  if (out->exact) {
    double *cdf = mwu_exact_cdf(nx, ny);
    if (!cdf) {
      rc = -1;
    } else {
      double p = 2 * cdf[(size_t)(mn - umax)]; /* P(U >= umax) = P(U <= mn - umax), by symmetry */
      out->p = p > 1 ? 1 : p;
      free(cdf);
    }
  } else {
    out->p = mwu_normal_p(umax, nx, ny, ties);
  }
  free(xs), free(ys), free(all);
  return rc;
}

/* #{(i,j): ys[j] - xs[i] <= t}; both sorted ascending. */
static long long diff_count_le(const double *xs, int nx, const double *ys, int ny, double t) {
  long long count = 0;
  int idx = 0;
  for (int j = 0; j < ny; j++) {
    while (idx < nx && ys[j] - xs[idx] > t) idx++;
    count += nx - idx;
  }
  return count;
}

double pairwise_diff_kth(const double *xs, int nx, const double *ys, int ny, long long k) {
  double lo = ys[0] - xs[nx - 1], hi = ys[ny - 1] - xs[0];
  if (diff_count_le(xs, nx, ys, ny, lo) >= k) return lo;
  /* count(lo) < k <= count(hi); halve by value until lo and hi are neighbouring doubles: then the k-th
   * difference lies in (lo, hi], which holds one double, hi. */
  for (;;) {
    double mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) return hi;
    if (diff_count_le(xs, nx, ys, ny, mid) >= k)
      hi = mid;
    else
      lo = mid;
  }
}

int shift_ci(const double *x, int nx, const double *y, int ny, double alpha, double *lo, double *hi) {
  if (!x || !y || !lo || !hi || nx < 1 || ny < 1 || !(alpha > 0 && alpha < 1) || !all_finite(x, nx) ||
      !all_finite(y, ny))
    return -1;
  double *xs = sorted_copy(x, nx), *ys = sorted_copy(y, ny);
  if (!xs || !ys) {
    free(xs), free(ys);
    return -1;
  }
  double ties = tie_term_sorted(xs, nx) + tie_term_sorted(ys, ny);
  int exact = ties == 0 && nx <= MWU_EXACT_MAX && ny <= MWU_EXACT_MAX;
  double *cdf = exact ? mwu_exact_cdf(nx, ny) : NULL;
  if (exact && !cdf) {
    free(xs), free(ys);
    return -1;
  }
  /* A shift between the r-th and (r+1)-th smallest difference gives U = mn - r for y - d against x, and
   * the two-sided p grows with min(r, mn - r): bisect for the smallest accepted r. */
  long long mn = (long long)nx * ny, r_lo = -1, r_hi = mn / 2; /* p(r_hi) >= alpha always */
  while (r_hi - r_lo > 1) {
    long long r = r_lo + (r_hi - r_lo) / 2;
    double p = exact ? 2 * cdf[r] : mwu_normal_p((double)(mn - r), nx, ny, ties);
    if (p >= alpha)
      r_hi = r;
    else
      r_lo = r;
  }
  long long r = r_hi;
  int rc = 0;
  if (r == 0) {
    *lo = -INFINITY, *hi = INFINITY;
    rc = 1;
  } else {
    *lo = pairwise_diff_kth(xs, nx, ys, ny, r);
    *hi = pairwise_diff_kth(xs, nx, ys, ny, mn + 1 - r);
  }
  free(cdf), free(xs), free(ys);
  return rc;
}
