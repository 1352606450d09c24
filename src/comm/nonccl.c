/* nonccl.c: the NCCL comm's entry points in a build without the CUDA toolkit: asking for the comm is a usage
 * error; the profiler plugin (nccl_prof.h) is not built, so its records are "not reported". */
#include <stdio.h>

#include "comm.h"
#include "nccl_prof.h"

ddp_result comm_nccl_create(ddp_comm **out, MPI_Comm mpi_comm, ddp_device *dev) {
  *out = NULL;
  return ddp_usage_error("this ddpbench was built without CUDA: --comm nccl is not available");
}

static const char no_nccl[] = "not reported: this ddpbench was built without NCCL";

int nccl_prof_setup_env(const char *exe_dir, char *why, size_t n) {
  if (why && n) snprintf(why, n, "%s", no_nccl);
  return 0;
}

int nccl_prof_enable(int on, char *why, size_t n) {
  if (why && n) snprintf(why, n, "%s", no_nccl);
  return -1;
}

int nccl_prof_take(ddpbench_prof_record *out, int max, long *dropped, char *why, size_t n) {
  if (dropped) *dropped = 0;
  if (why && n) snprintf(why, n, "%s", no_nccl);
  return -1;
}
