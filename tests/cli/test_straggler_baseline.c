/* test_straggler_baseline: the run's --baseline (docs/straggler.md "A baseline's spread") end to
 * end under mpirun on the CPU device. argv: mpiexec ddpbench source-dir fixtures-dir.
 *  - two healthy runs of a judged job (3 ranks, 10 steps of hidden 512, --strict) are the baselines a and b;
 *  - a third run with --baseline a,b exits 0 and names no straggler; its slowest-rank findings say a baseline's
 *    floor applied, its JSON records floor "baseline" from 2 runs per judged phase with floor_pct = the spread +
 *    half of it + 1 point, the spread recomputed here from a's and b's per-rank compute medians, and the text
 *    says it once;
 *  - baselines that are not this job are usage errors before any measuring (exit 2, one "ddpbench:" line naming
 *    the file and the key, no summary printed, no --json written): a 2-rank run (world_size), the job with
 *    another --hidden (config.hidden), a missing file, a file that is not JSON, an accept result (kind).
 * The rank slowed steadily that a baseline would name where the cpu floor does not has no test hook (none slows
 * one rank's compute: DDPBENCH_TEST_STALL_RANK stalls one step); test_straggler shows it on synthetic figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "testlib.h"

static char dir[] = "/tmp/ddpbench-test-straggler-baseline-XXXXXX";
static char out[1 << 18], err[1 << 16];
static tl_job job = {.timeout = 120, .dir = dir, .out = out, .outn = sizeof out, .err = err, .errn = sizeof err};
static const char *const judged[] = {"local", "ddp"};

static const cJSON *at(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* The slowest rank's median compute time over the median rank's, minus 1, in %, of phase ph in doc: the rule's
 * gap, computed here from the per-rank section (not the records the program reads). NaN when absent. */
static double gap_pct(const cJSON *doc, const char *ph) {
  const cJSON *pr = at(at(at(doc, "phases"), ph), "per_rank");
  int n = cJSON_GetArraySize(pr);
  if (n != 3) return NAN;
  double m[3];
  for (int i = 0; i < 3; i++) m[i] = cJSON_GetNumberValue(at(at(cJSON_GetArrayItem(pr, i), "compute_ms"), "median"));
  double lo = fmin(m[0], fmin(m[1], m[2])), hi = fmax(m[0], fmax(m[1], m[2])), mid = m[0] + m[1] + m[2] - lo - hi;
  return 100 * (hi / mid - 1);
}

/* Findings of check `check` in doc; *bad counts those that are not information, *says those whose text has
 * `part`. */
static int findings(const cJSON *doc, const char *check, const char *part, int *bad, int *says) {
  int n = 0;
  *bad = *says = 0;
  const cJSON *f;
  cJSON_ArrayForEach(f, at(doc, "findings")) {
    const char *c = cJSON_GetStringValue(at(f, "check")), *sev = cJSON_GetStringValue(at(f, "severity"));
    const char *text = cJSON_GetStringValue(at(f, "text"));
    if (!c || strcmp(c, check)) continue;
    n++;
    *bad += !sev || strcmp(sev, "info");
    *says += text && strstr(text, part);
  }
  return n;
}

/* A run that must be refused before measuring: exit 2, one "ddpbench:" line holding both parts, nothing of the
 * summary on stdout, no --json file. */
static void refused(const char *what, int np, const char *args, const char *part1, const char *part2) {
  char a[2048];
  const char *json = tl_path(dir, "refused.json");
  remove(json);
  snprintf(a, sizeof a, "%s --json %s", args, json);
  int rc = tl_job_run(&job, np, "OPENBLAS_NUM_THREADS=1", a);
  const char *line = strstr(err, "ddpbench: ");
  char first[512] = "";
  if (line) snprintf(first, sizeof first, "%.*s", (int)strcspn(line, "\n"), line);
  CHECK(rc == 2, "%s: exit 2 (%d): %.400s", what, rc, err);
  CHECK(tl_lines_starting(err, "ddpbench: ") == 1 && strstr(first, part1) && strstr(first, part2),
        "%s: one line naming %s and %s: %.400s", what, part1, part2, err);
  CHECK(!strstr(out, "# ddpbench ") && !strstr(out, "per rank"), "%s: refused before any measuring: %.300s", what, out);
  CHECK(tl_file_read(json, a, sizeof a) < 0, "%s: no --json written", what);
}

int main(int argc, char **argv) {
  if (argc < 5 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: test_straggler_baseline MPIEXEC DDPBENCH SOURCE_DIR FIXTURES_DIR\n");
    return 1;
  }
  char prog[2048], args[2048], a[600], b[600];
  snprintf(prog, sizeof prog, "%s --config %s/configs/ci.ini --device cpu --progress none --strict --timeout 60 --force "
           "--hidden 512 --batch 64 --steps 10 --warmup 2", argv[2], argv[3]);
  job.mpiexec = argv[1], job.prog = prog;
  snprintf(a, sizeof a, "%s", tl_path(dir, "a.json"));
  snprintf(b, sizeof b, "%s", tl_path(dir, "b.json"));

  /* The baselines: two healthy runs of the job. */
  for (int k = 0; k < 2; k++) {
    snprintf(args, sizeof args, "--json %s", k ? b : a);
    int rc = tl_job_run(&job, 3, "OPENBLAS_NUM_THREADS=1", args);
    CHECK(rc == 0, "baseline run %d: exit 0 (%d): %.400s", k + 1, rc, err);
  }
  cJSON *da = tl_json_load(a), *db = tl_json_load(b);
  CHECK(da && db, "the baselines' JSON");

  /* The third run, judged with their spread. */
  const char *c = tl_path(dir, "c.json");
  snprintf(args, sizeof args, "--baseline %s,%s --json %s", a, b, c);
  int rc = tl_job_run(&job, 3, "OPENBLAS_NUM_THREADS=1", args);
  CHECK(rc == 0, "run with --baseline a,b: exit 0 (%d): %.600s", rc, err);
  cJSON *dc = tl_json_load(c);
  int bad, says;
  CHECK(dc && findings(dc, "straggler", "", &bad, &says) == 0, "no straggler named");
  int n = dc ? findings(dc, "slowest_rank", "2 baseline runs", &bad, &says) : 0;
  CHECK(n == 2 && bad == 0 && says == 2, "both phases' slowest-rank findings: information, saying the floor came from "
        "the 2 baseline runs (%d findings, %d not info, %d say so)", n, bad, says);
  for (int i = 0; i < 2; i++) {
    const cJSON *s = at(at(at(dc, "phases"), judged[i]), "straggler");
    double spread = fmax(gap_pct(da, judged[i]), gap_pct(db, judged[i]));
    double floor = cJSON_GetNumberValue(at(s, "floor_pct")), thr = cJSON_GetNumberValue(at(s, "threshold_pct"));
    CHECK(s && !strcmp(cJSON_GetStringValue(at(s, "floor")) ? cJSON_GetStringValue(at(s, "floor")) : "", "baseline") &&
              cJSON_GetNumberValue(at(s, "baseline_runs")) == 2,
          "%s: the JSON records the baseline's floor, from 2 runs", judged[i]);
    CHECK(isfinite(spread) && fabs(cJSON_GetNumberValue(at(s, "baseline_spread_pct")) - spread) < 1e-6 &&
              fabs(floor - (1.5 * spread + 1)) < 1e-6 && fabs(thr - fmax(5, floor)) < 1e-9,
          "%s: spread %g %% (a's and b's largest gap), floor %g %% = spread x 1.5 + 1, threshold %g %% = max(5, floor)",
          judged[i], spread, floor, thr);
  }
  CHECK(!at(at(at(dc, "phases"), "comm"), "straggler"), "the comm phase is not judged: no floor recorded");
  CHECK(tl_lines_starting(out, "# straggler floor from --baseline (2 runs: ") == 1, "the text says it once:\n%.2000s", out);
  cJSON_Delete(dc);
  cJSON_Delete(da), cJSON_Delete(db);

  /* Baselines that are not this job. */
  const char *two = tl_path(dir, "two.json");
  snprintf(args, sizeof args, "--json %s", two);
  rc = tl_job_run(&job, 2, "OPENBLAS_NUM_THREADS=1", args);
  CHECK(rc == 0, "a 2-rank run of the job: exit 0 (%d)", rc);
  char list[2048];
  snprintf(list, sizeof list, "--baseline %s,%s", a, two);
  refused("a baseline of another world size", 3, list, "two.json", "world_size 2, this run's 3");
  snprintf(list, sizeof list, "--hidden 256 --baseline %s", a);
  refused("a baseline of another hidden size", 3, list, "a.json", "config.hidden 512, this run's 256");
  snprintf(list, sizeof list, "--baseline %s,%s", a, tl_path(dir, "missing.json"));
  refused("a missing file", 3, list, "missing.json", "cannot read");
  tl_file_write(tl_path(dir, "broken.json"), "{\"schema_version\": 3, \"kind\": \"run\"");
  snprintf(list, sizeof list, "--baseline %s", tl_path(dir, "broken.json"));
  refused("a file that is not JSON", 3, list, "broken.json", "not JSON");
  snprintf(list, sizeof list, "--baseline %s/accept-v3.json", argv[4]);
  refused("an accept result", 3, list, "accept-v3.json", "kind accept");
  tl_rmtree(dir);
  return check_summary();
}
