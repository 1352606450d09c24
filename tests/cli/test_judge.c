/* test_judge: `ddpbench judge` on accept results this test makes (CPU device, 4 emulated nodes of one rank under
 * mpirun: DDPBENCH_TEST_RANKS_PER_NODE=1). argv: mpiexec ddpbench.
 *  - a failing accept (a GEMM floor no CPU meets, --expect): judge alone reproduces its exit code (4), its verdict,
 *    its findings (check, severity, subject, in order) and its drain list, byte for byte; judged with an easy floor
 *    instead it passes (exit 0, an empty drain list): the rules given are the rules applied;
 *  - a healthy accept: judge exits as it did, and (when it passed) --drain-threshold 0.99 changes nothing (the same
 *    findings, the same verdict); the rules used are in the output's config (drain_threshold 0.99, judged_from the file);
 *  - bad input, exit 2 with one line: a missing file (named), a file that is not a result, and a run's result
 *    ("judge reads accept results"); no MPI is started (judge runs without mpiexec);
 *  - a soak (3 nodes, rank 1's weights off): judge reproduces its exit code, findings and drain list from the series
 *    and writes the series as --csv; the same file with rank 2's GEMM at a seventh in every interval fails rank 2's
 *    GPU (the verdict comes from the series, not the stored findings), and NCCL's account's finding is carried over;
 *    a section cut short, or none: exit 2. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testlib.h"

static char dir[] = "/tmp/judge-XXXXXX";
static char out[1 << 18], err[1 << 16];

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* "check severity subject\n" for every finding of the file, in order; the verdict and exit code in front. */
static void summary(const char *path, char *buf, size_t n) {
  cJSON *d = tl_json_load(path);
  size_t k = (size_t)snprintf(buf, n, "%s %d\n", str(d, "verdict"),
                              cJSON_GetObjectItemCaseSensitive(d, "exit_code") ? cJSON_GetObjectItemCaseSensitive(d, "exit_code")->valueint : -1);
  const cJSON *f;
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(d, "findings")) if (k < n) k +=
      (size_t)snprintf(buf + k, n - k, "%s %s %s\n", str(f, "check"), str(f, "severity"), str(f, "subject"));
  cJSON_Delete(d);
}

static const char *config(const char *path, const char *key, char *buf, size_t n) {
  cJSON *d = tl_json_load(path);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "config"), key);
  if (cJSON_IsString(v)) snprintf(buf, n, "%s", v->valuestring);
  else if (cJSON_IsNumber(v)) snprintf(buf, n, "%g", v->valuedouble);
  else snprintf(buf, n, "?");
  cJSON_Delete(d);
  return buf;
}

/* A soak section's series made nint intervals long, every figure not measured but each GPU's compute time (100 ms)
 * and TFLOP/s (0, for the caller to set); no Xid event, no NVLink, links unmeasured. */
static void series_resize(cJSON *sec, int nint) {
  cJSON *iv = cJSON_CreateArray(), *g, *l, *a;
  for (int i = 0; i < nint; i++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "interval", i + 1);
    cJSON_AddNumberToObject(x, "t0_s", 2 * i);
    cJSON_AddNumberToObject(x, "t1_s", 2 * i + 2);
    cJSON_AddItemToArray(iv, x);
  }
  cJSON_ReplaceItemInObjectCaseSensitive(sec, "intervals", iv);
  cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(sec, "gpus")) {
    cJSON_ArrayForEach(a, g) {
      if (!cJSON_IsArray(a) || !strcmp(a->string, "xids") || !strcmp(a->string, "nvlinks")) continue;
      while (cJSON_GetArraySize(a)) cJSON_DeleteItemFromArray(a, 0);
      int flag = !strcmp(a->string, "under_load") || !strcmp(a->string, "xid_measured") || !strcmp(a->string, "nvlinks_read");
      for (int i = 0; i < nint; i++)
        cJSON_AddItemToArray(a, !strcmp(a->string, "compute_ms") ? cJSON_CreateNumber(100)
                                : !strcmp(a->string, "tflops") || flag ? cJSON_CreateNumber(0) : cJSON_CreateNull());
    }
    cJSON_ReplaceItemInObjectCaseSensitive(g, "xids", cJSON_CreateArray());
    cJSON_ReplaceItemInObjectCaseSensitive(g, "nvlinks", cJSON_CreateArray());
  }
  cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(sec, "links")) {
    cJSON *b = cJSON_CreateArray();
    for (int i = 0; i < nint; i++) cJSON_AddItemToArray(b, cJSON_CreateNull());
    cJSON_ReplaceItemInObjectCaseSensitive(l, "busbw_gbs", b);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: test_judge mpiexec ddpbench\n"), 2;
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  char acc[1100], judge[1100], runp[1100], args[2048], a[4096], b[4096], v[256], drain[512], drain2[512];
  snprintf(acc, sizeof acc, "%s accept --device cpu --health-seconds 0.5 --precisions fp32 --skip copy,p2p --node-mib 1 "
           "--pair-mib 1 --relative-warn-pct 99 --relative-fail-pct 99 --progress none", argv[2]);
  snprintf(judge, sizeof judge, "%s judge", argv[2]);
  snprintf(runp, sizeof runp, "%s --device cpu --hidden 64 --layers 2 --batch 8 --steps 3 --warmup 1 --progress none", argv[2]);
  tl_job ajob = {.mpiexec = argv[1], .prog = acc, .timeout = 300, .dir = dir, .out = out, .outn = sizeof out,
                 .err = err, .errn = sizeof err};
  tl_job jjob = ajob, rjob = ajob;
  jjob.mpiexec = NULL, jjob.prog = judge, jjob.timeout = 60; /* judge: no launcher */
  rjob.prog = runp;
  setenv("DDPBENCH_TEST_RANKS_PER_NODE", "1", 1);

  /* a failing run: every host below a GEMM floor */
  tl_file_write(tl_path(dir, "high.ini"), "gemm_fp32_tflops = 1000\n");
  snprintf(args, sizeof args, "--expect %s --json %s --failed-hosts %s", tl_path(dir, "high.ini"),
           tl_path(dir, "fail.json"), tl_path(dir, "drain"));
  int rc = tl_job_run(&ajob, 4, NULL, args);
  CHECK(rc == 4, "accept under a floor nobody meets: exit %d\n%s%s", rc, out, err);
  tl_file_read(tl_path(dir, "drain"), drain, sizeof drain);
  CHECK(strstr(drain, "node00\n") && strstr(drain, "node03\n"), "accept's drain list: '%s'", drain);
  snprintf(args, sizeof args, "%s --json %s --failed-hosts %s", tl_path(dir, "fail.json"), tl_path(dir, "fail-j.json"),
           tl_path(dir, "drain-j"));
  rc = tl_job_run(&jjob, 0, NULL, args);
  tl_file_read(tl_path(dir, "drain-j"), drain2, sizeof drain2);
  summary(tl_path(dir, "fail.json"), a, sizeof a);
  summary(tl_path(dir, "fail-j.json"), b, sizeof b);
  CHECK(rc == 4 && !strcmp(drain, drain2), "judge reproduces the drain list: exit %d, '%s' vs '%s'\n%s%s", rc, drain,
        drain2, out, err);
  CHECK(!strcmp(a, b) && strstr(a, "FAIL 4\n"), "judge reproduces verdict and findings:\n%s---\n%s", a, b);
  CHECK(strstr(out, "ddpbench judge: FAIL") && strstr(out, "hosts: 0 pass, 0 warn, 4 fail"), "report:\n%s", out);
  /* the same records under an easy floor: a rule given is a rule applied */
  tl_file_write(tl_path(dir, "easy.ini"), "gemm_fp32_tflops = 0.000001\n");
  snprintf(args, sizeof args, "%s --expect %s --failed-hosts %s", tl_path(dir, "fail.json"), tl_path(dir, "easy.ini"),
           tl_path(dir, "drain-e"));
  rc = tl_job_run(&jjob, 0, NULL, args);
  tl_file_read(tl_path(dir, "drain-e"), drain2, sizeof drain2);
  /* (a warning may stay: 4 ranks on 2 loaded cores spread, and a GEMM far below its peers within their spread is
   * "cannot tell") */
  CHECK(rc == 0 && drain2[0] == 0 && strstr(out, ", 0 fail\n"), "easy floor: exit %d, drain '%s'\n%s%s", rc, drain2,
        out, err);

  /* a healthy run: judged as it was, and a stricter drain threshold changes nothing */
  snprintf(args, sizeof args, "--skip gemm --json %s", tl_path(dir, "ok.json"));
  rc = tl_job_run(&ajob, 4, NULL, args);
  /* 4 ranks on a loaded 2-core machine: the pair model has drained a healthy node here (a rate that
   * tests/multinode/test_accept_repeat.sh measures); what this checks is that judge says what the run said */
  int ok_rc = rc;
  CHECK(rc == 0 || rc == 4, "healthy accept: exit %d\n%s%s", rc, out, err);
  snprintf(args, sizeof args, "%s --json %s", tl_path(dir, "ok.json"), tl_path(dir, "ok-j.json"));
  rc = tl_job_run(&jjob, 0, NULL, args);
  CHECK(rc == ok_rc, "judge of the healthy run: exit %d as accept's %d\n%s%s", rc, ok_rc, out, err);
  snprintf(args, sizeof args, "%s --drain-threshold 0.99 --json %s", tl_path(dir, "ok.json"), tl_path(dir, "ok-99.json"));
  int rc99 = tl_job_run(&jjob, 0, NULL, args);
  summary(tl_path(dir, "ok-j.json"), a, sizeof a);
  summary(tl_path(dir, "ok-99.json"), b, sizeof b);
  if (ok_rc == 0)
    CHECK(rc99 == rc && !strcmp(a, b), "--drain-threshold 0.99 changes nothing on a healthy run: exit %d\n%s---\n%s",
          rc99, a, b);
  else /* a node drained at P under 0.99 is not drained at 0.99: nothing to compare */
    printf("# the healthy run drained a node under this machine's load: --drain-threshold 0.99 not compared\n");
  CHECK(!strcmp(config(tl_path(dir, "ok-99.json"), "drain_threshold", v, sizeof v), "0.99"), "config drain_threshold: %s", v);
  CHECK(!strcmp(config(tl_path(dir, "ok-99.json"), "judged_from", v, sizeof v), tl_path(dir, "ok.json")),
        "config judged_from: %s", v);

  /* bad input: exit 2, one line */
  snprintf(args, sizeof args, "%s", tl_path(dir, "missing.json"));
  rc = tl_job_run(&jjob, 0, NULL, args);
  CHECK(rc == 2 && strstr(err, "missing.json") && tl_newlines(err) == 1 && !strstr(out, "findings"),
        "missing file: exit %d\n%s%s", rc, out, err);
  /* the pair model's options take accept's ranges (judge took --bad-pct 0 to 100 and passed a run on 95) */
  static const char *const out_of_range[][2] = {{"--bad-pct 95", "bad_pct"}, {"--bad-pct 0", "bad_pct"},
                                               {"--prior-bad 0.9", "prior_bad"}, {"--drain-threshold 1", "drain_threshold"}};
  for (size_t k = 0; k < sizeof out_of_range / sizeof out_of_range[0]; k++) {
    snprintf(args, sizeof args, "%s %s", tl_path(dir, "ok.json"), out_of_range[k][0]);
    rc = tl_job_run(&jjob, 0, NULL, args);
    CHECK(rc == 2 && strstr(err, out_of_range[k][1]) && tl_newlines(err) == 1 && !out[0], "%s: exit %d\n%s",
          out_of_range[k][0], rc, err);
  }
  tl_file_write(tl_path(dir, "junk.json"), "{\"hello\": 1}\n");
  rc = tl_job_run(&jjob, 0, NULL, tl_path(dir, "junk.json"));
  CHECK(rc == 2 && strstr(err, "junk.json") && tl_newlines(err) == 1, "not a result: exit %d\n%s", rc, err);
  unsetenv("DDPBENCH_TEST_RANKS_PER_NODE");
  snprintf(args, sizeof args, "--json %s", tl_path(dir, "run.json"));
  rc = tl_job_run(&rjob, 1, NULL, args);
  CHECK(rc == 0, "a run's result: exit %d\n%s", rc, err);
  rc = tl_job_run(&jjob, 0, NULL, tl_path(dir, "run.json"));
  CHECK(rc == 2 && strstr(err, "judge reads accept results") && strstr(err, "run.json") &&
            tl_newlines(err) == 1, "a run's result: exit %d\n%s%s", rc, out, err);

  /* a soak (3 emulated nodes, rank 1's weights off from interval 2): judged again from its series, it gives the same
   * exit code, findings and drain list, and as many CSV rows (the series, every interval) */
  setenv("DDPBENCH_TEST_RANKS_PER_NODE", "1", 1);
  setenv("DDPBENCH_TEST_CORRUPT_RANK", "1:1", 1);
  snprintf(args, sizeof args, "--soak 10s --interval 1s --json %s --failed-hosts %s --csv %s", tl_path(dir, "soak.json"),
           tl_path(dir, "soak-drain"), tl_path(dir, "soak.csv"));
  rc = tl_job_run(&ajob, 3, NULL, args);
  unsetenv("DDPBENCH_TEST_CORRUPT_RANK");
  CHECK(rc == 4, "a soak with a rank's weights off: exit %d\n%s%s", rc, out, err);
  snprintf(args, sizeof args, "%s --json %s --failed-hosts %s --csv %s", tl_path(dir, "soak.json"),
           tl_path(dir, "soak-j.json"), tl_path(dir, "soak-drain-j"), tl_path(dir, "soak-j.csv"));
  rc = tl_job_run(&jjob, 0, NULL, args);
  summary(tl_path(dir, "soak.json"), a, sizeof a);
  summary(tl_path(dir, "soak-j.json"), b, sizeof b);
  tl_file_read(tl_path(dir, "soak-drain"), drain, sizeof drain);
  tl_file_read(tl_path(dir, "soak-drain-j"), drain2, sizeof drain2);
  CHECK(rc == 4 && !strcmp(a, b) && strstr(a, "soak_weights fail rank 1 (node01)\n") && !strcmp(drain, drain2),
        "judge of a soak reproduces it: exit %d, drain '%s' vs '%s'\n%s---\n%s%s", rc, drain, drain2, a, b, err);
  char csv[1 << 16], csv2[1 << 16];
  tl_file_read(tl_path(dir, "soak.csv"), csv, sizeof csv);
  tl_file_read(tl_path(dir, "soak-j.csv"), csv2, sizeof csv2);
  CHECK(tl_newlines(csv) > 10 && tl_newlines(csv) == tl_newlines(csv2) && strstr(csv2, "interval=1"),
        "judge's --csv holds the series: %d rows vs %d", tl_newlines(csv2), tl_newlines(csv));
  /* the same document with a series of 5 intervals written here (the soak measured as many as the machine's load
   * allowed: under the sanitizer, 1), steady GEMM figures 1 % apart and rank 2's GPU at a seventh of its peers in
   * every interval: named by the series (the stored findings, which did not name it, are not read) */
  cJSON *sk = tl_json_load(tl_path(dir, "soak.json")), *tf = NULL, *x;
  series_resize(cJSON_GetObjectItemCaseSensitive(sk, "soak"), 5);
  for (int k = 0; k < 3; k++) {
    cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sk, "soak"), "gpus"), k);
    tf = cJSON_GetObjectItemCaseSensitive(g, "tflops");
    int i = 0;
    cJSON_ArrayForEach(x, tf) cJSON_SetNumberValue(x, 0.04 * (1 + 0.01 * ((i++ + k) % 3)) / (k == 2 ? 7 : 1));
  }
  /* and NCCL's account's finding as a GPU run adds it (judged live against a topology the result does not hold) */
  cJSON *fs = cJSON_GetObjectItemCaseSensitive(sk, "findings"), *nf = cJSON_Duplicate(cJSON_GetArrayItem(fs, 0), 1);
  cJSON_ReplaceItemInObjectCaseSensitive(nf, "check", cJSON_CreateString("nccl"));
  cJSON_ReplaceItemInObjectCaseSensitive(nf, "severity", cJSON_CreateString("info"));
  cJSON_ReplaceItemInObjectCaseSensitive(nf, "scope", cJSON_CreateString("job"));
  cJSON_ReplaceItemInObjectCaseSensitive(nf, "subject", cJSON_CreateString("job"));
  cJSON_ReplaceItemInObjectCaseSensitive(nf, "host", cJSON_CreateNull());
  cJSON_ReplaceItemInObjectCaseSensitive(nf, "rank", cJSON_CreateNull());
  cJSON_ReplaceItemInObjectCaseSensitive(nf, "text", cJSON_CreateString("NVLS used by 0 of 1 communicator"));
  cJSON_AddItemToArray(fs, nf);
  char *text = cJSON_Print(sk);
  tl_file_write(tl_path(dir, "soak-slow.json"), text);
  free(text);
  snprintf(args, sizeof args, "%s --json %s --failed-hosts %s", tl_path(dir, "soak-slow.json"),
           tl_path(dir, "soak-slow-j.json"), tl_path(dir, "soak-drain-s"));
  rc = tl_job_run(&jjob, 0, NULL, args);
  summary(tl_path(dir, "soak-slow-j.json"), b, sizeof b);
  tl_file_read(tl_path(dir, "soak-drain-s"), drain2, sizeof drain2);
  CHECK(rc == 4 && !strstr(a, "soak_steady fail") && strstr(b, "soak_steady fail GPU2") && strstr(drain2, "node02\n") &&
            strstr(b, "soak_weights fail rank 1 (node01)\n") && strstr(b, "nccl info job\n"),
        "a GPU at a seventh of its peers, judged from the series: exit %d, drain '%s'\n%s", rc, drain2, b);
  /* bad input: an array cut short (named), and a soak without its section */
  cJSON_DeleteItemFromArray(tf, 0);
  text = cJSON_Print(sk);
  tl_file_write(tl_path(dir, "soak-cut.json"), text);
  free(text);
  rc = tl_job_run(&jjob, 0, NULL, tl_path(dir, "soak-cut.json"));
  CHECK(rc == 2 && strstr(err, "soak.gpus[2].tflops") && tl_newlines(err) == 1 && !out[0],
        "a soak section cut short: exit %d\n%s%s", rc, out, err);
  cJSON_DeleteItemFromObjectCaseSensitive(sk, "soak");
  text = cJSON_Print(sk);
  tl_file_write(tl_path(dir, "soak-none.json"), text);
  free(text);
  cJSON_Delete(sk);
  rc = tl_job_run(&jjob, 0, NULL, tl_path(dir, "soak-none.json"));
  CHECK(rc == 2 && strstr(err, "without its soak section") && tl_newlines(err) == 1, "a soak without its series: exit %d\n%s",
        rc, err);

  tl_rmtree(dir);
  return check_summary();
}
