/* test_config: configuration from defaults, an INI file and the command line; every kind of bad input gives
 * one line naming the key (and file:line) and DDP_ERR_USAGE; and the same through the real program: exit
 * code 2 before MPI starts, --help listing every key, --version. argv[1] is the ddpbench binary. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "commands.h"
#include "config.h"
#include "testlib.h"

static char tmpdir[] = "/tmp/ddpbench-test-config-XXXXXX";

/* The run's options as the skeleton reads them (cmd_parse over cmd_run): the last parse's set and values. */
static cmd_ctx ctx;

/* Parses a NULL-terminated argument list into cfg; returns the result and the stderr text. */
static ddp_result parse(ddp_config *cfg, char *err, size_t errn, ...) {
  char *argv[32] = {"ddpbench"};
  int argc = 1;
  va_list ap;
  va_start(ap, errn);
  for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;) argv[argc++] = a;
  va_end(ap);
  const char *path = tl_path(tmpdir, "stderr");
  int saved = tl_stderr_redirect(path);
  cmd_free(&ctx);
  ddp_result r = cmd_parse(&ctx, &cmd_run, argc, argv);
  if (ctx.args) *cfg = *(ddp_config *)ctx.args;
  tl_stderr_restore(saved, path, err, errn);
  return r;
}

static void expect_bad(const char *what, const char *needle, ddp_result r, const char *err) {
  CHECK(r == DDP_ERR_USAGE, "%s: expected a usage error, got %d", what, r);
  CHECK(tl_newlines(err) == 1, "%s: expected one line on stderr, got: %s", what, err);
  CHECK(strstr(err, needle) != NULL, "%s: message '%s' does not name '%s'", what, err, needle);
}

static void test_api(void) {
  ddp_config c;
  char err[2048];
  config_defaults(&c);
  CHECK(config_validate(&c, NULL) == DDP_OK, "defaults are valid");
  CHECK(c.hidden == 1024 && c.layers == 4 && c.batch == 256 && c.steps == 20 && c.warmup == 5, "model defaults");
  CHECK(c.bucket_mb == 25 && c.first_bucket_mb == 1 && !c.gradient_as_bucket_view, "DDP defaults");
  CHECK(c.loss_scale_init == 65536 && c.loss_scale_growth_factor == 2 && c.loss_scale_backoff == 0.5 &&
            c.loss_scale_growth_interval == 2000, "GradScaler defaults");
  CHECK(c.lr == 0.01 && c.momentum == 0 && c.inject_nonfinite == -1, "optimizer defaults");

  CHECK(parse(&c, err, sizeof err, "--hidden", "64", "--precision=bf16", "--gradient-as-bucket-view", "--seed", "0x10",
              NULL) == DDP_OK, "good options: %s", err);
  CHECK(c.hidden == 64 && c.precision == PREC_BF16 && c.gradient_as_bucket_view == 1 && c.seed == 16, "values applied");
  CHECK(strstr(ctx.opts.command_line, "--precision=bf16") != NULL, "command line recorded");

  char ini[512], ini2[512];
  snprintf(ini, sizeof ini, "%s/run.ini", tmpdir);
  tl_file_write(ini, "; a comment\n# another\n[model]\nhidden = 128\nlayers=3\n[ddp]\nbucket_mb = 0.5\n"
                  "gradient_as_bucket_view = yes\nprecision = fp16\n");
  CHECK(parse(&c, err, sizeof err, "--config", ini, "--layers", "5", NULL) == DDP_OK, "config file: %s", err);
  CHECK(c.hidden == 128 && c.layers == 5 && c.bucket_mb == 0.5 && c.gradient_as_bucket_view && c.precision == PREC_FP16,
        "file values, command line wins (layers %d)", c.layers);
  CHECK(c.first_bucket_mb == 0.5 && opt_given(&ctx.opts, "bucket_mb") && !opt_given(&ctx.opts, "first_bucket_mb"),
        "bucket_mb from the file caps the first bucket too (%g), as PyTorch's explicit bucket_cap_mb", c.first_bucket_mb);
  CHECK(parse(&c, err, sizeof err, "--layers", "5", "--config=" , NULL) == DDP_ERR_USAGE, "empty --config=");

  /* Bucket caps as PyTorch sets them: default 1 MiB first; bucket_mb given -> first = bucket_mb; first_bucket_mb
   * given wins (before or after bucket_mb). */
  CHECK(parse(&c, err, sizeof err, "--hidden", "64", NULL) == DDP_OK && c.first_bucket_mb == 1 && c.bucket_mb == 25 &&
            !opt_given(&ctx.opts, "bucket_mb") && opt_given(&ctx.opts, "hidden"), "caps by default: first 1, then 25");
  CHECK(parse(&c, err, sizeof err, "--bucket-mb", "25", NULL) == DDP_OK && c.first_bucket_mb == 25 && c.bucket_mb == 25,
        "--bucket-mb 25 given: first bucket 25 too (%g)", c.first_bucket_mb);
  CHECK(parse(&c, err, sizeof err, "--bucket-mb=50", "--first-bucket-mb", "2", NULL) == DDP_OK &&
            c.first_bucket_mb == 2 && c.bucket_mb == 50, "explicit first_bucket_mb wins (%g)", c.first_bucket_mb);
  CHECK(parse(&c, err, sizeof err, "--first-bucket-mb", "4", "--bucket-mb", "50", NULL) == DDP_OK &&
            c.first_bucket_mb == 4, "explicit first_bucket_mb wins in either order (%g)", c.first_bucket_mb);
  CHECK(parse(&c, err, sizeof err, "--first-bucket-mb", "4", NULL) == DDP_OK && c.first_bucket_mb == 4 &&
            c.bucket_mb == 25, "first_bucket_mb alone leaves bucket_mb at 25");

  /* Bad input, each one line naming what is wrong. */
  expect_bad("unknown option", "--hiden", parse(&c, err, sizeof err, "--hiden", "3", NULL), err);
  expect_bad("hidden 0", "hidden", parse(&c, err, sizeof err, "--hidden", "0", NULL), err);
  expect_bad("batch negative", "batch", parse(&c, err, sizeof err, "--batch", "-4", NULL), err);
  expect_bad("layers not a number", "layers", parse(&c, err, sizeof err, "--layers", "four", NULL), err);
  expect_bad("layers trailing junk", "layers", parse(&c, err, sizeof err, "--layers", "4x", NULL), err);
  expect_bad("bucket under 1 KiB", "bucket_mb", parse(&c, err, sizeof err, "--bucket-mb", "0.0001", NULL), err);
  expect_bad("first bucket under 1 KiB", "first_bucket_mb",
             parse(&c, err, sizeof err, "--first-bucket-mb", "0", NULL), err);
  expect_bad("unknown precision", "precision", parse(&c, err, sizeof err, "--precision", "fp8", NULL), err);
  expect_bad("tf32 grad_comm", "grad_comm", parse(&c, err, sizeof err, "--grad-comm", "tf32", NULL), err);
  expect_bad("bad bool", "gradient_as_bucket_view",
             parse(&c, err, sizeof err, "--gradient-as-bucket-view=maybe", NULL), err);
  expect_bad("missing value", "--steps", parse(&c, err, sizeof err, "--steps", NULL), err);
  expect_bad("positional", "extra", parse(&c, err, sizeof err, "extra", NULL), err);
  expect_bad("nan lr", "lr", parse(&c, err, sizeof err, "--lr", "nan", NULL), err);
  expect_bad("backoff 1", "loss_scale_backoff", parse(&c, err, sizeof err, "--loss-scale-backoff", "1", NULL), err);
  expect_bad("growth factor 1", "loss_scale_growth_factor",
             parse(&c, err, sizeof err, "--loss-scale-growth-factor", "1", NULL), err);
  expect_bad("interval 0", "loss_scale_growth_interval",
             parse(&c, err, sizeof err, "--loss-scale-growth-interval", "0", NULL), err);
  int order[3];
  CHECK(parse(&c, err, sizeof err, "--phases", "ddp,local,ddp", NULL) == DDP_OK && config_phases(&c, order) == 2 &&
            order[0] == 2 && order[1] == 0,
        "phases keep their order and drop repeats");
  expect_bad("bad phase", "phases", parse(&c, err, sizeof err, "--phases", "local,train", NULL), err);
  expect_bad("tf32 on cpu", "tf32", parse(&c, err, sizeof err, "--precision", "tf32", "--device", "cpu", NULL), err);
  expect_bad("nccl on cpu", "nccl", parse(&c, err, sizeof err, "--comm", "nccl", "--device", "cpu", NULL), err);
  /* --device and --comm choices are the registry's rows: each parses to its entry's kind and prints back as
   * its name; an unknown one names the key and every row. */
  for (int i = 0; device_at(i); i++) {
    const device_entry *e = device_at(i);
    CHECK(parse(&c, err, sizeof err, "--device", e->name, NULL) == DDP_OK && device_chosen(ctx.want.device) == e,
          "--device %s from the table", e->name);
  }
  for (int i = 0; comm_at(i); i++) {
    const comm_entry *e = comm_at(i);
    const char *dev = e->needs_device ? e->needs_device : "auto";
    CHECK(parse(&c, err, sizeof err, "--comm", e->name, "--device", dev, NULL) == DDP_OK && comm_chosen(ctx.want.comm) == e,
          "--comm %s (--device %s) from the table", e->name, dev);
  }
  expect_bad("unknown device", "device", parse(&c, err, sizeof err, "--device", "hip", NULL), err);
  for (int i = 0; device_at(i); i++)
    CHECK(strstr(err, device_at(i)->name) != NULL, "the --device error lists %s: %s", device_at(i)->name, err);
  expect_bad("unknown comm", "comm", parse(&c, err, sizeof err, "--comm", "ucc", NULL), err);
  for (int i = 0; comm_at(i); i++)
    CHECK(strstr(err, comm_at(i)->name) != NULL, "the --comm error lists %s: %s", comm_at(i)->name, err);
  expect_bad("inject past the end", "inject_nonfinite",
             parse(&c, err, sizeof err, "--steps", "3", "--warmup", "1", "--inject-nonfinite", "4", NULL), err);
  expect_bad("missing file", "nope.ini", parse(&c, err, sizeof err, "--config", "/nonexistent/nope.ini", NULL), err);

  snprintf(ini2, sizeof ini2, "%s/bad1.ini", tmpdir);
  tl_file_write(ini2, "hidden = 64\n\nhiden = 3\n");
  expect_bad("unknown key in file", "bad1.ini:3", parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  CHECK(strstr(err, "hiden") != NULL, "names the key: %s", err);
  tl_file_write(ini2, "[x]\nlayers = 0\n");
  expect_bad("bad value in file", "bad1.ini:2", parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  CHECK(strstr(err, "layers") != NULL, "names the key: %s", err);
  tl_file_write(ini2, "hidden = 64\njust some words\n");
  expect_bad("syntax error in file", "bad1.ini:2", parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  tl_file_write(ini2, "config = other.ini\n");
  expect_bad("nested config", "config", parse(&c, err, sizeof err, "--config", ini2, NULL), err);

  /* An option name where a value belongs ("--json --force" once created a file named --force). */
  expect_bad("option as value", "--force", parse(&c, err, sizeof err, "--json", "--force", NULL), err);
  CHECK(parse(&c, err, sizeof err, "--lr", "-0", "--json=--odd-name", NULL) == DDP_OK && strcmp(ctx.out.json, "--odd-name") == 0,
        "--key=--value is taken as written: %s", err);
  /* A short --config value (the fuzzer found a read past "x"'s end here). */
  expect_bad("short --config value", "x", parse(&c, err, sizeof err, "--config", "x", NULL), err);
  /* A --config path that does not fit is refused, not truncated. */
  static char longpath[1100];
  memset(longpath, 'a', 1050);
  longpath[0] = '/';
  expect_bad("long --config path", "longer than 1023", parse(&c, err, sizeof err, "--config", longpath, NULL), err);

  /* INI lines that inih would split: a long comment must not turn its tail into a setting. */
  char pad[400];
  memset(pad, ' ', sizeof pad);
  pad[0] = ';';
  snprintf(pad + 190, sizeof pad - 190, "lr = 500000\n");
  tl_file_write(ini2, pad);
  expect_bad("long line", "bad1.ini:1", parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  CHECK(strstr(err, "longer than") != NULL, "says why: %s", err);
  /* The line of the key at fault, not of an earlier syntax error; and the other way round. */
  tl_file_write(ini2, "hidden = 64\n\nlayers = 0\njunk line\n");
  expect_bad("key error before a syntax error", "bad1.ini:3", parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  tl_file_write(ini2, "layers\nhidden = 0\n");
  expect_bad("syntax error before a key error", "bad1.ini:1", parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  CHECK(strstr(err, "syntax") != NULL, "names the syntax error: %s", err);
  tl_file_write(ini2, "; x\n; y\n\n[m]\nhidden = 64\nlayers = 99999\n");
  expect_bad("line numbers", "bad1.ini:6", parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  /* Indented continuation lines are refused (inih would append them to the previous value). */
  tl_file_write(ini2, "lr = 0.1\n  5\n");
  expect_bad("continuation line", "bad1.ini:2", parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  CHECK(strstr(err, "indented") != NULL, "says why: %s", err);
  tl_file_write(ini2, "hidden = 64\n   ; an indented comment is fine\n\t\n");
  CHECK(parse(&c, err, sizeof err, "--config", ini2, NULL) == DDP_OK, "indented comments and blank lines: %s", err);
  /* Cross-key errors name the file and line of the key. */
  tl_file_write(ini2, "[scaler]\nloss_scale_growth_factor = 1\n");
  expect_bad("growth factor 1 in a file", "bad1.ini:2: loss_scale_growth_factor",
             parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  tl_file_write(ini2, "hidden = 64\nphases = local,train\n");
  expect_bad("bad phases in a file", "bad1.ini:2: phases", parse(&c, err, sizeof err, "--config", ini2, NULL), err);
  expect_bad("growth factor 1 on the command line", "--loss-scale-growth-factor: ",
             parse(&c, err, sizeof err, "--loss-scale-growth-factor", "1", NULL), err);
  tl_file_write(ini2, "config = x.ini\n");
  expect_bad("config key message", "bad1.ini:1: key 'config'", parse(&c, err, sizeof err, "--config", ini2, NULL), err);

  /* Sizes: the reproduction of the SIGSEGV (steps x buckets overflowed an int), each value in its range. */
  expect_bad("steps x buckets", "steps x buckets",
             parse(&c, err, sizeof err, "--hidden", "16", "--layers", "4096", "--batch", "1", "--steps", "600000",
                   "--warmup", "0", "--bucket-mb", "0.0009765625", "--first-bucket-mb", "0.0009765625", "--phases",
                   "comm", NULL), err);
  CHECK(parse(&c, err, sizeof err, "--hidden", "16", "--layers", "4096", "--batch", "1", "--steps", "600000",
              "--warmup", "0", "--phases", "comm", NULL) == DDP_OK,
        "the same with one bucket is fine: %s", err);
  expect_bad("layers x hidden^2 huge but addressable? no: batch x hidden", "batch x hidden",
             parse(&c, err, sizeof err, "--hidden", "65536", "--batch", "65536", NULL), err);
  CHECK(config_hash(&c) != 0, "hash");
  {
    ddp_config a, b;
    config_defaults(&a);
    config_defaults(&b);
    CHECK(config_hash(&a) == config_hash(&b), "same configuration, same hash");
    b.lr = 0.02;
    CHECK(config_hash(&a) != config_hash(&b), "lr differs, hash differs");
    b = a;
    b.precision = PREC_BF16;
    CHECK(config_hash(&a) != config_hash(&b), "precision differs, hash differs");
  }

  /* Every key of the table prints and parses back to itself. */
  config_defaults(&c);
  const char *name;
  char value[1100];
  int keys = 0, bad = 0;
  for (int i = 0; config_key_at(&c, i, &name, value, sizeof value); i++, keys++) {
    ddp_config d;
    config_defaults(&d);
    if (config_set(&d, name, value, "round trip") != DDP_OK) bad++;
  }
  CHECK(keys >= 20 && bad == 0, "%d keys, %d did not round-trip", keys, bad);
  cmd_free(&ctx);
}

/* Runs the program with args; returns its exit code; out/err receive its output. */
static int run_prog(const char *prog, char *out, size_t outn, char *err, size_t errn, const char *const *args) {
  char po[256], pe[256];
  snprintf(po, sizeof po, "%s/out.txt", tmpdir);
  snprintf(pe, sizeof pe, "%s/err.txt", tmpdir);
  pid_t pid = fork();
  if (pid == 0) {
    int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644), fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fo, 1);
    dup2(fe, 2);
    char *argv[32] = {(char *)prog};
    int n = 1;
    for (; args[n - 1] && n < 31; n++) argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    execv(prog, argv);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  tl_file_read(po, out, outn);
  tl_file_read(pe, err, errn);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_program(const char *prog) {
  static char out[65536], err[8192];
  const char *help[] = {"--help", NULL};
  CHECK(run_prog(prog, out, sizeof out, err, sizeof err, help) == 0, "--help exits 0");
  ddp_config c;
  config_defaults(&c);
  const char *name;
  char value[1100];
  cmd_ctx all;
  CHECK(cmd_parse(&all, &cmd_run, 1, (char *[]){"ddpbench", NULL}) == DDP_OK, "the run's defaults");
  for (int i = 0; opt_key_at(&all.opts, i, &name, value, sizeof value, NULL); i++) {
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", name);
    for (char *p = opt; *p; p++)
      if (*p == '_') *p = '-';
    CHECK(strstr(out, opt) != NULL, "--help lists %s", opt);
  }
  cmd_free(&all);
  CHECK(strstr(out, "(default 25)") && strstr(out, "(default 65536)"), "--help shows defaults");
  { /* --device and --comm list the registry's rows in its order */
    char devs[128] = "auto", comms[128] = "auto";
    for (int i = 0; device_at(i); i++) strcat(strcat(devs, "|"), device_at(i)->name);
    for (int i = 0; comm_at(i); i++) strcat(strcat(comms, "|"), comm_at(i)->name);
    CHECK(strstr(out, devs) && strstr(out, comms), "--help lists --device %s and --comm %s", devs, comms);
  }
  /* Every subcommand's --help names each section once: "outputs:" twice (the outputs table, then the skeleton's
   * --quiet as a table of its own) was accept's and export's. A section title is a line after a blank line that
   * ends in ':' and does not start with a space. */
  for (int k = 0; ddpbench_commands[k]; k++) {
    const char *cname = ddpbench_commands[k]->name;
    const char *sub[] = {cname, "--help", NULL}, *top[] = {"--help", NULL};
    int code = run_prog(prog, out, sizeof out, err, sizeof err, strcmp(cname, "run") ? sub : top);
    CHECK(code == 0, "%s --help exits 0, got %d: %s", cname, code, err);
    char titles[64][128];
    int nt = 0, sections = 0;
    for (char *line = out, *prev = NULL, *nl; line && *line; prev = line, line = nl ? nl + 1 : NULL) {
      nl = strchr(line, '\n');
      size_t len = nl ? (size_t)(nl - line) : strlen(line);
      if (!prev || *prev != '\n' || len < 2 || len >= sizeof titles[0] || line[0] == ' ' || line[len - 1] != ':')
        continue;
      sections++;
      for (int t = 0; t < nt; t++)
        CHECK(strncmp(titles[t], line, len) || titles[t][len], "%s --help: the section '%.*s' twice", cname, (int)len,
              line);
      if (nt < 64) snprintf(titles[nt++], sizeof titles[0], "%.*s", (int)len, line);
    }
    CHECK(sections >= 2, "%s --help: %d section titles found (the check reads none: its parsing is wrong)", cname,
          sections);
  }
  const char *version[] = {"--version", NULL};
  CHECK(run_prog(prog, out, sizeof out, err, sizeof err, version) == 0 && strncmp(out, "ddpbench ", 9) == 0,
        "--version: %s", out);
  const char *bad[][4] = {{"--hidden", "0", NULL}, {"--no-such-option", NULL}, {"--precision", "fp64", NULL},
                          {"--config", "/nonexistent.ini", NULL}, {"--bucket-mb", "0.0001", NULL}};
  const char *needles[] = {"hidden", "--no-such-option", "precision", "nonexistent.ini", "bucket_mb"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int code = run_prog(prog, out, sizeof out, err, sizeof err, bad[i]);
    CHECK(code == 2, "%s: exit code %d, expected 2", bad[i][0], code);
    CHECK(tl_newlines(err) == 1 && strstr(err, needles[i]), "%s: one line naming %s, got: %s", bad[i][0], needles[i],
          err);
    CHECK(out[0] == 0, "%s: nothing on stdout", bad[i][0]);
  }
}

int main(int argc, char **argv) {
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_api();
  if (argc > 1)
    test_program(argv[1]);
  else
    CHECK(0, "usage: test_config PATH-TO-DDPBENCH");
  tl_rmtree(tmpdir);
  return check_summary();
}
