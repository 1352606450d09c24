/* ref_model.h: the independent reference of the engine tests (test_ddp, test_fsdp): the model of the spec
 * (docs/run.md) in double precision, written from the spec and not from the engine: L bias-free H x H layers
 * with ReLU, MSE loss over the global batch, SGD with momentum. Test-only, header-only. */
#ifndef DDPBENCH_TESTS_REF_MODEL_H
#define DDPBENCH_TESTS_REF_MODEL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "numerics.h"

static inline void reference(const ddp_config *c, int global_batch, double *loss, float *w_out) {
  int H = c->hidden, L = c->layers, B = global_batch, n = c->warmup + c->steps;
  double bound = sqrt(6.0 / H);
  double *W = malloc(sizeof(double) * L * H * H), *V = calloc((size_t)L * H * H, sizeof(double));
  double *a = malloc(sizeof(double) * (L + 1) * B * H), *dz = malloc(sizeof(double) * B * H);
  double *da = malloc(sizeof(double) * B * H), *t = malloc(sizeof(double) * B * H);
  double *dW = malloc(sizeof(double) * L * H * H);
#define Wl(l, o, i) W[((size_t)((l)-1) * H + (o)) * H + (i)]
#define A(l, g, j) a[((size_t)(l) * B + (g)) * H + (j)]
  for (int l = 1; l <= L; l++)
    for (int i = 0; i < H * H; i++) W[(size_t)(l - 1) * H * H + i] = gen_value(gen_key(c->seed, 0x100 + l), i, bound);
  for (int i = 0; i < B * H; i++) {
    a[i] = gen_value(gen_key(c->seed, 0x200), i, 1.0);
    t[i] = gen_value(gen_key(c->seed, 0x300), i, 1.0);
  }
  for (int s = 0; s < n; s++) {
    for (int l = 1; l <= L; l++)
      for (int g = 0; g < B; g++)
        for (int o = 0; o < H; o++) {
          double z = 0;
          for (int i = 0; i < H; i++) z += A(l - 1, g, i) * Wl(l, o, i);
          A(l, g, o) = z > 0 ? z : 0;
        }
    double sum = 0;
    for (int g = 0; g < B; g++)
      for (int j = 0; j < H; j++) {
        double diff = A(L, g, j) - t[g * H + j];
        sum += diff * diff;
        dz[g * H + j] = A(L, g, j) > 0 ? diff / B : 0;
      }
    loss[s] = sum / (2.0 * B);
    for (int l = L; l >= 1; l--) {
      for (int o = 0; o < H; o++)
        for (int i = 0; i < H; i++) {
          double acc = 0;
          for (int g = 0; g < B; g++) acc += dz[g * H + o] * A(l - 1, g, i);
          dW[((size_t)(l - 1) * H + o) * H + i] = acc;
        }
      if (l > 1) {
        for (int g = 0; g < B; g++)
          for (int i = 0; i < H; i++) {
            double acc = 0;
            for (int o = 0; o < H; o++) acc += dz[g * H + o] * Wl(l, o, i);
            da[g * H + i] = A(l - 1, g, i) > 0 ? acc : 0;
          }
        memcpy(dz, da, sizeof(double) * B * H);
      }
    }
    for (size_t i = 0; i < (size_t)L * H * H; i++) {
      V[i] = c->momentum * V[i] + dW[i];
      W[i] -= c->lr * V[i];
    }
  }
  /* engine_weights order: layer L first, each row-major. */
  for (int l = L; l >= 1; l--)
    for (int i = 0; i < H * H; i++) w_out[(size_t)(L - l) * H * H + i] = (float)W[(size_t)(l - 1) * H * H + i];
  free(W), free(V), free(a), free(dz), free(da), free(t), free(dW);
#undef Wl
#undef A
}

#endif
