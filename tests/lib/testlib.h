/* testlib.h: what the test programs share beyond check.h (library ddpbench_testlib, tests/lib/testlib.c):
 *  - files: a path in the test's folder, a file written, read into a buffer or whole, a JSON file parsed, the
 *    entries of a folder counted, a folder removed;
 *  - processes: a shell command's exit code, its stdout and stderr captured, and one program run under the MPI
 *    launcher the way every end-to-end test starts ddpbench (`[env E] timeout T mpiexec -np N --oversubscribe
 *    PROG ARGS`); stderr of this process captured around an in-process call; a monotonic clock;
 *  - text: lines counted.
 * Test code only. It never counts a CHECK (check.h's counters are per program): every function reports through
 * its return value, and says on stderr what failed where the caller cannot (a file it could not write). */
#ifndef DDPBENCH_TESTS_TESTLIB_H
#define DDPBENCH_TESTS_TESTLIB_H

#include <stddef.h>

struct cJSON;

/* ---- files ---- */

/* dir/name in one of 8 static buffers, reused in turn: valid until 8 more calls. */
const char *tl_path(const char *dir, const char *name);

/* Writes n bytes (or the string text) to path, replacing it. Returns path, or NULL after printing why. */
const char *tl_file_write_n(const char *path, const void *data, size_t n);
const char *tl_file_write(const char *path, const char *text);

/* Reads up to n - 1 bytes of path into buf, NUL-terminated. Returns the bytes read, or -1 (buf "") when the file
 * cannot be opened. */
long tl_file_read(const char *path, char *buf, size_t n);

/* The whole file, malloc'd and NUL-terminated; NULL when it cannot be read or is not seekable (a pipe). */
char *tl_file_slurp(const char *path);

/* The file parsed by cJSON (free with cJSON_Delete); NULL when it cannot be read or is not JSON. */
struct cJSON *tl_json_load(const char *path);

/* How many entries of dir have `part` in their name (0 when dir cannot be read). */
int tl_dir_count(const char *dir, const char *part);

/* rm -rf dir. Returns 0, or -1 after printing "could not remove DIR". */
int tl_rmtree(const char *dir);

/* ---- processes ---- */

/* Runs cmd with sh; returns its exit code, 128 + the signal when sh itself was killed (the shell's convention). */
int tl_sh(const char *cmd);

/* Runs `cmd >dir/stdout 2>dir/stderr` with sh and reads both back into out and err (as tl_file_read does);
 * returns the exit code as tl_sh does. */
int tl_capture(const char *cmd, const char *dir, char *out, size_t outn, char *err, size_t errn);

/* One program as the end-to-end tests run it: where its output goes and what every run of it shares. */
typedef struct {
  const char *mpiexec; /* the MPI launcher; NULL: the program is run alone */
  const char *prog;    /* the program, followed by the arguments every run shares (may be just the path) */
  const char *dir;     /* the test's folder: stdout and stderr are captured through dir/stdout, dir/stderr */
  int timeout;         /* seconds, through coreutils `timeout`; 0: none */
  char *out, *err;     /* the captured output, NUL-terminated; either may be NULL (not read back) */
  size_t outn, errn;
} tl_job;

/* The command line of one run: `[env ENV] [timeout T] [MPIEXEC -np NP --oversubscribe] PROG ARGS`. No launcher
 * when j->mpiexec is NULL or np <= 0; no `env` when env is NULL or empty. Returns 0, or -1 when it does not fit. */
int tl_job_cmd(const tl_job *j, int np, const char *env, const char *args, char *cmd, size_t n);

/* Runs that command line with stdout and stderr captured into j->out and j->err; returns its exit code as tl_sh
 * does (-1 when the command does not fit). */
int tl_job_run(const tl_job *j, int np, const char *env, const char *args);

/* Sends this process's stderr to path (truncated) until tl_stderr_restore. Returns the saved descriptor, or -1. */
int tl_stderr_redirect(const char *path);

/* Puts stderr back (saved from tl_stderr_redirect) and reads what went to path into buf as tl_file_read does. */
long tl_stderr_restore(int saved, const char *path, char *buf, size_t n);

/* Seconds on the monotonic clock. */
double tl_now(void);

/* ---- text ---- */

/* How many newline characters text holds (lines of a message that ends each line). */
int tl_newlines(const char *text);

/* How many lines of text begin with prefix. */
int tl_lines_starting(const char *text, const char *prefix);

#endif
