/* atomic_file.c: temporary file, fsync, rename or link; the rules of atomic_file.h on what may be replaced,
 * checked with lstat before anything is created and again just before the rename. Leaves no temporary file
 * behind on failure, nor on SIGINT/SIGTERM (the handler calls atomic_file_abandon). Never follows or replaces a
 * symbolic link at the path, never replaces anything but a regular file. */
#include "atomic_file.h"
#include "testhooks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "input_file.h"

/* The temporary file being written, for atomic_file_abandon (one at a time: only rank 0's main thread
 * writes files). */
static char g_tmp[4096];
static volatile sig_atomic_t g_tmp_live;

static int g_errno; /* the errno of the last failed write (atomic_file_errno) */

int atomic_file_errno(void) { return g_errno; }

/* The test hooks count the writes of each file (the first 8 paths; 0 past them): write_index is this write's. */
static int write_index(const char *path) {
  static struct {
    char path[256];
    int n;
  } seen[8];
  int i = 0;
  while (i < 8 && seen[i].path[0] && strcmp(seen[i].path, path)) i++;
  if (i == 8) return 0;
  if (!seen[i].path[0]) snprintf(seen[i].path, sizeof seen[i].path, "%s", path);
  return ++seen[i].n;
}

/* Test hook: DDPBENCH_TEST_WRITE_FAIL=FROM[:TO] fails the FROM-th to TO-th write (1-based, counted per path;
 * no TO: every one from FROM on) of every file with ENOSPC, as a full file system would. */
static int test_write_fails(int n) {
  const char *v = testhook_value(HOOK_WRITE_FAIL);
  int from = 0, to = 0;
  if (!v || sscanf(v, "%d:%d", &from, &to) < 1 || from < 1) return 0;
  return n >= from && (to < from || n <= to);
}

void atomic_file_abandon(void) {
  if (g_tmp_live) unlink(g_tmp);
  g_tmp_live = 0;
}

/* The names of the standard streams that are links (/dev/stdout, /dev/fd/1, /proc/self/fd/1): refused like
 * any link, with the hint to give "-". */
static int std_name(const char *path) {
  return !strncmp(path, "/dev/std", 8) || !strncmp(path, "/dev/fd/", 8) || !strncmp(path, "/proc/self/fd/", 14);
}

/* ---- standard output ("-") --------------------------------------------------------------------------- */
static int g_stdout_fd = -1; /* the process's standard output, once atomic_file_stdout_take moved it here */

ddp_result atomic_file_stdout_take(void) {
  if (g_stdout_fd >= 0) return DDP_OK;
  fflush(stdout);
  int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return DDP_FAIL(DDP_ERR_SYSTEM, "cannot keep standard output for -: %s", strerror(errno));
  if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    int e = errno;
    close(fd);
    return DDP_FAIL(DDP_ERR_SYSTEM, "cannot send the report to standard error: %s", strerror(e));
  }
  g_stdout_fd = fd;
  return DDP_OK;
}

int atomic_file_is_stdout(const char *path) { return path && !strcmp(path, ATOMIC_FILE_STDOUT); }

/* The whole text to standard output (the one kept by atomic_file_stdout_take, else fd 1). A pipe is not a
 * file: there is nothing to make atomic, but a short write is never left unsaid. A reader that closed early
 * (`| head`) is an output failure like a full disk (EPIPE, returned), never SIGPIPE: that signal would end the
 * process before the other outputs and the verdict's exit code. SIGPIPE is blocked in this thread meanwhile and
 * the one the write raised taken back. */
static ddp_result stdout_write(const char *data, size_t n) {
  int fd = g_stdout_fd >= 0 ? g_stdout_fd : STDOUT_FILENO;
  fflush(stdout);
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigset_t pending;
  int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
  if (pthread_sigmask(SIG_BLOCK, &pipe_set, &old) != 0)
    return DDP_FAIL(DDP_ERR_SYSTEM, "pthread_sigmask: cannot block SIGPIPE");
  ddp_result r = DDP_OK;
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno ? errno : EIO;
      g_errno = e;
      if (e == EPIPE && !was_pending) { /* the SIGPIPE this write raised, pending while blocked: taken back */
        struct timespec none = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &none) < 0 && errno == EINTR) {
        }
      }
      r = DDP_FAIL(DDP_ERR_SYSTEM, "cannot write to standard output (-): %s%s", strerror(e),
                   e == EPIPE ? " (its reader closed it early); the other outputs are written" : "");
      break;
    }
    data += w;
    n -= (size_t)w;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return r;
}

/* 0 when path may be (over)written under the rules; else -1 with the reason in err. */
static int path_allowed(const char *path, int force, char *err, size_t errn) {
  struct stat st;
  if (!path[0]) return snprintf(err, errn, "empty output file name"), -1;
  if (lstat(path, &st) != 0) {
    if (errno == ENOENT) return 0;
    return snprintf(err, errn, "%s: %s", path, strerror(errno)), -1;
  }
  if (S_ISLNK(st.st_mode))
    return snprintf(err, errn, "%s is a symbolic link: ddpbench neither writes through nor replaces one "
                               "(%s)", path, std_name(path) ? "give - to write to standard output"
                                                             : "give the path of the real file"), -1;
  if (!S_ISREG(st.st_mode))
    return snprintf(err, errn, "%s is %s, not a regular file: ddpbench replaces regular files only", path,
                    input_file_kind(st.st_mode)), -1;
  if (!force) return snprintf(err, errn, "%s: file exists (use --force to overwrite it)", path), -1;
  return 0;
}

/* Creates the temporary file next to path (registered for atomic_file_abandon); -1 with err on failure. */
static int tmp_create(const char *path, char *err, size_t errn) {
  if (snprintf(g_tmp, sizeof g_tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof g_tmp)
    return snprintf(err, errn, "%s: path too long", path), -1;
  g_tmp_live = 1;
  int fd = open(g_tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    int e = errno;
    g_tmp_live = 0;
    if (e == ENOENT || e == ENOTDIR)
      snprintf(err, errn, "%s: its folder does not exist", path);
    else
      snprintf(err, errn, "%s: cannot create a file there: %s", path, strerror(e));
    return -1;
  }
  return fd;
}

ddp_result atomic_file_check(const char *path, int force, char *err, size_t errn) {
  if (atomic_file_is_stdout(path)) return DDP_OK;
  if (path_allowed(path, force, err, errn) != 0) return DDP_ERR_USAGE;
  int fd = tmp_create(path, err, errn);
  if (fd < 0) return DDP_ERR_USAGE;
  close(fd);
  atomic_file_abandon();
  return DDP_OK;
}

ddp_result atomic_file_write(const char *path, const char *data, size_t n, int force) {
  g_errno = 0; /* a failure below sets its own: never an earlier write's */
  if (atomic_file_is_stdout(path)) return stdout_write(data, n);
  char err[4400];
  if (path_allowed(path, force, err, sizeof err) != 0) return ddp_usage_error("%s", err);
  const int nth = testhook_value(HOOK_WRITE_FAIL) || testhook_value(HOOK_WRITE_DELAY) ? write_index(path) : 0;
  if (test_write_fails(nth)) {
    g_errno = ENOSPC;
    return DDP_FAIL(DDP_ERR_SYSTEM, "cannot write %s: %s (DDPBENCH_TEST_WRITE_FAIL)", path, strerror(ENOSPC));
  }
  g_errno = 0;
  int fd = tmp_create(path, err, sizeof err);
  /* After a passed pre-flight check this is the environment changing under the run: a runtime error. */
  if (fd < 0) {
    g_errno = errno ? errno : EIO;
    return DDP_FAIL(DDP_ERR_SYSTEM, "%s", err);
  }
  const char *p = data;
  size_t left = n;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      g_errno = e;
      close(fd);
      atomic_file_abandon();
      return DDP_FAIL(DDP_ERR_SYSTEM, "cannot write %s: %s", path, strerror(e));
    }
    p += w;
    left -= (size_t)w;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int e = errno;
      g_errno = e;
    atomic_file_abandon();
    return DDP_FAIL(DDP_ERR_SYSTEM, "cannot write %s: %s", path, strerror(e));
  }
  /* Test hook: DDPBENCH_TEST_WRITE_DELAY=S holds the complete temporary file S seconds before it is renamed
   * or linked, so that the fault tests can send a signal in the middle of a write. */
  int delay = 0, only = 0; /* SECONDS[:N]: only each file's N-th write */
  const char *dv = testhook_value(HOOK_WRITE_DELAY);
  if (dv && sscanf(dv, "%d:%d", &delay, &only) >= 1 && only > 0 && nth != only) delay = 0;
  if (delay > 0) sleep((unsigned)delay);
  if (force) {
    /* Again just before the rename: what is there now must still be a regular file (or nothing). */
    if (path_allowed(path, force, err, sizeof err) != 0) {
      atomic_file_abandon();
      return ddp_usage_error("%s", err);
    }
    if (rename(g_tmp, path) != 0) {
      int e = errno;
      g_errno = e;
      atomic_file_abandon();
      return DDP_FAIL(DDP_ERR_SYSTEM, "cannot rename %s to %s: %s", g_tmp, path, strerror(e));
    }
    g_tmp_live = 0;
    return DDP_OK;
  }
  if (link(g_tmp, path) != 0) {
    int e = errno;
      g_errno = e;
    atomic_file_abandon();
    if (e == EEXIST) return ddp_usage_error("%s: file exists (use --force to overwrite it)", path);
    return DDP_FAIL(DDP_ERR_SYSTEM, "cannot create %s: %s", path, strerror(e));
  }
  atomic_file_abandon();
  return DDP_OK;
}
