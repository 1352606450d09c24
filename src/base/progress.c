/* progress.c: the progress lines (progress.h). One state per process: only rank 0 prints, and it prints one
 * job's lines at a time. What a write to stderr returns is not checked: a progress line that cannot be written
 * is no reason to stop a measurement, and the report on stdout says what was measured. */
#include "progress.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "testhooks.h"

static struct {
  progress_mode mode; /* resolved: tty, log or none */
  FILE *out;
  char command[32];
  double interval;    /* log: seconds between two lines inside a phase (the test hook may shorten it) */
  int in_group, gindex, gcount;
  char glabel[64];
  double gstart;
  int in_phase, nsteps, done, base_done;
  char phase[96], unit[16]; /* unit: what a step is ("step", "row", "round") */
  double pstart, base_t, next;
  double done_t;      /* when done last grew: the ETA counts down from there between steps */
  int drawn;          /* tty: a line is on the terminal without its newline */
} g = {.mode = PROGRESS_NONE};

static const opt_spec PROGRESS_KEYS[] = {
    {"progress", NULL, 0, OPT_ENUM, 0, 0, "auto", .choices = PROGRESS_CHOICES, .flags = OPT_NO_HASH,
     .help = "progress lines on rank 0's stderr: tty (one line rewritten, with ETA), log (a line per stage start "
             "and end, at most one per 10 s between), none; auto = tty only when stderr, or the launcher's under "
             "mpirun/srun, is a terminal, else log (docs/progress.md)"},
};
const opt_table progress_table = {"progress", PROGRESS_KEYS, 1};

const char *progress_mode_name(progress_mode m) {
  static const char *names[] = {"auto", "tty", "log", "none"};
  return (unsigned)m < 4 ? names[m] : "?";
}

/* ---- auto ------------------------------------------------------------------------------------------ */
/* 1 when /proc/pid/fd/2 leads to a terminal (a pty or a virtual console; /dev/null is a character device too,
 * so the name decides). */
static int pid_stderr_is_tty(long pid) {
  char link[64], to[PATH_MAX];
  snprintf(link, sizeof link, "/proc/%ld/fd/2", pid);
  ssize_t n = readlink(link, to, sizeof to - 1);
  if (n <= 0) return 0;
  to[n] = 0;
  struct stat st;
  return (!strncmp(to, "/dev/pts/", 9) || !strncmp(to, "/dev/tty", 8)) && stat(to, &st) == 0 && S_ISCHR(st.st_mode);
}

/* pid's parent and its command name (comm, at most 15 characters); 0 when it cannot be read. */
static long parent_of(long pid, char *comm, size_t n) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[len] = 0;
  char *open = strchr(buf, '('), *close = strrchr(buf, ')'); /* "pid (comm) state ppid ..."; comm may hold ") " */
  if (!open || !close || close < open) return 0;
  snprintf(comm, n, "%.*s", (int)(close - open - 1), open + 1);
  char state;
  long ppid = 0;
  return sscanf(close + 1, " %c %ld", &state, &ppid) == 2 ? ppid : 0;
}

static int is_launcher(const char *comm) {
  static const char *names[] = {"mpirun", "mpiexec", "orterun", "prterun", "prte", "srun"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strncmp(comm, names[i], strlen(names[i]))) return 1;
  return 0;
}

progress_mode progress_auto(const char **why) {
  static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID"};
  const char *w = "";
  progress_mode m = PROGRESS_LOG;
  int launched = 0;
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) launched |= getenv(vars[i]) && *getenv(vars[i]);
  const char *term = getenv("TERM");
  if (term && !strcmp(term, "dumb")) {
    w = "TERM=dumb";
  } else if (launched) { /* the topmost launcher above this process on this host decides */
    long top = 0, pid = (long)getppid();
    char comm[64];
    for (int depth = 0; pid > 1 && depth < 64; depth++) {
      long up = parent_of(pid, comm, sizeof comm);
      if (is_launcher(comm)) top = pid;
      pid = up;
    }
    if (!top) w = "launched by an MPI launcher that is no ancestor on this host";
    else if (pid_stderr_is_tty(top)) m = PROGRESS_TTY, w = "the launcher's stderr is a terminal";
    else w = "the launcher's stderr is no terminal";
  } else if (isatty(STDERR_FILENO)) {
    m = PROGRESS_TTY, w = "stderr is a terminal";
  } else {
    w = "stderr is no terminal";
  }
  if (why) *why = w;
  return m;
}

/* ---- the lines ------------------------------------------------------------------------------------- */
/* "4.8 s", "12 s", "3 min 20 s", "2 h 05 min". */
static const char *secs(char *buf, size_t n, double s) {
  if (!(s >= 0)) s = 0;
  long t = (long)(s + 0.5);
  if (s < 9.95) snprintf(buf, n, "%.1f s", s);
  else if (t < 60) snprintf(buf, n, "%ld s", t);
  else if (t < 3600) snprintf(buf, n, "%ld min %02ld s", t / 60, t % 60);
  else snprintf(buf, n, "%ld h %02ld min", t / 3600, t / 60 % 60);
  return buf;
}

/* "[ddpbench] run: group 2/3 np=2: " (log) or "[ddpbench] run: group 2/3 np=2  " (tty) into buf. */
static int prefix(char *buf, size_t n) {
  const char *sep = g.mode == PROGRESS_TTY ? "  " : ": ";
  int k = snprintf(buf, n, "[ddpbench] %s: ", g.command);
  if (g.in_group && k >= 0 && (size_t)k < n)
    k += snprintf(buf + k, n - (size_t)k, "group %d/%d%s%s%s", g.gindex + 1, g.gcount, g.glabel[0] ? " " : "",
                  g.glabel, sep);
  return k < 0 ? 0 : (size_t)k < n ? k : (int)n - 1;
}

/* Ends the line of text: log a line of its own, tty the line rewritten in place. */
static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...) {
  char line[512];
  int k = prefix(line, sizeof line);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + k, sizeof line - (size_t)k, fmt, ap);
  va_end(ap);
  if (g.mode == PROGRESS_TTY) {
    fprintf(g.out, "\r%s\033[K", line);
    g.drawn = 1;
  } else {
    fprintf(g.out, "%s\n", line);
  }
  fflush(g.out);
}

/* The open phase where it stands: "phase ddp: step 12/25, 4.8 s, ETA 3 s". */
static void emit_step(double now) {
  char el[32], eta[32] = "";
  secs(el, sizeof el, now - g.pstart);
  if (g.nsteps > 0 && g.done > g.base_done && g.done < g.nsteps) {
    char t[24];
    /* the rate up to the last step; the time since it counts down (a soak's interval is a step of minutes) */
    double rate = (g.done_t - g.base_t) / (g.done - g.base_done), left = rate * (g.nsteps - g.done) - (now - g.done_t);
    snprintf(eta, sizeof eta, "%sETA %s", g.mode == PROGRESS_TTY ? "  " : ", ", secs(t, sizeof t, left > 0 ? left : 0));
  }
  if (g.mode == PROGRESS_TTY) {
    if (g.nsteps > 0) emit("%s  %s %d/%d  %s%s", g.phase, g.unit, g.done, g.nsteps, el, eta);
    else emit("%s  %s", g.phase, el);
  } else {
    if (g.nsteps > 0) emit("%s: %s %d/%d, %s%s", g.phase, g.unit, g.done, g.nsteps, el, eta);
    else emit("%s: %s", g.phase, el);
  }
}

void progress_start(progress_mode mode, FILE *out, const char *command) {
  if (g.mode != PROGRESS_NONE) progress_end();
  memset(&g, 0, sizeof g);
  g.mode = mode == PROGRESS_AUTO ? progress_auto(NULL) : mode;
  g.out = out ? out : stderr;
  snprintf(g.command, sizeof g.command, "%s", command ? command : "ddpbench");
  const char *hook = testhook_value(HOOK_PROGRESS_INTERVAL);
  g.interval = hook && atof(hook) > 0 ? atof(hook) : PROGRESS_LOG_INTERVAL_S;
}

void progress_clear(void) {
  if (g.mode != PROGRESS_TTY || !g.drawn) return;
  fprintf(g.out, "\r\033[K");
  fflush(g.out);
  g.drawn = 0;
  /* The next step draws it again, but not at once: under mpirun the rank's stdout and stderr reach the
   * terminal through two pipes, and a line printed on stdout right after this clear can arrive after the
   * redrawn progress line, and be printed onto it. */
  g.next = ddp_now() + 1.0;
}

void progress_phase_end(void) {
  if (g.mode == PROGRESS_NONE || !g.in_phase) return;
  char el[32];
  secs(el, sizeof el, ddp_now() - g.pstart);
  if (g.mode == PROGRESS_TTY) emit("%s  done  %s", g.phase, el);
  else if (g.nsteps > 0) /* the steps done (a soak ends by time, not by its planned count) */
    emit("%s: done, %d %ss in %s", g.phase, g.done > 0 ? g.done : g.nsteps, g.unit, el);
  else emit("%s: done in %s", g.phase, el);
  g.in_phase = 0;
}

void progress_phase(const char *name, int nsteps, const char *unit) {
  if (g.mode == PROGRESS_NONE) return;
  progress_phase_end();
  snprintf(g.phase, sizeof g.phase, "%s", name);
  snprintf(g.unit, sizeof g.unit, "%s", unit ? unit : "step");
  g.in_phase = 1;
  g.nsteps = nsteps > 0 ? nsteps : 0;
  g.done = g.base_done = 0;
  g.pstart = g.base_t = ddp_now();
  if (g.mode == PROGRESS_TTY) emit("%s  starting", g.phase);
  else if (g.nsteps > 0) emit("%s: start, %d %ss", g.phase, g.nsteps, g.unit);
  else emit("%s: start", g.phase);
  g.next = g.pstart + (g.mode == PROGRESS_TTY ? PROGRESS_TTY_INTERVAL_S : g.interval);
}

void progress_step(int done) {
  if (g.mode == PROGRESS_NONE || !g.in_phase) return;
  double now = ddp_now();
  if (!g.base_done) g.base_done = done, g.base_t = now; /* the rate is taken from here on */
  if (done != g.done) g.done_t = now;
  g.done = done;
  if (now < g.next) return;
  g.next = now + (g.mode == PROGRESS_TTY ? PROGRESS_TTY_INTERVAL_S : g.interval);
  emit_step(now);
}

void progress_group_end(void) {
  if (g.mode == PROGRESS_NONE || !g.in_group) return;
  progress_phase_end();
  char el[32];
  secs(el, sizeof el, ddp_now() - g.gstart);
  emit(g.mode == PROGRESS_TTY ? "done  %s" : "done in %s", el);
  g.in_group = 0;
}

void progress_group(int index, int count, const char *label) {
  if (g.mode == PROGRESS_NONE) return;
  progress_group_end();
  g.in_group = 1;
  g.gindex = index;
  g.gcount = count;
  snprintf(g.glabel, sizeof g.glabel, "%s", label ? label : "");
  g.gstart = ddp_now();
  emit("start");
}

void progress_end(void) {
  if (g.mode == PROGRESS_NONE) return;
  progress_group_end();
  progress_phase_end();
  if (g.mode == PROGRESS_TTY && g.drawn) {
    fputc('\n', g.out);
    fflush(g.out);
  }
  g.drawn = 0;
  g.mode = PROGRESS_NONE;
}
