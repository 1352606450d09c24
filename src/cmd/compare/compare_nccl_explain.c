/* compare_nccl_explain.c: what of the metric table NCCL's account explains (compare.h: cmp_nccl_explain): the
 * sentences that tie each changed NCCL choice (compare_nccl_diff.c) to the busbw rows it covers, by the lines'
 * classes (model.c). Above the model; builds no diff and reads no file. */
#include "compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int say(cmp_nccl *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(cmp_nccl *m, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char **g = realloc(m->says, (size_t)(m->nsays + 1) * sizeof *g);
  if (!g) return -1;
  m->says = g;
  if (!(m->says[m->nsays] = strdup(buf))) return -1;
  m->nsays++;
  return 0;
}

/* ---- tying it to the metric table ------------------------------------------------------------------------- */

/* NCCL's "AllReduce" and ddpbench's "allreduce" / "reduce_scatter": the same collective. */
static int same_coll(const char *nccl, const char *ours) {
  for (;; nccl++, ours++) {
    while (*nccl == '_') nccl++;
    while (*ours == '_') ours++;
    char x = *nccl >= 'A' && *nccl <= 'Z' ? (char)(*nccl + 32) : *nccl, y = *ours >= 'A' && *ours <= 'Z' ? (char)(*ours + 32) : *ours;
    if (x != y) return 0;
    if (!x) return 1;
  }
}

/* The value of " key=value" in a metric's name ("collectives busbw_gbs bytes=1024 collective=allreduce ..."). */
static int name_label(const char *name, const char *key, char *buf, size_t n) {
  char pat[40];
  snprintf(pat, sizeof pat, " %s=", key);
  const char *p = strstr(name, pat);
  if (!p) return 0;
  p += strlen(pat);
  snprintf(buf, n, "%.*s", (int)strcspn(p, " "), p);
  return 1;
}

/* An out-of-place busbw row of a collectives run: its collective and size. */
static int busbw_row(const cmp_line *l, char *coll, size_t n, double *bytes) {
  char place[32], b[32];
  if (strncmp(l->name, "collectives", 11) || (l->name[11] != ' ' && l->name[11] != '@')) return 0;
  const char *metric = strchr(l->name, ' ');
  if (!metric || strncmp(metric, " busbw_gbs", 10) || (metric[10] != ' ' && metric[10])) return 0;
  if (!name_label(l->name, "collective", coll, n) || !name_label(l->name, "bytes", b, sizeof b)) return 0;
  if (name_label(l->name, "placement", place, sizeof place) && strcmp(place, "out_of_place")) return 0;
  *bytes = strtod(b, NULL);
  return 1;
}

static int dbl_cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

int cmp_nccl_explain(cmp_report *r) {
  cmp_nccl *m = &r->nccl;
  for (int i = 0; i < m->nsays; i++) free(m->says[i]);
  free(m->says), m->says = NULL, m->nsays = 0;
  if (!m->reported[0] && !m->reported[1] && m->why[0] && m->why[1] && !strcmp(m->why[0], m->why[1]))
    return say(m, "NCCL's account not reported on sides A and B: %s", m->why[0]);
  for (int s = 0; s < 2; s++)
    if (!m->reported[s] && say(m, "NCCL's account not reported on side %c: %s", s ? 'B' : 'A', m->why[s] ? m->why[s] : "?"))
      return -1;
  if (!m->reported[0] || !m->reported[1]) return 0;
  /* regressed: beyond the threshold (tested, or medians only); a change within it is no news about the kernel */
  int regressed = 0;
  for (int i = 0; i < r->nlines; i++) {
    cmp_class c = cmp_line_class(&r->lines[i]);
    regressed += c == CMP_REGRESSED || c == CMP_UNTESTED_WORSE;
  }
  if (!m->ndiff) {
    if (regressed && !m->disagree[0] && !m->disagree[1])
      return say(m, "same NCCL choices; the kernel got slower (%d metric%s regressed with the same version, channels, "
                    "transports and algorithms)", regressed, regressed == 1 ? "" : "s");
    return 0;
  }
  /* each algorithm range: the busbw rows inside it */
  double *ch = malloc((size_t)(r->nlines ? r->nlines : 1) * sizeof *ch);
  if (!ch) return -1;
  int rc = 0;
  for (int k = 0; k < m->ndiff && !rc; k++) {
    const cmp_nccl_diff *d = &m->diff[k];
    if (!d->coll[0] || !d->choice_a[0]) continue;
    int n = 0, down = 0, up = 0, untested = 0;
    for (int i = 0; i < r->nlines; i++) {
      char coll[32];
      double bytes;
      const cmp_line *l = &r->lines[i];
      if (!busbw_row(l, coll, sizeof coll, &bytes) || !same_coll(d->coll, coll) || bytes < d->lo_bytes ||
          bytes > d->hi_bytes || !isfinite(l->row.change_pct))
        continue;
      cmp_class c = cmp_line_class(l);
      down += c == CMP_REGRESSED || c == CMP_WORSE || c == CMP_UNTESTED_WORSE;
      up += c == CMP_BETTER;
      untested += !l->row.tested;
      ch[n++] = l->row.change_pct;
    }
    if (!n || (!down && !up)) continue;
    qsort(ch, (size_t)n, sizeof *ch, dbl_cmp);
    double med = n % 2 ? ch[n / 2] : (ch[n / 2 - 1] + ch[n / 2]) / 2;
    char range[80];
    cmp_nccl_fmt_range(range, sizeof range, d->lo_bytes, d->hi_bytes);
    char label[64];
    snprintf(label, sizeof label, "%.*s", (int)strcspn(d->what, ":"), d->what);
    rc = say(m, "B uses %s instead of %s at %s; busbw %+.0f %% there (%s, communicator %s%s)", d->choice_b,
             d->choice_a, range, med, d->coll, label, untested ? "; medians only: too few runs to test" : "");
  }
  free(ch);
  return rc;
}
