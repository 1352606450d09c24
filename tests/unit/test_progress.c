/* test_progress: the progress lines (base/progress.h) written into a file, in process.
 *  - log: exactly one line as each group and phase starts and ends; between them at most one line per interval
 *    (DDPBENCH_TEST_PROGRESS_INTERVAL, 0.1 s here), each with the step and an ETA, and none at all when the
 *    phase is shorter than the interval;
 *  - tty: every line is a "\r" rewrite ending in clear-to-end (ESC[K), the only newline is progress_end's;
 *    the group ("group 2/3 np=2"), the phase, the step and the ETA are on it; progress_clear leaves an empty line;
 *  - none, and every call before progress_start: nothing;
 *  - auto: stderr a file -> log; a launcher's variable set with no launcher above this process -> log;
 *    TERM=dumb -> log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "progress.h"
#include "testlib.h"

static char text[1 << 16];

static void nap(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

/* The file's contents after the calls; rewound and truncated for the next case. */
static const char *take(FILE *f) {
  fflush(f);
  long n = ftell(f);
  rewind(f);
  size_t got = fread(text, 1, n > 0 && (size_t)n < sizeof text ? (size_t)n : sizeof text - 1, f);
  text[got] = 0;
  rewind(f);
  if (ftruncate(fileno(f), 0) != 0) perror("ftruncate");
  return text;
}

static int count(const char *s, const char *part) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, part)) != NULL; p += strlen(part)) n++;
  return n;
}

int main(void) {
  FILE *f = tmpfile();
  if (!f) return 1;
  setenv("DDPBENCH_TEST_PROGRESS_INTERVAL", "0.1", 1);

  /* before any start, and in none: nothing */
  progress_phase("phase x", 10, NULL);
  progress_step(1);
  progress_end();
  progress_start(PROGRESS_NONE, f, "run");
  progress_group(0, 2, "np=1");
  progress_phase("phase ddp", 10, NULL);
  for (int s = 1; s <= 10; s++) progress_step(s);
  progress_end();
  CHECK(take(f)[0] == 0, "none writes nothing, got '%s'", text);

  /* log: a short phase (under the interval) has its two lines only; a long one one line per interval between */
  progress_start(PROGRESS_LOG, f, "run");
  progress_phase("phase local", 5, NULL);
  for (int s = 1; s <= 5; s++) progress_step(s);
  progress_phase_end();
  const char *t = take(f);
  CHECK(tl_newlines(t) == 2, "short phase: 2 lines, got %d:\n%s", tl_newlines(t), t);
  CHECK(strstr(t, "[ddpbench] run: phase local: start, 5 steps\n") == t, "the start line first:\n%s", t);
  CHECK(strstr(t, "[ddpbench] run: phase local: done, 5 steps in ") != NULL, "the end line:\n%s", t);
  double t0 = tl_now();
  progress_phase("phase ddp", 40, NULL);
  for (int s = 1; s <= 40; s++) {
    nap(0.02);
    progress_step(s);
  }
  double spent = tl_now() - t0;
  progress_end();
  t = take(f);
  int between = count(t, ": step ");
  CHECK(between >= 2 && between <= (int)(spent / 0.1) + 1, "long phase (%.2f s): between 2 and %d lines between, got %d:\n%s",
        spent, (int)(spent / 0.1) + 1, between, t);
  CHECK(tl_newlines(t) == between + 2, "long phase: start + end + %d, got %d lines", between, tl_newlines(t));
  CHECK(count(t, "ETA ") >= between - 1, "the lines between carry an ETA:\n%s", t);
  CHECK(!strchr(t, '\r') && !strchr(t, '\033'), "log: no carriage return, no escape");

  /* log: groups start and end, and their phases say which group they are in */
  progress_start(PROGRESS_LOG, f, "run");
  for (int gi = 0; gi < 3; gi++) {
    char label[16];
    snprintf(label, sizeof label, "np=%d", 1 << gi);
    progress_group(gi, 3, label);
    progress_phase("phase ddp", 3, NULL);
    for (int s = 1; s <= 3; s++) progress_step(s);
  }
  progress_end();
  t = take(f);
  CHECK(tl_newlines(t) == 12, "3 groups of one phase: 12 lines, got %d:\n%s", tl_newlines(t), t);
  CHECK(strstr(t, "[ddpbench] run: group 2/3 np=2: start\n") != NULL, "group 2's start:\n%s", t);
  CHECK(strstr(t, "[ddpbench] run: group 2/3 np=2: phase ddp: done, 3 steps in ") != NULL, "group 2's phase end:\n%s", t);
  CHECK(strstr(t, "[ddpbench] run: group 3/3 np=4: done in ") != NULL, "group 3's end:\n%s", t);

  /* tty: rewrites in place, one final newline */
  progress_start(PROGRESS_TTY, f, "run");
  progress_group(1, 3, "np=2");
  progress_phase("phase ddp", 30, NULL);
  for (int s = 1; s <= 30; s++) {
    nap(0.02);
    progress_step(s);
  }
  progress_end();
  t = take(f);
  CHECK(tl_newlines(t) == 1 && t[strlen(t) - 1] == '\n', "tty: one newline, at the end, got %d", tl_newlines(t));
  CHECK(count(t, "\r[ddpbench] run: group 2/3 np=2  ") >= 4, "tty: \\r rewrites naming the group:\n%s", t);
  CHECK(count(t, "\r") == count(t, "\033[K"), "tty: every rewrite clears to the end of the line");
  CHECK(strstr(t, "phase ddp  step ") && strstr(t, "ETA "), "tty: phase, step and ETA on the line:\n%s", t);
  progress_start(PROGRESS_TTY, f, "collectives");
  progress_phase("allreduce", 4, "row");
  progress_clear();
  fputs("row\n", f);
  progress_end();
  t = take(f);
  CHECK(strstr(t, "\r\033[Krow\n") != NULL, "tty: progress_clear leaves an empty line for other output:\n%s", t);
  CHECK(tl_newlines(t) == 2 && strstr(t, "row\n\r[ddpbench] collectives: allreduce  done  "),
        "tty: after the row, the phase's end drawn again and the final newline (got %d lines):\n%s", tl_newlines(t), t);

  /* a phase of few long steps (a soak's intervals): the ETA counts down between two steps; a phase ended before its
   * planned count says the steps done; after progress_clear the line is not drawn again within the second (under
   * mpirun, a stdout line printed right after the clear could reach the terminal after the redrawn line) */
  progress_start(PROGRESS_LOG, f, "accept --soak");
  progress_phase("soak", 10, "interval");
  progress_step(1);
  nap(0.15);
  progress_step(2); /* the rate: 0.15 s an interval, from here 8 x 0.15 = 1.2 s left */
  nap(0.3);
  progress_step(2);
  nap(0.15);
  progress_step(2);
  progress_phase_end();
  t = take(f);
  double eta[3] = {-1, -1, -1};
  int ne = 0;
  for (const char *p = t; ne < 3 && (p = strstr(p, "ETA ")) != NULL; p += 4) eta[ne++] = atof(p + 4);
  CHECK(ne >= 2 && eta[ne - 1] < eta[0] - 0.2, "the ETA counts down between steps (%d lines: %g then %g):\n%s", ne,
        eta[0], eta[ne - 1], t);
  CHECK(strstr(t, "soak: done, 2 intervals in ") != NULL, "ended after 2 of 10: done, 2 intervals:\n%s", t);
  progress_start(PROGRESS_TTY, f, "accept --soak");
  progress_phase("soak", 4, "interval");
  nap(0.25);
  progress_step(1);
  progress_clear();
  fputs("# soak interval 1\n", f);
  nap(0.25);
  progress_step(1);
  t = take(f);
  CHECK(strstr(t, "# soak interval 1\n") && !strstr(strstr(t, "# soak interval 1\n"), "\r[ddpbench]"),
        "tty: not drawn again within the second after a clear:\n%s", t);
  progress_end();
  (void)take(f);

  /* auto, for this process: stderr is CTest's file or pipe */
  const char *why = NULL;
  unsetenv("OMPI_COMM_WORLD_SIZE"), unsetenv("PMIX_RANK"), unsetenv("PMI_RANK"), unsetenv("PMI_SIZE"),
      unsetenv("SLURM_PROCID");
  char path[] = "/tmp/ddpbench-test-progress-XXXXXX";
  int fd = mkstemp(path);
  int saved = tl_stderr_redirect(path);
  progress_mode m = progress_auto(&why);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  const char *why2 = NULL;
  progress_mode m2 = progress_auto(&why2);
  unsetenv("OMPI_COMM_WORLD_SIZE");
  setenv("TERM", "dumb", 1);
  progress_mode m3 = progress_auto(NULL);
  tl_stderr_restore(saved, path, text, sizeof text);
  if (fd >= 0) close(fd);
  unlink(path);
  CHECK(m == PROGRESS_LOG && strstr(why, "no terminal"), "auto with stderr a file: log (%s, %s)", progress_mode_name(m), why);
  CHECK(m2 == PROGRESS_LOG && strstr(why2, "launcher"), "auto with a launcher's variable and none above: log (%s, %s)",
        progress_mode_name(m2), why2);
  CHECK(m3 == PROGRESS_LOG, "auto with TERM=dumb: log");
  fclose(f);
  return check_summary();
}
