/* test_options: the one option layer (options.h) through every subcommand's set as the skeleton builds it
 * (cmd_parse): each set's keys are distinct and their defaults parse; the rules are the same everywhere
 * (--k v, --k=v, -k v, -kv, booleans, a value that looks like an option, "-" and negative numbers, errors
 * naming the key); one config file serves every subcommand, sections checked against their subcommand's keys
 * with the file and line named; --help is generated for every subcommand, at most 100 columns, with value
 * placeholders; --device and --comm list the tables' rows. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "commands.h"
#include "config.h"
#include "testlib.h"

static char tmpdir[] = "/tmp/ddpbench-test-options-XXXXXX";
static cmd_ctx ctx;
static char err[4096];

/* cmd_parse of def over a NULL-terminated list, stderr (the one error line) captured into err. */
static ddp_result parse(const cmd_def *def, ...) {
  char *argv[40] = {(char *)(def == &cmd_run ? "ddpbench" : def->name)};
  int argc = 1;
  va_list ap;
  va_start(ap, def);
  for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 39;) argv[argc++] = a;
  va_end(ap);
  ddp_usage_capture(err, sizeof err);
  err[0] = 0;
  cmd_free(&ctx);
  ddp_result r = cmd_parse(&ctx, def, argc, argv);
  ddp_usage_capture(NULL, 0);
  return r;
}

static const ddp_config *run_cfg(void) { return ctx.args; }

/* A key's value as the option layer prints it, after the last parse. */
static const char *key_value(const char *name) {
  static char v[2][1024];
  static int k;
  k ^= 1;
  v[k][0] = 0;
  const char *key;
  for (int i = 0; opt_key_at(&ctx.opts, i, &key, v[k], sizeof v[k], NULL); i++)
    if (!strcmp(key, name)) return v[k];
  v[k][0] = 0;
  return v[k];
}

static void test_sets(void) {
  for (int i = 0; ddpbench_commands[i]; i++) {
    const cmd_def *def = ddpbench_commands[i];
    ddp_result r = parse(def, NULL);
    /* export, compare and judge need operands; everything else parses from defaults alone */
    int needs = !strcmp(def->name, "export") || !strcmp(def->name, "compare") || !strcmp(def->name, "judge");
    CHECK(needs ? r == DDP_ERR_USAGE || r == DDP_OK : r == DDP_OK, "%s: defaults: %s", def->name, err);
    CHECK(ctx.opts.nkeys > 0, "%s has keys", def->name);
    /* every key prints and parses back to itself */
    const char *key;
    char value[4200];
    int bad = 0;
    for (int k = 0; opt_key_at(&ctx.opts, k, &key, value, sizeof value, NULL); k++)
      if (opt_apply(&ctx.opts, key, value, "round trip", OPT_SRC_CLI, 0) != DDP_OK) bad++;
    CHECK(bad == 0, "%s: %d keys did not round-trip", def->name, bad);
    /* --help: every line at most 100 columns, every key listed with a placeholder where it takes a value */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    opt_help(&ctx.opts, f, def->usage, def->about);
    fclose(f);
    int wide = 0, missing = 0;
    for (char *p = text; p && *p;) {
      char *e = strchr(p, '\n');
      size_t n = e ? (size_t)(e - p) : strlen(p);
      wide += n > 100;
      p = e ? e + 1 : NULL;
    }
    const opt_spec *spec;
    for (int k = 0; opt_key_at(&ctx.opts, k, &key, value, sizeof value, &spec); k++) {
      if (spec->flags & OPT_HIDDEN) continue;
      char opt[80];
      snprintf(opt, sizeof opt, "--%s%s", key, spec->type == OPT_BOOL ? "" : " ");
      for (char *p = opt; *p; p++)
        if (*p == '_') *p = '-';
      missing += strstr(text, opt) == NULL;
    }
    CHECK(wide == 0 && missing == 0, "%s --help: %d lines over 100 columns, %d keys not listed", def->name, wide, missing);
    free(text);
  }
}

static void test_rules(void) {
  /* --k v, --k=v, dashes or underscores */
  CHECK(parse(&cmd_run, "--hidden", "64", "--bucket_mb=2", NULL) == DDP_OK && run_cfg()->hidden == 64 &&
            run_cfg()->bucket_mb == 2, "--k v and --k=v: %s", err);
  CHECK(parse(&cmd_accept, "--health-seconds=2", "--copy-mib", "8", NULL) == DDP_OK, "accept takes --k=v: %s", err);
  CHECK(parse(&cmd_collectives, "-b8", "-e", "16", "--iters=3", "-T", "1.5", NULL) == DDP_OK, "short options, -T 1.5: %s", err);
  CHECK(parse(&cmd_doctor, "--timeout=1.5", "--pcie", NULL) == DDP_OK, "doctor --timeout=1.5: %s", err);
  /* a value that is an option is refused, for every subcommand with --json */
  const cmd_def *with_json[] = {&cmd_run, &cmd_accept, &cmd_collectives, &cmd_doctor, &cmd_export};
  for (size_t i = 0; i < sizeof with_json / sizeof with_json[0]; i++) {
    CHECK(parse(with_json[i], "--json", "--force", NULL) == DDP_ERR_USAGE && strstr(err, "--json needs a value, got the option '--force'"),
          "%s --json --force: %s", with_json[i]->name, err);
  }
  CHECK(parse(&cmd_run, "--json=--odd", NULL) == DDP_OK && !strcmp(ctx.out.json, "--odd"), "--k=--value: %s", err);
  /* "-" and negative numbers are values */
  CHECK(parse(&cmd_run, "--inject-nonfinite", "-1", "--json", "-", NULL) == DDP_OK && run_cfg()->inject_nonfinite == -1 &&
            !strcmp(ctx.out.json, "-"), "'-1' and '-' are values: %s", err);
  /* booleans */
  CHECK(parse(&cmd_run, "--strict", NULL) == DDP_OK && run_cfg()->strict, "--strict alone");
  CHECK(parse(&cmd_run, "--strict", "false", NULL) == DDP_OK && !run_cfg()->strict, "--strict false");
  CHECK(parse(&cmd_run, "--strict", "true", "--hidden", "32", NULL) == DDP_OK && run_cfg()->strict && run_cfg()->hidden == 32,
        "--strict true: %s", err);
  CHECK(parse(&cmd_run, "--strict=false", NULL) == DDP_OK && !run_cfg()->strict, "--strict=false");
  CHECK(parse(&cmd_accept, "--strict", "true", NULL) == DDP_OK, "accept --strict true: %s", err);
  CHECK(parse(&cmd_collectives, "--force", "true", NULL) == DDP_OK && ctx.out.force, "collectives --force true: %s", err);
  CHECK(parse(&cmd_run, "--strict", "yes", NULL) == DDP_ERR_USAGE && strstr(err, "'yes'"),
        "--strict followed by another word: that word is not its value: %s", err);
  CHECK(parse(&cmd_run, "--strict=maybe", NULL) == DDP_ERR_USAGE && strstr(err, "strict must be true or false"),
        "--strict=maybe: %s", err);
  /* errors name the key, with the subcommand */
  CHECK(parse(&cmd_accept, "--copy-mib", "many", NULL) == DDP_ERR_USAGE && strstr(err, "accept: --copy-mib: copy_mib must be an integer"),
        "accept error: %s", err);
  CHECK(parse(&cmd_accept, "--copy-mib", NULL) == DDP_ERR_USAGE && strstr(err, "--copy-mib needs a value"), "missing value: %s", err);
  CHECK(parse(&cmd_doctor, "--bogus", NULL) == DDP_ERR_USAGE && strstr(err, "doctor: unknown option '--bogus'"), "unknown: %s", err);
  CHECK(parse(&cmd_compare, "-x", "a", "--", "b", NULL) == DDP_ERR_USAGE && strstr(err, "'-x'"), "compare -x: %s", err);
  /* --help wins, and never needs the rest to parse */
  CHECK(parse(&cmd_compare, "-h", NULL) == DDP_OK && ctx.opts.help, "compare -h");
  CHECK(parse(&cmd_collectives, "-b", "x", "--help", NULL) == DDP_OK && ctx.opts.help, "--help after a bad value");
  /* operands */
  CHECK(parse(&cmd_collectives, "all_gather,broadcast", "alltoall", NULL) == DDP_OK, "collective names: %s", err);
  CHECK(parse(&cmd_compare, "a.json", "b.json", "--", "c.json", NULL) == DDP_OK, "compare sides: %s", err);
  CHECK(parse(&cmd_topo, "extra", NULL) == DDP_ERR_USAGE && strstr(err, "unexpected argument 'extra'"), "topo extra: %s", err);
  /* found by the safety net's review: a fixed nccl-tests option at 0, a second '--', a short option where a
   * file name belongs, an empty file name, a comma inside a file name */
  CHECK(parse(&cmd_collectives, "-z", "1", NULL) == DDP_ERR_USAGE && strstr(err, "blocking 1 is not supported (only 0)"),
        "-z 1: %s", err);
  CHECK(parse(&cmd_collectives, "-z", "0", NULL) == DDP_OK, "-z 0: %s", err);
  CHECK(parse(&cmd_compare, "a.json", "--", "b.json", "--", "c.json", NULL) == DDP_ERR_USAGE && strstr(err, "'--' given twice"),
        "a second --: %s", err);
  CHECK(parse(&cmd_export, "r.json", "--prom", "-J", NULL) == DDP_ERR_USAGE && strstr(err, "--prom needs a value, got the option '-J'"),
        "--prom -J: %s", err);
  CHECK(parse(&cmd_export, "r.json", "--prom=-J", NULL) == DDP_OK && !strcmp(ctx.out.prom, "-J"), "--prom=-J: %s", err);
  CHECK(parse(&cmd_doctor, "--json", "", NULL) == DDP_ERR_USAGE && strstr(err, "--json needs a file name, got an empty word"),
        "--json '': %s", err);
  CHECK(parse(&cmd_accept, "--expect=", NULL) == DDP_ERR_USAGE && strstr(err, "--expect needs a file name"), "--expect=: %s", err);
  CHECK(parse(&cmd_export, "r,1.json", "--json", "x.json", NULL) == DDP_OK, "a comma in export's file name: %s", err);
  CHECK(parse(&cmd_compare, "a,1.json", "a2.json", "--", "b,1.json", NULL) == DDP_OK && !strcmp(key_value("a"), "a,1.json\na2.json") &&
            !strcmp(key_value("b"), "b,1.json\n"), "compare keeps commas in names: a '%s', b '%s'", key_value("a"), key_value("b"));
  /* found by fuzz_options: the printed list reads back as the same names (a name with a comma, alone or not) */
  CHECK(parse(&cmd_compare, "--a", "a,1.json\na2.json", "--b", "b,1.json\n", NULL) == DDP_OK &&
            !strcmp(key_value("a"), "a,1.json\na2.json") && !strcmp(key_value("b"), "b,1.json\n"),
        "printed lists read back: a '%s', b '%s'", key_value("a"), key_value("b"));
  CHECK(parse(&cmd_compare, "--a=x.json,y.json", "--b", "z.json", NULL) == DDP_OK && !strcmp(key_value("a"), "x.json\ny.json"),
        "--a's commas separate files: '%s'", key_value("a"));
  /* choices from the tables */
  char devs[256] = "auto", comms[256] = "auto";
  for (int i = 0; device_at(i); i++) strcat(strcat(devs, "|"), device_at(i)->name);
  for (int i = 0; comm_at(i); i++) strcat(strcat(comms, "|"), comm_at(i)->name);
  const cmd_def *placed[] = {&cmd_run, &cmd_accept, &cmd_collectives};
  for (size_t i = 0; i < sizeof placed / sizeof placed[0]; i++) {
    CHECK(parse(placed[i], "--device", "hip", NULL) == DDP_ERR_USAGE && strstr(err, devs), "%s --device hip lists %s: %s",
          placed[i]->name, devs, err);
    CHECK(parse(placed[i], "--comm", "ucc", NULL) == DDP_ERR_USAGE && strstr(err, comms), "%s --comm ucc lists %s: %s",
          placed[i]->name, comms, err);
  }
}

static void test_file(void) {
  char path[300], bad[300];
  snprintf(path, sizeof path, "%s/all.ini", tmpdir);
  tl_file_write(path, "; one file for every subcommand\n[model]\nhidden = 128\n[run]\nsteps = 3\n[accept]\n"
                      "health_seconds = 2\ncopy_mib = 16\n[collectives]\nminbytes = 1K\nmaxbytes = 4K\n[doctor]\n"
                      "pcie = true\n");
  CHECK(parse(&cmd_run, "--config", path, NULL) == DDP_OK && run_cfg()->hidden == 128 && run_cfg()->steps == 3,
        "the run: its sections only: %s", err);
  CHECK(parse(&cmd_accept, "--config", path, "--copy-mib", "32", NULL) == DDP_OK, "accept: [accept]: %s", err);
  char v[64];
  const char *k;
  int seen = 0;
  for (int i = 0; opt_key_at(&ctx.opts, i, &k, v, sizeof v, NULL); i++)
    seen += (!strcmp(k, "health_seconds") && !strcmp(v, "2")) + (!strcmp(k, "copy_mib") && !strcmp(v, "32"));
  CHECK(seen == 2, "accept: the file's value, the command line wins");
  CHECK(parse(&cmd_collectives, "--config", path, NULL) == DDP_OK, "collectives: [collectives]: %s", err);
  CHECK(parse(&cmd_doctor, "--config", path, NULL) == DDP_OK, "doctor: [doctor]: %s", err);
  char w[64];
  CHECK(parse(&cmd_accept, "--config", path, NULL) == DDP_OK && opt_where(&ctx.opts, "health_seconds", w, sizeof w) &&
            strstr(w, "all.ini:7"), "where a value came from: %s", w);
  /* a key in the wrong section: an error naming the file, the line and whose key it is */
  snprintf(bad, sizeof bad, "%s/bad.ini", tmpdir);
  tl_file_write(bad, "[model]\nhidden = 64\n[accept]\nhidden = 64\n");
  CHECK(parse(&cmd_run, "--config", bad, NULL) == DDP_ERR_USAGE && strstr(err, "bad.ini:4: unknown key 'hidden' in [accept]") &&
            strstr(err, "the run"), "the run's key in [accept], seen by the run: %s", err);
  CHECK(parse(&cmd_accept, "--config", bad, NULL) == DDP_ERR_USAGE && strstr(err, "bad.ini:4"),
        "the same, seen by accept: %s", err);
  tl_file_write(bad, "[collectives]\nhealth_seconds = 3\n");
  CHECK(parse(&cmd_doctor, "--config", bad, NULL) == DDP_ERR_USAGE && strstr(err, "bad.ini:2") && strstr(err, "[accept]"),
        "accept's key in [collectives], seen by doctor: %s", err);
  tl_file_write(bad, "[accept]\ncopy_mib = lots\n");
  CHECK(parse(&cmd_run, "--config", bad, NULL) == DDP_ERR_USAGE && strstr(err, "bad.ini:2: copy_mib must be an integer"),
        "a bad value in another subcommand's section: %s", err);
  /* A line that starts with \v, \f or \r is an indented continuation to inih (isspace), which
   * would replace the previous key's value: refused with the line, never "steps = 500" */
  static const char *const lead[] = {"\v", "\f", "\r", " ", "\t"};
  for (size_t i = 0; i < sizeof lead / sizeof lead[0]; i++) {
    char text[64];
    snprintf(text, sizeof text, "[run]\nsteps = 3\n%s500\nlr = 0.01\n", lead[i]);
    tl_file_write(bad, text);
    CHECK(parse(&cmd_run, "--config", bad, NULL) == DDP_ERR_USAGE && strstr(err, "bad.ini:3") && strstr(err, "indented"),
          "a line starting with byte %d is refused, not a continuation: %s", lead[i][0], err);
  }
  CHECK(parse(&cmd_export, "x.json", "--json", "y.json", "--config", path, "--config", bad, NULL) == DDP_ERR_USAGE &&
            strstr(err, "given twice"), "--config twice: %s", err);
  /* existing run configs keep working */
  char ci[600];
  snprintf(ci, sizeof ci, "%s/configs/ci.ini", getenv("DDPBENCH_SOURCE_DIR") ? getenv("DDPBENCH_SOURCE_DIR") : ".");
  if (access(ci, R_OK) == 0)
    CHECK(parse(&cmd_run, "--config", ci, NULL) == DDP_OK && run_cfg()->hidden == 64, "configs/ci.ini: %s", err);
}

int main(void) {
  cmd_use(ddpbench_commands);
  if (!mkdtemp(tmpdir)) return perror("mkdtemp"), 1;
  test_sets();
  test_rules();
  test_file();
  cmd_free(&ctx);
  tl_rmtree(tmpdir);
  return check_summary();
}
