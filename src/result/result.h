/* result.h: the one model of a ddpbench run's results, as written to the JSON result file and as read back
 * from one (docs/result.schema.json describes the file). A run is its provenance (version, command line,
 * config, environment, every rank's identity and software versions), a flat list of measurement records and
 * a list of findings. A record is one figure with its identity: which measurement made it, over which group
 * of ranks, which metric, with which labels (rank, host, bytes, op, ...), its unit and which direction is
 * better; optionally its order statistics and samples. New measurements (a collectives sweep, per-GPU health,
 * per-pair bandwidth, a scaling sweep) add records; the schema does not change.
 *
 * The reader checks types and ranges and refuses, with one line naming the file and what is wrong, anything
 * that is not a ddpbench result, is truncated, or has a schema_version it does not know. It reads version 1
 * files (before records existed) by deriving the records from their "phases" section.
 * Nothing here measures, communicates or exits.
 *
 * defines: result_doc, result_record, result_rank, result_kv, result_better,
 *          result_{init,free,add_record,remove_record,record_label,find,to_json,from_json,load,better_name},
 *          result_env_allowed, result_env_redacted, result_config_set, RESULT_SCHEMA_VERSION */
#ifndef DDPBENCH_RESULT_H
#define DDPBENCH_RESULT_H

#include <stddef.h>

#include <cJSON.h>

#include "common.h"
#include "findings.h"
#include "stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version written. 1: no "records", no "findings" (read: records derived from "phases"). 2: both added.
 * 3: "kind" (and "source_kind" for an export), "failed_hosts"; "phases" only in a run's document.
 * 4: the outcome ("verdict", "exit_code", "bottom_line", "end_time", "duration_s"), "run_id" and "labels". */
#define RESULT_SCHEMA_VERSION 4

typedef enum { BETTER_NONE = 0, BETTER_LOWER, BETTER_HIGHER } result_better;

typedef struct {
  char *key, *value;
  int text; /* config values: 1 = a string in the JSON whatever it looks like (an option of type text) */
} result_kv;

/* One figure. Owned strings; labels sorted by key (so that two records compare label by label). */
typedef struct {
  char *measurement; /* "local", "comm", "ddp", "gemm", "job", ... */
  char *group;       /* the ranks it ran over: "world", "node:<host>", "pair:<a>-<b>", "first:<k>" */
  char *metric;      /* "step_ms", "busbw_gbs", ... */
  char *unit;        /* "ms", "GB/s", "1/s", "TFLOP/s", "" */
  result_better better;
  result_kv *labels;
  int nlabels;
  double value;      /* the headline figure (the median where there are statistics); NaN: could not tell */
  int has_stats;
  ddp_stats stats;
  double *samples;   /* per step (or per repetition), or NULL */
  int nsamples;
  char *why;         /* value NaN: why the figure is not given ("1 rank: ..."), or NULL (could not tell) */
} result_record;

/* A rank the watchdog named when it ended the run (rank 0 alive to write it down). */
typedef struct {
  int rank;
  char *host, *where; /* where: its last known location, or why it is suspected ("did not answer ...") */
} result_suspect;

/* One rank's identity. */
typedef struct {
  int rank, local_rank, node, pid;
  char *host;
  char *device_name, *pci_bus_id;
  int ordinal;
  double memory_bytes;
  result_kv *versions; /* in the order written */
  int nversions;
  double gemm_tflops;  /* NaN when not measured */
  char *weights_checksum; /* 16 hex digits, or NULL */
} result_rank;

typedef struct {
  int schema_version; /* as read (RESULT_SCHEMA_VERSION when built by a run) */
  char *kind;         /* what made it: "run", "accept", "collectives", "doctor", "export" (result_kind_*) */
  char *source_kind;  /* export: the kind of the document it was made from; else NULL */
  char *ddpbench_version, *command_line, *start_time;
  char *device, *comm;
  int world_size, nodes;
  result_kv *config; /* every key, values as text ("true", "0.05", "fp32") */
  int nconfig;
  result_kv *environment; /* the recorded environment (see result_env_allowed), values redacted where secret */
  int nenv;
  result_rank *ranks;
  int nranks;
  result_record *records;
  int nrecords, cap_records;
  finding_list findings;
  int weights_identical; /* 1, 0, or -1 when not verified */
  char *weights_checksum; /* the majority's, or NULL */
  char **failed_hosts;    /* the hosts to drain (verdict/hosts.h fills it), in the order found */
  int nfailed_hosts;
  double end_epoch;       /* when the results were complete (seconds since 1970); NaN when not known */
  /* version 4: how it ended, as the text report's bottom line says it (NULL / -1 / NaN: not known, older
   * versions; an export keeps its source's) */
  char *verdict;          /* "PASS", "WARN", "FAIL" or "ERROR" */
  char *bottom_line;      /* the report's last line */
  char *end_time;         /* ISO 8601 UTC */
  int exit_code;
  double duration_s;      /* end_time - start_time, seconds */
  char *run_id;           /* 16 hex digits naming this run among others (CSV rows, Prometheus series) */
  char *state;            /* "running" (a soak's interim document), "interrupted" (ended early: a dead or stopped
                           * rank, the watchdog), "complete"; NULL: not said (result_state derives it) */
  result_suspect *suspects; /* the ranks the watchdog named when it ended the run, or NULL */
  int nsuspects;
  result_kv *labels;      /* --label key=value, sorted by key */
  int nlabels;
  /* result_load only: the document's "nccl" section (NCCL's account) as it was, for export to keep; NULL when
   * it has none. Owned; result_free frees it. */
  cJSON *nccl;
  /* result_load only: the document's "soak" section (a soak's series, cmd/soak_doc.h) as it was, for judge to read
   * back; NULL when it has none. Owned; result_free frees it. */
  cJSON *soak;
} result_doc;

void result_init(result_doc *d);
void result_free(result_doc *d);
/* The run's state: d->state, else (a document from before it was written) "running" when the verdict is
 * INCOMPLETE and "complete" otherwise. A static string. */
const char *result_state(const result_doc *d);
/* 1 when s is "running", "interrupted" or "complete". */
int result_state_known(const char *s);
/* Appends a suspect (copies of host and where). */
ddp_result result_suspect_add(result_doc *d, int rank, const char *host, const char *where);
/* Appends a copy of host to d's failing hosts (once). */
ddp_result result_failed_host_add(result_doc *d, const char *host);

/* Appends a deep copy of rec (labels are sorted in the copy). */
ddp_result result_add_record(result_doc *d, const result_record *rec);
/* Removes record i (0 <= i < d->nrecords), keeping the others' order. */
void result_remove_record(result_doc *d, int i);
/* Builds and appends a record in one call: labels as "key", "value" pairs ending with NULL (16 at most). NaN is
 * fine. stats and samples may be NULL / 0. */
ddp_result result_add(result_doc *d, const char *measurement, const char *group, const char *metric,
                      const char *unit, result_better better, double value, const ddp_stats *stats,
                      const double *samples, int nsamples, ...);
/* Says why the last record added has no value (kept only when its value is NaN): the "why" beside its null. */
ddp_result result_set_why(result_doc *d, const char *why);
/* The value of a label, or NULL. */
const char *result_record_label(const result_record *rec, const char *key);
/* The first record with this measurement, group and metric whose labels include every "key", "value" pair
 * given (NULL-terminated); NULL when none. */
const result_record *result_find(const result_doc *d, const char *measurement, const char *group,
                                 const char *metric, ...);
const char *result_better_name(result_better b);
/* 1 when v is one of the verdicts a version 4 document holds. */
int result_verdict_known(const char *v);

/* 1 when kind is one of "run", "accept", "collectives", "doctor", "export". */
int result_kind_known(const char *kind);
/* The kind of a version 2 document that does not say it (from its content). */
const char *result_kind_infer(const result_doc *d, const cJSON *doc);

/* Adds the model's keys to doc (schema_version, provenance, config, environment, ranks, records, findings,
 * weights verdict). Other keys already in doc (phases, topology, ...) are left alone. */
ddp_result result_to_json(const result_doc *d, cJSON *doc);
/* Appends a copy of key=value to the list *kv of *n entries. */
ddp_result result_kv_push(result_kv **kv, int *n, const char *key, const char *value);
/* Sets key in d's config to a copy of value (appended when absent); text: a string in JSON, not a number. */
ddp_result result_config_set(result_doc *d, const char *key, const char *value, int text);
/* {median, p10, p90, min, max, mean, n}, numbers exact (null where NaN). */
cJSON *result_stats_json(const ddp_stats *st);
/* A JSON number that reads back as exactly v (null when v is NaN or infinite). */
cJSON *result_json_number(double v);
/* Reads a parsed document into d (initialised by the caller; freed by the caller on any outcome).
 * DDP_ERR_USAGE with the reason in why on bad input. */
ddp_result result_from_json(const cJSON *doc, result_doc *d, char *why, size_t whylen);
/* The records alone as a JSON array, and read back (appended to d): how records travel between ranks. */
cJSON *result_records_json(const result_doc *d);
ddp_result result_records_read(const cJSON *arr, result_doc *d, char *why, size_t whylen);
/* The records a "phases" section and the run-wide figures (measured_peak_tflops, scaling_efficiency, ...)
 * of doc stand for, as measured over `group`, appended to d (per-rank records take hosts from d's ranks). The writer uses it on
 * the section it is about to write, the reader on version 1 files: one mapping for both. */
ddp_result result_records_from_phases(const cJSON *doc, const char *group, result_doc *d, char *why, size_t whylen);
/* Reads a result file: on bad input "FILE: what is wrong" (one line) through ddp_usage_error (so that a
 * subcommand's option checks can capture it; printed as "ddpbench: ..." otherwise) and DDP_ERR_USAGE (exit
 * code 2); d is then empty. */
ddp_result result_load(const char *path, result_doc *d);

/* Environment variables a result records: NCCL_*, CUDA_*, UCX_*, the OMPI_MCA_* keys that select transports
 * (btl, pml, coll, osc, mtl), DDPBENCH_*, and Slurm job and step ids. Nothing else (launcher URIs, per-job
 * secrets, the working directory). */
int result_env_allowed(const char *name);
/* 1 when a variable's value must not be recorded: its name says key, token, secret or password. */
int result_env_redacted(const char *name);
#define RESULT_REDACTED "<redacted>" /* what a secret-looking variable's value is recorded as */
/* Fills d->environment from environ with the allowed variables, secrets as "<redacted>", sorted by name. */
ddp_result result_env_collect(result_doc *d);

#ifdef __cplusplus
}
#endif
#endif
