/* test_fsdp (4 ranks): strategy fsdp (engine_fsdp.c) on the CPU device with the MPI comm, over groups of 1, 2, 3
 * and 4 ranks (comm splits of the world), each against:
 *  - DDP on the same ranks, same seed and global batch: fp32 within 1e-6 relative on every step's loss and on
 *    the final weights (the reductions differ only in order: DDP multiplies by 1/W and sums, the MPI comm's
 *    AVG sums and divides); bf16 within 1e-3 (both reduce fp32 gradients; a last-bit difference in a master
 *    weight can move its bf16 copy by one bf16 step, 2^-8 of that one weight, and so the next GEMMs by less);
 *  - the float64 reference of the spec (ref_model.h) with the global batch: fp32 within 1e-5;
 *  - bitwise identical final weights on every rank of the group (all-gathered from the shards);
 * and, besides:
 *  - padding: H = 30 on 4 ranks (8 rows a shard, dim 0 padded to 32) and H = 6 on 4 ranks (2, 2, 2, 0 rows: the
 *    last rank holds nothing), momentum on;
 *  - the comm calls of one step are fsdp_plan's schedule, kind for kind (W > 1), and the engine allocated for
 *    FSDP's state exactly what fsdp_plan_memory says for its rank;
 *  - fp16 with a NaN injected into rank 0's gradient in step K: step K skipped on every rank (the found_inf
 *    all-reduce), the loss scale halved, the weights finite and identical;
 *  - reduce_dtype bf16 and fp16 (grad_comm) stay close to fp32 reduction and differ from it;
 *  - the comm phase runs and times every call.
 * Tolerances are relative: max|a - b| / max|b| over the compared values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "device.h"
#include "dist.h"
#include "engine_run.h"
#include "fsdp_plan.h"
#include "ref_model.h"

/* A run on group comm c (MPI g): its per-step global loss (the shares summed) and final weights. */
static void run_group(ddp_comm *c, MPI_Comm g, const ddp_config *cfg, ddp_phase p, run_out *o, const char *what) {
  CHECK(run_engine(c, cfg, p, o) == DDP_OK, "%s: run", what);
  MPI_Allreduce(MPI_IN_PLACE, o->loss, o->n, MPI_DOUBLE, MPI_SUM, g);
  weights_same_checks(g, o, what);
}

static void fsdp_config(ddp_config *c, ddp_precision p, int hidden) {
  small_model(c, p, hidden, 4);
  c->momentum = 0.9;
  c->strategy = STRATEGY_FSDP;
  snprintf(c->phases, sizeof c->phases, "comm,fsdp"); /* no local phase: the full model's buffers are not made */
}

/* FSDP against DDP (same ranks) and the double reference (fp32 only). */
static void against_ddp(ddp_comm *c, MPI_Comm g, ddp_precision p, int hidden, double tol, const char *tag) {
  char what[96];
  ddp_config cf, cd;
  fsdp_config(&cf, p, hidden);
  cd = cf;
  cd.strategy = STRATEGY_DDP;
  snprintf(cd.phases, sizeof cd.phases, "local,comm,ddp");
  run_out f, dd;
  snprintf(what, sizeof what, "%s fsdp W=%d H=%d", tag, c->size, hidden);
  run_group(c, g, &cf, PHASE_FSDP, &f, what);
  snprintf(what, sizeof what, "%s ddp W=%d H=%d", tag, c->size, hidden);
  run_group(c, g, &cd, PHASE_DDP, &dd, what);
  double dl = rel_diff_d(f.loss, dd.loss, f.n), dw = rel_diff_f(f.w, dd.w, f.nw);
  CHECK(dl <= tol && dw <= tol, "%s W=%d H=%d: fsdp vs ddp loss %.3g weights %.3g (tolerance %.0e)", tag, c->size,
        hidden, dl, dw, tol);
  CHECK(f.loss[f.n - 1] < f.loss[0], "%s W=%d: the loss falls (%g -> %g)", tag, c->size, f.loss[0], f.loss[f.n - 1]);
  if (c->rank == 0) printf("# %s W=%d H=%-3d fsdp vs ddp: loss rel diff %.3g, weights %.3g (tolerance %.0e)\n", tag,
                           c->size, hidden, dl, dw, tol);
  if (p == PREC_FP32) {
    double ref_loss[64];
    float *ref_w = malloc(f.nw * sizeof(float));
    ddp_config cr = cf;
    cr.batch = cf.batch * c->size;
    reference(&cr, cr.batch, ref_loss, ref_w);
    double rl = rel_diff_d(f.loss, ref_loss, f.n), rw = rel_diff_f(f.w, ref_w, f.nw);
    double ql = rel_diff_d(dd.loss, ref_loss, f.n), qw = rel_diff_f(dd.w, ref_w, f.nw);
    CHECK(rl <= 1e-5 && rw <= 1e-5, "W=%d H=%d: fsdp vs double reference loss %.3g weights %.3g", c->size, hidden, rl, rw);
    CHECK(ql <= 1e-5 && qw <= 1e-5, "W=%d H=%d: ddp vs double reference loss %.3g weights %.3g", c->size, hidden, ql, qw);
    if (c->rank == 0)
      printf("# fp32 W=%d H=%-3d vs double reference: fsdp loss %.3g weights %.3g; ddp loss %.3g weights %.3g\n", c->size,
             hidden, rl, rw, ql, qw);
    free(ref_w);
  }
  out_free(&f);
  out_free(&dd);
}

/* One step's comm calls against the plan's schedule, and the allocation against the plan's memory. */
static void plan_checks(ddp_comm *c, ddp_precision p, int hidden) {
  ddp_config cf;
  fsdp_config(&cf, p, hidden);
  engine *e;
  phase_result r;
  CHECK(engine_create(&e, &cf, c->dev, c, NULL, NULL) == DDP_OK, "engine");
  CHECK(engine_run_phase(e, PHASE_FSDP, &r) == DDP_OK, "phase");
  const fsdp_plan *fp = engine_fsdp_plan(e);
  const fsdp_coll_kind *kinds;
  int n = engine_comm_log(e, &kinds);
  CHECK(fp != NULL && n == r.nbuckets, "W=%d %s: %d comm calls logged, %d timed", c->size, precision_name(p), n,
        r.nbuckets);
  if (fp && c->size > 1) {
    int same = n == fp->ncolls;
    for (int i = 0; same && i < n; i++) same = kinds[i] == fp->colls[i].kind;
    CHECK(same, "W=%d %s: the step's %d comm calls are the plan's %d, in order", c->size, precision_name(p), n,
          fp->ncolls);
  }
  if (fp && c->size == 1) CHECK(n == 3 * cf.layers, "W=1: 3L copies in the collectives' places (%d)", n);
  int timed = 1;
  for (int i = 0; i < r.steps * r.nbuckets; i++) timed &= r.bucket_ms[i] >= 0;
  CHECK(timed, "W=%d: every comm call of every timed step has a time", c->size);
  fsdp_memory want;
  fsdp_plan_memory(fp, c->rank, &want);
  const fsdp_memory *got = engine_fsdp_allocated(e);
  CHECK(got && got->total == want.total && got->params_master == want.params_master && got->optim == want.optim &&
            got->gathered == want.gathered && got->reduce == want.reduce && got->grads == want.grads &&
            got->params_lowp == want.params_lowp,
        "W=%d rank %d %s: allocated %zu bytes for FSDP's state, the plan says %zu", c->size, c->rank, precision_name(p),
        got ? got->total : 0, want.total);
  phase_result_free(&r);
  CHECK(engine_run_phase(e, PHASE_COMM, &r) == DDP_OK, "comm phase");
  timed = r.nbuckets == n;
  for (int i = 0; i < r.steps * r.nbuckets; i++) timed &= r.bucket_ms[i] >= 0;
  CHECK(timed, "W=%d: the comm phase runs and times the step's %d calls", c->size, n);
  phase_result_free(&r);
  engine_free(e);
}

static void inject(ddp_comm *c, MPI_Comm g) {
  const int K = 3;
  ddp_config cf;
  fsdp_config(&cf, PREC_FP16, 30);
  cf.inject_nonfinite = K;
  run_out o;
  run_group(c, g, &cf, PHASE_FSDP, &o, "fp16 injection");
  int all[64];
  MPI_Allreduce(o.skipped, all, o.n, MPI_INT, MPI_MIN, g); /* skipped on every rank */
  int nskip = 0, only_k = 1;
  for (int s = 0; s < o.n; s++) {
    nskip += all[s];
    if (all[s] != (s == K)) only_k = 0;
  }
  CHECK(only_k && nskip == 1, "W=%d fp16: exactly step %d skipped on every rank (%d skipped)", c->size, K, nskip);
  CHECK(o.scale[K + 1] == o.scale[K] / 2, "W=%d fp16: scale in step K+1 (%g) is half of step K's (%g)", c->size,
        o.scale[K + 1], o.scale[K]);
  CHECK(o.loss[K + 1] == o.loss[K], "W=%d fp16: the loss of step K+1 equals step K's", c->size);
  CHECK(o.loss[K + 2] != o.loss[K + 1], "W=%d fp16: training resumes", c->size);
  int finite = 1;
  for (size_t i = 0; i < o.nw; i++) finite &= isfinite(o.w[i]);
  CHECK(finite, "W=%d fp16: weights finite after the skipped step", c->size);
  out_free(&o);
}

static void reduce_types(ddp_comm *c, MPI_Comm g) {
  ddp_config cf;
  fsdp_config(&cf, PREC_FP32, 30);
  run_out base;
  run_group(c, g, &cf, PHASE_FSDP, &base, "reduce fp32");
  for (int p = PREC_BF16; p <= PREC_FP16; p++) {
    cf.grad_comm = (ddp_precision)p;
    run_out o;
    run_group(c, g, &cf, PHASE_FSDP, &o, precision_name(cf.grad_comm));
    double dl = rel_diff_d(o.loss, base.loss, o.n), dw = rel_diff_f(o.w, base.w, o.nw);
    double tol = p == PREC_BF16 ? 2e-2 : 5e-3;
    CHECK(dl <= tol && dw <= tol && dw > 0, "W=%d reduce_dtype %s vs fp32: loss %.3g weights %.3g (tolerance %.0e, "
          "must differ)", c->size, precision_name(cf.grad_comm), dl, dw, tol);
    out_free(&o);
  }
  out_free(&base);
}

int main(int argc, char **argv) {
  ddp_dist d;
  if (dist_init(&argc, &argv, &d) != DDP_OK) return 1;
  if (d.size != 4) {
    if (d.rank == 0) fprintf(stderr, "test_fsdp needs exactly 4 ranks\n");
    dist_finalize(&d);
    return 1;
  }
  ddp_device *dev;
  ddp_comm *world;
  CHECK(device_cpu_create(&dev, 1) == DDP_OK, "cpu device");
  CHECK(comm_mpi_create(&world, MPI_COMM_WORLD, dev) == DDP_OK, "world comm");
  for (int n = 1; n <= 4; n++) {
    int in = d.rank < n;
    ddp_comm *c = NULL;
    MPI_Comm g = MPI_COMM_NULL;
    CHECK(world->split(world, in ? 0 : -1, d.rank, &c) == DDP_OK, "split %d", n);
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, d.rank, &g);
    if (in) {
      CHECK(c && c->size == n && g != MPI_COMM_NULL, "group of %d", n);
      against_ddp(c, g, PREC_FP32, 30, 1e-6, "fp32");
      against_ddp(c, g, PREC_BF16, 30, 1e-3, "bf16");
      for (int p = PREC_FP32; p <= PREC_FP16; p++) plan_checks(c, (ddp_precision)p, 30);
      if (n == 4) {
        against_ddp(c, g, PREC_FP32, 6, 1e-6, "fp32");
        plan_checks(c, PREC_BF16, 6);
      }
      if (n == 2 || n == 4) inject(c, g);
      if (n == 3) reduce_types(c, g);
      c->destroy(c);
      MPI_Comm_free(&g);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  world->destroy(world);
  dev->destroy(dev);
  int rc = check_summary_world();
  dist_finalize(&d);
  return rc;
}
