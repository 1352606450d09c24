/* test_gpu (2 ranks, needs a GPU; exits 77 on every rank when any rank sees none): the CUDA device.
 *  - CUDA against the CPU device, same seed, small model: loss per step and final weights within
 *    fp32 1e-4, tf32 5e-2 (against CPU fp32; measured 2.3e-2), bf16 and fp16 3e-2 (relative, max norm; the GEMMs sum in another
 *    order, which moves 16-bit roundings);
 *  - DDP equivalence on the GPU: 2 ranks x b against 1 rank x 2b, with --comm mpi (staged through host memory;
 *    both ranks may share one GPU) and, when each rank has its own GPU, with NCCL: fp32 1e-5, bf16/fp16 2e-2;
 *  - final weights bitwise identical across ranks, with MPI and with NCCL;
 *  - a CUDA graph replay gives bitwise the eager result; gradient_as_bucket_view changes no bit;
 *  - fp16 with a NaN injected after step K: exactly step K skipped on every rank, the next scale halved, the
 *    loss repeated, with and without --cuda-graph, under DDP and under FSDP;
 *  - strategy fsdp against DDP on the same ranks and comm, bitwise across ranks, its CUDA graph replay bitwise the
 *    eager step (MPI on 2 ranks; NCCL on 2 GPUs, or rank 0 alone on a NCCL communicator of its own). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "device.h"
#include "dist.h"
#include "engine_run.h"
#include "watchdog.h"

static void small_config(ddp_config *c, ddp_precision p) { small_model(c, p, 64, 32); }

static void equivalence(ddp_comm *world, ddp_comm *solo, ddp_precision p, double tol, const char *name) {
  ddp_config c;
  small_config(&c, p);
  c.momentum = 0.9;
  run_out two, one;
  char what[96];
  snprintf(what, sizeof what, "%s %s", name, precision_name(p));
  CHECK(run_engine(world, &c, PHASE_DDP, &two) == DDP_OK, "%s: 2-rank run", what);
  world_checks(&two, what);
  if (solo) {
    c.batch *= 2;
    CHECK(run_engine(solo, &c, PHASE_DDP, &one) == DDP_OK, "%s: 1-rank run", what);
    double dl = rel_diff_d(two.loss, one.loss, two.n), dw = rel_diff_f(two.w, one.w, two.nw);
    CHECK(dl <= tol && dw <= tol, "%s: 2x%d vs 1x%d: loss %.3g weights %.3g > %.0e", what, c.batch / 2, c.batch, dl, dw,
          tol);
    printf("# %-24s 2x%d vs 1x%d: loss rel diff %.3g, weights rel diff %.3g (tolerance %.0e)\n", what, c.batch / 2,
           c.batch, dl, dw, tol);
    free(one.w);
  }
  free(two.w);
}

/* strategy fsdp on the same model: no local phase (its full-model buffers are not made). */
static void fsdp_config(ddp_config *c, ddp_precision p) {
  small_config(c, p);
  c->strategy = STRATEGY_FSDP;
  snprintf(c->phases, sizeof c->phases, "comm,fsdp");
}

static void inject(ddp_comm *world, int graph, const char *name, int fsdp) {
  const int K = 3;
  ddp_config c;
  if (fsdp) fsdp_config(&c, PREC_FP16);
  else small_config(&c, PREC_FP16);
  c.inject_nonfinite = K;
  c.cuda_graph = graph;
  run_out o;
  CHECK(run_engine(world, &c, fsdp ? PHASE_FSDP : PHASE_DDP, &o) == DDP_OK, "%s inject run (graph %d)", name, graph);
  int sk[64];
  MPI_Allreduce(o.skipped, sk, o.n, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int only_k = 1;
  for (int s = 0; s < o.n; s++) only_k &= sk[s] == (s == K);
  CHECK(only_k, "%s graph %d: exactly step %d skipped on every rank", name, graph, K);
  CHECK(o.scale[K] == 1024 && o.scale[K + 1] == 512, "%s graph %d: scale %g then %g", name, graph, o.scale[K],
        o.scale[K + 1]);
  world_checks(&o, name);
  CHECK(o.loss[K + 1] == o.loss[K] && o.loss[K + 2] != o.loss[K + 1], "%s graph %d: loss repeats once", name, graph);
  free(o.w);
}

int main(int argc, char **argv) {
  ddp_dist d;
  if (dist_init(&argc, &argv, &d) != DDP_OK) return 1;
  int ngpu = device_cuda_count(), min_gpu = ngpu;
  MPI_Allreduce(MPI_IN_PLACE, &min_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (min_gpu == 0 || d.size != 2) {
    if (d.rank == 0) printf("no GPU visible (or not 2 ranks): skipped\n");
    dist_finalize(&d);
    return CHECK_SKIP;
  }
  ddp_device *cpu, *gpu;
  CHECK(device_cpu_create(&cpu, 2) == DDP_OK, "cpu device");
  CHECK(device_cuda_create(&gpu, d.local_rank % ngpu) == DDP_OK, "cuda device %d", d.local_rank % ngpu);
  ddp_comm *cpu_world, *cpu_solo, *mpi_world, *mpi_solo, *nccl_world = NULL, *nccl_solo = NULL;
  CHECK(comm_mpi_create(&cpu_world, MPI_COMM_WORLD, cpu) == DDP_OK, "cpu comm");
  CHECK(comm_mpi_create(&mpi_world, MPI_COMM_WORLD, gpu) == DDP_OK, "mpi comm on the GPU");
  CHECK(cpu_world->split(cpu_world, d.rank == 0 ? 0 : -1, 0, &cpu_solo) == DDP_OK, "split");
  CHECK(mpi_world->split(mpi_world, d.rank == 0 ? 0 : -1, 0, &mpi_solo) == DDP_OK, "split");
  int own_gpu = d.local_size <= ngpu;
  MPI_Allreduce(MPI_IN_PLACE, &own_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (own_gpu) {
    CHECK(comm_nccl_create(&nccl_world, MPI_COMM_WORLD, gpu) == DDP_OK, "nccl comm");
    CHECK(nccl_world->split(nccl_world, d.rank == 0 ? 0 : -1, 0, &nccl_solo) == DDP_OK, "nccl split");
  } else if (d.rank == 0) {
    printf("# ranks share a GPU: NCCL parts not run (NCCL needs one GPU per rank)\n");
  }

  /* CUDA against the CPU device, on rank 0 alone. */
  if (d.rank == 0) {
    ddp_precision precs[] = {PREC_FP32, PREC_TF32, PREC_BF16, PREC_FP16};
    double tols[] = {1e-4, 5e-2, 3e-2, 3e-2};
    for (int i = 0; i < 4; i++) {
      ddp_config c;
      small_config(&c, precs[i]);
      c.momentum = 0.9;
      run_out g, h;
      CHECK(run_engine(mpi_solo, &c, PHASE_DDP, &g) == DDP_OK, "cuda %s", precision_name(precs[i]));
      ddp_config cc = c;
      if (precs[i] == PREC_TF32) cc.precision = PREC_FP32;
      CHECK(run_engine(cpu_solo, &cc, PHASE_DDP, &h) == DDP_OK, "cpu %s", precision_name(cc.precision));
      double dl = rel_diff_d(g.loss, h.loss, g.n), dw = rel_diff_f(g.w, h.w, g.nw);
      CHECK(dl <= tols[i] && dw <= tols[i], "cuda vs cpu %s: loss %.3g weights %.3g > %.0e", precision_name(precs[i]),
            dl, dw, tols[i]);
      printf("# cuda vs cpu %-4s          loss rel diff %.3g, weights rel diff %.3g (tolerance %.0e)\n",
             precision_name(precs[i]), dl, dw, tols[i]);
      free(g.w);
      free(h.w);
    }
  }

  /* DDP equivalence and cross-rank identity on the GPU. */
  double tol[] = {1e-5, 0, 2e-2, 2e-2};
  for (int p = PREC_FP32; p <= PREC_FP16; p++) {
    if (p == PREC_TF32) continue;
    equivalence(mpi_world, mpi_solo, (ddp_precision)p, tol[p], "mpi");
    if (nccl_world) equivalence(nccl_world, nccl_solo, (ddp_precision)p, tol[p], "nccl");
  }
  if (nccl_world) { /* what a rank waiting for a stopped peer would name (watchdog.h) */
    char last[256];
    watchdog_started_text(last, sizeof last);
    CHECK(strstr(last, "ncclAllReduce(") && strstr(last, " on a NCCL communicator ("),
          "the last collective started is recorded for the watchdog: '%s'", last);
  }

  /* CUDA graph replay == eager, bitwise; gradient_as_bucket_view == copy, bitwise. */
  ddp_comm *comms[2] = {mpi_world, nccl_world};
  for (int k = 0; k < 2; k++) {
    if (!comms[k]) continue;
    ddp_config c;
    small_config(&c, PREC_BF16);
    run_out eager, graph, view;
    CHECK(run_engine(comms[k], &c, PHASE_DDP, &eager) == DDP_OK, "eager");
    c.cuda_graph = 1;
    CHECK(run_engine(comms[k], &c, PHASE_DDP, &graph) == DDP_OK, "graph");
    c.cuda_graph = 0;
    c.gradient_as_bucket_view = 1;
    CHECK(run_engine(comms[k], &c, PHASE_DDP, &view) == DDP_OK, "view");
    CHECK(memcmp(eager.w, graph.w, eager.nw * 4) == 0 && memcmp(eager.loss, graph.loss, eager.n * 8) == 0,
          "%s: CUDA graph replay is bitwise the eager run", comms[k]->name);
    CHECK(memcmp(eager.w, view.w, eager.nw * 4) == 0, "%s: gradient_as_bucket_view changes no bit", comms[k]->name);
    free(eager.w), free(graph.w), free(view.w);
  }

  /* fp16 fault injection, eager and graph, each comm. */
  for (int graph = 0; graph <= 1; graph++) {
    inject(mpi_world, graph, "mpi", 0);
    if (nccl_world) inject(nccl_world, graph, "nccl", 0);
    inject(mpi_world, graph, "mpi fsdp", 1);
    if (nccl_world) inject(nccl_world, graph, "nccl fsdp", 1);
  }

  /* 16-bit gradient communication over NCCL stays near fp32 communication. */
  if (nccl_world) {
    ddp_config c;
    small_config(&c, PREC_FP32);
    run_out a, b;
    CHECK(run_engine(nccl_world, &c, PHASE_DDP, &a) == DDP_OK, "fp32 comm");
    c.grad_comm = PREC_BF16;
    CHECK(run_engine(nccl_world, &c, PHASE_DDP, &b) == DDP_OK, "bf16 comm");
    world_checks(&b, "nccl grad_comm bf16");
    double dw = rel_diff_f(b.w, a.w, a.nw);
    CHECK(dw > 0 && dw < 2e-2, "grad_comm bf16 vs fp32 over NCCL: weights rel diff %.3g", dw);
    free(a.w), free(b.w);
  }

  /* strategy fsdp on the GPU: against DDP on the same ranks and comm (fp32 1e-6, as test_fsdp: the same GEMMs on the
   * same gathered weights, the reductions in another order; bf16 1e-2), bitwise across ranks, a CUDA graph replay
   * bitwise the eager step; over MPI on 2 ranks, and over NCCL (2 ranks with a GPU each, else rank 0 alone on a
   * NCCL communicator of its own: one rank, so the collectives are copies, the overlap machinery still runs). */
  ddp_comm *nccl_self = NULL;
  if (!nccl_world && d.rank == 0) CHECK(comm_nccl_create(&nccl_self, MPI_COMM_SELF, gpu) == DDP_OK, "nccl, rank 0 alone");
  ddp_comm *fcomms[3] = {mpi_world, nccl_world, nccl_self};
  for (int k = 0; k < 3; k++) {
    if (!fcomms[k]) continue; /* nccl_self: rank 0 alone; the others skip it */
    for (int p = PREC_FP32; p <= PREC_BF16; p += PREC_BF16) {
      ddp_config cf, cd;
      fsdp_config(&cf, (ddp_precision)p);
      cf.momentum = 0.9;
      cd = cf;
      cd.strategy = STRATEGY_DDP;
      snprintf(cd.phases, sizeof cd.phases, "local,comm,ddp");
      run_out f, dd;
      CHECK(run_engine(fcomms[k], &cf, PHASE_FSDP, &f) == DDP_OK, "%s fsdp %s", fcomms[k]->name, precision_name(cf.precision));
      CHECK(run_engine(fcomms[k], &cd, PHASE_DDP, &dd) == DDP_OK, "%s ddp %s", fcomms[k]->name, precision_name(cd.precision));
      double ftol = p == PREC_FP32 ? 1e-6 : 1e-2;
      double dl = rel_diff_d(f.loss, dd.loss, f.n), dw = rel_diff_f(f.w, dd.w, f.nw);
      CHECK(dl <= ftol && dw <= ftol, "%s W=%d %s: fsdp vs ddp loss %.3g weights %.3g > %.0e", fcomms[k]->name,
            fcomms[k]->size, precision_name(cf.precision), dl, dw, ftol);
      if (fcomms[k]->rank == 0)
        printf("# %s W=%d %-4s fsdp vs ddp: loss rel diff %.3g, weights rel diff %.3g (tolerance %.0e)\n",
               fcomms[k]->name, fcomms[k]->size, precision_name(cf.precision), dl, dw, ftol);
      if (p == PREC_BF16) { /* before world_checks, which sums f's per-rank loss shares in place */
        run_out g;
        cf.cuda_graph = 1;
        CHECK(run_engine(fcomms[k], &cf, PHASE_FSDP, &g) == DDP_OK, "%s fsdp graph", fcomms[k]->name);
        CHECK(memcmp(f.w, g.w, f.nw * 4) == 0 && memcmp(f.loss, g.loss, f.n * 8) == 0,
              "%s fsdp: CUDA graph replay is bitwise the eager run", fcomms[k]->name);
        free(g.w);
      }
      if (fcomms[k]->size == 2) world_checks(&f, "fsdp");
      free(f.w), free(dd.w);
    }
  }
  if (nccl_self) nccl_self->destroy(nccl_self);

  if (nccl_solo) nccl_solo->destroy(nccl_solo);
  if (nccl_world) nccl_world->destroy(nccl_world);
  if (mpi_solo) mpi_solo->destroy(mpi_solo);
  if (cpu_solo) cpu_solo->destroy(cpu_solo);
  mpi_world->destroy(mpi_world);
  cpu_world->destroy(cpu_world);
  gpu->destroy(gpu);
  cpu->destroy(cpu);
  int rc = check_summary_world();
  dist_finalize(&d);
  return rc;
}
