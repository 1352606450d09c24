/* engine_fsdp.c: the fsdp strategy's step, PyTorch FSDP2 (fully_shard on each layer, then on the root) as
 * docs/fsdp.md reads it, over the same model, data, loss and optimizer as the DDP step in engine.c.
 *
 * Shards. Each layer's H x H weight is cut on dim 0 as torch.chunk cuts it (fsdp_plan.h): every rank stores
 * shard_rows rows, its real rows first and zero rows after them. Wsh holds the fp32 master shards (layer l at
 * (l-1) * shard_n), Gsh their gradients, Vsh the momentum of the real rows only; with 16-bit GEMMs, Wsh16 holds
 * the shards in that type, written by the optimizer's fused update as DDP's W16 is (FSDP2 casts at each
 * all-gather's copy-in instead: the same values, docs/fsdp.md §12).
 *
 * Streams. S computes, C communicates; every order between them is an event, and nothing blocks the host:
 *   forward   the all-gather of layer l+1 is issued on C before layer l computes (FSDP2's implicit prefetch,
 *             one unit ahead); C waits only until S is done with the buffer it gathers into (two buffers);
 *   backward  every layer is gathered again (reshard_after_forward); layer l's pre-backward prefetches layer
 *             l-1, its post-backward casts its gradient into the reduce-scatter input (after the previous
 *             reduce-scatter has read it, as FSDP2's compute stream waits on it) and reduce-scatters it on C
 *             with the average, while S goes on with layer l-1;
 *   step      S waits for the last reduce-scatter; fp16 checks its shards for non-finite values, and the flag
 *             is all-reduced (MAX) so that every rank skips together; SGD updates this rank's rows.
 * One rank issues no collective: each one is a copy instead, as FSDP2 copies (docs/fsdp.md §3, §6). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "numerics.h"

static float *Wsh_of(engine *e, int l) { return e->Wsh + (size_t)(l - 1) * e->shard_n; }
static float *Gsh_of(engine *e, int l) { return e->Gsh + (size_t)(l - 1) * e->shard_n; }
/* What layer l's all-gather reads: the shard in the GEMM's type. */
static void *shard_in(engine *e, int l) {
  return e->mixed ? (void *)((char *)e->Wsh16 + (size_t)(l - 1) * e->shard_n * ct_size(e)) : (void *)Wsh_of(e, l);
}
static int buf_of(const engine *e, int l) { return e->L > 1 ? l % 2 : 0; }

static ddp_result falloc(engine *e, void **p, size_t bytes, size_t *category) {
  *p = NULL;
  if (!bytes) return DDP_OK;
  DDP_TRY(e->dev->alloc(e->dev, p, bytes));
  *category += bytes;
  e->mem.total += bytes;
  return DDP_OK;
}

ddp_result fsdp_create(engine *e) {
  ddp_device *d = e->dev;
  fsdp_plan_args a = {.hidden = e->H, .layers = e->L, .world = e->world, .param_dtype = e->ct,
                      .reduce_dtype = e->comm_t, .momentum = e->cfg.momentum != 0, .grad_scaling = e->fp16,
                      .ddp_grad_view = e->cfg.gradient_as_bucket_view};
  ddp_result r = fsdp_plan_build(&e->fp, &a);
  if (r != DDP_OK) return DDP_FAIL(r, "the FSDP shard plan: %s", e->fp.why);
  e->rt = e->comm_t;
  const fsdp_layer *ly = &e->fp.layers[0];
  e->shard_rows = ly->shard_rows;
  e->my_first = e->fp.ranks[e->rank].first;
  e->my_rows = e->fp.ranks[e->rank].rows;
  e->shard_n = ly->ag_in;
  e->full_n = ly->ag_out;
  size_t L = (size_t)e->L, H = (size_t)e->H, es = ct_size(e), rs = dtype_size(e->rt);
  fsdp_memory *m = &e->mem;
  memset(m, 0, sizeof *m);
  size_t free0 = 0, free1 = 0, total = 0;
  e->mem_drop = NAN;
  int told = d->mem_info && d->mem_info(d, &free0, &total) == DDP_OK;
  DDP_TRY(falloc(e, (void **)&e->Wsh, L * e->shard_n * 4, &m->params_master));
  if (e->mixed) DDP_TRY(falloc(e, &e->Wsh16, L * e->shard_n * es, &m->params_lowp));
  DDP_TRY(falloc(e, (void **)&e->Gsh, L * e->shard_n * 4, &m->grads));
  if (e->cfg.momentum != 0) DDP_TRY(falloc(e, (void **)&e->Vsh, L * e->my_rows * H * 4, &m->optim));
  for (int b = 0; b < (e->L > 1 ? 2 : 1); b++) DDP_TRY(falloc(e, &e->gath[b], e->full_n * es, &m->gathered));
  DDP_TRY(falloc(e, &e->gfull, e->HH * es, &m->reduce));
  DDP_TRY(falloc(e, &e->rsin, e->full_n * rs, &m->reduce));
  if (e->rt != DT_F32) DDP_TRY(falloc(e, &e->rsout16, e->shard_n * rs, &m->reduce));
  if (told && d->mem_info(d, &free1, &total) == DDP_OK) e->mem_drop = (double)free0 - (double)free1;
  for (int b = 0; b < 2; b++) {
    DDP_TRY(d->event_create(d, &e->ev_ag[b], 0));
    DDP_TRY(d->event_create(d, &e->ev_free[b], 0));
  }
  DDP_TRY(d->event_create(d, &e->ev_rs, 0));
  DDP_TRY(d->event_create(d, &e->ev_rsin, 0));
  /* Two all-gathers and a reduce-scatter a layer, and the found_inf all-reduce with fp16 on more ranks. */
  e->ntimed = 3 * e->L + (e->fp16 && e->world > 1);
  e->log = calloc((size_t)e->ntimed, sizeof *e->log);
  DDP_CHECK_ALLOC(e->log);
  return DDP_OK;
}

void fsdp_free(engine *e) {
  ddp_device *d = e->dev;
  void *bufs[] = {e->Wsh, e->Wsh16, e->Gsh, e->Vsh, e->gath[0], e->gath[1], e->gfull, e->rsin, e->rsout16};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (bufs[i]) d->free(d, bufs[i]);
  ddp_event *evs[] = {e->ev_ag[0], e->ev_ag[1], e->ev_free[0], e->ev_free[1], e->ev_rs, e->ev_rsin};
  for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
    if (evs[i]) d->event_destroy(d, evs[i]);
  fsdp_plan_free(&e->fp);
  free(e->log);
}

/* This rank's rows of every layer from the generator (the same values as the full weights DDP makes and
 * broadcasts: element (row, col) of layer l is generator index row * H + col), zero padding, the 16-bit copy. */
ddp_result fsdp_weights_init(engine *e) {
  ddp_device *d = e->dev;
  double bound = sqrt(6.0 / e->H);
  DDP_TRY(d->memset_zero(d, e->Wsh, (size_t)e->L * e->shard_n * 4, e->S));
  for (int l = 1; l <= e->L && e->my_rows; l++)
    DDP_TRY(d->generate(d, e->S, Wsh_of(e, l), DT_F32, e->my_rows * e->H, e->cfg.seed, TAG_WEIGHT + (uint64_t)l,
                        e->my_first * e->H, bound));
  if (e->mixed) DDP_TRY(d->cast(d, e->S, e->Wsh16, e->ct, e->Wsh, DT_F32, (size_t)e->L * e->shard_n, 1.0f, 0));
  return DDP_OK;
}

/* What a phase starts from besides the weights and the step state (engine.c): zero momentum; for training, a
 * reduce-scatter input whose padding rows are 0; for the comm phase, real values in everything it moves. */
ddp_result fsdp_reset(engine *e, ddp_phase p) {
  ddp_device *d = e->dev;
  size_t rs = dtype_size(e->rt);
  if (p == PHASE_COMM) {
    DDP_TRY(fsdp_weights_init(e));
    return d->generate(d, e->S, e->rsin, e->rt, e->full_n, e->cfg.seed, TAG_FILL, 0, 1.0);
  }
  DDP_TRY(fsdp_weights_init(e));
  if (e->Vsh) DDP_TRY(d->memset_zero(d, e->Vsh, (size_t)e->L * e->my_rows * e->H * 4, e->S));
  return d->memset_zero(d, e->rsin, e->full_n * rs, e->S);
}

/* ---- the collectives, on C ------------------------------------------------------------------------ */
/* One step's bookkeeping. The waits of a step are only on events recorded earlier in the same step: a wait on
 * one recorded before would cross a CUDA graph capture's boundary (cudaErrorStreamCaptureIsolation), and is not
 * needed, since C waits at the step's start for S's previous step, which waited for C's. */
typedef struct {
  int timed, step, slot; /* slot: this call's index among the step's comm calls (its timing events) */
  int free_rec[2];       /* ev_free[b] recorded in this step */
  int rs_rec;            /* ev_rs recorded in this step */
} fsdp_ctx;

static ddp_result timed_begin(engine *e, fsdp_ctx *x, fsdp_coll_kind kind) {
  if (x->slot < e->ntimed) e->log[x->slot] = kind;
  e->nlog = x->slot + 1;
  if (!x->timed) return DDP_OK;
  return e->dev->event_record(e->dev, e->ev_bstart[x->step * e->ntimed + x->slot], e->C);
}

static ddp_result timed_end(engine *e, fsdp_ctx *x) {
  int slot = x->slot++;
  if (!x->timed) return DDP_OK;
  return e->dev->event_record(e->dev, e->ev_bend[x->step * e->ntimed + slot], e->C);
}

/* Layer l's all-gather into its buffer, once S is done with what that buffer held. */
static ddp_result all_gather(engine *e, fsdp_ctx *x, int l, int wait_free) {
  ddp_device *d = e->dev;
  int b = buf_of(e, l);
  if (wait_free && x->free_rec[b]) DDP_TRY(d->stream_wait_event(d, e->C, e->ev_free[b]));
  DDP_TRY(timed_begin(e, x, FSDP_ALL_GATHER));
  if (e->world > 1) {
    ddp_coll c = {.kind = COLL_ALL_GATHER, .send = shard_in(e, l), .recv = e->gath[b], .count = e->shard_n,
                  .dt = e->ct, .op = REDOP_SUM};
    DDP_TRY(e->comm->collective(e->comm, &c, e->C));
  } else {
    DDP_TRY(d->copy(d, e->gath[b], shard_in(e, l), e->shard_n * ct_size(e), e->C));
  }
  DDP_TRY(timed_end(e, x));
  return d->event_record(d, e->ev_ag[b], e->C);
}

/* Layer l's reduce-scatter of rsin into its gradient shard, with FSDP2's average (AVG, or SUM and a divide
 * after it by the post factor; the pre factor was applied in the copy-in). */
static ddp_result reduce_scatter(engine *e, fsdp_ctx *x, int l) {
  ddp_device *d = e->dev;
  void *out = e->rt == DT_F32 ? (void *)Gsh_of(e, l) : e->rsout16;
  DDP_TRY(timed_begin(e, x, FSDP_REDUCE_SCATTER));
  if (e->world > 1) {
    ddp_coll c = {.kind = COLL_REDUCE_SCATTER, .send = e->rsin, .recv = out, .count = e->shard_n, .dt = e->rt,
                  .op = e->fp.divide_avg ? REDOP_AVG : REDOP_SUM};
    DDP_TRY(e->comm->collective(e->comm, &c, e->C));
  } else {
    DDP_TRY(d->copy(d, out, e->rsin, e->shard_n * dtype_size(e->rt), e->C));
  }
  DDP_TRY(timed_end(e, x));
  if (e->rt != DT_F32)
    DDP_TRY(d->cast(d, e->C, Gsh_of(e, l), DT_F32, e->rsout16, e->rt, e->shard_n, (float)(1.0 / e->fp.postdiv), 0));
  x->rs_rec = 1;
  return d->event_record(d, e->ev_rs, e->C);
}

/* GradScaler under FSDP2: every rank's found_inf, all-reduced with MAX (DTensor's found_inf handler). */
static ddp_result found_inf_all_reduce(engine *e, fsdp_ctx *x) {
  DDP_TRY(timed_begin(e, x, FSDP_ALL_REDUCE));
  ddp_coll c = {.kind = COLL_ALLREDUCE, .send = (char *)e->state + offsetof(ddp_step_state, found_inf),
                .recv = (char *)e->state + offsetof(ddp_step_state, found_inf), .count = 1, .dt = DT_I32,
                .op = REDOP_MAX};
  DDP_TRY(e->comm->collective(e->comm, &c, e->C));
  return timed_end(e, x);
}

/* ---- the steps ---------------------------------------------------------------------------------------- */
static ddp_result gemm(engine *e, int ta, int tb, int m, int n, int k, const void *a, const void *b, void *c,
                       int relu) {
  ddp_gemm g = {.trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .a = a, .lda = ta ? k : m, .b = b,
                .ldb = tb ? n : k, .c = c, .ldc = m, .ab_type = e->ct, .c_type = e->ct,
                .tf32 = e->cfg.precision == PREC_TF32, .relu = relu};
  return e->dev->gemm(e->dev, e->S, &g);
}

static ddp_result step_fsdp(engine *e, int timed, int step) {
  ddp_device *d = e->dev;
  const ddp_config *cfg = &e->cfg;
  const int H = e->H, B = e->B, L = e->L;
  fsdp_ctx x = {timed, step, 0, {0, 0}, 0};
  /* The root's pre-forward: the all-gathers wait for the previous step's optimizer. */
  DDP_TRY(d->event_record(d, e->ev_fork, e->S));
  DDP_TRY(d->stream_wait_event(d, e->C, e->ev_fork));

  /* Forward, each layer's all-gather issued while the layer before it computes. The GEMMs are engine.c's:
   * Z^c (H x B) = W^c^T A^c with W the gathered buffer, whose rows past H are padding nobody reads. */
  DDP_TRY(all_gather(e, &x, 1, 1));
  for (int l = 1; l <= L; l++) {
    if (l < L) DDP_TRY(all_gather(e, &x, l + 1, 1));
    int b = buf_of(e, l);
    DDP_TRY(d->stream_wait_event(d, e->S, e->ev_ag[b]));
    DDP_TRY(gemm(e, 1, 0, H, B, H, e->gath[b], act_of(e, l - 1), act_of(e, l), 1));
    DDP_TRY(d->event_record(d, e->ev_free[b], e->S)); /* reshard after forward */
    x.free_rec[b] = 1;
  }
  DDP_TRY(d->loss_grad(d, e->S, e->dz, act_of(e, L), e->t, e->ct, e->BH, 1.0f / (float)B,
                       (float)(1.0 / ((double)B * e->world)), e->state, e->fp16, e->loss_hist));

  /* Backward: layer L gathered again, each layer prefetching the one below it. */
  const float pre = (float)(1.0 / e->fp.prediv);
  DDP_TRY(all_gather(e, &x, L, 1));
  for (int l = L; l >= 1; l--) {
    if (l > 1) DDP_TRY(all_gather(e, &x, l - 1, 1));
    int b = buf_of(e, l);
    DDP_TRY(d->stream_wait_event(d, e->S, e->ev_ag[b]));
    /* dW_l = dz^T a_{l-1}, in param_dtype (the unsharded parameter's type, as autograd makes it). */
    DDP_TRY(gemm(e, 0, 1, H, H, B, act_of(e, l - 1), e->dz, e->gfull, 0));
    if (cfg->inject_nonfinite >= 0 && l == 1 && e->rank == 0)
      DDP_TRY(d->inject_nan(d, e->S, e->gfull, e->ct, e->state, cfg->inject_nonfinite));
    if (l > 1) {
      DDP_TRY(gemm(e, 0, 0, H, B, H, e->gath[b], e->dz, e->da, 0));
      DDP_TRY(d->relu_backward(d, e->S, e->dz, e->da, act_of(e, l - 1), e->ct, e->BH));
    }
    DDP_TRY(d->event_record(d, e->ev_free[b], e->S));
    /* Post-backward: once the previous reduce-scatter has read the input, the copy-in (cast to reduce_dtype,
     * then the pre-divide, as FSDP2 divides the reduce-dtype input), and this layer's reduce-scatter on C. */
    if (x.rs_rec) DDP_TRY(d->stream_wait_event(d, e->S, e->ev_rs));
    DDP_TRY(d->cast(d, e->S, e->rsin, e->rt, e->gfull, e->ct, e->HH, pre, pre != 1.0f));
    DDP_TRY(d->event_record(d, e->ev_rsin, e->S));
    DDP_TRY(d->stream_wait_event(d, e->C, e->ev_rsin));
    DDP_TRY(reduce_scatter(e, &x, l));
  }
  if (timed) DDP_TRY(d->event_record(d, e->ev_cend[step], e->S));
  DDP_TRY(d->stream_wait_event(d, e->S, e->ev_rs)); /* end of backward: every gradient shard is final */

  /* GradScaler: the shards' inf check, agreed on every rank; then SGD on this rank's real rows. */
  size_t n_all = (size_t)L * e->shard_n;
  if (e->fp16) {
    DDP_TRY(d->check_finite(d, e->S, e->Gsh, DT_F32, n_all, e->state));
    if (e->world > 1) {
      DDP_TRY(d->event_record(d, e->ev_rsin, e->S));
      DDP_TRY(d->stream_wait_event(d, e->C, e->ev_rsin));
      DDP_TRY(found_inf_all_reduce(e, &x));
      DDP_TRY(d->event_record(d, e->ev_rs, e->C));
      DDP_TRY(d->stream_wait_event(d, e->S, e->ev_rs));
    }
  }
  const ddp_step_state *st = e->fp16 ? e->state : NULL;
  if (e->my_rows == e->shard_rows) { /* no padding here: one pass over every layer's shard */
    DDP_TRY(d->sgd(d, e->S, e->Wsh, e->Gsh, DT_F32, NULL, e->Vsh, e->Wsh16, e->ct, n_all, (float)cfg->lr,
                   (float)cfg->momentum, st, e->fp16));
  } else {
    size_t n = e->my_rows * (size_t)H;
    for (int l = 1; l <= L && n; l++)
      DDP_TRY(d->sgd(d, e->S, Wsh_of(e, l), Gsh_of(e, l), DT_F32, NULL, e->Vsh ? e->Vsh + (size_t)(l - 1) * n : NULL,
                     e->mixed ? (char *)e->Wsh16 + (size_t)(l - 1) * e->shard_n * ct_size(e) : NULL, e->ct, n,
                     (float)cfg->lr, (float)cfg->momentum, st, e->fp16));
  }
  return d->step_end(d, e->S, e->state, e->fp16 ? &e->scaler : NULL, e->scale_hist, e->skip_hist);
}

/* The comm phase: the fsdp step's collectives alone, same sizes, types and order (fsdp_plan's schedule). */
static ddp_result step_fsdp_comm(engine *e, int timed, int step) {
  ddp_device *d = e->dev;
  const int L = e->L;
  fsdp_ctx x = {timed, step, 0, {0, 0}, 0};
  DDP_TRY(d->event_record(d, e->ev_fork, e->S));
  DDP_TRY(d->stream_wait_event(d, e->C, e->ev_fork));
  for (int l = 1; l <= L; l++) DDP_TRY(all_gather(e, &x, l, 0));
  DDP_TRY(all_gather(e, &x, L, 0));
  for (int l = L; l >= 1; l--) {
    if (l > 1) DDP_TRY(all_gather(e, &x, l - 1, 0));
    DDP_TRY(reduce_scatter(e, &x, l));
  }
  if (e->fp16 && e->world > 1) DDP_TRY(found_inf_all_reduce(e, &x));
  DDP_TRY(d->event_record(d, e->ev_comm_done, e->C));
  return d->stream_wait_event(d, e->S, e->ev_comm_done);
}

ddp_result fsdp_step(engine *e, ddp_phase p, int timed, int step) {
  return p == PHASE_COMM ? step_fsdp_comm(e, timed, step) : step_fsdp(e, timed, step);
}

/* The full fp32 model in DDP's host layout (layer L first), all-gathered from the shards (collective). */
ddp_result fsdp_weights(engine *e, float *host) {
  ddp_device *d = e->dev;
  float *full = NULL;
  DDP_TRY(d->alloc(d, (void **)&full, e->full_n * 4));
  ddp_result r = d->event_record(d, e->ev_fork, e->S);
  if (r == DDP_OK) r = d->stream_wait_event(d, e->C, e->ev_fork);
  for (int l = 1; l <= e->L && r == DDP_OK; l++) {
    if (e->world > 1) {
      ddp_coll c = {.kind = COLL_ALL_GATHER, .send = Wsh_of(e, l), .recv = full, .count = e->shard_n, .dt = DT_F32,
                    .op = REDOP_SUM};
      r = e->comm->collective(e->comm, &c, e->C);
    } else {
      r = d->copy(d, full, Wsh_of(e, l), e->shard_n * 4, e->C);
    }
    if (r == DDP_OK) r = d->copy(d, host + (size_t)(e->L - l) * e->HH, full, e->HH * 4, e->C);
    if (r == DDP_OK) r = d->stream_synchronize(d, e->C);
  }
  ddp_result r2 = d->stream_synchronize(d, e->C);
  d->free(d, full);
  return r != DDP_OK ? r : r2;
}

ddp_result fsdp_gemm_operands(engine *e, const void **a, const void **b, void **c) {
  ddp_device *d = e->dev;
  double bound = sqrt(6.0 / e->H);
  void *g1 = e->gath[e->L > 1 ? 1 : 0];
  DDP_TRY(d->generate(d, e->S, e->gath[0], e->ct, e->HH, e->cfg.seed, TAG_WEIGHT + 1, 0, bound));
  if (g1 != e->gath[0]) DDP_TRY(d->generate(d, e->S, g1, e->ct, e->HH, e->cfg.seed, TAG_WEIGHT + 2, 0, bound));
  *a = e->gath[0];
  *b = g1;
  *c = e->gfull;
  return DDP_OK;
}
