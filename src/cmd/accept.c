/* accept_main.c: `ddpbench accept`, the cluster acceptance checks as one MPI job (until they become measurement
 * plug-ins of the main run): every rank measures its GPU (sustained GEMM per precision with NVML samples, pinned
 * copies alone and with the whole node at once, memory error counters, links), the first rank of each node
 * measures the node's GPU-to-GPU copy matrix, then every node allreduces inside itself and node pairs allreduce
 * in rounds (comm->split groups). Rank 0 judges everything against the expectations (built-in table, --expect
 * FILE, --baseline RESULT) and against peers, localises a slow node or a slow pair, prints the findings, the
 * failing checks by host and `hosts: N pass, N warn, N fail`, writes --failed-hosts and --json, and exits 4 when
 * a check failed (--strict: or warned). It never judges a figure it did not measure: a missing measurement fails
 * its check, a missing expectation skips only the absolute check.
 *
 * defines: accept_main; in order: options, device choice, per-GPU measurement, collectives, judging, printing,
 *          the result file */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accept.h"
#include "commands.h"
#include "expect.h"
#include "health.h"
#include "measure.h"
#include "nvml_dl.h"
#include "stats.h"
#include "watchdog.h"

#define ACC_MAX_P2P 8
#define ACC_INTERVAL_S 0.1 /* one GEMM interval: ten per second, so the first and last second have a median */

/* ---- options ---- */
typedef struct {
  double seconds, rel_warn, rel_fail;
  int gemm_n, copy_mib, copy_iters, p2p_mib, strict;
  double tolerance, timeout;
  int pair_mib, allreduce_iters, pair_repeats;
  int pairs; /* 0 auto, 1 tournament, 2 ring, 3 none */
  char node_mib[64];
  char precisions[64], skip[64], expect[512], baseline[512];
} acc_opts;

#define OFF(f) offsetof(acc_opts, f), 0
#define STR(f) offsetof(acc_opts, f), sizeof(((acc_opts *)0)->f)
static const opt_spec GEMM[] = {
    {"health_seconds", NULL, 0, OPT_DOUBLE, OFF(seconds), "5", 1e-3, 86400, .arg = "SECONDS",
     .help = "seconds of sustained GEMM per precision"},
    {"precisions", NULL, 0, OPT_STR, STR(precisions), "bf16,fp16,tf32,fp32", .arg = "LIST",
     .help = "GEMM precisions (cpu device: fp32 only)"},
    {"gemm_n", NULL, 0, OPT_INT, OFF(gemm_n), "0", 0, 1 << 20, .arg = "N", .help = "GEMM size n (n x n x n); 0 = 8192 on a GPU, 512 on cpu"},
};
static const opt_spec COPIES[] = {
    {"copy_mib", NULL, 0, OPT_INT, OFF(copy_mib), "256", 1, 1 << 20, .arg = "MIB", .help = "pinned host<->device copy size, MiB"},
    {"copy_iters", NULL, 0, OPT_INT, OFF(copy_iters), "20", 1, 1 << 20, .help = "timed copies each way"},
    {"p2p_mib", NULL, 0, OPT_INT, OFF(p2p_mib), "256", 1, 1 << 20, .arg = "MIB", .help = "GPU-to-GPU copy size, MiB"},
};
static const opt_spec COLL[] = {
    {"node_mib", NULL, 0, OPT_STR, STR(node_mib), "0", .arg = "LIST",
     .help = "per-node allreduce sizes, MiB (0 = 64,1024 on a GPU, 1,8 on cpu)"},
    {"pairs", NULL, 0, OPT_ENUM, OFF(pairs), "auto", .choices = "auto|tournament|ring|none",
     .help = "node pairs (auto = tournament up to 16 nodes, ring beyond)"},
    {"pair_mib", NULL, 0, OPT_INT, OFF(pair_mib), "0", 0, 1 << 20, .arg = "MIB",
     .help = "node-pair allreduce size, MiB (0 = 64 on a GPU, 4 on cpu)"},
    {"allreduce_iters", NULL, 0, OPT_INT, OFF(allreduce_iters), "5", 1, 1 << 20, .help = "timed allreduces per size and group"},
    {"pair_repeats", NULL, 0, OPT_INT, OFF(pair_repeats), "2", 1, 1 << 20,
     .help = "passes over the pair schedule; a pair counts its best pass"},
};
static const opt_spec JUDGE[] = {
    {"skip", NULL, 0, OPT_STR, STR(skip), "", .arg = "LIST", .help = "measurements to skip: gemm,copy,p2p,node,pairs"},
    {"relative_warn_pct", NULL, 0, OPT_DOUBLE, OFF(rel_warn), "5", 0, 100, .arg = "PCT",
     .help = "warn this far below the median of the same GPU model"},
    {"relative_fail_pct", NULL, 0, OPT_DOUBLE, OFF(rel_fail), "10", 0, 100, .arg = "PCT", .help = "fail this far below it"},
    {"expect", NULL, 0, OPT_STR, STR(expect), "", .arg = "FILE", .help = "INI file of expectations overriding the built-in table"},
    {"baseline", NULL, 0, OPT_STR, STR(baseline), "", .arg = "FILE",
     .help = "a known-good run's --json: its figures, less the tolerance, are the floors"},
    {"tolerance_pct", NULL, 0, OPT_DOUBLE, OFF(tolerance), "10", 0, 99.999, .arg = "PCT",
     .help = "--baseline: how far below the baseline's figure a floor sits"},
    {"strict", NULL, 0, OPT_BOOL, OFF(strict), "false", .help = "a warning fails too (exit 4)"},
    {"timeout", NULL, 0, OPT_DOUBLE, OFF(timeout), "600", 0, 1e9, .arg = "SECONDS",
     .help = "seconds without progress before the job ends (exit 3, naming the ranks that stopped); at least 2 x "
             "--health-seconds + 10 when given, raised to that when not; 0 = never"},
};
static const opt_table TABLES[] = {
    {"the sustained GEMM", GEMM, (int)(sizeof GEMM / sizeof GEMM[0])},
    {"copies", COPIES, (int)(sizeof COPIES / sizeof COPIES[0])},
    {"allreduce inside nodes and over node pairs", COLL, (int)(sizeof COLL / sizeof COLL[0])},
    {"verdicts", JUDGE, (int)(sizeof JUDGE / sizeof JUDGE[0])},
};

static ddp_result acc_tables(opt_set *s, void *args) {
  for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) DDP_TRY(opt_set_add(s, &TABLES[i], args));
  return DDP_OK;
}

static double acc_timeout(const void *args) { return ((const acc_opts *)args)->timeout; }

/* --pairs as the schedule: auto is the default for the node count. */
static accept_pairs_mode pairs_mode(const acc_opts *o, int nnodes) {
  static const accept_pairs_mode m[] = {PAIRS_NONE, PAIRS_TOURNAMENT, PAIRS_RING, PAIRS_NONE};
  return o->pairs == 0 ? accept_pairs_default(nnodes) : m[o->pairs & 3];
}

/* Where a key's value came from, for messages ("--timeout", "cfg.ini:4"). */
static const char *wh(const cmd_ctx *c, const char *key, char *buf, size_t n) {
  const char *w = opt_where(&c->opts, key, buf, n);
  if (w) return w;
  snprintf(buf, n, "--%s", key);
  for (char *p = buf; *p; p++)
    if (*p == '_') *p = '-';
  return buf;
}

/* Cross-key checks and the files, before MPI starts: bad input costs nothing. */
static ddp_result acc_validate(cmd_ctx *c) {
  acc_opts *o = c->args;
  char w[1100];
  if (!opt_given(&c->opts, "timeout") && o->timeout < 2 * o->seconds + 10) o->timeout = 2 * o->seconds + 10; /* long GEMM loops */
  if (o->timeout > 0 && o->timeout < 2 * o->seconds + 10) { /* one precision's GEMM loop is one watchdog step */
    const char *where = wh(c, "timeout", w, sizeof w);
    return ddp_usage_error("accept: %s%s %g must be 0 or at least 2 x --health-seconds + 10 s (%g)", where,
                           where[0] == '-' ? "" : ": timeout", o->timeout, 2 * o->seconds + 10);
  }
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%s", o->precisions);
  for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int ok = 0;
    for (int p = 0; p < HEALTH_NPREC; p++) ok |= !strcmp(t, health_prec_name(p));
    if (!ok) return ddp_usage_error("accept: %s: precisions: '%s' is not bf16, fp16, tf32 or fp32",
                                    wh(c, "precisions", w, sizeof w), t);
  }
  snprintf(tmp, sizeof tmp, "%s", o->skip);
  for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save))
    if (strcmp(t, "gemm") && strcmp(t, "copy") && strcmp(t, "p2p") && strcmp(t, "node") && strcmp(t, "pairs"))
      return ddp_usage_error("accept: %s: skip: '%s' is not gemm, copy, p2p, node or pairs",
                             wh(c, "skip", w, sizeof w), t);
  snprintf(tmp, sizeof tmp, "%s", o->node_mib);
  for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *end = NULL;
    long v = strtol(t, &end, 10);
    if (end == t || *end || v < 0 || v > 1 << 16)
      return ddp_usage_error("accept: %s: node_mib: '%s' is not a size in MiB", wh(c, "node_mib", w, sizeof w), t);
  }
  if (o->expect[0]) { /* the file is read now: bad input costs nothing */
    expect_set e;
    expect_builtin(&e, "", 0, 0, 0);
    DDP_TRY(expect_load_file(&e, o->expect));
  }
  if (o->baseline[0]) { /* likewise the baseline: a ddpbench result with accept figures */
    result_doc b;
    DDP_TRY(result_load(o->baseline, &b));
    int n = 0;
    for (int i = 0; i < b.nrecords; i++) /* per-GPU figures, or the node and pair allreduces */
      n += !strcmp(b.records[i].measurement, "accept") || !strcmp(b.records[i].measurement, "allreduce");
    result_free(&b);
    if (!n) return ddp_usage_error("accept: --baseline %s: no accept figures in it (made by `ddpbench accept --json`?)", o->baseline);
  }
  return DDP_OK;
}

static int listed(const char *list, const char *name) {
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%s", list);
  for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save))
    if (!strcmp(t, name)) return 1;
  return 0;
}

/* ---- one rank's record, gathered to rank 0 as bytes ---- */
typedef struct {
  char host[256], gpu[128], busid[32];
  int rank, node, local_rank, cuda;
  int gemm_ran[HEALTH_NPREC];
  health_gemm_result gemm[HEALTH_NPREC];
  int copy_ran, pid, ordinal;
  double memory;
  health_copy_result alone, together;
  nvml_gpu nv; /* identity and links, read again right after the copies (an idle GPU lowers its PCIe gen) */
  nvml_mem_health mem;
  expect_set exp;
  int p2p_n; /* node's first rank: the GPU-to-GPU matrix of the GPUs it sees */
  double p2p_uni[ACC_MAX_P2P * ACC_MAX_P2P], p2p_bi[ACC_MAX_P2P * ACC_MAX_P2P];
  int p2p_peer[ACC_MAX_P2P * ACC_MAX_P2P];
} acc_rec;

static ddp_result node_barrier(const ddp_dist *d) {
  int e = MPI_Barrier(d->node);
  return e == MPI_SUCCESS ? DDP_OK : mpi_fail(e, "MPI_Barrier", __FILE__, __LINE__);
}

/* ---- the result file: one record per figure, read back by --baseline ---- */
static const char *rec_metric(expect_key k) { return expect_keys[k].name; }

/* The baseline's figure for this GPU (same host and bus id), else the median over the baseline's GPUs of the
 * same model; NaN when it has neither. */
static double baseline_value(const result_doc *b, const char *metric, const acc_rec *r) {
  /* per GPU; the GPU-to-GPU pairs (one record per pair) go by the model's median */
  char rank[16];
  snprintf(rank, sizeof rank, "%d", r->rank);
  const result_record *x = NULL;
  if (!strcmp(metric, rec_metric(EXP_P2P))) x = NULL;
  else if (r->busid[0]) x = result_find(b, "accept", "world", metric, "host", r->host, "gpu", r->busid, NULL);
  else x = result_find(b, "accept", "world", metric, "host", r->host, "rank", rank, NULL); /* cpu: no bus id */
  if (x && isfinite(x->value)) return x->value;
  double *v = malloc((size_t)(b->nrecords + 1) * sizeof *v);
  int n = 0;
  for (int i = 0; v && i < b->nrecords; i++) {
    const result_record *y = &b->records[i];
    const char *model = result_record_label(y, "model");
    if (!strcmp(y->measurement, "accept") && !strcmp(y->metric, metric) && model && !strcmp(model, r->gpu) &&
        isfinite(y->value))
      v[n++] = y->value;
  }
  double m = n ? stats_percentile(v, n, 0.5) : NAN;
  free(v);
  return m;
}

static ddp_result baseline_apply(const acc_opts *o, acc_rec *r) {
  result_doc b;
  DDP_TRY(result_load(o->baseline, &b));
  const expect_key keys[] = {EXP_GEMM_BF16, EXP_GEMM_FP16, EXP_GEMM_TF32, EXP_GEMM_FP32, EXP_H2D, EXP_D2H, EXP_P2P};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    double v = baseline_value(&b, rec_metric(keys[i]), r);
    if (!isfinite(v)) continue;
    r->exp.v[keys[i]] = v * (1 - o->tolerance / 100);
    snprintf(r->exp.src[keys[i]], sizeof r->exp.src[0], "baseline %.3g - %g %%", v, o->tolerance);
  }
  result_free(&b);
  return DDP_OK;
}

/* ---- allreduce over groups of ranks: each node, node pairs in rounds ---- */
#define ACC_MAX_SIZES 4

/* What rank 0 gathers: per node and size the busbw, per pair the busbw (GB/s, nccl-tests' busbw). */
typedef struct {
  int nnodes, nsizes, npairs, ranks_per_node;
  double size_mib[ACC_MAX_SIZES];
  double *node_busbw;   /* [nnodes][nsizes], NaN where a node has one rank */
  accept_pair *pairs;   /* [npairs] */
  double *pair_busbw;   /* [npairs] */
  double pair_mib;
  accept_pairs_mode mode;
} acc_coll;

static void coll_free(acc_coll *c) {
  free(c->node_busbw);
  free(c->pairs);
  free(c->pair_busbw);
  memset(c, 0, sizeof *c);
}

/* The allreduce measurement over every group of a kind; on rank 0, out[i] = the busbw of group `name_of(i)` at
 * `bytes` (NaN where absent), keeping the better of what out already holds (repeated passes). */
static ddp_result allreduce_over(const measure_env *env, ddp_comm *world, measure_group_kind kind, int mode,
                                 result_doc *doc) {
  measure_round *rounds = NULL;
  int n = 0;
  ddp_result r = measure_rounds_build(env->dist, world, kind, mode, &rounds, &n);
  if (r == DDP_OK) r = measure_run(env, &measure_allreduce, rounds, n, doc);
  measure_rounds_free(rounds, n);
  return r;
}

static double record_busbw(const result_doc *doc, const char *group, size_t bytes) {
  char b[32];
  snprintf(b, sizeof b, "%zu", bytes);
  const result_record *x = result_find(doc, "allreduce", group, "busbw_gbs", "bytes", b, NULL);
  return x ? x->value : NAN;
}

/* Node groups and node pairs through the measurement driver (measure.h): groups from comm->split, records to
 * rank 0, then into c on rank 0. dv is this job's view of nodes (the real one or the test hook's). */
/* A rank outside a round's pairs waits: where it is, without resetting the timer (run.c's on_waiting). */
static void waiting(void *ctx, const char *what) {
  (void)ctx;
  watchdog_where(what);
}

static ddp_result collectives(const ddp_dist *dv, const acc_opts *o, int cuda, ddp_device *dev, ddp_comm *world,
                              acc_coll *c) {
  int nnodes = dv->node_count;
  memset(c, 0, sizeof *c);
  c->nnodes = nnodes;
  char sizes[64];
  snprintf(sizes, sizeof sizes, "%s", strcmp(o->node_mib, "0") ? o->node_mib : cuda ? "64,1024" : "1,8");
  for (char *save = NULL, *t = strtok_r(sizes, ",", &save); t && c->nsizes < ACC_MAX_SIZES; t = strtok_r(NULL, ",", &save))
    c->size_mib[c->nsizes++] = atof(t);
  c->pair_mib = o->pair_mib ? o->pair_mib : cuda ? 64 : 4;
  c->mode = pairs_mode(o, nnodes);
  if (listed(o->skip, "pairs")) c->mode = PAIRS_NONE;
  c->npairs = accept_pairs(c->mode, nnodes, NULL, 0);
  c->node_busbw = malloc(sizeof(double) * (nnodes * ACC_MAX_SIZES + 1));
  c->pairs = calloc((size_t)c->npairs + 1, sizeof *c->pairs);
  c->pair_busbw = malloc(sizeof(double) * (c->npairs + 1));
  DDP_CHECK_ALLOC(c->node_busbw && c->pairs && c->pair_busbw);
  accept_pairs(c->mode, nnodes, c->pairs, c->npairs);
  for (int i = 0; i < nnodes * ACC_MAX_SIZES; i++) c->node_busbw[i] = NAN;
  for (int i = 0; i < c->npairs; i++) c->pair_busbw[i] = NAN;

  ddp_config cfg;
  config_defaults(&cfg);
  allreduce_params node_p = {c->nsizes, {0}, o->allreduce_iters}, pair_p = {1, {c->pair_mib}, o->allreduce_iters};
  for (int k = 0; k < c->nsizes; k++) node_p.mib[k] = c->size_mib[k];
  measure_env env = {.cfg = &cfg, .dist = dv, .dev = dev, .params = &node_p, .waiting = waiting};
  result_doc doc;
  result_init(&doc);
  ddp_result r = DDP_OK;
  watchdog_tick("accept: allreduce on each node");
  if (r == DDP_OK && !listed(o->skip, "node")) r = allreduce_over(&env, world, GROUP_NODE, 0, &doc);
  /* every pass over the pair schedule; a pair keeps its best pass (a healthy pair slowed once by a neighbour's
   * burst is not named; a slow link is slow in every pass) */
  env.params = &pair_p;
  for (int pass = 0; r == DDP_OK && c->npairs && pass < o->pair_repeats; pass++) {
    result_doc one;
    result_init(&one);
    char what[96];
    snprintf(what, sizeof what, "accept: node-pair allreduces, pass %d of %d", pass + 1, o->pair_repeats);
    watchdog_tick(what);
    r = allreduce_over(&env, world, GROUP_PAIR, (int)c->mode, &one);
    size_t bytes = (size_t)(c->pair_mib * (1 << 20)) & ~(size_t)3;
    for (int p = 0; r == DDP_OK && dv->rank == 0 && p < c->npairs; p++) {
      char g[64];
      snprintf(g, sizeof g, "pair:%d-%d", c->pairs[p].a, c->pairs[p].b);
      double v = record_busbw(&one, g, bytes);
      if (isnan(c->pair_busbw[p]) || v > c->pair_busbw[p]) c->pair_busbw[p] = v;
    }
    result_free(&one);
  }
  /* node groups are named after their host: rank 0 maps them to node indices with every rank's (node, host) */
  char (*hosts)[256] = dv->rank == 0 ? calloc((size_t)dv->size, sizeof *hosts) : NULL;
  int *nodes = dv->rank == 0 ? calloc((size_t)dv->size, sizeof *nodes) : NULL;
  if (r == DDP_OK && dv->rank == 0 && (!hosts || !nodes)) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  int e = r == DDP_OK ? MPI_Gather(dv->host, 256, MPI_CHAR, hosts, 256, MPI_CHAR, 0, dv->world) : MPI_SUCCESS;
  if (e == MPI_SUCCESS && r == DDP_OK) e = MPI_Gather(&dv->node_index, 1, MPI_INT, nodes, 1, MPI_INT, 0, dv->world);
  if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Gather", __FILE__, __LINE__);
  for (int i = 0; r == DDP_OK && dv->rank == 0 && i < dv->size; i++)
    for (int k = 0; k < c->nsizes; k++) {
      char g[80];
      snprintf(g, sizeof g, "node:%.56s", hosts[i]);
      c->node_busbw[nodes[i] * ACC_MAX_SIZES + k] = record_busbw(&doc, g, (size_t)(c->size_mib[k] * (1 << 20)) & ~(size_t)3);
    }
  free(hosts);
  free(nodes);
  result_free(&doc);
  return r;
}

static ddp_result measure(const ddp_dist *d, const acc_opts *o, const device_entry *de, ddp_device *dev,
                          ddp_comm *world, acc_rec *r, acc_coll *coll) {
  int cuda = de->is_gpu;
  memset(r, 0, sizeof *r);
  ddp_dist dv = *d; /* nodes as the job sees them (dist_emulate_nodes) */
  r->node = dv.node_index;
  snprintf(r->host, sizeof r->host, "%s", dv.host);
  r->rank = d->rank, r->local_rank = d->local_rank, r->cuda = cuda;
  int ngpu = cuda ? de->available() : 0;
  snprintf(r->gpu, sizeof r->gpu, "%s", dev->info.name);
  r->pid = (int)getpid(), r->ordinal = dev->info.ordinal, r->memory = (double)dev->info.memory;
  snprintf(r->busid, sizeof r->busid, "%s", dev->info.pci_bus_id);
  nvml_api api;
  char why[128];
  int have = cuda && nvml_open(&api, why, sizeof why);
  nvml_device nd = NULL;
  if (have && api.handle_by_busid(r->busid, &nd) != NVML_DL_SUCCESS) nd = NULL;
  if (have && nd) {
    nvml_gpu_query(&api, r->busid, &r->nv);
    nvml_mem_health_read(&api, nd, &r->mem);
  } else {
    r->mem = (nvml_mem_health){-1, -1, -1, -1, -1, -1, -1, -1};
  }
  expect_builtin(&r->exp, r->gpu, r->nv.pcie_gen_max, r->nv.pcie_width_max, r->nv.link_version);
  ddp_result e = DDP_OK;
  if (o->expect[0]) e = expect_load_file(&r->exp, o->expect);
  if (e == DDP_OK && o->baseline[0]) e = baseline_apply(o, r);
  int n = o->gemm_n ? o->gemm_n : cuda ? 8192 : 512;
  /* The GEMMs of a node run together, as in training: a node's power and cooling are loaded as they will be. */
  for (int p = 0; e == DDP_OK && p < HEALTH_NPREC && !listed(o->skip, "gemm"); p++) {
    if (!listed(o->precisions, health_prec_name(p)) || (!cuda && p != HEALTH_FP32)) continue;
    char what[96];
    snprintf(what, sizeof what, "accept: sustained %s GEMM, %g s", health_prec_name(p), o->seconds);
    watchdog_tick(what);
    watchdog_test_fault(d->rank, "accept");
    e = node_barrier(d);
    if (e == DDP_OK) e = health_gemm_run(dev, (health_prec)p, n, o->seconds, ACC_INTERVAL_S,
                                         have ? &api : NULL, nd, &r->gemm[p]);
    r->gemm_ran[p] = e == DDP_OK;
  }
  /* one GPU at a time, then the whole node at once; the cpu device has no link to measure */
  if (e == DDP_OK && cuda && !listed(o->skip, "copy")) {
    size_t bytes = (size_t)o->copy_mib << 20;
    watchdog_tick("accept: pinned host<->device copies");
    for (int lr = 0; e == DDP_OK && lr < d->local_size; lr++) {
      e = node_barrier(d);
      if (e == DDP_OK && lr == d->local_rank) e = health_copy_run(dev, bytes, o->copy_iters, &r->alone);
    }
    if (e == DDP_OK) e = node_barrier(d);
    if (e == DDP_OK) e = health_copy_run(dev, bytes, o->copy_iters, &r->together);
    r->copy_ran = e == DDP_OK;
    if (have && nd) nvml_gpu_query(&api, r->busid, &r->nv);
  }
  if (e == DDP_OK && de->peer_matrix && !listed(o->skip, "p2p") && d->local_rank == 0 && ngpu >= 2) {
    r->p2p_n = ngpu < ACC_MAX_P2P ? ngpu : ACC_MAX_P2P;
    watchdog_tick("accept: the GPU-to-GPU copy matrix");
    e = de->peer_matrix(r->p2p_n, (size_t)o->p2p_mib << 20, 10, r->p2p_uni, r->p2p_bi, r->p2p_peer);
  }
  if (have) nvml_close(&api);
  if (e == DDP_OK && d->size > 1) e = collectives(&dv, o, cuda, dev, world, coll);
  return e;
}

/* ---- findings (rank 0) ---- */
typedef struct {
  accept_severity sev;
  char check[24], scope[8], subject[48], host[256], unit[12], text[200];
  double measured, expected, margin;
  int rank; /* the rank it is about, -1 for a node or a pair */
} acc_finding;

typedef struct {
  acc_finding *f;
  int n, cap;
} acc_findings;

static acc_finding *finding_add(acc_findings *fs, accept_severity sev, const char *check, const char *scope,
                                const char *host, const char *subject) {
  if (fs->n == fs->cap) {
    int cap = fs->cap ? 2 * fs->cap : 64;
    acc_finding *p = realloc(fs->f, (size_t)cap * sizeof *p);
    if (!p) return NULL;
    fs->f = p, fs->cap = cap;
  }
  acc_finding *f = &fs->f[fs->n++];
  memset(f, 0, sizeof *f);
  f->sev = sev;
  f->rank = -1;
  f->measured = f->expected = f->margin = NAN;
  snprintf(f->check, sizeof f->check, "%s", check);
  snprintf(f->scope, sizeof f->scope, "%s", scope);
  snprintf(f->host, sizeof f->host, "%s", host);
  snprintf(f->subject, sizeof f->subject, "%s", subject);
  return f;
}

/* One decimal from 100 up, three significant digits below (a CPU's 0.0412 TFLOP/s is not 0.0). */
static void fmt_num(char *buf, size_t n, double v) {
  if (!isfinite(v)) snprintf(buf, n, "-");
  else if (fabs(v) >= 100 || v == 0) snprintf(buf, n, "%.1f", v);
  else snprintf(buf, n, "%.3g", v);
}

static const char *num(char *buf, double v) {
  fmt_num(buf, 16, v);
  return buf;
}

/* Absolute (vs the expectation, when there is one) and relative (vs the median of the same GPU model) checks of
 * one figure, higher is better. */
static void judge_pair(acc_findings *fs, const acc_opts *o, const acc_rec *r, const char *check, const char *scope,
                       const char *subject, double measured, expect_key key, double peer_median, double z, int size,
                       const char *unit) {
  double margin;
  double floor_v = r->exp.v[key], warn = isfinite(r->exp.v[EXP_WARN_PCT]) ? r->exp.v[EXP_WARN_PCT] : 5;
  if (isfinite(floor_v)) {
    /* a floor with a warn band above it: warn between floor and floor (1 + warn %), fail below the floor */
    accept_severity s = accept_judge(measured, floor_v * (1 + warn / 100), 1, 0, 100 * warn / (100 + warn), &margin);
    acc_finding *f = finding_add(fs, s, check, scope, r->host, subject);
    if (f && !strcmp(scope, "gpu")) f->rank = r->rank;
    if (f) {
      f->measured = measured, f->expected = floor_v, f->margin = isfinite(measured) ? 100 * (measured - floor_v) / floor_v : NAN;
      snprintf(f->unit, sizeof f->unit, "%s", unit);
      snprintf(f->text, sizeof f->text, "floor from %s", r->exp.src[key]);
    }
  }
  if (isfinite(peer_median) && size >= 4) {
    accept_severity s = accept_relative(measured, peer_median, z, size, o->rel_warn, o->rel_fail, 3.5, &margin);
    char c[24];
    snprintf(c, sizeof c, "%s.rel", check);
    acc_finding *f = finding_add(fs, s, c, scope, r->host, subject);
    if (f && !strcmp(scope, "gpu")) f->rank = r->rank;
    if (f) {
      f->measured = measured, f->expected = peer_median, f->margin = margin;
      snprintf(f->unit, sizeof f->unit, "%s", unit);
      snprintf(f->text, sizeof f->text, "vs the median of %d %s (robust z %.1f; named below -3.5)", size, r->gpu, z);
    }
  }
}

static void judge(const acc_opts *o, const acc_rec *all, int W, acc_findings *fs) {
  const char **model = malloc((size_t)W * sizeof *model);
  double *x = malloc((size_t)W * sizeof *x), *ref = malloc((size_t)W * sizeof *ref), *z = malloc((size_t)W * sizeof *z);
  int *size = malloc((size_t)W * sizeof *size);
  if (!model || !x || !ref || !z || !size) goto out;
  for (int i = 0; i < W; i++) model[i] = all[i].gpu;
  char subj[48];
  for (int p = 0; p < HEALTH_NPREC; p++) {
    int any = 0;
    for (int i = 0; i < W; i++) any |= all[i].gemm_ran[p], x[i] = all[i].gemm_ran[p] ? all[i].gemm[p].median_tflops : NAN;
    if (!any) continue;
    accept_group_stats(x, model, W, ref, z, size);
    char check[24];
    snprintf(check, sizeof check, "gemm_%s", health_prec_name(p));
    for (int i = 0; i < W; i++) {
      if (!all[i].gemm_ran[p]) continue;
      snprintf(subj, sizeof subj, "rank %d %s", all[i].rank, all[i].busid[0] ? all[i].busid : "cpu");
      judge_pair(fs, o, &all[i], check, "gpu", subj, x[i], (expect_key)(EXP_GEMM_BF16 + p), ref[i], z[i], size[i], "TFLOP/s");
      const health_gemm_result *g = &all[i].gemm[p];
      unsigned long long bad = nvml_reasons_bad(g->reasons);
      char rs[96];
      acc_finding *f = finding_add(fs, bad ? ACCEPT_FAIL : ACCEPT_PASS, "throttle", "gpu", all[i].host, subj);
      if (f) f->rank = all[i].rank;
      if (f) {
        f->measured = g->drift_pct;
        snprintf(f->unit, sizeof f->unit, "%% drift");
        char a[16], b[16];
        snprintf(f->text, sizeof f->text, "%s: reasons %s; first second %s, last %s TFLOP/s%s", health_prec_name(p),
                 g->nsamples ? nvml_reasons_str(g->reasons, rs, sizeof rs) : "not sampled", num(a, g->first_tflops),
                 num(b, g->last_tflops), bad ? " (thermal or hardware slowdown: not a power cap)" : "");
      }
    }
  }
  for (int dir = 0; dir < 2; dir++) {
    int any = 0;
    for (int i = 0; i < W; i++)
      any |= all[i].copy_ran, x[i] = all[i].copy_ran ? (dir ? all[i].alone.d2h_gbps : all[i].alone.h2d_gbps) : NAN;
    if (!any) continue;
    accept_group_stats(x, model, W, ref, z, size);
    for (int i = 0; i < W; i++) {
      if (!all[i].copy_ran) continue;
      snprintf(subj, sizeof subj, "rank %d %s", all[i].rank, all[i].busid[0] ? all[i].busid : "cpu");
      judge_pair(fs, o, &all[i], dir ? "d2h" : "h2d", "gpu", subj, x[i], dir ? EXP_D2H : EXP_H2D, ref[i], z[i], size[i], "GB/s");
    }
  }
  for (int i = 0; i < W; i++) { /* links as NVML reads them: NVLinks down, PCIe trained below its maximum */
    accept_link_verdict lv[3];
    int n = accept_link_checks(&all[i].nv, all[i].exp.model[0] != 0, lv);
    snprintf(subj, sizeof subj, "rank %d %s", all[i].rank, all[i].busid);
    for (int k = 0; k < n; k++) {
      acc_finding *f = finding_add(fs, lv[k].sev, lv[k].check, "link", all[i].host, subj);
      if (f) f->rank = all[i].rank;
      if (f) {
        f->measured = lv[k].measured, f->expected = lv[k].expected;
        f->margin = 100 * (lv[k].measured - lv[k].expected) / lv[k].expected;
        snprintf(f->unit, sizeof f->unit, "%s", strcmp(lv[k].check, "nvlink") ? "" : "links");
        snprintf(f->text, sizeof f->text, "%s", lv[k].text);
      }
    }
  }
  for (int i = 0; i < W; i++) { /* memory health: any uncorrectable error or row-remap trouble fails */
    const nvml_mem_health *m = &all[i].mem;
    if (m->ecc_unc_volatile < 0 && m->rows_pending < 0) continue;
    int bad = m->ecc_unc_volatile > 0 || m->rows_pending > 0 || m->rows_failure > 0;
    snprintf(subj, sizeof subj, "rank %d %s", all[i].rank, all[i].busid);
    acc_finding *f = finding_add(fs, bad ? ACCEPT_FAIL : ACCEPT_PASS, "memory", "gpu", all[i].host, subj);
    if (f) f->rank = all[i].rank;
    if (f) {
      f->measured = (double)(m->ecc_unc_volatile > 0 ? m->ecc_unc_volatile : 0);
      f->expected = 0;
      snprintf(f->unit, sizeof f->unit, "errors");
      snprintf(f->text, sizeof f->text, "ECC uncorrected volatile %lld aggregate %lld, corrected volatile %lld; "
               "remapped rows pending %d failure %d", m->ecc_unc_volatile, m->ecc_unc_aggregate,
               m->ecc_corr_volatile, m->rows_pending, m->rows_failure);
    }
  }
  /* GPU-to-GPU pairs of each node: vs the NVLink floor and vs the node's pair median */
  for (int i = 0; i < W; i++) {
    int n = all[i].p2p_n;
    if (n < 2) continue;
    double pz[ACC_MAX_P2P * ACC_MAX_P2P], pref[ACC_MAX_P2P * ACC_MAX_P2P];
    int psize[ACC_MAX_P2P * ACC_MAX_P2P];
    const char *pg[ACC_MAX_P2P * ACC_MAX_P2P];
    for (int k = 0; k < n * n; k++) pg[k] = "pair"; /* the diagonal is NaN: left out */
    accept_group_stats(all[i].p2p_uni, pg, n * n, pref, pz, psize);
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++) {
        if (a == b) continue;
        snprintf(subj, sizeof subj, "GPU %d -> GPU %d", a, b);
        judge_pair(fs, o, &all[i], "p2p", "pair", subj, all[i].p2p_uni[a * n + b], EXP_P2P, pref[a * n + b], pz[a * n + b],
                   psize[a * n + b], "GB/s");
        if (!all[i].p2p_peer[a * n + b]) {
          acc_finding *f = finding_add(fs, ACCEPT_WARN, "p2p_access", "pair", all[i].host, subj);
          if (f) snprintf(f->text, sizeof f->text, "no peer access: the driver stages the copy through the host");
        }
      }
  }
out:
  free(model);
  free(x);
  free(ref);
  free(z);
  free(size);
}

static void print_measurements(const acc_opts *o, const acc_rec *all, int W) {
  printf("# sustained GEMM, %.1f s per precision, medians over ~%.0f ms intervals; NVML sampled between intervals\n",
         o->seconds, 1e3 * ACC_INTERVAL_S);
  printf("#%5s %-12s %-14s %-5s %6s %8s %8s %8s %7s %16s %16s %5s  %s\n", "rank", "host", "gpu", "prec", "n", "TFLOP/s",
         "first-s", "last-s", "drift%", "SM MHz min/med", "W med/max/lim", "T C", "clock event reasons");
  for (int i = 0; i < W; i++)
    for (int p = 0; p < HEALTH_NPREC; p++) {
      if (!all[i].gemm_ran[p]) continue;
      const health_gemm_result *g = &all[i].gemm[p];
      char clk[24] = "-", pw[24] = "-", rs[96] = "-";
      if (g->nsamples) {
        snprintf(clk, sizeof clk, "%u/%u", g->sm_mhz_min, g->sm_mhz_median);
        snprintf(pw, sizeof pw, "%.0f/%.0f/%.0f", g->power_w_median, g->power_w_max, g->power_limit_w);
        nvml_reasons_str(g->reasons, rs, sizeof rs);
      }
      char a[16], b[16], c[16];
      printf(" %5d %-12.12s %-14.14s %-5s %6d %8s %8s %8s %7.1f %16s %16s %5u  %s\n", all[i].rank, all[i].host,
             all[i].gpu, health_prec_name(p), g->n, num(a, g->median_tflops), num(b, g->first_tflops),
             num(c, g->last_tflops), g->drift_pct, clk, pw, g->temp_c_max, rs);
    }
  int any = 0;
  for (int i = 0; i < W; i++) any |= all[i].copy_ran;
  if (any) {
    printf("# pinned host<->device copies, %d MiB, median of %d: each GPU alone, then every GPU of the node at once\n",
           o->copy_mib, o->copy_iters);
    printf("#%5s %-12s %-14s %-12s %10s %10s %10s %10s %10s\n", "rank", "host", "gpu", "link", "H2D alone",
           "D2H alone", "H2D node", "D2H node", "link GB/s");
    for (int i = 0; i < W; i++) {
      if (!all[i].copy_ran) continue;
      char link[24] = "-";
      const nvml_gpu *v = &all[i].nv;
      double raw = expect_pcie_gbps(v->pcie_gen_max, v->pcie_width_max);
      if (v->pcie_gen_max) snprintf(link, sizeof link, "Gen%u x%u", v->pcie_gen, v->pcie_width);
      char r1[16];
      fmt_num(r1, sizeof r1, raw > 0 ? raw : NAN);
      printf(" %5d %-12.12s %-14.14s %-12s %10.1f %10.1f %10.1f %10.1f %10s\n", all[i].rank, all[i].host, all[i].gpu,
             link, all[i].alone.h2d_gbps, all[i].alone.d2h_gbps, all[i].together.h2d_gbps, all[i].together.d2h_gbps, r1);
    }
  }
  for (int i = 0; i < W; i++) {
    int n = all[i].p2p_n;
    if (n < 2) continue;
    printf("# GPU-to-GPU copies on host %s (node %d), %d MiB, GB/s: one direction (both directions at once)\n",
           all[i].host, all[i].node, o->p2p_mib);
    printf("#%6s", "src\\dst");
    for (int b = 0; b < n; b++) printf(" %15d", b);
    printf("\n");
    for (int a = 0; a < n; a++) {
      printf(" %6d", a);
      for (int b = 0; b < n; b++) {
        char cell[32] = "-";
        if (a != b) snprintf(cell, sizeof cell, "%.1f (%.1f)%s", all[i].p2p_uni[a * n + b], all[i].p2p_bi[a * n + b],
                             all[i].p2p_peer[a * n + b] ? "" : "*");
        printf(" %15s", cell);
      }
      printf("\n");
    }
  }
}

/* The first rank of each node (acceptance's view of nodes). */
static const acc_rec *node_rec(const acc_rec *all, int W, int node) {
  for (int i = 0; i < W; i++)
    if (all[i].node == node) return &all[i];
  return NULL;
}

static void print_coll(const acc_opts *o, const acc_rec *all, int W, const acc_coll *c) {
  if (c->nsizes && c->nnodes && !listed(o->skip, "node")) {
    printf("# allreduce inside each node (all nodes at once), busbw GB/s, %d timed each\n#%-5s %-14s", o->allreduce_iters,
           "node", "host");
    for (int k = 0; k < c->nsizes; k++) printf(" %8.0fMiB", c->size_mib[k]);
    printf("\n");
    for (int n = 0; n < c->nnodes; n++) {
      const acc_rec *r = node_rec(all, W, n);
      printf(" %-5d %-14.14s", n, r ? r->host : "?");
      for (int k = 0; k < c->nsizes; k++) {
        char b[16];
        fmt_num(b, sizeof b, c->node_busbw[n * ACC_MAX_SIZES + k]);
        printf(" %11s", b);
      }
      printf("\n");
    }
  }
  if (c->npairs) {
    printf("# allreduce over node pairs (%s, %d round%s of disjoint pairs), %.0f MiB, busbw GB/s\n",
           c->mode == PAIRS_RING ? "ring" : "tournament", c->pairs[c->npairs - 1].round + 1,
           c->pairs[c->npairs - 1].round ? "s" : "", c->pair_mib);
    for (int p = 0; p < c->npairs; p++) {
      const acc_rec *a = node_rec(all, W, c->pairs[p].a), *b = node_rec(all, W, c->pairs[p].b);
      char v[16];
      fmt_num(v, sizeof v, c->pair_busbw[p]);
      printf(" round %-3d %s - %s: %s\n", c->pairs[p].round, a ? a->host : "?", b ? b->host : "?", v);
    }
  }
}

/* The baseline's busbw for the node pair of hosts ha and hb (its allreduce record: group pair:<a>-<b>, label
 * hosts "A,B", in either order: node numbers may differ between runs, host names do not); NaN when none. */
static double baseline_pair(const result_doc *b, const char *ha, const char *hb) {
  char ab[160], ba[160];
  snprintf(ab, sizeof ab, "%.70s,%.70s", ha, hb);
  snprintf(ba, sizeof ba, "%.70s,%.70s", hb, ha);
  for (int i = 0; i < b->nrecords; i++) {
    const result_record *x = &b->records[i];
    const char *h = result_record_label(x, "hosts");
    if (strcmp(x->measurement, "allreduce") || strncmp(x->group, "pair:", 5) || strcmp(x->metric, "busbw_gbs") || !h)
      continue;
    if ((!strcmp(h, ab) || !strcmp(h, ba)) && isfinite(x->value)) return x->value;
  }
  return NAN;
}

static void judge_coll(const acc_opts *o, const acc_rec *all, int W, const acc_coll *c, acc_findings *fs) {
  char subj[48];
  /* per node: relative to the other nodes at each size; the absolute floor is for 8-GPU nodes at >= 1 GiB */
  const char **grp = malloc(sizeof(char *) * (c->nnodes + 1));
  double *x = malloc(sizeof(double) * (c->nnodes + 1)), *ref = malloc(sizeof(double) * (c->nnodes + 1));
  double *z = malloc(sizeof(double) * (c->nnodes + 1));
  int *size = malloc(sizeof(int) * (c->nnodes + 1));
  for (int k = 0; grp && x && ref && z && size && k < c->nsizes && !listed(o->skip, "node"); k++) {
    for (int n = 0; n < c->nnodes; n++) {
      const acc_rec *r = node_rec(all, W, n);
      grp[n] = r ? r->gpu : "?";
      x[n] = c->node_busbw[n * ACC_MAX_SIZES + k];
    }
    accept_group_stats(x, grp, c->nnodes, ref, z, size);
    for (int n = 0; n < c->nnodes; n++) {
      const acc_rec *r = node_rec(all, W, n);
      if (!r || !isfinite(x[n])) continue;
      int per_node = 0;
      for (int i = 0; i < W; i++) per_node += all[i].node == n;
      snprintf(subj, sizeof subj, "node %d, %.0f MiB", n, c->size_mib[k]);
      acc_rec rr = *r; /* the node floor applies to 8-GPU nodes at >= 1 GiB only */
      if (!(per_node == 8 && c->size_mib[k] >= 1024)) rr.exp.v[EXP_NODE_BUSBW] = NAN;
      judge_pair(fs, o, &rr, "node_busbw", "host", subj, x[n], EXP_NODE_BUSBW, ref[n], z[n], size[n], "GB/s");
    }
  }
  free(grp), free(x), free(ref), free(z), free(size);
  if (!c->npairs) return;
  /* node pairs: a node whose every pair is slow is named (its host); a single slow pair is named as a pair */
  accept_localization loc;
  if (accept_localize(c->nnodes, c->pairs, c->pair_busbw, c->npairs, o->rel_fail, 3.5, &loc) != DDP_OK) return;
  result_doc base_doc, *base = NULL; /* checked readable and an accept result before the measurements */
  if (o->baseline[0] && result_load(o->baseline, &base_doc) == DDP_OK) base = &base_doc;
  for (int n = 0; n < c->nnodes; n++) {
    const acc_rec *r = node_rec(all, W, n);
    if (!r || !loc.node_bad[n]) continue;
    snprintf(subj, sizeof subj, "node %d (all its pairs)", n);
    acc_finding *f = finding_add(fs, ACCEPT_FAIL, "pair_busbw", "host", r->host, subj);
    if (f) {
      f->measured = loc.node_value[n], f->expected = loc.reference;
      f->margin = 100 * (loc.node_value[n] - loc.reference) / loc.reference;
      snprintf(f->unit, sizeof f->unit, "GB/s");
      snprintf(f->text, sizeof f->text, "every pair with this node is more than %g %% below the pair reference (its "
               "NIC, its host); its partners are fine with others", o->rel_fail);
    }
  }
  for (int p = 0; p < c->npairs; p++) {
    const acc_rec *a = node_rec(all, W, c->pairs[p].a), *b = node_rec(all, W, c->pairs[p].b);
    if (!a || !b) continue;
    char pair[80];
    snprintf(pair, sizeof pair, "%.38s<->%.38s", a->host, b->host);
    snprintf(subj, sizeof subj, "nodes %d-%d", c->pairs[p].a, c->pairs[p].b);
    if (loc.pair_state[p] == 1) {
      acc_finding *f = finding_add(fs, ACCEPT_FAIL, "pair_busbw", "pair", pair, subj);
      if (f) {
        f->measured = c->pair_busbw[p], f->expected = loc.reference;
        f->margin = 100 * (c->pair_busbw[p] - loc.reference) / loc.reference;
        snprintf(f->unit, sizeof f->unit, "GB/s");
        snprintf(f->text, sizeof f->text, "this pair alone is slow (both nodes are fine with their other partners): "
                 "the path between them");
      }
    }
    double floor_v = a->exp.v[EXP_PAIR_BUSBW], m;
    double bv = base ? baseline_pair(base, a->host, b->host) : NAN;
    char bsrc[64] = "";
    if (isfinite(bv)) { /* --baseline: the same pair's figure in the good run, less the tolerance */
      floor_v = bv * (1 - o->tolerance / 100);
      snprintf(bsrc, sizeof bsrc, "baseline %.3g - %g %%", bv, o->tolerance);
    }
    if (isfinite(floor_v)) { /* absolute: what every pair shares (sockets instead of RDMA, a slow fabric) */
      accept_severity sv = accept_judge(c->pair_busbw[p], floor_v, 1, 0, 0, &m);
      acc_finding *f = finding_add(fs, sv, "pair_busbw.abs", "pair", pair, subj);
      if (f) {
        f->measured = c->pair_busbw[p], f->expected = floor_v, f->margin = m;
        snprintf(f->unit, sizeof f->unit, "GB/s");
        snprintf(f->text, sizeof f->text, "floor from %s", bsrc[0] ? bsrc : a->exp.src[EXP_PAIR_BUSBW]);
      }
    }
  }
  accept_localization_free(&loc);
  if (base) result_free(base);
}

/* The checks as findings of the one type. A check about a pair of nodes names no host: it fails the run without
 * failing a host of its own (the localisation names a node when every pair of it is slow). */
static ddp_result findings_fill(const acc_findings *fs, finding_list *l) {
  static const finding_scope scopes[] = {SCOPE_GPU, SCOPE_HOST, SCOPE_LINK, SCOPE_PAIR};
  static const char *scope_names[] = {"gpu", "host", "link", "pair"};
  for (int i = 0; i < fs->n; i++) {
    const acc_finding *f = &fs->f[i];
    finding_scope sc = SCOPE_GPU;
    for (int j = 0; j < 4; j++)
      if (!strcmp(f->scope, scope_names[j])) sc = scopes[j];
    int pair = strstr(f->host, "<->") != NULL;
    char subject[128], margin[48] = "";
    if (pair) snprintf(subject, sizeof subject, "%.60s %.60s", f->host, f->subject);
    else snprintf(subject, sizeof subject, "%s", f->subject);
    if (isfinite(f->margin)) snprintf(margin, sizeof margin, "margin %+.1f %%: ", f->margin);
    DDP_TRY(findings_add_at(l, pair ? "" : f->host, f->rank, f->check,
                            f->sev == ACCEPT_FAIL ? SEV_FAIL : f->sev == ACCEPT_WARN ? SEV_WARN : SEV_INFO, sc, subject,
                            f->measured, f->expected, f->unit, "%s%s", margin, f->text));
    /* a check that passed is recorded with the bound it met, and not listed (the throttle lines are: they say
     * which reasons the clocks gave) */
    l->v[l->n - 1].passed = f->sev == ACCEPT_PASS && strcmp(f->check, "throttle") != 0;
  }
  return DDP_OK;
}


static ddp_result add_fig(result_doc *d, const acc_rec *r, expect_key k, const char *metric, double v,
                          const char *extra_key, const char *extra) {
  char rank[16];
  snprintf(rank, sizeof rank, "%d", r->rank);
  return result_add(d, "accept", "world", metric ? metric : rec_metric(k), expect_keys[k].unit, BETTER_HIGHER, v, NULL,
                    NULL, 0, "rank", rank, "host", r->host, "gpu", r->busid, "model", r->gpu, extra_key, extra, NULL);
}

/* The run as a result document: provenance, one record per figure, the findings. */
/* The allreduce figures as the measurement writes them (measure_allreduce.c: measurement "allreduce", group
 * "node:<host>" or "pair:<a>-<b>" by node index, metric busbw_gbs, label bytes), one record per node and size
 * and per pair (its best pass), labelled with the node's host or the pair's hosts; launch/plot.py draws the
 * pair matrix. */
static ddp_result coll_records(const acc_rec *all, int W, const acc_coll *c, result_doc *d) {
  char g[80], b[32], hosts[160];
  for (int n = 0; n < c->nnodes && c->node_busbw; n++) {
    const acc_rec *r = node_rec(all, W, n);
    for (int k = 0; r && k < c->nsizes; k++) {
      double v = c->node_busbw[n * ACC_MAX_SIZES + k];
      if (isnan(v)) continue; /* a node of one rank has no allreduce inside it */
      snprintf(g, sizeof g, "node:%.56s", r->host);
      snprintf(b, sizeof b, "%zu", (size_t)(c->size_mib[k] * (1 << 20)) & ~(size_t)3);
      DDP_TRY(result_add(d, "allreduce", g, "busbw_gbs", "GB/s", BETTER_HIGHER, v, NULL, NULL, 0, "bytes", b,
                         "host", r->host, NULL));
    }
  }
  for (int p = 0; p < c->npairs && c->pair_busbw; p++) {
    const acc_rec *x = node_rec(all, W, c->pairs[p].a), *y = node_rec(all, W, c->pairs[p].b);
    if (isnan(c->pair_busbw[p])) continue;
    snprintf(g, sizeof g, "pair:%d-%d", c->pairs[p].a, c->pairs[p].b);
    snprintf(b, sizeof b, "%zu", (size_t)(c->pair_mib * (1 << 20)) & ~(size_t)3);
    snprintf(hosts, sizeof hosts, "%.70s,%.70s", x ? x->host : "?", y ? y->host : "?");
    DDP_TRY(result_add(d, "allreduce", g, "busbw_gbs", "GB/s", BETTER_HIGHER, c->pair_busbw[p], NULL, NULL, 0, "bytes",
                       b, "hosts", hosts, NULL));
  }
  return DDP_OK;
}

/* The figures as records of the document the skeleton made (its provenance is built once, there). */
static ddp_result records_fill(const acc_rec *all, int W, const acc_coll *coll, result_doc *d) {
  for (int i = 0; i < W; i++) {
    const acc_rec *r = &all[i];
    if (i < d->nranks) d->ranks[i].gemm_tflops = r->gemm_ran[HEALTH_BF16] ? r->gemm[HEALTH_BF16].median_tflops : NAN;
    for (int p = 0; p < HEALTH_NPREC; p++)
      if (r->gemm_ran[p]) {
        DDP_TRY(add_fig(d, r, (expect_key)(EXP_GEMM_BF16 + p), NULL, r->gemm[p].median_tflops, NULL, NULL));
        char m[48];
        snprintf(m, sizeof m, "gemm_%s_drift_pct", health_prec_name(p));
        char rank[16];
        snprintf(rank, sizeof rank, "%d", r->rank);
        DDP_TRY(result_add(d, "accept", "world", m, "%", BETTER_NONE, r->gemm[p].drift_pct, NULL, NULL, 0, "rank", rank,
                           "host", r->host, "gpu", r->busid, NULL));
      }
    if (r->copy_ran) {
      DDP_TRY(add_fig(d, r, EXP_H2D, NULL, r->alone.h2d_gbps, NULL, NULL));
      DDP_TRY(add_fig(d, r, EXP_D2H, NULL, r->alone.d2h_gbps, NULL, NULL));
      DDP_TRY(add_fig(d, r, EXP_H2D, "h2d_node_gbps", r->together.h2d_gbps, NULL, NULL));
      DDP_TRY(add_fig(d, r, EXP_D2H, "d2h_node_gbps", r->together.d2h_gbps, NULL, NULL));
    }
    for (int a = 0; a < r->p2p_n; a++)
      for (int b = 0; b < r->p2p_n; b++) {
        if (a == b) continue;
        char pair[32];
        snprintf(pair, sizeof pair, "%d-%d", a, b);
        DDP_TRY(add_fig(d, r, EXP_P2P, NULL, r->p2p_uni[a * r->p2p_n + b], "pair", pair));
        DDP_TRY(add_fig(d, r, EXP_P2P, "p2p_bidir_gbps", r->p2p_bi[a * r->p2p_n + b], "pair", pair));
      }
  }
  return coll_records(all, W, coll, d);
}

static ddp_result acc_run(cmd_ctx *c) {
  const acc_opts *o = c->args;
  const ddp_dist *d = &c->dist;
  c->strict = o->strict;
  acc_rec *mine = calloc(1, sizeof *mine), *all = d->rank == 0 ? calloc((size_t)d->size, sizeof *all) : NULL;
  DDP_CHECK_ALLOC(mine);
  if (d->rank == 0 && !all) {
    free(mine);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  double t0 = ddp_now();
  acc_coll coll;
  memset(&coll, 0, sizeof coll);
  ddp_result r = measure(d, o, c->pl.device, c->dev, c->comm, mine, &coll);
  int e = r == DDP_OK ? MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, 0, d->world)
                      : MPI_SUCCESS;
  if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Gather", __FILE__, __LINE__);
  if (r == DDP_OK && d->rank == 0) {
    printf("# ddpbench accept: %d rank%s on %d host%s, %s device, %.1f s of measurements\n", d->size,
           d->size == 1 ? "" : "s", d->node_count, d->node_count == 1 ? "" : "s", c->pl.device->name, ddp_now() - t0);
    print_measurements(o, all, d->size);
    print_coll(o, all, d->size, &coll);
    acc_findings fs = {0};
    judge(o, all, d->size, &fs);
    judge_coll(o, all, d->size, &coll, &fs);
    r = findings_fill(&fs, &c->doc.findings);
    if (r == DDP_OK) r = records_fill(all, d->size, &coll, &c->doc);
    free(fs.f);
  }
  coll_free(&coll);
  free(mine);
  free(all);
  return r;
}

const cmd_def cmd_accept = {
    .name = "accept",
    .summary = "cluster acceptance: per-GPU, per-node and node-pair checks with verdicts and a drain list",
    .usage = "usage: mpirun -np N ddpbench accept [options]\n",
    .about = "Per GPU: a sustained GEMM per precision (with NVML's clocks, power and throttle reasons), pinned "
             "host copies alone and with the node, the GPU-to-GPU copy matrix, memory errors and links; per node "
             "an allreduce, and node pairs in rounds. Each figure is judged against the expectations (built-in, "
             "--expect, --baseline) and against its peers; a slow node or pair is localised; failing hosts go to "
             "--failed-hosts.\nExample: mpirun -np 16 ddpbench accept --json accept.json --failed-hosts "
             "drain.txt\n",
    .cpu_note = "it measures the fp32 GEMM only (no bf16/fp16/tf32, no copies)",
    .flags = CMD_MPI | CMD_PLACE | CMD_COMM | CMD_OUTPUTS | CMD_VERDICT,
    .args_size = sizeof(acc_opts),
    .tables = acc_tables,
    .validate = acc_validate,
    .timeout = acc_timeout,
    .cpu_threads = 1,
    .run = acc_run,
};
