/* dist.c: MPI start-up (rank, local rank, host identity), the host-side collectives used to gather
 * results, and the abort path. All MPI calls are checked; failures are returned with rank and host. */
#include "dist.h"
#include "testhooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ddp_result mpi_fail(int err, const char *call, const char *file, int line) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(err, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", err);
  return ddp_fail(DDP_ERR_MPI, file, line, "%s: %s", call, msg);
}

static void read_boot_id(char *buf, size_t n) {
  buf[0] = 0;
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (!f) return;
  if (fgets(buf, (int)n, f)) buf[strcspn(buf, "\n")] = 0;
  fclose(f);
}

ddp_result dist_init(int *argc, char ***argv, ddp_dist *d) {
  memset(d, 0, sizeof *d);
  int provided = 0;
  DDP_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
  /* MPI is called from other threads than main: the watchdog's abort, and the staged MPI comm's host
   * functions on the device's stream worker. Without MPI_THREAD_MULTIPLE that is undefined behaviour. */
  if (provided < MPI_THREAD_MULTIPLE)
    return DDP_FAIL(DDP_ERR_MPI, "the MPI library grants thread level %d, not MPI_THREAD_MULTIPLE (%d), which "
                                 "ddpbench needs (its watchdog and stream callbacks call MPI): use an MPI built with "
                                 "thread support", provided, MPI_THREAD_MULTIPLE);
  d->world = MPI_COMM_WORLD;
  /* Errors come back as return codes so that they can be reported with rank, host, file and line. */
  DDP_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  DDP_CHECK_MPI(MPI_Comm_rank(d->world, &d->rank));
  DDP_CHECK_MPI(MPI_Comm_size(d->world, &d->size));
  if (gethostname(d->host, sizeof d->host) != 0) snprintf(d->host, sizeof d->host, "unknown");
  d->host[sizeof d->host - 1] = 0;
  ddp_set_identity(d->rank, d->host);
  read_boot_id(d->boot_id, sizeof d->boot_id);
  d->host_hash = ddp_fnv1a64(d->boot_id, strlen(d->boot_id), ddp_fnv1a64(d->host, strlen(d->host), DDP_FNV1A64_INIT));

  DDP_CHECK_MPI(MPI_Comm_split_type(d->world, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &d->node));
  DDP_CHECK_MPI(MPI_Comm_set_name(d->node, "this host's ranks")); /* the watchdog names it (mpi_where.c) */
  DDP_CHECK_MPI(MPI_Comm_rank(d->node, &d->local_rank));
  DDP_CHECK_MPI(MPI_Comm_size(d->node, &d->local_size));
  /* Node index: number of distinct nodes whose lowest world rank is below ours. */
  int leader = d->rank;
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, d->node));
  int *leaders = malloc((size_t)d->size * sizeof *leaders);
  DDP_CHECK_ALLOC(leaders);
  int err = MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, d->world);
  if (err != MPI_SUCCESS) {
    free(leaders);
    return mpi_fail(err, "MPI_Allgather(leaders)", __FILE__, __LINE__);
  }
  d->node_count = 0;
  d->node_index = 0;
  for (int r = 0; r < d->size; r++) {
    if (leaders[r] != r) continue; /* r leads its node */
    if (r < leader) d->node_index++;
    d->node_count++;
  }
  free(leaders);
  return DDP_OK;
}

void dist_emulate_nodes(ddp_dist *d) {
  int k = testhook_int(HOOK_RANKS_PER_NODE, 0);
  if (k <= 0) return;
  d->node_index = d->rank / k;
  d->node_count = (d->size + k - 1) / k;
  snprintf(d->host, sizeof d->host, "node%02d", d->node_index);
}

void dist_finalize(ddp_dist *d) {
  if (d->node != MPI_COMM_NULL && d->node != 0) MPI_Comm_free(&d->node);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void dist_abort(int code) {
  fflush(stdout);
  fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
  _exit(code);
}

ddp_result dist_allgather(const ddp_dist *d, const void *mine, void *all, int bytes) {
  DDP_CHECK_MPI(MPI_Allgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, d->world));
  return DDP_OK;
}

ddp_result dist_allreduce_int(const ddp_dist *d, int *v, MPI_Op op) {
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INT, op, d->world));
  return DDP_OK;
}

const char *dist_mpi_version(void) {
  static char version[MPI_MAX_LIBRARY_VERSION_STRING];
  if (!version[0]) {
    int len = 0;
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) snprintf(version, sizeof version, "unknown");
    version[strcspn(version, "\n,")] = 0; /* "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4" */
  }
  return version;
}
