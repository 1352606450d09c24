/* bucket.h: DDP's gradient bucket plan. Parameters are taken in reverse layer order (the order backward
 * produces their gradients); a bucket closes once its size reaches its cap; the first bucket has its own,
 * smaller cap (PyTorch: 1 MiB) and every later one the main cap (25 MiB); a parameter is never split, so a
 * bucket may overshoot its cap by up to one parameter. Pure planning: no allocation of gradient memory. */
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

/* Plans buckets for nparams parameters of counts[i] elements each (given in gradient-ready order), of
 * elem_size bytes per element, with caps in bytes. Returns DDP_ERR_SYSTEM on allocation failure. */
ddp_result bucket_plan_build(bucket_plan *p, const size_t *counts, int nparams, size_t elem_size,
                             size_t first_cap_bytes, size_t cap_bytes);
void bucket_plan_free(bucket_plan *p);

#ifdef __cplusplus
}
#endif
#endif
