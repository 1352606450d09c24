/* scaling.c: the scaling sweep (--sweep). The training phases (local, comm, ddp, as --phases lists
 * them; ddp required) run on groups of growing size inside one job: 1, 2, 4, ... ranks of the first node up
 * to all of its ranks, then all the ranks of the first 2, 4, ... nodes, then the whole job. Each group is
 * `first:<k>` of measure.h (the first k ranks in node order), built with comm->split; the ranks outside it
 * wait asleep (measure_run). Per group, on its rank 0, it records under measurement "scaling":
 *   gpus      the group's size, labelled with the ranks and hosts that formed it (ranks "0-3", hosts "a,b")
 *   nodes     how many nodes those ranks span
 *   step_ms, samples_per_s                   the ddp phase (slowest rank per step, median over steps)
 *   local_step_ms, comm_step_ms               the other phases, when they ran
 *   exposed_comm_ms, hidden_comm_fraction     as the job's report derives them (report_summarize)
 *   busbw_gbs                                 the bucket allreduces inside the ddp phase: nccl-tests' bus
 *                                             bandwidth of all bytes over all their time (0 for one rank)
 *   local_efficiency                          local / ddp step in the group
 *   rank_step_ms {rank, host}                 each rank's median ddp step (the heat map's cells)
 * and, once every group has run, on world rank 0: efficiency = step(first:1) / step(first:k), weak scaling
 * against the 1-rank ddp step. Figures come from report_summarize, the one place the job's own come from.
 * Never prints outside its print() (but for the progress lines: each group starts and ends one, progress.h);
 * never touches the device except through the engine. */
#include "scaling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "summary.h"
#include "train.h"

/* ---- the sizes ---------------------------------------------------------------------------------- */
ddp_result sweep_sizes(const ddp_dist *d, int *sizes, int max, int *n) {
  int *node_of = malloc((size_t)d->size * sizeof *node_of), *per_node = calloc((size_t)d->node_count, sizeof(int));
  if (!node_of || !per_node) {
    free(node_of);
    free(per_node);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  ddp_result r = dist_allgather(d, &d->node_index, node_of, (int)sizeof(int));
  for (int i = 0; r == DDP_OK && i < d->size; i++) per_node[node_of[i]]++;
  *n = 0;
#define PUSH(v)                                                          \
  do {                                                                   \
    if (*n < max && (*n == 0 || sizes[*n - 1] < (v))) sizes[(*n)++] = (v); \
  } while (0)
  if (r == DDP_OK) {
    for (int k = 1; k < per_node[0]; k *= 2) PUSH(k); /* inside the first node */
    PUSH(per_node[0]);
    int ranks = per_node[0];
    for (int nodes = 1, next = 2; nodes < d->node_count; nodes++) { /* 2, 4, ... nodes with all their ranks */
      ranks += per_node[nodes];
      if (nodes + 1 == next) {
        PUSH(ranks);
        next *= 2;
      }
    }
    PUSH(d->size);
  }
#undef PUSH
  free(node_of);
  free(per_node);
  return r;
}

/* ---- one group ---------------------------------------------------------------------------------- */
typedef struct {
  int rank, node;
  char host[64];
} sweep_member;

/* "0-3,8,10-11" from sorted ranks. */
static void ranks_text(const sweep_member *m, int n, char *buf, size_t len) {
  size_t o = 0;
  buf[0] = 0;
  for (int i = 0; i < n && o < len;) {
    int j = i;
    while (j + 1 < n && m[j + 1].rank == m[j].rank + 1) j++;
    o += (size_t)(j > i ? snprintf(buf + o, len - o, "%s%d-%d", i ? "," : "", m[i].rank, m[j].rank)
                        : snprintf(buf + o, len - o, "%s%d", i ? "," : "", m[i].rank));
    i = j + 1;
  }
}

static int member_cmp(const void *a, const void *b) {
  return ((const sweep_member *)a)->rank - ((const sweep_member *)b)->rank;
}

/* On the group's rank 0: the records of one group from its gathered phases. */
static ddp_result group_records(const measure_env *env, const measure_group *g, engine *eng, phase_data *pd,
                                sweep_member *mem, result_doc *out) {
  int W = g->size;
  rank_info *ranks = calloc((size_t)W, sizeof *ranks); /* no GEMM peak here: MFU is the job report's */
  DDP_CHECK_ALLOC(ranks);
  for (int i = 0; i < W; i++) {
    ranks[i].rank = mem[i].rank;
    ranks[i].node_index = mem[i].node;
    snprintf(ranks[i].host, sizeof ranks[i].host, "%s", mem[i].host);
  }
  run_report rep;
  memset(&rep, 0, sizeof rep);
  rep.cfg = env->cfg;
  rep.world = W;
  rep.ranks = ranks;
  rep.plan = engine_buckets(eng);
  rep.fsdp = engine_fsdp_plan(eng);
  rep.fsdp_alloc = engine_fsdp_allocated(eng);
  rep.fsdp_device_drop = engine_fsdp_device_drop(eng);
  (void)engine_comm_log(eng, &rep.slots);
  rep.comm_bytes = engine_comm_bytes(eng);
  rep.comm_type = engine_comm_dtype(eng);
  rep.flops_per_step = engine_flops_per_step(eng);
  for (int p = 0; p < PHASE_COUNT; p++) rep.phases[p] = pd[p];
  run_summary s;
  ddp_result r = report_summarize(&rep, &s);
  free(ranks);
  DDP_TRY(r);

  /* Which ranks, which hosts, how many nodes (mem stays in group order: the phases' rows follow it). */
  char rk[512], hosts[512] = "";
  sweep_member *sorted = malloc((size_t)W * sizeof *sorted);
  if (!sorted) {
    report_summary_free(&s);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  memcpy(sorted, mem, (size_t)W * sizeof *sorted);
  qsort(sorted, (size_t)W, sizeof *sorted, member_cmp);
  ranks_text(sorted, W, rk, sizeof rk);
  free(sorted);
  int nodes = 0;
  size_t o = 0;
  for (int i = 0; i < W; i++) {
    int seen = 0;
    for (int j = 0; j < i && !seen; j++) seen = mem[j].node == mem[i].node;
    if (seen) continue;
    nodes++;
    if (o < sizeof hosts) o += (size_t)snprintf(hosts + o, sizeof hosts - o, "%s%s", o ? "," : "", mem[i].host);
  }
  const char *G = g->name;
  const phase_summary *lo = &s.ph[PHASE_LOCAL], *cm = &s.ph[PHASE_COMM], *dd = &s.ph[report_train_phase(&rep)];
  /* busbw inside the training phase: all the calls' bus bytes (each kind's nccl-tests factor) over all their
   * time; NaN on one rank */
  double bytes = 0, us = 0;
  for (int k = 0; k < dd->nrows; k++) {
    bytes += (double)dd->rows[k].bytes * dd->rows[k].nbuckets * row_bus_factor(&dd->rows[k], W);
    us += dd->rows[k].time_us * dd->rows[k].nbuckets;
  }
  double busbw = us > 0 && W > 1 ? bytes / (us * 1e-6) / 1e9 : NAN;
  struct {
    const char *metric, *unit;
    result_better better;
    int present;
    double v;
    const ddp_stats *st;
    const char *why;
  } fig[] = {{"nodes", "", BETTER_NONE, 1, nodes, NULL, NULL},
             {"step_ms", "ms", BETTER_LOWER, 1, dd->step.median, &dd->step, NULL},
             {"samples_per_s", "1/s", BETTER_HIGHER, 1, dd->samples_per_s, NULL, NULL},
             {"local_step_ms", "ms", BETTER_LOWER, lo->present, lo->step.median, &lo->step, NULL},
             {"comm_step_ms", "ms", BETTER_LOWER, cm->present, cm->step.median, &cm->step, NULL},
             {"exposed_comm_ms", "ms", BETTER_LOWER, lo->present, s.exposed_comm_ms, NULL, s.overlap_why},
             {"hidden_comm_fraction", "", BETTER_HIGHER, lo->present && cm->present, s.hidden_fraction, NULL, s.overlap_why},
             {"busbw_gbs", "GB/s", BETTER_HIGHER, 1, busbw, NULL, W == 1 ? dd->why_bw : NULL},
             {"local_efficiency", "", BETTER_HIGHER, lo->present, s.scaling_efficiency, NULL, s.why_efficiency}};
  r = result_add(out, "scaling", G, "gpus", "", BETTER_NONE, W, NULL, NULL, 0, "ranks", rk, "hosts", hosts, NULL);
  for (size_t k = 0; r == DDP_OK && k < sizeof fig / sizeof fig[0]; k++)
    if (fig[k].present) {
      r = result_add(out, "scaling", G, fig[k].metric, fig[k].unit, fig[k].better, fig[k].v, fig[k].st, NULL, 0, NULL);
      if (r == DDP_OK) r = result_set_why(out, fig[k].why);
    }
  for (int i = 0; r == DDP_OK && i < W; i++) {
    char rank[16];
    snprintf(rank, sizeof rank, "%d", mem[i].rank);
    r = result_add(out, "scaling", G, "rank_step_ms", "ms", BETTER_LOWER, dd->rank_step[i].median, &dd->rank_step[i],
                   NULL, 0, "rank", rank, "host", mem[i].host, NULL);
  }
  report_summary_free(&s);
  return r;
}

/* Collective over g: the configured phases on one engine over g's comm, gathered to g's rank 0. */
static ddp_result scaling_run(const measure_env *env, const measure_group *g, result_doc *out) {
  int order[3], nph = config_phases(env->cfg, order);
  engine *eng = NULL;
  phase_result res[PHASE_COUNT];
  phase_data pd[PHASE_COUNT];
  memset(res, 0, sizeof res);
  memset(pd, 0, sizeof pd);
  sweep_member mine, *mem = NULL;
  memset(&mine, 0, sizeof mine);
  mine.rank = g->world_rank;
  mine.node = env->dist->node_index;
  snprintf(mine.host, sizeof mine.host, "%.63s", env->dist->host);
  ddp_result r = engine_create(&eng, env->cfg, env->dev, g->comm, env->progress, env->progress_ctx);
  for (int k = 0; r == DDP_OK && k < nph; k++) r = engine_run_phase(eng, (ddp_phase)order[k], &res[order[k]]);
  for (int k = 0; r == DDP_OK && k < nph; k++)
    r = train_gather(g->mpi, &res[order[k]], &pd[order[k]], env->cfg->precision == PREC_FP16);
  if (r == DDP_OK && g->rank == 0) {
    mem = calloc((size_t)g->size, sizeof *mem);
    if (!mem) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  if (r == DDP_OK) {
    int e = MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, mem, (int)sizeof mine, MPI_BYTE, 0, g->mpi);
    if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Gather", __FILE__, __LINE__);
  }
  if (r == DDP_OK && g->rank == 0) r = group_records(env, g, eng, pd, mem, out);
  for (int p = 0; p < PHASE_COUNT; p++) {
    phase_result_free(&res[p]);
    phase_data_free(&pd[p]);
  }
  free(mem);
  engine_free(eng);
  return r;
}

/* ---- the table ---------------------------------------------------------------------------------- */
static double value_of(const result_doc *d, const char *group, const char *metric) {
  const result_record *r = result_find(d, "scaling", group, metric, NULL);
  return r ? r->value : NAN;
}

/* The step times' spread (p10 to p90) of the 1-rank group plus group's, over group's median: the noise of an
 * efficiency, as the job's report takes it (summary.c); NaN without statistics. */
static double efficiency_noise(const result_doc *d, const char *group) {
  const result_record *one = result_find(d, "scaling", "first:1", "step_ms", NULL);
  const result_record *g = result_find(d, "scaling", group, "step_ms", NULL);
  if (!one || !g || !one->has_stats || !g->has_stats || !(g->value > 0)) return NAN;
  return report_spread(&one->stats, &g->stats) / g->value;
}

static void scaling_print(FILE *f, const measurement *m, const result_doc *d) {
  (void)m;
  fprintf(f, "#\n# scaling sweep (the training phase, ddp or fsdp, per group; efficiency = its 1-rank step / the group's "
             "step)\n");
  fprintf(f, "# %5s %5s %11s %13s %10s %11s %10s %10s  %s\n", "gpus", "nodes", "step(ms)", "samples/s", "eff(%)",
          "exposed(ms)", "hidden(%)", "busbw", "ranks (hosts)");
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *r = &d->records[i];
    if (strcmp(r->measurement, "scaling") || strcmp(r->metric, "gpus")) continue;
    const char *G = r->group;
    char c[5][32];
    double v[5] = {value_of(d, G, "step_ms"), value_of(d, G, "samples_per_s"), 100 * value_of(d, G, "efficiency"),
                   value_of(d, G, "exposed_comm_ms"), 100 * value_of(d, G, "hidden_comm_fraction")};
    static const char *fmt[5] = {"%.3f", "%.1f", "%.1f", "%.3f", "%.0f"};
    for (int k = 0; k < 5; k++) {
      if (isnan(v[k]))
        snprintf(c[k], sizeof c[k], "-");
      else
        snprintf(c[k], sizeof c[k], fmt[k], v[k]);
    }
    double eff = value_of(d, G, "efficiency");
    if (eff > 1) snprintf(c[2], sizeof c[2], "%.1f±%.1f", 100 * eff, 100 * efficiency_noise(d, G));
    double bw = value_of(d, G, "busbw_gbs");
    char b[32];
    ddp_fmt_figure(b, sizeof b, bw);
    fprintf(f, "  %5.0f %5.0f %11s %13s %10s %11s %10s %10s  %s (%s)\n", r->value, value_of(d, G, "nodes"), c[0], c[1],
            c[2], c[3], c[4], b, result_record_label(r, "ranks"), result_record_label(r, "hosts"));
  }
  fprintf(f, "# busbw: GB/s of the collectives inside the training phase (ddp's bucket allreduces, fsdp's all-gathers\n"
             "# and reduce-scatters; nccl-tests' bus bandwidth; - on 1 rank:\n"
             "# no data moves between ranks). eff above 100 %%: within the step times' noise (±), else - (cannot tell)\n");
}

const measurement measure_scaling = {"scaling", "the train phases on the first 1, 2, 4, ... ranks of a node, then "
                                                "1, 2, 4, ... nodes and the job (--sweep)",
                                     scaling_run, scaling_print, NULL, 0};

/* ---- the sweep ---------------------------------------------------------------------------------- */
ddp_result sweep_run(const measure_env *env, ddp_comm *world, result_doc *doc) {
  int sizes[64], n = 0;
  DDP_TRY(sweep_sizes(env->dist, sizes, 64, &n));
  for (int i = 0; i < n; i++) {
    measure_round *rounds = NULL;
    int nr = 0;
    char label[32];
    snprintf(label, sizeof label, "np=%d", sizes[i]);
    progress_group(i, n, label); /* rank 0 is in every group: its phases are the group's */
    ddp_result r = measure_rounds_build(env->dist, world, GROUP_FIRST, sizes[i], &rounds, &nr);
    if (r == DDP_OK) r = measure_run(env, &measure_scaling, rounds, nr, doc);
    measure_rounds_free(rounds, nr);
    DDP_TRY(r);
  }
  progress_group_end();
  return env->dist->rank == 0 ? sweep_efficiency(doc) : DDP_OK;
}

/* Efficiency = the 1-rank step over the group's. Above 100 % a group beats a single rank, which weak scaling
 * cannot do: within the step times' noise it is given (and printed with that noise), beyond it the sweep cannot
 * tell. */
ddp_result sweep_efficiency(result_doc *doc) {
  double one = value_of(doc, "first:1", "step_ms");
  int n = doc->nrecords; /* the groups' records; the new ones go after them */
  for (int i = 0; i < n; i++) {
    const result_record *r = &doc->records[i];
    if (strcmp(r->measurement, "scaling") || strcmp(r->metric, "step_ms")) continue;
    char group[64], why[256] = "";
    snprintf(group, sizeof group, "%s", r->group); /* result_add may move the records */
    double eff = r->value > 0 && one > 0 ? one / r->value : NAN, noise = efficiency_noise(doc, group);
    if (eff > 1 && !(eff - 1 <= noise)) {
      snprintf(why, sizeof why, "cannot tell: the group's ddp step (%.3f ms) is faster than the 1-rank one (%.3f ms) "
               "beyond the step times' spread", r->value, one);
      eff = NAN;
    }
    DDP_TRY(result_add(doc, "scaling", group, "efficiency", "", BETTER_HIGHER, eff, NULL, NULL, 0, NULL));
    DDP_TRY(result_set_why(doc, why));
  }
  return DDP_OK;
}

/* Where the curve bends: the step between consecutive sizes with the largest fall in efficiency, inside the
 * first node (NVLink, PCIe) or across nodes (the network). Info only: a sweep states, the floors judge. */
ddp_result sweep_findings(const result_doc *doc, finding_list *f) {
  double prev_eff = NAN, prev_nodes = NAN, best = 0;
  int prev_gpus = 0, a = 0, b = 0, across = 0;
  double ea = NAN, eb = NAN;
  for (int i = 0; i < doc->nrecords; i++) {
    const result_record *r = &doc->records[i];
    if (strcmp(r->measurement, "scaling") || strcmp(r->metric, "gpus")) continue;
    double eff = value_of(doc, r->group, "efficiency"), nodes = value_of(doc, r->group, "nodes");
    if (prev_gpus && !isnan(eff) && !isnan(prev_eff) && prev_eff - eff > best) {
      best = prev_eff - eff;
      a = prev_gpus, b = (int)r->value, ea = prev_eff, eb = eff;
      across = nodes > prev_nodes;
    }
    prev_gpus = (int)r->value, prev_eff = eff, prev_nodes = nodes;
  }
  if (!a) return DDP_OK;
  return findings_add(f, "scaling", SEV_INFO, SCOPE_JOB, "job", eb, ea, "",
                      "weak-scaling efficiency falls most from %d to %d GPUs (%s): %.1f %% -> %.1f %%", a, b,
                      across ? "across nodes: the network" : "inside one node", ea * 100, eb * 100);
}
