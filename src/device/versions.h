/* versions.h: the software stack one rank actually loaded: MPI, BLAS, CUDA driver and runtime, cuBLAS,
 * NCCL (header it was built with, library it runs with, and that library's path), hwloc. Collected once
 * per rank; reported per rank and compared across ranks, since mismatches between ranks cost GPU users
 * the most time. Strings are "" where the component is absent (e.g. a build without CUDA). */
#ifndef DDPBENCH_VERSIONS_H
#define DDPBENCH_VERSIONS_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char ddpbench[32];
  char mpi[160];           /* MPI_Get_library_version, first line */
  char blas[160];          /* openblas_get_config() */
  char hwloc[32];          /* hwloc_get_api_version() as x.y.z */
  char cuda_driver[32];    /* cudaDriverGetVersion as x.y, "" without CUDA; "none" when no driver */
  char nvidia_driver[32];  /* NVML driver version (e.g. 580.159.04), "" if NVML is absent */
  char cuda_runtime[32];   /* cudaRuntimeGetVersion as x.y */
  char cublas[32];         /* cublasGetProperty major.minor.patch */
  char nccl_header[32];    /* NCCL_MAJOR.NCCL_MINOR.NCCL_PATCH the binary was built with */
  char nccl_runtime[32];   /* ncclGetVersion() */
  char nccl_library[512];  /* path of the libnccl actually loaded (dladdr) */
} ddp_versions;

/* Fills v with what every build has (ddpbench, MPI, BLAS, hwloc, the NVIDIA driver through NVML). The device
 * and comm plug-ins add their own libraries (devices_versions, comms_versions); cmd.h's cmd_versions does all
 * three. Never fails: unknown fields are left "". */
void versions_base(ddp_versions *v);

#ifdef __cplusplus
}
#endif
#endif
