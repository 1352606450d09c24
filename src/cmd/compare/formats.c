/* formats.c: compare's report in its four formats (text, markdown, CSV, JSON), from the model (model.c). Every
 * string that came from a file reaches text and markdown through cmp_escape (E and M below, put_wrapped): a
 * crafted file must not print lines, terminal escapes or table cells of its own. CSV quotes, cJSON escapes. */
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
  int d = a >= 1000 || a == 0 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : a >= 0.01 ? 4 : 6;
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
  if (w->med_a == 0 && w->med_b == 0) return snprintf(buf, n, "0"), buf;
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

/* ---- text -------------------------------------------------------------------------------------------- */

/* s escaped for text (E) or a markdown table (M), in one of 16 rotating buffers: enough for the strings of one
 * fprintf (compare is single-threaded). */
static const char *esc_ring(const char *s, int md) {
  static char ring[16][4096];
  static int next;
  char *b = ring[next++ & 15];
  return cmp_escape(b, sizeof ring[0], s, md);
}
#define E(s) esc_ring((s), 0)
#define M(s) esc_ring((s), 1)

/* text word-wrapped to width columns (0: one line), the first line led by lead, the others by more. */
static void put_wrapped(FILE *out, const char *lead, const char *more, const char *raw, int width) {
  size_t cap = 4 * strlen(raw) + 1; /* an escape is at most 4 bytes for each byte it stands for */
  char *text = malloc(cap);
  if (!text) return;
  cmp_escape(text, cap, raw, 0);
  int col = fprintf(out, "%s", E(lead)), lw = (int)strlen(more), first = 1;
  for (const char *p = text; *p;) {
    while (*p == ' ') p++;
    size_t k = strcspn(p, " ");
    if (!k) break;
    if (!first && width > 0 && col + 1 + (int)k > width) {
      fprintf(out, "\n%s", more);
      col = lw;
    } else if (!first) {
      fputc(' ', out), col++;
    }
    fwrite(p, 1, k, out);
    col += (int)k, p += k, first = 0;
  }
  fputc('\n', out);
  free(text);
}

/* A percentage in at most 7 columns: 2 decimals under 10 %, 1 under 1000 %, none above. */
static const char *fmt_pct_short(char *buf, size_t n, double v) {
  if (isnan(v)) snprintf(buf, n, "n/a");
  else if (isinf(v)) snprintf(buf, n, "%sinf", v < 0 ? "-" : "+");
  else snprintf(buf, n, "%+.*f%%", fabs(v) < 9.995 ? 2 : fabs(v) < 999.95 ? 1 : 0, v);
  return buf;
}

static const char *fmt_change_short(char *buf, size_t n, const cmp_row *w) {
  if (w->from_zero) return snprintf(buf, n, "from 0"), buf;
  if (w->med_a == 0 && w->med_b == 0) return snprintf(buf, n, "0"), buf;
  return fmt_pct_short(buf, n, w->change_pct);
}

static const char *fmt_ci_short(char *buf, size_t n, const cmp_row *w) {
  char lo[32], hi[32];
  if (isinf(w->ci_lo_pct)) snprintf(buf, n, "unbounded");
  else snprintf(buf, n, "[%s, %s]", fmt_pct_short(lo, sizeof lo, w->ci_lo_pct), fmt_pct_short(hi, sizeof hi, w->ci_hi_pct));
  return buf;
}

static const char *line_name(const cmp_report *r, const cmp_line *l) {
  return !r->opt.wide && l->brief ? l->brief : l->name;
}

/* What a side is, in at most width columns (0: whole): "nccl=2.21.5: 4 runs (runs/a)". */
static void print_side(const cmp_report *r, FILE *out, int s, int width) {
  char line[1400];
  const char *given = s ? r->label_b : r->label_a, *name = s ? r->name_b : r->name_a;
  int runs = s ? r->runs_b : r->runs_a;
  int k = snprintf(line, sizeof line, "  %c = %s%s%d run%s (%s)", s ? 'B' : 'A', name ? name : "", name ? ": " : "", runs,
                   runs == 1 ? "" : "s", given ? given : "-");
  if (width > 0 && k > width && width < (int)sizeof line) strcpy(line + width - 4, "...)");
  fprintf(out, "%s\n", E(line));
}

static void print_header_lines(const cmp_report *r, FILE *out, int width) {
  fprintf(out, "compare: B against A\n");
  print_side(r, out, 0, width);
  print_side(r, out, 1, width);
  if (r->opt.pool_steps)
    put_wrapped(out, "", "  ", "samples: POOLED per-step samples of every run (--pool-steps): steps inside a run are not "
                               "independent, so p-values overstate significance", width);
  else
    fprintf(out, "samples: one per run (its median step); steps inside a run are not independent\n");
  if (r->runs_a < CMP_MIN_RUNS || r->runs_b < CMP_MIN_RUNS)
    fprintf(out, "fewer than %d runs on a side: medians and changes only, not enough runs to test (no significance "
                 "can be claimed)\n", CMP_MIN_RUNS);
}

/* One line of the summary: name, the medians, the change, and the CI and p when tested. */
static void summary_row(const cmp_report *r, const cmp_line *l, FILE *out, int nw) {
  const cmp_row *w = &l->row;
  char ma[32], mb[32], ch[32], ci[64], p[32];
  const char *name = line_name(r, l);
  if ((int)strlen(name) > nw) fprintf(out, "    %s\n    %-*s", E(name), nw, "");
  else fprintf(out, "    %-*s", nw, E(name));
  fprintf(out, "  %10s -> %-10s  %7s", fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b),
          fmt_change_short(ch, sizeof ch, w));
  if (w->tested) fprintf(out, "  %-18s  p %s\n", fmt_ci_short(ci, sizeof ci, w), fmt_p(p, sizeof p, w->p));
  else fprintf(out, "  not enough runs to test\n");
}

/* The lines of one class in reading order (cmp_class_lines), at most max of them (0: all). */
static void summary_class(const cmp_report *r, FILE *out, cmp_class c, int count, const char *what, int max, int nw) {
  if (!count) return;
  fprintf(out, "  %d %s:\n", count, what);
  int *idx, m = cmp_class_lines(r, c, &idx), shown = 0;
  for (; shown < m && (max == 0 || shown < max); shown++) summary_row(r, &r->lines[idx[shown]], out, nw);
  free(idx);
  if (shown < count)
    fprintf(out, "    ... and %d more (%s)\n", count - shown, r->opt.wide ? "the table below" : "--wide lists every one");
}

static void print_summary(const cmp_report *r, FILE *out, int width) {
  cmp_summary s;
  cmp_report_summarize(r, &s);
  char noise[700], head[1000], what[64];
  cmp_noise_words(r, noise, sizeof noise);
  double t = r->opt.threshold_pct;
  int max = r->opt.wide ? 0 : 10, nw = 0;
  for (int i = 0; i < r->nlines; i++) {
    cmp_class c = cmp_line_class(&r->lines[i]);
    int k = (int)strlen(line_name(r, &r->lines[i]));
    if (c != CMP_SAME && c != CMP_UNTESTED && k > nw) nw = k;
  }
  if (!r->opt.wide && nw > 50) nw = 50; /* 50 + the figures' 68 columns */
  snprintf(head, sizeof head, "summary: %s, %d metric%s, threshold %g %%, noise floor %s", s.verdict, r->nlines,
           r->nlines == 1 ? "" : "s", t, noise);
  fputc('\n', out);
  put_wrapped(out, "", "  ", head, width);
  if (r->side_verdict) put_wrapped(out, "  ", "    ", r->side_verdict, width);
  if (s.untested)
    fprintf(out, "  not enough runs to test: A %d run%s, B %d run%s (%d a side are needed)\n", r->runs_a,
            r->runs_a == 1 ? "" : "s", r->runs_b, r->runs_b == 1 ? "" : "s", CMP_MIN_RUNS);
  snprintf(what, sizeof what, "regressed beyond %g %%", t);
  summary_class(r, out, CMP_REGRESSED, s.n[CMP_REGRESSED], what, max, nw);
  snprintf(what, sizeof what, "worse, within %g %%", t);
  summary_class(r, out, CMP_WORSE, s.n[CMP_WORSE], what, max, nw);
  summary_class(r, out, CMP_BETTER, s.n[CMP_BETTER], "better", max, nw);
  if (s.n[CMP_SAME])
    fprintf(out, "  %d unchanged (no significant change, or within the noise floor)\n", s.n[CMP_SAME]);
  snprintf(what, sizeof what, "with medians worse beyond %g %%, not tested", t);
  summary_class(r, out, CMP_UNTESTED_WORSE, s.n[CMP_UNTESTED_WORSE], what, max, nw);
  if (s.n[CMP_UNTESTED])
    fprintf(out, "  %d not tested, medians within %g %% or better\n", s.n[CMP_UNTESTED], t);
}

static void print_provenance(const cmp_report *r, FILE *out, int width) {
  if (r->ndiff) {
    int w = 8;
    for (int i = 0; i < r->ndiff; i++) w = (int)strlen(r->diff[i].key) > w ? (int)strlen(r->diff[i].key) : w;
    if (width > 0 && w > 40) w = 40;
    fprintf(out, "\nwhat differs (A | B):\n");
    for (int i = 0; i < r->ndiff; i++) {
      const cmp_prov_diff *d = &r->diff[i];
      char lead[128], text[4096];
      snprintf(lead, sizeof lead, "  %c %-*s  ", d->refused ? '!' : ' ', w, d->key);
      snprintf(text, sizeof text, "%s | %s%s%s%s", d->a, d->b, d->mixed_a ? "   (A's runs disagree)" : "",
               d->mixed_b ? "   (B's runs disagree)" : "", d->refused ? "   (model config)" : "");
      if (width > 0 && (int)strlen(lead) > w + 6) { /* a key longer than the column: on its own line */
        fprintf(out, "  %c %s\n", d->refused ? '!' : ' ', E(d->key));
        snprintf(lead, sizeof lead, "  %c %-*s  ", ' ', w, "");
      }
      char more[128];
      snprintf(more, sizeof more, "%*s", (int)strlen(lead) + 2, "");
      put_wrapped(out, lead, more, text, width);
    }
  } else {
    fprintf(out, "\nwhat differs: nothing in the provenance (versions, environment, config, hosts, GPUs)\n");
  }
  if (r->nprov_same) fprintf(out, "  same on both sides: %d keys\n", r->nprov_same);
  if (r->same_provenance)
    put_wrapped(out, "", "  ", "A/A: both sides have the same provenance, so each metric's CI is its noise between "
                               "identical stacks (--wide: column A/A noise; record it with --format json and pass it "
                               "as --noise FILE)", width);
  for (int i = 0; i < r->nnotes; i++) put_wrapped(out, "note: ", "  ", r->notes[i], width);
}

/* NCCL's account: what B changed (at most 20 lines unless --wide), the sides' disagreements, and the sentences
 * that tie it to the metrics; a side without an account in one line. */
static void print_nccl(const cmp_report *r, FILE *out, int width) {
  const cmp_nccl *m = &r->nccl;
  int both = m->reported[0] && m->reported[1], max = r->opt.wide ? m->ndiff : 20;
  if (both && m->ndiff) fprintf(out, "\nNCCL's account, what B changed:\n");
  else if (both && !m->disagree[0] && !m->disagree[1]) fprintf(out, "\nNCCL's account: the same choices on both sides\n");
  else if (both) fprintf(out, "\nNCCL's account: the sides' first runs made the same choices\n");
  else fputc('\n', out);
  for (int i = 0; i < m->ndiff && i < max; i++) {
    char line[1200];
    snprintf(line, sizeof line, "%s: %s", m->diff[i].what, m->diff[i].text);
    put_wrapped(out, "  ", "      ", line, width);
  }
  if (m->ndiff > max) fprintf(out, "  ... and %d more (--wide, or --format json)\n", m->ndiff - max);
  for (int s = 0; s < 2; s++)
    if (m->disagree[s]) {
      char line[800];
      snprintf(line, sizeof line, "side %c's runs disagree on NCCL's account: %s", s ? 'B' : 'A', m->disagree[s]);
      put_wrapped(out, "  ", "    ", line, width);
    }
  for (int i = 0; i < m->nsays; i++) put_wrapped(out, both ? "  " : "", "    ", m->says[i], width);
}

/* The floor (when floor: any_floor) and A/A (when aa) columns of a row ("" when neither). */
static void extra_columns(int floor, int aa, const cmp_row *w, char *fl, size_t n) {
  char ch[32], sp[32];
  fl[0] = 0;
  if (floor) snprintf(fl, n, "%-7s ", w->floor_pct > 0 ? fmt_pct(ch, sizeof ch, w->floor_pct) + 1 : "-");
  if (aa) {
    double a = aa_spread(w);
    if (isnan(a)) snprintf(sp, sizeof sp, "n/a");
    else snprintf(sp, sizeof sp, "+-%.2f%%", a);
    snprintf(fl + strlen(fl), n - strlen(fl), "%-9s ", sp);
  }
}

/* The compact table: one row per metric the compact view keeps, at most width columns (a longer name gets a
 * line of its own). No A/A noise column: in an A/A it is the CI's larger end (--wide and the JSON give it). */
static void print_compact_table(const cmp_report *r, FILE *out, int width) {
  static const char *verdicts[] = {"- REGRESSION", "- worse", "+ better", "~", "? worse", "?"};
  char fl[64];
  int floor = any_floor(r);
  extra_columns(floor, 0, &(cmp_row){0}, fl, sizeof fl);
  int vw = 7, nw = 6, hidden = 0; /* the verdict column: as wide as the widest shown ("verdict" at least) */
  for (int i = 0; i < r->nlines; i++) {
    if (r->lines[i].detail) {
      hidden++;
      continue;
    }
    int k = (int)strlen(line_name(r, &r->lines[i])), v = (int)strlen(verdicts[cmp_line_class(&r->lines[i])]);
    nw = k > nw ? k : nw;
    vw = v > vw ? v : vw;
  }
  int fixed = 2 + 9 + 2 + 9 + 2 + 8 + 2 + 18 + 2 + 6 + 2 + (int)strlen(fl) + vw;
  if (nw > width - fixed) nw = width - fixed > 20 ? width - fixed : 20;
  fputc('\n', out);
  if (hidden && r->brief_note) put_wrapped(out, "", "  ", r->brief_note, width);
  if (hidden) {
    char t[200];
    snprintf(t, sizeof t, "%d more metric%s with --wide (every metric and column)", hidden, hidden == 1 ? "" : "s");
    put_wrapped(out, "  ", "  ", t, width);
  }
  fprintf(out, "%-*s  %9s  %9s  %8s  %-18s  %6s  %s%s%s\n", nw, "metric", "A median", "B median", "change",
          "95% CI of change", "p", floor ? "floor   " : "", "", "verdict");
  for (int i = 0; i < r->nlines; i++) {
    const cmp_line *l = &r->lines[i];
    if (l->detail) continue;
    const cmp_row *w = &l->row;
    char ma[32], mb[32], ch[32], ci[64], p[32];
    const char *name = line_name(r, l);
    if ((int)strlen(name) > nw) put_wrapped(out, "", "  ", name, width), name = "";
    extra_columns(floor, 0, w, fl, sizeof fl);
    if (w->tested)
      fprintf(out, "%-*s  %9s  %9s  %8s  %-18s  %6s  %s%s\n", nw, E(name), fmt_value(ma, sizeof ma, w->med_a),
              fmt_value(mb, sizeof mb, w->med_b), fmt_change_short(ch, sizeof ch, w), fmt_ci_short(ci, sizeof ci, w),
              fmt_p(p, sizeof p, w->p), fl, verdicts[cmp_line_class(l)]);
    else
      fprintf(out, "%-*s  %9s  %9s  %8s  %-26s  %s%s\n", nw, E(name), fmt_value(ma, sizeof ma, w->med_a),
              fmt_value(mb, sizeof mb, w->med_b), fmt_change_short(ch, sizeof ch, w), "not enough runs to test", fl,
              verdicts[cmp_line_class(l)]);
  }
}

/* --wide: every metric, every column (as wide as the names). */
static void print_wide_table(const cmp_report *r, FILE *out) {
  int nw = 6, floor = any_floor(r), aa = r->same_provenance;
  for (int i = 0; i < r->nlines; i++) nw = (int)strlen(r->lines[i].name) > nw ? (int)strlen(r->lines[i].name) : nw;
  fprintf(out, "\n%-*s  %-9s %-6s  %12s  %12s  %9s  %-22s  %7s  %7s  %s%s%s\n", nw, "metric", "unit", "better",
          "A median", "B median", "change", "95% CI of change", "p", "n", floor ? "floor   " : "",
          aa ? "A/A noise " : "", "verdict");
  for (int i = 0; i < r->nlines; i++) {
    const cmp_line *l = &r->lines[i];
    const cmp_row *w = &l->row;
    char ma[32], mb[32], ch[32], ci[64], p[32], n[32], fl[64];
    snprintf(n, sizeof n, "%d+%d", l->na, l->nb);
    extra_columns(floor, aa, w, fl, sizeof fl);
    if (w->tested)
      fprintf(out, "%-*s  %-9s %-6s  %12s  %12s  %9s  %-22s  %7s  %7s  %s%c%s\n", nw, E(l->name), E(l->unit),
              better_name(l->better), fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b),
              fmt_change(ch, sizeof ch, w), fmt_ci(ci, sizeof ci, w), fmt_p(p, sizeof p, w->p), n, fl, w->verdict,
              verdict_word(w));
    else
      fprintf(out, "%-*s  %-9s %-6s  %12s  %12s  %9s  %-31s  %7s  %s?%s\n", nw, E(l->name), E(l->unit),
              better_name(l->better), fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b),
              fmt_change(ch, sizeof ch, w), "not enough runs to test", n, fl,
              w->moved_worse ? " worse beyond threshold" : "");
  }
}

/* Above the table when the sides ran different job sizes (--allow-config-diff). */
static const char *size_words(const cmp_report *r) {
  return r->size_differs & 1 ? "world size differs: step times are not comparable"
                             : "node count differs: step times are not comparable";
}

static void print_text(const cmp_report *r, FILE *out) {
  int width = r->opt.wide ? 0 : CMP_TEXT_COLS;
  print_header_lines(r, out, width);
  print_summary(r, out, width);
  print_provenance(r, out, width);
  print_nccl(r, out, width);
  if (r->size_differs) fprintf(out, "\n%s\n", size_words(r));
  if (r->opt.wide) print_wide_table(r, out);
  else print_compact_table(r, out, width);
  char legend[600], bottom[2048];
  snprintf(legend, sizeof legend,
           "verdict: + better, - worse (REGRESSION: beyond the %g %% threshold, exit %d), ~ no significant change "
           "(p >= %g, or |change| within the noise floor), ? not enough runs to test (fewer than %d a side); "
           "two-sided Mann-Whitney U, 95%% CI of the ratio B/A by inverting it",
           r->opt.threshold_pct, CMP_EXIT_REGRESSION, r->opt.alpha, CMP_MIN_RUNS);
  fputc('\n', out);
  put_wrapped(out, "", "  ", legend, width);
  cmp_bottom_line(r, bottom, sizeof bottom);
  fprintf(out, "%s\n", bottom);
}

static const char *const STATUS[] = {"regressed", "worse", "better", "unchanged", "untested_worse", "untested"};

static void print_md(const cmp_report *r, FILE *out) {
  cmp_summary s;
  cmp_report_summarize(r, &s);
  char noise[700], bottom[2048];
  cmp_noise_words(r, noise, sizeof noise);
  print_header_lines(r, out, 0);
  fprintf(out, "\n### Summary: %s\n\n", s.verdict);
  if (r->side_verdict) fprintf(out, "- **%s**\n", M(r->side_verdict));
  fprintf(out, "- threshold %g %%, noise floor %s\n", r->opt.threshold_pct, M(noise));
  if (s.untested)
    fprintf(out, "- not enough runs to test: A %d, B %d (%d a side are needed)\n", r->runs_a, r->runs_b, CMP_MIN_RUNS);
  static const char *what[] = {"regressed beyond the threshold", "worse, within the threshold", "better", "unchanged",
                               "medians worse beyond the threshold, not tested", "not tested, within the threshold"};
  for (int c = 0; c < CMP_NCLASS; c++) {
    if (!s.n[c]) continue;
    fprintf(out, "- %d %s", s.n[c], what[c]);
    int *idx = NULL, m = c != CMP_SAME && c != CMP_UNTESTED ? cmp_class_lines(r, (cmp_class)c, &idx) : 0, shown = 0;
    for (; shown < m && shown < 10; shown++) {
      const cmp_line *l = &r->lines[idx[shown]];
      char ch[32];
      fprintf(out, "%s`%s` %s", shown ? ", " : ": ", M(l->name), fmt_change(ch, sizeof ch, &l->row));
    }
    free(idx);
    fprintf(out, "%s\n", s.n[c] > shown && shown ? ", ..." : "");
  }
  fprintf(out, "\n### What differs\n\n");
  if (!r->ndiff) fprintf(out, "Nothing in the provenance (versions, environment, config, hosts, GPUs).\n");
  else {
    fprintf(out, "| key | A | B | |\n|---|---|---|---|\n");
    for (int i = 0; i < r->ndiff; i++) {
      const cmp_prov_diff *d = &r->diff[i];
      fprintf(out, "| `%s` | %s | %s | %s%s%s |\n", M(d->key), M(d->a), M(d->b), d->mixed_a ? "A's runs disagree " : "",
              d->mixed_b ? "B's runs disagree " : "", d->refused ? "model config" : "");
    }
  }
  if (r->same_provenance) fprintf(out, "\nA/A: same provenance on both sides; each CI is that metric's noise floor.\n");
  for (int i = 0; i < r->nnotes; i++) fprintf(out, "\n- %s", M(r->notes[i]));
  const cmp_nccl *nc = &r->nccl;
  fprintf(out, "\n\n### NCCL's account\n\n");
  if (nc->reported[0] && nc->reported[1] && !nc->ndiff)
    fprintf(out, "%s\n", nc->disagree[0] || nc->disagree[1] ? "The sides' first runs made the same choices."
                                                              : "The same choices on both sides.");
  if (nc->ndiff) {
    fprintf(out, "| what | A | B | change |\n|---|---|---|---|\n");
    for (int i = 0; i < nc->ndiff; i++)
      fprintf(out, "| %s | `%s` | `%s` | %s |\n", M(nc->diff[i].what), M(nc->diff[i].a), M(nc->diff[i].b),
              M(nc->diff[i].text));
  }
  for (int k = 0; k < 2; k++)
    if (nc->disagree[k]) fprintf(out, "\n- side %c's runs disagree on NCCL's account: %s", k ? 'B' : 'A', M(nc->disagree[k]));
  for (int i = 0; i < nc->nsays; i++) fprintf(out, "\n- %s", M(nc->says[i]));
  if (r->size_differs) fprintf(out, "\n\n**%s**", size_words(r));
  fprintf(out, "\n\n### Metrics\n\n| metric | unit | better | A median | B median | change | 95%% CI | p | n | floor | verdict |\n"
               "|---|---|---|--:|--:|--:|---|--:|--:|--:|:-:|\n");
  for (int i = 0; i < r->nlines; i++) {
    const cmp_line *l = &r->lines[i];
    const cmp_row *w = &l->row;
    char ma[32], mb[32], ch[32], ci[64], fl[32], p[16];
    fmt_pct(fl, sizeof fl, w->floor_pct);
    if (w->tested)
      fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %d+%d | %s | %c%s |\n", M(l->name), M(l->unit),
              better_name(l->better), fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b),
              fmt_change(ch, sizeof ch, w), fmt_ci(ci, sizeof ci, w), fmt_p(p, sizeof p, w->p), l->na,
              l->nb, fl + 1, w->verdict, verdict_word(w));
    else
      fprintf(out, "| %s | %s | %s | %s | %s | %s | not enough runs to test | | %d+%d | %s | ?%s |\n", M(l->name), M(l->unit),
              better_name(l->better), fmt_value(ma, sizeof ma, w->med_a), fmt_value(mb, sizeof mb, w->med_b),
              fmt_change(ch, sizeof ch, w), l->na, l->nb, fl + 1, w->moved_worse ? " worse beyond threshold" : "");
  }
  cmp_bottom_line(r, bottom, sizeof bottom);
  fprintf(out, "\n%s\n", bottom);
}

/* One row per metric, every column named in the header, no comment lines (pandas.read_csv reads it as it is):
 * the sides' names and run counts repeat on every row; the provenance diff and the notes are in the text and
 * JSON reports only. */
static void print_csv(const cmp_report *r, FILE *out) {
  fprintf(out, "metric,unit,better,n_a,n_b,median_a,median_b,change_pct,ci_lo_pct,ci_hi_pct,p,exact,floor_pct,"
               "verdict,regression,status,tested,side_a,side_b,runs_a,runs_b,threshold_pct\n");
  for (int i = 0; i < r->nlines; i++) {
    const cmp_line *l = &r->lines[i];
    const cmp_row *w = &l->row;
    csv_quote(out, l->name);
    fputc(',', out);
    csv_quote(out, l->unit);
    fprintf(out, ",%s,%d,%d,%.9g,%.9g,", better_name(l->better), l->na, l->nb, w->med_a, w->med_b);
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
    fprintf(out, "%.6g,%c,%d,%s,%d,", w->floor_pct, w->tested ? w->verdict : '?', w->regression,
            STATUS[cmp_line_class(l)], w->tested);
    csv_quote(out, cmp_side_name(r, 0));
    fputc(',', out);
    csv_quote(out, cmp_side_name(r, 1));
    fprintf(out, ",%d,%d,%g\n", r->runs_a, r->runs_b, r->opt.threshold_pct);
  }
}

static cJSON *num_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static cJSON *str_or_null(const char *s) { return s ? cJSON_CreateString(s) : cJSON_CreateNull(); }

/* {"reported": {a, b}, "why": {a, b}, "runs_disagree": {a, b}, "differences": [{what, a, b, change, peers?,
 * collective?, bytes_from?, bytes_to?}], "says": [...]} */
static cJSON *nccl_json(const cmp_nccl *m) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON *rep = cJSON_AddObjectToObject(o, "reported"), *why = cJSON_AddObjectToObject(o, "why"),
        *dis = cJSON_AddObjectToObject(o, "runs_disagree");
  for (int s = 0; s < 2; s++) {
    const char *k = s ? "b" : "a";
    cJSON_AddBoolToObject(rep, k, m->reported[s]);
    cJSON_AddItemToObject(why, k, str_or_null(m->why[s]));
    cJSON_AddItemToObject(dis, k, str_or_null(m->disagree[s]));
  }
  cJSON *diffs = cJSON_AddArrayToObject(o, "differences");
  for (int i = 0; diffs && i < m->ndiff; i++) {
    const cmp_nccl_diff *d = &m->diff[i];
    cJSON *x = cJSON_CreateObject();
    if (!x) break;
    cJSON_AddStringToObject(x, "what", d->what);
    cJSON_AddStringToObject(x, "a", d->a);
    cJSON_AddStringToObject(x, "b", d->b);
    cJSON_AddStringToObject(x, "change", d->text);
    if (d->peers) cJSON_AddNumberToObject(x, "peers", d->peers);
    if (d->coll[0]) {
      cJSON_AddStringToObject(x, "collective", d->coll);
      cJSON_AddNumberToObject(x, "bytes_from", d->lo_bytes);
      cJSON_AddNumberToObject(x, "bytes_to", d->hi_bytes);
    }
    cJSON_AddItemToArray(diffs, x);
  }
  cJSON *says = cJSON_AddArrayToObject(o, "says");
  for (int i = 0; says && i < m->nsays; i++) cJSON_AddItemToArray(says, cJSON_CreateString(m->says[i]));
  return o;
}

static void print_json(const cmp_report *r, FILE *out) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "kind", "compare");
  cJSON_AddNumberToObject(doc, "ddpbench_compare", 1);
  cmp_summary sum;
  cmp_report_summarize(r, &sum);
  char bottom[2048];
  cmp_bottom_line(r, bottom, sizeof bottom);
  cJSON_AddStringToObject(doc, "verdict", sum.verdict);
  cJSON_AddNumberToObject(doc, "exit_code", sum.exit_code);
  cJSON_AddStringToObject(doc, "bottom_line", bottom);
  if (r->start_time[0]) cJSON_AddStringToObject(doc, "start_time", r->start_time);
  if (r->end_time[0]) {
    cJSON_AddStringToObject(doc, "end_time", r->end_time);
    cJSON_AddItemToObject(doc, "duration_s", num_or_null(r->duration_s));
  }
  cJSON_AddObjectToObject(doc, "labels"); /* compare takes no --label: its sides' labels are in a and b */
  for (int s = 0; s < 2; s++) {
    cJSON *side = cJSON_AddObjectToObject(doc, s ? "b" : "a");
    const char *given = s ? r->label_b : r->label_a, *name = s ? r->name_b : r->name_a;
    cJSON_AddStringToObject(side, "label", name ? name : given ? given : "");
    cJSON_AddStringToObject(side, "paths", given ? given : "");
    cJSON_AddNumberToObject(side, "runs", s ? r->runs_b : r->runs_a);
    cJSON *lab = cJSON_AddObjectToObject(side, "labels");
    for (int i = 0; lab && i < r->nlabels[s]; i++) cJSON_AddStringToObject(lab, r->labels[s][i].key, r->labels[s][i].value);
  }
  cJSON *su = cJSON_AddObjectToObject(doc, "summary");
  for (int c = 0; su && c < CMP_NCLASS; c++) cJSON_AddNumberToObject(su, STATUS[c], sum.n[c]);
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
  cJSON_AddItemToObject(doc, "nccl", nccl_json(&r->nccl));
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
    cJSON_AddStringToObject(m, "status", STATUS[cmp_line_class(l)]);
    cJSON_AddItemToArray(ms, m);
  }
  cJSON_AddBoolToObject(doc, "regression", cmp_report_exit_code(r) == CMP_EXIT_REGRESSION);
  cJSON_AddItemToObject(doc, "side_verdict", str_or_null(r->side_verdict));
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
