/* gpu_checks.c: the per-GPU acceptance checks as measurements (gpu_checks.h). The device-level measuring is
 * health.c's; here it is run over a node's ranks in the order the check needs, and its numbers become
 * records. */
#include "gpu_checks.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "nvml_dl.h"
#include "watchdog.h"

ddp_result gpu_record(result_doc *out, const measure_env *env, const char *metric, const char *unit,
                      result_better better, double value, const char *key, const char *val) {
  char rank[16];
  snprintf(rank, sizeof rank, "%d", env->dist->rank);
  return result_add(out, "accept", "world", metric, unit, better, value, NULL, NULL, 0, "rank", rank, "host",
                    env->dist->host, "gpu", env->dev->info.pci_bus_id, "model", env->dev->info.name, key, val, NULL);
}

static ddp_result group_barrier(const measure_group *g) {
  DDP_CHECK_MPI(MPI_Barrier(g->mpi));
  return DDP_OK;
}

/* NVML's view of this rank's GPU (none on the CPU device, or without NVML). */
typedef struct {
  nvml_api api;
  nvml_device dev;
  int open;
} gpu_nvml;

static void nvml_for(const measure_env *env, gpu_nvml *n) {
  memset(n, 0, sizeof *n);
  char why[128];
  if (env->dev->host_memory || !env->dev->info.pci_bus_id[0] || !nvml_open(&n->api, why, sizeof why)) return;
  n->open = 1;
  if (n->api.handle_by_busid(env->dev->info.pci_bus_id, &n->dev) != NVML_DL_SUCCESS) n->dev = NULL;
}

static void nvml_done(gpu_nvml *n) {
  if (n->open) nvml_close(&n->api);
}

static double known(double v, int ok) { return ok ? v : NAN; }

/* ---- gpu: links and memory health --------------------------------------------------------------------- */
static ddp_result gpu_run(const measure_env *env, const measure_group *g, result_doc *out) {
  (void)g;
  gpu_nvml n;
  nvml_for(env, &n);
  if (!n.open || !n.dev) { /* nothing to say: the CPU device, or no NVML for this GPU */
    nvml_done(&n);
    return DDP_OK;
  }
  nvml_gpu v;
  nvml_gpu_query(&n.api, env->dev->info.pci_bus_id, &v);
  nvml_mem_health m;
  nvml_mem_health_read(&n.api, n.dev, &m);
  nvml_done(&n);
  if (!v.known) return DDP_OK;
  /* a PCIe figure NVML did not measure is recorded as unknown (NAN), never as 0 */
#define PCIE(f, bit) known(v.f, nvml_gpu_pcie_has(&v, NVML_GPU_PCIE_##bit))
  DDP_TRY(gpu_record(out, env, "pcie_gen", "", BETTER_HIGHER, PCIE(pcie_gen, GEN), NULL, NULL));
  DDP_TRY(gpu_record(out, env, "pcie_gen_max", "", BETTER_NONE, PCIE(pcie_gen_max, GEN_MAX), NULL, NULL));
  DDP_TRY(gpu_record(out, env, "pcie_width", "lanes", BETTER_HIGHER, PCIE(pcie_width, WIDTH), NULL, NULL));
  DDP_TRY(gpu_record(out, env, "pcie_width_max", "lanes", BETTER_NONE, PCIE(pcie_width_max, WIDTH_MAX), NULL, NULL));
#undef PCIE
  if (v.nvlink_known) {
    DDP_TRY(gpu_record(out, env, "nvlink_active", "links", BETTER_HIGHER, v.links_active, NULL, NULL));
    DDP_TRY(gpu_record(out, env, "nvlink_total", "links", BETTER_NONE, v.links_total, NULL, NULL));
  }
  DDP_TRY(gpu_record(out, env, "nvlink_version", "", BETTER_NONE, known(v.link_version, v.link_version > 0), NULL, NULL));
  static const struct {
    const char *metric;
    size_t off;
    int is_int;
  } MEM[] = {{"ecc_uncorrected_volatile", offsetof(nvml_mem_health, ecc_unc_volatile), 0},
             {"ecc_uncorrected_aggregate", offsetof(nvml_mem_health, ecc_unc_aggregate), 0},
             {"ecc_corrected_volatile", offsetof(nvml_mem_health, ecc_corr_volatile), 0},
             {"remapped_rows_pending", offsetof(nvml_mem_health, rows_pending), 1},
             {"remapped_rows_failure", offsetof(nvml_mem_health, rows_failure), 1}};
  for (size_t i = 0; i < sizeof MEM / sizeof MEM[0]; i++) {
    const char *p = (const char *)&m + MEM[i].off;
    double x = MEM[i].is_int ? *(const int *)p : (double)*(const long long *)p;
    DDP_TRY(gpu_record(out, env, MEM[i].metric, "errors", BETTER_LOWER, x < 0 ? NAN : x, NULL, NULL));
  }
  return DDP_OK;
}

const measurement measure_gpu = {"gpu", "each GPU's PCIe link, NVLinks and memory health, as NVML reads them", gpu_run,
                                 NULL, NULL, 0};

/* ---- gemm: the sustained GEMM ---------------------------------------------------------------------------- */
static int precisions_parse(void *field, const char *v, char *err, size_t n) {
  char tmp[64];
  if (strlen(v) >= sizeof tmp) return snprintf(err, n, "at most %zu characters", sizeof tmp - 1), -1;
  snprintf(tmp, sizeof tmp, "%s", v);
  int any = 0;
  for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save), any++) {
    int ok = 0;
    for (int p = 0; p < HEALTH_NPREC; p++) ok |= !strcmp(t, health_prec_name(p));
    if (!ok) return snprintf(err, n, "a comma list of bf16, fp16, tf32 and fp32 ('%s' is none of them)", t), -1;
  }
  if (!any) return snprintf(err, n, "at least one of bf16, fp16, tf32 and fp32"), -1;
  snprintf(field, 64, "%s", v);
  return 0;
}
static void precisions_format(const void *field, char *out, size_t n) { snprintf(out, n, "%s", (const char *)field); }

static const opt_spec GEMM[] = {
    {"health_seconds", NULL, 0, OPT_DOUBLE, offsetof(gemm_params, seconds), 0, "5", GPU_CHECKS_INTERVAL_S, 86400, .arg = "SECONDS",
     .help = "seconds of sustained GEMM per precision"},
    {"precisions", NULL, 0, OPT_CUSTOM, offsetof(gemm_params, precisions), 0, "bf16,fp16,tf32,fp32",
     .parse = precisions_parse, .format = precisions_format, .arg = "LIST", .help = "GEMM precisions (cpu device: fp32 only)"},
    {"gemm_n", NULL, 0, OPT_INT, offsetof(gemm_params, n), 0, "0", 0, 1 << 16, .arg = "N",
     .help = "GEMM size n (n x n x n); 0 = 8192 on a GPU, 512 on cpu"},
};
static const opt_table GEMM_TABLE = {"the sustained GEMM", GEMM, 3};

static ddp_result gemm_records(result_doc *out, const measure_env *env, const health_gemm_result *g) {
  const char *p = health_prec_name(g->prec);
  char m[64], rank[16];
  snprintf(rank, sizeof rank, "%d", env->dist->rank);
  snprintf(m, sizeof m, "gemm_%s_tflops", p);
  DDP_TRY(gpu_record(out, env, m, "TFLOP/s", BETTER_HIGHER, g->median_tflops, NULL, NULL));
  snprintf(m, sizeof m, "gemm_%s_drift_pct", p);
  DDP_TRY(gpu_record(out, env, m, "%", BETTER_NONE, g->drift_pct, NULL, NULL));
  const struct {
    const char *suffix, *unit;
    double v;
  } more[] = {
      {"first_tflops", "TFLOP/s", g->first_tflops},
      {"last_tflops", "TFLOP/s", g->last_tflops},
      {"n", "", g->n},
      {"sm_mhz_min", "MHz", known(g->sm_mhz_min, g->nsamples > 0)},
      {"sm_mhz_median", "MHz", known(g->sm_mhz_median, g->nsamples > 0)},
      {"power_w_median", "W", known(g->power_w_median, g->nsamples > 0)},
      {"power_w_max", "W", known(g->power_w_max, g->nsamples > 0)},
      {"power_limit_w", "W", known(g->power_limit_w, g->nsamples > 0)},
      {"temp_c_max", "C", known(g->temp_c_max, g->nsamples > 0 && g->temp_c_max > 0)},
      {"clock_reasons", "", known((double)g->reasons, g->nsamples > 0)}, /* NVML's bit mask: exact below 2^53 */
  };
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    snprintf(m, sizeof m, "gemm_%s_%s", p, more[i].suffix);
    DDP_TRY(gpu_record(out, env, m, more[i].unit, BETTER_NONE, more[i].v, NULL, NULL));
  }
  return DDP_OK;
}

static ddp_result gemm_run(const measure_env *env, const measure_group *g, result_doc *out) {
  gemm_params def;
  const gemm_params *o = measure_params(env, &measure_gemm, &def);
  if (!o) return DDP_FAIL(DDP_ERR_INTERNAL, "gemm: no parameters");
  int gpu = !env->dev->host_memory;
  int n = o->n ? o->n : gpu ? 8192 : 512;
  gpu_nvml nv;
  nvml_for(env, &nv);
  ddp_result e = DDP_OK;
  /* The GEMMs of a node run together, as in training: a node's power and cooling are loaded as they will be. */
  for (int p = 0; e == DDP_OK && p < HEALTH_NPREC; p++) {
    if (!ddp_list_has(o->precisions, health_prec_name((health_prec)p)) || (!gpu && p != HEALTH_FP32)) continue;
    char what[96];
    snprintf(what, sizeof what, "accept: sustained %s GEMM, %g s", health_prec_name((health_prec)p), o->seconds);
    watchdog_tick(what);
    watchdog_test_fault(env->dist->rank, "accept");
    health_gemm_result r;
    e = group_barrier(g);
    if (e == DDP_OK)
      e = health_gemm_run(env->dev, (health_prec)p, n, o->seconds, GPU_CHECKS_INTERVAL_S, nv.open ? &nv.api : NULL,
                          nv.dev, &r);
    if (e == DDP_OK) e = gemm_records(out, env, &r);
  }
  nvml_done(&nv);
  return e;
}

const measurement measure_gemm = {"gemm", "a sustained GEMM per precision, every GPU of a node at once, with NVML samples",
                                  gemm_run, NULL, &GEMM_TABLE, sizeof(gemm_params)};

/* ---- host_copy: pinned host<->device copies ----------------------------------------------------------------- */
static const opt_spec COPY[] = {
    {"copy_mib", NULL, 0, OPT_INT, offsetof(copy_params, mib), 0, "256", 1, 1 << 20, .arg = "MIB",
     .help = "pinned host<->device copy size, MiB"},
    {"copy_iters", NULL, 0, OPT_INT, offsetof(copy_params, iters), 0, "20", 1, 1 << 20, .help = "timed copies each way"},
};
static const opt_table COPY_TABLE = {"host copies", COPY, 2};

static ddp_result copy_run(const measure_env *env, const measure_group *g, result_doc *out) {
  if (env->dev->host_memory) return DDP_OK; /* the CPU device has no link to measure */
  copy_params def;
  const copy_params *o = measure_params(env, &measure_host_copy, &def);
  if (!o) return DDP_FAIL(DDP_ERR_INTERNAL, "host_copy: no parameters");
  size_t bytes = (size_t)o->mib << 20;
  watchdog_tick("accept: pinned host<->device copies");
  health_copy_result alone, together;
  for (int k = 0; k < g->size; k++) { /* one GPU at a time, then the whole node at once */
    DDP_TRY(group_barrier(g));
    if (k == g->rank) DDP_TRY(health_copy_run(env->dev, bytes, o->iters, &alone));
  }
  DDP_TRY(group_barrier(g));
  DDP_TRY(health_copy_run(env->dev, bytes, o->iters, &together));
  DDP_TRY(gpu_record(out, env, "h2d_gbps", "GB/s", BETTER_HIGHER, alone.h2d_gbps, NULL, NULL));
  DDP_TRY(gpu_record(out, env, "d2h_gbps", "GB/s", BETTER_HIGHER, alone.d2h_gbps, NULL, NULL));
  DDP_TRY(gpu_record(out, env, "h2d_node_gbps", "GB/s", BETTER_HIGHER, together.h2d_gbps, NULL, NULL));
  DDP_TRY(gpu_record(out, env, "d2h_node_gbps", "GB/s", BETTER_HIGHER, together.d2h_gbps, NULL, NULL));
  return DDP_OK;
}

const measurement measure_host_copy = {"host_copy", "pinned host<->device copies, one GPU of a node at a time, then all",
                                       copy_run, NULL, &COPY_TABLE, sizeof(copy_params)};

/* ---- p2p: the node's GPU-to-GPU copies -------------------------------------------------------------------- */
static const opt_spec P2P[] = {
    {"p2p_mib", NULL, 0, OPT_INT, offsetof(p2p_params, mib), 0, "256", 1, 1 << 20, .arg = "MIB",
     .help = "GPU-to-GPU copy size, MiB"},
};
static const opt_table P2P_TABLE = {"GPU-to-GPU copies", P2P, 1};

static ddp_result p2p_run(const measure_env *env, const measure_group *g, result_doc *out) {
  const device_entry *de = env->device;
  if (g->rank != 0 || !de || !de->peer_matrix) return DDP_OK;
  int ngpu = de->available();
  if (ngpu < 2) return DDP_OK;
  p2p_params def;
  const p2p_params *o = measure_params(env, &measure_p2p, &def);
  if (!o) return DDP_FAIL(DDP_ERR_INTERNAL, "p2p: no parameters");
  int n = ngpu < GPU_CHECKS_MAX_P2P ? ngpu : GPU_CHECKS_MAX_P2P;
  double uni[GPU_CHECKS_MAX_P2P * GPU_CHECKS_MAX_P2P], bi[GPU_CHECKS_MAX_P2P * GPU_CHECKS_MAX_P2P];
  int peer[GPU_CHECKS_MAX_P2P * GPU_CHECKS_MAX_P2P];
  watchdog_tick("accept: the GPU-to-GPU copy matrix");
  DDP_TRY(de->peer_matrix(n, (size_t)o->mib << 20, 10, uni, bi, peer));
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      if (a == b) continue;
      char pair[32];
      snprintf(pair, sizeof pair, "%d-%d", a, b);
      DDP_TRY(gpu_record(out, env, "p2p_gbps", "GB/s", BETTER_HIGHER, uni[a * n + b], "pair", pair));
      DDP_TRY(gpu_record(out, env, "p2p_bidir_gbps", "GB/s", BETTER_HIGHER, bi[a * n + b], "pair", pair));
      DDP_TRY(gpu_record(out, env, "p2p_peer_access", "", BETTER_HIGHER, peer[a * n + b], "pair", pair));
    }
  return DDP_OK;
}

const measurement measure_p2p = {"p2p", "the GPU-to-GPU copy matrix of each node (its first rank, every GPU it sees)",
                                 p2p_run, NULL, &P2P_TABLE, sizeof(p2p_params)};
