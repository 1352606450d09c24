/* mpi.c: the comm interface over MPI.
 *
 * Host memory (the cpu device): a collective is a host function on the stream that starts it as a
 * non-blocking MPI_Iallreduce/MPI_Ibcast when the stream reaches it (the cpu device calls it first when the
 * work before it on the stream has completed) and completes it after, so communication overlaps the backward
 * pass (the cpu device polls it between operations), whatever waits on the stream waits for it, and
 * collectives on one stream run one after the other, as NCCL's kernels do on a GPU stream. Started at once
 * instead, a bucket's allreduce ran alongside the one before it, and the events around it (recorded when that
 * one completed) timed 3 MiB between two CPU ranks in 4.4 us. A buffer may not be given again while its
 * collective is queued or in flight; the engine never does.
 *
 * Device memory (the cuda device): each collective is staged through pinned host memory in stream order:
 * copy to host, a host function that runs the blocking MPI collective, copy back. This works whether or
 * not the MPI library is CUDA-aware and lets several ranks share one GPU (NCCL refuses that). Host
 * functions cannot return errors, so a failure is kept and reported by check().
 *
 * 16-bit types are reduced with user-defined MPI operations that add in fp32 and round once per addition,
 * as NCCL does. Counts above INT_MAX are split into chunks.
 *
 * The general collectives (collective(): allreduce with any op, reduce_scatter, all_gather, broadcast,
 * alltoall, reduce, gather, scatter, sendrecv (MPI_Isend + MPI_Irecv) and alltoallv, in- or out-of-place as
 * comm.h allows) start lazily, in stream order, inside their host function: on host memory
 * the job is made per call and freed when it completes; on device memory it is kept per call site (a graph
 * replays the same host function) and staged through one shared pinned buffer, grown when needed (the old
 * ones stay alive until destroy, since jobs and graphs made earlier still point at them). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "comm.h"

#define CHUNK ((size_t)1 << 30) /* elements per MPI call */

typedef enum { JOB_ALLREDUCE, JOB_BCAST } job_kind;

/* One collective's arguments and in-flight state. Jobs are kept for the comm's lifetime and reused for
 * the same call site (buffer, count, type, stream), because a captured CUDA graph replays the same
 * argument pointer every step. */
typedef struct job {
  struct job *next;
  struct mpi_impl *m;
  job_kind kind;
  void *buf;   /* what MPI works on: the caller's buffer (host memory), or stage */
  void *user;  /* the caller's buffer */
  void *stage; /* pinned host copy of the buffer, for device memory (one per call site: stream order makes
                * reuse safe, and a graph replays the same copies) */
  size_t count;
  ddp_dtype dt;
  int root;
  ddp_stream *s;
  MPI_Request *reqs;
  int nreq, active; /* active: started, not yet complete */
  int queued;       /* host memory: on its stream, from the call until its host function completes it */
} job;

typedef struct xjob xjob;

typedef struct mpi_impl {
  MPI_Comm comm;
  MPI_Op sum_bf16, sum_f16;
  MPI_Op ops16[REDOP_COUNT][2]; /* [op][0 bf16, 1 f16] for the general collectives (avg: sum) */
  xjob *xjobs;                  /* staged general collectives, one per call site */
  void *xstage;                 /* shared pinned staging buffer of the general collectives */
  size_t xstage_bytes;
  void **old_stages;            /* outgrown staging buffers, freed at destroy */
  int nold;
  ddp_device *dev;
  job *jobs;
  int host_memory;        /* the device's buffers are host memory */
  volatile int async_err; /* an MPI error inside a host function */
  char async_msg[256];
} mpi_impl;

static void sum_bf16_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
  const uint16_t *a = in;
  uint16_t *b = inout;
  for (int i = 0; i < *len; i++) b[i] = bf16_from_f32(bf16_to_f32(a[i]) + bf16_to_f32(b[i]));
}
static void sum_f16_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
  const uint16_t *a = in;
  uint16_t *b = inout;
  for (int i = 0; i < *len; i++) b[i] = fp16_from_f32(fp16_to_f32(a[i]) + fp16_to_f32(b[i]));
}

/* 16-bit reductions for the general collectives: fp32 arithmetic, one rounding per operation. */
#define OP16(name, to, from, expr)                                                \
  static void name(void *in, void *inout, int *len, MPI_Datatype *dt) {          \
    const uint16_t *a_ = in;                                                      \
    uint16_t *b_ = inout;                                                         \
    for (int i = 0; i < *len; i++) {                                              \
      float x = to(a_[i]), y = to(b_[i]);                                         \
      b_[i] = from(expr);                                                         \
    }                                                                             \
  }
OP16(prod_bf16_fn, bf16_to_f32, bf16_from_f32, x * y)
OP16(max_bf16_fn, bf16_to_f32, bf16_from_f32, x > y ? x : y)
OP16(min_bf16_fn, bf16_to_f32, bf16_from_f32, x < y ? x : y)
OP16(prod_f16_fn, fp16_to_f32, fp16_from_f32, x * y)
OP16(max_f16_fn, fp16_to_f32, fp16_from_f32, x > y ? x : y)
OP16(min_f16_fn, fp16_to_f32, fp16_from_f32, x < y ? x : y)

static MPI_Datatype mpi_type(ddp_dtype dt) {
  switch (dt) {
    case DT_F32: return MPI_FLOAT;
    case DT_F64: return MPI_DOUBLE;
    case DT_I8: return MPI_INT8_T;
    case DT_U8: return MPI_UINT8_T;
    case DT_I32: return MPI_INT32_T;
    case DT_U32: return MPI_UINT32_T;
    case DT_I64: return MPI_INT64_T;
    case DT_U64: return MPI_UINT64_T;
    default: return MPI_UINT16_T; /* bf16, f16: reduced by the user-defined operations */
  }
}
static MPI_Op mpi_sum(mpi_impl *m, ddp_dtype dt) {
  return dt == DT_F32 ? MPI_SUM : dt == DT_BF16 ? m->sum_bf16 : m->sum_f16;
}

/* Starts the job's non-blocking collective(s). */
static ddp_result job_start(job *j) {
  mpi_impl *m = j->m;
  size_t es = dtype_size(j->dt);
  for (int k = 0; k < j->nreq; k++) {
    size_t off = (size_t)k * CHUNK;
    int cnt = (int)(j->count - off < CHUNK ? j->count - off : CHUNK);
    char *p = (char *)j->buf + off * es;
    if (j->kind == JOB_ALLREDUCE)
      DDP_CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, p, cnt, mpi_type(j->dt), mpi_sum(m, j->dt), m->comm, &j->reqs[k]));
    else
      DDP_CHECK_MPI(MPI_Ibcast(p, cnt, mpi_type(j->dt), j->root, m->comm, &j->reqs[k]));
  }
  j->active = 1;
  return DDP_OK;
}

/* Host function for host memory: starts the collective on its first call (the stream has reached it), then
 * progresses it (block = 0) or finishes it (block = 1). */
static ddp_result job_finish(void *arg, int block, int *done) {
  job *j = arg;
  if (!j->active) DDP_TRY(job_start(j));
  if (block) {
    DDP_CHECK_MPI(MPI_Waitall(j->nreq, j->reqs, MPI_STATUSES_IGNORE));
    *done = 1;
  } else {
    DDP_CHECK_MPI(MPI_Testall(j->nreq, j->reqs, done, MPI_STATUSES_IGNORE));
  }
  if (*done) j->active = j->queued = 0;
  return DDP_OK;
}

/* Host function for staged device memory: the whole blocking collective, in stream order. CUDA's host
 * functions return nothing, so the first error is kept for check(). */
static ddp_result job_run_staged(void *arg, int block, int *done) {
  job *j = arg;
  *done = 1;
  ddp_result r = job_start(j);
  if (r == DDP_OK) r = job_finish(j, 1, done);
  if (r != DDP_OK && !j->m->async_err) {
    snprintf(j->m->async_msg, sizeof j->m->async_msg, "MPI collective of %zu %s elements failed", j->count,
             dtype_name(j->dt));
    j->m->async_err = (int)r;
  }
  return DDP_OK;
}

static ddp_result job_get(mpi_impl *m, job_kind kind, void *user, size_t count, ddp_dtype dt, int root, ddp_stream *s,
                          job **out) {
  for (job *j = m->jobs; j; j = j->next)
    if (j->kind == kind && j->user == user && j->count == count && j->dt == dt && j->root == root && j->s == s) {
      /* Host memory: the job is the stream's item until it completes, so the previous one on this buffer must
       * have finished. (Staged collectives run in stream order, so reuse is always safe there.) */
      if ((j->active || j->queued) && m->host_memory)
        return DDP_FAIL(DDP_ERR_INTERNAL, "collective on a buffer that is still in flight");
      *out = j;
      return DDP_OK;
    }
  job *j = calloc(1, sizeof *j);
  DDP_CHECK_ALLOC(j);
  j->nreq = count ? (int)((count + CHUNK - 1) / CHUNK) : 1;
  j->reqs = calloc((size_t)j->nreq, sizeof *j->reqs);
  if (!j->reqs) {
    free(j);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  j->m = m;
  j->kind = kind;
  j->user = user;
  j->buf = user;
  j->count = count;
  j->dt = dt;
  j->root = root;
  j->s = s;
  j->next = m->jobs;
  m->jobs = j;
  if (!m->host_memory) {
    DDP_TRY(m->dev->alloc_host(m->dev, &j->stage, count * dtype_size(dt)));
    j->buf = j->stage;
  }
  *out = j;
  return DDP_OK;
}

static ddp_result mpi_collective(ddp_comm *c, job_kind kind, void *buf, size_t count, ddp_dtype dt, int root,
                                 ddp_stream *s) {
  mpi_impl *m = c->impl;
  job *j = NULL;
  DDP_TRY(job_get(m, kind, buf, count, dt, root, s, &j));
  if (c->dev->host_memory) {
    j->queued = 1;
    ddp_result r = c->dev->host_func(c->dev, s, job_finish, j);
    if (r != DDP_OK) j->queued = 0;
    return r;
  }
  size_t bytes = count * dtype_size(dt);
  DDP_TRY(c->dev->copy(c->dev, j->stage, buf, bytes, s));
  DDP_TRY(c->dev->host_func(c->dev, s, job_run_staged, j));
  return c->dev->copy(c->dev, buf, j->stage, bytes, s);
}

static ddp_result mpi_allreduce(ddp_comm *c, void *buf, size_t count, ddp_dtype dt, ddp_stream *s) {
  return mpi_collective(c, JOB_ALLREDUCE, buf, count, dt, 0, s);
}

static ddp_result mpi_broadcast(ddp_comm *c, void *buf, size_t count, ddp_dtype dt, int root, ddp_stream *s) {
  return mpi_collective(c, JOB_BCAST, buf, count, dt, root, s);
}

/* ---- the general collectives ------------------------------------------------------------------- */
struct xjob {
  xjob *next;
  mpi_impl *m;
  ddp_coll a; /* the caller's arguments */
  ddp_stream *s;
  const void *send; /* what MPI reads: a.send, or its place in the stage */
  void *recv;       /* what MPI writes */
  int rank, size;
  int staged; /* device memory: kept for the comm's lifetime, run whole inside one host function */
  const void *in_src;
  void *in_dst;
  size_t in_bytes; /* staged: copied to the stage before, and back from it after */
  int *v;          /* alltoallv: send counts, send displacements, receive counts, receive displacements (4 x size) */
  MPI_Request req[2];
  int nreq; /* 2 for sendrecv */
  int active;
};

static void xjob_free(xjob *j) {
  free(j->v);
  free(j);
}

/* alltoallv's MPI arguments from the matrix, as the call is enqueued (comm.h: counts are read then). */
static ddp_result a2av_args(const ddp_coll *a, int rank, int size, int **out) {
  int *v = malloc(4 * (size_t)size * sizeof *v);
  DDP_CHECK_ALLOC(v);
  size_t so = 0, ro = 0;
  for (int p = 0; p < size; p++) {
    size_t sc = a->counts[(size_t)rank * size + p], rc = a->counts[(size_t)p * size + rank];
    v[p] = (int)sc, v[size + p] = (int)so, v[2 * size + p] = (int)rc, v[3 * size + p] = (int)ro;
    so += sc, ro += rc; /* the totals were checked against INT_MAX */
  }
  *out = v;
  return DDP_OK;
}

static MPI_Op xop(mpi_impl *m, ddp_dtype dt, ddp_redop op) {
  if (dt == DT_BF16 || dt == DT_F16) return m->ops16[op][dt == DT_F16];
  return op == REDOP_PROD ? MPI_PROD : op == REDOP_MAX ? MPI_MAX : op == REDOP_MIN ? MPI_MIN : MPI_SUM;
}

/* Where a reduce_scatter leaves its result in MPI's memory, and whether it is NCCL's in-place form. */
static int rs_inplace(const xjob *j) {
  return (const char *)j->recv == (const char *)j->send + (size_t)j->rank * j->a.count * dtype_size(j->a.dt);
}
/* recv == send + rank * count (scatter) or send == recv + rank * count (gather): NCCL's in-place forms. */
static int at_rank(const void *whole, const void *part, const xjob *j) {
  return (const char *)part == (const char *)whole + (size_t)j->rank * j->a.count * dtype_size(j->a.dt);
}

static ddp_result xjob_start(xjob *j) {
  mpi_impl *m = j->m;
  const ddp_coll *a = &j->a;
  MPI_Datatype t = mpi_type(a->dt);
  int cnt = (int)a->count; /* checked against INT_MAX at enqueue */
  size_t es = dtype_size(a->dt);
  int root = j->rank == a->root;
  j->nreq = 1;
  switch (a->kind) {
    case COLL_ALLREDUCE:
      DDP_CHECK_MPI(MPI_Iallreduce(j->send == j->recv ? MPI_IN_PLACE : j->send, j->recv, cnt, t,
                                   xop(m, a->dt, a->op), m->comm, &j->req[0]));
      break;
    case COLL_REDUCE_SCATTER: /* MPI's in-place form leaves the result at the start; moved in xjob_post */
      if (rs_inplace(j))
        DDP_CHECK_MPI(MPI_Ireduce_scatter_block(MPI_IN_PLACE, (void *)j->send, cnt, t, xop(m, a->dt, a->op), m->comm,
                                                &j->req[0]));
      else
        DDP_CHECK_MPI(MPI_Ireduce_scatter_block(j->send, j->recv, cnt, t, xop(m, a->dt, a->op), m->comm, &j->req[0]));
      break;
    case COLL_ALL_GATHER:
      if ((const char *)j->send == (const char *)j->recv + (size_t)j->rank * a->count * es)
        DDP_CHECK_MPI(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, j->recv, cnt, t, m->comm, &j->req[0]));
      else
        DDP_CHECK_MPI(MPI_Iallgather(j->send, cnt, t, j->recv, cnt, t, m->comm, &j->req[0]));
      break;
    case COLL_BROADCAST:
      if (j->rank == a->root && j->send != j->recv) memcpy(j->recv, j->send, a->count * es);
      DDP_CHECK_MPI(MPI_Ibcast(j->recv, cnt, t, a->root, m->comm, &j->req[0]));
      break;
    case COLL_ALLTOALL:
      DDP_CHECK_MPI(MPI_Ialltoall(j->send, cnt, t, j->recv, cnt, t, m->comm, &j->req[0]));
      break;
    case COLL_REDUCE: /* MPI_IN_PLACE is the root's only; elsewhere send == recv is just the input */
      DDP_CHECK_MPI(MPI_Ireduce(root && j->send == j->recv ? MPI_IN_PLACE : j->send, j->recv, cnt, t,
                                xop(m, a->dt, a->op), a->root, m->comm, &j->req[0]));
      break;
    case COLL_GATHER:
      if (root && at_rank(j->recv, j->send, j))
        DDP_CHECK_MPI(MPI_Igather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, j->recv, cnt, t, a->root, m->comm, &j->req[0]));
      else
        DDP_CHECK_MPI(MPI_Igather(j->send, cnt, t, j->recv, cnt, t, a->root, m->comm, &j->req[0]));
      break;
    case COLL_SCATTER:
      if (root && at_rank(j->send, j->recv, j))
        DDP_CHECK_MPI(MPI_Iscatter(j->send, cnt, t, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a->root, m->comm, &j->req[0]));
      else
        DDP_CHECK_MPI(MPI_Iscatter(j->send, cnt, t, j->recv, cnt, t, a->root, m->comm, &j->req[0]));
      break;
    case COLL_SENDRECV: /* to rank + 1, from rank - 1 (nccl-tests' sendrecv_perf) */
      DDP_CHECK_MPI(MPI_Irecv(j->recv, cnt, t, (j->rank + j->size - 1) % j->size, 0, m->comm, &j->req[0]));
      DDP_CHECK_MPI(MPI_Isend(j->send, cnt, t, (j->rank + 1) % j->size, 0, m->comm, &j->req[1]));
      j->nreq = 2;
      break;
    case COLL_ALLTOALLV: {
      int n = j->size, *v = j->v;
      DDP_CHECK_MPI(MPI_Ialltoallv(j->send, v, v + n, t, j->recv, v + 2 * n, v + 3 * n, t, m->comm, &j->req[0]));
      break;
    }
    default: return DDP_FAIL(DDP_ERR_INTERNAL, "unknown collective %d", (int)a->kind);
  }
  j->active = 1;
  return DDP_OK;
}

/* After completion: reduce_scatter's in-place result to rank * count, and avg's division. */
static void xjob_post(xjob *j) {
  const ddp_coll *a = &j->a;
  size_t n = a->count, es = dtype_size(a->dt);
  char *res = j->recv;
  if (a->kind == COLL_REDUCE_SCATTER && rs_inplace(j) && j->rank) memmove(res, j->send, n * es);
  if (a->op != REDOP_AVG || !coll_is_reduction(a->kind) || (a->kind == COLL_REDUCE && j->rank != a->root)) return;
  int w = j->size;
  for (size_t i = 0; i < n; i++) switch (a->dt) {
      case DT_F32: ((float *)res)[i] /= (float)w; break;
      case DT_F64: ((double *)res)[i] /= w; break;
      case DT_BF16: ((uint16_t *)res)[i] = bf16_from_f32(bf16_to_f32(((uint16_t *)res)[i]) / (float)w); break;
      case DT_F16: ((uint16_t *)res)[i] = fp16_from_f32(fp16_to_f32(((uint16_t *)res)[i]) / (float)w); break;
      case DT_I8: ((int8_t *)res)[i] /= w; break;
      case DT_U8: ((uint8_t *)res)[i] /= w; break;
      case DT_I32: ((int32_t *)res)[i] /= w; break;
      case DT_U32: ((uint32_t *)res)[i] /= (uint32_t)w; break;
      case DT_I64: ((int64_t *)res)[i] /= w; break;
      case DT_U64: ((uint64_t *)res)[i] /= (uint64_t)w; break;
      default: break;
    }
}

/* Host function: start in stream order (the first call), then progress or finish. A host-memory job frees
 * itself when done (the cpu device never calls it again). */
static ddp_result xjob_fn(void *arg, int block, int *done) {
  xjob *j = arg;
  *done = 0;
  if (!j->active) DDP_TRY(xjob_start(j));
  if (block) {
    DDP_CHECK_MPI(MPI_Waitall(j->nreq, j->req, MPI_STATUSES_IGNORE));
    *done = 1;
  } else {
    DDP_CHECK_MPI(MPI_Testall(j->nreq, j->req, done, MPI_STATUSES_IGNORE));
  }
  if (!*done) return DDP_OK;
  j->active = 0;
  xjob_post(j);
  if (!j->staged) xjob_free(j);
  return DDP_OK;
}

static ddp_result xjob_run_staged(void *arg, int block, int *done) {
  xjob *j = arg;
  ddp_result r = xjob_fn(j, 1, done);
  *done = 1;
  if (r != DDP_OK && !j->m->async_err) {
    snprintf(j->m->async_msg, sizeof j->m->async_msg, "MPI collective of %zu %s elements failed", j->a.count,
             dtype_name(j->a.dt));
    j->m->async_err = (int)r;
  }
  return DDP_OK;
}

/* The staged job of this call site: MPI works on a copy of the caller's buffers in the shared stage
 * (one region when send and receive overlap, as in-place calls do, so that their offsets are kept). */
static ddp_result xjob_staged(ddp_comm *c, const ddp_coll *a, ddp_stream *s, size_t sbytes, size_t rbytes,
                              int *v, xjob **out) {
  mpi_impl *m = c->impl;
  size_t vbytes = 4 * (size_t)c->size * sizeof(int);
  for (xjob *j = m->xjobs; j; j = j->next)
    if (j->s == s && j->a.kind == a->kind && j->a.send == a->send && j->a.recv == a->recv &&
        j->a.count == a->count && j->a.dt == a->dt && j->a.op == a->op && j->a.root == a->root &&
        (!v || !memcmp(j->v, v, vbytes))) {
      free(v);
      *out = j;
      return DDP_OK;
    }
  const char *sb = a->send, *rb = a->recv;
  int overlap = sb < rb + rbytes && rb < sb + sbytes;
  const char *lo = overlap && rb < sb ? rb : sb;
  size_t need = overlap ? (size_t)((sb + sbytes > rb + rbytes ? sb + sbytes : rb + rbytes) - lo) : sbytes + rbytes;
  if (need > m->xstage_bytes) {
    void **old = realloc(m->old_stages, (size_t)(m->nold + 1) * sizeof *old);
    if (!old) free(v);
    DDP_CHECK_ALLOC(old);
    m->old_stages = old;
    if (m->xstage) m->old_stages[m->nold++] = m->xstage;
    m->xstage = NULL;
    m->xstage_bytes = 0;
    size_t grow = need < 4096 ? 4096 : need;
    DDP_TRY(c->dev->alloc_host(c->dev, &m->xstage, grow));
    m->xstage_bytes = grow;
  }
  xjob *j = calloc(1, sizeof *j);
  if (!j) free(v);
  DDP_CHECK_ALLOC(j);
  j->v = v;
  char *st = m->xstage;
  j->m = m;
  j->a = *a;
  j->s = s;
  j->rank = c->rank;
  j->size = c->size;
  j->staged = 1;
  j->in_src = lo;
  j->in_dst = st;
  j->in_bytes = overlap ? need : sbytes;
  j->send = overlap ? st + (sb - lo) : st;
  j->recv = overlap ? st + (rb - lo) : st + sbytes;
  j->next = m->xjobs;
  m->xjobs = j;
  *out = j;
  return DDP_OK;
}

static ddp_result mpi_coll(ddp_comm *c, const ddp_coll *a, ddp_stream *s) {
  mpi_impl *m = c->impl;
  if ((unsigned)a->kind >= COLL_COUNT || (unsigned)a->op >= REDOP_COUNT || !dtype_size(a->dt) ||
      (a->kind == COLL_ALLTOALLV && !a->counts) || (coll_is_rooted(a->kind) && (a->root < 0 || a->root >= c->size)))
    return DDP_FAIL(DDP_ERR_INTERNAL, "bad collective arguments");
  size_t es = dtype_size(a->dt), sn = coll_send_count(a, c->rank, c->size), rn = coll_recv_count(a, c->rank, c->size);
  if (sn > INT_MAX || rn > INT_MAX || a->count > INT_MAX)
    return DDP_FAIL(DDP_ERR_MPI, "%zu elements: the MPI comm takes at most %d per rank and call (use nccl)",
                    sn > rn ? sn : rn, INT_MAX);
  if (coll_out_of_place_only(a->kind) && a->send == a->recv)
    return DDP_FAIL(DDP_ERR_INTERNAL, "%s must be out-of-place", coll_name(a->kind));
  int *v = NULL;
  if (a->kind == COLL_ALLTOALLV) DDP_TRY(a2av_args(a, c->rank, c->size, &v));
  if (m->host_memory) {
    xjob *j = calloc(1, sizeof *j);
    if (!j) free(v);
    DDP_CHECK_ALLOC(j);
    j->v = v;
    j->m = m;
    j->a = *a;
    j->s = s;
    j->send = a->send;
    j->recv = a->recv;
    j->rank = c->rank;
    j->size = c->size;
    ddp_result r = c->dev->host_func(c->dev, s, xjob_fn, j);
    if (r != DDP_OK) ddp_trace(__FILE__, __LINE__); /* the job may be in flight: leak it rather than race */
    return r;
  }
  xjob *j = NULL;
  DDP_TRY(xjob_staged(c, a, s, sn * es, rn * es, v, &j));
  DDP_TRY(c->dev->copy(c->dev, j->in_dst, j->in_src, j->in_bytes, s));
  DDP_TRY(c->dev->host_func(c->dev, s, xjob_run_staged, j));
  return c->dev->copy(c->dev, a->recv, j->recv, rn * es, s);
}

static ddp_result mpi_barrier(ddp_comm *c) {
  mpi_impl *m = c->impl;
  DDP_CHECK_MPI(MPI_Barrier(m->comm));
  return DDP_OK;
}

static ddp_result mpi_check(ddp_comm *c) {
  mpi_impl *m = c->impl;
  if (m->async_err) return DDP_FAIL((ddp_result)m->async_err, "%s", m->async_msg);
  return DDP_OK;
}

static void mpi_abort(ddp_comm *c) {}

static void mpi_destroy(ddp_comm *c) {
  if (!c) return;
  mpi_impl *m = c->impl;
  if (m) {
    while (m->jobs) {
      job *j = m->jobs;
      m->jobs = j->next;
      if (j->stage) c->dev->free_host(c->dev, j->stage);
      free(j->reqs);
      free(j);
    }
    while (m->xjobs) {
      xjob *j = m->xjobs;
      m->xjobs = j->next;
      xjob_free(j);
    }
    for (int i = 0; i < m->nold; i++) c->dev->free_host(c->dev, m->old_stages[i]);
    free(m->old_stages);
    if (m->xstage) c->dev->free_host(c->dev, m->xstage);
    for (int op = REDOP_PROD; op <= REDOP_MIN; op++)
      for (int k = 0; k < 2; k++)
        if (m->ops16[op][k] != MPI_OP_NULL) MPI_Op_free(&m->ops16[op][k]);
    if (m->sum_bf16 != MPI_OP_NULL) MPI_Op_free(&m->sum_bf16);
    if (m->sum_f16 != MPI_OP_NULL) MPI_Op_free(&m->sum_f16);
    if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
    free(m);
  }
  free(c);
}

static ddp_result mpi_split(ddp_comm *c, int color, int key, ddp_comm **out) {
  mpi_impl *m = c->impl;
  MPI_Comm sub;
  *out = NULL;
  DDP_CHECK_MPI(MPI_Comm_split(m->comm, color < 0 ? MPI_UNDEFINED : color, key, &sub));
  if (sub == MPI_COMM_NULL) return DDP_OK;
  char name[MPI_MAX_OBJECT_NAME], sub_name[MPI_MAX_OBJECT_NAME + 24];
  int len = 0;
  DDP_CHECK_MPI(MPI_Comm_get_name(m->comm, name, &len));
  snprintf(sub_name, sizeof sub_name, "%.*s, split %d", MPI_MAX_OBJECT_NAME - 24, name, color);
  DDP_CHECK_MPI(MPI_Comm_set_name(sub, sub_name)); /* the watchdog names communicators (mpi_where.c) */
  ddp_result r = comm_mpi_create(out, sub, c->dev);
  MPI_Comm_free(&sub);
  return r;
}

ddp_result comm_mpi_create(ddp_comm **out, MPI_Comm mpi_comm, ddp_device *dev) {
  ddp_comm *c = calloc(1, sizeof *c);
  mpi_impl *m = calloc(1, sizeof *m);
  if (!c || !m) {
    free(c);
    free(m);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  m->comm = MPI_COMM_NULL;
  m->sum_bf16 = m->sum_f16 = MPI_OP_NULL;
  for (int op = 0; op < REDOP_COUNT; op++) m->ops16[op][0] = m->ops16[op][1] = MPI_OP_NULL;
  c->impl = m;
  m->host_memory = dev->host_memory;
  m->dev = dev;
  c->name = "mpi";
  c->dev = dev;
  c->allreduce = mpi_allreduce;
  c->broadcast = mpi_broadcast;
  c->collective = mpi_coll;
  c->barrier = mpi_barrier;
  c->split = mpi_split;
  c->check = mpi_check;
  c->abort = mpi_abort;
  c->destroy = mpi_destroy;
  char name[MPI_MAX_OBJECT_NAME] = "";
  int len = 0;
  int err = MPI_Comm_dup(mpi_comm, &m->comm);
  if (err == MPI_SUCCESS) err = MPI_Comm_get_name(mpi_comm, name, &len); /* the copy keeps the name */
  if (err == MPI_SUCCESS && name[0]) err = MPI_Comm_set_name(m->comm, name);
  if (err == MPI_SUCCESS) err = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
  if (err == MPI_SUCCESS) err = MPI_Comm_rank(m->comm, &c->rank);
  if (err == MPI_SUCCESS) err = MPI_Comm_size(m->comm, &c->size);
  if (err == MPI_SUCCESS) err = MPI_Op_create(sum_bf16_fn, 1, &m->sum_bf16);
  if (err == MPI_SUCCESS) err = MPI_Op_create(sum_f16_fn, 1, &m->sum_f16);
  MPI_User_function *fn16[REDOP_COUNT][2] = {
      [REDOP_PROD] = {prod_bf16_fn, prod_f16_fn}, [REDOP_MAX] = {max_bf16_fn, max_f16_fn},
      [REDOP_MIN] = {min_bf16_fn, min_f16_fn}};
  for (int op = REDOP_PROD; op <= REDOP_MIN; op++)
    for (int k = 0; k < 2; k++)
      if (err == MPI_SUCCESS) err = MPI_Op_create(fn16[op][k], 1, &m->ops16[op][k]);
  m->ops16[REDOP_SUM][0] = m->ops16[REDOP_AVG][0] = m->sum_bf16; /* aliases: freed once, as sum_* */
  m->ops16[REDOP_SUM][1] = m->ops16[REDOP_AVG][1] = m->sum_f16;
  if (err != MPI_SUCCESS) {
    mpi_destroy(c);
    return mpi_fail(err, "creating the MPI comm", __FILE__, __LINE__);
  }
  *out = c;
  return DDP_OK;
}
