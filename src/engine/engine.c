/* engine.c: the synthetic model's forward and backward passes, DDP's bucketed allreduce overlapped with the
 * backward pass, AMP (16-bit GEMM inputs, fp32 master weights, dynamic loss scaling), SGD, and the timing of
 * each phase with device events.
 *
 * Layout. Parameters are stored in gradient-ready order (index i = L - l holds layer l's weight), so that
 * the master weights W, their gradients G, the momentum V and the flat bucket buffer share one layout and
 * the optimizer is one pass over L*H*H elements. Matrices are row-major; the GEMMs below are written for
 * column-major BLAS, where a row-major X (rows x H) is the column-major H x rows matrix.
 *
 * Streams. S (compute) runs the model; C (comm) runs the allreduces. Bucket b's allreduce waits on an
 * event recorded on S after its last gradient was copied in, so it starts while S carries on with the
 * backward pass; S waits on an event recorded on C after the last allreduce before it reads the reduced
 * gradients. Nothing in a step blocks the host. */
#include "engine.h"
#include "engine_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numerics.h"
#include "stats.h"
#include "watchdog.h"

static float *W_of(engine *e, int l) { return e->W + (size_t)(e->L - l) * e->HH; }
static float *G_of(engine *e, int l) { return e->G + (size_t)(e->L - l) * e->HH; }
static float *bucket_of(engine *e, int l) { return e->bucket + (size_t)(e->L - l) * e->HH; }
static const void *Wc_of(engine *e, int l) { /* the GEMM's copy of W_l */
  return e->mixed ? (const void *)((char *)e->W16 + (size_t)(e->L - l) * e->HH * ct_size(e)) : (const void *)W_of(e, l);
}
static void *G16_of(engine *e, int l) { return (char *)e->G16 + (size_t)(e->L - l) * e->HH * ct_size(e); }

/* ---- construction ------------------------------------------------------------------------------ */
static ddp_result dalloc(engine *e, void **p, size_t bytes) { return e->dev->alloc(e->dev, p, bytes); }

static ddp_result events_create(engine *e, ddp_event ***arr, int n, int timing) {
  *arr = calloc((size_t)(n > 0 ? n : 1), sizeof **arr);
  DDP_CHECK_ALLOC(*arr);
  for (int i = 0; i < n; i++) DDP_TRY(e->dev->event_create(e->dev, &(*arr)[i], timing));
  return DDP_OK;
}

static void events_destroy(engine *e, ddp_event **arr, int n) {
  if (!arr) return;
  for (int i = 0; i < n; i++)
    if (arr[i]) e->dev->event_destroy(e->dev, arr[i]);
  free(arr);
}

ddp_result engine_create(engine **out, const ddp_config *cfg, ddp_device *dev, ddp_comm *comm,
                         engine_progress_fn progress, void *progress_ctx) {
  engine *e = calloc(1, sizeof *e);
  DDP_CHECK_ALLOC(e);
  *out = e;
  e->cfg = *cfg;
  e->dev = dev;
  e->comm = comm;
  e->progress = progress;
  e->progress_ctx = progress_ctx;
  e->H = cfg->hidden;
  e->L = cfg->layers;
  e->B = cfg->batch;
  e->world = comm->size;
  e->rank = comm->rank;
  e->HH = (size_t)e->H * e->H;
  e->BH = (size_t)e->B * e->H;
  e->ct = cfg->precision == PREC_BF16 ? DT_BF16 : cfg->precision == PREC_FP16 ? DT_F16 : DT_F32;
  e->comm_t = cfg->grad_comm == PREC_BF16 ? DT_BF16 : cfg->grad_comm == PREC_FP16 ? DT_F16 : DT_F32;
  e->mixed = e->ct != DT_F32;
  e->fp16 = cfg->precision == PREC_FP16;
  e->scaler = config_scaler(cfg);
  size_t P = (size_t)e->L * e->HH;

  DDP_TRY(dev->stream_create(dev, &e->S, 0));
  DDP_TRY(dev->stream_create(dev, &e->C, 1)); /* high priority: the allreduce kernels should not queue */
  /* fsdp holds its shards (engine_fsdp.c); the full model's buffers then serve the local phase alone, and only
   * when it runs. */
  e->fsdp = cfg->strategy == STRATEGY_FSDP;
  int order[3], nph = config_phases(cfg, order), local = !e->fsdp;
  for (int i = 0; i < nph; i++) local |= order[i] == PHASE_LOCAL;
  if (e->fsdp) DDP_TRY(fsdp_create(e));
  if (local) DDP_TRY(dalloc(e, (void **)&e->W, P * 4));
  /* G (.grad in fp32) is written by fp32's local dW and by DDP's copy back from the buckets; with autocast
   * and gradient_as_bucket_view nothing writes it. */
  if (local && (!e->mixed || (!e->fsdp && !cfg->gradient_as_bucket_view))) DDP_TRY(dalloc(e, (void **)&e->G, P * 4));
  if (!e->fsdp) DDP_TRY(dalloc(e, (void **)&e->bucket, P * 4));
  if (local && cfg->momentum != 0) DDP_TRY(dalloc(e, (void **)&e->V, P * 4));
  if (local && e->mixed) {
    DDP_TRY(dalloc(e, &e->W16, P * ct_size(e)));
    DDP_TRY(dalloc(e, &e->G16, P * ct_size(e)));
  }
  if (!e->fsdp && e->comm_t != DT_F32) DDP_TRY(dalloc(e, &e->comm16, P * 2));
  DDP_TRY(dalloc(e, &e->act, (size_t)(e->L + 1) * e->BH * ct_size(e)));
  DDP_TRY(dalloc(e, &e->dz, e->BH * ct_size(e)));
  DDP_TRY(dalloc(e, &e->da, e->BH * ct_size(e)));
  DDP_TRY(dalloc(e, (void **)&e->t, e->BH * 4));
  DDP_TRY(dalloc(e, (void **)&e->state, sizeof *e->state));
  DDP_TRY(dalloc(e, (void **)&e->state0, sizeof *e->state0));
  e->hist_len = cfg->warmup + cfg->steps;
  DDP_TRY(dalloc(e, (void **)&e->loss_hist, (size_t)e->hist_len * sizeof(double)));
  DDP_TRY(dalloc(e, (void **)&e->scale_hist, (size_t)e->hist_len * sizeof(float)));
  DDP_TRY(dalloc(e, (void **)&e->skip_hist, (size_t)e->hist_len * sizeof(int)));

  /* Buckets over fp32 gradients in gradient-ready order (layer L first); fsdp has none. */
  size_t *counts = malloc((size_t)e->L * sizeof *counts);
  DDP_CHECK_ALLOC(counts);
  for (int i = 0; i < e->L; i++) counts[i] = e->HH;
  ddp_result r = e->fsdp ? DDP_OK : bucket_plan_build(&e->plan, counts, e->L, 4, bucket_cap_bytes(cfg->first_bucket_mb),
                                   bucket_cap_bytes(cfg->bucket_mb));
  free(counts);
  DDP_TRY(r);
  e->bucket_of_param = calloc((size_t)e->L, sizeof(int));
  e->last_of_bucket = calloc((size_t)e->L, sizeof(int));
  DDP_CHECK_ALLOC(e->bucket_of_param);
  DDP_CHECK_ALLOC(e->last_of_bucket);
  for (int b = 0; b < e->plan.nbuckets; b++) {
    const ddp_bucket *bk = &e->plan.buckets[b];
    for (int i = bk->first_param; i < bk->first_param + bk->nparams; i++) e->bucket_of_param[i] = b;
    e->last_of_bucket[bk->first_param + bk->nparams - 1] = 1;
  }

  int nb = e->plan.nbuckets;
  if (!e->fsdp) e->ntimed = nb;
  DDP_TRY(events_create(e, &e->ev_ready, nb, 0));
  DDP_TRY(dev->event_create(dev, &e->ev_fork, 0));
  DDP_TRY(dev->event_create(dev, &e->ev_comm_done, 0));
  e->nev_steps = cfg->steps;
  DDP_TRY(events_create(e, &e->ev_step, cfg->steps + 1, 1));
  DDP_TRY(events_create(e, &e->ev_cend, cfg->steps, 1));
  DDP_TRY(events_create(e, &e->ev_bstart, cfg->steps * e->ntimed, 1));
  DDP_TRY(events_create(e, &e->ev_bend, cfg->steps * e->ntimed, 1));

  /* The data: this rank's global samples, made once and reused every step. */
  uint64_t first = (uint64_t)e->rank * e->BH;
  DDP_TRY(dev->generate(dev, e->S, act_of(e, 0), e->ct, e->BH, cfg->seed, TAG_INPUT, first, 1.0));
  DDP_TRY(dev->generate(dev, e->S, e->t, DT_F32, e->BH, cfg->seed, TAG_TARGET, first, 1.0));
  return dev->stream_synchronize(dev, e->S);
}

void engine_free(engine *e) {
  if (!e) return;
  ddp_device *d = e->dev;
  if (e->S) (void)d->stream_synchronize(d, e->S);
  if (e->C) (void)d->stream_synchronize(d, e->C);
  void *bufs[] = {e->W, e->G, e->V, e->bucket, e->W16, e->G16, e->comm16, e->act, e->dz, e->da, e->t, e->state, e->state0,
                  e->loss_hist, e->scale_hist, e->skip_hist};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (bufs[i]) d->free(d, bufs[i]);
  int nb = e->plan.nbuckets;
  events_destroy(e, e->ev_ready, nb);
  events_destroy(e, e->ev_step, e->nev_steps + 1);
  events_destroy(e, e->ev_cend, e->nev_steps);
  events_destroy(e, e->ev_bstart, e->nev_steps * e->ntimed);
  events_destroy(e, e->ev_bend, e->nev_steps * e->ntimed);
  if (e->fsdp) fsdp_free(e);
  if (e->ev_fork) d->event_destroy(d, e->ev_fork);
  if (e->ev_comm_done) d->event_destroy(d, e->ev_comm_done);
  if (e->S) d->stream_destroy(d, e->S);
  if (e->C) d->stream_destroy(d, e->C);
  bucket_plan_free(&e->plan);
  free(e->bucket_of_param);
  free(e->last_of_bucket);
  free(e);
}

/* ---- one step ------------------------------------------------------------------------------------ */
/* Bucket b's allreduce on C, in the grad_comm type. With 16-bit grad_comm this is PyTorch's compression
 * hook: cast to 16 bits, divide by the world size, allreduce, cast back into the fp32 bucket. */
static ddp_result bucket_allreduce(engine *e, int b, int timed, int step) {
  ddp_device *d = e->dev;
  const ddp_bucket *bk = &e->plan.buckets[b];
  float *buf = e->bucket + bk->offset;
  int nb = e->plan.nbuckets;
  if (e->comm_t == DT_F32) {
    if (timed) DDP_TRY(d->event_record(d, e->ev_bstart[step * nb + b], e->C));
    DDP_TRY(e->comm->allreduce(e->comm, buf, bk->count, DT_F32, e->C));
    if (timed) DDP_TRY(d->event_record(d, e->ev_bend[step * nb + b], e->C));
    return DDP_OK;
  }
  void *c16 = (char *)e->comm16 + bk->offset * 2;
  DDP_TRY(d->cast(d, e->C, c16, e->comm_t, buf, DT_F32, bk->count, 1.0f / (float)e->world, 1));
  if (timed) DDP_TRY(d->event_record(d, e->ev_bstart[step * nb + b], e->C));
  DDP_TRY(e->comm->allreduce(e->comm, c16, bk->count, e->comm_t, e->C));
  if (timed) DDP_TRY(d->event_record(d, e->ev_bend[step * nb + b], e->C));
  return d->cast(d, e->C, buf, DT_F32, c16, e->comm_t, bk->count, 1.0f, 0);
}

/* Comm phase step: the ddp phase's allreduces alone, same buckets and order. */
static ddp_result step_comm(engine *e, int timed, int step) {
  ddp_device *d = e->dev;
  DDP_TRY(d->event_record(d, e->ev_fork, e->S));
  DDP_TRY(d->stream_wait_event(d, e->C, e->ev_fork));
  for (int b = 0; b < e->plan.nbuckets; b++) {
    const ddp_bucket *bk = &e->plan.buckets[b];
    int nb = e->plan.nbuckets;
    void *buf = e->comm_t == DT_F32 ? (void *)(e->bucket + bk->offset) : (char *)e->comm16 + bk->offset * 2;
    if (timed) DDP_TRY(d->event_record(d, e->ev_bstart[step * nb + b], e->C));
    DDP_TRY(e->comm->allreduce(e->comm, buf, bk->count, e->comm_t, e->C));
    if (timed) DDP_TRY(d->event_record(d, e->ev_bend[step * nb + b], e->C));
  }
  DDP_TRY(d->event_record(d, e->ev_comm_done, e->C));
  return d->stream_wait_event(d, e->S, e->ev_comm_done);
}

/* A training step (local or ddp). timed: record compute and bucket events for timed step `step`. */
static ddp_result step_train(engine *e, ddp_phase p, int timed, int step) {
  ddp_device *d = e->dev;
  const ddp_config *cfg = &e->cfg;
  const int H = e->H, B = e->B, L = e->L;
  const int ddp = p == PHASE_DDP, view = ddp && cfg->gradient_as_bucket_view;
  /* With fp32 grad_comm the copy into the bucket divides by the world size (DDP); a compression hook
   * divides itself. */
  const float bucket_factor = e->comm_t == DT_F32 ? 1.0f / (float)e->world : 1.0f;

  /* Forward: z_l = a_{l-1} W_l^T, a_l = relu(z_l). Column-major: Z^c (H x B) = W^c^T (H x H) A^c (H x B). */
  for (int l = 1; l <= L; l++) {
    ddp_gemm g = {.trans_a = 1, .trans_b = 0, .m = H, .n = B, .k = H, .a = Wc_of(e, l), .lda = H,
                  .b = act_of(e, l - 1), .ldb = H, .c = act_of(e, l), .ldc = H, .ab_type = e->ct, .c_type = e->ct,
                  .tf32 = cfg->precision == PREC_TF32, .relu = 1};
    DDP_TRY(d->gemm(d, e->S, &g));
  }
  /* Loss against t. Each rank differentiates the mean loss of its own batch, as every DDP rank does; the
   * 1/world of the bucket copy turns the sum over ranks into the global batch's gradient,
   * dL/dy = (y - t) / B_global. The loss recorded is this rank's share of the global loss. */
  DDP_TRY(d->loss_grad(d, e->S, e->dz, act_of(e, L), e->t, e->ct, e->BH, 1.0f / (float)B,
                       (float)(1.0 / ((double)B * e->world)), e->state, e->fp16, e->loss_hist));

  /* Backward, last layer first. The gradients: with autocast, the GEMM's 16-bit dW (G16), which the optimizer
   * reads as is (the fp32 .grad that autograd would make of it holds the same values; nothing else reads it,
   * so the local phase does not write it); in fp32, dW straight into G, or into its bucket under DDP. */
  for (int l = L; l >= 1; l--) {
    int i = L - l; /* parameter index in gradient-ready order */
    /* dW_l = dz^T a_{l-1} (H x H row-major). Column-major: dW^c = A^c (H x B) dz^c^T (B x H). */
    void *dw = e->mixed ? G16_of(e, l) : ddp ? (void *)bucket_of(e, l) : (void *)G_of(e, l);
    ddp_gemm gw = {.trans_a = 0, .trans_b = 1, .m = H, .n = H, .k = B, .a = act_of(e, l - 1), .lda = H, .b = e->dz,
                   .ldb = H, .c = dw, .ldc = H, .ab_type = e->ct, .c_type = e->ct,
                   .tf32 = cfg->precision == PREC_TF32, .relu = 0};
    DDP_TRY(d->gemm(d, e->S, &gw));
    if (cfg->inject_nonfinite >= 0 && l == 1 && e->rank == 0)
      DDP_TRY(d->inject_nan(d, e->S, dw, e->ct, e->state, cfg->inject_nonfinite));
    if (l > 1) {
      /* da_{l-1} = dz W_l (B x H). Column-major: dA^c = W^c (H x H) dz^c (H x B). Then through relu (a
       * kernel: cuBLASLt's DRELU epilogue runs as a separate, slower pass on sm_90, and its RELU_AUX forward
       * picks slower tiles; measured on H200). */
      ddp_gemm ga = {.trans_a = 0, .trans_b = 0, .m = H, .n = B, .k = H, .a = Wc_of(e, l), .lda = H, .b = e->dz,
                     .ldb = H, .c = e->da, .ldc = H, .ab_type = e->ct, .c_type = e->ct,
                     .tf32 = cfg->precision == PREC_TF32, .relu = 0};
      DDP_TRY(d->gemm(d, e->S, &ga));
      DDP_TRY(d->relu_backward(d, e->S, e->dz, e->da, act_of(e, l - 1), e->ct, e->BH));
    }
    if (!ddp) continue;
    /* DDP: the gradient goes into its bucket divided by the world size (an fp32 gradient was computed there
     * already); the pre-reduction .grad that autograd would also hold is not written, since nothing reads
     * it. gradient_as_bucket_view only changes what happens after the allreduce (no copy back into G). */
    if (e->mixed)
      DDP_TRY(d->cast(d, e->S, bucket_of(e, l), DT_F32, G16_of(e, l), e->ct, e->HH, bucket_factor, 0));
    else if (bucket_factor != 1.0f)
      DDP_TRY(d->cast(d, e->S, bucket_of(e, l), DT_F32, bucket_of(e, l), DT_F32, e->HH, bucket_factor, 0));
    if (e->last_of_bucket[i]) { /* all of bucket b's gradients exist: start its allreduce on C */
      int b = e->bucket_of_param[i];
      DDP_TRY(d->event_record(d, e->ev_ready[b], e->S));
      DDP_TRY(d->stream_wait_event(d, e->C, e->ev_ready[b]));
      DDP_TRY(bucket_allreduce(e, b, timed, step));
    }
  }
  if (timed) DDP_TRY(d->event_record(d, e->ev_cend[step], e->S));

  /* The optimizer, after every gradient is final: G16 or G (local) or the reduced buckets (ddp). fp16 first
   * checks for non-finite gradients (the skip is decided on the device) and unscales inside the update;
   * without gradient_as_bucket_view the update also copies the reduced bucket back into .grad (G). */
  size_t P = (size_t)L * e->HH;
  const void *grad = ddp ? (const void *)e->bucket : e->mixed ? e->G16 : (const void *)e->G;
  ddp_dtype grad_t = ddp || !e->mixed ? DT_F32 : e->ct;
  if (ddp) {
    DDP_TRY(d->event_record(d, e->ev_comm_done, e->C));
    DDP_TRY(d->stream_wait_event(d, e->S, e->ev_comm_done));
  }
  if (e->fp16) DDP_TRY(d->check_finite(d, e->S, grad, grad_t, P, e->state));
  DDP_TRY(d->sgd(d, e->S, e->W, grad, grad_t, ddp && !view ? e->G : NULL, e->V, e->mixed ? e->W16 : NULL, e->ct, P,
                 (float)cfg->lr, (float)cfg->momentum, e->fp16 ? e->state : NULL, e->fp16));
  return d->step_end(d, e->S, e->state, e->fp16 ? &e->scaler : NULL, e->scale_hist, e->skip_hist);
}

static ddp_result step_run(engine *e, ddp_phase p, int timed, int step) {
  if (e->fsdp && p != PHASE_LOCAL) return fsdp_step(e, p, timed, step);
  return p == PHASE_COMM ? step_comm(e, timed, step) : step_train(e, p, timed, step);
}

/* ---- phases ------------------------------------------------------------------------------------- */
/* Master weights from the generator (Kaiming-uniform bound sqrt(6/H)), and their 16-bit copy. With
 * broadcast, only rank 0 makes them and the others receive them, as DDP's constructor does. */
static ddp_result weights_init(engine *e, int broadcast) {
  ddp_device *d = e->dev;
  size_t P = (size_t)e->L * e->HH;
  if (!broadcast || e->rank == 0) {
    double bound = sqrt(6.0 / e->H);
    for (int l = 1; l <= e->L; l++)
      DDP_TRY(d->generate(d, e->S, W_of(e, l), DT_F32, e->HH, e->cfg.seed, TAG_WEIGHT + (uint64_t)l, 0, bound));
  }
  if (broadcast) DDP_TRY(e->comm->broadcast(e->comm, e->W, P, DT_F32, 0, e->S));
  if (e->mixed) DDP_TRY(d->cast(d, e->S, e->W16, e->ct, e->W, DT_F32, P, 1.0f, 0));
  return DDP_OK;
}

/* Initial state of every phase (collective): weights broadcast from rank 0, zero momentum, a fresh scaler
 * and step counter; for the comm phase, buckets filled with real values (never zeros). */
static ddp_result phase_reset(engine *e, ddp_phase p) {
  ddp_device *d = e->dev;
  const ddp_config *cfg = &e->cfg;
  size_t P = (size_t)e->L * e->HH;
  ddp_step_state st = {0, 0, (float)cfg->loss_scale_init, 0};
  DDP_TRY(d->copy(d, e->state, &st, sizeof st, e->S));
  DDP_TRY(d->copy(d, e->state0, &st, sizeof st, e->S));
  if (e->fsdp && p != PHASE_LOCAL) {
    DDP_TRY(fsdp_reset(e, p));
  } else if (p == PHASE_COMM) {
    DDP_TRY(d->generate(d, e->S, e->bucket, DT_F32, P, cfg->seed, TAG_FILL, 0, 1.0));
    if (e->comm16) DDP_TRY(d->generate(d, e->S, e->comm16, e->comm_t, P, cfg->seed, TAG_FILL, 0, 1.0));
  } else {
    DDP_TRY(weights_init(e, 1));
    if (e->V) DDP_TRY(d->memset_zero(d, e->V, P * 4, e->S));
  }
  return d->stream_synchronize(d, e->S); /* also keeps `st` alive until its copy is done */
}

/* Waits for ev, checking the comm for asynchronous errors. No timer of its own: the harness's watchdog
 * (watchdog.c, the one timer) ends the job when this wait outlasts --timeout. */
static ddp_result engine_wait(engine *e, ddp_event *ev, const char *what) {
  unsigned tok = 0; /* told to the watchdog once the wait is real: "waiting in the device to finish phase ddp" */
  ddp_result r;
  for (;;) {
    int done = 0;
    if ((r = e->dev->event_query(e->dev, ev, &done)) != DDP_OK || done) break;
    if ((r = e->comm->check(e->comm)) != DDP_OK) break;
    if (!tok) tok = watchdog_enter_device(what);
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
  watchdog_leave(tok);
  return r;
}

static ddp_result elapsed(engine *e, ddp_event *a, ddp_event *b, double *ms) {
  float f = 0;
  DDP_TRY(e->dev->event_elapsed_ms(e->dev, &f, a, b));
  *ms = f;
  return DDP_OK;
}

ddp_result engine_run_phase(engine *e, ddp_phase p, phase_result *r) {
  ddp_device *d = e->dev;
  const ddp_config *cfg = &e->cfg;
  const int nb = e->ntimed, steps = cfg->steps, warmup = cfg->warmup, total = warmup + steps;
  memset(r, 0, sizeof *r);
  if ((p == PHASE_DDP && e->fsdp) || (p == PHASE_FSDP && !e->fsdp))
    return DDP_FAIL(DDP_ERR_USAGE, "phase %s on an engine of the other strategy", phase_name(p));
  r->phase = p;
  r->warmup = warmup;
  r->steps = steps;
  r->nbuckets = nb;
  r->step_ms = calloc((size_t)steps, sizeof(double));
  r->compute_ms = calloc((size_t)steps, sizeof(double));
  r->bucket_ms = calloc((size_t)steps * (size_t)(nb > 0 ? nb : 1), sizeof(double));
  DDP_CHECK_ALLOC(r->step_ms);
  DDP_CHECK_ALLOC(r->compute_ms);
  DDP_CHECK_ALLOC(r->bucket_ms);
  DDP_TRY(phase_reset(e, p));
  DDP_TRY(e->comm->barrier(e->comm)); /* every rank starts the phase together */

  int use_graph = cfg->cuda_graph && d->graph_begin;
  ddp_graph *graph = NULL;
  double t0 = ddp_now();
  for (int s = 0; s < total; s++) {
    int timed = s >= warmup, ts = s - warmup;
    if (timed) DDP_TRY(d->event_record(d, e->ev_step[ts], e->S));
    /* With --cuda-graph the first step runs eagerly (it initialises the libraries' lazy state); the
     * steady-state step is then captured once and replayed. Inside a replay nothing is timed: the step
     * events are recorded between replays. */
    if (use_graph && s > 0) {
      if (!graph) {
        DDP_TRY(d->graph_begin(d, e->S));
        ddp_result rr = step_run(e, p, 0, 0);
        ddp_result re = d->graph_end(d, e->S, &graph);
        DDP_TRY(rr);
        DDP_TRY(re);
      }
      DDP_TRY(d->graph_launch(d, graph, e->S));
    } else {
      DDP_TRY(step_run(e, p, timed && !use_graph, ts));
    }
    if (e->progress) e->progress(e->progress_ctx, p, s, total);
  }
  DDP_TRY(d->event_record(d, e->ev_step[steps], e->S));
  char what[64];
  snprintf(what, sizeof what, "phase %s", phase_name(p));
  DDP_TRY(engine_wait(e, e->ev_step[steps], what));
  DDP_TRY(d->stream_synchronize(d, e->C));
  r->wall_s = ddp_now() - t0;
  if (graph) d->graph_destroy(d, graph);

  /* Read the timings and the per-step histories. */
  for (int s = 0; s < steps; s++) {
    DDP_TRY(elapsed(e, e->ev_step[s], e->ev_step[s + 1], &r->step_ms[s]));
    r->compute_ms[s] = NAN;
    if (p != PHASE_COMM && !use_graph) DDP_TRY(elapsed(e, e->ev_step[s], e->ev_cend[s], &r->compute_ms[s]));
    for (int b = 0; b < nb; b++) {
      double *out = &r->bucket_ms[(size_t)s * nb + b];
      *out = NAN;
      if (!use_graph && p != PHASE_LOCAL)
        DDP_TRY(elapsed(e, e->ev_bstart[s * nb + b], e->ev_bend[s * nb + b], out));
    }
  }
  if (p != PHASE_COMM) {
    r->loss = calloc((size_t)total, sizeof(double));
    DDP_CHECK_ALLOC(r->loss);
    DDP_TRY(d->copy(d, r->loss, e->loss_hist, (size_t)total * sizeof(double), e->S));
    if (e->fp16) {
      r->scale = calloc((size_t)total, sizeof(float));
      r->skipped = calloc((size_t)total, sizeof(int));
      DDP_CHECK_ALLOC(r->scale);
      DDP_CHECK_ALLOC(r->skipped);
      DDP_TRY(d->copy(d, r->scale, e->scale_hist, (size_t)total * sizeof(float), e->S));
      DDP_TRY(d->copy(d, r->skipped, e->skip_hist, (size_t)total * sizeof(int), e->S));
    }
    DDP_TRY(d->stream_synchronize(d, e->S));
  }
  return DDP_OK;
}

/* One block of engine_settle: n untimed steps, through the phase's graph when the run uses one (captured on
 * the first call, as engine_run_phase does: the first step eager). */
static ddp_result settle_steps(engine *e, ddp_phase p, long n, int use_graph, ddp_graph **graph) {
  ddp_device *d = e->dev;
  for (long s = 0; s < n; s++) {
    if (use_graph && (*graph || s > 0)) {
      if (!*graph) {
        DDP_TRY(d->graph_begin(d, e->S));
        ddp_result rr = step_run(e, p, 0, 0);
        ddp_result re = d->graph_end(d, e->S, graph);
        DDP_TRY(rr);
        DDP_TRY(re);
      }
      DDP_TRY(d->graph_launch(d, *graph, e->S));
    } else {
      DDP_TRY(step_run(e, p, 0, 0));
    }
  }
  return DDP_OK;
}

/* The state a block starts from, enqueued on S without a host sync: the phase's first state and, for the
 * training phases, the initial weights (every rank makes the same ones from the seed) and zero momentum, so
 * that a long settle trains no further than the phase itself does. */
static ddp_result settle_restart(engine *e, ddp_phase p) {
  ddp_device *d = e->dev;
  DDP_TRY(d->copy(d, e->state, e->state0, sizeof *e->state, e->S));
  if (p == PHASE_COMM) return DDP_OK;
  if (e->fsdp && p != PHASE_LOCAL) return fsdp_reset(e, p);
  DDP_TRY(weights_init(e, 0));
  if (e->V) DDP_TRY(d->memset_zero(d, e->V, (size_t)e->L * e->HH * 4, e->S));
  return DDP_OK;
}

static ddp_result settle_wait(engine *e, const char *what) {
  ddp_device *d = e->dev;
  DDP_TRY(d->event_record(d, e->ev_step[e->nev_steps], e->S));
  DDP_TRY(engine_wait(e, e->ev_step[e->nev_steps], what));
  return d->stream_synchronize(d, e->C);
}

ddp_result engine_settle(engine *e, ddp_phase p, double seconds, engine_agree_fn agree, void *ctx, double *spent) {
  ddp_device *d = e->dev;
  const long block = e->hist_len; /* the step counter indexes the histories: restart before it runs past */
  if ((p == PHASE_DDP && e->fsdp) || (p == PHASE_FSDP && !e->fsdp))
    return DDP_FAIL(DDP_ERR_USAGE, "phase %s on an engine of the other strategy", phase_name(p));
  int use_graph = e->cfg.cuda_graph && d->graph_begin;
  ddp_graph *graph = NULL;
  char what[96];
  snprintf(what, sizeof what, "phase %s: settling (%g s of its workload, untimed)", phase_name(p), seconds);
  watchdog_tick(what);
  double t0 = ddp_now();
  *spent = 0;
  DDP_TRY(phase_reset(e, p));
  DDP_TRY(e->comm->barrier(e->comm));
  /* Chunks of steps until the time is spent, each sized from the last one's rate. Every rank must run the
   * same number of steps (the ddp and comm phases' allreduces), so the slowest rank's clock and rate decide.
   * The first chunk is two steps, not a block: a block of a long phase (the GPU default job's) lasts many
   * times --warmup-seconds. Its rate, slowed by the first launch or the graph's capture, sizes the next chunk
   * short rather than long. Each chunk then aims at half the time left (all of it under 0.1 s): a rate that
   * changes from one chunk to the next (steps of microseconds, launch-bound at first, then GPU-bound: a comm
   * phase overran its 2 s by 1.1 s on the H200) overruns by a share of a short last chunk only. */
  ddp_result r = DDP_OK;
  long chunk = block < 2 ? block : 2, run = 0;
  while (r == DDP_OK) {
    double c0 = ddp_now();
    for (long done = 0; r == DDP_OK && done < chunk;) {
      if (run > 0 && run % block == 0) r = settle_restart(e, p);
      long n = block - run % block; /* what is left of the current block */
      if (n > chunk - done) n = chunk - done;
      if (r == DDP_OK) r = settle_steps(e, p, n, use_graph, &graph);
      done += n, run += n;
      if (r == DDP_OK && run % (64 * block) == 0) r = settle_wait(e, what); /* bounds the host's lead */
    }
    if (r == DDP_OK) r = settle_wait(e, what);
    double v[2] = {ddp_now() - t0, (ddp_now() - c0) / (double)chunk};
    if (r == DDP_OK) r = agree(ctx, v, 2);
    if (r != DDP_OK || v[0] >= seconds || !(v[1] > 0)) break;
    watchdog_tick(what);
    double left = seconds - v[0], aim = left > 0.1 ? left / 2 : left;
    chunk = (long)fmax(1, fmin(ceil(aim / v[1]), 1e8));
  }
  if (graph) d->graph_destroy(d, graph);
  *spent = ddp_now() - t0;
  return r;
}

/* ---- results ------------------------------------------------------------------------------------ */
size_t engine_weight_count(const engine *e) { return (size_t)e->L * e->HH; }

ddp_result engine_weights(engine *e, float *host) {
  if (e->fsdp) return fsdp_weights(e, host);
  DDP_TRY(e->dev->copy(e->dev, host, e->W, engine_weight_count(e) * 4, e->S));
  return e->dev->stream_synchronize(e->dev, e->S);
}

ddp_result engine_weights_verify(engine *e, uint64_t *sum, uint64_t *nonfinite) {
  size_t count = engine_weight_count(e), n = count * 4;
  float *h = malloc(n);
  DDP_CHECK_ALLOC(h);
  ddp_result r = engine_weights(e, h);
  uint64_t bad = 0;
  engine_weights_digest(h, r == DDP_OK ? count : 0, sum, &bad);
  if (nonfinite) *nonfinite = bad;
  free(h);
  return r;
}

void engine_weights_digest(const float *host, size_t count, uint64_t *sum, uint64_t *nonfinite) {
  *sum = ddp_fnv1a64(host, count * sizeof *host, DDP_FNV1A64_INIT);
  uint64_t bad = 0;
  for (size_t i = 0; i < count; i++) bad += !isfinite(host[i]);
  *nonfinite = bad;
}

ddp_result engine_measure_gemm(engine *e, double *tflops) {
  ddp_device *d = e->dev;
  const int H = e->H, samples = 10;
  /* Operands: two weight matrices (real values); output: the gradient scratch of the run's type. */
  const void *a, *b;
  void *c;
  if (e->fsdp) {
    DDP_TRY(fsdp_gemm_operands(e, &a, &b, &c));
  } else {
    a = Wc_of(e, 1), b = Wc_of(e, e->L > 1 ? 2 : 1);
    c = e->mixed ? e->G16 : (void *)e->G;
  }
  ddp_gemm g = {.trans_a = 1, .trans_b = 0, .m = H, .n = H, .k = H, .a = a, .lda = H, .b = b, .ldb = H, .c = c,
                .ldc = H, .ab_type = e->ct, .c_type = e->ct, .tf32 = e->cfg.precision == PREC_TF32, .relu = 0};
  if (!e->fsdp) DDP_TRY(weights_init(e, 0));
  /* Warm up, and find how many back-to-back GEMMs make a sample of at least 1 ms: a single small GEMM is
   * shorter than the launch and event overhead around it, which would understate the peak. */
  int per_sample = 1;
  double ms[10];
  for (int round = 0; round < 3; round++) {
    DDP_TRY(d->event_record(d, e->ev_step[0], e->S));
    for (int i = 0; i < per_sample; i++) DDP_TRY(d->gemm(d, e->S, &g));
    DDP_TRY(d->event_record(d, e->ev_step[1], e->S));
    DDP_TRY(engine_wait(e, e->ev_step[1], "GEMM timing"));
    DDP_TRY(elapsed(e, e->ev_step[0], e->ev_step[1], &ms[0]));
    if (round > 0 && ms[0] < 1.0) per_sample = ms[0] > 0 ? (int)fmin(1000.0, ceil(per_sample / ms[0])) : 1000;
  }
  for (int s = 0; s < samples; s++) {
    DDP_TRY(d->event_record(d, e->ev_step[0], e->S));
    for (int i = 0; i < per_sample; i++) DDP_TRY(d->gemm(d, e->S, &g));
    DDP_TRY(d->event_record(d, e->ev_step[1], e->S));
    DDP_TRY(engine_wait(e, e->ev_step[1], "GEMM timing"));
    DDP_TRY(elapsed(e, e->ev_step[0], e->ev_step[1], &ms[s]));
    ms[s] /= per_sample;
  }
  double med = stats_percentile(ms, samples, 0.5);
  *tflops = 2.0 * (double)H * H * H / (med * 1e-3) / 1e12;
  return DDP_OK;
}

const bucket_plan *engine_buckets(const engine *e) { return &e->plan; }

ddp_dtype engine_comm_dtype(const engine *e) { return e->comm_t; }

double engine_comm_bytes(const engine *e) {
  if (!e->fsdp) return (double)e->plan.total_count * (double)dtype_size(e->comm_t);
  /* nccl-tests' sizes: an all-gather's output, a reduce-scatter's input; two all-gathers and one
   * reduce-scatter a layer (the found_inf flag's 4 bytes aside) */
  return (double)e->L * (double)e->full_n * (2.0 * (double)ct_size(e) + (double)dtype_size(e->rt));
}

const fsdp_plan *engine_fsdp_plan(const engine *e) { return e->fsdp ? &e->fp : NULL; }

const fsdp_memory *engine_fsdp_allocated(const engine *e) { return e->fsdp ? &e->mem : NULL; }

double engine_fsdp_device_drop(const engine *e) { return e->fsdp ? e->mem_drop : NAN; }

int engine_comm_log(const engine *e, const fsdp_coll_kind **kinds) {
  *kinds = e->fsdp ? e->log : NULL;
  return e->fsdp ? e->nlog : 0;
}

double engine_flops_per_step(const engine *e) {
  return (6.0 * e->L - 2.0) * (double)e->B * (double)e->H * (double)e->H;
}
