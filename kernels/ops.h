/* ops.h: the element-wise kernels of the CUDA device, as C-callable launchers. Each enqueues on `stream`
 * and returns the launch's cudaError_t (as int); none synchronises. Their semantics are those of the
 * matching ddp_device operations in src/device/device.h, and they compute the same values as the CPU device
 * (same rounding: numerics.h); only the loss reduction's summation order differs. Types are ddp_dtype. */
#ifndef DDPBENCH_KERNELS_OPS_H
#define DDPBENCH_KERNELS_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *ops_stream; /* cudaStream_t without CUDA's cuda_runtime.h in C files */

int ops_generate(void *dst, ddp_dtype dt, size_t n, uint64_t seed, uint64_t tag, uint64_t offset, double bound,
                 ops_stream s);
int ops_cast(void *dst, ddp_dtype dt, const void *src, ddp_dtype st, size_t n, float factor, int pre_round,
             ops_stream s);
int ops_relu_backward(void *dz, const void *da, const void *a, ddp_dtype dt, size_t n, ops_stream s);
/* partials: scratch of at least OPS_LOSS_BLOCKS doubles (device). */
#define OPS_LOSS_BLOCKS 1024
int ops_loss_grad(void *dz, const void *y, const float *t, ddp_dtype dt, size_t n, float inv_local_batch,
                  float inv_global_batch, ddp_step_state *state, int use_scale, double *loss_hist, double *partials,
                  ops_stream s);
int ops_check_finite(const void *g, ddp_dtype gt, size_t n, ddp_step_state *state, ops_stream s);
int ops_sgd(float *w, const void *g, ddp_dtype gt, float *g_out, float *v, void *w16, ddp_dtype w16t, size_t n,
            float lr, float momentum, const ddp_step_state *state, int unscale, ops_stream s);
int ops_step_end(ddp_step_state *state, const scaler_cfg *scaler, float *scale_hist, int *skip_hist, ops_stream s);
int ops_inject_nan(void *p, ddp_dtype dt, const ddp_step_state *state, int step, ops_stream s);

#ifdef __cplusplus
}
#endif
#endif
