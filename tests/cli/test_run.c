/* test_run: the real program under mpirun, end to end, on the CPU device. argv: mpiexec ddpbench srcdir.
 *  - the CI config on 2 ranks: exit 0, the summary, and the JSON document (every phase, loss per step with
 *    warmup, identical weights, the allowlisted environment only);
 *  - the JSON file is not overwritten without --force, and is with it;
 *  - the default config: the loss falls over its steps;
 *  - fp16 with --inject-nonfinite through the command line;
 *  - bad input under mpirun: exit 2 and one line from rank 0;
 *  - ranks whose final weights differ: exit 1 and the rank named (through a test hook);
 *  - a rank that stops answering ends the job (watchdog) instead of hanging it.
 * On a machine with GPUs the same runs go to the GPUs (device auto), through the MPI comm, which lets ranks share
 * a GPU (NCCL refuses that, and a 1-GPU machine has fewer GPUs than the test has ranks). */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

static char dir[] = "/tmp/ddpbench-test-run-XXXXXX";
static const char *mpiexec, *prog, *src;
static char out[1 << 20], err[1 << 18];
/* Each run: `env ENV timeout 300 mpiexec -np N --oversubscribe ddpbench --comm mpi ARGS`. */
static tl_job job = {.timeout = 300, .dir = dir, .out = out, .outn = sizeof out, .err = err, .errn = sizeof err};

static cJSON *at(cJSON *o, const char *a, const char *b) {
  cJSON *x = cJSON_GetObjectItem(o, a);
  return b ? cJSON_GetObjectItem(x, b) : x;
}

int main(int argc, char **argv) {
  if (argc < 4 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: test_run MPIEXEC DDPBENCH SOURCE_DIR\n");
    return 1;
  }
  mpiexec = argv[1], prog = argv[2], src = argv[3];
  char job_prog[1100];
  snprintf(job_prog, sizeof job_prog, "%s --comm mpi", prog);
  job.mpiexec = mpiexec, job.prog = job_prog;
  char args[2048], json[512];

  /* 1. the CI config on two ranks */
  snprintf(json, sizeof json, "%s/ci.json", dir);
  snprintf(args, sizeof args, "--config %s/configs/ci.ini --json %s", src, json);
  int code = tl_job_run(&job, 2, "DDPBENCH_TEST_MARK=yes SECRET_TEST_VAR=no", args);
  CHECK(code == 0, "ci run exit code %d; stderr: %.2000s", code, err);
  CHECK(strstr(out, "# Using devices") && strstr(out, "Rank  1"), "summary lists the ranks");
  CHECK(strstr(out, "final weights bitwise identical on all 2 ranks"), "verification verdict printed");
  CHECK(strstr(out, "weak-scaling efficiency"), "efficiency printed");
  cJSON *doc = tl_json_load(json);
  if (doc && strcmp(at(doc, "device", NULL)->valuestring, "cpu") == 0) { /* auto chose cpu: no GPU here */
    CHECK(strstr(err, "no GPU visible: running on the CPU device") != NULL, "one-line notice about the CPU device");
    CHECK(tl_lines_starting(err, "ddpbench: no GPU visible") == 1, "the notice comes once (rank 0)");
  }
  CHECK(doc != NULL, "JSON parses");
  if (doc) {
    CHECK(at(doc, "schema_version", NULL)->valueint == 4 && at(doc, "world_size", NULL)->valueint == 2, "header");
    CHECK(at(doc, "config", "hidden")->valueint == 64 && at(doc, "config", "layers")->valueint == 3,
          "config from the file");
    CHECK(cJSON_GetArraySize(at(doc, "ranks", NULL)) == 2, "two ranks");
    cJSON *r0 = cJSON_GetArrayItem(at(doc, "ranks", NULL), 0);
    CHECK(strncmp(at(r0, "versions", "mpi")->valuestring, "Open MPI", 8) == 0, "MPI version recorded");
    CHECK(strncmp(at(r0, "versions", "blas")->valuestring, "OpenBLAS", 8) == 0, "BLAS version recorded");
    const char *ph[] = {"local", "comm", "ddp"};
    for (int i = 0; i < 3; i++) {
      cJSON *p = at(at(doc, "phases", NULL), ph[i], NULL);
      CHECK(p && at(p, "step_ms", "median")->valuedouble > 0, "phase %s timed", ph[i]);
      if (i != 1) CHECK(cJSON_GetArraySize(at(p, "loss", NULL)) == 8, "phase %s: loss of all 8 steps", ph[i]);
    }
    CHECK(at(at(doc, "phases", "comm"), "busbw_gbs", NULL)->valuedouble > 0, "comm phase busbw");
    CHECK(cJSON_GetArraySize(at(at(doc, "phases", "ddp"), "allreduce", NULL)) == 1, "one bucket size row");
    CHECK(at(doc, "buckets", "count")->valueint == 3, "3 buckets of one layer each");
    CHECK(cJSON_IsTrue(at(doc, "weights_identical", NULL)), "weights identical");
    CHECK(cJSON_IsArray(at(doc, "findings", NULL)) && cJSON_GetArraySize(at(doc, "records", NULL)) > 20,
          "findings and records in the document");
    CHECK(cJSON_IsNumber(at(doc, "scaling_efficiency", NULL)), "efficiency");
    CHECK(at(doc, "environment", "DDPBENCH_TEST_MARK") && !at(doc, "environment", "SECRET_TEST_VAR") &&
              !at(doc, "environment", "HOME"),
          "environment: allowlist only");
    cJSON_Delete(doc);
  }

  /* 2. never overwritten silently */
  code = tl_job_run(&job, 2, NULL, args);
  CHECK(code == 2, "existing --json: exit %d", code);
  CHECK(strstr(err, "file exists") && tl_lines_starting(err, "ddpbench: ") == 1, "one line: %.500s", err);
  doc = tl_json_load(json);
  CHECK(doc && at(doc, "config", "hidden")->valueint == 64, "the first document is intact");
  cJSON_Delete(doc);
  snprintf(args, sizeof args, "--config %s/configs/ci.ini --json %s --force --hidden 48 --quiet", src, json);
  code = tl_job_run(&job, 2, NULL, args);
  CHECK(code == 0, "--force: exit %d", code);
  doc = tl_json_load(json);
  CHECK(doc && at(doc, "config", "hidden")->valueint == 48, "--force replaced it");
  CHECK(strstr(err, "[ddpbench] run: phase local") == NULL, "--quiet: no progress lines");
  cJSON_Delete(doc);

  /* 3. the default config: the loss falls */
  snprintf(json, sizeof json, "%s/default.json", dir);
  snprintf(args, sizeof args, "--json %s --progress none --phases ddp", json);
  code = tl_job_run(&job, 2, NULL, args);
  CHECK(code == 0, "default config: exit %d: %.1000s", code, err);
  doc = tl_json_load(json);
  if (doc) {
    cJSON *loss = at(at(doc, "phases", "ddp"), "loss", NULL);
    int n = cJSON_GetArraySize(loss), falls = 0;
    for (int i = 1; i < n; i++) falls += cJSON_GetArrayItem(loss, i)->valuedouble < cJSON_GetArrayItem(loss, i - 1)->valuedouble;
    double first = cJSON_GetArrayItem(loss, 0)->valuedouble, last = cJSON_GetArrayItem(loss, n - 1)->valuedouble;
    CHECK(n == 25, "25 steps of loss");
    CHECK(last < 0.8 * first && falls == n - 1, "loss falls every step: %g -> %g (%d of %d)", first, last, falls, n - 1);
    cJSON_Delete(doc);
  } else {
    CHECK(0, "default-config JSON");
  }

  /* 3b. --warmup-seconds (docs/steady.md): each phase first runs its own workload, untimed, and the timed run
   * starts from the same weights: identical final weights and losses with and without it (fp16 with momentum,
   * so the scaler and the momentum are restored too), settle_seconds recorded, the state said in the text. */
  {
    char sums[2][32] = {"", ""}, *losses[2] = {NULL, NULL};
    double settled[2][3] = {{-1, -1, -1}, {-1, -1, -1}};
    const char *const names[3] = {"local", "comm", "ddp"};
    for (int k = 0; k < 2; k++) {
      snprintf(json, sizeof json, "%s/settle%d.json", dir, k);
      snprintf(args, sizeof args,
               "--config %s/configs/ci.ini --precision fp16 --momentum 0.9 --steps 24 --warmup-seconds %s --json %s",
               src, k ? "0.3" : "0", json);
      code = tl_job_run(&job, 2, NULL, args);
      CHECK(code == 0, "--warmup-seconds %s: exit %d: %.500s", k ? "0.3" : "0", code, err);
      CHECK(strstr(out, k ? "each phase after 0.3 s of its own workload and 2 warm-up steps"
                          : "each phase after 2 warm-up steps") != NULL,
            "the text says what state the figures describe (%s)", k ? "settled" : "steps only");
      doc = tl_json_load(json);
      if (!doc) continue;
      cJSON *w = at(doc, "weights_checksum", NULL);
      if (cJSON_IsString(w)) snprintf(sums[k], sizeof sums[k], "%s", w->valuestring);
      losses[k] = cJSON_PrintUnformatted(at(at(doc, "phases", "ddp"), "loss", NULL));
      for (int p = 0; p < 3; p++) {
        cJSON *x = at(at(doc, "phases", names[p]), "settle_seconds", NULL);
        settled[k][p] = cJSON_IsNumber(x) ? x->valuedouble : -1;
      }
      cJSON_Delete(doc);
    }
    CHECK(sums[0][0] && !strcmp(sums[0], sums[1]), "the same final weights with and without it: %s / %s", sums[0],
          sums[1]);
    CHECK(losses[0] && losses[1] && !strcmp(losses[0], losses[1]), "the same ddp losses with and without it");
    for (int p = 0; p < 3; p++)
      CHECK(settled[0][p] == 0 && settled[1][p] >= 0.29 && settled[1][p] < 5, "%s: settle_seconds %g / %g", names[p],
            settled[0][p], settled[1][p]);
    free(losses[0]), free(losses[1]);
  }

  /* 3c. The settle lasts --warmup-seconds, not a block: with 400 steps of about 6 ms a block (warmup + steps)
   * takes over 2 s, and a settle whose first chunk was a whole block took all of it. */
  snprintf(json, sizeof json, "%s/settle-long.json", dir);
  snprintf(args, sizeof args, "--hidden 512 --layers 4 --batch 64 --steps 400 --warmup 2 --phases local "
                              "--warmup-seconds 0.3 --peak-seconds 0 --progress none --json %s", json);
  code = tl_job_run(&job, 1, NULL, args);
  CHECK(code == 0, "long block: exit %d: %.500s", code, err);
  doc = tl_json_load(json);
  {
    cJSON *x = doc ? at(at(doc, "phases", "local"), "settle_seconds", NULL) : NULL;
    cJSON *med = doc ? at(at(at(doc, "phases", "local"), "step_ms", NULL), "median", NULL) : NULL;
    double s = cJSON_IsNumber(x) ? x->valuedouble : -1, block = cJSON_IsNumber(med) ? 402 * med->valuedouble / 1e3 : -1;
    CHECK(s >= 0.29 && s < 1.2, "settle_seconds %g for --warmup-seconds 0.3 (a block is %.2f s)", s, block);
  }
  cJSON_Delete(doc);

  /* 4a. A loss scale so large that every step overflows is said as that, not as an
   * underflow */
  snprintf(args, sizeof args, "--config %s/configs/ci.ini --precision fp16 --loss-scale-init 1e30 --progress none", src);
  code = tl_job_run(&job, 1, NULL, args);
  CHECK(strstr(out, "skipped the update") && !strstr(out, "underflow"),
        "loss scale 1e30: overflow said, no underflow advice (exit %d): %.3000s", code, out);

  /* 4. fp16 fault injection from the command line */
  snprintf(json, sizeof json, "%s/fp16.json", dir);
  snprintf(args, sizeof args,
           "--config %s/configs/ci.ini --precision fp16 --loss-scale-init 1024 --inject-nonfinite 3 --json %s --progress none",
           src, json);
  code = tl_job_run(&job, 2, NULL, args);
  CHECK(code == 0, "fp16 inject: exit %d", code);
  doc = tl_json_load(json);
  if (doc) {
    cJSON *ddp = at(doc, "phases", "ddp");
    cJSON *sk = at(ddp, "skipped_steps", NULL), *sc = at(ddp, "loss_scale", NULL), *loss = at(ddp, "loss", NULL);
    CHECK(cJSON_GetArraySize(sk) == 1 && cJSON_GetArrayItem(sk, 0)->valueint == 3, "step 3 and only it skipped");
    CHECK(cJSON_GetArrayItem(sc, 4)->valuedouble == cJSON_GetArrayItem(sc, 3)->valuedouble / 2, "scale halved");
    CHECK(cJSON_GetArrayItem(loss, 4)->valuedouble == cJSON_GetArrayItem(loss, 3)->valuedouble, "loss repeats");
    CHECK(strstr(out, "fp16 skipped steps 1 [3]") != NULL, "the summary names the skipped step");
    cJSON_Delete(doc);
  } else {
    CHECK(0, "fp16 JSON");
  }

  /* 5. bad input under mpirun: exit 2, one line from rank 0 */
  code = tl_job_run(&job, 2, NULL, "--hidden 0");
  CHECK(code == 2, "bad input under mpirun: exit %d", code);
  CHECK(tl_lines_starting(err, "ddpbench: ") == 1 && strstr(err, "hidden"), "one line naming the key: %.500s", err);

  /* 6. ranks that end with different weights: exit 1, the odd rank named, the JSON says so */
  snprintf(json, sizeof json, "%s/corrupt.json", dir);
  /* 3 ranks (so that a majority names the odd one); the CPU device, since a GPU machine may have fewer GPUs; no
   * straggler verdict (3 CPU ranks beside a GPU machine's other work can time one rank slow: not this case's point) */
  snprintf(args, sizeof args, "--config %s/configs/ci.ini --device cpu --phases ddp --progress none --straggler-pct 1000 --json %s",
           src, json);
  code = tl_job_run(&job, 3, "DDPBENCH_TEST_CORRUPT_RANK=2", args);
  CHECK(code == 1, "weights differ: exit %d, expected 1", code);
  CHECK(strstr(out, "verification: FAILED: final weights differ on rank 2") != NULL, "rank 2 named: %.3000s", out);
  doc = tl_json_load(json);
  CHECK(doc && cJSON_IsFalse(at(doc, "weights_identical", NULL)) &&
            cJSON_GetArraySize(at(doc, "weights_mismatched_ranks", NULL)) == 1 &&
            cJSON_GetArrayItem(at(doc, "weights_mismatched_ranks", NULL), 0)->valueint == 2,
        "JSON: weights_identical false, mismatched [2]");
  {
    int fails = 0, named = 0;
    cJSON *f;
    cJSON_ArrayForEach(f, at(doc, "findings", NULL)) {
      if (strcmp(at(f, "severity", NULL)->valuestring, "fail")) continue;
      fails++;
      named += strcmp(at(f, "check", NULL)->valuestring, "weights") == 0 && strstr(at(f, "subject", NULL)->valuestring, "rank 2");
    }
    CHECK(fails == 1 && named == 1, "JSON: one fail finding, weights of rank 2: %d %d", fails, named);
  }
  CHECK(strstr(out, "#   fail  weights") != NULL, "findings table names the failure");
  cJSON_Delete(doc);

  /* 6b. --groups (3 ranks on a loaded machine: the straggler rule off): the allreduce measurement over the world,
   * each node and the first 2 of 3 ranks, as records
   * in the JSON (ranks label = the group's size) and a table in the text; first:4 of 3 ranks is refused (2). */
  snprintf(json, sizeof json, "%s/groups.json", dir);
  snprintf(args, sizeof args, "--config %s/configs/ci.ini --device cpu --phases ddp --progress none --straggler-pct 1000 --groups world,node,first:2 "
           "--json %s", src, json);
  code = tl_job_run(&job, 3, NULL, args);
  CHECK(code == 0, "--groups world,node,first:2: exit %d: %.2000s", code, out);
  doc = tl_json_load(json);
  {
    int world = 0, node = 0, first2 = 0;
    cJSON *r, *recs = doc ? at(doc, "records", NULL) : NULL;
    cJSON_ArrayForEach(r, recs) {
      if (strcmp(at(r, "measurement", NULL)->valuestring, "allreduce")) continue;
      const char *g = at(r, "group", NULL)->valuestring, *ranks = at(r, "labels", "ranks") ? at(r, "labels", "ranks")->valuestring : "";
      double v = at(r, "value", NULL)->valuedouble;
      world += !strcmp(g, "world") && !strcmp(ranks, "3") && v > 0;
      node += !strncmp(g, "node:", 5) && !strcmp(ranks, "3") && v > 0;
      first2 += !strcmp(g, "first:2") && !strcmp(ranks, "2") && v > 0;
    }
    CHECK(world == 1 && node == 1 && first2 == 1, "JSON: allreduce records world %d, node %d, first:2 %d", world, node, first2);
  }
  CHECK(strstr(out, "# allreduce") && strstr(out, "first:2"), "the text has the groups' table: %.3000s", out);
  cJSON_Delete(doc);
  snprintf(args, sizeof args, "--config %s/configs/ci.ini --device cpu --phases ddp --progress none --groups first:4", src);
  code = tl_job_run(&job, 3, NULL, args);
  CHECK(code == 2 && strstr(err, "groups") && strstr(err, "first:4"), "--groups first:4 of 3 ranks: exit %d: %.500s", code, err);
  /* node pairs on one node, and an unknown --group-measure without --groups, are bad input */
  snprintf(args, sizeof args, "--config %s/configs/ci.ini --device cpu --phases ddp --progress none --groups pairs", src);
  code = tl_job_run(&job, 2, NULL, args);
  CHECK(code == 2 && strstr(err, "--groups pairs needs ranks on at least 2 nodes (this job has 1)") &&
            tl_lines_starting(err, "ddpbench: ") == 1,
        "--groups pairs on one node: exit %d: %.500s", code, err);
  snprintf(args, sizeof args, "--config %s/configs/ci.ini --device cpu --progress none --group-measure bogus", src);
  code = tl_job_run(&job, 1, NULL, args);
  CHECK(code == 2 && strstr(err, "group_measure: no measurement 'bogus'"), "--group-measure bogus: exit %d: %.500s",
        code, err);

  /* 7. a stalled rank ends the job with its name */
  snprintf(args, sizeof args, "--config %s/configs/ci.ini --timeout 3 --progress none", src);
  code = tl_job_run(&job, 2, "DDPBENCH_TEST_STALL_RANK=1", args);
  CHECK(code != 0 && code != 124, "stalled rank: the job ended with %d (124 = killed by the test's timeout)", code);
  /* Either the stalled rank's watchdog or its peer's bounded wait ends the job, naming the rank. */
  CHECK((strstr(err, "timeout: no progress") || strstr(err, "did not finish within")) && strstr(err, "rank"),
        "timeout message: %.800s", err);

  tl_rmtree(dir);
  return check_summary();
}
