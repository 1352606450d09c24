/* run_baseline.h: the run's --baseline (docs/straggler.md, "A baseline's spread"): the result files of earlier
 * healthy runs of the same job, read on rank 0 and checked to be that job, and the spread of each judged phase
 * that the straggler rule then uses as its run-to-run floor (straggler_baseline_floor, rules.h) instead of the
 * device's. Nothing here measures or talks to other ranks: the caller reads on rank 0 and broadcasts.
 *
 * defines: run_baseline_job, run_baseline, run_baseline_read */
#ifndef DDPBENCH_RUN_BASELINE_H
#define DDPBENCH_RUN_BASELINE_H

#include "common.h"
#include "phase.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a baseline must share with this run: it is a run of the same job. */
typedef struct {
  int world, hidden, layers, batch;
  const char *device, *precision; /* the resolved device kind ("cpu", "cuda"), precision_name() */
  int judged[PHASE_COUNT];        /* 1: this run judges the phase (local, ddp that it runs) */
} run_baseline_job;

/* What the rule needs of the baselines: the same on every rank (it travels by MPI_Bcast as bytes). */
typedef struct {
  int runs;                       /* files read; 0: no --baseline */
  double spread_pct[PHASE_COUNT]; /* per judged phase: the largest slowest-over-median-rank gap, in %; else NaN */
} run_baseline;

/* Reads the comma-separated files of list (one or more), each a ddpbench run result (result_load), and checks
 * that each is a run of job: kind "run", the same world size and device kind, the same hidden, layers, batch and
 * precision, and each judged phase with every rank's median compute time (step time where compute was not
 * timed, as the rule judges). where names the key for messages ("--baseline", "cfg.ini:4: baseline"). A file
 * that is not so is DDP_ERR_USAGE with one line naming it and what differs (through ddp_usage_error); so is a
 * 1-rank job (the rule compares ranks: there is nothing for a baseline to set). On success b holds the spread
 * of each judged phase over the files (straggler_spread). */
ddp_result run_baseline_read(const char *list, const char *where, const run_baseline_job *job, run_baseline *b);

#ifdef __cplusplus
}
#endif
#endif
