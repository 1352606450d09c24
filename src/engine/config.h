/* config.h: every setting of a run, where each comes from (built-in default < config file < command line),
 * and the one table that names them: each key has a long option of the same name with dashes, a type, a
 * default and a range. Parsing is pure: no MPI, no device; bad input gives one line naming the key (and
 * the file and line) and DDP_ERR_USAGE, which main turns into exit code 2 before any rank starts work. */
#ifndef DDPBENCH_CONFIG_H
#define DDPBENCH_CONFIG_H

#include <stdio.h>

#include "common.h"
#include "numerics.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CONFIG_MAX_KEYS 64

typedef enum { PREC_FP32 = 0, PREC_TF32, PREC_BF16, PREC_FP16 } ddp_precision;
typedef enum { DEV_AUTO = 0, DEV_CPU, DEV_CUDA } ddp_device_kind;
typedef enum { COMM_AUTO = 0, COMM_MPI, COMM_NCCL } ddp_comm_kind;
typedef enum { BIND_AUTO = 0, BIND_GPU, BIND_NONE } ddp_bind;

typedef struct {
  /* model */
  int hidden, layers, batch; /* batch per rank */
  /* schedule */
  int steps, warmup;
  unsigned long long seed;
  double lr, momentum;
  /* precision */
  ddp_precision precision;
  ddp_precision grad_comm; /* PREC_FP32, PREC_BF16 or PREC_FP16 */
  double loss_scale_init, loss_scale_growth_factor, loss_scale_backoff;
  int loss_scale_growth_interval;
  /* DDP */
  double bucket_mb, first_bucket_mb; /* MiB, effective: see config_parse */
  int gradient_as_bucket_view;
  /* run */
  ddp_device_kind device;
  ddp_comm_kind comm;
  int cuda_graph;
  int inject_nonfinite; /* -1 = off */
  double timeout;       /* seconds without progress before the watchdog aborts; 0 = never */
  double peak_tflops;   /* 0 = from the table of known GPUs */
  double peak_seconds;  /* cuda: sustained 8192^3 GEMM for the measured peak; 0 = H x H x H burst */
  double straggler_pct; /* straggler rule: % above the median compute time (with robust z > 3.5) */
  int strict;           /* warnings fail (exit 4) */
  ddp_bind bind;
  int pcie;              /* topology matrix by PCIe path alone */
  char phases[64];       /* comma list of local,comm,ddp */
  char json[1024];       /* "" = no JSON file */
  char failed_hosts[1024]; /* "" = no failed-hosts file */
  char topo_xml[1024];   /* "" = do not write hwloc XML */
  int sweep;             /* the scaling sweep (measure_sweep.c) */
  char groups[256];      /* --groups: comma list of world,node,pairs,first:K; "" = none (config_groups) */
  char group_measure[64]; /* --group-measure: the measurement run over each of those groups */
  char prom[1024];       /* "" = no node_exporter textfile */
  char csv[1024];        /* "" = no CSV */
  int force, quiet;
  /* not keys: */
  int gpu_default; /* the no-options job on GPUs: the model is sized from the GPU (gpu_default.h) */
  unsigned long long given; /* bit i: key i was set by the config file or the command line */
  char config_file[1024];
  char command_line[4096];
  signed char source[CONFIG_MAX_KEYS]; /* per key of the table: CONFIG_SRC_* */
  int source_line[CONFIG_MAX_KEYS];    /* the config file's line for CONFIG_SRC_FILE */
} ddp_config;

/* Where a key's value came from (for errors that involve several keys). */
enum { CONFIG_SRC_DEFAULT = 0, CONFIG_SRC_FILE, CONFIG_SRC_CLI };

/* Result of parsing: run, or print help/version and exit 0. */
typedef enum { CONFIG_RUN = 0, CONFIG_HELP, CONFIG_VERSION } config_action;

/* Fills cfg from defaults, then the --config file, then the other options (argv[1..]). On bad input prints
 * one line on stderr (rank 0 only, or into ddp_usage_capture's buffer) and returns DDP_ERR_USAGE. Outputs
 * (--json, --topo-xml) are checked later, by preflight_run, on the ranks that write them. Bucket caps as PyTorch
 * DDP sets them (torch/nn/parallel/distributed.py, bucket_bytes_cap_default): when bucket_mb is given (file or
 * command line) and first_bucket_mb is not, the first bucket takes the same cap, as with an explicit
 * bucket_cap_mb; first_bucket_mb given explicitly always wins. cfg then holds the effective caps.
 *
 * The INI file: 'key = value' lines, '[section]' headers (ignored), comments starting with ';' or '#'. A line
 * longer than 198 characters, an indented line (inih would take it as a continuation of the previous value)
 * and a NUL byte are errors naming the file and line. */
ddp_result config_parse(ddp_config *cfg, int argc, char **argv, config_action *action);
/* Defaults only. */
void config_defaults(ddp_config *cfg);
/* Sets one key from a string, as the file and the command line do; `where` names the source for errors
 * ("--hidden", "file.ini:12"). */
ddp_result config_set(ddp_config *cfg, const char *key, const char *value, const char *where);
/* 1 if key was set by the config file or the command line (not a default). */
int config_given(const ddp_config *cfg, const char *key);
/* Cross-key checks and size limits (run after all sources are applied). Errors name the file and line, or
 * the option, that set the key at fault. Every product of counts is computed in 64 bits; what would overflow
 * an int interface, or cannot fit in this machine's memory for the per-step timings, is a usage error. */
ddp_result config_validate(const ddp_config *cfg);
/* "file.ini:7" or "--key" for where key's value came from; NULL for a built-in default. */
const char *config_where(const ddp_config *cfg, const char *key, char *buf, size_t n);
/* FNV-1a 64 of every key's effective value as text: equal on every rank that runs the same configuration. */
uint64_t config_hash(const ddp_config *cfg);
void config_print_help(FILE *out);
const char *precision_name(ddp_precision p);
const char *device_kind_name(ddp_device_kind d);
const char *comm_kind_name(ddp_comm_kind c);
scaler_cfg config_scaler(const ddp_config *cfg);
/* The phases of --phases in their order, duplicates dropped, as indices 0 local, 1 comm, 2 ddp (ddp_phase's
 * values): returns how many (1..3), or -1 if a name is unknown. */
int config_phases(const ddp_config *cfg, int order[3]);
/* --groups as kinds in measure_group_kind's order (0 world, 1 node, 2 pairs, 3 first) and their k (first:K;
 * 0 otherwise), in the order given, repeats dropped; at most max. Returns the count (0 for ""), or -1 for an
 * entry that is none of them. */
#define CONFIG_MAX_GROUPS 16
int config_groups(const ddp_config *cfg, int kinds[], int ks[], int max);

/* Iterate over keys for reporting: returns 0 past the end; fills name and the effective value as text. */
int config_key_at(const ddp_config *cfg, int i, const char **name, char *value, size_t n);

#ifdef __cplusplus
}
#endif
#endif
