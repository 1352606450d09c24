/* gpu_diag.h: the 'GPU not used' diagnosis. When a host has an NVIDIA GPU (PCI scan or NVML) but CUDA sees
 * none, ddpbench must say why instead of running on the CPU: a driver older than the CUDA runtime,
 * CUDA_VISIBLE_DEVICES empty or naming GPUs that do not exist, compute mode prohibited, MIG enabled without a
 * MIG device, no access to /dev/nvidia*, or a build without CUDA. The facts are gathered in one place
 * (gpu_diag_gather: environment, NVML, /dev, hwloc) and judged by a pure function (gpu_diag_explain), so
 * tests can state any combination; gpu_diag_nvidia_not_used does both on this machine, with CUDA's own probe
 * (device_cuda_probe). Nothing here prints or exits.
 *
 * defines: gpu_diag_facts, gpu_diag_gather, gpu_diag_count_pci, gpu_diag_explain, gpu_diag_nvidia_not_used */
#ifndef DDPBENCH_GPU_DIAG_H
#define DDPBENCH_GPU_DIAG_H

#include <stddef.h>

#include "nvml_dl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPU_DIAG_MAX 16

typedef struct {
  int nvidia_pci;          /* NVIDIA GPUs (class 0x0300/0x0302) in the PCI scan; -1 unknown */
  int nvml_gpus;           /* GPUs NVML counts; -1 when NVML is unusable */
  char nvml_why[128];      /* why NVML is unusable ("" when it is) */
  char uuid[GPU_DIAG_MAX][96];
  unsigned prohibited;     /* bit i: NVML GPU i is in compute mode Prohibited */
  unsigned mig;            /* bit i: MIG mode is enabled on NVML GPU i */
  char driver_version[32]; /* "580.159.04", "" unknown */
  int driver_cuda;         /* CUDA version the driver supports (13000 = 13.0); 0 unknown */
  int cvd_set;             /* CUDA_VISIBLE_DEVICES is set */
  char cvd[256];
  char dev_problem[192];   /* "/dev/nvidiactl: No such file or directory", "" when the device files are usable */
  /* CUDA's view, filled by the caller (device_cuda_probe): */
  int cuda_built;          /* this build has the CUDA device */
  int cuda_count;          /* devices the CUDA runtime sees */
  int runtime_cuda;        /* the CUDA runtime ddpbench runs with (13000 = 13.0) */
  char cuda_error[160];    /* cudaGetDeviceCount's error, "" when it succeeded */
} gpu_diag_facts;

/* NVIDIA display/3D controllers in hwloc's PCI scan of this machine; -1 when hwloc cannot scan. */
int gpu_diag_count_pci(void);

/* Fills the facts that do not come from CUDA: nvidia_pci as given, NVML (api may be NULL: nvml_why is then
 * why_nvml), the environment, and the device files under dev_dir ("/dev"; tests pass a directory of
 * their own). CUDA fields are zeroed. */
void gpu_diag_gather(gpu_diag_facts *f, int nvidia_pci, const nvml_api *api, const char *why_nvml,
                     const char *dev_dir);

/* The causes, most specific first, one sentence each with what to do; returns how many (0 when the host has
 * no NVIDIA GPU, or CUDA sees at least one). When none of the known causes fits, one cause quotes CUDA's
 * own error. */
int gpu_diag_explain(const gpu_diag_facts *f, char causes[][256], int max);
/* The whole diagnosis on this machine: gather (NVML, the PCI bus, /dev, CUDA's own probe), then explain. */
int gpu_diag_nvidia_not_used(char causes[][256], int max);

#ifdef __cplusplus
}
#endif
#endif
