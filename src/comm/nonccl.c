/* nonccl.c: the NCCL comm's entry point in a build without the CUDA toolkit: asking for it is a usage error. */
#include "comm.h"

ddp_result comm_nccl_create(ddp_comm **out, MPI_Comm mpi_comm, ddp_device *dev) {
  *out = NULL;
  return ddp_usage_error("this ddpbench was built without CUDA: --comm nccl is not available");
}
