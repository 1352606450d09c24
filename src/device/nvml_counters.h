/* nvml_counters.h: one GPU's hardware counters as NVML gives them, read through the nvml_api table (nvml_dl.h),
 * for a burn-in that reads them at the start and end of each interval: ECC, retired pages and remapped rows,
 * the PCIe link and its replay counter, NVLink per-link state and error counters, clock-event reasons and
 * violation times, temperature, power and SM clock; the deltas between two reads; and Xid events through an
 * NVML event set, with the list of Xids that the field takes for application errors.
 *
 * Every figure carries a measured flag: a symbol the driver lacks, NOT_SUPPORTED, or any other refusal is
 * "not measured", never 0, and a delta is measured only where both ends are. Nothing here judges a figure
 * (the soak's verdicts do that), prints, aborts, or includes NVML nvml.h: the NVML values used are declared below
 * with the NVML name they stand for, as in nvml.h of NVML_API_VERSION 13 (NVIDIA's header, as carried by
 * github.com/NVIDIA/go-nvml gen/nvml/nvml.h).
 *
 * defines: nvml_count, nvml_counters, nvml_counters_read, nvml_counters_delta, nvml_counters_diff,
 *          nvml_count_str, nvml_xid_watch, nvml_xid_event, nvml_xid_watch_open / _close, nvml_xid_poll,
 *          nvml_xid_is_application, nvml_xid_name */
#ifndef DDPBENCH_NVML_COUNTERS_H
#define DDPBENCH_NVML_COUNTERS_H

#include <stddef.h>

#include "nvml_dl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- NVML values used here (nvml.h, NVML_API_VERSION 13) ---- */
enum { /* nvmlMemoryErrorType_t and nvmlEccCounterType_t, for nvmlDeviceGetTotalEccErrors */
       NVML_CTR_ECC_CORRECTED = 0,   /* NVML_MEMORY_ERROR_TYPE_CORRECTED */
       NVML_CTR_ECC_UNCORRECTED = 1, /* NVML_MEMORY_ERROR_TYPE_UNCORRECTED */
       NVML_CTR_ECC_VOLATILE = 0,    /* NVML_VOLATILE_ECC: reset when the driver loads */
};
enum { /* nvmlNvLinkErrorCounter_t, for nvmlDeviceGetNvLinkErrorCounter */
       NVML_CTR_NVLINK_DL_REPLAY = 0,   /* NVML_NVLINK_ERROR_DL_REPLAY: data link transmit replays */
       NVML_CTR_NVLINK_DL_RECOVERY = 1, /* NVML_NVLINK_ERROR_DL_RECOVERY: data link transmit recoveries */
       NVML_CTR_NVLINK_DL_CRC_FLIT = 2, /* NVML_NVLINK_ERROR_DL_CRC_FLIT: receive flow-control digit CRC errors */
       NVML_CTR_NVLINK_DL_CRC_DATA = 3, /* NVML_NVLINK_ERROR_DL_CRC_DATA: receive data CRC errors */
       NVML_CTR_NVLINK_NERR = 4,
};
enum { /* nvmlPerfPolicyType_t, for nvmlDeviceGetViolationStatus (0-5: the limiters; 10, 11 are totals) */
       NVML_CTR_VIOL_POWER = 0,        /* NVML_PERF_POLICY_POWER */
       NVML_CTR_VIOL_THERMAL = 1,      /* NVML_PERF_POLICY_THERMAL */
       NVML_CTR_VIOL_SYNC_BOOST = 2,   /* NVML_PERF_POLICY_SYNC_BOOST */
       NVML_CTR_VIOL_BOARD_LIMIT = 3,  /* NVML_PERF_POLICY_BOARD_LIMIT */
       NVML_CTR_VIOL_LOW_UTIL = 4,     /* NVML_PERF_POLICY_LOW_UTILIZATION */
       NVML_CTR_VIOL_RELIABILITY = 5,  /* NVML_PERF_POLICY_RELIABILITY */
       NVML_CTR_NVIOL = 6,
};
#define NVML_CTR_EVENT_XID_CRITICAL 0x0000000000000008ULL /* nvmlEventTypeXidCriticalError */
#define NVML_CTR_XID_UNKNOWN 999ULL                       /* nvmlEventData_t.eventData for an Xid NVML cannot name */
enum { NVML_CTR_CLOCK_SM = 1, NVML_CTR_TEMPERATURE_GPU = 0 }; /* nvmlClockType_t, nvmlTemperatureSensors_t */

/* ---- one figure ---- */
typedef struct {
  unsigned long long v; /* meaningful only when measured */
  int measured;         /* 1: NVML answered; 0: symbol missing or the query refused */
} nvml_count;

/* "123", or "-" when not measured; buf returned. */
const char *nvml_count_str(nvml_count c, char *buf, size_t n);

/* ---- a snapshot ---- */
/* One GPU's counters at time t. Fixed size and pointer-free: ranks may send it to rank 0 as bytes. */
typedef struct {
  double t; /* the caller's clock, seconds */
  nvml_count ecc_corr, ecc_unc; /* volatile totals over all memory locations */
  nvml_count retired_pending;   /* 1 when pages wait for a reset to be retired (pre-Ampere page retirement) */
  nvml_count rows_corr, rows_unc, rows_pending, rows_failure; /* row remapping (Ampere and later) */
  nvml_count pcie_replay;
  /* the current link under this load, its max (GPU and slot), and the GPU's own max where the driver has it */
  nvml_count pcie_gen, pcie_width, pcie_gen_max, pcie_width_max, pcie_gen_gpu_max;
  int nvlink_measured; /* 1 when nvmlDeviceGetNvLinkState answered for link 0 (nlinks may then be 0: no NVLink) */
  int nlinks;          /* links that answered the state query */
  struct {
    nvml_count up;                         /* 1 active, 0 inactive */
    nvml_count err[NVML_CTR_NVLINK_NERR];  /* NVML_CTR_NVLINK_DL_* */
  } link[NVML_DL_MAX_LINKS];
  nvml_count reasons;                   /* clocks event reasons mask now (clock_reasons.h) */
  nvml_count violation_ns[NVML_CTR_NVIOL]; /* cumulative time held below application clocks, per limiter */
  nvml_count temp_c, power_mw, sm_mhz;
} nvml_counters;

/* Reads every counter of `dev` into *out (zeroed first; out->t = t). api NULL: everything not measured.
 * Never fails: each refused query leaves its figure not measured. The NVLink probe ends at the first link
 * that answers INVALID_ARGUMENT or NOT_SUPPORTED (past the GPU's last link), as nvml_gpu_query does. */
void nvml_counters_read(const nvml_api *api, nvml_device dev, double t, nvml_counters *out);

/* ---- what changed between two snapshots ---- */
typedef struct {
  double t0, t1;
  /* b - a of each counter; not measured when either end is, or when the counter went backwards (the driver
   * reloaded and the volatile counts restarted: the interval's count is then unknown, not negative) */
  nvml_count ecc_corr, ecc_unc, pcie_replay, rows_corr, rows_unc;
  /* 1 when the later snapshot has a pending remap or pending page retirement that the earlier did not */
  nvml_count new_rows_pending, new_retired_pending, new_rows_failure;
  nvml_count violation_ns[NVML_CTR_NVIOL];
  int nlinks; /* the larger of the two snapshots' counts */
  struct {
    nvml_count err[NVML_CTR_NVLINK_NERR];
    nvml_count went_down; /* 1: active at t0, inactive at t1; not measured unless both reads answered */
  } link[NVML_DL_MAX_LINKS];
} nvml_counters_delta;

/* *d = what changed from a to b (a earlier). Pure. */
void nvml_counters_diff(const nvml_counters *a, const nvml_counters *b, nvml_counters_delta *d);

/* ---- Xid events ---- */
#define NVML_XID_MAX_GPUS 16
/* A registered event set over up to NVML_XID_MAX_GPUS devices. measured = 0 when no event set could be
 * registered for any device (why says which call refused): then "no Xid" means "not watched", not "none". */
typedef struct {
  nvml_event_set set;
  int ndev;
  nvml_device dev[NVML_XID_MAX_GPUS];
  unsigned registered; /* bit i: device i registered for critical Xids */
  int measured;
  char why[128];
} nvml_xid_watch;

typedef struct {
  int gpu;              /* index into the devices given to nvml_xid_watch_open; -1 if NVML named another device */
  unsigned long long xid; /* NVML_CTR_XID_UNKNOWN when the driver cannot name it */
  double t;             /* the poll's `now`: when ddpbench saw it (NVML's event carries no time) */
  int application;      /* nvml_xid_is_application(xid) */
} nvml_xid_event;

/* Creates an event set and registers each device for nvmlEventTypeXidCriticalError. Events that happened
 * before this call are not reported (NVML starts recording at registration): the watch is windowed to the
 * test. Returns 1 when at least one device is watched, else 0 (w->why set). Each open needs one close. */
int nvml_xid_watch_open(const nvml_api *api, const nvml_device *devs, int ndev, nvml_xid_watch *w);
/* Drains the events ready now (nvmlEventSetWait_v2 with timeout 0, until it answers TIMEOUT), at most max of
 * them, each stamped `now`. Returns the count, or -1 when NVML failed otherwise (w->why set; the events
 * already drained are returned through ev, and the count of them through *got when got is not NULL). Never
 * blocks. */
int nvml_xid_poll(const nvml_api *api, nvml_xid_watch *w, double now, nvml_xid_event *ev, int max, int *got);
/* Frees the event set; w is zeroed. Safe on a zeroed watch. */
void nvml_xid_watch_close(const nvml_api *api, nvml_xid_watch *w);

/* 1 when `xid` is on the list of application Xids the field ignores (nvml_counters.c cites it): the GPU stays
 * in service. Every other Xid, an unknown one (999) included, fails its GPU. */
int nvml_xid_is_application(unsigned long long xid);
/* NVIDIA's short description of an Xid that the list or the common hardware Xids name, else "Xid". */
const char *nvml_xid_name(unsigned long long xid);

#ifdef __cplusplus
}
#endif
#endif
