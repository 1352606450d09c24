/* fuzz_options: libFuzzer target for the option layer (base/options.c) through every subcommand's option set:
 * cmd_parse (cmd.h) over each cmd_def of ddpbench_commands, which is exactly what a subcommand does before MPI
 * starts (the --config file and the command line over all of its tables, every other subcommand's section of
 * the file checked against that subcommand's keys, then the subcommand's cross-key validate).
 *
 * Input: the first byte selects the subcommand (modulo the number of commands, in ddpbench_commands' order:
 * 0 run, 1 accept, 2 collectives, 3 doctor, 4 topo, 5 compare, 6 export); then the INI text of a --config
 * file; then optionally a NUL byte and command-line words separated by newlines (at most 30). The argv is
 * `NAME --config FILE WORDS...` (NAME: "ddpbench" for the run, else the subcommand's name); the file is written
 * to /tmp/ddpbench-fuzz-options-PID.ini. A word "@", or a word ending in "=@", stands for that file's path (or
 * ends with it), so that the options that read a file before MPI (accept's --expect and --baseline) and the
 * outputs' checks reach a real file: --expect @ reads the same INI text as expectations.
 *
 * Properties checked on every input (abort() on a violation):
 *   - cmd_parse returns DDP_OK or DDP_ERR_USAGE only (and never crashes, hangs or trips a sanitizer or the
 *     leak checker: cmd_free must release everything cmd_parse took);
 *   - every refusal says why: the message captured with ddp_usage_capture is non-empty and one line;
 *   - an accepted set (not --help or --version): every key's printed value (opt_key_at) parses back through
 *     opt_apply onto a fresh parse of the same subcommand with no arguments (cmd_parse, argc 1), prints back
 *     the same text, and the two sets have the same opt_hash; and its --help (opt_help) has no line over 100
 *     columns; and every key the file set (OPT_SRC_FILE) is named at the start of the line opt_set.line says
 *     it came from (a value glued on from another line, as inih does with continuation lines, is a misparse).
 * DDPBENCH_FUZZ_VERBOSE=1 in the environment prints each input's outcome (to check what a seed reaches). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "commands.h"

#define MAX_WORDS 30
#define HELP_COLS 100

static char path[64];
static int ncmds, verbose; /* verbose: DDPBENCH_FUZZ_VERBOSE set, one line per input (to look at seeds) */

static const char *prog_name(const cmd_def *def) { return strcmp(def->name, "run") == 0 ? "ddpbench" : def->name; }

/* Every line of def's --help at most HELP_COLS columns. */
static void check_help(const cmd_ctx *c) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) abort();
  opt_help(&c->opts, f, c->def->usage, c->def->about);
  if (fclose(f) != 0 || !text) abort();
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, "\n");
    if (n > HELP_COLS) {
      fprintf(stderr, "fuzz_options: %s --help: a line of %zu columns: %.*s\n", c->def->name, n, (int)n, p);
      abort();
    }
    p += n;
    if (*p) p++;
  }
  free(text);
}

/* Every key of c printed, applied to a fresh default parse of the same subcommand: same text, same hash. */
static void check_round_trip(const cmd_ctx *c) {
  static cmd_ctx back;
  static char value[20000], again[20000], msg[4096];
  char *argv[2] = {(char *)prog_name(c->def), NULL};
  ddp_usage_capture(msg, sizeof msg);
  ddp_result r = cmd_parse(&back, c->def, 1, argv);
  ddp_usage_capture(NULL, 0);
  /* the defaults alone may fail a subcommand's validate (export: no result file given); the set is built */
  if (r != DDP_OK && r != DDP_ERR_USAGE) abort();
  if (back.opts.nkeys != c->opts.nkeys || back.opts.nparts != c->opts.nparts) abort();
  const char *key, *key2;
  for (int i = 0; opt_key_at(&c->opts, i, &key, value, sizeof value, NULL); i++) {
    if (strlen(value) + 1 >= sizeof value) abort(); /* the printed value must not have been cut */
    ddp_usage_capture(msg, sizeof msg);
    r = opt_apply(&back.opts, key, value, "round trip", OPT_SRC_CLI, 0);
    ddp_usage_capture(NULL, 0);
    if (r != DDP_OK) {
      fprintf(stderr, "fuzz_options: %s: %s=%s does not parse back: %s\n", c->def->name, key, value, msg);
      abort();
    }
    if (!opt_key_at(&back.opts, i, &key2, again, sizeof again, NULL) || strcmp(key, key2) != 0) abort();
    if (strcmp(value, again) != 0) {
      fprintf(stderr, "fuzz_options: %s: %s=%s prints back as %s\n", c->def->name, key, value, again);
      abort();
    }
  }
  if (opt_hash(&back.opts) != opt_hash(&c->opts)) {
    fprintf(stderr, "fuzz_options: %s: the hash differs after the round trip\n", c->def->name);
    abort();
  }
  cmd_free(&back);
}

/* 1 when name is spec's key or one of its aliases ('-' and '_' alike, as options.c compares them). */
static int names_key(const opt_spec *k, const char *name, size_t n) {
  for (const char *p = k->key, *alias = k->aliases; p;) {
    size_t len = strcspn(p, "|");
    if (len == n) {
      size_t i = 0;
      while (i < n && (p[i] == name[i] || (strchr("-_", p[i]) && strchr("-_", name[i])))) i++;
      if (i == n) return 1;
    }
    p += len;
    if (*p == '|') p++;
    else p = alias, alias = NULL;
    if (p && !*p) p = NULL;
  }
  return 0;
}

/* Every key set from the file names itself at the start of its line: "key = ..." or "key: ..." (inih's
 * separators), after a UTF-8 BOM on line 1 only. */
static void check_file_lines(const cmd_ctx *c, const char *ini, size_t n) {
  const char *key;
  const opt_spec *k;
  static char value[20000];
  for (int i = 0; opt_key_at(&c->opts, i, &key, value, sizeof value, &k); i++) {
    if (c->opts.src[i] != OPT_SRC_FILE) continue;
    int want = c->opts.line[i], at = 1;
    const char *p = ini, *end = ini + n;
    while (at < want && p < end) {
      const char *e = memchr(p, '\n', (size_t)(end - p));
      if (!e) break;
      p = e + 1, at++;
    }
    if (at != want || p > end) abort(); /* the set names a line the file does not have */
    if (want == 1 && end - p >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3)) p += 3;
    size_t len = 0;
    while (p + len < end && p[len] != '=' && p[len] != ':' && p[len] != '\n') len++;
    while (len && strchr(" \t\v\f\r", p[len - 1])) len--; /* inih's rstrip: isspace */
    if (!names_key(k, p, len)) {
      const char *e = memchr(p, '\n', (size_t)(end - p));
      fprintf(stderr, "fuzz_options: %s: %s was set by line %d of the file, which is '%.*s'\n", c->def->name, key,
              want, (int)((e ? e : end) - p), p);
      abort();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/ddpbench-fuzz-options-%ld.ini", (long)getpid());
    cmd_use(ddpbench_commands);
    while (ddpbench_commands[ncmds]) ncmds++;
    verbose = getenv("DDPBENCH_FUZZ_VERBOSE") != NULL;
  }
  if (n == 0) return 0;
  const cmd_def *def = ddpbench_commands[data[0] % ncmds];
  data++, n--;
  const uint8_t *nul = memchr(data, 0, n);
  size_t ini_n = nul ? (size_t)(nul - data) : n;
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  if (ini_n) fwrite(data, 1, ini_n, f);
  if (fclose(f) != 0) abort();
  /* argv: NAME --config PATH, then the words after the NUL */
  char *args = NULL;
  char *argv[3 + MAX_WORDS + 1] = {(char *)prog_name(def), "--config", path};
  int argc = 3;
  if (nul) {
    size_t k = n - ini_n - 1;
    args = malloc(k + 1);
    if (!args) abort();
    memcpy(args, nul + 1, k);
    args[k] = 0;
    static char subst[MAX_WORDS][sizeof path + 200];
    for (char *save = NULL, *a = strtok_r(args, "\n", &save); a && argc < 3 + MAX_WORDS; a = strtok_r(NULL, "\n", &save)) {
      size_t len = strlen(a);
      if (a[len - 1] == '@' && (len == 1 || (a[len - 2] == '=' && len < 200))) { /* "@", "--key=@" */
        char *w = subst[argc - 3];
        snprintf(w, sizeof subst[0], "%.*s%s", (int)(len - 1), a, path);
        a = w;
      }
      argv[argc++] = a;
    }
  }
  argv[argc] = NULL;
  static cmd_ctx c;
  static char msg[4096];
  ddp_usage_capture(msg, sizeof msg);
  ddp_result r = cmd_parse(&c, def, argc, argv);
  ddp_usage_capture(NULL, 0);
  if (r != DDP_OK && r != DDP_ERR_USAGE) {
    fprintf(stderr, "fuzz_options: %s: cmd_parse returned %s\n", def->name, ddp_result_str(r));
    abort();
  }
  if (r == DDP_ERR_USAGE && (!msg[0] || strchr(msg, '\n'))) { /* every refusal says why, in one line */
    fprintf(stderr, "fuzz_options: %s: refused with %s message: '%s'\n", def->name, msg[0] ? "a multi-line" : "no", msg);
    abort();
  }
  if (verbose)
    fprintf(stderr, "fuzz_options: %s: %s\n", def->name,
            r != DDP_OK ? msg : c.opts.help ? "--help" : c.opts.version ? "--version" : "accepted");
  if (r == DDP_OK && !c.opts.help && !c.opts.version) {
    check_file_lines(&c, (const char *)data, ini_n);
    check_round_trip(&c);
    check_help(&c);
  }
  cmd_free(&c);
  free(args);
  return 0;
}
