/* summary.h: what every rank measured in the training phases, gathered on rank 0 (run_report), and every
 * figure derived from it in one place (run_summary: report_summarize), so that the human summary, the JSON
 * document and the records can never disagree; the records built from the summary directly. Runs on rank 0
 * after the results were gathered; measures nothing and never talks to other ranks.
 *
 * defines: rank_info, phase_data, run_report, allreduce_row, phase_summary, run_summary, busbw_factor,
 *          report_summarize, report_summary_free, report_peak_sustained, report_phase_json, report_records */
#ifndef DDPBENCH_SUMMARY_H
#define DDPBENCH_SUMMARY_H

#include <cJSON.h>

#include "bucket.h"
#include "config.h"
#include "device.h"
#include "findings.h"
#include "fsdp_plan.h"
#include "phase.h"
#include "result.h"
#include "stats.h"
#include "versions.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One rank, as gathered to rank 0. Fixed size: it travels through MPI_Allgather as bytes. */
typedef struct {
  int rank, local_rank, node_index, pid;
  char host[64];
  uint64_t host_hash;
  ddp_device_info dev;
  ddp_versions ver;
  double gemm_tflops; /* measured H x H x H GEMM in the run's precision */
  uint64_t checksum;  /* final weights after the ddp phase */
  int checksum_valid;
  uint64_t nonfinite; /* how many of those weights are NaN or infinite */
} rank_info;

/* One phase, all ranks (rank-major arrays), on rank 0. */
typedef struct {
  int present;
  int warmup, steps, nbuckets;
  double *step_ms;    /* [world][steps] */
  double *compute_ms; /* [world][steps] */
  double *bucket_ms;  /* [world][steps][nbuckets] */
  double *loss;       /* [warmup + steps] global loss (sum of the ranks' shares); NULL for comm */
  float *scale;       /* [warmup + steps] rank 0's fp16 loss scale, or NULL */
  int *skipped;       /* [warmup + steps] rank 0's skip flags, or NULL */
  double settle_s;    /* the untimed run of its workload before it (rank 0's; every rank ran as many steps) */
} phase_data;

typedef struct {
  const ddp_config *cfg;
  int world, nodes;
  const char *device, *comm; /* resolved kinds */
  int device_is_gpu;         /* the device's table entry says is_gpu (the measured peak is then sustained) */
  double judge_min_ms, judge_floor_pct; /* the device entry's: what the straggler rule may judge (rules.h) */
  double steady_floor_pct; /* the device entry's: the drift a phase may show and still be steady (rules.h) */
  /* --baseline (docs/straggler.md): the straggler floor of each judged phase is straggler_baseline_floor of the
   * baselines' spread instead of judge_floor_pct. */
  const char *baseline;    /* the files as given; NULL or "": none */
  int baseline_runs;       /* how many; 0: none */
  double baseline_spread_pct[PHASE_COUNT]; /* per judged phase, in %; NaN: not judged */
  int peak_first;          /* the measured peak ran before the phases (a test hook), not after them */
  double settle_seconds;   /* what each phase's settle aimed at (--warmup-seconds or the device's) */
  const rank_info *ranks;    /* [world] */
  phase_data phases[PHASE_COUNT];
  const bucket_plan *plan;
  /* strategy fsdp: the shard plan, the kind of each timed comm call of a step (phase_data's "buckets", in issue
   * order) and what the engine allocated for FSDP's state; NULL under ddp */
  const fsdp_plan *fsdp;
  const fsdp_coll_kind *slots;
  const fsdp_memory *fsdp_alloc;
  double fsdp_device_drop; /* engine_fsdp_device_drop of rank 0's engine (NaN: not told) */
  double comm_bytes;   /* per step: allreduced (ddp); all-gathered and reduce-scattered, nccl-tests' sizes (fsdp) */
  ddp_dtype comm_type;
  double flops_per_step; /* per rank */
  double table_peak_tflops; /* 0 when unknown */
  /* The device's plausibility bound on a collective's bandwidth (ddp_device.max_link_gbs of rank 0's device,
   * asked after the timing; 0: none) and where it comes from: a row's algbw above it is no measurement of a
   * link, and the row's figures are not given (allreduce_row.why). */
  double link_gbs;
  char link_why[256];
  cJSON *topology;            /* owned by the caller, may be NULL */
  const char *topology_text; /* the topology report's human block, printed after the devices; may be NULL */
  char start_time[32];  /* ISO 8601 UTC */
  const result_doc *extra;    /* records of other measurements (the sweep) for the JSON; may be NULL */
} run_report;

/* Per distinct bucket size (ddp), or per kind of collective (fsdp: all_gather, reduce_scatter, all_reduce): how
 * long one call took and what bandwidth that is (nccl-tests' sizes: an all-gather's output, a reduce-scatter's
 * input). */
typedef struct {
  const char *kind; /* "allreduce" (ddp's buckets), "all_gather", "reduce_scatter", "all_reduce" (fsdp) */
  ddp_dtype dt;
  size_t bytes, count;
  int nbuckets;
  double time_us; /* median over steps of the mean over ranks and buckets of this size */
  double algbw, busbw; /* GB/s (1e9), nccl-tests' definitions */
  /* Timed, but faster than the device's links allow (above run_report.link_gbs): time_us, algbw and busbw are
   * NaN, the algbw it would have had is kept here, and why says so. 0 and "" otherwise. */
  double implausible_gbs;
  char why[384];
} allreduce_row;

typedef struct {
  int present;
  ddp_stats step;          /* over steps of the slowest rank's step time */
  ddp_stats *rank_step;    /* [world] */
  ddp_stats *rank_compute; /* [world] (n = 0 when not measured) */
  double samples_per_s, tflops_per_rank, mfu_measured, mfu_table;
  int slowest_rank;        /* highest median compute time (step time if compute unknown) */
  double slowest_excess;   /* its median over the median of all ranks, minus 1 */
  allreduce_row *rows;
  int nrows;
  double algbw, busbw; /* whole step: comm_bytes / median step time (comm phase) */
  int skipped_steps;
  double final_scale;
  /* Why a figure above is NaN when it is not defined or not meaningful here ("" when it is given): the one
   * source of the reasons for the text, the JSON and the records (report_phase_why). */
  char why_samples[96];   /* samples_per_s */
  char why_bw[96];        /* algbw, busbw, and the rows' algbw and busbw */
  char why_mfu_table[256];
  char why_mfu_measured[128];
} phase_summary;

typedef struct {
  phase_summary ph[PHASE_COUNT];
  double scaling_efficiency; /* median local / median ddp; NaN unless both ran on 2 ranks or more, or when the
                              * ddp step beats the local one beyond the step times' spread (why_efficiency) */
  double efficiency_noise;   /* the efficiency's noise: the step times' spread (p10 to p90 of local and ddp)
                              * over the ddp median; NaN with the efficiency */
  char why_efficiency[256];  /* why scaling_efficiency is NaN, or "" */
  double ddp_overhead_ms;    /* 1 rank: ddp - local (what DDP's bucketing and allreduce calls cost alone); else NaN */
  double exposed_comm_ms;    /* ddp - local, in [0, comm]; NaN when the measurement cannot tell */
  double hidden_fraction;    /* 1 - exposed / comm, in [0, 1]; NaN when it cannot tell (or no comm phase) */
  char overlap_why[256];     /* why it cannot tell, or "" */
  double measured_peak_tflops; /* median over ranks */
  int weights_identical;     /* -1 when the ddp phase did not run */
  int nmismatch;
  int *mismatch;             /* ranks whose checksum differs from rank 0's */
} run_summary;

/* allreduce bus bandwidth factor 2(n-1)/n (0 for one rank, as nccl-tests). */
double busbw_factor(int world);
/* all-gather and reduce-scatter: (n-1)/n (0 for one rank). */
double busbw_factor_gather(int world);
/* A row's factor from algbw to busbw: busbw_factor for allreduces, busbw_factor_gather for the others. */
double row_bus_factor(const allreduce_row *row, int world);
/* The run's training phase (PHASE_DDP or PHASE_FSDP, from the strategy). */
int report_train_phase(const run_report *r);
/* Why phase p's figure `metric` (samples_per_s, algbw_gbs, busbw_gbs, mfu_table_peak, mfu_measured_peak; the
 * rows' allreduce_algbw_gbs and allreduce_busbw_gbs) is not given, or NULL when it is. A row's own reason
 * (allreduce_row.why) comes first where it has one. */
const char *report_phase_why(const run_summary *s, int p, const char *metric);
/* The step times' spread of two phases (p10 to p90 of each, added): the noise the derived figures are judged
 * against (exposed communication, efficiency, the sweep's efficiency). */
double report_spread(const ddp_stats *a, const ddp_stats *b);

ddp_result report_summarize(const run_report *r, run_summary *s);
void report_summary_free(run_summary *s);
/* 1 when the measured peak is the sustained 8192^3 GEMM (cuda device, peak_seconds > 0), 0 when it is the
 * H x H x H burst at the model's own H (cpu device, or peak_seconds = 0). */
int report_peak_sustained(const run_report *r);
/* One phase's section of the document ("phases"."ddp": statistics, per rank, per bucket size, loss). */
cJSON *report_phase_json(const run_report *r, const run_summary *s, int p);
/* The records of the phases that ran, over `group`, appended to d: labels rank (rank_of[i], or i when NULL)
 * and host (host_of[i]) per group rank i; with job, also each rank's GEMM figure and the job-wide figures
 * (measured peak, scaling efficiency, exposed and hidden communication). Records are built from the summary
 * directly: no document is written and read back. */
ddp_result report_records(const run_report *r, const run_summary *s, const char *group, const int *rank_of,
                          const char *const *host_of, int job, result_doc *d);

#ifdef __cplusplus
}
#endif
#endif
