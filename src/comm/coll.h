/* coll.h: the collectives of the comm interface by name, as nccl-tests spells them, and nccl-tests' accounting
 * of their bytes and bandwidth (its getCollByteCount and *GetBw), so that every busbw ddpbench prints means
 * what nccl-tests' does; and alltoallv's traffic matrix. Pure: no communication.
 *
 * defines: coll_sizes, coll_sizes_for, coll_alltoallv_matrix, coll_sizes_alltoallv, coll_name, redop_name,
 *          coll_parse */
#ifndef DDPBENCH_COLL_H
#define DDPBENCH_COLL_H

#include <stddef.h>
#include <stdint.h>

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

/* alltoallv's traffic matrix, MoE-shaped: every rank sends about `total` elements (a rank's share of tokens),
 * split over the receivers (the experts' ranks) by weight
 *   w(i, j) = (1 + p(j))^-skew * (1 + a * (2 u(i, j) - 1)),   a = min(skew, 1) / 4,
 *   m[i * n + j] = floor(total * w(i, j) / sum_k w(i, k)),
 * where p is a permutation of the ranks drawn from seed (p(j) = 0: the most popular receiver, Zipf's law over
 * the rest) and u(i, j) in [0, 1) a hash of (seed, i, j): the per-sender routing noise, +-25 % at skew >= 1.
 * skew 0 is alltoall's uniform matrix (total / n each, when n divides total); skew 1 sends the hottest rank
 * about n / H(n) times its share (H: the harmonic number; 2.9x on 8 ranks). Row sums are at most total; every
 * entry is non-decreasing in total, so the matrix of the largest size bounds every smaller one. */
void coll_alltoallv_matrix(size_t *m, int n, size_t total, double skew, uint64_t seed);
/* nccl-tests' alltoallv accounting for matrix m (elements): count = per-peer count of the uniform case (the
 * count column, nccl-tests' paramcount), send_count/recv_count = the largest total any rank sends/receives,
 * size_bytes = base_bytes = the larger of those two in bytes (the busiest rank's traffic), bus_factor (n-1)/n. */
coll_sizes coll_sizes_alltoallv(const size_t *m, int n, size_t elem_size, size_t count);
const char *coll_name(ddp_coll_kind kind);  /* "allreduce", ... */
const char *redop_name(ddp_redop op);       /* "sum", "prod", "max", "min", "avg" */
/* A collective's name in any of nccl-tests' and ddpbench's spellings ("all_gather", "allgather", "all-gather");
 * a type's ("float", "fp32", "bf16", "int64", ...). 1 when found, 0 else. */
int coll_parse(const char *name, ddp_coll_kind *kind);

#ifdef __cplusplus
}
#endif
#endif
