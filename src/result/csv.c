/* csv.c: the records of a result as CSV, one row per record: a per-rank figure is one row per rank per
 * measurement and metric (rank, host, gpu, bus_id filled from the result's ranks), a group's figure one row
 * with those cells empty. Columns: measurement, group, metric, unit, better, rank, host, gpu, bus_id,
 * labels (the record's other labels as key=value;key=value), value, median, p10, p90, min, max, mean, n, then
 * the run's identity on every row, so that the rows of concatenated runs stay apart: run_id, start_time,
 * run_labels (--label as key=value;key=value), and text (empty on a record's row). After the records, a row per
 * finding in the same columns (measurement "finding": findings_rows below).
 * Numbers as %.17g (they read back exactly); empty where NaN. Fields with a comma, quote or line break are
 * quoted (RFC 4180); a text that a spreadsheet would run as a formula (=, +, -, @ first) is quoted with a ' in
 * front; bytes that are not UTF-8 become U+FFFD. Reads the result model only; writes through atomic_file.c. */
#include "csv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"

#define OUTPUTS_RUN_LABELS_MAX 6000

/* A text a spreadsheet would run as a formula: it starts with =, +, -, @, TAB or CR and is not a number. */
static int formula_like(const char *s) {
  if (!strchr("=+-@\t\r", s[0]) || !s[0]) return 0;
  char *end;
  (void)strtod(s, &end);
  return end == s || *end;
}

void csv_quote(FILE *f, const char *s) {
  if (!s) s = "";
  char *clean = ddp_utf8_clean(s);
  if (clean) s = clean;
  int formula = formula_like(s);
  if (formula || strpbrk(s, ",\"\r\n")) {
    fputc('"', f);
    if (formula) fputc('\'', f); /* shown as text, as OWASP advises against CSV injection */
    for (; *s; s++) {
      if (*s == '"') fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
  free(clean);
}

static void field(FILE *f, const char *s, int last) {
  csv_quote(f, s);
  fputs(last ? "\r\n" : ",", f);
}

static void number(FILE *f, double v, int last) {
  if (!isnan(v)) fprintf(f, "%.17g", v);
  fputs(last ? "\r\n" : ",", f);
}

static const result_rank *rank_of(const result_doc *d, const char *rank) {
  if (!rank) return NULL;
  char *end;
  long r = strtol(rank, &end, 10);
  for (int i = 0; !*end && i < d->nranks; i++)
    if (d->ranks[i].rank == r) return &d->ranks[i];
  return NULL;
}

/* The findings, a row each in the records' columns: measurement "finding", group the scope, metric the check,
 * rank and host (gpu and bus_id from the result's ranks), labels severity=...;subject=...[;expected=...]
 * [;passed=1][;interval=N], value the figure measured, then the run's identity and the finding's text. */
static void findings_rows(FILE *f, const result_doc *d, const char *run_labels) {
  for (int i = 0; i < d->findings.n; i++) {
    const finding *x = &d->findings.v[i];
    char rank[16] = "", gpu[16] = "", labels[512];
    if (x->rank >= 0) snprintf(rank, sizeof rank, "%d", x->rank);
    const result_rank *rr = rank_of(d, rank[0] ? rank : NULL);
    if (rr && rr->ordinal >= 0) snprintf(gpu, sizeof gpu, "%d", rr->ordinal);
    int o = snprintf(labels, sizeof labels, "severity=%s;subject=%s", finding_severity_name(x->severity), x->subject);
    if (!isnan(x->expected) && o >= 0 && (size_t)o < sizeof labels)
      o += snprintf(labels + o, sizeof labels - (size_t)o, ";expected=%.17g", x->expected);
    if (x->passed && o >= 0 && (size_t)o < sizeof labels) o += snprintf(labels + o, sizeof labels - (size_t)o, ";passed=1");
    if (x->interval > 0 && o >= 0 && (size_t)o < sizeof labels)
      snprintf(labels + o, sizeof labels - (size_t)o, ";interval=%d", x->interval);
    field(f, "finding", 0);
    field(f, finding_scope_name(x->scope), 0);
    field(f, x->check, 0);
    field(f, x->unit, 0);
    field(f, "", 0);
    field(f, rank, 0);
    field(f, x->host, 0);
    field(f, gpu, 0);
    field(f, rr ? rr->pci_bus_id : NULL, 0);
    field(f, labels, 0);
    number(f, x->measured, 0);
    for (int k = 0; k < 7; k++) field(f, "", 0); /* median .. n: a finding has one figure */
    field(f, d->run_id, 0);
    field(f, d->start_time, 0);
    field(f, run_labels, 0);
    field(f, x->text, 1);
  }
}

ddp_result csv_format(const result_doc *d, char **out) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return DDP_FAIL(DDP_ERR_SYSTEM, "open_memstream: %s", ddp_strerror_errno());
  fputs("measurement,group,metric,unit,better,rank,host,gpu,bus_id,labels,value,median,p10,p90,min,max,mean,n,"
        "run_id,start_time,run_labels,text\r\n", f);
  char run_labels[OUTPUTS_RUN_LABELS_MAX] = "";
  for (int k = 0, o = 0; k < d->nlabels && o < (int)sizeof run_labels; k++)
    o += snprintf(run_labels + o, sizeof run_labels - (size_t)o, "%s%s=%s", o ? ";" : "", d->labels[k].key,
                  d->labels[k].value);
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *r = &d->records[i];
    const char *rank = result_record_label(r, "rank");
    const result_rank *rr = rank_of(d, rank);
    char gpu[16] = "", labels[1024] = "";
    if (rr && rr->ordinal >= 0) snprintf(gpu, sizeof gpu, "%d", rr->ordinal);
    size_t o = 0;
    for (int k = 0; k < r->nlabels && o < sizeof labels; k++) {
      const char *key = r->labels[k].key;
      if (!strcmp(key, "rank") || !strcmp(key, "host")) continue;
      o += (size_t)snprintf(labels + o, sizeof labels - o, "%s%s=%s", o ? ";" : "", key, r->labels[k].value);
    }
    field(f, r->measurement, 0);
    field(f, r->group, 0);
    field(f, r->metric, 0);
    field(f, r->unit, 0);
    field(f, result_better_name(r->better), 0);
    field(f, rank, 0);
    field(f, rr && rr->host ? rr->host : result_record_label(r, "host"), 0);
    field(f, gpu, 0);
    field(f, rr ? rr->pci_bus_id : NULL, 0);
    field(f, labels, 0);
    number(f, r->value, 0);
    const ddp_stats *st = &r->stats;
    int h = r->has_stats;
    number(f, h ? st->median : NAN, 0);
    number(f, h ? st->p10 : NAN, 0);
    number(f, h ? st->p90 : NAN, 0);
    number(f, h ? st->min : NAN, 0);
    number(f, h ? st->max : NAN, 0);
    number(f, h ? st->mean : NAN, 0);
    number(f, h ? (double)st->n : NAN, 0);
    field(f, d->run_id, 0);
    field(f, d->start_time, 0);
    field(f, run_labels, 0);
    field(f, "", 1);
  }
  findings_rows(f, d, run_labels);
  if (fclose(f) != 0 || !buf) {
    free(buf);
    return DDP_FAIL(DDP_ERR_SYSTEM, "cannot format the CSV: out of host memory");
  }
  *out = buf;
  return DDP_OK;
}

