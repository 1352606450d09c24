/* comm_mpi.c: the comm interface over MPI.
 *
 * Host memory (the cpu device): a collective starts at once as a non-blocking MPI_Iallreduce/MPI_Ibcast,
 * and its completion is put on the stream as a host function, so communication overlaps the backward pass
 * (the cpu device polls it between operations) and whatever waits on the stream waits for it. It must not
 * be given a buffer that earlier in-flight work on the stream still uses; the engine never does.
 *
 * Device memory (the cuda device): each collective is staged through pinned host memory in stream order:
 * copy to host, a host function that runs the blocking MPI collective, copy back. This works whether or
 * not the MPI library is CUDA-aware and lets several ranks share one GPU (NCCL refuses that). Host
 * functions cannot return errors, so a failure is kept and reported by check().
 *
 * 16-bit types are reduced with user-defined MPI operations that add in fp32 and round once per addition,
 * as NCCL does. Counts above INT_MAX are split into chunks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  int nreq, active;
} job;

typedef struct mpi_impl {
  MPI_Comm comm;
  MPI_Op sum_bf16, sum_f16;
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

static MPI_Datatype mpi_type(ddp_dtype dt) { return dt == DT_F32 ? MPI_FLOAT : MPI_UINT16_T; }
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

/* Host function for host memory: progress (block = 0) or finish (block = 1) the started collective. */
static ddp_result job_finish(void *arg, int block, int *done) {
  job *j = arg;
  if (!j->active) {
    *done = 1;
    return DDP_OK;
  }
  if (block) {
    DDP_CHECK_MPI(MPI_Waitall(j->nreq, j->reqs, MPI_STATUSES_IGNORE));
    *done = 1;
  } else {
    DDP_CHECK_MPI(MPI_Testall(j->nreq, j->reqs, done, MPI_STATUSES_IGNORE));
  }
  if (*done) j->active = 0;
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
      /* Host memory: the collective starts now, so the previous one on this buffer must have finished.
       * (Staged collectives run in stream order, so reuse is always safe there.) */
      if (j->active && m->host_memory)
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
    DDP_TRY(job_start(j));
    return c->dev->host_func(c->dev, s, job_finish, j);
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
  c->impl = m;
  m->host_memory = dev->host_memory;
  m->dev = dev;
  c->name = "mpi";
  c->dev = dev;
  c->allreduce = mpi_allreduce;
  c->broadcast = mpi_broadcast;
  c->barrier = mpi_barrier;
  c->split = mpi_split;
  c->check = mpi_check;
  c->abort = mpi_abort;
  c->destroy = mpi_destroy;
  int err = MPI_Comm_dup(mpi_comm, &m->comm);
  if (err == MPI_SUCCESS) err = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
  if (err == MPI_SUCCESS) err = MPI_Comm_rank(m->comm, &c->rank);
  if (err == MPI_SUCCESS) err = MPI_Comm_size(m->comm, &c->size);
  if (err == MPI_SUCCESS) err = MPI_Op_create(sum_bf16_fn, 1, &m->sum_bf16);
  if (err == MPI_SUCCESS) err = MPI_Op_create(sum_f16_fn, 1, &m->sum_f16);
  if (err != MPI_SUCCESS) {
    mpi_destroy(c);
    return mpi_fail(err, "creating the MPI comm", __FILE__, __LINE__);
  }
  *out = c;
  return DDP_OK;
}
