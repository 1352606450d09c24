/* bucket.c: bucket_plan_build, PyTorch's compute_bucket_assignment_by_size for one dtype and device. */
#include "bucket.h"

#include <stdlib.h>

ddp_result bucket_plan_build(bucket_plan *p, const size_t *counts, int nparams, size_t elem_size,
                             size_t first_cap_bytes, size_t cap_bytes) {
  p->nbuckets = 0;
  p->total_count = 0;
  p->buckets = calloc(nparams > 0 ? (size_t)nparams : 1, sizeof *p->buckets); /* at most one per param */
  DDP_CHECK_ALLOC(p->buckets);
  ddp_bucket *cur = NULL;
  for (int i = 0; i < nparams; i++) {
    if (!cur) {
      cur = &p->buckets[p->nbuckets++];
      cur->first_param = i;
      cur->offset = p->total_count;
    }
    cur->nparams++;
    cur->count += counts[i];
    cur->bytes += counts[i] * elem_size;
    p->total_count += counts[i];
    size_t cap = p->nbuckets == 1 ? first_cap_bytes : cap_bytes;
    if (cur->bytes >= cap) cur = NULL; /* close: the next parameter opens a new bucket */
  }
  return DDP_OK;
}

void bucket_plan_free(bucket_plan *p) {
  free(p->buckets);
  p->buckets = NULL;
  p->nbuckets = 0;
}
