/* test_faults: fault injection into the real program under mpirun (CPU device). Every case must end within
 * --timeout + 10 s with its documented exit code, name the culprit where there is one, and leave no temporary
 * file in the output folder:
 *   - a rank killed (SIGKILL) in each phase: mpirun ends the job with 137 and names the rank;
 *   - a rank stopped (SIGSTOP), and a rank stuck elsewhere than its peers (also asked over TCP): exit 3, and
 *     the watchdog names it as the suspect with its last location; the ranks waiting for it name the
 *     collective they wait in;
 *   - a peer that never starts (MPI_Init waits): exit 3 within the timeout, saying so;
 *   - peers with a different configuration, or a config file missing on one rank: exit 2 before any work,
 *     naming the rank and the keys;
 *   - SIGTERM and SIGINT to the launcher (launch/run.sh) during a phase and during the JSON write: 143 / 130,
 *     no temporary file, no half-written result;
 *   - a status board left in /dev/shm by a job that died in its set-up: removed by the next job;
 *   - the whole job suspended longer than --timeout, and rank 0's report taking longer than it: exit 0, the
 *     result written, nobody named;
 *   - outputs that cannot be written (missing folder, a FIFO, a symlink, /dev/null): exit 2 before any work;
 *   - inputs that are not regular files (a FIFO without a writer, /dev/zero) as --config, compare's result
 *     file and --hwloc-xml: exit 2 at once;
 *   - a NaN injected in fp32 and bf16 (every rank agrees, on NaN): exit 5 and a "nonfinite" fail finding; fp16
 *     with a loss scale that underflows every gradient: a warning;
 *   - an hwloc XML that crashes libhwloc: `ddpbench topo` exits 2 naming the file.
 * Always the CPU device (what is tested is the harness, not a device; a GPU machine may have fewer GPUs than
 * ranks). argv: mpiexec ddpbench srcdir. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

static char dir[] = "/tmp/ddpbench-test-faults-XXXXXX";
static const char *mpiexec, *prog, *src;
static char err[1 << 18];

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* Some line of text holds all of a, b and c. */
static int line_has(const char *text, const char *a, const char *b, const char *c) {
  for (const char *l = text; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    char line[2048];
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), l);
    if (strstr(line, a) && strstr(line, b) && strstr(line, c)) return 1;
    l = e ? e + 1 : NULL;
  }
  return 0;
}

/* Runs `sh -c "exec CMD"` in its own process group with stderr to a file. When `trigger` is set, waits until it
 * holds (polled every 50 ms) and sends `sig` to the process. Kills the group after `limit` s. Returns the exit
 * code (128 + signal when killed), *secs the wall time. */
typedef int (*trigger_fn)(void);
static pid_t spawned; /* the process spawn runs (mpirun), for triggers that act on its children */
static int spawn(const char *cmd, trigger_fn trigger, int sig, double limit, double *secs) {
  char pe[300], sh[8192];
  snprintf(pe, sizeof pe, "%s/stderr", dir);
  snprintf(sh, sizeof sh, "exec %s", cmd);
  /* emptied here, before the child runs: a trigger polled at once read the last spawn's stderr and signalled a
   * child not yet exec'd (sanitizer stage, 2026-12-07: "exit 130", stderr empty) */
  FILE *old = fopen(pe, "w");
  if (old) fclose(old);
  double t0 = tl_now();
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int fd = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644), nul = open("/dev/null", O_WRONLY);
    dup2(fd, 2);
    dup2(nul, 1);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
    _exit(127);
  }
  setpgid(pid, pid);
  spawned = pid;
  int st = 0, sent = 0;
  for (;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (trigger && !sent && trigger()) {
      kill(pid, sig);
      sent = 1;
    }
    if (tl_now() - t0 > limit) {
      kill(-pid, SIGKILL);
      waitpid(pid, &st, 0);
      break;
    }
    usleep(50000);
  }
  *secs = tl_now() - t0;
  tl_file_read(pe, err, sizeof err);
  if (tl_now() - t0 > limit) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char *TIMEOUT = "5";
#define LIMIT (5 + 10)

/* `env ENV mpiexec -np N --oversubscribe ddpbench --config SRC/configs/ci.ini --device cpu --timeout 5 ARGS`,
 * spawned (no `timeout`: spawn's limit bounds it). */
static tl_job job;
static int mpi(const char *env, int np, const char *args, trigger_fn t, int sig, double *secs) {
  char cmd[4096];
  if (tl_job_cmd(&job, np, env, args, cmd, sizeof cmd) != 0) return -1;
  return spawn(cmd, t, sig, LIMIT + 5, secs);
}

static void expect(const char *what, int code, int want, double secs, const char *needle) {
  CHECK(code == want, "%s: exit %d, expected %d; stderr: %.3000s", what, code, want, err);
  CHECK(secs < LIMIT, "%s: took %.1f s, more than timeout + 10 s", what, secs);
  if (needle) CHECK(strstr(err, needle) != NULL, "%s: stderr does not say '%s': %.3000s", what, needle, err);
  CHECK(tl_dir_count(dir, ".tmp.") == 0, "%s: temporary files left in %s", what, dir);
}

static char json[512];
static int phase_started(void) {
  char pe[300];
  snprintf(pe, sizeof pe, "%s/stderr", dir);
  tl_file_read(pe, err, sizeof err);
  return strstr(err, "test fault: stall in phase local") != NULL;
}
static int json_tmp_exists(void) { return tl_dir_count(dir, ".tmp.") > 0; }
/* Once the job is in a phase: every rank (mpirun's children) stopped for 8 s, then continued, as scontrol
 * suspend or a VM pause does; never asks spawn to signal. */
static int suspended;
static int suspend_all(void) {
  char pe[300], c[128];
  snprintf(pe, sizeof pe, "%s/stderr", dir);
  tl_file_read(pe, err, sizeof err);
  if (suspended || !strstr(err, "[ddpbench] run: phase local: start")) return 0;
  snprintf(c, sizeof c, "pkill -STOP -P %d", (int)spawned);
  suspended = tl_sh(c) == 0 ? 1 : -1;
  sleep(8);
  snprintf(c, sizeof c, "pkill -CONT -P %d", (int)spawned);
  if (tl_sh(c) != 0) suspended = -1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: test_faults MPIEXEC DDPBENCH SOURCE_DIR\n");
    return 1;
  }
  mpiexec = argv[1], prog = argv[2], src = argv[3];
  char job_prog[2048];
  snprintf(job_prog, sizeof job_prog, "%s --config %s/configs/ci.ini --device cpu --timeout %s", prog, src, TIMEOUT);
  job.mpiexec = mpiexec, job.prog = job_prog;
  double secs = 0;
  int code;
  char args[2048], cmd[4096], what[128];

  /* A rank killed in each phase: mpirun ends the job, exit 128 + 9, and names the rank. */
  const char *phases[] = {"local", "comm", "ddp"};
  for (int i = 0; i < 3; i++) {
    char env[128];
    snprintf(env, sizeof env, "DDPBENCH_TEST_FAULT=kill:1:%s", phases[i]);
    char full[4096];
    snprintf(full, sizeof full, "env %s %s -np 2 --oversubscribe -x DDPBENCH_TEST_FAULT %s --config %s/configs/ci.ini --device cpu "
             "--timeout %s --progress none", env, mpiexec, prog, src, TIMEOUT);
    code = spawn(full, NULL, 0, LIMIT + 5, &secs);
    snprintf(what, sizeof what, "SIGKILL in phase %s", phases[i]);
    expect(what, code, 137, secs, "rank 1");
  }

  /* A stopped rank: the watchdog asks every rank and names it (shared board, then over TCP). */
  snprintf(cmd, sizeof cmd, "env DDPBENCH_TEST_FAULT=stop:1:ddp %s -np 3 --oversubscribe -x DDPBENCH_TEST_FAULT %s "
           "--config %s/configs/ci.ini --device cpu --timeout %s --progress none", mpiexec, prog, src, TIMEOUT);
  code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
  expect("SIGSTOP", code, 3, secs, "SUSPECT rank 1 host");
  CHECK(strstr(err, "not answering") && strstr(err, "last known: phase ddp, step 1 of 8"), "stop: why and where: %.2000s",
        err);
  /* ... and the ranks that wait for it say in which collective, on one line: the wait and the non-blocking
   * allreduce it is for (mpi_where.c's wrappers map the request back to the call that started it) */
  CHECK(line_has(err, "waiting in MPI_Wait", "for MPI_Iallreduce(", "on MPI_COMM_WORLD (3 ranks)"),
        "stop: the waiting ranks name the collective: %.2000s", err);
  snprintf(cmd, sizeof cmd, "env DDPBENCH_TEST_FAULT=stop:2:local DDPBENCH_TEST_WATCHDOG_TCP=1 %s -np 3 --oversubscribe "
           "-x DDPBENCH_TEST_FAULT -x DDPBENCH_TEST_WATCHDOG_TCP %s --config %s/configs/ci.ini --device cpu --timeout %s --progress none",
           mpiexec, prog, src, TIMEOUT);
  code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
  expect("SIGSTOP, asked over TCP", code, 3, secs, "SUSPECT rank 2 host");
  /* A rank stuck in its main thread (alive): named as being elsewhere than the others. */
  snprintf(cmd, sizeof cmd, "env DDPBENCH_TEST_FAULT=stall:2:comm %s -np 3 --oversubscribe -x DDPBENCH_TEST_FAULT %s "
           "--config %s/configs/ci.ini --device cpu --timeout %s --progress none", mpiexec, prog, src, TIMEOUT);
  code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
  expect("stalled rank", code, 3, secs, "SUSPECT rank 2 host");
  CHECK(strstr(err, "elsewhere than the other 2 ranks"), "stall: why: %.2000s", err);

  /* `ddpbench accept` runs under the watchdog too (its --timeout): a rank stopped during the GEMM checks is
   * named, and the other says where it waits. */
  snprintf(cmd, sizeof cmd, "env DDPBENCH_TEST_FAULT=stop:1:accept %s -np 2 --oversubscribe -x DDPBENCH_TEST_FAULT %s "
           "accept --device cpu --health-seconds 0.5 --timeout 11", mpiexec, prog);
  code = spawn(cmd, NULL, 0, 11 + 15, &secs);
  CHECK(code == 3 && secs < 11 + 10, "accept, a rank stopped: exit %d after %.1f s (expected 3 within 21 s): %.2000s",
        code, secs, err);
  CHECK(strstr(err, "SUSPECT rank 1 host") && strstr(err, "last known: accept: sustained fp32 GEMM") &&
            strstr(err, "waiting in MPI_"),
        "accept, a rank stopped: named, with where the other waits: %.2000s", err);
  CHECK(tl_dir_count(dir, ".tmp.") == 0, "accept: temporary files left in %s", dir);

  /* A peer that never starts: MPI_Init waits; the watchdog, armed before it, ends the job. */
  snprintf(cmd, sizeof cmd, "%s --oversubscribe -np 1 %s --config %s/configs/ci.ini --device cpu --timeout %s : -np 1 sleep 60",
           mpiexec, prog, src, TIMEOUT);
  code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
  expect("peer never starts", code, 3, secs, "MPI_Init");

  /* doctor against a peer that runs another subcommand (here: a run): refused before any work, naming both,
   * instead of two programs whose collectives never match waiting for the timeout. */
  snprintf(cmd, sizeof cmd, "%s --oversubscribe -np 1 %s doctor --timeout %s : -np 1 %s --config %s/configs/ci.ini "
           "--device cpu --timeout 100", mpiexec, prog, TIMEOUT, prog, src);
  code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
  expect("doctor beside a run", code, 2, secs, "do not run the same subcommand: rank 1");
  CHECK(strstr(err, "runs `ddpbench run`, rank 0 `ddpbench doctor`"), "doctor beside a run: names both: %.2000s", err);

  /* The wrapper scripts check their own arguments: exit 2, one line. */
  const char *wrappers[] = {"launch/run.sh -np abc", "launch/run.sh -np", "launch/run.sh -np 0",
                            "launch/bench.sh three", "launch/gpu-check.sh nonsense"};
  for (int i = 0; i < 5; i++) {
    snprintf(cmd, sizeof cmd, "%s/%s", src, wrappers[i]);
    code = spawn(cmd, NULL, 0, 30, &secs);
    CHECK(code == 2 && strchr(err, '\n') == strrchr(err, '\n'), "%s: exit %d, stderr: %s", wrappers[i], code, err);
  }

  /* Peers with different configurations (MPMD): exit 2 before any work, naming the rank and the keys. */
  snprintf(cmd, sizeof cmd, "%s --oversubscribe -np 1 %s --config %s/configs/ci.ini --device cpu : -np 1 %s --config "
           "%s/configs/ci.ini --lr 0.1 --precision bf16", mpiexec, prog, src, prog, src);
  code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
  expect("different configurations", code, 2, secs, "rank 1 (host");
  CHECK(strstr(err, "lr = 0.1 (rank 0: 0.05)") && strstr(err, "precision = bf16 (rank 0: fp32)"),
        "names the keys: %.2000s", err);
  CHECK(strstr(err, "[ddpbench] run: phase local") == NULL && strstr(err, "final weights") == NULL, "no work was done");
  snprintf(cmd, sizeof cmd, "%s --oversubscribe -np 1 %s --config %s/configs/ci.ini --device cpu : -np 1 %s --config %s/nope.ini",
           mpiexec, prog, src, prog, dir);
  code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
  expect("config file missing on rank 1", code, 2, secs, "rank 1 (host");
  CHECK(strstr(err, "nope.ini") != NULL, "names the file: %.1000s", err);

  /* SIGTERM / SIGINT to the launcher during a phase: 143 / 130, every rank gone, no temporary file. */
  snprintf(json, sizeof json, "%s/run.json", dir);
  int sigs[] = {SIGTERM, SIGINT}, codes[] = {143, 130};
  for (int i = 0; i < 2; i++) {
    /* rank 1 holds the job inside the local phase (stall hook) until the signal comes */
    snprintf(cmd, sizeof cmd, "env DDPBENCH_BIN=%s DDPBENCH_TEST_FAULT=stall:1:local %s/launch/run.sh -np 2 --config "
             "%s/configs/ci.ini --device cpu --json %s --timeout 100", prog, src, src, json);
    code = spawn(cmd, phase_started, sigs[i], LIMIT + 5, &secs);
    snprintf(what, sizeof what, "%s during a phase", i ? "SIGINT" : "SIGTERM");
    expect(what, code, codes[i], secs, "exiting with code");
    CHECK(!exists(json), "%s: no result file", what);
  }
  /* ... and while the JSON document is being written (the temporary file exists; the hook holds it 30 s). */
  for (int i = 0; i < 2; i++) {
    snprintf(cmd, sizeof cmd, "env DDPBENCH_BIN=%s DDPBENCH_TEST_WRITE_DELAY=30 %s/launch/run.sh -np 2 "
             "--config %s/configs/ci.ini --device cpu --json %s --progress none --timeout %s", prog, src, src,
             json, TIMEOUT);
    code = spawn(cmd, json_tmp_exists, sigs[i], LIMIT + 5, &secs);
    snprintf(what, sizeof what, "%s during the JSON write", i ? "SIGINT" : "SIGTERM");
    expect(what, code, codes[i], secs, NULL);
    CHECK(!exists(json), "%s: no half-written result", what);
  }

  /* The whole job suspended for 8 s with --timeout 3: the watchdog sees that its own
   * process was stopped and does not count that time; the run ends as if nothing happened. */
  snprintf(json, sizeof json, "%s/suspended.json", dir);
  snprintf(cmd, sizeof cmd, "%s -np 3 --oversubscribe %s --config %s/configs/ci.ini --device cpu --steps 4000 "
           "--straggler-pct 1000 --timeout 3 --json %s", mpiexec, prog, src, json);
  code = spawn(cmd, suspend_all, 0, 60, &secs);
  CHECK(suspended == 1, "every rank was stopped and continued (pkill: %d)", suspended);
  CHECK(code == 0 && exists(json), "suspended 8 s under --timeout 3: exit %d, result %s: %.2000s", code,
        exists(json) ? "written" : "missing", err);
  CHECK(!strstr(err, "SUSPECT"), "suspended: nobody named: %.2000s", err);
  /* Rank 0's report taking longer than --timeout (M2: the JSON held 8 s before its rename, --timeout 3): the
   * report is progress, the others wait for it, and the result is written. */
  snprintf(json, sizeof json, "%s/slow-report.json", dir);
  snprintf(cmd, sizeof cmd, "env DDPBENCH_TEST_WRITE_DELAY=8 %s -np 3 --oversubscribe -x DDPBENCH_TEST_WRITE_DELAY %s "
           "--config %s/configs/ci.ini --device cpu --timeout 3 --progress none --json %s", mpiexec, prog, src, json);
  code = spawn(cmd, NULL, 0, 60, &secs);
  CHECK(code == 0 && exists(json), "a report of 8 s under --timeout 3: exit %d, result %s: %.2000s", code,
        exists(json) ? "written" : "missing", err);
  CHECK(secs >= 8 && !strstr(err, "timeout:"), "the write was waited for (%.1f s), no timeout", secs);

  /* a status board that a job which died in its set-up left in /dev/shm is removed by the
   * next job on the host; one whose creator is alive (a job setting up now) is left alone. */
  {
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, NULL, 0);
    char stale[128], live[128];
    snprintf(stale, sizeof stale, "/dev/shm/ddpbench-watchdog-%d-1a2b3c", (int)dead);
    snprintf(live, sizeof live, "/dev/shm/ddpbench-watchdog-%d-4d5e6f", (int)getpid());
    int made = tl_file_write(stale, "x") && tl_file_write(live, "x");
    snprintf(cmd, sizeof cmd, "%s -np 2 --oversubscribe %s --config %s/configs/ci.ini --device cpu --progress none", mpiexec,
             prog, src);
    code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
    CHECK(made && code == 0, "a job beside old boards: exit %d", code);
    CHECK(!exists(stale), "the dead job's board %s is removed", stale);
    CHECK(exists(live), "a live creator's board %s is kept", live);
    unlink(stale), unlink(live);
  }

  /* Outputs that cannot be written: exit 2 before any work. */
  const char *bad[] = {"/nonexistent-ddpbench/x.json", "fifo", "link", "/dev/null"};
  const char *why[] = {"folder does not exist", "a FIFO", "symbolic link", "character device"};
  char fifo[512], link_path[512], target[512];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(link_path, sizeof link_path, "%s/link", dir);
  snprintf(target, sizeof target, "%s/target.json", dir);
  CHECK(mkfifo(fifo, 0644) == 0 && symlink(target, link_path) == 0, "fixtures");
  for (int i = 0; i < 4; i++) {
    const char *path = i == 1 ? fifo : i == 2 ? link_path : bad[i];
    snprintf(args, sizeof args, "--json %s --force", path);
    code = mpi("X=1", 2, args, NULL, 0, &secs);
    snprintf(what, sizeof what, "unwritable output %s", bad[i]);
    expect(what, code, 2, secs, why[i]);
    CHECK(strstr(err, "[ddpbench] run: phase local") == NULL, "%s: refused before any work", what);
  }
  struct stat st;
  CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode) && lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode) &&
            !exists(target) && stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
        "the FIFO, the link, its target and /dev/null are as they were");

  /* Inputs that are not regular files: a FIFO nobody writes (opening it would wait for ever) and /dev/zero (it
   * would be read until memory runs out), as --config, a result file for compare, an hwloc XML: exit 2 at once,
   * saying what the path is. */
  const char *input_as[] = {"--config", "compare", "topo --hwloc-xml"};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 2; i++) {
      const char *in = i ? "/dev/zero" : fifo;
      snprintf(cmd, sizeof cmd, "%s %s %s%s%s", prog, input_as[k], in, k == 1 ? " " : "", k == 1 ? in : "");
      code = spawn(cmd, NULL, 0, 20, &secs);
      snprintf(what, sizeof what, "input %s as %s", i ? "/dev/zero" : "a FIFO", input_as[k]);
      expect(what, code, 2, secs, i ? "is a character device, not a regular file" : "is a FIFO, not a regular file");
      CHECK(secs < 10, "%s: refused at once, not read or waited on (%.1f s)", what, secs);
    }

  /* A NaN injected into the gradient with fp32 and bf16 is averaged into every rank: the ranks agree bitwise, on
   * NaN. That is a failed verification with its own finding and exit code 4. */
  const char *precs[] = {"fp32", "bf16"};
  for (int i = 0; i < 2; i++) {
    snprintf(cmd, sizeof cmd, "%s -np 2 --oversubscribe %s --config %s/configs/ci.ini --device cpu --precision %s --inject-nonfinite 2 "
             "--progress none --json %s/nan-%s.json 2>&1 >%s/nan.out", mpiexec, prog, src, precs[i], dir, precs[i], dir);
    code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
    snprintf(what, sizeof what, "NaN injected with %s", precs[i]);
    char outp[600];
    snprintf(outp, sizeof outp, "%s/nan.out", dir);
    tl_file_read(outp, err, sizeof err);
    expect(what, code, 5, secs, "verification: FAILED: final weights not finite");
    CHECK(strstr(err, "fail  nonfinite") && !strstr(err, "identical on all 2 ranks (fnv1a64"), "%s: finding, no OK: %.2000s",
          what, err);
  }
  /* fp16 with a loss scale that underflows every gradient: a warning, not silence. */
  snprintf(cmd, sizeof cmd, "%s -np 2 --oversubscribe %s --config %s/configs/ci.ini --device cpu --precision fp16 --loss-scale-init "
           "1e-30 --progress none 2>&1 >%s/fp16.out", mpiexec, prog, src, dir);
  code = spawn(cmd, NULL, 0, LIMIT + 5, &secs);
  snprintf(cmd, sizeof cmd, "%s/fp16.out", dir);
  tl_file_read(cmd, err, sizeof err);
  expect("fp16 loss scale underflow", code, 0, secs, "warn  loss_scale");
  CHECK(strstr(err, "underflow") != NULL, "says why: %.2000s", err);

  /* An hwloc XML on which libhwloc itself crashes: exit 2 naming the file, not a segfault. */
  snprintf(cmd, sizeof cmd, "%s topo --hwloc-xml %s/tests/fuzz/corpus/hwloc_xml/crash-pu-under-machine.xml", prog, src);
  code = spawn(cmd, NULL, 0, 30, &secs);
  expect("hwloc crash", code, 2, secs, "crash-pu-under-machine.xml is not a valid hwloc XML");

  tl_rmtree(dir);
  return check_summary();
}
