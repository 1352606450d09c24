/* collectives.c: `ddpbench collectives`, the nccl-tests sweep through the comm interface.
 *
 * Per collective, type, op and size, and per placement (out-of-place, then in-place), in nccl-tests' order:
 * fill the buffers (when checking), warm up, barrier, time `-n` back-to-back calls with the host clock
 * (nccl-tests' figure: the `time` column, combined across ranks by `-a`) while events between the calls
 * give each iteration's time (its slowest rank's is the sample for median/p10/p90), then check `-c` times
 * on fresh data, untimed: fill on the host, one collective, copy back, compare every element with the
 * value it must have. Inputs are small integers chosen so that every reduction is exact in the type in any
 * order (avg: within 2 ULP in floating types, as nccl-tests allows), and each expected element is computed
 * in O(1). Each call's buffers shift through the allocation as nccl-tests' do. With `-G k` the `-n` calls
 * are captured in one CUDA graph that is launched k times. With `--under-load gemm[:H]` the out-of-place
 * collective is also timed while a GEMM loop runs on a second stream, and the GEMM's rate is measured
 * alone and beside it: both figures come from the items that ran wholly inside the time both loops ran.
 * With `--group node|pairs` the sweep runs over measure.h's groups, each group's tables printed by world
 * rank 0 in order. Rank 0 turns the rows into records of the result model and wrong data into findings.
 *
 * Measuring, reducing across ranks and printing are separate passes; only rank 0 prints. Nothing here
 * waits without a timeout: every wait polls the stream and the comm's asynchronous error. Runtime errors
 * go up to collectives_main, which ends the job with dist_abort. Result files go through atomic_file.
 *
 * In order: names and nccl-tests' accounting; the option table; exact data; timing, the data check and the
 * load (time_row, check_row, load_row); one row across ranks (run_row); printing; the result model; set-up;
 * the sweep and its groups; the measurement; collectives_main. */
#include "collectives.h"

#include <cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "stats.h"
#include "testhooks.h"
#include "watchdog.h"

/* ---- names and nccl-tests' accounting ------------------------------------------------------------ */
static const char *const COLL_NAMES[COLL_COUNT] = {"allreduce", "reduce_scatter", "all_gather", "broadcast",
                                                   "alltoall"};
static const char *const REDOP_NAMES[REDOP_COUNT] = {"sum", "prod", "max", "min", "avg"};

const char *coll_name(ddp_coll_kind k) { return (unsigned)k < COLL_COUNT ? COLL_NAMES[k] : "?"; }
const char *redop_name(ddp_redop op) { return (unsigned)op < REDOP_COUNT ? REDOP_NAMES[op] : "?"; }

coll_sizes coll_sizes_for(ddp_coll_kind kind, size_t bytes, size_t es, int n) {
  coll_sizes z;
  memset(&z, 0, sizeof z);
  size_t count = bytes / es, per = count / (size_t)n;
  switch (kind) {
    case COLL_ALLREDUCE:
      z.count = z.send_count = z.recv_count = count;
      z.base_bytes = (double)count * es;
      z.bus_factor = 2.0 * (n - 1) / n;
      break;
    case COLL_REDUCE_SCATTER:
      z.count = z.recv_count = per;
      z.send_count = per * n;
      z.base_bytes = (double)per * es * n;
      z.bus_factor = (double)(n - 1) / n;
      break;
    case COLL_ALL_GATHER:
      z.count = z.send_count = per;
      z.recv_count = per * n;
      z.base_bytes = (double)per * es * n;
      z.bus_factor = (double)(n - 1) / n;
      break;
    case COLL_ALLTOALL:
      z.count = per;
      z.send_count = z.recv_count = per * n;
      z.base_bytes = (double)per * n * es;
      z.bus_factor = (double)(n - 1) / n;
      break;
    default: /* broadcast */
      z.count = z.send_count = z.recv_count = count;
      z.base_bytes = (double)count * es;
      z.bus_factor = 1.0;
      break;
  }
  z.size_bytes = (z.send_count > z.recv_count ? z.send_count : z.recv_count) * es;
  return z;
}

/* ---- options ------------------------------------------------------------------------------------------ */
typedef enum { AGG_RANK0 = 0, AGG_AVG, AGG_MIN, AGG_MAX } agg_mode;

typedef struct {
  char names[256];              /* the operands: collective names, comma-separated */
  int colls[COLL_COUNT], ncoll; /* from names */
  size_t min_bytes, max_bytes, step_bytes;
  int step_factor, iters, warmup, check, root, graph, cycles, average;
  char dtype[32], op[16], under_load[32];
  int dtypes[DT_COUNT], ndtype; /* -d: one, or all */
  int ops[REDOP_COUNT], nop;    /* -o: one, or all */
  double timeout;               /* seconds */
  int load_h;                   /* --under-load gemm[:H]: 0 off, -1 default H */
  int group;                    /* 0 world, 1 each node, 2 node pairs */
  int fixed[4];                 /* -t, -g, -m, -z: accepted at their only supported value */
} coll_opts;

static int parse_agg(void *field, const char *v, char *err, size_t n) {
  static const char *names[] = {"rank0", "avg", "min", "max"};
  for (int i = 0; i < 4; i++)
    if (strcasecmp(v, names[i]) == 0 || (v[0] == '0' + i && !v[1])) return *(int *)field = i, 0;
  if (strcasecmp(v, "average") == 0) return *(int *)field = AGG_AVG, 0;
  snprintf(n ? err : err, n, "0|rank0, 1|avg, 2|min or 3|max");
  return -1;
}
static void format_agg(const void *field, char *out, size_t n) {
  static const char *names[] = {"rank0", "avg", "min", "max"};
  snprintf(out, n, "%s", names[*(const int *)field & 3]);
}

#define OO(f) offsetof(coll_opts, f), 0
#define OS(f) offsetof(coll_opts, f), sizeof(((coll_opts *)0)->f)
static const opt_spec SWEEP[] = {
    {"collectives", NULL, 0, OPT_STR, OS(names), "allreduce", .arg = "LIST",
     .help = "allreduce, reduce_scatter, all_gather, broadcast, alltoall or all (the words after the subcommand)",
     .flags = OPT_OPERANDS},
    {"minbytes", "min_bytes", 'b', OPT_SIZE, OO(min_bytes), "32M", .help = "smallest size in bytes (K/M/G: 1024-based)"},
    {"maxbytes", "max_bytes", 'e', OPT_SIZE, OO(max_bytes), "32M", .help = "largest size in bytes"},
    {"stepbytes", "step_bytes", 'i', OPT_SIZE, OO(step_bytes), "1M", .help = "additive step (when -f is not given)"},
    {"stepfactor", "step_factor", 'f', OPT_INT, OO(step_factor), "1", 0, 1 << 20, .help = "multiplicative step (>= 2)"},
    {"iters", NULL, 'n', OPT_INT, OO(iters), "20", 1, 1 << 24, .help = "timed iterations per size"},
    {"warmup_iters", "warmup", 'w', OPT_INT, OO(warmup), "1", 0, 1 << 24, .help = "untimed iterations per size"},
    {"check", NULL, 'c', OPT_INT, OO(check), "1", 0, 1 << 20, .help = "data checks per size and placement (0 = none)"},
    {"datatype", "dtype", 'd', OPT_STR, OS(dtype), "float", .arg = "TYPE",
     .help = "float|half|bfloat16|double|int8|uint8|int32|uint32|int64|uint64|all"},
    {"op", NULL, 'o', OPT_STR, OS(op), "sum", .arg = "OP", .help = "sum|prod|max|min|avg|all (allreduce, reduce_scatter)"},
    {"root", NULL, 'r', OPT_INT, OO(root), "0", 0, 1 << 30, .help = "root of broadcast"},
    {"average", NULL, 'a', OPT_CUSTOM, OO(average), "1", .parse = parse_agg, .format = format_agg, .arg = "MODE",
     .help = "time across ranks: 0|rank0, 1|avg, 2|min, 3|max"},
    {"cudagraph", "cuda_graph", 'G', OPT_INT, OO(graph), "0", 0, 1 << 20,
     .help = "capture the -n calls in a CUDA graph, launch it N times"},
    {"run_cycles", "cycles", 'N', OPT_INT, OO(cycles), "1", 0, 1 << 30, .help = "repeat the whole sweep N times (0 = forever)"},
    {"timeout", NULL, 'T', OPT_DOUBLE, OO(timeout), "300", 0, 1e9, .arg = "SECONDS",
     .help = "seconds a wait may last before the job is aborted (0 = never)"},
    {"group", NULL, 0, OPT_ENUM, OO(group), "world", .choices = "world|node|pairs",
     .help = "the sweep on all ranks, on each node, or on node pairs"},
    {"under_load", NULL, 0, OPT_STR, OS(under_load), "", .arg = "gemm[:H]",
     .help = "also time it beside a bf16 HxHxH GEMM loop (H: 8192 on a GPU, 256 on cpu)"},
    /* nccl-tests options whose only value here is their default (scripts pass them out of habit) */
    {"nthreads", NULL, 't', OPT_INT, OO(fixed[0]), "1", 1, 1, .help = "threads per process: 1 (one rank per GPU)", .flags = OPT_HIDDEN},
    {"ngpus", NULL, 'g', OPT_INT, OO(fixed[1]), "1", 1, 1, .help = "GPUs per thread: 1 (one rank per GPU)", .flags = OPT_HIDDEN},
    {"agg_iters", NULL, 'm', OPT_INT, OO(fixed[2]), "1", 1, 1, .help = "calls per group: 1", .flags = OPT_HIDDEN},
    {"blocking", NULL, 'z', OPT_INT, OO(fixed[3]), "0", 0, 0, .help = "blocking calls: 0", .flags = OPT_HIDDEN},
};
static const opt_table COLL_TABLE = {"the sweep (nccl-tests' options)", SWEEP, (int)(sizeof SWEEP / sizeof SWEEP[0])};

static ddp_result coll_tables(opt_set *s, void *args) { return opt_set_add(s, &COLL_TABLE, args); }

static double coll_timeout(const void *args) {
  double t = ((const coll_opts *)args)->timeout;
  return t > 0 ? t + 30 : 0; /* the watchdog backs up -T: the waits here end the job themselves after -T s */
}

static int parse_dtype(const char *v, ddp_dtype *out) {
  static const struct { const char *name; ddp_dtype t; } T[] = {
      {"float", DT_F32},   {"float32", DT_F32}, {"fp32", DT_F32},   {"half", DT_F16},    {"float16", DT_F16},
      {"fp16", DT_F16},    {"bfloat16", DT_BF16}, {"bf16", DT_BF16}, {"double", DT_F64},  {"float64", DT_F64},
      {"fp64", DT_F64},    {"int8", DT_I8},     {"char", DT_I8},    {"uint8", DT_U8},    {"int32", DT_I32},
      {"int", DT_I32},     {"uint32", DT_U32},  {"int64", DT_I64},  {"uint64", DT_U64}};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
    if (strcasecmp(v, T[i].name) == 0) return *out = T[i].t, 1;
  return 0;
}

static int parse_coll(const char *v, int *kind) {
  static const struct { const char *name; int k; } T[] = {
      {"allreduce", COLL_ALLREDUCE},          {"all_reduce", COLL_ALLREDUCE},    {"all-reduce", COLL_ALLREDUCE},
      {"reduce_scatter", COLL_REDUCE_SCATTER}, {"reducescatter", COLL_REDUCE_SCATTER},
      {"reduce-scatter", COLL_REDUCE_SCATTER}, {"all_gather", COLL_ALL_GATHER}, {"allgather", COLL_ALL_GATHER},
      {"all-gather", COLL_ALL_GATHER},         {"broadcast", COLL_BROADCAST},    {"bcast", COLL_BROADCAST},
      {"alltoall", COLL_ALLTOALL},             {"all_to_all", COLL_ALLTOALL},    {"all-to-all", COLL_ALLTOALL}};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
    if (strcasecmp(v, T[i].name) == 0) return *kind = T[i].k, 1;
  return 0;
}

/* The option behind a key, for messages: -b/--minbytes. */
static const char *optname(const char *key, char *buf, size_t n) {
  for (size_t i = 0; i < sizeof SWEEP / sizeof SWEEP[0]; i++)
    if (!strcmp(SWEEP[i].key, key)) {
      if (SWEEP[i].shrt) snprintf(buf, n, "-%c/--%s", SWEEP[i].shrt, key);
      else snprintf(buf, n, "--%s", key);
      for (char *p = buf; *p; p++)
        if (*p == '_') *p = '-';
      return buf;
    }
  return key;
}

/* The lists and the checks across keys (every rank, before MPI starts). */
static ddp_result coll_validate(cmd_ctx *c) {
  coll_opts *o = c->args;
  char b1[64], b2[64];
  o->ncoll = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", o->names);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!strcasecmp(tok, "all")) {
      o->ncoll = 0;
      for (int k = 0; k < COLL_COUNT; k++) o->colls[o->ncoll++] = k;
      continue;
    }
    int k;
    if (!parse_coll(tok, &k))
      return ddp_usage_error("collectives: unknown collective '%s' (allreduce, reduce_scatter, all_gather, "
                             "broadcast, alltoall or all)", tok);
    int seen = 0;
    for (int j = 0; j < o->ncoll; j++) seen |= o->colls[j] == k;
    if (!seen) o->colls[o->ncoll++] = k;
  }
  if (!o->ncoll) o->colls[o->ncoll++] = COLL_ALLREDUCE;
  o->ndtype = 0;
  if (!strcasecmp(o->dtype, "all")) {
    for (int t = 0; t < DT_COUNT; t++) o->dtypes[o->ndtype++] = t;
  } else {
    ddp_dtype t;
    if (!parse_dtype(o->dtype, &t))
      return ddp_usage_error("collectives: %s must be one of %s, got '%s'", optname("datatype", b1, sizeof b1),
                             SWEEP[8].help, o->dtype);
    o->dtypes[o->ndtype++] = t;
  }
  o->nop = 0;
  if (!strcasecmp(o->op, "all")) {
    for (int p = 0; p < REDOP_COUNT; p++) o->ops[o->nop++] = p;
  } else {
    int p = 0;
    while (p < REDOP_COUNT && strcasecmp(o->op, redop_name((ddp_redop)p)) != 0) p++;
    if (p == REDOP_COUNT)
      return ddp_usage_error("collectives: %s must be one of sum|prod|max|min|avg|all, got '%s'", optname("op", b1, sizeof b1), o->op);
    o->ops[o->nop++] = p;
  }
  const char *v = o->under_load;
  char *end = NULL;
  if (!*v || !strcmp(v, "none")) {
    o->load_h = 0;
  } else if (!strcmp(v, "gemm")) {
    o->load_h = -1;
  } else if (!strncmp(v, "gemm:", 5)) {
    long h = strtol(v + 5, &end, 10);
    if (end == v + 5 || *end || h < 16 || h > 65536)
      return ddp_usage_error("collectives: --under-load gemm:H needs H in [16, 65536], got '%s'", v);
    o->load_h = (int)h;
  } else {
    return ddp_usage_error("collectives: --under-load must be gemm or gemm:H, got '%s'", v);
  }
  int set_factor = opt_given(&c->opts, "stepfactor"), set_step = opt_given(&c->opts, "stepbytes");
  if (o->min_bytes > o->max_bytes)
    return ddp_usage_error("collectives: %s (%zu) is greater than %s (%zu)", optname("minbytes", b1, sizeof b1),
                           o->min_bytes, optname("maxbytes", b2, sizeof b2), o->max_bytes);
  if (set_factor && o->step_factor < 2 && !set_step)
    return ddp_usage_error("collectives: -f/--stepfactor must be at least 2 (got %d); for additive steps give "
                           "-i/--stepbytes instead", o->step_factor);
  int mult = o->step_factor >= 2;
  if (mult && o->min_bytes == 0 && o->max_bytes > 0)
    return ddp_usage_error("collectives: -b/--minbytes must be > 0 with -f/--stepfactor");
  if (!mult && o->step_bytes == 0 && o->max_bytes > o->min_bytes)
    return ddp_usage_error("collectives: -i/--stepbytes must be > 0");
  for (int d = 0; d < o->ndtype; d++) {
    size_t es = dtype_size((ddp_dtype)o->dtypes[d]);
    const char *bad = o->min_bytes % es ? "-b/--minbytes" : o->max_bytes % es ? "-e/--maxbytes"
                      : !mult && o->step_bytes % es ? "-i/--stepbytes" : NULL;
    if (bad)
      return ddp_usage_error("collectives: %s is not a multiple of the %s element size (%zu bytes)", bad,
                             dtype_name((ddp_dtype)o->dtypes[d]), es);
  }
  const device_entry *de = device_chosen(c->want.device);
  if (o->graph && de && !de->is_gpu) return ddp_usage_error("collectives: -G/--cudagraph needs a GPU device");
  if (o->group && o->cycles == 0)
    return ddp_usage_error("collectives: -N/--run_cycles 0 (forever) runs on the whole world only, not with --group");
  return DDP_OK;
}

/* ---- exact data -------------------------------------------------------------------------------------
 * Every value is a small non-negative integer, exact in every type. Reductions (v = what rank r sends at
 * element i, h = a hash of (seed, i) in [0, K]):
 *   sum: v = h + r % 3 (or, when n is too large for the type, only rank i % n sends h, the rest 0)
 *   prod: rank i % n sends h + 1, the rest 1       max, min: v = h + r % 3
 *   avg: ranks i % n and i % n + 1 send h + 1 and h', the rest 0 (as nccl-tests: two non-zero terms)
 * so that the exact result is known in O(1) and any order of evaluation gives it. Data movement: rank r's
 * element p is g(seed, r, p) in [0, min(limit, 1000)]. */
typedef struct {
  ddp_coll_kind kind;
  ddp_redop op;
  ddp_dtype dt;
  int n, rank, root;
  size_t count;
  uint64_t seed;
  long K;
  int sparse;
  long c3; /* sum over r < n of r % 3 */
} data_spec;

static long dtype_limit(ddp_dtype t) {
  switch (t) {
    case DT_BF16: return 256;
    case DT_F16: return 2048;
    case DT_I8: return 127;
    case DT_U8: return 255;
    default: return 1L << 24;
  }
}

static long hval(uint64_t seed, uint64_t i, long K) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + i + 1;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return (long)(((x >> 32) * (uint64_t)(K + 1)) >> 32);
}

static void data_init(data_spec *d, ddp_coll_kind kind, ddp_redop op, ddp_dtype dt, int n, int rank, int root,
                      size_t count, uint64_t seed) {
  memset(d, 0, sizeof *d);
  d->kind = kind;
  d->op = coll_is_reduction(kind) ? op : REDOP_SUM;
  d->dt = dt;
  d->n = n;
  d->rank = rank;
  d->root = root;
  d->count = count;
  d->seed = seed;
  long lim = dtype_limit(dt);
  if (!coll_is_reduction(kind)) {
    d->K = lim < 1000 ? lim : 1000;
  } else if (d->op == REDOP_SUM) {
    d->K = lim / n - 3;
    if (d->K > 1000) d->K = 1000;
    if (d->K < 1) d->sparse = 1, d->K = lim < 1000 ? lim : 1000;
  } else if (d->op == REDOP_AVG) {
    d->K = lim / 2 - 1 < 1000 ? lim / 2 - 1 : 1000;
  } else {
    d->K = lim - 3 < 100 ? lim - 3 : 100;
  }
  for (int r = 0; r < n; r++) d->c3 += r % 3;
}

/* Rank r's reduction input at global element i. */
static long red_in(const data_spec *d, int r, uint64_t i) {
  long h = hval(d->seed, i, d->K);
  int c = (int)(i % (uint64_t)d->n);
  switch (d->op) {
    case REDOP_SUM: return d->sparse ? (r == c ? h : 0) : h + r % 3;
    case REDOP_PROD: return r == c ? h + 1 : 1;
    case REDOP_AVG:
      return r == c ? h + 1 : (d->n > 1 && r == (c + 1) % d->n) ? hval(d->seed ^ 0x5bd1e995, i, d->K) : 0;
    default: return h + r % 3;
  }
}

/* The exact reduction at global element i (avg: the sum; the caller divides). */
static long red_out(const data_spec *d, uint64_t i) {
  long h = hval(d->seed, i, d->K);
  switch (d->op) {
    case REDOP_SUM: return d->sparse ? h : (long)d->n * h + d->c3;
    case REDOP_PROD: return h + 1;
    case REDOP_MAX: return h + (d->n >= 3 ? 2 : d->n - 1);
    case REDOP_MIN: return h;
    default: return h + 1 + (d->n > 1 ? hval(d->seed ^ 0x5bd1e995, i, d->K) : 0);
  }
}

static long move_val(const data_spec *d, int r, uint64_t p) { return hval(d->seed ^ ((uint64_t)(r + 1) << 40), p, d->K); }

static void store_int(void *p, ddp_dtype t, size_t i, long v) {
  switch (t) {
    case DT_F32: ((float *)p)[i] = (float)v; break;
    case DT_F64: ((double *)p)[i] = (double)v; break;
    case DT_BF16: ((uint16_t *)p)[i] = bf16_from_f32((float)v); break;
    case DT_F16: ((uint16_t *)p)[i] = fp16_from_f32((float)v); break;
    case DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DT_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case DT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: ((uint64_t *)p)[i] = (uint64_t)v; break;
  }
}

static double load_num(const void *p, ddp_dtype t, size_t i) {
  switch (t) {
    case DT_F32: return ((const float *)p)[i];
    case DT_F64: return ((const double *)p)[i];
    case DT_BF16: return bf16_to_f32(((const uint16_t *)p)[i]);
    case DT_F16: return fp16_to_f32(((const uint16_t *)p)[i]);
    case DT_I8: return ((const int8_t *)p)[i];
    case DT_U8: return ((const uint8_t *)p)[i];
    case DT_I32: return ((const int32_t *)p)[i];
    case DT_U32: return ((const uint32_t *)p)[i];
    case DT_I64: return (double)((const int64_t *)p)[i];
    default: return (double)((const uint64_t *)p)[i];
  }
}

static int is_float(ddp_dtype t) { return t == DT_F32 || t == DT_F64 || t == DT_BF16 || t == DT_F16; }

/* Expected element k of this rank's receive buffer, stored into out[0] in the buffer's type. */
static void expect_at(const data_spec *d, size_t k, void *out) {
  int r = d->rank;
  size_t q = d->count ? k % d->count : 0, j = d->count ? k / d->count : 0;
  switch (d->kind) {
    case COLL_ALLREDUCE:
    case COLL_REDUCE_SCATTER: {
      uint64_t i = d->kind == COLL_ALLREDUCE ? k : (uint64_t)r * d->count + k;
      long v = red_out(d, i);
      if (d->op != REDOP_AVG) {
        store_int(out, d->dt, 0, v);
      } else if (!is_float(d->dt)) {
        store_int(out, d->dt, 0, v / d->n);
      } else {
        double a = (double)v / d->n;
        switch (d->dt) {
          case DT_F32: ((float *)out)[0] = (float)a; break;
          case DT_F64: ((double *)out)[0] = a; break;
          case DT_BF16: ((uint16_t *)out)[0] = bf16_from_f32((float)a); break;
          default: ((uint16_t *)out)[0] = fp16_from_f32((float)a); break;
        }
      }
      break;
    }
    case COLL_ALL_GATHER: store_int(out, d->dt, 0, move_val(d, (int)j, q)); break;
    case COLL_ALLTOALL: store_int(out, d->dt, 0, move_val(d, (int)j, (uint64_t)r * d->count + q)); break;
    default: store_int(out, d->dt, 0, move_val(d, d->root, k)); break;
  }
}

/* Bit-exact, or within 2 ULP for avg in floating types (all values are >= 0, so the bit patterns order). */
static int same(const data_spec *d, const void *got, const void *want) {
  size_t es = dtype_size(d->dt);
  if (!memcmp(got, want, es)) return 1;
  if (d->op != REDOP_AVG || !coll_is_reduction(d->kind) || !is_float(d->dt)) return 0;
  int64_t a = 0, b = 0;
  if (es == 2) a = *(const uint16_t *)got, b = *(const uint16_t *)want;
  else if (es == 4) a = *(const uint32_t *)got, b = *(const uint32_t *)want;
  else memcpy(&a, got, 8), memcpy(&b, want, 8);
  return llabs(a - b) <= 2;
}

/* ---- filling and comparing on several threads ----------------------------------------------------
 * A check touches every element on the host (nccl-tests does it on the GPU): 8 GiB is 2^31 floats, so large
 * buffers are split over threads, each a contiguous range. */
typedef struct {
  long long wrong;
  long long first; /* element of the receive buffer, -1 when none */
  double got, want;
} wrong_info;

typedef struct {
  const data_spec *ds;
  void *buf;
  size_t lo, hi;
  int compare; /* 0: fill the send buffer; 1: compare the receive buffer */
  wrong_info w;
} data_chunk;

static void *data_chunk_run(void *arg) {
  data_chunk *c = arg;
  const data_spec *d = c->ds;
  size_t es = dtype_size(d->dt);
  char want[8];
  c->w.first = -1;
  for (size_t k = c->lo; k < c->hi; k++) {
    if (!c->compare) {
      store_int(c->buf, d->dt, k, coll_is_reduction(d->kind) ? red_in(d, d->rank, k) : move_val(d, d->rank, k));
      continue;
    }
    expect_at(d, k, want);
    const char *got = (const char *)c->buf + k * es;
    if (same(d, got, want)) continue;
    if (!c->w.wrong++) {
      c->w.first = (long long)k;
      c->w.got = load_num(got, d->dt, 0);
      c->w.want = load_num(want, d->dt, 0);
    }
  }
  return NULL;
}

/* Fills buf[0, n) (compare = 0) or compares it with the expected values (compare = 1, result in *w), on up
 * to `threads` threads when n is large. */
static void data_pass(const data_spec *d, void *buf, size_t n, int compare, int threads, wrong_info *w) {
  enum { MAXT = 32 };
  if (threads > MAXT) threads = MAXT;
  if (threads < 1 || n < ((size_t)1 << 22)) threads = 1;
  data_chunk c[MAXT];
  pthread_t tid[MAXT];
  int started[MAXT] = {0};
  for (int t = 0; t < threads; t++) {
    c[t] = (data_chunk){d, buf, n * (size_t)t / (size_t)threads, n * (size_t)(t + 1) / (size_t)threads, compare, {0, -1, 0, 0}};
    started[t] = t > 0 && pthread_create(&tid[t], NULL, data_chunk_run, &c[t]) == 0;
  }
  data_chunk_run(&c[0]);
  for (int t = 1; t < threads; t++) { /* a thread that could not start runs here */
    if (started[t]) pthread_join(tid[t], NULL);
    else data_chunk_run(&c[t]);
  }
  if (!compare) return;
  memset(w, 0, sizeof *w);
  w->first = -1;
  for (int t = 0; t < threads; t++) {
    if (c[t].w.wrong && w->first < 0) w->first = c[t].w.first, w->got = c[t].w.got, w->want = c[t].w.want;
    w->wrong += c[t].w.wrong;
  }
}

/* ---- the run ------------------------------------------------------------------------------------- */
typedef struct {
  int ran;
  double time_us;      /* -a aggregate of the ranks' host-clock time per call */
  double algbw, busbw; /* from time_us, nccl-tests' formulas */
  double slowest_us;
  int slowest_rank;
  ddp_stats iter; /* per-iteration (or per graph launch / -n) time of the slowest rank, us */
  long long wrong;
  int checked;
  /* --under-load, out-of-place only */
  int load;
  double load_time_us, load_busbw, gemm_idle_tflops, gemm_load_tflops;
} place_result;

typedef struct {
  int cycle;
  ddp_coll_kind kind;
  ddp_dtype dt;
  ddp_redop op; /* REDOP_COUNT = none */
  int root;
  coll_sizes z;
  place_result pl[2];
  char group[128]; /* "world", "node 1 (host h, ranks 4-7)", ... */
} row_result;

typedef struct {
  int row, place, rank;
  char host[64];
  wrong_info w;
} wrong_record;

typedef struct {
  int rank, pid, ordinal, node, local_rank;
  double memory;
  char host[64], bus[32], name[128];
} rank_desc;

typedef struct {
  coll_opts o;
  ddp_dist dist;
  ddp_device *dev;
  ddp_comm *wcomm; /* all ranks */
  /* the group the sweep runs on: the world, a node or a node pair */
  ddp_comm *comm;
  MPI_Comm ctl;   /* the same ranks, for gathering results */
  int *gworld;    /* group rank -> world rank */
  char glabel[128];
  FILE *out;      /* where the group's leader prints its tables (stdout for the world) */
  int nodes;
  ddp_stream *s, *gs; /* collective stream, GEMM stream */
  ddp_event **ev;     /* iters + 1 (or graph launches + 1) */
  int nev;
  void *dsend, *drecv; /* device buffers of alloc_bytes */
  size_t alloc_bytes;
  void *hsend, *hrecv, *hwant; /* host buffers for the checks */
  int corrupt_rank;
  long long corrupt_elem;
  int threads; /* for filling and comparing: this rank's share of the host's cores */
  int clamped; /* -e was reduced to what the GPUs hold */
  int borrowed; /* dev and wcomm belong to the caller (the measurement) */
  /* --under-load */
  int H;
  void *ga, *gb, *gc;
  /* rank 0: what is printed and serialised */
  rank_desc *ranks;
  ddp_versions ver;
  row_result *rows;
  int nrows, cap_rows;
  wrong_record *wrongs;
  int nwrongs;
  double bw_sum;
  int bw_n;
  const char *device_name, *comm_name;
  char start_time[32];
} coll_ctx;

/* Waits for event e, polling the comm for asynchronous errors; never longer than the timeout. A completed wait
 * is progress for the watchdog: one row makes many waits (warm-up, timed calls in and out of place, checks),
 * each bounded by -T, so the row as a whole may take longer than the watchdog's -T + 30 s. */
static ddp_result wait_event(coll_ctx *x, ddp_event *e, const char *what) {
  double t0 = ddp_now();
  unsigned tok = 0; /* told to the watchdog once the wait outlasts the spin */
  ddp_result r;
  for (;;) {
    int done = 0;
    if ((r = x->dev->event_query(x->dev, e, &done)) != DDP_OK) break;
    if (done) {
      watchdog_tick(NULL);
      break;
    }
    ddp_comm *c = x->comm ? x->comm : x->wcomm; /* outside a group's sweep: the world's */
    if ((r = c->check(c)) != DDP_OK) break;
    if (x->o.timeout > 0 && ddp_now() - t0 > x->o.timeout) {
      char last[160];
      watchdog_started_text(last, sizeof last);
      r = DDP_FAIL(DDP_ERR_TIMEOUT, "%s did not complete within %g s (a peer stopped answering?); last collective "
                   "started: %s", what, x->o.timeout, last[0] ? last : "none");
      break;
    }
    if (ddp_now() - t0 > 0.01) { /* spin for the first 10 ms: a sleep would add its granularity to short timings */
      if (!tok) tok = watchdog_enter_device(what);
      struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);
    }
  }
  watchdog_leave(tok);
  return r;
}

/* The group's barrier before timing, on the control plane (as nccl-tests' MPI_Barrier), polled under the same
 * timeout: a rank that stopped answering ends the job instead of holding it. */
static ddp_result ctl_barrier(coll_ctx *x) {
  MPI_Request req;
  DDP_CHECK_MPI(MPI_Ibarrier(x->ctl, &req));
  double t0 = ddp_now();
  for (;;) {
    int done = 0;
    DDP_CHECK_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) {
      watchdog_tick(NULL);
      return DDP_OK;
    }
    if (x->o.timeout > 0 && ddp_now() - t0 > x->o.timeout)
      return DDP_FAIL(DDP_ERR_TIMEOUT, "the barrier before timing did not complete within %g s (a peer stopped "
                      "answering?)", x->o.timeout);
    if (ddp_now() - t0 > 0.01) {
      struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);
    }
  }
}

/* Test hook: DDPBENCH_TEST_STALL_COLLECTIVE=RANK makes that rank stop before its first timed call, as a hung
 * GPU or a dead link would: its peers must time out (-T) and end the job, naming themselves and the wait. */
static void maybe_stall(const coll_ctx *x) {
  if (testhook_int(HOOK_STALL_COLLECTIVE, -1) != x->dist.rank) return;
  fprintf(stderr, "[ddpbench rank %d] DDPBENCH_TEST_STALL_COLLECTIVE: stalling on purpose\n", x->dist.rank);
  for (;;) sleep(1000);
}

static ddp_result sync_stream(coll_ctx *x, ddp_stream *s, const char *what) {
  DDP_TRY(x->dev->event_record(x->dev, x->ev[0], s));
  return wait_event(x, x->ev[0], what);
}

static ddp_result ensure_events(coll_ctx *x, int n) {
  if (n <= x->nev) return DDP_OK;
  ddp_event **ev = realloc(x->ev, (size_t)n * sizeof *ev);
  DDP_CHECK_ALLOC(ev);
  x->ev = ev;
  for (; x->nev < n; x->nev++) DDP_TRY(x->dev->event_create(x->dev, &x->ev[x->nev], 1));
  return DDP_OK;
}

/* The call for iteration `it` of a row: buffers shifted by whole rows through the allocation. */
static ddp_coll call_at(const coll_ctx *x, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, const coll_sizes *z,
                        int inplace, long it) {
  size_t es = dtype_size(dt), row = z->size_bytes;
  size_t slots = row ? x->alloc_bytes / row : 1, shift = it >= 0 && slots ? row * (size_t)(it % (long)slots) : 0;
  char *s = (char *)x->dsend + shift, *r = (char *)x->drecv + shift;
  ddp_coll c = {kind, s, r, z->count, dt, op == REDOP_COUNT ? REDOP_SUM : op, x->o.root};
  if (inplace) {
    c.send = r;
    if (kind == COLL_ALL_GATHER) c.send = r + (size_t)x->comm->rank * z->count * es;
    if (kind == COLL_REDUCE_SCATTER) c.recv = r + (size_t)x->comm->rank * z->count * es;
  }
  return c;
}

/* Untimed data checks: -c rounds of fill, one call (through a graph with -G), copy back, compare. */
static ddp_result check_row(coll_ctx *x, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, const coll_sizes *z,
                            int inplace, wrong_info *w) {
  ddp_device *d = x->dev;
  size_t es = dtype_size(dt);
  memset(w, 0, sizeof *w);
  w->first = -1;
  int failed = 0;
  /* Every rank makes every round's call (peers must not wait for a call we skip); as in nccl-tests, the
   * count is that of the first round with a wrong element. */
  for (int round = 0; round < x->o.check; round++) {
    data_spec ds;
    data_init(&ds, kind, op, dt, x->comm->size, x->comm->rank, x->o.root, z->count, 99 + (uint64_t)round);
    ddp_coll c = call_at(x, kind, dt, op, z, inplace, -1);
    data_pass(&ds, x->hsend, z->send_count, 0, x->threads, NULL); /* this rank's send buffer */
    memset(x->hrecv, 0xff, z->recv_count * es); /* never a valid result: a call that writes nothing fails */
    DDP_TRY(d->copy(d, x->drecv, x->hrecv, z->recv_count * es, x->s));
    DDP_TRY(d->copy(d, (void *)c.send, x->hsend, z->send_count * es, x->s));
    if (x->o.graph) {
      ddp_graph *g = NULL;
      DDP_TRY(d->graph_begin(d, x->s));
      ddp_result r = x->comm->collective(x->comm, &c, x->s);
      ddp_result r2 = d->graph_end(d, x->s, &g);
      DDP_TRY(r);
      DDP_TRY(r2);
      r = d->graph_launch(d, g, x->s);
      if (r == DDP_OK) r = sync_stream(x, x->s, "the data check");
      d->graph_destroy(d, g);
      DDP_TRY(r);
    } else {
      DDP_TRY(x->comm->collective(x->comm, &c, x->s));
    }
    size_t rn = z->recv_count;
    if (x->corrupt_rank == x->dist.rank && rn) { /* test hook: one element goes wrong after the call */
      size_t k = x->corrupt_elem >= 0 ? (size_t)x->corrupt_elem % rn : rn / 2;
      expect_at(&ds, k, x->hwant);
      store_int(x->hwant, dt, 0, (long)load_num(x->hwant, dt, 0) + 1);
      DDP_TRY(d->copy(d, (char *)c.recv + k * es, x->hwant, es, x->s));
    }
    DDP_TRY(d->copy(d, x->hrecv, c.recv, rn * es, x->s));
    DDP_TRY(sync_stream(x, x->s, "the data check"));
    if (!failed) data_pass(&ds, x->hrecv, rn, 1, x->threads, w);
    failed = w->wrong > 0;
  }
  return DDP_OK;
}

/* Timed: -w warm-up calls, barrier, -n calls (or -G launches of a graph of -n calls) with events between. */
static ddp_result time_row(coll_ctx *x, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, const coll_sizes *z,
                           int inplace, double *host_us, double *samples, int *nsamples) {
  ddp_device *d = x->dev;
  int n = x->o.iters;
  for (int i = 0; i < x->o.warmup; i++) {
    ddp_coll c = call_at(x, kind, dt, op, z, inplace, i);
    DDP_TRY(x->comm->collective(x->comm, &c, x->s));
  }
  DDP_TRY(sync_stream(x, x->s, "the warm-up"));
  ddp_graph *g = NULL;
  if (x->o.graph) {
    DDP_TRY(d->graph_begin(d, x->s));
    ddp_result r = DDP_OK;
    for (int i = 0; i < n && r == DDP_OK; i++) {
      ddp_coll c = call_at(x, kind, dt, op, z, inplace, i);
      r = x->comm->collective(x->comm, &c, x->s);
    }
    ddp_result r2 = d->graph_end(d, x->s, &g);
    DDP_TRY(r);
    DDP_TRY(r2);
    r = d->graph_launch(d, g, x->s); /* once untimed: the first launch uploads the graph */
    if (r == DDP_OK) r = sync_stream(x, x->s, "the graph warm-up");
    if (r != DDP_OK) d->graph_destroy(d, g);
    DDP_TRY(r);
  }
  int items = x->o.graph ? x->o.graph : n;
  ddp_result r = ctl_barrier(x);
  maybe_stall(x);
  double t0 = ddp_now();
  if (r == DDP_OK) r = d->event_record(d, x->ev[0], x->s);
  for (int i = 0; i < items && r == DDP_OK; i++) {
    if (g) {
      r = d->graph_launch(d, g, x->s);
    } else {
      ddp_coll c = call_at(x, kind, dt, op, z, inplace, i);
      r = x->comm->collective(x->comm, &c, x->s);
    }
    if (r == DDP_OK) r = d->event_record(d, x->ev[i + 1], x->s);
  }
  if (r == DDP_OK) r = wait_event(x, x->ev[items], "the timed calls");
  double t1 = ddp_now();
  if (g) d->graph_destroy(d, g);
  DDP_TRY(r);
  *host_us = (t1 - t0) * 1e6 / ((double)n * (g ? items : 1));
  for (int i = 0; i < items; i++) {
    float ms = 0;
    DDP_TRY(d->event_elapsed_ms(d, &ms, x->ev[i], x->ev[i + 1]));
    samples[i] = ms * 1e3 / (g ? n : 1);
  }
  *nsamples = items;
  return DDP_OK;
}

/* ---- under load ---------------------------------------------------------------------------------- */
static double span_ms(ddp_device *d, ddp_event *origin, ddp_event *e) {
  float ms = 0;
  return d->event_elapsed_ms(d, &ms, origin, e) == DDP_OK ? ms : NAN;
}

/* Mean duration (ms) of the items i (events e[i] .. e[i+1], i < n) that lie wholly in [lo, hi]. */
static double mean_inside(ddp_device *d, ddp_event *origin, ddp_event **e, int n, double lo, double hi, int *count) {
  double sum = 0;
  *count = 0;
  double a = span_ms(d, origin, e[0]);
  for (int i = 0; i < n; i++) {
    double b = span_ms(d, origin, e[i + 1]);
    if (a >= lo && b <= hi) sum += b - a, (*count)++;
    a = b;
  }
  return *count ? sum / *count : NAN;
}

static ddp_result gemm_run(coll_ctx *x, ddp_stream *s) {
  ddp_gemm g = {.m = x->H, .n = x->H, .k = x->H, .a = x->ga, .lda = x->H, .b = x->gb, .ldb = x->H, .c = x->gc,
                .ldc = x->H, .ab_type = DT_BF16, .c_type = DT_BF16};
  return x->dev->gemm(x->dev, s, &g);
}

/* The out-of-place call beside a GEMM loop. t_coll_us: its idle per-call time. Per rank: the collective's
 * time per call under load, the GEMM's TFLOP/s alone and under the collective. */
static ddp_result load_row(coll_ctx *x, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, const coll_sizes *z,
                           double t_coll_us, double out[3]) {
  ddp_device *d = x->dev;
  double flop = 2.0 * x->H * (double)x->H * x->H;
  /* The GEMM alone: a few to find its time, then as many as the loaded run will use. */
  DDP_TRY(ensure_events(x, 4));
  DDP_TRY(d->event_record(d, x->ev[0], x->gs));
  for (int i = 0; i < 3; i++) DDP_TRY(gemm_run(x, x->gs));
  DDP_TRY(d->event_record(d, x->ev[1], x->gs));
  DDP_TRY(wait_event(x, x->ev[1], "the GEMM"));
  double t_gemm_ms = span_ms(d, x->ev[0], x->ev[1]) / 3;
  if (!(t_gemm_ms > 0)) t_gemm_ms = 1e-3;
  double T = fmax(x->o.iters * t_coll_us * 1e-3, 10 * t_gemm_ms);
  int MK[2] = {(int)fmin(20000, fmax(x->o.iters, ceil(T / fmax(t_coll_us * 1e-3, 1e-6)))),
               (int)fmin(20000, fmax(3, ceil(T / t_gemm_ms)))};
  /* Every rank must make the same number of calls: the largest count any rank asked for. */
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, MK, 2, MPI_INT, MPI_MAX, x->ctl));
  int M = MK[0], K = MK[1];
  DDP_TRY(ensure_events(x, 1 + (M + 1) + (K + 1)));
  ddp_event *start = x->ev[0], **ce = x->ev + 1, **ge = x->ev + 2 + M;
  DDP_TRY(d->event_record(d, ge[0], x->gs));
  for (int k = 0; k < K; k++) {
    DDP_TRY(gemm_run(x, x->gs));
    DDP_TRY(d->event_record(d, ge[k + 1], x->gs));
  }
  DDP_TRY(wait_event(x, ge[K], "the GEMM"));
  double idle_ms = span_ms(d, ge[0], ge[K]) / K;
  /* Both loops together. On a GPU the K GEMMs are enqueued first: interleaved with M collectives whose launches
   * take longer on the host than a small call takes on the device, the GEMM stream would wait for the host
   * between GEMMs and the gaps would count as GEMM time (seen on an H200: 80 TFLOP/s "under" a 1 MiB
   * allreduce). The cpu device runs each operation as it is enqueued, so there they are interleaved. */
  DDP_TRY(ctl_barrier(x));
  DDP_TRY(d->event_record(d, start, x->s));
  DDP_TRY(d->stream_wait_event(d, x->gs, start));
  DDP_TRY(d->event_record(d, ce[0], x->s));
  DDP_TRY(d->event_record(d, ge[0], x->gs));
  int ic = 0, ig = 0, gemms_first = !d->host_memory;
  while (ic < M || ig < K) {
    if (ig < K && (gemms_first || ic >= M || (long long)ig * M <= (long long)ic * K)) {
      DDP_TRY(gemm_run(x, x->gs));
      DDP_TRY(d->event_record(d, ge[++ig], x->gs));
    } else {
      ddp_coll c = call_at(x, kind, dt, op, z, 0, ic);
      DDP_TRY(x->comm->collective(x->comm, &c, x->s));
      DDP_TRY(d->event_record(d, ce[++ic], x->s));
    }
  }
  DDP_TRY(wait_event(x, ce[M], "the collective under load"));
  DDP_TRY(wait_event(x, ge[K], "the GEMM under load"));
  double lo = fmax(span_ms(d, start, ce[0]), span_ms(d, start, ge[0]));
  double hi = fmin(span_ms(d, start, ce[M]), span_ms(d, start, ge[K]));
  int nc = 0, ng = 0;
  double c_ms = mean_inside(d, start, ce, M, lo, hi, &nc), g_ms = mean_inside(d, start, ge, K, lo, hi, &ng);
  out[0] = c_ms * 1e3;
  out[1] = flop / (idle_ms * 1e-3) / 1e12;
  out[2] = flop / (g_ms * 1e-3) / 1e12;
  return DDP_OK;
}

/* ---- one row: measure both placements, reduce across ranks ------------------------------------- */
static double agg_combine(const double *v, int n, int mode) {
  double r = v[0];
  for (int i = 1; i < n; i++) {
    if (mode == AGG_AVG || mode == AGG_RANK0) r = mode == AGG_AVG ? r + v[i] : r;
    if (mode == AGG_MIN) r = fmin(r, v[i]);
    if (mode == AGG_MAX) r = fmax(r, v[i]);
  }
  return mode == AGG_AVG ? r / n : r;
}

static ddp_result row_add(coll_ctx *x, const row_result *row) {
  if (x->nrows == x->cap_rows) {
    int cap = x->cap_rows ? 2 * x->cap_rows : 64;
    row_result *r = realloc(x->rows, (size_t)cap * sizeof *r);
    DDP_CHECK_ALLOC(r);
    x->rows = r;
    x->cap_rows = cap;
  }
  x->rows[x->nrows++] = *row;
  return DDP_OK;
}

static ddp_result run_row(coll_ctx *x, int cycle, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, size_t bytes) {
  int W = x->comm->size, me = x->comm->rank;
  MPI_Comm mc = x->ctl;
  row_result row;
  memset(&row, 0, sizeof row);
  row.cycle = cycle;
  row.kind = kind;
  row.dt = dt;
  row.op = coll_is_reduction(kind) ? op : REDOP_COUNT;
  row.root = kind == COLL_BROADCAST ? x->o.root : -1;
  snprintf(row.group, sizeof row.group, "%s", x->glabel);
  row.z = coll_sizes_for(kind, bytes, dtype_size(dt), W);
  int items = x->o.graph ? x->o.graph : x->o.iters;
  double *samples = malloc((size_t)items * sizeof *samples), *maxs = malloc((size_t)items * sizeof *maxs);
  double *times = malloc((size_t)W * sizeof *times);
  wrong_info *wi = malloc((size_t)W * sizeof *wi);
  if (!samples || !maxs || !times || !wi) {
    free(samples), free(maxs), free(times), free(wi);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  ddp_result r = DDP_OK;
  for (int ip = 0; ip < 2 && r == DDP_OK; ip++) {
    place_result *pl = &row.pl[ip];
    if (ip && kind == COLL_ALLTOALL) continue; /* out-of-place only: see comm.h */
    double host_us = 0, load[3] = {NAN, NAN, NAN};
    int ns = 0;
    wrong_info w = {0, -1, 0, 0};
    r = time_row(x, kind, dt, op, &row.z, ip, &host_us, samples, &ns);
    if (r == DDP_OK && !ip && x->H) r = load_row(x, kind, dt, op, &row.z, stats_percentile(samples, ns, 0.5), load);
    if (r == DDP_OK && x->o.check) r = check_row(x, kind, dt, op, &row.z, ip, &w);
    if (r != DDP_OK) break;
    /* Reduce across ranks: every rank's time and wrong count to rank 0, the per-iteration maximum. */
    int e = MPI_Gather(&host_us, 1, MPI_DOUBLE, times, 1, MPI_DOUBLE, 0, mc);
    if (e == MPI_SUCCESS) e = MPI_Reduce(samples, maxs, ns, MPI_DOUBLE, MPI_MAX, 0, mc);
    if (e == MPI_SUCCESS) e = MPI_Gather(&w, (int)sizeof w, MPI_BYTE, wi, (int)sizeof w, MPI_BYTE, 0, mc);
    double lsum[3] = {load[0], load[1], load[2]}, lagg[3] = {0, 0, 0};
    if (e == MPI_SUCCESS && x->H) e = MPI_Reduce(lsum, lagg, 3, MPI_DOUBLE, MPI_SUM, 0, mc);
    if (e != MPI_SUCCESS) {
      r = mpi_fail(e, "gathering a row's results", __FILE__, __LINE__);
      break;
    }
    if (me) continue;
    pl->ran = 1;
    pl->time_us = agg_combine(times, W, x->o.average);
    pl->algbw = row.z.base_bytes / (pl->time_us * 1e-6) / 1e9;
    pl->busbw = pl->algbw * row.z.bus_factor;
    int slow = 0;
    for (int k = 1; k < W; k++)
      if (times[k] > times[slow]) slow = k;
    pl->slowest_us = times[slow];
    pl->slowest_rank = x->gworld[slow]; /* as a world rank, like every rank named in the output */
    pl->iter = stats_compute(maxs, ns);
    pl->checked = x->o.check > 0;
    for (int k = 0; k < W; k++) {
      pl->wrong += wi[k].wrong;
      if (!wi[k].wrong) continue;
      wrong_record *wr = realloc(x->wrongs, (size_t)(x->nwrongs + 1) * sizeof *wr);
      if (!wr) {
        r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
        break;
      }
      x->wrongs = wr;
      wrong_record *o = &x->wrongs[x->nwrongs++];
      o->row = x->nrows;
      o->place = ip;
      o->rank = x->gworld[k];
      snprintf(o->host, sizeof o->host, "%s", x->ranks[x->gworld[k]].host);
      o->w = wi[k];
    }
    x->bw_sum += pl->busbw;
    x->bw_n++;
    if (x->H && !ip) { /* means over ranks */
      pl->load = 1;
      pl->load_time_us = lagg[0] / W;
      pl->load_busbw = row.z.base_bytes / (pl->load_time_us * 1e-6) / 1e9 * row.z.bus_factor;
      pl->gemm_idle_tflops = lagg[1] / W;
      pl->gemm_load_tflops = lagg[2] / W;
    }
  }
  free(samples), free(maxs), free(times), free(wi);
  DDP_TRY(r);
  if (me == 0) DDP_TRY(row_add(x, &row));
  return DDP_OK;
}

/* What decides how many SMs NCCL's kernels take (and which algorithm), recorded as set or "unset". */
static const char *const NCCL_VARS[] = {"NCCL_MAX_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_CTAS", "NCCL_MIN_CTAS",
                                        "NCCL_ALGO",          "NCCL_PROTO",         "NCCL_NVLS_ENABLE"};

/* ---- printing (rank 0) --------------------------------------------------------------------------- */
/* nccl-tests' number squeezing: %.2f, then %.1f, then %.0f, then an exponent, to fit `width`. */
static const char *fit(char *buf, size_t n, int width, double v) {
  if (isnan(v)) return snprintf(buf, n, "-"), buf;
  static const char *fmts[] = {"%.2f", "%.1f", "%.0f"};
  for (int i = 0; i < 3; i++)
    if (snprintf(buf, n, fmts[i], v) <= width) return buf;
  snprintf(buf, n, "%.*e", width > 6 ? width - 6 : 0, v);
  return buf;
}

static void print_header(const coll_ctx *x, ddp_coll_kind kind) {
  fprintf(x->out, "# Collective test starting: %s\n", coll_name(kind));
  if (strcmp(x->glabel, "world")) {
    fprintf(x->out, "# Group: %s, %d ranks (%s):", x->glabel, x->comm->size, x->comm->name);
    for (int k = 0; k < x->comm->size; k++) fprintf(x->out, " %d@%s", x->gworld[k], x->ranks[x->gworld[k]].host);
    fprintf(x->out, "\n");
  }
  fprintf(x->out, "#\n");
  /* Titles centred over their column groups (33 characters each, 38 for the per-iteration ones). */
  fprintf(x->out, "#%51s%*s%*s%*s%*s", "", 22, "out-of-place", 11, "", 19, "in-place", 14, "");
  fprintf(x->out, "%*s%*s%*s%*s", 29, "out-of-place per call", 9, "", 27, "in-place per call", 11, "");
  if (x->H) fprintf(x->out, "  %-29s", "under load (out-of-place)");
  fprintf(x->out, "\n");
  fprintf(x->out, "#%11s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root");
  for (int p = 0; p < 2; p++) fprintf(x->out, "  %7s  %6s  %6s  %6s", "time", "algbw", "busbw", "#wrong");
  for (int p = 0; p < 2; p++) fprintf(x->out, "  %7s %7s %7s %7s %4s", "p50", "p10", "p90", "slowest", "rank");
  if (x->H) fprintf(x->out, "  %6s %6s %7s %7s", "busbw", "busbw", "GEMM", "GEMM");
  fprintf(x->out, "\n");
  fprintf(x->out, "#%11s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "");
  for (int p = 0; p < 2; p++) fprintf(x->out, "  %7s  %6s  %6s  %6s", "(us)", "(GB/s)", "(GB/s)", "");
  for (int p = 0; p < 2; p++) fprintf(x->out, "  %7s %7s %7s %7s %4s", "(us)", "(us)", "(us)", "(us)", "");
  if (x->H) fprintf(x->out, "  %6s %6s %7s %7s", "idle", "load", "TF idle", "TF load");
  fprintf(x->out, "\n");
}

static void print_row(const coll_ctx *x, const row_result *row) {
  char b[4][32];
  fprintf(x->out, "%12zu  %12zu  %8s  %6s  %6d", row->z.size_bytes, row->z.count, dtype_name(row->dt),
         row->op == REDOP_COUNT ? "none" : redop_name(row->op), row->root);
  for (int p = 0; p < 2; p++) {
    const place_result *pl = &row->pl[p];
    if (!pl->ran) {
      fprintf(x->out, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
      continue;
    }
    if (pl->checked) snprintf(b[3], sizeof b[3], "%lld", pl->wrong);
    else snprintf(b[3], sizeof b[3], "N/A");
    fprintf(x->out, "  %7s  %6s  %6s  %6s", fit(b[0], 32, 7, pl->time_us), fit(b[1], 32, 6, pl->algbw), fit(b[2], 32, 6, pl->busbw),
           b[3]);
  }
  for (int p = 0; p < 2; p++) {
    const place_result *pl = &row->pl[p];
    if (!pl->ran) {
      fprintf(x->out, "  %7s %7s %7s %7s %4s", "N/A", "N/A", "N/A", "N/A", "");
      continue;
    }
    char s[32];
    fprintf(x->out, "  %7s %7s %7s %7s %4d", fit(b[0], 32, 7, pl->iter.median), fit(b[1], 32, 7, pl->iter.p10),
           fit(b[2], 32, 7, pl->iter.p90), fit(s, 32, 7, pl->slowest_us), pl->slowest_rank);
  }
  if (x->H) {
    const place_result *pl = &row->pl[0];
    char s[32];
    fprintf(x->out, "  %6s %6s %7s %7s", fit(b[0], 32, 6, pl->busbw), fit(b[1], 32, 6, pl->load_busbw),
           fit(b[2], 32, 7, pl->gemm_idle_tflops), fit(s, 32, 7, pl->gemm_load_tflops));
  }
  fprintf(x->out, "\n");
  for (int i = 0; i < x->nwrongs; i++) {
    const wrong_record *w = &x->wrongs[i];
    if (w->row != (int)(row - x->rows)) continue;
    size_t es = dtype_size(row->dt);
    fprintf(x->out, "# wrong data: rank %d host %s, %s: %lld wrong element(s) of %zu received; first at element %lld "
           "(byte offset %lld): got %.17g, expected %.17g\n",
           w->rank, w->host, w->place ? "in-place" : "out-of-place", w->w.wrong, row->z.recv_count, w->w.first,
           w->w.first * (long long)es, w->w.got, w->w.want);
  }
  fflush(x->out);
}

static void print_preamble(const coll_ctx *x) {
  const coll_opts *o = &x->o;
  printf("# ddpbench %s collectives (nccl-tests 2.19.6 conventions) nccl-headers=%s nccl-library=%s\n",
         DDPBENCH_VERSION, x->ver.nccl_header[0] ? x->ver.nccl_header : "none",
         x->ver.nccl_runtime[0] ? x->ver.nccl_runtime : "none");
  printf("# comm %s device %s ranks %d nodes %d mpi %s\n", x->comm_name, x->device_name, x->dist.size,
         x->nodes, dist_mpi_version());
  printf("# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: 1 "
         "validation: %d graph: %d average: %d\n",
         o->min_bytes, o->max_bytes, o->step_factor >= 2 ? (size_t)o->step_factor : o->step_bytes,
         o->step_factor >= 2 ? "factor" : "bytes", o->warmup, o->iters, o->check, o->graph, o->average);
  printf("# NCCL SMs:");
  for (size_t i = 0; i < sizeof NCCL_VARS / sizeof NCCL_VARS[0]; i++)
    printf(" %s=%s", NCCL_VARS[i], getenv(NCCL_VARS[i]) ? getenv(NCCL_VARS[i]) : "unset");
  printf("\n");
  if (x->H)
    printf("# under load: bf16 %dx%dx%d GEMM loop on a second stream; its TF/s alone and beside the out-of-place call\n",
           x->H, x->H, x->H);
  printf("#\n# Using devices\n");
  for (int r = 0; r < x->dist.size; r++)
    printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s\n", r, x->ranks[r].pid, x->ranks[r].host,
           x->ranks[r].ordinal, x->ranks[r].bus[0] ? x->ranks[r].bus : "cpu", x->ranks[r].name);
  printf("#\n");
  if (x->clamped) printf("# Reducing maxBytes to %zu due to memory limitation\n", o->max_bytes);
  fflush(stdout);
}

static void print_footer(coll_ctx *x, ddp_coll_kind kind, int first_row) {
  long long bad = 0;
  for (int i = 0; i < x->nwrongs; i++)
    if (x->wrongs[i].row >= first_row) bad++;
  fprintf(x->out, "# Out of bounds values : %lld %s\n", bad, bad ? "FAILED" : "OK");
  fprintf(x->out, "# Avg bus bandwidth    : %g\n", x->bw_n ? x->bw_sum / x->bw_n : 0.0);
  fprintf(x->out, "#\n# Collective test concluded: %s\n#\n", coll_name(kind));
  fflush(x->out);
  x->bw_sum = 0;
  x->bw_n = 0;
}

/* ---- the result model (rank 0) --------------------------------------------------------------------
 * The sweep's figures are records of the measurement "collectives" (result.h); wrong data are findings
 * (check "collectives_data", fail, per rank). The file is a schema-version-2 result that result_load reads
 * back: no training phases ("phases" is empty), weights not verified. */
/* The rows' figures as records of measurement "collectives" (rank 0 of the group that ran them). */
static ddp_result rows_to_records(const coll_ctx *x, result_doc *m) {
  static const char *pnames[] = {"out_of_place", "in_place"};
  for (int i = 0; i < x->nrows; i++) {
    const row_result *row = &x->rows[i];
    const char *group = row->group; /* measure.h's group names: world, node:<host>, pair:<a>-<b> */
    char bytes[32], count[32], root[16], cycle[16];
    snprintf(bytes, sizeof bytes, "%zu", row->z.size_bytes);
    snprintf(count, sizeof count, "%zu", row->z.count);
    snprintf(root, sizeof root, "%d", row->root);
    snprintf(cycle, sizeof cycle, "%d", row->cycle);
    for (int p = 0; p < 2; p++) {
      const place_result *pl = &row->pl[p];
      if (!pl->ran) continue;
#define ADD(metric, unit, better, value, stats)                                                                   \
  DDP_TRY(result_add(m, "collectives", group, metric, unit, better, value, stats, NULL, 0, "collective",            \
                     coll_name(row->kind), "type", dtype_name(row->dt), "redop",                                    \
                     row->op == REDOP_COUNT ? "none" : redop_name(row->op), "root", root, "bytes", bytes, "count",  \
                     count, "placement", pnames[p], "cycle", cycle, NULL))
      ADD("time_us", "us", BETTER_LOWER, pl->time_us, NULL);
      ADD("algbw_gbs", "GB/s", BETTER_HIGHER, pl->algbw, NULL);
      ADD("busbw_gbs", "GB/s", BETTER_HIGHER, pl->busbw, NULL);
      ADD("iter_time_us", "us", BETTER_LOWER, pl->iter.median, &pl->iter);
      ADD("slowest_rank_time_us", "us", BETTER_LOWER, pl->slowest_us, NULL);
      ADD("slowest_rank", "", BETTER_NONE, pl->slowest_rank, NULL);
      if (pl->checked) ADD("nwrong", "elements", BETTER_LOWER, (double)pl->wrong, NULL);
      if (pl->load) {
        ADD("load_time_us", "us", BETTER_LOWER, pl->load_time_us, NULL);
        ADD("load_busbw_gbs", "GB/s", BETTER_HIGHER, pl->load_busbw, NULL);
        ADD("gemm_tflops_idle", "TFLOP/s", BETTER_HIGHER, pl->gemm_idle_tflops, NULL);
        ADD("gemm_tflops_load", "TFLOP/s", BETTER_HIGHER, pl->gemm_load_tflops, NULL);
      }
#undef ADD
    }
  }
  return DDP_OK;
}

/* One failing finding per rank, row and placement with wrong data. */
static ddp_result findings_build(const coll_ctx *x, finding_list *l) {
  static const char *pnames[] = {"out-of-place", "in-place"};
  for (int i = 0; i < x->nwrongs; i++) {
    const wrong_record *w = &x->wrongs[i];
    const row_result *row = &x->rows[w->row];
    char subject[128];
    snprintf(subject, sizeof subject, "rank %d (%s)", w->rank, w->host);
    DDP_TRY(findings_add_at(l, w->host, w->rank, "collectives_data", SEV_FAIL, SCOPE_RANK, subject, (double)w->w.wrong, 0, "elements",
                         "%s %s %s %zu B %s (group %s): %lld wrong element(s) of %zu received; first at element %lld "
                         "(byte offset %lld): got %.17g, expected %.17g",
                         coll_name(row->kind), dtype_name(row->dt), row->op == REDOP_COUNT ? "none" : redop_name(row->op),
                         row->z.size_bytes, pnames[w->place], row->group, w->w.wrong, row->z.recv_count, w->w.first,
                         w->w.first * (long long)dtype_size(row->dt), w->w.got, w->w.want));
  }
  return DDP_OK;
}

/* ---- set-up -------------------------------------------------------------------------------------- */
static ddp_result ctx_buffers(coll_ctx *x, MPI_Comm ctl);

/* The skeleton's device and comm (cmd.h), then the buffers. */
static ddp_result ctx_setup(coll_ctx *x, cmd_ctx *c) {
  if (x->o.graph && !c->pl.device->is_gpu) /* the placement is collective: so is this */
    return ddp_usage_error("collectives: -G/--cudagraph needs a GPU device, and no GPU is visible");
  x->dev = c->dev;
  x->wcomm = c->comm;
  x->borrowed = 1;
  return ctx_buffers(x, x->dist.world);
}

/* Streams, events, buffers and who is where, collective over ctl (the world, or the group a measurement
 * runs on); x->ranks is indexed by world rank and filled for ctl's ranks. */
static ddp_result ctx_buffers(coll_ctx *x, MPI_Comm ctl) {
  ddp_dist *d = &x->dist;
  int n = 0;
  DDP_CHECK_MPI(MPI_Comm_size(ctl, &n));
  int cuda = !x->dev->host_memory;
  x->device_name = x->dev->name;
  x->comm_name = x->wcomm->name;
  DDP_TRY(x->dev->stream_create(x->dev, &x->s, 0));
  DDP_TRY(ensure_events(x, (x->o.graph ? x->o.graph : x->o.iters) + 1));
  /* As nccl-tests: -e is reduced to what the smallest GPU holds (two buffers, after a reserve for NCCL and
   * CUDA of 1 GiB per 16 GiB, at most 4 GiB, plus 1 GiB, and the GEMM's operands under load). */
  double mem = x->dev->info.memory > 0 ? (double)x->dev->info.memory : INFINITY;
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &mem, 1, MPI_DOUBLE, MPI_MIN, ctl));
  if (isfinite(mem)) {
    double gib = 1073741824.0, reserve = fmin(ceil(mem / (16 * gib)) * gib, 4 * gib);
    double gemm = x->o.load_h ? 3.0 * 2 * pow(x->o.load_h > 0 ? x->o.load_h : 8192, 2) : 0;
    double fit = floor((mem - reserve - gib - gemm) / 2 / 8) * 8; /* a multiple of every element size */
    if (fit > 0 && (double)x->o.max_bytes > fit) {
      x->o.max_bytes = (size_t)fit;
      x->clamped = 1;
    }
  }
  /* Buffers for the largest row of any selected collective and type. */
  size_t need = 64;
  for (int c = 0; c < x->o.ncoll; c++)
    for (int t = 0; t < x->o.ndtype; t++) {
      coll_sizes z = coll_sizes_for((ddp_coll_kind)x->o.colls[c], x->o.max_bytes, dtype_size((ddp_dtype)x->o.dtypes[t]), n);
      if (z.size_bytes > need) need = z.size_bytes;
    }
  x->alloc_bytes = need;
  DDP_TRY(x->dev->alloc(x->dev, &x->dsend, need));
  DDP_TRY(x->dev->alloc(x->dev, &x->drecv, need));
  DDP_TRY(x->dev->memset_zero(x->dev, x->dsend, need, x->s));
  DDP_TRY(x->dev->memset_zero(x->dev, x->drecv, need, x->s));
  if (x->o.check) {
    x->hsend = malloc(need);
    x->hrecv = malloc(need);
    x->hwant = malloc(16);
    if (!x->hsend || !x->hrecv || !x->hwant) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory (%zu bytes)", need);
  }
  if (x->o.load_h) {
    x->H = x->o.load_h > 0 ? x->o.load_h : cuda ? 8192 : 256;
    size_t hh = (size_t)x->H * x->H;
    DDP_TRY(x->dev->stream_create(x->dev, &x->gs, 0));
    DDP_TRY(x->dev->alloc(x->dev, &x->ga, hh * 2));
    DDP_TRY(x->dev->alloc(x->dev, &x->gb, hh * 2));
    DDP_TRY(x->dev->alloc(x->dev, &x->gc, hh * 2));
    /* Random operands: a GEMM of zeros draws less power and would run faster than real work. */
    DDP_TRY(x->dev->generate(x->dev, x->gs, x->ga, DT_BF16, hh, 7, 1, 0, 1.0));
    DDP_TRY(x->dev->generate(x->dev, x->gs, x->gb, DT_BF16, hh, 7, 2, 0, 1.0));
    DDP_TRY(sync_stream(x, x->gs, "the GEMM operands"));
  }
  DDP_TRY(sync_stream(x, x->s, "the buffer set-up"));
  /* Who is where, for the device list and the wrong-data lines. */
  rank_desc mine;
  memset(&mine, 0, sizeof mine);
  mine.rank = d->rank;
  mine.pid = (int)getpid();
  mine.ordinal = x->dev->info.ordinal;
  mine.node = d->node_index;
  mine.local_rank = d->local_rank;
  mine.memory = (double)x->dev->info.memory;
  x->nodes = d->node_count;
  snprintf(mine.host, sizeof mine.host, "%.63s", d->host);
  snprintf(mine.bus, sizeof mine.bus, "%s", x->dev->info.pci_bus_id);
  snprintf(mine.name, sizeof mine.name, "%s", x->dev->info.name);
  x->ranks = calloc((size_t)d->size, sizeof *x->ranks);
  rank_desc *got = calloc((size_t)n, sizeof *got);
  if (!x->ranks || !got) {
    free(got);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  int e = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, got, (int)sizeof mine, MPI_BYTE, ctl);
  for (int i = 0; e == MPI_SUCCESS && i < n; i++) x->ranks[got[i].rank] = got[i];
  free(got);
  if (e != MPI_SUCCESS) return mpi_fail(e, "gathering who is where", __FILE__, __LINE__);
  devices_versions(&x->ver);
  comms_versions(&x->ver);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  x->threads = cores > 0 ? (int)(cores / d->local_size) : 1;
  const char *cr = testhook_value(HOOK_CORRUPT_COLLECTIVE);
  x->corrupt_rank = -1;
  x->corrupt_elem = -1;
  if (cr && *cr) {
    x->corrupt_rank = atoi(cr);
    const char *colon = strchr(cr, ':');
    if (colon) x->corrupt_elem = atoll(colon + 1);
  }
  return DDP_OK;
}

static void ctx_free(coll_ctx *x) {
  if (x->dev) {
    for (int i = 0; i < x->nev; i++) x->dev->event_destroy(x->dev, x->ev[i]);
    if (x->dsend) x->dev->free(x->dev, x->dsend);
    if (x->drecv) x->dev->free(x->dev, x->drecv);
    if (x->ga) x->dev->free(x->dev, x->ga);
    if (x->gb) x->dev->free(x->dev, x->gb);
    if (x->gc) x->dev->free(x->dev, x->gc);
  }
  if (x->wcomm && !x->borrowed) x->wcomm->destroy(x->wcomm);
  if (x->dev) {
    if (x->s) x->dev->stream_destroy(x->dev, x->s);
    if (x->gs) x->dev->stream_destroy(x->dev, x->gs);
    if (!x->borrowed) x->dev->destroy(x->dev);
  }
  free(x->ev);
  free(x->hsend), free(x->hrecv), free(x->hwant);
  free(x->ranks), free(x->rows), free(x->wrongs), free(x->gworld);
}

static ddp_result sweep(coll_ctx *x) {
  const coll_opts *o = &x->o;
  int me = x->comm->rank;
  for (int cycle = 0; o->cycles == 0 || cycle < o->cycles; cycle++)
    for (int c = 0; c < o->ncoll; c++) {
      ddp_coll_kind kind = (ddp_coll_kind)o->colls[c];
      int first = x->nrows;
      if (me == 0 && x->out) print_header(x, kind);
      for (int t = 0; t < o->ndtype; t++)
        for (int p = 0; p < (coll_is_reduction(kind) ? o->nop : 1); p++)
          for (size_t bytes = o->min_bytes; bytes <= o->max_bytes;) {
            char what[128];
            snprintf(what, sizeof what, "collectives: %s of %zu bytes, %s%s%s", coll_name(kind), bytes,
                     dtype_name((ddp_dtype)o->dtypes[t]), coll_is_reduction(kind) ? " " : "",
                     coll_is_reduction(kind) ? redop_name((ddp_redop)o->ops[p]) : "");
            watchdog_tick(what);
            DDP_TRY(run_row(x, cycle, kind, (ddp_dtype)o->dtypes[t], (ddp_redop)o->ops[p], bytes));
            if (me == 0 && x->out) print_row(x, &x->rows[x->nrows - 1]);
            size_t next = o->step_factor >= 2 ? bytes * (size_t)o->step_factor : bytes + o->step_bytes;
            if (next <= bytes) break; /* -e reached, or overflow */
            bytes = next;
          }
      if (me == 0 && x->out) print_footer(x, kind, first);
      if (o->cycles == 0 && me == 0) x->nrows = 0, x->nwrongs = 0; /* forever: keep no history */
    }
  return DDP_OK;
}

/* ---- groups ----------------------------------------------------------------------------------------
 * The world, each node at once, or each pair of nodes in turn: the rounds of groups of measure.h (the
 * acceptance job's grouping), so that a group is named the same way in every result file. Each group's
 * rank 0 prints its tables into memory; world rank 0 prints them in group order after the round, so that
 * concurrent groups never interleave their lines. */
static ddp_result group_use(coll_ctx *x, ddp_comm *g, MPI_Comm ctl, const char *name) {
  x->comm = g;
  x->ctl = ctl;
  snprintf(x->glabel, sizeof x->glabel, "%s", name);
  free(x->gworld);
  x->gworld = malloc((size_t)g->size * sizeof *x->gworld);
  DDP_CHECK_ALLOC(x->gworld);
  DDP_CHECK_MPI(MPI_Allgather(&x->dist.rank, 1, MPI_INT, x->gworld, 1, MPI_INT, ctl));
  return DDP_OK;
}

static ddp_result group_round(coll_ctx *x, const measure_round *rd) {
  int me = x->dist.rank, W = x->dist.size;
  ddp_comm *g = rd->member ? rd->g.comm : NULL;
  char *text = NULL;
  size_t len = 0;
  int base_rows = x->nrows, base_wrongs = x->nwrongs;
  ddp_result r = DDP_OK;
  if (g) {
    r = group_use(x, g, rd->g.mpi, rd->g.name);
    if (r == DDP_OK && g->rank == 0) {
      x->out = open_memstream(&text, &len);
      if (!x->out) r = DDP_FAIL(DDP_ERR_SYSTEM, "open_memstream: %s", ddp_strerror_errno());
    }
    if (r == DDP_OK) r = sweep(x);
    if (x->out) fclose(x->out);
    x->out = NULL;
  }
  if (r != DDP_OK) {
    free(text);
    return r; /* the caller aborts the job */
  }
  /* Each leader's text, rows and wrong-data records to world rank 0. */
  int mine[4] = {g && g->rank == 0, (int)len, x->nrows - base_rows, x->nwrongs - base_wrongs};
  int *all = me == 0 ? malloc((size_t)W * sizeof mine) : NULL;
  if (me == 0 && !all) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (r == DDP_OK && MPI_Gather(mine, 4, MPI_INT, all, 4, MPI_INT, 0, x->dist.world) != MPI_SUCCESS)
    r = DDP_FAIL(DDP_ERR_MPI, "gathering the groups' results");
  if (r == DDP_OK && me == 0) {
    if (mine[0]) fwrite(text, 1, len, stdout);
    for (int src = 1; src < W && r == DDP_OK; src++) {
      int *a = all + 4 * src;
      if (!a[0]) continue;
      char *t = malloc((size_t)a[1] + 1);
      row_result *rows = malloc(((size_t)a[2] + 1) * sizeof *rows);
      wrong_record *wr = malloc(((size_t)a[3] + 1) * sizeof *wr);
      int e = !t || !rows || !wr ? MPI_ERR_NO_MEM : MPI_SUCCESS;
      if (e == MPI_SUCCESS) e = MPI_Recv(t, a[1], MPI_CHAR, src, 1, x->dist.world, MPI_STATUS_IGNORE);
      if (e == MPI_SUCCESS)
        e = MPI_Recv(rows, a[2] * (int)sizeof *rows, MPI_BYTE, src, 2, x->dist.world, MPI_STATUS_IGNORE);
      if (e == MPI_SUCCESS) e = MPI_Recv(wr, a[3] * (int)sizeof *wr, MPI_BYTE, src, 3, x->dist.world, MPI_STATUS_IGNORE);
      if (e == MPI_SUCCESS) {
        fwrite(t, 1, (size_t)a[1], stdout);
        int first = x->nrows;
        for (int i = 0; i < a[2] && r == DDP_OK; i++) r = row_add(x, &rows[i]);
        wrong_record *grown = realloc(x->wrongs, (size_t)(x->nwrongs + a[3] + 1) * sizeof *grown);
        if (!grown) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
        for (int i = 0; i < a[3] && r == DDP_OK; i++) {
          x->wrongs = grown;
          wr[i].row += first; /* the leader's rows of this round start at its index 0 */
          x->wrongs[x->nwrongs++] = wr[i];
        }
        if (grown) x->wrongs = grown;
      } else {
        r = mpi_fail(e, "receiving a group's results", __FILE__, __LINE__);
      }
      free(t), free(rows), free(wr);
    }
    fflush(stdout);
  } else if (r == DDP_OK && mine[0]) {
    for (int i = base_wrongs; i < x->nwrongs; i++) x->wrongs[i].row -= base_rows;
    int e = MPI_Send(text, (int)len, MPI_CHAR, 0, 1, x->dist.world);
    if (e == MPI_SUCCESS)
      e = MPI_Send(x->rows ? x->rows + base_rows : NULL, mine[2] * (int)sizeof *x->rows, MPI_BYTE, 0, 2, x->dist.world);
    if (e == MPI_SUCCESS)
      e = MPI_Send(x->wrongs ? x->wrongs + base_wrongs : NULL, mine[3] * (int)sizeof *x->wrongs, MPI_BYTE, 0, 3,
                   x->dist.world); /* NULL + 0 is UB (UBSan) when nothing was ever wrong */
    if (e != MPI_SUCCESS) r = mpi_fail(e, "sending the group's results", __FILE__, __LINE__);
    x->nrows = base_rows;
    x->nwrongs = base_wrongs;
  }
  free(all);
  free(text);
  x->comm = NULL;
  DDP_TRY(r);
  DDP_CHECK_MPI(MPI_Barrier(x->dist.world)); /* rounds never overlap */
  return DDP_OK;
}

/* Options that depend on the groups (the same decision on every rank). */
static ddp_result groups_check(coll_ctx *x) {
  int smallest = x->dist.size;
  if (x->o.group) {
    for (int nd = 0; nd < x->nodes; nd++) {
      int n = 0;
      for (int r = 0; r < x->dist.size; r++) n += x->ranks[r].node == nd;
      if (n < smallest) smallest = n;
    }
    if (x->o.group == 2) smallest *= 2;
  }
  if (x->o.group == 2 && x->nodes < 2)
    return ddp_usage_error("collectives: --group pairs needs ranks on at least 2 nodes (this job has 1)");
  if (x->o.root >= smallest)
    return ddp_usage_error("collectives: -r/--root %d is not a rank of every group (the smallest has %d)", x->o.root,
                           smallest);
  return DDP_OK;
}

static ddp_result run_groups(coll_ctx *x) {
  if (x->o.group == 0) { /* the world: tables stream to stdout as the rows come */
    DDP_TRY(group_use(x, x->wcomm, x->dist.world, "world"));
    x->out = stdout;
    ddp_result r = sweep(x);
    x->comm = NULL;
    return r;
  }
  ddp_dist d = x->dist; /* nodes as the job sees them (dist_emulate_nodes) */
  measure_round *rounds = NULL;
  int n = 0;
  ddp_result r = measure_rounds_build(&d, x->wcomm, x->o.group == 1 ? GROUP_NODE : GROUP_PAIR, 0, &rounds, &n);
  for (int i = 0; i < n && r == DDP_OK; i++) r = group_round(x, &rounds[i]);
  if (r == DDP_OK) measure_rounds_free(rounds, n); /* on failure the job is aborted: peers may be in a call */
  return r;
}

/* ---- as a measurement (measure.h) --------------------------------------------------------------------
 * The allreduce sweep over one group, for jobs built from measurements (the acceptance job): float sum,
 * 64 MiB to 1 GiB on GPUs (1 to 4 MiB on the cpu device), data checked; the records are the subcommand's,
 * with nwrong standing for the wrong-data findings. Collective over g; the device and comm are the caller's. */
/* Options from text over the table's defaults (the measurement's fixed sweep). */
static ddp_result opts_from(coll_opts *o, const char *const *kv) {
  opt_set s;
  opt_set_init(&s, "collectives");
  memset(o, 0, sizeof *o);
  DDP_TRY(opt_set_add(&s, &COLL_TABLE, o));
  DDP_TRY(opt_defaults(&s));
  for (int i = 0; kv[i]; i += 2) DDP_TRY(opt_apply(&s, kv[i], kv[i + 1], "measurement collectives", OPT_SRC_CLI, 0));
  cmd_ctx c;
  memset(&c, 0, sizeof c);
  c.args = o;
  c.opts = s;
  return coll_validate(&c);
}

static ddp_result mcoll_run(const measure_env *env, const measure_group *g, result_doc *out) {
  static const char *gpu[] = {"minbytes", "64M", "maxbytes", "1G", "stepfactor", "16", "iters", "20", NULL};
  static const char *cpu[] = {"minbytes", "1M", "maxbytes", "4M", "stepfactor", "4", "iters", "5", NULL};
  coll_ctx *x = calloc(1, sizeof *x);
  DDP_CHECK_ALLOC(x);
  ddp_result r = opts_from(&x->o, env->dev->host_memory ? cpu : gpu);
  x->dist = *env->dist;
  x->dev = env->dev;
  x->wcomm = g->comm;
  x->borrowed = 1;
  if (r == DDP_OK) r = ctx_buffers(x, g->mpi);
  if (r == DDP_OK) r = group_use(x, g->comm, g->mpi, g->name);
  if (r == DDP_OK) r = sweep(x);
  if (r == DDP_OK && g->rank == 0) r = rows_to_records(x, out);
  x->comm = NULL;
  ctx_free(x);
  free(x);
  return r;
}

const measurement measure_collectives = {
    "collectives", "allreduce over each group, 64 MiB to 1 GiB (cpu: 1 to 4 MiB), nccl-tests' busbw, data checked",
    mcoll_run, NULL};

static ddp_result coll_run(cmd_ctx *c) {
  static coll_ctx x;
  memset(&x, 0, sizeof x);
  x.o = *(coll_opts *)c->args;
  x.dist = c->dist;
  snprintf(x.start_time, sizeof x.start_time, "%s", c->start_time);
  ddp_result r = ctx_setup(&x, c);
  if (r == DDP_OK) r = groups_check(&x);
  if (r == DDP_OK && x.dist.rank == 0) print_preamble(&x);
  if (r == DDP_OK) r = run_groups(&x);
  if (r == DDP_OK && x.dist.rank == 0) r = findings_build(&x, &c->doc.findings);
  if (r == DDP_OK && x.dist.rank == 0) r = rows_to_records(&x, &c->doc);
  if (r != DDP_OK && r != DDP_ERR_USAGE && x.comm && x.comm != x.wcomm) x.comm->abort(x.comm);
  x.comm = NULL;
  ctx_free(&x);
  /* Wrong data is corruption, as weights that differ are (exit 1), not a missed expectation (4). */
  if (r == DDP_OK) c->exit_code = c->doc.findings.n ? DDP_EXIT_CHECK : DDP_EXIT_OK;
  return r;
}

const cmd_def cmd_collectives = {
    .name = "collectives",
    .summary = "nccl-tests' sweep through the comm interface, with exact data checks and --under-load",
    .usage = "usage: mpirun -np N ddpbench collectives [COLLECTIVE ...] [options]\n"
             "       COLLECTIVE: allreduce, reduce_scatter, all_gather, broadcast, alltoall or all\n",
    .about = "nccl-tests' sweep through ddpbench's comm interface (NCCL on GPUs, MPI on the CPU device), with its "
             "options, table and busbw factors, plus per-iteration median/p10/p90, the slowest rank, exact data "
             "checks naming the rank, host and element of a wrong value, and --under-load. Several collectives "
             "may be given (or a comma list). Options take nccl-tests' short and long names and ddpbench's "
             "--dashed ones.\n"
             "Example: mpirun -np 8 ddpbench collectives all_gather -b 8 -e 8G -f 2 --json coll.json\n",
    .flags = CMD_MPI | CMD_PLACE | CMD_COMM | CMD_OUTPUTS | CMD_VERDICT | CMD_HASH_LINES,
    .args_size = sizeof(coll_opts),
    .tables = coll_tables,
    .validate = coll_validate,
    .timeout = coll_timeout,
    .cpu_threads = 1,
    .run = coll_run,
};
