/* cuda_check.h: the CUDA runtime's check macro for the CUDA-side files (device_cuda.c, comm_nccl.c): a
 * failed call returns DDP_ERR_CUDA up the chain with the call, the error's name and text, file and line,
 * tagged with rank and host. Never exits. Only for files built with the CUDA toolkit. */
#ifndef DDPBENCH_CUDA_CHECK_H
#define DDPBENCH_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

ddp_result cuda_fail(cudaError_t e, const char *call, const char *file, int line); /* cuda.c */
#define CUDA_CHECK(call)                                                        \
  do {                                                                          \
    cudaError_t e_ = (call);                                                    \
    if (e_ != cudaSuccess) return cuda_fail(e_, #call, __FILE__, __LINE__);     \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
