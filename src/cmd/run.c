/* run.c: run_main, the whole job from the command line to the result file (the watchdog that makes sure a
 * stuck rank ends the job with its name instead of hanging it is watchdog.c).
 *
 * Order matters: the configuration is parsed before MPI starts, the watchdog is armed before MPI_Init, and
 * preflight_run shares every rank's parse error, compares the ranks' configurations and checks the outputs
 * before any work (exit 2 on every rank); the device is chosen collectively (all ranks use cuda, or all use cpu); the process is bound near its
 * GPU before any CUDA context exists; measurements and printing are separate passes. */
#include "run.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accept.h"
#include "accept_main.h"
#include "atomic_file.h"
#include "comm.h"
#include "config.h"
#include "device.h"
#include "dist.h"
#include "engine.h"
#include "csv.h"
#include "gpu_default.h"
#include "gpu_diag.h"
#include "health.h"
#include "measure.h"
#include "measure_sweep.h"
#include "prom.h"
#include "registry.h"
#include "report.h"
#include "topo.h"
#include "versions.h"
#include "watchdog.h"
#include "preflight.h"

/* ---- progress ----------------------------------------------------------------------------------- */
static struct {
  int quiet, rank;
  double phase_start;
} g_watch;

/* Test hook for the fault tests (watchdog_test_fault): DDPBENCH_TEST_FAULT=ACTION:RANK:PHASE acts in phase
 * PHASE's second step. DDPBENCH_TEST_STALL_RANK=r is stall:r:ddp. */
static void maybe_fault(ddp_phase p, int step) {
  if (step != 1) return;
  const char *s = getenv("DDPBENCH_TEST_STALL_RANK");
  if (!getenv("DDPBENCH_TEST_FAULT") && s && atoi(s) == g_watch.rank && p == PHASE_DDP)
    watchdog_test_fault_act("stall", g_watch.rank, "ddp");
  watchdog_test_fault(g_watch.rank, phase_name(p));
}
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
  if (g_watch.quiet || g_watch.rank != 0) return;
  if (step == 0) g_watch.phase_start = ddp_now();
  int every = nsteps > 10 ? nsteps / 10 : 1;
  if ((step + 1) % every == 0 || step + 1 == nsteps) {
    fprintf(stderr, "[ddpbench] %-5s step %4d/%d  %6.1f s\n", phase_name(p), step + 1, nsteps,
            ddp_now() - g_watch.phase_start);
    fflush(stderr);
  }
}

/* A rank outside a measurement's group waits (measure_run). Its location is recorded, but the timer is not
 * reset: a wait that outlasts --timeout ends the job, since ticking here would hide a stopped peer for ever. */
static void on_waiting(void *ctx, const char *what) {
  (void)ctx;
  watchdog_where(what);
}

/* ---- device and comm choice --------------------------------------------------------------------- */
/* OpenBLAS threads for this rank: the cores it is bound to, or the machine's share of the ranks on it. */
static int cpu_threads(const ddp_dist *d) {
  cpu_set_t set;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (sched_getaffinity(0, sizeof set, &set) != 0 || online < 1) return 1;
  int mine = CPU_COUNT(&set);
  int n = mine < online ? mine : (int)(online / d->local_size);
  return n > 0 ? n : 1;
}

typedef struct {
  ddp_device_kind device;
  ddp_comm_kind comm;
  int ordinal;
  char bus_id[32];
} placement;

/* The GPU-not-used diagnosis on a rank that sees no GPU: 1 when this host has an NVIDIA GPU that CUDA cannot
 * use, with each cause printed as a failing check. Never lets such a host fall back to the CPU quietly. */
static int gpu_not_used(const ddp_dist *d) {
  gpu_diag_facts f;
  nvml_api api;
  char why[128], causes[8][256];
  int have = nvml_open(&api, why, sizeof why);
  gpu_diag_gather(&f, gpu_diag_count_pci(), have ? &api : NULL, why, "/dev");
  if (have) nvml_close(&api);
  int driver = 0;
  f.cuda_count = device_cuda_probe(f.cuda_error, sizeof f.cuda_error, &f.runtime_cuda, &driver);
  f.cuda_built = f.cuda_count >= 0;
  if (driver) f.driver_cuda = driver; /* else NVML's figure stays */
  int n = gpu_diag_explain(&f, causes, 8);
  for (int i = 0; i < n; i++)
    fprintf(stderr, "ddpbench: FAIL gpu-not-used: rank %d host %s: %s\n", d->rank, d->host, causes[i]);
  return n > 0;
}

/* Collective: the same device and comm kind on every rank; the GPU is the local rank modulo the GPUs this
 * process sees (CUDA_VISIBLE_DEVICES is honoured by CUDA itself). */
static ddp_result choose_placement(const ddp_config *cfg, const ddp_dist *d, placement *pl) {
  memset(pl, 0, sizeof *pl);
  pl->ordinal = -1;
  /* Every choice below comes from the registry's entries (registry.c): which device is a GPU, which comm a
   * device takes by default, which comm needs which device. */
  const device_entry *want = registry_device(cfg->device); /* NULL: auto (config_parse allowed only these) */
  const device_entry *gpu = want ? (want->is_gpu ? want : NULL) : registry_device_gpu(); /* NULL: none wanted/built */
  int ngpu = gpu ? gpu->available() : 0, min_gpu = ngpu, max_gpu = ngpu;
  DDP_TRY(dist_allreduce_int(d, &min_gpu, MPI_MIN));
  DDP_TRY(dist_allreduce_int(d, &max_gpu, MPI_MAX));
  /* --device auto picks the CPU only where no host has an NVIDIA GPU: one that CUDA cannot use is a finding. */
  int blocked = !(want && !want->is_gpu) && ngpu == 0 && gpu_not_used(d);
  DDP_TRY(dist_allreduce_int(d, &blocked, MPI_MAX));
  if (blocked) return DDP_ERR_EXPECT;
  const device_entry *de = want;
  if (!de) {
    de = min_gpu > 0 ? gpu : registry_device_host();
    if (!de->is_gpu)
      ddp_notice(max_gpu > 0 ? "some ranks see no GPU: running on the CPU device (%s) on every rank"
                             : "no GPU visible: running on the CPU device (%s)", de->name);
  }
  pl->device = de->kind;
  if (de->is_gpu && min_gpu == 0) {
    if (ngpu == 0)
      fprintf(stderr, "ddpbench: --device %s: rank %d on %s sees no GPU (CUDA_VISIBLE_DEVICES=%s)\n", de->name, d->rank,
              d->host, getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    return DDP_ERR_USAGE;
  }
  const comm_entry *ce = cfg->comm == COMM_AUTO ? registry_comm_auto(de) : registry_comm(cfg->comm);
  if (!ce) return ddp_usage_error("--comm %s: not in this build", comm_kind_name(cfg->comm));
  pl->comm = ce->kind;
  if (!de->is_gpu) {
    if (ce->needs_device && strcmp(ce->needs_device, de->name) != 0)
      return ddp_usage_error("--comm %s needs the %s device, and no GPU is visible", ce->name, ce->needs_device);
    if (cfg->precision == PREC_TF32) return ddp_usage_error("--precision tf32 needs a GPU device, and no GPU is visible");
    if (cfg->cuda_graph) return ddp_usage_error("--cuda-graph needs a GPU device, and no GPU is visible");
    return DDP_OK;
  }
  if (ce->needs_device) { /* a comm made for the device (NCCL) refuses two ranks on one GPU */
    int bad = d->local_size > ngpu;
    if (bad)
      fprintf(stderr, "ddpbench: host %s has %d ranks but %d visible GPU%s: %s needs one GPU per rank "
                      "(start fewer ranks per node, or use --comm mpi to share GPUs)\n",
              d->host, d->local_size, ngpu, ngpu == 1 ? "" : "s", ce->name);
    DDP_TRY(dist_allreduce_int(d, &bad, MPI_MAX));
    if (bad) return DDP_ERR_USAGE;
  }
  pl->ordinal = d->local_rank % ngpu;
  return de->bus_id(pl->ordinal, pl->bus_id, sizeof pl->bus_id);
}

/* The GPU default job's model (gpu_default.h) from the smallest GPU memory of the job, the same on every rank;
 * rank 0 states the model and the expected total time before anything is measured. */
static ddp_result default_size(ddp_config *cfg, const ddp_dist *d, const ddp_device *dev) {
  double mem = (double)dev->info.memory;
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &mem, 1, MPI_DOUBLE, MPI_MIN, d->world));
  double peak = peak_table_tflops(dev->info.name, PREC_BF16);
  gpu_default g;
  if (gpu_default_size(mem, peak, d->local_size, &g) != 0)
    return DDP_FAIL(DDP_ERR_USAGE, "the GPU default job needs 2 GiB of GPU memory, the smallest GPU has %.2f GiB; "
                    "give the model with options", mem / (1 << 30));
  cfg->hidden = g.hidden, cfg->layers = g.layers, cfg->batch = g.batch;
  cfg->steps = g.steps, cfg->warmup = g.warmup, cfg->precision = PREC_BF16, cfg->lr = g.lr;
  DDP_TRY(config_validate(cfg));
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

/* ---- the job ------------------------------------------------------------------------------------ */
typedef struct {
  ddp_config cfg;
  ddp_dist dist;
  placement pl;
  topo_rank *topo;
  ddp_device *dev;
  ddp_comm *comm;
  train_state train; /* the world's engine and phase results (the train measurements leave them here) */
  rank_info *ranks;        /* rank 0: [world], identity from identity_gather, outcome from outcome_gather */
  topo_rank_rec *topo_recs; /* rank 0, until the topology report: [world] */
  run_report rep;
  run_summary sum;
  int have_sum;
  finding_list findings; /* rank 0: every verdict of the run; the exit code comes from them */
  result_doc sweep;      /* rank 0: the scaling sweep's records (--sweep) */
  cJSON *topo_json;
  char *topo_text;
  size_t topo_text_len;
  int exit_code;
} job;

/* Each rank's identity (who, where, which device, what software, its topology record) travels to rank 0 once,
 * before any work: it fills the rank table of the report and the topology report's records. */
typedef struct {
  rank_info info;
  topo_rank_rec topo;
} rank_identity;

static ddp_result identity_gather(job *j, const rank_info *mine) {
  const ddp_dist *d = &j->dist;
  int root = d->rank == 0;
  rank_identity *me = calloc(1, sizeof *me);
  rank_identity *all = root ? calloc((size_t)d->size, sizeof *all) : NULL;
  if (root) {
    j->ranks = calloc((size_t)d->size, sizeof *j->ranks);
    j->topo_recs = calloc((size_t)d->size, sizeof *j->topo_recs);
  }
  ddp_result r = me && (!root || (all && j->ranks && j->topo_recs)) ? DDP_OK
                                                                    : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (r == DDP_OK) {
    me->info = *mine;
    topo_rank_rec_fill(j->topo, &mine->ver, &me->topo);
    int e = MPI_Gather(me, (int)sizeof *me, MPI_BYTE, all, (int)sizeof *me, MPI_BYTE, 0, d->world);
    if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Gather(rank identities)", __FILE__, __LINE__);
  }
  for (int k = 0; root && r == DDP_OK && k < d->size; k++) {
    j->ranks[k] = all[k].info;
    j->topo_recs[k] = all[k].topo;
  }
  free(me);
  free(all);
  return r;
}

/* What each rank measured of itself, to rank 0, into the rank table identity_gather began. */
typedef struct {
  double gemm_tflops;
  uint64_t checksum, nonfinite;
  int checksum_valid;
} rank_outcome;

static ddp_result outcome_gather(job *j, const rank_info *mine) {
  const ddp_dist *d = &j->dist;
  rank_outcome me = {mine->gemm_tflops, mine->checksum, mine->nonfinite, mine->checksum_valid};
  rank_outcome *all = d->rank == 0 ? calloc((size_t)d->size, sizeof *all) : NULL;
  if (d->rank == 0 && !all) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  int e = MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, d->world);
  ddp_result r = e == MPI_SUCCESS ? DDP_OK : mpi_fail(e, "MPI_Gather(rank outcomes)", __FILE__, __LINE__);
  for (int k = 0; all && r == DDP_OK && k < d->size; k++) {
    j->ranks[k].gemm_tflops = all[k].gemm_tflops;
    j->ranks[k].checksum = all[k].checksum;
    j->ranks[k].nonfinite = all[k].nonfinite;
    j->ranks[k].checksum_valid = all[k].checksum_valid;
  }
  free(all);
  return r;
}

static ddp_result job_run(job *j) {
  ddp_config *cfg = &j->cfg;
  ddp_dist *d = &j->dist;
  run_report *rep = &j->rep;
  result_init(&j->sweep);
  time_t now = time(NULL);
  strftime(rep->start_time, sizeof rep->start_time, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

  DDP_TRY(choose_placement(cfg, d, &j->pl));
  topo_options topt = {cfg->bind == BIND_GPU ? 1 : cfg->bind == BIND_NONE ? 0 : -1, cfg->pcie,
                       cfg->topo_xml[0] ? cfg->topo_xml : NULL, cfg->force};
  DDP_TRY(topo_rank_init(d, &topt, registry_device(j->pl.device)->is_gpu ? j->pl.bus_id : NULL, &j->topo));
  watchdog_tick("creating the device");
  const device_entry *de = registry_device(j->pl.device);
  const comm_entry *ce = registry_comm(j->pl.comm);
  if (!de || !ce) /* placement chose only what the registry has; this is a bug if reached */
    return DDP_FAIL(DDP_ERR_INTERNAL, "no %s in this build", !de ? device_kind_name(j->pl.device) : comm_kind_name(j->pl.comm));
  DDP_TRY(de->create(&j->dev, j->pl.ordinal, cpu_threads(d)));
  if (cfg->gpu_default && j->pl.device == DEV_CUDA) DDP_TRY(default_size(cfg, d, j->dev));
  watchdog_tick("creating the communicator");
  DDP_TRY(ce->create(&j->comm, d->world, j->dev));

  rank_info mine;
  memset(&mine, 0, sizeof mine);
  mine.rank = d->rank;
  mine.local_rank = d->local_rank;
  mine.node_index = d->node_index;
  mine.pid = (int)getpid();
  snprintf(mine.host, sizeof mine.host, "%.63s", d->host);
  mine.host_hash = d->host_hash;
  mine.dev = j->dev->info;
  versions_collect(&mine.ver);

  watchdog_tick("topology report");
  DDP_TRY(identity_gather(j, &mine));
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
  j->train.comm = j->comm;
  DDP_TRY(engine_create(&j->train.eng, cfg, j->dev, j->comm, on_progress, NULL));
  watchdog_tick("timing one GEMM");
  if (j->pl.device == DEV_CUDA && cfg->peak_seconds > 0) /* the sustained figure (issue 12), see health.h */
    DDP_TRY(health_peak_tflops(j->dev, (int)cfg->precision, cfg->peak_seconds, &mine.gemm_tflops));
  else
    DDP_TRY(engine_measure_gemm(j->train.eng, &mine.gemm_tflops));

  /* The phases: the train measurements over the world, on the engine above; they leave their results in
   * j->train for the report below. */
  measure_env env = {cfg, d, j->dev, on_progress, NULL, &j->train, on_waiting, NULL};
  measure_round *world = NULL;
  int nworld = 0;
  ddp_result r = measure_rounds_build(d, j->comm, GROUP_WORLD, 0, &world, &nworld);
  int order[3], nphases = config_phases(cfg, order); /* validated by config_parse */
  for (int k = 0; k < nphases && r == DDP_OK; k++)
    r = measure_run(&env, measure_find(phase_name((ddp_phase)order[k])), world, nworld, NULL);
  measure_rounds_free(world, nworld);
  if (r == DDP_OK && cfg->sweep) { /* groups of growing size, each on its own engine */
    measure_env senv = env;
    senv.train = NULL;
    r = sweep_run(&senv, j->comm, &j->sweep);
  }
  const measurement *grouped = NULL; /* --groups: the measurement over the groups a user asked for */
  if (r == DDP_OK && cfg->groups[0]) {
    measure_env genv = env;
    genv.train = NULL;
    r = measure_groups_run(&genv, j->comm, &j->sweep, &grouped);
  }
  if (r == DDP_OK && j->train.checksum_valid) {
    mine.checksum = j->train.checksum;
    mine.checksum_valid = 1;
    mine.nonfinite = j->train.nonfinite;
    /* Test hook for the verification path: DDPBENCH_TEST_CORRUPT_RANK=r reports rank r's weights as if
     * one bit had flipped, as silent data corruption would. */
    const char *corrupt = getenv("DDPBENCH_TEST_CORRUPT_RANK");
    if (corrupt && atoi(corrupt) == d->rank) mine.checksum ^= 1;
  }
  watchdog_tick("gathering results");
  if (r == DDP_OK) r = outcome_gather(j, &mine);
  for (int p = 0; p < PHASE_COUNT && r == DDP_OK; p++)
    if (j->train.ran[p]) r = train_gather(d->world, &j->train.res[p], &rep->phases[p], cfg->precision == PREC_FP16);
  for (int p = 0; p < PHASE_COUNT; p++) phase_result_free(&j->train.res[p]);
  DDP_TRY(r);

  /* Rank 0: figures, summary, JSON. Then everyone leaves with rank 0's verdict. */
  int code = DDP_EXIT_OK;
  if (d->rank == 0) {
    rep->cfg = cfg;
    rep->world = d->size;
    rep->nodes = d->node_count;
    rep->device = registry_device(j->pl.device)->name;
    rep->comm = registry_comm(j->pl.comm)->name;
    rep->ranks = j->ranks;
    rep->plan = engine_buckets(j->train.eng);
    rep->comm_bytes = engine_comm_bytes(j->train.eng);
    rep->comm_type = engine_comm_dtype(j->train.eng);
    rep->flops_per_step = engine_flops_per_step(j->train.eng);
    rep->table_peak_tflops = cfg->peak_tflops > 0 ? cfg->peak_tflops
                                                  : peak_table_tflops(j->ranks[0].dev.name, cfg->precision);
    rep->topology = j->topo_json;
    rep->topology_text = j->topo_text;
    rep->extra = &j->sweep;
    r = report_summarize(rep, &j->sum);
    j->have_sum = r == DDP_OK;
    if (r == DDP_OK) r = report_findings(rep, &j->sum, &j->findings);
    if (r == DDP_OK && cfg->sweep) r = sweep_findings(&j->sweep, &j->findings);
    if (r == DDP_OK) {
      report_print(stdout, rep, &j->sum);
      if (cfg->sweep) measure_scaling.print(stdout, &measure_scaling, &j->sweep);
      if (grouped) (grouped->print ? grouped->print : measure_print_records)(stdout, grouped, &j->sweep);
      findings_print(stdout, &j->findings);
      const char **failed = calloc((size_t)d->size + 1, sizeof *failed);
      int nfailed = report_hosts(stdout, rep, &j->findings, cfg->strict, failed);
      fflush(stdout);
      code = findings_exit_code(&j->findings);
      if (code == DDP_EXIT_OK && cfg->strict && findings_count(&j->findings, SEV_WARN)) code = DDP_EXIT_EXPECT;
      if (cfg->failed_hosts[0]) r = failed ? accept_failed_hosts_write(cfg->failed_hosts, failed, nfailed, cfg->force)
                                           : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
      free(failed);
    }
    if (r == DDP_OK && (cfg->json[0] || cfg->prom[0] || cfg->csv[0])) {
      cJSON *doc = NULL;
      r = report_json(rep, &j->sum, &j->findings, &doc);
      if (r == DDP_OK && cfg->json[0]) {
        char *text = cJSON_Print(doc);
        if (!text) r = DDP_FAIL(DDP_ERR_JSON, "cannot format the JSON document");
        if (r == DDP_OK) r = atomic_file_write(cfg->json, text, strlen(text), cfg->force);
        if (r == DDP_OK && !cfg->quiet) fprintf(stderr, "[ddpbench] wrote %s\n", cfg->json);
        free(text);
      }
      /* The exporters read the model back from the document, as they would from the file. */
      result_doc model;
      result_init(&model);
      char why[300] = "";
      if (r == DDP_OK && (cfg->prom[0] || cfg->csv[0])) { /* through the text: NaN is null there, as in the file */
        char *text = cJSON_PrintUnformatted(doc);
        cJSON *back = text ? cJSON_Parse(text) : NULL;
        if (!back || result_from_json(back, &model, why, sizeof why) != DDP_OK)
          r = DDP_FAIL(DDP_ERR_INTERNAL, "the result document does not read back: %s", back ? why : "not JSON");
        cJSON_Delete(back);
        free(text);
      }
      if (r == DDP_OK && cfg->prom[0]) r = prom_write(&model, (double)time(NULL), cfg->prom, cfg->force);
      if (r == DDP_OK && cfg->prom[0] && !cfg->quiet) fprintf(stderr, "[ddpbench] wrote %s\n", cfg->prom);
      if (r == DDP_OK && cfg->csv[0]) r = csv_write(&model, cfg->csv, cfg->force);
      if (r == DDP_OK && cfg->csv[0] && !cfg->quiet) fprintf(stderr, "[ddpbench] wrote %s\n", cfg->csv);
      result_free(&model);
      cJSON_Delete(doc);
    }
    if (r == DDP_ERR_USAGE) code = DDP_EXIT_USAGE, r = DDP_OK; /* e.g. the JSON file appeared meanwhile */
  }
  int status[2] = {r, code}; /* rank 0's outcome travels to every rank */
  DDP_CHECK_MPI(MPI_Bcast(status, 2, MPI_INT, 0, d->world));
  if (status[0] != DDP_OK) return d->rank == 0 ? (ddp_result)status[0] : DDP_ERR_INTERNAL;
  j->exit_code = status[1];
  return DDP_OK;
}

static void job_free(job *j) {
  if (j->have_sum) report_summary_free(&j->sum);
  findings_free(&j->findings);
  result_free(&j->sweep);
  for (int p = 0; p < PHASE_COUNT; p++) phase_data_free(&j->rep.phases[p]);
  free(j->ranks);
  free(j->topo_recs);
  if (j->topo_json) cJSON_Delete(j->topo_json);
  free(j->topo_text);
  train_state_free(&j->train);
  if (j->comm) j->comm->destroy(j->comm);
  if (j->dev) j->dev->destroy(j->dev);
  topo_rank_free(j->topo);
}

int run_main(int argc, char **argv) {
  static job j; /* large; one per process */
  int no_options = argc == 1; /* `mpirun ddpbench`: the default job (on GPUs, sized from them) */
  config_action action;
  char parse_msg[1400];
  ddp_usage_capture(parse_msg, sizeof parse_msg); /* every rank's error reaches rank 0 through preflight_run */
  ddp_result parsed = config_parse(&j.cfg, argc, argv, &action);
  ddp_usage_capture(NULL, 0);
  if (parsed == DDP_OK && action == CONFIG_HELP) {
    config_print_help(stdout);
    return DDP_EXIT_OK;
  }
  if (parsed == DDP_OK && action == CONFIG_VERSION) {
    printf("ddpbench %s\n", DDPBENCH_VERSION);
    return DDP_EXIT_OK;
  }
  /* Armed before MPI_Init: a peer that never starts leaves MPI_Init waiting. A bad --timeout: the default. */
  ddp_config defaults;
  config_defaults(&defaults);
  watchdog_start(parsed == DDP_OK ? j.cfg.timeout : defaults.timeout, "MPI start-up (MPI_Init: did every rank start?)");
  if (dist_init(&argc, &argv, &j.dist) != DDP_OK) dist_abort(DDP_EXIT_RUNTIME);
  watchdog_signals_install();
  watchdog_tick("checking the configuration and outputs on every rank");
  g_watch.quiet = j.cfg.quiet;
  g_watch.rank = j.dist.rank;

  ddp_result r = watchdog_join(&j.dist);
  if (r == DDP_OK) r = preflight_run(&j.dist, &j.cfg, parsed, parse_msg);
  /* No options at all, and a GPU on every rank: the GPU-sized acceptance job (the training phases on a model
   * sized from the GPU, then every acceptance check). Elsewhere the defaults, unchanged. */
  if (r == DDP_OK && no_options) {
    int rt = 0, drv = 0;
    char err[256];
    int ngpu = device_cuda_probe(err, sizeof err, &rt, &drv);
    int e = MPI_Allreduce(MPI_IN_PLACE, &ngpu, 1, MPI_INT, MPI_MIN, j.dist.world);
    if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Allreduce", __FILE__, __LINE__);
    j.cfg.gpu_default = ngpu > 0;
  }
  if (r == DDP_OK) {
    watchdog_tick("start-up");
    r = job_run(&j);
  }
  if (r == DDP_ERR_USAGE || r == DDP_ERR_EXPECT) { /* decided collectively: every rank leaves cleanly */
    job_free(&j);
    dist_finalize(&j.dist);
    return ddp_exit_code(r);
  }
  if (r != DDP_OK) {
    fprintf(stderr, "[ddpbench rank %d host %s] aborting the job: %s\n", j.dist.rank, j.dist.host, ddp_result_str(r));
    if (j.comm) j.comm->abort(j.comm);
    dist_abort(ddp_exit_code(r));
  }
  job_free(&j);
  int code = j.exit_code;
  if (j.cfg.gpu_default) {
    static char a0[] = "accept", a1[] = "--health-seconds", a2[] = "3";
    char *aargv[] = {a0, a1, a2, NULL};
    watchdog_tick("the acceptance checks of the default job"); /* bounded as a whole by --timeout */
    int acode = accept_main(&j.dist, 3, aargv);
    /* one exit code: weights differ (1) before bad input (2) before a failed check (4) */
    code = code == DDP_EXIT_CHECK || acode == DDP_EXIT_CHECK ? DDP_EXIT_CHECK
           : code == DDP_EXIT_USAGE || acode == DDP_EXIT_USAGE   ? DDP_EXIT_USAGE
           : code != DDP_EXIT_OK ? code : acode;
  }
  dist_finalize(&j.dist);
  return code;
}
