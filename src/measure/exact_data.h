/* exact_data.h: the data of `ddpbench collectives`' checks. Every value is a small non-negative integer, exact
 * in every type, chosen so that every reduction is exact in any order of evaluation (avg: within 2 ULP in
 * floating types, as nccl-tests allows) and each expected element is computed in O(1): a check compares every
 * element of the receive buffer with the value it must have. Large buffers are filled and compared on several
 * threads. What a call must not write (recv off the root of reduce and gather, alltoallv's tail) is expected to
 * keep what the check put there: UNTOUCHED bytes, or the rank's input in place. Pure: no device, no
 * communication.
 *
 * defines: data_spec, wrong_info, UNTOUCHED, data_init, data_free, expect_at, same, data_pass */
#ifndef DDPBENCH_EXACT_DATA_H
#define DDPBENCH_EXACT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  ddp_coll_kind kind;
  ddp_redop op;
  ddp_dtype dt;
  int n, rank, root;
  size_t count;
  uint64_t seed;
  long K;
  int sparse;
  long c3; /* sum over r < n of r % 3 */
  int inplace;
  size_t *a2av; /* alltoallv: where each sender's part starts here (n + 1), where ours starts in its buffer (n),
                 * and its count (n) */
} data_spec;

/* The byte a check fills the receive buffer with before the call (no valid result but uint8 255). */
enum { UNTOUCHED = 0xff };

/* What a compare found: how many elements are wrong, the first of them (-1 when none) and its value. */
typedef struct {
  long long wrong;
  long long first; /* element of the receive buffer, -1 when none */
  double got, want;
} wrong_info;

/* The data of one collective call on `rank` of n (count as NCCL's count argument; counts: alltoallv's n x n
 * matrix, read here only), in place or not, from seed. Frees nothing it was given; data_free frees what it made. */
ddp_result data_init(data_spec *d, ddp_coll_kind kind, ddp_redop op, ddp_dtype dt, int n, int rank, int root,
                     size_t count, int inplace, const size_t *counts, uint64_t seed);
void data_free(data_spec *d);
/* Expected element k of this rank's receive buffer, stored into out[0] in the buffer's type. */
void expect_at(const data_spec *d, size_t k, void *out);
/* Bit-exact, or within 2 ULP for avg in floating types. */
int same(const data_spec *d, const void *got, const void *want);
/* Fills buf[0, n) with this rank's send data (compare = 0) or compares it with the expected values (compare = 1,
 * result in *w), on up to `threads` threads when n is large. */
void data_pass(const data_spec *d, void *buf, size_t n, int compare, int threads, wrong_info *w);

#ifdef __cplusplus
}
#endif
#endif
