/* test_stream_order (2 ranks): the CPU device with the MPI comm keeps a GPU stream's order for collectives, so
 * that the events around a collective time that collective alone (as the engine's per-bucket figures do).
 *  - Two allreduces enqueued back to back on one stream, A (16 MiB) then B (1 MiB), events before A, between
 *    and after B, rank 1 entering 50 ms late. On a GPU stream B starts when A has finished, so the time from
 *    the middle event to the last is B's own. Started when enqueued instead, B ran alongside A and finished
 *    with it: rank 0 timed 1 MiB in microseconds (the newcomer's 3 MiB in 4.4 us, 717 GB/s). Checked: B's
 *    algbw stays within the device's plausibility bound (max_link_gbs: twice this host's memcpy) and B takes
 *    at least a fifth of the same allreduce timed alone (the fastest of 3).
 *  - The cpu device's max_link_gbs: a positive bound with its reason, the same on a second call.
 *  - Both allreduces' results are right (the sum of the ranks' values). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "check_mpi.h"
#include "comm.h"
#include "device.h"
#include "dist.h"

#define A_FLOATS ((size_t)4 << 20) /* 16 MiB */
#define B_FLOATS ((size_t)1 << 18) /* 1 MiB */

static double elapsed_ms(ddp_device *dev, ddp_event *a, ddp_event *b) {
  float ms = -1;
  CHECK(dev->event_elapsed_ms(dev, &ms, a, b) == DDP_OK, "elapsed time");
  return ms;
}

int main(int argc, char **argv) {
  ddp_dist d;
  if (dist_init(&argc, &argv, &d) != DDP_OK) return 1;
  if (d.size != 2) {
    if (d.rank == 0) fprintf(stderr, "test_stream_order needs exactly 2 ranks\n");
    dist_finalize(&d);
    return 1;
  }
  ddp_device *dev;
  ddp_comm *comm;
  CHECK(device_cpu_create(&dev, 1) == DDP_OK, "cpu device");
  CHECK(comm_mpi_create(&comm, MPI_COMM_WORLD, dev) == DDP_OK, "world comm");
  ddp_stream *s;
  ddp_event *ev[3];
  CHECK(dev->stream_create(dev, &s, 0) == DDP_OK, "stream");
  for (int i = 0; i < 3; i++) CHECK(dev->event_create(dev, &ev[i], 1) == DDP_OK, "event");
  float *a = malloc(A_FLOATS * sizeof *a), *b = malloc(B_FLOATS * sizeof *b);
  CHECK(a && b, "buffers");

  /* B alone: the fastest of 3 (after a warm-up) */
  double alone = INFINITY;
  for (int it = 0; it < 4; it++) {
    CHECK(comm->barrier(comm) == DDP_OK, "barrier");
    CHECK(dev->event_record(dev, ev[0], s) == DDP_OK, "record");
    CHECK(comm->allreduce(comm, b, B_FLOATS, DT_F32, s) == DDP_OK, "allreduce B alone");
    CHECK(dev->event_record(dev, ev[1], s) == DDP_OK, "record");
    CHECK(dev->stream_synchronize(dev, s) == DDP_OK, "synchronize");
    if (it) alone = fmin(alone, elapsed_ms(dev, ev[0], ev[1]));
  }

  double bound = 0;
  for (int k = 0; k < 3; k++) {
    for (size_t i = 0; i < A_FLOATS; i++) a[i] = (float)(d.rank + 1);
    for (size_t i = 0; i < B_FLOATS; i++) b[i] = (float)(2 * d.rank + 1);
    CHECK(comm->barrier(comm) == DDP_OK, "barrier");
    if (d.rank == 1) nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    CHECK(dev->event_record(dev, ev[0], s) == DDP_OK, "record");
    CHECK(comm->allreduce(comm, a, A_FLOATS, DT_F32, s) == DDP_OK, "allreduce A");
    CHECK(dev->event_record(dev, ev[1], s) == DDP_OK, "record");
    CHECK(comm->allreduce(comm, b, B_FLOATS, DT_F32, s) == DDP_OK, "allreduce B");
    CHECK(dev->event_record(dev, ev[2], s) == DDP_OK, "record");
    CHECK(dev->stream_synchronize(dev, s) == DDP_OK, "synchronize");
    int right = a[0] == 3.0f && a[A_FLOATS - 1] == 3.0f && b[0] == 4.0f && b[B_FLOATS - 1] == 4.0f;
    CHECK(right, "the sums: A %g (want 3), B %g (want 4)", (double)a[0], (double)b[0]);
    if (d.rank != 0) continue;
    double tb = elapsed_ms(dev, ev[1], ev[2]), ta = elapsed_ms(dev, ev[0], ev[1]);
    double algbw = B_FLOATS * 4.0 / (tb * 1e-3) / 1e9;
    char why[256] = "";
    bound = dev->max_link_gbs(dev, why, sizeof why);
    printf("# round %d: A %.3f ms, B %.3f ms after A (algbw %.2f GB/s), B alone from %.3f ms; bound %.1f GB/s (%s)\n",
           k, ta, tb, algbw, alone, bound, why);
    CHECK(bound > 0 && strstr(why, "memcpy"), "cpu max_link_gbs: %g (%s)", bound, why);
    CHECK(algbw <= bound, "round %d: B's algbw %.1f GB/s is above the device's bound %.1f GB/s: B did not start "
          "after A (stream order)", k, algbw, bound);
    CHECK(tb >= 0.2 * alone, "round %d: B took %.4f ms after A, under a fifth of its %.4f ms alone", k, tb, alone);
  }
  if (d.rank == 0) {
    char why[256];
    CHECK(dev->max_link_gbs(dev, why, sizeof why) == bound, "the bound is measured once and kept");
  }
  free(a), free(b);
  for (int i = 0; i < 3; i++) dev->event_destroy(dev, ev[i]);
  dev->stream_destroy(dev, s);
  comm->destroy(comm);
  dev->destroy(dev);
  int rc = check_summary_world();
  dist_finalize(&d);
  return rc;
}
