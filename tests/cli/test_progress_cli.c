/* test_progress_cli: --progress end to end, 2 ranks under mpirun on the CPU device, stderr into a file as a
 * Slurm log would hold it. argv: mpiexec ddpbench.
 *  - auto under mpirun (stderr a file): log; a tiny run's phases are 2 lines each (start, end), 6 in all;
 *  - log on a long phase (the interval shortened to 0.1 s by DDPBENCH_TEST_PROGRESS_INTERVAL): start and end,
 *    and between them at most one line per interval (at least one when the phase outlasts 3), each with the
 *    step and an ETA;
 *  - log on a 2-rank --sweep: every group's start and end is named ("group 2/2 np=2"), with its phase inside,
 *    and nothing else: 10 lines;
 *  - none and --quiet (also with --progress tty): no progress line at all;
 *  - tty into a file: "\r" rewrites ending in ESC[K, all on one line that ends in one newline;
 *  - auto when mpirun's own stderr is a terminal (util-linux `script` gives it a pty): tty;
 *  - accept and collectives: a line as each stage (collective) starts and ends; collectives' table rows stay
 *    whole on stdout with --progress tty;
 *  - --progress sometimes: exit 2, one line naming the key (mpirun's own lines after it are not ours). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

static char dir[] = "/tmp/ddpbench-test-progress-XXXXXX";
static char out[1 << 18], err[1 << 18];
static const char *TINY = "--device cpu --comm mpi --hidden 64 --layers 2 --batch 8 --steps 4 --warmup 1";
static tl_job job = {.timeout = 120, .dir = dir, .out = out, .outn = sizeof out, .err = err, .errn = sizeof err};

/* How many lines of err begin with prefix. */
static int lines(const char *prefix) { return tl_lines_starting(err, prefix); }

static int count(const char *s, const char *part) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, part)) != NULL; p += strlen(part)) n++;
  return n;
}

static int run(const char *env, const char *fmt, const char *more) {
  char args[2048];
  snprintf(args, sizeof args, fmt, more);
  return tl_job_run(&job, 2, env, args);
}

int main(int argc, char **argv) {
  if (argc < 3 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: test_progress_cli MPIEXEC DDPBENCH\n");
    return 1;
  }
  job.mpiexec = argv[1];
  job.prog = argv[2];
  char tiny[512];

  /* auto under mpirun, stderr a file: log, two lines a phase */
  snprintf(tiny, sizeof tiny, "%s", TINY);
  int rc = run(NULL, "%s", tiny);
  CHECK(rc == 0, "tiny run exits 0, got %d\n%s", rc, err);
  CHECK(lines("[ddpbench] run: ") == 6, "auto under mpirun: log, 6 lines for 3 short phases, got %d:\n%s",
        lines("[ddpbench] run: "), err);
  CHECK(!strchr(err, '\r') && !strchr(err, '\033'), "auto under mpirun: no tty rewrites");
  CHECK(lines("[ddpbench] run: phase ddp: start, 5 steps") == 1 && lines("[ddpbench] run: phase ddp: done, 5 steps in ") == 1,
        "the ddp phase's start and end:\n%s", err);

  /* log, a long phase: one line per (shortened) interval between its start and end */
  rc = run("DDPBENCH_TEST_PROGRESS_INTERVAL=0.1",
           "--device cpu --comm mpi --hidden 1024 --layers 4 --batch 64 --steps 24 --warmup 1 --phases ddp --progress %s",
           "log");
  CHECK(rc == 0, "long phase exits 0, got %d\n%s", rc, err);
  double spent = -1;
  const char *done = strstr(err, "phase ddp: done, 25 steps in ");
  if (done) sscanf(done + strlen("phase ddp: done, 25 steps in "), "%lf", &spent);
  int between = lines("[ddpbench] run: phase ddp: step ");
  CHECK(spent > 0, "the end line gives the phase's time:\n%s", err);
  CHECK(lines("[ddpbench] run: ") == between + 2, "long phase: start, end and %d between, got %d lines", between,
        lines("[ddpbench] run: "));
  /* at least one when the phase outlasts 3 intervals (a fast machine may finish sooner), never more than it holds */
  CHECK(between >= (spent >= 0.3) && between <= (int)(spent / 0.1) + 1,
        "long phase of %.1f s: %d to %d lines between, got %d:\n%s", spent, spent >= 0.3, (int)(spent / 0.1) + 1, between, err);
  CHECK(count(err, ", ETA ") >= between - 1, "the lines between carry an ETA:\n%s", err);

  /* log, a 2-rank sweep: each group's start and end named */
  rc = run(NULL, "%s --phases ddp --sweep --progress log", TINY);
  CHECK(rc == 0, "sweep exits 0, got %d\n%s", rc, err);
  CHECK(lines("[ddpbench] run: ") == 10, "sweep: 2 world lines and 4 per group, got %d:\n%s", lines("[ddpbench] run: "), err);
  CHECK(lines("[ddpbench] run: group 1/2 np=1: start") == 1 && lines("[ddpbench] run: group 1/2 np=1: done in ") == 1,
        "group 1 named at start and end:\n%s", err);
  CHECK(lines("[ddpbench] run: group 2/2 np=2: start") == 1 && lines("[ddpbench] run: group 2/2 np=2: done in ") == 1,
        "group 2 named at start and end:\n%s", err);
  CHECK(lines("[ddpbench] run: group 2/2 np=2: phase ddp: start, 5 steps") == 1, "group 2's phase says its group");

  /* none, --quiet */
  rc = run(NULL, "%s --progress none", TINY);
  CHECK(rc == 0 && !strstr(err, "[ddpbench] run:"), "--progress none: no progress line (rc %d):\n%s", rc, err);
  rc = run(NULL, "%s --quiet --progress tty", TINY);
  CHECK(rc == 0 && !strstr(err, "[ddpbench] run:") && !strchr(err, '\r'), "--quiet: none, whatever --progress says:\n%s", err);

  /* tty into a file: rewrites on one line, one newline */
  rc = run(NULL, "%s --progress tty", TINY);
  const char *first = strstr(err, "\r[ddpbench] run: ");
  CHECK(rc == 0 && first, "--progress tty: a \\r rewrite (rc %d)", rc);
  CHECK(count(err, "\r[ddpbench] run: ") >= 6 && count(err, "\r") == count(err, "\033[K"),
        "tty: each phase's start and end a rewrite cleared to its end (%d)", count(err, "\r[ddpbench] run: "));
  CHECK(first && tl_newlines(first) == 1 && err[strlen(err) - 1] == '\n', "tty: one line, ended by one newline");
  CHECK(strstr(err, "phase ddp  done  "), "tty: the last state is the ddp phase's end");

  /* auto when mpirun's stderr is a terminal: tty (util-linux script runs it on a pty) */
  if (tl_sh("command -v script >/dev/null 2>&1") == 0) {
    char cmd[2048], inner[1536];
    snprintf(inner, sizeof inner, "%s -np 2 --oversubscribe %s %s", argv[1], argv[2], TINY);
    snprintf(cmd, sizeof cmd, "timeout 120 script -qec '%s' /dev/null", inner);
    rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
    CHECK(rc == 0 && strstr(out, "\r[ddpbench] run: phase ddp") && strstr(out, "\033[K"),
          "auto with mpirun on a terminal: tty (rc %d):\n%.2000s", rc, out);
  } else {
    printf("# no util-linux script: auto on a terminal not checked\n");
  }

  /* accept: each stage starts and ends */
  rc = run(NULL, "accept --device cpu --skip gemm --progress %s", "log");
  CHECK(rc == 0, "accept exits 0, got %d\n%s", rc, err);
  CHECK(lines("[ddpbench] accept: allreduce inside each node: start") == 1 &&
            lines("[ddpbench] accept: allreduce inside each node: done in ") == 1,
        "accept: the node allreduce's start and end:\n%s", err);
  int starts = count(err, ": start\n"), ends = count(err, ": done in ");
  CHECK(starts >= 4 && starts == ends && lines("[ddpbench] accept: ") == starts + ends,
        "accept: a start and an end per stage, nothing else (%d, %d):\n%s", starts, ends, err);

  /* collectives: log, then tty with the table on stdout */
  rc = run(NULL, "collectives allreduce,broadcast -b 1K -e 64K -f 4 --device cpu --progress %s", "log");
  CHECK(rc == 0, "collectives exits 0, got %d\n%s", rc, err);
  CHECK(lines("[ddpbench] collectives: allreduce: start, 4 rows") == 1 && lines("[ddpbench] collectives: allreduce: done, 4 rows") == 1 &&
            lines("[ddpbench] collectives: broadcast: start, 4 rows") == 1 && lines("[ddpbench] collectives: ") == 4,
        "collectives: each collective's start and end, 4 lines:\n%s", err);
  rc = run(NULL, "collectives allreduce -b 1K -e 64K -f 4 --device cpu --progress %s", "tty");
  CHECK(rc == 0 && strstr(err, "\r[ddpbench] collectives: allreduce") && !strchr(out, '\r'),
        "collectives tty: the line on stderr, none of it on stdout (rc %d)", rc);
  CHECK(strstr(out, "        1024") && strstr(out, "       65536"), "collectives tty: the table's rows whole on stdout:\n%s", out);

  /* bad input */
  rc = run(NULL, "%s --progress sometimes", TINY);
  CHECK(rc == 2 && lines("ddpbench: --progress: progress must be one of auto|tty|log|none") == 1 &&
            lines("ddpbench: ") == 1, "--progress sometimes: exit 2, one line naming the key (rc %d):\n%s", rc, err);

  tl_rmtree(dir);
  return check_summary();
}
