/* test_gpu_diag.c: the 'GPU not used' diagnosis through gpu_diag_gather (fake NVML, the real environment
 * variable, a device directory of the test's own) and gpu_diag_explain: each cause is named with the numbers
 * behind it, a host without an NVIDIA GPU gets no cause (the CPU is then the right choice), and a host whose
 * GPUs CUDA sees gets none either. Permission-denied device files cannot be made as root (access() ignores
 * the mode), so the missing-file form is tested. Also: the NVML health sample and memory counters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu_diag.h"
#include "testlib.h"
#include "topo_testlib.h"

static char dir[] = "/tmp/i12-diag-XXXXXX";
static char dev_ok[128], dev_empty[128];

/* Facts for the fake pair of H200s as CUDA 13.0 sees none of them; then causes. */
static int diagnose(const char *devdir, int runtime, char causes[][256]) {
  nvml_api api = fake_api();
  gpu_diag_facts f;
  gpu_diag_gather(&f, 2, &api, NULL, devdir);
  f.cuda_built = 1;
  f.cuda_count = 0;
  f.runtime_cuda = runtime;
  snprintf(f.cuda_error, sizeof f.cuda_error, "cudaErrorNoDevice: no CUDA-capable device is detected");
  return gpu_diag_explain(&f, causes, 8);
}

static int has(char causes[][256], int n, const char *needle) {
  for (int i = 0; i < n; i++)
    if (strstr(causes[i], needle)) return 1;
  return 0;
}

static void dump(char causes[][256], int n) {
  for (int i = 0; i < n; i++) fprintf(stderr, "  cause: %s\n", causes[i]);
}
/* CHECK that prints the causes when it fails. */
#define DCHECK(cond, what)    \
  do {                        \
    int ok_ = (cond);         \
    CHECK(ok_, "%s", what);   \
    if (!ok_) dump(c, n);     \
  } while (0)

int main(void) {
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  snprintf(dev_ok, sizeof dev_ok, "%s/dev", dir);
  snprintf(dev_empty, sizeof dev_empty, "%s/empty", dir);
  if (mkdir(dev_ok, 0700) || mkdir(dev_empty, 0700)) return perror("mkdir"), 1;
  const char *files[] = {"nvidiactl", "nvidia-uvm", "nvidia0", "nvidia1"};
  for (int i = 0; i < 4; i++) tl_file_write(tl_path(dev_ok, files[i]), "");
  unsetenv("CUDA_VISIBLE_DEVICES");
  fake_h200_pair();
  char c[8][256];
  int n = 0;

  /* no NVIDIA GPU anywhere: nothing to explain, the CPU is the right device */
  gpu_diag_facts f;
  gpu_diag_gather(&f, 0, NULL, "libnvidia-ml.so.1: cannot open shared object file", dev_empty);
  f.cuda_built = 1;
  DCHECK(gpu_diag_explain(&f, c, 8) == 0, "no GPU on the host: no cause");
  CHECK(f.nvml_gpus == -1 && strstr(f.nvml_why, "libnvidia-ml"), "NVML's absence recorded: %s", f.nvml_why);

  /* CUDA sees the GPUs: nothing to explain */
  nvml_api api = fake_api();
  gpu_diag_gather(&f, 2, &api, NULL, dev_ok);
  f.cuda_built = 1, f.cuda_count = 2, f.runtime_cuda = 13000;
  CHECK(gpu_diag_explain(&f, c, 8) == 0, "CUDA sees 2 GPUs: no cause");
  CHECK(f.nvml_gpus == 2 && !strcmp(f.uuid[1], H200_UUID1) && f.driver_cuda == 13000, "NVML facts");
  CHECK(f.dev_problem[0] == 0, "device files fine: %s", f.dev_problem);

  /* a build without CUDA on a GPU host */
  f.cuda_built = 0, f.cuda_count = -1;
  n = gpu_diag_explain(&f, c, 8);
  CHECK(n == 1 && has(c, n, "built without CUDA") && has(c, n, "2 NVIDIA GPUs"), "no-CUDA build named");

  /* nothing specific: CUDA's own error is quoted */
  n = diagnose(dev_ok, 13000, c);
  CHECK(n == 1 && has(c, n, "cudaErrorNoDevice"), "fallback quotes CUDA");

  /* driver older than the runtime: both versions */
  n = diagnose(dev_ok, 13020, c);
  DCHECK(has(c, n, "580.159.04") && has(c, n, "CUDA 13.0") && has(c, n, "runtime 13.2"), "old driver");

  /* CUDA_VISIBLE_DEVICES */
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  n = diagnose(dev_ok, 13000, c);
  DCHECK(has(c, n, "set but empty") && has(c, n, "0-1"), "empty CUDA_VISIBLE_DEVICES");
  setenv("CUDA_VISIBLE_DEVICES", "7,0", 1);
  n = diagnose(dev_ok, 13000, c);
  DCHECK(has(c, n, "GPU 7, which does not exist") && has(c, n, "has 2"), "CUDA_VISIBLE_DEVICES=7");
  setenv("CUDA_VISIBLE_DEVICES", "GPU-ffffffff", 1);
  n = diagnose(dev_ok, 13000, c);
  DCHECK(has(c, n, "GPU-ffffffff, which is not a GPU of this host"), "unknown UUID");
  setenv("CUDA_VISIBLE_DEVICES", "GPU-0f1e2d3c", 1); /* a prefix of GPU 1's UUID, as CUDA accepts */
  n = diagnose(dev_ok, 13000, c);
  DCHECK(!has(c, n, "CUDA_VISIBLE_DEVICES"), "a known UUID prefix is fine");
  setenv("CUDA_VISIBLE_DEVICES", "gpu0", 1);
  n = diagnose(dev_ok, 13000, c);
  DCHECK(has(c, n, "'gpu0' is neither"), "garbage entry");
  unsetenv("CUDA_VISIBLE_DEVICES");

  /* compute mode prohibited */
  fake_gpus[1].compute_mode = NVML_DL_COMPUTE_PROHIBITED;
  n = diagnose(dev_ok, 13000, c);
  DCHECK(has(c, n, "Prohibited on GPU 1:") && has(c, n, "-c DEFAULT"), "prohibited GPU 1");
  fake_gpus[0].compute_mode = NVML_DL_COMPUTE_PROHIBITED;
  n = diagnose(dev_ok, 13000, c);
  DCHECK(has(c, n, "GPU 0,1 (every GPU)"), "every GPU prohibited");
  fake_gpus[0].compute_mode = fake_gpus[1].compute_mode = 0;

  /* MIG without a MIG device; with one, no MIG cause */
  fake_gpus[0].mig = 1;
  n = diagnose(dev_ok, 13000, c);
  DCHECK(has(c, n, "MIG is enabled on GPU 0"), "MIG named");
  setenv("CUDA_VISIBLE_DEVICES", "MIG-11112222-3333", 1);
  n = diagnose(dev_ok, 13000, c);
  DCHECK(!has(c, n, "MIG is enabled"), "MIG device given: no MIG cause");
  unsetenv("CUDA_VISIBLE_DEVICES");
  fake_gpus[0].mig = 0;

  /* no device files (a container started without them) */
  n = diagnose(dev_empty, 13000, c);
  DCHECK(has(c, n, "nvidiactl: No such file"), "missing /dev/nvidiactl");

  /* several causes at once are all named */
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  fake_gpus[1].mig = 1;
  n = diagnose(dev_empty, 13020, c);
  DCHECK(n == 4, "four causes at once");
  unsetenv("CUDA_VISIBLE_DEVICES");
  fake_gpus[1].mig = 0;

  /* health sampling through the same fake */
  fake_gpus[0].sm_mhz = 1500, fake_gpus[0].power_mw = 699500, fake_gpus[0].power_limit_mw = 700000;
  fake_gpus[0].temp_c = 61, fake_gpus[0].reasons = NVML_DL_REASON_SW_POWER_CAP;
  nvml_device d0 = NULL;
  api.handle_by_index(0, &d0);
  nvml_sample s;
  nvml_sample_read(&api, d0, &s);
  CHECK(s.known == 15 && s.sm_mhz == 1500 && s.power_w == 699.5 && s.power_limit_w == 700 && s.temp_c == 61,
        "sample read");
  char rb[128];
  CHECK(!strcmp(nvml_reasons_str(s.reasons, rb, sizeof rb), "SW power cap") && !nvml_reasons_bad(s.reasons),
        "power cap is normal: %s", rb);
  unsigned long long bad = NVML_DL_REASON_SW_POWER_CAP | NVML_DL_REASON_HW_THERMAL;
  CHECK(nvml_reasons_bad(bad) == NVML_DL_REASON_HW_THERMAL &&
            !strcmp(nvml_reasons_str(bad, rb, sizeof rb), "SW power cap, HW thermal"),
        "thermal slowdown is a fault: %s", rb);
  fake_gpus[0].ecc[1][1] = 3, fake_gpus[0].rows[2] = 1;
  nvml_mem_health h;
  nvml_mem_health_read(&api, d0, &h);
  CHECK(h.ecc_unc_aggregate == 3 && h.ecc_corr_volatile == 0 && h.rows_pending == 1 && h.rows_failure == 0, "mem");
  fake_gpus[0].no_ecc = 1;
  nvml_mem_health_read(&api, d0, &h);
  CHECK(h.ecc_unc_aggregate == -1, "ECC not supported: -1, not 0");

  tl_rmtree(dir);
  return check_summary();
}
