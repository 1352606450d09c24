/* common.h: what every ddpbench file shares: the result enum that travels up every call chain, the
 * rank/host-tagged error and trace printers, the check macros for libc, and the small helpers (timing,
 * size formatting). Nothing here may exit the process or call MPI: errors are returned upwards and only
 * main() turns a failure into MPI_Abort (a rank that exits on its own leaves its peers hanging). */
#ifndef DDPBENCH_COMMON_H
#define DDPBENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DDP_OK = 0,
  DDP_ERR_USAGE,    /* bad command line, config or input file: exit code 2 */
  DDP_ERR_SYSTEM,   /* libc / operating system */
  DDP_ERR_MPI,
  DDP_ERR_CUDA,
  DDP_ERR_CUBLAS,
  DDP_ERR_NCCL,
  DDP_ERR_HWLOC,
  DDP_ERR_JSON,
  DDP_ERR_TIMEOUT,  /* a peer or the device stopped answering */
  DDP_ERR_INTERNAL,
  DDP_ERR_EXPECT,   /* an acceptance check failed (e.g. a GPU CUDA cannot use): exit code 4 */
} ddp_result;

/* Process exit codes (documented in README): */
enum {
  DDP_EXIT_OK = 0, DDP_EXIT_CHECK = 1, DDP_EXIT_USAGE = 2, DDP_EXIT_RUNTIME = 3, DDP_EXIT_EXPECT = 4,
  DDP_EXIT_NONFINITE = 5 /* NaN/Inf final weights or loss: a failed verification of its own */
};

const char *ddp_result_str(ddp_result r);
int ddp_exit_code(ddp_result r);

/* Identity printed in every error line. Set once after MPI starts; before that rank is -1. */
void ddp_set_identity(int rank, const char *host);
int ddp_rank(void);
const char *ddp_host(void);

/* Prints "[ddpbench rank R host H] <what> at FILE:LINE: message" to stderr and returns code. */
ddp_result ddp_fail(ddp_result code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prints " .. rank R host H: from FILE:LINE" (a poor man's stack trace across ranks). */
void ddp_trace(const char *file, int line);
/* The environment variables ddpbench sets for its libraries (NCCL_DEBUG, NCCL_DEBUG_FILE, ... for NCCL's
 * account): setenv, and remembered, so that what records or compares the user's environment (the result's
 * "environment", the NCCL_* comparison across ranks) leaves them out: they are ddpbench's, not the user's, and
 * differ per rank. Returns setenv's result. */
int ddp_setenv_own(const char *name, const char *value);
/* 1 when ddpbench set this variable itself (ddp_setenv_own). */
int ddp_env_is_own(const char *name);
/* One-line user error "ddpbench: message" to stderr (rank 0 only); returns DDP_ERR_USAGE. */
ddp_result ddp_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* While buf is set (not NULL), ddp_usage_error stores its first message in buf on every rank instead of
 * printing it, so that the caller can share each rank's error and print them all from rank 0. */
void ddp_usage_capture(char *buf, size_t n);
/* Notice "ddpbench: message" on stderr from rank 0 (or before MPI, from the process that will be rank 0). */
void ddp_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define DDP_FAIL(code, ...) ddp_fail((code), __FILE__, __LINE__, __VA_ARGS__)
/* Relays a failure upwards with a trace line; usage errors are already one complete line for the user. */
#define DDP_TRY(call)                                  \
  do {                                                 \
    ddp_result r_ = (call);                            \
    if (r_ != DDP_OK) {                                \
      if (r_ != DDP_ERR_USAGE) ddp_trace(__FILE__, __LINE__); \
      return r_;                                       \
    }                                                  \
  } while (0)
#define DDP_CHECK_ALLOC(p) \
  do { if (!(p)) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory"); } while (0)
const char *ddp_strerror_errno(void);

/* FNV-1a 64 over n bytes, continuing from h (start with DDP_FNV1A64_INIT): host identities, the weights
 * checksum, topology signatures. The one copy of it. */
#define DDP_FNV1A64_INIT 0xcbf29ce484222325ull
uint64_t ddp_fnv1a64(const void *p, size_t n, uint64_t h);

/* Monotonic wall clock in seconds. */
double ddp_now(void);
/* "1.50 GiB"-style size into buf (binary units, as nccl-tests' sizes). */
const char *ddp_fmt_bytes(char *buf, size_t n, double bytes);
/* A measured figure for a table: "-" when not finite, one decimal from 100 up (and for 0), else 3 significant
 * digits; buf returned. */
const char *ddp_fmt_figure(char *buf, size_t n, double v);
/* 1 when the comma-separated list holds name as one of its items. */
int ddp_list_has(const char *list, const char *name);
/* The host memory this process may still take, in bytes: the least of the kernel's MemAvailable and the room
 * left under its memory cgroup's limit (v2 memory.max - memory.current, v1 memory.limit_in_bytes -
 * memory.usage_in_bytes), as Slurm jobs and containers have one. *why says which bounds it (for messages).
 * INFINITY when none can be read. */
double ddp_memory_available(char *why, size_t n);
/* The length of the valid UTF-8 sequence at s (1-4), 0 when the bytes there are not one (an overlong form, a
 * surrogate, a stray continuation byte, a sequence cut short). s[0] must not be 0. */
int ddp_utf8_len(const char *s);
/* A copy of s in which every byte that does not start a valid UTF-8 sequence becomes U+FFFD; NULL when out of
 * memory. For every text ddpbench writes: JSON readers refuse other bytes. */
char *ddp_utf8_clean(const char *s);
/* Rank of this process as the launcher tells it (OMPI, PMI, Slurm), before MPI starts; 0 if unknown. */
int ddp_launcher_rank(void);

#ifdef __cplusplus
}
#endif
#endif
