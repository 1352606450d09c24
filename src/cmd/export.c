/* export.c: `ddpbench export RESULT.json [--prom FILE] [--csv FILE] [--json FILE] [--force]`: a saved
 * result file (any schema version the reader knows) as a node_exporter textfile and/or CSV, the same writers a
 * run uses with --prom/--csv (the end time is left out: a file does not record it), and/or as the result model
 * of the current schema (--json: provenance, records, findings; a version 1 file's records derived by the
 * reader), which is what launch/plot.py reads. No MPI, no device. Bad input: one line
 * naming the file or option, exit 2. */
#include "export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "csv.h"
#include "prom.h"
#include "result.h"

static int usage(const char *why) {
  fprintf(stderr,
          "ddpbench export: %s (usage: ddpbench export RESULT.json [--prom FILE] [--csv FILE] [--json FILE] "
          "[--force])\n",
          why);
  return DDP_EXIT_USAGE;
}

int export_main(int argc, char **argv) {
  const char *in = NULL, *prom = NULL, *csv = NULL, *json = NULL;
  int force = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: ddpbench export RESULT.json [--prom FILE] [--csv FILE] [--json FILE] [--force]\n"
             "  --prom FILE  node_exporter textfile (Prometheus text format), ddpbench_* gauges\n"
             "  --csv FILE   one row per record: per rank per measurement and metric\n"
             "  --json FILE  the result model (records, findings) in the current schema\n"
             "  --force      overwrite existing output files\n");
      return DDP_EXIT_OK;
    }
    if (!strcmp(argv[i], "--force")) {
      force = 1;
    } else if (!strcmp(argv[i], "--prom") || !strcmp(argv[i], "--csv") || !strcmp(argv[i], "--json")) {
      if (i + 1 >= argc || !argv[i + 1][0] || argv[i + 1][0] == '-') {
        char m[64];
        snprintf(m, sizeof m, "%s needs a file name", argv[i]);
        return usage(m);
      }
      *(argv[i][2] == 'p' ? &prom : argv[i][2] == 'c' ? &csv : &json) = argv[i + 1];
      i++;
    } else if (argv[i][0] == '-') {
      char m[300];
      snprintf(m, sizeof m, "unknown option %.200s", argv[i]);
      return usage(m);
    } else if (in) {
      return usage("one result file at a time");
    } else {
      in = argv[i];
    }
  }
  if (!in) return usage("no result file given");
  if (!prom && !csv && !json) return usage("nothing to write: give --prom, --csv and/or --json FILE");
  /* every output checked before the file is read (atomic_file_check: exists without --force, not a regular
   * file, a folder that cannot take it) */
  const char *outs[3] = {prom, csv, json}, *opt[3] = {"--prom", "--csv", "--json"};
  for (int i = 0; i < 3; i++) {
    char err[600];
    if (outs[i] && atomic_file_check(outs[i], force, err, sizeof err) != DDP_OK) {
      fprintf(stderr, "ddpbench export: %s %s\n", opt[i], err);
      return DDP_EXIT_USAGE;
    }
  }
  result_doc d;
  result_init(&d);
  ddp_result r = result_load(in, &d); /* prints its own one line */
  if (r == DDP_OK && prom) r = prom_write(&d, NAN, prom, force);
  if (r == DDP_OK && csv) r = csv_write(&d, csv, force);
  if (r == DDP_OK && json) {
    cJSON *doc = cJSON_CreateObject();
    char *text = NULL;
    r = doc ? result_to_json(&d, doc) : DDP_FAIL(DDP_ERR_JSON, "out of memory");
    if (r == DDP_OK && !(text = cJSON_Print(doc))) r = DDP_FAIL(DDP_ERR_JSON, "cannot format the JSON document");
    if (r == DDP_OK) r = atomic_file_write(json, text, strlen(text), force);
    free(text);
    cJSON_Delete(doc);
  }
  result_free(&d);
  if (r != DDP_OK && r != DDP_ERR_USAGE) fprintf(stderr, "ddpbench export: %s\n", ddp_result_str(r));
  return r == DDP_OK ? DDP_EXIT_OK : ddp_exit_code(r);
}
