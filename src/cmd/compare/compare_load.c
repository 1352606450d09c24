/* compare_load.c: result files -> the runs of each side -> provenance diff and one line per metric, for
 * compare.c. Reads result files through the project's one reader (result_load in result.h); the one exception,
 * a run's top-level "labels", is read here only while the reader does not keep them (before schema version 4),
 * and its "nccl" section (NCCL's account, for compare_nccl_diff.c), which the reader's model does not hold.
 * Never writes a file.
 *
 * A metric is a record whose direction is known (better lower or higher), named
 *   "<measurement>[@<group>] <metric>[ <label>=<value> ...]"     e.g. "comm allreduce_busbw_gbs bytes=4194304 type=fp32"
 * Records of one rank (label "rank") become per-host metrics when the runs span more than one host: the
 * host's worst rank by the metric's direction ("... host=<name>"); on one host the job-wide record says it.
 * Each run gives one value per metric. With --pool-steps the job-wide step_ms metrics use every step
 * instead: the per-step maximum over ranks, as the run's own summary defines the step time.
 *
 * Provenance of a run: "ddpbench_version", "job.*" (device, comm, world_size, nodes), "versions.*" (every rank's
 * library versions; distinct values joined), "env.*" (the recorded NCCL_*, CUDA_*, UCX_* and transport
 * variables; Slurm's job and step ids left out), "config.*" (every key but output paths), "hosts", "gpus".
 * A run's "labels" (--label key=value) are names given by people, not provenance: an A/A whose sides are
 * labelled side=A and side=B is still an A/A. The labels every run of a side shares, where some of them are not
 * the other side's, name the sides ("nccl=2.21.5" against "nccl=2.23.4").
 *
 * The compact view (compare's default text) keeps one row per collective and size: the out-of-place busbw
 * ("allreduce 32 KiB busbw"; the labels that vary between rows are named, the others said once); the other
 * collectives figures are details that --wide shows. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "common.h"
#include "compare.h"
#include "input_file.h"
#include "result.h"
#include "side.h"

/* ---- config keys ------------------------------------------------------------------------------------- */
/* Keys that define the model and its numerics: sides that differ in one are refused without
 * --allow-config-diff. Keys that only say where output goes are not provenance at all. Every other key
 * (bucket sizes, comm, CUDA graphs, steps, ...) is printed in the diff, since comparing them is legitimate. */
static const char *model_keys[] = {"strategy", "hidden", "layers", "batch", "precision", "seed", "lr", "momentum",
                                   "loss_scale_init", "loss_scale_growth_factor", "loss_scale_backoff",
                                   "loss_scale_growth_interval", "inject_nonfinite"};
/* The job's size: a different world size or node count changes every step time and bandwidth, which is no
 * regression of the stack. Refused as a model difference is. */
static const char *size_keys[] = {"job.world_size", "job.nodes"};
static const char *output_keys[] = {"json", "topo_xml", "force", "quiet", "progress", "label", "config_file"};

static int in_list(const char *k, const char **list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(k, list[i]) == 0) return 1;
  return 0;
}
#define IN_LIST(k, list) in_list((k), (list), sizeof(list) / sizeof *(list))

/* ---- small growable string lists --------------------------------------------------------------------- */
typedef struct {
  char **v;
  int n;
} strlist;

static int strlist_push(strlist *l, const char *s) {
  char **g = realloc(l->v, (size_t)(l->n + 1) * sizeof *g);
  if (!g) return -1;
  l->v = g;
  if (!(l->v[l->n] = strdup(s))) return -1;
  l->n++;
  return 0;
}

static void strlist_free(strlist *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  l->v = NULL, l->n = 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ---- sides ------------------------------------------------------------------------------------------- */
typedef struct {
  strlist files;
  result_doc *docs;
  int n;
} side;

/* A path is a result file, or a directory whose *.json files (in name order) are the runs. */
static int side_expand(side *s, char **paths, int n, const char *name) {
  for (int i = 0; i < n; i++) {
    struct stat st;
    if (stat(paths[i], &st) != 0) return ddp_usage_error("compare: %s: cannot open: %s", paths[i], ddp_strerror_errno()), 2;
    if (!S_ISDIR(st.st_mode)) {
      if (strlist_push(&s->files, paths[i])) return ddp_usage_error("compare: out of memory"), 2;
      continue;
    }
    DIR *d = opendir(paths[i]);
    if (!d) return ddp_usage_error("compare: %s: cannot list: %s", paths[i], ddp_strerror_errno()), 2;
    strlist found = {0};
    for (struct dirent *e; (e = readdir(d));) {
      size_t len = strlen(e->d_name);
      if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0 && e->d_name[0] != '.') {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", paths[i], e->d_name);
        if (strlist_push(&found, p)) break;
      }
    }
    closedir(d);
    if (found.n > 1) qsort(found.v, (size_t)found.n, sizeof *found.v, cmp_str); /* qsort(NULL, 0) is UB */
    if (found.n == 0) {
      strlist_free(&found);
      return ddp_usage_error("compare: side %s: %s holds no .json result files", name, paths[i]), 2;
    }
    for (int k = 0; k < found.n; k++)
      if (strlist_push(&s->files, found.v[k])) return ddp_usage_error("compare: out of memory"), 2;
    strlist_free(&found);
  }
  if (s->files.n == 0) return ddp_usage_error("compare: side %s is empty", name), 2;
  s->docs = calloc((size_t)s->files.n, sizeof *s->docs);
  if (!s->docs) return ddp_usage_error("compare: out of memory"), 2;
  for (int i = 0; i < s->files.n; i++, s->n++)
    if (result_load(s->files.v[i], &s->docs[i]) != DDP_OK) return 2; /* it printed the file and the reason */
  return 0;
}

static void side_free(side *s) {
  for (int i = 0; i < s->n; i++) result_free(&s->docs[i]);
  free(s->docs);
  strlist_free(&s->files);
}

static char *side_label(char **paths, int n) {
  char buf[1024] = "";
  size_t used = 0;
  for (int i = 0; i < n && used < sizeof buf - 1; i++)
    used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", i ? " " : "", paths[i]);
  if (used >= sizeof buf - 1) strcpy(buf + sizeof buf - 5, "...");
  return strdup(buf);
}

/* ---- provenance -------------------------------------------------------------------------------------- */
typedef struct {
  char *key, *value;
} kv;

typedef struct {
  kv *v;
  int n;
} kvlist;

static int kv_put(kvlist *l, const char *key, const char *value) {
  kv *g = realloc(l->v, (size_t)(l->n + 1) * sizeof *g);
  if (!g) return -1;
  l->v = g;
  l->v[l->n].key = strdup(key), l->v[l->n].value = strdup(value);
  if (!l->v[l->n].key || !l->v[l->n].value) return -1;
  l->n++;
  return 0;
}

static void kv_free_list(kvlist *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i].key), free(l->v[i].value);
  free(l->v);
  l->v = NULL, l->n = 0;
}

static const char *kv_get(const kvlist *l, const char *key) {
  for (int i = 0; i < l->n; i++)
    if (strcmp(l->v[i].key, key) == 0) return l->v[i].value;
  return NULL;
}

/* The distinct values of a list, sorted and joined with ", "; counts as "N x value" when asked. */
static char *join_distinct(strlist *vals, int counts) {
  qsort(vals->v, (size_t)vals->n, sizeof *vals->v, cmp_str);
  size_t cap = 64, len = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  out[0] = 0;
  for (int i = 0; i < vals->n;) {
    int j = i;
    while (j < vals->n && strcmp(vals->v[j], vals->v[i]) == 0) j++;
    char item[600];
    if (counts)
      snprintf(item, sizeof item, "%s%d x %s", len ? ", " : "", j - i, vals->v[i]);
    else
      snprintf(item, sizeof item, "%s%s", len ? ", " : "", vals->v[i]);
    size_t k = strlen(item);
    if (len + k + 1 > cap) {
      char *g = realloc(out, cap = 2 * (len + k + 1));
      if (!g) return free(out), NULL;
      out = g;
    }
    memcpy(out + len, item, k + 1);
    len += k;
    i = j;
  }
  return out;
}

static int prov_collect(const result_doc *d, kvlist *p) {
  char buf[64];
  int rc = kv_put(p, "ddpbench_version", d->ddpbench_version ? d->ddpbench_version : "");
  rc |= kv_put(p, "job.device", d->device ? d->device : "");
  rc |= kv_put(p, "job.comm", d->comm ? d->comm : "");
  snprintf(buf, sizeof buf, "%d", d->world_size);
  rc |= kv_put(p, "job.world_size", buf);
  snprintf(buf, sizeof buf, "%d", d->nodes);
  rc |= kv_put(p, "job.nodes", buf);
  /* versions: each key over all ranks */
  for (int r = 0; r < d->nranks && !rc; r++)
    for (int k = 0; k < d->ranks[r].nversions && !rc; k++) {
      char key[300];
      snprintf(key, sizeof key, "versions.%s", d->ranks[r].versions[k].key);
      if (kv_get(p, key)) continue;
      strlist vals = {0};
      for (int q = 0; q < d->nranks; q++) {
        const char *v = "(unset)";
        for (int m = 0; m < d->ranks[q].nversions; m++)
          if (strcmp(d->ranks[q].versions[m].key, d->ranks[r].versions[k].key) == 0) v = d->ranks[q].versions[m].value;
        rc |= strlist_push(&vals, v);
      }
      char *j = join_distinct(&vals, 0);
      rc |= !j || kv_put(p, key, j);
      free(j);
      strlist_free(&vals);
    }
  for (int i = 0; i < d->nenv && !rc; i++) {
    const char *k = d->environment[i].key;
    /* the reader's allowlist (older files recorded more); Slurm's job and step ids differ by design */
    if (!result_env_allowed(k) || strncmp(k, "SLURM_", 6) == 0) continue;
    char key[300];
    snprintf(key, sizeof key, "env.%s", k);
    rc |= kv_put(p, key, d->environment[i].value);
  }
  for (int i = 0; i < d->nconfig && !rc; i++) {
    if (IN_LIST(d->config[i].key, output_keys)) continue;
    char key[300];
    snprintf(key, sizeof key, "config.%s", d->config[i].key);
    rc |= kv_put(p, key, d->config[i].value);
  }
  strlist hosts = {0}, gpus = {0};
  for (int r = 0; r < d->nranks && !rc; r++) {
    rc |= strlist_push(&hosts, d->ranks[r].host ? d->ranks[r].host : "");
    rc |= strlist_push(&gpus, d->ranks[r].device_name ? d->ranks[r].device_name : "");
  }
  char *h = rc ? NULL : join_distinct(&hosts, 0), *g = rc ? NULL : join_distinct(&gpus, 1);
  if (!rc) rc |= !h || !g || kv_put(p, "hosts", h) || kv_put(p, "gpus", g);
  free(h), free(g);
  strlist_free(&hosts), strlist_free(&gpus);
  return rc ? -1 : 0;
}

/* One side's value of key over its runs: "v" when they agree, "v1 (3 runs), v2 (2 runs)" when not. */
static char *side_value(kvlist *prov, int n, const char *key, int *mixed) {
  strlist vals = {0};
  for (int i = 0; i < n; i++) {
    const char *v = kv_get(&prov[i], key);
    if (!v && !strcmp(key, "config.strategy")) v = "ddp"; /* files from before the key trained with DDP */
    if (strlist_push(&vals, v ? v : "(unset)")) return strlist_free(&vals), NULL;
  }
  qsort(vals.v, (size_t)vals.n, sizeof *vals.v, cmp_str);
  *mixed = strcmp(vals.v[0], vals.v[n - 1]) != 0;
  char *out;
  if (!*mixed) {
    out = strdup(vals.v[0]);
  } else {
    size_t cap = 256, len = 0;
    out = calloc(cap, 1);
    for (int i = 0; out && i < n;) {
      int j = i;
      while (j < n && strcmp(vals.v[j], vals.v[i]) == 0) j++;
      char item[700];
      snprintf(item, sizeof item, "%s%s (%d run%s)", len ? ", " : "", vals.v[i], j - i, j - i == 1 ? "" : "s");
      size_t k = strlen(item);
      if (len + k + 1 > cap) {
        char *g = realloc(out, cap = 2 * (len + k + 1));
        if (!g) {
          free(out);
          out = NULL;
          break;
        }
        out = g;
      }
      memcpy(out + len, item, k + 1);
      len += k;
      i = j;
    }
  }
  strlist_free(&vals);
  return out;
}

/* Diffs the provenance of the two sides into r. Returns 0, or 2 after naming a refused config key. */
static int prov_diff(side *sa, side *sb, int allow_config_diff, cmp_report *r) {
  int nruns = sa->n + sb->n, rc = 0;
  kvlist *prov = calloc((size_t)nruns, sizeof *prov);
  strlist keys = {0};
  if (!prov) return ddp_usage_error("compare: out of memory"), 2;
  for (int i = 0; i < nruns && !rc; i++) {
    const result_doc *d = i < sa->n ? &sa->docs[i] : &sb->docs[i - sa->n];
    rc = prov_collect(d, &prov[i]);
    for (int k = 0; k < prov[i].n && !rc; k++) {
      int seen = 0;
      for (int q = 0; q < keys.n && !seen; q++) seen = strcmp(keys.v[q], prov[i].v[k].key) == 0;
      if (!seen) rc = strlist_push(&keys, prov[i].v[k].key);
    }
  }
  if (rc) {
    rc = 2, ddp_usage_error("compare: out of memory");
  }
  for (int k = 0; k < keys.n && !rc; k++) {
    int ma, mb;
    char *va = side_value(prov, sa->n, keys.v[k], &ma), *vb = side_value(prov + sa->n, sb->n, keys.v[k], &mb);
    if (!va || !vb) {
      free(va), free(vb);
      rc = 2, ddp_usage_error("compare: out of memory");
      break;
    }
    int differs = strcmp(va, vb) != 0 || ma || mb;
    int model = strncmp(keys.v[k], "config.", 7) == 0 && IN_LIST(keys.v[k] + 7, model_keys);
    int size = IN_LIST(keys.v[k], size_keys);
    if (!differs) {
      r->nprov_same++;
    } else {
      cmp_report_add_diff(r, keys.v[k], va, vb, ma, mb, model || size);
      if (model && !allow_config_diff)
        rc = 2, ddp_usage_error("compare: model config key '%s' differs: %s (A) vs %s (B); comparing different models "
                                "is rarely meant (--allow-config-diff compares anyway)",
                                keys.v[k] + 7, va, vb);
      else if (size && !allow_config_diff)
        rc = 2, ddp_usage_error("compare: %s differs: %s (A) vs %s (B); step times and bandwidths of different job "
                                "sizes are not comparable (--allow-config-diff compares anyway)",
                                keys.v[k], va, vb);
      else if (size)
        r->size_differs |= strcmp(keys.v[k], "job.nodes") ? 1 : 2;
    }
    free(va), free(vb);
  }
  r->same_provenance = r->ndiff == 0;
  for (int i = 0; i < nruns; i++) kv_free_list(&prov[i]);
  free(prov);
  strlist_free(&keys);
  return rc;
}

/* ---- labels ------------------------------------------------------------------------------------------ */
#if RESULT_SCHEMA_VERSION >= 4
/* The reader keeps a run's labels (schema version 4). */
static int run_labels(const side *s, int i, kvlist *out) {
  const result_doc *d = &s->docs[i];
  for (int k = 0; k < d->nlabels; k++)
    if (kv_put(out, d->labels[k].key, d->labels[k].value)) return ddp_usage_error("compare: out of memory"), 2;
  return 0;
}
#else
/* This reader does not keep labels yet: the file's top-level "labels" object (string -> string), read here.
 * Returns 0, or 2 after one line naming the file. */
static int run_labels(const side *s, int i, kvlist *out) {
  const char *path = s->files.v[i];
  char why[300];
  size_t len = 0;
  char *text = input_file_read(path, INPUT_MAX_RESULT, &len, why, sizeof why);
  if (!text) return ddp_usage_error("compare: %s: %s", path, why), 2;
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  const cJSON *lab = cJSON_GetObjectItemCaseSensitive(doc, "labels"), *e;
  int rc = lab && !cJSON_IsObject(lab) ? 2 : 0;
  if (rc) lab = NULL;
  cJSON_ArrayForEach(e, lab) {
    if (!cJSON_IsString(e) || !e->string) rc = 2;
    else if (kv_put(out, e->string, e->valuestring)) rc = 3;
    if (rc) break;
  }
  cJSON_Delete(doc);
  if (rc == 2) ddp_usage_error("compare: %s: labels: not an object of strings (--label key=value)", path);
  if (rc == 3) rc = 2, ddp_usage_error("compare: out of memory");
  return rc;
}
#endif

static int kv_by_key(const void *a, const void *b) { return strcmp(((const kv *)a)->key, ((const kv *)b)->key); }

/* The labels every run of side s shares into r->labels[si], sorted by key. Returns 0 or 2. */
static int side_labels(const side *s, int si, cmp_report *r) {
  kvlist common = {0};
  int rc = 0;
  for (int i = 0; i < s->n && !rc; i++) {
    kvlist mine = {0};
    rc = run_labels(s, i, &mine);
    if (!rc && i == 0) {
      common = mine, mine = (kvlist){0};
    } else if (!rc) { /* keep what this run has too, with the same value */
      int k = 0;
      for (int j = 0; j < common.n; j++) {
        const char *v = kv_get(&mine, common.v[j].key);
        if (v && !strcmp(v, common.v[j].value)) common.v[k++] = common.v[j];
        else free(common.v[j].key), free(common.v[j].value);
      }
      common.n = k;
    }
    kv_free_list(&mine);
  }
  if (!rc && common.n) {
    qsort(common.v, (size_t)common.n, sizeof *common.v, kv_by_key);
    if (!(r->labels[si] = calloc((size_t)common.n, sizeof *r->labels[si]))) rc = 2, ddp_usage_error("compare: out of memory");
    for (int j = 0; !rc && j < common.n; j++) {
      r->labels[si][j] = (cmp_label){strdup(common.v[j].key), strdup(common.v[j].value)};
      r->nlabels[si]++;
    }
  }
  kv_free_list(&common);
  return rc;
}

/* "k=v k=v": the labels of side s that the other side does not share (key and value); NULL when none. */
static char *side_name(const cmp_report *r, int s) {
  char buf[512] = "";
  size_t u = 0;
  for (int i = 0; i < r->nlabels[s]; i++) {
    const cmp_label *l = &r->labels[s][i];
    int shared = 0;
    for (int j = 0; j < r->nlabels[!s] && !shared; j++)
      shared = !strcmp(l->key, r->labels[!s][j].key) && !strcmp(l->value, r->labels[!s][j].value);
    if (!shared && u < sizeof buf)
      u += (size_t)snprintf(buf + u, sizeof buf - u, "%s%s=%s", u ? " " : "", l->key, l->value);
  }
  if (u >= sizeof buf) strcpy(buf + sizeof buf - 4, "...");
  return u ? strdup(buf) : NULL;
}

/* Names both sides by their labels when each has some the other lacks; else neither (today's naming). */
static int name_sides(side *sa, side *sb, cmp_report *r) {
  int rc = side_labels(sa, 0, r);
  if (!rc) rc = side_labels(sb, 1, r);
  if (rc) return rc;
  char *a = side_name(r, 0), *b = side_name(r, 1);
  if (a && b) r->name_a = a, r->name_b = b;
  else free(a), free(b);
  return 0;
}

/* ---- metrics ----------------------------------------------------------------------------------------- */
typedef struct {
  char *name, *unit;
  cmp_better better;
  double *val[2];  /* per run; NaN: not measured */
  char *seen[2];   /* per run: the record exists */
  double *pool[2]; /* --pool-steps: steps of every run */
  int npool[2];
  int pooled_runs[2];
  const result_record *rec; /* the first record seen (the compact view's name); valid while the runs are loaded */
} metric;

typedef struct {
  metric *v;
  int n, cap;
  int runs[2];
  int *slot;    /* open addressing over the names: index + 1 into v, 0 = empty; nslot a power of two */
  size_t nslot; /* (a linear search per record made compare quadratic in the records) */
} metric_table;

static size_t name_hash(const char *s) { return (size_t)ddp_fnv1a64(s, strlen(s), DDP_FNV1A64_INIT); }

/* Keeps the table at most half full; 0, or -1 when out of memory. */
static int slots_grow(metric_table *t) {
  if ((size_t)(t->n + 1) * 2 <= t->nslot) return 0;
  size_t ns = t->nslot ? t->nslot * 2 : 64;
  int *sl = calloc(ns, sizeof *sl);
  if (!sl) return -1;
  for (int i = 0; i < t->n; i++) {
    size_t h = name_hash(t->v[i].name) & (ns - 1);
    while (sl[h]) h = (h + 1) & (ns - 1);
    sl[h] = i + 1;
  }
  free(t->slot);
  t->slot = sl, t->nslot = ns;
  return 0;
}

static metric *metric_get(metric_table *t, const char *name, const char *unit, cmp_better better) {
  size_t h = t->nslot ? name_hash(name) & (t->nslot - 1) : 0;
  for (; t->nslot && t->slot[h]; h = (h + 1) & (t->nslot - 1))
    if (strcmp(t->v[t->slot[h] - 1].name, name) == 0) return &t->v[t->slot[h] - 1];
  if (slots_grow(t) != 0) return NULL;
  if (t->n == t->cap) {
    int cap = t->cap ? t->cap * 2 : 64;
    metric *g = realloc(t->v, (size_t)cap * sizeof *g);
    if (!g) return NULL;
    t->v = g, t->cap = cap;
  }
  metric *m = &t->v[t->n];
  memset(m, 0, sizeof *m);
  m->name = strdup(name), m->unit = strdup(unit), m->better = better;
  for (int s = 0; s < 2; s++) {
    m->val[s] = malloc((size_t)t->runs[s] * sizeof(double));
    m->seen[s] = calloc((size_t)t->runs[s], 1);
    for (int i = 0; m->val[s] && i < t->runs[s]; i++) m->val[s][i] = NAN;
  }
  if (!m->name || !m->unit || !m->val[0] || !m->val[1] || !m->seen[0] || !m->seen[1]) {
    free(m->name), free(m->unit);
    for (int s = 0; s < 2; s++) free(m->val[s]), free(m->seen[s]);
    return NULL;
  }
  t->n++;
  h = name_hash(m->name) & (t->nslot - 1);
  while (t->slot[h]) h = (h + 1) & (t->nslot - 1);
  t->slot[h] = t->n;
  return m;
}

static void metric_table_free(metric_table *t) {
  for (int i = 0; i < t->n; i++) {
    free(t->v[i].name), free(t->v[i].unit);
    for (int s = 0; s < 2; s++) free(t->v[i].val[s]), free(t->v[i].seen[s]), free(t->v[i].pool[s]);
  }
  free(t->v);
  free(t->slot);
}

/* "<measurement>[@<group>] <metric>[ k=v ...]", leaving out the rank and host labels; host appended when given;
 * the measurement train (a strategy's training phase, or NULL) named "train". */
static void metric_name(char *buf, size_t n, const result_record *rec, const char *host, const char *train) {
  /* sides that trained with different strategies: each one's training phase is "train" (train_strategies) */
  const char *meas = train && !strcmp(rec->measurement, train) ? "train" : rec->measurement;
  size_t u = (size_t)snprintf(buf, n, "%s", meas);
  if (strcmp(rec->group, "world") != 0 && u < n) u += (size_t)snprintf(buf + u, n - u, "@%s", rec->group);
  if (u < n) u += (size_t)snprintf(buf + u, n - u, " %s", rec->metric);
  for (int i = 0; i < rec->nlabels && u < n; i++) {
    if (strcmp(rec->labels[i].key, "rank") == 0 || strcmp(rec->labels[i].key, "host") == 0) continue;
    u += (size_t)snprintf(buf + u, n - u, " %s=%s", rec->labels[i].key, rec->labels[i].value);
  }
  if (host && u < n) snprintf(buf + u, n - u, " host=%s", host);
}

static int doc_hosts_multi(const side *sa, const side *sb) {
  const char *first = NULL;
  for (int s = 0; s < 2; s++) {
    const side *sd = s ? sb : sa;
    for (int i = 0; i < sd->n; i++)
      for (int r = 0; r < sd->docs[i].nranks; r++) {
        const char *h = sd->docs[i].ranks[r].host ? sd->docs[i].ranks[r].host : "";
        if (!first) first = h;
        else if (strcmp(first, h) != 0) return 1;
      }
  }
  return 0;
}

static int pool_append(metric *m, int s, const double *x, int n) {
  double *g = realloc(m->pool[s], (size_t)(m->npool[s] + n) * sizeof *g);
  if (!g) return -1;
  m->pool[s] = g;
  memcpy(g + m->npool[s], x, (size_t)n * sizeof *x);
  m->npool[s] += n;
  m->pooled_runs[s]++;
  return 0;
}

/* --pool-steps: the steps of a job-wide step_ms record: per step, the maximum over the per-rank records of the
 * same measurement and group (the run's own definition of a step's time). 0 samples when a rank has none. */
static int steps_of(const result_doc *d, const result_record *world, double **out) {
  int steps = -1;
  double *agg = NULL;
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *r = &d->records[i];
    if (!result_record_label(r, "rank") || strcmp(r->measurement, world->measurement) ||
        strcmp(r->group, world->group) || strcmp(r->metric, world->metric))
      continue;
    if (r->nsamples <= 0 || (steps >= 0 && r->nsamples != steps)) {
      free(agg);
      return 0;
    }
    if (steps < 0) {
      steps = r->nsamples;
      if (!(agg = malloc((size_t)steps * sizeof *agg))) return 0;
      for (int k = 0; k < steps; k++) agg[k] = -INFINITY;
    }
    for (int k = 0; k < steps; k++) agg[k] = fmax(agg[k], r->samples[k]);
  }
  *out = agg;
  return steps > 0 ? steps : 0;
}

static int collect_run(metric_table *t, int s, int run, const result_doc *d, int per_host, int pool, const char *train) {
  char name[1024];
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *rec = &d->records[i];
    if (rec->better == BETTER_NONE) continue;
    cmp_better better = rec->better == BETTER_LOWER ? CMP_LOWER_BETTER : CMP_HIGHER_BETTER;
    const char *host = NULL;
    if (result_record_label(rec, "rank")) {
      if (!per_host) continue;
      host = result_record_label(rec, "host");
      if (!host) host = "?";
    }
    metric_name(name, sizeof name, rec, host, train);
    metric *m = metric_get(t, name, rec->unit, better);
    if (!m) return -1;
    if (!m->rec) m->rec = rec;
    double v = rec->value, *old = &m->val[s][run];
    if (!host || !m->seen[s][run] || isnan(*old))
      *old = v;
    else if (!isnan(v)) /* the host's worst rank */
      *old = better == CMP_LOWER_BETTER ? fmax(*old, v) : fmin(*old, v);
    m->seen[s][run] = 1;
    if (pool && !host && strcmp(rec->metric, "step_ms") == 0) {
      double *steps = NULL;
      int n = steps_of(d, rec, &steps);
      if (n > 0 && pool_append(m, s, steps, n)) return free(steps), -1;
      free(steps);
    }
  }
  return 0;
}

/* ---- the compact view's collectives rows --------------------------------------------------------------- */
/* The labels of a collectives record that may vary inside one collective's rows (bytes always does). */
static const char *const COLL_KEYS[] = {"type", "redop", "root", "cycle"};
enum { NCOLL_KEYS = sizeof COLL_KEYS / sizeof *COLL_KEYS, MAX_COLLS = 16 };

typedef struct {
  const char *name;                  /* the collective */
  const char *first[NCOLL_KEYS + 1]; /* each key's first value; [NCOLL_KEYS] the group */
  int varies[NCOLL_KEYS + 1];
} coll_rows;

static const char *coll_value(const result_record *rec, int k) {
  const char *v = k < NCOLL_KEYS ? result_record_label(rec, COLL_KEYS[k]) : rec->group;
  return v ? v : "";
}

static int is_coll(const metric *m) {
  return m->rec && !strcmp(m->rec->measurement, "collectives") && result_record_label(m->rec, "collective") &&
         result_record_label(m->rec, "bytes");
}

/* Which labels vary inside each collective's rows; n of them; a collective past MAX_COLLS gets all named. */
static int coll_scan(const metric_table *t, coll_rows *c) {
  int n = 0;
  for (int i = 0; i < t->n; i++) {
    if (!is_coll(&t->v[i])) continue;
    const result_record *rec = t->v[i].rec;
    const char *name = result_record_label(rec, "collective");
    int j = 0;
    while (j < n && strcmp(c[j].name, name)) j++;
    if (j == MAX_COLLS) continue;
    if (j == n) {
      c[n].name = name;
      for (int k = 0; k <= NCOLL_KEYS; k++) c[n].first[k] = coll_value(rec, k), c[n].varies[k] = 0;
      n++;
    }
    for (int k = 0; k <= NCOLL_KEYS; k++) c[j].varies[k] |= strcmp(c[j].first[k], coll_value(rec, k)) != 0;
  }
  return n;
}

/* "allreduce 32 KiB busbw_gbs" (+ " in-place", the labels that vary, the group when it varies); *detail: not the
 * out-of-place busbw (shown only with --wide). */
static void coll_brief(const metric *m, const coll_rows *c, int nc, char *buf, size_t n, int *detail) {
  const result_record *rec = m->rec;
  const char *name = result_record_label(rec, "collective"), *place = result_record_label(rec, "placement");
  int j = 0;
  while (j < nc && strcmp(c[j].name, name)) j++;
  size_t u = (size_t)snprintf(buf, n, "%s", name);
  for (int k = 0; k <= NCOLL_KEYS && u < n; k++) {
    if (j < nc && !c[j].varies[k]) continue;
    if (k == NCOLL_KEYS) u += (size_t)snprintf(buf + u, n - u, "@%s", rec->group);
    else u += (size_t)snprintf(buf + u, n - u, " %s=%s", COLL_KEYS[k], coll_value(rec, k));
  }
  unsigned long long b = strtoull(result_record_label(rec, "bytes"), NULL, 10), unit = 1;
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int ui = 0;
  while (ui < 4 && b >= unit * 1024 && b % (unit * 1024) == 0) unit *= 1024, ui++;
  if (u < n) u += (size_t)snprintf(buf + u, n - u, " %llu %s %s", b / unit, units[ui], rec->metric);
  int in_place = place && !strcmp(place, "in_place");
  if (in_place && u < n) snprintf(buf + u, n - u, " in-place");
  *detail = in_place || (strcmp(rec->metric, "busbw_gbs") && strcmp(rec->metric, "load_busbw_gbs"));
}

/* The job-wide step time of the training phase ("ddp step_ms", "fsdp step_ms", "train step_ms" when the sides'
 * strategies differ; phase: side A's strategy): the one figure whose runs are looked at for two modes. One
 * figure, so that the rule's rate of false alarms (about 5 % of unimodal sides) is the comparison's, not that
 * rate times the number of phases. */
static int headline(const metric *m, const char *phase) {
  return m->rec && !strcmp(m->rec->metric, "step_ms") && !strcmp(m->rec->group, "world") && m->rec->nlabels == 0 &&
         (!strncmp(m->name, "train ", 6) || (phase && !strcmp(m->rec->measurement, phase)));
}

/* Two modes among a side's runs of a headline figure (side.h): a note with the modes; a slow mode on B that A
 * lacks, beyond the threshold, is a verdict of its own ("intermittent"; one is enough: returns 1 when made). */
static int modes_judge(const metric *m, const double *v[2], const int nv[2], int may_judge, cmp_report *r) {
  cmp_modes md[2];
  for (int s = 0; s < 2; s++) cmp_modes_find(v[s], nv[s], &md[s]);
  for (int s = 0; s < 2; s++) {
    if (!md[s].two) continue;
    int slow_hi = m->better == CMP_LOWER_BETTER, nslow = slow_hi ? md[s].nhi : md[s].nlo;
    double ratio = md[s].med_hi / md[s].med_lo;
    cmp_report_note(r, "side %c, %s: two modes, not one spread: %d run%s at %.4g %s, %d at %.4g %s (%.2fx); its "
                       "median stands for neither", s ? 'B' : 'A', m->name, md[s].nlo, md[s].nlo == 1 ? "" : "s",
                    md[s].med_lo, m->unit, md[s].nhi, md[s].med_hi, m->unit, ratio);
    if (s == 1 && may_judge && !md[0].two && 100.0 * (ratio - 1) > r->opt.threshold_pct) {
      char why[600];
      snprintf(why, sizeof why, "intermittent: %d of %d runs slow (%s %.2fx)", nslow, nv[1], m->name, ratio);
      cmp_report_side(r, why);
      return 1;
    }
  }
  return 0;
}

/* Per metric: consistency inside each side, then one report line over each side's clean runs (all of them when
 * none is clean). Returns 0 or 2. */
static int metrics_report(metric_table *t, side *sd[2], const cmp_side integ[2], const cmp_noise *noise,
                          const char *phase, cmp_report *r) {
  int only[2] = {0, 0}, skipped_nan = 0, ncoll_rows = 0, intermittent = 0;
  int use_all[2] = {integ[0].ncorrupt == integ[0].n, integ[1].ncorrupt == integ[1].n};
  double *clean[2] = {malloc(((size_t)t->runs[0] + 1) * sizeof(double)), malloc(((size_t)t->runs[1] + 1) * sizeof(double))};
  if (!clean[0] || !clean[1]) return free(clean[0]), free(clean[1]), ddp_usage_error("compare: out of memory"), 2;
  const char *only_name[2] = {NULL, NULL}, *nan_name = NULL;
  coll_rows colls[MAX_COLLS];
  int ncolls = coll_scan(t, colls);
  for (int i = 0; i < t->n; i++) {
    metric *m = &t->v[i];
    int seen[2] = {0, 0}, finite = 1;
    for (int s = 0; s < 2; s++)
      for (int k = 0; k < t->runs[s]; k++) {
        seen[s] += m->seen[s][k];
        finite &= !isnan(m->val[s][k]);
      }
    for (int s = 0; s < 2; s++)
      if (seen[s] > 0 && seen[s] < t->runs[s]) {
        int k = 0;
        while (m->seen[s][k]) k++;
        return free(clean[0]), free(clean[1]),
               ddp_usage_error("compare: %s: metric '%s' missing (the other runs of side %c have it)",
                               sd[s]->files.v[k], m->name, s ? 'B' : 'A'),
               2;
      }
    if (!seen[0] || !seen[1]) {
      int s = seen[0] ? 0 : 1;
      if (!only_name[s]) only_name[s] = m->name;
      only[s]++;
      continue;
    }
    if (!finite) {
      if (!nan_name) nan_name = m->name;
      skipped_nan++;
      continue;
    }
    int nclean[2] = {0, 0};
    for (int s = 0; s < 2; s++)
      for (int k = 0; k < t->runs[s]; k++)
        if (use_all[s] || cmp_side_clean(&integ[s], k)) clean[s][nclean[s]++] = m->val[s][k];
    int pooled = m->pooled_runs[0] == t->runs[0] && m->pooled_runs[1] == t->runs[1] && !integ[0].ncorrupt &&
                 !integ[1].ncorrupt; /* steps of corrupt runs are not told apart: pooling only when all are clean */
    cmp_input in = {.a = pooled ? m->pool[0] : clean[0], .b = pooled ? m->pool[1] : clean[1],
                    .na = pooled ? m->npool[0] : nclean[0], .nb = pooled ? m->npool[1] : nclean[1],
                    .runs_a = nclean[0], .runs_b = nclean[1], .better = m->better,
                    .floor_pct = cmp_noise_floor(noise, m->name)};
    if (cmp_report_add(r, m->name, m->unit, &in) != 0)
      return free(clean[0]), free(clean[1]), ddp_usage_error("compare: %s: cannot evaluate", m->name), 2;
    if (headline(m, phase)) {
      const double *v[2] = {clean[0], clean[1]};
      intermittent |= modes_judge(m, v, nclean, !intermittent, r);
    }
    if (r->train_label[0] && !strncmp(m->name, "train ", 6)) {
      char brief[1100];
      snprintf(brief, sizeof brief, "%s (%s)", m->name, r->train_label);
      cmp_report_brief(r, brief, 0);
    }
    if (is_coll(m)) {
      char brief[512];
      int detail;
      coll_brief(m, colls, ncolls, brief, sizeof brief, &detail);
      cmp_report_brief(r, brief, detail);
      ncoll_rows++;
    }
  }
  free(clean[0]), free(clean[1]);
  if (ncoll_rows && !r->brief_note)
    r->brief_note = strdup("collectives: one row per collective and size, its out-of-place busbw_gbs (in the names: "
                           "any label that varies inside a collective's rows)");
  for (int s = 0; s < 2; s++)
    if (only[s])
      cmp_report_note(r, "%d metric%s only in %c, not compared (e.g. %s)", only[s], only[s] == 1 ? "" : "s",
                      s ? 'B' : 'A', only_name[s]);
  if (skipped_nan)
    cmp_report_note(r, "%d metric%s not measured in some runs, not compared (e.g. %s)", skipped_nan,
                    skipped_nan == 1 ? "" : "s", nan_name);
  if (r->nlines == 0) return ddp_usage_error("compare: the two sides share no metric"), 2;
  return 0;
}

static int same_str0(const char *a, const char *b) { return a && b && *a && !strcmp(a, b); }

/* A run given twice (the same path, a folder and a file in it, a copy) would count as two
 * runs and make a significance out of one. Two files are the same run when they are one file (device and
 * inode) or record the same start, command line and rank 0 (host and pid). Returns 0, or 2 with the message. */
static int duplicate_runs(side *sd[2]) {
  struct stat *st[2] = {calloc((size_t)sd[0]->n + 1, sizeof **st), calloc((size_t)sd[1]->n + 1, sizeof **st)};
  if (!st[0] || !st[1]) return free(st[0]), free(st[1]), ddp_usage_error("compare: out of memory"), 2;
  for (int s = 0; s < 2; s++) /* every file was read already; one that cannot be stat'ed now has ino 0 */
    for (int i = 0; i < sd[s]->n; i++)
      if (stat(sd[s]->files.v[i], &st[s][i]) != 0) memset(&st[s][i], 0, sizeof st[s][i]);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < sd[s]->n; i++)
      for (int t = s; t < 2; t++)
        for (int j = t == s ? i + 1 : 0; j < sd[t]->n; j++) {
          const char *fa = sd[s]->files.v[i], *fb = sd[t]->files.v[j];
          const result_doc *x = &sd[s]->docs[i], *y = &sd[t]->docs[j];
          int same_file = st[s][i].st_ino && st[s][i].st_dev == st[t][j].st_dev && st[s][i].st_ino == st[t][j].st_ino;
          int same_run = same_str0(x->start_time, y->start_time) && same_str0(x->command_line, y->command_line) &&
                         x->nranks > 0 && y->nranks > 0 && same_str0(x->ranks[0].host, y->ranks[0].host) &&
                         x->ranks[0].pid == y->ranks[0].pid;
          if (same_file || same_run) {
            free(st[0]), free(st[1]);
            return ddp_usage_error("compare: %s (side %c) and %s (side %c) are the same run (%s): give each run once",
                                   fa, s ? 'B' : 'A', fb, t ? 'B' : 'A',
                                   same_file ? "the same file" : "same start, command line and rank 0"),
                   2;
          }
        }
  free(st[0]), free(st[1]);
  return 0;
}

/* The runs' own verdicts: a metric "findings fail" (failing findings per run, lower is better), so that a
 * side whose runs fail their checks is a regression like a slower one; and a note naming what failed. */
static int findings_metric(metric_table *t, side *sd[2], cmp_report *r) {
  metric *m = metric_get(t, "findings fail", "", CMP_LOWER_BETTER);
  if (!m) return -1;
  for (int s = 0; s < 2; s++) {
    int failing = 0;
    char checks[256] = "";
    for (int i = 0; i < sd[s]->n; i++) {
      const finding_list *f = &sd[s]->docs[i].findings;
      int n = findings_count(f, SEV_FAIL);
      m->val[s][i] = n, m->seen[s][i] = 1;
      failing += n > 0;
      for (int k = 0; k < f->n; k++) {
        if (f->v[k].severity != SEV_FAIL || ddp_list_has(checks, f->v[k].check)) continue;
        size_t u = strlen(checks);
        snprintf(checks + u, sizeof checks - u, "%s%s", u ? "," : "", f->v[k].check);
      }
    }
    if (failing)
      cmp_report_note(r, "side %c: %d of %d run%s failed checks of their own (%s)", s ? 'B' : 'A', failing, sd[s]->n,
                      sd[s]->n == 1 ? "" : "s", checks);
  }
  return 0;
}

/* A run's strategy (config.strategy; "ddp" in files from before the key): its training phase's measurement. */
static const char *run_strategy(const result_doc *d) {
  for (int i = 0; i < d->nconfig; i++)
    if (!strcmp(d->config[i].key, "strategy") && d->config[i].value[0]) return d->config[i].value;
  return "ddp";
}

/* Sides that trained with different strategies (only with --allow-config-diff: strategy is a model key): each
 * side's training phase becomes the metrics "train ...", so that DDP's step and FSDP's are one line, labelled
 * "ddp | fsdp". strat[s]: side s's strategy, or NULL when the sides agree (or a side's runs do not). */
static void train_strategies(side *sa, side *sb, const char *strat[2], cmp_report *r) {
  const side *sd[2] = {sa, sb};
  for (int s = 0; s < 2; s++) {
    strat[s] = sd[s]->n ? run_strategy(&sd[s]->docs[0]) : NULL;
    for (int i = 1; strat[s] && i < sd[s]->n; i++)
      if (strcmp(strat[s], run_strategy(&sd[s]->docs[i]))) strat[s] = NULL;
  }
  if (!strat[0] || !strat[1] || !strcmp(strat[0], strat[1])) {
    strat[0] = strat[1] = NULL;
    return;
  }
  snprintf(r->train_label, sizeof r->train_label, "%s | %s", strat[0], strat[1]);
  cmp_report_note(r, "train: each side's training phase, %s (A) against %s (B): the same model trained by another "
                     "strategy", strat[0], strat[1]);
}

/* The runs' integrity (side.h): a side whose runs corrupted data is judged on that, not on a median of it;
 * its timings are then its clean runs'. Returns 0 or 2. */
static int integrity(side *sd[2], cmp_side integ[2], cmp_report *r) {
  for (int s = 0; s < 2; s++)
    if (cmp_side_read(sd[s]->docs, sd[s]->n, &integ[s])) return ddp_usage_error("compare: out of memory"), 2;
  char why[600];
  if (cmp_sides_judge(integ, why, sizeof why)) cmp_report_side(r, why);
  for (int s = 0; s < 2; s++) {
    const cmp_side *g = &integ[s];
    if (!g->ncorrupt) continue;
    if (g->ncorrupt < g->n)
      cmp_report_note(r, "side %c: %d of %d runs corrupted data (%s): its figures are its %d clean run%s'", s ? 'B' : 'A',
                      g->ncorrupt, g->n, g->checks, g->n - g->ncorrupt, g->n - g->ncorrupt == 1 ? "" : "s");
    else
      cmp_report_note(r, "side %c: every run corrupted data (%s): its figures are of corrupt runs", s ? 'B' : 'A',
                      g->checks);
  }
  return 0;
}

/* ---- NCCL's account ------------------------------------------------------------------------------------ */
/* A run's "nccl" section, read from its file again: the reader (result.h) keeps only its model. NULL when the
 * file has none (a file from before it, or of a kind without it); a file without the word is not parsed twice. */
static cJSON *nccl_section(const char *path) {
  char why[300];
  size_t len = 0;
  char *text = input_file_read(path, INPUT_MAX_RESULT, &len, why, sizeof why);
  if (!text) return NULL;
  cJSON *sec = NULL;
  if (memmem(text, len, "\"nccl\"", 6)) {
    cJSON *doc = cJSON_ParseWithLength(text, len);
    if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "nccl")))
      sec = cJSON_DetachItemFromObjectCaseSensitive(doc, "nccl");
    cJSON_Delete(doc);
  }
  free(text);
  return sec;
}

/* NCCL's account of both sides into r->nccl, and what it explains of the lines. Returns 0 or 2. */
static int nccl_report(side *sd[2], cmp_report *r) {
  cJSON **sec[2] = {calloc((size_t)sd[0]->n + 1, sizeof(cJSON *)), calloc((size_t)sd[1]->n + 1, sizeof(cJSON *))};
  int rc = sec[0] && sec[1] ? 0 : -1;
  for (int s = 0; s < 2 && !rc; s++)
    for (int i = 0; i < sd[s]->n; i++) {
      const char *comm = sd[s]->docs[i].comm;
      sec[s][i] = nccl_section(sd[s]->files.v[i]);
      /* a run over another comm has no NCCL account to miss: say so, rather than blame the file's age */
      if (!sec[s][i] && comm && *comm && strcmp(comm, "nccl") && (sec[s][i] = cJSON_CreateObject())) {
        char why[96];
        snprintf(why, sizeof why, "the comm was %s, no NCCL account", strcmp(comm, "mpi") ? comm : "MPI");
        cJSON_AddFalseToObject(sec[s][i], "reported");
        cJSON_AddStringToObject(sec[s][i], "why", why);
      }
    }
  if (!rc) rc = cmp_nccl_build((const cJSON *const *)sec[0], sd[0]->n, (const cJSON *const *)sec[1], sd[1]->n, r);
  if (!rc) rc = cmp_nccl_explain(r);
  for (int s = 0; s < 2; s++) {
    for (int i = 0; sec[s] && i < sd[s]->n; i++) cJSON_Delete(sec[s][i]);
    free(sec[s]);
  }
  return rc ? (ddp_usage_error("compare: out of memory"), 2) : 0;
}

int cmp_load(char **a, int na, char **b, int nb, const cmp_noise *noise, int allow_config_diff, cmp_report *r) {
  side sa = {0}, sb = {0};
  metric_table t = {0};
  cmp_side integ[2] = {{0}, {0}};
  int rc = side_expand(&sa, a, na, "A");
  if (!rc) rc = side_expand(&sb, b, nb, "B");
  side *both[2] = {&sa, &sb};
  if (!rc) rc = duplicate_runs(both);
  if (!rc) {
    r->label_a = side_label(a, na), r->label_b = side_label(b, nb);
    r->runs_a = sa.n, r->runs_b = sb.n;
    rc = prov_diff(&sa, &sb, allow_config_diff, r);
  }
  if (!rc) {
    rc = name_sides(&sa, &sb, r);
  }
  if (!rc) {
    t.runs[0] = sa.n, t.runs[1] = sb.n;
    int per_host = doc_hosts_multi(&sa, &sb);
    const char *strat[2] = {NULL, NULL};
    train_strategies(&sa, &sb, strat, r);
    for (int s = 0; s < 2 && !rc; s++) {
      side *sd = s ? &sb : &sa;
      for (int i = 0; i < sd->n && !rc; i++)
        if (collect_run(&t, s, i, &sd->docs[i], per_host, r->opt.pool_steps, strat[s]))
          rc = 2, ddp_usage_error("compare: out of memory");
    }
    side *sds[2] = {&sa, &sb};
    if (!rc && findings_metric(&t, sds, r)) rc = 2, ddp_usage_error("compare: out of memory");
    if (!rc) rc = integrity(sds, integ, r);
    if (!rc) rc = metrics_report(&t, sds, integ, noise, sa.n ? run_strategy(&sa.docs[0]) : NULL, r);
    if (!rc) rc = nccl_report(sds, r);
    if (!rc && r->opt.pool_steps)
      cmp_report_note(r, "--pool-steps: the job-wide step_ms metrics use every step of every run as a sample; the "
                         "other metrics one value per run");
  }
  metric_table_free(&t);
  cmp_side_free(&integ[0]), cmp_side_free(&integ[1]);
  side_free(&sa), side_free(&sb);
  return rc;
}
