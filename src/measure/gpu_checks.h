/* gpu_checks.h: acceptance's per-GPU checks as measurements over the nodes (each node one group: what shares a
 * node's power, cooling and PCIe switches runs together, or one GPU at a time, as the check needs):
 *   gpu        what NVML says of each GPU: its PCIe link (generation and width, current and maximum), its
 *              NVLinks (up of total, version) and its memory health (ECC counts, remapped rows);
 *   gemm       a sustained GEMM per precision, every GPU of the node at once, with NVML's clocks, power,
 *              temperature and throttle reasons sampled between intervals;
 *   host_copy  pinned host<->device copies, one GPU of the node at a time, then all at once;
 *   p2p        the node's GPU-to-GPU copy matrix, measured by the node's first rank through the device's
 *              peer_matrix op (devices without one have none).
 * Every rank appends its own records: measurement "accept", group "world" (the names acceptance's files always
 * had, so that --baseline reads older files), labelled with rank, host, gpu (PCI bus id, "" on the CPU device)
 * and model (the device's name). Nothing here judges or prints: verdict/accept_verdicts.h reads the records.
 *
 * defines: measure_gpu, measure_gemm, measure_host_copy, measure_p2p, gemm_params, copy_params, p2p_params,
 *          gpu_record */
#ifndef DDPBENCH_GPU_CHECKS_H
#define DDPBENCH_GPU_CHECKS_H

#include "measure.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const measurement measure_gpu, measure_gemm, measure_host_copy, measure_p2p;

typedef struct {
  double seconds;      /* health_seconds: per precision */
  char precisions[64]; /* "bf16,fp16,tf32,fp32" */
  int n;               /* gemm_n: 0 = 8192 on a GPU, 512 on the CPU device */
} gemm_params;
typedef struct {
  int mib, iters; /* copy_mib, copy_iters */
} copy_params;
typedef struct {
  int mib; /* p2p_mib */
} p2p_params;

#define GPU_CHECKS_INTERVAL_S 0.1 /* one GEMM interval: ten per second, so the first and last second have a median */
#define GPU_CHECKS_MAX_P2P 8

/* One figure of this rank's GPU: measurement "accept", group "world", labels rank, host, gpu, model and, when
 * key is not NULL, key=value. */
ddp_result gpu_record(result_doc *out, const measure_env *env, const char *metric, const char *unit,
                      result_better better, double value, const char *key, const char *val);

#ifdef __cplusplus
}
#endif
#endif
