/* soak_probe.h: one rank's hardware counters over a soak's intervals (docs/soak.md): NVML opened for the
 * rank's GPU, an Xid event set registered once at the start (so that only the soak's own Xids are seen), a
 * snapshot at each interval's end that is also the next interval's start (the windows leave no gap), and the
 * interval's counter deltas as a soak_gpu_sample (verdict/soak_rules.h) for rank 0 to judge. A figure NVML does
 * not give stays "not measured" in the sample, never 0. No MPI, no printing here.
 *
 * defines: soak_probe, soak_probe_{open,start,interval,close}, soak_sample_counters */
#ifndef DDPBENCH_SOAK_PROBE_H
#define DDPBENCH_SOAK_PROBE_H

#include "nvml_counters.h"
#include "soak_rules.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  nvml_api api;       /* the probe's own NVML (open), or the caller's table (tests) */
  nvml_device dev;
  int open;           /* 1: api was opened here (closed by soak_probe_close) */
  int have_dev;       /* 1: NVML knows this rank's GPU */
  nvml_xid_watch xw;
  int xid_open;
  nvml_counters last; /* the latest snapshot: the next interval's start */
  int have_last;
  unsigned char up0[NVML_DL_MAX_LINKS]; /* 1: the link was active at the soak's start */
  char why[160];      /* why there is no NVML view ("" when there is) */
} soak_probe;

/* Opens NVML for the GPU with PCI bus id `busid` ("" or NULL: the CPU device, no NVML). api: NULL to dlopen NVML
 * here, or a table to use as it is (the fake NVML of the tests). Never fails: without NVML every counter of the
 * samples is not measured and p->why says why. */
void soak_probe_open(soak_probe *p, const char *busid, const nvml_api *api);
/* The first snapshot and the Xid event set, at time t (seconds, the caller's clock). */
void soak_probe_start(soak_probe *p, double t);
/* The interval that ends now (t): a snapshot, the deltas since the last one and the Xids that arrived, into the
 * counter fields of *out (tflops and the other load figures are left as they are). t_origin: the soak's start
 * (Xid times are seconds since it); under_load: 1 when the GPU was under load just before (the PCIe generation
 * and width then count). A link inactive at the start and still inactive is marked absent. */
void soak_probe_interval(soak_probe *p, double t, double t_origin, int under_load, soak_gpu_sample *out);
void soak_probe_close(soak_probe *p);

/* Pure: the counter fields of *out from the snapshots a (start) and b (end) of an interval and the Xid events
 * polled at its end (xid_measured 0: no event set, so "no Xid" is not known). Sets ecc_*, remap_pending,
 * pcie_*, link[] and xid[]; load figures (sm_mhz, power_w, temp_c) from b where out has none; reasons |= b's. */
void soak_sample_counters(const nvml_counters *a, const nvml_counters *b, const nvml_xid_event *ev, int nev,
                          int xid_measured, double t_origin, int under_load, soak_gpu_sample *out);

#ifdef __cplusplus
}
#endif
#endif
