/* testlib.c: the helpers of testlib.h, one copy for every test program (files, processes, text). Test code
 * only; nothing here counts a CHECK or exits. */
#include "testlib.h"

#include <cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- files ---- */

const char *tl_path(const char *dir, const char *name) {
  static char p[8][1024];
  static int k;
  k = (k + 1) % 8;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

const char *tl_file_write_n(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(data, 1, n, f) == n;
  if (f && fclose(f) != 0) ok = 0;
  if (!ok) perror(path);
  return ok ? path : NULL;
}

const char *tl_file_write(const char *path, const char *text) { return tl_file_write_n(path, text, strlen(text)); }

long tl_file_read(const char *path, char *buf, size_t n) {
  FILE *f = fopen(path, "rb");
  size_t k = f ? fread(buf, 1, n - 1, f) : 0;
  buf[k] = 0;
  if (!f) return -1;
  fclose(f);
  return (long)k;
}

char *tl_file_slurp(const char *path) {
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

cJSON *tl_json_load(const char *path) {
  char *s = tl_file_slurp(path);
  cJSON *j = s ? cJSON_Parse(s) : NULL;
  free(s);
  return j;
}

int tl_dir_count(const char *dir, const char *part) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, part) != NULL;
  if (d) closedir(d);
  return n;
}

int tl_rmtree(const char *dir) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) == 0) return 0;
  fprintf(stderr, "could not remove %s\n", dir);
  return -1;
}

/* ---- processes ---- */

int tl_sh(const char *cmd) {
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int tl_capture(const char *cmd, const char *dir, char *out, size_t outn, char *err, size_t errn) {
  char full[16384], po[1100], pe[1100];
  snprintf(po, sizeof po, "%s/stdout", dir);
  snprintf(pe, sizeof pe, "%s/stderr", dir);
  if (snprintf(full, sizeof full, "%s >%s 2>%s", cmd, po, pe) >= (int)sizeof full) {
    fprintf(stderr, "testlib: command too long: %.200s...\n", cmd);
    return -1;
  }
  int code = tl_sh(full);
  if (out) tl_file_read(po, out, outn);
  if (err) tl_file_read(pe, err, errn);
  return code;
}

int tl_job_cmd(const tl_job *j, int np, const char *env, const char *args, char *cmd, size_t n) {
  char envp[4096] = "", limit[32] = "", launch[1100] = "";
  if (env && *env) snprintf(envp, sizeof envp, "env %s ", env);
  if (j->timeout > 0) snprintf(limit, sizeof limit, "timeout %d ", j->timeout);
  if (j->mpiexec && np > 0) snprintf(launch, sizeof launch, "%s -np %d --oversubscribe ", j->mpiexec, np);
  int k = snprintf(cmd, n, "%s%s%s%s %s", envp, limit, launch, j->prog, args ? args : "");
  if (k < 0 || (size_t)k >= n) {
    fprintf(stderr, "testlib: command too long: %.200s...\n", cmd);
    return -1;
  }
  return 0;
}

int tl_job_run(const tl_job *j, int np, const char *env, const char *args) {
  char cmd[12288];
  if (tl_job_cmd(j, np, env, args, cmd, sizeof cmd) != 0) return -1;
  return tl_capture(cmd, j->dir, j->out, j->outn, j->err, j->errn);
}

int tl_stderr_redirect(const char *path) {
  fflush(stderr);
  int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (saved < 0 || fd < 0) {
    if (saved >= 0) close(saved);
    if (fd >= 0) close(fd);
    return -1;
  }
  dup2(fd, 2);
  close(fd);
  return saved;
}

long tl_stderr_restore(int saved, const char *path, char *buf, size_t n) {
  fflush(stderr);
  if (saved >= 0) {
    dup2(saved, 2);
    close(saved);
  }
  return tl_file_read(path, buf, n);
}

double tl_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- text ---- */

int tl_newlines(const char *text) {
  int n = 0;
  for (; *text; text++) n += *text == '\n';
  return n;
}

int tl_lines_starting(const char *text, const char *prefix) {
  int n = 0;
  size_t k = strlen(prefix);
  for (const char *p = text; p && *p;) {
    if (strncmp(p, prefix, k) == 0) n++;
    p = strchr(p, '\n');
    if (p) p++;
  }
  return n;
}
