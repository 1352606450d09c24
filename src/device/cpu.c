/* cpu.c: the CPU device. Memory is host memory, GEMMs are OpenBLAS's sgemm (16-bit operands are
 * widened to fp32 first: each product of two 16-bit values is exact in fp32, accumulation is fp32), and
 * element-wise work runs in order on the calling thread before the call returns.
 *
 * Streams and events keep CUDA's semantics so that the engine drives this device exactly as it drives a
 * GPU. The only asynchronous work is host functions (a non-blocking MPI allreduce's completion): they stay
 * in flight on their stream, are polled between operations so they progress during the backward pass, and
 * are completed, in stream order, when anything waits on them: an event wait, a synchronize, or another
 * operation enqueued on the same stream. A host function is first called only when the work before it on its
 * stream has completed, so work it starts (a collective) runs in stream order, as on a GPU stream. An event
 * records the time at which the work before it finished: the moment the call that completed that host function
 * returned, whichever poll made it. Never blocks except to complete in-flight work that something waits on. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_config(void);

#define MAX_EVENTS_PER_ITEM 8

typedef struct pending {
  ddp_host_fn fn;
  void *arg;
  uint64_t seq;
  ddp_event *events[MAX_EVENTS_PER_ITEM]; /* events recorded right after this item */
  int nevents;
  struct pending *next;
} pending;

struct ddp_stream {
  uint64_t enq_seq, done_seq; /* host functions enqueued / completed on this stream */
  pending *head, *tail;
  struct ddp_stream *next; /* all streams of the device, for polling */
};

struct ddp_event {
  ddp_stream *s;
  uint64_t seq;   /* the stream's enq_seq when recorded */
  double t;       /* completion time; < 0 while pending */
  pending *item;  /* in-flight item this event waits for, or NULL */
};

typedef struct {
  ddp_stream *streams;
  float *scratch[3];
  size_t scratch_n[3];
  double budget, allocated; /* this rank's share of the host's memory (cpu_budget), and what it holds of it */
  double memcpy_gbs;        /* measured by cpu_max_link_gbs (0: not yet) */
  char budget_why[160];
} cpu_impl;

/* ---- in-flight host functions ------------------------------------------------------------------ */
static void item_complete(ddp_stream *s, double t) {
  pending *it = s->head;
  s->head = it->next;
  if (!s->head) s->tail = NULL;
  s->done_seq = it->seq;
  for (int i = 0; i < it->nevents; i++) {
    it->events[i]->t = t;
    it->events[i]->item = NULL;
  }
  free(it);
}

/* Completes in-flight work of s up to seq (blocking). */
static ddp_result stream_complete(ddp_stream *s, uint64_t seq) {
  while (s->head && s->head->seq <= seq) {
    int done = 0;
    DDP_TRY(s->head->fn(s->head->arg, 1, &done));
    item_complete(s, ddp_now());
  }
  return DDP_OK;
}

/* Lets in-flight work of every stream progress, completing what has finished (never blocks). */
static ddp_result cpu_poll(cpu_impl *c) {
  for (ddp_stream *s = c->streams; s; s = s->next) {
    while (s->head) {
      int done = 0;
      DDP_TRY(s->head->fn(s->head->arg, 0, &done));
      if (!done) break;
      item_complete(s, ddp_now());
    }
  }
  return DDP_OK;
}

/* Before an operation on s: progress everywhere, then finish what s itself still has in flight. */
static ddp_result op_begin(ddp_device *d, ddp_stream *s) {
  cpu_impl *c = d->impl;
  DDP_TRY(cpu_poll(c));
  if (s) DDP_TRY(stream_complete(s, s->enq_seq));
  return DDP_OK;
}

/* ---- memory ------------------------------------------------------------------------------------- */
/* A buffer that would take this rank past its share of the host's memory is bad input (exit 2, decided alike on
 * every rank of a host), not a kill by the OOM killer (137) in the middle of the job. */
static ddp_result cpu_alloc(ddp_device *d, void **p, size_t bytes) {
  cpu_impl *c = d->impl;
  *p = NULL;
  if (c->allocated + (double)bytes > c->budget) {
    char a[32], b[32], m[32];
    return ddp_usage_error("the cpu device cannot take %s more for this rank (it holds %s): its share of this host's "
                           "memory is %s (%s); lower the sizes (--hidden, --layers, --batch; accept's --gemm-n; "
                           "collectives' -e) or run fewer ranks a host", ddp_fmt_bytes(a, sizeof a, (double)bytes),
                           ddp_fmt_bytes(b, sizeof b, c->allocated), ddp_fmt_bytes(m, sizeof m, c->budget),
                           c->budget_why);
  }
  if (posix_memalign(p, 64, bytes ? bytes : 64) != 0)
    return DDP_FAIL(DDP_ERR_SYSTEM, "cannot allocate %zu bytes of host memory", bytes);
  c->allocated += (double)malloc_usable_size(*p);
  return DDP_OK;
}
static void cpu_free(ddp_device *d, void *p) {
  cpu_impl *c = d->impl;
  if (p) c->allocated -= (double)malloc_usable_size(p);
  free(p);
}

/* This rank's share of the host's memory: 90 % of what it may still take (ddp_memory_available) over the ranks
 * of the host (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE; 1 without it). */
static void cpu_budget(cpu_impl *c) {
  char why[128];
  double avail = ddp_memory_available(why, sizeof why);
  const char *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  int local = ls && atoi(ls) > 0 ? atoi(ls) : 1;
  c->budget = 0.9 * avail / local;
  snprintf(c->budget_why, sizeof c->budget_why, "90 %% of %s, over %d rank%s", why, local, local == 1 ? "" : "s");
}
static ddp_result cpu_copy(ddp_device *d, void *dst, const void *src, size_t bytes, ddp_stream *s) {
  DDP_TRY(op_begin(d, s));
  memmove(dst, src, bytes);
  return DDP_OK;
}
static ddp_result cpu_memset_zero(ddp_device *d, void *p, size_t bytes, ddp_stream *s) {
  DDP_TRY(op_begin(d, s));
  memset(p, 0, bytes);
  return DDP_OK;
}

/* ---- streams and events ------------------------------------------------------------------------ */
static ddp_result cpu_stream_create(ddp_device *d, ddp_stream **out, int high_priority) {
  cpu_impl *c = d->impl;
  ddp_stream *s = calloc(1, sizeof *s);
  DDP_CHECK_ALLOC(s);
  s->next = c->streams;
  c->streams = s;
  *out = s;
  return DDP_OK;
}

static void cpu_stream_destroy(ddp_device *d, ddp_stream *s) {
  cpu_impl *c = d->impl;
  if (!s) return;
  (void)stream_complete(s, s->enq_seq);
  for (ddp_stream **pp = &c->streams; *pp; pp = &(*pp)->next)
    if (*pp == s) {
      *pp = s->next;
      break;
    }
  free(s);
}

static ddp_result cpu_stream_synchronize(ddp_device *d, ddp_stream *s) { return stream_complete(s, s->enq_seq); }

static ddp_result cpu_event_create(ddp_device *d, ddp_event **out, int timing) {
  ddp_event *e = calloc(1, sizeof *e);
  DDP_CHECK_ALLOC(e);
  e->t = ddp_now();
  *out = e;
  return DDP_OK;
}

static void event_detach(ddp_event *e) {
  pending *it = e->item;
  if (!it) return;
  for (int i = 0; i < it->nevents; i++)
    if (it->events[i] == e) {
      it->events[i] = it->events[--it->nevents];
      break;
    }
  e->item = NULL;
}

static void cpu_event_destroy(ddp_device *d, ddp_event *e) {
  if (!e) return;
  event_detach(e);
  free(e);
}

static ddp_result cpu_event_record(ddp_device *d, ddp_event *e, ddp_stream *s) {
  DDP_TRY(cpu_poll(d->impl));
  event_detach(e);
  e->s = s;
  e->seq = s->enq_seq;
  if (!s->tail) {
    e->t = ddp_now();
    return DDP_OK;
  }
  if (s->tail->nevents == MAX_EVENTS_PER_ITEM) { /* rare: complete the item rather than track more */
    DDP_TRY(stream_complete(s, s->tail->seq));
    e->t = ddp_now();
    return DDP_OK;
  }
  e->t = -1;
  e->item = s->tail;
  s->tail->events[s->tail->nevents++] = e;
  return DDP_OK;
}

/* The CPU device's streams run in order on the host: waiting for an event is completing its stream to it. */
static ddp_result cpu_stream_wait_event(ddp_device *d, ddp_stream *s, ddp_event *e) {
  if (e->s) DDP_TRY(stream_complete(e->s, e->seq));
  return DDP_OK;
}

static ddp_result cpu_event_query(ddp_device *d, ddp_event *e, int *done) {
  DDP_TRY(cpu_poll(d->impl));
  *done = e->t >= 0;
  return DDP_OK;
}

static ddp_result cpu_event_elapsed_ms(ddp_device *d, float *ms, ddp_event *a, ddp_event *b) {
  if (a->t < 0 || b->t < 0) return DDP_FAIL(DDP_ERR_INTERNAL, "elapsed time of an event still in flight");
  *ms = (float)((b->t - a->t) * 1e3);
  return DDP_OK;
}

static ddp_result cpu_host_func(ddp_device *d, ddp_stream *s, ddp_host_fn fn, void *arg) {
  DDP_TRY(cpu_poll(d->impl));
  int done = 0;
  if (!s->head) { /* nothing ahead of it: it may start and even finish now */
    DDP_TRY(fn(arg, 0, &done));
    if (done) {
      s->done_seq = ++s->enq_seq;
      return DDP_OK;
    }
  }
  pending *it = calloc(1, sizeof *it);
  DDP_CHECK_ALLOC(it);
  it->fn = fn;
  it->arg = arg;
  it->seq = ++s->enq_seq;
  if (s->tail)
    s->tail->next = it;
  else
    s->head = it;
  s->tail = it;
  return DDP_OK;
}

/* ---- math --------------------------------------------------------------------------------------- */
static inline float load(const void *p, ddp_dtype t, size_t i) {
  switch (t) {
    case DT_F32: return ((const float *)p)[i];
    case DT_BF16: return bf16_to_f32(((const uint16_t *)p)[i]);
    default: return fp16_to_f32(((const uint16_t *)p)[i]);
  }
}
static inline void store(void *p, ddp_dtype t, size_t i, float v) {
  switch (t) {
    case DT_F32: ((float *)p)[i] = v; break;
    case DT_BF16: ((uint16_t *)p)[i] = bf16_from_f32(v); break;
    default: ((uint16_t *)p)[i] = fp16_from_f32(v); break;
  }
}
static inline float round_to(ddp_dtype t, float v) {
  return t == DT_F32 ? v : t == DT_BF16 ? bf16_to_f32(bf16_from_f32(v)) : fp16_to_f32(fp16_from_f32(v));
}

/* fp32 view of a matrix of n elements: the buffer itself, or a widened copy in scratch slot k. */
static ddp_result as_f32(cpu_impl *c, int k, const void *p, ddp_dtype t, size_t n, const float **out) {
  if (t == DT_F32) {
    *out = p;
    return DDP_OK;
  }
  if (c->scratch_n[k] < n) {
    free(c->scratch[k]);
    c->scratch[k] = malloc(n * sizeof(float));
    DDP_CHECK_ALLOC(c->scratch[k]);
    c->scratch_n[k] = n;
  }
  for (size_t i = 0; i < n; i++) c->scratch[k][i] = load(p, t, i);
  *out = c->scratch[k];
  return DDP_OK;
}

static ddp_result cpu_gemm(ddp_device *d, ddp_stream *s, const ddp_gemm *g) {
  DDP_TRY(op_begin(d, s));
  cpu_impl *c = d->impl;
  /* Extents of the stored (column-major) operands. */
  size_t a_cols = g->trans_a ? (size_t)g->m : (size_t)g->k;
  size_t b_cols = g->trans_b ? (size_t)g->k : (size_t)g->n;
  const float *a, *b;
  DDP_TRY(as_f32(c, 0, g->a, g->ab_type, (size_t)g->lda * a_cols, &a));
  DDP_TRY(as_f32(c, 1, g->b, g->ab_type, (size_t)g->ldb * b_cols, &b));
  size_t cn = (size_t)g->ldc * (size_t)g->n;
  float *out = g->c;
  if (g->c_type != DT_F32) {
    if (c->scratch_n[2] < cn) {
      free(c->scratch[2]);
      c->scratch[2] = malloc(cn * sizeof(float));
      DDP_CHECK_ALLOC(c->scratch[2]);
      c->scratch_n[2] = cn;
    }
    out = c->scratch[2];
  }
  cblas_sgemm(CblasColMajor, g->trans_a ? CblasTrans : CblasNoTrans, g->trans_b ? CblasTrans : CblasNoTrans, g->m,
              g->n, g->k, 1.0f, a, g->lda, b, g->ldb, 0.0f, out, g->ldc);
  for (int j = 0; j < g->n; j++)
    for (int i = 0; i < g->m; i++) {
      size_t idx = (size_t)j * g->ldc + i;
      float v = out[idx];
      if (g->relu && !(v > 0.0f)) v = 0.0f;
      store(g->c, g->c_type, idx, v);
    }
  return DDP_OK;
}

static ddp_result cpu_generate(ddp_device *d, ddp_stream *s, void *dst, ddp_dtype dt, size_t n, uint64_t seed,
                               uint64_t tag, uint64_t offset, double bound) {
  DDP_TRY(op_begin(d, s));
  uint64_t key = gen_key(seed, tag);
  for (size_t i = 0; i < n; i++) store(dst, dt, i, gen_value(key, offset + i, bound));
  return DDP_OK;
}

static ddp_result cpu_cast(ddp_device *d, ddp_stream *s, void *dst, ddp_dtype dt, const void *src, ddp_dtype st,
                           size_t n, float factor, int pre_round) {
  DDP_TRY(op_begin(d, s));
  for (size_t i = 0; i < n; i++) {
    float v = load(src, st, i);
    if (pre_round) v = round_to(dt, v);
    store(dst, dt, i, v * factor);
  }
  return DDP_OK;
}

static ddp_result cpu_relu_backward(ddp_device *d, ddp_stream *s, void *dz, const void *da, const void *a,
                                    ddp_dtype dt, size_t n) {
  DDP_TRY(op_begin(d, s));
  for (size_t i = 0; i < n; i++) store(dz, dt, i, load(a, dt, i) > 0.0f ? load(da, dt, i) : 0.0f);
  return DDP_OK;
}

static ddp_result cpu_loss_grad(ddp_device *d, ddp_stream *s, void *dz, const void *y, const float *t, ddp_dtype dt,
                                size_t n, float inv_local_batch, float inv_global_batch, ddp_step_state *state,
                                int use_scale, double *loss_hist) {
  DDP_TRY(op_begin(d, s));
  float coef = inv_local_batch * (use_scale ? state->scale : 1.0f);
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    float yv = load(y, dt, i);
    float diff = yv - t[i];
    sum += (double)diff * (double)diff;
    store(dz, dt, i, yv > 0.0f ? diff * coef : 0.0f);
  }
  loss_hist[state->step] = 0.5 * (double)inv_global_batch * sum;
  return DDP_OK;
}

static ddp_result cpu_check_finite(ddp_device *d, ddp_stream *s, const void *g, ddp_dtype gt, size_t n,
                                   ddp_step_state *state) {
  DDP_TRY(op_begin(d, s));
  for (size_t i = 0; i < n; i++)
    if (!isfinite(load(g, gt, i))) {
      state->found_inf = 1;
      break;
    }
  return DDP_OK;
}

static ddp_result cpu_sgd(ddp_device *d, ddp_stream *s, float *w, const void *g, ddp_dtype gt, float *g_out, float *v,
                          void *w16, ddp_dtype w16_type, size_t n, float lr, float momentum, const ddp_step_state *state,
                          int unscale) {
  DDP_TRY(op_begin(d, s));
  if (state && state->found_inf) return DDP_OK;
  float inv = unscale ? (float)(1.0 / (double)state->scale) : 1.0f;
  for (size_t i = 0; i < n; i++) {
    float grad = load(g, gt, i);
    if (unscale) grad *= inv;
    if (g_out) g_out[i] = grad;
    float step = grad;
    if (v) {
      v[i] = momentum * v[i] + grad;
      step = v[i];
    }
    w[i] = w[i] - lr * step;
    if (w16) store(w16, w16_type, i, w[i]);
  }
  return DDP_OK;
}

static ddp_result cpu_step_end(ddp_device *d, ddp_stream *s, ddp_step_state *state, const scaler_cfg *scaler,
                               float *scale_hist, int *skip_hist) {
  DDP_TRY(op_begin(d, s));
  if (scale_hist) scale_hist[state->step] = state->scale;
  if (skip_hist) skip_hist[state->step] = state->found_inf;
  if (scaler) scaler_update(&state->scale, &state->tracker, state->found_inf, scaler);
  state->found_inf = 0;
  state->step++;
  return DDP_OK;
}

static ddp_result cpu_inject_nan(ddp_device *d, ddp_stream *s, void *p, ddp_dtype dt, const ddp_step_state *state,
                                 int step) {
  DDP_TRY(op_begin(d, s));
  if (state->step == step) store(p, dt, 0, NAN);
  return DDP_OK;
}

/* ---- plausibility bound ---------------------------------------------------------------------------- */
/* No bandwidth between host memories beats copying memory: twice this host's best memcpy (bytes copied per
 * second) over a cache-sized and a memory-sized copy, measured on the first call (tens of ms) and kept. */
static double cpu_max_link_gbs(ddp_device *d, char *why, size_t n) {
  cpu_impl *c = d->impl;
  if (!(c->memcpy_gbs > 0)) {
    static const struct {
      size_t bytes;
      int reps;
    } R[] = {{(size_t)1 << 20, 32}, {(size_t)32 << 20, 4}};
    void *(*volatile copy)(void *, const void *, size_t) = memcpy; /* never elided as a dead store */
    size_t most = R[1].bytes;
    char *a = malloc(most), *b = malloc(most);
    if (a && b) {
      memset(a, 1, most);
      memset(b, 0, most);
      for (size_t k = 0; k < sizeof R / sizeof R[0]; k++)
        for (int i = 0; i < R[k].reps; i++) {
          double t0 = ddp_now();
          copy(b, a, R[k].bytes);
          double t = ddp_now() - t0;
          if (t > 0) c->memcpy_gbs = fmax(c->memcpy_gbs, (double)R[k].bytes / t / 1e9);
        }
    }
    free(a);
    free(b);
  }
  if (!(c->memcpy_gbs > 0)) {
    snprintf(why, n, "no bound: this host's memcpy bandwidth could not be measured");
    return 0;
  }
  snprintf(why, n, "twice this host's memcpy bandwidth (%.3g GB/s, measured after the timing)", c->memcpy_gbs);
  return 2.0 * c->memcpy_gbs;
}

static void cpu_destroy(ddp_device *d) {
  if (!d) return;
  cpu_impl *c = d->impl;
  if (c) {
    while (c->streams) cpu_stream_destroy(d, c->streams);
    for (int k = 0; k < 3; k++) free(c->scratch[k]);
    free(c);
  }
  free(d);
}

ddp_result device_cpu_create(ddp_device **out, int threads) {
  ddp_device *d = calloc(1, sizeof *d);
  cpu_impl *c = calloc(1, sizeof *c);
  if (!d || !c) {
    free(d);
    free(c);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  if (threads > 0) openblas_set_num_threads(threads);
  cpu_budget(c);
  d->name = "cpu";
  d->host_memory = 1;
  d->impl = c;
  d->info.ordinal = -1;
  /* openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." -> keep the first two words. */
  const char *cfg = openblas_get_config();
  char lib[64] = "OpenBLAS";
  if (cfg) {
    size_t len = 0;
    for (int words = 0; cfg[len] && len + 1 < sizeof lib; len++)
      if (cfg[len] == ' ' && ++words == 2) break;
    snprintf(lib, sizeof lib, "%.*s", (int)len, cfg);
  }
  snprintf(d->info.name, sizeof d->info.name, "cpu (%s, %d threads)", lib, openblas_get_num_threads());
  d->alloc = cpu_alloc;
  d->free = cpu_free;
  d->alloc_host = cpu_alloc;
  d->free_host = cpu_free;
  d->copy = cpu_copy;
  d->memset_zero = cpu_memset_zero;
  d->stream_create = cpu_stream_create;
  d->stream_destroy = cpu_stream_destroy;
  d->stream_synchronize = cpu_stream_synchronize;
  d->event_create = cpu_event_create;
  d->event_destroy = cpu_event_destroy;
  d->event_record = cpu_event_record;
  d->stream_wait_event = cpu_stream_wait_event;
  d->event_query = cpu_event_query;
  d->event_elapsed_ms = cpu_event_elapsed_ms;
  d->host_func = cpu_host_func;
  d->gemm = cpu_gemm;
  d->generate = cpu_generate;
  d->cast = cpu_cast;
  d->relu_backward = cpu_relu_backward;
  d->loss_grad = cpu_loss_grad;
  d->check_finite = cpu_check_finite;
  d->sgd = cpu_sgd;
  d->step_end = cpu_step_end;
  d->inject_nan = cpu_inject_nan;
  d->max_link_gbs = cpu_max_link_gbs;
  d->destroy = cpu_destroy;
  *out = d;
  return DDP_OK;
}
