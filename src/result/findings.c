/* findings.c: the list of findings, its table and its JSON array (written and read back). Formatting and
 * validation only: nothing here measures, communicates or exits. */
#include "findings.h"

#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *sev_names[SEV_COUNT] = {"info", "warn", "fail"};
static const char *scope_names[SCOPE_COUNT] = {"job", "host", "rank", "gpu", "link", "pair"};

const char *finding_severity_name(finding_severity s) { return s >= 0 && s < SEV_COUNT ? sev_names[s] : "?"; }
const char *finding_scope_name(finding_scope s) { return s >= 0 && s < SCOPE_COUNT ? scope_names[s] : "?"; }

static int parse_name(const char *name, const char *const *names, int n) {
  for (int i = 0; name && i < n; i++)
    if (strcmp(name, names[i]) == 0) return i;
  return -1;
}
int finding_severity_parse(const char *name) { return parse_name(name, sev_names, SEV_COUNT); }
int finding_scope_parse(const char *name) { return parse_name(name, scope_names, SCOPE_COUNT); }

void findings_init(finding_list *l) { memset(l, 0, sizeof *l); }

void findings_free(finding_list *l) {
  free(l->v);
  memset(l, 0, sizeof *l);
}

ddp_result findings_push(finding_list *l, const finding *f) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    finding *v = realloc(l->v, (size_t)cap * sizeof *v);
    DDP_CHECK_ALLOC(v);
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = *f;
  return DDP_OK;
}

static ddp_result findings_vadd(finding_list *l, const char *host, int rank, const char *check, finding_severity sev,
                                finding_scope scope, const char *subject, double measured, double expected,
                                const char *unit, const char *fmt, va_list ap) {
  finding f;
  memset(&f, 0, sizeof f);
  snprintf(f.host, sizeof f.host, "%s", host ? host : "");
  f.rank = rank;
  snprintf(f.check, sizeof f.check, "%s", check ? check : "");
  f.severity = sev;
  f.scope = scope;
  snprintf(f.subject, sizeof f.subject, "%s", subject ? subject : "job");
  f.measured = measured;
  f.expected = expected;
  snprintf(f.unit, sizeof f.unit, "%s", unit ? unit : "");
  if (vsnprintf(f.text, sizeof f.text, fmt, ap) >= (int)sizeof f.text) /* cut: said, never silently */
    memcpy(f.text + sizeof f.text - 4, "...", 4);
  f.t_s = NAN;
  return findings_push(l, &f);
}

ddp_result findings_add(finding_list *l, const char *check, finding_severity sev, finding_scope scope,
                        const char *subject, double measured, double expected, const char *unit, const char *fmt,
                        ...) {
  va_list ap;
  va_start(ap, fmt);
  ddp_result r = findings_vadd(l, "", -1, check, sev, scope, subject, measured, expected, unit, fmt, ap);
  va_end(ap);
  return r;
}

ddp_result findings_add_at(finding_list *l, const char *host, int rank, const char *check, finding_severity sev,
                           finding_scope scope, const char *subject, double measured, double expected,
                           const char *unit, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ddp_result r = findings_vadd(l, host, rank, check, sev, scope, subject, measured, expected, unit, fmt, ap);
  va_end(ap);
  return r;
}

int findings_count(const finding_list *l, finding_severity at_least) {
  int n = 0;
  for (int i = 0; i < l->n; i++) n += l->v[i].severity >= at_least;
  return n;
}

int findings_exit_code(const finding_list *l) {
  int weights = 0, nonfinite = 0;
  for (int i = 0; i < l->n; i++) {
    weights |= l->v[i].severity == SEV_FAIL && !strcmp(l->v[i].check, "weights");
    nonfinite |= l->v[i].severity == SEV_FAIL && !strcmp(l->v[i].check, "nonfinite");
  }
  if (weights) return DDP_EXIT_CHECK;
  if (nonfinite) return DDP_EXIT_NONFINITE;
  return findings_count(l, SEV_FAIL) ? DDP_EXIT_EXPECT : DDP_EXIT_OK;
}

static void print_from(FILE *out, const finding_list *l, int least);

void findings_print(FILE *out, const finding_list *l) { print_from(out, l, SEV_INFO); }

void findings_print_notable(FILE *out, const finding_list *l) {
  if (findings_count(l, SEV_WARN) > 0) print_from(out, l, SEV_WARN);
}

static void print_from(FILE *out, const finding_list *l, int least) {
  int passed = 0;
  for (int i = 0; i < l->n; i++) passed += l->v[i].passed;
  /* the counts of the JSON and Prometheus (a passed check is an info finding there): the passes among the info */
  fprintf(out, "# findings (%d fail, %d warn, %d info", findings_count(l, SEV_FAIL),
          findings_count(l, SEV_WARN) - findings_count(l, SEV_FAIL), l->n - findings_count(l, SEV_WARN));
  if (passed) fprintf(out, ", of which %d passed check%s, in the JSON", passed, passed == 1 ? "" : "s");
  fprintf(out, ")\n");
  if (l->n == passed) fprintf(out, "#   none\n");
  for (int sev = SEV_FAIL; sev >= least; sev--)
    for (int i = 0; i < l->n; i++) {
      const finding *f = &l->v[i];
      if ((int)f->severity != sev || f->passed) continue;
      fprintf(out, "#   %-4s  %-14s %-5s %-20s %s", sev_names[sev], f->check, scope_names[f->scope], f->subject,
              f->text);
      if (!isnan(f->measured)) {
        fprintf(out, " [%.4g", f->measured);
        if (!isnan(f->expected)) fprintf(out, " vs %.4g", f->expected);
        fprintf(out, "%s%s]", f->unit[0] ? " " : "", f->unit);
      }
      fputc('\n', out);
    }
}


cJSON *findings_json(const finding_list *l) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < l->n; i++) {
    const finding *f = &l->v[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddStringToObject(o, "check", f->check);
    cJSON_AddStringToObject(o, "severity", sev_names[f->severity]);
    cJSON_AddStringToObject(o, "scope", scope_names[f->scope]);
    cJSON_AddStringToObject(o, "subject", f->subject);
    if (f->host[0]) cJSON_AddStringToObject(o, "host", f->host);
    else cJSON_AddNullToObject(o, "host");
    if (f->rank >= 0) cJSON_AddNumberToObject(o, "rank", f->rank);
    else cJSON_AddNullToObject(o, "rank");
    cJSON_AddItemToObject(o, "measured", json_number(f->measured));
    cJSON_AddItemToObject(o, "expected", json_number(f->expected));
    cJSON_AddStringToObject(o, "unit", f->unit);
    cJSON_AddStringToObject(o, "text", f->text);
    if (f->passed) cJSON_AddTrueToObject(o, "passed");
    if (f->interval > 0) cJSON_AddNumberToObject(o, "interval", f->interval);
    if (f->interval > 0) cJSON_AddItemToObject(o, "t_s", json_number(f->t_s));
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static ddp_result why_set(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static ddp_result why_set(char *why, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, n, fmt, ap);
  va_end(ap);
  return DDP_ERR_USAGE;
}

static ddp_result get_string(const cJSON *o, const char *key, int i, char *dst, size_t n, char *why, size_t wn) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsString(x)) return why_set(why, wn, "findings[%d].%s: %s", i, key, x ? "not a string" : "missing");
  snprintf(dst, n, "%s", x->valuestring);
  return DDP_OK;
}

static ddp_result get_number(const cJSON *o, const char *key, int i, double *v, char *why, size_t wn) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsNull(x) || !x) {
    *v = NAN;
    return DDP_OK;
  }
  if (!cJSON_IsNumber(x)) return why_set(why, wn, "findings[%d].%s: not a number or null", i, key);
  *v = x->valuedouble;
  return DDP_OK;
}

ddp_result findings_from_json(const cJSON *arr, finding_list *l, char *why, size_t wn) {
  if (!cJSON_IsArray(arr)) return why_set(why, wn, "findings: not an array");
  int i = 0;
  for (const cJSON *o = arr->child; o; o = o->next, i++) {
    if (!cJSON_IsObject(o)) return why_set(why, wn, "findings[%d]: not an object", i);
    finding f;
    memset(&f, 0, sizeof f);
    char sev[16], scope[16];
    ddp_result r;
    if ((r = get_string(o, "check", i, f.check, sizeof f.check, why, wn)) != DDP_OK) return r;
    if ((r = get_string(o, "severity", i, sev, sizeof sev, why, wn)) != DDP_OK) return r;
    if ((r = get_string(o, "scope", i, scope, sizeof scope, why, wn)) != DDP_OK) return r;
    if ((r = get_string(o, "subject", i, f.subject, sizeof f.subject, why, wn)) != DDP_OK) return r;
    if ((r = get_string(o, "unit", i, f.unit, sizeof f.unit, why, wn)) != DDP_OK) return r;
    if ((r = get_string(o, "text", i, f.text, sizeof f.text, why, wn)) != DDP_OK) return r;
    if ((r = get_number(o, "measured", i, &f.measured, why, wn)) != DDP_OK) return r;
    if ((r = get_number(o, "expected", i, &f.expected, why, wn)) != DDP_OK) return r;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "host"), *rk = cJSON_GetObjectItemCaseSensitive(o, "rank");
    if (h && !cJSON_IsNull(h) && !cJSON_IsString(h)) return why_set(why, wn, "findings[%d].host: not a string or null", i);
    if (cJSON_IsString(h)) snprintf(f.host, sizeof f.host, "%s", h->valuestring);
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(o, "passed");
    if (ps && !cJSON_IsBool(ps)) return why_set(why, wn, "findings[%d].passed: not a boolean", i);
    f.passed = cJSON_IsTrue(ps);
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(o, "interval");
    if (iv && (!cJSON_IsNumber(iv) || iv->valuedouble < 1 || iv->valuedouble > (1 << 24) ||
               iv->valuedouble != (int)iv->valuedouble))
      return why_set(why, wn, "findings[%d].interval: not an interval number (from 1)", i);
    f.interval = iv ? (int)iv->valuedouble : 0;
    if ((r = get_number(o, "t_s", i, &f.t_s, why, wn)) != DDP_OK) return r;
    f.rank = -1;
    if (rk && !cJSON_IsNull(rk)) {
      if (!cJSON_IsNumber(rk) || rk->valuedouble < 0 || rk->valuedouble > (1 << 24) || rk->valuedouble != (int)rk->valuedouble)
        return why_set(why, wn, "findings[%d].rank: not a rank or null", i);
      f.rank = (int)rk->valuedouble;
    }
    int s = finding_severity_parse(sev), sc = finding_scope_parse(scope);
    if (s < 0) return why_set(why, wn, "findings[%d].severity: \"%s\" is not info, warn or fail", i, sev);
    if (sc < 0) return why_set(why, wn, "findings[%d].scope: \"%s\" is not job, host, rank, gpu, link or pair", i, scope);
    f.severity = (finding_severity)s;
    f.scope = (finding_scope)sc;
    if (findings_push(l, &f) != DDP_OK) return why_set(why, wn, "out of host memory");
  }
  return DDP_OK;
}
