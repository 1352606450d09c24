/* expect.c: the built-in expectations table (per GPU model and link class, each figure with its source), the
 * --expect INI reader (inih) and the PCIe rate arithmetic. Figures here are floors a healthy part clears; a
 * figure nobody measured says so in its comment. Nothing here may measure, print anything but the one-line
 * usage error, or invent an expectation for hardware the table does not know (that stays NaN). */
#include "expect.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ini_file.h"
#include "input_file.h"

const expect_key_info expect_keys[EXP_COUNT] = {
    [EXP_GEMM_BF16] = {"gemm_bf16_tflops", "TFLOP/s", "sustained bf16 GEMM per GPU"},
    [EXP_GEMM_FP16] = {"gemm_fp16_tflops", "TFLOP/s", "sustained fp16 GEMM per GPU"},
    [EXP_GEMM_TF32] = {"gemm_tf32_tflops", "TFLOP/s", "sustained tf32 GEMM per GPU"},
    [EXP_GEMM_FP32] = {"gemm_fp32_tflops", "TFLOP/s", "sustained fp32 GEMM per GPU"},
    [EXP_H2D] = {"h2d_gbps", "GB/s", "pinned host-to-device copy, one GPU at a time"},
    [EXP_D2H] = {"d2h_gbps", "GB/s", "pinned device-to-host copy, one GPU at a time"},
    [EXP_P2P] = {"p2p_gbps", "GB/s", "GPU-to-GPU copy over NVLink, one direction"},
    [EXP_NODE_BUSBW] = {"node_busbw_gbps", "GB/s", "allreduce busbw inside an 8-GPU node, >= 1 GiB"},
    [EXP_PAIR_BUSBW] = {"pair_busbw_gbps", "GB/s", "allreduce busbw over a node pair"},
    [EXP_WARN_PCT] = {"warn_pct", "%", "warn band above each floor"},
    [EXP_SOAK_ECC_CORRECTED] = {"soak_ecc_corrected_per_min", "/min", "--soak: corrected ECC errors warn above"},
    [EXP_SOAK_PCIE_REPLAY] = {"soak_pcie_replay_per_min", "/min", "--soak: PCIe replays warn above"},
    [EXP_SOAK_NVLINK_CRC] = {"soak_nvlink_crc_per_s", "/s", "--soak: NVLink CRC errors of a link warn above"},
    [EXP_SOAK_NVLINK_REPLAY] = {"soak_nvlink_replay_per_interval", "/interval", "--soak: NVLink replays of a link warn at"},
    [EXP_SOAK_NVLINK_RECOVERY] = {"soak_nvlink_recovery_per_interval", "/interval",
                                  "--soak: NVLink recoveries of a link warn at"},
};

/* Floors per model. Sources:
 *  - H200 SXM bf16 600: measured on the project's 1 x H200 on 2026-12-01 (results/2026-12-01-h200x1/): a sustained 8192^3 bf16
 *    GEMM settles at 675-690 TFLOP/s at the 700 W power cap; the floor sits ~12 % below.
 *    fp16 575: same machine, 8192^3 bursts fp16 742-768 vs bf16 772-795 (ratio 0.96), applied to 600.
 *    tf32 297, fp32 40: NOT measured here: 0.6 x the datasheet's dense 494.7 / 66.9 (NVIDIA H200 datasheet).
 *  - H100 SXM: same GH100 die, same 700 W limit and the same datasheet figures (989.4 bf16/fp16 dense,
 *    494.7 tf32, 66.9 fp32; NVIDIA H100 datasheet), so the H200 floors; not measured on an H100 here.
 *  - A100 SXM 80 GB: NOT measured here: 0.7 x datasheet (312 bf16/fp16 dense, 156 tf32, 19.5 fp32; NVIDIA
 *    A100 datasheet).
 *  - node_busbw (8 GPUs, 16 GiB allreduce): Azure NHC floors, conf/nd96isr_h100_v5.conf 460,
 *    conf/nd96isr_h200_v5.conf 431, conf/nd96amsr_a100_v4.conf 228.
 *  - p2p: Azure NHC nvbandwidth device-to-device floors, 335 GB/s H100/H200 (NVLink 4, 18 links), 235 A100
 *    (NVLink 3, 12 links). */
const expect_model expect_models[] = {
    {"h200_sxm", "H200 SXM", {600, 575, 297, 40}, 431, 335, 6},
    {"h100_sxm", "H100 SXM", {600, 575, 297, 40}, 460, 335, 6},
    {"a100_sxm_80gb", "A100 SXM 80GB", {218, 218, 109, 13.6}, 228, 235, 4},
};
const int expect_nmodels = (int)(sizeof expect_models / sizeof expect_models[0]);

const expect_model *expect_model_find(const char *name) {
  if (!name) return NULL;
  /* NVML/CUDA names: "NVIDIA H200" (SXM; the PCIe card is "NVIDIA H200 NVL"), "NVIDIA H100 80GB HBM3" (SXM;
   * "NVIDIA H100 PCIe", "NVIDIA H100 NVL"), "NVIDIA A100-SXM4-80GB". */
  if (strstr(name, "NVL") || strstr(name, "PCIe")) return NULL;
  if (strstr(name, "H200")) return &expect_models[0];
  if (strstr(name, "H100") && strstr(name, "HBM3")) return &expect_models[1];
  if (strstr(name, "A100-SXM4-80GB")) return &expect_models[2];
  return NULL;
}

double expect_pcie_gbps(unsigned gen, unsigned width) {
  static const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
  if (gen < 3 || gen > 5 || width == 0 || width > 32) return 0; /* Gen1/2 (8b/10b) and Gen6 (FLIT) not modelled */
  return gts[gen] * width * 128.0 / 130.0 / 8.0;
}

static void set(expect_set *e, expect_key k, double v, const char *src) {
  e->v[k] = v;
  snprintf(e->src[k], sizeof e->src[k], "%s", src);
}

void expect_builtin(expect_set *e, const char *gpu_name, unsigned gen_max, unsigned width_max,
                    unsigned nvlink_version) {
  for (int k = 0; k < EXP_COUNT; k++) e->v[k] = NAN, e->src[k][0] = 0;
  e->model[0] = 0;
  set(e, EXP_WARN_PCT, 5, "built-in (Azure NHC's warn band)");
  /* the soak's ceilings: DCGM's health-watch limits (dcgm_gpu_hardware_limits.h; soak_rules.c cites each) */
  set(e, EXP_SOAK_ECC_CORRECTED, 10, "built-in (DCGM_LIMIT_MAX_SBE_RATE)");
  set(e, EXP_SOAK_PCIE_REPLAY, 8, "built-in (DCGM_LIMIT_MAX_PCIREPLAY_RATE)");
  set(e, EXP_SOAK_NVLINK_CRC, 100, "built-in (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR)");
  set(e, EXP_SOAK_NVLINK_REPLAY, 1, "built-in (DCGM_LIMIT_MAX_NVLINK_ERROR)");
  set(e, EXP_SOAK_NVLINK_RECOVERY, 1, "built-in (DCGM_LIMIT_MAX_NVLINK_ERROR)");
  const expect_model *m = expect_model_find(gpu_name);
  if (m) {
    char src[96];
    snprintf(src, sizeof src, "built-in %s", m->label);
    snprintf(e->model, sizeof e->model, "%s", m->key);
    for (int i = 0; i < 4; i++) set(e, (expect_key)(EXP_GEMM_BF16 + i), m->gemm[i], src);
    set(e, EXP_NODE_BUSBW, m->node_busbw, src);
    /* NVLink 3.0/3.1 are NVML enums 4/5: one generation. Another version is not the row's SXM part. */
    unsigned v = nvlink_version == 5 ? 4 : nvlink_version;
    if (v && v == m->nvlink_version) set(e, EXP_P2P, m->p2p, src);
  }
  /* Pinned copies reach a fraction of the link's raw rate: Azure NHC's floors are 48 GB/s on Gen5 x16 (0.76 of
   * 63.0) and 21 GB/s on their A100s' Gen4 x16 (0.67 of 31.5); 1 x H200 here measured 55.5/55.3 GB/s (0.88,
   * results/2026-12-01-h200x1/). Gen3 has no source: the Gen4 fraction. */
  double raw = expect_pcie_gbps(gen_max, width_max);
  if (raw > 0) {
    char src[96];
    double frac = gen_max >= 5 ? 0.75 : 0.67;
    snprintf(src, sizeof src, "built-in %.2f x PCIe Gen%u x%u (%.1f GB/s)", frac, gen_max, width_max, raw);
    set(e, EXP_H2D, frac * raw, src);
    set(e, EXP_D2H, frac * raw, src);
  }
}

/* ---- --expect FILE (ini_file.c hands inih whole lines only) ---------------------------------------- */
typedef struct {
  expect_set *e;
  const char *path;
} file_ctx;

static int on_key(void *user, const char *section, const char *name, const char *value, int line, char *err,
                  size_t errn) {
  file_ctx *c = user;
  (void)line;
  int applies = 1;
  if (section[0]) {
    int known = 0;
    for (int i = 0; i < expect_nmodels; i++) known |= !strcmp(section, expect_models[i].key);
    if (!known)
      return snprintf(err, errn, "unknown section [%s] (GPU models: h200_sxm, h100_sxm, a100_sxm_80gb)", section), 1;
    applies = !strcmp(section, c->e->model);
  }
  int k = 0;
  while (k < EXP_COUNT && strcmp(name, expect_keys[k].name)) k++;
  if (k == EXP_COUNT) return snprintf(err, errn, "unknown key '%s'", name), 1;
  char *end = NULL;
  errno = 0;
  double v = strtod(value, &end);
  if (end == value || *end || errno || !isfinite(v) || v < 0)
    return snprintf(err, errn, "key '%s': '%s' is not a number >= 0", name, value), 1;
  if (applies) {
    char src[96];
    snprintf(src, sizeof src, "--expect %.80s", c->path);
    set(c->e, (expect_key)k, v, src);
  }
  return 0;
}

ddp_result expect_load_file(expect_set *e, const char *path) {
  file_ctx c = {.e = e, .path = path};
  char err[320];
  int line = ini_file_parse_path(path, INPUT_MAX_INI, on_key, &c, err, sizeof err);
  if (line < 0) return ddp_usage_error("--expect %s: %s", path, err);
  if (line > 0) return ddp_usage_error("--expect %s:%d: %s", path, line, err);
  return DDP_OK;
}

/* ---- datasheet peaks (for MFU against the table) ---- */
double peak_table_tflops(const char *name, const char *precision) {
  /* Dense (no sparsity) tensor-core peaks of the SXM parts, from NVIDIA's datasheets; fp32 is the plain
   * FMA rate. H200 shares H100's GH100 die and clocks. */
  static const struct {
    const char *prefix;
    double fp32, tf32, bf16;
  } gpus[] = {
      {"NVIDIA H100", 66.9, 494.7, 989.4},
      {"NVIDIA H200", 66.9, 494.7, 989.4},
      {"NVIDIA A100", 19.5, 156.0, 312.0},
  };
  if (!name || !precision) return 0;
  for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
    if (strncmp(name, gpus[i].prefix, strlen(gpus[i].prefix)) == 0) {
      if (strstr(name, "PCIe") || strstr(name, "NVL")) return 0; /* other clocks and power: not in the table */
      if (!strcmp(precision, "fp32")) return gpus[i].fp32;
      if (!strcmp(precision, "tf32")) return gpus[i].tf32;
      return !strcmp(precision, "bf16") || !strcmp(precision, "fp16") ? gpus[i].bf16 : 0;
    }
  return 0;
}
