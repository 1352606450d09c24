/* expect.h: the absolute expectations that acceptance checks are judged against: a built-in table per GPU
 * model and link class (each figure with its source), overridden by an INI file (--expect FILE), or derived
 * from a known-good run. Every expectation is a floor: a healthy part measures at least this much; a check
 * warns within warn_pct above it and fails below it. Relative checks (each GPU against its peers) need no
 * table and live in rules.h. Nothing here measures or prints; a bad file is one line naming file, line and
 * key, and DDP_ERR_USAGE (exit 2).
 *
 * defines: expect_key (the table of keys), expect_set, expect_models, expect_model_find, expect_builtin,
 *          expect_load_file, expect_pcie_gbps */
#ifndef DDPBENCH_EXPECT_H
#define DDPBENCH_EXPECT_H

#include <stddef.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  EXP_GEMM_BF16 = 0, /* sustained GEMM, TFLOP/s */
  EXP_GEMM_FP16,
  EXP_GEMM_TF32,
  EXP_GEMM_FP32,
  EXP_H2D,           /* pinned host-to-device copy, one GPU at a time, GB/s */
  EXP_D2H,
  EXP_P2P,           /* GPU-to-GPU copy over NVLink, unidirectional, GB/s */
  EXP_NODE_BUSBW,    /* allreduce busbw inside an 8-GPU node at >= 1 GiB, GB/s */
  EXP_PAIR_BUSBW,    /* allreduce busbw over a node pair, GB/s (no built-in figure: depends on the NICs) */
  EXP_WARN_PCT,      /* the warn band above each floor, % */
  /* accept --soak's ceilings (verdict/soak_rules.h): a rate above one warns. Built in for every GPU (DCGM's
   * health-watch limits, soak_rules.c soak_params_default); the soak reads them job-wide, from rank 0's model */
  EXP_SOAK_ECC_CORRECTED, /* corrected ECC errors per minute */
  EXP_SOAK_PCIE_REPLAY,   /* PCIe replays per minute */
  EXP_SOAK_NVLINK_CRC,    /* NVLink CRC errors per second, a link */
  EXP_SOAK_NVLINK_REPLAY, /* NVLink replays per interval, a link */
  EXP_SOAK_NVLINK_RECOVERY, /* NVLink recoveries per interval, a link */
  EXP_COUNT
} expect_key;

typedef struct {
  const char *name; /* INI key: "gemm_bf16_tflops" */
  const char *unit; /* "TFLOP/s", "GB/s", "%" */
  const char *help;
} expect_key_info;
extern const expect_key_info expect_keys[EXP_COUNT];

typedef struct {
  double v[EXP_COUNT];   /* NaN = no expectation: the absolute check is skipped (the relative one still runs) */
  char src[EXP_COUNT][224]; /* where each came from: "built-in H200 SXM", "site.ini:4", a baseline with its spread */
  char model[32];        /* table key of the GPU model, "" when not in the table */
} expect_set;

typedef struct {
  const char *key;   /* INI section and expect_set.model: "h200_sxm" */
  const char *label; /* "H200 SXM" */
  double gemm[4];    /* bf16, fp16, tf32, fp32 floors, TFLOP/s */
  double node_busbw; /* 8 GPUs, GB/s */
  double p2p;        /* GB/s, when the GPU's NVLink is nvlink_version */
  unsigned nvlink_version; /* NVML's enum: 6 = NVLink 4.0, 4 = 3.0 (5 = 3.1 counts as 4) */
} expect_model;
extern const expect_model expect_models[];
extern const int expect_nmodels;

/* The table row of an NVML/CUDA device name ("NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"),
 * or NULL: PCIe and NVL variants (other power limits) have no row, so they get relative checks only. */
const expect_model *expect_model_find(const char *gpu_name);

/* A PCIe link's raw rate per direction in GB/s: gen x width after line coding (Gen3/4/5: 128b/130b at
 * 8/16/32 GT/s per lane). 0 for an unknown generation or width. */
double expect_pcie_gbps(unsigned gen, unsigned width);

/* The built-in expectations for a GPU on this host: GEMM and node busbw from the model's row; H2D/D2H from
 * the link the GPU trained at its maximum (pcie_gen_max x pcie_width_max: a link trained lower is what the
 * check must catch); P2P from the NVLink version (0 = none). Unknowns stay NaN. warn band 5 %. */
void expect_builtin(expect_set *e, const char *gpu_name, unsigned pcie_gen_max, unsigned pcie_width_max,
                    unsigned nvlink_version);

/* Reads an INI file over e: keys outside any section apply to every model; a section named after a table
 * key (e.g. [h200_sxm]) applies only when e->model is that key. Unknown key or section, a value that is not
 * a finite number >= 0, or an unreadable file: DDP_ERR_USAGE with "ddpbench: FILE:LINE: ..." naming the key. */
ddp_result expect_load_file(expect_set *e, const char *path);

/* Dense tensor-core peak (TFLOP/s) of a known SXM GPU (NVML/CUDA name, "NVIDIA H200") in a precision
 * ("fp32" the plain FMA rate, "tf32", "bf16", "fp16"); 0 when the part or precision is not in the table. The
 * datasheet figures sit beside the floors above so that the GPU tables are in one file. */
double peak_table_tflops(const char *gpu_name, const char *precision);

#ifdef __cplusplus
}
#endif
#endif
