/* coll.h: the collectives of the comm interface by name, as nccl-tests spells them, and nccl-tests' accounting
 * of their bytes and bandwidth (its getCollByteCount and *GetBw), so that every busbw ddpbench prints means
 * what nccl-tests' does. Pure: no communication.
 *
 * defines: coll_sizes, coll_sizes_for, coll_name, redop_name, coll_parse */
#ifndef DDPBENCH_COLL_H
#define DDPBENCH_COLL_H

#include <stddef.h>

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* nccl-tests' accounting for one collective at `bytes` on n ranks (its getCollByteCount and *GetBw):
 * count = the count argument, *size_bytes = the size column (max of send and receive bytes), and
 * algbw = base_bytes / time, busbw = algbw * bus_factor. */
typedef struct {
  size_t count, send_count, recv_count, size_bytes;
  double base_bytes, bus_factor;
} coll_sizes;
coll_sizes coll_sizes_for(ddp_coll_kind kind, size_t bytes, size_t elem_size, int n);
const char *coll_name(ddp_coll_kind kind);  /* "allreduce", ... */
const char *redop_name(ddp_redop op);       /* "sum", "prod", "max", "min", "avg" */
/* A collective's name in any of nccl-tests' and ddpbench's spellings ("all_gather", "allgather", "all-gather");
 * a type's ("float", "fp32", "bf16", "int64", ...). 1 when found, 0 else. */
int coll_parse(const char *name, ddp_coll_kind *kind);

#ifdef __cplusplus
}
#endif
#endif
