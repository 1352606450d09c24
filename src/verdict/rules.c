/* rules.c: the straggler rule, the steady-state rule, relative checks and verdicts, the localisation of a slow
 * node or pair, and the link checks (rules.h has the contracts; the pair schedule is base/pairs.c, the
 * failed-hosts file verdict/hosts.c and result/outputs.c). Pure arithmetic over the numbers it is given: it
 * must never measure, print, or name anyone without the numbers that justify it. */
#include "rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "stats.h"

const char *accept_severity_str(accept_severity s) {
  return s == ACCEPT_FAIL ? "fail" : s == ACCEPT_WARN ? "warn" : "pass";
}

/* ---- robust statistics ------------------------------------------------------------------------- */

double accept_robust_z(const double *x, int n, double *z) {
  if (n < 1) return NAN;
  double med = stats_percentile(x, n, 0.5);
  double *dev = malloc((size_t)n * sizeof *dev);
  double mad = 0, mean_ad = 0;
  if (dev) {
    for (int i = 0; i < n; i++) dev[i] = fabs(x[i] - med), mean_ad += dev[i] / n;
    mad = stats_percentile(dev, n, 0.5);
    free(dev);
  }
  /* 0.6745 = the normal distribution's 0.75 quantile, so that z is in standard deviations for normal data;
   * 1.253314 = sqrt(pi/2), the same for the mean absolute deviation (Iglewicz and Hoaglin, 1993). */
  double scale = mad > 0 ? mad / 0.6745 : 1.253314 * mean_ad;
  if (z)
    for (int i = 0; i < n; i++) z[i] = scale > 0 ? (x[i] - med) / scale : 0;
  return med;
}

int accept_stragglers(const double *x, int n, double pct, double zmin, int *out, double *z) {
  if (n < 3) {
    if (z)
      for (int i = 0; i < n; i++) z[i] = 0;
    return 0;
  }
  double *zz = z ? z : malloc((size_t)n * sizeof *zz);
  if (!zz) return 0;
  double med = accept_robust_z(x, n, zz);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (x[i] > med * (1 + pct / 100) && zz[i] > zmin) out[k++] = i;
  if (!z) free(zz);
  return k;
}

ddp_result straggler_judge(const ddp_stats *st, int W, const straggler_rule *rule, int *who, double *z,
                           straggler_verdict *v) {
  memset(v, 0, sizeof *v);
  v->threshold_pct = fmax(rule->pct, rule->floor_pct);
  v->median = NAN;
  if (W < 1) return DDP_OK;
  ddp_result r = DDP_OK;
  double *meds = malloc((size_t)W * sizeof *meds), *p90 = malloc((size_t)W * sizeof *p90);
  double *zz = z ? z : malloc((size_t)W * sizeof *zz);
  if (!meds || !p90 || !zz) {
    r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    goto out;
  }
  v->steps = st[0].n;
  for (int i = 0; i < W; i++) {
    meds[i] = st[i].median, p90[i] = st[i].p90, zz[i] = 0;
    if (st[i].n < v->steps) v->steps = st[i].n;
    if (meds[i] > meds[v->slowest]) v->slowest = i;
  }
  v->median = stats_percentile(meds, W, 0.5);
  v->excess = v->median > 0 ? meds[v->slowest] / v->median - 1 : 0;
  int k = v->slowest;
  if (v->steps < rule->min_steps || !(v->median >= rule->min_ms)) {
    v->too_short = 1;
    if (W >= 3) accept_robust_z(meds, W, zz);
    goto out;
  }
  if (W == 2) {
    double other_p90 = p90[1 - k];
    v->pair_warn = v->excess * 100 > v->threshold_pct && st[k].p10 > other_p90;
    goto out;
  }
  int n = accept_stragglers(meds, W, v->threshold_pct, 3.5, who, zz);
  double med_p90 = stats_percentile(p90, W, 0.5);
  for (int i = 0; i < n; i++)
    if (st[who[i]].p10 > med_p90) who[v->n_named++] = who[i];
out:
  free(meds), free(p90);
  if (zz != z) free(zz);
  return r;
}

double straggler_gap(const double *med, int W) {
  if (W < 1) return NAN;
  double m = stats_percentile(med, W, 0.5), hi = med[0];
  for (int i = 1; i < W; i++) hi = fmax(hi, med[i]);
  return m > 0 ? 100 * (hi / m - 1) : NAN;
}

double straggler_spread(const double *med, int nruns, int W) {
  double s = NAN;
  for (int k = 0; k < nruns; k++) {
    double g = straggler_gap(med + (size_t)k * W, W);
    if (!isfinite(g)) return NAN;
    s = k ? fmax(s, g) : g;
  }
  return s;
}

double straggler_baseline_floor(double spread_pct) {
  return spread_pct * (1 + STRAGGLER_BASELINE_MARGIN) + STRAGGLER_BASELINE_MARGIN_PP;
}

/* One half's median and its standard error (robust sigma over sqrt of the count); tmp has room for n. */
static void half_stats(const double *x, int n, double *tmp, double *med, double *se) {
  *med = stats_percentile(x, n, 0.5);
  for (int i = 0; i < n; i++) tmp[i] = fabs(x[i] - *med);
  double mad = stats_percentile(tmp, n, 0.5);
  *se = 1.2533 * 1.4826 * mad / sqrt((double)n);
}

ddp_result steady_judge(const double *x, int n, double floor_pct, steady_verdict *v) {
  memset(v, 0, sizeof *v);
  v->n = n;
  v->first_ms = v->second_ms = v->drift = v->z = NAN;
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return DDP_OK;
  if (n < STEADY_MIN_STEPS) return DDP_OK;
  int h = n / 2; /* an odd count leaves the middle step out */
  double *tmp = malloc((size_t)h * sizeof *tmp);
  if (!tmp) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  double se1, se2;
  half_stats(x, h, tmp, &v->first_ms, &se1);
  half_stats(x + n - h, h, tmp, &v->second_ms, &se2);
  free(tmp);
  v->judged = 1;
  v->drift = v->first_ms > 0 ? v->second_ms / v->first_ms - 1 : 0;
  double se = sqrt(se1 * se1 + se2 * se2), d = v->second_ms - v->first_ms;
  v->z = se > 0 ? d / se : d != 0 ? copysign(INFINITY, d) : 0;
  v->drifted = fabs(v->drift) * 100 > floor_pct && fabs(v->z) > STEADY_ZMIN;
  return DDP_OK;
}

void accept_group_median(const double *x, const char *const *group, int n, double *ref) {
  double *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
  for (int i = 0; i < n; i++) {
    int m = 0;
    for (int j = 0; tmp && j < n; j++)
      if (!strcmp(group[i], group[j]) && isfinite(x[j])) tmp[m++] = x[j];
    ref[i] = m ? stats_percentile(tmp, m, 0.5) : NAN;
  }
  free(tmp);
}

void accept_group_stats(const double *x, const char *const *group, int n, double *ref, double *z, int *size) {
  double *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp), *tz = malloc((size_t)(n > 0 ? n : 1) * sizeof *tz);
  for (int i = 0; i < n; i++) {
    int m = 0, me = -1;
    for (int j = 0; tmp && tz && j < n; j++)
      if (!strcmp(group[i], group[j]) && isfinite(x[j])) {
        if (j == i) me = m;
        tmp[m++] = x[j];
      }
    ref[i] = m ? accept_robust_z(tmp, m, tz) : NAN;
    z[i] = me >= 0 ? tz[me] : NAN;
    size[i] = m;
  }
  free(tmp);
  free(tz);
}

accept_severity accept_relative(double x, double ref, double z, int size, double warn_pct, double fail_pct,
                                double zmin, double *margin_pct) {
  accept_severity s = accept_judge(x, ref, 1, warn_pct, fail_pct, margin_pct);
  if (isfinite(x) && (size < 4 || !(z < -zmin))) s = ACCEPT_PASS;
  return s;
}

void accept_relative_small(const double *x, const double *spread, int n, int i, double warn_pct, double fail_pct,
                           int top_ok, accept_small_verdict *v) {
  memset(v, 0, sizeof *v);
  v->sev = ACCEPT_PASS;
  v->ref = v->margin_pct = v->gap = v->noise = NAN;
  if (n < 2 || n > 3 || i < 0 || i >= n || !isfinite(x[i])) return;
  double noise = NAN;
  for (int j = 0; j < n; j++)
    if (isfinite(spread[j]) && !(spread[j] <= noise)) noise = spread[j];
  if (isfinite(noise) && noise < ACCEPT_SMALL_NOISE_FLOOR) noise = ACCEPT_SMALL_NOISE_FLOOR;
  v->noise = noise;
  v->ref = n == 3 ? stats_percentile(x, 3, 0.5) : x[1 - i];
  if (!(v->ref > 0) || !(x[i] > 0)) return;
  v->margin_pct = 100 * (x[i] / v->ref - 1);
  v->gap = log(v->ref / x[i]);
  double short_pct = -v->margin_pct;
  int beyond = isfinite(noise) && v->gap > ACCEPT_SMALL_K * noise, which = n == 3 || top_ok;
  char units[64] = "its noise was not measured";
  if (isfinite(noise))
    snprintf(units, sizeof units, "%.1f noise units of %.1f %%", v->gap / noise, 100 * (exp(noise) - 1));
  if (short_pct > fail_pct) {
    if (!beyond) {
      v->sev = ACCEPT_WARN, v->cannot_tell = 1;
      if (isfinite(noise))
        snprintf(v->why, sizeof v->why, "cannot tell: the gap is %s, not beyond the %g the rule needs; a longer "
                 "--health-seconds (more intervals) or a --baseline would decide", units, ACCEPT_SMALL_K);
      else
        snprintf(v->why, sizeof v->why, "cannot tell: the run did not measure its noise (too short to compare its "
                 "first and last second); a longer --health-seconds (more intervals) or a --baseline would decide");
    } else if (!which) {
      v->sev = ACCEPT_WARN, v->cannot_tell = 1;
      snprintf(v->why, sizeof v->why, "cannot tell which of the two is off: the gap is %s, but the faster one has "
               "no floor it is known to meet; a --baseline or an --expect floor would decide", units);
    } else {
      v->sev = ACCEPT_FAIL;
      snprintf(v->why, sizeof v->why, "the gap is %s (named beyond %g)%s", units, ACCEPT_SMALL_K,
               n == 2 ? "; the faster one meets its floor" : "");
    }
  } else if (short_pct > warn_pct && beyond && which) {
    v->sev = ACCEPT_WARN;
    snprintf(v->why, sizeof v->why, "the gap is %s (beyond %g)", units, ACCEPT_SMALL_K);
  } else if (short_pct > warn_pct) {
    snprintf(v->why, sizeof v->why, "the gap is %s, within the %g that would name it", units, ACCEPT_SMALL_K);
  } else {
    snprintf(v->why, sizeof v->why, "within --relative-warn-pct of the reference");
  }
}

accept_severity accept_judge(double measured, double expected, int higher_better, double warn_pct,
                             double fail_pct, double *margin_pct) {
  *margin_pct = NAN;
  if (!isfinite(expected) || expected == 0) return ACCEPT_PASS; /* no expectation: nothing to judge */
  if (!isfinite(measured)) return ACCEPT_FAIL;                  /* fail closed */
  *margin_pct = 100 * (measured - expected) / expected;
  double short_pct = higher_better ? -*margin_pct : *margin_pct; /* how far on the bad side, in % */
  if (short_pct > fail_pct) return ACCEPT_FAIL;
  if (short_pct > warn_pct) return ACCEPT_WARN;
  return ACCEPT_PASS;
}

/* ---- a GPU's links ---------------------------------------------------------------------------- */

int accept_link_checks(const accept_links *g, int sxm, accept_link_verdict *out) {
  int k = 0;
  if (!g->known) return 0;
  if (g->nvlink_known && g->links_active > 0 && g->links_active < g->links_total) {
    accept_link_verdict *v = &out[k++];
    *v = (accept_link_verdict){sxm ? ACCEPT_FAIL : ACCEPT_WARN, "nvlink", g->links_active, g->links_total, ""};
    snprintf(v->text, sizeof v->text, "NVLink %d of %d links up%s", g->links_active, g->links_total,
             sxm ? "" : " (not an SXM part of the table: fewer links may be by design)");
  }
  if (g->pcie_width && g->pcie_width_max && g->pcie_width < g->pcie_width_max) {
    accept_link_verdict *v = &out[k++];
    *v = (accept_link_verdict){ACCEPT_FAIL, "pcie_width", g->pcie_width, g->pcie_width_max, ""};
    snprintf(v->text, sizeof v->text, "PCIe link trained at x%u of x%u", g->pcie_width, g->pcie_width_max);
  }
  if (g->pcie_gen && g->pcie_gen_max && g->pcie_gen < g->pcie_gen_max) {
    accept_link_verdict *v = &out[k++];
    *v = (accept_link_verdict){ACCEPT_WARN, "pcie_gen", g->pcie_gen, g->pcie_gen_max, ""};
    snprintf(v->text, sizeof v->text, "PCIe Gen%u of Gen%u (an idle GPU may lower it: the copy bandwidth decides)",
             g->pcie_gen, g->pcie_gen_max);
  }
  return k;
}

/* Median of the measured pairs of `node` whose other end is not bad; NaN when none. */
static double node_median(int node, const node_pair *pairs, const double *value, int npairs, const int *bad,
                          double *tmp, int *count) {
  int m = 0;
  for (int p = 0; p < npairs; p++) {
    int other = pairs[p].a == node ? pairs[p].b : pairs[p].b == node ? pairs[p].a : -1;
    if (other < 0 || bad[other] || !isfinite(value[p])) continue;
    tmp[m++] = value[p];
  }
  *count = m;
  return m ? stats_percentile(tmp, m, 0.5) : NAN;
}

/* The pairs' noise: the robust scale (MAD / 0.6745, or 1.253314 x the mean absolute deviation when the MAD is 0)
 * of the log-ratios to the reference (bandwidth noise is a factor, not an offset: on a busy fabric a healthy pair
 * at half the reference and one at twice it are equally far from it) of the pairs between nodes that look healthy (node value at least
 * limit x reference), or, when fewer than 3 such pairs exist, of every pair without a bad node. */
static double pair_scale(const node_pair *pairs, const double *value, int npairs, const accept_localization *loc,
                         double limit, double *tmp) {
  for (int pass = 0; pass < 2; pass++) {
    int m = 0;
    for (int p = 0; p < npairs; p++) {
      int a = pairs[p].a, b = pairs[p].b;
      if (!isfinite(value[p]) || loc->node_bad[a] || loc->node_bad[b]) continue;
      if (!pass && !(loc->node_value[a] >= limit * loc->reference && loc->node_value[b] >= limit * loc->reference))
        continue;
      if (value[p] > 0) tmp[m++] = fabs(log(value[p] / loc->reference));
    }
    if (m < 3 && !pass) continue;
    if (!m) return 0;
    double mad = stats_percentile(tmp, m, 0.5), mean = 0;
    for (int i = 0; i < m; i++) mean += tmp[i] / m;
    return mad > 0 ? mad / 0.6745 : 1.253314 * mean;
  }
  return 0;
}

/* Slow: more than slow_pct below the reference and an outlier (z above zmin; any shortfall when the pairs
 * show no noise at all). */
static int pair_slow(double v, const accept_localization *loc, double limit, double zmin) {
  if (!(v < limit * loc->reference)) return 0;
  if (!(v > 0)) return 1;
  return loc->scale > 0 ? log(loc->reference / v) / loc->scale > zmin : 1;
}

ddp_result accept_localize(int nnodes, const node_pair *pairs, const double *value, int npairs,
                           double slow_pct, double zmin, accept_localization *loc) {
  memset(loc, 0, sizeof *loc);
  loc->node_bad = calloc((size_t)nnodes + 1, sizeof *loc->node_bad);
  loc->node_value = calloc((size_t)nnodes + 1, sizeof *loc->node_value);
  loc->pair_state = calloc((size_t)npairs + 1, sizeof *loc->pair_state);
  double *tmp = calloc((size_t)nnodes + npairs + 1, sizeof *tmp); /* [0, nnodes): node values; then pairs */
  int *count = calloc((size_t)nnodes + 1, sizeof *count);
  if (!loc->node_bad || !loc->node_value || !loc->pair_state || !tmp || !count) {
    free(tmp);
    free(count);
    accept_localization_free(loc);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  double limit = 1 - slow_pct / 100;
  for (;;) {
    /* reference: median over the healthy nodes of their median pair with healthy partners */
    int m = 0;
    for (int i = 0; i < nnodes; i++) {
      if (loc->node_bad[i]) continue;
      double v = node_median(i, pairs, value, npairs, loc->node_bad, tmp + nnodes, &count[i]);
      loc->node_value[i] = v;
      if (isfinite(v)) tmp[m++] = v;
    }
    loc->reference = m ? stats_percentile(tmp, m, 0.5) : NAN;
    if (!m) break;
    loc->scale = pair_scale(pairs, value, npairs, loc, limit, tmp + nnodes);
    /* the worst node all of whose (>= 2) pairs with healthy partners are slow */
    int worst = -1;
    for (int i = 0; i < nnodes; i++) {
      if (loc->node_bad[i] || count[i] < 2) continue;
      int all_slow = 1;
      for (int p = 0; p < npairs && all_slow; p++) {
        int other = pairs[p].a == i ? pairs[p].b : pairs[p].b == i ? pairs[p].a : -1;
        if (other < 0 || loc->node_bad[other] || !isfinite(value[p])) continue;
        if (!pair_slow(value[p], loc, limit, zmin)) all_slow = 0;
      }
      if (all_slow && (worst < 0 || loc->node_value[i] < loc->node_value[worst])) worst = i;
    }
    if (worst < 0) break;
    loc->node_bad[worst] = 1;
  }
  for (int p = 0; p < npairs; p++) {
    if (!isfinite(value[p])) loc->pair_state[p] = -1;
    else if (loc->node_bad[pairs[p].a] || loc->node_bad[pairs[p].b])
      loc->pair_state[p] = pair_slow(value[p], loc, limit, zmin) ? 2 : 0;
    else loc->pair_state[p] = pair_slow(value[p], loc, limit, zmin) ? 1 : 0;
  }
  /* a bad node's own value is the median of all its pairs, for the finding */
  for (int i = 0; i < nnodes; i++)
    if (loc->node_bad[i]) {
      int m = 0;
      for (int p = 0; p < npairs; p++)
        if ((pairs[p].a == i || pairs[p].b == i) && isfinite(value[p])) tmp[m++] = value[p];
      loc->node_value[i] = m ? stats_percentile(tmp, m, 0.5) : NAN;
    }
  free(tmp);
  free(count);
  return DDP_OK;
}

void accept_localization_free(accept_localization *loc) {
  free(loc->node_bad);
  free(loc->node_value);
  free(loc->pair_state);
  memset(loc, 0, sizeof *loc);
}
