/* test_default_job: `mpiexec -np 1 ddpbench` with no options at all, as a user first runs it. argv: mpiexec ddpbench.
 * Which branch is expected comes from the machine and the build, never from the program's output (a GPU machine
 * whose run silently fell back to the CPU must fail): a GPU is there when `nvidia-smi -L` lists one ("GPU " lines;
 * without nvidia-smi, when /dev/nvidia0 exists) and CUDA_VISIBLE_DEVICES does not hide them all; the build has
 * CUDA when CMake found it (DDPBENCH_TEST_BUILT_WITH_CUDA). Both: the GPU branch; otherwise the CPU branch.
 *  - CPU (CI): the CPU default, unchanged: device cpu, fp32, H 1024, 4 layers, batch 256, 20 + 5 steps, exit 0,
 *    and no GPU default job announced;
 *  - GPU: the GPU-sized acceptance job: its plan line (bf16 model sized from the GPU, the expected time), a bf16
 *    training run on the cuda device (not the cpu one), then the acceptance checks ending in `hosts: ...`; exit 0
 *    or 4 (a failed check is a verdict, not a fault), within the 3 minutes it aims for plus slack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"

#ifndef DDPBENCH_TEST_BUILT_WITH_CUDA
#define DDPBENCH_TEST_BUILT_WITH_CUDA 0
#endif

static char out[1 << 20], err[1 << 16];

/* GPUs this machine shows, by the driver's own tool (or its device node), as CUDA would see them. */
static int machine_gpus(const char *dir, const char **how) {
  const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
  if (cvd && (!*cvd || *cvd == '-')) return *how = "CUDA_VISIBLE_DEVICES hides every GPU", 0;
  static char smi[1 << 14], smi_err[1 << 10];
  int rc = tl_capture("nvidia-smi -L", dir, smi, sizeof smi, smi_err, sizeof smi_err);
  if (rc == 0) return *how = "nvidia-smi -L", tl_lines_starting(smi, "GPU ");
  if (rc == 127) return *how = "/dev/nvidia0 (no nvidia-smi)", access("/dev/nvidia0", F_OK) == 0;
  /* nvidia-smi there but failing: a driver that does not answer; a device node still says a GPU should be */
  return *how = "nvidia-smi -L failed; /dev/nvidia0", access("/dev/nvidia0", F_OK) == 0;
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: test_default_job mpiexec ddpbench\n"), 2;
  char dir[] = "/tmp/ddpbench-default-XXXXXX";
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  const char *how = "";
  int gpus = machine_gpus(dir, &how), cuda = DDPBENCH_TEST_BUILT_WITH_CUDA;
  int want_gpu = gpus > 0 && cuda;
  printf("# machine: %d GPU(s) (%s); build %s CUDA: expecting the %s\n", gpus, how, cuda ? "with" : "without",
         want_gpu ? "GPU default acceptance job" : "CPU default");

  char cmd[2048];
  snprintf(cmd, sizeof cmd, "timeout 400 %s -np 1 %s", argv[1], argv[2]);
  double t0 = tl_now();
  int code = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  double secs = tl_now() - t0;
  tl_rmtree(dir);
  if (!want_gpu) {
    printf("# the CPU default (%.1f s)\n", secs);
    CHECK(code == 0, "cpu default: exit %d", code);
    CHECK(strstr(out, "device cpu") != NULL, "on the cpu device");
    CHECK(!strstr(out, "default GPU acceptance job"), "no GPU job announced on the CPU");
    CHECK(strstr(out, "# model: hidden 1024  layers 4  batch 256/rank") != NULL, "the CPU default model");
    CHECK(strstr(out, "precision fp32  grad_comm fp32") != NULL, "fp32");
    CHECK(strstr(out, "# steps 20 timed + 5 warmup") != NULL, "20 + 5 steps");
    CHECK(!strstr(out, "# ddpbench accept:"), "no acceptance checks after the CPU default run");
  } else {
    printf("# GPU: the default acceptance job took %.1f s, exit %d\n", secs, code);
    CHECK(!strstr(out, "device cpu"), "fell back to the CPU device on a machine with %d GPU(s) (%s)", gpus, how);
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
  if (check_failed_) fprintf(stderr, "stdout:\n%.4000s\nstderr:\n%.2000s\n", out, err);
  return check_summary();
}
