/* health.h: the device-level measurements of cluster acceptance, over the device interface: a sustained GEMM
 * for a bounded time per precision (median TFLOP/s over short intervals, drift from the first second to the
 * last, and NVML samples taken between intervals), and pinned host<->device copies. Each function measures
 * one device and returns numbers; it never judges, prints, or talks to other ranks (the caller orders ranks
 * with barriers when GPUs must load a node together). Host synchronisation is part of these measurements (an
 * interval ends with an event synchronisation): they never run inside the training step loop.
 *
 * defines: health_prec, health_gemm_result, health_gemm_run, health_copy_result, health_copy_run */
#ifndef DDPBENCH_HEALTH_H
#define DDPBENCH_HEALTH_H

#include "device.h"
#include "nvml_dl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { HEALTH_BF16 = 0, HEALTH_FP16, HEALTH_TF32, HEALTH_FP32, HEALTH_NPREC } health_prec;
const char *health_prec_name(health_prec p); /* "bf16", "fp16", "tf32", "fp32" */

#define HEALTH_MAX_INTERVALS 4096

typedef struct {
  health_prec prec;
  int n;                    /* square GEMM n x n x n */
  int intervals;            /* timed intervals */
  int gemms_per_interval;
  double seconds;           /* wall time of the timed part */
  double median_tflops;     /* over intervals */
  double first_tflops;      /* median of the intervals that started in the first second */
  double last_tflops;       /* ... in the last second */
  double drift_pct;         /* 100 (last - first) / first */
  double min_tflops, max_tflops;
  /* NVML, between intervals (nsamples = 0 without NVML) */
  int nsamples;
  unsigned sm_mhz_min, sm_mhz_median, sm_mhz_max, temp_c_max;
  double power_w_median, power_w_max, power_limit_w;
  unsigned long long reasons; /* OR of the clocks event reasons seen */
} health_gemm_result;

/* Runs C = A B (n x n, fp32 accumulation, inputs from the device's generator) for `seconds` after a warm-up
 * of about 0.3 s, in intervals of about interval_s each. nvml/nvml_dev may be NULL. DDP_ERR_USAGE for a
 * 16-bit or tf32 precision on the cpu device (OpenBLAS has fp32 only). */
ddp_result health_gemm_run(ddp_device *dev, health_prec prec, int n, double seconds, double interval_s,
                           const nvml_api *nvml, nvml_device nvml_dev, health_gemm_result *out);

/* The measured peak behind MFU: the median TFLOP/s of an 8192^3 GEMM in the run's precision (0 fp32, 1 tf32,
 * 2 bf16, 3 fp16: ddp_precision's order) sustained for `seconds` (a one-shot burst at the model's H varied
 * by 43 % at H = 1024 on an H200). */
ddp_result health_peak_tflops(ddp_device *dev, int precision, double seconds, double *tflops);

typedef struct {
  size_t bytes;
  int iters;
  double h2d_gbps, d2h_gbps; /* median over the iterations, 1e9 bytes/s */
  double h2d_min_gbps, d2h_min_gbps;
} health_copy_result;

/* Pinned host buffer <-> device buffer of `bytes`, `iters` timed copies each way after one warm-up, each
 * timed with events. */
ddp_result health_copy_run(ddp_device *dev, size_t bytes, int iters, health_copy_result *out);

#ifdef __cplusplus
}
#endif
#endif
