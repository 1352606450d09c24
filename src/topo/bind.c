/* bind.c: binds the calling process's CPUs and memory near its GPU with hwloc, and says what it did
 * ("bound to ...", "flat: ...", "none: ..."). Only the live topology can be bound; nothing here fails unless
 * --bind gpu was asked explicitly and the CPU binding was refused. */
#include "topo.h"

#include <errno.h>
#include <string.h>

static void cpubind_list(hwloc_topology_t topo, hwloc_bitmap_t set, char *buf, size_t n) {
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
    hwloc_bitmap_list_snprintf(buf, n, set);
  else
    snprintf(buf, n, "? (%s)", strerror(errno));
}

ddp_result topo_bind_apply(hwloc_topology_t topo, hwloc_obj_t gpu, int mode, topo_bind *b) {
  memset(b, 0, sizeof *b);
  b->mode = mode;
  b->near = -1;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  DDP_CHECK_ALLOC(set);
  cpubind_list(topo, set, b->before, sizeof b->before);
  if (!gpu) {
    snprintf(b->after, sizeof b->after, "%s", b->before);
    snprintf(b->what, sizeof b->what, "none: no GPU to bind near; cpus %s as launched", b->before);
    hwloc_bitmap_free(set);
    return DDP_OK;
  }
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, gpu);
  char cpus[128], numa[32];
  hwloc_bitmap_list_snprintf(cpus, sizeof cpus, anc->cpuset);
  hwloc_bitmap_list_snprintf(numa, sizeof numa, anc->nodeset);
  b->flat = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE) <= 1 ||
            hwloc_bitmap_isequal(anc->cpuset, hwloc_topology_get_topology_cpuset(topo));
  if (mode == 0) {
    snprintf(b->what, sizeof b->what, "none (--bind none): cpus %s as launched; GPU-local cpus %s", b->before, cpus);
  } else if (b->flat) {
    snprintf(b->what, sizeof b->what, "flat (no CPU/NUMA locality for this GPU): cpus %s as launched", b->before);
  } else if (hwloc_set_cpubind(topo, anc->cpuset, HWLOC_CPUBIND_PROCESS) != 0) {
    const char *e = strerror(errno);
    if (mode == 1) {
      hwloc_bitmap_free(set);
      return DDP_FAIL(DDP_ERR_HWLOC, "--bind gpu: binding to the GPU-local cpus %s failed: %s (use --bind none)", cpus,
                      e);
    }
    snprintf(b->what, sizeof b->what, "not bound: hwloc_set_cpubind(%s): %s; cpus %s as launched", cpus, e, b->before);
  } else {
    b->bound = 1;
    /* Without PROCESS/THREAD flags hwloc binds this thread's policy on Linux; threads created later (CUDA,
     * NCCL) inherit it. */
    if (hwloc_set_membind(topo, anc->nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET) == 0)
      snprintf(b->what, sizeof b->what, "bound to GPU-local cpus %s and NUMA node %s", cpus, numa);
    else
      snprintf(b->what, sizeof b->what, "bound to GPU-local cpus %s; memory not bound (hwloc_set_membind: %s)", cpus,
               strerror(errno));
  }
  cpubind_list(topo, set, b->after, sizeof b->after);
  b->near = b->flat || hwloc_bitmap_intersects(set, anc->cpuset);
  hwloc_bitmap_free(set);
  return DDP_OK;
}
