/* comm.h: the comm interface, a struct of function pointers that MPI (mpi.c) and NCCL (nccl.c)
 * fill in. Data-plane collectives over device buffers, ordered on a device stream: the result is visible
 * to work enqueued on that stream after the call, and to other streams through an event recorded there.
 * The engine never calls MPI or NCCL collectives itself. Control-plane traffic (gathering results) goes
 * through dist.h instead. */
#ifndef DDPBENCH_COMM_H
#define DDPBENCH_COMM_H

#include <stddef.h>

#include "common.h"
#include "device.h"
#include "dist.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The collectives of `ddpbench collectives`, with NCCL's argument conventions (nccl-tests' names). */
typedef enum {
  COLL_ALLREDUCE = 0,
  COLL_REDUCE_SCATTER,
  COLL_ALL_GATHER,
  COLL_BROADCAST,
  COLL_ALLTOALL,
  COLL_REDUCE,
  COLL_GATHER,
  COLL_SCATTER,
  COLL_SENDRECV,
  COLL_ALLTOALLV,
  COLL_COUNT
} ddp_coll_kind;
typedef enum { REDOP_SUM = 0, REDOP_PROD, REDOP_MAX, REDOP_MIN, REDOP_AVG, REDOP_COUNT } ddp_redop;

/* One collective. count is NCCL's count argument: the elements of each rank's buffer for allreduce,
 * broadcast, reduce and sendrecv, recvcount for reduce_scatter (send holds size * count), sendcount for
 * all_gather (recv holds size * count), the per-peer count for alltoall, gather (root's recv holds size *
 * count) and scatter (root's send holds size * count). sendrecv sends to rank + 1 and receives from rank - 1
 * (nccl-tests' sendrecv_perf). alltoallv takes its counts from `counts` instead, n x n elements (n = the
 * group's size), counts[i * n + j] from rank i to rank j, packed in rank order in both buffers (MPI_Alltoallv
 * with displacements that are the running sums); count is only a label there. The comm reads `counts` while
 * the call is enqueued (a CUDA graph replays what it read then).
 *
 * In-place as NCCL defines it: send == recv (allreduce, broadcast, reduce), send == recv + rank * count
 * (all_gather, gather), recv == send + rank * count (reduce_scatter, scatter). alltoall, alltoallv and sendrecv
 * must be out-of-place (NCCL's grouped send/recv would race on one buffer): the comms refuse them in place.
 * Rooted calls leave what the root alone owns untouched elsewhere: reduce and gather never write recv on other
 * ranks, scatter never reads send there (nccl-tests checks the first).
 * op applies to allreduce, reduce_scatter and reduce; avg divides the sum by the group size (NCCL: fp types
 * pre-multiply by 1/size, integers divide after the sum); root to broadcast, reduce, gather and scatter. */
typedef struct {
  ddp_coll_kind kind;
  const void *send;
  void *recv;
  size_t count;
  ddp_dtype dt;
  ddp_redop op;
  int root;
  const size_t *counts; /* alltoallv only */
} ddp_coll;

static inline int coll_is_reduction(ddp_coll_kind k) {
  return k == COLL_ALLREDUCE || k == COLL_REDUCE_SCATTER || k == COLL_REDUCE;
}
static inline int coll_is_rooted(ddp_coll_kind k) {
  return k == COLL_BROADCAST || k == COLL_REDUCE || k == COLL_GATHER || k == COLL_SCATTER;
}
/* The collectives that NCCL (and so the comms) run out-of-place only. */
static inline int coll_out_of_place_only(ddp_coll_kind k) {
  return k == COLL_ALLTOALL || k == COLL_ALLTOALLV || k == COLL_SENDRECV;
}

/* Elements of the send and the receive buffer that rank `rank`'s call touches (0 where NCCL ignores the
 * buffer: recv of reduce and gather, send of scatter, off the root). */
static inline size_t coll_send_count(const ddp_coll *c, int rank, int size) {
  size_t n = 0;
  switch (c->kind) {
    case COLL_REDUCE_SCATTER:
    case COLL_ALLTOALL: return c->count * (size_t)size;
    case COLL_SCATTER: return rank == c->root ? c->count * (size_t)size : 0;
    case COLL_ALLTOALLV:
      for (int j = 0; j < size; j++) n += c->counts[(size_t)rank * size + j];
      return n;
    default: return c->count;
  }
}
static inline size_t coll_recv_count(const ddp_coll *c, int rank, int size) {
  size_t n = 0;
  switch (c->kind) {
    case COLL_ALL_GATHER:
    case COLL_ALLTOALL: return c->count * (size_t)size;
    case COLL_GATHER: return rank == c->root ? c->count * (size_t)size : 0;
    case COLL_REDUCE: return rank == c->root ? c->count : 0;
    case COLL_ALLTOALLV:
      for (int i = 0; i < size; i++) n += c->counts[(size_t)i * size + rank];
      return n;
    default: return c->count;
  }
}

typedef struct ddp_comm ddp_comm;
struct ddp_comm {
  const char *name; /* "mpi" or "nccl" */
  int rank, size;
  ddp_device *dev;
  void *impl;
  /* In-place sum of count elements of buf across the group, ordered on stream s. */
  ddp_result (*allreduce)(ddp_comm *, void *buf, size_t count, ddp_dtype dt, ddp_stream *s);
  /* Copies root's buf to every rank, ordered on stream s. */
  ddp_result (*broadcast)(ddp_comm *, void *buf, size_t count, ddp_dtype dt, int root, ddp_stream *s);
  /* Any collective of ddp_coll, ordered on stream s like the two above. Buffers are device memory. Calls
   * of this kind must be enqueued on one stream at a time (MPI stages device memory through one shared
   * buffer). */
  ddp_result (*collective)(ddp_comm *, const ddp_coll *args, ddp_stream *s);
  /* Returns when every rank of the group has called it (host-side). */
  ddp_result (*barrier)(ddp_comm *);
  /* Collective: ranks with the same color >= 0 form a new group ordered by key; color < 0 gets *out = NULL. */
  ddp_result (*split)(ddp_comm *, int color, int key, ddp_comm **out);
  /* Non-blocking check for an asynchronous failure (a peer died, a network error). */
  ddp_result (*check)(ddp_comm *);
  /* Records what the transport chose for each collective (NCCL: algorithm, protocol, channels) from the next
   * call on (on = 1), or stops and keeps it (0) for the result's account (nccl_account.h). Only around
   * untimed calls: never inside a timed loop. NULL when the transport tells nothing. */
  void (*record_choices)(ddp_comm *, int on);
  /* Tear down without waiting for peers (on the error path before MPI_Abort). */
  void (*abort)(ddp_comm *);
  void (*destroy)(ddp_comm *);
};

/* ---- the comms of this build, as a table (comms.c) -------------------------------------------------
 * A transport is a ddp_comm implementation and one entry here: RCCL is comm/rccl.c and its line in comms.c. */
typedef struct comm_entry {
  const char *name;         /* as --comm spells it */
  const char *needs_device; /* the device it works with only ("cuda"), or NULL for any */
  ddp_result (*create)(ddp_comm **out, MPI_Comm mpi_comm, ddp_device *dev);
  void (*versions)(ddp_versions *v); /* optional: the library it loaded */
} comm_entry;

const comm_entry *comm_at(int i); /* NULL past the end */
const comm_entry *comm_named(const char *name);
/* The comm --comm auto picks on a device named dev: one that needs exactly this device, else the first that
 * needs none. */
const comm_entry *comm_auto(const char *dev);
/* --comm's choices for the option layer, as device_choice (0 = auto). */
int comm_choice(int i, const char **name);
const comm_entry *comm_chosen(int value);
ddp_result comm_register(const comm_entry *e);
void comms_versions(ddp_versions *v);

/* ---- the built-in comms ------------------------------------------------------------------------------- */
/* MPI over `mpi_comm` (duplicated). With a device whose memory is not host memory, buffers are staged
 * through pinned host memory on the stream (works whether or not MPI is CUDA-aware). */
ddp_result comm_mpi_create(ddp_comm **out, MPI_Comm mpi_comm, ddp_device *dev);
/* NCCL over the ranks of `mpi_comm` (the unique id is broadcast over it). DDP_ERR_USAGE without CUDA. */
ddp_result comm_nccl_create(ddp_comm **out, MPI_Comm mpi_comm, ddp_device *dev);
/* The NCCL header, library and path this process loaded (CUDA builds only: see registry.c). */
void comm_nccl_versions(ddp_versions *v);

#ifdef __cplusplus
}
#endif
#endif
