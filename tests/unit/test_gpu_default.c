/* test_gpu_default: the sizing of the GPU default job (gpu_default_size, a pure function of the smallest GPU's
 * memory, its bf16 peak and the GPUs per node), against figures worked out by hand here:
 *  - an H200 (143771 MiB, 989.4 TFLOP/s bf16, 8 a node): H = batch = 8192 (GEMM-bound), 25 layers (a quarter of
 *    the memory at 20 bytes a parameter plus bf16 activations), 138 steps a phase, under 3 minutes in all;
 *  - H100 80GB and A100 80GB (312 TFLOP/s): 13 layers, the steps scaled so that training stays near 60 s;
 *  - smaller GPUs get a smaller H; an unknown peak counts as 300 TFLOP/s; below 2 GiB it refuses;
 *  - the model always fits its share of memory, and the step count stays within [20, 200]. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "gpu_default.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

static void check_invariants(const char *what, double mem, const gpu_default *g) {
  CHECK(g->model_bytes <= 0.3 * mem, "%s: model %.1f GiB within 30 %% of %.1f GiB", what, g->model_bytes / GIB, mem / GIB);
  CHECK(g->steps >= 20 && g->steps <= 200, "%s: steps %d in [20, 200]", what, g->steps);
  CHECK(g->batch == g->hidden, "%s: square GEMMs (batch %d = H %d)", what, g->batch, g->hidden);
  CHECK(fabs(g->total_seconds - g->train_seconds - g->accept_seconds) < 1e-9, "%s: total = training + checks", what);
}

int main(void) {
  gpu_default g;
  /* H200: 143771 MiB. Per layer 20 x 8192^2 + 8192^2 x 2 bytes = 1476395008; 0.25 x 150755819520 / that = 25.5. */
  double h200 = 143771 * MIB;
  CHECK(gpu_default_size(h200, 989.4, 8, &g) == 0, "H200 sized");
  CHECK(g.hidden == 8192 && g.batch == 8192 && g.layers == 25, "H200: H %d batch %d L %d", g.hidden, g.batch, g.layers);
  /* 6 x 8192^3 x 25 = 8.246e13 flop at 0.6 x 989.4e12 = 0.1389 s; 20 s a phase / 0.1389 = 143.9 -> 143 - 5 warmup. */
  CHECK(fabs(g.step_seconds - 6.0 * 8192 * 8192 * 8192 * 25 / (0.6 * 989.4e12)) < 1e-9, "H200 step %.4f s", g.step_seconds);
  CHECK(g.steps == 138 && g.warmup == 5, "H200: %d steps + %d warmup", g.steps, g.warmup);
  CHECK(fabs(g.lr - 0.01 / 8 * 0.16 * 0.16) < 1e-12 && g.lr < 0.000625,
        "H200: lr %g, below the 8192 x 8 preset's 0.000625 (the default 0.01 gave NaN weights on an H200)", g.lr);
  CHECK(g.train_seconds > 55 && g.train_seconds <= 60, "H200: training %.1f s", g.train_seconds);
  /* checks: 4 x 3 s GEMM + 2 s peak + 8 x 1 s copies + 56 x 0.2 s GPU pairs + 20 s = 53.2 s */
  CHECK(fabs(g.accept_seconds - 53.2) < 1e-9, "H200 x 8: checks %.1f s", g.accept_seconds);
  CHECK(g.total_seconds < 180, "H200 x 8: %.0f s, under 3 minutes", g.total_seconds);
  check_invariants("H200", h200, &g);

  /* H100 80GB (81559 MiB): 0.25 x 85520809984 / 1476395008 = 14.48 -> 14 */
  double h100 = 81559 * MIB;
  CHECK(gpu_default_size(h100, 989.4, 8, &g) == 0 && g.hidden == 8192 && g.layers == 14, "H100: L %d", g.layers);
  CHECK(g.total_seconds < 180, "H100 x 8: %.0f s", g.total_seconds);
  check_invariants("H100", h100, &g);
  /* A100 80GB (81920 MiB), 312 TFLOP/s: 14 layers, a step of 6 x 8192^3 x 14 / (0.6 x 312e12) = 0.2467 s */
  double a100 = 81920 * MIB;
  CHECK(gpu_default_size(a100, 312, 8, &g) == 0 && g.layers == 14, "A100: L %d", g.layers);
  CHECK(g.steps == (int)floor(20 / g.step_seconds) - 5, "A100: %d steps for %.4f s steps", g.steps, g.step_seconds);
  CHECK(g.total_seconds < 180, "A100 x 8: %.0f s", g.total_seconds);
  check_invariants("A100", a100, &g);

  /* smaller GPUs: 24 GiB -> H 4096; 6 GiB -> H 2048; below 2 GiB refused */
  CHECK(gpu_default_size(24 * GIB, 0, 1, &g) == 0 && g.hidden == 4096, "24 GiB: H %d", g.hidden);
  check_invariants("24 GiB", 24 * GIB, &g);
  /* unknown peak = 300 TFLOP/s */
  CHECK(fabs(g.step_seconds - 6.0 * 4096 * 4096 * 4096 * g.layers / (0.6 * 300e12)) < 1e-9, "unknown peak: 300 TFLOP/s");
  CHECK(gpu_default_size(6 * GIB, 100, 2, &g) == 0 && g.hidden == 2048, "6 GiB: H %d", g.hidden);
  check_invariants("6 GiB", 6 * GIB, &g);
  CHECK(gpu_default_size(1.5 * GIB, 100, 1, &g) == -1, "1.5 GiB refused");
  /* a huge GPU is held to 32 layers, a slow one to 20 steps */
  CHECK(gpu_default_size(4096 * GIB, 989.4, 8, &g) == 0 && g.layers == 32, "4 TiB: L %d", g.layers);
  CHECK(gpu_default_size(h200, 10, 8, &g) == 0 && g.steps == 20, "a slow GPU: %d steps", g.steps);
  return check_summary();
}
