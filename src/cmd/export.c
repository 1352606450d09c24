/* export.c: `ddpbench export RESULT.json [--prom FILE] [--csv FILE] [--json FILE]`: a saved result file (any
 * schema version the reader knows) through the same output table a run writes with (outputs.h): a
 * node_exporter textfile, CSV, and the result model of the current schema (--json: provenance, records,
 * findings; a version 1 file's records derived by the reader; kind "export", source_kind the file's own),
 * which is what launch/plot.py reads. The textfile's end time is the file's end_time (schema 4 on); a file of
 * an older schema, which does not record it, has none. Its own verdict is PASS when it wrote everything; the
 * source's verdict and findings follow unchanged.
 * No MPI, no device. Bad input: one line naming the file or option, exit 2. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bottom_figures.h"
#include "commands.h"

typedef struct {
  char input[4096];
} export_args;

static const opt_spec EXPORT[] = {
    {"input", NULL, 0, OPT_STR, offsetof(export_args, input), sizeof(((export_args *)0)->input), "", .arg = "RESULT.json",
     .help = "the result file (the word after the subcommand)", .flags = OPT_OPERANDS | OPT_FILES},
};
static const opt_table EXPORT_TABLE = {"input", EXPORT, 1};

static ddp_result export_tables(opt_set *s, void *args) { return opt_set_add(s, &EXPORT_TABLE, args); }

static ddp_result export_validate(cmd_ctx *c) {
  const export_args *a = c->args;
  if (!a->input[0]) return ddp_usage_error("export: no result file given (usage: ddpbench export RESULT.json --prom FILE ...)");
  if (strchr(a->input, '\n')) return ddp_usage_error("export: one result file at a time");
  if (!outputs_any(&c->out)) return ddp_usage_error("export: nothing to write: give --prom, --csv, --json and/or --failed-hosts FILE");
  char err[1400];
  if (outputs_check(&c->out, err, sizeof err) != DDP_OK) return ddp_usage_error("export: %s", err);
  return DDP_OK;
}

static ddp_result export_run(cmd_ctx *c) {
  const export_args *a = c->args;
  result_free(&c->doc);
  DDP_TRY(result_load(a->input, &c->doc)); /* prints its own one line */
  char *kind = c->doc.source_kind ? c->doc.source_kind : c->doc.kind; /* an export of an export keeps the origin */
  char *source = strdup(kind ? kind : "run"), *self = strdup("export");
  if (!source || !self) {
    free(source), free(self);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  free(c->doc.source_kind);
  free(c->doc.kind);
  c->doc.source_kind = source;
  c->doc.kind = self;
  c->quiet = 1;
  c->exit_code = DDP_EXIT_OK;
  struct tm tm; /* when the source ended, for the textfile's end time */
  memset(&tm, 0, sizeof tm);
  const char *rest = c->doc.end_time ? strptime(c->doc.end_time, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
  c->doc.end_epoch = rest && !*rest ? (double)timegm(&tm) : NAN;
  if (c->doc.nccl) { /* NCCL's account travels with the figures it explains (compare reads it) */
    if (!c->sections && !(c->sections = cJSON_CreateObject())) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    cJSON_AddItemToObject(c->sections, "nccl", c->doc.nccl);
    c->doc.nccl = NULL;
  }
  return DDP_OK;
}

const cmd_def cmd_export = {
    .bottom = export_bottom,
    .name = "export",
    .summary = "a result file as a node_exporter textfile, CSV or the current schema's JSON",
    .usage = "usage: ddpbench export RESULT.json [--prom FILE] [--csv FILE] [--json FILE] [--force]\n",
    .exit_codes = "0 written, 2 bad input or an unreadable result file",
    .about = "Reads a saved result file (any schema version) and writes it through the outputs a run "
             "has.\nExample: ddpbench export run.json --prom /var/lib/node_exporter/ddpbench.prom --force\n",
    .flags = CMD_OUTPUTS,
    .args_size = sizeof(export_args),
    .tables = export_tables,
    .validate = export_validate,
    .run = export_run,
};
