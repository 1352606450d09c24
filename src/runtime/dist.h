/* dist.h: the MPI control plane: start and stop MPI, who this rank is (rank, local rank on its node, host,
 * a host identity that tells apart machines sharing a hostname), small host-side collectives used to
 * gather results on rank 0, and the abort path. Training data never goes through here (that is the comm
 * interface, comm.h); this is what every launcher (mpirun, srun) needs anyway. */
#ifndef DDPBENCH_DIST_H
#define DDPBENCH_DIST_H

#include <mpi.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int rank, size;             /* in MPI_COMM_WORLD */
  int local_rank, local_size; /* among ranks sharing this node (MPI_COMM_TYPE_SHARED) */
  int node_index, node_count; /* this node's index among all nodes, in order of their lowest rank */
  char host[256];             /* gethostname() */
  char boot_id[64];           /* /proc/sys/kernel/random/boot_id, "" if unreadable */
  uint64_t host_hash;         /* hash of host + boot id: hostnames can repeat (containers, VMs) */
  MPI_Comm world;             /* MPI_COMM_WORLD */
  MPI_Comm node;              /* the ranks of this node */
} ddp_dist;

ddp_result mpi_fail(int err, const char *call, const char *file, int line);
#define DDP_CHECK_MPI(call)                                      \
  do {                                                           \
    int e_ = (call);                                             \
    if (e_ != MPI_SUCCESS) return mpi_fail(e_, #call, __FILE__, __LINE__); \
  } while (0)

/* Starts MPI (MPI_THREAD_MULTIPLE required: fails without it), fills d, sets the rank/host identity for error lines. */
ddp_result dist_init(int *argc, char ***argv, ddp_dist *d);
/* The test hook DDPBENCH_TEST_RANKS_PER_NODE=K (testhooks.h): every K consecutive ranks are one node, named
 * nodeNN, as measurements, groups and reports see nodes (node_index, node_count, host). The node communicator,
 * local_rank and local_size stay the machine's (they order what shares one machine: barriers, GPUs). No-op
 * when unset. */
void dist_emulate_nodes(ddp_dist *d);
/* Frees the node communicator and finalizes MPI. */
void dist_finalize(ddp_dist *d);
/* Ends every rank of the job with this exit code; never returns. The only exit path for runtime errors. */
void dist_abort(int code) __attribute__((noreturn));

/* Gathers `bytes` from every rank into `all` (size * bytes) on every rank. */
ddp_result dist_allgather(const ddp_dist *d, const void *mine, void *all, int bytes);
/* Sum / min / max of one int over all ranks, result on every rank. */
ddp_result dist_allreduce_int(const ddp_dist *d, int *v, MPI_Op op);
/* MPI library version string (first line of MPI_Get_library_version). */
const char *dist_mpi_version(void);

#ifdef __cplusplus
}
#endif
#endif
