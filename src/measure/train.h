/* train.h: the training phases as measurements (train.c): local, comm and ddp over any group of ranks, on one
 * engine per group, and the state a caller keeps across them (the job's world report keeps the world's). Also
 * the gathering of one phase's per-rank samples to the group's rank 0, which the job's report uses too.
 *
 * defines: measure_local, measure_comm, measure_ddp, measure_fsdp, train_state, train_{state_free,gather,link_bound},
 *          phase_data_free */
#ifndef DDPBENCH_TRAIN_H
#define DDPBENCH_TRAIN_H

#include "engine.h"
#include "measure.h"
#include "summary.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const measurement measure_local, measure_comm, measure_ddp, measure_fsdp;
/* The train state a caller keeps: the engine over the last group's comm, and each phase's gathered data on
 * the group's rank 0. */
typedef struct train_state {
  ddp_comm *comm;   /* the engine's comm */
  engine *eng;
  phase_result res[PHASE_COUNT];  /* this rank's, until gathered */
  int ran[PHASE_COUNT];
  uint64_t checksum; /* this rank's weights after the ddp phase */
  int checksum_valid;
  uint64_t nonfinite; /* how many of those weights are NaN or infinite */
} train_state;
void train_state_free(train_state *t);
/* Collective over mpi: one rank's phase result into pd on the group's rank 0 (rank-major samples, the global
 * loss as the sum of the ranks' shares in rank order, fp16 scale and skips). Free with phase_data_free. */
ddp_result train_gather(MPI_Comm mpi, const phase_result *pr, phase_data *pd, int fp16);
void phase_data_free(phase_data *pd);
/* The device's plausibility bound on its collectives' bandwidth into rep (link_gbs, link_why; 0 and the reason
 * when the device states none). Asks the device, which may measure (the cpu device copies memory for tens of
 * ms): call it after the timing, on the rank that summarizes. */
void train_link_bound(ddp_device *dev, run_report *rep);
/* The settle time of each phase: --warmup-seconds, or the device's own for -1 (device may be NULL: 0). */
double train_settle_seconds(const ddp_config *cfg, const device_entry *device);

#ifdef __cplusplus
}
#endif
#endif
