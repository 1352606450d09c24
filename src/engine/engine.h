/* engine.h: the training engine (DDP, and FSDP through engine_fsdp.c: strategy fsdp, docs/fsdp.md). It owns the synthetic model (L bias-free H x H linear layers with
 * ReLU, MSE loss, SGD), its buffers on the device, the bucket plan, and the three phases:
 *   local  every rank trains its own copy, no communication (the "no DDP" baseline);
 *   comm   the ddp phase's bucket allreduces alone, same sizes and order;
 *   ddp    training with each bucket's allreduce launched on the comm stream as soon as its gradients
 *          exist, overlapping the rest of the backward pass.
 * It talks only to the device and comm interfaces; it never calls CUDA, BLAS or MPI itself, and enqueues a
 * whole phase without synchronising the host with the device (results are read once the phase ends). */
#ifndef DDPBENCH_ENGINE_H
#define DDPBENCH_ENGINE_H

#include "bucket.h"
#include "comm.h"
#include "config.h"
#include "device.h"
#include "fsdp_plan.h"
#include "phase.h"

#ifdef __cplusplus
extern "C" {
#endif


typedef struct engine engine;

/* Builds the model and buffers for this comm's group: this rank holds global samples
 * comm->rank * batch ... + batch - 1 of a global batch of batch * comm->size. */
ddp_result engine_create(engine **out, const ddp_config *cfg, ddp_device *dev, ddp_comm *comm,
                         engine_progress_fn progress, void *progress_ctx);
void engine_free(engine *e);

/* Runs one phase from the initial weights (broadcast from rank 0) and fills r. */
ddp_result engine_run_phase(engine *e, ddp_phase p, phase_result *r);

/* Agreement among the group's ranks: v[n] becomes the element-wise maximum over them (collective). */
typedef ddp_result (*engine_agree_fn)(void *ctx, double *v, int n);

/* The steady state before a phase (docs/steady.md): runs phase p's own steps, untimed, for about `seconds`
 * (through the CUDA graph when the run uses one), in blocks that each restart from the phase's initial state
 * and weights; engine_run_phase then starts from its initial weights as always, so the timed steps and the
 * weights are the same as without it. Collective: every rank runs the same number of steps, from the
 * slowest rank's rate (agree). *spent = the host time it took. */
ddp_result engine_settle(engine *e, ddp_phase p, double seconds, engine_agree_fn agree, void *ctx, double *spent);

/* Copies the current fp32 master weights to host memory (layer L first, each H x H row-major). */
ddp_result engine_weights(engine *e, float *host);
size_t engine_weight_count(const engine *e);
/* The checksum and, from the same copy, how many weights are NaN or infinite (a NaN averaged into every rank
 * leaves the checksums equal: agreement alone is no verdict). */
ddp_result engine_weights_verify(engine *e, uint64_t *sum, uint64_t *nonfinite);
/* The same two figures of weights already on the host (engine_weights' copy): pure, thread-safe. */
void engine_weights_digest(const float *host, size_t count, uint64_t *sum, uint64_t *nonfinite);

/* Times one H x H x H GEMM in the run's precision: TFLOP/s from the median of 10 samples, each a run of
 * back-to-back GEMMs lasting at least 1 ms (warm-ups first). Uses this rank's own weights (not collective). */
ddp_result engine_measure_gemm(engine *e, double *tflops);

const bucket_plan *engine_buckets(const engine *e);
/* The type gradients travel in (grad_comm): the one mapping from the config. */
ddp_dtype engine_comm_dtype(const engine *e);
/* Bytes allreduced per step (in the grad_comm type). */
double engine_comm_bytes(const engine *e);
/* strategy fsdp: the shard plan (fsdp_plan.h), and what engine_create allocated for FSDP's state by the
 * plan's categories (its fsdp_memory, for the check against the plan); NULL under ddp. */
const fsdp_plan *engine_fsdp_plan(const engine *e);
const fsdp_memory *engine_fsdp_allocated(const engine *e);
/* strategy fsdp: the kinds of the comm calls of the last step enqueued, in issue order (the tests hold them
 * against fsdp_plan's schedule); returns their count, 0 under ddp. */
int engine_comm_log(const engine *e, const fsdp_coll_kind **kinds);
/* strategy fsdp: by how much the device's free memory fell while engine_create allocated FSDP's state (the
 * driver's count: its granularity, and any other process on the device, show here); NaN where the device cannot
 * tell (cpu) and under ddp. */
double engine_fsdp_device_drop(const engine *e);
/* Model FLOPs per step per rank: (6L - 2) * B * H^2. */
double engine_flops_per_step(const engine *e);

#ifdef __cplusplus
}
#endif
#endif
