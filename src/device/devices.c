/* devices.c: the table of devices. One line per device; the CUDA one exists only in a CUDA build. Tests add
 * their own with device_register. Nothing here measures or prints. */
#include "device.h"

#include <string.h>

#include "gpu_diag.h"

static int cpu_available(void) { return 1; }
static ddp_result cpu_create(ddp_device **out, int ordinal, int threads) {
  (void)ordinal;
  return device_cpu_create(out, threads);
}

#ifdef DDPBENCH_HAVE_CUDA
static ddp_result cuda_create(ddp_device **out, int ordinal, int threads) {
  (void)threads;
  return device_cuda_create(out, ordinal);
}
#endif

static const device_entry BUILTIN[] = {
    /* cpu: steps of >= 1 ms (a scheduler tick is 1-4 ms); floor 200 %: ranks share cores with each other and
     * with the machine's other work, and a rank sharing its core with k others is k+1 times slower. 160
     * identical healthy runs on the 2-core CI machine showed up to +101 % (docs/straggler.md).
     * Steady state: no settling by time (no clocks or power to settle, and CI runs hundreds of jobs); the same
     * 200 % drift floor, since the other work on the machine comes and goes within a run as between runs. */
    {"cpu", 0, cpu_available, cpu_create, NULL, NULL, NULL, 1.0, 200, 0, 200},
#ifdef DDPBENCH_HAVE_CUDA
    /* cuda: steps of >= 0.1 ms (5 % of it is 5 us, ten times CUDA events' resolution); no floor measured yet
     * beyond --straggler-pct (docs/straggler.md). Steady state: 2 s of the phase's own workload first (a cold
     * H200 took about 0.8 s to reach its step time); a drift floor of 4 %: under the power cap the 8192^3
     * presets' step time moves between two levels about 5 % apart once a second or so, and the 20-step halves
     * of healthy runs differed by up to 3.4 % (4.6 % right after the sustained peak GEMM);
     * results/2026-12-02-h200x1-order. */
    {"cuda", 1, device_cuda_count, cuda_create, device_cuda_bus_id, device_cuda_versions, device_cuda_peer_matrix,
     0.1, 0, 2, 4},
#endif
};
enum { NBUILTIN = sizeof BUILTIN / sizeof BUILTIN[0], MAX_EXTRA = 4 };
static const device_entry *extra[MAX_EXTRA];
static int nextra;

const device_entry *device_at(int i) {
  if (i >= 0 && i < NBUILTIN) return &BUILTIN[i];
  if (i >= NBUILTIN && i < NBUILTIN + nextra) return extra[i - NBUILTIN];
  return NULL;
}

const device_entry *device_named(const char *name) {
  const device_entry *e;
  for (int i = 0; (e = device_at(i)) != NULL; i++)
    if (strcmp(e->name, name) == 0) return e;
  return NULL;
}

ddp_result device_register(const device_entry *e) {
  if (!e || !e->name || !e->available || !e->create) return ddp_usage_error("device_register: an entry needs a name, available() and create()");
  if (device_named(e->name) || !strcmp(e->name, "auto")) return ddp_usage_error("device '%s' is registered twice", e->name);
  if (nextra == MAX_EXTRA) return ddp_usage_error("more than %d devices registered", MAX_EXTRA);
  extra[nextra++] = e;
  return DDP_OK;
}

static const device_entry *device_first(int is_gpu) {
  const device_entry *e;
  for (int i = 0; (e = device_at(i)) != NULL; i++)
    if (!e->is_gpu == !is_gpu) return e;
  return NULL;
}
const device_entry *device_gpu(void) { return device_first(1); }
const device_entry *device_host(void) { return device_first(0); }

int device_choice(int i, const char **name) {
  if (i == 0) return *name = "auto", 0;
  const device_entry *e = device_at(i - 1);
  if (!e) return -1;
  *name = e->name;
  return i;
}

const device_entry *device_chosen(int value) { return value > 0 ? device_at(value - 1) : NULL; }

void devices_versions(ddp_versions *v) {
  const device_entry *e;
  for (int i = 0; (e = device_at(i)) != NULL; i++)
    if (e->versions) e->versions(v);
}

int devices_not_used(char causes[][256], int max) { return gpu_diag_nvidia_not_used(causes, max); }
