/* gpu_default.c: sizing of the GPU default job (see gpu_default.h). Pure arithmetic: the hidden size makes every
 * GEMM compute-bound (H = batch = 8192 on a GPU with 32 GiB or more), the layer count fills
 * GPU_DEFAULT_MEM_FRACTION of the smallest GPU's memory (the engine's buffers: fp32 weights, gradients, bucket
 * and momentum, bf16 weights and gradients: 20 bytes a parameter, and bf16 activations), and the step count
 * holds the three training phases to GPU_DEFAULT_TRAIN_SECONDS. It must never read a device or the clock. */
#include "gpu_default.h"

#include "config.h"

#include <math.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

static int clampi(double v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : (int)v; }

int gpu_default_size(double mem_bytes, double peak_tflops, int ranks_per_node, gpu_default *out) {
  if (!(mem_bytes >= 2 * GIB)) return -1;
  gpu_default g = {0};
  g.hidden = mem_bytes >= 32 * GIB ? 8192 : mem_bytes >= 8 * GIB ? 4096 : 2048;
  g.batch = g.hidden;
  double h2 = (double)g.hidden * g.hidden, act = (double)g.batch * g.hidden * 2;
  double per_layer = 20 * h2 + act;
  g.layers = clampi(floor(GPU_DEFAULT_MEM_FRACTION * mem_bytes / per_layer), 2, 32);
  g.model_bytes = g.layers * per_layer + act * 4; /* + the input, dz, da and the fp32 temporary */
  double peak = peak_tflops > 0 ? peak_tflops : 300;
  double flops = 6.0 * g.batch * h2 * g.layers; /* forward 2, backward 4 per multiply-add */
  g.step_seconds = flops / (peak * 1e12 * GPU_DEFAULT_EFFICIENCY);
  /* The loss sums over H features and the gradient grows with depth, so a stable rate shrinks with both: the
   * presets that were seen to train (configs/h200-*: 0.000625 at 8192 x 8 and 4096 x 16, 0.0003 at 1024 x 32)
   * all lie above 0.01 x (1024 / H) x (4 / L)^2, the rate used here. The default 0.01 (right for 1024 x 4)
   * turned H200's 8192 x 25 model into NaN weights (exit 5) within its steps. */
  g.lr = 0.01 * (1024.0 / g.hidden) * (4.0 / g.layers) * (4.0 / g.layers);
  g.warmup = 5;
  g.steps = clampi(floor(GPU_DEFAULT_TRAIN_SECONDS / 3 / g.step_seconds) - g.warmup, 20, 200);
  g.train_seconds = 3 * (g.steps + g.warmup) * g.step_seconds;
  g.health_seconds = 3;
  /* accept: 4 precisions of sustained GEMM, the measured peak (2 s), copies alone and together (~1 s a GPU),
   * the GPU-to-GPU matrix (~0.2 s a pair), node and pair allreduces, and start-up (CUDA, NCCL): ~20 s. */
  int n = ranks_per_node > 0 ? ranks_per_node : 1;
  g.accept_seconds = 4 * g.health_seconds + 2 + 1.0 * n + 0.2 * n * (n - 1) + 20;
  g.total_seconds = g.train_seconds + g.accept_seconds;
  *out = g;
  return 0;
}

void gpu_default_config(const gpu_default *g, ddp_config *cfg) {
  cfg->hidden = g->hidden, cfg->layers = g->layers, cfg->batch = g->batch;
  cfg->steps = g->steps, cfg->warmup = g->warmup, cfg->precision = PREC_BF16, cfg->lr = g->lr;
}
