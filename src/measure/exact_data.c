/* exact_data.c: inputs whose collective results are known exactly (exact_data.h).
 * Every value is a small non-negative integer, exact in every type. Reductions (v = what rank r sends at
 * element i, h = a hash of (seed, i) in [0, K]):
 *   sum: v = h + r % 3 (or, when n is too large for the type, only rank i % n sends h, the rest 0)
 *   prod: rank i % n sends h + 1, the rest 1       max, min: v = h + r % 3
 *   avg: ranks i % n and i % n + 1 send h + 1 and h', the rest 0 (as nccl-tests: two non-zero terms)
 * so that the exact result is known in O(1) and any order of evaluation gives it. Data movement: rank r's
 * element p is g(seed, r, p) in [0, min(limit, 1000)]. What a call must leave alone (recv of reduce and gather
 * off the root, alltoallv's tail past what this rank receives) must still hold what the check put there: the
 * bytes 0xff (UNTOUCHED), or this rank's own input where that buffer is also the send buffer (in place). */
#include "exact_data.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static long dtype_limit(ddp_dtype t) {
  switch (t) {
    case DT_BF16: return 256;
    case DT_F16: return 2048;
    case DT_I8: return 127;
    case DT_U8: return 255;
    default: return 1L << 24;
  }
}

static long hval(uint64_t seed, uint64_t i, long K) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + i + 1;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return (long)(((x >> 32) * (uint64_t)(K + 1)) >> 32);
}

ddp_result data_init(data_spec *d, ddp_coll_kind kind, ddp_redop op, ddp_dtype dt, int n, int rank, int root,
                     size_t count, int inplace, const size_t *counts, uint64_t seed) {
  memset(d, 0, sizeof *d);
  d->inplace = inplace;
  if (kind == COLL_ALLTOALLV) { /* where each sender's part starts here, and where ours starts in its buffer */
    d->a2av = malloc(3 * ((size_t)n + 1) * sizeof *d->a2av);
    DDP_CHECK_ALLOC(d->a2av);
    size_t *col = d->a2av, *row = col + n + 1, *cnt = row + n + 1;
    col[0] = 0;
    for (int i = 0; i < n; i++) {
      size_t before = 0;
      for (int k = 0; k < rank; k++) before += counts[(size_t)i * n + k];
      row[i] = before;
      cnt[i] = counts[(size_t)i * n + rank];
      col[i + 1] = col[i] + cnt[i];
    }
  }
  d->kind = kind;
  d->op = coll_is_reduction(kind) ? op : REDOP_SUM;
  d->dt = dt;
  d->n = n;
  d->rank = rank;
  d->root = root;
  d->count = count;
  d->seed = seed;
  long lim = dtype_limit(dt);
  if (!coll_is_reduction(kind)) {
    d->K = lim < 1000 ? lim : 1000;
  } else if (d->op == REDOP_SUM) {
    d->K = lim / n - 3;
    if (d->K > 1000) d->K = 1000;
    if (d->K < 1) d->sparse = 1, d->K = lim < 1000 ? lim : 1000;
  } else if (d->op == REDOP_AVG) {
    d->K = lim / 2 - 1 < 1000 ? lim / 2 - 1 : 1000;
  } else {
    d->K = lim - 3 < 100 ? lim - 3 : 100;
  }
  for (int r = 0; r < n; r++) d->c3 += r % 3;
  return DDP_OK;
}

void data_free(data_spec *d) {
  free(d->a2av);
  d->a2av = NULL;
}

/* Rank r's reduction input at global element i. */
static long red_in(const data_spec *d, int r, uint64_t i) {
  long h = hval(d->seed, i, d->K);
  int c = (int)(i % (uint64_t)d->n);
  switch (d->op) {
    case REDOP_SUM: return d->sparse ? (r == c ? h : 0) : h + r % 3;
    case REDOP_PROD: return r == c ? h + 1 : 1;
    case REDOP_AVG:
      return r == c ? h + 1 : (d->n > 1 && r == (c + 1) % d->n) ? hval(d->seed ^ 0x5bd1e995, i, d->K) : 0;
    default: return h + r % 3;
  }
}

/* The exact reduction at global element i (avg: the sum; the caller divides). */
static long red_out(const data_spec *d, uint64_t i) {
  long h = hval(d->seed, i, d->K);
  switch (d->op) {
    case REDOP_SUM: return d->sparse ? h : (long)d->n * h + d->c3;
    case REDOP_PROD: return h + 1;
    case REDOP_MAX: return h + (d->n >= 3 ? 2 : d->n - 1);
    case REDOP_MIN: return h;
    default: return h + 1 + (d->n > 1 ? hval(d->seed ^ 0x5bd1e995, i, d->K) : 0);
  }
}

static long move_val(const data_spec *d, int r, uint64_t p) { return hval(d->seed ^ ((uint64_t)(r + 1) << 40), p, d->K); }




/* Expected element k of this rank's receive buffer, stored into out[0] in the buffer's type. */
void expect_at(const data_spec *d, size_t k, void *out) {
  int r = d->rank;
  size_t q = d->count ? k % d->count : 0, j = d->count ? k / d->count : 0;
  int off_root = r != d->root;
  if (d->kind == COLL_REDUCE && off_root) { /* recv untouched: still the input when in place */
    if (d->inplace) dtype_store(out, d->dt, 0, (double)red_in(d, r, k));
    else memset(out, UNTOUCHED, dtype_size(d->dt));
    return;
  }
  if (d->kind == COLL_GATHER && off_root) {
    if (d->inplace && j == (size_t)r) dtype_store(out, d->dt, 0, move_val(d, r, q));
    else memset(out, UNTOUCHED, dtype_size(d->dt));
    return;
  }
  switch (d->kind) {
    case COLL_ALLREDUCE:
    case COLL_REDUCE:
    case COLL_REDUCE_SCATTER: {
      uint64_t i = d->kind == COLL_REDUCE_SCATTER ? (uint64_t)r * d->count + k : k;
      long v = red_out(d, i);
      if (d->op != REDOP_AVG) {
        dtype_store(out, d->dt, 0, (double)v);
      } else if (!dtype_is_float(d->dt)) {
        dtype_store(out, d->dt, 0, v / d->n);
      } else {
        double a = (double)v / d->n;
        switch (d->dt) {
          case DT_F32: ((float *)out)[0] = (float)a; break;
          case DT_F64: ((double *)out)[0] = a; break;
          case DT_BF16: ((uint16_t *)out)[0] = bf16_from_f32((float)a); break;
          default: ((uint16_t *)out)[0] = fp16_from_f32((float)a); break;
        }
      }
      break;
    }
    case COLL_ALL_GATHER:
    case COLL_GATHER: dtype_store(out, d->dt, 0, move_val(d, (int)j, q)); break;
    case COLL_ALLTOALL: dtype_store(out, d->dt, 0, move_val(d, (int)j, (uint64_t)r * d->count + q)); break;
    case COLL_SCATTER: dtype_store(out, d->dt, 0, move_val(d, d->root, (uint64_t)r * d->count + k)); break;
    case COLL_SENDRECV: dtype_store(out, d->dt, 0, move_val(d, (r + d->n - 1) % d->n, k)); break;
    case COLL_ALLTOALLV: {
      const size_t *col = d->a2av, *row = col + d->n + 1;
      if (k >= col[d->n]) { /* past what this rank receives */
        memset(out, UNTOUCHED, dtype_size(d->dt));
        break;
      }
      int lo = 0, hi = d->n - 1; /* the sender: the last i with col[i] <= k */
      while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (col[mid] <= k) lo = mid;
        else hi = mid - 1;
      }
      dtype_store(out, d->dt, 0, move_val(d, lo, row[lo] + (k - col[lo])));
      break;
    }
    default: dtype_store(out, d->dt, 0, move_val(d, d->root, k)); break;
  }
}

/* Bit-exact, or within 2 ULP for avg in floating types (all values are >= 0, so the bit patterns order). */
int same(const data_spec *d, const void *got, const void *want) {
  size_t es = dtype_size(d->dt);
  if (!memcmp(got, want, es)) return 1;
  if (d->op != REDOP_AVG || !coll_is_reduction(d->kind) || !dtype_is_float(d->dt)) return 0;
  int64_t a = 0, b = 0;
  if (es == 2) a = *(const uint16_t *)got, b = *(const uint16_t *)want;
  else if (es == 4) a = *(const uint32_t *)got, b = *(const uint32_t *)want;
  else memcpy(&a, got, 8), memcpy(&b, want, 8);
  return llabs(a - b) <= 2;
}

/* ---- filling and comparing on several threads ----------------------------------------------------
 * A check touches every element on the host (nccl-tests does it on the GPU): 8 GiB is 2^31 floats, so large
 * buffers are split over threads, each a contiguous range. */


typedef struct {
  const data_spec *ds;
  void *buf;
  size_t lo, hi;
  int compare; /* 0: fill the send buffer; 1: compare the receive buffer */
  wrong_info w;
} data_chunk;

static void *data_chunk_run(void *arg) {
  data_chunk *c = arg;
  const data_spec *d = c->ds;
  size_t es = dtype_size(d->dt);
  char want[8];
  c->w.first = -1;
  for (size_t k = c->lo; k < c->hi; k++) {
    if (!c->compare) {
      dtype_store(c->buf, d->dt, k, coll_is_reduction(d->kind) ? red_in(d, d->rank, k) : move_val(d, d->rank, k));
      continue;
    }
    expect_at(d, k, want);
    const char *got = (const char *)c->buf + k * es;
    if (same(d, got, want)) continue;
    if (!c->w.wrong++) {
      c->w.first = (long long)k;
      c->w.got = dtype_load(got, d->dt, 0);
      c->w.want = dtype_load(want, d->dt, 0);
    }
  }
  return NULL;
}

/* Fills buf[0, n) (compare = 0) or compares it with the expected values (compare = 1, result in *w), on up
 * to `threads` threads when n is large. */
void data_pass(const data_spec *d, void *buf, size_t n, int compare, int threads, wrong_info *w) {
  enum { MAXT = 32 };
  if (threads > MAXT) threads = MAXT;
  if (threads < 1 || n < ((size_t)1 << 22)) threads = 1;
  data_chunk c[MAXT];
  pthread_t tid[MAXT];
  int started[MAXT] = {0};
  for (int t = 0; t < threads; t++) {
    c[t] = (data_chunk){d, buf, n * (size_t)t / (size_t)threads, n * (size_t)(t + 1) / (size_t)threads, compare, {0, -1, 0, 0}};
    started[t] = t > 0 && pthread_create(&tid[t], NULL, data_chunk_run, &c[t]) == 0;
  }
  data_chunk_run(&c[0]);
  for (int t = 1; t < threads; t++) { /* a thread that could not start runs here */
    if (started[t]) pthread_join(tid[t], NULL);
    else data_chunk_run(&c[t]);
  }
  if (!compare) return;
  memset(w, 0, sizeof *w);
  w->first = -1;
  for (int t = 0; t < threads; t++) {
    if (c[t].w.wrong && w->first < 0) w->first = c[t].w.first, w->got = c[t].w.got, w->want = c[t].w.want;
    w->wrong += c[t].w.wrong;
  }
}

