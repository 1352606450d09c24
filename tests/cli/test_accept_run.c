/* test_accept_run: `ddpbench accept` under mpirun, end to end (CPU device here; GPUs where present).
 * argv: mpiexec ddpbench.
 *  - a healthy run: exit 0, "hosts: 1 pass, 0 warn, 0 fail";
 *  - an expectation the host cannot meet (--expect): exit 4, the failing check with measured, expected and
 *    margin, the host line, and --failed-hosts listing exactly this host;
 *  - a result inside the warn band: exit 0 with "1 warn"; --strict turns it into exit 4;
 *  - --failed-hosts is never overwritten without --force (exit 2), and is with it (an empty file: no failure);
 *  - a bad --expect file: exit 2 and one line naming file, line and key, before any measurement;
 *  - outputs checked before any work (--json /dev/null), an error on one rank only printed, and ranks with
 *    different arguments refused: exit 2 before any measurement; so are ranks whose --expect file (one path,
 *    two working folders) holds other floors, and ranks whose copies agree run;
 *  - --baseline: against a good run's --json it passes (with a tolerance wide enough for a shared CI CPU: 90 %);
 *    against a baseline 100x faster than this machine (as a healthy cluster is to a slowed host) it fails with
 *    exit 4 and --failed-hosts lists this host; a file that is not a result is exit 2; a list of 2 runs
 *    gives floors that say "2 runs, spread", one run twice is refused (a spread of 0 faked), a list with a
 *    missing file is exit 2 naming it, and ranks whose lists hold other contents are refused (exit 2);
 *  - node groups and node pairs on 4 emulated nodes of one rank (DDPBENCH_TEST_RANKS_PER_NODE=1): the tournament
 *    has 3 rounds with every pair once, the ring 2 rounds of 4 pairs; a pair floor nobody meets fails every pair
 *    (exit 4) without failing a host (the failed-hosts file stays empty). The relative verdicts are switched
 *    off here: 4 ranks on 2 shared cores time each other's bursts, which no rule can tell from a slow link. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

static char dir[] = "/tmp/i12-accept-run-XXXXXX";
static const char *mpiexec, *prog;
static char out[1 << 18], err[1 << 16];

/* `ddpbench accept` with a quick set of checks, and the main run (not accept) with a tiny CPU model: each run is
 * `[env ENV] timeout 300 mpiexec -np N --oversubscribe PROG ARGS`. */
static tl_job accept_job = {.timeout = 300, .dir = dir, .out = out, .outn = sizeof out, .err = err, .errn = sizeof err};
static tl_job main_job = {.timeout = 300, .dir = dir, .out = out, .outn = sizeof out, .err = err, .errn = sizeof err};

/* 1 when every warning line of the findings table says "cannot tell" (the small-group rule's only warning). */
static int warns_cannot_tell(const char *text) {
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    if (n > 8 && !strncmp(l, "#   warn", 8) && !memmem(l, n, "cannot tell", 11)) return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: test_accept_run mpiexec ddpbench\n"), 2;
  mpiexec = argv[1], prog = argv[2];
  /* --device cpu throughout: these runs check acceptance's logic on several ranks, which a GPU machine with
   * fewer GPUs than ranks could not place (NCCL takes one GPU per rank); test_gpu covers the GPU path */
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  char accept_prog[1100], main_prog[1100];
  snprintf(accept_prog, sizeof accept_prog, "%s accept --device cpu --health-seconds 0.5 --precisions fp32 --skip p2p --copy-mib 8 "
           "--copy-iters 3", prog);
  snprintf(main_prog, sizeof main_prog, "%s --device cpu --hidden 64 --layers 2 --batch 8 --steps 3 --warmup 1 --progress none", prog);
  accept_job.mpiexec = main_job.mpiexec = mpiexec;
  accept_job.prog = accept_prog, main_job.prog = main_prog;
  char host[256] = "", args[1024], buf[4096];
  gethostname(host, sizeof host);

  int rc = tl_job_run(&accept_job, 2, NULL, "");
  CHECK(rc == 0, "healthy run: exit %d\n%s%s", rc, out, err);
  /* 2 CPU ranks sharing cores differ by up to 20 %: a gap beyond --relative-fail-pct is "cannot tell" (a WARN), no
   * other warning, and never a failure */
  CHECK(strstr(out, "hosts: 1 pass, 0 warn, 0 fail") ||
            (strstr(out, "hosts: 0 pass, 1 warn, 0 fail") && strstr(out, "cannot tell") &&
             warns_cannot_tell(out)),
        "summary line:\n%s", out);
  CHECK(strstr(out, "fp32") && strstr(out, "TFLOP/s"), "GEMM table printed");

  /* a floor no CPU reaches: the absolute check fails, exit 4, this host to drain */
  tl_file_write(tl_path(dir, "high.ini"), "; no CPU does this\ngemm_fp32_tflops = 1000\n");
  snprintf(args, sizeof args, "--expect %s --failed-hosts %s", tl_path(dir, "high.ini"), tl_path(dir, "drain"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  CHECK(rc == 4, "unmet expectation: exit %d, expected 4\n%s%s", rc, out, err);
  CHECK(strstr(out, "hosts: 0 pass, 0 warn, 1 fail"), "summary:\n%s", out);
  CHECK(strstr(out, " fail  gemm_fp32 ") && strstr(out, " vs 1000 TFLOP/s]") && strstr(out, "margin -100.0 %"),
        "finding with measured, expected 1000 and margin:\n%s", out);
  snprintf(buf, sizeof buf, "%s: fail gemm_fp32 rank 1", host);
  CHECK(strstr(out, buf), "host line '%s':\n%s", buf, out);
  char drain[512];
  tl_file_read(tl_path(dir, "drain"), drain, sizeof drain);
  snprintf(buf, sizeof buf, "%s\n", host);
  CHECK(!strcmp(drain, buf), "failed-hosts holds exactly '%s': '%s'", host, drain);

  /* the same file again without --force: refused, exit 2; with --force and a passing run: emptied */
  rc = tl_job_run(&accept_job, 2, NULL, args);
  CHECK(rc == 2 && strstr(err, "drain") && strstr(err, "--failed-hosts") && !strstr(out, "TFLOP/s"),
        "failed-hosts not overwritten, refused before measuring: exit %d\n%s", rc, err);
  snprintf(args, sizeof args, "--failed-hosts %s --force", tl_path(dir, "drain"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  tl_file_read(tl_path(dir, "drain"), drain, sizeof drain);
  CHECK(rc == 0 && drain[0] == 0, "forced, passing: exit %d, file '%s'", rc, drain);

  /* inside a (huge) warn band above a tiny floor: warn, exit 0; --strict: exit 4 */
  tl_file_write(tl_path(dir, "warn.ini"), "warn_pct = 1e12\ngemm_fp32_tflops = 0.000001\n");
  snprintf(args, sizeof args, "--expect %s", tl_path(dir, "warn.ini"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  CHECK(rc == 0 && strstr(out, "hosts: 0 pass, 1 warn, 0 fail"), "warn: exit %d\n%s", rc, out);
  snprintf(args, sizeof args, "--expect %s --strict", tl_path(dir, "warn.ini"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  CHECK(rc == 4 && strstr(out, "hosts: 0 pass, 0 warn, 1 fail"), "strict: exit %d\n%s", rc, out);

  /* bad input: exit 2 before measuring, one line naming file, line and key */
  tl_file_write(tl_path(dir, "bad.ini"), "warn_pct = 5\n[h200_sxm]\ngemm_bf16_tflops = 600\nh2d_gbs = 48\n");
  snprintf(args, sizeof args, "--expect %s", tl_path(dir, "bad.ini"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  snprintf(buf, sizeof buf, "%s:4: unknown key 'h2d_gbs'", tl_path(dir, "bad.ini"));
  CHECK(rc == 2 && strstr(err, buf) && !strstr(out, "TFLOP/s"), "bad key: exit %d\n%s", rc, err);
  tl_file_write(tl_path(dir, "num.ini"), "d2h_gbps = 4O\n");
  snprintf(args, sizeof args, "--expect %s", tl_path(dir, "num.ini"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  CHECK(rc == 2 && strstr(err, "num.ini:1:") && strstr(err, "d2h_gbps"), "bad number: exit %d\n%s", rc, err);
  snprintf(args, sizeof args, "--expect %s", tl_path(dir, "missing.ini"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  CHECK(rc == 2 && strstr(err, "missing.ini: cannot read"), "unreadable: exit %d\n%s", rc, err);
  rc = tl_job_run(&accept_job, 1, NULL, "--precisions fp64");
  CHECK(rc == 2 && strstr(err, "fp64"), "bad precision: exit %d\n%s", rc, err);
  /* a warn threshold above the fail one, and a GEMM check shorter than one interval */
  rc = tl_job_run(&accept_job, 1, NULL, "--relative-warn-pct 50 --relative-fail-pct 1");
  CHECK(rc == 2 && strstr(err, "--relative-warn-pct 50 is above relative_fail_pct 1") &&
            tl_lines_starting(err, "ddpbench: ") == 1, "warn above fail: exit %d\n%s", rc, err);
  rc = tl_job_run(&accept_job, 1, NULL, "--health-seconds 1e-300");
  CHECK(rc == 2 && strstr(err, "health"), "--health-seconds 1e-300: exit %d\n%s", rc, err);
  /* a --timeout below accept's minimum is bad input (exit 2), even one shorter than MPI's start-up, which the
   * watchdog armed before MPI_Init must not turn into a timeout (exit 3) */
  rc = tl_job_run(&accept_job, 2, NULL, "--timeout 0.2");
  CHECK(rc == 2 && strstr(err, "--timeout 0.2 must be 0 or at least"), "--timeout 0.2: exit %d\n%s", rc, err);
  /* without --timeout, the default grows with --health-seconds (it was refused above 295 s) */
  rc = tl_job_run(&accept_job, 1, NULL, "--health-seconds 300 --skip gemm,copy,p2p,node,pairs");
  CHECK(rc == 4 && strstr(out, "nothing was measured"), /* accepted (not 2); measuring nothing then fails */
        "--health-seconds 300 with the default --timeout: exit %d\n%s", rc, err);
  /* outputs are checked before any work with the writer's rules; every rank's error is printed; ranks that run
   * different arguments (MPMD) are refused before any work */
  rc = tl_job_run(&accept_job, 2, NULL, "--json /dev/null --force");
  CHECK(rc == 2 && strstr(err, "--json: /dev/null is a character device") && !strstr(out, "TFLOP/s"),
        "--json /dev/null: exit %d\n%s", rc, err);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "timeout 300 %s --oversubscribe -np 1 %s accept --device cpu --health-seconds 0.5 : -np 1 %s accept "
           "--health-seconds 0.5 --expect %s", mpiexec, prog, prog, tl_path(dir, "missing.ini"));
  rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 2 && strstr(err, "rank 1 (host") && strstr(err, "missing.ini: cannot read") && !strstr(out, "TFLOP/s"),
        "an error on rank 1 only is printed: exit %d\n%s", rc, err);
  snprintf(cmd, sizeof cmd, "timeout 300 %s --oversubscribe -np 1 %s accept --device cpu --health-seconds 0.5 : -np 1 %s accept "
           "--health-seconds 0.5 --strict", mpiexec, prog, prog);
  rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 2 && strstr(err, "do not run the same ddpbench accept options") && strstr(err, "rank 1 (host") &&
            !strstr(out, "TFLOP/s"),
        "different arguments on rank 1: exit %d\n%s", rc, err);

  /* the same --expect path holding other floors on rank 1 (as on a host whose copy differs): refused, the
   * contents named, before any measurement (each rank reads its own path relative to its own directory) */
  char d0[300], d1[300];
  snprintf(d0, sizeof d0, "%s/w0", dir);
  snprintf(d1, sizeof d1, "%s/w1", dir);
  CHECK(mkdir(d0, 0700) == 0 && mkdir(d1, 0700) == 0, "working folders made");
  tl_file_write(tl_path(dir, "w0/floors.ini"), "gemm_fp32_tflops = 0.0001\n");
  tl_file_write(tl_path(dir, "w1/floors.ini"), "gemm_fp32_tflops = 1000\n");
  snprintf(cmd, sizeof cmd, "timeout 300 %s --oversubscribe -np 1 --wdir %s %s accept --device cpu --health-seconds 0.5 --expect "
           "floors.ini : -np 1 --wdir %s %s accept --device cpu --health-seconds 0.5 --expect floors.ini", mpiexec, d0, prog, d1, prog);
  rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 2 && strstr(err, "rank 1 (host") && strstr(err, "expect = floors.ini (contents fnv1a64 ") &&
            !strstr(out, "TFLOP/s"),
        "--expect with other contents on rank 1: exit %d\n%s", rc, err);
  tl_file_write(tl_path(dir, "w1/floors.ini"), "gemm_fp32_tflops = 0.0001\n");
  snprintf(cmd, sizeof cmd, "timeout 300 %s --oversubscribe -np 1 --wdir %s %s accept --device cpu --health-seconds 0.5 --precisions "
           "fp32 --skip p2p,copy --expect floors.ini : -np 1 --wdir %s %s accept --device cpu --health-seconds 0.5 --precisions fp32 "
           "--skip p2p,copy --expect floors.ini", mpiexec, d0, prog, d1, prog);
  rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 0, "--expect with the same contents in two folders: exit %d\n%s%s", rc, out, err);

  /* baseline mode */
  snprintf(args, sizeof args, "--json %s", tl_path(dir, "base.json"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  CHECK(rc == 0, "baseline run: exit %d\n%s", rc, err);
  snprintf(args, sizeof args, "--baseline %s --tolerance-pct 90 --json %s", tl_path(dir, "base.json"),
           tl_path(dir, "again.json"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  CHECK(rc == 0 && (strstr(out, "hosts: 1 pass, 0 warn, 0 fail") ||
                    (strstr(out, "hosts: 0 pass, 1 warn, 0 fail") && warns_cannot_tell(out))),
        "against a good run (the 2 ranks' gap may be 'cannot tell', as above): exit %d\n%s%s", rc, out, err);
  tl_file_read(tl_path(dir, "again.json"), buf, sizeof buf); /* the absolute check was made against the baseline */
  CHECK(strstr(buf, "baseline") != NULL, "floors come from the baseline");
  static char big[1 << 20];
  tl_file_read(tl_path(dir, "base.json"), big, sizeof big);
  cJSON *doc = cJSON_Parse(big);
  cJSON *recs = cJSON_GetObjectItem(doc, "records"), *x;
  int scaled = 0;
  cJSON_ArrayForEach(x, recs) {
    cJSON *m = cJSON_GetObjectItem(x, "metric"), *v = cJSON_GetObjectItem(x, "value");
    if (cJSON_IsString(m) && cJSON_IsNumber(v) &&
        (!strcmp(m->valuestring, "gemm_fp32_tflops") || !strcmp(m->valuestring, "gemm_fp32_first_tflops") ||
         !strcmp(m->valuestring, "gemm_fp32_last_tflops"))) /* the first and last seconds too: the same run, faster */
      cJSON_SetNumberValue(v, v->valuedouble * 100), scaled++;
  }
  char *text = cJSON_Print(doc);
  tl_file_write(tl_path(dir, "fast.json"), text ? text : "");
  free(text);
  cJSON_Delete(doc);
  CHECK(scaled == 6, "two GPUs' GEMM records (median, first and last second) in the baseline: %d", scaled);
  snprintf(args, sizeof args, "--baseline %s --tolerance-pct 90 --failed-hosts %s", tl_path(dir, "fast.json"),
           tl_path(dir, "drain2"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  CHECK(rc == 4 && strstr(out, "hosts: 0 pass, 0 warn, 1 fail") && strstr(out, "floor from baseline"),
        "against a 100x faster baseline: exit %d\n%s%s", rc, out, err);
  tl_file_read(tl_path(dir, "drain2"), drain, sizeof drain);
  snprintf(buf, sizeof buf, "%s\n", host);
  CHECK(!strcmp(drain, buf), "failed-hosts lists exactly this host: '%s'", drain);
  tl_file_write(tl_path(dir, "junk.json"), "{\"hello\": 1}\n");
  snprintf(args, sizeof args, "--baseline %s", tl_path(dir, "junk.json"));
  rc = tl_job_run(&accept_job, 1, NULL, args);
  CHECK(rc == 2 && strstr(err, "junk.json") && !strstr(out, "TFLOP/s"), "not a result: exit %d\n%s", rc, err);
  /* a list of runs: each floor says how many and their spread; a missing file in the list is named, exit 2 */
  snprintf(args, sizeof args, "--baseline %s,%s --tolerance-pct 90 --json %s", tl_path(dir, "base.json"),
           tl_path(dir, "again.json"), tl_path(dir, "two.json"));
  rc = tl_job_run(&accept_job, 2, NULL, args);
  tl_file_read(tl_path(dir, "two.json"), big, sizeof big);
  CHECK(rc == 0 && strstr(big, "floor from baseline") && strstr(big, "(2 runs, spread "),
        "--baseline of 2 runs: exit %d, floors from 2 runs\n%s%s", rc, out, err);
  snprintf(args, sizeof args, "--baseline %s,%s", tl_path(dir, "base.json"), tl_path(dir, "base.json"));
  rc = tl_job_run(&accept_job, 1, NULL, args);
  CHECK(rc == 2 && strstr(err, "the same run (run_id ") && !strstr(out, "TFLOP/s"), "one run twice: exit %d\n%s", rc, err);
  snprintf(args, sizeof args, "--baseline %s,%s", tl_path(dir, "base.json"), tl_path(dir, "nowhere.json"));
  rc = tl_job_run(&accept_job, 1, NULL, args);
  CHECK(rc == 2 && strstr(err, "nowhere.json") && !strstr(out, "TFLOP/s"), "a missing file in the list: exit %d\n%s", rc,
        err);
  /* every rank reads the list: ranks whose second file holds another run are refused, as --expect's are */
  const char *copies[][2] = {{"base.json", "w0/a.json"}, {"again.json", "w0/b.json"}, {"base.json", "w1/a.json"},
                             {"two.json", "w1/b.json"}};
  for (int i = 0; i < 4; i++) {
    long n = tl_file_read(tl_path(dir, copies[i][0]), big, sizeof big);
    CHECK(n > 0, "copy %s", copies[i][0]);
    tl_file_write(tl_path(dir, copies[i][1]), big);
  }
  snprintf(cmd, sizeof cmd, "timeout 300 %s --oversubscribe -np 1 --wdir %s %s accept --device cpu --health-seconds 0.5 "
           "--baseline a.json,b.json : -np 1 --wdir %s %s accept --device cpu --health-seconds 0.5 --baseline a.json,b.json",
           mpiexec, d0, prog, d1, prog);
  rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 2 && strstr(err, "rank 1 (host") && strstr(err, "baseline = a.json,b.json (contents fnv1a64 ") &&
            !strstr(out, "TFLOP/s"),
        "--baseline lists with other contents on rank 1: exit %d\n%s", rc, err);

  /* node pairs */
  setenv("DDPBENCH_TEST_RANKS_PER_NODE", "1", 1);
  const char *quiet = "--relative-warn-pct 99 --relative-fail-pct 99 --pair-mib 1 --node-mib 1 --skip gemm";
  snprintf(args, sizeof args, "%s", quiet);
  rc = tl_job_run(&accept_job, 4, NULL, args);
  CHECK(rc == 0 && strstr(out, "tournament, 3 rounds") && strstr(out, "hosts: 4 pass, 0 warn, 0 fail"),
        "4 nodes, tournament: exit %d\n%s%s", rc, out, err);
  const char *want[] = {"node00 - node01", "node00 - node02", "node00 - node03", "node01 - node02",
                        "node01 - node03", "node02 - node03"};
  for (int i = 0; i < 6; i++) CHECK(strstr(out, want[i]) != NULL, "pair %s measured", want[i]);
  snprintf(args, sizeof args, "%s --pairs ring", quiet);
  rc = tl_job_run(&accept_job, 4, NULL, args);
  CHECK(rc == 0 && strstr(out, "ring, 2 rounds") && !strstr(out, "node00 - node02"), "ring: exit %d\n%s", rc, out);
  tl_file_write(tl_path(dir, "pair.ini"), "pair_busbw_gbps = 1000000\n");
  snprintf(args, sizeof args, "%s --expect %s --failed-hosts %s", quiet, tl_path(dir, "pair.ini"),
           tl_path(dir, "drain3"));
  rc = tl_job_run(&accept_job, 4, NULL, args);
  tl_file_read(tl_path(dir, "drain3"), drain, sizeof drain);
  CHECK(rc == 4 && strstr(out, "hosts: 4 pass, 0 warn, 0 fail") && strstr(out, "fail pair_busbw.abs node00<->node01") &&
            drain[0] == 0,
        "unmet pair floor: exit %d, failed hosts '%s'\n%s", rc, drain, out);
  unsetenv("DDPBENCH_TEST_RANKS_PER_NODE");

  /* the main run: per-host lines, the summary, --failed-hosts (a failing check forced through the test hook) */
  rc = tl_job_run(&main_job, 2, "", "");
  /* (two CPU ranks on a shared machine may warn about each other's speed: no host fails) */
  CHECK(rc == 0 && strstr(out, "\nhosts: ") && strstr(out, ", 0 fail\n"), "main run, healthy: exit %d\n%s", rc, out);
  snprintf(args, sizeof args, "--failed-hosts %s", tl_path(dir, "drain4"));
  rc = tl_job_run(&main_job, 2, "DDPBENCH_TEST_CORRUPT_RANK=1", args);
  tl_file_read(tl_path(dir, "drain4"), drain, sizeof drain);
  snprintf(buf, sizeof buf, "%s: fail weights rank 1", host);
  CHECK(rc == 1 && strstr(out, "hosts: 0 pass, 0 warn, 1 fail") && strstr(out, buf), "main run, weights differ: "
        "exit %d\n%s", rc, out);
  snprintf(buf, sizeof buf, "%s\n", host);
  CHECK(!strcmp(drain, buf), "main run's failed-hosts: '%s'", drain);
  rc = tl_job_run(&main_job, 2, "", args);
  CHECK(rc == 2, "main run's failed-hosts is not overwritten without --force: exit %d", rc);

  /* an accept that measured nothing does not pass (no GEMM in bf16 on the cpu device, no
   * copies without a GPU, no allreduce on one rank; or everything skipped) */
  char none_prog[1100];
  snprintf(none_prog, sizeof none_prog, "%s accept --device cpu", prog);
  tl_job none_job = accept_job;
  none_job.prog = none_prog;
  const char *none_args[] = {"--precisions bf16", "--skip gemm,copy,p2p,node,pairs"};
  for (int i = 0; i < 2; i++) {
    rc = tl_job_run(&none_job, 1, NULL, none_args[i]);
    CHECK(rc == 4 && strstr(out, "fail  measured") && strstr(out, "nothing was measured") &&
              strstr(out, "a cluster is not accepted on no evidence") && strstr(out, "nothing to drain"),
          "accept %s that measures nothing: exit %d\n%s", none_args[i], rc, out);
  }

  tl_rmtree(dir);
  return check_summary();
}
