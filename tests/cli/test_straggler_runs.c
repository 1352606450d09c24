/* test_straggler_runs: the straggler verdict is stable across identical runs (docs/straggler.md), end to end under
 * mpirun on the CPU device, with --strict (a warning exits 4). argv: mpiexec ddpbench source-dir short|judged.
 *  - short: 20 back-to-back runs of configs/ci.ini on 2 ranks (6 steps of ~0.05 ms, the job that warned
 *    "slowest rank" in 3 of 6 and 8 of 8 runs): every one exits 0, with no straggler and no warning, and its
 *    slowest-rank finding says "too short to judge";
 *  - judged: 20 runs of a job the rule judges (3 ranks on the machine's cores, 10 steps of a few ms): every one
 *    exits 0 with no straggler and no warning; the rule was applied (no "too short"), against the cpu device's
 *    run-to-run floor.
 * The counts are printed ("20/20"), so a flapping rule shows as a count below 20. The really slowed rank (a cgroup
 * quota) is named in every run by tests/multinode/test_straggler_hosts.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "testlib.h"

enum { RUNS = 20 };
static char dir[] = "/tmp/ddpbench-test-straggler-runs-XXXXXX";
static char out[1 << 18], err[1 << 16];
static tl_job job = {.timeout = 120, .dir = dir, .out = out, .outn = sizeof out, .err = err, .errn = sizeof err};

/* The run's straggler and slowest-rank findings: how many fail or warn, how many say "too short". */
static int judge_file(const char *path, int *bad, int *short_, char *why, size_t n) {
  cJSON *doc = tl_json_load(path);
  *bad = *short_ = 0;
  if (!doc) return -1;
  const cJSON *f;
  cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(doc, "findings")) {
    const char *check = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "check"));
    const char *sev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "severity"));
    const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "text"));
    if (!check || !sev || !text || (strcmp(check, "straggler") && strcmp(check, "slowest_rank"))) continue;
    if (strcmp(sev, "info")) {
      (*bad)++;
      snprintf(why, n, "%s %s: %s", sev, check, text);
    }
    *short_ += strstr(text, "too short to judge") != NULL;
  }
  cJSON_Delete(doc);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: test_straggler_runs MPIEXEC DDPBENCH SOURCE_DIR short|judged\n");
    return 1;
  }
  int judged = !strcmp(argv[4], "judged");
  char prog[2048], args[512];
  snprintf(prog, sizeof prog, "%s --config %s/configs/ci.ini --device cpu --progress none --strict --timeout 60 --force%s",
           argv[2], argv[3], judged ? " --hidden 512 --batch 64 --steps 10 --warmup 2" : "");
  job.mpiexec = argv[1], job.prog = prog;
  int np = judged ? 3 : 2, ok = 0, exit0 = 0, shortn = 0;
  char why[1024] = "";
  for (int i = 0; i < RUNS; i++) {
    snprintf(args, sizeof args, "--json %s", tl_path(dir, "run.json"));
    int rc = tl_job_run(&job, np, "OPENBLAS_NUM_THREADS=1", args);
    int bad = -1, sh = 0;
    int read = judge_file(tl_path(dir, "run.json"), &bad, &sh, why, sizeof why);
    exit0 += rc == 0;
    shortn += sh == 2; /* both phases */
    if (rc == 0 && read == 0 && bad == 0) ok++;
    else
      fprintf(stderr, "# run %d: exit %d, %d straggler/slowest-rank warnings or failures: %s\n%s", i + 1, rc, bad, why,
              err);
  }
  printf("# %s: %d/%d runs exit 0 under --strict, %d/%d with no straggler and no warning, %d/%d too short to "
         "judge\n", judged ? "judged (3 ranks, 10 steps of hidden 512)" : "short (ci.ini, 2 ranks)", exit0, RUNS, ok,
         RUNS, shortn, RUNS);
  CHECK(ok == RUNS, "%d of %d identical runs: no straggler, no warning, exit 0 under --strict", ok, RUNS);
  if (judged)
    CHECK(shortn == 0, "the rule judged every run (%d said too short)", shortn);
  else
    CHECK(shortn == RUNS, "every run too short to judge (%d of %d)", shortn, RUNS);
  tl_rmtree(dir);
  return check_summary();
}
