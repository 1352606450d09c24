/* config.h: the settings of a training run (the model, the schedule, the precision, DDP's buckets, the phases
 * and their checks) and the option tables that name them for the option layer (options.h): each key has a
 * long option of the same name with dashes, a type, a default and a range, and is a key of an INI file.
 * What every subcommand shares (the device and comm choice, the outputs, the timeout) is not here: those
 * tables belong to the subcommand skeleton (cmd.h). Parsing is pure: no MPI, no device; bad input gives one
 * line naming the key (and the file and line) and DDP_ERR_USAGE, which becomes exit code 2 before any rank
 * starts work.
 *
 * defines: ddp_config, ddp_precision, ddp_bind, config_{tables_add,defaults,finish,validate,parse,phases,groups,
 *          scaler,hash,key_at,set}, precision_name */
#ifndef DDPBENCH_CONFIG_H
#define DDPBENCH_CONFIG_H

#include <stdio.h>

#include "common.h"
#include "numerics.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { PREC_FP32 = 0, PREC_TF32, PREC_BF16, PREC_FP16 } ddp_precision;
typedef enum { BIND_AUTO = 0, BIND_GPU, BIND_NONE } ddp_bind;

typedef struct {
  /* model */
  int hidden, layers, batch; /* batch per rank */
  /* schedule */
  int steps, warmup;
  double warmup_seconds; /* each phase first runs its own workload this long, weights restored (-1 = the device's) */
  unsigned long long seed;
  double lr, momentum;
  /* precision */
  ddp_precision precision;
  ddp_precision grad_comm; /* PREC_FP32, PREC_BF16 or PREC_FP16 */
  double loss_scale_init, loss_scale_growth_factor, loss_scale_backoff;
  int loss_scale_growth_interval;
  /* the strategy: ddp, or fsdp (docs/fsdp.md; grad_comm is then FSDP2's reduce_dtype) */
  int strategy; /* ddp_strategy */
  /* DDP */
  double bucket_mb, first_bucket_mb; /* MiB, effective: see config_finish */
  int gradient_as_bucket_view;
  /* run */
  int cuda_graph;
  int inject_nonfinite; /* -1 = off */
  double timeout;       /* seconds without progress before the watchdog aborts; 0 = never */
  double peak_tflops;   /* 0 = from the table of known GPUs */
  double peak_seconds;  /* GPU: sustained 8192^3 GEMM for the measured peak; 0 = H x H x H burst */
  double straggler_pct; /* straggler rule: % above the median compute time (with robust z > 3.5) */
  char baseline[1024];  /* --baseline: comma list of earlier healthy runs' JSON (the straggler floor); "" = none */
  int strict;           /* warnings fail (exit 4) */
  ddp_bind bind;
  int pcie;              /* topology matrix by PCIe path alone */
  char phases[64];       /* comma list of local,comm and the strategy's phase (ddp or fsdp) */
  char topo_xml[1024];   /* "" = do not write hwloc XML */
  int sweep;             /* the scaling sweep (measure/scaling.c) */
  char groups[256];      /* --groups: comma list of world,node,pairs,first:K; "" = none (config_groups) */
  char group_measure[64]; /* --group-measure: the measurement run over each of those groups */
  int quiet;
  int progress;          /* --progress: progress_mode (progress.h); --quiet makes it none */
  /* not keys: */
  int gpu_default; /* the no-options job on GPUs: the model is sized from the GPU (gpu_default.h) */
} ddp_config;

/* Adds the run's tables (model, schedule, precision, DDP, the phases and their checks, the topology) over cfg
 * to s. */
ddp_result config_tables_add(opt_set *s, ddp_config *cfg);
/* Defaults only. */
void config_defaults(ddp_config *cfg);
/* After the options are read: PyTorch's bucket caps (torch/nn/parallel/distributed.py,
 * bucket_bytes_cap_default): when bucket_mb is given (file or command line) and first_bucket_mb is not, the
 * first bucket takes the same cap, as with an explicit bucket_cap_mb; an explicit first_bucket_mb always
 * wins. Then config_validate. s (may be NULL) says what was given and where. */
ddp_result config_finish(ddp_config *cfg, const opt_set *s);
/* Cross-key checks and size limits. Errors name the file and line, or the option, that set the key at fault
 * (from s; NULL: no place is named). Every product of counts is computed in 64 bits; what would overflow an
 * int interface, or cannot fit in this machine's memory for the per-step timings, is a usage error. */
ddp_result config_validate(const ddp_config *cfg, const opt_set *s);

/* For tests and tools: the run's tables alone over cfg, parsed from argv (argv[0] the program), finished.
 * *help: -h/--help or --version was given (then cfg holds the defaults). */
ddp_result config_parse(ddp_config *cfg, int argc, char **argv, int *help);
/* The run's keys over cfg: FNV-1a 64 of every key's effective value, key i with its value as text (0 past the
 * end), one key set from text (where names the source for errors). */
uint64_t config_hash(const ddp_config *cfg);
int config_key_at(const ddp_config *cfg, int i, const char **name, char *value, size_t n);
ddp_result config_set(ddp_config *cfg, const char *key, const char *value, const char *where);

const char *precision_name(ddp_precision p);
scaler_cfg config_scaler(const ddp_config *cfg);
/* The phases of --phases in their order, duplicates dropped, as ddp_phase values (local, comm, ddp, fsdp):
 * returns how many (1..3), or -1 if a name is unknown. config_validate refuses the other strategy's phase. */
int config_phases(const ddp_config *cfg, int order[3]);
/* --groups as kinds in measure_group_kind's order (0 world, 1 node, 2 pairs, 3 first) and their k (first:K;
 * 0 otherwise), in the order given, repeats dropped; at most max. Returns the count (0 for ""), or -1 for an
 * entry that is none of them. */
#define CONFIG_MAX_GROUPS 16
int config_groups(const ddp_config *cfg, int kinds[], int ks[], int max);

#ifdef __cplusplus
}
#endif
#endif
