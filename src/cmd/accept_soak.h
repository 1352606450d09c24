/* accept_soak.h: `ddpbench accept --soak DURATION`, the burn-in (docs/soak.md). A cycle repeats until
 * the time is up, each cycle one interval of the time series: the training steps of the device's default-job
 * model (with the bitwise weights check), the per-node allreduce, every pair_every cycles the node-pair rounds,
 * the sustained GEMM and the host copies; NVML's counters are read at each interval's end, which is the next
 * one's start. Rank 0 judges after every interval (acceptance's one-shot verdicts on the first cycle's
 * measurements, the soak's over the series so far: verdict/soak_rules.h) and rewrites --json, --csv, --prom and
 * --failed-hosts atomically, so that a soak stopped by a signal or a dead rank leaves its complete intervals and
 * every verdict so far on disk; a write that fails is retried at the next interval, never ends the soak. A soak
 * ended early with rank 0 alive writes them once more, state interrupted. At the end: the same verdicts over the
 * whole series, the per-GPU steady state and the report.
 *
 * defines: accept_soak_plan, accept_soak */
#ifndef DDPBENCH_ACCEPT_SOAK_H
#define DDPBENCH_ACCEPT_SOAK_H

#include "accept_verdicts.h"
#include "allreduce.h"
#include "cmd.h"
#include "gpu_checks.h"
#include "pairs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double seconds, interval; /* --soak, --interval */
  int pair_every;           /* --pair-every */
  gemm_params gemm;         /* the GEMM of a cycle: one precision, its share of the interval */
  copy_params copy;
  p2p_params p2p;
  allreduce_params node, pair;
  node_pairs_mode pairs;    /* PAIRS_NONE: no pair rounds */
  int skip_gemm, skip_copy, skip_p2p, skip_node;
  int gemm_fixed;           /* --health-seconds given: every cycle's GEMM runs that long; else it fills the interval */
  double train_share;       /* of the interval, for the training steps */
  int progress;             /* progress_mode */
} accept_soak_plan;

/* Collective over the world. On rank 0: c->doc gets the first cycle's acceptance records and the soak's
 * summary records, c->doc.findings the verdicts (rules: acceptance's, for the first cycle's records),
 * c->sections the "soak" section; --csv and --prom are written here (c->outputs_own). */
ddp_result accept_soak(cmd_ctx *c, const accept_soak_plan *p, const accept_rules *rules);

#ifdef __cplusplus
}
#endif
#endif
