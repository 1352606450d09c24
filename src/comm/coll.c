/* coll.c: the collectives' names, nccl-tests' byte accounting and alltoallv's traffic matrix (coll.h). */
#include "coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const COLL_NAMES[COLL_COUNT] = {"allreduce", "reduce_scatter", "all_gather", "broadcast",
                                                   "alltoall",  "reduce",         "gather",     "scatter",
                                                   "sendrecv",  "alltoallv"};
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
    case COLL_ALLTOALLV: /* the uniform matrix (skew 0); coll_sizes_alltoallv for another */
      z.count = per;
      z.send_count = z.recv_count = per * n;
      z.base_bytes = (double)per * n * es;
      z.bus_factor = (double)(n - 1) / n;
      break;
    case COLL_GATHER: /* nccl-tests' gather_perf: sendcount per rank, the root receives n of them */
      z.count = z.send_count = per;
      z.recv_count = per * n;
      z.base_bytes = (double)per * n * es;
      z.bus_factor = (double)(n - 1) / n;
      break;
    case COLL_SCATTER:
      z.count = z.recv_count = per;
      z.send_count = per * n;
      z.base_bytes = (double)per * n * es;
      z.bus_factor = (double)(n - 1) / n;
      break;
    default: /* broadcast, reduce, sendrecv: count elements, factor 1 (reduce_perf, sendrecv_perf) */
      z.count = z.send_count = z.recv_count = count;
      z.base_bytes = (double)count * es;
      z.bus_factor = 1.0;
      break;
  }
  z.size_bytes = (z.send_count > z.recv_count ? z.send_count : z.recv_count) * es;
  return z;
}

/* splitmix64: the matrix's random numbers, the same on every rank */
static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void coll_alltoallv_matrix(size_t *m, int n, size_t total, double skew, uint64_t seed) {
  int *p = malloc((size_t)n * sizeof *p);
  double *w = malloc((size_t)n * sizeof *w);
  if (!p || !w) { /* no memory for the weights: the uniform matrix */
    for (size_t k = 0; k < (size_t)n * n; k++) m[k] = total / (size_t)n;
    free(p), free(w);
    return;
  }
  for (int j = 0; j < n; j++) p[j] = j;
  for (int j = n - 1; j > 0; j--) { /* Fisher-Yates from the seed: which rank is hot */
    int k = (int)(mix(seed ^ 0x5ca1ab1eull ^ ((uint64_t)j << 32)) % (uint64_t)(j + 1)), t = p[j];
    p[j] = p[k], p[k] = t;
  }
  double a = (skew < 1 ? skew : 1) / 4;
  for (int i = 0; i < n; i++) {
    double sum = 0;
    for (int j = 0; j < n; j++) {
      double u = (double)(mix(seed * 0x100000001B3ull + (uint64_t)i * (uint64_t)n + (uint64_t)j) >> 11) / 9007199254740992.0;
      w[j] = pow(1.0 + p[j], -skew) * (1 + a * (2 * u - 1));
      sum += w[j];
    }
    for (int j = 0; j < n; j++) {
      double share = skew == 0 ? (double)(total / (size_t)n) : floor((double)total * (w[j] / sum));
      m[(size_t)i * n + j] = (size_t)share;
    }
  }
  free(p), free(w);
}

coll_sizes coll_sizes_alltoallv(const size_t *m, int n, size_t es, size_t count) {
  coll_sizes z;
  memset(&z, 0, sizeof z);
  z.count = count;
  for (int r = 0; r < n; r++) {
    size_t s = 0, v = 0;
    for (int k = 0; k < n; k++) s += m[(size_t)r * n + k], v += m[(size_t)k * n + r];
    if (s > z.send_count) z.send_count = s;
    if (v > z.recv_count) z.recv_count = v;
  }
  z.size_bytes = (z.send_count > z.recv_count ? z.send_count : z.recv_count) * es;
  z.base_bytes = (double)z.size_bytes;
  z.bus_factor = (double)(n - 1) / n;
  return z;
}

int coll_parse(const char *v, ddp_coll_kind *kind) {
  static const struct { const char *name; int k; } T[] = {
      {"allreduce", COLL_ALLREDUCE},          {"all_reduce", COLL_ALLREDUCE},    {"all-reduce", COLL_ALLREDUCE},
      {"reduce_scatter", COLL_REDUCE_SCATTER}, {"reducescatter", COLL_REDUCE_SCATTER},
      {"reduce-scatter", COLL_REDUCE_SCATTER}, {"all_gather", COLL_ALL_GATHER}, {"allgather", COLL_ALL_GATHER},
      {"all-gather", COLL_ALL_GATHER},         {"broadcast", COLL_BROADCAST},    {"bcast", COLL_BROADCAST},
      {"alltoall", COLL_ALLTOALL},             {"all_to_all", COLL_ALLTOALL},    {"all-to-all", COLL_ALLTOALL},
      {"reduce", COLL_REDUCE},                 {"gather", COLL_GATHER},          {"scatter", COLL_SCATTER},
      {"sendrecv", COLL_SENDRECV},             {"send_recv", COLL_SENDRECV},     {"send-recv", COLL_SENDRECV},
      {"alltoallv", COLL_ALLTOALLV},           {"all_to_allv", COLL_ALLTOALLV},  {"all-to-allv", COLL_ALLTOALLV}};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
    if (strcasecmp(v, T[i].name) == 0) return *kind = (ddp_coll_kind)T[i].k, 1;
  return 0;
}
