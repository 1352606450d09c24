/* run.c: `ddpbench [options]`, the training run: the local, comm and ddp phases over the world (then the
 * scaling sweep and --groups when asked), the report, and the findings every verdict of the run becomes. The
 * skeleton (cmd.h) reads the options, starts MPI under the watchdog, agrees before work and places the device
 * and comm; this file binds each rank near its GPU before the device exists, builds the engine, measures and
 * reports. With no options at all on GPUs it is the GPU default job: a bf16 model sized from the smallest GPU,
 * then `ddpbench accept --health-seconds 3`, one exit code for both.
 *
 * Measurements and printing are separate passes; only rank 0 prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "bottom.h"
#include "bottom_figures.h"
#include "commands.h"
#include "config.h"
#include "default_job.h"
#include "engine.h"
#include "gpu_default.h"
#include "health.h"
#include "measure.h"
#include "progress.h"
#include "train.h"
#include "scaling.h"
#include "expect.h"
#include "run_baseline.h"
#include "run_report.h"
#include "testhooks.h"
#include "topo.h"
#include "watchdog.h"

typedef struct {
  ddp_config cfg;
} run_args;

/* ---- progress ----------------------------------------------------------------------------------- */
static struct {
  int rank;
} g_watch;

/* Test hook for the fault tests (watchdog_test_fault): DDPBENCH_TEST_FAULT=ACTION:RANK:PHASE acts in phase
 * PHASE's second step. DDPBENCH_TEST_STALL_RANK=r is stall:r:ddp. */
static void maybe_fault(ddp_phase p, int step) {
  if (step != 1) return;
  if (!testhook_value(HOOK_FAULT) && testhook_int(HOOK_STALL_RANK, -1) == g_watch.rank && p == PHASE_DDP)
    watchdog_test_fault_act("stall", g_watch.rank, "ddp");
  watchdog_test_fault(g_watch.rank, phase_name(p));
}

/* The engine's step callback, as each step is enqueued: the watchdog's location, and the progress lines (a
 * phase begins at its first step; progress.h: a clock read and a compare unless a line is due). The phase
 * ends where its caller says so, or when the next one begins. */
static void on_progress(void *ctx, ddp_phase p, int step, int nsteps) {
  (void)ctx;
  maybe_fault(p, step);
  char what[128];
  if (step + 1 < nsteps)
    snprintf(what, sizeof what, "phase %s, step %d of %d", phase_name(p), step + 1, nsteps);
  else /* the engine now waits for the device and the comm stream, then the job's next collective */
    snprintf(what, sizeof what, "phase %s: all %d steps enqueued, then waiting (device, allreduces or the next "
             "collective)", phase_name(p), nsteps);
  watchdog_tick(what);
  if (step == 0) {
    char name[64];
    snprintf(name, sizeof name, "phase %s", phase_name(p));
    progress_phase(name, nsteps, "step");
  }
  progress_step(step + 1);
}

/* A rank outside a measurement's group waits (measure_run). Its location is recorded, but the timer is not
 * reset: a wait that outlasts --timeout ends the job, since ticking here would hide a stopped peer for ever. */
static void on_waiting(void *ctx, const char *what) {
  (void)ctx;
  watchdog_where(what);
}

/* ---- options ------------------------------------------------------------------------------------ */
static ddp_result run_tables(opt_set *s, void *args) { return config_tables_add(s, &((run_args *)args)->cfg); }

static double run_timeout(const void *args) { return ((const run_args *)args)->cfg.timeout; }

/* Where the first of two keys that the user set came from (the file and line, or the option); NULL: neither. */
static const char *first_where(const cmd_ctx *c, const char *k1, const char *k2, char *buf, size_t n) {
  const char *w = opt_where(&c->opts, k1, buf, n);
  return w ? w : opt_where(&c->opts, k2, buf, n);
}

static ddp_result run_validate(cmd_ctx *c) {
  ddp_config *cfg = &((run_args *)c->args)->cfg;
  DDP_TRY(config_finish(cfg, &c->opts));
  if (cfg->quiet) cfg->progress = PROGRESS_NONE; /* --quiet: no progress lines, whatever --progress says */
  /* What an explicitly chosen device or comm needs comes from its table entry. */
  const device_entry *de = device_chosen(c->want.device);
  const comm_entry *ce = comm_chosen(c->want.comm);
  char w[1100];
  const char *where;
  if (cfg->precision == PREC_TF32 && de && !de->is_gpu) {
    where = first_where(c, "precision", "device", w, sizeof w);
    return ddp_usage_error("%s%sprecision tf32 needs a GPU device (the %s device has no tf32 arithmetic)",
                           where ? where : "", where ? ": " : "", de->name);
  }
  if (ce && ce->needs_device && de && strcmp(ce->needs_device, de->name) != 0) {
    where = first_where(c, "comm", "device", w, sizeof w);
    return ddp_usage_error("%s%scomm %s needs the %s device", where ? where : "", where ? ": " : "", ce->name,
                           ce->needs_device);
  }
  if (cfg->cuda_graph && de && !de->is_gpu) {
    where = first_where(c, "cuda_graph", "device", w, sizeof w);
    return ddp_usage_error("%s%scuda_graph needs a GPU device", where ? where : "", where ? ": " : "");
  }
  if (!measure_find(cfg->group_measure)) { /* also without --groups: a bad key is bad input */
    char names[256];
    measure_names(names, sizeof names);
    where = opt_where(&c->opts, "group_measure", w, sizeof w);
    return ddp_usage_error("%s%sgroup_measure: no measurement '%s' (there are: %s)", where ? where : "",
                           where ? ": " : "", cfg->group_measure, names);
  }
  const char *other = phase_name(cfg->strategy == STRATEGY_FSDP ? PHASE_DDP : PHASE_FSDP);
  if (!strcmp(cfg->group_measure, other)) { /* the other strategy's training phase: not this engine's */
    where = first_where(c, "group_measure", "strategy", w, sizeof w);
    return ddp_usage_error("%s%sgroup_measure %s belongs to strategy %s; strategy %s measures %s", where ? where : "",
                           where ? ": " : "", other, other, strategy_name((ddp_strategy)cfg->strategy),
                           phase_name(phase_train((ddp_strategy)cfg->strategy)));
  }
  return DDP_OK;
}

/* ---- the job ------------------------------------------------------------------------------------ */
typedef struct {
  cmd_ctx *c;
  ddp_config *cfg;
  topo_rank *topo;
  train_state train; /* the world's engine and phase results (the train measurements leave them here) */
  rank_info *ranks;  /* rank 0: [world] */
  topo_rank_rec *topo_recs;
  run_report rep;
  run_summary sum;
  int have_sum;
  result_doc extra; /* rank 0: the sweep's and the groups' records */
  cJSON *topo_json;
  char *topo_text;
  size_t topo_text_len;
  run_baseline base; /* --baseline's spreads, the same on every rank */
} job;

static job g_job;

/* --baseline: rank 0 reads the files and checks that they are runs of this job (run_baseline_read), before any
 * measuring; the outcome and the spreads go to every rank, so that a baseline that does not fit is a usage
 * error on every rank alike and every rank holds the figures the rule judges with. */
static ddp_result baseline_share(cmd_ctx *c, const ddp_config *cfg, run_baseline *b) {
  memset(b, 0, sizeof *b);
  if (!cfg->baseline[0]) return DDP_OK;
  struct {
    int rc;
    run_baseline b;
  } msg;
  memset(&msg, 0, sizeof msg);
  if (c->dist.rank == 0) {
    watchdog_tick("rank 0: reading --baseline");
    run_baseline_job want = {c->dist.size, cfg->hidden, cfg->layers, cfg->batch, c->pl.device->name,
                             precision_name(cfg->precision), {0}};
    int order[3], n = config_phases(cfg, order);
    for (int k = 0; k < n; k++) want.judged[order[k]] = order[k] != PHASE_COMM;
    char w[1100], where[1200] = "--baseline";
    const char *at = opt_where(&c->opts, "baseline", w, sizeof w);
    if (at && at[0] != '-') snprintf(where, sizeof where, "%s: baseline", at);
    msg.rc = run_baseline_read(cfg->baseline, where, &want, &msg.b);
  }
  DDP_CHECK_MPI(MPI_Bcast(&msg, (int)sizeof msg, MPI_BYTE, 0, c->dist.world));
  if (msg.rc == DDP_ERR_USAGE) return DDP_ERR_USAGE; /* rank 0 said why */
  if (msg.rc != DDP_OK) return c->dist.rank == 0 ? (ddp_result)msg.rc : DDP_ERR_INTERNAL;
  *b = msg.b;
  return DDP_OK;
}

/* Bound near the GPU before any device context exists (the skeleton creates the device next). */
static ddp_result run_placed(cmd_ctx *c) {
  job *j = &g_job;
  ddp_config *cfg = &((run_args *)c->args)->cfg;
  memset(j, 0, sizeof *j);
  j->c = c;
  j->cfg = cfg;
  cfg->gpu_default = c->argc == 1 && c->pl.device->is_gpu; /* `mpirun ddpbench`: sized from the GPUs */
  if (!c->pl.device->is_gpu) { /* auto found no GPU: what needs one is bad input (the same on every rank) */
    if (cfg->precision == PREC_TF32) return ddp_usage_error("--precision tf32 needs a GPU device, and no GPU is visible");
    if (cfg->cuda_graph) return ddp_usage_error("--cuda-graph needs a GPU device, and no GPU is visible");
  }
  if (ddp_list_has(cfg->groups, "pairs") && c->dist.node_count < 2) /* measuring nothing silently */
    return ddp_usage_error("--groups pairs needs ranks on at least 2 nodes (this job has %d)", c->dist.node_count);
  DDP_TRY(baseline_share(c, cfg, &j->base));
  topo_options topt = {cfg->bind == BIND_GPU ? 1 : cfg->bind == BIND_NONE ? 0 : -1, cfg->pcie,
                       cfg->topo_xml[0] ? cfg->topo_xml : NULL, c->out.force};
  return topo_rank_init(&c->dist, &topt, c->pl.device->is_gpu ? c->pl.bus_id : NULL, &j->topo);
}

static ddp_result default_size(ddp_config *cfg, const ddp_dist *d, const ddp_device *dev) {
  double mem, peak;
  int fits;
  gpu_default g;
  DDP_TRY(cmd_gpu_default(d, dev, &g, &mem, &peak, &fits));
  if (!fits)
    return DDP_FAIL(DDP_ERR_USAGE, "the GPU default job needs 2 GiB of GPU memory, the smallest GPU has %.2f GiB; "
                    "give the model with options", mem / (1 << 30));
  gpu_default_config(&g, cfg);
  DDP_TRY(config_validate(cfg, NULL));
  if (d->rank == 0)
    printf("# default GPU acceptance job (no options given): bf16 model H=%d L=%d batch=%d (%.1f GiB of the smallest "
           "GPU's %.1f GiB), %d steps a phase; then `ddpbench accept --health-seconds %g`. Expected about %.0f s "
           "(training %.0f s at %.0f %% of %.0f TFLOP/s bf16, checks %.0f s); nothing runs longer than --timeout "
           "%.0f s without progress\n",
           g.hidden, g.layers, g.batch, g.model_bytes / (1 << 30), mem / (1 << 30), g.steps, g.health_seconds,
           g.total_seconds, g.train_seconds, 100 * GPU_DEFAULT_EFFICIENCY, peak > 0 ? peak : 300, g.accept_seconds,
           cfg->timeout);
  fflush(stdout);
  return DDP_OK;
}

/* Each rank's topology record to rank 0, before any work: the topology report's input. */
static ddp_result topo_gather(job *j) {
  const ddp_dist *d = &j->c->dist;
  topo_rank_rec me;
  memset(&me, 0, sizeof me);
  ddp_versions v;
  cmd_versions(&v);
  topo_rank_rec_fill(j->topo, &v, &me);
  if (d->rank == 0) {
    j->topo_recs = calloc((size_t)d->size, sizeof *j->topo_recs);
    DDP_CHECK_ALLOC(j->topo_recs);
  }
  DDP_CHECK_MPI(MPI_Gather(&me, (int)sizeof me, MPI_BYTE, j->topo_recs, (int)sizeof me, MPI_BYTE, 0, d->world));
  return DDP_OK;
}

/* What each rank measured of itself, to rank 0, into the rank table. */
typedef struct {
  double gemm_tflops;
  uint64_t checksum, nonfinite;
  int checksum_valid;
} rank_outcome;

static ddp_result outcome_gather(job *j, const rank_outcome *me) {
  const ddp_dist *d = &j->c->dist;
  rank_outcome *all = d->rank == 0 ? calloc((size_t)d->size, sizeof *all) : NULL;
  if (d->rank == 0 && !all) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  int e = MPI_Gather(me, (int)sizeof *me, MPI_BYTE, all, (int)sizeof *me, MPI_BYTE, 0, d->world);
  ddp_result r = e == MPI_SUCCESS ? DDP_OK : mpi_fail(e, "MPI_Gather(rank outcomes)", __FILE__, __LINE__);
  if (r == DDP_OK && d->rank == 0) {
    j->ranks = calloc((size_t)d->size, sizeof *j->ranks);
    if (!j->ranks) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  for (int k = 0; r == DDP_OK && all && k < d->size; k++) {
    const cmd_rank *id = &j->c->ranks[k];
    rank_info *x = &j->ranks[k];
    x->rank = id->rank, x->local_rank = id->local_rank, x->node_index = id->node_index, x->pid = id->pid;
    snprintf(x->host, sizeof x->host, "%s", id->host);
    x->host_hash = id->host_hash;
    x->dev = id->dev;
    x->ver = id->ver;
    x->gemm_tflops = all[k].gemm_tflops;
    x->checksum = all[k].checksum;
    x->nonfinite = all[k].nonfinite;
    x->checksum_valid = all[k].checksum_valid;
  }
  free(all);
  return r;
}

static void job_free(job *j) {
  if (j->have_sum) report_summary_free(&j->sum);
  result_free(&j->extra);
  for (int p = 0; p < PHASE_COUNT; p++) phase_data_free(&j->rep.phases[p]);
  free(j->ranks);
  free(j->topo_recs);
  if (j->topo_json) cJSON_Delete(j->topo_json);
  free(j->topo_text);
  train_state_free(&j->train);
  topo_rank_free(j->topo);
  memset(j, 0, sizeof *j);
}

/* This rank's GEMM rate behind MFU(meas): on a GPU an 8192^3 GEMM sustained --peak-seconds (health.h), else
 * one H x H x H burst on the run's engine. */
static ddp_result measure_peak(job *j, rank_outcome *mine) {
  cmd_ctx *c = j->c;
  watchdog_tick("timing one GEMM");
  if (c->pl.device->is_gpu && j->cfg->peak_seconds > 0)
    return health_peak_tflops(c->dev, (int)j->cfg->precision, j->cfg->peak_seconds, &mine->gemm_tflops);
  return engine_measure_gemm(j->train.eng, &mine->gemm_tflops);
}

static ddp_result job_measure(job *j, rank_outcome *mine, const measurement **grouped) {
  cmd_ctx *c = j->c;
  ddp_config *cfg = j->cfg;
  ddp_dist *d = &c->dist;
  if (cfg->gpu_default) DDP_TRY(default_size(cfg, d, c->dev));

  watchdog_tick("topology report");
  DDP_TRY(topo_gather(j));
  int consistent = 1;
  /* Rank 0 keeps the topology block and prints it inside the summary, after the devices. */
  FILE *topo_out = d->rank == 0 ? open_memstream(&j->topo_text, &j->topo_text_len) : NULL;
  if (d->rank == 0 && !topo_out) return DDP_FAIL(DDP_ERR_SYSTEM, "open_memstream: %s", ddp_strerror_errno());
  ddp_result tr = topo_rank_report_gathered(j->topo, j->topo_recs, topo_out, &j->topo_json, &consistent);
  if (topo_out) fclose(topo_out);
  free(j->topo_recs);
  j->topo_recs = NULL;
  DDP_TRY(tr);

  watchdog_tick("allocating the model");
  j->train.comm = c->comm;
  DDP_TRY(engine_create(&j->train.eng, cfg, c->dev, c->comm, on_progress, NULL));
  /* The measured peak comes after every timed measurement: a sustained GEMM at the power cap leaves the GPU
   * slower for seconds after it (6 % on the H200's 1024 x 32 x 1024 graph step, docs/steady.md). The test
   * hook puts it back before them, for the order test that shows it. */
  int peak_first = testhook_int(HOOK_PEAK_FIRST, 0) == 1;
  if (peak_first) DDP_TRY(measure_peak(j, mine));

  /* The phases: the train measurements over the world, on the engine above; they leave their results in
   * j->train for the report below. */
  measure_env env = {.cfg = cfg, .dist = d, .dev = c->dev, .progress = on_progress, .train = &j->train,
                     .waiting = on_waiting, .device = c->pl.device};
  measure_round *world = NULL;
  int nworld = 0;
  ddp_result r = measure_rounds_build(d, c->comm, GROUP_WORLD, 0, &world, &nworld);
  int order[3], nphases = config_phases(cfg, order); /* validated with the options */
  for (int k = 0; k < nphases && r == DDP_OK; k++) {
    r = measure_run(&env, measure_find(phase_name((ddp_phase)order[k])), world, nworld, NULL);
    progress_phase_end();
  }
  measure_rounds_free(world, nworld);
  if (r == DDP_OK && cfg->sweep) { /* groups of growing size, each on its own engine */
    measure_env senv = env;
    senv.train = NULL;
    r = sweep_run(&senv, c->comm, &j->extra);
  }
  if (r == DDP_OK && cfg->groups[0]) { /* --groups: the measurement over the groups a user asked for */
    measure_env genv = env;
    genv.train = NULL;
    int ran = 0; /* --group-measure a phase this run measured over the world: those are its world records */
    for (int k = 0; k < nphases; k++) ran |= !strcmp(cfg->group_measure, phase_name((ddp_phase)order[k]));
    r = measure_groups_run(&genv, c->comm, &j->extra, grouped, ran);
  }
  if (r == DDP_OK && !peak_first) r = measure_peak(j, mine);
  if (r == DDP_OK && j->train.checksum_valid) {
    mine->checksum = j->train.checksum;
    mine->checksum_valid = 1;
    mine->nonfinite = j->train.nonfinite;
    /* Test hook for the verification path: DDPBENCH_TEST_CORRUPT_RANK=r reports rank r's weights as if
     * one bit had flipped, as silent data corruption would. */
    if (testhook_int(HOOK_CORRUPT_RANK, -1) == d->rank) mine->checksum ^= 1;
  }
  return r;
}

/* NCCL's choice (algorithm, protocol, channels) for the training's bucket allreduces, for its account: one
 * untimed allreduce of each bucket's size and type after every timed phase, with the transport recording
 * (comm.h record_choices), since nothing may be recorded inside the step loop. Same communicator, size, type
 * and op as the steps', so the same choice. Collective (every rank has the same plan). No-op without it. */
static ddp_result record_bucket_choices(cmd_ctx *c, const engine *eng) {
  ddp_comm *comm = c->comm;
  ddp_device *dev = c->dev;
  const bucket_plan *plan = eng ? engine_buckets(eng) : NULL;
  if (!comm || !comm->record_choices || !plan || !plan->nbuckets) return DDP_OK;
  ddp_dtype dt = engine_comm_dtype(eng);
  size_t most = 0;
  for (int b = 0; b < plan->nbuckets; b++) most = plan->buckets[b].count > most ? plan->buckets[b].count : most;
  void *buf = NULL;
  ddp_stream *s = NULL;
  ddp_result r = dev->alloc(dev, &buf, most * dtype_size(dt));
  if (r == DDP_OK) r = dev->stream_create(dev, &s, 0);
  if (r == DDP_OK) r = dev->memset_zero(dev, buf, most * dtype_size(dt), s);
  comm->record_choices(comm, 1);
  for (int b = 0; b < plan->nbuckets && r == DDP_OK; b++) {
    int seen = 0; /* one call a distinct size */
    for (int k = 0; k < b; k++) seen |= plan->buckets[k].count == plan->buckets[b].count;
    if (!seen) r = comm->allreduce(comm, buf, plan->buckets[b].count, dt, s);
  }
  if (r == DDP_OK) r = dev->stream_synchronize(dev, s);
  comm->record_choices(comm, 0);
  if (s) dev->stream_destroy(dev, s);
  if (buf) dev->free(dev, buf);
  return r;
}

static ddp_result run_run(cmd_ctx *c) {
  job *j = &g_job;
  ddp_config *cfg = j->cfg;
  ddp_dist *d = &c->dist;
  run_report *rep = &j->rep;
  g_watch.rank = d->rank;
  /* rank 0 alone; --quiet is none (run_validate) */
  progress_start(d->rank == 0 ? (progress_mode)cfg->progress : PROGRESS_NONE, NULL, "run");
  c->strict = cfg->strict;
  c->quiet = cfg->quiet;
  result_init(&j->extra);
  snprintf(rep->start_time, sizeof rep->start_time, "%s", c->start_time);
  rank_outcome mine = {NAN, 0, 0, 0};
  const measurement *grouped = NULL;
  ddp_result r = job_measure(j, &mine, &grouped);
  if (r == DDP_OK) {
    watchdog_tick("NCCL's choice for each bucket's allreduce (untimed, after the phases)");
    r = record_bucket_choices(c, j->train.eng);
  }
  progress_end(); /* before anything else is printed (tty: the line's newline) */
  watchdog_tick("gathering results");
  if (r == DDP_OK) r = outcome_gather(j, &mine);
  for (int p = 0; p < PHASE_COUNT && r == DDP_OK; p++)
    if (j->train.ran[p]) r = train_gather(d->world, &j->train.res[p], &rep->phases[p], cfg->precision == PREC_FP16);
  for (int p = 0; p < PHASE_COUNT; p++) phase_result_free(&j->train.res[p]);
  if (r == DDP_OK && d->rank == 0) { /* figures, the report, the findings, the document */
    watchdog_busy("rank 0: the report (the other ranks wait for it)"); /* ended by the skeleton, after the outputs */
    rep->cfg = cfg;
    rep->world = d->size;
    rep->nodes = d->node_count;
    rep->device = c->pl.device->name;
    rep->device_is_gpu = c->pl.device->is_gpu;
    rep->judge_min_ms = c->pl.device->judge_min_ms;
    rep->judge_floor_pct = c->pl.device->judge_floor_pct;
    rep->steady_floor_pct = c->pl.device->steady_floor_pct;
    rep->baseline = cfg->baseline;
    rep->baseline_runs = j->base.runs;
    memcpy(rep->baseline_spread_pct, j->base.spread_pct, sizeof rep->baseline_spread_pct);
    rep->peak_first = testhook_int(HOOK_PEAK_FIRST, 0) == 1;
    rep->settle_seconds = train_settle_seconds(cfg, c->pl.device);
    rep->comm = c->comm->name;
    rep->ranks = j->ranks;
    rep->plan = engine_buckets(j->train.eng);
    rep->fsdp = engine_fsdp_plan(j->train.eng);
    rep->fsdp_alloc = engine_fsdp_allocated(j->train.eng);
    rep->fsdp_device_drop = engine_fsdp_device_drop(j->train.eng);
    (void)engine_comm_log(j->train.eng, &rep->slots);
    rep->comm_bytes = engine_comm_bytes(j->train.eng);
    rep->comm_type = engine_comm_dtype(j->train.eng);
    rep->flops_per_step = engine_flops_per_step(j->train.eng);
    rep->table_peak_tflops = cfg->peak_tflops > 0 ? cfg->peak_tflops : peak_table_tflops(j->ranks[0].dev.name, precision_name(cfg->precision));
    rep->topology = j->topo_json;
    rep->topology_text = j->topo_text;
    rep->extra = &j->extra;
    train_link_bound(c->dev, rep); /* after the timing: the cpu device measures its memcpy for it */
    r = report_summarize(rep, &j->sum);
    j->have_sum = r == DDP_OK;
    if (r == DDP_OK) r = report_findings(rep, &j->sum, &c->doc.findings);
    if (r == DDP_OK && cfg->sweep) r = sweep_findings(&j->extra, &c->doc.findings);
    if (r == DDP_OK) {
      report_print(stdout, rep, &j->sum);
      if (cfg->sweep) measure_scaling.print(stdout, &measure_scaling, &j->extra);
      if (grouped) (grouped->print ? grouped->print : measure_print_records)(stdout, grouped, &j->extra);
    }
    if (r == DDP_OK) r = report_doc_fill(rep, &j->sum, &c->doc);
    /* built with or without outputs: the bottom line reads the efficiency's noise there, and NCCL's account is
     * checked against its topology after run() (nccl_section.h) */
    if (r == DDP_OK && !(c->sections = report_sections(rep, &j->sum)))
      r = DDP_FAIL(DDP_ERR_JSON, "out of memory building the JSON document");
  }
  job_free(j);
  return r;
}

/* The GPU default job: the acceptance checks after the training, one exit code for both. */
static int run_after(cmd_ctx *c, int code) {
  if (!((run_args *)c->args)->cfg.gpu_default) return code;
  static char a0[] = "accept", a1[] = "--health-seconds", a2[] = "3", a3[] = "--quiet";
  char *aargv[] = {a0, a1, a2, a3, NULL};
  watchdog_tick("the acceptance checks of the default job"); /* bounded as a whole by --timeout */
  int acode = cmd_nested(c, &cmd_accept, c->quiet ? 4 : 3, aargv);
  /* one exit code: weights differ (1) before bad input (2) before a failed check (4) */
  int both = code == DDP_EXIT_CHECK || acode == DDP_EXIT_CHECK ? DDP_EXIT_CHECK
             : code == DDP_EXIT_USAGE || acode == DDP_EXIT_USAGE ? DDP_EXIT_USAGE
             : code != DDP_EXIT_OK ? code : acode;
  if (c->dist.rank == 0 && c->verdict && c->nested_verdict) { /* one bottom line for the job */
    printf("ddpbench: %s  training %s, acceptance %s  (the default job; exit %d)\n",
           bottom_worst(c->verdict, c->nested_verdict), c->verdict, c->nested_verdict, both);
    fflush(stdout);
  }
  return both;
}

const cmd_def cmd_run = {
    .bottom = run_bottom,
    .name = "run",
    .summary = "the training run (the default): local, comm and ddp phases, scaling, verdicts",
    .usage = "usage: mpirun -np N ddpbench [--config FILE] [--key value ...]\n"
             "       ddpbench SUBCOMMAND [options]    (ddpbench SUBCOMMAND --help)\n",
    .about = "Trains a synthetic L-layer ReLU model the way PyTorch DDP does (bucketed allreduce overlapped with "
             "the backward pass) in three phases - local (no communication), comm (the allreduces alone), ddp - "
             "and reports step times, throughput, weak-scaling efficiency and whether all ranks agree.\nExample: "
             "mpirun -np 8 ddpbench --config configs/h200-8192x8x8192-bf16.ini --json run.json\n",
    .flags = CMD_MPI | CMD_PLACE | CMD_COMM | CMD_OUTPUTS | CMD_VERDICT,
    .args_size = sizeof(run_args),
    .tables = run_tables,
    .validate = run_validate,
    .timeout = run_timeout,
    .placed = run_placed,
    .run = run_run,
    .after = run_after,
};
