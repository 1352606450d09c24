/* placement.h: which device and comm every rank of a job uses, chosen once, collectively, from the device and
 * comm tables (device.h, comm.h), with the same rules for every subcommand:
 *   --device auto takes the GPU device when every rank sees a GPU, else the CPU device on every rank (said
 *     once); a rank that sees no GPU on a host that has one CUDA cannot use is a failing check ("gpu-not-used",
 *     with the causes), never a quiet fall back to the CPU;
 *   --device NAME on a rank that sees none of them is bad input naming the rank and host;
 *   --comm auto takes the comm made for the device (nccl on cuda), else the first that needs no device; a comm
 *     made for one device refuses another and refuses two ranks on one GPU;
 *   the GPU is the local rank modulo the GPUs this process sees (CUDA_VISIBLE_DEVICES is honoured by CUDA).
 * The option table of --device and --comm is here too, over a placement_choice.
 *
 * defines: placement_choice, placement_table, placement, placement_{choose,create} */
#ifndef DDPBENCH_PLACEMENT_H
#define DDPBENCH_PLACEMENT_H

#include "comm.h"
#include "device.h"
#include "dist.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int device, comm; /* the option layer's values: 0 auto, else the table entry + 1 (device_chosen, comm_chosen) */
} placement_choice;

/* --device and --comm, their choices from the tables. */
extern const opt_table placement_table;
/* --device alone (subcommands that make no comm of their own choice). */
extern const opt_table placement_device_table;

typedef struct {
  const device_entry *device;
  const comm_entry *comm; /* NULL when the subcommand asked for no comm */
  int ordinal;            /* the device this rank uses, -1 on the CPU device */
  char bus_id[32];        /* its PCI id ("" on the CPU device) */
} placement;

/* Collective over d->world. need_comm: choose a comm too. DDP_ERR_USAGE (one line, on every rank alike) for a
 * choice that cannot be honoured, DDP_ERR_EXPECT when a host has a GPU that cannot be used (each cause printed
 * as a failing check by the rank that found it); both are decided collectively. cpu_note: what the notice says
 * the CPU device does instead when auto found no GPU (NULL: the default "running on the CPU device"). */
ddp_result placement_choose(const ddp_dist *d, const placement_choice *want, int need_comm, const char *cpu_note,
                            placement *pl);
/* Creates this rank's device (cpu_threads: OpenBLAS threads on the CPU device, 0 = the rank's share of its
 * cores) and, when pl->comm, the comm over mpi. Not collective for the device; the comm is collective. */
ddp_result placement_create(const placement *pl, const ddp_dist *d, int cpu_threads, MPI_Comm mpi, ddp_device **dev,
                            ddp_comm **comm);
/* OpenBLAS threads for this rank: the cores it is bound to, or the machine's share of the ranks on it. */
int placement_cpu_threads(const ddp_dist *d);

#ifdef __cplusplus
}
#endif
#endif
