/* outputs.h: the one output table of every subcommand that has results: --json (the result document),
 * --prom (a node_exporter textfile), --csv (one row per record) and --failed-hosts (the hosts to drain, one
 * per line), each written from the same result model through atomic_file (readers see the old file or the
 * whole new one), with --force to replace an existing file. The option table that names them is here too, so
 * that every subcommand gets the same keys, the same checks before any work and the same writers. A new
 * format is one row of the table in outputs.c and its writer. Nothing here measures or communicates.
 *
 * defines: result_outputs, outputs_table, outputs_{check,write,any} */
#ifndef DDPBENCH_OUTPUTS_H
#define DDPBENCH_OUTPUTS_H

#include <cJSON.h>

#include "options.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OUTPUTS_MAX_LABELS 16
typedef struct {
  char json[1024], prom[1024], csv[1024], failed_hosts[1024]; /* "" = not written; "-" = standard output */
  int force;
  char labels[OUTPUTS_MAX_LABELS * 330]; /* --label: "key=value\n" each, a key once (the last one given wins) */
  int quiet;                             /* --quiet (outputs_quiet_table) */
} result_outputs;

/* The keys json, prom, csv, failed_hosts (OPT_OUTPUT) and force, over a result_outputs. */
extern const opt_table outputs_table;
/* The same without prom and csv (doctor: its document has findings, no figures) and without failed_hosts. */
extern const opt_table outputs_json_table;
/* --quiet over a result_outputs, for the subcommands whose own tables have none. */
extern const opt_table outputs_quiet_table;

/* The labels of o (--label) into d->labels, sorted by key, replacing a label d already has (an export's). */
ddp_result outputs_labels_apply(const result_outputs *o, result_doc *d);
/* How many outputs go to standard output ("-"). */
int outputs_to_stdout(const result_outputs *o);

/* 1 when any output is asked for. */
int outputs_any(const result_outputs *o);
/* Before any work: every output can be written (atomic_file_check). DDP_ERR_USAGE with "--json: why" in err. */
ddp_result outputs_check(const result_outputs *o, char *err, size_t errn);
/* Writes every output asked for from d; sections (may be NULL) are extra keys of the JSON document (the run's
 * "phases" and "topology") added after the model's. quiet: no "wrote FILE" lines on stderr. */
ddp_result outputs_write(const result_outputs *o, const result_doc *d, const cJSON *sections, int quiet);
/* Bits naming outputs, for outputs_write_some. */
enum { OUTPUT_JSON = 1u << 0, OUTPUT_PROM = 1u << 1, OUTPUT_CSV = 1u << 2, OUTPUT_FAILED_HOSTS = 1u << 3 };
/* As outputs_write, for the outputs in `which` only (OUTPUT_* bits), leaving out those going to standard output
 * when files_only is set (a soak's interim documents: one document on a pipe, at the end). replace: outputs
 * this run has written before, rewritten as with --force (a file the run itself made is its own to replace). */
ddp_result outputs_write_some(const result_outputs *o, unsigned which, unsigned replace, int files_only,
                              const result_doc *d, const cJSON *sections, int quiet);
/* The result document as JSON text (the model, then the sections), newline-terminated; free() it. */
ddp_result outputs_json_text(const result_doc *d, const cJSON *sections, char **text);

#ifdef __cplusplus
}
#endif
#endif
