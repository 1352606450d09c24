/* engine_run.h: what the engine tests (test_ddp, test_gpu) share: run one phase of the engine on a comm and
 * keep its per-step loss, loss scale, skip flags and final weights; relative differences (max norm); and the
 * cross-rank checks (global loss, weights bitwise identical on every rank); check_summary_world comes with it
 * (check_mpi.h). Test-only, header-only. */
#ifndef DDPBENCH_TESTS_ENGINE_RUN_H
#define DDPBENCH_TESTS_ENGINE_RUN_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_mpi.h"
#include "comm.h"
#include "engine.h"

/* A small model for the engine tests: 3 layers of hidden x hidden, 2 + 6 steps, one weight per bucket (the first
 * bucket capped at a quarter of one), and a small first loss scale: with the default 65536 the first steps of
 * such a model overflow fp16 and are skipped while the scale calibrates (correct, but it hides the comparisons). */
static inline void small_model(ddp_config *c, ddp_precision p, int hidden, int batch) {
  config_defaults(c);
  c->hidden = hidden;
  c->layers = 3;
  c->batch = batch;
  c->warmup = 2;
  c->steps = 6;
  c->lr = 0.05;
  c->precision = p;
  c->bucket_mb = (double)hidden * hidden * 4 / 1048576;
  c->first_bucket_mb = (double)hidden * hidden / 1048576;
  c->timeout = 120;
  c->loss_scale_init = 1024;
}

typedef struct {
  int n; /* warmup + steps */
  double loss[64];
  float scale[64];
  int skipped[64];
  float *w;
  size_t nw;
} run_out;

static inline void out_free(run_out *o) {
  free(o->w);
  o->w = NULL;
}

/* Runs one phase on comm from fresh weights; fills o on every member rank. */
static inline ddp_result run_engine(ddp_comm *comm, const ddp_config *cfg, ddp_phase p, run_out *o) {
  engine *e;
  phase_result r;
  memset(o, 0, sizeof *o);
  DDP_TRY(engine_create(&e, cfg, comm->dev, comm, NULL, NULL));
  ddp_result res = engine_run_phase(e, p, &r);
  if (res == DDP_OK) {
    o->n = r.warmup + r.steps;
    for (int i = 0; i < o->n && r.loss; i++) o->loss[i] = r.loss[i];
    for (int i = 0; i < o->n && r.scale; i++) {
      o->scale[i] = r.scale[i];
      o->skipped[i] = r.skipped[i];
    }
    phase_result_free(&r);
    o->nw = engine_weight_count(e);
    o->w = malloc(o->nw * sizeof(float));
    res = o->w ? engine_weights(e, o->w) : DDP_ERR_SYSTEM;
  }
  engine_free(e);
  return res;
}

/* max|a - b| / max|b|: relative difference in the max norm. */
static inline double rel_diff_d(const double *a, const double *b, int n) {
  double num = 0, den = 0;
  for (int i = 0; i < n; i++) {
    num = fmax(num, fabs(a[i] - b[i]));
    den = fmax(den, fabs(b[i]));
  }
  return den > 0 ? num / den : num;
}
static inline double rel_diff_f(const float *a, const float *b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    num = fmax(num, fabs((double)a[i] - b[i]));
    den = fmax(den, fabs((double)b[i]));
  }
  return den > 0 ? num / den : num;
}

/* Collective over g: the final weights are bitwise the same on every rank of it. */
static inline void weights_same_checks(MPI_Comm g, const run_out *o, const char *what) {
  int rank;
  MPI_Comm_rank(g, &rank);
  float *w0 = malloc(o->nw * sizeof(float));
  if (rank == 0) memcpy(w0, o->w, o->nw * sizeof(float));
  MPI_Bcast(w0, (int)o->nw, MPI_FLOAT, 0, g);
  int same = memcmp(w0, o->w, o->nw * sizeof(float)) == 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, g);
  CHECK(same, "%s: final weights bitwise identical on every rank", what);
  free(w0);
}

/* Collective over MPI_COMM_WORLD: sums the ranks' loss shares into the global loss (on every rank) and
 * checks that the final weights are bitwise the same on every rank. */
static inline void world_checks(run_out *o, const char *what) {
  MPI_Allreduce(MPI_IN_PLACE, o->loss, o->n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  weights_same_checks(MPI_COMM_WORLD, o, what);
}

#endif
