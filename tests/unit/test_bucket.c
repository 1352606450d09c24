/* test_bucket: DDP's bucket plan: reverse order is the caller's, the first bucket's own cap, closing once a
 * cap is reached, parameters never split (overshoot), the leftover bucket; and, from the options through
 * config_parse, the rebuilt buckets PyTorch 2.11's DistributedDataParallel made on an H200 (its
 * printed bucket tables), with the default caps and with an explicit bucket_cap_mb=25 (which caps the first bucket too).
 * tests/mpi/test_conformance.c checks a larger table against golden files recorded from PyTorch. */
#include <stdlib.h>
#include <string.h>

#include "bucket.h"
#include "check.h"
#include "config.h"

/* The plan ddpbench builds for `ddpbench --hidden H --layers L [extra...]` against PyTorch's bytes. */
static void pytorch_case(int H, int L, const char *extra, const size_t *want, int nwant) {
  char h[16], l[16], ex[32] = "";
  snprintf(h, sizeof h, "%d", H);
  snprintf(l, sizeof l, "%d", L);
  char *argv[8] = {"ddpbench", "--hidden", h, "--layers", l};
  int argc = 5;
  if (extra) {
    snprintf(ex, sizeof ex, "%s", extra);
    argv[argc++] = strtok(ex, " ");
    argv[argc++] = strtok(NULL, " ");
  }
  ddp_config c;
  CHECK(config_parse(&c, argc, argv, NULL) == DDP_OK, "options");
  size_t *counts = malloc((size_t)L * sizeof *counts);
  for (int i = 0; i < L; i++) counts[i] = (size_t)H * H;
  bucket_plan p;
  CHECK(bucket_plan_build(&p, counts, L, 4, bucket_cap_bytes(c.first_bucket_mb), bucket_cap_bytes(c.bucket_mb)) == DDP_OK,
        "build");
  int same = p.nbuckets == nwant;
  for (int b = 0; same && b < nwant; b++) same = p.buckets[b].bytes == want[b];
  CHECK(same, "%dx%d %s: %d buckets, first %zu B: not PyTorch 2.11's %d, first %zu B", H, L, extra ? extra : "(defaults)",
        p.nbuckets, p.nbuckets ? p.buckets[0].bytes : 0, nwant, want[0]);
  bucket_plan_free(&p);
  free(counts);
}

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

  /* PyTorch 2.11, DistributedDataParallel(model) and (model, bucket_cap_mb=25), rebuilt buckets in bytes. */
  const size_t d1024[] = {4194304, 12582912}, d1500[] = {9000000, 27000000, 27000000, 18000000},
               d2048[] = {16777216, 33554432, 33554432, 33554432, 33554432, 16777216}, d700[] = {1960000, 23520000},
               d8192[] = {268435456, 268435456, 268435456, 268435456, 268435456, 268435456, 268435456, 268435456};
  pytorch_case(1024, 4, NULL, d1024, 2);
  pytorch_case(1500, 9, NULL, d1500, 4);
  pytorch_case(2048, 10, NULL, d2048, 6);
  pytorch_case(700, 13, NULL, d700, 2);
  pytorch_case(8192, 8, NULL, d8192, 8);
  const size_t e1024[] = {16777216}, e1500[] = {27000000, 27000000, 27000000},
               e2048[] = {33554432, 33554432, 33554432, 33554432, 33554432}, e700[] = {25480000};
  pytorch_case(1024, 4, "--bucket-mb 25", e1024, 1);
  pytorch_case(1500, 9, "--bucket-mb 25", e1500, 3);
  pytorch_case(2048, 10, "--bucket-mb 25", e2048, 5);
  pytorch_case(700, 13, "--bucket-mb 25", e700, 1);
  /* --first-bucket-mb given explicitly still wins (dist._DEFAULT_FIRST_BUCKET_BYTES): 1 MiB first, as the default. */
  pytorch_case(1024, 4, "--first-bucket-mb 1", d1024, 2);
  return check_summary();
}
