/* proc.h: what the end-to-end tests need to run the real program: a shell command whose stdout and stderr are
 * captured into buffers (through files in the test's folder), and a whole file read into memory. Test-only. */
#ifndef DDPBENCH_TESTS_PROC_H
#define DDPBENCH_TESTS_PROC_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

/* Reads up to n - 1 bytes of path into buf, NUL-terminated ("" when it cannot be read). */
static inline void proc_read(const char *path, char *buf, size_t n) {
  FILE *f = fopen(path, "r");
  size_t k = f ? fread(buf, 1, n - 1, f) : 0;
  buf[k] = 0;
  if (f) fclose(f);
}

/* Runs `cmd >dir/stdout 2>dir/stderr` with sh and reads both back; returns the exit code, -1 after a signal. */
static inline int proc_capture(const char *cmd, const char *dir, char *out, size_t outn, char *err, size_t errn) {
  char full[8192], po[512], pe[512];
  snprintf(po, sizeof po, "%s/stdout", dir);
  snprintf(pe, sizeof pe, "%s/stderr", dir);
  snprintf(full, sizeof full, "%s >%s 2>%s", cmd, po, pe);
  int st = system(full);
  proc_read(po, out, outn);
  proc_read(pe, err, errn);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The whole file, malloc'd and NUL-terminated; NULL when it cannot be read. */
static inline char *proc_slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n < 0) { /* not seekable (a pipe): nothing to read as a whole */
    fclose(f);
    return NULL;
  }
  rewind(f);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

#endif
