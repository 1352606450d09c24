/* test_compare_files.c: `ddpbench compare` on bad input, through the real program: each bad input gets exit 2
 * and one line on stderr naming the file (or option) and what is wrong; valid inputs give 0; a side whose
 * runs disagree is flagged; a model config difference is refused unless --allow-config-diff. Then a bounded
 * fuzz of the reader: 600 seeded mutations of a result file (byte flips, cut and repeated spans,
 * truncation, numbers replaced by odd tokens) loaded, diffed and printed in process, and 30 more through the
 * program under `timeout`: no crash, no hang, exit 0, 2 or 5, and a refusal always with exactly one line.
 * Usage: test_compare_files DDPBENCH RESULT.json (a result file of schema version 2, tests/data/fixtures). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "testlib.h"
#include "compare.h"
#include "compare_synth.h"

static char tmp[] = "/tmp/ddpbench-test-compare-files-XXXXXX";
static int tmp_made;
static const char *bin;
static char *base_text; /* the fixture */

static void cleanup(void) {
  if (tmp_made) tl_rmtree(tmp);
}

/* A fresh side folder tmp/name, its path in dir, holding n copies of the fixture. */
/* Every file written is a run of its own: compare refuses the same run twice, so each
 * copy of the fixture gets a start time of its own. */
static void new_start(cJSON *doc) {
  static int serial;
  char when[32];
  serial++;
  snprintf(when, sizeof when, "2026-12-02T%02d:%02d:%02dZ", serial / 3600 % 24, serial / 60 % 60, serial % 60);
  cJSON_ReplaceItemInObject(doc, "start_time", cJSON_CreateString(when));
}

static void write_mutated(const char *path, void (*fn)(cJSON *));
static void unchanged(cJSON *d) { (void)d; }

static void make_side(char *dir, size_t len, const char *name, int n) {
  snprintf(dir, len, "%s/%s", tmp, name);
  mkdir(dir, 0700);
  for (int i = 0; i < n; i++) {
    char p[1200];
    snprintf(p, sizeof p, "%s/run-%d.json", dir, i + 1);
    write_mutated(p, unchanged);
  }
}

/* The fixture changed by fn, written to path. */
static void write_mutated(const char *path, void (*fn)(cJSON *)) {
  cJSON *doc = cJSON_Parse(base_text);
  new_start(doc);
  fn(doc);
  char *s = cJSON_Print(doc);
  tl_file_write_n(path, s, strlen(s));
  free(s);
  cJSON_Delete(doc);
}

static char out_text[1 << 16], err_text[1 << 12];
static tl_job job = {.dir = tmp, .timeout = 20, .out = out_text, .outn = sizeof out_text, .err = err_text,
                     .errn = sizeof err_text};

/* Runs `timeout 20 ddpbench compare ARGS` (ARGS a printf format), capturing stdout and stderr; returns the exit
 * code. */
static int compare(const char *fmt, ...) {
  char args[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  return tl_job_run(&job, 0, NULL, args);
}

/* exit 2 with one stderr line containing every needle */
#define CHECK_BAD(rc, ...)                                                                                   \
  do {                                                                                                       \
    const char *needles_[] = {__VA_ARGS__};                                                                  \
    int ok_ = (rc) == 2 && tl_newlines(err_text) == 1;                                                       \
    for (size_t k_ = 0; ok_ && k_ < sizeof needles_ / sizeof *needles_; k_++) ok_ = strstr(err_text, needles_[k_]) != NULL; \
    CHECK(ok_, "exit %d, stderr: %s(want exit 2, one line with: %s)", (rc), err_text, needles_[0]);         \
  } while (0)

static void set_world_size_text(cJSON *d) { cJSON_ReplaceItemInObject(d, "world_size", cJSON_CreateString("2")); }
/* a third rank, rank 1's copy */
static void set_world_size_3(cJSON *d) {
  cJSON_ReplaceItemInObject(d, "world_size", cJSON_CreateNumber(3));
  cJSON *ranks = cJSON_GetObjectItem(d, "ranks"), *r2 = cJSON_Duplicate(cJSON_GetArrayItem(ranks, 1), 1);
  cJSON_ReplaceItemInObject(r2, "rank", cJSON_CreateNumber(2));
  cJSON_AddItemToArray(ranks, r2);
}
static void set_nodes_2(cJSON *d) { cJSON_ReplaceItemInObject(d, "nodes", cJSON_CreateNumber(2)); }
static void set_value_text(cJSON *d) {
  cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "records"), 0), "value", cJSON_CreateString("fast"));
}
static void drop_first_record(cJSON *d) { cJSON_DeleteItemFromArray(cJSON_GetObjectItem(d, "records"), 0); }
static void set_hidden(cJSON *d) { cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "config"), "hidden", cJSON_CreateNumber(128)); }
static void set_bucket(cJSON *d) { cJSON_ReplaceItemInObject(cJSON_GetObjectItem(d, "config"), "bucket_mb", cJSON_CreateNumber(4)); }
static void set_schema(cJSON *d) { cJSON_ReplaceItemInObject(d, "schema_version", cJSON_CreateNumber(99)); }
static void set_nccl_algo(cJSON *d) {
  cJSON *env = cJSON_GetObjectItem(d, "environment");
  cJSON_DeleteItemFromObject(env, "NCCL_ALGO");
  cJSON_AddStringToObject(env, "NCCL_ALGO", "Tree");
}

/* rank 1 on host n2 (its records too), so that the runs span two hosts */
static void two_hosts(cJSON *d) {
  cJSON_ReplaceItemInObject(d, "nodes", cJSON_CreateNumber(2));
  cJSON *r1 = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "ranks"), 1);
  cJSON_ReplaceItemInObject(r1, "host", cJSON_CreateString("n2"));
  cJSON_ReplaceItemInObject(r1, "node", cJSON_CreateNumber(1));
  cJSON *rec;
  cJSON_ArrayForEach(rec, cJSON_GetObjectItem(d, "records")) {
    cJSON *labels = cJSON_GetObjectItem(rec, "labels"), *rank = cJSON_GetObjectItem(labels, "rank");
    if (rank && strcmp(rank->valuestring, "1") == 0) cJSON_ReplaceItemInObject(labels, "host", cJSON_CreateString("n2"));
  }
}

/* The fixture's per-rank value of measurement/metric for a rank. */
static double rank_value(const char *measurement, const char *metric, const char *rank) {
  cJSON *d = cJSON_Parse(base_text), *rec;
  double v = -1;
  cJSON_ArrayForEach(rec, cJSON_GetObjectItem(d, "records")) {
    cJSON *rk = cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "labels"), "rank");
    if (rk && strcmp(rk->valuestring, rank) == 0 &&
        strcmp(cJSON_GetObjectItem(rec, "measurement")->valuestring, measurement) == 0 &&
        strcmp(cJSON_GetObjectItem(rec, "metric")->valuestring, metric) == 0)
      v = cJSON_GetObjectItem(rec, "value")->valuedouble;
  }
  cJSON_Delete(d);
  return v;
}

static const cJSON *json_metric(const cJSON *doc, const char *name) {
  const cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItem(doc, "metrics")) {
    if (strcmp(cJSON_GetObjectItem(m, "name")->valuestring, name) == 0) return m;
  }
  return NULL;
}

static double json_field(const cJSON *doc, const char *name, const char *field) {
  const cJSON *m = json_metric(doc, name);
  return m && cJSON_IsNumber(cJSON_GetObjectItem(m, field)) ? cJSON_GetObjectItem(m, field)->valuedouble : -1;
}

/* Per-host rows when the runs span several hosts: each host's worst rank by the metric's direction; hosts on
 * one side only are not compared. --pool-steps: the job-wide step times use every step of every run. */
static void test_hosts_and_pooling(void) {
  char a[1100], b[1100], p[1200];
  make_side(a, sizeof a, "ha", 0);
  make_side(b, sizeof b, "hb", 4); /* both ranks on vm */
  for (int i = 1; i <= 4; i++) {
    snprintf(p, sizeof p, "%s/run-%d.json", a, i);
    write_mutated(p, two_hosts);
  }
  int rc = compare("--format json --allow-config-diff %s -- %s", a, b); /* 2 nodes against 1 (test_job_size) */
  cJSON *doc = cJSON_Parse(out_text);
  double s0 = rank_value("local", "step_ms", "0"), s1 = rank_value("local", "step_ms", "1");
  double g0 = rank_value("gemm", "gemm_tflops", "0"), g1 = rank_value("gemm", "gemm_tflops", "1");
  CHECK(rc == 0 && doc, "two hosts against one: exit %d %s", rc, err_text);
  CHECK(json_field(doc, "local step_ms host=vm", "median_a") == s0 &&
            json_field(doc, "local step_ms host=vm", "median_b") == (s0 > s1 ? s0 : s1),
        "per-host step time: A %g (want rank 0's %g), B %g (want the slower of %g, %g)",
        json_field(doc, "local step_ms host=vm", "median_a"), s0, json_field(doc, "local step_ms host=vm", "median_b"),
        s0, s1);
  CHECK(json_field(doc, "gemm gemm_tflops host=vm", "median_b") == (g0 < g1 ? g0 : g1),
        "per-host GEMM: B %g (want the lower of %g, %g)", json_field(doc, "gemm gemm_tflops host=vm", "median_b"), g0, g1);
  CHECK(!json_metric(doc, "local step_ms host=n2") && strstr(out_text, "only in A"),
        "a host on side A only must not be compared, and a note must say so");
  CHECK(strstr(out_text, "\"hosts\"") != NULL, "the hosts are not in the provenance diff");
  cJSON_Delete(doc);

  char b2[1100];
  make_side(b2, sizeof b2, "hb2", 4);
  rc = compare("--pool-steps --format json %s -- %s", b, b2);
  doc = cJSON_Parse(out_text);
  CHECK(rc == 0 && doc && json_field(doc, "local step_ms", "n_a") == 24 &&
            json_field(doc, "local samples_per_s", "n_a") == 4 && cJSON_IsTrue(cJSON_GetObjectItem(doc, "pooled_steps")),
        "--pool-steps: exit %d, local step_ms n %g (want 4 runs x 6 steps), samples_per_s n %g (want 4)", rc,
        json_field(doc, "local step_ms", "n_a"), json_field(doc, "local samples_per_s", "n_a"));
  cJSON_Delete(doc);
  rc = compare("--pool-steps %s -- %s", b, b2);
  CHECK(rc == 0 && strstr(out_text, "POOLED"), "--pool-steps is not stated in the output");
}

static void test_bad_inputs(void) {
  char a[1100], b[1100], p[1200];
  make_side(a, sizeof a, "a", 4);
  make_side(b, sizeof b, "b", 4);
  int rc = compare("%s -- %s", a, b);
  CHECK(rc == 0 && strstr(out_text, "what differs: nothing"), "identical sides: exit %d\n%s%s", rc, out_text, err_text);

  /* truncated */
  snprintf(p, sizeof p, "%s/run-2.json", b);
  tl_file_write_n(p, base_text, strlen(base_text) * 6 / 10);
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "run-2.json", "not"); /* the reader says "truncated" or "not JSON (syntax error near byte N)" */
  /* not JSON at all, not a ddpbench result, unknown schema version, wrong types */
  tl_file_write_n(p, "\x7f" "ELF\x02\x01", 6);
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "run-2.json", "not JSON");
  tl_file_write_n(p, "{\"hello\": 1}", 12);
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "run-2.json", "not a ddpbench result");
  write_mutated(p, set_schema);
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "run-2.json", "schema_version 99");
  write_mutated(p, set_world_size_text);
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "run-2.json", "world_size");
  write_mutated(p, set_value_text);
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "run-2.json", "records[0].value");
  /* a metric missing from one run of a side */
  write_mutated(p, drop_first_record);
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "run-2.json", "missing");
  /* unreadable, empty side */
  rc = compare("%s -- %s/none.json", a, tmp);
  CHECK_BAD(rc, "none.json");
  snprintf(p, sizeof p, "%s/empty", tmp);
  mkdir(p, 0700);
  rc = compare("%s -- %s", a, p);
  CHECK_BAD(rc, "empty", "no .json");
  rc = compare("%s --", a);
  CHECK_BAD(rc, "side B is empty");
  rc = compare("-- %s", a);
  CHECK_BAD(rc, "side A is empty");
  /* options */
  rc = compare("--format xml %s -- %s", a, a);
  CHECK_BAD(rc, "--format");
  rc = compare("--threshold-pct abc %s -- %s", a, a);
  CHECK_BAD(rc, "--threshold-pct");
  rc = compare("--bogus %s -- %s", a, a);
  CHECK_BAD(rc, "--bogus");
  rc = compare("--noise %s/none.json %s -- %s", tmp, a, a);
  CHECK_BAD(rc, "none.json");

  /* a model config difference: refused, named; compared with --allow-config-diff */
  make_side(b, sizeof b, "c", 0);
  for (int i = 1; i <= 4; i++) {
    snprintf(p, sizeof p, "%s/run-%d.json", b, i);
    write_mutated(p, set_hidden);
  }
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "'hidden'", "--allow-config-diff");
  rc = compare("--allow-config-diff %s -- %s", a, b);
  CHECK(rc == 0 && strstr(out_text, "config.hidden") && strstr(out_text, "(model config)"),
        "--allow-config-diff: exit %d\n%s%s", rc, out_text, err_text);
  /* a stack setting (bucket size) is not a model difference: shown, not refused */
  make_side(b, sizeof b, "d", 0);
  for (int i = 1; i <= 4; i++) {
    snprintf(p, sizeof p, "%s/run-%d.json", b, i);
    write_mutated(p, set_bucket);
  }
  rc = compare("%s -- %s", a, b);
  CHECK(rc == 0 && strstr(out_text, "config.bucket_mb") && !strstr(out_text, "(model config)"),
        "bucket_mb difference: exit %d\n%s%s", rc, out_text, err_text);
  /* one run of A with another NCCL_ALGO: flagged */
  snprintf(p, sizeof p, "%s/run-3.json", a);
  write_mutated(p, set_nccl_algo);
  rc = compare("%s -- %s", a, b);
  CHECK(rc == 0 && strstr(out_text, "env.NCCL_ALGO") && strstr(out_text, "(A's runs disagree)") &&
            strstr(out_text, "Tree (1 run)"),
        "a side whose runs disagree is not flagged: exit %d\n%s%s", rc, out_text, err_text);
  /* formats */
  rc = compare("--format json %s -- %s", a, b);
  cJSON *j = cJSON_Parse(out_text);
  CHECK(rc == 0 && j && cJSON_GetArraySize(cJSON_GetObjectItem(j, "metrics")) > 0, "--format json: exit %d", rc);
  cJSON_Delete(j);
  rc = compare("--format csv %s -- %s", a, b);
  CHECK(rc == 0 && !strncmp(out_text, "metric,unit,better,n_a,n_b,", 27) && !strchr(out_text, '#') &&
            tl_newlines(err_text) == 1 && !strncmp(err_text, "ddpbench compare: PASS", 22),
        "--format csv: exit %d, the header first, no '#', the bottom line on stderr: %s", rc, err_text);
  rc = compare("--format md %s -- %s", a, b);
  CHECK(rc == 0 && strstr(out_text, "| metric | unit |"), "--format md: exit %d", rc);
  /* the two-argument form */
  rc = compare("%s %s", a, b);
  CHECK(rc == 0, "compare A_DIR B_DIR: exit %d %s", rc, err_text);
}

/* Hostile inputs: the same run given twice is refused, whatever the path; a metric whose A median is 0
 * can still regress, and the runs' own failing findings are compared (a side whose runs fail is worse). */
static void add_fail_finding(cJSON *d) {
  cJSON *f = cJSON_GetObjectItem(d, "findings"), *x = cJSON_CreateObject();
  if (!f) f = cJSON_AddArrayToObject(d, "findings");
  cJSON_AddStringToObject(x, "check", "collectives_data");
  cJSON_AddStringToObject(x, "severity", "fail");
  cJSON_AddStringToObject(x, "scope", "job");
  cJSON_AddStringToObject(x, "subject", "job");
  cJSON_AddNullToObject(x, "measured");
  cJSON_AddNullToObject(x, "expected");
  cJSON_AddStringToObject(x, "unit", "");
  cJSON_AddStringToObject(x, "text", "1 element wrong");
  cJSON_AddItemToArray(f, x);
}

/* Another job size is refused as another model is (exit 2, both values named); with
 * --allow-config-diff the report says so above the table. */
static void test_job_size(void) {
  char a[1100], b[1100], p[1200];
  make_side(a, sizeof a, "size-a", 4);
  make_side(b, sizeof b, "size-b", 4);
  for (int i = 1; i <= 4; i++) {
    snprintf(p, sizeof p, "%s/run-%d.json", b, i);
    write_mutated(p, set_world_size_3);
  }
  int rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "job.world_size", "2 (A) vs 3 (B)", "--allow-config-diff");
  rc = compare("--allow-config-diff %s -- %s", a, b);
  const char *said = strstr(out_text, "world size differs: step times are not comparable"),
             *table = strstr(out_text, "\nmetric ");
  CHECK(rc == 0 && said && table && said < table, "--allow-config-diff: compared, the warning above the table: exit "
        "%d\n%s%s", rc, out_text, err_text);
  rc = compare("--allow-config-diff --format md %s -- %s", a, b);
  CHECK(rc == 0 && strstr(out_text, "world size differs: step times are not comparable"), "markdown says it too");
  for (int i = 1; i <= 4; i++) {
    snprintf(p, sizeof p, "%s/run-%d.json", b, i);
    write_mutated(p, set_nodes_2);
  }
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "job.nodes", "1 (A) vs 2 (B)");
}

static void weights_differ(cJSON *d) { cJSON_ReplaceItemInObject(d, "weights_identical", cJSON_CreateFalse()); }
/* the job-wide ddp step time 1.6x */
static void ddp_slow(cJSON *d) {
  cJSON *rec;
  cJSON_ArrayForEach(rec, cJSON_GetObjectItem(d, "records")) {
    const cJSON *labels = cJSON_GetObjectItem(rec, "labels");
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "measurement")), "ddp") &&
        !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "metric")), "step_ms") && !cJSON_GetArraySize(labels))
      cJSON_SetNumberValue(cJSON_GetObjectItem(rec, "value"), 1.6 * cJSON_GetNumberValue(cJSON_GetObjectItem(rec, "value")));
  }
}

/* A run's own integrity failures are judged as such, not by a median over the side's runs;
 * and a side with a slow mode that A lacks is "intermittent". */
static void test_integrity_and_modes(void) {
  char a[1100], b[1100], p[1200];
  make_side(a, sizeof a, "int-a", 4);
  make_side(b, sizeof b, "int-b", 4);
  snprintf(p, sizeof p, "%s/run-2.json", b);
  write_mutated(p, add_fail_finding);
  int rc = compare("%s -- %s", a, b);
  CHECK(rc == CMP_EXIT_REGRESSION && strstr(out_text, "ddpbench compare: FAIL  side B: 1 of 4 runs corrupted data "
                                                      "(collectives_data)") &&
            strstr(out_text, "its figures are its 3 clean runs'"),
        "1 of 4 B runs corrupt: exit %d (want 5)\n%s", rc, out_text);
  rc = compare("--format json %s -- %s", a, b);
  cJSON *doc = cJSON_Parse(out_text);
  CHECK(rc == CMP_EXIT_REGRESSION && doc &&
            !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(doc, "side_verdict")) ?: "",
                    "side B: 1 of 4 runs corrupted data (collectives_data)"),
        "the JSON's side_verdict");
  cJSON_Delete(doc);
  snprintf(p, sizeof p, "%s/run-3.json", a);
  write_mutated(p, weights_differ);
  rc = compare("%s -- %s", a, b);
  CHECK(rc == CMP_EXIT_REGRESSION && strstr(out_text, "both sides corrupt data: no A/B verdict"),
        "both sides corrupt: exit %d\n%s", rc, out_text);
  snprintf(p, sizeof p, "%s/run-2.json", b);
  write_mutated(p, unchanged);
  rc = compare("%s -- %s", a, b);
  CHECK(rc == 0 && strstr(out_text, "side A: 1 of 4 runs corrupted data (weights)"),
        "A alone corrupt: said, no verdict of its own: exit %d\n%s", rc, out_text);
  /* 6 + 6 runs, 2 of B's with the ddp step 1.6x: two modes on B, none on A */
  make_side(a, sizeof a, "mode-a", 6);
  make_side(b, sizeof b, "mode-b", 6);
  for (int i = 1; i <= 2; i++) {
    snprintf(p, sizeof p, "%s/run-%d.json", b, i);
    write_mutated(p, ddp_slow);
  }
  rc = compare("%s -- %s", a, b);
  CHECK(rc == CMP_EXIT_REGRESSION && strstr(out_text, "intermittent: 2 of 6 runs slow (ddp step_ms 1.60x)") &&
            strstr(out_text, "side B, ddp step_ms: two modes"),
        "a slow mode on B: exit %d\n%s", rc, out_text);
}

/* the fixture as an FSDP run: config.strategy fsdp, its training phase's records measured as "fsdp" */
static void as_fsdp(cJSON *d) {
  cJSON_AddItemToObject(cJSON_GetObjectItem(d, "config"), "strategy", cJSON_CreateString("fsdp"));
  cJSON *rec;
  cJSON_ArrayForEach(rec, cJSON_GetObjectItem(d, "records")) {
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(rec, "measurement")), "ddp"))
      cJSON_ReplaceItemInObject(rec, "measurement", cJSON_CreateString("fsdp"));
  }
}

/* FSDP against DDP pairs each side's training phase as "train step_ms (ddp | fsdp)". */
static void test_strategies(void) {
  char a[1100], b[1100], p[1200];
  make_side(a, sizeof a, "strat-a", 4);
  make_side(b, sizeof b, "strat-b", 4);
  for (int i = 1; i <= 4; i++) {
    snprintf(p, sizeof p, "%s/run-%d.json", b, i);
    write_mutated(p, as_fsdp);
  }
  int rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "strategy", "ddp (A) vs fsdp (B)");
  rc = compare("--allow-config-diff %s -- %s", a, b);
  CHECK(rc == 0 && strstr(out_text, "train step_ms (ddp | fsdp)") && !strstr(out_text, "\nddp step_ms") &&
            !strstr(out_text, "\nfsdp step_ms"),
        "the training phases paired: exit %d\n%s%s", rc, out_text, err_text);
  rc = compare("--allow-config-diff --format json %s -- %s", a, b);
  cJSON *doc = cJSON_Parse(out_text);
  CHECK(doc && json_metric(doc, "train step_ms") && !json_metric(doc, "ddp step_ms"), "JSON: train step_ms");
  cJSON_Delete(doc);
}

static void test_same_run_and_zero(void) {
  char a[1100], b[1100], p[1200];
  make_side(a, sizeof a, "dup-a", 4);
  make_side(b, sizeof b, "dup-b", 4);
  snprintf(p, sizeof p, "%s/run-1.json", a);
  int rc = compare("%s %s %s %s -- %s", p, p, p, p, b);
  CHECK_BAD(rc, "the same run", "the same file");
  rc = compare("%s %s -- %s", a, p, b);
  CHECK_BAD(rc, "run-1.json", "the same run");
  rc = compare("%s -- %s", a, a);
  CHECK_BAD(rc, "side B", "the same run");
  char copy[1200];
  snprintf(copy, sizeof copy, "%s/copy.json", b);
  char *text = tl_file_slurp(p);
  tl_file_write_n(copy, text, strlen(text));
  free(text);
  rc = compare("%s -- %s", a, b);
  CHECK_BAD(rc, "copy.json", "same start, command line and rank 0");
  unlink(copy);
  rc = compare("%s -- %s", a, b);
  CHECK(rc == 0 && strstr(out_text, "findings fail"), "distinct runs compare, findings included: exit %d %s", rc, err_text);
  /* B's 4 runs each failed a check, A's none: 0 -> 1, p 0.029 (4 + 4 runs, exact): a regression, exit 5 */
  for (int i = 1; i <= 4; i++) {
    snprintf(p, sizeof p, "%s/run-%d.json", b, i);
    write_mutated(p, add_fail_finding);
  }
  rc = compare("--format json %s -- %s", a, b);
  cJSON *doc = cJSON_Parse(out_text);
  const cJSON *m = doc ? json_metric(doc, "findings fail") : NULL;
  CHECK(rc == CMP_EXIT_REGRESSION && m && cJSON_IsTrue(cJSON_GetObjectItem(m, "from_zero")) &&
            cJSON_IsTrue(cJSON_GetObjectItem(m, "regression")) && cJSON_IsNull(cJSON_GetObjectItem(m, "change_pct")),
        "failing findings from 0 to 1 a run: a regression (exit %d, want 5)\n%s", rc, out_text);
  cJSON_Delete(doc);
  rc = compare("%s -- %s", a, b);
  CHECK(rc == CMP_EXIT_REGRESSION && strstr(out_text, "from 0") && strstr(out_text, "side B: 4 of 4 runs failed checks") &&
            strstr(out_text, "side B: 4 of 4 runs corrupted data (collectives_data)"),
        "the text says from 0 and names the failed check: exit %d\n%s", rc, out_text);
}

/* ---- fuzz -------------------------------------------------------------------------------------------- */
static size_t mutate(synth_rng *r, const char *in, size_t n, char *out, size_t cap) {
  static const char *tokens[] = {"1e999", "-1e999", "null", "\"x\"", "[]", "{}", "-0", "1e-320", "9007199254740993",
                                 "true", "\"\\u0000\"", "NaN", "[[[[[[[[", "\"schema_version\": 2"};
  size_t at = n ? synth_next(r) % n : 0, len = 1 + synth_next(r) % 64, o = 0;
  if (at + len > n) len = n - at;
  switch (synth_next(r) % 6) {
  case 0: /* flip bytes */
    memcpy(out, in, n);
    for (int k = 0; k < 1 + (int)(synth_next(r) % 4); k++) out[synth_next(r) % n] = (char)(synth_next(r) & 0xff);
    return n;
  case 1: /* cut a span */
    memcpy(out, in, at);
    memcpy(out + at, in + at + len, n - at - len);
    return n - len;
  case 2: /* repeat a span */
    if (n + len > cap) len = 0;
    memcpy(out, in, at + len);
    memcpy(out + at + len, in + at, n - at);
    return n + len;
  case 3: /* truncate */
    memcpy(out, in, at);
    return at;
  default: { /* a number (the next digit run) replaced by an odd token */
    while (at < n && !(in[at] >= '0' && in[at] <= '9')) at++;
    size_t end = at;
    while (end < n && ((in[end] >= '0' && in[end] <= '9') || in[end] == '.' || in[end] == 'e' || in[end] == '-')) end++;
    const char *t = tokens[synth_next(r) % (sizeof tokens / sizeof *tokens)];
    size_t tl = strlen(t);
    if (n - (end - at) + tl > cap) return (memcpy(out, in, n), n);
    memcpy(out, in, at);
    o = at;
    memcpy(out + o, t, tl);
    o += tl;
    memcpy(out + o, in + end, n - end);
    return o + n - end;
  }
  }
}

/* In-process: the reader and compare's loading, diff and printing on each mutation, with stderr sent to a file
 * so that each refusal's line count can be checked (a crash fails the test; CTest's timeout catches a hang).
 * Then a few through the program, under `timeout`, for the exit codes. */
static void test_fuzz(void) {
  char a[1100], b[1100], p[1200], errp[1200];
  make_side(a, sizeof a, "fa", 4);
  make_side(b, sizeof b, "fb", 4);
  snprintf(p, sizeof p, "%s/run-1.json", b);
  snprintf(errp, sizeof errp, "%s/fuzz-stderr", tmp);
  size_t n = strlen(base_text), cap = 2 * n + 1024;
  char *buf = malloc(cap);
  synth_rng r = {2026};
  int refused = 0, accepted = 0, multi_line = 0, bad_rc = 0, t;
  enum { IN_PROCESS = 600, PROGRAM = 30 };
  fflush(stderr);
  int saved = dup(2), fd = open(errp, O_CREAT | O_TRUNC | O_RDWR, 0600);
  dup2(fd, 2);
  FILE *devnull = fopen("/dev/null", "w");
  for (t = 0; t < IN_PROCESS; t++) {
    size_t m = mutate(&r, base_text, n, buf, cap);
    tl_file_write_n(p, buf, m);
    cmp_options o;
    cmp_options_defaults(&o);
    cmp_report rep;
    cmp_report_init(&rep, &o);
    char *sa[] = {a}, *sb[] = {b};
    int rc = cmp_load(sa, 1, sb, 1, NULL, 0, &rep);
    if (rc == 0) {
      for (int f = CMP_TEXT; f <= CMP_JSON; f++) cmp_report_print(&rep, (cmp_format)f, devnull);
      accepted++;
    } else if (rc == 2) {
      refused++;
    } else {
      bad_rc++;
    }
    cmp_report_free(&rep);
    fflush(stderr);
    char e[4096] = "";
    ssize_t got = pread(fd, e, sizeof e - 1, 0);
    e[got > 0 ? got : 0] = 0;
    if (rc == 2 && tl_newlines(e) != 1) {
      multi_line++;
      dprintf(saved, "fuzz %d: %d lines: %s\n", t, tl_newlines(e), e);
    }
    if (ftruncate(fd, 0) != 0) break;
    lseek(fd, 0, SEEK_SET);
  }
  fclose(devnull);
  dup2(saved, 2);
  close(saved);
  close(fd);
  CHECK(bad_rc == 0, "fuzz: cmp_load returned other than 0 or 2 %d times", bad_rc);
  CHECK(multi_line == 0, "fuzz: %d refusals without a one-line reason", multi_line);
  CHECK(refused > IN_PROCESS / 4, "fuzz: only %d of %d mutations were refused: the mutations do not reach the reader",
        refused, IN_PROCESS);
  int crashed = 0, other = 0;
  for (t = 0; t < PROGRAM; t++) {
    size_t m = mutate(&r, base_text, n, buf, cap);
    tl_file_write_n(p, buf, m);
    int rc = compare("%s -- %s", a, b);
    if (rc == 124 || rc > 128) crashed++, fprintf(stderr, "fuzz program %d: %s\n", t, rc == 124 ? "hang" : "signal");
    else if (rc != 0 && rc != 2 && rc != 5) other++, fprintf(stderr, "fuzz program %d: exit %d: %s", t, rc, err_text);
    else if (rc == 2 && tl_newlines(err_text) != 1) other++, fprintf(stderr, "fuzz program %d: %s", t, err_text);
  }
  free(buf);
  CHECK(crashed == 0 && other == 0, "fuzz through the program: %d crashes or hangs, %d bad exits or messages", crashed,
        other);
  printf("fuzz: %d mutated result files in process (%d refused, %d compared), %d through the program\n", IN_PROCESS,
         refused, accepted, PROGRAM);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: test_compare_files DDPBENCH RESULT.json\n");
    return 2;
  }
  bin = argv[1];
  char job_prog[1100];
  snprintf(job_prog, sizeof job_prog, "%s compare", bin);
  job.prog = job_prog;
  base_text = tl_file_slurp(argv[2]);
  if (!base_text) {
    fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return 1;
  }
  tmp_made = 1;
  atexit(cleanup);
  test_bad_inputs();
  test_hosts_and_pooling();
  test_job_size();
  test_integrity_and_modes();
  test_strategies();
  test_same_run_and_zero();
  test_fuzz();
  free(base_text);
  return check_summary();
}
