/* device.h: the device interface, a struct of function pointers that the CPU device (cpu.c,
 * OpenBLAS) and the CUDA device (device_cuda.c, cuBLASLt + kernels/ops.cu) fill in. The engine drives
 * both exactly alike: memory, streams and events with CUDA's semantics (work on a stream runs in order;
 * an event completes when the work recorded before it has; waiting on an event orders another stream
 * after it without blocking the host), GEMMs, and the element-wise operations of the model.
 *
 * Every operation is enqueued on a stream and returns at once on the CUDA device; the CPU device runs it
 * before returning, except host functions, which it may leave in flight (see host_func). Operations never
 * synchronise the host with the device; only stream_synchronize does (event_query never blocks).
 * Per-step values the host needs (loss, loss scale, skipped steps) stay on the device in history arrays
 * indexed by the device-side step counter, and are read after a phase. */
#ifndef DDPBENCH_DEVICE_H
#define DDPBENCH_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "dtype.h"
#include "numerics.h"
#include "versions.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ddp_stream ddp_stream; /* opaque, device-specific */
typedef struct ddp_event ddp_event;
typedef struct ddp_graph ddp_graph;

/* Device-resident state of the training step, shared by the step's kernels. */
typedef struct {
  int step;      /* index of the current step within the phase (warmup included) */
  int found_inf; /* set by unscale when a gradient is not finite; cleared by step_end */
  float scale;   /* fp16 loss scale used by this step */
  int tracker;   /* GradScaler's growth tracker */
} ddp_step_state;

/* C (m x n) = op(A) * op(B), column-major, as BLAS. A and B of ab_type, C of c_type, fp32 accumulation. */
typedef struct {
  int trans_a, trans_b;
  int m, n, k;
  const void *a;
  int lda;
  const void *b;
  int ldb;
  void *c;
  int ldc;
  ddp_dtype ab_type, c_type;
  int tf32; /* fp32 inputs: let the tensor cores round them to tf32 */
  int relu; /* epilogue: C = max(C, 0) */
} ddp_gemm;

/* Host function run in stream order: first called only once the work before it on its stream is complete (what
 * it starts then runs in stream order). block = 1: run to completion. block = 0: make progress if it can and
 * say whether it is complete (*done); the CPU device polls in-flight functions this way between its
 * operations, so that e.g. a non-blocking MPI allreduce progresses while the backward pass runs. */
typedef ddp_result (*ddp_host_fn)(void *arg, int block, int *done);

typedef struct {
  char name[128];      /* "NVIDIA H200", "cpu (OpenBLAS 0.3.21, 2 threads)" */
  char pci_bus_id[32]; /* "0000:06:00.0", "" on the cpu device */
  int ordinal;         /* CUDA device ordinal, -1 on cpu */
  size_t memory;       /* bytes */
  int cc_major, cc_minor, sm_count;
} ddp_device_info;

typedef struct ddp_device ddp_device;
struct ddp_device {
  const char *name;  /* "cpu" or "cuda" */
  int host_memory;   /* 1 if device buffers are ordinary host memory (cpu) */
  void *impl;
  ddp_device_info info;

  /* memory */
  ddp_result (*alloc)(ddp_device *, void **p, size_t bytes);
  void (*free)(ddp_device *, void *p);
  ddp_result (*alloc_host)(ddp_device *, void **p, size_t bytes); /* pinned where that exists */
  void (*free_host)(ddp_device *, void *p);
  ddp_result (*copy)(ddp_device *, void *dst, const void *src, size_t bytes, ddp_stream *s); /* any direction */
  ddp_result (*memset_zero)(ddp_device *, void *p, size_t bytes, ddp_stream *s);
  /* Optional (NULL where the device cannot tell: cpu): the device's free and total memory now, as the driver
   * counts it (every process's allocations, at the driver's granularity). */
  ddp_result (*mem_info)(ddp_device *, size_t *free_bytes, size_t *total_bytes);

  /* streams, events, graphs */
  ddp_result (*stream_create)(ddp_device *, ddp_stream **s, int high_priority);
  void (*stream_destroy)(ddp_device *, ddp_stream *s);
  ddp_result (*stream_synchronize)(ddp_device *, ddp_stream *s);
  ddp_result (*event_create)(ddp_device *, ddp_event **e, int timing);
  void (*event_destroy)(ddp_device *, ddp_event *e);
  ddp_result (*event_record)(ddp_device *, ddp_event *e, ddp_stream *s);
  ddp_result (*stream_wait_event)(ddp_device *, ddp_stream *s, ddp_event *e);
  ddp_result (*event_query)(ddp_device *, ddp_event *e, int *done); /* never blocks */
  ddp_result (*event_elapsed_ms)(ddp_device *, float *ms, ddp_event *start, ddp_event *end);
  ddp_result (*host_func)(ddp_device *, ddp_stream *s, ddp_host_fn fn, void *arg);
  /* Capture of the work enqueued on s (and the streams that s's events fork to) into a graph; NULL where
   * unsupported (cpu). */
  ddp_result (*graph_begin)(ddp_device *, ddp_stream *s);
  ddp_result (*graph_end)(ddp_device *, ddp_stream *s, ddp_graph **g);
  ddp_result (*graph_launch)(ddp_device *, ddp_graph *g, ddp_stream *s);
  void (*graph_destroy)(ddp_device *, ddp_graph *g);

  /* math */
  ddp_result (*gemm)(ddp_device *, ddp_stream *s, const ddp_gemm *g);
  /* dst[i] = gen_value(gen_key(seed, tag), offset + i, bound), rounded to dt. */
  ddp_result (*generate)(ddp_device *, ddp_stream *s, void *dst, ddp_dtype dt, size_t n, uint64_t seed,
                         uint64_t tag, uint64_t offset, double bound);
  /* dst = round_dt(src * factor); with pre_round, dst = round_dt(round_dt(src) * factor) (PyTorch's
   * compression hook: cast first, then divide). dst == src allowed when the types match. */
  ddp_result (*cast)(ddp_device *, ddp_stream *s, void *dst, ddp_dtype dt, const void *src, ddp_dtype st,
                     size_t n, float factor, int pre_round);
  /* dz = a > 0 ? da : 0 (the gradient through relu, given its output a); dz == da allowed. */
  ddp_result (*relu_backward)(ddp_device *, ddp_stream *s, void *dz, const void *da, const void *a, ddp_dtype dt,
                              size_t n);
  /* MSE loss of y (dt) against t (fp32). Gradient of this rank's mean loss (as every DDP rank computes it;
   * the 1/world of the bucket copy then makes the average the global batch's gradient):
   * dz = round_dt((y - t) * (inv_local_batch * scale)) where y > 0 (relu of the last layer), 0 elsewhere.
   * loss_hist[state->step] = 0.5 * inv_global_batch * sum((y - t)^2), this rank's share of the global loss.
   * scale = state->scale when use_scale, else 1. */
  ddp_result (*loss_grad)(ddp_device *, ddp_stream *s, void *dz, const void *y, const float *t, ddp_dtype dt,
                          size_t n, float inv_local_batch, float inv_global_batch, ddp_step_state *state,
                          int use_scale, double *loss_hist);
  /* state->found_inf = 1 if any of the n values of g (type gt) is not finite (GradScaler's inf check; a 16-bit
   * gradient is non-finite exactly when its fp32 .grad would be). */
  ddp_result (*check_finite)(ddp_device *, ddp_stream *s, const void *g, ddp_dtype gt, size_t n,
                             ddp_step_state *state);
  /* The optimizer step, fused with what surrounds it. Unless (state && state->found_inf), per element:
   * grad = g * (unscale ? 1 / state->scale : 1), g of type gt (GradScaler's unscale); g_out = grad when
   * g_out != NULL (DDP's copy of the reduced bucket back into .grad); v = momentum * v + grad when v != NULL
   * (else v = grad); w -= lr * v; w16 = round(w) when w16 != NULL (next step's autocast copy). A skipped
   * step changes nothing. */
  ddp_result (*sgd)(ddp_device *, ddp_stream *s, float *w, const void *g, ddp_dtype gt, float *g_out, float *v,
                    void *w16, ddp_dtype w16_type, size_t n, float lr, float momentum, const ddp_step_state *state,
                    int unscale);
  /* Close the step: scale_hist/skip_hist[step] = scale, found_inf (when not NULL); scaler update when
   * scaler != NULL; found_inf = 0; step += 1. */
  ddp_result (*step_end)(ddp_device *, ddp_stream *s, ddp_step_state *state, const scaler_cfg *scaler,
                         float *scale_hist, int *skip_hist);
  /* p[0] = NaN when state->step == step (fault injection). */
  ddp_result (*inject_nan)(ddp_device *, ddp_stream *s, void *p, ddp_dtype dt, const ddp_step_state *state,
                           int step);

  /* Optional (NULL: no bound): the most a link of this device can carry, GB/s (1e9 B/s), both directions
   * together, as a plausibility bound on the bandwidth figures of its collectives; 0 when nothing is known
   * (no bound). why says where the bound comes from, or why there is none. The cpu device measures its memcpy
   * bandwidth (tens of ms, once): call it after timing, never inside a timed loop. */
  double (*max_link_gbs)(ddp_device *, char *why, size_t n);

  void (*destroy)(ddp_device *);
};

/* ---- the devices of this build, as a table (devices.c) ---------------------------------------------
 * A device plug-in is a ddp_device implementation and one entry: a HIP device is device/hip.c and its line in
 * devices.c (or device_register() at run time, as the tests do). Placement, creation, the --device choices
 * and the versions report all come from the table; the optional ops are NULL where a device has no such
 * thing. */
typedef struct device_entry {
  const char *name;        /* as --device spells it */
  int is_gpu;              /* one per rank, chosen by local rank; binds near it; gets the GPU-sized jobs */
  int (*available)(void);  /* devices this process sees (0: none; never fails) */
  ddp_result (*create)(ddp_device **out, int ordinal, int cpu_threads);
  /* optional */
  ddp_result (*bus_id)(int ordinal, char *buf, size_t n); /* PCI id before any context exists */
  void (*versions)(ddp_versions *v);                       /* fills the fields of the libraries it loaded */
  /* The copy bandwidth between every ordered pair of the n devices this process sees (see
   * device_cuda_peer_matrix). */
  ddp_result (*peer_matrix)(int n, size_t bytes, int iters, double *uni, double *bidir, int *peer);
  /* What the straggler rule may judge on this device's timings (docs/straggler.md; 0: nothing stated): the
   * least median time per step it judges (below it: "too short to judge"), and the run-to-run floor, the
   * largest gap between the slowest rank and the median rank seen in identical healthy runs; a rank is
   * named only beyond it (and beyond --straggler-pct). */
  double judge_min_ms, judge_floor_pct;
  /* The steady state (docs/steady.md): how long each phase first runs its own workload when --warmup-seconds
   * is auto (-1), and the drift within a phase's timed steps that identical healthy runs stay within; a phase
   * is called not steady only beyond it (and beyond the steps' noise). */
  double settle_seconds, steady_floor_pct;
} device_entry;

/* Entry i of the table (built-in first, then registered), NULL past the end. */
const device_entry *device_at(int i);
const device_entry *device_named(const char *name);
/* The GPU device auto prefers (the first with is_gpu), NULL in a build without one; the first device without
 * is_gpu (cpu) for when no GPU is visible. */
const device_entry *device_gpu(void);
const device_entry *device_host(void);
/* --device's choices for the option layer: choice 0 is "auto" (value 0), choice i is entry i-1 (value i).
 * Returns the value stored for choice i and sets *name, -1 past the end. device_chosen: the entry of a stored
 * value, NULL for auto. */
int device_choice(int i, const char **name);
const device_entry *device_chosen(int value);
/* Adds an entry at run time (tests: a device of their own). The entry must outlive the program's use of it.
 * DDP_ERR_USAGE when the name is taken or the table is full. */
ddp_result device_register(const device_entry *e);
/* Every entry's versions() into v. */
void devices_versions(ddp_versions *v);
/* On a rank that sees no GPU device: the reasons this host has a GPU that cannot be used (an NVIDIA GPU on
 * the PCI bus with the driver not loaded, a CUDA_VISIBLE_DEVICES that hides it, a build without CUDA), one
 * per line into causes; returns their count (0: no such GPU here). Every vendor's check runs, whether or not
 * its device is built. */
int devices_not_used(char causes[][256], int max);

/* ---- the built-in devices ---------------------------------------------------------------------------- */
/* Creates the CPU device (OpenBLAS with `threads` threads; 0 = leave OpenBLAS's choice). */
ddp_result device_cpu_create(ddp_device **out, int threads);
/* Number of CUDA devices visible to this process (0 without a driver, a GPU or a CUDA build). Never fails. */
int device_cuda_count(void);
/* Creates the CUDA device on visible ordinal `ordinal`. DDP_ERR_USAGE in a build without CUDA. */
ddp_result device_cuda_create(ddp_device **out, int ordinal);
/* What the CUDA runtime says about this machine, for the GPU-not-used diagnosis: returns the device count (0 on
 * any error, whose string goes to err), with the runtime's and the driver's CUDA versions (13000 = 13.0; 0
 * where unknown). Returns -1 in a build without CUDA. Never fails. */
int device_cuda_probe(char *err, size_t n, int *runtime_version, int *driver_version);
/* GPU-to-GPU copy bandwidth over every ordered pair of the n GPUs this process sees (nvbandwidth's
 * device-to-device copy-engine test, from one process): uni[a*n+b] = a -> b in GB/s (1e9), bidir[a*n+b] =
 * a -> b and b -> a at once, summed; peer[a*n+b] = 1 where cudaDeviceCanAccessPeer allows direct access (else
 * the driver stages the copy through the host). Diagonal: NaN. Peer access is disabled again afterwards.
 * DDP_ERR_USAGE in a build without CUDA. */
ddp_result device_cuda_peer_matrix(int n, size_t bytes, int iters, double *uni, double *bidir, int *peer);
/* PCI bus id of a visible CUDA device before any context exists ("" without CUDA). */
ddp_result device_cuda_bus_id(int ordinal, char *buf, size_t n);
/* The CUDA driver, runtime and cuBLAS versions this process loaded (CUDA builds only). */
void device_cuda_versions(ddp_versions *v);

#ifdef __cplusplus
}
#endif
#endif
