/* nocuda.c: the CUDA device's entry points in a build without the CUDA toolkit: no GPU is ever visible, and
 * asking for one is a usage error (the NCCL comm's: comm/nonccl.c). */
#include "device.h"

int device_cuda_count(void) { return 0; }

int device_cuda_probe(char *err, size_t n, int *runtime_version, int *driver_version) {
  *runtime_version = *driver_version = 0;
  if (n) err[0] = 0;
  return -1;
}

ddp_result device_cuda_create(ddp_device **out, int ordinal) {
  *out = NULL;
  return ddp_usage_error("this ddpbench was built without CUDA: --device cuda is not available");
}

ddp_result device_cuda_peer_matrix(int n, size_t bytes, int iters, double *uni, double *bidir, int *peer) {
  return ddp_usage_error("this ddpbench was built without CUDA: the GPU-to-GPU copy matrix needs it");
}

ddp_result device_cuda_bus_id(int ordinal, char *buf, size_t n) {
  if (n) buf[0] = 0;
  return DDP_OK;
}
