/* train.c: the training phases as the first three measurements: local (every rank trains its own
 * copy), comm (the ddp phase's bucket allreduces alone) and ddp (training with overlapped allreduces), over
 * any group of ranks. They share one engine per group (env->train), so the phases of one group run on one
 * model, as they always did; the engine's step loop is untouched. Also the gathering of a phase's samples to
 * the group's rank 0, which the job's world report uses too. Never prints. */
#include "train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"

void train_state_free(train_state *t) {
  for (int p = 0; p < PHASE_COUNT; p++) phase_result_free(&t->res[p]);
  engine_free(t->eng);
  memset(t, 0, sizeof *t);
}

#define GATHER(mine, all, n)                                                                  \
  do {                                                                                      \
    int e_ = MPI_Gather((mine), (n), MPI_DOUBLE, (all), (n), MPI_DOUBLE, 0, mpi);           \
    if (e_ != MPI_SUCCESS) return mpi_fail(e_, "MPI_Gather", __FILE__, __LINE__);          \
  } while (0)

ddp_result train_gather(MPI_Comm mpi, const phase_result *pr, phase_data *pd, int fp16) {
  int rank, W;
  DDP_CHECK_MPI(MPI_Comm_rank(mpi, &rank));
  DDP_CHECK_MPI(MPI_Comm_size(mpi, &W));
  int S = pr->steps, total = pr->warmup + pr->steps, nb = pr->nbuckets;
  pd->present = 1;
  pd->warmup = pr->warmup;
  pd->steps = S;
  pd->nbuckets = nb;
  pd->settle_s = pr->settle_s;
  if (rank == 0) {
    pd->step_ms = malloc((size_t)W * S * sizeof(double));
    pd->compute_ms = malloc((size_t)W * S * sizeof(double));
    pd->bucket_ms = malloc((size_t)W * S * (nb ? nb : 1) * sizeof(double));
    DDP_CHECK_ALLOC(pd->step_ms);
    DDP_CHECK_ALLOC(pd->compute_ms);
    DDP_CHECK_ALLOC(pd->bucket_ms);
  }
  GATHER(pr->step_ms, pd->step_ms, S);
  GATHER(pr->compute_ms, pd->compute_ms, S);
  GATHER(pr->bucket_ms, pd->bucket_ms, S * nb);
  if (!pr->loss) return DDP_OK;
  double *all = NULL;
  if (rank == 0) {
    all = malloc((size_t)W * total * sizeof(double));
    pd->loss = calloc((size_t)total, sizeof(double));
    if (!all || !pd->loss) {
      free(all);
      return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    }
  }
  int e = MPI_Gather(pr->loss, total, MPI_DOUBLE, all, total, MPI_DOUBLE, 0, mpi);
  if (e == MPI_SUCCESS && rank == 0) /* the global loss: the ranks' shares summed in rank order */
    for (int st = 0; st < total; st++)
      for (int rk = 0; rk < W; rk++) pd->loss[st] += all[(size_t)rk * total + st];
  free(all);
  if (e != MPI_SUCCESS) return mpi_fail(e, "MPI_Gather", __FILE__, __LINE__);
  if (fp16 && rank == 0) { /* identical on every rank after the allreduce (verified by the weights) */
    pd->scale = malloc((size_t)total * sizeof(float));
    pd->skipped = malloc((size_t)total * sizeof(int));
    DDP_CHECK_ALLOC(pd->scale);
    DDP_CHECK_ALLOC(pd->skipped);
    memcpy(pd->scale, pr->scale, (size_t)total * sizeof(float));
    memcpy(pd->skipped, pr->skipped, (size_t)total * sizeof(int));
  }
  return DDP_OK;
}

void phase_data_free(phase_data *pd) {
  free(pd->step_ms);
  free(pd->compute_ms);
  free(pd->bucket_ms);
  free(pd->loss);
  free(pd->scale);
  free(pd->skipped);
  memset(pd, 0, sizeof *pd);
}

/* On the group's rank 0: the phase's records, derived exactly as the job's report derives its own (one
 * summary, one phase section, one mapping to records). */
/* Every member's world rank and host, on the group's rank 0 (for the records' labels). */
typedef struct {
  int rank;
  char host[64];
} member;

static ddp_result members_gather(const measure_env *env, const measure_group *g, member **all) {
  member mine;
  memset(&mine, 0, sizeof mine);
  mine.rank = g->world_rank;
  snprintf(mine.host, sizeof mine.host, "%.63s", env->dist->host);
  *all = g->rank == 0 ? calloc((size_t)g->size, sizeof **all) : NULL;
  if (g->rank == 0 && !*all) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  DDP_CHECK_MPI(MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, *all, (int)sizeof mine, MPI_BYTE, 0, g->mpi));
  return DDP_OK;
}

static ddp_result phase_records(const measure_env *env, const measure_group *g, engine *eng, ddp_phase p,
                                phase_data *pd, const member *members, result_doc *out) {
  run_report rep;
  memset(&rep, 0, sizeof rep);
  rank_info *ranks = calloc((size_t)g->size, sizeof *ranks); /* no GEMM peak, no checksums: not this one's job */
  DDP_CHECK_ALLOC(ranks);
  rep.cfg = env->cfg;
  rep.world = g->size;
  rep.nodes = 1;
  rep.ranks = ranks;
  rep.plan = engine_buckets(eng);
  rep.fsdp = engine_fsdp_plan(eng);
  rep.fsdp_alloc = engine_fsdp_allocated(eng);
  rep.fsdp_device_drop = engine_fsdp_device_drop(eng);
  (void)engine_comm_log(eng, &rep.slots);
  rep.comm_bytes = engine_comm_bytes(eng);
  rep.comm_type = engine_comm_dtype(eng);
  rep.flops_per_step = engine_flops_per_step(eng);
  rep.phases[p] = *pd;
  train_link_bound(env->dev, &rep);
  run_summary s;
  ddp_result r = report_summarize(&rep, &s);
  int *rank_of = calloc((size_t)g->size, sizeof *rank_of);
  const char **host_of = calloc((size_t)g->size, sizeof *host_of);
  if (r == DDP_OK && (!rank_of || !host_of)) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int i = 0; rank_of && host_of && i < g->size; i++) rank_of[i] = members[i].rank, host_of[i] = members[i].host;
  if (r == DDP_OK) r = report_records(&rep, &s, g->name, rank_of, host_of, 0, out);
  free(rank_of);
  free(host_of);
  report_summary_free(&s);
  free(ranks);
  return r;
}

static ddp_result agree_max(void *ctx, double *v, int n) {
  const measure_group *g = ctx;
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, g->mpi));
  return DDP_OK;
}

void train_link_bound(ddp_device *dev, run_report *rep) {
  rep->link_gbs = 0;
  if (dev && dev->max_link_gbs)
    rep->link_gbs = dev->max_link_gbs(dev, rep->link_why, sizeof rep->link_why);
  else
    snprintf(rep->link_why, sizeof rep->link_why, "no bound: the %s device states none", dev ? dev->name : "(no)");
  if (!(rep->link_gbs > 0)) rep->link_gbs = 0;
}

/* --warmup-seconds, with -1 standing for the device's own (2 s on GPUs, 0 on the cpu device). */
double train_settle_seconds(const ddp_config *cfg, const device_entry *device) {
  if (cfg->warmup_seconds >= 0) return cfg->warmup_seconds;
  return device ? device->settle_seconds : 0;
}

static ddp_result train_run(const measure_env *env, const measure_group *g, ddp_phase p, result_doc *out) {
  train_state scratch, *t = env->train ? env->train : &scratch;
  if (!env->train) memset(&scratch, 0, sizeof scratch);
  ddp_result r = DDP_OK;
  if (t->comm != g->comm || !t->eng) { /* a new group: a new model over its comm */
    engine_free(t->eng);
    t->eng = NULL;
    t->comm = g->comm;
    r = engine_create(&t->eng, env->cfg, env->dev, g->comm, env->progress, env->progress_ctx);
  }
  phase_result_free(&t->res[p]);
  double settle = train_settle_seconds(env->cfg, env->device), spent = 0;
  if (r == DDP_OK && settle > 0) r = engine_settle(t->eng, p, settle, agree_max, (void *)g, &spent);
  if (r == DDP_OK) r = engine_run_phase(t->eng, p, &t->res[p]);
  if (r == DDP_OK) t->res[p].settle_s = spent;
  if (r == DDP_OK) t->ran[p] = 1;
  if (r == DDP_OK && (p == PHASE_DDP || p == PHASE_FSDP)) { /* the training phase: its weights, bitwise */
    r = engine_weights_verify(t->eng, &t->checksum, &t->nonfinite);
    t->checksum_valid = r == DDP_OK;
  }
  if (r == DDP_OK && !env->train) { /* nobody keeps the phase: gather it and make records */
    phase_data pd;
    member *members = NULL;
    memset(&pd, 0, sizeof pd);
    r = train_gather(g->mpi, &t->res[p], &pd, env->cfg->precision == PREC_FP16);
    if (r == DDP_OK) r = members_gather(env, g, &members);
    if (r == DDP_OK && g->rank == 0) r = phase_records(env, g, t->eng, p, &pd, members, out);
    phase_data_free(&pd);
    free(members);
  }
  if (!env->train) train_state_free(&scratch);
  return r;
}

static ddp_result run_local(const measure_env *env, const measure_group *g, result_doc *out) {
  return train_run(env, g, PHASE_LOCAL, out);
}
static ddp_result run_comm(const measure_env *env, const measure_group *g, result_doc *out) {
  return train_run(env, g, PHASE_COMM, out);
}
static ddp_result run_ddp(const measure_env *env, const measure_group *g, result_doc *out) {
  return train_run(env, g, PHASE_DDP, out);
}

static ddp_result run_fsdp(const measure_env *env, const measure_group *g, result_doc *out) {
  return train_run(env, g, PHASE_FSDP, out);
}

const measurement measure_local = {PHASE_NAME_LOCAL, "every rank trains its own copy, no communication (the no-DDP baseline)",
                                   run_local, NULL, NULL, 0};
const measurement measure_comm = {PHASE_NAME_COMM, "the training phase's collectives alone (ddp's bucket allreduces, fsdp's "
                                  "all-gathers and reduce-scatters), same sizes and order", run_comm, NULL, NULL, 0};
const measurement measure_ddp = {PHASE_NAME_DDP, "training with each bucket's allreduce overlapping the backward pass",
                                 run_ddp, NULL, NULL, 0};
const measurement measure_fsdp = {PHASE_NAME_FSDP, "FSDP2's step: all-gathers prefetched one layer ahead, gradients "
                                  "reduce-scattered during the backward pass, sharded SGD (strategy fsdp)", run_fsdp,
                                  NULL, NULL, 0};
