/* prom.c: a result as node_exporter's textfile-collector format (Prometheus text exposition 0.0.4), for a
 * fleet dashboard. Every record becomes one sample; the metric name comes from the record by one table of
 * units (below): ddpbench_<measurement>[_rank]_<metric><unit suffix>, values in base units (seconds, bytes
 * per second, FLOP/s). A record with a rank label is a per-rank figure: its family carries "_rank_" and the
 * labels host, gpu (the device ordinal), rank and bus_id from the result's ranks; other records carry the
 * group they were measured over (and host, for a node's group). The record's own labels follow. Families
 * are sorted, each with one HELP and one TYPE (all gauges); a duplicate series (same name and labels) is
 * dropped, since node_exporter refuses a whole file that repeats one. Also: ddpbench_info (the stack, as
 * labels), ddpbench_run_state{state} (running, interrupted, complete), ddpbench_run_ok (1 when the run is
 * complete and exits 0), ddpbench_run_suspect{rank,host}, ddpbench_findings{severity},
 * ddpbench_host_failed{host,check} (0 or 1 for every host and every check judged about a host),
 * ddpbench_host_bad_probability{host} (a node's P(bad) under the node-pair model), ddpbench_drain_expected_false_drains
 * and ddpbench_drain_expected_misses (that drain list's stated error rate, when the model drew one),
 * ddpbench_run_start_time_seconds, ddpbench_run_updated_time_seconds and ddpbench_run_end_time_seconds (not
 * while running). Every series carries kind="run", "accept", ... (an export: the kind it was made from) first,
 * and a soak's mode="soak" after it, so that the files of different subcommands (or of a soak and a one-shot
 * accept) in one textfile-collector folder never define the same series; a series never repeats a label name
 * (the first given wins). A figure that is NaN (not measured, or not
 * defined: the JSON's "why" says which) is left out: never a NaN sample.
 * Reads the result model only; never measures; writes through atomic_file.c. */
#include "prom.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic_file.h"

/* The unit table: a record's unit gives the suffix stripped from its metric, the suffix put on the family
 * name and the factor to base units. Records with a unit not listed keep their metric name and value. */
static const struct {
  const char *unit, *strip, *suffix, *what;
  double scale; /* negative: divide by -scale (exact for ms and us where multiplying by 1e-3 is not) */
} UNITS[] = {
    {"ms", "_ms", "_seconds", "in seconds", -1e3},
    {"us", "_us", "_seconds", "in seconds", -1e6},
    {"s", "_s", "_seconds", "in seconds", 1},
    {"GB/s", "_gbs", "_bytes_per_second", "in bytes per second", 1e9},
    {"GB/s", "_gbps", "_bytes_per_second", "in bytes per second", 1e9},
    {"TFLOP/s", "_tflops", "_flops_per_second", "in FLOP per second", 1e12},
    {"1/s", "_per_s", "_per_second", "per second", 1},
    {"B", "_bytes", "_bytes", "in bytes", 1},
};

typedef struct {
  char *name, *help, *labels; /* labels: `{a="x",b="y"}` or "" */
  double value;
  int index; /* the record's place in the document: the first of a duplicate series is kept */
} sample;

/* A growing text buffer. */
typedef struct {
  char *p;
  size_t n, cap;
  int oom;
} tbuf;

static void put(tbuf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(tbuf *t, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    if (t->oom) return;
    va_start(ap, fmt);
    int w = vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (w < 0) {
      t->oom = 1;
      return;
    }
    if (t->p && t->n + (size_t)w < t->cap) {
      t->n += (size_t)w;
      return;
    }
    size_t cap = (t->cap + (size_t)w + 1) * 2;
    char *q = realloc(t->p, cap);
    if (!q) {
      t->oom = 1;
      return;
    }
    t->p = q;
    t->cap = cap;
  }
}

/* A name part: [a-zA-Z0-9_], anything else as '_', lower case. */
static void name_part(tbuf *t, const char *s) {
  for (; *s; s++) put(t, "%c", isalnum((unsigned char)*s) ? tolower((unsigned char)*s) : '_');
}

/* Text of the exposition format (a label value, with quote; HELP without): \\ and \n escaped (and \" in a label
 * value), bytes that are not UTF-8 as U+FFFD, so that a crafted record cannot add a line or break the file. */
static void escaped(tbuf *t, const char *value, int quote) {
  char *clean = ddp_utf8_clean(value);
  if (!clean) {
    t->oom = 1;
    return;
  }
  for (const char *s = clean; *s; s++) {
    if (*s == '\\' || (quote && *s == '"'))
      put(t, "\\%c", *s);
    else if (*s == '\n')
      put(t, "\\n");
    else
      put(t, "%c", *s);
  }
  free(clean);
}

/* label="value"; nothing when value is empty, or when the series has a label of that name already (the first
 * written wins: ddpbench's own, then the record's, then --label's), since node_exporter refuses a whole file
 * in which one series repeats a label name. The key as a label name: [a-zA-Z0-9_], not starting with a digit,
 * never empty. */
static void label(tbuf *t, int *first, const char *key, const char *value) {
  if (!value || !*value || t->oom) return;
  tbuf nm = {0};
  put(&nm, "%c", *first ? '{' : ',');
  if (!key[0] || isdigit((unsigned char)key[0])) put(&nm, "_");
  name_part(&nm, key);
  put(&nm, "=\"");
  if (nm.oom) {
    t->oom = 1;
    return;
  }
  if (!*first) { /* the series' labels so far, read as written: from the last line's '{', name="value" pairs */
    size_t start = t->n;
    while (start > 0 && t->p[start - 1] != '\n') start--;
    const char *p = t->p;
    size_t at = start, end = t->n;
    while (at < end && p[at] != '{') at++;
    while (at < end && (p[at] == '{' || p[at] == ',')) {
      if (end - at >= nm.n && !strncmp(p + at + 1, nm.p + 1, nm.n - 1)) {
        free(nm.p);
        return;
      }
      while (at < end && p[at] != '"') at++; /* the value's opening quote */
      for (at++; at < end && p[at] != '"'; at++)
        if (p[at] == '\\') at++; /* an escaped character */
      at++; /* past the closing quote: ',' before the next label */
    }
  }
  *first = 0;
  put(t, "%s", nm.p);
  free(nm.p);
  escaped(t, value, 1);
  put(t, "\"");
}

static const result_rank *rank_of(const result_doc *d, const char *rank) {
  if (!rank) return NULL;
  char *end;
  long r = strtol(rank, &end, 10);
  if (*end) return NULL;
  for (int i = 0; i < d->nranks; i++)
    if (d->ranks[i].rank == r) return &d->ranks[i];
  return NULL;
}

static char *take(tbuf *t) {
  char *p = t->p ? t->p : strdup("");
  memset(t, 0, sizeof *t);
  return p;
}

/* What made the figures: the document's kind (for an export, the kind of the result it was made from). */
static const char *prom_kind(const result_doc *d) {
  return d->source_kind && *d->source_kind ? d->source_kind : d->kind && *d->kind ? d->kind : "run";
}

/* How an accept ran: "soak" for a burn-in (its config's soak is a duration above 0), else NULL (no label), so that
 * a soak's and a one-shot accept's textfiles in one folder never define the same series, while the one-shot's
 * series stay as dashboards know them. */
static const char *prom_mode(const result_doc *d) {
  for (int i = 0; i < d->nconfig; i++)
    if (!strcmp(d->config[i].key, "soak")) return d->config[i].value && strtod(d->config[i].value, NULL) > 0 ? "soak" : NULL;
  return NULL;
}

/* The run's own labels (--label), after a series' labels: a key the record has itself is left out (its own
 * label names what was measured). */
static void user_labels(tbuf *t, int *first, const result_doc *d, const result_record *r) {
  for (int i = 0; i < d->nlabels; i++)
    if (!r || !result_record_label(r, d->labels[i].key)) label(t, first, d->labels[i].key, d->labels[i].value);
}

/* A run-wide series' name and labels: name{kind="..."[,severity="..."],labels...}. */
static void run_series(tbuf *t, const result_doc *d, const char *name, const char *severity) {
  int first = 1;
  put(t, "%s", name);
  label(t, &first, "kind", prom_kind(d));
  label(t, &first, "mode", prom_mode(d));
  label(t, &first, "severity", severity);
  user_labels(t, &first, d, NULL);
  put(t, "}");
}

/* How the run stands, for a dashboard to tell a running soak, one that ended early and one that finished apart:
 * ddpbench_run_state{state} 1 (one series, the state's), ddpbench_run_ok (1 only for a complete run that exits
 * 0: an interrupted or running one is no pass, whatever its findings so far) and ddpbench_run_suspect{rank,host}
 * for each rank the watchdog named when it ended the run. fails: the failing findings (a document without an
 * exit code, from before version 4, is judged by them). */
static void run_state_series(tbuf *t, const result_doc *d, int fails) {
  const char *state = result_state(d);
  int complete = !strcmp(state, "complete");
  int ok = complete && (d->exit_code >= 0 ? d->exit_code == 0 : fails == 0);
  put(t, "# HELP ddpbench_run_state How the run stands: running (a soak's interim file; left so by a signal or a "
         "dead rank 0), interrupted (ended early with rank 0 alive: a failed or stopped rank, the watchdog) or "
         "complete\n# TYPE ddpbench_run_state gauge\n");
  int first = 1;
  put(t, "ddpbench_run_state");
  label(t, &first, "kind", prom_kind(d));
  label(t, &first, "mode", prom_mode(d));
  label(t, &first, "state", state);
  user_labels(t, &first, d, NULL);
  put(t, "} 1\n");
  put(t, "# HELP ddpbench_run_ok The verdict: 1 when the run is complete and its exit code is 0 (no finding failed), "
         "else 0 (a running or interrupted run is no pass)\n# TYPE ddpbench_run_ok gauge\n");
  run_series(t, d, "ddpbench_run_ok", NULL);
  put(t, " %d\n", ok);
  if (d->nsuspects)
    put(t, "# HELP ddpbench_run_suspect A rank the watchdog named when it ended the run (the JSON's suspects say "
           "where it was)\n# TYPE ddpbench_run_suspect gauge\n");
  for (int i = 0; i < d->nsuspects; i++) {
    char rank[16];
    snprintf(rank, sizeof rank, "%d", d->suspects[i].rank);
    first = 1;
    put(t, "ddpbench_run_suspect");
    label(t, &first, "kind", prom_kind(d));
    label(t, &first, "mode", prom_mode(d));
    label(t, &first, "rank", rank);
    label(t, &first, "host", d->suspects[i].host);
    user_labels(t, &first, d, NULL);
    put(t, "} 1\n");
  }
}

static void value(tbuf *t, double v);
static double iso_seconds(const char *iso);

/* When this file's figures were last brought up to date (every interval of a soak; the end of other runs):
 * end_time, else the document's end_time (an export), else now. A dashboard alerts on it going stale (a soak
 * whose ranks were killed leaves its last interim file, state running). */
static void run_updated_series(tbuf *t, const result_doc *d, double end_time) {
  double when = !isnan(end_time) ? end_time : iso_seconds(d->end_time);
  if (isnan(when)) when = (double)time(NULL);
  put(t, "# HELP ddpbench_run_updated_time_seconds When this file's figures were last brought up to date, seconds "
         "since the Unix epoch (a soak: after every interval)\n# TYPE ddpbench_run_updated_time_seconds gauge\n");
  run_series(t, d, "ddpbench_run_updated_time_seconds", NULL);
  put(t, " ");
  value(t, when);
}

static ddp_result sample_record(const result_doc *d, const result_record *r, sample *s) {
  memset(s, 0, sizeof *s);
  int u = -1; /* the unit's row whose suffix the metric has, else its first row */
  size_t ml0 = strlen(r->metric);
  for (size_t k = 0; k < sizeof UNITS / sizeof UNITS[0]; k++) {
    if (strcmp(r->unit, UNITS[k].unit)) continue;
    size_t sl0 = strlen(UNITS[k].strip);
    int has = ml0 > sl0 && strcmp(r->metric + ml0 - sl0, UNITS[k].strip) == 0;
    if (u < 0 || has) u = (int)k;
    if (has) break;
  }
  const char *rank = result_record_label(r, "rank");
  tbuf t = {0};
  /* the name */
  put(&t, "ddpbench_");
  name_part(&t, r->measurement);
  put(&t, "_");
  /* the stem: the metric without its unit ("_tflops" at the end or "tflops_" at the start) and without the
   * measurement's name in front (gemm's gemm_tflops -> "") */
  char *m = strdup(r->metric);
  if (!m) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  size_t ml = strlen(m), sl = u >= 0 ? strlen(UNITS[u].strip) : 0, ms = strlen(r->measurement);
  const char *stem = m;
  if (sl && ml > sl && strcmp(m + ml - sl, UNITS[u].strip) == 0)
    m[ml - sl] = 0;
  else if (sl && ml > sl && strncmp(m, UNITS[u].strip + 1, sl - 1) == 0 && m[sl - 1] == '_')
    stem = m + sl;
  if (strcmp(stem, r->measurement) == 0)
    stem = "";
  else if (strncmp(stem, r->measurement, ms) == 0 && stem[ms] == '_')
    stem += ms + 1;
  if (rank && *stem && strncmp(stem, "rank_", 5) != 0) put(&t, "rank_");
  if (rank && !*stem) put(&t, "rank");
  if (*stem) name_part(&t, stem);
  else if (!rank) t.p[--t.n] = 0; /* no stem: drop the '_' after the measurement */
  free(m);
  if (u >= 0) put(&t, "%s", UNITS[u].suffix);
  s->name = take(&t);
  /* help */
  put(&t, "ddpbench %s %s%s", r->measurement, r->metric, rank ? " per rank" : "");
  if (u >= 0) put(&t, ", %s", UNITS[u].what);
  else if (*r->unit) put(&t, " (%s)", r->unit);
  if (r->better != BETTER_NONE) put(&t, "; %s is better", r->better == BETTER_LOWER ? "lower" : "higher");
  if (r->has_stats) put(&t, "; median");
  s->help = take(&t);
  /* labels: the kind of result first, so that a run's and an accept's series never collide */
  int first = 1;
  label(&t, &first, "kind", prom_kind(d));
  label(&t, &first, "mode", prom_mode(d));
  const result_rank *rr = rank_of(d, rank);
  if (rank) {
    char gpu[16] = "";
    if (rr && rr->ordinal >= 0) snprintf(gpu, sizeof gpu, "%d", rr->ordinal);
    /* from the result's ranks; without them, the record's own labels (acceptance records carry gpu = bus id) */
    const char *rgpu = result_record_label(r, "gpu"), *rbus = result_record_label(r, "bus_id");
    if (!rbus && rgpu && strchr(rgpu, ':')) rbus = rgpu, rgpu = NULL;
    label(&t, &first, "host", rr && rr->host ? rr->host : result_record_label(r, "host"));
    label(&t, &first, "gpu", rr ? gpu : rgpu);
    label(&t, &first, "rank", rank);
    label(&t, &first, "bus_id", rr && rr->pci_bus_id ? rr->pci_bus_id : rbus);
  }
  label(&t, &first, "group", r->group);
  if (!rank && strncmp(r->group, "node:", 5) == 0 && !result_record_label(r, "host"))
    label(&t, &first, "host", r->group + 5);
  for (int k = 0; k < r->nlabels; k++) {
    const char *key = r->labels[k].key;
    if (rank && (!strcmp(key, "host") || !strcmp(key, "gpu") || !strcmp(key, "rank") || !strcmp(key, "bus_id")))
      continue;
    if (!strcmp(key, "group") || !strcmp(key, "__name__")) continue;
    label(&t, &first, key, r->labels[k].value);
  }
  user_labels(&t, &first, d, r);
  if (!first) put(&t, "}");
  s->labels = take(&t);
  s->value = u < 0 ? r->value : UNITS[u].scale < 0 ? r->value / -UNITS[u].scale : r->value * UNITS[u].scale;
  if (!s->name || !s->help || !s->labels) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  return DDP_OK;
}

/* By name, then labels, then the order read: a family's samples together, a duplicate series next to the one
 * it repeats (found in one pass, not by a scan per sample). */
static int sample_cmp(const void *a, const void *b) {
  const sample *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (!c) c = strcmp(x->labels, y->labels);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

static void value(tbuf *t, double v) {
  if (isnan(v))
    put(t, "NaN\n");
  else if (isinf(v))
    put(t, "%s\n", v > 0 ? "+Inf" : "-Inf");
  else { /* the shortest of %.15g, %.16g, %.17g that reads back as v */
    char b[40];
    for (int digits = 15; digits <= 17; digits++) {
      snprintf(b, sizeof b, "%.*g", digits, v);
      if (strtod(b, NULL) == v) break;
    }
    put(t, "%s\n", b);
  }
}

static double iso_seconds(const char *iso) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm)) return NAN;
  return (double)timegm(&tm);
}

/* ddpbench_host_failed{host,check}: 0 or 1 for every host of the job and every check judged about a host (a
 * finding with a host, passed or not), for alerting and draining: a passing host is a 0, never an absent series.
 * 1: a failing finding of that check about that host, or a warning about a host the verdict drains (--strict). */
static void host_failed(tbuf *t, const result_doc *d) {
  int nh = 0, nc = 0;
  const char **hosts = calloc((size_t)d->nranks + (size_t)d->findings.n + 1, sizeof *hosts);
  const char **checks = calloc((size_t)d->findings.n + 1, sizeof *checks);
  if (!hosts || !checks) {
    free((void *)hosts), free((void *)checks);
    t->oom = 1;
    return;
  }
  for (int i = 0; i < d->nranks + d->findings.n; i++) {
    const char *h = i < d->nranks ? d->ranks[i].host : d->findings.v[i - d->nranks].host;
    int seen = !h || !h[0];
    for (int k = nh - 1; k >= 0 && !seen; k--) seen = !strcmp(hosts[k], h);
    if (!seen) hosts[nh++] = h;
  }
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    int seen = !f->host[0];
    for (int k = 0; k < nc && !seen; k++) seen = !strcmp(checks[k], f->check);
    if (!seen) checks[nc++] = f->check;
  }
  unsigned char *failed = nh && nc ? calloc((size_t)nh * (size_t)nc, 1) : NULL;
  if (nh && nc && !failed) t->oom = 1;
  for (int i = 0; failed && i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    if (!f->host[0] || f->passed || f->severity < SEV_WARN) continue;
    int drained = f->severity == SEV_FAIL;
    for (int k = 0; k < d->nfailed_hosts && !drained; k++) drained = !strcmp(d->failed_hosts[k], f->host);
    if (!drained) continue;
    int h = 0, c = 0;
    while (h < nh && strcmp(hosts[h], f->host)) h++;
    while (c < nc && strcmp(checks[c], f->check)) c++;
    if (h < nh && c < nc) failed[(size_t)h * (size_t)nc + (size_t)c] = 1;
  }
  if (failed) {
    put(t, "# HELP ddpbench_host_failed 1 when the host failed the check, 0 when it passed it (every host, every "
           "check judged about a host)\n# TYPE ddpbench_host_failed gauge\n");
    for (int h = 0; h < nh; h++)
      for (int c = 0; c < nc; c++) {
        int first = 1;
        put(t, "ddpbench_host_failed");
        label(t, &first, "kind", prom_kind(d));
        label(t, &first, "mode", prom_mode(d));
        label(t, &first, "host", hosts[h]);
        label(t, &first, "check", checks[c]);
        user_labels(t, &first, d, NULL);
        put(t, "} %d\n", failed[(size_t)h * (size_t)nc + (size_t)c]);
      }
  }
  free(failed);
  free((void *)hosts);
  free((void *)checks);
}

/* ddpbench_host_bad_probability{host}: each node's probability of being bad from the node-pair model, read from
 * the info findings of check "pair_bad_probability" that src/verdict/pair_judge.c writes (measured = P(bad)); a
 * host judged twice keeps its first. No series when the pairs were not judged by the model. */
static void host_bad_probability(tbuf *t, const result_doc *d) {
  int any = 0;
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    if (strcmp(f->check, "pair_bad_probability") || !f->host[0] || !isfinite(f->measured)) continue;
    int seen = 0;
    for (int j = 0; j < i && !seen; j++)
      seen = !strcmp(d->findings.v[j].check, f->check) && !strcmp(d->findings.v[j].host, f->host);
    if (seen) continue;
    if (!any++)
      put(t, "# HELP ddpbench_host_bad_probability The probability that the host is bad (more than --bad-pct below "
             "the healthy node-pair level) under the pair model and --prior-bad\n"
             "# TYPE ddpbench_host_bad_probability gauge\n");
    int first = 1;
    put(t, "ddpbench_host_bad_probability");
    label(t, &first, "kind", prom_kind(d));
    label(t, &first, "mode", prom_mode(d));
    label(t, &first, "host", f->host);
    user_labels(t, &first, d, NULL);
    put(t, "} %.6g\n", f->measured);
  }
}

/* ddpbench_drain_expected_false_drains and ddpbench_drain_expected_misses: the stated error rate of the pair
 * model's drain list, read from the info finding of check "pair_model" (measured: the expected false drains,
 * expected: the expected misses; both NaN when the model drew no list). No series then. */
static void drain_error_rate(tbuf *t, const result_doc *d) {
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    if (strcmp(f->check, "pair_model") || !isfinite(f->measured) || !isfinite(f->expected)) continue;
    static const char *const name[] = {"ddpbench_drain_expected_false_drains", "ddpbench_drain_expected_misses"};
    static const char *const help[] = {"healthy nodes the node-pair drain list probably holds (the sum of 1 - P(bad) "
                                       "over it), under --prior-bad",
                                       "bad nodes the node-pair drain list probably misses (the sum of P(bad) over the "
                                       "rest), under --prior-bad"};
    for (int k = 0; k < 2; k++) {
      put(t, "# HELP %s The expected number of %s\n# TYPE %s gauge\n", name[k], help[k], name[k]);
      int first = 1;
      put(t, "%s", name[k]);
      label(t, &first, "kind", prom_kind(d));
      label(t, &first, "mode", prom_mode(d));
      user_labels(t, &first, d, NULL);
      put(t, "} %.6g\n", k ? f->expected : f->measured);
    }
    return;
  }
}

ddp_result prom_format(const result_doc *d, double end_time, char **out) {
  *out = NULL;
  int n = d->nrecords;
  sample *s = calloc((size_t)(n ? n : 1), sizeof *s);
  DDP_CHECK_ALLOC(s);
  ddp_result r = DDP_OK;
  for (int i = 0; i < n && r == DDP_OK; i++) {
    r = sample_record(d, &d->records[i], &s[i]);
    s[i].index = i;
  }
  tbuf t = {0};
  if (r == DDP_OK) {
    /* The run: the stack as labels, the verdict, when. */
    put(&t, "# HELP ddpbench_info The run's stack: ddpbench version, device, comm, world size and GPU model\n");
    put(&t, "# TYPE ddpbench_info gauge\nddpbench_info");
    int first = 1;
    char num[32];
    label(&t, &first, "kind", prom_kind(d));
    label(&t, &first, "mode", prom_mode(d));
    label(&t, &first, "version", d->ddpbench_version);
    label(&t, &first, "device", d->device);
    label(&t, &first, "comm", d->comm);
    snprintf(num, sizeof num, "%d", d->world_size);
    label(&t, &first, "world_size", num);
    snprintf(num, sizeof num, "%d", d->nodes);
    label(&t, &first, "nodes", num);
    if (d->run_id) label(&t, &first, "run_id", d->run_id);
    if (d->nranks) {
      label(&t, &first, "gpu_model", d->ranks[0].device_name);
      for (int k = 0; k < d->ranks[0].nversions; k++) {
        const char *key = d->ranks[0].versions[k].key;
        if (!strcmp(key, "nccl_runtime") || !strcmp(key, "cuda_driver") || !strcmp(key, "cuda_runtime") ||
            !strcmp(key, "mpi") || !strcmp(key, "nvidia_driver") || !strcmp(key, "cublas"))
          label(&t, &first, key, d->ranks[0].versions[k].value);
      }
    }
    user_labels(&t, &first, d, NULL); /* after the stack's own, which keep their names */
    put(&t, "%s 1\n", first ? "" : "}");
    int fails = 0, warns = 0, infos = 0;
    for (int i = 0; i < d->findings.n; i++) {
      finding_severity sv = d->findings.v[i].severity;
      fails += sv == SEV_FAIL;
      warns += sv == SEV_WARN;
      infos += sv == SEV_INFO;
    }
    run_state_series(&t, d, fails);
    put(&t, "# HELP ddpbench_findings Findings of the run by severity\n# TYPE ddpbench_findings gauge\n");
    static const char *const sev[] = {"fail", "warn", "info"};
    const int count[] = {fails, warns, infos};
    for (int k = 0; k < 3; k++) {
      run_series(&t, d, "ddpbench_findings", sev[k]);
      put(&t, " %d\n", count[k]);
    }
    host_failed(&t, d);
    host_bad_probability(&t, d);
    drain_error_rate(&t, d);
    double start = iso_seconds(d->start_time);
    if (!isnan(start)) {
      put(&t, "# HELP ddpbench_run_start_time_seconds When the run started, seconds since the Unix epoch\n");
      put(&t, "# TYPE ddpbench_run_start_time_seconds gauge\n");
      run_series(&t, d, "ddpbench_run_start_time_seconds", NULL);
      put(&t, " ");
      value(&t, start);
    }
    run_updated_series(&t, d, end_time);
    if (!isnan(end_time) && strcmp(result_state(d), "running")) { /* a running soak has not ended */
      put(&t, "# HELP ddpbench_run_end_time_seconds When the run ended, seconds since the Unix epoch\n");
      put(&t, "# TYPE ddpbench_run_end_time_seconds gauge\n");
      run_series(&t, d, "ddpbench_run_end_time_seconds", NULL);
      put(&t, " ");
      value(&t, end_time);
    }
    qsort(s, (size_t)n, sizeof *s, sample_cmp);
    const char *family = NULL; /* the family whose HELP and TYPE were written last */
    int kept = -1;              /* the last sample written */
    for (int i = 0; i < n; i++) {
      if (isnan(s[i].value)) continue; /* not measured or not defined (the JSON says why): absent, never NaN */
      if (!family || strcmp(s[i].name, family)) {
        put(&t, "# HELP %s ", s[i].name);
        escaped(&t, s[i].help, 0);
        put(&t, "\n# TYPE %s gauge\n", s[i].name);
        family = s[i].name;
      }
      if (kept >= 0 && !strcmp(s[kept].name, s[i].name) && !strcmp(s[kept].labels, s[i].labels)) continue;
      kept = i;
      put(&t, "%s%s ", s[i].name, s[i].labels);
      value(&t, s[i].value);
    }
    if (t.oom) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  for (int i = 0; i < n; i++) {
    free(s[i].name);
    free(s[i].help);
    free(s[i].labels);
  }
  free(s);
  if (r != DDP_OK) {
    free(t.p);
    return r;
  }
  *out = take(&t);
  return DDP_OK;
}

