/* bucket.h: DDP's gradient bucket plan, as PyTorch rebuilds it after the first iteration. Parameters are
 * taken in gradient-ready order (reverse layer order for this model); a bucket closes once its size reaches
 * its cap; the first bucket has its own cap and every later one the main cap; a parameter is never split, so
 * a bucket may overshoot its cap by up to one parameter. The caps are PyTorch's: 1 MiB then 25 MiB by
 * default, and with an explicit bucket_cap_mb the first bucket takes that cap too (config.c applies that
 * rule; tests/mpi/test_conformance.c checks the plans against PyTorch's own). Pure planning: no allocation of
 * gradient memory. */
#ifndef DDPBENCH_BUCKET_H
#define DDPBENCH_BUCKET_H

#include <stddef.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int first_param, nparams; /* indices into the planning order (0 = the last layer's weight) */
  size_t offset;            /* element offset of the bucket in the flat gradient buffer */
  size_t count;             /* elements */
  size_t bytes;             /* count * element size of the planning type */
} ddp_bucket;

typedef struct {
  int nbuckets;
  ddp_bucket *buckets;
  size_t total_count;
} bucket_plan;

/* A cap in MiB as bytes, as PyTorch computes it: int(mib * 1024 * 1024). */
static inline size_t bucket_cap_bytes(double mib) { return (size_t)(mib * 1048576.0); }

/* Plans buckets for nparams parameters of counts[i] elements each (given in gradient-ready order), of
 * elem_size bytes per element, with caps in bytes. Returns DDP_ERR_SYSTEM on allocation failure. */
ddp_result bucket_plan_build(bucket_plan *p, const size_t *counts, int nparams, size_t elem_size,
                             size_t first_cap_bytes, size_t cap_bytes);
void bucket_plan_free(bucket_plan *p);

#ifdef __cplusplus
}
#endif
#endif
