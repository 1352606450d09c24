/* test_bucket: DDP's bucket plan: reverse order is the caller's, the first bucket's own cap, closing once a
 * cap is reached, parameters never split (overshoot), the leftover bucket. */
#include "bucket.h"
#include "check.h"

#define MiB (1024u * 1024u)

int main(void) {
  bucket_plan p;
  /* 10 parameters of 1 MiB of fp32 each, caps 1 MiB then 4 MiB: [1] [4] [4] [1 leftover]. */
  size_t c10[10];
  for (int i = 0; i < 10; i++) c10[i] = MiB / 4;
  CHECK(bucket_plan_build(&p, c10, 10, 4, 1 * MiB, 4 * MiB) == DDP_OK, "build");
  CHECK(p.nbuckets == 4, "4 buckets, got %d", p.nbuckets);
  int want_n[] = {1, 4, 4, 1};
  for (int b = 0; b < 4 && b < p.nbuckets; b++) CHECK(p.buckets[b].nparams == want_n[b], "bucket %d has %d params", b, p.buckets[b].nparams);
  CHECK(p.buckets[1].first_param == 1 && p.buckets[3].first_param == 9, "buckets follow the given order");
  CHECK(p.buckets[2].offset == 5 * (MiB / 4), "offset in elements");
  CHECK(p.total_count == 10 * (MiB / 4), "total");
  bucket_plan_free(&p);

  /* Parameters larger than the cap: one parameter per bucket, each overshooting it. */
  size_t big[3] = {64 * MiB / 4, 64 * MiB / 4, 64 * MiB / 4};
  CHECK(bucket_plan_build(&p, big, 3, 4, 1 * MiB, 25 * MiB) == DDP_OK, "build");
  CHECK(p.nbuckets == 3 && p.buckets[0].bytes == 64 * MiB, "overshoot: %d buckets, first %zu B", p.nbuckets, p.buckets[0].bytes);
  bucket_plan_free(&p);

  /* Small parameters fill a bucket until it reaches the cap, then the next opens: 3 x 0.4 MiB against a
   * 1 MiB first cap -> first bucket closes at 1.2 MiB (overshoot by one parameter). */
  size_t small[7];
  for (int i = 0; i < 7; i++) small[i] = (size_t)(0.4 * MiB) / 4;
  CHECK(bucket_plan_build(&p, small, 7, 4, 1 * MiB, 2 * MiB) == DDP_OK, "build");
  CHECK(p.nbuckets == 2 && p.buckets[0].nparams == 3 && p.buckets[1].nparams == 4,
        "%d buckets: %d + %d params", p.nbuckets, p.buckets[0].nparams, p.nbuckets > 1 ? p.buckets[1].nparams : -1);
  bucket_plan_free(&p);

  /* Exactly at the cap closes the bucket (>=, as PyTorch). */
  size_t exact[2] = {MiB / 4, MiB / 4};
  CHECK(bucket_plan_build(&p, exact, 2, 4, 1 * MiB, 25 * MiB) == DDP_OK, "build");
  CHECK(p.nbuckets == 2, "a bucket reaching its cap exactly closes: %d", p.nbuckets);
  bucket_plan_free(&p);

  /* Everything fits in one bucket when the first cap is large. */
  CHECK(bucket_plan_build(&p, c10, 10, 4, 100 * MiB, 100 * MiB) == DDP_OK, "build");
  CHECK(p.nbuckets == 1 && p.buckets[0].nparams == 10, "single bucket");
  bucket_plan_free(&p);

  /* The default caps on a 4-layer 1024-wide model (4 MiB per layer): one parameter per bucket. */
  size_t l4[4] = {1024 * 1024, 1024 * 1024, 1024 * 1024, 1024 * 1024};
  CHECK(bucket_plan_build(&p, l4, 4, 4, 1 * MiB, 25 * MiB) == DDP_OK, "build");
  CHECK(p.nbuckets == 2 && p.buckets[0].nparams == 1 && p.buckets[1].nparams == 3,
        "1 MiB first bucket takes one layer, the 25 MiB bucket the other three (%d)", p.nbuckets);
  bucket_plan_free(&p);
  return check_summary();
}
