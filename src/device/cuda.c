/* cuda.c: the CUDA device. Memory from cudaMalloc, streams and events are CUDA's own, GEMMs go
 * through cuBLASLt (bf16/fp16 inputs with fp32 accumulation; tf32 tensor cores for --precision tf32;
 * plain fp32 FMA for fp32; the forward pass's ReLU as the GEMM's epilogue), and the element-wise work is
 * the kernels of kernels/ops.cu. Every call is checked and reported with rank, host, file and line.
 * Nothing here synchronises the host except stream_synchronize (and event_query, which never blocks), and no
 * operation allocates memory once its first use has planned it (CUDA graphs capture the step as is). */
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "device.h"
#include "nvml_dl.h"
#include "ops.h"
#include "versions.h"
#include "watchdog.h"

ddp_result cuda_fail(cudaError_t e, const char *call, const char *file, int line) {
  return ddp_fail(DDP_ERR_CUDA, file, line, "%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
}
#define CUBLAS_CHECK(call)                                                                        \
  do {                                                                                            \
    cublasStatus_t s_ = (call);                                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                              \
      return DDP_FAIL(DDP_ERR_CUBLAS, "%s: %s", #call, cublasGetStatusString(s_));                \
  } while (0)
/* Kernel launchers return the launch's cudaError_t. */
#define OPS_CHECK(call) CUDA_CHECK((cudaError_t)(call))

#define WORKSPACE_BYTES ((size_t)64 << 20)

/* A planned GEMM: its cuBLASLt descriptors and the algorithm the heuristic chose, kept per shape. */
typedef struct gemm_plan {
  struct gemm_plan *next;
  ddp_gemm key; /* pointers zeroed */
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
} gemm_plan;

/* Host functions: cudaLaunchHostFunc takes a void(void *); the context outlives the call because a graph
 * may replay it, so contexts are kept (one per distinct fn/arg) until the device is destroyed. */
typedef struct host_ctx {
  struct host_ctx *next;
  ddp_host_fn fn;
  void *arg;
} host_ctx;

typedef struct {
  int ordinal;
  cublasLtHandle_t lt;
  void *workspace;
  gemm_plan *plans;
  host_ctx *hosts;
  double *loss_partials;
} cuda_impl;

struct ddp_graph {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
};

static cudaStream_t cs(ddp_stream *s) { return (cudaStream_t)s; }
static cudaEvent_t ce(ddp_event *e) { return (cudaEvent_t)e; }

/* ---- memory ------------------------------------------------------------------------------------- */
static ddp_result cu_alloc(ddp_device *d, void **p, size_t bytes) {
  *p = NULL;
  cudaError_t e = cudaMalloc(p, bytes ? bytes : 256);
  if (e != cudaSuccess) {
    size_t free_b = 0, total = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_b, &total);
    return DDP_FAIL(DDP_ERR_CUDA, "cudaMalloc of %.2f GiB: %s (%.2f GiB free of %.2f)", bytes / 1073741824.0,
                    cudaGetErrorString(e), free_b / 1073741824.0, total / 1073741824.0);
  }
  return DDP_OK;
}
static void cu_free(ddp_device *d, void *p) {
  if (p) cudaFree(p);
}
static ddp_result cu_mem_info(ddp_device *d, size_t *free_b, size_t *total_b) {
  (void)d;
  CUDA_CHECK(cudaMemGetInfo(free_b, total_b));
  return DDP_OK;
}
static ddp_result cu_alloc_host(ddp_device *d, void **p, size_t bytes) {
  CUDA_CHECK(cudaMallocHost(p, bytes ? bytes : 256));
  return DDP_OK;
}
static void cu_free_host(ddp_device *d, void *p) {
  if (p) cudaFreeHost(p);
}
static ddp_result cu_copy(ddp_device *d, void *dst, const void *src, size_t bytes, ddp_stream *s) {
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cs(s)));
  return DDP_OK;
}
static ddp_result cu_memset_zero(ddp_device *d, void *p, size_t bytes, ddp_stream *s) {
  CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, cs(s)));
  return DDP_OK;
}

/* ---- streams, events, graphs -------------------------------------------------------------------- */
static ddp_result cu_stream_create(ddp_device *d, ddp_stream **out, int high_priority) {
  int least = 0, greatest = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, high_priority ? greatest : least));
  *out = (ddp_stream *)s;
  return DDP_OK;
}
static void cu_stream_destroy(ddp_device *d, ddp_stream *s) {
  if (s) cudaStreamDestroy(cs(s));
}
static ddp_result cu_stream_synchronize(ddp_device *d, ddp_stream *s) {
  cudaError_t e = cudaStreamQuery(cs(s)); /* done already: no wait to tell the watchdog about */
  if (e == cudaErrorNotReady) {
    unsigned tok = watchdog_enter_device("its stream (cudaStreamSynchronize)");
    e = cudaStreamSynchronize(cs(s));
    watchdog_leave(tok);
  }
  CUDA_CHECK(e);
  return DDP_OK;
}
static ddp_result cu_event_create(ddp_device *d, ddp_event **out, int timing) {
  cudaEvent_t e;
  CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  *out = (ddp_event *)e;
  return DDP_OK;
}
static void cu_event_destroy(ddp_device *d, ddp_event *e) {
  if (e) cudaEventDestroy(ce(e));
}
static ddp_result cu_event_record(ddp_device *d, ddp_event *e, ddp_stream *s) {
  CUDA_CHECK(cudaEventRecord(ce(e), cs(s)));
  return DDP_OK;
}
static ddp_result cu_stream_wait_event(ddp_device *d, ddp_stream *s, ddp_event *e) {
  CUDA_CHECK(cudaStreamWaitEvent(cs(s), ce(e), 0));
  return DDP_OK;
}
static ddp_result cu_event_query(ddp_device *d, ddp_event *e, int *done) {
  cudaError_t r = cudaEventQuery(ce(e));
  if (r == cudaErrorNotReady) {
    *done = 0;
    return DDP_OK;
  }
  CUDA_CHECK(r);
  *done = 1;
  return DDP_OK;
}
static ddp_result cu_event_elapsed_ms(ddp_device *d, float *ms, ddp_event *a, ddp_event *b) {
  CUDA_CHECK(cudaEventElapsedTime(ms, ce(a), ce(b)));
  return DDP_OK;
}

static void CUDART_CB host_trampoline(void *p) {
  host_ctx *c = p;
  int done = 0;
  (void)c->fn(c->arg, 1, &done); /* errors are kept by the function itself (see comm/mpi.c) */
}
static ddp_result cu_host_func(ddp_device *d, ddp_stream *s, ddp_host_fn fn, void *arg) {
  cuda_impl *c = d->impl;
  host_ctx *h = c->hosts;
  while (h && !(h->fn == fn && h->arg == arg)) h = h->next;
  if (!h) {
    h = calloc(1, sizeof *h);
    DDP_CHECK_ALLOC(h);
    h->fn = fn;
    h->arg = arg;
    h->next = c->hosts;
    c->hosts = h;
  }
  CUDA_CHECK(cudaLaunchHostFunc(cs(s), host_trampoline, h));
  return DDP_OK;
}

static ddp_result cu_graph_begin(ddp_device *d, ddp_stream *s) {
  CUDA_CHECK(cudaStreamBeginCapture(cs(s), cudaStreamCaptureModeThreadLocal));
  return DDP_OK;
}
static ddp_result cu_graph_end(ddp_device *d, ddp_stream *s, ddp_graph **out) {
  ddp_graph *g = calloc(1, sizeof *g);
  DDP_CHECK_ALLOC(g);
  cudaError_t e = cudaStreamEndCapture(cs(s), &g->graph);
  if (e == cudaSuccess) e = cudaGraphInstantiate(&g->exec, g->graph, 0);
  if (e != cudaSuccess) {
    if (g->graph) cudaGraphDestroy(g->graph);
    free(g);
    return cuda_fail(e, "capturing the step into a CUDA graph", __FILE__, __LINE__);
  }
  *out = g;
  return DDP_OK;
}
static ddp_result cu_graph_launch(ddp_device *d, ddp_graph *g, ddp_stream *s) {
  CUDA_CHECK(cudaGraphLaunch(g->exec, cs(s)));
  return DDP_OK;
}
static void cu_graph_destroy(ddp_device *d, ddp_graph *g) {
  if (!g) return;
  cudaGraphExecDestroy(g->exec);
  cudaGraphDestroy(g->graph);
  free(g);
}

/* ---- GEMM --------------------------------------------------------------------------------------- */
static cudaDataType_t cuda_type(ddp_dtype t) { return t == DT_F32 ? CUDA_R_32F : t == DT_BF16 ? CUDA_R_16BF : CUDA_R_16F; }

static ddp_result plan_create(cuda_impl *c, const ddp_gemm *g, gemm_plan **out) {
  gemm_plan *p = calloc(1, sizeof *p);
  DDP_CHECK_ALLOC(p);
  p->key = *g; /* only its shape fields are compared */
  cublasComputeType_t ct = g->ab_type != DT_F32 ? CUBLAS_COMPUTE_32F
                           : g->tf32            ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                : CUBLAS_COMPUTE_32F;
  cublasOperation_t ta = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t epi = g->relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
  size_t ws = WORKSPACE_BYTES;
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t res;
  int nres = 0;
  cublasStatus_t st = cublasLtMatmulDescCreate(&p->desc, ct, CUDA_R_32F);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatrixLayoutCreate(&p->la, cuda_type(g->ab_type), g->trans_a ? g->k : g->m, g->trans_a ? g->m : g->k, g->lda);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatrixLayoutCreate(&p->lb, cuda_type(g->ab_type), g->trans_b ? g->n : g->k, g->trans_b ? g->k : g->n, g->ldb);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&p->lc, cuda_type(g->c_type), g->m, g->n, g->ldc);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulPreferenceCreate(&pref);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(c->lt, p->desc, p->la, p->lb, p->lc, p->lc, pref, 1, &res, &nres);
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (st == CUBLAS_STATUS_SUCCESS && nres == 0) st = CUBLAS_STATUS_NOT_SUPPORTED;
  if (st != CUBLAS_STATUS_SUCCESS) {
    if (p->la) cublasLtMatrixLayoutDestroy(p->la);
    if (p->lb) cublasLtMatrixLayoutDestroy(p->lb);
    if (p->lc) cublasLtMatrixLayoutDestroy(p->lc);
    if (p->desc) cublasLtMatmulDescDestroy(p->desc);
    free(p);
    return DDP_FAIL(DDP_ERR_CUBLAS, "planning the %s GEMM %c%c m=%d n=%d k=%d%s: %s", dtype_name(g->ab_type),
                    g->trans_a ? 'T' : 'N', g->trans_b ? 'T' : 'N', g->m, g->n, g->k, g->relu ? " +relu" : "",
                    cublasGetStatusString(st));
  }
  p->algo = res.algo;
  p->next = c->plans;
  c->plans = p;
  *out = p;
  return DDP_OK;
}

static int same_shape(const ddp_gemm *x, const ddp_gemm *y) {
  return x->trans_a == y->trans_a && x->trans_b == y->trans_b && x->m == y->m && x->n == y->n && x->k == y->k &&
         x->lda == y->lda && x->ldb == y->ldb && x->ldc == y->ldc && x->ab_type == y->ab_type &&
         x->c_type == y->c_type && x->tf32 == y->tf32 && x->relu == y->relu;
}

static ddp_result cu_gemm(ddp_device *d, ddp_stream *s, const ddp_gemm *g) {
  cuda_impl *c = d->impl;
  gemm_plan *p = c->plans;
  while (p && !same_shape(&p->key, g)) p = p->next;
  if (!p) DDP_TRY(plan_create(c, g, &p));
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(c->lt, p->desc, &alpha, g->a, p->la, g->b, p->lb, &beta, g->c, p->lc, g->c, p->lc,
                              &p->algo, c->workspace, WORKSPACE_BYTES, cs(s)));
  return DDP_OK;
}

/* ---- element-wise ------------------------------------------------------------------------------- */
static ddp_result cu_generate(ddp_device *d, ddp_stream *s, void *dst, ddp_dtype dt, size_t n, uint64_t seed,
                              uint64_t tag, uint64_t offset, double bound) {
  OPS_CHECK(ops_generate(dst, dt, n, seed, tag, offset, bound, (ops_stream)s));
  return DDP_OK;
}
static ddp_result cu_cast(ddp_device *d, ddp_stream *s, void *dst, ddp_dtype dt, const void *src, ddp_dtype st,
                          size_t n, float factor, int pre_round) {
  OPS_CHECK(ops_cast(dst, dt, src, st, n, factor, pre_round, (ops_stream)s));
  return DDP_OK;
}
static ddp_result cu_relu_backward(ddp_device *d, ddp_stream *s, void *dz, const void *da, const void *a,
                                   ddp_dtype dt, size_t n) {
  OPS_CHECK(ops_relu_backward(dz, da, a, dt, n, (ops_stream)s));
  return DDP_OK;
}
static ddp_result cu_loss_grad(ddp_device *d, ddp_stream *s, void *dz, const void *y, const float *t, ddp_dtype dt,
                               size_t n, float inv_local_batch, float inv_global_batch, ddp_step_state *state,
                               int use_scale, double *loss_hist) {
  cuda_impl *c = d->impl;
  OPS_CHECK(ops_loss_grad(dz, y, t, dt, n, inv_local_batch, inv_global_batch, state, use_scale, loss_hist,
                          c->loss_partials, (ops_stream)s));
  return DDP_OK;
}
static ddp_result cu_check_finite(ddp_device *d, ddp_stream *s, const void *g, ddp_dtype gt, size_t n,
                                  ddp_step_state *state) {
  OPS_CHECK(ops_check_finite(g, gt, n, state, (ops_stream)s));
  return DDP_OK;
}
static ddp_result cu_sgd(ddp_device *d, ddp_stream *s, float *w, const void *g, ddp_dtype gt, float *g_out, float *v,
                         void *w16, ddp_dtype w16_type, size_t n, float lr, float momentum,
                         const ddp_step_state *state, int unscale) {
  OPS_CHECK(ops_sgd(w, g, gt, g_out, v, w16, w16_type, n, lr, momentum, state, unscale, (ops_stream)s));
  return DDP_OK;
}
static ddp_result cu_step_end(ddp_device *d, ddp_stream *s, ddp_step_state *state, const scaler_cfg *scaler,
                              float *scale_hist, int *skip_hist) {
  OPS_CHECK(ops_step_end(state, scaler, scale_hist, skip_hist, (ops_stream)s));
  return DDP_OK;
}
static ddp_result cu_inject_nan(ddp_device *d, ddp_stream *s, void *p, ddp_dtype dt, const ddp_step_state *state,
                                int step) {
  OPS_CHECK(ops_inject_nan(p, dt, state, step, (ops_stream)s));
  return DDP_OK;
}

/* ---- plausibility bound ---------------------------------------------------------------------------- */
/* This GPU's fastest link as NVML tells it (nvml_gpu_link_peak_gbs). Opens NVML for the question and closes it:
 * no CUDA work, no sync. */
static double cu_max_link_gbs(ddp_device *d, char *why, size_t n) {
  nvml_api api;
  char err[160];
  if (!nvml_open(&api, err, sizeof err)) {
    snprintf(why, n, "no bound: NVML cannot tell this GPU's links (%s)", err);
    return 0;
  }
  nvml_gpu g;
  nvml_gpu_query(&api, d->info.pci_bus_id, &g);
  nvml_close(&api);
  return nvml_gpu_link_peak_gbs(&g, why, n);
}

/* ---- life cycle --------------------------------------------------------------------------------- */
static void cu_destroy(ddp_device *d) {
  if (!d) return;
  cuda_impl *c = d->impl;
  if (c) {
    cudaDeviceSynchronize();
    while (c->plans) {
      gemm_plan *p = c->plans;
      c->plans = p->next;
      cublasLtMatrixLayoutDestroy(p->la);
      cublasLtMatrixLayoutDestroy(p->lb);
      cublasLtMatrixLayoutDestroy(p->lc);
      cublasLtMatmulDescDestroy(p->desc);
      free(p);
    }
    while (c->hosts) {
      host_ctx *h = c->hosts;
      c->hosts = h->next;
      free(h);
    }
    if (c->workspace) cudaFree(c->workspace);
    if (c->loss_partials) cudaFree(c->loss_partials);
    if (c->lt) cublasLtDestroy(c->lt);
    free(c);
  }
  free(d);
}

int device_cuda_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); /* no driver or no device: not an error here */
    return 0;
  }
  return n;
}

/* ---- GPU-to-GPU copies (acceptance: the intra-node matrix) ---- */
typedef struct {
  int n;
  void **src, **dst;
  cudaStream_t *st;
  cudaEvent_t *e0, *e1;
} peer_res;

/* Times `iters` copies a -> b (and b -> a at the same time when bidir) on the source GPUs' streams; ms on a's clock. */
static ddp_result peer_time(peer_res *p, int a, int b, size_t bytes, int iters, int bidir, float *ms) {
  CUDA_CHECK(cudaSetDevice(a));
  CUDA_CHECK(cudaEventRecord(p->e0[a], p->st[a]));
  if (bidir) CUDA_CHECK(cudaStreamWaitEvent(p->st[b], p->e0[a], 0)); /* both directions start together */
  for (int i = 0; i < iters; i++) {
    CUDA_CHECK(cudaMemcpyPeerAsync(p->dst[b], b, p->src[a], a, bytes, p->st[a]));
    if (bidir) CUDA_CHECK(cudaMemcpyPeerAsync(p->dst[a], a, p->src[b], b, bytes, p->st[b]));
  }
  if (bidir) { /* the end waits for the slower direction */
    CUDA_CHECK(cudaSetDevice(b));
    CUDA_CHECK(cudaEventRecord(p->e1[b], p->st[b]));
    CUDA_CHECK(cudaStreamWaitEvent(p->st[a], p->e1[b], 0));
    CUDA_CHECK(cudaSetDevice(a));
  }
  CUDA_CHECK(cudaEventRecord(p->e1[a], p->st[a]));
  CUDA_CHECK(cudaEventSynchronize(p->e1[a]));
  CUDA_CHECK(cudaEventElapsedTime(ms, p->e0[a], p->e1[a]));
  return DDP_OK;
}

static ddp_result peer_run(peer_res *p, size_t bytes, int iters, double *uni, double *bidir, int *peer) {
  int n = p->n;
  for (int g = 0; g < n; g++) {
    CUDA_CHECK(cudaSetDevice(g));
    CUDA_CHECK(cudaMalloc(&p->src[g], bytes));
    CUDA_CHECK(cudaMalloc(&p->dst[g], bytes));
    CUDA_CHECK(cudaMemset(p->src[g], 1, bytes));
    CUDA_CHECK(cudaStreamCreateWithFlags(&p->st[g], cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&p->e0[g]));
    CUDA_CHECK(cudaEventCreate(&p->e1[g]));
    for (int h = 0; h < n; h++) {
      int can = 0;
      if (h == g) continue;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, g, h));
      peer[g * n + h] = can;
      if (can) {
        cudaError_t e = cudaDeviceEnablePeerAccess(h, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
        else CUDA_CHECK(e);
      }
    }
  }
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      uni[a * n + b] = bidir[a * n + b] = NAN;
      if (a == b) continue;
      float ms = 0;
      DDP_TRY(peer_time(p, a, b, bytes, 1, 0, &ms)); /* warm-up */
      DDP_TRY(peer_time(p, a, b, bytes, iters, 0, &ms));
      uni[a * n + b] = ms > 0 ? (double)bytes * iters / (ms * 1e-3) / 1e9 : NAN;
      DDP_TRY(peer_time(p, a, b, bytes, iters, 1, &ms));
      bidir[a * n + b] = ms > 0 ? 2.0 * bytes * iters / (ms * 1e-3) / 1e9 : NAN;
    }
  return DDP_OK;
}

ddp_result device_cuda_peer_matrix(int n, size_t bytes, int iters, double *uni, double *bidir, int *peer) {
  int saved = 0;
  memset(peer, 0, (size_t)n * n * sizeof *peer);
  CUDA_CHECK(cudaGetDevice(&saved));
  peer_res p = {n, calloc(n, sizeof(void *)), calloc(n, sizeof(void *)), calloc(n, sizeof(cudaStream_t)),
                calloc(n, sizeof(cudaEvent_t)), calloc(n, sizeof(cudaEvent_t))};
  ddp_result r = p.src && p.dst && p.st && p.e0 && p.e1 ? peer_run(&p, bytes, iters, uni, bidir, peer)
                                                       : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int g = 0; g < n && p.src && p.dst && p.st && p.e0 && p.e1; g++) {
    cudaSetDevice(g);
    if (p.st[g]) cudaStreamSynchronize(p.st[g]), cudaStreamDestroy(p.st[g]);
    if (p.e0[g]) cudaEventDestroy(p.e0[g]);
    if (p.e1[g]) cudaEventDestroy(p.e1[g]);
    if (p.src[g]) cudaFree(p.src[g]);
    if (p.dst[g]) cudaFree(p.dst[g]);
    for (int h = 0; h < n; h++)
      if (h != g && peer[g * n + h]) cudaDeviceDisablePeerAccess(h);
  }
  cudaGetLastError();
  cudaSetDevice(saved);
  free(p.src), free(p.dst), free(p.st), free(p.e0), free(p.e1);
  return r;
}

int device_cuda_probe(char *err, size_t n, int *runtime_version, int *driver_version) {
  int count = 0;
  *runtime_version = *driver_version = 0;
  if (n) err[0] = 0;
  if (cudaRuntimeGetVersion(runtime_version) != cudaSuccess) *runtime_version = 0;
  if (cudaDriverGetVersion(driver_version) != cudaSuccess) *driver_version = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    snprintf(err, n, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    count = 0;
  }
  cudaGetLastError();
  return count;
}

ddp_result device_cuda_bus_id(int ordinal, char *buf, size_t n) {
  CUDA_CHECK(cudaDeviceGetPCIBusId(buf, (int)n, ordinal));
  for (char *p = buf; *p; p++) /* "0000:06:00.0" in lower case, as hwloc and NVML print it */
    if (*p >= 'A' && *p <= 'F') *p = (char)(*p - 'A' + 'a');
  return DDP_OK;
}

ddp_result device_cuda_create(ddp_device **out, int ordinal) {
  *out = NULL;
  ddp_device *d = calloc(1, sizeof *d);
  cuda_impl *c = calloc(1, sizeof *c);
  if (!d || !c) {
    free(d);
    free(c);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  d->impl = c;
  c->ordinal = ordinal;
  *out = d; /* from here on, the caller's destroy cleans up after a failure */
  d->destroy = cu_destroy;
  d->max_link_gbs = cu_max_link_gbs;
  CUDA_CHECK(cudaSetDevice(ordinal));
  CUDA_CHECK(cudaFree(0)); /* create the context now, not inside the first timed step */
  struct cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  d->name = "cuda";
  d->host_memory = 0;
  snprintf(d->info.name, sizeof d->info.name, "%.127s", prop.name);
  DDP_TRY(device_cuda_bus_id(ordinal, d->info.pci_bus_id, sizeof d->info.pci_bus_id));
  d->info.ordinal = ordinal;
  d->info.memory = prop.totalGlobalMem;
  d->info.cc_major = prop.major;
  d->info.cc_minor = prop.minor;
  d->info.sm_count = prop.multiProcessorCount;
  CUBLAS_CHECK(cublasLtCreate(&c->lt));
  CUDA_CHECK(cudaMalloc(&c->workspace, WORKSPACE_BYTES));
  CUDA_CHECK(cudaMalloc((void **)&c->loss_partials, OPS_LOSS_BLOCKS * sizeof(double)));
  d->alloc = cu_alloc;
  d->mem_info = cu_mem_info;
  d->free = cu_free;
  d->alloc_host = cu_alloc_host;
  d->free_host = cu_free_host;
  d->copy = cu_copy;
  d->memset_zero = cu_memset_zero;
  d->stream_create = cu_stream_create;
  d->stream_destroy = cu_stream_destroy;
  d->stream_synchronize = cu_stream_synchronize;
  d->event_create = cu_event_create;
  d->event_destroy = cu_event_destroy;
  d->event_record = cu_event_record;
  d->stream_wait_event = cu_stream_wait_event;
  d->event_query = cu_event_query;
  d->event_elapsed_ms = cu_event_elapsed_ms;
  d->host_func = cu_host_func;
  d->graph_begin = cu_graph_begin;
  d->graph_end = cu_graph_end;
  d->graph_launch = cu_graph_launch;
  d->graph_destroy = cu_graph_destroy;
  d->gemm = cu_gemm;
  d->generate = cu_generate;
  d->cast = cu_cast;
  d->relu_backward = cu_relu_backward;
  d->loss_grad = cu_loss_grad;
  d->check_finite = cu_check_finite;
  d->sgd = cu_sgd;
  d->step_end = cu_step_end;
  d->inject_nan = cu_inject_nan;
  return DDP_OK;
}

void device_cuda_versions(ddp_versions *v) {
  int drv = 0, rt = 0, ma = 0, mi = 0, pa = 0;
  if (cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0)
    snprintf(v->cuda_driver, sizeof v->cuda_driver, "%d.%d", drv / 1000, (drv % 1000) / 10);
  else
    snprintf(v->cuda_driver, sizeof v->cuda_driver, "none");
  if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
    snprintf(v->cuda_runtime, sizeof v->cuda_runtime, "%d.%d", rt / 1000, (rt % 1000) / 10);
  if (cublasLtGetProperty(MAJOR_VERSION, &ma) == CUBLAS_STATUS_SUCCESS &&
      cublasLtGetProperty(MINOR_VERSION, &mi) == CUBLAS_STATUS_SUCCESS &&
      cublasLtGetProperty(PATCH_LEVEL, &pa) == CUBLAS_STATUS_SUCCESS)
    snprintf(v->cublas, sizeof v->cublas, "%d.%d.%d", ma, mi, pa);
  cudaGetLastError();
}
