/* model.c: compare's model: the verdict for one metric, the report that collects the rows and notes, its exit
 * code, and the A/A noise file. Result files become runs in compare_load.c; the statistics are compare_stats.c;
 * the four formats are formats.c.
 *
 * The verdict, in order: fewer than CMP_MIN_RUNS runs on a side -> medians only (' '); p >= alpha -> '~';
 * the CI of the change not on the side of the change of medians -> '~'; |change| <= noise floor -> '~';
 * otherwise '+' or '-' by the metric's direction. A '-' beyond
 * --threshold-pct is a regression and makes the exit code 5. Untested lines whose medians are worse beyond the
 * threshold and the floor are "moved worse": the bottom line's WARN (compare.h). */
#include "compare.h"

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
  out->from_zero = out->med_a == 0 && out->med_b != 0;
  if (in->runs_a < CMP_MIN_RUNS || in->runs_b < CMP_MIN_RUNS) {
    /* the direction from the medians themselves (a negative median A flips the sign of the change) */
    int up = out->med_b > out->med_a, worse = out->med_b != out->med_a && up == (in->better == CMP_LOWER_BETTER);
    out->moved_worse = worse && (out->from_zero || (isfinite(out->change_pct) &&
                                                    fabs(out->change_pct) > fmax(o->threshold_pct, out->floor_pct)));
    return 0;
  }

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
   * bulk of the samples), and it is beyond the noise floor. From a median of 0, no percentage exists: the
   * absolute shift's interval must exclude 0, and a worse change is a regression whatever the threshold. */
  if (out->from_zero) {
    int up = out->med_b > 0, ci_agrees = up ? lo > 0 : hi < 0;
    if (!(m.p < o->alpha) || !ci_agrees) {
      out->verdict = '~';
      return 0;
    }
    int better = !up == (in->better == CMP_LOWER_BETTER);
    out->verdict = better ? '+' : '-';
    out->regression = !better;
    return 0;
  }
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
  for (int i = 0; i < r->nlines; i++) free(r->lines[i].name), free(r->lines[i].unit), free(r->lines[i].brief);
  for (int s = 0; s < 2; s++) {
    for (int i = 0; i < r->nlabels[s]; i++) free(r->labels[s][i].key), free(r->labels[s][i].value);
    free(r->labels[s]);
  }
  free(r->diff), free(r->notes), free(r->lines), free(r->label_a), free(r->label_b);
  free(r->name_a), free(r->name_b), free(r->brief_note), free(r->side_verdict);
  cmp_nccl_free(&r->nccl);
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

void cmp_report_brief(cmp_report *r, const char *brief, int detail) {
  if (r->nlines == 0) return;
  cmp_line *l = &r->lines[r->nlines - 1];
  free(l->brief);
  l->brief = brief ? strdup(brief) : NULL; /* out of memory: the full name is shown, nothing lost */
  l->detail = detail;
}

void cmp_report_side(cmp_report *r, const char *why) {
  size_t n = (r->side_verdict ? strlen(r->side_verdict) + 2 : 0) + strlen(why) + 1;
  char *g = malloc(n);
  if (!g) { /* out of memory: the verdict must not be lost, the words may */
    if (!r->side_verdict) r->side_verdict = strdup("");
    return;
  }
  snprintf(g, n, "%s%s%s", r->side_verdict ? r->side_verdict : "", r->side_verdict ? "; " : "", why);
  free(r->side_verdict);
  r->side_verdict = g;
}

int cmp_report_exit_code(const cmp_report *r) {
  if (r->side_verdict) return CMP_EXIT_REGRESSION;
  for (int i = 0; i < r->nlines; i++)
    if (r->lines[i].row.regression) return CMP_EXIT_REGRESSION;
  return 0;
}

/* ---- summary and bottom line ------------------------------------------------------------------------- */

cmp_class cmp_line_class(const cmp_line *l) {
  const cmp_row *w = &l->row;
  if (!w->tested) return w->moved_worse ? CMP_UNTESTED_WORSE : CMP_UNTESTED;
  if (w->verdict == '-') return w->regression ? CMP_REGRESSED : CMP_WORSE;
  return w->verdict == '+' ? CMP_BETTER : CMP_SAME;
}

void cmp_report_summarize(const cmp_report *r, cmp_summary *s) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < r->nlines; i++) s->n[cmp_line_class(&r->lines[i])]++;
  s->untested = s->n[CMP_UNTESTED_WORSE] + s->n[CMP_UNTESTED];
  s->exit_code = cmp_report_exit_code(r);
  s->verdict = s->exit_code == CMP_EXIT_REGRESSION ? "FAIL" : s->n[CMP_UNTESTED_WORSE] ? "WARN" : "PASS";
}

static const cmp_report *g_order; /* qsort has no context argument */

static double change_size(const cmp_line *l) {
  return l->row.from_zero ? INFINITY : isfinite(l->row.change_pct) ? fabs(l->row.change_pct) : 0;
}

static int by_reading_order(const void *x, const void *y) {
  const cmp_line *a = &g_order->lines[*(const int *)x], *b = &g_order->lines[*(const int *)y];
  if (a->detail != b->detail) return a->detail - b->detail;
  double ca = change_size(a), cb = change_size(b);
  if (ca != cb) return ca > cb ? -1 : 1;
  return *(const int *)x - *(const int *)y;
}

int cmp_class_lines(const cmp_report *r, cmp_class c, int **idx) {
  int n = 0;
  *idx = NULL;
  for (int i = 0; i < r->nlines; i++) n += cmp_line_class(&r->lines[i]) == c;
  if (!n || !(*idx = malloc((size_t)n * sizeof **idx))) return 0;
  n = 0;
  for (int i = 0; i < r->nlines; i++)
    if (cmp_line_class(&r->lines[i]) == c) (*idx)[n++] = i;
  g_order = r;
  qsort(*idx, (size_t)n, sizeof **idx, by_reading_order);
  g_order = NULL;
  return n;
}

const char *cmp_escape(char *buf, size_t n, const char *s, int md) {
  size_t u = 0;
  if (!n) return buf;
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    char e[8];
    unsigned c = *p;
    if (c == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) /* a C1 control (U+0080-U+009F, NEL, CSI) in UTF-8 */
      snprintf(e, sizeof e, "\\x%02x", (unsigned)*++p);
    else if (c == '\n') snprintf(e, sizeof e, "\\n");
    else if (c == '\t') snprintf(e, sizeof e, "\\t");
    else if (c == '\r') snprintf(e, sizeof e, "\\r");
    else if (c < 0x20 || c == 0x7f) snprintf(e, sizeof e, "\\x%02x", c);
    else if (c == '\\') snprintf(e, sizeof e, "\\\\");
    else if (md && c == '|') snprintf(e, sizeof e, "\\|");
    else e[0] = (char)c, e[1] = 0;
    size_t k = strlen(e);
    if (u + k >= n) break;
    memcpy(buf + u, e, k), u += k;
  }
  buf[u] = 0;
  return buf;
}

const char *cmp_side_name(const cmp_report *r, int side) {
  const char *n = side ? r->name_b : r->name_a;
  return n ? n : side ? "B" : "A";
}

void cmp_noise_words(const cmp_report *r, char *buf, size_t n) {
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < r->nlines; i++) {
    double f = r->lines[i].row.floor_pct;
    if (f > 0) lo = fmin(lo, f), hi = fmax(hi, f);
  }
  char range[64];
  if (lo == hi) snprintf(range, sizeof range, "%.2g %%", hi);
  else snprintf(range, sizeof range, "%.2g %% to %.2g %%", lo, hi);
  if (r->opt.noise_file && hi > 0 && r->opt.noise_pct > 0)
    snprintf(buf, n, "%s per metric (--noise %s, at least --noise-pct %g %%)", range, r->opt.noise_file,
             r->opt.noise_pct);
  else if (r->opt.noise_file && hi > 0)
    snprintf(buf, n, "%s per metric (--noise %s)", range, r->opt.noise_file);
  else if (r->opt.noise_pct > 0)
    snprintf(buf, n, "%g %% (--noise-pct)", r->opt.noise_pct);
  else if (r->opt.noise_file)
    snprintf(buf, n, "none (--noise %s bounds no metric compared here)", r->opt.noise_file);
  else
    snprintf(buf, n, "none");
}

/* Appends to buf (used so far *u) like snprintf, never past n. */
static void add(char *buf, size_t n, size_t *u, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t n, size_t *u, const char *fmt, ...) {
  if (*u >= n) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *u, n - *u, fmt, ap);
  va_end(ap);
  *u = k < 0 ? n : *u + (size_t)k >= n ? n : *u + (size_t)k;
}

/* " (name +7.9 %, name -6.1 %, +3 more)": the first lines of a class in reading order (cmp_class_lines). */
static void add_names(const cmp_report *r, cmp_class c, int count, char *buf, size_t n, size_t *u) {
  enum { SHOW = 2 };
  int *idx, m = cmp_class_lines(r, c, &idx), shown = 0;
  for (; shown < m && shown < SHOW; shown++) {
    const cmp_line *l = &r->lines[idx[shown]];
    const char *name = l->brief ? l->brief : l->name;
    if (l->row.from_zero)
      add(buf, n, u, "%s%s from 0", shown ? ", " : " (", name);
    else
      add(buf, n, u, "%s%s %+.1f %%", shown ? ", " : " (", name, l->row.change_pct);
  }
  free(idx);
  if (count > shown) add(buf, n, u, "%s+%d more", shown ? ", " : " (", count - shown);
  if (count) add(buf, n, u, ")");
}

void cmp_bottom_line(const cmp_report *r, char *buf, size_t n) {
  cmp_summary s;
  cmp_report_summarize(r, &s);
  size_t u = 0;
  double t = r->opt.threshold_pct;
  add(buf, n, &u, "ddpbench compare: %s  ", s.verdict);
  int reg = s.n[CMP_REGRESSED], mw = s.n[CMP_UNTESTED_WORSE];
  if (r->side_verdict) add(buf, n, &u, "%s  ", r->side_verdict);
  if (reg) {
    add(buf, n, &u, "%d regression%s beyond %g %%", reg, reg == 1 ? "" : "s", t);
    add_names(r, CMP_REGRESSED, reg, buf, n, &u);
  } else if (mw) {
    add(buf, n, &u, "%d median%s worse beyond %g %%, not enough runs to test", mw, mw == 1 ? "" : "s", t);
    add_names(r, CMP_UNTESTED_WORSE, mw, buf, n, &u);
  } else if (s.untested) {
    add(buf, n, &u, "no median worse beyond %g %%, not enough runs to test", t);
  } else {
    add(buf, n, &u, "no regression beyond %g %%", t);
  }
  if (s.n[CMP_WORSE]) add(buf, n, &u, "  %d worse within %g %%", s.n[CMP_WORSE], t);
  if (s.n[CMP_BETTER]) add(buf, n, &u, "  %d better", s.n[CMP_BETTER]);
  if (s.n[CMP_SAME]) add(buf, n, &u, "  %d unchanged", s.n[CMP_SAME]);
  char noise[600];
  cmp_noise_words(r, noise, sizeof noise);
  char *paren = strstr(noise, " ("); /* the bottom line keeps the floor; the summary says where it came from */
  if (paren) *paren = 0;
  add(buf, n, &u, "  (A%s%s: %d run%s, B%s%s: %d run%s; noise floor %s; %d fail, %d warn)", r->name_a ? " " : "",
      r->name_a ? r->name_a : "", r->runs_a, r->runs_a == 1 ? "" : "s", r->name_b ? " " : "", r->name_b ? r->name_b : "",
      r->runs_b, r->runs_b == 1 ? "" : "s", noise, reg + (r->side_verdict != NULL), mw);
  /* the names in it are the files' (metric labels, side labels): one line, no escape of theirs */
  char *raw = strdup(buf);
  if (raw) cmp_escape(buf, n, raw, 0);
  else buf[0] = 0;
  free(raw);
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
