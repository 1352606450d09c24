/* collectives.h: `ddpbench collectives`, an nccl-tests-compatible size sweep of allreduce, reduce_scatter,
 * all_gather, broadcast and alltoall through the comm interface (NCCL or MPI), with exact data checks and
 * the same collectives timed while a GEMM loop runs beside them. The options, the table and the busbw
 * factors are nccl-tests'; what it adds is described in collectives.c and the README. */
#ifndef DDPBENCH_COLLECTIVES_H
#define DDPBENCH_COLLECTIVES_H

#include <stddef.h>

#include "comm.h"
#include "measure.h"

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

/* The allreduce sweep as a measurement over a group (measure.h), for jobs built from measurements: records
 * of measurement "collectives" as the subcommand writes them. Not in measure.c's table: register it
 * (measure_register) or add it there. */
extern const measurement measure_collectives;

#ifdef __cplusplus
}
#endif
#endif
