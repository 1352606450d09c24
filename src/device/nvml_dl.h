/* nvml_dl.h: NVML reached at run time through dlopen("libnvidia-ml.so.1") and a table of function pointers,
 * with ddpbench's own minimal declarations (the build machine has no nvml.h), and the per-GPU query built on
 * that table: identity, PCIe generation/width, NVLink links and what is at their far end. Tests fill the
 * table with a fake NVML. Nothing here may include nvml.h, link libnvidia-ml, or treat a missing NVML as
 * an error: without it the report says "NVLink: unknown" and everything else still works.
 *
 * defines: nvml_api (the table), nvml_gpu (one GPU's answers), nvml_open / nvml_close, nvml_driver_versions,
 *          nvml_gpu_query, nvml_gpu_link_peak_gbs, nvml_gpu_pcie_has, nvml_pcie_gen_str / _width_str, nvml_link_version_str,
 *          nvml_busid_normalize. The burn-in counters built on the table: nvml_counters.h */
#ifndef DDPBENCH_NVML_DL_H
#define DDPBENCH_NVML_DL_H

#include <stddef.h>

#include "clock_reasons.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the subset of NVML's ABI that ddpbench uses (values as in NVML's documentation) ---- */
typedef struct nvml_device_st *nvml_device; /* opaque handle, like nvmlDevice_t */
typedef int nvml_return;                    /* nvmlReturn_t; enums are int-sized */
enum {
  NVML_DL_SUCCESS = 0,
  NVML_DL_ERROR_UNINITIALIZED = 1,
  NVML_DL_ERROR_INVALID_ARGUMENT = 2,
  NVML_DL_ERROR_NOT_SUPPORTED = 3,
  NVML_DL_ERROR_NO_PERMISSION = 4,
  NVML_DL_ERROR_NOT_FOUND = 6,
  NVML_DL_ERROR_TIMEOUT = 10, /* nvmlEventSetWait_v2: no event within the timeout */
  NVML_DL_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_DL_ERROR_GPU_IS_LOST = 15,
  NVML_DL_ERROR_UNKNOWN = 999,
};
enum { NVML_DL_LINK_DISABLED = 0, NVML_DL_LINK_ENABLED = 1 }; /* nvmlEnableState_t */
enum {                                                        /* nvmlIntNvLinkDeviceType_t */
       NVML_DL_REMOTE_GPU = 0x00,
       NVML_DL_REMOTE_IBMNPU = 0x01, /* a CPU (POWER) */
       NVML_DL_REMOTE_SWITCH = 0x02,
       NVML_DL_REMOTE_UNKNOWN = 0xFF,
};
/* nvmlPciInfo_t as used by the _v2/_v3 entry points (68 bytes); pair it only with those symbols. */
typedef struct {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
} nvml_pci_info;
typedef struct {
  unsigned long long total, free, used;
} nvml_memory; /* nvmlMemory_t */

/* nvmlViolationTime_t (nvmlDeviceGetViolationStatus): referenceTime in microseconds of CPU time,
 * violationTime in nanoseconds, cumulative since the driver loaded. */
typedef struct {
  unsigned long long reference_us, violation_ns;
} nvml_violation_time;
/* nvmlEventSet_t and nvmlEventData_t (NVML nvml.h, NVML_API_VERSION 13), the struct nvmlEventSetWait_v2 fills:
 * event_data is the Xid number for nvmlEventTypeXidCriticalError (999 when the driver does not know it). */
typedef struct nvml_event_set_st *nvml_event_set;
typedef struct {
  nvml_device device;
  unsigned long long event_type, event_data;
  unsigned gpu_instance_id, compute_instance_id; /* 0xFFFFFFFF unless MIG attributes the event */
} nvml_event_data;

/* The table. A NULL entry means "this NVML lacks the symbol"; every caller copes with that. */
typedef struct {
  void *lib; /* dlopen handle; NULL for a fake */
  nvml_return (*init)(void);
  nvml_return (*shutdown)(void);
  const char *(*error_string)(nvml_return);
  nvml_return (*system_driver_version)(char *version, unsigned length);
  nvml_return (*system_cuda_driver_version)(int *version); /* 13000 = 13.0 */
  nvml_return (*handle_by_busid)(const char *busid, nvml_device *dev);
  nvml_return (*name)(nvml_device dev, char *name, unsigned length);
  nvml_return (*uuid)(nvml_device dev, char *uuid, unsigned length);
  nvml_return (*compute_capability)(nvml_device dev, int *major, int *minor);
  nvml_return (*memory_info)(nvml_device dev, nvml_memory *mem);
  nvml_return (*pcie_gen)(nvml_device dev, unsigned *gen);     /* current */
  nvml_return (*pcie_gen_max)(nvml_device dev, unsigned *gen); /* max of GPU and system */
  nvml_return (*pcie_width)(nvml_device dev, unsigned *width); /* current */
  nvml_return (*pcie_width_max)(nvml_device dev, unsigned *width);
  nvml_return (*nvlink_state)(nvml_device dev, unsigned link, unsigned *active);
  nvml_return (*nvlink_version)(nvml_device dev, unsigned link, unsigned *version); /* nvmlNvlinkVersion_t */
  nvml_return (*nvlink_remote_pci)(nvml_device dev, unsigned link, nvml_pci_info *pci);
  nvml_return (*nvlink_remote_type)(nvml_device dev, unsigned link, unsigned *type);
  /* the GPU-not-used diagnosis */
  nvml_return (*device_count)(unsigned *count);
  nvml_return (*handle_by_index)(unsigned index, nvml_device *dev);
  nvml_return (*compute_mode)(nvml_device dev, int *mode); /* nvmlComputeMode_t: 2 = prohibited */
  nvml_return (*mig_mode)(nvml_device dev, unsigned *current, unsigned *pending); /* 1 = enabled */
  /* health: sampled during the sustained GEMM */
  nvml_return (*clock)(nvml_device dev, int type, unsigned *mhz); /* type 1 = NVML_CLOCK_SM */
  nvml_return (*power_usage)(nvml_device dev, unsigned *mw);
  nvml_return (*power_limit)(nvml_device dev, unsigned *mw);     /* enforced */
  nvml_return (*temperature)(nvml_device dev, int sensor, unsigned *c); /* sensor 0 = the GPU die */
  nvml_return (*clocks_event_reasons)(nvml_device dev, unsigned long long *reasons);
  /* error type 0 corrected / 1 uncorrected; counter 0 volatile / 1 aggregate; location: all memories */
  nvml_return (*ecc_total)(nvml_device dev, int error_type, int counter_type, unsigned long long *count);
  nvml_return (*remapped_rows)(nvml_device dev, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failure);
  /* burn-in counters (nvml_counters.h); each may be NULL on an older driver */
  nvml_return (*pcie_gen_gpu_max)(nvml_device dev, unsigned *gen); /* the GPU's own max, whatever the slot */
  nvml_return (*pcie_replay)(nvml_device dev, unsigned *count);
  nvml_return (*retired_pending)(nvml_device dev, unsigned *pending); /* nvmlEnableState_t */
  nvml_return (*nvlink_error_counter)(nvml_device dev, unsigned link, int counter, unsigned long long *value);
  nvml_return (*violation_status)(nvml_device dev, int policy, nvml_violation_time *t);
  nvml_return (*event_set_create)(nvml_event_set *set);
  nvml_return (*register_events)(nvml_device dev, unsigned long long types, nvml_event_set set);
  nvml_return (*event_set_wait)(nvml_event_set set, nvml_event_data *data, unsigned timeout_ms); /* _v2 */
  nvml_return (*event_set_free)(nvml_event_set set);
} nvml_api;

enum { NVML_DL_COMPUTE_PROHIBITED = 2 };

/* nvml_gpu.pcie_known bits */
enum { NVML_GPU_PCIE_GEN = 1, NVML_GPU_PCIE_GEN_MAX = 2, NVML_GPU_PCIE_WIDTH = 4, NVML_GPU_PCIE_WIDTH_MAX = 8 };

/* Links probed per GPU: 18 on H100/H200/B200, 36 in CUDA 13.3's NVML header. Past the GPU's real count
 * NVML answers INVALID_ARGUMENT or NOT_SUPPORTED, which ends the probe. */
#define NVML_DL_MAX_LINKS 36
#define NVML_DL_MAX_PEERS 16

/* One GPU as NVML sees it. Fixed size and pointer-free: ranks send it to rank 0 as bytes. */
typedef struct {
  int known;      /* 1 when NVML found this GPU; everything below is meaningful only then */
  char error[96]; /* why not, when known == 0 ("" if NVML is simply absent) */
  char name[96], uuid[96];
  int cc_major, cc_minor; /* -1 when unknown */
  unsigned long long memory_bytes;
  /* PCIe link as NVML reports it. A figure is meaningful only where its NVML_GPU_PCIE_* bit is set in
   * pcie_known: a driver that lacks the symbol, or answers NOT_SUPPORTED, leaves the bit clear (the value is
   * then 0, which is never to be read as a link trained at x0 or Gen0: print it as unknown, judge nothing). */
  unsigned pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
  unsigned pcie_known;
  int nvlink_known;                                            /* 1 when the link probe ran */
  int links_total, links_active;
  unsigned link_version;                     /* NVML enum of the first active link (6 = NVLink 4.0), 0 unknown */
  int to_gpu, to_switch, to_cpu, to_unknown; /* active links by the type of their far end */
  int npeers;                                /* GPUs at the far end of direct links, with their link counts */
  struct {
    char busid[20];
    int links;
  } peer[NVML_DL_MAX_PEERS];
} nvml_gpu;

/* 1 when NVML measured every PCIe figure named by `bits` (NVML_GPU_PCIE_*) for this GPU. */
static inline int nvml_gpu_pcie_has(const nvml_gpu *g, unsigned bits) {
  return g->known && (g->pcie_known & bits) == bits;
}
/* "gen5" / "x16", or "gen?" / "x?" where the figure was not measured; buf returned. */
const char *nvml_pcie_gen_str(const nvml_gpu *g, int max, char *buf, size_t n);
const char *nvml_pcie_width_str(const nvml_gpu *g, int max, char *buf, size_t n);

/* Loads libnvidia-ml.so.1 and calls nvmlInit. Returns 1 and fills api when NVML is usable; returns 0 and
 * writes the reason to why (e.g. "libnvidia-ml.so.1: cannot open shared object file") otherwise, leaving
 * api zeroed. Never fails the program. Each successful open needs one nvml_close. */
int nvml_open(nvml_api *api, char *why, size_t why_len);
/* nvmlShutdown and dlclose; api is zeroed. Safe on a zeroed or fake table (fakes: only shutdown is called). */
void nvml_close(nvml_api *api);
/* Driver version ("580.159.04") and the CUDA version the driver supports ("13.0"); "" where unknown.
 * api may be NULL. */
void nvml_driver_versions(const nvml_api *api, char *driver, size_t driver_len, char *cuda, size_t cuda_len);
/* Asks NVML about the GPU at PCI bus id `busid` (any of "0000:06:00.0", "00000000:06:00.0", "06:00.0").
 * Fills *out (zeroed first); out->known = 0 when api is NULL or NVML does not know the GPU. Links whose
 * state query fails after the first are counted as absent; remote types come from
 * nvlink_remote_type, or, where that symbol is missing, from the remote bus id (domain 0xffffffff =
 * hidden NVSwitch, as NCCL assumes in VMs). */
void nvml_gpu_query(const nvml_api *api, const char *busid, nvml_gpu *out);
/* The peak of the fastest link NVML tells for this GPU, GB/s (1e9), both directions together (a collective's
 * algbw never exceeds one direction's): its active NVLinks at their version's rate, else its PCIe link at the
 * highest generation and width of slot and GPU; 0 (no bound) when it tells neither. why says which, or why
 * none. The cuda device's max_link_gbs. */
double nvml_gpu_link_peak_gbs(const nvml_gpu *g, char *why, size_t n);
/* "4.0" for NVML's NVLink version enum 6, "?" for values it does not know. */
const char *nvml_link_version_str(unsigned version);
/* Writes bus id `in` in hwloc's form "dddd:bb:dd.f" (lower case, 4-digit domain unless it needs more).
 * Returns 0, or -1 when `in` is not a PCI bus id (out is then ""). Domain 0xffffffff is kept as
 * "ffffffff:ff:ff.0": NVML's marker for a device hidden from this OS. */
int nvml_busid_normalize(const char *in, char *out, size_t n);

/* One sample of a GPU under load. Fields NVML refused stay 0 (known says which were read). */
typedef struct {
  int known; /* bit 0 clock, 1 power, 2 temperature, 3 reasons */
  unsigned sm_mhz, temp_c;
  double power_w, power_limit_w;
  unsigned long long reasons; /* clocks event reasons */
} nvml_sample;
void nvml_sample_read(const nvml_api *api, nvml_device dev, nvml_sample *s);

/* Memory health counters. -1 where the GPU or NVML does not report the field. */
typedef struct {
  long long ecc_corr_volatile, ecc_unc_volatile, ecc_corr_aggregate, ecc_unc_aggregate;
  int rows_corr, rows_unc, rows_pending, rows_failure;
} nvml_mem_health;
void nvml_mem_health_read(const nvml_api *api, nvml_device dev, nvml_mem_health *h);


#ifdef __cplusplus
}
#endif
#endif
