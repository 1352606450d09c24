// ops.cu: the CUDA device's element-wise kernels behind kernels/ops.h.
//
// defines: ops_generate, ops_cast, ops_relu_backward, ops_loss_grad, ops_check_finite, ops_sgd, ops_step_end,
//          ops_inject_nan
//
// The big tensors (H*H weights and gradients, B*H activations) make these memory-bound, so each thread moves
// 8 elements with 16-byte loads and stores when every pointer is 16-byte aligned (cudaMalloc's are; slices
// of odd-sized matrices may not be), and a scalar loop does the rest. Arithmetic and rounding match the CPU
// device (numerics.h): RNE conversions, the same float operations in the same order. The loss is summed in
// double with a fixed grid and a fixed reduction tree, so it is reproducible run to run. Nothing here
// synchronises: per-step state (step counter, found_inf, loss scale) lives on the device.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "ops.h"

namespace {

typedef __nv_bfloat16 bf16;
typedef __half fp16;

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

// ---- one element -----------------------------------------------------------------------------------
__device__ __forceinline__ float ld(const float *p, size_t i) { return p[i]; }
__device__ __forceinline__ float ld(const bf16 *p, size_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float ld(const fp16 *p, size_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void st(float *p, size_t i, float v) { p[i] = v; }
__device__ __forceinline__ void st(bf16 *p, size_t i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void st(fp16 *p, size_t i, float v) { p[i] = __float2half_rn(v); }
template <typename T> __device__ __forceinline__ float rnd(float v);
template <> __device__ __forceinline__ float rnd<float>(float v) { return v; }
template <> __device__ __forceinline__ float rnd<bf16>(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }
template <> __device__ __forceinline__ float rnd<fp16>(float v) { return __half2float(__float2half_rn(v)); }

// ---- eight elements, 16-byte accesses ----------------------------------------------------------------
__device__ __forceinline__ void ld8(const float *p, float v[8]) {
  float4 a = reinterpret_cast<const float4 *>(p)[0], b = reinterpret_cast<const float4 *>(p)[1];
  v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
__device__ __forceinline__ void ld8(const bf16 *p, float v[8]) {
  uint4 u = *reinterpret_cast<const uint4 *>(p);
  const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&u);
#pragma unroll
  for (int k = 0; k < 4; k++) {
    float2 f = __bfloat1622float2(h[k]);
    v[2 * k] = f.x, v[2 * k + 1] = f.y;
  }
}
__device__ __forceinline__ void ld8(const fp16 *p, float v[8]) {
  uint4 u = *reinterpret_cast<const uint4 *>(p);
  const __half2 *h = reinterpret_cast<const __half2 *>(&u);
#pragma unroll
  for (int k = 0; k < 4; k++) {
    float2 f = __half22float2(h[k]);
    v[2 * k] = f.x, v[2 * k + 1] = f.y;
  }
}
__device__ __forceinline__ void st8(float *p, const float v[8]) {
  reinterpret_cast<float4 *>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
  reinterpret_cast<float4 *>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
}
__device__ __forceinline__ void st8(bf16 *p, const float v[8]) {
  uint4 u;
  __nv_bfloat162 *h = reinterpret_cast<__nv_bfloat162 *>(&u);
#pragma unroll
  for (int k = 0; k < 4; k++) h[k] = __floats2bfloat162_rn(v[2 * k], v[2 * k + 1]);
  *reinterpret_cast<uint4 *>(p) = u;
}
__device__ __forceinline__ void st8(fp16 *p, const float v[8]) {
  uint4 u;
  __half2 *h = reinterpret_cast<__half2 *>(&u);
#pragma unroll
  for (int k = 0; k < 4; k++) h[k] = __floats2half2_rn(v[2 * k], v[2 * k + 1]);
  *reinterpret_cast<uint4 *>(p) = u;
}

// Grid-stride map: op.begin() once per thread (false: the thread does nothing), then op.vec8(i) on runs of
// eight elements (VEC) and op.one(i) on the rest.
template <bool VEC, class Op> __global__ void k_map(size_t n, Op op) {
  if (!op.begin()) return;
  size_t tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
  size_t done = 0;
  if (VEC) {
    size_t nv = n / 8;
    for (size_t i = tid; i < nv; i += stride) op.vec8(i * 8);
    done = nv * 8;
  }
  for (size_t i = done + tid; i < n; i += stride) op.one(i);
}

inline bool aligned16(const void *p) { return p == nullptr || (reinterpret_cast<uintptr_t>(p) & 15) == 0; }
inline int blocks_for(size_t work) {
  size_t b = (work + kThreads - 1) / kThreads;
  return (int)(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}

template <class Op> int launch_map(size_t n, const Op &op, bool vec, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (vec)
    k_map<true><<<blocks_for(n / 8 + 1), kThreads, 0, s>>>(n, op);
  else
    k_map<false><<<blocks_for(n), kThreads, 0, s>>>(n, op);
  return cudaGetLastError();
}

// ---- operations ------------------------------------------------------------------------------------
template <typename D, typename S> struct CastOp {
  D *dst;
  const S *src;
  float factor;
  int pre_round;
  __device__ bool begin() const { return true; }
  __device__ void one(size_t i) const {
    float v = ld(src, i);
    if (pre_round) v = rnd<D>(v);
    st(dst, i, v * factor);
  }
  __device__ void vec8(size_t i) const {
    float v[8];
    ld8(src + i, v);
#pragma unroll
    for (int k = 0; k < 8; k++) v[k] = (pre_round ? rnd<D>(v[k]) : v[k]) * factor;
    st8(dst + i, v);
  }
};

template <typename T> struct ReluBwdOp {
  T *dz;
  const T *da, *a;
  __device__ bool begin() const { return true; }
  __device__ void one(size_t i) const { st(dz, i, ld(a, i) > 0.0f ? ld(da, i) : 0.0f); }
  __device__ void vec8(size_t i) const {
    float x[8], g[8];
    ld8(a + i, x);
    ld8(da + i, g);
#pragma unroll
    for (int k = 0; k < 8; k++) g[k] = x[k] > 0.0f ? g[k] : 0.0f;
    st8(dz + i, g);
  }
};

// G: gradient type; H: type of the 16-bit weight copy (unused when w16 == nullptr).
template <typename G, typename H> struct SgdOp {
  float *w;
  const G *g;
  float *g_out, *v;
  H *w16;
  float lr, momentum;
  const ddp_step_state *state;
  int unscale;
  float inv;
  __device__ bool begin() {
    if (state && state->found_inf) return false; // a skipped step changes nothing
    inv = unscale ? (float)(1.0 / (double)state->scale) : 1.0f;
    return true;
  }
  __device__ float update(float grad, float *vv, float *ww) const {
    if (unscale) grad *= inv;
    float step = grad;
    if (v) {
      *vv = momentum * *vv + grad;
      step = *vv;
    }
    *ww = *ww - lr * step;
    return grad;
  }
  __device__ void one(size_t i) const {
    float grad = update(ld(g, i), v ? v + i : nullptr, w + i);
    if (g_out) g_out[i] = grad;
    if (w16) st(w16, i, w[i]);
  }
  __device__ void vec8(size_t i) const {
    float gg[8], ww[8], vv[8];
    ld8(g + i, gg);
    ld8(w + i, ww);
    if (v) ld8(v + i, vv);
#pragma unroll
    for (int k = 0; k < 8; k++) gg[k] = update(gg[k], &vv[k], &ww[k]);
    st8(w + i, ww);
    if (v) st8(v + i, vv);
    if (g_out) st8(g_out + i, gg);
    if (w16) st8(w16 + i, ww);
  }
};

template <typename T> __global__ void k_generate(T *dst, size_t n, uint64_t key, uint64_t offset, double bound) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    st(dst, i, gen_value(key, offset + i, bound));
}

// dz and this block's share of sum((y - t)^2), in double, in a fixed order.
template <typename T>
__global__ void k_loss_grad(T *dz, const T *y, const float *t, size_t n, float inv_local_batch,
                            const ddp_step_state *state, int use_scale, double *partials) {
  __shared__ double red[kThreads];
  float coef = inv_local_batch * (use_scale ? state->scale : 1.0f);
  double acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float yv = ld(y, i);
    float diff = yv - t[i];
    acc += (double)diff * (double)diff;
    st(dz, i, yv > 0.0f ? diff * coef : 0.0f);
  }
  red[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = red[0];
}

__global__ void k_loss_final(const double *partials, int nblocks, float inv_global_batch,
                             const ddp_step_state *state, double *loss_hist) {
  __shared__ double red[kThreads];
  double acc = 0;
  for (int i = threadIdx.x; i < nblocks; i += kThreads) acc += partials[i];
  red[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) loss_hist[state->step] = 0.5 * (double)inv_global_batch * red[0];
}

// found_inf = 1 if any element is not finite. Every writer writes 1: the race is benign.
template <typename T> struct FiniteOp {
  const T *g;
  ddp_step_state *state;
  __device__ bool begin() const { return true; }
  __device__ void one(size_t i) const {
    if (!isfinite(ld(g, i))) state->found_inf = 1;
  }
  __device__ void vec8(size_t i) const {
    float v[8];
    ld8(g + i, v);
    bool bad = false;
#pragma unroll
    for (int k = 0; k < 8; k++) bad |= !isfinite(v[k]);
    if (bad) state->found_inf = 1;
  }
};

__global__ void k_step_end(ddp_step_state *state, scaler_cfg scaler, int use_scaler, float *scale_hist,
                           int *skip_hist) {
  if (scale_hist) scale_hist[state->step] = state->scale;
  if (skip_hist) skip_hist[state->step] = state->found_inf;
  if (use_scaler) scaler_update(&state->scale, &state->tracker, state->found_inf, &scaler);
  state->found_inf = 0;
  state->step++;
}

template <typename T> __global__ void k_inject_nan(T *p, const ddp_step_state *state, int step) {
  if (state->step == step) st(p, 0, __int_as_float(0x7fc00000));
}

// ---- type dispatch ---------------------------------------------------------------------------------
template <template <typename> class F, typename... A> int dispatch1(ddp_dtype t, A... a) {
  switch (t) {
    case DT_F32: return F<float>::run(a...);
    case DT_BF16: return F<bf16>::run(a...);
    case DT_F16: return F<fp16>::run(a...);
    default: break; /* the other types are for collectives only */
  }
  return cudaErrorInvalidValue;
}

template <typename T> struct GenerateRun {
  static int run(void *dst, size_t n, uint64_t key, uint64_t offset, double bound, cudaStream_t s) {
    k_generate<T><<<blocks_for(n), kThreads, 0, s>>>((T *)dst, n, key, offset, bound);
    return cudaGetLastError();
  }
};

template <typename D> struct CastFrom {
  template <typename S> static int go(void *dst, const void *src, size_t n, float factor, int pre, cudaStream_t s) {
    CastOp<D, S> op{(D *)dst, (const S *)src, factor, pre};
    return launch_map(n, op, aligned16(dst) && aligned16(src), s);
  }
};

template <typename T> struct ReluBwdRun {
  static int run(void *dz, const void *da, const void *a, size_t n, cudaStream_t s) {
    ReluBwdOp<T> op{(T *)dz, (const T *)da, (const T *)a};
    return launch_map(n, op, aligned16(dz) && aligned16(da) && aligned16(a), s);
  }
};

template <typename T> struct LossRun {
  static int run(void *dz, const void *y, const float *t, size_t n, float inv_local, float inv_global,
                 ddp_step_state *state, int use_scale, double *loss_hist, double *partials, cudaStream_t s) {
    int nb = blocks_for(n);
    if (nb > OPS_LOSS_BLOCKS) nb = OPS_LOSS_BLOCKS;
    k_loss_grad<T><<<nb, kThreads, 0, s>>>((T *)dz, (const T *)y, t, n, inv_local, state, use_scale, partials);
    k_loss_final<<<1, kThreads, 0, s>>>(partials, nb, inv_global, state, loss_hist);
    return cudaGetLastError();
  }
};

template <typename T> struct FiniteRun {
  static int run(const void *g, size_t n, ddp_step_state *state, cudaStream_t s) {
    FiniteOp<T> op{(const T *)g, state};
    return launch_map(n, op, aligned16(g), s);
  }
};

template <typename G> struct SgdRun {
  template <typename H>
  static int go(float *w, const void *g, float *g_out, float *v, void *w16, size_t n, float lr, float m,
                const ddp_step_state *state, int unscale, cudaStream_t s) {
    SgdOp<G, H> op{w, (const G *)g, g_out, v, (H *)w16, lr, m, state, unscale, 1.0f};
    bool vec = aligned16(w) && aligned16(g) && aligned16(g_out) && aligned16(v) && aligned16(w16);
    return launch_map(n, op, vec, s);
  }
  static int run(float *w, const void *g, float *g_out, float *v, void *w16, ddp_dtype w16t, size_t n, float lr,
                 float m, const ddp_step_state *state, int unscale, cudaStream_t s) {
    if (w16 && w16t == DT_F16) return go<fp16>(w, g, g_out, v, w16, n, lr, m, state, unscale, s);
    return go<bf16>(w, g, g_out, v, w16, n, lr, m, state, unscale, s); /* bf16 or none */
  }
};

template <typename T> struct InjectRun {
  static int run(void *p, const ddp_step_state *state, int step, cudaStream_t s) {
    k_inject_nan<T><<<1, 1, 0, s>>>((T *)p, state, step);
    return cudaGetLastError();
  }
};

} // namespace

extern "C" {

int ops_generate(void *dst, ddp_dtype dt, size_t n, uint64_t seed, uint64_t tag, uint64_t offset, double bound,
                 ops_stream s) {
  if (n == 0) return cudaSuccess;
  return dispatch1<GenerateRun>(dt, dst, n, gen_key(seed, tag), offset, bound, (cudaStream_t)s);
}

int ops_cast(void *dst, ddp_dtype dt, const void *src, ddp_dtype st, size_t n, float factor, int pre_round,
             ops_stream s) {
  cudaStream_t cs = (cudaStream_t)s;
#define DDP_CAST_SRC(D)                                                                      \
  switch (st) {                                                                              \
    case DT_F32: return CastFrom<D>::go<float>(dst, src, n, factor, pre_round, cs);          \
    case DT_BF16: return CastFrom<D>::go<bf16>(dst, src, n, factor, pre_round, cs);          \
    case DT_F16: return CastFrom<D>::go<fp16>(dst, src, n, factor, pre_round, cs);           \
    default: break;                                                                          \
  }                                                                                          \
  break;
  switch (dt) {
    case DT_F32: DDP_CAST_SRC(float)
    case DT_BF16: DDP_CAST_SRC(bf16)
    case DT_F16: DDP_CAST_SRC(fp16)
    default: break;
  }
#undef DDP_CAST_SRC
  return cudaErrorInvalidValue;
}

int ops_relu_backward(void *dz, const void *da, const void *a, ddp_dtype dt, size_t n, ops_stream s) {
  return dispatch1<ReluBwdRun>(dt, dz, da, a, n, (cudaStream_t)s);
}

int ops_loss_grad(void *dz, const void *y, const float *t, ddp_dtype dt, size_t n, float inv_local_batch,
                  float inv_global_batch, ddp_step_state *state, int use_scale, double *loss_hist, double *partials,
                  ops_stream s) {
  return dispatch1<LossRun>(dt, dz, y, t, n, inv_local_batch, inv_global_batch, state, use_scale, loss_hist, partials,
                            (cudaStream_t)s);
}

int ops_check_finite(const void *g, ddp_dtype gt, size_t n, ddp_step_state *state, ops_stream s) {
  return dispatch1<FiniteRun>(gt, g, n, state, (cudaStream_t)s);
}

int ops_sgd(float *w, const void *g, ddp_dtype gt, float *g_out, float *v, void *w16, ddp_dtype w16t, size_t n,
            float lr, float momentum, const ddp_step_state *state, int unscale, ops_stream s) {
  return dispatch1<SgdRun>(gt, w, g, g_out, v, w16, w16t, n, lr, momentum, state, unscale, (cudaStream_t)s);
}

int ops_step_end(ddp_step_state *state, const scaler_cfg *scaler, float *scale_hist, int *skip_hist, ops_stream s) {
  scaler_cfg c = scaler ? *scaler : scaler_cfg{1, 2, 0.5, 1};
  k_step_end<<<1, 1, 0, (cudaStream_t)s>>>(state, c, scaler != nullptr, scale_hist, skip_hist);
  return cudaGetLastError();
}

int ops_inject_nan(void *p, ddp_dtype dt, const ddp_step_state *state, int step, ops_stream s) {
  return dispatch1<InjectRun>(dt, p, state, step, (cudaStream_t)s);
}

} // extern "C"
