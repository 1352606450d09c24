/* result.c: the result model, its JSON writer and its reader (schema versions 1 to RESULT_SCHEMA_VERSION), and the environment
 * allowlist. The reader trusts nothing in the file: every key's type is checked and every failure names
 * the key. Nothing here measures, communicates or exits. */
#include "result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input_file.h"
#include "json.h"

extern char **environ;

/* ---- the model ---------------------------------------------------------------------------------- */
void result_init(result_doc *d) {
  memset(d, 0, sizeof *d);
  d->weights_identical = -1;
  d->end_epoch = NAN;
  d->exit_code = -1;
  d->duration_s = NAN;
  findings_init(&d->findings);
}

ddp_result result_failed_host_add(result_doc *d, const char *host) {
  for (int i = 0; i < d->nfailed_hosts; i++)
    if (!strcmp(d->failed_hosts[i], host)) return DDP_OK;
  char **v = realloc(d->failed_hosts, (size_t)(d->nfailed_hosts + 1) * sizeof *v);
  DDP_CHECK_ALLOC(v);
  d->failed_hosts = v;
  DDP_CHECK_ALLOC(v[d->nfailed_hosts] = strdup(host));
  d->nfailed_hosts++;
  return DDP_OK;
}

const char *result_state(const result_doc *d) {
  static const char *const S[] = {"running", "interrupted", "complete"};
  for (int i = 0; d->state && i < 3; i++)
    if (!strcmp(d->state, S[i])) return S[i];
  return d->verdict && !strcmp(d->verdict, "INCOMPLETE") ? S[0] : S[2];
}

int result_state_known(const char *s) {
  return s && (!strcmp(s, "running") || !strcmp(s, "interrupted") || !strcmp(s, "complete"));
}

ddp_result result_suspect_add(result_doc *d, int rank, const char *host, const char *where) {
  result_suspect *v = realloc(d->suspects, (size_t)(d->nsuspects + 1) * sizeof *v);
  DDP_CHECK_ALLOC(v);
  d->suspects = v;
  result_suspect *s = &v[d->nsuspects];
  s->rank = rank;
  s->host = strdup(host ? host : "");
  s->where = strdup(where ? where : "");
  if (!s->host || !s->where) {
    free(s->host), free(s->where);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  d->nsuspects++;
  return DDP_OK;
}

static void kv_free(result_kv *kv, int n) {
  for (int i = 0; i < n; i++) {
    free(kv[i].key);
    free(kv[i].value);
  }
  free(kv);
}

static void record_free(result_record *r) {
  free(r->measurement);
  free(r->group);
  free(r->metric);
  free(r->unit);
  kv_free(r->labels, r->nlabels);
  free(r->samples);
  free(r->why);
}

void result_free(result_doc *d) {
  free(d->kind);
  free(d->source_kind);
  for (int i = 0; i < d->nfailed_hosts; i++) free(d->failed_hosts[i]);
  free(d->failed_hosts);
  free(d->ddpbench_version);
  free(d->command_line);
  free(d->start_time);
  free(d->verdict);
  free(d->bottom_line);
  free(d->end_time);
  free(d->run_id);
  free(d->state);
  for (int i = 0; i < d->nsuspects; i++) free(d->suspects[i].host), free(d->suspects[i].where);
  free(d->suspects);
  kv_free(d->labels, d->nlabels);
  cJSON_Delete(d->nccl);
  cJSON_Delete(d->soak);
  free(d->device);
  free(d->comm);
  kv_free(d->config, d->nconfig);
  kv_free(d->environment, d->nenv);
  for (int i = 0; i < d->nranks; i++) {
    result_rank *r = &d->ranks[i];
    free(r->host);
    free(r->device_name);
    free(r->pci_bus_id);
    kv_free(r->versions, r->nversions);
    free(r->weights_checksum);
  }
  free(d->ranks);
  for (int i = 0; i < d->nrecords; i++) record_free(&d->records[i]);
  free(d->records);
  findings_free(&d->findings);
  free(d->weights_checksum);
  result_init(d);
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }
static double finite_or_nan(double v) { return isfinite(v) ? v : NAN; }

static int kv_cmp(const void *a, const void *b) {
  return strcmp(((const result_kv *)a)->key, ((const result_kv *)b)->key);
}

/* Appends key=value to *kv (grown one at a time: these lists are short). */
ddp_result result_config_set(result_doc *d, const char *key, const char *value, int text) {
  for (int i = 0; i < d->nconfig; i++)
    if (!strcmp(d->config[i].key, key)) {
      char *v = strdup(value);
      DDP_CHECK_ALLOC(v);
      free(d->config[i].value);
      d->config[i].value = v, d->config[i].text = text;
      return DDP_OK;
    }
  DDP_TRY(result_kv_push(&d->config, &d->nconfig, key, value));
  d->config[d->nconfig - 1].text = text;
  return DDP_OK;
}

ddp_result result_kv_push(result_kv **kv, int *n, const char *key, const char *value) {
  result_kv *v = realloc(*kv, (size_t)(*n + 1) * sizeof *v);
  DDP_CHECK_ALLOC(v);
  *kv = v;
  v[*n].key = strdup(key);
  v[*n].value = strdup(value);
  v[*n].text = 0;
  if (!v[*n].key || !v[*n].value) {
    free(v[*n].key);
    free(v[*n].value);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  (*n)++;
  return DDP_OK;
}

void result_remove_record(result_doc *d, int i) {
  if (i < 0 || i >= d->nrecords) return;
  record_free(&d->records[i]);
  memmove(&d->records[i], &d->records[i + 1], (size_t)(d->nrecords - i - 1) * sizeof *d->records);
  d->nrecords--;
}

ddp_result result_add_record(result_doc *d, const result_record *rec) {
  if (d->nrecords == d->cap_records) {
    int cap = d->cap_records ? 2 * d->cap_records : 32;
    result_record *v = realloc(d->records, (size_t)cap * sizeof *v);
    DDP_CHECK_ALLOC(v);
    d->records = v;
    d->cap_records = cap;
  }
  result_record *r = &d->records[d->nrecords];
  memset(r, 0, sizeof *r);
  r->measurement = dup_or_empty(rec->measurement);
  r->group = dup_or_empty(rec->group);
  r->metric = dup_or_empty(rec->metric);
  r->unit = dup_or_empty(rec->unit);
  r->better = rec->better;
  /* non-finite figures are NaN ("could not tell"), as the file has them (null): the model a run writes from is
   * the model a reader gets back */
  r->value = finite_or_nan(rec->value);
  r->has_stats = rec->has_stats;
  r->stats = rec->stats;
  double *st[] = {&r->stats.median, &r->stats.p10, &r->stats.p90, &r->stats.min, &r->stats.max, &r->stats.mean};
  for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) *st[i] = finite_or_nan(*st[i]);
  d->nrecords++; /* from here on result_free frees what was copied */
  if (!r->measurement || !r->group || !r->metric || !r->unit) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int i = 0; i < rec->nlabels; i++) DDP_TRY(result_kv_push(&r->labels, &r->nlabels, rec->labels[i].key, rec->labels[i].value));
  if (r->nlabels > 1) qsort(r->labels, (size_t)r->nlabels, sizeof *r->labels, kv_cmp);
  if (rec->nsamples > 0) {
    r->samples = malloc((size_t)rec->nsamples * sizeof(double));
    DDP_CHECK_ALLOC(r->samples);
    for (int i = 0; i < rec->nsamples; i++) r->samples[i] = finite_or_nan(rec->samples[i]);
    r->nsamples = rec->nsamples;
  }
  if (rec->why && isnan(r->value)) {
    r->why = strdup(rec->why);
    DDP_CHECK_ALLOC(r->why);
  }
  return DDP_OK;
}

ddp_result result_set_why(result_doc *d, const char *why) {
  if (!d->nrecords || !why || !*why) return DDP_OK;
  result_record *r = &d->records[d->nrecords - 1];
  if (!isnan(r->value)) return DDP_OK;
  free(r->why);
  r->why = strdup(why);
  DDP_CHECK_ALLOC(r->why);
  return DDP_OK;
}

ddp_result result_add(result_doc *d, const char *measurement, const char *group, const char *metric,
                      const char *unit, result_better better, double value, const ddp_stats *stats,
                      const double *samples, int nsamples, ...) {
  result_kv labels[16];
  result_record rec;
  memset(&rec, 0, sizeof rec);
  rec.measurement = (char *)measurement;
  rec.group = (char *)group;
  rec.metric = (char *)metric;
  rec.unit = (char *)unit;
  rec.better = better;
  rec.labels = labels;
  rec.value = value;
  rec.has_stats = stats != NULL;
  if (stats) rec.stats = *stats;
  rec.samples = (double *)samples;
  rec.nsamples = nsamples;
  va_list ap;
  va_start(ap, nsamples);
  for (const char *k; (k = va_arg(ap, const char *)) != NULL && rec.nlabels < 16;) {
    labels[rec.nlabels].key = (char *)k;
    labels[rec.nlabels].value = va_arg(ap, char *);
    rec.nlabels++;
  }
  va_end(ap);
  return result_add_record(d, &rec);
}

const char *result_record_label(const result_record *rec, const char *key) {
  for (int i = 0; i < rec->nlabels; i++)
    if (strcmp(rec->labels[i].key, key) == 0) return rec->labels[i].value;
  return NULL;
}

const result_record *result_find(const result_doc *d, const char *measurement, const char *group,
                                 const char *metric, ...) {
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *r = &d->records[i];
    if (strcmp(r->measurement, measurement) || strcmp(r->group, group) || strcmp(r->metric, metric)) continue;
    int ok = 1;
    va_list ap;
    va_start(ap, metric);
    for (const char *k; ok && (k = va_arg(ap, const char *)) != NULL;) {
      const char *want = va_arg(ap, const char *), *have = result_record_label(r, k);
      ok = have && strcmp(have, want) == 0;
    }
    va_end(ap);
    if (ok) return r;
  }
  return NULL;
}

static const char *better_names[] = {"none", "lower", "higher"};
const char *result_better_name(result_better b) { return b >= BETTER_NONE && b <= BETTER_HIGHER ? better_names[b] : "?"; }

/* ---- environment -------------------------------------------------------------------------------- */
int result_env_allowed(const char *name) {
  static const char *prefixes[] = {"NCCL_", "CUDA_", "UCX_", "DDPBENCH_",
                                   /* Open MPI: only the frameworks that choose the transport */
                                   "OMPI_MCA_btl", "OMPI_MCA_pml", "OMPI_MCA_coll", "OMPI_MCA_osc", "OMPI_MCA_mtl"};
  static const char *exact[] = {"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID", "SLURM_STEPID", "SLURM_ARRAY_JOB_ID",
                                "SLURM_ARRAY_TASK_ID"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) {
      /* OMPI_MCA_btl itself or one of its parameters (OMPI_MCA_btl_tcp_if_include), not OMPI_MCA_btlfoo */
      if (strncmp(name, "OMPI_MCA_", 9) == 0 && name[strlen(prefixes[i])] && name[strlen(prefixes[i])] != '_') continue;
      return 1;
    }
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
    if (strcmp(name, exact[i]) == 0) return 1;
  return 0;
}

int result_env_redacted(const char *name) {
  static const char *words[] = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD"};
  char up[256];
  size_t n = 0;
  for (; name[n] && n + 1 < sizeof up; n++) up[n] = (char)(name[n] >= 'a' && name[n] <= 'z' ? name[n] - 32 : name[n]);
  up[n] = 0;
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strstr(up, words[i])) return 1;
  return 0;
}

/* The one rule for what of an environment is recorded: allowed names only, secret-looking values replaced. */
static ddp_result env_keep(result_doc *d, const char *key, const char *value) {
  if (!result_env_allowed(key) || ddp_env_is_own(key)) return DDP_OK; /* ddpbench's own: not the user's */
  return result_kv_push(&d->environment, &d->nenv, key, result_env_redacted(key) ? RESULT_REDACTED : value);
}

ddp_result result_env_collect(result_doc *d) {
  for (char **e = environ; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || eq - *e >= 256) continue;
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
    DDP_TRY(env_keep(d, key, eq + 1));
  }
  if (d->nenv > 1) qsort(d->environment, (size_t)d->nenv, sizeof *d->environment, kv_cmp);
  return DDP_OK;
}

/* ---- writer ------------------------------------------------------------------------------------- */
cJSON *result_json_number(double v) { return json_number(v); }
#define num result_json_number

cJSON *result_stats_json(const ddp_stats *st) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddItemToObject(o, "median", num(st->median));
  cJSON_AddItemToObject(o, "p10", num(st->p10));
  cJSON_AddItemToObject(o, "p90", num(st->p90));
  cJSON_AddItemToObject(o, "min", num(st->min));
  cJSON_AddItemToObject(o, "max", num(st->max));
  cJSON_AddItemToObject(o, "mean", num(st->mean));
  cJSON_AddNumberToObject(o, "n", st->n);
  return o;
}

/* Config values keep their JSON types: booleans, numbers (exactly representable: up to 2^53), text.
 * Keys whose values are names or paths stay text even when they look like numbers. */
static cJSON *config_value(const result_kv *kv) {
  static const char *text_keys[] = {"json", "phases", "topo_xml", "config_file", "failed_hosts"};
  const char *key = kv->key, *value = kv->value;
  if (kv->text) return cJSON_CreateString(value);
  for (size_t i = 0; i < sizeof text_keys / sizeof text_keys[0]; i++)
    if (strcmp(key, text_keys[i]) == 0) return cJSON_CreateString(value);
  if (strcmp(value, "true") == 0 || strcmp(value, "false") == 0) return cJSON_CreateBool(value[0] == 't');
  char *end;
  double v = strtod(value, &end);
  if (*value && !*end && isfinite(v) && fabs(v) <= 9007199254740992.0) return cJSON_CreateNumber(v);
  return cJSON_CreateString(value);
}

static cJSON *kv_object(const result_kv *kv, int n) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; o && i < n; i++) cJSON_AddStringToObject(o, kv[i].key, kv[i].value);
  return o;
}

static cJSON *record_json(const result_record *r) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "measurement", r->measurement);
  cJSON_AddStringToObject(o, "group", r->group);
  cJSON_AddStringToObject(o, "metric", r->metric);
  cJSON_AddStringToObject(o, "unit", r->unit);
  cJSON_AddStringToObject(o, "better", better_names[r->better]);
  cJSON_AddItemToObject(o, "labels", kv_object(r->labels, r->nlabels));
  cJSON_AddItemToObject(o, "value", num(r->value));
  if (r->why && isnan(r->value)) cJSON_AddStringToObject(o, "why", r->why);
  if (r->has_stats) cJSON_AddItemToObject(o, "stats", result_stats_json(&r->stats));
  if (r->samples) {
    cJSON *s = cJSON_AddArrayToObject(o, "samples");
    for (int i = 0; s && i < r->nsamples; i++) cJSON_AddItemToArray(s, num(r->samples[i]));
  }
  return o;
}

ddp_result result_to_json(const result_doc *d, cJSON *doc) {
  cJSON_AddNumberToObject(doc, "schema_version", RESULT_SCHEMA_VERSION);
  cJSON_AddStringToObject(doc, "kind", d->kind ? d->kind : "run");
  if (d->source_kind) cJSON_AddStringToObject(doc, "source_kind", d->source_kind);
  cJSON_AddStringToObject(doc, "ddpbench_version", d->ddpbench_version ? d->ddpbench_version : "");
  cJSON_AddStringToObject(doc, "command_line", d->command_line ? d->command_line : "");
  cJSON_AddStringToObject(doc, "start_time", d->start_time ? d->start_time : "");
  if (d->end_time) {
    cJSON_AddStringToObject(doc, "end_time", d->end_time);
    cJSON_AddItemToObject(doc, "duration_s", num(d->duration_s));
  }
  if (d->verdict) {
    cJSON_AddStringToObject(doc, "verdict", d->verdict);
    cJSON_AddNumberToObject(doc, "exit_code", d->exit_code);
    cJSON_AddStringToObject(doc, "bottom_line", d->bottom_line ? d->bottom_line : "");
  }
  if (d->state) cJSON_AddStringToObject(doc, "state", d->state);
  if (d->nsuspects) {
    cJSON *sus = cJSON_AddArrayToObject(doc, "suspects");
    for (int i = 0; sus && i < d->nsuspects; i++) {
      cJSON *x = cJSON_CreateObject();
      if (!x) break;
      cJSON_AddNumberToObject(x, "rank", d->suspects[i].rank);
      cJSON_AddStringToObject(x, "host", d->suspects[i].host);
      cJSON_AddStringToObject(x, "where", d->suspects[i].where);
      cJSON_AddItemToArray(sus, x);
    }
  }
  if (d->run_id) cJSON_AddStringToObject(doc, "run_id", d->run_id);
  cJSON *lab = cJSON_AddObjectToObject(doc, "labels");
  for (int i = 0; lab && i < d->nlabels; i++) cJSON_AddStringToObject(lab, d->labels[i].key, d->labels[i].value);
  cJSON *cfg = cJSON_AddObjectToObject(doc, "config");
  for (int i = 0; cfg && i < d->nconfig; i++)
    cJSON_AddItemToObject(cfg, d->config[i].key, config_value(&d->config[i]));
  cJSON_AddStringToObject(doc, "device", d->device ? d->device : "");
  cJSON_AddStringToObject(doc, "comm", d->comm ? d->comm : "");
  cJSON_AddNumberToObject(doc, "world_size", d->world_size);
  cJSON_AddNumberToObject(doc, "nodes", d->nodes);
  cJSON *ranks = cJSON_AddArrayToObject(doc, "ranks");
  for (int i = 0; ranks && i < d->nranks; i++) {
    const result_rank *ri = &d->ranks[i];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "rank", ri->rank);
    cJSON_AddStringToObject(x, "host", ri->host ? ri->host : "");
    cJSON_AddNumberToObject(x, "node", ri->node);
    cJSON_AddNumberToObject(x, "local_rank", ri->local_rank);
    cJSON_AddNumberToObject(x, "pid", ri->pid);
    cJSON *dv = cJSON_AddObjectToObject(x, "device");
    cJSON_AddStringToObject(dv, "name", ri->device_name ? ri->device_name : "");
    cJSON_AddStringToObject(dv, "pci_bus_id", ri->pci_bus_id ? ri->pci_bus_id : "");
    cJSON_AddNumberToObject(dv, "ordinal", ri->ordinal);
    cJSON_AddNumberToObject(dv, "memory_bytes", ri->memory_bytes);
    cJSON_AddItemToObject(x, "versions", kv_object(ri->versions, ri->nversions));
    cJSON_AddItemToObject(x, "gemm_tflops", num(ri->gemm_tflops));
    if (ri->weights_checksum) cJSON_AddStringToObject(x, "weights_checksum", ri->weights_checksum);
    cJSON_AddItemToArray(ranks, x);
  }
  cJSON_AddItemToObject(doc, "environment", kv_object(d->environment, d->nenv));
  if (d->weights_identical >= 0) {
    cJSON_AddStringToObject(doc, "weights_checksum", d->weights_checksum ? d->weights_checksum : "");
    cJSON_AddBoolToObject(doc, "weights_identical", d->weights_identical);
  } else {
    cJSON_AddNullToObject(doc, "weights_checksum");
    cJSON_AddNullToObject(doc, "weights_identical");
  }
  cJSON *recs = cJSON_AddArrayToObject(doc, "records");
  for (int i = 0; recs && i < d->nrecords; i++) cJSON_AddItemToArray(recs, record_json(&d->records[i]));
  cJSON *f = findings_json(&d->findings);
  if (f) cJSON_AddItemToObject(doc, "findings", f);
  cJSON *fh = cJSON_AddArrayToObject(doc, "failed_hosts");
  for (int i = 0; fh && i < d->nfailed_hosts; i++) cJSON_AddItemToArray(fh, cJSON_CreateString(d->failed_hosts[i]));
  if (!ranks || !recs || !f || !cfg || !fh || !lab) return DDP_FAIL(DDP_ERR_JSON, "out of memory building the JSON document");
  return DDP_OK;
}

/* ---- reader ------------------------------------------------------------------------------------- */
/* Every check below fails with why = "<path>: <what is wrong>". */
typedef struct {
  char *why;
  size_t n;
} rd;

static ddp_result bad(rd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static ddp_result bad(rd *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, c->n, fmt, ap);
  va_end(ap);
  return DDP_ERR_USAGE;
}

#define RD_TRY(call)                    \
  do {                                  \
    ddp_result rr_ = (call);            \
    if (rr_ != DDP_OK) return rr_;      \
  } while (0)

static const cJSON *item(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

/* A number, parsed or built by result_json_number (a raw item, before it was printed). */
static int is_number(const cJSON *x, double *v) {
  if (cJSON_IsNumber(x)) {
    *v = x->valuedouble;
    return 1;
  }
  char *end;
  if (cJSON_IsRaw(x) && x->valuestring && (*v = strtod(x->valuestring, &end), *x->valuestring && !*end)) return 1;
  return 0;
}

static ddp_result rd_string(rd *c, const cJSON *o, const char *path, const char *key, int required, char **out) {
  const cJSON *x = item(o, key);
  if (!x || cJSON_IsNull(x)) {
    if (required) return bad(c, "%s%s: missing", path, key);
    *out = NULL;
    return DDP_OK;
  }
  if (!cJSON_IsString(x)) return bad(c, "%s%s: not a string", path, key);
  *out = strdup(x->valuestring);
  if (!*out) return bad(c, "out of host memory");
  return DDP_OK;
}

/* A number, or null (NaN) when nullable. */
static ddp_result rd_number(rd *c, const cJSON *o, const char *path, const char *key, int nullable, double *out) {
  const cJSON *x = item(o, key);
  if (!x) return bad(c, "%s%s: missing", path, key);
  if (cJSON_IsNull(x) && nullable) {
    *out = NAN;
    return DDP_OK;
  }
  if (!is_number(x, out)) return bad(c, "%s%s: not a number%s", path, key, nullable ? " or null" : "");
  return DDP_OK;
}

static ddp_result rd_int(rd *c, const cJSON *o, const char *path, const char *key, int lo, int hi, int *out) {
  double v;
  RD_TRY(rd_number(c, o, path, key, 0, &v));
  if (v != floor(v) || v < lo || v > hi) return bad(c, "%s%s: %g is not an integer in [%d, %d]", path, key, v, lo, hi);
  *out = (int)v;
  return DDP_OK;
}

static ddp_result rd_kv(rd *c, const cJSON *o, const char *path, int strings_only, result_kv **kv, int *n) {
  if (!cJSON_IsObject(o)) return bad(c, "%s: not an object", path);
  for (const cJSON *x = o->child; x; x = x->next) {
    char text[64];
    const char *v;
    if (cJSON_IsString(x))
      v = x->valuestring;
    else if (strings_only)
      return bad(c, "%s.%s: not a string", path, x->string);
    else if (cJSON_IsBool(x))
      v = cJSON_IsTrue(x) ? "true" : "false";
    else if (cJSON_IsNumber(x)) { /* the shortest text that reads back as the same double, as cJSON prints */
      snprintf(text, sizeof text, "%.15g", x->valuedouble);
      if (strtod(text, NULL) != x->valuedouble) snprintf(text, sizeof text, "%.17g", x->valuedouble);
      v = text;
    } else
      return bad(c, "%s.%s: not a string, number or boolean", path, x->string);
    if (result_kv_push(kv, n, x->string, v) != DDP_OK) return bad(c, "out of host memory");
    (*kv)[*n - 1].text = cJSON_IsString(x);
  }
  return DDP_OK;
}

static ddp_result rd_stats(rd *c, const cJSON *o, const char *where, ddp_stats *st) {
  if (!cJSON_IsObject(o)) return bad(c, "%s: %s", where, o ? "not an object" : "missing");
  char path[200];
  snprintf(path, sizeof path, "%s.", where);
  RD_TRY(rd_number(c, o, path, "median", 1, &st->median));
  RD_TRY(rd_number(c, o, path, "p10", 1, &st->p10));
  RD_TRY(rd_number(c, o, path, "p90", 1, &st->p90));
  RD_TRY(rd_number(c, o, path, "min", 1, &st->min));
  RD_TRY(rd_number(c, o, path, "max", 1, &st->max));
  RD_TRY(rd_number(c, o, path, "mean", 1, &st->mean));
  RD_TRY(rd_int(c, o, path, "n", 0, 1 << 30, &st->n));
  if (st->n > 0 && !(st->min <= st->p10 && st->p10 <= st->median && st->median <= st->p90 && st->p90 <= st->max))
    return bad(c, "%s: not ordered (min <= p10 <= median <= p90 <= max)", where);
  return DDP_OK;
}

static ddp_result rd_doubles(rd *c, const cJSON *a, const char *path, double **out, int *n) {
  if (!cJSON_IsArray(a)) return bad(c, "%s: not an array", path);
  int m = cJSON_GetArraySize(a), i = 0;
  *out = malloc((size_t)(m ? m : 1) * sizeof(double));
  if (!*out) return bad(c, "out of host memory");
  *n = m;
  for (const cJSON *x = a->child; x; x = x->next, i++) {
    if (cJSON_IsNull(x))
      (*out)[i] = NAN;
    else if (!is_number(x, &(*out)[i]))
      return bad(c, "%s[%d]: not a number or null", path, i);
  }
  return DDP_OK;
}

static ddp_result rd_record(rd *c, const cJSON *o, int i, result_doc *d) {
  char path[64];
  snprintf(path, sizeof path, "records[%d].", i);
  if (!cJSON_IsObject(o)) return bad(c, "records[%d]: not an object", i);
  result_record r;
  memset(&r, 0, sizeof r);
  char *better = NULL;
  ddp_result res = DDP_OK;
  if ((res = rd_string(c, o, path, "measurement", 1, &r.measurement)) != DDP_OK ||
      (res = rd_string(c, o, path, "group", 1, &r.group)) != DDP_OK ||
      (res = rd_string(c, o, path, "metric", 1, &r.metric)) != DDP_OK ||
      (res = rd_string(c, o, path, "unit", 1, &r.unit)) != DDP_OK ||
      (res = rd_string(c, o, path, "better", 1, &better)) != DDP_OK ||
      (res = rd_number(c, o, path, "value", 1, &r.value)) != DDP_OK ||
      (res = rd_string(c, o, path, "why", 0, &r.why)) != DDP_OK)
    goto done;
  int b = -1;
  for (int k = 0; k < 3; k++)
    if (strcmp(better, better_names[k]) == 0) b = k;
  if (b < 0) {
    res = bad(c, "%sbetter: \"%s\" is not lower, higher or none", path, better);
    goto done;
  }
  r.better = (result_better)b;
  char sub[80];
  snprintf(sub, sizeof sub, "%slabels", path);
  if ((res = rd_kv(c, item(o, "labels"), sub, 1, &r.labels, &r.nlabels)) != DDP_OK) goto done;
  if (item(o, "stats")) {
    snprintf(sub, sizeof sub, "%sstats", path);
    if ((res = rd_stats(c, item(o, "stats"), sub, &r.stats)) != DDP_OK) goto done;
    r.has_stats = 1;
  }
  if (item(o, "samples")) {
    snprintf(sub, sizeof sub, "%ssamples", path);
    if ((res = rd_doubles(c, item(o, "samples"), sub, &r.samples, &r.nsamples)) != DDP_OK) goto done;
  }
  res = result_add_record(d, &r) == DDP_OK ? DDP_OK : bad(c, "out of host memory");
done:
  free(better);
  record_free(&r);
  return res;
}

static ddp_result rd_rank(rd *c, const cJSON *o, int i, int world, result_rank *ri) {
  char path[48];
  snprintf(path, sizeof path, "ranks[%d].", i);
  if (!cJSON_IsObject(o)) return bad(c, "ranks[%d]: not an object", i);
  RD_TRY(rd_int(c, o, path, "rank", 0, world - 1, &ri->rank));
  RD_TRY(rd_string(c, o, path, "host", 1, &ri->host));
  RD_TRY(rd_int(c, o, path, "node", 0, world - 1, &ri->node));
  RD_TRY(rd_int(c, o, path, "local_rank", 0, world - 1, &ri->local_rank));
  RD_TRY(rd_int(c, o, path, "pid", 0, 1 << 30, &ri->pid));
  const cJSON *dv = item(o, "device");
  char sub[64];
  snprintf(sub, sizeof sub, "%sdevice.", path);
  if (!cJSON_IsObject(dv)) return bad(c, "%sdevice: %s", path, dv ? "not an object" : "missing");
  RD_TRY(rd_string(c, dv, sub, "name", 1, &ri->device_name));
  RD_TRY(rd_string(c, dv, sub, "pci_bus_id", 1, &ri->pci_bus_id));
  RD_TRY(rd_int(c, dv, sub, "ordinal", -1, 1 << 20, &ri->ordinal));
  RD_TRY(rd_number(c, dv, sub, "memory_bytes", 0, &ri->memory_bytes));
  snprintf(sub, sizeof sub, "%sversions", path);
  RD_TRY(rd_kv(c, item(o, "versions"), sub, 1, &ri->versions, &ri->nversions));
  RD_TRY(rd_number(c, o, path, "gemm_tflops", 1, &ri->gemm_tflops));
  RD_TRY(rd_string(c, o, path, "weights_checksum", 0, &ri->weights_checksum));
  return DDP_OK;
}

/* ---- version 1: records and findings from the "phases" section ---------------------------------- */
static const char *label_int(char *buf, size_t n, double v) {
  snprintf(buf, n, "%.0f", v);
  return buf;
}

static ddp_result add_or_bad(rd *c, ddp_result r) { return r == DDP_OK ? DDP_OK : bad(c, "out of host memory"); }

/* One phase section (schema version 1 layout; version 2 keeps writing it) into records. */
static ddp_result v1_phase(rd *c, const char *phase, const char *group, const cJSON *p, result_doc *d) {
  char path[64];
  snprintf(path, sizeof path, "phases.%s.", phase);
  if (!cJSON_IsObject(p)) return bad(c, "phases.%s: not an object", phase);
  ddp_stats st;
  char sub[192];
  snprintf(sub, sizeof sub, "%sstep_ms", path);
  RD_TRY(rd_stats(c, item(p, "step_ms"), sub, &st));
  RD_TRY(add_or_bad(c, result_add(d, phase, group, "step_ms", "ms", BETTER_LOWER, st.median, &st, NULL, 0, NULL)));
  static const struct {
    const char *key, *unit;
  } figs[] = {{"samples_per_s", "1/s"}, {"tflops_per_rank", "TFLOP/s"}, {"mfu_measured_peak", ""},
              {"mfu_table_peak", ""},   {"algbw_gbs", "GB/s"},          {"busbw_gbs", "GB/s"}};
  const cJSON *whys = item(p, "why"); /* {"figure": "why it is null"} */
  if (whys && !cJSON_IsObject(whys)) return bad(c, "%swhy: not an object", path);
  for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++) {
    if (!item(p, figs[k].key)) continue;
    double v;
    RD_TRY(rd_number(c, p, path, figs[k].key, 1, &v));
    RD_TRY(add_or_bad(c, result_add(d, phase, group, figs[k].key, figs[k].unit, BETTER_HIGHER, v, NULL, NULL, 0, NULL)));
    const cJSON *w = item(whys, figs[k].key);
    if (w && !cJSON_IsString(w)) return bad(c, "%swhy.%s: not a string", path, figs[k].key);
    RD_TRY(add_or_bad(c, result_set_why(d, w ? w->valuestring : NULL)));
  }
  const cJSON *per = item(p, "per_rank");
  if (per && !cJSON_IsArray(per)) return bad(c, "%sper_rank: not an array", path);
  int i = 0;
  for (const cJSON *x = per ? per->child : NULL; x; x = x->next, i++) {
    char rp[128], rk[16];
    snprintf(rp, sizeof rp, "%sper_rank[%d].", path, i);
    int rank;
    RD_TRY(rd_int(c, x, rp, "rank", 0, d->world_size > 0 ? d->world_size - 1 : 1 << 24, &rank));
    /* Labels name the world rank and its host; in a group's document ranks[] maps group to world ranks. */
    const char *host = rank < d->nranks && d->ranks[rank].host ? d->ranks[rank].host : "";
    label_int(rk, sizeof rk, rank < d->nranks ? d->ranks[rank].rank : rank);
    snprintf(sub, sizeof sub, "%sstep_ms", rp);
    RD_TRY(rd_stats(c, item(x, "step_ms"), sub, &st));
    double *samples = NULL;
    int ns = 0;
    if (item(x, "step_ms_samples")) {
      snprintf(sub, sizeof sub, "%sstep_ms_samples", rp);
      ddp_result r = rd_doubles(c, item(x, "step_ms_samples"), sub, &samples, &ns);
      if (r != DDP_OK) {
        free(samples);
        return r;
      }
    }
    ddp_result r = result_add(d, phase, group, "step_ms", "ms", BETTER_LOWER, st.median, &st, samples, ns, "rank",
                              rk, "host", host, NULL);
    free(samples);
    RD_TRY(add_or_bad(c, r));
    if (item(x, "compute_ms")) {
      snprintf(sub, sizeof sub, "%scompute_ms", rp);
      RD_TRY(rd_stats(c, item(x, "compute_ms"), sub, &st));
      RD_TRY(add_or_bad(c, result_add(d, phase, group, "compute_ms", "ms", BETTER_LOWER, st.median, &st, NULL, 0,
                                      "rank", rk, "host", host, NULL)));
    }
  }
  static const char *const row_arrays[] = {"allreduce", "collectives"}; /* ddp's buckets; fsdp's kinds */
  for (int a = 0; a < 2; a++) {
  const char *an = row_arrays[a];
  const cJSON *rows = item(p, an);
  if (rows && !cJSON_IsArray(rows)) return bad(c, "%s%s: not an array", path, an);
  i = 0;
  for (const cJSON *x = rows ? rows->child : NULL; x; x = x->next, i++) {
    char rp[128], bytes[32], m_time[64], m_alg[64], m_bus[64];
    snprintf(rp, sizeof rp, "%s%s[%d].", path, an, i);
    double b, t, alg, bus;
    char *type = NULL, *kind = NULL;
    if (a == 1) {
      RD_TRY(rd_string(c, x, rp, "kind", 1, &kind));
      int known = kind && (!strcmp(kind, "all_gather") || !strcmp(kind, "reduce_scatter") || !strcmp(kind, "all_reduce"));
      if (!known) {
        ddp_result rk = bad(c, "%skind: '%s' is not all_gather, reduce_scatter or all_reduce", rp, kind ? kind : "");
        free(kind);
        return rk;
      }
    }
    snprintf(m_time, sizeof m_time, "%s_time_us", kind ? kind : "allreduce");
    snprintf(m_alg, sizeof m_alg, "%s_algbw_gbs", kind ? kind : "allreduce");
    snprintf(m_bus, sizeof m_bus, "%s_busbw_gbs", kind ? kind : "allreduce");
    free(kind);
    RD_TRY(rd_number(c, x, rp, "bytes", 0, &b));
    if (b < 0 || b != floor(b)) return bad(c, "%sbytes: %g is not a byte count", rp, b);
    RD_TRY(rd_number(c, x, rp, "time_us", 1, &t));
    RD_TRY(rd_number(c, x, rp, "algbw_gbs", 1, &alg));
    RD_TRY(rd_number(c, x, rp, "busbw_gbs", 1, &bus));
    RD_TRY(rd_string(c, x, rp, "type", 1, &type));
    char *why = NULL; /* why algbw and busbw are null (and time_us, when it is null too: above the bound) */
    ddp_result r = rd_string(c, x, rp, "why", 0, &why);
    if (r != DDP_OK) {
      free(type);
      return r;
    }
    label_int(bytes, sizeof bytes, b);
    r = result_add(d, phase, group, m_time, "us", BETTER_LOWER, t, NULL, NULL, 0, "bytes", bytes, "type", type, NULL);
    if (r == DDP_OK && isnan(t) && why) r = result_set_why(d, why);
    if (r == DDP_OK)
      r = result_add(d, phase, group, m_alg, "GB/s", BETTER_HIGHER, alg, NULL, NULL, 0, "bytes", bytes, "type", type,
                     NULL);
    if (r == DDP_OK) r = result_set_why(d, why);
    if (r == DDP_OK)
      r = result_add(d, phase, group, m_bus, "GB/s", BETTER_HIGHER, bus, NULL, NULL, 0, "bytes", bytes, "type", type,
                     NULL);
    if (r == DDP_OK) r = result_set_why(d, why);
    free(type);
    free(why);
    RD_TRY(add_or_bad(c, r));
  }
  }
  static const char *series[] = {"loss", "loss_scale"};
  for (int k = 0; k < 2; k++) {
    if (!item(p, series[k])) continue;
    double *v = NULL;
    int n = 0;
    snprintf(sub, sizeof sub, "%s%s", path, series[k]);
    ddp_result r = rd_doubles(c, item(p, series[k]), sub, &v, &n);
    if (r == DDP_OK && n > 0)
      r = add_or_bad(c, result_add(d, phase, group, series[k], "", BETTER_NONE, v[n - 1], NULL, v, n, NULL));
    free(v);
    RD_TRY(r);
  }
  if (item(p, "skipped_steps")) {
    const cJSON *sk = item(p, "skipped_steps");
    if (!cJSON_IsArray(sk)) return bad(c, "%sskipped_steps: not an array", path);
    RD_TRY(add_or_bad(c, result_add(d, phase, group, "skipped_steps", "", BETTER_LOWER, cJSON_GetArraySize(sk), NULL,
                                    NULL, 0, NULL)));
  }
  return DDP_OK;
}

/* Records from the run-wide figures and the "phases" section. Used for version 1 files, and by the writer
 * (report.c) so that the two can never disagree on what a phase section means. */
static ddp_result v1_records(rd *c, const cJSON *doc, const char *group, result_doc *d) {
  const cJSON *ph = item(doc, "phases");
  if (!cJSON_IsObject(ph)) return bad(c, "phases: %s", ph ? "not an object" : "missing");
  for (const cJSON *p = ph->child; p; p = p->next) RD_TRY(v1_phase(c, p->string, group, p, d));
  for (int i = 0; i < d->nranks; i++) {
    char rk[16];
    label_int(rk, sizeof rk, d->ranks[i].rank);
    RD_TRY(add_or_bad(c, result_add(d, "gemm", group, "gemm_tflops", "TFLOP/s", BETTER_HIGHER, d->ranks[i].gemm_tflops,
                                    NULL, NULL, 0, "rank", rk, "host", d->ranks[i].host, NULL)));
  }
  static const struct {
    const char *key, *measurement, *unit;
    result_better better;
  } job[] = {{"measured_peak_tflops", "gemm", "TFLOP/s", BETTER_HIGHER},
             {"scaling_efficiency", "job", "", BETTER_HIGHER},
             {"scaling_efficiency_noise", "job", "", BETTER_NONE},
             {"exposed_comm_ms", "job", "ms", BETTER_LOWER},
             {"hidden_comm_fraction", "job", "", BETTER_HIGHER}};
  const cJSON *whys = item(doc, "figures_why"); /* {"scaling_efficiency": "why it is null"} */
  if (whys && !cJSON_IsObject(whys)) return bad(c, "figures_why: not an object");
  for (size_t k = 0; k < sizeof job / sizeof job[0]; k++) {
    if (!item(doc, job[k].key)) continue;
    double v;
    RD_TRY(rd_number(c, doc, "", job[k].key, 1, &v));
    RD_TRY(add_or_bad(c, result_add(d, job[k].measurement, group, job[k].key, job[k].unit, job[k].better, v, NULL, NULL,
                                    0, NULL)));
    const cJSON *w = item(whys, job[k].key);
    if (w && !cJSON_IsString(w)) return bad(c, "figures_why.%s: not a string", job[k].key);
    RD_TRY(add_or_bad(c, result_set_why(d, w ? w->valuestring : NULL)));
  }
  return DDP_OK;
}

/* Version 1 verdicts as findings: the weights, and the topology report's {kind, text} lines. */
static ddp_result v1_findings(rd *c, const result_doc *dd, const cJSON *doc, finding_list *f) {
  if (dd->weights_identical == 0 &&
      findings_add(f, "weights", SEV_FAIL, SCOPE_JOB, "job", NAN, NAN, "", "final weights differ between ranks") != DDP_OK)
    return bad(c, "out of host memory");
  const cJSON *tf = item(item(doc, "topology"), "findings");
  for (const cJSON *x = cJSON_IsArray(tf) ? tf->child : NULL; x; x = x->next) {
    const cJSON *kind = item(x, "kind"), *text = item(x, "text");
    if (!cJSON_IsString(kind) || !cJSON_IsString(text)) return bad(c, "topology.findings: entries need kind and text");
    int info = strcmp(kind->valuestring, "note") == 0 || strcmp(kind->valuestring, "undecided") == 0;
    if (findings_add(f, "topology", info ? SEV_INFO : SEV_WARN, SCOPE_HOST, kind->valuestring, NAN, NAN, "", "%s",
                     text->valuestring) != DDP_OK)
      return bad(c, "out of host memory");
  }
  return DDP_OK;
}

static const char *const KINDS[] = {"run", "accept", "collectives", "doctor", "export"};

int result_verdict_known(const char *v) {
  return v && (!strcmp(v, "PASS") || !strcmp(v, "WARN") || !strcmp(v, "FAIL") || !strcmp(v, "ERROR") ||
               !strcmp(v, "INCOMPLETE"));
}

int result_kind_known(const char *kind) {
  for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
    if (!strcmp(kind, KINDS[i])) return 1;
  return 0;
}

/* Version 2 files said what made them only through their content: a collectives sweep recorded
 * config.subcommand, an acceptance run its "accept" records; the rest were runs. */
const char *result_kind_infer(const result_doc *d, const cJSON *doc) {
  const cJSON *sub = item(item(doc, "config"), "subcommand");
  if (cJSON_IsString(sub) && !strcmp(sub->valuestring, "collectives")) return "collectives";
  for (int i = 0; i < d->nrecords; i++)
    if (!strcmp(d->records[i].measurement, "accept")) return "accept";
  return "run";
}

ddp_result result_from_json(const cJSON *doc, result_doc *d, char *why, size_t whylen) {
  rd c = {why, whylen};
  if (!cJSON_IsObject(doc)) return bad(&c, "not a JSON object, so not a ddpbench result");
  const cJSON *sv = item(doc, "schema_version"), *ver = item(doc, "ddpbench_version");
  if (!sv || !cJSON_IsString(ver)) return bad(&c, "no schema_version or ddpbench_version: not a ddpbench result");
  if (!cJSON_IsNumber(sv) || sv->valuedouble != floor(sv->valuedouble))
    return bad(&c, "schema_version: not an integer");
  if (sv->valuedouble < 1 || sv->valuedouble > RESULT_SCHEMA_VERSION)
    return bad(&c, "schema_version %g is not one this ddpbench reads (1 to %d): a newer ddpbench wrote it?",
               sv->valuedouble, RESULT_SCHEMA_VERSION);
  d->schema_version = (int)sv->valuedouble;
  RD_TRY(rd_string(&c, doc, "", "kind", d->schema_version >= 3, &d->kind));
  RD_TRY(rd_string(&c, doc, "", "source_kind", 0, &d->source_kind));
  if (d->kind && !result_kind_known(d->kind)) return bad(&c, "kind: \"%s\" is not a kind of ddpbench result", d->kind);
  RD_TRY(rd_string(&c, doc, "", "ddpbench_version", 1, &d->ddpbench_version));
  RD_TRY(rd_string(&c, doc, "", "command_line", 1, &d->command_line));
  RD_TRY(rd_string(&c, doc, "", "start_time", 1, &d->start_time));
  RD_TRY(rd_string(&c, doc, "", "end_time", 0, &d->end_time));
  RD_TRY(rd_string(&c, doc, "", "verdict", 0, &d->verdict));
  if (d->verdict && !result_verdict_known(d->verdict))
    return bad(&c, "verdict: \"%s\" is not PASS, WARN, FAIL, ERROR or INCOMPLETE", d->verdict);
  RD_TRY(rd_string(&c, doc, "", "bottom_line", 0, &d->bottom_line));
  RD_TRY(rd_string(&c, doc, "", "run_id", 0, &d->run_id));
  RD_TRY(rd_string(&c, doc, "", "state", 0, &d->state));
  if (d->state && !result_state_known(d->state))
    return bad(&c, "state: \"%s\" is not running, interrupted or complete", d->state);
  const cJSON *sus = item(doc, "suspects");
  if (sus && !cJSON_IsArray(sus)) return bad(&c, "suspects: not an array");
  for (const cJSON *x = sus ? sus->child : NULL; x; x = x->next) {
    int rank = 0;
    char *host = NULL, *where = NULL;
    RD_TRY(rd_int(&c, x, "suspects[].", "rank", 0, 1 << 24, &rank));
    RD_TRY(rd_string(&c, x, "suspects[].", "host", 1, &host));
    ddp_result e = rd_string(&c, x, "suspects[].", "where", 1, &where);
    if (e == DDP_OK) e = result_suspect_add(d, rank, host, where) == DDP_OK ? DDP_OK : bad(&c, "out of host memory");
    free(host), free(where);
    RD_TRY(e);
  }
  if (item(doc, "exit_code")) RD_TRY(rd_int(&c, doc, "", "exit_code", 0, 255, &d->exit_code));
  if (item(doc, "duration_s")) RD_TRY(rd_number(&c, doc, "", "duration_s", 1, &d->duration_s));
  if (item(doc, "labels")) {
    RD_TRY(rd_kv(&c, item(doc, "labels"), "labels", 1, &d->labels, &d->nlabels));
  }
  RD_TRY(rd_string(&c, doc, "", "device", 1, &d->device));
  RD_TRY(rd_string(&c, doc, "", "comm", 1, &d->comm));
  RD_TRY(rd_int(&c, doc, "", "world_size", 1, 1 << 24, &d->world_size));
  RD_TRY(rd_int(&c, doc, "", "nodes", 1, d->world_size, &d->nodes));
  RD_TRY(rd_kv(&c, item(doc, "config"), "config", 0, &d->config, &d->nconfig));
  { /* a file from elsewhere (an older version, an edited one) is held to the same rule as the writer */
    result_kv *env = NULL;
    int nenv = 0;
    ddp_result e = rd_kv(&c, item(doc, "environment"), "environment", 1, &env, &nenv);
    for (int i = 0; e == DDP_OK && i < nenv; i++) e = env_keep(d, env[i].key, env[i].value);
    kv_free(env, nenv);
    RD_TRY(e);
  }
  const cJSON *ranks = item(doc, "ranks");
  if (!cJSON_IsArray(ranks)) return bad(&c, "ranks: %s", ranks ? "not an array" : "missing");
  if (cJSON_GetArraySize(ranks) != d->world_size)
    return bad(&c, "ranks: %d entries for world_size %d", cJSON_GetArraySize(ranks), d->world_size);
  d->ranks = calloc((size_t)d->world_size, sizeof *d->ranks);
  if (!d->ranks) return bad(&c, "out of host memory");
  d->nranks = d->world_size;
  int i = 0;
  for (const cJSON *x = ranks->child; x; x = x->next, i++) {
    RD_TRY(rd_rank(&c, x, i, d->world_size, &d->ranks[i]));
    if (d->ranks[i].rank != i) return bad(&c, "ranks[%d].rank: %d (ranks are listed in order)", i, d->ranks[i].rank);
  }
  const cJSON *wi = item(doc, "weights_identical");
  if (cJSON_IsBool(wi))
    d->weights_identical = cJSON_IsTrue(wi);
  else if (wi && !cJSON_IsNull(wi))
    return bad(&c, "weights_identical: not a boolean or null");
  RD_TRY(rd_string(&c, doc, "", "weights_checksum", 0, &d->weights_checksum));

  if (d->schema_version == 1) {
    RD_TRY(v1_records(&c, doc, "world", d));
    RD_TRY(v1_findings(&c, d, doc, &d->findings));
    d->kind = strdup("run");
    return d->kind ? DDP_OK : bad(&c, "out of host memory");
  }
  const cJSON *recs = item(doc, "records");
  if (!cJSON_IsArray(recs)) return bad(&c, "records: %s", recs ? "not an array" : "missing");
  i = 0;
  for (const cJSON *x = recs->child; x; x = x->next, i++) RD_TRY(rd_record(&c, x, i, d));
  const cJSON *fh = item(doc, "failed_hosts");
  if (fh && !cJSON_IsArray(fh)) return bad(&c, "failed_hosts: not an array");
  i = 0;
  for (const cJSON *x = fh ? fh->child : NULL; x; x = x->next, i++) {
    if (!cJSON_IsString(x)) return bad(&c, "failed_hosts[%d]: not a string", i);
    if (result_failed_host_add(d, x->valuestring) != DDP_OK) return bad(&c, "out of host memory");
  }
  const cJSON *f = item(doc, "findings");
  if (!f) return bad(&c, "findings: missing");
  RD_TRY(findings_from_json(f, &d->findings, why, whylen));
  if (!d->kind) d->kind = strdup(result_kind_infer(d, doc));
  return d->kind ? DDP_OK : bad(&c, "out of host memory");
}

cJSON *result_records_json(const result_doc *d) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < d->nrecords; i++) cJSON_AddItemToArray(a, record_json(&d->records[i]));
  return a;
}

ddp_result result_records_read(const cJSON *arr, result_doc *d, char *why, size_t whylen) {
  rd c = {why, whylen};
  if (!cJSON_IsArray(arr)) return bad(&c, "records: not an array");
  int i = 0;
  for (const cJSON *x = arr->child; x; x = x->next, i++) RD_TRY(rd_record(&c, x, i, d));
  return DDP_OK;
}

ddp_result result_records_from_phases(const cJSON *doc, const char *group, result_doc *d, char *why, size_t whylen) {
  rd c = {why, whylen};
  return v1_records(&c, doc, group, d);
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The first key that an object of the tree holds twice (NULL if none; *oom when out of memory). JSON readers
 * disagree on which one wins (cJSON the first, Python the last), so such a file means two things. */
static const char *duplicate_key(const cJSON *o, int *oom) {
  for (const cJSON *c = o ? o->child : NULL; c && !*oom; c = c->next) {
    const char *k = duplicate_key(c, oom);
    if (k) return k;
  }
  if (!cJSON_IsObject(o) || *oom) return NULL;
  int n = 0;
  for (const cJSON *c = o->child; c; c = c->next) n++;
  if (n < 2) return NULL;
  const char **names = malloc((size_t)n * sizeof *names);
  if (!names) {
    *oom = 1;
    return NULL;
  }
  int k = 0;
  for (const cJSON *c = o->child; c; c = c->next) names[k++] = c->string ? c->string : "";
  qsort(names, (size_t)n, sizeof *names, name_cmp);
  const char *dup = NULL;
  for (int i = 1; i < n && !dup; i++)
    if (!strcmp(names[i], names[i - 1])) dup = names[i];
  free(names);
  return dup;
}

ddp_result result_load(const char *path, result_doc *d) {
  result_init(d);
  char why[300] = "";
  size_t n = 0;
  char *buf = input_file_read(path, INPUT_MAX_RESULT, &n, why, sizeof why);
  if (!buf) {
    return ddp_usage_error("%s: %s", path, why);
  }
  const char *end = NULL;
  cJSON *doc = n ? cJSON_ParseWithLengthOpts(buf, n, &end, 0) : NULL;
  if (!doc) {
    size_t at = end ? (size_t)(end - buf) : 0, last = n;
    while (last > 0 && (buf[last - 1] == ' ' || buf[last - 1] == '\n' || buf[last - 1] == '\r' || buf[last - 1] == '\t'))
      last--;
    if (n == 0)
      snprintf(why, sizeof why, "empty file: not a ddpbench result");
    else if (at >= last)
      snprintf(why, sizeof why, "truncated: the JSON ends after %zu bytes before the document is complete", n);
    else
      snprintf(why, sizeof why, "not JSON (syntax error near byte %zu), so not a ddpbench result", at);
    free(buf);
    return ddp_usage_error("%s: %s", path, why);
  }
  /* Strict where readers disagree: nothing but white space after the document (two
   * documents, or garbage), and no key twice in one object. */
  size_t at = (size_t)(end - buf);
  while (at < n && (buf[at] == ' ' || buf[at] == '\n' || buf[at] == '\r' || buf[at] == '\t')) at++;
  int oom = 0;
  const char *dup = at < n ? NULL : duplicate_key(doc, &oom);
  if (at < n)
    snprintf(why, sizeof why, "more after the JSON document, at byte %zu (a second document, or garbage)", at);
  else if (oom)
    snprintf(why, sizeof why, "out of host memory");
  else if (dup)
    snprintf(why, sizeof why, "the key \"%.60s\" appears twice in one object: JSON readers disagree on which one "
             "counts", dup);
  free(buf);
  if (at < n || oom || dup) {
    cJSON_Delete(doc);
    return ddp_usage_error("%s: %s", path, why);
  }
  ddp_result r = result_from_json(doc, d, why, sizeof why);
  if (r == DDP_OK) d->nccl = cJSON_DetachItemFromObjectCaseSensitive(doc, "nccl");
  if (r == DDP_OK) d->soak = cJSON_DetachItemFromObjectCaseSensitive(doc, "soak");
  cJSON_Delete(doc);
  if (r != DDP_OK) {
    result_free(d);
    return ddp_usage_error("%s: %s", path, why[0] ? why : "cannot be read");
  }
  return DDP_OK;
}
