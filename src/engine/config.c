/* config.c: the key table, and parsing of the INI file (inih) and the command line into ddp_config.
 * Every default lives in the table as text and goes through the same parser as user input, so --help
 * prints exactly what a run uses. Never touches MPI or a device; errors are one line naming the key. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bucket.h"
#include "ini_file.h"
#include "input_file.h"
#include "phase.h"
#include "registry.h"

typedef enum { T_INT, T_U64, T_DOUBLE, T_BOOL, T_ENUM, T_STR } key_type;

typedef struct {
  const char *key;
  key_type type;
  size_t offset;
  const char *def;
  double min, max;          /* T_INT, T_DOUBLE: inclusive range */
  const char *choices;      /* T_ENUM: "a|b|c", stored as the index; NULL when TABLE_ENUMS lists them */
  size_t size;              /* T_STR: buffer size */
  const char *help;
} key_spec;

#define OFF(f) offsetof(ddp_config, f)
#define SZ(f) sizeof(((ddp_config *)0)->f)
static const key_spec KEYS[] = {
    {"hidden", T_INT, OFF(hidden), "1024", 1, 65536, NULL, 0, "hidden size H (every layer is H x H)"},
    {"layers", T_INT, OFF(layers), "4", 1, 4096, NULL, 0, "number of layers L"},
    {"batch", T_INT, OFF(batch), "256", 1, 1 << 24, NULL, 0, "samples per rank per step"},
    {"steps", T_INT, OFF(steps), "20", 1, 1000000, NULL, 0, "timed steps per phase"},
    {"warmup", T_INT, OFF(warmup), "5", 0, 1000000, NULL, 0, "untimed steps before them"},
    {"seed", T_U64, OFF(seed), "42", 0, 0, NULL, 0, "seed of the counter-based generator"},
    {"lr", T_DOUBLE, OFF(lr), "0.01", 0, 1e6, NULL, 0, "SGD learning rate"},
    {"momentum", T_DOUBLE, OFF(momentum), "0", 0, 1, NULL, 0, "SGD momentum (v = m*v + g; W -= lr*v)"},
    {"precision", T_ENUM, OFF(precision), "fp32", 0, 0, "fp32|tf32|bf16|fp16", 0,
     "GEMM inputs (fp32 master weights; 16-bit = autocast; tf32 needs the cuda device)"},
    {"grad_comm", T_ENUM, OFF(grad_comm), "fp32", 0, 0, "fp32|-|bf16|fp16", 0,
     "allreduce type (16-bit = PyTorch's compression hooks)"},
    {"bucket_mb", T_DOUBLE, OFF(bucket_mb), "25", 1.0 / 1024, 1 << 20, NULL, 0,
     "bucket cap in MiB, PyTorch's bucket_cap_mb (given, it caps the first bucket too)"},
    {"first_bucket_mb", T_DOUBLE, OFF(first_bucket_mb), "1", 1.0 / 1024, 1 << 20, NULL, 0,
     "first bucket's cap in MiB; bucket_mb when only that is given"},
    {"gradient_as_bucket_view", T_BOOL, OFF(gradient_as_bucket_view), "false", 0, 0, NULL, 0,
     "write gradients straight into the buckets"},
    {"loss_scale_init", T_DOUBLE, OFF(loss_scale_init), "65536", 1e-30, 1e30, NULL, 0, "fp16: initial loss scale"},
    {"loss_scale_growth_factor", T_DOUBLE, OFF(loss_scale_growth_factor), "2", 1, 1e6, NULL, 0,
     "fp16: scale growth factor (> 1)"},
    {"loss_scale_backoff", T_DOUBLE, OFF(loss_scale_backoff), "0.5", 0, 1, NULL, 0,
     "fp16: scale backoff factor (0 < b < 1)"},
    {"loss_scale_growth_interval", T_INT, OFF(loss_scale_growth_interval), "2000", 1, INT_MAX, NULL, 0,
     "fp16: finite steps before the scale grows"},
    {"device", T_ENUM, OFF(device), "auto", 0, 0, NULL, 0, "auto = the GPU device when every rank sees a GPU, else cpu"},
    {"comm", T_ENUM, OFF(comm), "auto", 0, 0, NULL, 0, "auto = the comm made for the device (nccl on cuda), else mpi"},
    {"cuda_graph", T_BOOL, OFF(cuda_graph), "false", 0, 0, NULL, 0, "capture the steady-state step in a CUDA graph"},
    {"inject_nonfinite", T_INT, OFF(inject_nonfinite), "-1", -1, INT_MAX, NULL, 0,
     "put a NaN into rank 0's gradient after step K's backward (-1 = off)"},
    {"timeout", T_DOUBLE, OFF(timeout), "600", 0, 1e9, NULL, 0,
     "seconds without progress before the job is aborted (0 = never)"},
    {"peak_tflops", T_DOUBLE, OFF(peak_tflops), "0", 0, 1e6, NULL, 0,
     "dense peak for MFU (0 = table of known GPUs)"},
    {"peak_seconds", T_DOUBLE, OFF(peak_seconds), "2", 0, 600, NULL, 0,
     "cuda: the measured peak behind MFU is an 8192^3 GEMM sustained this long (0 = one H x H x H burst)"},
    {"straggler_pct", T_DOUBLE, OFF(straggler_pct), "5", 0, 1000, NULL, 0,
     "a straggler is this far above the median compute time (and a robust z-score > 3.5)"},
    {"strict", T_BOOL, OFF(strict), "false", 0, 0, NULL, 0, "a warning fails the run too (exit 4)"},
    {"bind", T_ENUM, OFF(bind), "auto", 0, 0, "auto|gpu|none", 0,
     "bind each rank near its GPU (auto = gpu when locality is known)"},
    {"pcie", T_BOOL, OFF(pcie), "false", 0, 0, NULL, 0, "print the topology matrix by PCIe path alone"},
    {"phases", T_STR, OFF(phases), "local,comm,ddp", 0, 0, NULL, SZ(phases), "phases to run, in this order"},
    {"json", T_STR, OFF(json), "", 0, 0, NULL, SZ(json), "write the result document to this file"},
    {"topo_xml", T_STR, OFF(topo_xml), "", 0, 0, NULL, SZ(topo_xml), "write each host's hwloc XML into this folder"},
    {"groups", T_STR, OFF(groups), "", 0, 0, NULL, SZ(groups),
     "also run --group-measure over these groups, each after the phases: world, node (each node), pairs (node "
     "pairs), first:K (the first K ranks), comma-separated"},
    {"group_measure", T_STR, OFF(group_measure), "allreduce", 0, 0, NULL, SZ(group_measure),
     "the measurement --groups runs (allreduce: busbw of a 64 MiB allreduce)"},
    {"sweep", T_BOOL, OFF(sweep), "false", 0, 0, NULL, 0,
     "scaling sweep: the phases on 1, 2, 4, ... ranks of a node, then 1, 2, 4, ... nodes and the job"},
    {"prom", T_STR, OFF(prom), "", 0, 0, NULL, SZ(prom), "write the figures as a node_exporter textfile"},
    {"csv", T_STR, OFF(csv), "", 0, 0, NULL, SZ(csv), "write every record as CSV (one row per rank per figure)"},
    {"failed_hosts", T_STR, OFF(failed_hosts), "", 0, 0, NULL, SZ(failed_hosts),
     "write the hosts with a failing check here, one per line (for scontrol ... state=drain)"},
    {"force", T_BOOL, OFF(force), "false", 0, 0, NULL, 0,
     "replace existing output files: --json, --prom, --csv, --failed-hosts, --topo-xml (regular files only)"},
    {"quiet", T_BOOL, OFF(quiet), "false", 0, 0, NULL, 0, "no progress lines on stderr"},
};
#define NKEYS ((int)(sizeof KEYS / sizeof KEYS[0]))
_Static_assert(sizeof KEYS / sizeof KEYS[0] <= CONFIG_MAX_KEYS && CONFIG_MAX_KEYS <= 64,
               "ddp_config.given has one bit per key; source has CONFIG_MAX_KEYS entries");

static const key_spec *key_find(const char *name) {
  for (int i = 0; i < NKEYS; i++)
    if (strcmp(KEYS[i].key, name) == 0) return &KEYS[i];
  return NULL;
}

/* Index of value in "a|b|c", -1 if absent ("-" entries are placeholders that never match). */
static int choice_index(const char *choices, const char *value) {
  int idx = 0;
  const char *p = choices;
  size_t n = strlen(value);
  while (*p) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len == n && strncmp(p, value, n) == 0 && strcmp(value, "-") != 0) return idx;
    idx++;
    if (!bar) break;
    p = bar + 1;
  }
  return -1;
}

static const char *choice_name(const char *choices, int idx, char *buf, size_t n) {
  const char *p = choices;
  for (int i = 0; i < idx && p; i++) {
    p = strchr(p, '|');
    if (p) p++;
  }
  if (!p) return "?";
  const char *bar = strchr(p, '|');
  size_t len = bar ? (size_t)(bar - p) : strlen(p);
  if (len >= n) len = n - 1;
  memcpy(buf, p, len);
  buf[len] = 0;
  return buf;
}

/* The enum keys whose choices are another table's rows (registry.c): choice i's stored value, -1 past the end. */
typedef int (*choice_fn)(int i, const char **name);
static const struct {
  const char *key;
  choice_fn choice;
} TABLE_ENUMS[] = {{"device", registry_device_choice}, {"comm", registry_comm_choice}};

static choice_fn key_table(const key_spec *k) {
  for (size_t i = 0; i < sizeof TABLE_ENUMS / sizeof TABLE_ENUMS[0]; i++)
    if (strcmp(TABLE_ENUMS[i].key, k->key) == 0) return TABLE_ENUMS[i].choice;
  return NULL;
}

/* k's choices as "a|b|c": its own string, or its table's names. */
static const char *key_choices(const key_spec *k, char *buf, size_t n) {
  choice_fn choice = key_table(k);
  if (!choice) return k->choices;
  const char *name;
  size_t o = 0;
  buf[0] = 0;
  for (int i = 0; choice(i, &name) >= 0; i++) o += (size_t)snprintf(buf + o, o < n ? n - o : 0, "%s%s", i ? "|" : "", name);
  return buf;
}

/* The value stored for `value` among k's choices, -1 when it is none of them. */
static int key_choice_value(const key_spec *k, const char *value) {
  choice_fn choice = key_table(k);
  if (!choice) return choice_index(k->choices, value);
  const char *name;
  for (int i = 0, v; (v = choice(i, &name)) >= 0; i++)
    if (strcmp(name, value) == 0) return v;
  return -1;
}

static const char *key_choice_name(const key_spec *k, int v, char *buf, size_t n) {
  choice_fn choice = key_table(k);
  if (!choice) return choice_name(k->choices, v, buf, n);
  const char *name;
  for (int i = 0, w; (w = choice(i, &name)) >= 0; i++)
    if (w == v) return snprintf(buf, n, "%s", name), buf;
  return snprintf(buf, n, "?"), buf;
}

static void choices_human(const char *choices, char *buf, size_t n) {
  size_t o = 0;
  buf[0] = 0;
  for (const char *p = choices; *p && o + 2 < n;) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (!(len == 1 && *p == '-')) {
      if (o) buf[o++] = '|';
      if (o + len >= n) break;
      memcpy(buf + o, p, len);
      o += len;
      buf[o] = 0;
    }
    if (!bar) break;
    p = bar + 1;
  }
}

static ddp_result bad(char *err, size_t errn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static ddp_result bad(char *err, size_t errn, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errn, fmt, ap);
  va_end(ap);
  return DDP_ERR_USAGE;
}

/* Sets key from text; on bad input writes "WHERE: message" into err and returns DDP_ERR_USAGE. */
static ddp_result key_set(ddp_config *cfg, const char *key, const char *value, const char *where, char *err,
                          size_t errn) {
  const key_spec *k = key_find(key);
  if (!k) return bad(err, errn, "%s: unknown key '%s' (ddpbench --help lists them)", where, key);
  char *field = (char *)cfg + k->offset;
  char *end = NULL;
  errno = 0;
  switch (k->type) {
    case T_INT: {
      long v = strtol(value, &end, 10);
      if (end == value || *end || errno)
        return bad(err, errn, "%s: %s must be an integer, got '%s'", where, k->key, value);
      if (v < (long)k->min || v > (long)k->max)
        return bad(err, errn, "%s: %s must be in [%.0f, %.0f], got %ld", where, k->key, k->min, k->max, v);
      *(int *)field = (int)v;
      break;
    }
    case T_U64: {
      if (value[0] == '-') return bad(err, errn, "%s: %s must be a non-negative integer, got '%s'", where, k->key, value);
      unsigned long long v = strtoull(value, &end, 0);
      if (end == value || *end || errno)
        return bad(err, errn, "%s: %s must be a non-negative integer, got '%s'", where, k->key, value);
      *(unsigned long long *)field = v;
      break;
    }
    case T_DOUBLE: {
      double v = strtod(value, &end);
      if (end == value || *end || errno || !isfinite(v))
        return bad(err, errn, "%s: %s must be a number, got '%s'", where, k->key, value);
      if (v < k->min || v > k->max)
        return bad(err, errn, "%s: %s must be in [%g, %g], got %g", where, k->key, k->min, k->max, v);
      *(double *)field = v;
      break;
    }
    case T_BOOL: {
      static const char *yes[] = {"1", "true", "yes", "on"}, *no[] = {"0", "false", "no", "off"};
      int v = -1;
      for (int i = 0; i < 4; i++) {
        if (strcasecmp(value, yes[i]) == 0) v = 1;
        if (strcasecmp(value, no[i]) == 0) v = 0;
      }
      if (v < 0) return bad(err, errn, "%s: %s must be true or false, got '%s'", where, k->key, value);
      *(int *)field = v;
      break;
    }
    case T_ENUM: {
      int v = key_choice_value(k, value);
      if (v < 0) {
        char list[128], all[128];
        choices_human(key_choices(k, all, sizeof all), list, sizeof list);
        return bad(err, errn, "%s: %s must be one of %s, got '%s'", where, k->key, list, value);
      }
      *(int *)field = v;
      break;
    }
    case T_STR:
      if (strlen(value) >= k->size)
        return bad(err, errn, "%s: %s is longer than %zu characters", where, k->key, k->size - 1);
      strcpy(field, value);
      break;
  }
  return DDP_OK;
}

/* Records that a key came from the user (file or command line), not from the table's default. */
static void key_mark_given(ddp_config *cfg, const char *key) {
  const key_spec *k = key_find(key);
  if (k) cfg->given |= 1ull << (k - KEYS);
}

int config_given(const ddp_config *cfg, const char *key) {
  const key_spec *k = key_find(key);
  return k && (cfg->given >> (k - KEYS) & 1u);
}

ddp_result config_set(ddp_config *cfg, const char *key, const char *value, const char *where) {
  char err[512];
  ddp_result r = key_set(cfg, key, value, where, err, sizeof err);
  if (r != DDP_OK) ddp_usage_error("%s", err);
  else key_mark_given(cfg, key);
  return r;
}

void config_defaults(ddp_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  char err[256];
  for (int i = 0; i < NKEYS; i++) {
    ddp_result r = key_set(cfg, KEYS[i].key, KEYS[i].def, "default", err, sizeof err);
    (void)r; /* defaults are valid by construction; test_config checks every one */
    cfg->source[i] = CONFIG_SRC_DEFAULT;
  }
}

const char *precision_name(ddp_precision p) {
  static const char *n[] = {"fp32", "tf32", "bf16", "fp16"};
  return (unsigned)p < 4 ? n[p] : "?";
}
const char *device_kind_name(ddp_device_kind d) {
  const device_entry *e = registry_device(d);
  return d == DEV_AUTO ? "auto" : e ? e->name : "?";
}
const char *comm_kind_name(ddp_comm_kind c) {
  const comm_entry *e = registry_comm(c);
  return c == COMM_AUTO ? "auto" : e ? e->name : "?";
}

scaler_cfg config_scaler(const ddp_config *cfg) {
  scaler_cfg s = {cfg->loss_scale_init, cfg->loss_scale_growth_factor, cfg->loss_scale_backoff,
                  cfg->loss_scale_growth_interval};
  return s;
}

int config_phases(const ddp_config *cfg, int order[3]) {
  int n = 0;
  char buf[sizeof cfg->phases];
  strcpy(buf, cfg->phases);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int p = 0;
    while (p < PHASE_COUNT && strcmp(tok, phase_name((ddp_phase)p)) != 0) p++; /* the one list of names */
    if (p == PHASE_COUNT) return -1;
    int seen = 0;
    for (int i = 0; i < n; i++) seen |= order[i] == p;
    if (!seen) order[n++] = p;
  }
  return n;
}

int config_groups(const ddp_config *cfg, int kinds[], int ks[], int max) {
  static const char *names[] = {"world", "node", "pairs"};
  int n = 0;
  char buf[sizeof cfg->groups];
  strcpy(buf, cfg->groups);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int kind = -1, k = 0;
    for (int i = 0; i < 3; i++)
      if (strcmp(tok, names[i]) == 0) kind = i;
    if (kind < 0 && strncmp(tok, "first:", 6) == 0) {
      char *end = NULL;
      long v = strtol(tok + 6, &end, 10);
      if (end != tok + 6 && !*end && v >= 1 && v <= INT_MAX) kind = 3, k = (int)v;
    }
    if (kind < 0) return -1;
    int seen = 0;
    for (int i = 0; i < n; i++) seen |= kinds[i] == kind && ks[i] == k;
    if (!seen && n < max) kinds[n] = kind, ks[n++] = k;
  }
  return n;
}

/* ---- where each value came from ----------------------------------------------------------------- */
static void key_mark(ddp_config *cfg, const char *key, int src, int line) {
  const key_spec *k = key_find(key);
  if (!k) return;
  cfg->source[k - KEYS] = (signed char)src;
  cfg->source_line[k - KEYS] = line;
}

const char *config_where(const ddp_config *cfg, const char *key, char *buf, size_t n) {
  const key_spec *k = key_find(key);
  int i = k ? (int)(k - KEYS) : -1;
  if (i < 0 || cfg->source[i] == CONFIG_SRC_DEFAULT) return NULL;
  if (cfg->source[i] == CONFIG_SRC_FILE) {
    snprintf(buf, n, "%s:%d", cfg->config_file, cfg->source_line[i]);
  } else {
    snprintf(buf, n, "--%s", key);
    for (char *p = buf; *p; p++)
      if (*p == '_') *p = '-';
  }
  return buf;
}

/* A cross-key error, prefixed with where the first of the named keys that the user set came from (the file
 * and line, or the option): "cfg.ini:7: loss_scale_growth_factor must be ...". */
static ddp_result invalid(const ddp_config *cfg, const char *key1, const char *key2, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static ddp_result invalid(const ddp_config *cfg, const char *key1, const char *key2, const char *fmt, ...) {
  char msg[600], wbuf[1100];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *w = config_where(cfg, key1, wbuf, sizeof wbuf);
  if (!w && key2) w = config_where(cfg, key2, wbuf, sizeof wbuf);
  return w ? ddp_usage_error("%s: %s", w, msg) : ddp_usage_error("%s", msg);
}

/* a * b, or UINT64_MAX when it overflows. */
static uint64_t mul_sat(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

static double host_memory_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page : 0;
}

ddp_result config_validate(const ddp_config *cfg) {
  if (cfg->bucket_mb * 1048576.0 < 1024.0)
    return invalid(cfg, "bucket_mb", NULL, "bucket_mb must be at least 1 KiB (%g MiB), got %g", 1.0 / 1024,
                   cfg->bucket_mb);
  if (cfg->first_bucket_mb * 1048576.0 < 1024.0)
    return invalid(cfg, "first_bucket_mb", NULL, "first_bucket_mb must be at least 1 KiB (%g MiB), got %g",
                   1.0 / 1024, cfg->first_bucket_mb);
  if (cfg->loss_scale_growth_factor <= 1.0)
    return invalid(cfg, "loss_scale_growth_factor", NULL, "loss_scale_growth_factor must be greater than 1, got %g",
                   cfg->loss_scale_growth_factor);
  if (cfg->loss_scale_backoff <= 0.0 || cfg->loss_scale_backoff >= 1.0)
    return invalid(cfg, "loss_scale_backoff", NULL, "loss_scale_backoff must be between 0 and 1 (exclusive), got %g",
                   cfg->loss_scale_backoff);
  int order[3];
  if (config_phases(cfg, order) <= 0)
    return invalid(cfg, "phases", NULL, "phases must list local, comm and/or ddp, got '%s'", cfg->phases);
  int gk[CONFIG_MAX_GROUPS], gn[CONFIG_MAX_GROUPS];
  if (config_groups(cfg, gk, gn, CONFIG_MAX_GROUPS) < 0)
    return invalid(cfg, "groups", NULL, "groups must list world, node, pairs and/or first:K (K >= 1), got '%s'",
                   cfg->groups);
  if (cfg->sweep && !strstr(cfg->phases, "ddp"))
    return invalid(cfg, "sweep", "phases", "sweep needs the ddp phase in phases, got '%s'", cfg->phases);
  /* What a device or comm needs comes from its registry entry (registry.c). */
  const device_entry *de = registry_device(cfg->device); /* NULL: auto */
  const comm_entry *ce = registry_comm(cfg->comm);
  if (cfg->precision == PREC_TF32 && de && !de->is_gpu)
    return invalid(cfg, "precision", "device", "precision tf32 needs a GPU device (the %s device has no tf32 arithmetic)",
                   de->name);
  if (ce && ce->needs_device && de && strcmp(ce->needs_device, de->name) != 0)
    return invalid(cfg, "comm", "device", "comm %s needs the %s device", ce->name, ce->needs_device);
  if (cfg->cuda_graph && de && !de->is_gpu) return invalid(cfg, "cuda_graph", "device", "cuda_graph needs a GPU device");
  if (cfg->inject_nonfinite >= cfg->warmup + cfg->steps)
    return invalid(cfg, "inject_nonfinite", "steps", "inject_nonfinite %d is past the last step (%d)",
                   cfg->inject_nonfinite, cfg->warmup + cfg->steps - 1);

  /* Sizes. Every product of counts in 64 bits, saturating; a count that reaches an int interface (BLAS
   * dimensions, event arrays, MPI counts) must fit in an int, and what every rank keeps per timed step must
   * fit in this machine's memory. */
  uint64_t H = (uint64_t)cfg->hidden, L = (uint64_t)cfg->layers, B = (uint64_t)cfg->batch;
  if (mul_sat(B, H) > INT_MAX)
    return invalid(cfg, "batch", "hidden", "batch x hidden (%d x %d) exceeds %d elements", cfg->batch, cfg->hidden,
                   INT_MAX);
  uint64_t params = mul_sat(L, mul_sat(H, H));
  if (mul_sat(params, 16) > (uint64_t)PTRDIFF_MAX)
    return invalid(cfg, "layers", "hidden", "layers x hidden x hidden (%d x %d x %d) is too large to address",
                   cfg->layers, cfg->hidden, cfg->hidden);
  /* The bucket plan, exactly as the engine makes it (each layer is one parameter of H x H fp32). */
  size_t *counts = malloc((size_t)cfg->layers * sizeof *counts);
  if (!counts) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int i = 0; i < cfg->layers; i++) counts[i] = (size_t)(H * H);
  bucket_plan plan;
  ddp_result r = bucket_plan_build(&plan, counts, cfg->layers, 4, (size_t)(cfg->first_bucket_mb * 1048576.0),
                                   (size_t)(cfg->bucket_mb * 1048576.0));
  free(counts);
  if (r != DDP_OK) return r;
  uint64_t nb = (uint64_t)plan.nbuckets;
  bucket_plan_free(&plan);
  uint64_t samples = mul_sat((uint64_t)cfg->steps, nb); /* timed (step, bucket) pairs: two events + one double */
  if (samples > INT_MAX)
    return invalid(cfg, "steps", "bucket_mb",
                   "steps x buckets (%d x %llu) exceeds %d timed allreduces per phase: use fewer steps or larger "
                   "buckets", cfg->steps, (unsigned long long)nb, INT_MAX);
  double need = (double)samples * 256.0, have = host_memory_bytes();
  if (have > 0 && need > have) {
    char a[32], b[32];
    return invalid(cfg, "steps", "bucket_mb",
                   "steps x buckets (%d x %llu) needs about %s of host memory for the per-allreduce timings; this "
                   "machine has %s", cfg->steps, (unsigned long long)nb, ddp_fmt_bytes(a, sizeof a, need),
                   ddp_fmt_bytes(b, sizeof b, have));
  }
  return DDP_OK;
}

uint64_t config_hash(const ddp_config *cfg) {
  char line[1200];
  uint64_t h = DDP_FNV1A64_INIT;
  const char *name;
  char value[1100];
  for (int i = 0; config_key_at(cfg, i, &name, value, sizeof value); i++) {
    int n = snprintf(line, sizeof line, "%s=%s\n", name, value);
    h = ddp_fnv1a64(line, n > 0 && (size_t)n < sizeof line ? (size_t)n : strlen(line), h);
  }
  return h;
}

/* ---- the INI file (ini_file.c hands inih whole lines only) ------------------------------------------ */
static int file_on_key(void *user, const char *section, const char *name, const char *value, int line, char *err,
                       size_t errn) {
  ddp_config *cfg = user;
  (void)section; /* sections only group keys for the reader */
  if (strcmp(name, "config") == 0) return snprintf(err, errn, "key 'config' is not allowed inside a config file"), 1;
  char why[640];
  if (key_set(cfg, name, value, "", why, sizeof why) != DDP_OK)
    return snprintf(err, errn, "%s", why + (why[0] == ':' ? 2 : 0)), 1; /* key_set's "where" is empty */
  key_mark(cfg, name, CONFIG_SRC_FILE, line);
  key_mark_given(cfg, name);
  return 0;
}

static ddp_result config_load_file(ddp_config *cfg, const char *path) {
  char err[700];
  int line = ini_file_parse_path(path, INPUT_MAX_INI, file_on_key, cfg, err, sizeof err);
  if (line < 0) return ddp_usage_error("--config %s: %s", path, err);
  if (line > 0) return ddp_usage_error("%s:%d: %s", path, line, err);
  return DDP_OK;
}

/* ---- the command line ----------------------------------------------------------------------------- */
static void option_to_key(const char *opt, char *key, size_t n) {
  size_t i = 0;
  for (; opt[i] && opt[i] != '=' && i + 1 < n; i++) key[i] = opt[i] == '-' ? '_' : opt[i];
  key[i] = 0;
}

ddp_result config_parse(ddp_config *cfg, int argc, char **argv, config_action *action) {
  *action = CONFIG_RUN;
  config_defaults(cfg);
  size_t o = 0;
  for (int i = 0; i < argc && o + 2 < sizeof cfg->command_line; i++) {
    int w = snprintf(cfg->command_line + o, sizeof cfg->command_line - o, "%s%s", i ? " " : "", argv[i]);
    if (w < 0) break;
    o += (size_t)w;
  }
  /* Pass 1: --help, --version, --config. */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      *action = CONFIG_HELP;
      return DDP_OK;
    }
    if (strcmp(argv[i], "--version") == 0) {
      *action = CONFIG_VERSION;
      return DDP_OK;
    }
    if (strncmp(argv[i], "--config", 8) == 0 && (argv[i][8] == 0 || argv[i][8] == '=')) {
      int inline_value = argv[i][8] == '=';
      const char *v = inline_value ? argv[i] + 9 : (i + 1 < argc ? argv[++i] : NULL);
      if (!v || !*v) return ddp_usage_error("--config needs a file name");
      if (!inline_value && strncmp(v, "--", 2) == 0)
        return ddp_usage_error("--config needs a file name, got the option '%s'", v);
      if (strlen(v) >= sizeof cfg->config_file)
        return ddp_usage_error("--config: file name longer than %zu characters", sizeof cfg->config_file - 1);
      snprintf(cfg->config_file, sizeof cfg->config_file, "%s", v);
    }
  }
  if (cfg->config_file[0]) DDP_TRY(config_load_file(cfg, cfg->config_file));
  /* Pass 2: every other option, in order. */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2) != 0 || a[2] == 0)
      return ddp_usage_error("unexpected argument '%s' (options are --key value; see --help)", a);
    char key[128];
    option_to_key(a + 2, key, sizeof key);
    if (strcmp(key, "config") == 0) {
      if (!strchr(a, '=')) i++;
      continue;
    }
    const key_spec *k = key_find(key);
    char where[160];
    snprintf(where, sizeof where, "--%.*s", (int)strcspn(a + 2, "="), a + 2);
    if (!k) return ddp_usage_error("unknown option '%s' (ddpbench --help lists them)", where);
    const char *eq = strchr(a, '=');
    const char *value;
    if (eq) {
      value = eq + 1;
    } else if (k->type == T_BOOL) {
      value = "true"; /* a bare boolean switch turns it on */
    } else {
      if (i + 1 >= argc) return ddp_usage_error("%s needs a value", where);
      value = argv[++i];
      /* "--json --force" would otherwise create a file named --force */
      if (strncmp(value, "--", 2) == 0 && value[2] != 0)
        return ddp_usage_error("%s needs a value, got the option '%s' (write %s=%s if you mean it)", where, value,
                               where, value);
    }
    DDP_TRY(config_set(cfg, key, value, where));
    key_mark(cfg, key, CONFIG_SRC_CLI, 0);
  }
  /* PyTorch: an explicit bucket_cap_mb caps the first bucket too (no 1 MiB bucket). */
  if (config_given(cfg, "bucket_mb") && !config_given(cfg, "first_bucket_mb")) cfg->first_bucket_mb = cfg->bucket_mb;
  DDP_TRY(config_validate(cfg));
  return DDP_OK;
}

int config_key_at(const ddp_config *cfg, int i, const char **name, char *value, size_t n) {
  if (i < 0 || i >= NKEYS) return 0;
  const key_spec *k = &KEYS[i];
  const char *field = (const char *)cfg + k->offset;
  *name = k->key;
  switch (k->type) {
    case T_INT: snprintf(value, n, "%d", *(const int *)field); break;
    case T_U64: snprintf(value, n, "%llu", *(const unsigned long long *)field); break;
    case T_DOUBLE: /* the shortest text that reads back to the same double */
      for (int prec = 15; prec <= 17; prec++) {
        snprintf(value, n, "%.*g", prec, *(const double *)field);
        if (strtod(value, NULL) == *(const double *)field) break;
      }
      break;
    case T_BOOL: snprintf(value, n, "%s", *(const int *)field ? "true" : "false"); break;
    case T_ENUM: key_choice_name(k, *(const int *)field, value, n); break;
    case T_STR: snprintf(value, n, "%s", field); break;
  }
  return 1;
}

void config_print_help(FILE *out) {
  fprintf(out,
          "usage: mpirun -np N ddpbench [--config FILE] [--key value ...]\n"
          "       ddpbench topo [--hwloc-xml FILE] [--pcie]      topology report of this (or a saved) machine\n"
          "       mpirun -np N ddpbench doctor                    environment and topology checks only\n"
          "       ddpbench compare A.json ... -- B.json ...       A/B of result files (see compare --help)\n"
          "       mpirun -np N ddpbench accept [--json F]         per-GPU, node and node-pair acceptance checks\n"
          "       mpirun -np N ddpbench collectives [...]         the nccl-tests sweep (see collectives --help)\n"
          "       ddpbench export RESULT.json --prom F --csv F    a result file as a node_exporter textfile / CSV\n"
          "\n"
          "Trains a synthetic L-layer ReLU model the way PyTorch DDP does (bucketed allreduce overlapped with\n"
          "the backward pass) in three phases - local (no communication), comm (the allreduces alone), ddp -\n"
          "and reports step times, throughput, weak-scaling efficiency and whether all ranks agree.\n"
          "Every key below can be written in the --config INI file as 'key = value' (underscores) or on the\n"
          "command line as --key value (dashes); the command line wins. Booleans: --key alone means true.\n"
          "\n");
  for (int i = 0; i < NKEYS; i++) {
    char opt[64], def[160];
    snprintf(opt, sizeof opt, "--%s", KEYS[i].key);
    for (char *p = opt; *p; p++)
      if (*p == '_') *p = '-';
    if (KEYS[i].type == T_ENUM) {
      char list[128], all[128];
      choices_human(key_choices(&KEYS[i], all, sizeof all), list, sizeof list);
      snprintf(def, sizeof def, "%s (default %s)", list, KEYS[i].def);
    } else {
      snprintf(def, sizeof def, "(default %s)", KEYS[i].def[0] ? KEYS[i].def : "none");
    }
    fprintf(out, "  %-30s %s %s\n", opt, KEYS[i].help, def);
  }
  fprintf(out,
          "  %-30s %s\n  %-30s %s\n  %-30s %s\n\n"
          "Exit codes: 0 success, 1 verification failed (ranks disagree), 2 bad input, 3 runtime error or timeout,\n"
          "4 an acceptance check failed (a straggler, a GPU CUDA cannot use; --strict: or a warning), 5 non-finite\n"
          "weights or loss, 130/143 SIGINT/SIGTERM. An output file is replaced only with --force, only if it is a\n"
          "regular file (never a symbolic link, device or FIFO).\n",
          "--config FILE", "read keys from an INI file first", "--help", "this text", "--version",
          "print the version and exit");
}
