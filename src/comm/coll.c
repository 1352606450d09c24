/* coll.c: the collectives' names and nccl-tests' byte accounting (coll.h). */
#include "coll.h"

#include <string.h>
#include <strings.h>

static const char *const COLL_NAMES[COLL_COUNT] = {"allreduce", "reduce_scatter", "all_gather", "broadcast",
                                                   "alltoall"};
static const char *const REDOP_NAMES[REDOP_COUNT] = {"sum", "prod", "max", "min", "avg"};

const char *coll_name(ddp_coll_kind k) { return (unsigned)k < COLL_COUNT ? COLL_NAMES[k] : "?"; }
const char *redop_name(ddp_redop op) { return (unsigned)op < REDOP_COUNT ? REDOP_NAMES[op] : "?"; }

coll_sizes coll_sizes_for(ddp_coll_kind kind, size_t bytes, size_t es, int n) {
  coll_sizes z;
  memset(&z, 0, sizeof z);
  size_t count = bytes / es, per = count / (size_t)n;
  switch (kind) {
    case COLL_ALLREDUCE:
      z.count = z.send_count = z.recv_count = count;
      z.base_bytes = (double)count * es;
      z.bus_factor = 2.0 * (n - 1) / n;
      break;
    case COLL_REDUCE_SCATTER:
      z.count = z.recv_count = per;
      z.send_count = per * n;
      z.base_bytes = (double)per * es * n;
      z.bus_factor = (double)(n - 1) / n;
      break;
    case COLL_ALL_GATHER:
      z.count = z.send_count = per;
      z.recv_count = per * n;
      z.base_bytes = (double)per * es * n;
      z.bus_factor = (double)(n - 1) / n;
      break;
    case COLL_ALLTOALL:
      z.count = per;
      z.send_count = z.recv_count = per * n;
      z.base_bytes = (double)per * n * es;
      z.bus_factor = (double)(n - 1) / n;
      break;
    default: /* broadcast */
      z.count = z.send_count = z.recv_count = count;
      z.base_bytes = (double)count * es;
      z.bus_factor = 1.0;
      break;
  }
  z.size_bytes = (z.send_count > z.recv_count ? z.send_count : z.recv_count) * es;
  return z;
}


int coll_parse(const char *v, ddp_coll_kind *kind) {
  static const struct { const char *name; int k; } T[] = {
      {"allreduce", COLL_ALLREDUCE},          {"all_reduce", COLL_ALLREDUCE},    {"all-reduce", COLL_ALLREDUCE},
      {"reduce_scatter", COLL_REDUCE_SCATTER}, {"reducescatter", COLL_REDUCE_SCATTER},
      {"reduce-scatter", COLL_REDUCE_SCATTER}, {"all_gather", COLL_ALL_GATHER}, {"allgather", COLL_ALL_GATHER},
      {"all-gather", COLL_ALL_GATHER},         {"broadcast", COLL_BROADCAST},    {"bcast", COLL_BROADCAST},
      {"alltoall", COLL_ALLTOALL},             {"all_to_all", COLL_ALLTOALL},    {"all-to-all", COLL_ALLTOALL}};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
    if (strcasecmp(v, T[i].name) == 0) return *kind = (ddp_coll_kind)T[i].k, 1;
  return 0;
}
