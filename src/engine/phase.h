/* phase.h: the training phases (local, comm, ddp) and what one rank measured in one: plain data shared by
 * the engine that fills it and the report that formats it, so that formatting code needs neither the engine
 * nor MPI. Nothing here does more than name and free (phase.c). */
#ifndef DDPBENCH_PHASE_H
#define DDPBENCH_PHASE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PHASE_FSDP is the fsdp strategy's training phase (docs/fsdp.md); a run has one training phase, ddp or fsdp, and
 * its comm phase is that strategy's collectives alone. */
typedef enum { PHASE_LOCAL = 0, PHASE_COMM, PHASE_DDP, PHASE_FSDP, PHASE_COUNT } ddp_phase;
/* The one spelling of each phase's name: phase_name() and the train measurements (measure/train.c) use these. */
#define PHASE_NAME_LOCAL "local"
#define PHASE_NAME_COMM "comm"
#define PHASE_NAME_DDP "ddp"
#define PHASE_NAME_FSDP "fsdp"
const char *phase_name(ddp_phase p);
/* The training strategies (the strategy key): DDP's bucketed allreduce, or FSDP2's sharded parameters. */
typedef enum { STRATEGY_DDP = 0, STRATEGY_FSDP } ddp_strategy;
const char *strategy_name(ddp_strategy s);
/* The strategy's training phase: PHASE_DDP or PHASE_FSDP. */
ddp_phase phase_train(ddp_strategy s);

/* What one rank measured in one phase. Arrays are owned by the result (phase_result_free). */
typedef struct {
  ddp_phase phase;
  int warmup, steps; /* steps are the timed ones; histories cover warmup + steps */
  double *step_ms;    /* [steps] step time on this rank */
  double *compute_ms; /* [steps] forward + backward on the compute stream (NaN: comm phase, cuda graphs) */
  double *bucket_ms;  /* [steps * nbuckets] each bucket's allreduce on the comm stream (NaN if not timed) */
  int nbuckets;
  double *loss;    /* [warmup + steps] this rank's share of the global loss (NULL for the comm phase) */
  float *scale;    /* [warmup + steps] fp16 loss scale used in each step (NULL unless fp16) */
  int *skipped;    /* [warmup + steps] 1 where the update was skipped (NULL unless fp16) */
  double wall_s;   /* enqueue to completion of the whole phase, host clock */
  double settle_s; /* the untimed run of the phase's workload before it (engine_settle), host clock; 0 = none */
} phase_result;

void phase_result_free(phase_result *r);

/* Called on the host as steps are enqueued (progress lines, the watchdog's heartbeat). */
typedef void (*engine_progress_fn)(void *ctx, ddp_phase p, int step, int nsteps);

#ifdef __cplusplus
}
#endif
#endif
