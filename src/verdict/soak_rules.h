/* soak_rules.h: the verdicts of a burn-in soak (docs/soak.md) as pure functions over a time series: the
 * series model that the soak loop fills (per interval: per GPU figures, throttle reasons and hardware counter
 * deltas, per link busbw, per rank step time), and the rules that judge it, each finding naming its part, the
 * interval and the time. No MPI, no NVML, no files, no printing here: the soak loop measures, these functions
 * judge, and every finding carries the numbers it was made from.
 *
 * Intervals are numbered from 1 in everything a user reads (the findings' text, soak_verdicts.interval, the
 * soak_change and soak_gpu_steady fields named *_interval); arrays are indexed from 0. Times are seconds since
 * the soak started.
 *
 * A counter that was not measured (the driver lacks the symbol, the GPU has no NVLink) never passes or fails:
 * the counters judged give at most one info finding listing what was not measured on which GPU.
 *
 * defines: soak_counter, soak_nvlink, soak_xid, soak_gpu_sample, soak_gpu_id, soak_link_id, soak_rank_id,
 *          soak_series_{init,free,add}, soak_gpu_at, soak_busbw_at, soak_step_at, soak_params_default,
 *          soak_verdicts_{init,free}, soak_changepoint, soak_judge_{counters,throttle,steady,links,ranks},
 *          soak_judge */
#ifndef DDPBENCH_SOAK_RULES_H
#define DDPBENCH_SOAK_RULES_H

#include "common.h"
#include "findings.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the time series ---------------------------------------------------------------------------------------- */

enum { SOAK_MAX_NVLINKS = 18, SOAK_MAX_XIDS = 8, SOAK_MAX_APP_XIDS = 32 };

/* A counter's delta over one interval (end minus start). measured = 0: not read (a missing symbol, an error):
 * delta means nothing, and is never taken as 0. */
typedef struct {
  double delta;
  int measured;
} soak_counter;

typedef struct {
  int state; /* 1 up, 0 down, -1 not measured */
  int absent; /* 1: inactive since the soak began (a link this GPU does not use here): not judged by the soak
               * (acceptance's NVLink count against its expectation judges the fabric), neither down nor unread */
  soak_counter crc, replay, recovery;
} soak_nvlink;

typedef struct {
  unsigned xid;
  double t; /* seconds since the soak started */
} soak_xid;

/* One GPU over one interval. soak_series_add clears every sample to "not measured": the loop sets what it read. */
typedef struct {
  double tflops, sm_mhz, power_w, temp_c;   /* NaN: not measured */
  unsigned long long reasons;               /* throttle reasons seen in the interval (clock_reasons.h bits) */
  int reasons_measured;
  soak_counter ecc_corrected, ecc_uncorrected, remap_pending, pcie_replay; /* remap_pending: new pending remaps */
  int under_load;                           /* 1: the PCIe figures below were read under load */
  unsigned pcie_gen, pcie_gen_max, pcie_width, pcie_width_max; /* 0: not measured */
  int nlinks;                               /* NVLinks read (0: none, or not measured) */
  soak_nvlink link[SOAK_MAX_NVLINKS];
  int nxid, xid_measured;                   /* Xid events in the interval (xid_measured 0: no event set) */
  soak_xid xid[SOAK_MAX_XIDS];
} soak_gpu_sample;

typedef struct {
  char host[64], busid[32], model[64];
  int rank, index; /* world rank driving it, NVML index on its host */
} soak_gpu_id;

/* A link busbw is measured on: a node's allreduce (scope SCOPE_HOST, host set) or a node pair (SCOPE_PAIR, host
 * "a-b" or "" so that the hosts' verdict counts it against neither alone). name: "node07", "node03-node07". */
typedef struct {
  char name[96], host[64];
  finding_scope scope;
} soak_link_id;

typedef struct {
  char host[64];
  int rank;
} soak_rank_id;

/* nint intervals [t0, t1]; per interval ngpu samples, nlink busbw values (GB/s, NaN: not measured in that
 * interval, e.g. pairs run every --pair-every cycles), nrank step times (ms, NaN: none). The ids are filled by
 * the caller after soak_series_init. */
typedef struct {
  int nint, cap, ngpu, nlink, nrank;
  double *t0, *t1;
  soak_gpu_id *gpu;
  soak_link_id *link;
  soak_rank_id *rank;
  soak_gpu_sample *g; /* [nint][ngpu] */
  double *busbw;      /* [nint][nlink] */
  double *step_ms;    /* [nint][nrank] */
} soak_series;

ddp_result soak_series_init(soak_series *s, int ngpu, int nlink, int nrank);
void soak_series_free(soak_series *s);
/* One sample with every figure not measured (what soak_series_add gives each GPU). */
void soak_gpu_sample_clear(soak_gpu_sample *g);
/* Appends interval [t0, t1] with every figure not measured; returns its index, or -1 when out of memory. */
int soak_series_add(soak_series *s, double t0, double t1);
static inline soak_gpu_sample *soak_gpu_at(const soak_series *s, int i, int k) { return &s->g[(size_t)i * s->ngpu + k]; }
static inline double *soak_busbw_at(const soak_series *s, int i, int l) { return &s->busbw[(size_t)i * s->nlink + l]; }
static inline double *soak_step_at(const soak_series *s, int i, int r) { return &s->step_ms[(size_t)i * s->nrank + r]; }

/* ---- parameters --------------------------------------------------------------------------------------------- */

typedef struct {
  unsigned app_xids[SOAK_MAX_APP_XIDS]; /* Xids of an application's fault, not the GPU's: info, never a failure */
  int napp_xids;
  double ecc_corrected_per_min, pcie_replay_per_min; /* warn above (a rate over an interval) */
  double nvlink_crc_per_s, nvlink_replay_per_interval, nvlink_recovery_per_interval; /* warn at or above */
  double first_minute_s;     /* the "first minute" of a GPU's throughput */
  double sink_warn_pct, sink_fail_pct, sink_zmin; /* the steady-state sink rule */
  int min_intervals, min_gpus;
  double busbw_drop_pct, step_rise_pct, cp_zmin; /* the change-point rule */
  int cp_min_side;
} soak_params;

/* Defaults, each with its source in soak_rules.c. */
void soak_params_default(soak_params *p);

/* ---- verdicts ----------------------------------------------------------------------------------------------- */

/* The findings, and for finding k the interval it names (interval[k], from 1; 0: the whole run) and the time
 * (t[k], seconds since the soak started; NaN: none). */
typedef struct {
  finding_list f;
  int *interval;
  double *t;
  int cap;
} soak_verdicts;
void soak_verdicts_init(soak_verdicts *v);
void soak_verdicts_free(soak_verdicts *v);

/* The change-point rule, over x[n] in time order (NaN values skipped; higher_better: a drop is bad, else a rise):
 * the split chosen is the one whose early and late means are furthest apart in units of their standard error,
 * z_k = (mean_early - mean_late) / (sigma sqrt(1/k + 1/(m-k))) (sign flipped when lower is better), over splits
 * leaving at least min_side values each side. The split is then judged on medians: found when the late median
 * is worse than the early one by more than floor_pct and the median z, (early - late) / (1.2533 sigma
 * sqrt(1/k + 1/(m-k))), exceeds zmin. sigma, the noise of
 * one value, is the largest of three robust estimates: 1.4826 MAD(x[i+1] - x[i]) / sqrt 2 (successive
 * differences, which a step moves by one difference only), 1.4826 MAD and 1.2533 mean absolute value of the
 * residuals around each side's median. Judged (judged = 1) from 2 min_side finite values (and 3) on.
 * split: the index in x of the first late value; early, late: the medians; rel: late / early - 1. */
typedef struct {
  int judged, found, split;
  double early, late, rel, z, sigma;
} soak_change;
ddp_result soak_changepoint(const double *x, int n, int higher_better, double floor_pct, double zmin, int min_side,
                            soak_change *c);

/* Per GPU, the steady-state figures (soak_judge_throttle fills the throttle fields, soak_judge_steady the rest). */
typedef struct {
  int first_throttle_interval;       /* 0: no failing or warning throttle reason in the run */
  double first_throttle_s;           /* start of that interval since the soak started (NaN: none) */
  unsigned long long first_reasons;  /* the failing/warning reasons of that interval */
  int judged, named, start_interval; /* named: sank beyond the job's noise, from start_interval */
  double first_minute, equilibrium, peers; /* TFLOP/s: its first minute, its equilibrium, its peers' equilibrium */
  double sink, peers_sink; /* equilibrium / first_minute - 1: this GPU's, the median of its model's GPUs' */
  double z;                /* its equilibrium relative to the job, in units of the job's and its own noise */
} soak_gpu_steady;

/* Xid, ECC, remaps, PCIe, NVLink and their rates; the one not-measured info finding. */
ddp_result soak_judge_counters(const soak_series *s, const soak_params *p, soak_verdicts *v);
/* Throttle reasons: HW slowdown, HW thermal, HW power brake fail, SW thermal warns (one finding per GPU and
 * reason, at its first interval, with the number of intervals it was seen in); the SW power cap, idle, app clocks
 * and sync boost are nothing. st[ngpu] (may be NULL) gets the time to first throttle. */
ddp_result soak_judge_throttle(const soak_series *s, const soak_params *p, soak_verdicts *v, soak_gpu_steady *st);
/* Steady state per GPU: one info finding each with its equilibrium (median TFLOP/s of the last third of the
 * intervals), first minute, the peers' median and the time to first throttle (from st, as soak_judge_throttle
 * left it); and a GPU that sank beyond the job's noise named, with the interval where it began (see soak_rules.c
 * for the rule). st[ngpu] must not be NULL, and its throttle fields as soak_judge_throttle left them (or zero). */
ddp_result soak_judge_steady(const soak_series *s, const soak_params *p, soak_verdicts *v, soak_gpu_steady *st);
/* A link whose busbw drops (soak_changepoint over its measured intervals, from 2 cp_min_side of them, floor
 * busbw_drop_pct, z above cp_zmin (1 + 4/m) for m intervals) fails, named with the interval where it began; unless
 * the fewest causes explain it otherwise: when a rank on that link (its host, or one end of a node pair) slowed
 * within one interval of the drop (its compute time rose, soak_judge_ranks' rule, or its GPU sank, st[k].named
 * with start_interval as soak_judge_steady left them; st may be NULL), the rank explains the GEMM, the step
 * time and the busbw at once (an allreduce waits for its slowest rank), so the drop is an info finding
 * "explained by rank R's slowdown" and the link is not named. */
ddp_result soak_judge_links(const soak_series *s, const soak_params *p, const soak_gpu_steady *st, soak_verdicts *v);
/* A rank whose step time rises (the same rule, floor step_rise_pct) fails, named on its host with the interval
 * where it began. Feed each rank's compute time where it is timed, as the straggler rule does: the allreduce
 * makes every rank's whole step as slow as the slowest's, which would name all of them or none. */
ddp_result soak_judge_ranks(const soak_series *s, const soak_params *p, soak_verdicts *v);
/* All of the above, in that order. */
ddp_result soak_judge(const soak_series *s, const soak_params *p, soak_verdicts *v);

#ifdef __cplusplus
}
#endif
#endif
