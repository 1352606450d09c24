/* accept.c: `ddpbench accept`, cluster acceptance: measurements over groups of ranks, a judgement of their
 * records, a report. Over each node (every node at once): the per-GPU checks of gpu_checks.h (the sustained
 * GEMM, host copies, NVML's links and memory health, the node's GPU-to-GPU copy matrix) and an allreduce inside
 * the node; then over node pairs, in rounds of disjoint pairs, an allreduce, repeated (a pair keeps its best
 * pass; every pass is kept beside it, each pair's iterations and the pass's wall time, as "pair_pass" records).
 * Rank 0 prints the figures, judges the records (verdict/accept_verdicts.h: against the built-in expectations,
 * --expect and --baseline, and against peers; a slow node or pair localised) and the skeleton (cmd.h) prints the
 * findings, the hosts' verdict, and writes --json and --failed-hosts. It never judges a figure it did not
 * measure: a missing measurement fails its check, a missing expectation skips only the absolute check. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rules.h"
#include "accept_verdicts.h"
#include "atomic_file.h"
#include "pair_judge.h"
#include "accept_soak.h"
#include "baseline.h"
#include "allreduce.h"
#include "bottom_figures.h"
#include "commands.h"
#include "expect.h"
#include "gpu_checks.h"
#include "measure.h"
#include "nvml_dl.h"
#include "pair_passes.h"
#include "progress.h"
#include "testhooks.h"
#include "watchdog.h"

/* ---- options: acceptance's own, then those of the measurements it runs ---- */
typedef struct {
  double rel_warn, rel_fail, tolerance, timeout;
  double bad_pct, prior_bad, drain_threshold; /* node pairs: the pair model */
  double soak, interval; /* --soak (0: none), --interval: seconds */
  int pair_every;
  int pair_mib, allreduce_iters, pair_repeats, strict;
  int pairs; /* 0 auto, 1 tournament, 2 ring, 3 none */
  int progress; /* progress_mode */
  char node_mib[64], skip[64], expect[512], baseline[2048], retest_hosts[1024];
  double baseline_cv; /* --baseline-cv, % */
  gemm_params gemm;
  copy_params copy;
  p2p_params p2p;
} acc_opts;

#define OFF(f) offsetof(acc_opts, f), 0
#define STR(f) offsetof(acc_opts, f), sizeof(((acc_opts *)0)->f)
static const opt_spec COLL[] = {
    {"node_mib", NULL, 0, OPT_STR, STR(node_mib), "0", .arg = "LIST",
     .help = "per-node allreduce sizes, MiB (0 = 64,1024 on a GPU, 1,8 on cpu)"},
    {"pairs", NULL, 0, OPT_ENUM, OFF(pairs), "auto", .choices = "auto|tournament|ring|none",
     .help = "node pairs (auto = tournament up to 16 nodes, ring beyond)"},
    {"pair_mib", NULL, 0, OPT_INT, OFF(pair_mib), "0", 0, 1 << 20, .arg = "MIB",
     .help = "node-pair allreduce size, MiB (0 = 64 on a GPU, 4 on cpu)"},
    {"allreduce_iters", NULL, 0, OPT_INT, OFF(allreduce_iters), "5", 1, 1 << 20, .help = "timed allreduces per size and group"},
    {"pair_repeats", NULL, 0, OPT_INT, OFF(pair_repeats), "2", 1, 1 << 20,
     .help = "passes over the pair schedule; a pair counts its best pass"},
};
static const opt_spec JUDGE[] = {
    {"skip", NULL, 0, OPT_STR, STR(skip), "", .arg = "LIST", .help = "measurements to skip: gemm,copy,p2p,node,pairs"},
    {"relative_warn_pct", NULL, 0, OPT_DOUBLE, OFF(rel_warn), "5", 0, 100, .arg = "PCT",
     .help = "warn this far below the median of the same GPU model"},
    {"relative_fail_pct", NULL, 0, OPT_DOUBLE, OFF(rel_fail), "10", 0, 100, .arg = "PCT",
     .help = "fail this far below it (node pairs: given without --bad-pct, it is --bad-pct)"},
    {"bad_pct", NULL, 0, OPT_DOUBLE, OFF(bad_pct), "10", PAIR_BAD_PCT_MIN, PAIR_BAD_PCT_MAX, .arg = "PCT",
     .help = "node pairs: a node or path is bad when it runs more than this below the healthy level (the pair "
             "model, docs/accept.md)"},
    {"prior_bad", NULL, 0, OPT_DOUBLE, OFF(prior_bad), "0.01", PAIR_PRIOR_MIN, PAIR_PRIOR_MAX, .arg = "P",
     .help = "node pairs: the probability that a node is bad before the run; the stated error rates assume it"},
    {"drain_threshold", NULL, 0, OPT_DOUBLE, OFF(drain_threshold), "0.5", PAIR_DRAIN_MIN, PAIR_DRAIN_MAX, .arg = "P",
     .help = "node pairs: drain a node whose probability of being bad is above this: the cost of a false drain / "
             "(that + the cost of a miss)"},
    {"retest_hosts", NULL, 0, OPT_STR, STR(retest_hosts), "", .arg = "FILE",
     .help = "write the grey-zone hosts here, one per line: neither drained nor shown healthy, to measure again"},
    {"expect", NULL, 0, OPT_STR, STR(expect), "", .arg = "FILE", .flags = OPT_INPUT, .help = "INI file of expectations overriding the built-in table"},
    {"baseline", NULL, 0, OPT_STR, STR(baseline), "", .arg = "FILE[,FILE...]", .flags = OPT_INPUT,
     .help = "known-good runs' --json (3 or more measure how runs differ): each figure's median over them, less "
             "its spread, is its floor"},
    {"tolerance_pct", NULL, 0, OPT_DOUBLE, OFF(tolerance), "10", 0, 99.999, .arg = "PCT",
     .help = "--baseline: the least margin of a floor below the baseline (a hard floor; a wider spread widens it)"},
    {"baseline_cv", NULL, 0, OPT_DOUBLE, OFF(baseline_cv), "5", 0.1, 50, .arg = "PCT",
     .help = "--baseline of 1 or 2 runs: the between-run CV assumed at least"},
    {"strict", NULL, 0, OPT_BOOL, OFF(strict), "false", .help = "a warning fails too (exit 4)"},
    {"timeout", NULL, 0, OPT_DOUBLE, OFF(timeout), "600", 0, 1e9, .arg = "SECONDS",
     .help = "seconds without progress before the job ends (exit 3, naming the ranks that stopped); at least 2 x "
             "--health-seconds + 10 when given, raised to that when not; 0 = never"},
};
static const opt_spec SOAK[] = {
    {"soak", NULL, 0, OPT_CUSTOM, OFF(soak), "0", .parse = opt_duration_parse, .format = opt_duration_format,
     .arg = "DURATION", .help = "burn-in: repeat the checks in cycles for this long (30m, 4h), a time series with NVML's "
                                "counters and steady-state verdicts (docs/soak.md); 0 = the one-shot checks"},
    {"interval", NULL, 0, OPT_CUSTOM, OFF(interval), "60s", .parse = opt_duration_parse, .format = opt_duration_format,
     .arg = "DURATION", .help = "--soak: the length of one cycle, one interval of the time series"},
    {"pair_every", NULL, 0, OPT_INT, OFF(pair_every), "5", 1, 1 << 20, .arg = "N",
     .help = "--soak: the node-pair rounds every N cycles (the first cycle included)"},
};
static const opt_table SOAK_TABLE = {"burn-in (--soak)", SOAK, (int)(sizeof SOAK / sizeof SOAK[0])};
static const opt_table COLL_TABLE = {"allreduce inside nodes and over node pairs", COLL, (int)(sizeof COLL / sizeof COLL[0])};
static const opt_table JUDGE_TABLE = {"verdicts", JUDGE, (int)(sizeof JUDGE / sizeof JUDGE[0])};

static ddp_result acc_tables(opt_set *s, void *args) {
  acc_opts *o = args;
  DDP_TRY(opt_set_add(s, measure_gemm.options, &o->gemm));
  DDP_TRY(opt_set_add(s, measure_host_copy.options, &o->copy));
  DDP_TRY(opt_set_add(s, measure_p2p.options, &o->p2p));
  DDP_TRY(opt_set_add(s, &COLL_TABLE, o));
  DDP_TRY(opt_set_add(s, &JUDGE_TABLE, o));
  DDP_TRY(opt_set_add(s, &SOAK_TABLE, o));
  return opt_set_add(s, &progress_table, &o->progress);
}

static double acc_timeout(const void *args) { return ((const acc_opts *)args)->timeout; }

/* --pairs as the schedule: auto is the default for the node count. */
static node_pairs_mode pairs_mode(const acc_opts *o, int nnodes) {
  static const node_pairs_mode m[] = {PAIRS_NONE, PAIRS_TOURNAMENT, PAIRS_RING, PAIRS_NONE};
  return o->pairs == 0 ? node_pairs_default(nnodes) : m[o->pairs & 3];
}

/* Where a key's value came from, for messages ("--timeout", "cfg.ini:4"). */
static const char *wh(const cmd_ctx *c, const char *key, char *buf, size_t n) {
  const char *w = opt_where(&c->opts, key, buf, n);
  if (w) return w;
  snprintf(buf, n, "--%s", key);
  for (char *p = buf; *p; p++)
    if (*p == '_') *p = '-';
  return buf;
}

/* Cross-key checks and the files, before MPI starts: bad input costs nothing. */
static ddp_result acc_validate(cmd_ctx *c) {
  acc_opts *o = c->args;
  char w[1100];
  if (o->soak > 0) { /* a cycle is one interval: its GEMM runs half of it unless --health-seconds says otherwise */
    if (o->interval < 1) {
      const char *where = wh(c, "interval", w, sizeof w);
      return ddp_usage_error("accept: %s%s %gs is below the 1 s a soak's interval needs", where,
                             where[0] == '-' ? "" : ": interval", o->interval);
    }
    if (o->interval > o->soak) {
      const char *where = wh(c, "interval", w, sizeof w);
      return ddp_usage_error("accept: %s%s %gs is longer than --soak %gs: the soak would have no complete interval",
                             where, where[0] == '-' ? "" : ": interval", o->interval, o->soak);
    }
    if (!opt_given(&c->opts, "health_seconds")) o->gemm.seconds = 0.5 * o->interval;
    else if (o->gemm.seconds > o->interval) { /* a cycle's GEMM runs inside its interval */
      const char *where = wh(c, "health_seconds", w, sizeof w);
      return ddp_usage_error("accept: %s%s %gs is longer than --interval %gs: a soak cycle's GEMM runs inside its "
                             "interval", where, where[0] == '-' ? "" : ": health_seconds", o->gemm.seconds, o->interval);
    }
  } else if (opt_given(&c->opts, "interval") || opt_given(&c->opts, "pair_every")) {
    const char *where = wh(c, opt_given(&c->opts, "interval") ? "interval" : "pair_every", w, sizeof w);
    return ddp_usage_error("accept: %s is a --soak option; give --soak DURATION too", where);
  }
  /* the watchdog's bound covers the longest GEMM: a soak's GEMM grows to fill its interval (accept_soak.c) */
  double seconds = o->soak > 0 && !opt_given(&c->opts, "health_seconds") ? o->interval : o->gemm.seconds;
  if (!opt_given(&c->opts, "timeout") && o->timeout < 2 * seconds + 10) o->timeout = 2 * seconds + 10; /* long GEMM loops */
  if (o->timeout > 0 && o->timeout < 2 * seconds + 10) { /* one precision's GEMM loop is one watchdog step */
    const char *where = wh(c, "timeout", w, sizeof w);
    return ddp_usage_error("accept: %s%s %g must be 0 or at least 2 x %s + 10 s (%g)", where,
                           where[0] == '-' ? "" : ": timeout", o->timeout,
                           o->soak > 0 && !opt_given(&c->opts, "health_seconds") ? "--interval" : "--health-seconds",
                           2 * seconds + 10);
  }
  if (o->rel_warn > o->rel_fail) { /* a warning comes before a failure */
    const char *where = wh(c, "relative_warn_pct", w, sizeof w);
    return ddp_usage_error("accept: %s%s %g is above relative_fail_pct %g: a figure would fail before it warns", where,
                           where[0] == '-' ? "" : ": relative_warn_pct", o->rel_warn, o->rel_fail);
  }
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%s", o->skip);
  for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save))
    if (strcmp(t, "gemm") && strcmp(t, "copy") && strcmp(t, "p2p") && strcmp(t, "node") && strcmp(t, "pairs"))
      return ddp_usage_error("accept: %s: skip: '%s' is not gemm, copy, p2p, node or pairs", wh(c, "skip", w, sizeof w), t);
  snprintf(tmp, sizeof tmp, "%s", o->node_mib);
  int nsizes = 0;
  for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save), nsizes++) {
    char *end = NULL;
    long v = strtol(t, &end, 10);
    if (end == t || *end || v < 0 || v > 1 << 16 || nsizes == ALLREDUCE_MAX_SIZES)
      return ddp_usage_error("accept: %s: node_mib: '%s' is not a size in MiB (at most %d sizes)",
                             wh(c, "node_mib", w, sizeof w), t, ALLREDUCE_MAX_SIZES);
  }
  if (atomic_file_is_stdout(o->retest_hosts))
    return ddp_usage_error("accept: --retest-hosts -: standard output carries the report; give a file");
  if (o->retest_hosts[0]) { /* as the outputs: a file that cannot be written is found before any work */
    char why[1200];
    if (atomic_file_check(o->retest_hosts, c->out.force, why, sizeof why) != DDP_OK)
      return ddp_usage_error("accept: --retest-hosts: %s", why);
  }
  if (o->soak > 0 && o->retest_hosts[0])
    return ddp_usage_error("accept: --retest-hosts is for the one-shot checks; a soak (--soak) does not write it yet");
  if (o->expect[0]) { /* the file is read now: bad input costs nothing */
    expect_set e;
    expect_builtin(&e, "", 0, 0, 0);
    DDP_TRY(expect_load_file(&e, o->expect));
  }
  if (o->baseline[0]) { /* likewise the baseline: results with accept figures, one file a run */
    result_doc *b;
    int n;
    DDP_TRY(baseline_docs_load(o->baseline, "accept: --baseline", &b, &n));
    baseline_docs_free(b, n);
  }
  return DDP_OK;
}

/* ---- measuring ---- */
/* A rank outside a round's pairs waits: where it is, without resetting the timer. */
static void on_waiting(void *ctx, const char *what) {
  (void)ctx;
  watchdog_where(what);
}

/* One stage: m over the rounds of one kind of group, one round at a time (as measure_run runs them), named
 * `stage` in the progress lines, its rounds their steps. */
static ddp_result over(const measure_env *env, ddp_comm *world, measure_group_kind kind, int mode, const measurement *m,
                       const void *params, result_doc *doc, const char *stage) {
  measure_round *rounds = NULL;
  int n = 0;
  measure_env e = *env;
  e.params = params;
  ddp_result r = measure_rounds_build(env->dist, world, kind, mode, &rounds, &n);
  progress_phase(stage, n > 1 ? n : 0, "round");
  for (int i = 0; r == DDP_OK && i < n; i++) {
    r = measure_run(&e, m, &rounds[i], 1, doc);
    if (n > 1) progress_step(i + 1);
  }
  if (r == DDP_OK) progress_phase_end();
  measure_rounds_free(rounds, n);
  return r;
}

/* The allreduce sizes: --node-mib (0: the device's default), --pair-mib. */
static void node_sizes(const acc_opts *o, int gpu, allreduce_params *p) {
  char sizes[64];
  snprintf(sizes, sizeof sizes, "%s", strcmp(o->node_mib, "0") ? o->node_mib : gpu ? "64,1024" : "1,8");
  p->nsizes = 0;
  for (char *save = NULL, *t = strtok_r(sizes, ",", &save); t && p->nsizes < ALLREDUCE_MAX_SIZES;
       t = strtok_r(NULL, ",", &save))
    p->mib[p->nsizes++] = atof(t);
  p->iters = o->allreduce_iters;
}

/* Keeps, for each pair group and size, the better of what doc holds and what one pass measured. The best-of
 * records carry no samples: a pass's iterations are in its own "pair_pass" records (keep_pass). */
static ddp_result best_of(result_doc *doc, const result_doc *pass) {
  for (int i = 0; i < pass->nrecords; i++) {
    result_record x0 = pass->records[i], *x = &x0;
    x0.samples = NULL, x0.nsamples = 0;
    result_record *have = NULL;
    for (int k = 0; k < doc->nrecords && !have; k++) {
      result_record *y = &doc->records[k];
      const char *bx = result_record_label(x, "bytes"), *by = result_record_label(y, "bytes");
      if (!strcmp(y->measurement, x->measurement) && !strcmp(y->group, x->group) && !strcmp(y->metric, x->metric) &&
          bx && by && !strcmp(bx, by))
        have = y;
    }
    if (!have) DDP_TRY(result_add_record(doc, x));
    else if (isnan(have->value) || x->value > have->value) have->value = x->value;
  }
  return DDP_OK;
}

/* Keeps one pass over the pairs in doc (rank 0's), beside the best-of records: each pair's allreduce of the pass
 * as a "pair_pass" record (its median, every timed iteration's busbw as samples, labels pass and stage added),
 * and the pass's wall time as "pair_pass" "world" "duration_s". A link that flaps slows some passes and some
 * iterations; the best of the passes hides both, these records do not. */
static ddp_result keep_pass(result_doc *doc, const result_doc *one, int pass, const char *stage, double seconds) {
  char p[16];
  snprintf(p, sizeof p, "%d", pass);
  for (int i = 0; i < one->nrecords; i++) {
    const result_record *x = &one->records[i];
    if (strcmp(x->measurement, "allreduce") || strncmp(x->group, "pair:", 5)) continue;
    result_kv *kv = calloc((size_t)x->nlabels + 2, sizeof *kv);
    DDP_CHECK_ALLOC(kv);
    for (int k = 0; k < x->nlabels; k++) kv[k] = x->labels[k]; /* borrowed: result_add_record copies */
    kv[x->nlabels] = (result_kv){"pass", p, 0};
    kv[x->nlabels + 1] = (result_kv){(char *)"stage", (char *)stage, 0};
    result_record y = *x;
    y.measurement = "pair_pass", y.labels = kv, y.nlabels = x->nlabels + 2;
    ddp_result r = result_add_record(doc, &y);
    free(kv);
    DDP_TRY(r);
  }
  return result_add(doc, "pair_pass", "world", "duration_s", "s", BETTER_LOWER, seconds, NULL, NULL, 0, "pass", p,
                    "stage", stage, NULL);
}

/* The test hook's delay for pass k (1-based, the confirmation's passes continuing the schedule's): seconds. */
static double pass_delay(int pass) {
  const char *v = testhook_value(HOOK_PAIR_PASS_DELAY);
  int k = 0;
  double s = 0;
  return v && sscanf(v, "%d:%lf", &k, &s) == 2 && k == pass && s > 0 && s < 3600 ? s : 0;
}

/* Sleeps the hook's delay (every rank: the pass is as slow as its slowest pair). */
static void pass_stall(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (s > 0 && nanosleep(&ts, &ts) != 0) {}
}

/* The confirmation pass: rank 0 judges what the pairs measured (accept_confirm_plan) and names the
 * pairs that would prove or clear a node it would name or leave a suspect: that node with one that passed, which
 * it has not met. Every rank runs them as the schedule's pairs are run (--pair-repeats passes, the best kept),
 * before the judgement. */
static ddp_result confirm_pass(cmd_ctx *c, const acc_opts *o, const accept_rules *rules, const measure_env *env,
                               const allreduce_params *pp, int first_pass) {
  const ddp_dist *d = &c->dist;
  int cap = d->node_count, n = 0;
  node_pair *plan = calloc((size_t)cap + 1, sizeof *plan);
  DDP_CHECK_ALLOC(plan);
  ddp_result r = d->rank == 0 ? accept_confirm_plan(&c->doc, rules, plan, cap, &n) : DDP_OK;
  int head[2] = {r, n};
  DDP_CHECK_MPI(MPI_Bcast(head, 2, MPI_INT, 0, d->world));
  if (head[0] != DDP_OK || head[1] <= 0) {
    free(plan);
    return d->rank == 0 ? r : head[0] == DDP_OK ? DDP_OK : DDP_FAIL(DDP_ERR_INTERNAL, "rank 0 could not judge the pairs");
  }
  n = head[1];
  DDP_CHECK_MPI(MPI_Bcast(plan, n * (int)sizeof *plan, MPI_BYTE, 0, d->world));
  measure_round *rounds = NULL;
  int nrounds = 0;
  r = measure_pair_rounds_build(d, c->comm, plan, n, &rounds, &nrounds);
  measure_env e = *env;
  e.params = pp;
  for (int pass = 0; r == DDP_OK && pass < o->pair_repeats; pass++) {
    char what[112];
    snprintf(what, sizeof what, "accept: confirmation pairs (%d), pass %d of %d", n, pass + 1, o->pair_repeats);
    watchdog_tick(what);
    progress_phase(what + 8, nrounds > 1 ? nrounds : 0, "round");
    result_doc one;
    result_init(&one);
    double t0 = ddp_now(), delay = pass_delay(first_pass + pass);
    pass_stall(delay);
    for (int i = 0; r == DDP_OK && i < nrounds; i++) {
      r = measure_run(&e, &measure_allreduce, &rounds[i], 1, d->rank == 0 ? &one : NULL);
      if (nrounds > 1) progress_step(i + 1);
    }
    if (r == DDP_OK) progress_phase_end();
    if (r == DDP_OK && d->rank == 0) r = keep_pass(&c->doc, &one, first_pass + pass, "confirm", ddp_now() - t0);
    if (r == DDP_OK && d->rank == 0) r = best_of(&c->doc, &one);
    result_free(&one);
  }
  measure_rounds_free(rounds, nrounds);
  free(plan);
  return r;
}

static ddp_result measure_all(cmd_ctx *c, const acc_opts *o, const accept_rules *rules) {
  const ddp_dist *d = &c->dist;
  int gpu = c->pl.device->is_gpu;
  result_doc *doc = d->rank == 0 ? &c->doc : NULL;
  measure_env env = {.dist = d, .dev = c->dev, .device = c->pl.device, .waiting = on_waiting};
  char stage[96];
  snprintf(stage, sizeof stage, "sustained GEMM, %g s per precision", o->gemm.seconds);
  /* per GPU, every node at once (groups of ranks only: no data-plane comm needed) */
  if (!ddp_list_has(o->skip, "gemm")) DDP_TRY(over(&env, NULL, GROUP_NODE, 0, &measure_gemm, &o->gemm, doc, stage));
  if (!ddp_list_has(o->skip, "copy"))
    DDP_TRY(over(&env, NULL, GROUP_NODE, 0, &measure_host_copy, &o->copy, doc, "pinned host<->device copies"));
  /* links under the load just ended */
  DDP_TRY(over(&env, NULL, GROUP_NODE, 0, &measure_gpu, NULL, doc, "GPU links and memory health"));
  if (!ddp_list_has(o->skip, "p2p"))
    DDP_TRY(over(&env, NULL, GROUP_NODE, 0, &measure_p2p, &o->p2p, doc, "the GPU-to-GPU copy matrix"));
  if (d->size < 2) return DDP_OK;
  allreduce_params np, pp = {1, {o->pair_mib ? o->pair_mib : gpu ? 64 : 4}, o->allreduce_iters};
  node_sizes(o, gpu, &np);
  watchdog_tick("accept: allreduce on each node");
  if (!ddp_list_has(o->skip, "node"))
    DDP_TRY(over(&env, c->comm, GROUP_NODE, 0, &measure_allreduce, &np, doc, "allreduce inside each node"));
  node_pairs_mode mode = ddp_list_has(o->skip, "pairs") ? PAIRS_NONE : pairs_mode(o, d->node_count);
  if (mode == PAIRS_NONE || node_pairs(mode, d->node_count, NULL, 0) == 0) return DDP_OK;
  /* every pass over the pair schedule; a pair keeps its best pass (a healthy pair slowed once by a neighbour's
   * burst is not named; a slow link is slow in every pass) */
  for (int pass = 0; pass < o->pair_repeats; pass++) {
    char what[96];
    snprintf(what, sizeof what, "accept: node-pair allreduces, pass %d of %d", pass + 1, o->pair_repeats);
    watchdog_tick(what);
    result_doc one;
    result_init(&one);
    double t0 = ddp_now(), delay = pass_delay(pass + 1);
    pass_stall(delay);
    ddp_result r = over(&env, c->comm, GROUP_PAIR, (int)mode, &measure_allreduce, &pp, d->rank == 0 ? &one : NULL,
                        what + 8);
    if (r == DDP_OK && doc) r = keep_pass(doc, &one, pass + 1, "pairs", ddp_now() - t0);
    if (r == DDP_OK && doc) r = best_of(doc, &one);
    result_free(&one);
    DDP_TRY(r);
  }
  return d->node_count > 2 ? confirm_pass(c, o, rules, &env, &pp, o->pair_repeats + 1) : DDP_OK;
}

/* ---- printing (rank 0), from the records ---- */

static double pv(const gpu_view *g, const char *prec, const char *what) {
  char m[64];
  snprintf(m, sizeof m, "gemm_%s_%s", prec, what);
  return accept_view_value(g, m);
}

static void print_gpus(const acc_opts *o, const gpu_views *vs) {
  static const char *precs[] = {"bf16", "fp16", "tf32", "fp32"};
  int any = 0;
  for (int i = 0; i < vs->n; i++)
    for (int p = 0; p < 4; p++) any |= isfinite(pv(&vs->g[i], precs[p], "n"));
  if (any) {
    printf("# sustained GEMM, %.1f s per precision, medians over ~%.0f ms intervals; NVML sampled between intervals\n",
           o->gemm.seconds, 1e3 * GPU_CHECKS_INTERVAL_S);
    printf("#%5s %-12s %-14s %-5s %6s %8s %8s %8s %7s %16s %16s %5s  %s\n", "rank", "host", "gpu", "prec", "n",
           "TFLOP/s", "first-s", "last-s", "drift%", "SM MHz min/med", "W med/max/lim", "T C", "clock event reasons");
  }
  for (int i = 0; i < vs->n; i++)
    for (int p = 0; p < 4; p++) {
      const gpu_view *g = &vs->g[i];
      if (!isfinite(pv(g, precs[p], "n"))) continue;
      char clk[24] = "-", pw[40] = "-", rs[96] = "-", a[16], b[16], cc[16], t[16];
      double reasons = pv(g, precs[p], "clock_reasons");
      if (isfinite(reasons)) {
        snprintf(clk, sizeof clk, "%.0f/%.0f", pv(g, precs[p], "sm_mhz_min"), pv(g, precs[p], "sm_mhz_median"));
        snprintf(pw, sizeof pw, "%.0f/%.0f/%.0f", pv(g, precs[p], "power_w_median"), pv(g, precs[p], "power_w_max"),
                 pv(g, precs[p], "power_limit_w"));
        nvml_reasons_str((unsigned long long)reasons, rs, sizeof rs);
      }
      double temp = pv(g, precs[p], "temp_c_max");
      snprintf(t, sizeof t, isfinite(temp) ? "%.0f" : "-", temp);
      printf(" %5d %-12.12s %-14.14s %-5s %6.0f %8s %8s %8s %7.1f %16s %16s %5s  %s\n", g->rank, g->host, g->model,
             precs[p], pv(g, precs[p], "n"), ddp_fmt_figure(a, sizeof a, pv(g, precs[p], "tflops")),
             ddp_fmt_figure(b, sizeof b, pv(g, precs[p], "first_tflops")), ddp_fmt_figure(cc, sizeof cc, pv(g, precs[p], "last_tflops")),
             pv(g, precs[p], "drift_pct"), clk, pw, t, rs);
    }
  any = 0;
  for (int i = 0; i < vs->n; i++) any |= accept_view_has(&vs->g[i], "h2d_gbps");
  if (any) {
    printf("# pinned host<->device copies, %d MiB, median of %d: each GPU alone, then every GPU of the node at once\n",
           o->copy.mib, o->copy.iters);
    printf("#%5s %-12s %-14s %-12s %10s %10s %10s %10s %10s\n", "rank", "host", "gpu", "link", "H2D alone", "D2H alone",
           "H2D node", "D2H node", "link GB/s");
    for (int i = 0; i < vs->n; i++) {
      const gpu_view *g = &vs->g[i];
      if (!accept_view_has(g, "h2d_gbps")) continue;
      char link[24] = "-", raw[16];
      double gen = accept_view_value(g, "pcie_gen"), width = accept_view_value(g, "pcie_width");
      double gmax = accept_view_value(g, "pcie_gen_max"), wmax = accept_view_value(g, "pcie_width_max");
      if (isfinite(gen) || isfinite(width)) { /* a figure NVML did not measure prints as "-" */
        char gs[8] = "-", ws[8] = "-";
        if (isfinite(gen)) snprintf(gs, sizeof gs, "%.0f", gen);
        if (isfinite(width)) snprintf(ws, sizeof ws, "%.0f", width);
        snprintf(link, sizeof link, "Gen%s x%s", gs, ws);
      }
      double r = isfinite(gmax) && isfinite(wmax) ? expect_pcie_gbps((unsigned)gmax, (unsigned)wmax) : 0;
      ddp_fmt_figure(raw, sizeof raw, r > 0 ? r : NAN);
      printf(" %5d %-12.12s %-14.14s %-12s %10.1f %10.1f %10.1f %10.1f %10s\n", g->rank, g->host, g->model, link,
             accept_view_value(g, "h2d_gbps"), accept_view_value(g, "d2h_gbps"), accept_view_value(g, "h2d_node_gbps"),
             accept_view_value(g, "d2h_node_gbps"), raw);
    }
  }
  for (int i = 0; i < vs->n; i++) {
    const gpu_view *g = &vs->g[i];
    int n = 0;
    for (int k = 0; k < g->n; k++) {
      int a, b;
      const char *pair = result_record_label(g->v[k], "pair");
      if (strcmp(g->v[k]->metric, "p2p_gbps") || !pair || sscanf(pair, "%d-%d", &a, &b) != 2) continue;
      if (a + 1 > n) n = a + 1;
      if (b + 1 > n) n = b + 1;
    }
    if (n < 2) continue;
    printf("# GPU-to-GPU copies on host %s (node %d), %d MiB, GB/s: one direction (both directions at once)\n", g->host,
           g->node, o->p2p.mib);
    printf("#%6s", "src\\dst");
    for (int b = 0; b < n; b++) printf(" %15d", b);
    printf("\n");
    for (int a = 0; a < n; a++) {
      printf(" %6d", a);
      for (int b = 0; b < n; b++) {
        char cell[48] = "-";
        if (a != b)
          snprintf(cell, sizeof cell, "%.1f (%.1f)%s", accept_view_pair(g, "p2p_gbps", a, b),
                   accept_view_pair(g, "p2p_bidir_gbps", a, b), accept_view_pair(g, "p2p_peer_access", a, b) ? "" : "*");
        printf(" %15s", cell);
      }
      printf("\n");
    }
  }
}

static const char *node_host(const result_doc *d, int node) {
  for (int i = 0; i < d->nranks; i++)
    if (d->ranks[i].node == node) return d->ranks[i].host;
  return "?";
}

static void print_coll(const acc_opts *o, const cmd_ctx *c) {
  const result_doc *d = &c->doc;
  int nnodes = c->dist.node_count, gpu = c->pl.device->is_gpu;
  if (c->dist.size > 1 && !ddp_list_has(o->skip, "node")) {
    allreduce_params np;
    node_sizes(o, gpu, &np);
    printf("# allreduce inside each node (all nodes at once), busbw GB/s, %d timed each\n#%-5s %-14s", o->allreduce_iters,
           "node", "host");
    for (int k = 0; k < np.nsizes; k++) printf(" %8.0fMiB", np.mib[k]);
    printf("\n");
    for (int n = 0; n < nnodes; n++) {
      const char *h = node_host(d, n);
      char g[80];
      snprintf(g, sizeof g, "node:%.56s", h);
      printf(" %-5d %-14.14s", n, h);
      for (int k = 0; k < np.nsizes; k++) {
        char b[32], v[16];
        snprintf(b, sizeof b, "%zu", (size_t)(np.mib[k] * (1 << 20)) & ~(size_t)3);
        const result_record *x = result_find(d, "allreduce", g, "busbw_gbs", "bytes", b, NULL);
        printf(" %11s", ddp_fmt_figure(v, sizeof v, x ? x->value : NAN));
      }
      printf("\n");
    }
  }
  node_pairs_mode mode = ddp_list_has(o->skip, "pairs") ? PAIRS_NONE : pairs_mode(o, nnodes);
  int npairs = c->dist.size > 1 ? node_pairs(mode, nnodes, NULL, 0) : 0;
  node_pair *pairs = npairs ? calloc((size_t)npairs, sizeof *pairs) : NULL;
  if (!pairs) return;
  node_pairs(mode, nnodes, pairs, npairs);
  int mib = o->pair_mib ? o->pair_mib : gpu ? 64 : 4;
  printf("# allreduce over node pairs (%s, %d round%s of disjoint pairs), %d MiB, busbw GB/s\n",
         mode == PAIRS_RING ? "ring" : "tournament", pairs[npairs - 1].round + 1, pairs[npairs - 1].round ? "s" : "", mib);
  for (int p = 0; p < npairs; p++) {
    char g[64], v[16];
    snprintf(g, sizeof g, "pair:%d-%d", pairs[p].a, pairs[p].b);
    const result_record *x = result_find(d, "allreduce", g, "busbw_gbs", NULL);
    printf(" round %-3d %s - %s: %s\n", pairs[p].round, node_host(d, pairs[p].a), node_host(d, pairs[p].b),
           ddp_fmt_figure(v, sizeof v, x ? x->value : NAN));
  }
  int header = 0; /* the confirmation pass's pairs: those outside the schedule */
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *x = &d->records[i];
    int a, b, in = 0;
    if (strcmp(x->measurement, "allreduce") || strcmp(x->metric, "busbw_gbs") ||
        sscanf(x->group, "pair:%d-%d", &a, &b) != 2 || a < 0 || b < 0 || a >= nnodes || b >= nnodes)
      continue;
    for (int p = 0; p < npairs; p++) in |= pairs[p].a == a && pairs[p].b == b;
    if (in) continue;
    if (!header++) printf("# confirmation pairs: a node the pairs would name or leave a suspect, with one that passed\n");
    char v[16];
    printf(" confirm   %s - %s: %s\n", node_host(d, a), node_host(d, b), ddp_fmt_figure(v, sizeof v, x->value));
  }
  double sec[64]; /* each pass's wall time: a pass the best-of figures hid shows here (and warns: pair_passes.h) */
  int np = pair_passes_durations(d, sec, NULL, 64);
  for (int k = 0; k < np; k++) printf("%s%.1f s", k ? ", " : " pair passes: ", sec[k]);
  if (np) printf("\n");
  free(pairs);
}

/* --soak: the cycles of accept_soak.h over the same measurements, with their options. */
static ddp_result soak_run(cmd_ctx *c, const acc_opts *o, const accept_rules *rules) {
  accept_soak_plan p;
  memset(&p, 0, sizeof p);
  int gpu = c->pl.device->is_gpu;
  p.seconds = o->soak, p.interval = o->interval, p.pair_every = o->pair_every;
  p.gemm = o->gemm, p.copy = o->copy, p.p2p = o->p2p;
  node_sizes(o, gpu, &p.node);
  if (p.node.nsizes > 1) { /* one size a cycle: the largest, where the busbw is the link's */
    double big = 0;
    for (int k = 0; k < p.node.nsizes; k++) big = fmax(big, p.node.mib[k]);
    p.node.mib[0] = big, p.node.nsizes = 1;
  }
  p.pair = (allreduce_params){1, {o->pair_mib ? o->pair_mib : gpu ? 64 : 4}, o->allreduce_iters};
  p.pairs = ddp_list_has(o->skip, "pairs") ? PAIRS_NONE : pairs_mode(o, c->dist.node_count);
  p.skip_gemm = ddp_list_has(o->skip, "gemm"), p.skip_copy = ddp_list_has(o->skip, "copy");
  p.skip_p2p = ddp_list_has(o->skip, "p2p"), p.skip_node = ddp_list_has(o->skip, "node");
  p.train_share = 0.3;
  p.gemm_fixed = opt_given(&c->opts, "health_seconds");
  p.progress = o->progress;
  ddp_result r = accept_soak(c, &p, rules);
  for (int i = 0; r == DDP_OK && c->dist.rank == 0 && i < c->doc.nranks; i++) { /* the rank table's GEMM figure */
    char rank[16];
    snprintf(rank, sizeof rank, "%d", i);
    const result_record *x = result_find(&c->doc, "soak", "world", "equilibrium_tflops", "rank", rank, NULL);
    c->doc.ranks[i].gemm_tflops = x ? x->value : NAN;
  }
  return r;
}

static ddp_result acc_run(cmd_ctx *c) {
  const acc_opts *o = c->args;
  const ddp_dist *d = &c->dist;
  c->strict = o->strict;
  double t0 = ddp_now();
  result_doc *base = NULL;
  int nbase = 0;
  accept_rules rules = {.rel_warn_pct = o->rel_warn, .rel_fail_pct = o->rel_fail, .tolerance_pct = o->tolerance,
                        .expect_file = o->expect, .bad_pct = o->bad_pct, .prior_bad = o->prior_bad,
                        .drain_threshold = o->drain_threshold};
  /* --relative-fail-pct given alone carries over to the pairs' --bad-pct (its meaning before the pair model) */
  if (!opt_given(&c->opts, "bad_pct") && opt_given(&c->opts, "relative_fail_pct")) {
    rules.bad_pct = fmin(o->rel_fail, PAIR_BAD_PCT_MAX);
    if (d->rank == 0 && o->rel_fail > PAIR_BAD_PCT_MAX)
      ddp_notice("accept: --relative-fail-pct %g: node pairs take it as --bad-pct, at most %d; they use %d", o->rel_fail,
                 PAIR_BAD_PCT_MAX, PAIR_BAD_PCT_MAX);
    char v[32]; /* the config records the bar used: judge reads it */
    snprintf(v, sizeof v, "%g", rules.bad_pct);
    if (d->rank == 0) DDP_TRY(result_config_set(&c->doc, "bad_pct", v, 0));
  }
  /* rank 0 judges (the confirmation pass too); the files were checked readable before any work */
  ddp_result r = d->rank == 0 && o->baseline[0] ? baseline_docs_load(o->baseline, "accept: --baseline", &base, &nbase)
                                                : DDP_OK;
  if (r == DDP_OK && base) rules.baseline = base, rules.baseline_runs = nbase, rules.baseline_cv_pct = o->baseline_cv;
  if (o->soak > 0) {
    r = r == DDP_OK ? soak_run(c, o, &rules) : r;
    baseline_docs_free(base, nbase);
    return r;
  }
  progress_start(d->rank == 0 && !c->quiet ? (progress_mode)o->progress : PROGRESS_NONE, NULL, "accept");
  if (r == DDP_OK) r = measure_all(c, o, &rules);
  progress_end(); /* before the report (tty: the line's newline) */
  if (r != DDP_OK || d->rank != 0) {
    baseline_docs_free(base, nbase);
    return r;
  }
  printf("# ddpbench accept: %d rank%s on %d host%s, %s device, %.1f s of measurements\n", d->size,
         d->size == 1 ? "" : "s", d->node_count, d->node_count == 1 ? "" : "s", c->pl.device->name, ddp_now() - t0);
  r = accept_judge_doc(&c->doc, &rules);
  if (r == DDP_OK && o->retest_hosts[0]) { /* the grey zone: the pair model's "pair_retest" findings */
    char *text = NULL;
    size_t n = 0;
    r = pair_retest_text(&c->doc, &text, &n);
    if (r == DDP_OK) r = atomic_file_write(o->retest_hosts, text, n, c->out.force);
    if (r == DDP_OK && !c->quiet && !atomic_file_is_stdout(o->retest_hosts))
      fprintf(stderr, "[ddpbench] wrote %s\n", o->retest_hosts);
    free(text);
  }
  if (r == DDP_OK && c->doc.nrecords == 0) /* no evidence is no pass */
    r = findings_add(&c->doc.findings, "measured", SEV_FAIL, SCOPE_JOB, "job", NAN, NAN, "",
                     "nothing was measured: every check was skipped (--skip %s) or does not apply here (%d rank%s on %d "
                     "host%s, %s device, --precisions %s); a cluster is not accepted on no evidence",
                     o->skip[0] ? o->skip : "none", d->size, d->size == 1 ? "" : "s", d->node_count,
                     d->node_count == 1 ? "" : "s", c->pl.device->name, o->gemm.precisions);
  gpu_views vs;
  if (r == DDP_OK && (r = accept_views_build(&c->doc, &vs)) == DDP_OK) {
    print_gpus(o, &vs);
    accept_views_free(&vs);
    print_coll(o, c);
  }
  for (int i = 0; r == DDP_OK && i < c->doc.nranks; i++) { /* the rank table's GEMM figure: bf16's */
    char rank[16];
    snprintf(rank, sizeof rank, "%d", i);
    const result_record *x = result_find(&c->doc, "accept", "world", "gemm_bf16_tflops", "rank", rank, NULL);
    c->doc.ranks[i].gemm_tflops = x ? x->value : NAN;
  }
  baseline_docs_free(base, nbase);
  return r;
}

const cmd_def cmd_accept = {
    .bottom = accept_bottom,
    .name = "accept",
    .summary = "cluster acceptance: per-GPU, per-node and node-pair checks with verdicts and a drain list",
    .usage = "usage: mpirun -np N ddpbench accept [options]\n",
    .about = "Per GPU: a sustained GEMM per precision (with NVML's clocks, power and throttle reasons), pinned host copies "
             "alone and with the node, the GPU-to-GPU copy matrix, memory errors and links; per node an allreduce, and "
             "node pairs in rounds. Each figure is judged against the expectations (built-in, --expect, --baseline) and "
             "against its peers; a slow node or pair is localised; failing hosts go to --failed-hosts.\n"
             "Example: mpirun -np 16 ddpbench accept --json accept.json --failed-hosts drain.txt\n",
    .cpu_note = "it measures the fp32 GEMM only (no bf16/fp16/tf32, no copies)",
    .exit_codes = "0 every host passed (warnings allowed), 2 bad input, 3 runtime error or timeout, 4 a check failed "
                  "(--strict: or warned), 130/143 SIGINT/SIGTERM",
    .flags = CMD_MPI | CMD_PLACE | CMD_COMM | CMD_OUTPUTS | CMD_VERDICT,
    .args_size = sizeof(acc_opts),
    .tables = acc_tables,
    .validate = acc_validate,
    .timeout = acc_timeout,
    .cpu_threads = 1,
    .run = acc_run,
};
