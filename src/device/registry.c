/* registry.c: the tables. One line per device and per comm; the CUDA ones exist only in a CUDA build. */
#include "registry.h"

#include <stddef.h>
#include <string.h>

static int cpu_available(void) { return 1; }
static ddp_result cpu_create(ddp_device **out, int ordinal, int threads) { return device_cpu_create(out, threads); }

#ifdef DDPBENCH_HAVE_CUDA
static ddp_result cuda_create(ddp_device **out, int ordinal, int threads) { return device_cuda_create(out, ordinal); }
#endif

static const device_entry devices[] = {
    {"cpu", DEV_CPU, 0, cpu_available, cpu_create, NULL, NULL},
#ifdef DDPBENCH_HAVE_CUDA
    {"cuda", DEV_CUDA, 1, device_cuda_count, cuda_create, device_cuda_bus_id, device_cuda_versions},
#endif
};

static const comm_entry comms[] = {
    {"mpi", COMM_MPI, NULL, comm_mpi_create, NULL},
#ifdef DDPBENCH_HAVE_CUDA
    {"nccl", COMM_NCCL, "cuda", comm_nccl_create, comm_nccl_versions},
#endif
};

const device_entry *registry_device_at(int i) {
  return i >= 0 && (size_t)i < sizeof devices / sizeof devices[0] ? &devices[i] : NULL;
}
const comm_entry *registry_comm_at(int i) { return i >= 0 && (size_t)i < sizeof comms / sizeof comms[0] ? &comms[i] : NULL; }

const device_entry *registry_device(ddp_device_kind kind) {
  const device_entry *e;
  for (int i = 0; (e = registry_device_at(i)) != NULL; i++)
    if (e->kind == kind) return e;
  return NULL;
}

const comm_entry *registry_comm(ddp_comm_kind kind) {
  const comm_entry *e;
  for (int i = 0; (e = registry_comm_at(i)) != NULL; i++)
    if (e->kind == kind) return e;
  return NULL;
}

const device_entry *registry_device_named(const char *name) {
  const device_entry *e;
  for (int i = 0; (e = registry_device_at(i)) != NULL; i++)
    if (strcmp(e->name, name) == 0) return e;
  return NULL;
}

const comm_entry *registry_comm_named(const char *name) {
  const comm_entry *e;
  for (int i = 0; (e = registry_comm_at(i)) != NULL; i++)
    if (strcmp(e->name, name) == 0) return e;
  return NULL;
}

static const device_entry *device_first(int is_gpu) {
  const device_entry *e;
  for (int i = 0; (e = registry_device_at(i)) != NULL; i++)
    if (!e->is_gpu == !is_gpu) return e;
  return NULL;
}
const device_entry *registry_device_gpu(void) { return device_first(1); }
const device_entry *registry_device_host(void) { return device_first(0); }

const comm_entry *registry_comm_auto(const device_entry *dev) {
  const comm_entry *e, *any = NULL;
  for (int i = 0; (e = registry_comm_at(i)) != NULL; i++) {
    if (dev && e->needs_device && strcmp(e->needs_device, dev->name) == 0) return e;
    if (!e->needs_device && !any) any = e;
  }
  return any;
}

int registry_device_choice(int i, const char **name) {
  const device_entry *e = i > 0 ? registry_device_at(i - 1) : NULL;
  if (i == 0) *name = "auto";
  else if (e) *name = e->name;
  return i == 0 ? DEV_AUTO : e ? (int)e->kind : -1;
}

int registry_comm_choice(int i, const char **name) {
  const comm_entry *e = i > 0 ? registry_comm_at(i - 1) : NULL;
  if (i == 0) *name = "auto";
  else if (e) *name = e->name;
  return i == 0 ? COMM_AUTO : e ? (int)e->kind : -1;
}

void registry_versions(ddp_versions *v) {
  for (int i = 0; registry_device_at(i); i++)
    if (registry_device_at(i)->versions) registry_device_at(i)->versions(v);
  for (int i = 0; registry_comm_at(i); i++)
    if (registry_comm_at(i)->versions) registry_comm_at(i)->versions(v);
}
