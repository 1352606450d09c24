/* test_watchdog_job: the watchdog's timeout is about the job, not one rank. Runs itself under mpirun with 3
 * ranks and a 2 s watchdog (the real watchdog thread, board and query of src/runtime/watchdog.c):
 *   - "wait": ranks 1 and 2 wait in MPI_Barrier for 7 s, making no progress of their own, while rank 0 works and
 *     ticks every 0.5 s (a rank outside a measurement's group, or a pair waiting for a slower pair): the job
 *     must end normally (exit 0), not be aborted by a waiting rank;
 *   - "stuck": then rank 0 stops ticking too (it sleeps 30 s before the barrier): nobody progresses, so the
 *     job must end with exit 3 within 2 s + the query's 8 s + start-up, saying that no rank progressed and
 *     naming rank 0 as the one elsewhere than the others;
 *   - "stopped": rank 2 is SIGSTOPped while rank 0 keeps ticking; rank 1 waits: rank 0's progress keeps the job
 *     alive until rank 0 reaches the barrier, then exit 3 naming rank 2 as not answering.
 *   - "where" (2 ranks): what rank 0 says while it waits, sampled from another thread while rank 1 holds back
 *     (mpi_where.c's wrappers and their request table): a Waitall on two requests names the first's collective
 *     "and 1 more"; after 70 more requests (past the table's 64 entries) a Wait still names its own; a Recv
 *     names its peer; an NCCL-style record and a bare one (no count, no communicator) read back as the text
 *     of the last collective started.
 * Usage: test_watchdog_job MPIEXEC (driver), or test_watchdog_job --child MODE (under mpirun). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "check.h"
#include "dist.h"
#include "testlib.h"
#include "watchdog.h"

static void nap(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

/* "where": another thread reads where this rank is 0.4 s after it starts a wait. */
static char sampled[512];
static void *sample(void *arg) {
  (void)arg;
  nap(0.4);
  watchdog_where_text(sampled, sizeof sampled);
  return NULL;
}
static void sample_start(pthread_t *t) {
  sampled[0] = 0;
  pthread_create(t, NULL, sample, NULL);
}
static int sample_is(pthread_t t, const char *want) {
  pthread_join(t, NULL);
  if (strstr(sampled, want)) return 1;
  fprintf(stderr, "FAIL where: said '%s', want '%s'\n", sampled, want);
  return 0;
}

static int child_where(const ddp_dist *d) {
  int ok = 1;
  float x[4] = {1, 2, 3, 4}, y[4];
  int iv[3] = {0}, one = 1, sum = 0;
  double dv[2] = {1, 2}, dw[2];
  pthread_t t;
  MPI_Request q[2];
  if (d->rank == 1) nap(1.0);
  if (d->rank == 0) sample_start(&t);
  MPI_Iallreduce(x, y, 4, MPI_FLOAT, MPI_SUM, d->world, &q[0]);
  MPI_Ibarrier(d->world, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  watchdog_tick("waited");
  if (d->rank == 0)
    ok &= sample_is(t, "waiting in MPI_Waitall for MPI_Iallreduce(4 x MPI_FLOAT) on MPI_COMM_WORLD (2 ranks) and 1 more");
  for (int i = 0; i < 70; i++) { /* more requests than the table holds: old entries give way */
    MPI_Request r;
    MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d->world, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  watchdog_tick("past the table");
  if (d->rank == 1) nap(1.0);
  if (d->rank == 0) sample_start(&t);
  MPI_Iallreduce(dv, dw, 2, MPI_DOUBLE, MPI_MAX, d->world, &q[0]);
  MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  if (d->rank == 0) ok &= sample_is(t, "waiting in MPI_Wait for MPI_Iallreduce(2 x MPI_DOUBLE) on MPI_COMM_WORLD (2 ranks)");
  watchdog_tick("point to point");
  if (d->rank == 1) {
    nap(1.0);
    MPI_Send(iv, 3, MPI_INT, 0, 7, d->world);
  } else {
    sample_start(&t);
    MPI_Recv(iv, 3, MPI_INT, 1, 7, d->world, MPI_STATUS_IGNORE);
    ok &= sample_is(t, "waiting in MPI_Recv(3 x MPI_INT) from rank 1 on MPI_COMM_WORLD (2 ranks)");
    char last[256];
    wd_call w = {.call = "ncclAllReduce", .count = 6553600, .size = 8, .peer = -1, .type = "float",
                 .comm = "a NCCL communicator"};
    watchdog_started_call(&w);
    watchdog_started_text(last, sizeof last);
    ok &= !strcmp(last, "ncclAllReduce(6553600 x float) on a NCCL communicator (8 ranks)") ||
          (fprintf(stderr, "FAIL last started (raw): '%s'\n", last), 0);
    const wd_call bare = {.call = "MPI_Ibarrier", .count = -1, .peer = -1}; /* no count, no communicator */
    watchdog_started_call(&bare);
    watchdog_started_text(last, sizeof last);
    ok &= !strcmp(last, "MPI_Ibarrier") || (fprintf(stderr, "FAIL last started (bare): '%s'\n", last), 0);
  }
  MPI_Barrier(d->world);
  return ok ? 0 : 1;
}

static int child(const char *mode, int argc, char **argv) {
  watchdog_start(2.0, "start-up");
  ddp_dist d;
  if (dist_init(&argc, &argv, &d) != DDP_OK) return 3;
  if (watchdog_join(&d) != DDP_OK) return 3;
  watchdog_tick("joined");
  if (!strcmp(mode, "where")) {
    int rc = child_where(&d);
    dist_finalize(&d);
    return rc;
  }
  int stuck = !strcmp(mode, "stuck"), stopped = !strcmp(mode, "stopped");
  if (d.rank == 0) {
    for (int i = 0; i < 14; i++) {
      char what[64];
      snprintf(what, sizeof what, "working, tick %d of 14", i + 1);
      watchdog_tick(what);
      nap(0.5);
    }
    if (stuck) {
      watchdog_where("sleeping without progress");
      nap(30);
    }
  } else {
    watchdog_where("waiting for rank 0");
    if (stopped && d.rank == 2) raise(SIGSTOP);
  }
  MPI_Barrier(d.world);
  watchdog_tick("done");
  dist_finalize(&d);
  return 0;
}

static char out[1 << 16], err[1 << 18];

/* The parent's runs of this program as a job: `timeout 120 mpiexec -np N --oversubscribe SELF --child MODE`. */
static tl_job job = {.timeout = 120, .out = out, .outn = sizeof out, .err = err, .errn = sizeof err};

static int run_mode(const char *mode, double *secs) {
  double t0 = tl_now();
  int rc = tl_job_run(&job, strcmp(mode, "where") ? 3 : 2, NULL, mode);
  *secs = tl_now() - t0;
  return rc;
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "--child")) return child(argv[2], argc, argv);
  if (argc < 2) {
    fprintf(stderr, "usage: test_watchdog_job MPIEXEC\n");
    return 2;
  }
  char dir[] = "/tmp/ddpbench-test-watchdog-job-XXXXXX", self[1100];
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  snprintf(self, sizeof self, "%s --child", argv[0]);
  job.mpiexec = argv[1], job.prog = self, job.dir = dir;
  double secs = 0;

  int rc = run_mode("wait", &secs);
  CHECK(rc == 0, "waiting ranks while rank 0 progresses: exit %d after %.1f s (want 0: the job was alive)\n%s", rc,
        secs, err);
  CHECK(!strstr(err, "timeout:"), "a waiting rank reported a timeout:\n%s", err);
  CHECK(secs > 7 - 1, "the wait mode ended after %.1f s, before rank 0's 7 s of work", secs);

  rc = run_mode("stuck", &secs);
  CHECK(rc == 3, "nobody progressing: exit %d (want 3)\n%s", rc, err);
  CHECK(secs < 7 + 2 + 8 + 20, "nobody progressing: ended after %.1f s (want within the work, the timeout, the "
        "query and start-up)", secs);
  CHECK(strstr(err, "no progress on any rank"), "the timeout message does not say that no rank progressed:\n%s", err);
  CHECK(strstr(err, "SUSPECT rank 0") && strstr(err, "sleeping without progress"),
        "rank 0 (elsewhere than the two waiting ranks) not named as the suspect:\n%s", err);

  rc = run_mode("stopped", &secs);
  CHECK(rc != 0 && rc != 124, "a stopped rank: exit %d (want the job aborted by the watchdog)\n%s", rc, err);
  CHECK(secs > 7 - 1 && secs < 7 + 2 + 8 + 20, "a stopped rank: ended after %.1f s (want after rank 0's work and "
        "within the timeout and query)", secs);
  CHECK(strstr(err, "SUSPECT rank 2") && strstr(err, "not answering"), "the stopped rank 2 is not named:\n%s", err);

  rc = run_mode("where", &secs);
  CHECK(rc == 0 && !strstr(err, "FAIL"), "where a waiting rank says it is: exit %d\n%s", rc, err);

  tl_rmtree(dir);
  return check_summary();
}
