/* accept_verdicts.c: acceptance's checks over records (accept_verdicts.h). The records are first grouped per
 * GPU (one view per rank, for the run and for the baseline alike); every check then reads views. */
#include "accept_verdicts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "baseline.h"
#include "expect.h"
#include "clock_reasons.h"
#include "pair_passes.h"
#include "stats.h"
#include "pair_judge.h"
#include "gpu_model.h"

/* ---- views: a document's per-GPU records, one view per rank ------------------------------------------------ */
void accept_views_free(gpu_views *vs) {
  for (int i = 0; i < vs->n; i++) free(vs->g[i].v);
  free(vs->g);
  memset(vs, 0, sizeof *vs);
}

static const char *label_or(const result_record *r, const char *key) {
  const char *v = result_record_label(r, key);
  return v ? v : "";
}

ddp_result accept_views_build(const result_doc *d, gpu_views *vs) {
  memset(vs, 0, sizeof *vs);
  int maxrank = -1;
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *r = &d->records[i];
    if (strcmp(r->measurement, "accept") || strcmp(r->group, "world")) continue;
    const char *rk = result_record_label(r, "rank");
    if (rk && atoi(rk) > maxrank) maxrank = atoi(rk);
  }
  if (maxrank < 0) return DDP_OK;
  gpu_view *all = calloc((size_t)maxrank + 1, sizeof *all);
  DDP_CHECK_ALLOC(all);
  for (int i = 0; i <= maxrank; i++) all[i].rank = -1;
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *r = &d->records[i];
    const char *rk = result_record_label(r, "rank");
    if (strcmp(r->measurement, "accept") || strcmp(r->group, "world") || !rk || atoi(rk) < 0) continue;
    gpu_view *g = &all[atoi(rk)];
    if (g->n == g->cap) {
      int cap = g->cap ? 2 * g->cap : 32;
      const result_record **p = realloc(g->v, (size_t)cap * sizeof *p);
      if (!p) {
        for (int k = 0; k <= maxrank; k++) free(all[k].v);
        free(all);
        return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
      }
      g->v = p, g->cap = cap;
    }
    g->v[g->n++] = r;
    if (g->rank < 0) g->rank = atoi(rk), g->host = label_or(r, "host"), g->bus = label_or(r, "gpu"), g->model = "";
    if (!g->model[0] && result_record_label(r, "model")) g->model = result_record_label(r, "model");
  }
  for (int i = 0; i <= maxrank; i++) { /* compact: ranks with records only */
    if (all[i].rank < 0) continue;
    all[i].node = all[i].rank < d->nranks ? d->ranks[all[i].rank].node : 0;
    all[vs->n++] = all[i];
  }
  vs->g = all;
  return DDP_OK;
}

double accept_view_value(const gpu_view *g, const char *metric) {
  for (int i = 0; i < g->n; i++)
    if (!strcmp(g->v[i]->metric, metric)) return g->v[i]->value;
  return NAN;
}

int accept_view_has(const gpu_view *g, const char *metric) {
  for (int i = 0; i < g->n; i++)
    if (!strcmp(g->v[i]->metric, metric)) return 1;
  return 0;
}

double accept_view_pair(const gpu_view *g, const char *metric, int a, int b) {
  char pair[32];
  snprintf(pair, sizeof pair, "%d-%d", a, b);
  for (int i = 0; i < g->n; i++)
    if (!strcmp(g->v[i]->metric, metric) && !strcmp(label_or(g->v[i], "pair"), pair)) return g->v[i]->value;
  return NAN;
}

static unsigned uval(const gpu_view *g, const char *metric) {
  double v = accept_view_value(g, metric);
  return isfinite(v) && v > 0 ? (unsigned)v : 0;
}

/* ---- the floors ---------------------------------------------------------------------------------------------- */
/* The baseline run's figure for this GPU (same host and bus id; on the CPU device same host and rank; *at that
 * view), else the median over the run's GPUs of the same model (*at NULL); NaN when it has neither. */
static double baseline_value(const gpu_views *b, const char *metric, const gpu_view *g, const gpu_view **at) {
  *at = NULL;
  for (int i = 0; i < b->n; i++) {
    const gpu_view *x = &b->g[i];
    if (strcmp(x->host, g->host)) continue;
    if (g->bus[0] ? !strcmp(x->bus, g->bus) : x->rank == g->rank) {
      double v = accept_view_value(x, metric);
      if (isfinite(v)) return *at = x, v;
    }
  }
  double *v = malloc(((size_t)b->n + 1) * sizeof *v);
  int n = 0;
  for (int i = 0; v && i < b->n; i++) {
    double x = accept_view_value(&b->g[i], metric);
    if (!strcmp(b->g[i].model, g->model) && isfinite(x)) v[n++] = x;
  }
  double m = n ? stats_percentile(v, n, 0.5) : NAN;
  free(v);
  return m;
}

static const result_record *view_record(const gpu_view *g, const char *metric) {
  for (int i = 0; i < g->n; i++)
    if (!strcmp(g->v[i]->metric, metric)) return g->v[i];
  return NULL;
}

/* The expected range of 3 Gaussian values over their standard deviation (d2 of quality control's range charts) */
#define RANGE3_TO_SD 1.693

/* How much one GPU's figure varied inside its run, in log terms: the spread of its samples where it has them;
 * a GEMM's first second, median and last second otherwise (their range over RANGE3_TO_SD). NaN: unknown. */
static double view_within(const gpu_view *g, const char *metric) {
  const result_record *x = view_record(g, metric);
  double s = baseline_samples_spread(x);
  char prec[8];
  if (isfinite(s) || !x || sscanf(metric, "gemm_%7[a-z0-9]_tflops", prec) != 1) return s;
  char m[64];
  snprintf(m, sizeof m, "gemm_%s_first_tflops", prec);
  double first = accept_view_value(g, m), med = x->value;
  snprintf(m, sizeof m, "gemm_%s_last_tflops", prec);
  double last = accept_view_value(g, m);
  if (!(first > 0 && med > 0 && last > 0)) return NAN;
  double lo = fmin(fmin(first, med), last), hi = fmax(fmax(first, med), last);
  return log(hi / lo) / RANGE3_TO_SD;
}

/* The run's own noise on its figure: the standard deviation of the median of its samples (1.2533 s / sqrt n for
 * Gaussian noise of spread s); NaN without samples. A GEMM's drift inside the run is not counted: a GPU that
 * slows down during the run is what the check is for. */
static double median_noise(const result_record *x) {
  double s = baseline_samples_spread(x);
  return isfinite(s) ? 1.2533 * s / sqrt(x->nsamples) : NAN;
}

static int baseline_runs(const accept_rules *r) { return !r->baseline ? 0 : r->baseline_runs > 0 ? r->baseline_runs : 1; }
static double baseline_cv(const accept_rules *r) { return r->baseline_cv_pct > 0 ? r->baseline_cv_pct : BASELINE_CV_PCT; }

/* What the baseline's floors came to, per figure, for the findings that say it once (baseline_notes_say). */
typedef struct {
  const char *figure;
  int used, noisy, refused;
  double worst_pct; /* the largest measured spread */
  char worst_at[48];
} baseline_note;

static void baseline_note_add(baseline_note *n, const baseline_floor *f, const char *at) {
  n->used++;
  n->noisy += f->noisy && !f->refused, n->refused += f->refused;
  double w = f->refused ? f->spread_pct : f->noisy_pct;
  if ((f->noisy || f->refused) && !(w <= n->worst_pct)) {
    n->worst_pct = w;
    snprintf(n->worst_at, sizeof n->worst_at, "%s", at);
  }
}

/* The per-GPU figures a baseline gives floors for. */
static const struct {
  expect_key key;
  const char *metric;
} BASE_PER_GPU[] = {{EXP_GEMM_BF16, "gemm_bf16_tflops"}, {EXP_GEMM_FP16, "gemm_fp16_tflops"},
                    {EXP_GEMM_TF32, "gemm_tf32_tflops"}, {EXP_GEMM_FP32, "gemm_fp32_tflops"},
                    {EXP_H2D, "h2d_gbps"},               {EXP_D2H, "d2h_gbps"}};
#define BASE_NPER_GPU ((int)(sizeof BASE_PER_GPU / sizeof BASE_PER_GPU[0]))

/* How far apart the GPUs of one model sat inside one baseline run (baseline_spread_log of their logs; NaN below 2):
 * a GPU's figure is not known better than its identical peers differ, however alike a few runs happened to be (on
 * a loaded 2-core machine 3 runs put one rank's GEMM within 1.0 %, and the next run gave it its peers' level, 11 %
 * lower: a healthy host drained). */
static double peer_spread(const gpu_views *b, const char *metric, const char *model) {
  double *l = malloc(((size_t)b->n + 1) * sizeof *l);
  if (!l) return NAN;
  int n = 0;
  for (int i = 0; i < b->n; i++) {
    double v = accept_view_value(&b->g[i], metric);
    if (!strcmp(b->g[i].model, model) && v > 0) l[n++] = log(v);
  }
  double s = baseline_spread_log(l, n);
  free(l);
  return s;
}

static ddp_result expectations(gpu_view *g, const accept_rules *rules, const gpu_views *base, baseline_note *notes) {
  expect_builtin(&g->exp, g->model, uval(g, "pcie_gen_max"), uval(g, "pcie_width_max"), uval(g, "nvlink_version"));
  if (rules->expect_file && rules->expect_file[0]) DDP_TRY(expect_load_file(&g->exp, rules->expect_file));
  int runs = baseline_runs(rules);
  if (!base || !runs) return DDP_OK;
  double *v = malloc(2 * (size_t)runs * sizeof *v), *w = v + runs;
  DDP_CHECK_ALLOC(v);
  for (int i = 0; i < BASE_NPER_GPU; i++) {
    const char *metric = BASE_PER_GPU[i].metric;
    for (int k = 0; k < runs; k++) {
      const gpu_view *at;
      v[k] = baseline_value(&base[k], metric, g, &at);
      w[k] = at ? view_within(at, metric) : NAN;
      double ps = peer_spread(&base[k], metric, g->model);
      if (ps > 0 && !(w[k] >= ps)) w[k] = ps;
    }
    baseline_figure f;
    baseline_floor bf;
    baseline_figure_of(v, w, runs, &f);
    if (!f.runs) continue;
    baseline_floor_make(&f, median_noise(view_record(g, metric)), rules->tolerance_pct, baseline_cv(rules), &bf);
    char at[48];
    snprintf(at, sizeof at, "rank %d", g->rank);
    baseline_note_add(&notes[i], &bf, at);
    if (bf.refused) continue; /* the built-in or --expect floor stays, where there is one */
    g->base_level[BASE_PER_GPU[i].key] = f.level;
    g->exp.v[BASE_PER_GPU[i].key] = bf.floor;
    snprintf(g->exp.src[BASE_PER_GPU[i].key], sizeof g->exp.src[0], "%s", bf.src);
  }
  free(v);
  return DDP_OK;
}

/* The job's GPUs' shared shift against their baseline (baseline_shared_shift), per figure and GPU model: each
 * GPU's floor moves down with it, and one job finding says it (n GPUs; margin: the floors' median margin, a
 * fraction, before they moved): a remark within the margin; beyond it a warning (the machine's load and a fault the
 * whole cluster shares look alike in one run); beyond BASELINE_REFUSE_PCT a failure (no load explains that). The
 * pairs get no shift: one slow node of 4 slows 3 of 6 pairs and 2 slow nodes 5 of 6, so their upper quartile is no
 * longer the healthy level (two slow hosts of 4 would pass with their baseline). */
static ddp_result baseline_shift_gpus(result_doc *d, gpu_views *vs) {
  double *x = malloc(((size_t)vs->n + 1) * 2 * sizeof *x), *m = x ? x + vs->n + 1 : NULL;
  DDP_CHECK_ALLOC(x);
  ddp_result r = DDP_OK;
  for (int i = 0; r == DDP_OK && i < BASE_NPER_GPU; i++) {
    expect_key key = BASE_PER_GPU[i].key;
    for (int j = 0; r == DDP_OK && j < vs->n; j++) {
      const char *model = vs->g[j].model;
      int first = vs->g[j].base_level[key] > 0, n = 0;
      for (int k = 0; k < j && first; k++) first = !(vs->g[k].base_level[key] > 0 && !strcmp(vs->g[k].model, model));
      if (!first) continue;
      for (int k = j; k < vs->n; k++) {
        const gpu_view *g = &vs->g[k];
        double v = accept_view_value(g, BASE_PER_GPU[i].metric);
        if (g->base_level[key] > 0 && !strcmp(g->model, model) && v > 0)
          m[n] = 1 - g->exp.v[key] / g->base_level[key], x[n++] = log(v / g->base_level[key]);
      }
      double s = baseline_shared_shift(x, n);
      if (s >= 0) continue;
      for (int k = j; k < vs->n; k++) {
        gpu_view *g = &vs->g[k];
        if (!(g->base_level[key] > 0 && !strcmp(g->model, model))) continue;
        g->exp.v[key] *= exp(s);
        size_t len = strlen(g->exp.src[key]);
        snprintf(g->exp.src[key] + len, sizeof g->exp.src[key] - len, ", moved %.1f %% with the job's shift",
                 100 * expm1(s));
      }
      double pct = -100 * expm1(s), margin = 100 * stats_percentile(m, n, 0.5);
      finding_severity sev = pct > BASELINE_REFUSE_PCT ? SEV_FAIL : pct > margin ? SEV_WARN : SEV_INFO;
      r = findings_add_at(&d->findings, "", -1, "baseline_shift", sev, SCOPE_JOB, "job", -pct, -margin, "%",
                          "%s (%s): the job's %d GPUs sat %.1f %% below their baseline (the upper quartile of their "
                          "changes): a shift they all share (the machine's load, clocks, a power cap, a driver), not "
                          "a host's. Each floor moved down with it, so a GPU fails only when it is also slower than "
                          "the rest, and no host is drained for the shift itself%s",
                          BASE_PER_GPU[i].metric, model, n, pct,
                          sev == SEV_INFO ? ""
                          : sev == SEV_WARN ? "; it is beyond the floors' margin: a re-run on a quiet machine, or a "
                                              "baseline taken under the same conditions, would tell load from a fault"
                                            : "; far beyond any load: a fault the whole cluster shares");
    }
  }
  free(x);
  return r;
}

/* One finding per figure whose baseline was noisy: a warning where a floor was refused (the figure is then
 * judged by the built-in or --expect floor alone), a remark where floors were only widened (each says by how much). */
static ddp_result baseline_notes_say(result_doc *d, const baseline_note *n, int count, const char *things) {
  for (int i = 0; i < count; i++) {
    const baseline_note *x = &n[i];
    if (x->refused)
      DDP_TRY(findings_add_at(&d->findings, "", -1, "baseline_noisy", SEV_WARN, SCOPE_JOB, "job", x->worst_pct,
                              BASELINE_NOISY_PCT, "%",
                              "baseline too noisy for %s: spread %.1f %% (%s) on %d of %d %s: not used as a floor there "
                              "(a floor %g spreads below would sit more than %g %% under the baseline); the built-in or "
                              "--expect floor judges them where there is one. More baseline runs "
                              "(--baseline a.json,b.json,c.json) measure how runs differ",
                              x->figure, x->worst_pct, x->worst_at, x->refused, x->used, things, BASELINE_Z,
                              BASELINE_REFUSE_PCT));
    else if (x->noisy)
      DDP_TRY(findings_add_at(&d->findings, "", -1, "baseline_noisy", SEV_INFO, SCOPE_JOB, "job", x->worst_pct,
                              BASELINE_NOISY_PCT, "%",
                              "baseline noisy for %s: spread up to %.1f %% (%s), above %g %%, on %d of %d %s: their "
                              "floors are widened (each floor says by how much)",
                              x->figure, x->worst_pct, x->worst_at, BASELINE_NOISY_PCT, x->noisy, x->used, things));
  }
  return DDP_OK;
}

/* ---- findings ------------------------------------------------------------------------------------------------- */
static ddp_result add(result_doc *d, accept_severity sev, const char *check, finding_scope scope, const char *host,
                      int rank, const char *subject, double measured, double expected, double margin, const char *unit,
                      const char *text) {
  char m[48] = "";
  if (isfinite(margin)) snprintf(m, sizeof m, "margin %+.1f %%: ", margin);
  finding_severity s = sev == ACCEPT_FAIL ? SEV_FAIL : sev == ACCEPT_WARN ? SEV_WARN : SEV_INFO;
  DDP_TRY(findings_add_at(&d->findings, host, rank, check, s, scope, subject, measured, expected, unit, "%s%s", m, text));
  d->findings.v[d->findings.n - 1].passed = sev == ACCEPT_PASS && strcmp(check, "throttle") != 0;
  return DDP_OK;
}

/* A GPU's figure against its peers under the GPU model (gpu_model.h): its P(bad), the noise s it was judged with
 * and how the between-run part of s came about. */
typedef struct {
  double p, peer, time;
  gm_noise noise;
  int half;       /* with it, half the GPUs of its model or more would fail: "cannot tell" which level is healthy */
  int nfail, size; /* how many would, of how many */
  char time_src[96];
} gpu_judgement;

/* A GPU is bad this far below its peers, percent: --bad-pct (accept carries an explicit --relative-fail-pct over to
 * it), else --relative-fail-pct, else 10 */
static double gpu_bad_pct(const accept_rules *r) {
  return r->bad_pct > 0 ? r->bad_pct : r->rel_fail_pct > 0 ? r->rel_fail_pct : 10;
}
static double gpu_prior(const accept_rules *r) { return r->prior_bad > 0 ? r->prior_bad : 0.01; }
static double gpu_drain(const accept_rules *r) { return r->drain_threshold > 0 ? r->drain_threshold : 0.5; }
#define GPU_GREY_LO 0.05 /* below the drain threshold and above this: "cannot tell", as the pair model's grey zone */

/* Absolute (vs the floor, when there is one) and relative (vs the median of the same GPU model) checks of one
 * figure, higher is better. sv: the small-group verdict (accept_relative_small) of a GPU among 2 or 3 of its
 * model, NULL elsewhere. gm: the GPU model's judgement of a GPU among 4 or more (NULL: the fixed rule, as for the
 * GPU-to-GPU copies); *failed set to 1 when gm failed it. */
static ddp_result judge_figure(result_doc *d, const accept_rules *rules, const gpu_view *g, const char *check,
                               finding_scope scope, const char *host, int rank, const char *subject, double measured,
                               expect_key key, double peer_median, double z, int size, const char *unit,
                               const accept_small_verdict *sv, const gpu_judgement *gm, int *failed) {
  double margin;
  double floor_v = g->exp.v[key], warn = isfinite(g->exp.v[EXP_WARN_PCT]) ? g->exp.v[EXP_WARN_PCT] : 5;
  if (isfinite(floor_v)) {
    /* a floor with a warn band above it: warn between floor and floor (1 + warn %), fail below the floor */
    accept_severity s = accept_judge(measured, floor_v * (1 + warn / 100), 1, 0, 100 * warn / (100 + warn), &margin);
    char text[512];
    snprintf(text, sizeof text, "floor from %s", g->exp.src[key]);
    if (s == ACCEPT_FAIL && g->base_level[key] > 0 && gm && isfinite(gm->p) && gm->p <= gpu_drain(rules)) {
      /* a baseline's floor states no error rate; the GPU model, against the peers that ran beside it now, does (seen:
       * a CPU rank 10.2 % under a 3-run baseline's floor at P(bad) 0.27 against its peers drained a healthy host) */
      s = ACCEPT_WARN;
      snprintf(text + strlen(text), sizeof text - strlen(text), "; cannot tell: against the peers that ran beside it "
               "the GPU model gives P(bad) %.3f (drained above %g): measure again", gm->p, gpu_drain(rules));
    }
    DDP_TRY(add(d, s, check, scope, host, rank, subject, measured, floor_v,
                isfinite(measured) ? 100 * (measured - floor_v) / floor_v : NAN, unit, text));
  }
  if (sv && (size == 2 || size == 3)) {
    char c[48], text[400];
    snprintf(c, sizeof c, "%s.rel", check);
    snprintf(text, sizeof text, "vs %s of %d %s: %s", size == 2 ? "the other" : "the median", size, g->model, sv->why);
    DDP_TRY(add(d, sv->sev, c, scope, host, rank, subject, measured, sv->ref, sv->margin_pct, unit, text));
  } else if (isfinite(peer_median) && size >= 4 && gm && isfinite(gm->p)) {
    accept_severity s = accept_relative(measured, peer_median, z, size, rules->rel_warn_pct, rules->rel_fail_pct, 3.5, &margin);
    char c[48], text[560], noise[224];
    snprintf(c, sizeof c, "%s.rel", check);
    snprintf(noise, sizeof noise, "its peers spread %.1f %%; a GPU that moves on its own (%g of them) %.1f %% (%s)",
             100 * expm1(gm->peer), GM_MOVED_FRAC, 100 * expm1(gm->time), gm->time_src);
    if (gm->half) {
      s = ACCEPT_WARN;
      snprintf(text, sizeof text, "vs the others of %d %s: cannot tell: %.1f %% below, P(bad) %.3f, but %d of the %d "
               "GPUs sit below the rest: which level is healthy cannot be told from peers alone (nobody is drained on "
               "it); a --baseline of known-good runs would decide", size, g->model, -margin, gm->p, gm->nfail, gm->size);
    } else if (gm->p > gpu_drain(rules)) {
      s = ACCEPT_FAIL, *failed = 1;
      snprintf(text, sizeof text, "vs the median of %d %s: P(bad) %.3f (bad: more than %g %% below; prior %g), %.1f %% "
               "below; %s", size, g->model, gm->p, gpu_bad_pct(rules), gpu_prior(rules), -margin, noise);
    } else if (gm->p > GPU_GREY_LO || (isfinite(margin) && -margin > gpu_bad_pct(rules))) {
      s = ACCEPT_WARN;
      snprintf(text, sizeof text, "vs the median of %d %s: cannot tell: %.1f %% below it, P(bad) %.3f (drained above "
               "%g); %s; a --baseline of 3 or more runs (it measures how a GPU moves between runs) would decide",
               size, g->model, -margin, gm->p, gpu_drain(rules), noise);
    } else {
      if (s == ACCEPT_FAIL) s = ACCEPT_WARN; /* only the model fails a GPU */
      snprintf(text, sizeof text, "vs the median of %d %s (robust z %.1f): P(bad) %.3f; %s", size, g->model, z, gm->p,
               noise);
    }
    DDP_TRY(add(d, s, c, scope, host, rank, subject, measured, peer_median, margin, unit, text));
  } else if (isfinite(peer_median) && size >= 4) {
    accept_severity s = accept_relative(measured, peer_median, z, size, rules->rel_warn_pct, rules->rel_fail_pct, 3.5, &margin);
    char c[48], text[400];
    snprintf(c, sizeof c, "%s.rel", check);
    snprintf(text, sizeof text, "vs the median of %d %s (robust z %.1f; named below -3.5)", size, g->model, z);
    if (isfinite(margin) && -margin > rules->rel_fail_pct && isfinite(z) && !(z < -3.5)) { /* never a bare pass */
      s = ACCEPT_WARN;
      snprintf(text, sizeof text, "vs the median of %d %s: cannot tell: %.0f %% below it, but its peers spread so "
               "much that this is robust z %.1f only (named below -3.5); a --baseline of known-good runs, or more GPUs "
               "of the model, would decide", size, g->model, -margin, z);
    }
    DDP_TRY(add(d, s, c, scope, host, rank, subject, measured, peer_median, margin, unit, text));
  }
  return DDP_OK;
}

static const char *const PRECS[] = {"bf16", "fp16", "tf32", "fp32"};

/* A GEMM's spread on a log scale (accept_relative_small): the largest |ln| of its first- and last-second medians
 * over its run's median, how far its per-interval figures wandered while it ran; NaN when not recorded, or when
 * both equal the median to the bit (a run shorter than 2 s: its first and last second were the same intervals, so
 * nothing was measured about its spread). */
static double gemm_spread(const gpu_view *g, const char *prec) {
  char mk[64];
  snprintf(mk, sizeof mk, "gemm_%s_tflops", prec);
  double med = accept_view_value(g, mk), s = NAN;
  const char *ends[] = {"first", "last"};
  for (int e = 0; e < 2; e++) {
    snprintf(mk, sizeof mk, "gemm_%s_%s_tflops", prec, ends[e]);
    double v = accept_view_value(g, mk);
    if (med > 0 && v > 0 && !(fabs(log(v / med)) <= s)) s = fabs(log(v / med));
  }
  return s > 0 ? s : NAN;
}

/* The small-group verdict of GPU i (accept_relative_small) when its model has 2 or 3 GPUs with figure x; 0 (sv
 * untouched) otherwise. spread[W]: each GPU's spread (NaN: none). The faster of 2 is known healthy when it meets
 * its floor (g->exp.v[key]). */
static int small_group(const gpu_views *vs, const char *const *model, const double *x, const double *spread, int W,
                       int i, expect_key key, const accept_rules *rules, accept_small_verdict *sv) {
  double gx[3], gs[3];
  int gi[3], m = 0, me = -1;
  for (int j = 0; j < W; j++) {
    if (strcmp(model[i], model[j]) || !isfinite(x[j])) continue;
    if (m == 3) return 0;
    if (j == i) me = m;
    gi[m] = j, gx[m] = x[j], gs[m++] = spread[j];
  }
  if (m < 2 || me < 0) return 0;
  int top = 0;
  for (int k = 1; k < m; k++)
    if (gx[k] > gx[top]) top = k;
  double floor_v = vs->g[gi[top]].exp.v[key];
  int top_ok = isfinite(floor_v) && gx[top] >= floor_v;
  accept_relative_small(gx, gs, m, me, rules->rel_warn_pct, rules->rel_fail_pct, top_ok, sv);
  return 1;
}

/* How far one GPU's figure moves on its own between runs (ln): the device's row (gm_time_default), unless the
 * baseline's runs (3 or more) hold enough GPU-runs to have seen such moves (GM_MOVES_SEEN_MIN: at 1 in 20, two
 * expected). Then, per GPU of the model (matched by host and bus id, on the CPU device host and rank) and run,
 * dev = ln(its figure / its run's median of the model) less the median of that over its runs; the move's scale is the
 * 97.5th percentile of |dev| over 2.24 (where |N(0, 1)| has its 97.5th), at least GM_MOVE_MIN. A spread per GPU from
 * 3 runs rarely shows a move that comes in 1 figure of 20: 4 CPU ranks' 3 runs gave 1.5 %, and two ranks of the
 * next run sat 10 and 12 % below their peers. src says which. */
#define GM_MOVES_SEEN_MIN 40
#define GM_MOVE_MIN 0.005
static double time_spread(const gpu_views *bs, int runs, const char *metric, const char *model, char *src, size_t n) {
  double row = gm_time_default(model);
  snprintf(src, n, "assumed for %s", strncmp(model, "cpu", 3) ? "a GPU" : "CPU ranks");
  if (runs < 3) return row;
  double *rel = malloc(((size_t)runs + 1) * sizeof *rel), *med = malloc(((size_t)runs + 1) * sizeof *med);
  size_t nv = (size_t)(bs[0].n > runs ? bs[0].n : runs) + 1;
  double *dev = malloc(((size_t)bs[0].n * runs + 1) * sizeof *dev), *v = malloc(nv * sizeof *v);
  int ndev = 0;
  for (int k = 0; rel && med && dev && v && k < runs; k++) { /* each run's median of the model */
    int m = 0;
    for (int i = 0; i < bs[k].n; i++) {
      double x = accept_view_value(&bs[k].g[i], metric);
      if (!strcmp(bs[k].g[i].model, model) && x > 0) v[m++] = x;
    }
    med[k] = m >= 4 ? stats_percentile(v, m, 0.5) : NAN; /* a peer median of 4 or more, as the run judges */
  }
  for (int i = 0; rel && med && dev && v && i < bs[0].n; i++) {
    const gpu_view *g = &bs[0].g[i];
    if (strcmp(g->model, model)) continue;
    int m = 0;
    for (int k = 0; k < runs; k++) {
      const gpu_view *at;
      double x = baseline_value(&bs[k], metric, g, &at);
      if (at && x > 0 && med[k] > 0) rel[m++] = log(x / med[k]);
    }
    if (m < 3) continue;
    memcpy(v, rel, (size_t)m * sizeof *v);
    double c = stats_percentile(v, m, 0.5);
    for (int k = 0; k < m; k++) dev[ndev++] = fabs(rel[k] - c);
  }
  double t = ndev >= GM_MOVES_SEEN_MIN ? stats_percentile(dev, ndev, 0.975) / 2.24 : NAN;
  free(rel), free(med), free(dev), free(v);
  if (!isfinite(t)) {
    if (ndev) snprintf(src + strlen(src), n - strlen(src), "; the baseline's %d GPU-runs are too few to see moves", ndev);
    return row;
  }
  if (t < GM_MOVE_MIN) t = GM_MOVE_MIN;
  snprintf(src, n, "measured over %d GPU-runs of the baseline", ndev % 100000);
  return t;
}

/* The GPU model's judgement of x[i] against the GPUs of its model (gm_judge) with the between-run spread t. */
static void gpu_judge_one(const double *x, const char *const *model, int W, int i, double t, const char *tsrc,
                          double own, const accept_rules *rules, gpu_judgement *gj) {
  memset(gj, 0, sizeof *gj);
  gj->p = NAN;
  double *v = malloc(((size_t)W + 1) * sizeof *v);
  int m = 0, me = -1;
  for (int j = 0; v && j < W; j++)
    if (!strcmp(model[i], model[j])) {
      if (j == i) me = m;
      v[m++] = x[j];
    }
  gm_judgement j;
  gm_judge(v ? v : x, v ? m : 0, me, t, own, gpu_bad_pct(rules) / 100, gpu_prior(rules), &j);
  free(v);
  gj->p = j.p, gj->noise = j.noise, gj->peer = j.peer, gj->time = j.time;
  snprintf(gj->time_src, sizeof gj->time_src, "%s", tsrc);
}

/* Every GPU's judgement of one figure (gj[i]; gpu_judge_one), and half[] set where half the GPUs of a model or more
 * would fail: two CPU ranks of 4 at 27 % below the other two (which agreed within 0.4 %) both failed at P 0.96, the
 * MAD of each one's 3 peers reading one level; a 2-and-2 split says one half is off, not which. */
static void gpu_judge_all(const gpu_views *vs, const double *x, const char *const *model, int W, const char *metric,
                          const gpu_views *bs, int runs, const accept_rules *rules, gpu_judgement *gj) {
  char tsrc[96];
  double t = NAN;
  for (int i = 0; i < W; i++) {
    const gpu_view *g = &vs->g[i];
    if (!i || strcmp(model[i], model[i - 1])) /* once per model: the GPUs of a job are mostly one */
      t = time_spread(bs, runs, metric, g->model, tsrc, sizeof tsrc);
    gpu_judge_one(x, model, W, i, t, tsrc, median_noise(view_record(g, metric)), rules, &gj[i]);
  }
  for (int i = 0; i < W; i++) {
    int size = 0, nfail = 0;
    for (int j = 0; j < W; j++)
      if (!strcmp(model[i], model[j]) && isfinite(gj[j].p)) size++, nfail += gj[j].p > gpu_drain(rules);
    gj[i].size = size, gj[i].nfail = nfail;
    gj[i].half = size >= 4 && 2 * nfail >= size && gj[i].p > gpu_drain(rules);
  }
}

/* The GPU model's stated error rate over the GPUs it judged: one info finding "gpu_model" (measured the expected
 * false drains, expected the expected misses), none when it judged none. */
static ddp_result gpu_model_say(result_doc *d, const accept_rules *rules, const double *p, const int *failed, int W) {
  int judged = 0, nf = 0;
  for (int i = 0; i < W; i++) judged += isfinite(p[i]), nf += failed[i] != 0;
  if (!judged) return DDP_OK;
  double fd, mi;
  gm_rates(p, failed, W, &fd, &mi);
  return findings_add_at(&d->findings, "", -1, "gpu_model", SEV_INFO, SCOPE_JOB, "job", fd, mi, "GPUs",
                         "GPU model (docs/accept.md): %d of %d GPUs judged against 4 or more peers, %d failed, expected "
                         "false drains %.3f, expected misses %.3f (a GPU is bad more than %g %% below its peers' median; "
                         "prior %g, drained above P(bad) %g)", judged, W, nf, fd < 0 ? 0.0 : fd, mi, gpu_bad_pct(rules),
                         gpu_prior(rules), gpu_drain(rules));
}

static ddp_result judge_gpus(result_doc *d, const accept_rules *rules, gpu_views *vs, const gpu_views *bs, int runs) {
  int W = vs->n;
  const char **model = malloc(((size_t)W + 1) * sizeof *model);
  double *x = malloc(((size_t)W + 1) * sizeof *x), *ref = malloc(((size_t)W + 1) * sizeof *ref);
  double *z = malloc(((size_t)W + 1) * sizeof *z), *spread = malloc(((size_t)W + 1) * sizeof *spread);
  int *size = malloc(((size_t)W + 1) * sizeof *size);
  double *pgpu = malloc(((size_t)W + 1) * sizeof *pgpu); /* each GPU's largest P(bad) over its figures */
  int *fgpu = calloc((size_t)W + 1, sizeof *fgpu);         /* and whether the model failed one */
  ddp_result r = model && x && ref && z && size && spread && pgpu && fgpu ? DDP_OK
                                                                           : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int i = 0; r == DDP_OK && i < W; i++) pgpu[i] = NAN;
  accept_small_verdict sv;
  gpu_judgement *gj = calloc((size_t)W + 1, sizeof *gj); /* each GPU's judgement of the figure at hand */
  if (r == DDP_OK && !gj) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int i = 0; r == DDP_OK && i < W; i++) model[i] = vs->g[i].model;
  char subj[128], metric[64];
  for (int p = 0; r == DDP_OK && p < 4; p++) {
    snprintf(metric, sizeof metric, "gemm_%s_tflops", PRECS[p]);
    int any = 0;
    for (int i = 0; i < W; i++) any |= accept_view_has(&vs->g[i], metric), x[i] = accept_view_value(&vs->g[i], metric);
    if (!any) continue;
    accept_group_stats(x, model, W, ref, z, size);
    for (int i = 0; i < W; i++) spread[i] = gemm_spread(&vs->g[i], PRECS[p]);
    gpu_judge_all(vs, x, model, W, metric, bs, runs, rules, gj);
    char check[24];
    snprintf(check, sizeof check, "gemm_%s", PRECS[p]);
    for (int i = 0; r == DDP_OK && i < W; i++) {
      const gpu_view *g = &vs->g[i];
      if (!accept_view_has(g, metric)) continue;
      snprintf(subj, sizeof subj, "rank %d %s", g->rank, g->bus[0] ? g->bus : "cpu");
      int small = small_group(vs, model, x, spread, W, i, (expect_key)(EXP_GEMM_BF16 + p), rules, &sv);
      if (isfinite(gj[i].p) && !(gj[i].p <= pgpu[i])) pgpu[i] = gj[i].p;
      r = judge_figure(d, rules, g, check, SCOPE_GPU, g->host, g->rank, subj, x[i], (expect_key)(EXP_GEMM_BF16 + p),
                       ref[i], z[i], size[i], "TFLOP/s", small ? &sv : NULL, &gj[i], &fgpu[i]);
      char mk[64];
      snprintf(mk, sizeof mk, "gemm_%s_clock_reasons", PRECS[p]);
      double reasons = accept_view_value(g, mk);
      unsigned long long bits = isfinite(reasons) ? (unsigned long long)reasons : 0;
      unsigned long long bad = nvml_reasons_bad(bits);
      char rs[96], a[16], b[16], text[200];
      snprintf(mk, sizeof mk, "gemm_%s_first_tflops", PRECS[p]);
      ddp_fmt_figure(a, sizeof a, accept_view_value(g, mk));
      snprintf(mk, sizeof mk, "gemm_%s_last_tflops", PRECS[p]);
      ddp_fmt_figure(b, sizeof b, accept_view_value(g, mk));
      snprintf(text, sizeof text, "%s: reasons %s; first second %s, last %s TFLOP/s%s", PRECS[p],
               isfinite(reasons) ? nvml_reasons_str(bits, rs, sizeof rs) : "not sampled", a, b,
               bad ? " (thermal or hardware slowdown: not a power cap)" : "");
      snprintf(mk, sizeof mk, "gemm_%s_drift_pct", PRECS[p]);
      if (r == DDP_OK)
        r = add(d, bad ? ACCEPT_FAIL : ACCEPT_PASS, "throttle", SCOPE_GPU, g->host, g->rank, subj, accept_view_value(g, mk), NAN, NAN,
                "% drift", text);
    }
  }
  static const struct {
    const char *metric, *check;
    expect_key key;
  } copies[] = {{"h2d_gbps", "h2d", EXP_H2D}, {"d2h_gbps", "d2h", EXP_D2H}};
  for (size_t c = 0; r == DDP_OK && c < 2; c++) {
    int any = 0;
    for (int i = 0; i < W; i++) any |= accept_view_has(&vs->g[i], copies[c].metric), x[i] = accept_view_value(&vs->g[i], copies[c].metric);
    if (!any) continue;
    accept_group_stats(x, model, W, ref, z, size);
    for (int i = 0; i < W; i++) spread[i] = NAN; /* a copy's spread is not recorded: a gap beyond fail_pct is "cannot tell" */
    gpu_judge_all(vs, x, model, W, copies[c].metric, bs, runs, rules, gj);
    for (int i = 0; r == DDP_OK && i < W; i++) {
      const gpu_view *g = &vs->g[i];
      if (!accept_view_has(g, copies[c].metric)) continue;
      snprintf(subj, sizeof subj, "rank %d %s", g->rank, g->bus[0] ? g->bus : "cpu");
      int small = small_group(vs, model, x, spread, W, i, copies[c].key, rules, &sv);
      if (isfinite(gj[i].p) && !(gj[i].p <= pgpu[i])) pgpu[i] = gj[i].p;
      r = judge_figure(d, rules, g, copies[c].check, SCOPE_GPU, g->host, g->rank, subj, x[i], copies[c].key, ref[i],
                       z[i], size[i], "GB/s", small ? &sv : NULL, &gj[i], &fgpu[i]);
    }
  }
  for (int i = 0; r == DDP_OK && i < W; i++) { /* links as NVML read them: NVLinks down, PCIe trained below its maximum */
    const gpu_view *g = &vs->g[i];
    /* NVML read this GPU (a CPU device has none of these); an unmeasured figure reads 0, judged by nothing */
    if (!accept_view_has(g, "pcie_gen_max") && !accept_view_has(g, "pcie_width_max")) continue;
    accept_links nv;
    memset(&nv, 0, sizeof nv);
    nv.known = 1;
    nv.pcie_gen = uval(g, "pcie_gen"), nv.pcie_gen_max = uval(g, "pcie_gen_max");
    nv.pcie_width = uval(g, "pcie_width"), nv.pcie_width_max = uval(g, "pcie_width_max");
    nv.nvlink_known = accept_view_has(g, "nvlink_active");
    nv.links_active = (int)uval(g, "nvlink_active"), nv.links_total = (int)uval(g, "nvlink_total");
    accept_link_verdict lv[3];
    int n = accept_link_checks(&nv, g->exp.model[0] != 0, lv);
    snprintf(subj, sizeof subj, "rank %d %s", g->rank, g->bus);
    for (int k = 0; r == DDP_OK && k < n; k++)
      r = add(d, lv[k].sev, lv[k].check, SCOPE_LINK, g->host, g->rank, subj, lv[k].measured, lv[k].expected,
              100 * (lv[k].measured - lv[k].expected) / lv[k].expected, strcmp(lv[k].check, "nvlink") ? "" : "links",
              lv[k].text);
  }
  for (int i = 0; r == DDP_OK && i < W; i++) { /* memory health: any uncorrectable error or row-remap trouble fails */
    const gpu_view *g = &vs->g[i];
    double unc = accept_view_value(g, "ecc_uncorrected_volatile"), pending = accept_view_value(g, "remapped_rows_pending");
    double failure = accept_view_value(g, "remapped_rows_failure");
    if (!isfinite(unc) && !isfinite(pending)) continue;
    int bad = unc > 0 || pending > 0 || failure > 0;
    char text[256], a[16], b[16], c[16], e[16], f[16];
    snprintf(text, sizeof text, "ECC uncorrected volatile %s aggregate %s, corrected volatile %s; remapped rows pending "
             "%s failure %s", ddp_fmt_figure(a, sizeof a, unc), ddp_fmt_figure(b, sizeof b, accept_view_value(g, "ecc_uncorrected_aggregate")),
             ddp_fmt_figure(c, sizeof c, accept_view_value(g, "ecc_corrected_volatile")), ddp_fmt_figure(e, sizeof e, pending), ddp_fmt_figure(f, sizeof f, failure));
    snprintf(subj, sizeof subj, "rank %d %s", g->rank, g->bus);
    r = add(d, bad ? ACCEPT_FAIL : ACCEPT_PASS, "memory", SCOPE_GPU, g->host, g->rank, subj, unc > 0 ? unc : 0, 0, NAN,
            "errors", text);
  }
  /* GPU-to-GPU pairs of each node: vs the NVLink floor and vs the node's pair median */
  for (int i = 0; r == DDP_OK && i < W; i++) {
    const gpu_view *g = &vs->g[i];
    int n = 0;
    for (int k = 0; k < g->n; k++) {
      int a, b;
      if (strcmp(g->v[k]->metric, "p2p_gbps") || sscanf(label_or(g->v[k], "pair"), "%d-%d", &a, &b) != 2) continue;
      if (a + 1 > n) n = a + 1;
      if (b + 1 > n) n = b + 1;
    }
    if (n < 2 || n > 64) continue;
    double *uni = malloc((size_t)n * n * sizeof *uni), *pz = malloc((size_t)n * n * sizeof *pz);
    double *pref = malloc((size_t)n * n * sizeof *pref);
    int *psize = malloc((size_t)n * n * sizeof *psize);
    const char **pg = malloc((size_t)n * n * sizeof *pg);
    if (!uni || !pz || !pref || !psize || !pg) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    for (int a = 0; r == DDP_OK && a < n; a++)
      for (int b = 0; b < n; b++) uni[a * n + b] = a == b ? NAN : accept_view_pair(g, "p2p_gbps", a, b), pg[a * n + b] = "pair";
    if (r == DDP_OK) accept_group_stats(uni, pg, n * n, pref, pz, psize); /* the diagonal is NaN: left out */
    for (int a = 0; r == DDP_OK && a < n; a++)
      for (int b = 0; r == DDP_OK && b < n; b++) {
        if (a == b) continue;
        snprintf(subj, sizeof subj, "GPU %d -> GPU %d", a, b);
        r = judge_figure(d, rules, g, "p2p", SCOPE_PAIR, g->host, -1, subj, uni[a * n + b], EXP_P2P, pref[a * n + b],
                         pz[a * n + b], psize[a * n + b], "GB/s", NULL, NULL, NULL);
        double access = accept_view_pair(g, "p2p_peer_access", a, b);
        if (r == DDP_OK && isfinite(access) && !access)
          r = add(d, ACCEPT_WARN, "p2p_access", SCOPE_PAIR, g->host, -1, subj, NAN, NAN, NAN, "",
                  "no peer access: the driver stages the copy through the host");
      }
    free(uni), free(pz), free(pref), free(psize), free(pg);
  }
  if (r == DDP_OK) r = gpu_model_say(d, rules, pgpu, fgpu, W);
  free(model), free(x), free(ref), free(z), free(size), free(spread), free(pgpu), free(fgpu), free(gj);
  return r;
}

/* The pairs' "bad" threshold, percent: --bad-pct (it carries an explicit --relative-fail-pct over, accept.c). */
static double pair_bad_pct(const accept_rules *rules) { return rules->bad_pct > 0 ? rules->bad_pct : 10; }

/* ---- nodes and node pairs ------------------------------------------------------------------------------------ */
typedef struct {
  int nnodes;
  const char **host;  /* [nnodes] */
  int *ranks;         /* [nnodes] ranks on the node */
  int *first;         /* [nnodes] its first rank */
} node_layout;

static void layout_free(node_layout *l) {
  free(l->host), free(l->ranks), free(l->first);
  memset(l, 0, sizeof *l);
}

static ddp_result layout_build(const result_doc *d, node_layout *l) {
  memset(l, 0, sizeof *l);
  for (int i = 0; i < d->nranks; i++)
    if (d->ranks[i].node + 1 > l->nnodes) l->nnodes = d->ranks[i].node + 1;
  l->host = calloc((size_t)l->nnodes + 1, sizeof *l->host);
  l->ranks = calloc((size_t)l->nnodes + 1, sizeof *l->ranks);
  l->first = calloc((size_t)l->nnodes + 1, sizeof *l->first);
  if (!l->host || !l->ranks || !l->first) {
    layout_free(l);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  for (int i = 0; i < l->nnodes; i++) l->host[i] = "?", l->first[i] = -1;
  for (int i = 0; i < d->nranks; i++) {
    int n = d->ranks[i].node;
    if (n < 0) continue;
    if (l->first[n] < 0) l->first[n] = i, l->host[n] = d->ranks[i].host ? d->ranks[i].host : "?";
    l->ranks[n]++;
  }
  return DDP_OK;
}

/* The expectations of a node: its first rank's GPU's (built-in, file), or the file's alone. */
static ddp_result node_exp(const gpu_views *vs, const node_layout *l, int node, const accept_rules *rules,
                           expect_set *e, const char **model) {
  for (int i = 0; i < vs->n; i++)
    if (vs->g[i].rank == l->first[node]) {
      *e = vs->g[i].exp;
      *model = vs->g[i].model;
      return DDP_OK;
    }
  *model = "";
  expect_builtin(e, "", 0, 0, 0);
  if (rules->expect_file && rules->expect_file[0]) DDP_TRY(expect_load_file(e, rules->expect_file));
  return DDP_OK;
}

/* The pairs' absolute or baseline verdicts (state[p]: 0 not judged, 1 passed, 2 failed) read with
 * the pair structure. A node all of whose judged pairs fail while a judged pair without it passes is the
 * culprit: a failing finding on its host (so the drain list has it), and its pairs' failures (fidx[p], the
 * index of pair p's verdict in d->findings) are counted against that host. A failed pair with neither end a culprit
 * names both of its hosts as suspects (warnings, never drained), with why it cannot choose. With no judged pair
 * at all, nothing: the pair model's findings (pair_judge.h) are the relative verdict. */
/* The confirmation pass's plan (accept_confirm_plan): pairs to measure next, at most cap. */
typedef struct {
  node_pair *v;
  int n, cap;
} confirm_plan;

static int pair_measured(const node_pair *pairs, int np, int a, int b) {
  for (int p = 0; p < np; p++)
    if ((pairs[p].a == a && pairs[p].b == b) || (pairs[p].a == b && pairs[p].b == a)) return 1;
  return 0;
}

/* The pair model's P(bad) of host (its PAIR_PROB_CHECK finding) when it drew a drain list with its error rate (its
 * "pair_model" finding's figures are finite: repeated passes, no shared shift, not "cannot tell"); NaN otherwise. */
static double model_node_p(const result_doc *d, const char *host) {
  double p = NAN;
  int rate = 0;
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    if (!strcmp(f->check, PAIR_PROB_CHECK) && !strcmp(f->host, host)) p = f->measured;
    if (!strcmp(f->check, "pair_model")) rate = isfinite(f->measured) && isfinite(f->expected);
  }
  return rate ? p : NAN;
}

/* 1 when the pair model (pair_judge, already run on d) drew a drain list with its error rate, stated both ends'
 * P(bad) (*pa, *pb) at or below thr and named no path between hosts a and b */
static int model_clears(const result_doc *d, const char *a, const char *b, double thr, double *pa, double *pb) {
  *pa = model_node_p(d, a), *pb = model_node_p(d, b);
  char ab[160], ba[160];
  snprintf(ab, sizeof ab, "%.70s<->%.70s", a, b), snprintf(ba, sizeof ba, "%.70s<->%.70s", b, a);
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    if (!strcmp(f->check, "pair_busbw") && f->scope == SCOPE_PAIR && (!strcmp(f->subject, ab) || !strcmp(f->subject, ba)))
      return 0;
  }
  return *pa <= thr && *pb <= thr;
}

/* The confirmation pass: a node that the pairs name or leave a suspect (need[n]), none of whose failed
 * pairs is with a node that passed with another partner, is not proven: its partners may be the slow ones (a ring
 * with slow hosts two apart names the healthy host between them). Each such node is paired with a node that passed
 * and that it has not met yet, the least used first, in rounds of disjoint pairs. */
static void confirm_pairs(confirm_plan *cp, int N, const node_pair *pairs, const int *state, int np, const int *need) {
  int *good = calloc((size_t)N + 1, sizeof *good), *uses = calloc((size_t)N + 1, sizeof *uses);
  if (!good || !uses) goto out;
  for (int p = 0; p < np; p++)
    if (state[p] == 1) good[pairs[p].a] = good[pairs[p].b] = 1;
  for (int n = 0; n < N && cp->n < cp->cap; n++) {
    if (!need[n]) continue;
    int proven = 0;
    for (int p = 0; p < np; p++)
      if (state[p] == 2 && (pairs[p].a == n || pairs[p].b == n)) proven |= good[pairs[p].a == n ? pairs[p].b : pairs[p].a];
    if (proven) continue;
    int g = -1;
    for (int m = 0; m < N; m++)
      if (m != n && good[m] && !need[m] && !pair_measured(pairs, np, n, m) &&
          (g < 0 || uses[m] < uses[g]))
        g = m;
    if (g < 0) continue;
    uses[g]++;
    node_pair x = {0, n < g ? n : g, n < g ? g : n};
    for (int busy = 1; busy; ) { /* the first round in which neither end is paired yet */
      busy = 0;
      for (int q = 0; q < cp->n; q++)
        busy |= cp->v[q].round == x.round && (cp->v[q].a == x.a || cp->v[q].b == x.a || cp->v[q].a == x.b || cp->v[q].b == x.b);
      x.round += busy;
    }
    cp->v[cp->n++] = x;
  }
  for (int i = 1; i < cp->n; i++) /* by round: the order the rounds run in */
    for (int k = i; k > 0 && cp->v[k - 1].round > cp->v[k].round; k--) {
      node_pair t = cp->v[k];
      cp->v[k] = cp->v[k - 1], cp->v[k - 1] = t;
    }
out:
  free(good), free(uses);
}

static ddp_result pair_structure(result_doc *d, const node_layout *l, const node_pair *pairs, const int *state,
                                 const int *fidx, int np, confirm_plan *cp, double drain_thr) {
  int N = l->nnodes, judged = 0, failed = 0;
  for (int p = 0; p < np; p++) judged += state[p] != 0, failed += state[p] == 2;
  char subj[160], text[320];
  if (!judged) return DDP_OK; /* relative checks only: the pair model judged them (pair_judge.h) */
  if (!failed) return DDP_OK;
  if (failed == judged && N > 2)
    return add(d, ACCEPT_WARN, "pair_suspect", SCOPE_JOB, "", -1, "job", NAN, NAN, NAN, "",
               "every judged pair fails its floor: the fabric, its settings or the floor itself, not one host "
               "(no pair passed to compare with)");
  int *culprit = calloc((size_t)N + 1, sizeof *culprit);
  DDP_CHECK_ALLOC(culprit);
  ddp_result r = DDP_OK;
  for (int n = 0; r == DDP_OK && n < N; n++) {
    int mine = 0, mine_failed = 0, pass_without = -1;
    for (int p = 0; p < np; p++) {
      if (!state[p]) continue;
      int in = pairs[p].a == n || pairs[p].b == n;
      mine += in, mine_failed += in && state[p] == 2;
      if (!in && state[p] == 1 && pass_without < 0) pass_without = p;
    }
    if (!mine || mine_failed != mine || pass_without < 0) continue;
    /* the pair model, where it drew its list with a stated rate, has the last word on a host: floors state none
     * (seen: a host whose one judged pair was with a held host, the rest refused as noisy, drained "1 of 1") */
    double pm = model_node_p(d, l->host[n]);
    if (pm <= drain_thr) {
      snprintf(subj, sizeof subj, "%.100s (all its pairs)", l->host[n]);
      snprintf(text, sizeof text, "every judged pair with this node fails its floor (%d of %d), but cannot tell: the "
               "pair model, which reads every iteration, gives it P(bad) %.3f: measure again", mine_failed, mine, pm);
      r = add(d, ACCEPT_WARN, "pair_busbw.abs", SCOPE_HOST, l->host[n], -1, subj, NAN, NAN, NAN, "GB/s", text);
      culprit[n] = -1; /* not a culprit; the confirmation pass measures it again */
      continue;
    }
    culprit[n] = 1;
    const node_pair *ok = &pairs[pass_without];
    snprintf(subj, sizeof subj, "%.100s (all its pairs)", l->host[n]);
    snprintf(text, sizeof text, "every judged pair with this node fails its floor (%d of %d) while %.50s<->%.50s "
             "passes: this node (its NIC, its link or its host), not the fabric", mine_failed, mine,
             l->host[ok->a], l->host[ok->b]);
    r = add(d, ACCEPT_FAIL, "pair_busbw.abs", SCOPE_HOST, l->host[n], -1, subj, NAN, NAN, NAN, "GB/s", text);
  }
  int *need = cp ? calloc((size_t)N + 1, sizeof *need) : NULL; /* culprits and suspects, for the plan */
  if (cp && !need) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int n = 0; n < N; n++) {
    if (need) need[n] = culprit[n] != 0;
    culprit[n] = culprit[n] > 0;
  }
  for (int p = 0; r == DDP_OK && p < np; p++) {
    int a = pairs[p].a, b = pairs[p].b;
    if (state[p] == 2 && (culprit[a] || culprit[b])) { /* the culprit's failure: counted against its host */
      finding *x = &d->findings.v[fidx[p]];
      snprintf(x->host, sizeof x->host, "%s", l->host[culprit[a] ? a : b]);
    }
    if (state[p] != 2 || culprit[a] || culprit[b]) continue;
    /* the path when both ends pass with other partners; otherwise either end */
    int a_ok = 0, b_ok = 0;
    for (int q = 0; q < np; q++) {
      if (q == p || state[q] != 1) continue;
      a_ok |= pairs[q].a == a || pairs[q].b == a;
      b_ok |= pairs[q].a == b || pairs[q].b == b;
    }
    if (a_ok && b_ok) continue; /* the pair's own failing finding names the path */
    const char *why = N == 2 ? "two nodes cannot tell which end (or the path) is slow: run with a third node, or "
                               "pair each with a node that passed"
                             : "no pair of either node passed to tell which end (or the path) is slow: pair each "
                               "with a node that passed";
    if (need) need[a] = need[b] = 1;
    for (int e = 0; r == DDP_OK && e < 2; e++) {
      int n = e ? b : a, other = e ? a : b;
      snprintf(subj, sizeof subj, "%.100s (suspect)", l->host[n]);
      snprintf(text, sizeof text, "suspect: its pair with %.60s failed its floor; %s", l->host[other], why);
      r = add(d, ACCEPT_WARN, "pair_suspect", SCOPE_HOST, l->host[n], -1, subj, NAN, NAN, NAN, "", text);
    }
  }
  if (r == DDP_OK && need) confirm_pairs(cp, N, pairs, state, np, need);
  free(culprit), free(need);
  return r;
}

/* The baseline's floor for the allreduce inside the node on host (its group node:<host>) at bytes: that node's
 * figure over the baseline's runs, the spread of each run's node figures at that size its within-run spread; the
 * run's own noise its record's samples', where it has them (rec). floor NaN: none. */
static ddp_result node_floor(const accept_rules *rules, const char *host, const char *bytes, const result_record *rec,
                             baseline_floor *f, baseline_note *note) {
  f->floor = NAN;
  int runs = baseline_runs(rules);
  if (!runs) return DDP_OK;
  double *v = malloc(2 * (size_t)runs * sizeof *v), *w = v + runs;
  DDP_CHECK_ALLOC(v);
  char g[300];
  snprintf(g, sizeof g, "node:%.56s", host);
  for (int k = 0; k < runs; k++) {
    const result_doc *b = &rules->baseline[k];
    const result_record *x = result_find(b, "allreduce", g, "busbw_gbs", "bytes", bytes, NULL);
    v[k] = x ? x->value : NAN;
    int n = 0;
    double *all = malloc(((size_t)b->nrecords + 1) * sizeof *all);
    for (int i = 0; all && i < b->nrecords; i++) {
      const result_record *y = &b->records[i];
      const char *yb = result_record_label(y, "bytes");
      if (!strcmp(y->measurement, "allreduce") && !strncmp(y->group, "node:", 5) && !strcmp(y->metric, "busbw_gbs") &&
          yb && !strcmp(yb, bytes) && y->value > 0 && isfinite(y->value))
        all[n++] = log(y->value);
    }
    w[k] = n >= 3 ? baseline_spread_log(all, n) : NAN;
    free(all);
  }
  baseline_figure fig;
  baseline_figure_of(v, w, runs, &fig);
  free(v);
  baseline_floor_make(&fig, median_noise(rec), rules->tolerance_pct, baseline_cv(rules), f);
  if (fig.runs) baseline_note_add(note, f, host);
  return DDP_OK;
}

/* The baseline's floors for the run's node pairs (f[p], floor NaN: none): pair p's own figure over the baseline's
 * runs (by host names, in either order), else (a confirmation pair no run measured; from_median[p] = 1) the runs'
 * pair medians. Within each run, the spread of its pair figures is the figure's within-run spread; the run's own
 * noise is its pair's samples', where it has them. Says once when they were noisy or refused (baseline_notes_say). */
static ddp_result pair_floors(result_doc *d, const accept_rules *rules, const node_layout *l, const node_pair *pairs,
                              int np, baseline_floor *f, int *from_median) {
  for (int p = 0; p < np; p++) f[p].floor = NAN, from_median[p] = 0;
  int runs = baseline_runs(rules);
  if (!runs || !np) return DDP_OK;
  double *v = malloc(4 * (size_t)runs * sizeof *v), *w = v + runs, *med = w + runs, *spread = med + runs;
  DDP_CHECK_ALLOC(v);
  for (int k = 0; k < runs; k++) baseline_doc_pairs(&rules->baseline[k], &med[k], &spread[k], NULL, NULL);
  baseline_note note = {.figure = "pair busbw"};
  for (int p = 0; p < np; p++) {
    int a = pairs[p].a, b = pairs[p].b, any = 0;
    for (int k = 0; k < runs; k++) {
      v[k] = baseline_doc_pair(&rules->baseline[k], l->host[a], l->host[b]), w[k] = spread[k];
      any |= isfinite(v[k]);
    }
    from_median[p] = !any;
    baseline_figure fig;
    baseline_figure_of(any ? v : med, w, runs, &fig);
    char g[48];
    snprintf(g, sizeof g, "pair:%d-%d", a, b);
    baseline_floor_make(&fig, median_noise(result_find(d, "allreduce", g, "busbw_gbs", NULL)), rules->tolerance_pct,
                        baseline_cv(rules), &f[p]);
    if (!fig.runs) continue;
    char at[160];
    snprintf(at, sizeof at, "%.60s<->%.60s", l->host[a], l->host[b]);
    baseline_note_add(&note, &f[p], at);
  }
  free(v);
  return baseline_notes_say(d, &note, 1, "pairs");
}

static ddp_result judge_nodes(result_doc *d, const accept_rules *rules, const gpu_views *vs, const node_layout *l,
                              confirm_plan *cp) {
  /* the sizes the node allreduce ran at */
  double sizes[16];
  int nsizes = 0;
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *x = &d->records[i];
    if (strcmp(x->measurement, "allreduce") || strncmp(x->group, "node:", 5) || strcmp(x->metric, "busbw_gbs")) continue;
    double b = atof(label_or(x, "bytes"));
    int seen = 0;
    for (int k = 0; k < nsizes; k++) seen |= sizes[k] == b;
    if (!seen && nsizes < 16) sizes[nsizes++] = b;
  }
  int N = l->nnodes;
  const char **grp = malloc(((size_t)N + 1) * sizeof *grp);
  double *x = malloc(((size_t)N + 1) * sizeof *x), *ref = malloc(((size_t)N + 1) * sizeof *ref);
  double *z = malloc(((size_t)N + 1) * sizeof *z);
  int *size = malloc(((size_t)N + 1) * sizeof *size);
  expect_set *exp = malloc(((size_t)N + 1) * sizeof *exp);
  ddp_result r = grp && x && ref && z && size && exp ? DDP_OK : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int n = 0; r == DDP_OK && n < N; n++) r = node_exp(vs, l, n, rules, &exp[n], &grp[n]);
  baseline_note nnote = {.figure = "node busbw"};
  for (int k = 0; r == DDP_OK && k < nsizes; k++) {
    char b[32];
    snprintf(b, sizeof b, "%.0f", sizes[k]);
    for (int n = 0; n < N; n++) {
      char g[300];
      snprintf(g, sizeof g, "node:%.56s", l->host[n]); /* the driver's group name */
      const result_record *rec = result_find(d, "allreduce", g, "busbw_gbs", "bytes", b, NULL);
      x[n] = rec ? rec->value : NAN;
    }
    accept_group_stats(x, grp, N, ref, z, size);
    double mib = sizes[k] / 1048576.0;
    for (int n = 0; r == DDP_OK && n < N; n++) {
      if (!isfinite(x[n])) continue; /* a node of one rank has no allreduce inside it */
      char subj[128];
      snprintf(subj, sizeof subj, "%.90s, %.0f MiB", l->host[n], mib);
      gpu_view node = {.rank = l->first[n], .host = l->host[n], .bus = "", .model = grp[n], .exp = exp[n]};
      if (!(l->ranks[n] == 8 && mib >= 1024)) node.exp.v[EXP_NODE_BUSBW] = NAN; /* the floor is for 8 GPUs, >= 1 GiB */
      baseline_floor bf; /* --baseline: this node's level over the good runs, less its spread, at any size */
      char g[300];
      snprintf(g, sizeof g, "node:%.56s", l->host[n]);
      r = node_floor(rules, l->host[n], b, result_find(d, "allreduce", g, "busbw_gbs", "bytes", b, NULL), &bf, &nnote);
      if (r != DDP_OK) break;
      if (isfinite(bf.floor))
        node.exp.v[EXP_NODE_BUSBW] = bf.floor, snprintf(node.exp.src[EXP_NODE_BUSBW], sizeof node.exp.src[0], "%s", bf.src);
      r = judge_figure(d, rules, &node, "node_busbw", SCOPE_HOST, l->host[n], -1, subj, x[n], EXP_NODE_BUSBW, ref[n],
                       z[n], size[n], "GB/s", NULL, NULL, NULL);
    }
  }
  free(grp), free(x), free(ref), free(z), free(size);
  if (r == DDP_OK) r = baseline_notes_say(d, &nnote, 1, "node figures");
  /* node pairs: a node whose every pair is slow is named (its host); a single slow pair is named as a pair */
  int npairs = 0;
  for (int i = 0; i < d->nrecords; i++)
    npairs += !strcmp(d->records[i].measurement, "allreduce") && !strncmp(d->records[i].group, "pair:", 5) &&
              !strcmp(d->records[i].metric, "busbw_gbs");
  node_pair *pairs = calloc((size_t)npairs + 1, sizeof *pairs);
  double *value = calloc((size_t)npairs + 1, sizeof *value);
  if (r == DDP_OK && (!pairs || !value)) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  int np = 0;
  for (int i = 0; r == DDP_OK && i < d->nrecords; i++) {
    const result_record *rec = &d->records[i];
    int a, b;
    if (strcmp(rec->measurement, "allreduce") || strcmp(rec->metric, "busbw_gbs") ||
        sscanf(rec->group, "pair:%d-%d", &a, &b) != 2 || a < 0 || b < 0 || a >= N || b >= N)
      continue;
    pairs[np] = (node_pair){0, a, b};
    value[np++] = rec->value;
  }
  int *state = calloc((size_t)npairs + 1, sizeof *state); /* the pairs' absolute or baseline verdicts */
  int *fidx = calloc((size_t)npairs + 1, sizeof *fidx); /* and where each is in d->findings */
  if (r == DDP_OK && (!state || !fidx)) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  baseline_floor *bfl = calloc((size_t)npairs + 1, sizeof *bfl); /* --baseline's floors for the pairs */
  int *bmedian = calloc((size_t)npairs + 1, sizeof *bmedian);
  if (r == DDP_OK && (!bfl || !bmedian)) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (r == DDP_OK) r = pair_floors(d, rules, l, pairs, np, bfl, bmedian);
  /* the relative verdict: the pair model (pair_judge.h) up to PM_MAX_NODES nodes, the fixed cut-offs of
   * accept_localize above that */
  int modeled = 0;
  double pair_floor = r == DDP_OK && N > 0 ? exp[0].v[EXP_PAIR_BUSBW] : NAN; /* --expect's, the same for all nodes */
  for (int n = 1; r == DDP_OK && n < N; n++)
    if (!(exp[n].v[EXP_PAIR_BUSBW] == pair_floor)) pair_floor = NAN;
  if (r == DDP_OK && np) r = pair_judge(d, rules, N, l->host, pair_floor, &modeled);
  if (r == DDP_OK && np && !modeled && N > PM_MAX_NODES)
    r = findings_add_at(&d->findings, "", -1, "pair_model", SEV_INFO, SCOPE_JOB, "job", NAN, NAN, "",
                        "%d nodes: the pair model (P(bad), a drain list with its error rate) is used up to %d nodes; "
                        "here every node's pairs are judged by fixed cut-offs (%g %% below the pair reference, robust "
                        "z below -3.5), with no stated error rate", N, PM_MAX_NODES, pair_bad_pct(rules));
  accept_localization loc;
  if (r == DDP_OK && np && accept_localize(N, pairs, value, np, pair_bad_pct(rules), 3.5, &loc) == DDP_OK) {
    char subj[128], text[256];
    for (int n = 0; r == DDP_OK && n < N; n++) {
      if (modeled || !loc.node_bad[n]) continue;
      snprintf(subj, sizeof subj, "%.100s (all its pairs)", l->host[n]);
      snprintf(text, sizeof text, "every pair with this node is more than %g %% below the pair reference (its NIC, its "
               "host); its partners are fine with others", pair_bad_pct(rules));
      r = add(d, ACCEPT_FAIL, "pair_busbw", SCOPE_HOST, l->host[n], -1, subj, loc.node_value[n], loc.reference,
              100 * (loc.node_value[n] - loc.reference) / loc.reference, "GB/s", text);
    }
    for (int p = 0; r == DDP_OK && p < np; p++) {
      int a = pairs[p].a, b = pairs[p].b;
      snprintf(subj, sizeof subj, "%.60s<->%.60s", l->host[a], l->host[b]);
      if (!modeled && loc.pair_state[p] == 1)
        r = add(d, ACCEPT_FAIL, "pair_busbw", SCOPE_PAIR, "", -1, subj, value[p], loc.reference,
                100 * (value[p] - loc.reference) / loc.reference, "GB/s",
                "this pair alone is slow (both nodes are fine with their other partners): the path between them");
      double floor_v = exp[a].v[EXP_PAIR_BUSBW], m;
      char src[320];
      snprintf(src, sizeof src, "floor from %s", exp[a].src[EXP_PAIR_BUSBW]);
      if (isfinite(bfl[p].floor)) { /* --baseline: the pair's level over the good runs, less its spread */
        floor_v = bfl[p].floor;
        if (bmedian[p]) /* a pair the good runs did not measure (a confirmation pair): their pair median */
          snprintf(src, sizeof src, "floor from the baseline's pair median%s (the pair is not in it)", bfl[p].src + 8);
        else
          snprintf(src, sizeof src, "floor from %s", bfl[p].src);
      }
      if (r == DDP_OK && isfinite(floor_v)) { /* absolute: what every pair shares (sockets instead of RDMA, a slow fabric) */
        accept_severity sv = accept_judge(value[p], floor_v, 1, 0, 0, &m);
        double pa, pb;
        if (sv == ACCEPT_FAIL && isfinite(bfl[p].floor) && modeled &&
            model_clears(d, l->host[a], l->host[b], gpu_drain(rules), &pa, &pb)) {
          /* a baseline floor states no error rate; the model, which read every iteration against the baseline's
           * level, stated one and named neither the path nor its ends (seen: healthy pairs of emulated hosts below
           * floors 43 % under their level, in 1 to 3 runs of 20) */
          sv = ACCEPT_WARN;
          snprintf(src + strlen(src), sizeof src - strlen(src), "; cannot tell: the pair model, which reads every "
                   "iteration against the baseline's level, names neither the path nor its ends (P(bad) %.3f and "
                   "%.3f): measure again", pa, pb);
        }
        r = add(d, sv, "pair_busbw.abs", SCOPE_PAIR, "", -1, subj, value[p], floor_v, m, "GB/s", src);
        state[p] = isfinite(value[p]) ? (sv == ACCEPT_FAIL ? 2 : 1) : 0;
        fidx[p] = d->findings.n - 1;
      }
    }
    accept_localization_free(&loc);
    if (r == DDP_OK) r = pair_structure(d, l, pairs, state, fidx, np, cp, gpu_drain(rules));
  }
  free(pairs), free(value), free(exp), free(state), free(fidx), free(bfl), free(bmedian);
  return r;
}

/* This run as a baseline to be: a figure that varies more than BASELINE_NOISY_PCT inside the run (a GPU's samples
 * or its GEMM's first and last seconds; the spread of the pair figures) makes a poor one, and a warning of its own
 * check says so now, when it is written, rather than when it is used. */
static ddp_result baseline_quality(result_doc *d, const gpu_views *vs) {
  for (int i = 0; i < BASE_NPER_GPU; i++) {
    int n = 0, noisy = 0, at = -1;
    double worst = 0;
    for (int k = 0; k < vs->n; k++) {
      double w = view_within(&vs->g[k], BASE_PER_GPU[i].metric);
      if (!isfinite(w)) continue;
      n++;
      if (100 * expm1(w) <= BASELINE_NOISY_PCT) continue;
      noisy++;
      if (w > worst) worst = w, at = vs->g[k].rank;
    }
    if (noisy)
      DDP_TRY(findings_add_at(&d->findings, "", -1, "baseline_quality", SEV_WARN, SCOPE_JOB, "job", 100 * expm1(worst),
                              BASELINE_NOISY_PCT, "%",
                              "this run's %s varied inside the run on %d of %d GPUs (spread up to %.1f %%, rank %d; "
                              "above %g %%): a poor baseline (--baseline would widen or refuse its floors)",
                              BASE_PER_GPU[i].metric, noisy, n, 100 * expm1(worst), at, BASELINE_NOISY_PCT));
  }
  double med, spread, lo, hi;
  int n = baseline_doc_pairs(d, &med, &spread, &lo, &hi);
  if (n >= 3 && 100 * expm1(spread) > BASELINE_NOISY_PCT)
    DDP_TRY(findings_add_at(&d->findings, "", -1, "baseline_quality", SEV_WARN, SCOPE_JOB, "job", 100 * expm1(spread),
                            BASELINE_NOISY_PCT, "%",
                            "this run's pair figures spread %.1fx (%.3g to %.3g GB/s over %d pairs; robust spread "
                            "%.1f %%, above %g %%): a poor baseline (--baseline would widen or refuse its pair floors); "
                            "several runs (--baseline a.json,b.json,c.json) measure how runs differ",
                            hi / lo, lo, hi, n, 100 * expm1(spread), BASELINE_NOISY_PCT));
  return DDP_OK;
}

static ddp_result judge_doc(result_doc *d, const accept_rules *rules, confirm_plan *cp) {
  gpu_views vs;
  int runs = baseline_runs(rules);
  gpu_views *bs = calloc((size_t)runs + 1, sizeof *bs); /* each baseline run's views */
  DDP_CHECK_ALLOC(bs);
  baseline_note notes[BASE_NPER_GPU];
  memset(notes, 0, sizeof notes);
  for (int i = 0; i < BASE_NPER_GPU; i++) notes[i].figure = BASE_PER_GPU[i].metric;
  ddp_result r = accept_views_build(d, &vs);
  for (int k = 0; r == DDP_OK && k < runs; k++) r = accept_views_build(&rules->baseline[k], &bs[k]);
  for (int i = 0; r == DDP_OK && i < vs.n; i++) r = expectations(&vs.g[i], rules, runs ? bs : NULL, notes);
  if (r == DDP_OK) r = baseline_notes_say(d, notes, BASE_NPER_GPU, "GPUs");
  if (r == DDP_OK && runs) r = baseline_shift_gpus(d, &vs);
  if (r == DDP_OK) r = judge_gpus(d, rules, &vs, bs, runs);
  node_layout l;
  if (r == DDP_OK) r = layout_build(d, &l);
  if (r == DDP_OK) {
    r = judge_nodes(d, rules, &vs, &l, cp);
    layout_free(&l);
  }
  if (r == DDP_OK) r = baseline_quality(d, &vs);
  accept_views_free(&vs);
  for (int k = 0; k < runs; k++) accept_views_free(&bs[k]);
  free(bs);
  return r;
}

ddp_result accept_judge_doc(result_doc *d, const accept_rules *rules) {
  DDP_TRY(judge_doc(d, rules, NULL));
  return pair_passes_judge(d); /* a stalled pass, which the best-of pair figures hide */
}

ddp_result accept_confirm_plan(result_doc *d, const accept_rules *rules, node_pair *out, int cap, int *n) {
  confirm_plan cp = {out, 0, cap};
  int kept = d->findings.n; /* a trial judgement: its findings go again (they own no memory) */
  ddp_result r = judge_doc(d, rules, &cp);
  d->findings.n = kept;
  *n = r == DDP_OK ? cp.n : 0;
  return r;
}

int accept_baseline_usable(const result_doc *b) { return baseline_doc_figures(b); }
