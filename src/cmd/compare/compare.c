/* compare.c: the verdict for one metric, the report and its four formats, the A/A noise file, and the
 * `compare` command line. Result files become runs in compare_load.c; the statistics are compare_stats.c.
 *
 * The verdict, in order: fewer than CMP_MIN_RUNS runs on a side -> medians only (' '); p >= alpha -> '~';
 * the CI of the change not on the side of the change of medians -> '~'; |change| <= noise floor -> '~';
 * otherwise '+' or '-' by the metric's direction. A '-' beyond
 * --threshold-pct is a regression and makes the exit code 5. */
#include "compare.h"

#include <stddef.h>

#include "commands.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common.h"
#include "compare_stats.h"
#include "input_file.h"
#include "stats.h"

void cmp_options_defaults(cmp_options *o) {
  memset(o, 0, sizeof *o);
  o->alpha = 0.05;
  o->threshold_pct = 2.0;
}

/* ---- one metric -------------------------------------------------------------------------------------- */

static int all_positive(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!(x[i] > 0)) return 0;
  return 1;
}

static int finite_all(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

int cmp_evaluate(const cmp_input *in, const cmp_options *o, cmp_row *out) {
  memset(out, 0, sizeof *out);
  out->p = out->change_pct = NAN;
  out->ci_lo_pct = -INFINITY, out->ci_hi_pct = INFINITY;
  out->verdict = ' ';
  if (in->na < 1 || in->nb < 1 || !finite_all(in->a, in->na) || !finite_all(in->b, in->nb)) return -1;
  out->med_a = stats_percentile(in->a, in->na, 0.5);
  out->med_b = stats_percentile(in->b, in->nb, 0.5);
  out->floor_pct = fmax(o->noise_pct, in->floor_pct);
  if (out->med_a != 0) out->change_pct = 100.0 * (out->med_b / out->med_a - 1.0);
  if (in->runs_a < CMP_MIN_RUNS || in->runs_b < CMP_MIN_RUNS) return 0;

  mwu_result m;
  if (mwu_test(in->a, in->na, in->b, in->nb, &m) != 0) return -1;
  out->tested = 1;
  out->p = m.p;
  out->exact = m.exact;

  double lo, hi;
  int rc;
  if (all_positive(in->a, in->na) && all_positive(in->b, in->nb)) {
    /* CI of the ratio B/A: the shift of log values, exponentiated. */
    double *la = malloc((size_t)in->na * sizeof *la), *lb = malloc((size_t)in->nb * sizeof *lb);
    if (!la || !lb) {
      free(la), free(lb);
      return -1;
    }
    for (int i = 0; i < in->na; i++) la[i] = log(in->a[i]);
    for (int i = 0; i < in->nb; i++) lb[i] = log(in->b[i]);
    rc = shift_ci(la, in->na, lb, in->nb, o->alpha, &lo, &hi);
    free(la), free(lb);
    if (rc == 0) out->ci_lo_pct = 100.0 * expm1(lo), out->ci_hi_pct = 100.0 * expm1(hi);
  } else {
    rc = shift_ci(in->a, in->na, in->b, in->nb, o->alpha, &lo, &hi);
    if (rc == 0 && out->med_a != 0)
      out->ci_lo_pct = 100.0 * lo / fabs(out->med_a), out->ci_hi_pct = 100.0 * hi / fabs(out->med_a);
  }
  if (rc < 0) return -1;

  /* A change is called only when the test, the interval and the medians agree on its direction (they can
   * disagree only through ties between the sides, or for odd shapes where the medians move against the
   * bulk of the samples), and it is beyond the noise floor. */
  int up = out->change_pct > 0, ci_agrees = up ? out->ci_lo_pct > 0 : out->ci_hi_pct < 0;
  if (!(m.p < o->alpha) || !isfinite(out->change_pct) || out->change_pct == 0 || !ci_agrees ||
      fabs(out->change_pct) <= out->floor_pct) {
    out->verdict = '~';
    return 0;
  }
  int better = !up == (in->better == CMP_LOWER_BETTER);
  out->verdict = better ? '+' : '-';
  out->regression = !better && fabs(out->change_pct) > o->threshold_pct;
  return 0;
}

/* ---- report ------------------------------------------------------------------------------------------ */

void cmp_report_init(cmp_report *r, const cmp_options *o) {
  memset(r, 0, sizeof *r);
  r->opt = *o;
}

void cmp_report_free(cmp_report *r) {
  for (int i = 0; i < r->ndiff; i++) free(r->diff[i].key), free(r->diff[i].a), free(r->diff[i].b);
  for (int i = 0; i < r->nnotes; i++) free(r->notes[i]);
  for (int i = 0; i < r->nlines; i++) free(r->lines[i].name), free(r->lines[i].unit);
  free(r->diff), free(r->notes), free(r->lines), free(r->label_a), free(r->label_b);
  memset(r, 0, sizeof *r);
}

int cmp_report_add(cmp_report *r, const char *name, const char *unit, const cmp_input *in) {
  cmp_line l = {.better = in->better, .na = in->na, .nb = in->nb};
  if (cmp_evaluate(in, &r->opt, &l.row) != 0) return -1;
  cmp_line *g = realloc(r->lines, (size_t)(r->nlines + 1) * sizeof *g);
  if (g) r->lines = g;
  if (!g || !(l.name = strdup(name)) || !(l.unit = strdup(unit))) {
    free(l.name);
    return -1;
  }
  r->lines = g;
  r->lines[r->nlines++] = l;
  return 0;
}

void cmp_report_note(cmp_report *r, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **g = realloc(r->notes, (size_t)(r->nnotes + 1) * sizeof *g);
  if (!g) return;
  r->notes = g;
  if ((r->notes[r->nnotes] = strdup(buf))) r->nnotes++;
}

void cmp_report_add_diff(cmp_report *r, const char *key, const char *a, const char *b, int mixed_a, int mixed_b,
                         int refused) {
  cmp_prov_diff *g = realloc(r->diff, (size_t)(r->ndiff + 1) * sizeof *g);
  if (!g) return;
  r->diff = g;
  r->diff[r->ndiff++] = (cmp_prov_diff){strdup(key), strdup(a), strdup(b), mixed_a, mixed_b, refused};
}

int cmp_report_exit_code(const cmp_report *r) {
  for (int i = 0; i < r->nlines; i++)
    if (r->lines[i].row.regression) return CMP_EXIT_REGRESSION;
  return 0;
}

/* ---- formats ----------------------------------------------------------------------------------------- */

/* A value with four significant digits and no exponent. */
static const char *fmt_value(char *buf, size_t n, double v) {
  double a = fabs(v);
  int d = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : a >= 0.01 ? 4 : 6;
  snprintf(buf, n, "%.*f", d, v);
  return buf;
}

static const char *fmt_pct(char *buf, size_t n, double v) {
  if (isnan(v))
    snprintf(buf, n, "n/a");
  else if (isinf(v))
    snprintf(buf, n, "%sinf", v < 0 ? "-" : "+");
  else
    snprintf(buf, n, "%+.2f%%", v);
  return buf;
}

static const char *fmt_p(char *buf, size_t n, double p) {
  if (p < 0.001)
    snprintf(buf, n, "<0.001");
  else
    snprintf(buf, n, "%.3f", p);
  return buf;
}

static const char *fmt_ci(char *buf, size_t n, const cmp_row *w) {
  char lo[32], hi[32];
  if (isinf(w->ci_lo_pct))
    snprintf(buf, n, "unbounded");
  else
    snprintf(buf, n, "[%s, %s]", fmt_pct(lo, sizeof lo, w->ci_lo_pct), fmt_pct(hi, sizeof hi, w->ci_hi_pct));
  return buf;
}

/* A/A: the spread between identical stacks, the larger |end| of the CI (what --noise reads back); NaN if unbounded. */
static double aa_spread(const cmp_row *w) {
  return w->tested && isfinite(w->ci_lo_pct) ? fmax(fabs(w->ci_lo_pct), fabs(w->ci_hi_pct)) : NAN;
}

static const char *verdict_word(const cmp_row *w) {
  return w->verdict == '-' ? (w->regression ? " worse, beyond threshold" : " worse") : w->verdict == '+' ? " better" : "";
}

static const char *better_name(cmp_better b) { return b == CMP_LOWER_BETTER ? "lower" : "higher"; }

static int any_floor(const cmp_report *r) {
  for (int i = 0; i < r->nlines; i++)
    if (r->lines[i].row.floor_pct > 0) return 1;
  return 0;
}

static void print_header_lines(const cmp_report *r, FILE *out, const char *lead) {
  fprintf(out, "%sddpbench compare: A = %d run%s (%s), B = %d run%s (%s)\n", lead, r->runs_a, r->runs_a == 1 ? "" : "s",
          r->label_a ? r->label_a : "-", r->runs_b, r->runs_b == 1 ? "" : "s", r->label_b ? r->label_b : "-");
  if (r->opt.pool_steps)
    fprintf(out, "%ssamples: POOLED per-step samples of every run (--pool-steps): steps inside a run are not "
                 "independent, so p-values overstate significance\n", lead);
  else
    fprintf(out, "%ssamples: one per run (its median step); steps inside a run are not independent\n", lead);
  if (r->runs_a < CMP_MIN_RUNS || r->runs_b < CMP_MIN_RUNS)
    fprintf(out, "%sfewer than %d runs on a side: medians only, no significance can be claimed\n", lead,
            CMP_MIN_RUNS);
}

static void print_text(const cmp_report *r, FILE *out) {
  print_header_lines(r, out, "");
  if (r->ndiff) {
    int w = 8;
    for (int i = 0; i < r->ndiff; i++) w = (int)strlen(r->diff[i].key) > w ? (int)strlen(r->diff[i].key) : w;
    fprintf(out, "\nwhat differs (A | B):\n");
    for (int i = 0; i < r->ndiff; i++) {
      const cmp_prov_diff *d = &r->diff[i];
      fprintf(out, "  %c %-*s  %s | %s%s%s%s\n", d->refused ? '!' : ' ', w, d->key, d->a, d->b,
              d->mixed_a ? "   (A's runs disagree)" : "", d->mixed_b ? "   (B's runs disagree)" : "",
              d->refused ? "   (model config)" : "");
    }
  } else {
    fprintf(out, "\nwhat differs: nothing in the provenance (versions, environment, config, hosts, GPUs)\n");
  }
  if (r->nprov_same) fprintf(out, "  same on both sides: %d keys\n", r->nprov_same);
  if (r->same_provenance)
    fprintf(out, "A/A: both sides have the same provenance, so each metric's CI is its noise between identical "
                 "stacks (column A/A noise; record it with --format json and pass it as --noise FILE)\n");
  for (int i = 0; i < r->nnotes; i++) fprintf(out, "note: %s\n", r->notes[i]);

  int nw = 6, floor = any_floor(r), aa = r->same_provenance;
  for (int i = 0; i < r->nlines; i++) nw = (int)strlen(r->lines[i].name) > nw ? (int)strlen(r->lines[i].name) : nw;
  fprintf(out, "\n%-*s  %-9s %-6s  %12s  %12s  %9s  %-22s  %7s  %7s  %s%s%s\n", nw, "metric", "unit", "better",
          "A median", "B median", "change", "95% CI of change", "p", "n", floor ? "floor   " : "",
          aa ? "A/A noise " : "", "verdict");
  for (int i = 0; i < r->nlines; i++) {
    const cmp_line *l = &r->lines[i];
    const cmp_row *w = &l->row;
    char ma[32], mb[32], ch[32], ci[64], p[32], n[32], fl[48] = "", sp[32];
    snprintf(n, sizeof n, "%d+%d", l->na, l->nb);
    if (floor) snprintf(fl, sizeof fl, "%-7s ", w->floor_pct > 0 ? fmt_pct(ch, sizeof ch, w->floor_pct) + 1 : "-");
    if (aa) {
      double a = aa_spread(w);
      if (isnan(a)) snprintf(sp, sizeof sp, "n/a");
      else snprintf(sp, sizeof sp, "+-%.2f%%", a);
      snprintf(fl + strlen(fl), sizeof fl - strlen(fl), "%-9s ", sp);
    }
    if (w->tested) {
      fmt_p(p, sizeof p, w->p);
      fprintf(out, "%-*s  %-9s %-6s  %12s  %12s  %9s  %-22s  %7s  %7s  %s%c%s\n", nw, l->name, l->unit,
              better_name(l->better), fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b),
              fmt_pct(ch, sizeof ch, w->change_pct), fmt_ci(ci, sizeof ci, w), p, n, fl, w->verdict,
              verdict_word(w));
    } else {
      fprintf(out, "%-*s  %-9s %-6s  %12s  %12s  %9s  %-22s  %7s  %7s  %s(n<%d)\n", nw, l->name, l->unit,
              better_name(l->better), fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b), "", "",
              "", n, fl, CMP_MIN_RUNS);
    }
  }
  fprintf(out, "\nverdict: + better, - worse, ~ no significant change (p >= %g, or |change| within the noise floor); "
               "two-sided Mann-Whitney U, 95%% CI of the ratio B/A by inverting it; exit %d when a '-' exceeds %g%%\n",
          r->opt.alpha, CMP_EXIT_REGRESSION, r->opt.threshold_pct);
}

static void print_md(const cmp_report *r, FILE *out) {
  print_header_lines(r, out, "");
  fprintf(out, "\n### What differs\n\n");
  if (!r->ndiff) fprintf(out, "Nothing in the provenance (versions, environment, config, hosts, GPUs).\n");
  else {
    fprintf(out, "| key | A | B | |\n|---|---|---|---|\n");
    for (int i = 0; i < r->ndiff; i++) {
      const cmp_prov_diff *d = &r->diff[i];
      fprintf(out, "| `%s` | %s | %s | %s%s%s |\n", d->key, d->a, d->b, d->mixed_a ? "A's runs disagree " : "",
              d->mixed_b ? "B's runs disagree " : "", d->refused ? "model config" : "");
    }
  }
  if (r->same_provenance) fprintf(out, "\nA/A: same provenance on both sides; each CI is that metric's noise floor.\n");
  for (int i = 0; i < r->nnotes; i++) fprintf(out, "\n- %s", r->notes[i]);
  fprintf(out, "\n\n### Metrics\n\n| metric | unit | better | A median | B median | change | 95%% CI | p | n | floor | verdict |\n"
               "|---|---|---|--:|--:|--:|---|--:|--:|--:|:-:|\n");
  for (int i = 0; i < r->nlines; i++) {
    const cmp_line *l = &r->lines[i];
    const cmp_row *w = &l->row;
    char ma[32], mb[32], ch[32], ci[64], fl[32], p[16];
    fmt_pct(fl, sizeof fl, w->floor_pct);
    if (w->tested)
      fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %d+%d | %s | %c%s |\n", l->name, l->unit,
              better_name(l->better), fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b),
              fmt_pct(ch, sizeof ch, w->change_pct), fmt_ci(ci, sizeof ci, w), fmt_p(p, sizeof p, w->p), l->na,
              l->nb, fl + 1, w->verdict, verdict_word(w));
    else
      fprintf(out, "| %s | %s | %s | %s | %s | | | | %d+%d | %s | n<%d |\n", l->name, l->unit, better_name(l->better),
              fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b), l->na, l->nb, fl + 1,
              CMP_MIN_RUNS);
  }
}

/* CSV field: quoted when it holds a comma, quote or newline. */
static void csv_field(FILE *out, const char *s) {
  if (strpbrk(s, ",\"\n")) {
    fputc('"', out);
    for (; *s; s++) {
      if (*s == '"') fputc('"', out);
      fputc(*s, out);
    }
    fputc('"', out);
  } else {
    fputs(s, out);
  }
}

static void print_csv(const cmp_report *r, FILE *out) {
  print_header_lines(r, out, "# ");
  for (int i = 0; i < r->ndiff; i++)
    fprintf(out, "# differs: %s: %s | %s%s\n", r->diff[i].key, r->diff[i].a, r->diff[i].b,
            r->diff[i].mixed_a || r->diff[i].mixed_b ? " (runs disagree)" : "");
  for (int i = 0; i < r->nnotes; i++) fprintf(out, "# note: %s\n", r->notes[i]);
  fprintf(out, "metric,unit,better,n_a,n_b,median_a,median_b,change_pct,ci_lo_pct,ci_hi_pct,p,exact,floor_pct,"
               "verdict,regression\n");
  for (int i = 0; i < r->nlines; i++) {
    const cmp_line *l = &r->lines[i];
    const cmp_row *w = &l->row;
    csv_field(out, l->name);
    fprintf(out, ",%s,%s,%d,%d,%.9g,%.9g,%.6g,", l->unit, better_name(l->better), l->na, l->nb, w->med_a, w->med_b,
            w->change_pct);
    if (w->tested && isfinite(w->ci_lo_pct))
      fprintf(out, "%.6g,%.6g,", w->ci_lo_pct, w->ci_hi_pct);
    else
      fprintf(out, ",,");
    if (w->tested)
      fprintf(out, "%.6g,%d,", w->p, w->exact);
    else
      fprintf(out, ",,");
    fprintf(out, "%.6g,%c,%d\n", w->floor_pct, w->tested ? w->verdict : '?', w->regression);
  }
}

static cJSON *num_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static void print_json(const cmp_report *r, FILE *out) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "kind", "compare");
  cJSON_AddNumberToObject(doc, "ddpbench_compare", 1);
  cJSON *a = cJSON_AddObjectToObject(doc, "a"), *b = cJSON_AddObjectToObject(doc, "b");
  cJSON_AddStringToObject(a, "label", r->label_a ? r->label_a : "");
  cJSON_AddNumberToObject(a, "runs", r->runs_a);
  cJSON_AddStringToObject(b, "label", r->label_b ? r->label_b : "");
  cJSON_AddNumberToObject(b, "runs", r->runs_b);
  cJSON_AddNumberToObject(doc, "alpha", r->opt.alpha);
  cJSON_AddNumberToObject(doc, "threshold_pct", r->opt.threshold_pct);
  cJSON_AddNumberToObject(doc, "noise_pct", r->opt.noise_pct);
  cJSON_AddBoolToObject(doc, "pooled_steps", r->opt.pool_steps);
  cJSON_AddBoolToObject(doc, "same_provenance", r->same_provenance);
  cJSON_AddNumberToObject(doc, "provenance_keys_same", r->nprov_same);
  cJSON *diff = cJSON_AddArrayToObject(doc, "provenance_diff");
  for (int i = 0; i < r->ndiff; i++) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "key", r->diff[i].key);
    cJSON_AddStringToObject(d, "a", r->diff[i].a);
    cJSON_AddStringToObject(d, "b", r->diff[i].b);
    cJSON_AddBoolToObject(d, "a_runs_disagree", r->diff[i].mixed_a);
    cJSON_AddBoolToObject(d, "b_runs_disagree", r->diff[i].mixed_b);
    cJSON_AddBoolToObject(d, "model_config", r->diff[i].refused);
    cJSON_AddItemToArray(diff, d);
  }
  cJSON *notes = cJSON_AddArrayToObject(doc, "notes");
  for (int i = 0; i < r->nnotes; i++) cJSON_AddItemToArray(notes, cJSON_CreateString(r->notes[i]));
  cJSON *ms = cJSON_AddArrayToObject(doc, "metrics");
  for (int i = 0; i < r->nlines; i++) {
    const cmp_line *l = &r->lines[i];
    const cmp_row *w = &l->row;
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "name", l->name);
    cJSON_AddStringToObject(m, "unit", l->unit);
    cJSON_AddStringToObject(m, "better", better_name(l->better));
    cJSON_AddNumberToObject(m, "n_a", l->na);
    cJSON_AddNumberToObject(m, "n_b", l->nb);
    cJSON_AddItemToObject(m, "median_a", num_or_null(w->med_a));
    cJSON_AddItemToObject(m, "median_b", num_or_null(w->med_b));
    cJSON_AddItemToObject(m, "change_pct", num_or_null(w->change_pct));
    if (w->tested && isfinite(w->ci_lo_pct)) {
      cJSON *ci = cJSON_AddArrayToObject(m, "ci_pct");
      cJSON_AddItemToArray(ci, cJSON_CreateNumber(w->ci_lo_pct));
      cJSON_AddItemToArray(ci, cJSON_CreateNumber(w->ci_hi_pct));
    } else {
      cJSON_AddNullToObject(m, "ci_pct");
    }
    cJSON_AddItemToObject(m, "p", w->tested ? num_or_null(w->p) : cJSON_CreateNull());
    cJSON_AddBoolToObject(m, "p_exact", w->exact);
    cJSON_AddNumberToObject(m, "floor_pct", w->floor_pct);
    if (r->same_provenance) cJSON_AddItemToObject(m, "aa_noise_pct", num_or_null(aa_spread(w)));
    char v[2] = {w->tested ? w->verdict : '?', 0};
    cJSON_AddStringToObject(m, "verdict", v);
    cJSON_AddBoolToObject(m, "regression", w->regression);
    cJSON_AddItemToArray(ms, m);
  }
  cJSON_AddBoolToObject(doc, "regression", cmp_report_exit_code(r) == CMP_EXIT_REGRESSION);
  char *s = cJSON_Print(doc);
  if (s) fprintf(out, "%s\n", s);
  free(s);
  cJSON_Delete(doc);
}

void cmp_report_print(const cmp_report *r, cmp_format f, FILE *out) {
  switch (f) {
  case CMP_TEXT: print_text(r, out); break;
  case CMP_MD: print_md(r, out); break;
  case CMP_CSV: print_csv(r, out); break;
  case CMP_JSON: print_json(r, out); break;
  }
}

/* ---- the A/A noise file ------------------------------------------------------------------------------ */

void cmp_noise_free(cmp_noise *n) {
  for (int i = 0; i < n->n; i++) free(n->name[i]);
  free(n->name), free(n->floor_pct);
  memset(n, 0, sizeof *n);
}

int cmp_noise_read(const char *path, cmp_noise *out) {
  memset(out, 0, sizeof *out);
  char why[300];
  size_t len = 0;
  char *text = input_file_read(path, INPUT_MAX_RESULT, &len, why, sizeof why);
  if (!text) return ddp_usage_error("compare: --noise %s: %s", path, why), 2;
  cJSON *doc = cJSON_Parse(text);
  free(text);
  cJSON *ms = cJSON_GetObjectItemCaseSensitive(doc, "metrics");
  int rc = 0;
  if (!doc || !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(doc, "ddpbench_compare")) || !cJSON_IsArray(ms)) {
    rc = 2, ddp_usage_error("compare: --noise %s: not a `ddpbench compare --format json` document", path);
  } else if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "same_provenance"))) {
    rc = 2, ddp_usage_error("compare: --noise %s: not an A/A comparison (its sides differ in provenance)", path);
  } else {
    int cap = cJSON_GetArraySize(ms);
    out->name = calloc((size_t)cap + 1, sizeof *out->name);
    out->floor_pct = calloc((size_t)cap + 1, sizeof *out->floor_pct);
    cJSON *m;
    cJSON_ArrayForEach(m, ms) {
      cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name"), *ci = cJSON_GetObjectItemCaseSensitive(m, "ci_pct");
      if (!cJSON_IsString(name)) {
        rc = 2, ddp_usage_error("compare: --noise %s: a metric without a name", path);
        break;
      }
      if (!cJSON_IsArray(ci)) continue; /* too few runs to bound it: no floor */
      cJSON *lo = cJSON_GetArrayItem(ci, 0), *hi = cJSON_GetArrayItem(ci, 1);
      if (!cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) || !out->name || !out->floor_pct) {
        rc = 2, ddp_usage_error("compare: --noise %s: metric %s: ci_pct is not two numbers", path, name->valuestring);
        break;
      }
      out->name[out->n] = strdup(name->valuestring);
      out->floor_pct[out->n++] = fmax(fabs(lo->valuedouble), fabs(hi->valuedouble));
    }
  }
  cJSON_Delete(doc);
  if (rc) cmp_noise_free(out);
  return rc;
}

double cmp_noise_floor(const cmp_noise *n, const char *name) {
  for (int i = 0; n && i < n->n; i++)
    if (n->name[i] && strcmp(n->name[i], name) == 0) return n->floor_pct[i];
  return 0;
}

/* ---- the subcommand ---------------------------------------------------------------------------------- */
typedef struct {
  char a[16384], b[16384]; /* the sides' files or folders, comma-separated (the operands before and after --) */
  int format;
  double threshold_pct, alpha, noise_pct;
  char noise[1024];
  int pool_steps, allow_config_diff;
} cmp_args;

#define OFF(f) offsetof(cmp_args, f), 0
#define STR(f) offsetof(cmp_args, f), sizeof(((cmp_args *)0)->f)
static const opt_spec CMP[] = {
    {"a", NULL, 0, OPT_STR, STR(a), "", .arg = "FILES", .help = "side A: result files or folders (the words before --)",
     .flags = OPT_OPERANDS},
    {"b", NULL, 0, OPT_STR, STR(b), "", .arg = "FILES", .help = "side B: result files or folders (the words after --)",
     .flags = OPT_OPERANDS},
    {"format", NULL, 0, OPT_ENUM, OFF(format), "text", .choices = "text|md|csv|json", .help = "output format"},
    {"threshold_pct", NULL, 0, OPT_DOUBLE, OFF(threshold_pct), "2", 0, 1e6, .arg = "PCT",
     .help = "exit 5 when a metric is significantly worse by more than this"},
    {"alpha", NULL, 0, OPT_DOUBLE, OFF(alpha), "0.05", 1e-9, 0.5, .help = "significance level of the Mann-Whitney test"},
    {"noise", NULL, 0, OPT_STR, STR(noise), "", .arg = "FILE",
     .help = "a recorded A/A comparison (--format json): no change is called inside each metric's A/A confidence interval"},
    {"noise_pct", NULL, 0, OPT_DOUBLE, OFF(noise_pct), "0", 0, 1e6, .arg = "PCT",
     .help = "no change is called within +-PCT % for any metric"},
    {"pool_steps", NULL, 0, OPT_BOOL, OFF(pool_steps), "false",
     .help = "use every step of every run as a sample instead of one per run (step times only; steps are not "
             "independent, so p-values overstate significance)"},
    {"allow_config_diff", NULL, 0, OPT_BOOL, OFF(allow_config_diff), "false", .help = "compare sides whose model configs differ"},
};
static const opt_table CMP_TABLE = {"comparison", CMP, (int)(sizeof CMP / sizeof CMP[0])};

static ddp_result cmp_tables(opt_set *s, void *args) { return opt_set_add(s, &CMP_TABLE, args); }

/* A side's comma-separated list into argv-style pointers into buf (modified). */
static int split_side(char *buf, char **out, int max) {
  int n = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save)) out[n++] = t;
  return n;
}

static ddp_result cmp_run(cmd_ctx *c) {
  cmp_args *g = c->args;
  cmp_options o;
  cmp_options_defaults(&o);
  o.threshold_pct = g->threshold_pct;
  o.alpha = g->alpha;
  o.noise_pct = g->noise_pct;
  o.pool_steps = g->pool_steps;
  static const cmp_format fmts[] = {CMP_TEXT, CMP_MD, CMP_CSV, CMP_JSON};
  enum { MAXF = 4096 };
  char **a = calloc(MAXF, sizeof *a), **b = calloc(MAXF, sizeof *b);
  if (!a || !b) {
    free(a), free(b);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  int na = split_side(g->a, a, MAXF), nb = split_side(g->b, b, MAXF);
  if (nb == 0 && na == 2) b[nb++] = a[--na]; /* compare A_DIR B_DIR */
  int rc = 0;
  if (na == 0 || nb == 0)
    rc = 2, ddp_usage_error("compare: side %s is empty (usage: ddpbench compare A.json ... -- B.json ...)", na == 0 ? "A" : "B");
  cmp_noise noise = {0};
  if (!rc && g->noise[0]) rc = cmp_noise_read(g->noise, &noise);
  cmp_report r;
  cmp_report_init(&r, &o);
  if (!rc) rc = cmp_load(a, na, b, nb, g->noise[0] ? &noise : NULL, g->allow_config_diff, &r);
  if (!rc) {
    cmp_report_print(&r, fmts[g->format & 3], stdout);
    fflush(stdout);
    rc = cmp_report_exit_code(&r);
  }
  cmp_report_free(&r);
  cmp_noise_free(&noise);
  free(a), free(b);
  if (rc == 2) return DDP_ERR_USAGE;
  c->exit_code = rc;
  return DDP_OK;
}

const cmd_def cmd_compare = {
    .name = "compare",
    .summary = "two sets of result files (NCCL, driver or CUDA A/B), benchstat's statistics",
    .usage = "usage: ddpbench compare [options] A.json [A2.json ...] -- B.json [B2.json ...]\n"
             "       ddpbench compare [options] A_DIR B_DIR\n",
    .about = "Compares two sets of result files, benchstat's way. Each run is one sample: its median step, "
             "because steps inside one run are not independent. Per metric: the medians of A and B, the change, "
             "its 95 % confidence interval, the two-sided Mann-Whitney U p-value and a verdict (~ no significant "
             "change, + better, - worse). With fewer than 4 runs a side only the medians are printed: no "
             "significance can be claimed. Run 10 or more per side, interleaved (launch/ab.sh does). The "
             "provenance diff (versions, NCCL_* and transport environment, config, hosts, GPUs) is printed first. "
             "Exit 5: a significant regression beyond --threshold-pct.\nExample: ddpbench compare runs/nccl-2.27/ "
             "runs/nccl-2.28/\n",
    .args_size = sizeof(cmp_args),
    .tables = cmp_tables,
    .run = cmp_run,
};
