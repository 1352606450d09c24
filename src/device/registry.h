/* registry.h: the devices and comms this build has, as tables of {name, available(), create(), versions()}.
 * Placement, creation and the versions report come from these tables; a device (HIP) or a transport (UCC)
 * is added by one entry here and its own file. Entries for parts a build lacks (cuda and nccl without the
 * CUDA toolkit) are simply absent. Nothing here measures or prints.
 *
 * defines: device_entry, comm_entry, registry_{device,device_at,device_named,device_gpu,device_host,
 *          device_choice,comm,comm_at,comm_named,comm_auto,comm_choice,versions} */
#ifndef DDPBENCH_REGISTRY_H
#define DDPBENCH_REGISTRY_H

#include <mpi.h>

#include "comm.h"
#include "config.h"
#include "device.h"
#include "versions.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *name;        /* as --device spells it */
  ddp_device_kind kind;
  int is_gpu;              /* one per rank, chosen by local rank; binds near it */
  int (*available)(void);  /* devices this process sees (0: none; never fails) */
  ddp_result (*create)(ddp_device **out, int ordinal, int cpu_threads);
  ddp_result (*bus_id)(int ordinal, char *buf, size_t n); /* PCI id before any context, or NULL */
  void (*versions)(ddp_versions *v); /* fills the fields of the libraries it loaded, or NULL */
} device_entry;

typedef struct {
  const char *name;        /* as --comm spells it */
  ddp_comm_kind kind;
  const char *needs_device; /* the device it works with only ("cuda"), or NULL for any */
  ddp_result (*create)(ddp_comm **out, MPI_Comm mpi_comm, ddp_device *dev);
  void (*versions)(ddp_versions *v);
} comm_entry;

/* NULL when this build has no such device / comm. */
const device_entry *registry_device(ddp_device_kind kind);
const device_entry *registry_device_at(int i); /* NULL past the end */
const comm_entry *registry_comm(ddp_comm_kind kind);
const comm_entry *registry_comm_at(int i);
/* By name as --device / --comm spell it; NULL when this build has none. */
const device_entry *registry_device_named(const char *name);
const comm_entry *registry_comm_named(const char *name);
/* The GPU device --device auto prefers (the first entry with is_gpu), or NULL in a build without one; the
 * first device without is_gpu (cpu) for when no GPU is visible. */
const device_entry *registry_device_gpu(void);
const device_entry *registry_device_host(void);
/* The comm --comm auto picks on device dev: one that needs exactly this device, else the first that needs none. */
const comm_entry *registry_comm_auto(const device_entry *dev);
/* The choices of --device / --comm for config.c's table: choice 0 is "auto" (kind 0), choice i the table's
 * entry i-1. Returns the kind stored for choice i and sets *name, or -1 past the end. */
int registry_device_choice(int i, const char **name);
int registry_comm_choice(int i, const char **name);
/* Every entry's versions() into v (the plug-ins' own fields; versions_collect does the rest). */
void registry_versions(ddp_versions *v);

#ifdef __cplusplus
}
#endif
#endif
