/* accept_soak.c: `ddpbench accept --soak DURATION`, the burn-in (accept_soak.h, docs/soak.md).
 *
 * Every rank runs the same cycles; rank 0 alone keeps the time series, judges it and writes the outputs. One
 * cycle is one interval: its stages, in this order, so that the counters' end snapshot comes right after the
 * GPU was loaded (a loaded link's PCIe generation and width are the ones that count):
 *   training   the default-job model's ddp phase (steps sized to train_share of the interval), its weights
 *              checked bitwise across ranks and against the first cycle's (engine_run_phase restarts from the
 *              initial weights, so every cycle computes the same numbers);
 *   allreduce  inside each node, then every pair_every cycles over the node pairs;
 *   GEMM       the sustained GEMM, every GPU of a node at once (its TFLOP/s, clocks, power, temperature and
 *              throttle reasons are the interval's load figures);
 *   copies     the pinned host copies;
 *   counters   NVML's snapshot and Xid events (soak_probe.h).
 * The groups (nodes, pairs) are built once: a communicator split per cycle would cost more than the cycle. */
#include "accept_soak.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic_file.h"
#include "commands.h"
#include "engine.h"
#include "gpu_default.h"
#include "health.h"
#include "hosts.h"
#include "measure.h"
#include "expect.h"
#include "progress.h"
#include "soak_doc.h"
#include "soak_probe.h"
#include "soak_rules.h"
#include "stats.h"
#include "testhooks.h"
#include "watchdog.h"

enum { ST_TRAIN, ST_NODE, ST_PAIRS, ST_ONCE, ST_GEMM, ST_COPY, NSTAGE };
static const char *const STAGE_NAME[NSTAGE] = {"training", "node_allreduce", "pair_allreduce", "first_cycle_checks",
                                               "gemm", "host_copies"};

/* What each rank sends rank 0 after an interval. Fixed size, pointer-free. */
typedef struct {
  soak_gpu_sample s;
  double compute_ms; /* median over the cycle's training steps: forward + backward (step time under a graph) */
  uint64_t checksum, nonfinite;
  int checksum_valid;
} rank_msg;

/* Rank 0's running state. */
typedef struct {
  soak_series S;
  soak_layout lay; /* the links of S: nodes first, then the node pairs */
  const char *prec; /* the GEMM's precision */
  /* the weights across cycles */
  uint64_t first_sum;
  int have_first;
  int *bad_first, *bad_n; /* per rank: first interval (from 1) and count of intervals off the majority */
  int changed_first, changed_n, nonfinite_first;
  /* the last interval's series records (Prometheus) and all of them (CSV) */
  result_doc all, last;
  unsigned replace; /* outputs written before, this run's to rewrite */
  int train_steps;
  double *stage_s;    /* [nint][NSTAGE]: where each cycle's time went, rank 0's clock */
  int stage_cap;
  soak_params prm;    /* the rules' parameters: defaults, the ceilings from --expect */
  double start_epoch; /* the soak's start, seconds since 1970 (to line the series up with DCGM, nvidia-smi, logs) */
  /* each output (OUT_*): the interval its file holds (0: none yet), and its failed writes (a full or read-only
   * file system: the soak goes on, and the next interval writes it again) */
  struct {
    int holds, fails, first_fail, last_fail;
    char err[160];
  } out[4];
} soak_state;

/* The outputs, in the order of the OUTPUT_* bits (outputs.h). */
enum { OUT_JSON, OUT_PROM, OUT_CSV, OUT_HOSTS, NOUT };
static const char *const OUT_OPTION[NOUT] = {"--json", "--prom", "--csv", "--failed-hosts"};
static const char *out_path(const cmd_ctx *c, int i) {
  return i == OUT_JSON ? c->out.json : i == OUT_PROM ? c->out.prom : i == OUT_CSV ? c->out.csv : c->out.failed_hosts;
}

/* The median of the finite values of x[n] (NaN when none). */
static double median_of(const double *x, int n) {
  double *t = malloc((size_t)(n > 0 ? n : 1) * sizeof *t);
  int m = 0;
  for (int i = 0; t && i < n; i++)
    if (isfinite(x[i])) t[m++] = x[i];
  double v = m > 0 ? stats_percentile(t, m, 0.5) : NAN;
  free(t);
  return v;
}

static ddp_result run_rounds(const measure_env *env, const measurement *m, const void *params,
                             const measure_round *rounds, int n, result_doc *doc) {
  measure_env e = *env;
  e.params = params;
  for (int i = 0; i < n; i++) DDP_TRY(measure_run(&e, m, &rounds[i], 1, doc));
  return DDP_OK;
}

/* ---- the weights check, off the critical path ---- */
/* The cycle's weights are copied to host memory right after the training (the GPU is then free), and hashed by
 * a thread while the allreduces, the GEMM and the copies run: on the GPU default-job model (6.7 GB of fp32
 * weights) the hash alone took most of 16 s a cycle of GPU idle time when it ran in line (one H200,
 * results/2026-12-04-h200x1-soak/README.md). */
typedef struct {
  const float *h;
  size_t count;
  uint64_t sum, bad;
} hash_job;

static void *hash_main(void *arg) {
  hash_job *j = arg;
  engine_weights_digest(j->h, j->count, &j->sum, &j->bad);
  return NULL;
}

/* ---- the training model ---- */

/* The default job's model on this device (the GPU default job's sizing on a GPU, the run's defaults on the CPU
 * device), with `steps` timed steps after one warm-up, no settling (a soak is its own steady state). */
static ddp_result train_config(cmd_ctx *c, int steps, ddp_config *cfg) {
  config_defaults(cfg);
  if (c->pl.device->is_gpu) {
    double mem, peak;
    int fits;
    gpu_default g;
    DDP_TRY(cmd_gpu_default(&c->dist, c->dev, &g, &mem, &peak, &fits));
    if (!fits)
      return DDP_FAIL(DDP_ERR_USAGE, "accept --soak: the default-job model needs 2 GiB of GPU memory, the smallest "
                                     "GPU has %.2f GiB", mem / (1 << 30));
    gpu_default_config(&g, cfg);
  }
  cfg->steps = steps;
  cfg->warmup = 1;
  cfg->warmup_seconds = 0;
  cfg->timeout = 0;
  return config_validate(cfg, NULL);
}

/* The steps that fill share x interval: one calibration phase of 3 steps on a throwaway engine, the slowest
 * rank's median step. */
static ddp_result train_calibrate(cmd_ctx *c, const accept_soak_plan *p, int *steps, double *step_ms) {
  ddp_config cfg;
  DDP_TRY(train_config(c, 3, &cfg));
  engine *e = NULL;
  phase_result pr;
  memset(&pr, 0, sizeof pr);
  watchdog_tick("accept --soak: sizing the training steps");
  ddp_result r = engine_create(&e, &cfg, c->dev, c->comm, NULL, NULL);
  if (r == DDP_OK) r = engine_run_phase(e, PHASE_DDP, &pr);
  double ms = r == DDP_OK ? median_of(pr.step_ms, pr.steps) : NAN;
  phase_result_free(&pr);
  engine_free(e);
  DDP_TRY(r);
  if (!isfinite(ms) || ms <= 0) ms = 1e3;
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, c->dist.world));
  double n = floor(p->train_share * p->interval * 1e3 / ms);
  *steps = n < 2 ? 2 : n > 100000 ? 100000 : (int)n;
  *step_ms = ms;
  return DDP_OK;
}

/* ---- rank 0: the series ---- */

static ddp_result state_init(cmd_ctx *c, const accept_soak_plan *p, soak_state *st) {
  const ddp_dist *d = &c->dist;
  memset(st, 0, sizeof *st);
  st->lay.nnodes = d->node_count;
  st->lay.npairs = p->pairs == PAIRS_NONE || d->size < 2 ? 0 : node_pairs(p->pairs, st->lay.nnodes, NULL, 0);
  if (st->lay.npairs) {
    st->lay.pairs = calloc((size_t)st->lay.npairs, sizeof *st->lay.pairs);
    DDP_CHECK_ALLOC(st->lay.pairs);
    node_pairs(p->pairs, st->lay.nnodes, st->lay.pairs, st->lay.npairs);
  }
  int nodes = !p->skip_node && d->size > 1 ? st->lay.nnodes : 0;
  st->lay.node_host = calloc((size_t)st->lay.nnodes + 1, sizeof *st->lay.node_host);
  DDP_CHECK_ALLOC(st->lay.node_host);
  for (int n = 0; n < st->lay.nnodes; n++) {
    snprintf(st->lay.node_host[n], sizeof st->lay.node_host[n], "?");
    for (int k = 0; k < d->size; k++)
      if (c->ranks[k].node_index == n) {
        snprintf(st->lay.node_host[n], sizeof st->lay.node_host[n], "%s", c->ranks[k].host);
        break;
      }
  }
  DDP_TRY(soak_series_init(&st->S, d->size, nodes + st->lay.npairs, d->size));
  for (int k = 0; k < d->size; k++) {
    soak_gpu_id *g = &st->S.gpu[k];
    const cmd_rank *id = &c->ranks[k];
    snprintf(g->host, sizeof g->host, "%s", id->host);
    snprintf(g->busid, sizeof g->busid, "%s", id->dev.pci_bus_id);
    snprintf(g->model, sizeof g->model, "%.63s", id->dev.name);
    g->rank = k;
    g->index = id->dev.ordinal >= 0 ? id->dev.ordinal : id->local_rank;
    st->S.rank[k].rank = k;
    snprintf(st->S.rank[k].host, sizeof st->S.rank[k].host, "%s", id->host);
  }
  /* a node's host, from the ranks (node indices are the ranks' node_index) */
  for (int n = 0; n < nodes; n++) {
    soak_link_id *l = &st->S.link[n];
    snprintf(l->name, sizeof l->name, "%s", st->lay.node_host[n]);
    snprintf(l->host, sizeof l->host, "%s", st->lay.node_host[n]);
    l->scope = SCOPE_HOST;
  }
  for (int q = 0; q < st->lay.npairs; q++) {
    soak_link_id *l = &st->S.link[nodes + q];
    snprintf(l->name, sizeof l->name, "%.40s-%.40s", st->lay.node_host[st->lay.pairs[q].a], st->lay.node_host[st->lay.pairs[q].b]);
    l->host[0] = 0; /* a pair counts against neither host alone (the localisation below may name one) */
    l->scope = SCOPE_PAIR;
  }
  st->bad_first = calloc((size_t)d->size, sizeof *st->bad_first);
  st->bad_n = calloc((size_t)d->size, sizeof *st->bad_n);
  DDP_CHECK_ALLOC(st->bad_first && st->bad_n);
  result_init(&st->all);
  result_init(&st->last);
  return DDP_OK;
}

static void state_free(soak_state *st) {
  soak_series_free(&st->S);
  soak_layout_free(&st->lay);
  free(st->stage_s);
  free(st->bad_first);
  free(st->bad_n);
  result_free(&st->all);
  result_free(&st->last);
}

static double rec(const result_doc *d, const char *meas, const char *group, const char *metric, const char *key,
                  const char *val) {
  const result_record *x = key ? result_find(d, meas, group, metric, key, val, NULL)
                               : result_find(d, meas, group, metric, NULL);
  return x ? x->value : NAN;
}

/* Rank 0: one interval's figures from the ranks' messages and the cycle's records. */
static ddp_result interval_fill(soak_state *st, int i, const rank_msg *msg, const result_doc *cyc) {
  soak_series *S = &st->S;
  int nodes = st->S.nlink - st->lay.npairs;
  for (int k = 0; k < S->ngpu; k++) {
    soak_gpu_sample *g = soak_gpu_at(S, i, k);
    *g = msg[k].s;
    char rank[16], m[64];
    snprintf(rank, sizeof rank, "%d", k);
#define GEMM(what) (snprintf(m, sizeof m, "gemm_%s_%s", st->prec, what), rec(cyc, "accept", "world", m, "rank", rank))
    double v = GEMM("tflops");
    if (isfinite(v)) g->tflops = v;
    if (isfinite(v = GEMM("sm_mhz_median"))) g->sm_mhz = v;
    if (isfinite(v = GEMM("power_w_median"))) g->power_w = v;
    if (isfinite(v = GEMM("temp_c_max"))) g->temp_c = v;
    if (isfinite(v = GEMM("clock_reasons"))) g->reasons |= (unsigned long long)v, g->reasons_measured = 1;
#undef GEMM
    *soak_step_at(S, i, k) = msg[k].compute_ms;
  }
  for (int n = 0; n < nodes; n++) {
    char g[96];
    snprintf(g, sizeof g, "node:%.80s", S->link[n].host);
    *soak_busbw_at(S, i, n) = rec(cyc, "allreduce", g, "busbw_gbs", NULL, NULL);
  }
  for (int q = 0; q < st->lay.npairs; q++) {
    char g[64];
    snprintf(g, sizeof g, "pair:%d-%d", st->lay.pairs[q].a, st->lay.pairs[q].b);
    *soak_busbw_at(S, i, nodes + q) = rec(cyc, "allreduce", g, "busbw_gbs", NULL, NULL);
  }
  /* the weights: the majority's checksum this cycle, and who is off it */
  int best = -1, bestn = 0;
  for (int k = 0; k < S->nrank; k++) {
    if (!msg[k].checksum_valid) continue;
    int n = 0;
    for (int j = 0; j < S->nrank; j++) n += msg[j].checksum_valid && msg[j].checksum == msg[k].checksum;
    if (n > bestn) bestn = n, best = k;
  }
  for (int k = 0; k < S->nrank; k++) {
    int off = !msg[k].checksum_valid || (best >= 0 && msg[k].checksum != msg[best].checksum);
    if (off && !st->bad_n[k]++) st->bad_first[k] = i + 1;
    if (msg[k].nonfinite && !st->nonfinite_first) st->nonfinite_first = i + 1;
  }
  if (best >= 0) {
    if (!st->have_first) st->first_sum = msg[best].checksum, st->have_first = 1;
    else if (msg[best].checksum != st->first_sum && !st->changed_n++) st->changed_first = i + 1;
  }
  DDP_TRY(soak_doc_series_records(&st->S, st->prec, i, 1, &st->all));
  result_free(&st->last);
  result_init(&st->last);
  DDP_TRY(soak_doc_last_records(&st->S, st->prec, &st->last));
  return DDP_OK;
}

/* ---- rank 0: verdicts ---- */

static ddp_result weights_findings(const soak_state *st, finding_list *out) {
  const soak_series *S = &st->S;
  for (int k = 0; k < S->nrank; k++) {
    if (!st->bad_n[k]) continue;
    int i = st->bad_first[k] - 1;
    char sub[96];
    snprintf(sub, sizeof sub, "rank %d (%s)", k, S->rank[k].host);
    DDP_TRY(findings_add_at(out, S->rank[k].host, k, "soak_weights", SEV_FAIL, SCOPE_RANK, sub, st->bad_n[k], 0, "",
                            "its weights differed from the other ranks' after the training of %d of %d intervals, "
                            "the first interval %d (%.0f s): a silent error in its GPU's arithmetic or memory",
                            st->bad_n[k], S->nint, i + 1, S->t0[i] - S->t0[0]));
    out->v[out->n - 1].interval = i + 1, out->v[out->n - 1].t_s = S->t0[i] - S->t0[0];
  }
  if (st->nonfinite_first) {
    int i = st->nonfinite_first - 1;
    DDP_TRY(findings_add(out, "soak_nonfinite", SEV_FAIL, SCOPE_JOB, "job", NAN, NAN, "",
                         "the trained weights held NaN or infinite values after interval %d (%.0f s)", i + 1,
                         S->t0[i] - S->t0[0]));
    out->v[out->n - 1].interval = i + 1, out->v[out->n - 1].t_s = S->t0[i] - S->t0[0];
  }
  if (st->changed_n) {
    int i = st->changed_first - 1;
    DDP_TRY(findings_add(out, "soak_weights_repeat", SEV_WARN, SCOPE_JOB, "job", st->changed_n, 0, "",
                         "the ranks agreed, but their weights differed from the first interval's in %d of %d intervals "
                         "from interval %d (%.0f s), though every cycle trains the same steps from the same start: "
                         "the arithmetic changed over the soak",
                         st->changed_n, S->nint, i + 1, S->t0[i] - S->t0[0]));
    out->v[out->n - 1].interval = i + 1, out->v[out->n - 1].t_s = S->t0[i] - S->t0[0];
  }
  return DDP_OK;
}

/* The verdicts over the series so far into *f (soak_doc_judge's, then the weights'), and each GPU's steady state
 * into gs[ngpu]. */
static ddp_result judge(const soak_state *st, finding_list *f, soak_gpu_steady *gs) {
  DDP_TRY(soak_doc_judge(&st->S, &st->prm, &st->lay, f, gs));
  return weights_findings(st, f);
}

/* ---- rank 0: the JSON section ---- */

static cJSON *num(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static cJSON *series_json(const soak_state *st, const accept_soak_plan *p, const soak_gpu_steady *gs,
                          const char *state, double elapsed) {
  const soak_series *S = &st->S;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "state", state);
  cJSON_AddNumberToObject(o, "duration_s", p->seconds);
  cJSON_AddNumberToObject(o, "interval_s", p->interval);
  cJSON_AddNumberToObject(o, "pair_every", p->pair_every);
  cJSON_AddNumberToObject(o, "elapsed_s", elapsed);
  cJSON_AddNumberToObject(o, "start_epoch_s", st->start_epoch);
  cJSON_AddNumberToObject(o, "intervals_complete", S->nint);
  cJSON_AddStringToObject(o, "gemm_precision", st->prec);
  cJSON_AddNumberToObject(o, "gemm_seconds", p->gemm.seconds);
  cJSON_AddNumberToObject(o, "train_steps", st->train_steps);
  cJSON *stages = cJSON_AddObjectToObject(o, "stages_s");
  for (int q = 0; stages && q < NSTAGE; q++) {
    cJSON *a = cJSON_AddArrayToObject(stages, STAGE_NAME[q]);
    for (int i = 0; a && i < S->nint && st->stage_s; i++) cJSON_AddItemToArray(a, num(st->stage_s[i * NSTAGE + q]));
  }
  if (soak_doc_series_json(S, gs, o) != DDP_OK) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

/* ---- rank 0: outputs after an interval, and at the end ---- */

/* The document's "soak" section, replaced by the series as it stands. */
static ddp_result section_set(cmd_ctx *c, const soak_state *st, const accept_soak_plan *p, const soak_gpu_steady *gs,
                              const char *state, double elapsed) {
  if (!c->sections) c->sections = cJSON_CreateObject();
  cJSON *sec = series_json(st, p, gs, state, elapsed);
  if (!c->sections || !sec) {
    cJSON_Delete(sec);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  cJSON_DeleteItemFromObjectCaseSensitive(c->sections, "soak");
  cJSON_AddItemToObject(c->sections, "soak", sec);
  return DDP_OK;
}

/* Output i (OUT_*) from the document as it stands: --csv from the whole series, --prom from the last interval (the
 * records swapped in for the writers), --json and --failed-hosts from c->doc. files_only: not one going to
 * standard output (an interim write). iv: the interval the file will hold. A failure is said on stderr and kept in
 * st->out[i] (write_findings makes it a finding); the file written before stays. */
static ddp_result write_one(cmd_ctx *c, soak_state *st, int i, int files_only, int iv) {
  const char *path = out_path(c, i);
  if (!path[0] || (files_only && atomic_file_is_stdout(path))) return DDP_OK;
  const result_doc *from = i == OUT_CSV ? &st->all : i == OUT_PROM ? &st->last : NULL;
  ddp_result r = soak_doc_write_records(&c->out, 1u << i, st->replace, files_only, &c->doc, from,
                                        from ? NULL : c->sections, 1);
  if (r == DDP_OK) {
    if (!atomic_file_is_stdout(path)) st->replace |= 1u << i;
    st->out[i].holds = iv;
    return DDP_OK;
  }
  int e = atomic_file_errno();
  if (!st->out[i].fails++) st->out[i].first_fail = iv;
  st->out[i].last_fail = iv;
  snprintf(st->out[i].err, sizeof st->out[i].err, "%s", e ? strerror(e) : "see the error above");
  char held[48] = "no interval yet";
  if (st->out[i].holds) snprintf(held, sizeof held, "interval %d", st->out[i].holds);
  if (files_only)
    fprintf(stderr, "[ddpbench] accept --soak: interval %d: %s %s could not be written (%s); the file keeps %s, and "
                    "the next interval writes it again (the soak goes on)\n", iv, OUT_OPTION[i], path, st->out[i].err,
            held);
  else
    fprintf(stderr, "[ddpbench] accept --soak: the final write of %s %s failed (%s); the file keeps %s\n",
            OUT_OPTION[i], path, st->out[i].err, held);
  return r;
}

/* The one-line note the SIGINT/SIGTERM handler prints: which files are kept, holding which interval. */
static void signal_note(const cmd_ctx *c, const soak_state *st) {
  char line[1200];
  int k = snprintf(line, sizeof line, "[ddpbench] accept --soak: kept");
  int any = 0;
  for (int i = 0; i < NOUT && k > 0 && (size_t)k < sizeof line; i++) {
    const char *path = out_path(c, i);
    if (!path[0] || atomic_file_is_stdout(path) || !st->out[i].holds) continue;
    k += snprintf(line + k, sizeof line - (size_t)k, "%s %.200s (interval %d)", any ? "," : "", path, st->out[i].holds);
    any = 1;
  }
  if (k > 0 && (size_t)k < sizeof line)
    snprintf(line + k, sizeof line - (size_t)k, "%s", any ? ": the soak as it stood then, INCOMPLETE" : " no output file");
  watchdog_signal_note(line);
}

/* Every output, each whatever became of the others (--json and --failed-hosts first: the verdict and the
 * drain list before the series); the first error. */
static ddp_result write_all(cmd_ctx *c, soak_state *st, int files_only, int iv) {
  static const int order[NOUT] = {OUT_JSON, OUT_HOSTS, OUT_CSV, OUT_PROM};
  ddp_result r = DDP_OK;
  for (int k = 0; k < NOUT; k++) {
    ddp_result e = write_one(c, st, order[k], files_only, iv);
    if (r == DDP_OK) r = e;
  }
  signal_note(c, st);
  return r;
}

/* A warning per output whose interval writes failed (the verdicts are judged afresh each interval: these go
 * with them). at_end: the end's document, which the end's write follows. */
static ddp_result write_findings(const cmd_ctx *c, const soak_state *st, finding_list *f, int at_end) {
  for (int i = 0; i < NOUT; i++) {
    const int n = st->out[i].fails;
    if (!n) continue;
    char held[64] = ", and the file holds no interval yet";
    if (st->out[i].holds) snprintf(held, sizeof held, ", and the file holds interval %d", st->out[i].holds);
    if (at_end) snprintf(held, sizeof held, " and at the end");
    DDP_TRY(findings_add(f, "soak_write", SEV_WARN, SCOPE_JOB, "job", n, NAN, "",
                         "%s %.200s: the write after interval %d%s failed (%s, %d interval%s in all); each was tried "
                         "again at the next interval%s", OUT_OPTION[i], out_path(c, i),
                         st->out[i].first_fail, st->out[i].last_fail != st->out[i].first_fail ? " and later ones" : "",
                         st->out[i].err, n, n == 1 ? "" : "s", held));
    f->v[f->n - 1].interval = st->out[i].last_fail;
  }
  return DDP_OK;
}

/* The verdicts are judged afresh over the whole series after every interval: the findings and the failed hosts
 * that hosts_judge added from the last ones go (hosts_judge only adds), so that a host an interim verdict named
 * and a later one cleared is not left in --failed-hosts. */
static void verdicts_clear(result_doc *d) {
  findings_free(&d->findings);
  findings_init(&d->findings);
  for (int i = 0; i < d->nfailed_hosts; i++) free(d->failed_hosts[i]);
  d->nfailed_hosts = 0;
}

static const char *const *hosts_of(const cmd_ctx *c) {
  const char **h = calloc((size_t)c->dist.size + 1, sizeof *h);
  for (int k = 0; h && k < c->dist.size; k++) h[k] = cmd_rank_host(c, k);
  return h;
}

/* The document as it stands: INCOMPLETE, the series and every verdict known so far (acceptance's on the first
 * cycle's records, as at the end, and the soak's over the series), written to every output file. A write that
 * fails is reported (write_one) and does not end the soak: only an error of the model does. */
static ddp_result write_interim(cmd_ctx *c, const accept_soak_plan *p, soak_state *st, const accept_rules *rules,
                                double elapsed) {
  const soak_series *S = &st->S;
  verdicts_clear(&c->doc);
  soak_gpu_steady *gs = calloc((size_t)st->S.ngpu + 1, sizeof *gs);
  DDP_CHECK_ALLOC(gs);
  ddp_result r = accept_judge_doc(&c->doc, rules);
  if (r == DDP_OK) r = judge(st, &c->doc.findings, gs);
  if (r == DDP_OK) r = write_findings(c, st, &c->doc.findings, 0);
  if (r == DDP_OK) r = section_set(c, st, p, gs, "running", elapsed);
  free(gs);
  const char *const *hosts = hosts_of(c);
  hosts_verdict hv;
  if (r == DDP_OK) r = hosts ? hosts_judge(&c->doc, (const char **)hosts, c->dist.size, c->strict, &hv)
                             : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  free((void *)hosts);
  char line[400];
  snprintf(line, sizeof line,
           "ddpbench accept --soak: INCOMPLETE  %d interval%s complete, %.0f s of %.0f s; %d finding%s failing so far "
           "(written while the soak ran: a soak stopped here by a signal or a dead rank ends with this document)",
           S->nint, S->nint == 1 ? "" : "s", elapsed, p->seconds, findings_count(&c->doc.findings, SEV_FAIL),
           findings_count(&c->doc.findings, SEV_FAIL) == 1 ? "" : "s");
  if (r == DDP_OK) r = cmd_outcome_incomplete(c, line);
  if (r == DDP_OK) write_all(c, st, 1, S->nint); /* failures said and kept: the soak goes on */
  c->outputs_replace = st->replace;
  return r;
}

/* ---- rank 0: the end of a soak that did not finish ---- */
/* A soak that ends early with rank 0 alive (a rank failed or stopped, the watchdog ended the job) writes its
 * outputs once more from the last interval's document: state "interrupted", and the ranks the watchdog named. The
 * watchdog's thread calls it (on_watchdog_end) while the main thread is stuck: g_end guards the state. */
static struct {
  pthread_mutex_t lock;
  cmd_ctx *c;
  soak_state *st;
  double seconds;
} g_end = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void write_ended(cmd_ctx *c, soak_state *st, double seconds, const watchdog_suspect *sus, int n,
                        const char *why) {
  if (!st->S.nint) return; /* nothing was written: nothing to say it on */
  result_doc *d = &c->doc;
  free(d->state);
  d->state = strdup("interrupted");
  for (int k = 0; k < n; k++) (void)result_suspect_add(d, sus[k].rank, sus[k].host, sus[k].where);
  cJSON *sec = c->sections ? cJSON_GetObjectItemCaseSensitive(c->sections, "soak") : NULL;
  if (sec) cJSON_ReplaceItemInObjectCaseSensitive(sec, "state", cJSON_CreateString("interrupted"));
  char line[600], who[200] = "";
  for (int k = 0, m = 0; k < n && m < (int)sizeof who - 1; k++)
    m += snprintf(who + m, sizeof who - (size_t)m, "%srank %d (%s)", k ? ", " : "; suspect: ", sus[k].rank, sus[k].host);
  snprintf(line, sizeof line, "ddpbench accept --soak: INCOMPLETE  %d interval%s complete of %.0f s, then %s%s",
           st->S.nint, st->S.nint == 1 ? "" : "s", seconds, why, who);
  free(d->bottom_line);
  d->bottom_line = strdup(line);
  fprintf(stderr, "[ddpbench] accept --soak: the soak ended early (%s): writing the outputs of interval %d once more, "
                  "state interrupted\n", why, st->S.nint);
  write_all(c, st, 1, st->S.nint);
}

static void on_watchdog_end(void *arg, const watchdog_suspect *s, int n) {
  (void)arg;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5; /* the main thread holds it only while it judges and writes an interval */
  if (pthread_mutex_timedlock(&g_end.lock, &until) != 0) return; /* the interim files stand */
  if (g_end.c && g_end.st) write_ended(g_end.c, g_end.st, g_end.seconds, s, n, "the watchdog ended the job");
  pthread_mutex_unlock(&g_end.lock);
}

/* One line per interval (a log of a four-hour soak is read later, line by line). */
static void print_interval(const soak_state *st, const finding_list *f) {
  const soak_series *S = &st->S;
  int i = S->nint - 1;
  double tmin = INFINITY, tmed, tmp = -INFINITY, bw = INFINITY, step = -INFINITY;
  double *x = malloc((size_t)(S->ngpu + 1) * sizeof *x);
  int n = 0;
  for (int k = 0; k < S->ngpu; k++) {
    const soak_gpu_sample *g = soak_gpu_at(S, i, k);
    if (isfinite(g->tflops)) x[n++] = g->tflops, tmin = fmin(tmin, g->tflops);
    if (isfinite(g->temp_c)) tmp = fmax(tmp, g->temp_c);
    double s = *soak_step_at(S, i, k);
    if (isfinite(s)) step = fmax(step, s);
  }
  tmed = x ? median_of(x, n) : NAN;
  free(x);
  for (int l = 0; l < S->nlink; l++) {
    double v = *soak_busbw_at(S, i, l);
    if (isfinite(v)) bw = fmin(bw, v);
  }
  char a[16], b[16], cc[16], d[16], e[16];
  printf("# soak interval %d, %.0f-%.0f s: GEMM %s TFLOP/s min %s median %s, temperature max %s C, busbw min %s GB/s, "
         "compute max %s ms/step; %d failing, %d warning finding%s so far\n",
         i + 1, S->t0[i] - S->t0[0], S->t1[i] - S->t0[0], st->prec, ddp_fmt_figure(a, sizeof a, n ? tmin : NAN),
         ddp_fmt_figure(b, sizeof b, tmed), ddp_fmt_figure(cc, sizeof cc, isfinite(tmp) ? tmp : NAN),
         ddp_fmt_figure(d, sizeof d, isfinite(bw) ? bw : NAN), ddp_fmt_figure(e, sizeof e, isfinite(step) ? step : NAN),
         findings_count(f, SEV_FAIL), findings_count(f, SEV_WARN) - findings_count(f, SEV_FAIL),
         findings_count(f, SEV_WARN) - findings_count(f, SEV_FAIL) == 1 ? "" : "s");
  fflush(stdout);
}

/* The report at the end: each GPU's steady state. */
static void print_report(const soak_state *st, const soak_gpu_steady *gs, double elapsed) {
  const soak_series *S = &st->S;
  printf("# soak: %d intervals in %.0f s; per GPU, GEMM %s: first minute, equilibrium (median of the last third), "
         "its model's GPUs, time to first throttle (a failing or warning reason)\n",
         S->nint, elapsed, st->prec);
  printf("#%5s %-12s %-14s %12s %12s %10s %8s %8s %8s %16s\n", "rank", "host", "gpu", "first TFLOP/s", "equil TFLOP/s",
         "peers", "sink%", "T max C", "W med", "first throttle");
  for (int k = 0; k < S->ngpu; k++) {
    const soak_gpu_steady *g = &gs[k];
    double tmax = -INFINITY;
    double *w = malloc((size_t)(S->nint + 1) * sizeof *w);
    int nw = 0;
    for (int i = 0; i < S->nint; i++) {
      const soak_gpu_sample *x = soak_gpu_at(S, i, k);
      if (isfinite(x->temp_c)) tmax = fmax(tmax, x->temp_c);
      if (w && isfinite(x->power_w)) w[nw++] = x->power_w;
    }
    char a[16], b[16], cc[16], d[16], e[16], f[16], thr[32] = "none";
    if (g->first_throttle_interval)
      snprintf(thr, sizeof thr, "%.0f s (int. %d)", g->first_throttle_s, g->first_throttle_interval);
    printf(" %5d %-12.12s %-14.14s %12s %12s %10s %8s %8s %8s %16s\n", S->gpu[k].rank, S->gpu[k].host,
           S->gpu[k].busid[0] ? S->gpu[k].busid : S->gpu[k].model, ddp_fmt_figure(a, sizeof a, g->first_minute),
           ddp_fmt_figure(b, sizeof b, g->equilibrium), ddp_fmt_figure(cc, sizeof cc, g->peers),
           ddp_fmt_figure(d, sizeof d, isfinite(g->sink) ? 100 * g->sink : NAN),
           ddp_fmt_figure(e, sizeof e, isfinite(tmax) ? tmax : NAN),
           ddp_fmt_figure(f, sizeof f, w ? median_of(w, nw) : NAN), thr);
    free(w);
  }
  for (int l = 0; l < S->nlink; l++) {
    double *x = malloc((size_t)(S->nint + 1) * sizeof *x);
    if (!x) continue;
    for (int i = 0; i < S->nint; i++) x[i] = *soak_busbw_at(S, i, l);
    char a[16];
    printf("# %s %s: busbw median %s GB/s over the intervals that measured it\n",
           S->link[l].scope == SCOPE_PAIR ? "node pair" : "allreduce inside node", S->link[l].name,
           ddp_fmt_figure(a, sizeof a, median_of(x, S->nint)));
    free(x);
  }
}

/* The end's --csv and --prom, written here (the series are the soak's) when conclude() begins (cmd_ctx's finish
 * hook: after NCCL's account has added its findings, which come after run()), before it writes --json and
 * --failed-hosts: with the outcome conclude will give (state complete, the exit code of every finding), so that
 * the Prometheus file's ddpbench_run_ok is the run's. A failed write: a finding, and exit 3 (the file written
 * before stays, holding the interval it says). */
static ddp_result write_final_series(cmd_ctx *c, soak_state *st) {
  result_doc *d = &c->doc;
  int code;
  DDP_TRY(soak_doc_exit_code(c, &code));
  free(d->state);
  d->state = strdup("complete");
  DDP_CHECK_ALLOC(d->state);
  d->exit_code = code;
  watchdog_busy("accept --soak: rank 0 writing the series (--csv, --prom) (the other ranks wait for it)");
  int failed = 0;
  /* the CSV before the prom, so that the prom's run_ok says the exit code a failed CSV write gives (3) */
  const int order[2] = {OUT_CSV, OUT_PROM};
  for (int k = 0; k < 2; k++) {
    int i = order[k];
    if (i == OUT_PROM && failed && code == DDP_EXIT_OK) d->exit_code = DDP_EXIT_RUNTIME;
    int before = st->out[i].fails;
    ddp_result e = write_one(c, st, i, 0, st->S.nint);
    if (e == DDP_OK && !c->quiet && out_path(c, i)[0] && !atomic_file_is_stdout(out_path(c, i)))
      fprintf(stderr, "[ddpbench] wrote %s\n", out_path(c, i));
    if (e == DDP_OK || st->out[i].fails == before) continue;
    failed = 1;
    char held[48] = "holds no interval";
    if (st->out[i].holds) snprintf(held, sizeof held, "holds interval %d", st->out[i].holds);
    ddp_result fr = findings_add(&d->findings, "soak_write", SEV_WARN, SCOPE_JOB, "job", NAN, NAN, "",
                                 "%s %.200s: the final write failed (%s): the file %s of %d", OUT_OPTION[i],
                                 out_path(c, i), st->out[i].err, held, st->S.nint);
    if (fr != DDP_OK) { /* the busy section never outlives the write */
      watchdog_busy_end();
      return fr;
    }
  }
  watchdog_busy_end();
  signal_note(c, st);
  if (failed) c->exit_code = code != DDP_EXIT_OK ? code : DDP_EXIT_RUNTIME; /* a failed check ranks first */
  return DDP_OK;
}

/* cmd_ctx's finish hook: the end's --csv and --prom once every finding is in; and its state's free. */
static ddp_result finish_series(cmd_ctx *c) { return write_final_series(c, c->finish_state); }

static void finish_free(void *state) {
  if (!state) return;
  state_free(state);
  free(state);
}

/* ---- the loop ---- */

ddp_result accept_soak(cmd_ctx *c, const accept_soak_plan *p, const accept_rules *rules) {
  const ddp_dist *d = &c->dist;
  int root = d->rank == 0, gpu = c->pl.device->is_gpu;
  measure_env env = {.dist = d, .dev = c->dev, .device = c->pl.device};
  soak_state st;
  memset(&st, 0, sizeof st);
  ddp_result r = root ? state_init(c, p, &st) : DDP_OK;
  if (r == DDP_OK && root) r = soak_params_for(c->ranks[0].dev.name, rules->expect_file, &st.prm);
  int ok = r == DDP_OK;
  DDP_CHECK_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, d->world));
  if (!ok) {
    state_free(&st);
    return root ? r : DDP_FAIL(DDP_ERR_INTERNAL, "rank 0 could not start the soak");
  }
  /* the GEMM's precision: the first one of --precisions this device runs */
  st.prec = "fp32";
  for (int q = 0; gpu && q < HEALTH_NPREC; q++)
    if (ddp_list_has(p->gemm.precisions, health_prec_name((health_prec)q))) {
      st.prec = health_prec_name((health_prec)q);
      break;
    }
  gemm_params gp = p->gemm;
  snprintf(gp.precisions, sizeof gp.precisions, "%s", st.prec);
  /* the groups, once */
  measure_round *r_local = NULL, *r_node = NULL, *r_pair = NULL;
  int n_local = 0, n_node = 0, n_pair = 0;
  engine *eng = NULL;
  soak_probe probe;
  soak_probe_open(&probe, gpu ? c->dev->info.pci_bus_id : NULL, NULL);
  if (r == DDP_OK) r = measure_rounds_build(d, NULL, GROUP_NODE, 0, &r_local, &n_local);
  if (r == DDP_OK && d->size > 1 && !p->skip_node) r = measure_rounds_build(d, c->comm, GROUP_NODE, 0, &r_node, &n_node);
  if (r == DDP_OK && d->size > 1 && p->pairs != PAIRS_NONE && node_pairs(p->pairs, d->node_count, NULL, 0) > 0)
    r = measure_rounds_build(d, c->comm, GROUP_PAIR, (int)p->pairs, &r_pair, &n_pair);
  /* the training model, sized to its share of the interval */
  int steps = 0;
  double step_ms = NAN;
  if (r == DDP_OK) r = train_calibrate(c, p, &steps, &step_ms);
  ddp_config cfg;
  if (r == DDP_OK) r = train_config(c, steps, &cfg);
  if (r == DDP_OK) r = engine_create(&eng, &cfg, c->dev, c->comm, NULL, NULL);
  size_t wcount = r == DDP_OK ? engine_weight_count(eng) : 0;
  float *wbuf = wcount ? malloc(wcount * sizeof *wbuf) : NULL;
  if (r == DDP_OK && !wbuf) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory for the %zu weights' check", wcount);
  st.train_steps = steps;
  int expect = (int)floor(p->seconds / p->interval + 0.5);
  if (expect < 1) expect = 1;
  if (r == DDP_OK && root && !c->quiet) {
    printf("# ddpbench accept --soak %.0f s: %d rank%s on %d host%s, %s device; about %d interval%s of %.0f s, each a "
           "cycle of %d training steps (H=%d L=%d batch=%d %s, ~%.0f ms each), the per-node allreduce, the node pairs "
           "every %d cycle%s, a %.1f s %s GEMM and the host copies; NVML counters at every interval's end\n",
           p->seconds, d->size, d->size == 1 ? "" : "s", d->node_count, d->node_count == 1 ? "" : "s",
           c->pl.device->name, expect, expect == 1 ? "" : "s", p->interval, steps, cfg.hidden, cfg.layers, cfg.batch,
           precision_name(cfg.precision), step_ms, p->pair_every, p->pair_every == 1 ? "" : "s",
           gp.seconds, st.prec);
    fflush(stdout);
  }
  progress_start(root && !c->quiet ? (progress_mode)p->progress : PROGRESS_NONE, NULL, "accept --soak");
  progress_phase("soak", expect, "interval");
  if (r == DDP_OK) DDP_CHECK_MPI(MPI_Barrier(d->world));
  double origin = ddp_now(), t_start = origin;
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  st.start_epoch = (double)wall.tv_sec + 1e-9 * (double)wall.tv_nsec;
  soak_probe_start(&probe, origin);
  rank_msg *all = root ? calloc((size_t)d->size, sizeof *all) : NULL;
  if (root && !all && r == DDP_OK) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  int more = r == DDP_OK;
  /* a watchdog end while rank 0 lives: rank 0 writes the outputs once more, saying so (write_ended) */
  if (root) {
    pthread_mutex_lock(&g_end.lock);
    g_end.c = c, g_end.st = &st, g_end.seconds = p->seconds;
    pthread_mutex_unlock(&g_end.lock);
  }
  watchdog_on_end(root ? on_watchdog_end : NULL, NULL);
  double next_gemm = gp.seconds;
  for (int cycle = 0; more; cycle++) {
    char what[128];
    rank_msg mine;
    memset(&mine, 0, sizeof mine);
    soak_gpu_sample_clear(&mine.s);
    result_doc cyc;
    result_init(&cyc);
    result_doc *doc = root ? &cyc : NULL;
    double ts[NSTAGE + 1];
    for (int q = 0; q <= NSTAGE; q++) ts[q] = NAN;
    ts[ST_TRAIN] = ddp_now();
    if (cycle == 2) watchdog_test_fault(d->rank, "soak"); /* DDPBENCH_TEST_FAULT=ACTION:RANK:soak: in interval 3 */
    /* training */
    snprintf(what, sizeof what, "accept --soak: interval %d, training (%d steps)", cycle + 1, steps);
    watchdog_tick(what);
    progress_step(cycle); /* the line's time and ETA move within the interval too */
    phase_result pr;
    memset(&pr, 0, sizeof pr);
    r = engine_run_phase(eng, PHASE_DDP, &pr);
    hash_job hj = {wbuf, wcount, 0, 0};
    pthread_t hash_tid;
    int hashing = 0;
    if (r == DDP_OK) {
      double cm = median_of(pr.compute_ms, pr.steps);
      mine.compute_ms = isfinite(cm) ? cm : median_of(pr.step_ms, pr.steps);
      r = engine_weights(eng, wbuf);
      if (r == DDP_OK && pthread_create(&hash_tid, NULL, hash_main, &hj) == 0) hashing = 1;
      else if (r == DDP_OK) hash_main(&hj); /* no thread: in line */
    }
    phase_result_free(&pr);
    ts[ST_NODE] = ddp_now();
    /* allreduce inside each node; node pairs every pair_every cycles */
    if (r == DDP_OK && n_node) {
      watchdog_tick("accept --soak: allreduce inside each node");
      progress_step(cycle);
      r = run_rounds(&env, &measure_allreduce, &p->node, r_node, n_node, doc);
    }
    ts[ST_PAIRS] = ddp_now();
    if (r == DDP_OK && n_pair && cycle % p->pair_every == 0) {
      watchdog_tick("accept --soak: node-pair allreduces");
      r = run_rounds(&env, &measure_allreduce, &p->pair, r_pair, n_pair, doc);
    }
    /* the first cycle: acceptance's one-shot checks of links and memory health, and the copy matrix */
    ts[ST_ONCE] = ddp_now();
    if (r == DDP_OK && cycle == 0) r = run_rounds(&env, &measure_gpu, NULL, r_local, n_local, doc);
    if (r == DDP_OK && cycle == 0 && !p->skip_p2p) r = run_rounds(&env, &measure_p2p, &p->p2p, r_local, n_local, doc);
    /* the GEMM and the copies, the load the counters are read under */
    ts[ST_GEMM] = ddp_now();
    progress_step(cycle);
    if (r == DDP_OK && !p->skip_gemm) r = run_rounds(&env, &measure_gemm, &gp, r_local, n_local, doc);
    progress_step(cycle);
    ts[ST_COPY] = ddp_now();
    if (r == DDP_OK && !p->skip_copy) r = run_rounds(&env, &measure_host_copy, &p->copy, r_local, n_local, doc);
    if (hashing) pthread_join(hash_tid, NULL);
    if (r == DDP_OK) mine.checksum = hj.sum, mine.nonfinite = hj.bad, mine.checksum_valid = 1;
    /* DDPBENCH_TEST_CORRUPT_RANK=R[:I]: rank R's weights as if one bit flipped, from interval I (1) on */
    const char *corrupt = testhook_value(HOOK_CORRUPT_RANK);
    int c_rank = -1, c_from = 1;
    if (corrupt && sscanf(corrupt, "%d:%d", &c_rank, &c_from) >= 1 && c_rank == d->rank && cycle + 1 >= c_from)
      mine.checksum ^= 1;
    double now = ddp_now();
    ts[NSTAGE] = now;
    soak_probe_interval(&probe, now, origin, gpu && (!p->skip_copy || !p->skip_gemm), &mine.s);
    /* every rank's figures to rank 0: an error anywhere ends the soak on every rank */
    int fine = r == DDP_OK, all_fine = 0;
    /* an MPI error leaves the loop, not the function: the watchdog's hook is cleared and everything freed below */
    int me = MPI_Allreduce(&fine, &all_fine, 1, MPI_INT, MPI_MIN, d->world);
    if (me == MPI_SUCCESS)
      me = MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, d->world);
    if (me != MPI_SUCCESS) {
      result_free(&cyc);
      r = mpi_fail(me, "MPI_Allreduce/MPI_Gather(the interval's figures)", __FILE__, __LINE__);
      break;
    }
    if (!all_fine) {
      result_free(&cyc);
      if (r == DDP_OK) r = DDP_FAIL(DDP_ERR_TIMEOUT, "another rank failed during interval %d of the soak", cycle + 1);
      break;
    }
    int go = 1;
    if (root) {
      /* rank 0 alone judges and writes while the others wait for it: progress for the watchdog, up to its bound
       * for a busy section (a write that hangs beyond it ends the job, as the final report's does) */
      snprintf(what, sizeof what, "accept --soak: rank 0 judging and writing interval %d's outputs (the other ranks "
                                  "wait for it)", cycle + 1);
      watchdog_busy(what);
      pthread_mutex_lock(&g_end.lock);
      int i = soak_series_add(&st.S, t_start - origin, now - origin); /* seconds since the soak started */
      if (i >= st.stage_cap) {
        int cap = st.stage_cap ? 2 * st.stage_cap : 16;
        double *g = realloc(st.stage_s, (size_t)cap * NSTAGE * sizeof *g);
        if (g) st.stage_s = g, st.stage_cap = cap;
        else i = -1;
      }
      if (i >= 0) /* the training stage also holds the time since the last interval ended (rank 0's writing) */
        for (int q = 0; q < NSTAGE; q++) st.stage_s[i * NSTAGE + q] = (q == ST_TRAIN ? ts[ST_NODE] - t_start : ts[q + 1] - ts[q]);
      r = i < 0 ? DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory") : interval_fill(&st, i, all, &cyc);
      if (r == DDP_OK && cycle == 0) /* the one-shot acceptance records, judged at the end */
        for (int k = 0; r == DDP_OK && k < cyc.nrecords; k++) r = result_add_record(&c->doc, &cyc.records[k]);
      if (r == DDP_OK) r = write_interim(c, p, &st, rules, now - origin);
      if (r == DDP_OK && !c->quiet) {
        progress_clear();
        print_interval(&st, &c->doc.findings);
      }
      pthread_mutex_unlock(&g_end.lock);
      watchdog_busy_end();
      progress_step(cycle + 1);
      double last = now - t_start, left = p->seconds - (now - origin);
      go = r == DDP_OK && left >= 0.5 * last;
      /* the next cycle's GEMM fills what the other stages leave of the interval (unless --health-seconds fixed it),
       * at least a tenth of it (and 1 s), at most all of it: the watchdog's bound allows that (acc_validate) */
      if (!p->gemm_fixed && !p->skip_gemm) {
        double rest = last - (ts[ST_COPY] - ts[ST_GEMM]), want = p->interval - rest;
        double lo = fmax(1.0, 0.1 * p->interval);
        next_gemm = want < lo ? lo : want > p->interval ? p->interval : want;
      }
    }
    result_free(&cyc);
    t_start = now;
    int msg[2] = {go, r == DDP_OK};
    me = MPI_Bcast(msg, 2, MPI_INT, 0, d->world);
    if (me == MPI_SUCCESS) me = MPI_Bcast(&next_gemm, 1, MPI_DOUBLE, 0, d->world);
    if (me != MPI_SUCCESS) {
      r = mpi_fail(me, "MPI_Bcast(the next interval)", __FILE__, __LINE__);
      break;
    }
    gp.seconds = next_gemm;
    if (!msg[1] && !root) r = DDP_FAIL(DDP_ERR_INTERNAL, "rank 0 could not keep the soak's series");
    more = msg[0] && msg[1];
  }
  progress_end();
  watchdog_on_end_clear();
  pthread_mutex_lock(&g_end.lock);
  g_end.c = NULL, g_end.st = NULL;
  pthread_mutex_unlock(&g_end.lock);
  if (r != DDP_OK && root) { /* a rank failed (or rank 0 itself): the outputs say the soak ended early */
    char why[96];
    snprintf(why, sizeof why, "ended early in interval %d (%s)", st.S.nint + 1, ddp_result_str(r));
    write_ended(c, &st, p->seconds, NULL, 0, why);
  }
  free(all);
  free(wbuf);
  engine_free(eng);
  soak_probe_close(&probe);
  measure_rounds_free(r_local, n_local);
  measure_rounds_free(r_node, n_node);
  measure_rounds_free(r_pair, n_pair);
  if (r != DDP_OK || !root) {
    state_free(&st);
    return r;
  }
  /* the end: acceptance's verdicts on the first cycle, the soak's on the series */
  double elapsed = ddp_now() - origin;
  verdicts_clear(&c->doc);
  soak_gpu_steady *gs = calloc((size_t)st.S.ngpu + 1, sizeof *gs);
  r = gs ? accept_judge_doc(&c->doc, rules) : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (r == DDP_OK) r = judge(&st, &c->doc.findings, gs);
  if (r == DDP_OK) r = write_findings(c, &st, &c->doc.findings, 1);
  if (r == DDP_OK) r = soak_doc_summary(&st.S, gs, st.prec, &c->doc);
  if (r == DDP_OK) r = section_set(c, &st, p, gs, "complete", elapsed);
  if (r == DDP_OK) print_report(&st, gs, elapsed);
  c->outputs_own = OUTPUT_CSV | OUTPUT_PROM;
  c->outputs_replace = st.replace;
  free(gs);
  /* the final --csv and --prom wait for conclude() (finish_series): NCCL's account adds its findings after run() */
  soak_state *keep = r == DDP_OK ? malloc(sizeof *keep) : NULL;
  if (r == DDP_OK && !keep) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (r != DDP_OK) {
    state_free(&st);
    return r;
  }
  *keep = st;
  c->finish = finish_series, c->finish_state = keep, c->finish_free = finish_free;
  return DDP_OK;
}
