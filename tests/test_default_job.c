/* test_default_job: `mpiexec -np 1 ddpbench` with no options at all, as a user first runs it. argv: mpiexec ddpbench.
 *  - without a GPU (CI): the CPU default, unchanged: fp32, H 1024, 4 layers, batch 256, 20 + 5 steps, exit 0, and no
 *    GPU default job announced;
 *  - with a GPU: the GPU-sized acceptance job: its plan line (bf16 model sized from the GPU, the expected time), a
 *    bf16 training run on the cuda device, then the acceptance checks ending in `hosts: ...`; exit 0 or 4 (a
 *    failed check is a verdict, not a fault), within the 3 minutes it aims for plus slack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "check.h"

static char out[1 << 20];

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: test_default_job mpiexec ddpbench\n"), 2;
  char path[] = "/tmp/ddpbench-default-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return perror("mkstemp"), 1;
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "timeout 400 %s -np 1 %s >%s 2>/dev/null", argv[1], argv[2], path);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int st = system(cmd);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
  out[n] = 0;
  if (f) fclose(f);
  remove(path);
  if (strstr(out, "device cpu")) {
    printf("# no GPU: the CPU default (%.1f s)\n", secs);
    CHECK(code == 0, "cpu default: exit %d", code);
    CHECK(!strstr(out, "default GPU acceptance job"), "no GPU job announced on the CPU");
    CHECK(strstr(out, "# model: hidden 1024  layers 4  batch 256/rank") != NULL, "the CPU default model");
    CHECK(strstr(out, "precision fp32  grad_comm fp32") != NULL, "fp32");
    CHECK(strstr(out, "# steps 20 timed + 5 warmup") != NULL, "20 + 5 steps");
    CHECK(!strstr(out, "# ddpbench accept:"), "no acceptance checks after the CPU default run");
  } else {
    printf("# GPU: the default acceptance job took %.1f s, exit %d\n", secs, code);
    const char *plan = strstr(out, "# default GPU acceptance job");
    CHECK(plan != NULL, "the plan line with the expected time");
    if (plan) printf("%.*s\n", (int)strcspn(plan, "\n"), plan);
    CHECK(strstr(out, "device cuda") != NULL, "on the cuda device");
    CHECK(strstr(out, "precision bf16") != NULL, "bf16 model");
    CHECK(strstr(out, "# ddpbench accept:") != NULL, "then the acceptance checks");
    CHECK(strstr(out, "\nhosts: ") != NULL, "their hosts summary");
    CHECK(code == 0 || code == 4, "exit %d (0 or 4)", code);
    CHECK(secs < 240, "%.0f s, within 4 minutes", secs);
  }
  return check_summary();
}
