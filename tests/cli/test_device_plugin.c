/* test_device_plugin: a device is one file. This file adds a device of its own, without touching src/: a
 * counting device that wraps the CPU device (every GEMM and every device created is counted), registered with
 * device_register before the real program's main (cmd_main over ddpbench_commands) runs. It checks:
 *  - the new name is a --device choice (the option table takes its choices from the device table): --help
 *    lists it, and a misspelt name is refused with the list that includes it;
 *  - the whole run (placement, preflight, the engine's three phases, the GEMM peak, the result document) runs
 *    on it under mpirun on 2 ranks: exit 0, "device": "counting" in the JSON, every rank created one device,
 *    destroyed it and ran GEMMs through it;
 *  - the numbers are the CPU device's: the final weights' checksum equals that of the same run on --device cpu
 *    (the counting device changes nothing but the count).
 * The test starts itself under mpirun (argv: mpiexec, then its own path); the children run the program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cmd.h"
#include "commands.h"
#include "device.h"
#include "result.h"
#include "testlib.h"

/* ---- the plug-in: everything a new device needs, in this file ---------------------------------------- */
static long gemms, created, destroyed;
static ddp_result (*cpu_gemm)(ddp_device *, ddp_stream *, const ddp_gemm *);
static void (*cpu_destroy)(ddp_device *);

static ddp_result counting_gemm(ddp_device *d, ddp_stream *s, const ddp_gemm *g) {
  gemms++;
  return cpu_gemm(d, s, g);
}

static void counting_destroy(ddp_device *d) {
  destroyed++;
  cpu_destroy(d);
}

static int counting_available(void) { return 1; }

static ddp_result counting_create(ddp_device **out, int ordinal, int cpu_threads) {
  DDP_TRY(device_cpu_create(out, cpu_threads));
  created++;
  cpu_gemm = (*out)->gemm, cpu_destroy = (*out)->destroy;
  (*out)->gemm = counting_gemm;
  (*out)->destroy = counting_destroy;
  (*out)->name = "counting";
  return DDP_OK;
}

static const device_entry counting = {.name = "counting", .available = counting_available, .create = counting_create};

/* ---- the child: the real program, then its counts into a file per rank ------------------------------- */
static int child(int argc, char **argv) {
  if (device_register(&counting) != DDP_OK) return 99;
  const char *dir = getenv("PLUGIN_DIR"), *rank = getenv("OMPI_COMM_WORLD_RANK");
  int code = cmd_main(ddpbench_commands, argc, argv);
  if (dir && rank) {
    char path[512];
    snprintf(path, sizeof path, "%s/counts.%s", dir, rank);
    FILE *f = fopen(path, "w");
    if (f) fprintf(f, "%ld %ld %ld\n", created, destroyed, gemms), fclose(f);
  }
  return code;
}

static char dir[] = "/tmp/ddpbench-plugin-XXXXXX";
static char out[1 << 16], err[1 << 16];

/* The device and the weights checksum of a result file ("" when absent), through the project's reader. */
static void result_of(const char *path, char *device, char *sum, size_t n) {
  result_doc d;
  device[0] = sum[0] = 0;
  if (result_load(path, &d) != DDP_OK) return;
  snprintf(device, n, "%s", d.device ? d.device : "");
  snprintf(sum, n, "%s", d.weights_checksum ? d.weights_checksum : "");
  result_free(&d);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--child")) {
    argv[1] = argv[0]; /* the program sees its own name, then the options */
    return child(argc - 1, argv + 1);
  }
  if (argc < 3) return fprintf(stderr, "usage: test_device_plugin MPIEXEC SELF\n"), 2;
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  const char *mpiexec = argv[1], *self = argv[2];
  char cmd[4096], path[600];
  const char *model = "--hidden 64 --layers 2 --batch 8 --steps 3 --warmup 1 --progress none --seed 7";

  /* the choice comes from the table */
  snprintf(cmd, sizeof cmd, "PLUGIN_DIR=%s %s --child --help", dir, self);
  int rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 0 && strstr(out, "counting"), "--help lists the registered device: exit %d\n%s", rc, out);
  snprintf(cmd, sizeof cmd, "timeout 120 %s -np 1 --oversubscribe %s --child --device countin %s", mpiexec, self, model);
  rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 2 && strstr(err, "counting"), "a misspelt device is refused with the list that names it: exit %d\n%s", rc, err);

  /* the whole run on it, and the same on the CPU device */
  snprintf(cmd, sizeof cmd, "PLUGIN_DIR=%s timeout 300 %s -np 2 --oversubscribe -x PLUGIN_DIR %s --child --device counting "
           "%s --json %s/counting.json", dir, mpiexec, self, model, dir);
  rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 0, "the run on the counting device: exit %d\n%s%s", rc, out, err);
  char dev_a[32], dev_b[32], a[32], b[32];
  snprintf(path, sizeof path, "%s/counting.json", dir);
  result_of(path, dev_a, a, sizeof a);
  CHECK(!strcmp(dev_a, "counting"), "the result names the device: '%s'", dev_a);
  for (int r = 0; r < 2; r++) {
    char buf[128];
    long c = -1, d = -1, g = -1;
    snprintf(path, sizeof path, "%s/counts.%d", dir, r);
    tl_file_read(path, buf, sizeof buf);
    CHECK(sscanf(buf, "%ld %ld %ld", &c, &d, &g) == 3, "rank %d wrote its counts", r);
    CHECK(c == 1 && d == 1, "rank %d created and destroyed one counting device (%ld, %ld)", r, c, d);
    /* 3 phases x 4 steps x 2 layers x 3 GEMMs, less the first layer's input gradient, at the least */
    CHECK(g >= 3 * 4 * (2 * 3 - 1) - 4, "rank %d ran the engine's GEMMs on it: %ld", r, g);
  }
  snprintf(cmd, sizeof cmd, "timeout 300 %s -np 2 --oversubscribe %s --child --device cpu %s --json %s/cpu.json", mpiexec,
           self, model, dir);
  rc = tl_capture(cmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 0, "the same run on the CPU device: exit %d\n%s", rc, err);
  snprintf(path, sizeof path, "%s/cpu.json", dir);
  result_of(path, dev_b, b, sizeof b);
  CHECK(!strcmp(dev_b, "cpu") && a[0] && !strcmp(a, b), "the same weights on both devices: %s and %s", a, b);
  tl_rmtree(dir);
  return check_summary();
}
