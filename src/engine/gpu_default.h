/* gpu_default.h: the GPU-sized default job (`mpirun -np 8 ddpbench` with no options on GPUs): the
 * model and step count as a pure function of the smallest GPU memory in the job and its bf16 peak, and the time
 * the job is expected to take. Never touches a device, MPI or the clock. */
#ifndef DDPBENCH_GPU_DEFAULT_H
#define DDPBENCH_GPU_DEFAULT_H

#include <stddef.h>

#include "config.h"

typedef struct {
  int hidden, layers, batch, steps, warmup; /* bf16 model: L layers of H x H, batch = H rows per rank */
  double lr;                                /* a learning rate that trains this model without diverging */
  double health_seconds;                    /* accept's sustained GEMM per precision */
  double model_bytes;                       /* device memory the engine allocates (estimate) */
  double step_seconds;                      /* expected step at GPU_DEFAULT_EFFICIENCY of the peak */
  double train_seconds, accept_seconds;     /* expected: the three phases; the acceptance checks */
  double total_seconds;                     /* expected total, and the bound the job states */
} gpu_default;

#define GPU_DEFAULT_MEM_FRACTION 0.25 /* of the smallest GPU's memory for the model */
#define GPU_DEFAULT_TRAIN_SECONDS 60.0 /* the three training phases together */
#define GPU_DEFAULT_EFFICIENCY 0.6    /* of the bf16 peak a GEMM-bound step sustains (H200: ~690 of 989) */

/* mem_bytes: the smallest GPU memory in the job; peak_tflops: its bf16 dense peak (0 = unknown: 300 assumed,
 * an A100's figure, so that an unknown GPU gets fewer steps rather than an unbounded run); ranks_per_node: GPUs
 * per node (the node checks grow with it). Fills out; returns 0, or -1 when mem_bytes is below 2 GiB. */
int gpu_default_size(double mem_bytes, double peak_tflops, int ranks_per_node, gpu_default *out);

/* The model of g into cfg: hidden, layers, batch, steps, warmup, bf16 and the learning rate. */
void gpu_default_config(const gpu_default *g, ddp_config *cfg);

#endif
