/* nccl.c: the comm interface over NCCL. One communicator per group, created from an ncclUniqueId that
 * rank 0 of the group broadcasts over MPI; collectives are enqueued on the caller's stream (NCCL orders
 * them there itself); errors carry ncclGetLastError's text. The host-side barrier polls its stream and
 * ncclCommGetAsyncError, so a peer that died is reported instead of waited for. Also reports the NCCL
 * header the binary was built with, the library it runs with and that library's path. The general
 * collectives map one to one onto NCCL's calls, or are grouped send/recv as nccl-tests runs them (alltoall,
 * alltoallv, gather, scatter, sendrecv: one ncclSend/ncclRecv per peer in one group). */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll.h"
#include "comm.h"
#include "cuda_check.h"
#include "nccl_account.h"
#include "versions.h"
#include "watchdog.h"

typedef struct {
  ncclComm_t comm;
  cudaStream_t stream; /* for the barrier */
  float *scratch;      /* one float on the device, for the barrier */
  unsigned seen;       /* collective kinds called once (1u << ddp_coll_kind): NCCL connects lazily on the first */
} nccl_impl;

static ddp_result nccl_fail(ncclResult_t r, ncclComm_t comm, const char *call, const char *file, int line) {
  const char *last = comm ? ncclGetLastError(comm) : NULL;
  return ddp_fail(DDP_ERR_NCCL, file, line, "%s: %s%s%s", call, ncclGetErrorString(r), last && *last ? ": " : "",
                  last ? last : "");
}
#define NCCL_CHECK(comm, call)                                                             \
  do {                                                                                     \
    ncclResult_t r_ = (call);                                                              \
    if (r_ != ncclSuccess) return nccl_fail(r_, (comm), #call, __FILE__, __LINE__);        \
  } while (0)

static ncclDataType_t nccl_type(ddp_dtype t) {
  switch (t) {
    case DT_F32: return ncclFloat32;
    case DT_BF16: return ncclBfloat16;
    case DT_F16: return ncclFloat16;
    case DT_F64: return ncclFloat64;
    case DT_I8: return ncclInt8;
    case DT_U8: return ncclUint8;
    case DT_I32: return ncclInt32;
    case DT_U32: return ncclUint32;
    case DT_I64: return ncclInt64;
    default: return ncclUint64;
  }
}

static ncclRedOp_t nccl_op(ddp_redop op) {
  static const ncclRedOp_t ops[REDOP_COUNT] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  return ops[op];
}

/* NCCL (2.22 on) connects a communicator's peers on its first call of each kind and logs the transports then:
 * that stretch of the log is this communicator's (nccl_account.h). Costs one test of a bit on later calls. */
#define FIRST_CALL_BEGIN(n, kind) ((n)->seen & (1u << (kind)) ? (size_t)-1 : nccl_account_offset())
static void first_call_end(nccl_impl *n, int kind, size_t begin) {
  if (begin == (size_t)-1) return;
  n->seen |= 1u << kind;
  nccl_account_span((unsigned long long)(uintptr_t)n->comm, begin);
}

/* The last collective this rank started, for the watchdog: a rank that waits for a stopped peer names it. */
static void started(const char *call, size_t count, ddp_dtype dt, const ddp_comm *c) {
  static const char comm[] = "a NCCL communicator";
  wd_call w = {.call = call, .count = (long)count, .size = c->size, .peer = -1};
  snprintf(w.type, sizeof w.type, "%s", dtype_name(dt));
  memcpy(w.comm, comm, sizeof comm);
  watchdog_started_call(&w); /* raw: every collective of a timed loop comes here */
}

static ddp_result nc_allreduce(ddp_comm *c, void *buf, size_t count, ddp_dtype dt, ddp_stream *s) {
  nccl_impl *n = c->impl;
  started("ncclAllReduce", count, dt, c);
  size_t first = FIRST_CALL_BEGIN(n, COLL_ALLREDUCE);
  NCCL_CHECK(n->comm, ncclAllReduce(buf, buf, count, nccl_type(dt), ncclSum, n->comm, (cudaStream_t)s));
  first_call_end(n, COLL_ALLREDUCE, first);
  return DDP_OK;
}

static ddp_result nc_broadcast(ddp_comm *c, void *buf, size_t count, ddp_dtype dt, int root, ddp_stream *s) {
  nccl_impl *n = c->impl;
  started("ncclBroadcast", count, dt, c);
  size_t first = FIRST_CALL_BEGIN(n, COLL_BROADCAST);
  NCCL_CHECK(n->comm, ncclBroadcast(buf, buf, count, nccl_type(dt), root, n->comm, (cudaStream_t)s));
  first_call_end(n, COLL_BROADCAST, first);
  return DDP_OK;
}

/* The point-to-point collectives as nccl-tests runs them: the sends and receives of one call in one group.
 * send_at/recv_at give peer p's count and byte offset (0 count: no call, as nccl-tests; alltoallv's offsets
 * are the running sums, kept by nc_p2p). A rooted call's
 * copy from the root to itself is left out when it is in place (the data is where it belongs already). */
typedef struct {
  const ddp_coll *a;
  int rank, size;
  size_t es;
} p2p_plan;

static void send_at(const p2p_plan *q, int p, size_t *cnt, size_t *off) {
  const ddp_coll *a = q->a;
  *cnt = 0, *off = 0;
  switch (a->kind) {
    case COLL_ALLTOALL: *cnt = a->count, *off = (size_t)p * a->count * q->es; break;
    case COLL_GATHER: /* every rank to the root */
      if (p == a->root && !(q->rank == a->root && (const char *)a->send == (char *)a->recv + (size_t)q->rank * a->count * q->es))
        *cnt = a->count;
      break;
    case COLL_SCATTER: /* the root to every rank */
      if (q->rank == a->root && !(p == q->rank && (char *)a->recv == (const char *)a->send + (size_t)p * a->count * q->es))
        *cnt = a->count, *off = (size_t)p * a->count * q->es;
      break;
    case COLL_SENDRECV: *cnt = p == (q->rank + 1) % q->size ? a->count : 0; break;
    default: *cnt = a->counts[(size_t)q->rank * q->size + p]; break; /* alltoallv: row `rank`; nc_p2p packs */
  }
}
static void recv_at(const p2p_plan *q, int p, size_t *cnt, size_t *off) {
  const ddp_coll *a = q->a;
  *cnt = 0, *off = 0;
  switch (a->kind) {
    case COLL_ALLTOALL: *cnt = a->count, *off = (size_t)p * a->count * q->es; break;
    case COLL_GATHER:
      if (q->rank == a->root && !(p == q->rank && (const char *)a->send == (char *)a->recv + (size_t)p * a->count * q->es))
        *cnt = a->count, *off = (size_t)p * a->count * q->es;
      break;
    case COLL_SCATTER:
      if (p == a->root && !(q->rank == a->root && (char *)a->recv == (const char *)a->send + (size_t)q->rank * a->count * q->es))
        *cnt = a->count;
      break;
    case COLL_SENDRECV: *cnt = p == (q->rank + q->size - 1) % q->size ? a->count : 0; break;
    default: *cnt = a->counts[(size_t)p * q->size + q->rank]; break; /* alltoallv: column `rank` */
  }
}

static ddp_result nc_p2p(ddp_comm *c, const ddp_coll *a, cudaStream_t st) {
  nccl_impl *n = c->impl;
  ncclDataType_t t = nccl_type(a->dt);
  p2p_plan q = {a, c->rank, c->size, dtype_size(a->dt)};
  NCCL_CHECK(n->comm, ncclGroupStart());
  ncclResult_t r = ncclSuccess;
  size_t spack = 0, rpack = 0; /* alltoallv: the running offsets of the packed buffers */
  for (int p = 0; p < c->size && r == ncclSuccess; p++) {
    size_t cnt, off;
    send_at(&q, p, &cnt, &off);
    if (a->kind == COLL_ALLTOALLV) off = spack, spack += cnt * q.es;
    if (cnt) r = ncclSend((const char *)a->send + off, cnt, t, p, n->comm, st);
    recv_at(&q, p, &cnt, &off);
    if (a->kind == COLL_ALLTOALLV) off = rpack, rpack += cnt * q.es;
    if (cnt && r == ncclSuccess) r = ncclRecv((char *)a->recv + off, cnt, t, p, n->comm, st);
  }
  ncclResult_t e = ncclGroupEnd();
  NCCL_CHECK(n->comm, r);
  NCCL_CHECK(n->comm, e);
  return DDP_OK;
}

static ddp_result nc_coll(ddp_comm *c, const ddp_coll *a, ddp_stream *s) {
  nccl_impl *n = c->impl;
  cudaStream_t st = (cudaStream_t)s;
  ncclDataType_t t = nccl_type(a->dt);
  if ((unsigned)a->kind >= COLL_COUNT || (unsigned)a->op >= REDOP_COUNT || !dtype_size(a->dt) ||
      (a->kind == COLL_ALLTOALLV && !a->counts) || (coll_is_rooted(a->kind) && (a->root < 0 || a->root >= c->size)))
    return DDP_FAIL(DDP_ERR_INTERNAL, "bad collective arguments");
  if (coll_out_of_place_only(a->kind) && a->send == a->recv)
    return DDP_FAIL(DDP_ERR_INTERNAL, "%s must be out-of-place", coll_name(a->kind));
  static const char *const calls[COLL_COUNT] = {
      "ncclAllReduce", "ncclReduceScatter", "ncclAllGather", "ncclBroadcast", "ncclSend/ncclRecv (alltoall)",
      "ncclReduce", "ncclSend/ncclRecv (gather)", "ncclSend/ncclRecv (scatter)", "ncclSend/ncclRecv (sendrecv)",
      "ncclSend/ncclRecv (alltoallv)"};
  started(calls[a->kind], a->count, a->dt, c);
  size_t first = FIRST_CALL_BEGIN(n, a->kind);
  switch (a->kind) {
    case COLL_ALLREDUCE:
      NCCL_CHECK(n->comm, ncclAllReduce(a->send, a->recv, a->count, t, nccl_op(a->op), n->comm, st));
      break;
    case COLL_REDUCE_SCATTER:
      NCCL_CHECK(n->comm, ncclReduceScatter(a->send, a->recv, a->count, t, nccl_op(a->op), n->comm, st));
      break;
    case COLL_ALL_GATHER: NCCL_CHECK(n->comm, ncclAllGather(a->send, a->recv, a->count, t, n->comm, st)); break;
    case COLL_BROADCAST:
      NCCL_CHECK(n->comm, ncclBroadcast(a->send, a->recv, a->count, t, a->root, n->comm, st));
      break;
    case COLL_REDUCE:
      NCCL_CHECK(n->comm, ncclReduce(a->send, a->recv, a->count, t, nccl_op(a->op), a->root, n->comm, st));
      break;
    default: { /* alltoall, alltoallv, gather, scatter, sendrecv */
      ddp_result r = nc_p2p(c, a, st);
      if (r != DDP_OK) return r;
      break;
    }
  }
  first_call_end(n, a->kind, first);
  return DDP_OK;
}

static ddp_result nc_check(ddp_comm *c) {
  nccl_impl *n = c->impl;
  ncclResult_t async = ncclSuccess;
  NCCL_CHECK(n->comm, ncclCommGetAsyncError(n->comm, &async));
  if (async != ncclSuccess && async != ncclInProgress)
    return nccl_fail(async, n->comm, "asynchronous NCCL error", __FILE__, __LINE__);
  return DDP_OK;
}

/* An allreduce of one float, waited for by polling (NCCL has no barrier). */
static ddp_result nc_barrier(ddp_comm *c) {
  nccl_impl *n = c->impl;
  NCCL_CHECK(n->comm, ncclAllReduce(n->scratch, n->scratch, 1, ncclFloat32, ncclSum, n->comm, n->stream));
  unsigned tok = watchdog_enter("a barrier (ncclAllReduce of 1 float) on a NCCL communicator (%d rank%s)", c->size,
                                c->size == 1 ? "" : "s");
  ddp_result r = DDP_OK;
  for (;;) {
    cudaError_t e = cudaStreamQuery(n->stream);
    if (e == cudaSuccess) break;
    if (e != cudaErrorNotReady) {
      r = cuda_fail(e, "cudaStreamQuery(barrier)", __FILE__, __LINE__);
      break;
    }
    if ((r = nc_check(c)) != DDP_OK) break;
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  watchdog_leave(tok);
  return r;
}

static void nc_record_choices(ddp_comm *c, int on) {
  (void)c;
  nccl_account_choices(on);
}

static void nc_abort(ddp_comm *c) {
  nccl_impl *n = c->impl;
  if (n && n->comm) {
    ncclCommAbort(n->comm);
    n->comm = NULL;
  }
}

static void nc_destroy(ddp_comm *c) {
  if (!c) return;
  nccl_impl *n = c->impl;
  if (n) {
    if (n->stream) cudaStreamSynchronize(n->stream);
    if (n->comm) ncclCommDestroy(n->comm);
    if (n->scratch) cudaFree(n->scratch);
    if (n->stream) cudaStreamDestroy(n->stream);
    free(n);
  }
  free(c);
}

static ddp_result wrap(ddp_comm **out, ncclComm_t comm, ddp_device *dev);

static ddp_result nc_split(ddp_comm *c, int color, int key, ddp_comm **out) {
  nccl_impl *n = c->impl;
  ncclComm_t sub = NULL;
  *out = NULL;
  size_t begin = nccl_account_offset();
  unsigned tok = watchdog_enter("ncclCommSplit of a NCCL communicator (%d rank%s)", c->size, c->size == 1 ? "" : "s");
  ncclResult_t e = ncclCommSplit(n->comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &sub, NULL);
  watchdog_leave(tok);
  NCCL_CHECK(n->comm, e);
  if (!sub) return DDP_OK;
  char label[32];
  snprintf(label, sizeof label, "group %d", color);
  nccl_account_comm((unsigned long long)(uintptr_t)sub, label, begin);
  return wrap(out, sub, c->dev);
}

static ddp_result wrap(ddp_comm **out, ncclComm_t comm, ddp_device *dev) {
  ddp_comm *c = calloc(1, sizeof *c);
  nccl_impl *n = calloc(1, sizeof *n);
  if (!c || !n) {
    free(c);
    free(n);
    ncclCommDestroy(comm);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  n->comm = comm;
  c->impl = n;
  c->name = "nccl";
  c->dev = dev;
  c->allreduce = nc_allreduce;
  c->broadcast = nc_broadcast;
  c->collective = nc_coll;
  c->barrier = nc_barrier;
  c->split = nc_split;
  c->check = nc_check;
  c->record_choices = nc_record_choices;
  c->abort = nc_abort;
  c->destroy = nc_destroy;
  *out = c;
  NCCL_CHECK(comm, ncclCommUserRank(comm, &c->rank));
  NCCL_CHECK(comm, ncclCommCount(comm, &c->size));
  CUDA_CHECK(cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaMalloc((void **)&n->scratch, sizeof(float)));
  CUDA_CHECK(cudaMemset(n->scratch, 0, sizeof(float)));
  return DDP_OK;
}

ddp_result comm_nccl_create(ddp_comm **out, MPI_Comm mpi_comm, ddp_device *dev) {
  *out = NULL;
  if (dev->host_memory) return ddp_usage_error("comm nccl needs the cuda device");
  int rank, size;
  DDP_CHECK_MPI(MPI_Comm_rank(mpi_comm, &rank));
  DDP_CHECK_MPI(MPI_Comm_size(mpi_comm, &size));
  nccl_account_setup(); /* before NCCL's first call: it reads NCCL_DEBUG* once */
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  if (rank == 0) NCCL_CHECK(NULL, ncclGetUniqueId(&id));
  DDP_CHECK_MPI(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, mpi_comm));
  ncclComm_t comm = NULL;
  size_t begin = nccl_account_offset();
  /* The same text on every rank (not "rank R of N"): the watchdog's majority rule compares them. */
  unsigned tok = watchdog_enter("ncclCommInitRank (%d rank%s)", size, size == 1 ? "" : "s");
  ncclResult_t e = ncclCommInitRank(&comm, size, id, rank);
  watchdog_leave(tok);
  NCCL_CHECK(NULL, e);
  nccl_account_comm((unsigned long long)(uintptr_t)comm, "world", begin);
  ddp_result r = wrap(out, comm, dev);
  if (r != DDP_OK && *out) {
    nc_destroy(*out);
    *out = NULL;
  }
  return r;
}

void comm_nccl_versions(ddp_versions *v) {
  int code = 0;
  snprintf(v->nccl_header, sizeof v->nccl_header, "%d.%d.%d", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  if (ncclGetVersion(&code) == ncclSuccess) /* 22809 = 2.28.9 (codes >= 2.9 are major*10000+minor*100+patch) */
    snprintf(v->nccl_runtime, sizeof v->nccl_runtime, "%d.%d.%d", code / 10000, (code % 10000) / 100, code % 100);
  Dl_info info;
  if (dladdr((void *)ncclGetVersion, &info) && info.dli_fname) {
    char *real = realpath(info.dli_fname, NULL);
    snprintf(v->nccl_library, sizeof v->nccl_library, "%s", real ? real : info.dli_fname);
    free(real);
  }
}
