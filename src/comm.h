/* comm.h: the comm interface, a struct of function pointers that MPI (comm_mpi.c) and NCCL (comm_nccl.c)
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
  /* Returns when every rank of the group has called it (host-side). */
  ddp_result (*barrier)(ddp_comm *);
  /* Collective: ranks with the same color >= 0 form a new group ordered by key; color < 0 gets *out = NULL. */
  ddp_result (*split)(ddp_comm *, int color, int key, ddp_comm **out);
  /* Non-blocking check for an asynchronous failure (a peer died, a network error). */
  ddp_result (*check)(ddp_comm *);
  /* Tear down without waiting for peers (on the error path before MPI_Abort). */
  void (*abort)(ddp_comm *);
  void (*destroy)(ddp_comm *);
};

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
