/* common.c: the error, trace and notice printers behind common.h, and small helpers. Printing only:
 * no function here exits or aborts. */
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_rank = -1;
static char g_host[256] = "?";

void ddp_set_identity(int rank, const char *host) {
  g_rank = rank;
  snprintf(g_host, sizeof g_host, "%s", host ? host : "?");
}
int ddp_rank(void) { return g_rank; }

uint64_t ddp_fnv1a64(const void *p, size_t n, uint64_t h) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
const char *ddp_host(void) {
  if (strcmp(g_host, "?") == 0 && gethostname(g_host, sizeof g_host) != 0) snprintf(g_host, sizeof g_host, "?");
  g_host[sizeof g_host - 1] = 0;
  return g_host;
}

/* "rank R host H", or "host H" where there is no rank (before MPI, `ddpbench topo`). */
static const char *who(char *buf, size_t n) {
  if (g_rank >= 0)
    snprintf(buf, n, "rank %d host %s", g_rank, ddp_host());
  else
    snprintf(buf, n, "host %s", ddp_host());
  return buf;
}

const char *ddp_result_str(ddp_result r) {
  switch (r) {
    case DDP_OK: return "ok";
    case DDP_ERR_USAGE: return "usage error";
    case DDP_ERR_SYSTEM: return "system error";
    case DDP_ERR_MPI: return "MPI error";
    case DDP_ERR_CUDA: return "CUDA error";
    case DDP_ERR_CUBLAS: return "cuBLAS error";
    case DDP_ERR_NCCL: return "NCCL error";
    case DDP_ERR_HWLOC: return "hwloc error";
    case DDP_ERR_JSON: return "JSON error";
    case DDP_ERR_TIMEOUT: return "timeout";
    case DDP_ERR_INTERNAL: return "internal error";
    case DDP_ERR_EXPECT: return "acceptance check failed";
  }
  return "unknown error";
}

int ddp_exit_code(ddp_result r) {
  if (r == DDP_OK) return DDP_EXIT_OK;
  if (r == DDP_ERR_USAGE) return DDP_EXIT_USAGE;
  if (r == DDP_ERR_EXPECT) return DDP_EXIT_EXPECT;
  return DDP_EXIT_RUNTIME;
}

const char *ddp_strerror_errno(void) { return strerror(errno); }

ddp_result ddp_fail(ddp_result code, const char *file, int line, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char w[300];
  fprintf(stderr, "[ddpbench %s] %s at %s:%d: %s\n", who(w, sizeof w), ddp_result_str(code), file, line, msg);
  fflush(stderr);
  return code;
}

void ddp_trace(const char *file, int line) {
  char w[300];
  fprintf(stderr, " .. %s: from %s:%d\n", who(w, sizeof w), file, line);
}

static int is_rank0(void) { return g_rank >= 0 ? g_rank == 0 : ddp_launcher_rank() == 0; }

static char *g_capture;
static size_t g_capture_n;

void ddp_usage_capture(char *buf, size_t n) {
  g_capture = buf;
  g_capture_n = n;
  if (buf && n) buf[0] = 0;
}

/* "ddpbench: ..." as one line on stderr. */
static void say(const char *fmt, va_list ap) {
  fputs("ddpbench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  fflush(stderr);
}

ddp_result ddp_usage_error(const char *fmt, ...) {
  if (g_capture) { /* keep the first message: it names the cause */
    if (!g_capture[0]) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(g_capture, g_capture_n, fmt, ap);
      va_end(ap);
    }
    return DDP_ERR_USAGE;
  }
  if (is_rank0()) {
    va_list ap;
    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
  }
  return DDP_ERR_USAGE;
}

void ddp_notice(const char *fmt, ...) {
  if (!is_rank0()) return;
  va_list ap;
  va_start(ap, fmt);
  say(fmt, ap);
  va_end(ap);
}

double ddp_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *ddp_fmt_bytes(char *buf, size_t n, double bytes) {
  static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, n, "%.0f %s", bytes, unit[u]);
  else
    snprintf(buf, n, "%.2f %s", bytes, unit[u]);
  return buf;
}

int ddp_launcher_rank(void) {
  static const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return atoi(v);
  }
  return 0;
}

const char *ddp_fmt_figure(char *buf, size_t n, double v) {
  if (!isfinite(v)) snprintf(buf, n, "-");
  else if (fabs(v) >= 100 || v == 0) snprintf(buf, n, "%.1f", v);
  else snprintf(buf, n, "%.3g", v);
  return buf;
}

int ddp_list_has(const char *list, const char *name) {
  size_t k = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == k && !strncmp(p, name, k)) return 1;
    p = e ? e + 1 : NULL;
  }
  return 0;
}

int ddp_utf8_len(const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  if (u[0] < 0x80) return 1;
  int n = u[0] >= 0xc2 && u[0] <= 0xdf ? 2 : u[0] >= 0xe0 && u[0] <= 0xef ? 3 : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : 0;
  for (int i = 1; i < n; i++)
    if ((u[i] & 0xc0) != 0x80) return 0;
  if (n == 3 && ((u[0] == 0xe0 && u[1] < 0xa0) || (u[0] == 0xed && u[1] >= 0xa0))) return 0; /* overlong, surrogate */
  if (n == 4 && ((u[0] == 0xf0 && u[1] < 0x90) || (u[0] == 0xf4 && u[1] >= 0x90))) return 0; /* overlong, > U+10FFFF */
  return n;
}

char *ddp_utf8_clean(const char *s) {
  size_t n = 0;
  for (const char *p = s; *p;) {
    int k = ddp_utf8_len(p);
    n += k ? (size_t)k : 3, p += k ? k : 1;
  }
  char *out = malloc(n + 1), *o = out;
  if (!out) return NULL;
  for (const char *p = s; *p;) {
    int k = ddp_utf8_len(p);
    if (k) {
      memcpy(o, p, (size_t)k), o += k, p += k;
    } else {
      memcpy(o, "\xef\xbf\xbd", 3), o += 3, p++;
    }
  }
  *o = 0;
  return out;
}

/* One number from a file of the cgroup file system (NAN when absent, "max" or unlimited). */
static double file_number(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NAN;
  char buf[64] = "";
  char *ok = fgets(buf, sizeof buf, f);
  fclose(f);
  if (!ok || !strncmp(buf, "max", 3)) return NAN;
  double v = strtod(buf, NULL);
  return v > 0 && v < 9e18 ? v : NAN; /* v1 says "no limit" as 2^63 - a page */
}

/* The room under this process's memory cgroup (v2, then v1), NAN when it has no limit or none can be read. */
static double cgroup_room(void) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (!f) return NAN;
  char line[512], v2[512] = "", v1[512] = "";
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!strncmp(line, "0::", 3)) snprintf(v2, sizeof v2, "%s", line + 3);
    char *m = strstr(line, ":memory:");
    if (m) snprintf(v1, sizeof v1, "%s", m + 8);
  }
  fclose(f);
  const char *roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/memory"};
  const char *paths[] = {v2, v1};
  const char *limit[] = {"memory.max", "memory.limit_in_bytes"}, *usage[] = {"memory.current", "memory.usage_in_bytes"};
  for (int k = 0; k < 2; k++) {
    if (k == 0 && !v2[0]) continue;
    /* the process's own folder, else the root of the cgroup name space the container sees */
    const char *at[] = {paths[k], ""};
    for (int a = 0; a < 2; a++) {
      char pl[1100], pu[1100];
      snprintf(pl, sizeof pl, "%s%s/%s", roots[k], at[a], limit[k]);
      snprintf(pu, sizeof pu, "%s%s/%s", roots[k], at[a], usage[k]);
      double l = file_number(pl), u = file_number(pu);
      if (!isnan(l)) return l - (isnan(u) ? 0 : u);
      if (access(pu, R_OK) == 0) return NAN; /* that folder exists and has no limit */
    }
  }
  return NAN;
}

double ddp_memory_available(char *why, size_t n) {
  double avail = INFINITY;
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f)) {
    double kb;
    if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) avail = kb * 1024;
  }
  if (f) fclose(f);
  double room = cgroup_room();
  char a[32], b[32];
  if (!isnan(room) && room < avail) {
    snprintf(why, n, "the memory cgroup's limit leaves %s; MemAvailable %s", ddp_fmt_bytes(a, sizeof a, room),
             isinf(avail) ? "unknown" : ddp_fmt_bytes(b, sizeof b, avail));
    return room > 0 ? room : 0;
  }
  snprintf(why, n, "MemAvailable %s%s", isinf(avail) ? "unknown" : ddp_fmt_bytes(a, sizeof a, avail),
           isnan(room) ? "" : ", under the memory cgroup's limit");
  return avail;
}

/* A handful of names at most (nccl_account.c, nccl_prof.c); set from the main thread before any library
 * reads them. */
static char own_env[8][48];
static int own_env_n;

int ddp_setenv_own(const char *name, const char *value) {
  if (!ddp_env_is_own(name) && own_env_n < (int)(sizeof own_env / sizeof own_env[0]))
    snprintf(own_env[own_env_n++], sizeof own_env[0], "%s", name);
  return setenv(name, value, 1);
}

int ddp_env_is_own(const char *name) {
  for (int i = 0; i < own_env_n; i++)
    if (!strcmp(own_env[i], name)) return 1;
  return 0;
}
