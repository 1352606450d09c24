/* nccl_prof.c: ddpbench's side of the NCCL profiler plugin (nccl_prof.h): points NCCL_PROFILER_PLUGIN at
 * libddpbench-nccl-profiler.so next to the binary, and reaches the plugin's control API through dlopen of the
 * library NCCL loaded (RTLD_NOLOAD: never a second copy with its own table) and dlsym. Built with the NCCL comm
 * only (nonccl.c has the stubs). It never calls NCCL, never fails a run, and never prints: every miss is a
 * "not reported" reason for the caller to write down. One thread (the rank's main thread) calls it. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "nccl_prof.h"

typedef enum { PROF_UNSET = 0, PROF_OURS, PROF_ABSENT } prof_state;

static struct {
  prof_state state;
  char path[PATH_MAX];  /* our library's absolute path, when state is PROF_OURS */
  char reason[PATH_MAX + 96]; /* why records are not reported, when state is not PROF_OURS */
  void *lib;            /* our handle on the library NCCL loaded; kept, so that NCCL's dlclose does not unmap it */
  int (*loaded)(void);
  void (*enable)(int);
  int (*take)(ddpbench_prof_record *, int);
  long (*dropped)(void);
} prof;

static void say(char *why, size_t n, const char *text) {
  if (why && n) snprintf(why, n, "%s", text);
}

/* The directory of /proc/self/exe into dir; 0, or -1. */
static int exe_dir_of_self(char *dir, size_t n) {
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return -1;
  exe[len] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return -1;
  *slash = '\0';
  return snprintf(dir, n, "%s", exe[0] ? exe : "/") < (int)n ? 0 : -1;
}

int nccl_prof_setup_env(const char *exe_dir, char *why, size_t n) {
  char dir[PATH_MAX], want[PATH_MAX];
  prof.state = PROF_ABSENT;
  if (!exe_dir) {
    if (exe_dir_of_self(dir, sizeof dir) != 0) {
      snprintf(prof.reason, sizeof prof.reason, "not reported: /proc/self/exe could not be read");
      say(why, n, prof.reason);
      return 0;
    }
    exe_dir = dir;
  }
  char *abs = realpath(exe_dir, NULL);
  int len = snprintf(want, sizeof want, "%s/%s", abs ? abs : exe_dir, DDPBENCH_PROF_LIBRARY);
  free(abs);
  /* NCCL copies the name into 256 bytes before dlopen (src/plugin/plugin_open.cc, MAX_STR_LEN). */
  if (len < 0 || len > 255) {
    snprintf(prof.reason, sizeof prof.reason, "not reported: the path of %s is over the 255 characters NCCL takes",
             DDPBENCH_PROF_LIBRARY);
    say(why, n, prof.reason);
    return 0;
  }
  const char *user = getenv("NCCL_PROFILER_PLUGIN");
  if (user && *user && strcmp(user, want) != 0) {
    snprintf(prof.reason, sizeof prof.reason, "not reported: the user's NCCL_PROFILER_PLUGIN=%.*s is loaded",
             PATH_MAX, user);
    say(why, n, prof.reason);
    return 0;
  }
  if (access(want, R_OK) != 0) {
    snprintf(prof.reason, sizeof prof.reason, "not reported: %s is not there (a build without CUDA, or not built)",
             want);
    say(why, n, prof.reason);
    return 0;
  }
  if (!(user && *user) && ddp_setenv_own("NCCL_PROFILER_PLUGIN", want) != 0) {
    snprintf(prof.reason, sizeof prof.reason, "not reported: setenv NCCL_PROFILER_PLUGIN failed");
    say(why, n, prof.reason);
    return 0;
  }
  memcpy(prof.path, want, sizeof want);
  prof.state = PROF_OURS;
  say(why, n, "");
  return 1;
}

/* The control API of the library NCCL loaded; 0, or -1 with the reason. */
static int prof_open(char *why, size_t n) {
  if (prof.state != PROF_OURS) {
    say(why, n, prof.state == PROF_UNSET ? "not reported: nccl_prof_setup_env was not called" : prof.reason);
    return -1;
  }
  if (prof.lib) return 0;
  void *lib = dlopen(prof.path, RTLD_NOLOAD | RTLD_NOW);
  if (!lib) {
    /* NCCL loads the plugin at its first communicator; too early, or NCCL < 2.23, or NCCL_PROFILER_PLUGIN
     * changed after setup. Not an error: asked again next time. */
    if (why && n) snprintf(why, n, "not reported: NCCL has not loaded %s", prof.path);
    return -1;
  }
  /* dlsym returns void *; POSIX guarantees it converts to a function pointer. */
  *(void **)&prof.loaded = dlsym(lib, "ddpbench_prof_loaded");
  *(void **)&prof.enable = dlsym(lib, "ddpbench_prof_enable");
  *(void **)&prof.take = dlsym(lib, "ddpbench_prof_take");
  *(void **)&prof.dropped = dlsym(lib, "ddpbench_prof_dropped");
  if (!prof.loaded || !prof.enable || !prof.take || !prof.dropped) {
    if (why && n) snprintf(why, n, "not reported: %s lacks ddpbench's control API (another build?)", prof.path);
    dlclose(lib);
    return -1;
  }
  prof.lib = lib;
  return 0;
}

/* The library is open, and NCCL initialised it (it loads API v5 from 2.28 on; an older NCCL skips it). */
static int prof_ready(char *why, size_t n) {
  if (prof_open(why, n) != 0) return -1;
  if (!prof.loaded()) {
    say(why, n, "not reported: NCCL loaded the plugin but did not initialise it (NCCL before 2.28 has no API v5)");
    return -1;
  }
  return 0;
}

int nccl_prof_enable(int on, char *why, size_t n) {
  if (prof_ready(why, n) != 0) return -1;
  prof.enable(on);
  say(why, n, "");
  return 0;
}

int nccl_prof_take(ddpbench_prof_record *out, int max, long *dropped, char *why, size_t n) {
  if (dropped) *dropped = 0;
  if (prof_ready(why, n) != 0) return -1;
  if (dropped) *dropped = prof.dropped(); /* before take, which clears it */
  say(why, n, "");
  return prof.take(out, max);
}
