/* test_accept_passes: `ddpbench accept` keeps every pass over the node pairs, under mpirun on 4 emulated nodes of one
 * rank (DDPBENCH_TEST_RANKS_PER_NODE=1, CPU device). argv: mpiexec ddpbench.
 *  - a healthy run with --pair-repeats 3 and --allreduce-iters 5: the JSON holds a "pair_pass" busbw record per pair
 *    per pass (6 pairs x 3 passes, stage "pairs", passes 1 to 3), each with 5 samples whose median is its value, and
 *    a "pair_pass" "world" "duration_s" record per pass; the best-of "allreduce" pair records are still there, one
 *    per pair, without samples; the report prints "pair passes: " with the 3 durations; no pair_passes warning;
 *  - the same with pass 2 made 3 s late (DDPBENCH_TEST_PAIR_PASS_DELAY=2:3): a warning "pair pass 2 took", in the
 *    report and the JSON, exit 0 (a warning), exit 4 with --strict; pass 2's duration is the longest.
 * The relative verdicts are off (as in test_accept_run): 4 ranks on 2 shared cores time each other's bursts. */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

static char dir[] = "/tmp/accept-passes-XXXXXX";
static char out[1 << 18], err[1 << 16];

static const char *label(const cJSON *rec, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "labels"), key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}
static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Checks the kept passes of a run's JSON: npairs x npasses busbw records of iters samples each, npasses durations.
 * Returns the index (1-based) of the longest pass, 0 when there is none. */
static int check_passes(const char *path, int npairs, int npasses, int iters) {
  cJSON *doc = tl_json_load(path);
  CHECK(doc != NULL, "%s is JSON", path);
  if (!doc) return 0;
  const cJSON *recs = cJSON_GetObjectItemCaseSensitive(doc, "records"), *x;
  int busbw = 0, good_samples = 0, best = 0, best_samples = 0, ndur = 0, longest = 0, per_pass[16] = {0};
  double dmax = -1;
  cJSON_ArrayForEach(x, recs) {
    const char *m = str(x, "measurement"), *g = str(x, "group"), *metric = str(x, "metric");
    const cJSON *samples = cJSON_GetObjectItemCaseSensitive(x, "samples");
    if (!strcmp(m, "allreduce") && !strncmp(g, "pair:", 5)) best++, best_samples += samples != NULL;
    if (strcmp(m, "pair_pass")) continue;
    const char *pass = label(x, "pass"), *stage = label(x, "stage");
    int k = pass ? atoi(pass) : 0;
    if (!strcmp(g, "world") && !strcmp(metric, "duration_s")) {
      double v = cJSON_GetObjectItemCaseSensitive(x, "value")->valuedouble;
      ndur++;
      if (v > dmax) dmax = v, longest = k;
      continue;
    }
    CHECK(!strncmp(g, "pair:", 5) && !strcmp(metric, "busbw_gbs") && stage && !strcmp(stage, "pairs") && k >= 1 &&
              k <= npasses && label(x, "bytes"),
          "pair_pass record %s %s pass %s stage %s", g, metric, pass ? pass : "-", stage ? stage : "-");
    if (k >= 1 && k < 16) per_pass[k]++;
    busbw++;
    int n = cJSON_GetArraySize(samples);
    double s[64], v = cJSON_GetObjectItemCaseSensitive(x, "value")->valuedouble;
    for (int i = 0; i < n && i < 64; i++) s[i] = cJSON_GetArrayItem(samples, i)->valuedouble;
    qsort(s, (size_t)(n < 64 ? n : 64), sizeof *s, cmp);
    double med = n % 2 ? s[n / 2] : n ? 0.5 * (s[n / 2 - 1] + s[n / 2]) : NAN;
    good_samples += n == iters && fabs(med - v) <= 1e-9 * fabs(v) + 1e-12;
  }
  CHECK(busbw == npairs * npasses, "pair_pass busbw records: %d, expected %d x %d", busbw, npairs, npasses);
  for (int k = 1; k <= npasses; k++) CHECK(per_pass[k] == npairs, "pass %d: %d pair records", k, per_pass[k]);
  CHECK(good_samples == busbw && busbw > 0, "%d of %d pair_pass records have %d samples with the value as their median",
        good_samples, busbw, iters);
  CHECK(ndur == npasses, "duration records: %d, expected %d", ndur, npasses);
  CHECK(best == npairs && best_samples == 0, "best-of allreduce pair records: %d (expected %d), %d with samples", best,
        npairs, best_samples);
  cJSON_Delete(doc);
  return longest;
}

static int has_pass_warning(const char *path, int pass) {
  cJSON *doc = tl_json_load(path);
  const cJSON *f;
  int found = 0;
  char want[64];
  snprintf(want, sizeof want, "pair pass %d took", pass);
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "findings"))
    found += !strcmp(str(f, "check"), "pair_passes") && !strcmp(str(f, "severity"), "warn") && strstr(str(f, "text"), want);
  cJSON_Delete(doc);
  return found;
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: test_accept_passes mpiexec ddpbench\n"), 2;
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  char prog[1100], args[1024];
  snprintf(prog, sizeof prog, "%s accept --device cpu --skip gemm,copy,p2p --node-mib 1 --pair-mib 1 --allreduce-iters 5 "
           "--pair-repeats 3 --relative-warn-pct 99 --relative-fail-pct 99 --progress none", argv[2]);
  tl_job job = {.mpiexec = argv[1], .prog = prog, .timeout = 300, .dir = dir, .out = out, .outn = sizeof out,
                .err = err, .errn = sizeof err};
  setenv("DDPBENCH_TEST_RANKS_PER_NODE", "1", 1);

  snprintf(args, sizeof args, "--json %s", tl_path(dir, "healthy.json"));
  int rc = tl_job_run(&job, 4, NULL, args);
  CHECK(rc == 0 && strstr(out, "hosts: 4 pass"), "healthy: exit %d\n%s%s", rc, out, err);
  const char *line = strstr(out, "pair passes: ");
  int commas = 0;
  for (const char *p = line; p && *p && *p != '\n'; p++) commas += *p == ',';
  CHECK(line && commas == 2, "the report's pair passes line, 3 durations:\n%s", out);
  check_passes(tl_path(dir, "healthy.json"), 6, 3, 5);
  CHECK(!has_pass_warning(tl_path(dir, "healthy.json"), 1) && !has_pass_warning(tl_path(dir, "healthy.json"), 2) &&
            !has_pass_warning(tl_path(dir, "healthy.json"), 3) && !strstr(out, "pair_passes"),
        "healthy: no slow pass\n%s", out);

  /* pass 2 three seconds late: named, a warning (exit 0), never silent */
  snprintf(args, sizeof args, "--json %s", tl_path(dir, "slow.json"));
  rc = tl_job_run(&job, 4, "DDPBENCH_TEST_PAIR_PASS_DELAY=2:3", args);
  CHECK(rc == 0 && strstr(out, "pair pass 2 took") && strstr(out, "x the others") && strstr(out, "warn"),
        "pass 2 slow: exit %d, a warning\n%s%s", rc, out, err);
  CHECK(check_passes(tl_path(dir, "slow.json"), 6, 3, 5) == 2, "pass 2 is the longest");
  CHECK(has_pass_warning(tl_path(dir, "slow.json"), 2) == 1, "slow.json: one warning naming pass 2");
  CHECK(!has_pass_warning(tl_path(dir, "slow.json"), 1) && !has_pass_warning(tl_path(dir, "slow.json"), 3),
        "slow.json: passes 1 and 3 not named");
  rc = tl_job_run(&job, 4, "DDPBENCH_TEST_PAIR_PASS_DELAY=2:3", "--strict");
  CHECK(rc == 4 && strstr(out, "pair pass 2 took"), "--strict: exit %d\n%s", rc, out);

  unsetenv("DDPBENCH_TEST_RANKS_PER_NODE");
  tl_rmtree(dir);
  return check_summary();
}
