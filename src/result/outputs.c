/* outputs.c: the output table (outputs.h). One row per format: its key, and the writer that turns the result
 * model into the file's text; every file goes through atomic_file_write. */
#include "outputs.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic_file.h"
#include "csv.h"
#include "prom.h"

#define STR(f) offsetof(result_outputs, f), sizeof(((result_outputs *)0)->f)
/* json and force are spelled once (macros): C requires constant initializers, so OUTPUTS_JSON cannot copy
 * OUTPUTS[0] and OUTPUTS[4] (gcc folds that, clang refuses it). */
#define SPEC_JSON                                                                                             \
  {"json", "output_file", 'J', OPT_STR, STR(json), "", .arg = "FILE",                                        \
   .help = "write the result document (docs/result.schema.json) to this file", .flags = OPT_OUTPUT}
#define SPEC_FORCE                                                                                            \
  {"force", NULL, 0, OPT_BOOL, offsetof(result_outputs, force), 0, "false",                                  \
   .help = "replace existing output files (regular files only)"}
static const opt_spec OUTPUTS[] = {
    SPEC_JSON,
    {"prom", NULL, 0, OPT_STR, STR(prom), "", .arg = "FILE",
     .help = "write the figures as a node_exporter textfile", .flags = OPT_OUTPUT},
    {"csv", NULL, 0, OPT_STR, STR(csv), "", .arg = "FILE",
     .help = "write every record as CSV (one row per figure)", .flags = OPT_OUTPUT},
    {"failed_hosts", NULL, 0, OPT_STR, STR(failed_hosts), "", .arg = "FILE",
     .help = "write the hosts with a failing check here, one per line (for scontrol ... state=drain)",
     .flags = OPT_OUTPUT},
    SPEC_FORCE,
};
static const opt_spec OUTPUTS_JSON[] = {SPEC_JSON, SPEC_FORCE};
const opt_table outputs_table = {"outputs", OUTPUTS, (int)(sizeof OUTPUTS / sizeof OUTPUTS[0])};
const opt_table outputs_json_table = {"outputs", OUTPUTS_JSON, (int)(sizeof OUTPUTS_JSON / sizeof OUTPUTS_JSON[0])};

/* The failing hosts, one per line, duplicates left out. A byte that no host name holds (a control character,
 * a space, a comma, a backslash, DEL) is written as \xHH and said on stderr: such a name is never dropped (a
 * failing host missing from the drain list passes for healthy, hostile trial 2, L12), and never splits into
 * two lines or two entries of a comma list (`paste -sd,`, Slurm's host lists). */
static int host_byte_ok(unsigned char c) { return c > 0x20 && c != 0x7f && c != ',' && c != '\\'; }

static ddp_result hosts_text(const result_doc *d, char **out, size_t *n) {
  size_t len = 1;
  for (int i = 0; i < d->nfailed_hosts; i++) len += 4 * strlen(d->failed_hosts[i]) + 8;
  char *buf = malloc(len);
  DDP_CHECK_ALLOC(buf);
  size_t k = 0;
  for (int i = 0; i < d->nfailed_hosts; i++) {
    const char *h = d->failed_hosts[i];
    int skip = 0, odd = !h[0];
    for (int j = 0; j < i && !skip; j++) skip = !strcmp(h, d->failed_hosts[j]);
    if (skip) continue;
    size_t start = k;
    if (!h[0]) k += (size_t)sprintf(buf + k, "\\x00"); /* an empty name, visible */
    for (const unsigned char *c = (const unsigned char *)h; *c; c++) {
      if (host_byte_ok(*c)) {
        buf[k++] = (char)*c;
      } else {
        k += (size_t)sprintf(buf + k, "\\x%02x", *c);
        odd = 1;
      }
    }
    if (odd)
      ddp_notice("--failed-hosts: a failing host's name holds a byte no host name has; written as %.*s",
                 (int)(k - start), buf + start);
    buf[k++] = '\n';
  }
  buf[k] = 0;
  *out = buf;
  *n = k;
  return DDP_OK;
}

ddp_result outputs_json_text(const result_doc *d, const cJSON *sections, char **text) {
  *text = NULL;
  cJSON *doc = cJSON_CreateObject();
  if (!doc) return DDP_FAIL(DDP_ERR_JSON, "out of memory building the JSON document");
  ddp_result r = result_to_json(d, doc);
  for (const cJSON *x = sections ? sections->child : NULL; r == DDP_OK && x; x = x->next)
    if (!cJSON_AddItemReferenceToObject(doc, x->string, (cJSON *)x))
      r = DDP_FAIL(DDP_ERR_JSON, "out of memory building the JSON document");
  char *s = r == DDP_OK ? cJSON_Print(doc) : NULL;
  cJSON_Delete(doc);
  if (r == DDP_OK && !s) r = DDP_FAIL(DDP_ERR_JSON, "cannot format the JSON document");
  if (r != DDP_OK) return r;
  /* JSON is UTF-8: bytes from argv or the environment that are not (cJSON copies them as they are) become
   * U+FFFD, so that every JSON reader can read the document (hostile trial 2, L5). Outside strings cJSON
   * writes ASCII only, so this touches string contents alone. */
  char *u = ddp_utf8_clean(s);
  free(s);
  if (!u) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  s = u;
  size_t n = strlen(s);
  char *t = realloc(s, n + 2);
  if (!t) {
    free(s);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  t[n] = '\n';
  t[n + 1] = 0;
  *text = t;
  return DDP_OK;
}

/* ---- the table ------------------------------------------------------------------------------------ */
typedef ddp_result (*format_fn)(const result_doc *d, const cJSON *sections, char **text, size_t *n);

static ddp_result fmt_json(const result_doc *d, const cJSON *sections, char **text, size_t *n) {
  DDP_TRY(outputs_json_text(d, sections, text));
  *n = strlen(*text);
  return DDP_OK;
}
static ddp_result fmt_prom(const result_doc *d, const cJSON *sections, char **text, size_t *n) {
  DDP_TRY(prom_format(d, d->end_epoch, text));
  *n = strlen(*text);
  return DDP_OK;
}
static ddp_result fmt_csv(const result_doc *d, const cJSON *sections, char **text, size_t *n) {
  DDP_TRY(csv_format(d, text));
  *n = strlen(*text);
  return DDP_OK;
}
static ddp_result fmt_hosts(const result_doc *d, const cJSON *sections, char **text, size_t *n) {
  return hosts_text(d, text, n);
}

static const struct {
  const char *option;
  size_t offset;
  format_fn format;
} FORMATS[] = {
    {"--json", offsetof(result_outputs, json), fmt_json},
    {"--prom", offsetof(result_outputs, prom), fmt_prom},
    {"--csv", offsetof(result_outputs, csv), fmt_csv},
    {"--failed-hosts", offsetof(result_outputs, failed_hosts), fmt_hosts},
};
#define NFORMATS (sizeof FORMATS / sizeof FORMATS[0])

static const char *path_of(const result_outputs *o, size_t i) { return (const char *)o + FORMATS[i].offset; }

int outputs_any(const result_outputs *o) {
  for (size_t i = 0; i < NFORMATS; i++)
    if (path_of(o, i)[0]) return 1;
  return 0;
}

ddp_result outputs_check(const result_outputs *o, char *err, size_t errn) {
  for (size_t i = 0; i < NFORMATS; i++) {
    const char *p = path_of(o, i);
    char why[1200];
    if (p[0] && atomic_file_check(p, o->force, why, sizeof why) != DDP_OK) {
      snprintf(err, errn, "%s: %s", FORMATS[i].option, why);
      return DDP_ERR_USAGE;
    }
  }
  return DDP_OK;
}

ddp_result outputs_write(const result_outputs *o, const result_doc *d, const cJSON *sections, int quiet) {
  /* Every output is attempted: one that cannot be written (its folder filled up) does not cost the others. */
  ddp_result first = DDP_OK;
  for (size_t i = 0; i < NFORMATS; i++) {
    const char *p = path_of(o, i);
    if (!p[0]) continue;
    char *text = NULL;
    size_t n = 0;
    ddp_result r = FORMATS[i].format(d, sections, &text, &n);
    if (r == DDP_OK) r = atomic_file_write(p, text, n, o->force);
    free(text);
    if (r == DDP_OK && !quiet) fprintf(stderr, "[ddpbench] wrote %s\n", p);
    if (r != DDP_OK && first == DDP_OK) first = r;
  }
  return first;
}
