/* test_ddp (2 ranks): the engine on the CPU device with the MPI comm.
 *  - against an independent double-precision implementation of the model written from the spec (fp32:
 *    relative 1e-5 on every step's loss and on the final weights);
 *  - DDP equivalence: 2 ranks with batch b against 1 rank with batch 2b (rank 0 alone, through comm split):
 *    the same loss per step and final weights, fp32 within 1e-5, bf16 and fp16 within 2e-2 (16-bit
 *    GEMM outputs are rounded per rank's partial sum in one case and per full sum in the other);
 *    measured here: fp32 ~2e-7, bf16 and fp16 ~8e-3;
 *  - final weights bitwise identical across ranks;
 *  - gradient_as_bucket_view gives bitwise the same results as copying into buckets;
 *  - the ddp phase on one rank is bitwise the local phase (its allreduce is the identity);
 *  - fp16 with a NaN injected after step K's backward: exactly step K skipped on every rank, the scale used
 *    in step K+1 is half of step K's, the loss of step K+1 equals that of step K;
 *  - 16-bit grad_comm (compression hooks) stays close to fp32 communication.
 * Tolerances are relative: max|a - b| / max|b| over the compared values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "device.h"
#include "dist.h"
#include "engine_run.h"
#include "ref_model.h"

static void small_config(ddp_config *c, ddp_precision p) { small_model(c, p, 32, 8); }

/* 2 ranks x b against 1 rank x 2b, plus cross-rank identity; returns the 2-rank run in *two. */
static void check_equivalence(ddp_comm *world, ddp_comm *solo, ddp_config *c, double tol, const char *what,
                              run_out *two_out) {
  run_out two, one;
  CHECK(run_engine(world, c, PHASE_DDP, &two) == DDP_OK, "%s: 2-rank run", what);
  world_checks(&two, what);
  if (solo) {
    ddp_config c1 = *c;
    c1.batch = 2 * c->batch;
    CHECK(run_engine(solo, &c1, PHASE_DDP, &one) == DDP_OK, "%s: 1-rank run", what);
    double dl = rel_diff_d(two.loss, one.loss, two.n), dw = rel_diff_f(two.w, one.w, two.nw);
    CHECK(dl <= tol, "%s: loss 2x%d vs 1x%d: rel diff %.3g > %.1g", what, c->batch, c1.batch, dl, tol);
    CHECK(dw <= tol, "%s: weights 2x%d vs 1x%d: rel diff %.3g > %.1g", what, c->batch, c1.batch, dw, tol);
    printf("# %-28s loss rel diff %.3g, weights rel diff %.3g (tolerance %.0e)\n", what, dl, dw, tol);
    out_free(&one);
  }
  if (two_out)
    *two_out = two;
  else
    out_free(&two);
}

int main(int argc, char **argv) {
  ddp_dist d;
  if (dist_init(&argc, &argv, &d) != DDP_OK) return 1;
  if (d.size != 2) {
    if (d.rank == 0) fprintf(stderr, "test_ddp needs exactly 2 ranks\n");
    dist_finalize(&d);
    return 1;
  }
  ddp_device *dev;
  ddp_comm *world, *solo;
  CHECK(device_cpu_create(&dev, 1) == DDP_OK, "cpu device");
  CHECK(comm_mpi_create(&world, MPI_COMM_WORLD, dev) == DDP_OK, "world comm");
  CHECK(world->split(world, d.rank == 0 ? 0 : -1, 0, &solo) == DDP_OK, "split");
  CHECK((d.rank == 0) == (solo != NULL), "only rank 0 is in the solo group");
  if (solo) CHECK(solo->size == 1 && solo->rank == 0, "solo group of one");

  ddp_config c;
  /* The spec's model, independently: fp32 solo run (global batch 16) against the double reference. */
  small_config(&c, PREC_FP32);
  c.momentum = 0.9;
  if (solo) {
    ddp_config c1 = c;
    c1.batch = 16;
    run_out o;
    CHECK(run_engine(solo, &c1, PHASE_DDP, &o) == DDP_OK, "solo run");
    double ref_loss[64];
    float *ref_w = malloc(o.nw * sizeof(float));
    reference(&c1, 16, ref_loss, ref_w);
    double dl = rel_diff_d(o.loss, ref_loss, o.n), dw = rel_diff_f(o.w, ref_w, o.nw);
    CHECK(dl <= 1e-5, "fp32 vs double reference: loss rel diff %.3g", dl);
    CHECK(dw <= 1e-5, "fp32 vs double reference: weights rel diff %.3g", dw);
    CHECK(ref_loss[o.n - 1] < ref_loss[0], "the reference's loss falls (%g -> %g)", ref_loss[0], ref_loss[o.n - 1]);
    printf("# fp32 vs double reference    loss rel diff %.3g, weights rel diff %.3g (tolerance 1e-05)\n", dl, dw);
    /* The local phase on one rank is the ddp phase bitwise (the allreduce of one rank is the identity). */
    run_out lo;
    CHECK(run_engine(solo, &c1, PHASE_LOCAL, &lo) == DDP_OK, "local run");
    CHECK(memcmp(lo.w, o.w, o.nw * sizeof(float)) == 0 && memcmp(lo.loss, o.loss, o.n * sizeof(double)) == 0,
          "ddp on one rank == local, bitwise");
    out_free(&lo);
    /* bf16 and fp16 against the same double reference, looser. */
    for (int p = PREC_BF16; p <= PREC_FP16; p++) {
      ddp_config c2 = c1;
      c2.precision = (ddp_precision)p;
      run_out m;
      CHECK(run_engine(solo, &c2, PHASE_DDP, &m) == DDP_OK, "16-bit run");
      double tol = p == PREC_BF16 ? 5e-2 : 1e-2;
      double dl2 = rel_diff_d(m.loss, ref_loss, m.n), dw2 = rel_diff_f(m.w, ref_w, m.nw);
      CHECK(dl2 <= tol && dw2 <= tol, "%s vs double reference: loss %.3g weights %.3g > %.0e", precision_name(c2.precision),
            dl2, dw2, tol);
      CHECK(dl2 > 0, "%s differs from fp32 at all (16-bit storage is in effect)", precision_name(c2.precision));
      printf("# %s vs double reference    loss rel diff %.3g, weights rel diff %.3g (tolerance %.0e)\n",
             precision_name(c2.precision), dl2, dw2, tol);
      out_free(&m);
    }
    free(ref_w);
    out_free(&o);
  }

  /* DDP equivalence in each precision, momentum on. */
  small_config(&c, PREC_FP32);
  c.momentum = 0.9;
  run_out fp32_two;
  check_equivalence(world, solo, &c, 1e-5, "fp32 2x8 vs 1x16", &fp32_two);
  small_config(&c, PREC_BF16);
  check_equivalence(world, solo, &c, 2e-2, "bf16 2x8 vs 1x16", NULL);
  small_config(&c, PREC_FP16);
  check_equivalence(world, solo, &c, 2e-2, "fp16 2x8 vs 1x16", NULL);

  /* gradient_as_bucket_view: bitwise the same as copying, in fp32 and bf16. */
  for (int p = PREC_FP32; p <= PREC_BF16; p += PREC_BF16) {
    run_out a, b;
    small_config(&c, (ddp_precision)p);
    CHECK(run_engine(world, &c, PHASE_DDP, &a) == DDP_OK, "copy run");
    c.gradient_as_bucket_view = 1;
    CHECK(run_engine(world, &c, PHASE_DDP, &b) == DDP_OK, "view run");
    CHECK(memcmp(a.w, b.w, a.nw * sizeof(float)) == 0 && memcmp(a.loss, b.loss, a.n * sizeof(double)) == 0,
          "%s: gradient_as_bucket_view changes no bit", precision_name(c.precision));
    out_free(&a);
    out_free(&b);
  }

  /* fp16 fault injection: NaN into rank 0's gradient after step K's backward. */
  for (int view = 0; view <= 1; view++) {
    const int K = 3;
    small_config(&c, PREC_FP16);
    c.gradient_as_bucket_view = view;
    c.inject_nonfinite = K;
    run_out o;
    CHECK(run_engine(world, &c, PHASE_DDP, &o) == DDP_OK, "inject run");
    int skipped_other[64];
    MPI_Allreduce(o.skipped, skipped_other, o.n, MPI_INT, MPI_MIN, MPI_COMM_WORLD); /* skipped on every rank */
    int nskip = 0, only_k = 1;
    for (int s = 0; s < o.n; s++) {
      nskip += skipped_other[s];
      if (skipped_other[s] != (s == K)) only_k = 0;
    }
    CHECK(only_k && nskip == 1, "view=%d: exactly step %d skipped on every rank (%d skipped)", view, K, nskip);
    CHECK(o.scale[K + 1] == o.scale[K] / 2, "view=%d: scale in step K+1 (%g) is half of step K's (%g)", view,
          o.scale[K + 1], o.scale[K]);
    CHECK(o.scale[0] == 1024 && o.scale[K] == 1024, "view=%d: scale starts at loss_scale_init", view);
    world_checks(&o, "fp16 injection");
    CHECK(o.loss[K + 1] == o.loss[K], "view=%d: loss of step K+1 equals loss of step K (%.17g, %.17g)", view,
          o.loss[K + 1], o.loss[K]);
    CHECK(o.loss[K + 2] != o.loss[K + 1], "view=%d: training resumes after the skipped step", view);
    int finite = 1;
    for (size_t i = 0; i < o.nw; i++) finite &= isfinite(o.w[i]);
    CHECK(finite, "view=%d: weights finite after the skipped step", view);
    out_free(&o);
  }

  /* 16-bit gradient communication (PyTorch's compression hooks) stays close to fp32 communication. */
  for (int p = PREC_BF16; p <= PREC_FP16; p++) {
    small_config(&c, PREC_FP32);
    c.momentum = 0.9;
    c.grad_comm = (ddp_precision)p;
    run_out o;
    check_equivalence(world, NULL, &c, 0, precision_name(c.grad_comm), &o);
    double dl = rel_diff_d(o.loss, fp32_two.loss, o.n), dw = rel_diff_f(o.w, fp32_two.w, o.nw);
    double tol = p == PREC_BF16 ? 2e-2 : 5e-3;
    CHECK(dl <= tol && dw <= tol && dw > 0, "grad_comm %s vs fp32: loss %.3g weights %.3g (tolerance %.0e, must differ)",
          precision_name(c.grad_comm), dl, dw, tol);
    out_free(&o);
  }
  out_free(&fp32_two);

  if (solo) solo->destroy(solo);
  world->destroy(world);
  dev->destroy(dev);
  int rc = check_summary_world();
  dist_finalize(&d);
  return rc;
}
