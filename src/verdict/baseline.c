/* baseline.c: a baseline's figures over its runs, their spread and the floors they support (baseline.h); the
 * --baseline list's files read once. Never judges a run's figure and never prints but the list's one usage line. */
#include "baseline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* 1 / Phi^-1(3/4): the MAD of Gaussian noise times this is its standard deviation */
#define MAD_TO_SD 1.4826

double baseline_spread_log(const double *logv, int n) {
  double *x = malloc(((size_t)n + 1) * sizeof *x);
  if (!x) return NAN;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(logv[i])) x[k++] = logv[i];
  double s = NAN;
  if (k == 2) s = fabs(x[0] - x[1]) / 2;
  if (k >= 3) {
    double m = stats_percentile(x, k, 0.5);
    for (int i = 0; i < k; i++) x[i] = fabs(x[i] - m);
    s = MAD_TO_SD * stats_percentile(x, k, 0.5);
  }
  free(x);
  return s;
}

double baseline_samples_spread(const result_record *x) {
  if (!x || !x->samples || x->nsamples < 3) return NAN;
  double *l = malloc((size_t)x->nsamples * sizeof *l);
  if (!l) return NAN;
  int k = 0;
  for (int i = 0; i < x->nsamples; i++)
    if (isfinite(x->samples[i]) && x->samples[i] > 0) l[k++] = log(x->samples[i]);
  double s = k >= 3 ? baseline_spread_log(l, k) : NAN;
  free(l);
  return s;
}

void baseline_figure_of(const double *v, const double *within, int n, baseline_figure *f) {
  memset(f, 0, sizeof *f);
  f->level = f->between = f->within = NAN;
  double *l = malloc(((size_t)n + 1) * sizeof *l);
  if (!l) return;
  for (int i = 0; i < n; i++) {
    if (!(isfinite(v[i]) && v[i] > 0)) continue;
    l[f->runs++] = log(v[i]);
    if (within && isfinite(within[i]) && !(within[i] <= f->within)) f->within = within[i];
  }
  if (f->runs) f->level = exp(stats_percentile(l, f->runs, 0.5));
  f->between = baseline_spread_log(l, f->runs);
  free(l);
}

static double pct(double log_spread) { return 100 * expm1(log_spread); }

void baseline_floor_make(const baseline_figure *f, double run_sd, double tolerance_pct, double cv_pct,
                         baseline_floor *out) {
  memset(out, 0, sizeof *out);
  out->floor = out->margin_pct = out->spread_pct = out->noisy_pct = NAN;
  if (!(isfinite(f->level) && f->level > 0 && f->runs > 0)) return;
  double b = isfinite(f->between) ? f->between : 0;
  /* never below the figure's own spread inside a baseline run: 3 runs of a pair that spread 46 % inside each gave
   * a between-run spread of 4.8 %, and healthy re-runs failed their floors */
  if (isfinite(f->within)) b = fmax(b, f->within);
  if (f->runs < 3) b = fmax(b, log1p(cv_pct / 100));
  double r = isfinite(run_sd) ? run_sd : 0, s = sqrt(b * b + r * r);
  double noise = 1 - exp(-BASELINE_Z * s), tol = tolerance_pct / 100;
  double measured = fmax(isfinite(f->between) ? f->between : -1, isfinite(f->within) ? f->within : -1);
  out->noisy_pct = measured >= 0 ? pct(measured) : NAN;
  out->noisy = measured >= 0 && out->noisy_pct > BASELINE_NOISY_PCT;
  out->spread_pct = pct(s);
  /* how the spread came about, as the finding says it */
  char how[72];
  if (f->runs == 1)
    snprintf(how, sizeof how, "1 run, between-run CV assumed %g %%", cv_pct);
  else if (f->runs == 2)
    snprintf(how, sizeof how, "2 runs, spread %.1f %%, at least the assumed %g %%", pct(f->between), cv_pct);
  else
    snprintf(how, sizeof how, "%d runs, spread %.1f %%", f->runs, pct(f->between));
  char noisy[48] = "";
  if (out->noisy) snprintf(noisy, sizeof noisy, "; noisy: spread %.0f %% in it", out->noisy_pct);
  if (noise > tol && noise > BASELINE_REFUSE_PCT / 100) {
    out->refused = 1;
    snprintf(out->src, sizeof out->src, "baseline too noisy: spread %.1f %% (%s%s) puts a floor %.0f %% below its %.4g",
             out->spread_pct, how, noisy, 100 * noise, f->level);
    return;
  }
  out->margin_pct = 100 * fmax(tol, noise);
  out->floor = f->level * (1 - fmax(tol, noise));
  char why[48];
  if (noise > tol)
    snprintf(why, sizeof why, "%g x %.1f %%%s", BASELINE_Z, out->spread_pct, isfinite(run_sd) && run_sd > 0 ? " with this run's" : "");
  else
    snprintf(why, sizeof why, "--tolerance-pct");
  snprintf(out->src, sizeof out->src, "baseline %.4g (%s%s) less %.3g %% (%s)", f->level, how, noisy, out->margin_pct, why);
}

double baseline_shared_shift(const double *x, int n) {
  double *v = malloc(((size_t)n + 1) * sizeof *v);
  if (!v) return 0;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(x[i])) v[k++] = x[i];
  double s = k >= BASELINE_SHIFT_MIN ? stats_percentile(v, k, 0.75) : 0;
  free(v);
  return s < -1e-3 ? s : 0; /* under 0.1 %: the rounding of a level taken through logs */
}

/* ---- a baseline document's figures -------------------------------------------------------------------------- */
int baseline_doc_figures(const result_doc *d) {
  int n = 0;
  for (int i = 0; i < d->nrecords; i++) /* per-GPU figures, or the node and pair allreduces */
    n += !strcmp(d->records[i].measurement, "accept") || !strcmp(d->records[i].measurement, "allreduce");
  return n;
}

static int is_pair(const result_record *x) {
  return !strcmp(x->measurement, "allreduce") && !strncmp(x->group, "pair:", 5) && !strcmp(x->metric, "busbw_gbs");
}

double baseline_doc_pair(const result_doc *d, const char *ha, const char *hb) {
  char ab[160], ba[160];
  snprintf(ab, sizeof ab, "%.70s,%.70s", ha, hb);
  snprintf(ba, sizeof ba, "%.70s,%.70s", hb, ha);
  for (int i = 0; d && i < d->nrecords; i++) {
    const result_record *x = &d->records[i];
    const char *h = result_record_label(x, "hosts");
    if (!is_pair(x) || !h) continue;
    if ((!strcmp(h, ab) || !strcmp(h, ba)) && isfinite(x->value)) return x->value;
  }
  return NAN;
}

int baseline_doc_pairs(const result_doc *d, double *median, double *spread, double *lo, double *hi) {
  int n = 0;
  double *v = d && d->nrecords ? malloc((size_t)d->nrecords * sizeof *v) : NULL;
  for (int i = 0; v && i < d->nrecords; i++)
    if (is_pair(&d->records[i]) && isfinite(d->records[i].value) && d->records[i].value > 0) v[n++] = d->records[i].value;
  double l = NAN, h = NAN;
  for (int i = 0; i < n; i++) l = i ? fmin(l, v[i]) : v[i], h = i ? fmax(h, v[i]) : v[i];
  if (median) *median = n ? stats_percentile(v, n, 0.5) : NAN;
  if (lo) *lo = l;
  if (hi) *hi = h;
  if (spread) {
    for (int i = 0; i < n; i++) v[i] = log(v[i]);
    *spread = n >= 3 ? baseline_spread_log(v, n) : NAN;
  }
  free(v);
  return n;
}

/* ---- the --baseline list --------------------------------------------------------------------------------------- */
void baseline_docs_free(result_doc *docs, int n) {
  for (int i = 0; docs && i < n; i++) result_free(&docs[i]);
  free(docs);
}

ddp_result baseline_docs_load(const char *list, const char *where, result_doc **docs, int *n) {
  *docs = NULL, *n = 0;
  int cap = 1;
  for (const char *s = list; *s; s++) cap += *s == ',';
  char *names = strdup(list);
  result_doc *d = calloc((size_t)cap, sizeof *d);
  if (!names || !d) {
    free(names), free(d);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  ddp_result r = DDP_OK;
  int k = 0;
  for (char *s = names, *next; r == DDP_OK && s; s = next) {
    next = strchr(s, ',');
    if (next) *next++ = 0;
    if (!*s) {
      r = ddp_usage_error("%s %s: an empty file name in the list", where, list);
      break;
    }
    r = result_load(s, &d[k]); /* its one line names the file: "FILE: what is wrong" */
    if (r != DDP_OK) break;
    k++;
    if (!baseline_doc_figures(&d[k - 1]))
      r = ddp_usage_error("%s %s: no accept figures in it (made by `ddpbench accept --json`?)", where, s);
    for (int i = 0; r == DDP_OK && d[k - 1].run_id && i < k - 1; i++) /* a run twice would fake a spread of 0 */
      if (d[i].run_id && !strcmp(d[i].run_id, d[k - 1].run_id))
        r = ddp_usage_error("%s %s: the same run (run_id %s) as the list's file %d: a baseline's runs are distinct runs",
                            where, s, d[k - 1].run_id, i + 1);
  }
  free(names);
  if (r != DDP_OK) {
    baseline_docs_free(d, k);
    return r;
  }
  *docs = d, *n = k;
  return DDP_OK;
}
