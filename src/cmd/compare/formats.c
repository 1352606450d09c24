/* formats.c: compare's report in its four formats (text, markdown, CSV, JSON), from the model (model.c). */
#include "compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common.h"
#include "compare_stats.h"
#include "csv.h"
#include "input_file.h"
#include "stats.h"

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

/* The change column: a percentage, or "from 0" where side A's median is 0. */
static const char *fmt_change(char *buf, size_t n, const cmp_row *w) {
  if (w->from_zero) return snprintf(buf, n, "from 0"), buf;
  return fmt_pct(buf, n, w->change_pct);
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
              fmt_change(ch, sizeof ch, w), fmt_ci(ci, sizeof ci, w), p, n, fl, w->verdict,
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
              fmt_change(ch, sizeof ch, w), fmt_ci(ci, sizeof ci, w), fmt_p(p, sizeof p, w->p), l->na,
              l->nb, fl + 1, w->verdict, verdict_word(w));
    else
      fprintf(out, "| %s | %s | %s | %s | %s | | | | %d+%d | %s | n<%d |\n", l->name, l->unit, better_name(l->better),
              fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b), l->na, l->nb, fl + 1,
              CMP_MIN_RUNS);
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
    csv_quote(out, l->name);
    fprintf(out, ",%s,%s,%d,%d,%.9g,%.9g,", l->unit, better_name(l->better), l->na, l->nb, w->med_a, w->med_b);
    if (isfinite(w->change_pct)) fprintf(out, "%.6g", w->change_pct); /* empty where not defined (from 0) */
    fputc(',', out);
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
    if (w->from_zero) cJSON_AddTrueToObject(m, "from_zero");
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
