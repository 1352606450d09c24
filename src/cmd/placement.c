/* placement.c: the one choice of device and comm (placement.h), from the tables. */
#include "placement.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const opt_spec PLACEMENT[] = {
    {"device", NULL, 0, OPT_ENUM, offsetof(placement_choice, device), 0, "auto", .choice = device_choice,
     .help = "auto = the GPU device when every rank sees a GPU, else cpu"},
    {"comm", NULL, 0, OPT_ENUM, offsetof(placement_choice, comm), 0, "auto", .choice = comm_choice,
     .help = "auto = the comm made for the device (nccl on cuda), else mpi"},
};
const opt_table placement_table = {"device and comm", PLACEMENT, 2};
const opt_table placement_device_table = {"device", PLACEMENT, 1};

int placement_cpu_threads(const ddp_dist *d) {
  cpu_set_t set;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (sched_getaffinity(0, sizeof set, &set) != 0 || online < 1) return 1;
  int mine = CPU_COUNT(&set);
  int n = mine < online ? mine : (int)(online / d->local_size);
  return n > 0 ? n : 1;
}

/* On a rank that sees no GPU where one was wanted or could be: 1 when this host has one that cannot be used,
 * each cause printed as a failing check. */
static int gpu_not_used(const ddp_dist *d) {
  char causes[8][256];
  int n = devices_not_used(causes, 8);
  for (int i = 0; i < n; i++)
    fprintf(stderr, "ddpbench: FAIL gpu-not-used: rank %d host %s: %s\n", d->rank, d->host, causes[i]);
  return n > 0;
}

ddp_result placement_choose(const ddp_dist *d, const placement_choice *want, int need_comm, const char *cpu_note,
                            placement *pl) {
  memset(pl, 0, sizeof *pl);
  pl->ordinal = -1;
  const device_entry *asked = device_chosen(want->device); /* NULL: auto */
  const device_entry *gpu = asked ? (asked->is_gpu ? asked : NULL) : device_gpu(); /* NULL: none wanted or built */
  int ngpu = gpu ? gpu->available() : 0, min_gpu = ngpu, max_gpu = ngpu;
  DDP_TRY(dist_allreduce_int(d, &min_gpu, MPI_MIN));
  DDP_TRY(dist_allreduce_int(d, &max_gpu, MPI_MAX));
  /* auto takes the CPU only where no host has a GPU: one that cannot be used is a finding, not a fall back */
  int blocked = !(asked && !asked->is_gpu) && ngpu == 0 && gpu_not_used(d);
  DDP_TRY(dist_allreduce_int(d, &blocked, MPI_MAX));
  if (blocked) return DDP_ERR_EXPECT;
  const device_entry *de = asked;
  if (!de) {
    de = min_gpu > 0 ? gpu : device_host();
    if (!de->is_gpu)
      ddp_notice(max_gpu > 0 ? "some ranks see no GPU: running on the CPU device (%s) on every rank%s%s"
                             : "no GPU visible: running on the CPU device (%s)%s%s",
                 de->name, cpu_note ? ": " : "", cpu_note ? cpu_note : "");
  }
  pl->device = de;
  if (de->is_gpu && min_gpu == 0) {
    if (ngpu == 0)
      fprintf(stderr, "ddpbench: --device %s: rank %d on %s sees no GPU (CUDA_VISIBLE_DEVICES=%s)\n", de->name, d->rank,
              d->host, getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    return DDP_ERR_USAGE;
  }
  if (need_comm) {
    const comm_entry *ce = want->comm ? comm_chosen(want->comm) : comm_auto(de->name);
    if (!ce) return ddp_usage_error("--comm: no comm in this build works with the %s device", de->name);
    if (ce->needs_device && strcmp(ce->needs_device, de->name) != 0)
      return asked ? ddp_usage_error("--comm %s needs the %s device, not --device %s", ce->name, ce->needs_device,
                                     de->name)
                   : ddp_usage_error("--comm %s needs the %s device, and no rank sees a GPU (the CPU device was "
                                     "chosen)", ce->name, ce->needs_device);
    pl->comm = ce;
    if (de->is_gpu && ce->needs_device) { /* a comm made for the device (NCCL) refuses two ranks on one GPU */
      int bad = d->local_size > ngpu;
      if (bad && d->local_rank == 0)
        fprintf(stderr, "ddpbench: host %s has %d ranks but %d visible GPU%s: %s needs one GPU per rank (start fewer "
                        "ranks per node, or use --comm mpi to share GPUs)\n",
                d->host, d->local_size, ngpu, ngpu == 1 ? "" : "s", ce->name);
      DDP_TRY(dist_allreduce_int(d, &bad, MPI_MAX));
      if (bad) return DDP_ERR_USAGE;
    }
  }
  if (!de->is_gpu) return DDP_OK;
  pl->ordinal = d->local_rank % ngpu;
  return de->bus_id ? de->bus_id(pl->ordinal, pl->bus_id, sizeof pl->bus_id) : DDP_OK;
}

ddp_result placement_create(const placement *pl, const ddp_dist *d, int cpu_threads, MPI_Comm mpi, ddp_device **dev,
                            ddp_comm **comm) {
  *dev = NULL;
  if (comm) *comm = NULL;
  DDP_TRY(pl->device->create(dev, pl->ordinal, cpu_threads > 0 ? cpu_threads : placement_cpu_threads(d)));
  if (comm && pl->comm) DDP_TRY(pl->comm->create(comm, mpi, *dev));
  return DDP_OK;
}
