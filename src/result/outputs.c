/* outputs.c: the output table (outputs.h). One row per format: its key, and the writer that turns the result
 * model into the file's text; every file goes through atomic_file_write. */
#include "outputs.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
/* --label key=value: the key a Prometheus label name of at most 64 characters, not one ddpbench's own series
 * carry; the value printable UTF-8 of at most 256 bytes, without a comma (a file's "label = a=1,b=2" gives
 * two). Stored one per line, a key once: the command line's replaces the file's. */
static const char *const RESERVED_LABELS[] = {"kind", "mode", "severity", "host", "gpu", "rank", "bus_id", "group",
                                              "check", "run_id", "job", "instance", "le", "quantile", NULL};
/* The length of a character of s (UTF-8) that a label value must not hold: a C1 control (U+0080-U+009F), a
 * line or paragraph separator (U+2028, U+2029) or a bidirectional override or isolate (U+202A-U+202E,
 * U+2066-U+2069), which change how the text around them reads; 0 for any other. */
static size_t label_char_refused(const unsigned char *s, size_t left) {
  if (left >= 2 && s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) return 2;
  if (left >= 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] >= 0xa8 && s[2] <= 0xae) return 3;
  if (left >= 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9) return 3;
  return 0;
}

static int label_one(char *field, const char *kv, size_t len, char *err, size_t errn) {
  const char *eq = memchr(kv, '=', len);
  if (!eq || eq == kv)
    return snprintf(err, errn, "be key=value (got '%.*s')", (int)(len > 80 ? 80 : len), kv), -1;
  size_t klen = (size_t)(eq - kv), vlen = len - klen - 1;
  if (klen > 64) return snprintf(err, errn, "have a key of at most 64 characters"), -1;
  for (size_t i = 0; i < klen; i++) {
    char ch = kv[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || (i > 0 && ch >= '0' && ch <= '9');
    if (!ok)
      return snprintf(err, errn, "have a key of letters, digits and _ not starting with a digit, as a Prometheus "
                                 "label name (got '%.*s')", (int)klen, kv), -1;
  }
  if (klen >= 2 && kv[0] == '_' && kv[1] == '_')
    return snprintf(err, errn, "have a key not starting with __ (Prometheus keeps those)"), -1;
  /* Prometheus label names are written in lower case (prom.c): a key that is a reserved one or another label in
   * another case would repeat a label name, and node_exporter refuses the whole file */
  for (int i = 0; RESERVED_LABELS[i]; i++)
    if (strlen(RESERVED_LABELS[i]) == klen && !strncasecmp(kv, RESERVED_LABELS[i], klen))
      return snprintf(err, errn, "not use the key '%.*s': ddpbench's own series carry '%s'", (int)klen, kv,
                      RESERVED_LABELS[i]), -1;
  if (vlen > 256) return snprintf(err, errn, "have a value of at most 256 bytes"), -1;
  for (size_t i = 0; i < vlen; i++) {
    const unsigned char *c = (const unsigned char *)eq + 1 + i;
    if (*c < 0x20 || *c == 0x7f || label_char_refused(c, vlen - i))
      return snprintf(err, errn, "have a value without control characters, line separators or bidirectional "
                                 "overrides (label '%.*s')", (int)klen, kv), -1;
  }
  /* the same key given before: dropped, so that the later one counts; the same in another case: refused */
  size_t flen = strlen(field);
  for (char *line = field; *line;) {
    char *nl = strchr(line, '\n');
    size_t ll = nl ? (size_t)(nl - line) + 1 : strlen(line);
    if (!strncasecmp(line, kv, klen + 1) && strncmp(line, kv, klen + 1))
      return snprintf(err, errn, "not differ from the label '%.*s' given before only in case (label '%.*s': "
                                 "Prometheus label names are written in lower case)", (int)klen, line, (int)klen,
                      kv), -1;
    if (!strncmp(line, kv, klen + 1)) {
      memmove(line, line + ll, flen - (size_t)(line - field) - ll + 1);
      flen -= ll;
      continue;
    }
    line += ll;
  }
  int n = 0;
  for (const char *c = field; *c; c++) n += *c == '\n';
  if (n >= OUTPUTS_MAX_LABELS) return snprintf(err, errn, "be given at most %d times", OUTPUTS_MAX_LABELS), -1;
  snprintf(field + flen, sizeof(((result_outputs *)0)->labels) - flen, "%.*s\n", (int)len, kv);
  return 0;
}

static int label_parse(void *field, const char *value, char *err, size_t errn) {
  char *f = field;
  if (!value[0]) { /* none: the default (and what an empty set prints as); never erases labels given before */
    if (f[0]) return snprintf(err, errn, "key=value: an empty label would erase the labels given before it"), -1;
    return 0;
  }
  for (const char *p = value; *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (label_one(f, p, len, err, errn) != 0) return -1;
    p += len + (comma != NULL);
    if (comma && !*p) return snprintf(err, errn, "be key=value (a comma separates two labels)"), -1;
  }
  return 0;
}

static void label_format(const void *field, char *out, size_t n) {
  size_t k = 0;
  out[0] = 0;
  for (const char *c = field; *c && k + 1 < n; c++) out[k++] = *c == '\n' ? (c[1] ? ',' : 0) : *c;
  if (k < n) out[k] = 0;
}

#define SPEC_LABEL                                                                                            \
  {"label", NULL, 0, OPT_CUSTOM, offsetof(result_outputs, labels), sizeof(((result_outputs *)0)->labels), "", \
   .parse = label_parse, .format = label_format, .arg = "KEY=VALUE",                                          \
   .help = "name this run in its result, CSV rows and Prometheus series (repeatable: --label side=A "         \
           "--label nccl=2.21.5); compare and the plots name the sides by it",                                \
   .flags = OPT_NO_HASH}

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
    SPEC_LABEL,
};
static const opt_spec OUTPUTS_JSON[] = {SPEC_JSON, SPEC_FORCE, SPEC_LABEL};
static const opt_spec OUTPUTS_QUIET[] = {
    {"quiet", NULL, 0, OPT_BOOL, offsetof(result_outputs, quiet), 0, "false",
     .help = "print only the findings that are not passes and the bottom line (no progress lines)",
     .flags = OPT_NO_HASH},
};
const opt_table outputs_quiet_table = {"outputs", OUTPUTS_QUIET, 1};
const opt_table outputs_table = {"outputs", OUTPUTS, (int)(sizeof OUTPUTS / sizeof OUTPUTS[0])};
const opt_table outputs_json_table = {"outputs", OUTPUTS_JSON, (int)(sizeof OUTPUTS_JSON / sizeof OUTPUTS_JSON[0])};

/* The failing hosts, one per line, duplicates left out. A byte that no host name holds (a control character,
 * a space, a comma, a backslash, DEL) is written as \xHH and said on stderr: such a name is never dropped (a
 * failing host missing from the drain list passes for healthy), and never splits into
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
   * U+FFFD, so that every JSON reader can read the document. Outside strings cJSON
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
#define NFORMATS (sizeof FORMATS / sizeof FORMATS[0]) /* in the order of the OUTPUT_* bits */

static const char *path_of(const result_outputs *o, size_t i) { return (const char *)o + FORMATS[i].offset; }

int outputs_to_stdout(const result_outputs *o) {
  int n = 0;
  for (size_t i = 0; i < NFORMATS; i++) n += atomic_file_is_stdout(path_of(o, i));
  return n;
}

static int kv_key_cmp(const void *a, const void *b) {
  return strcmp(((const result_kv *)a)->key, ((const result_kv *)b)->key);
}

ddp_result outputs_labels_apply(const result_outputs *o, result_doc *d) {
  for (const char *line = o->labels; *line;) {
    const char *nl = strchr(line, '\n'), *eq = strchr(line, '=');
    size_t ll = nl ? (size_t)(nl - line) : strlen(line);
    char key[80], value[300];
    snprintf(key, sizeof key, "%.*s", (int)(eq - line), line);
    snprintf(value, sizeof value, "%.*s", (int)(ll - (size_t)(eq - line) - 1), eq + 1);
    int i = 0;
    while (i < d->nlabels && strcmp(d->labels[i].key, key)) i++;
    if (i < d->nlabels) {
      char *v = strdup(value);
      DDP_CHECK_ALLOC(v);
      free(d->labels[i].value);
      d->labels[i].value = v;
    } else {
      DDP_TRY(result_kv_push(&d->labels, &d->nlabels, key, value));
    }
    line += ll + (nl != NULL);
  }
  if (d->nlabels > 1) qsort(d->labels, (size_t)d->nlabels, sizeof *d->labels, kv_key_cmp);
  return DDP_OK;
}

int outputs_any(const result_outputs *o) {
  for (size_t i = 0; i < NFORMATS; i++)
    if (path_of(o, i)[0]) return 1;
  return 0;
}

ddp_result outputs_check(const result_outputs *o, char *err, size_t errn) {
  if (outputs_to_stdout(o) > 1) {
    snprintf(err, errn, "more than one output is - (standard output): give - to one of --json, --prom, --csv "
                        "and --failed-hosts, and files to the others");
    return DDP_ERR_USAGE;
  }
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

ddp_result outputs_write_some(const result_outputs *o, unsigned which, unsigned replace, int files_only,
                              const result_doc *d, const cJSON *sections, int quiet) {
  /* Every output is attempted: one that cannot be written (its folder filled up) does not cost the others. */
  ddp_result first = DDP_OK;
  for (size_t i = 0; i < NFORMATS; i++) {
    const char *p = path_of(o, i);
    if (!p[0] || !(which & (1u << i)) || (files_only && atomic_file_is_stdout(p))) continue;
    char *text = NULL;
    size_t n = 0;
    ddp_result r = FORMATS[i].format(d, sections, &text, &n);
    if (r == DDP_OK) r = atomic_file_write(p, text, n, o->force || (replace & (1u << i)));
    free(text);
    if (r == DDP_OK && !quiet && !atomic_file_is_stdout(p)) fprintf(stderr, "[ddpbench] wrote %s\n", p);
    if (r != DDP_OK && first == DDP_OK) first = r;
  }
  return first;
}

ddp_result outputs_write(const result_outputs *o, const result_doc *d, const cJSON *sections, int quiet) {
  return outputs_write_some(o, ~0u, 0, 0, d, sections, quiet);
}
