/* pair_judge.c: the node-pair verdict from the pair model (pair_judge.h): observations from the document,
 * options from the rules, findings from the posterior. It only reads figures and writes findings; the
 * arithmetic is pair_model.c's. */
#include "pair_judge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "pairs.h"
#include "pair_passes.h"
#include "stats.h"

/* ---- observations ---------------------------------------------------------------------------------------- */
static int pair_of(const result_record *x, const char *measurement, int nnodes, int *a, int *b) {
  return !strcmp(x->measurement, measurement) && !strcmp(x->metric, "busbw_gbs") &&
         sscanf(x->group, "pair:%d-%d", a, b) == 2 && *a >= 0 && *b >= 0 && *a < nnodes && *b < nnodes && *a != *b;
}

ddp_result pair_judge_obs(const result_doc *d, int nnodes, pm_obs **obs, int *nobs, int *from_passes) {
  *obs = NULL, *nobs = 0, *from_passes = 0;
  int a, b;
  for (int i = 0; i < d->nrecords && !*from_passes; i++) *from_passes = pair_of(&d->records[i], "pair_pass", nnodes, &a, &b);
  const char *m = *from_passes ? "pair_pass" : "allreduce";
  size_t cap = 0;
  for (int i = 0; i < d->nrecords; i++)
    if (pair_of(&d->records[i], m, nnodes, &a, &b)) cap += d->records[i].nsamples > 0 ? (size_t)d->records[i].nsamples : 1;
  pm_obs *v = malloc((cap + 1) * sizeof *v);
  DDP_CHECK_ALLOC(v);
  int n = 0;
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *x = &d->records[i];
    if (!pair_of(x, m, nnodes, &a, &b)) continue;
    /* one round id for every pass: the model's scale is the spread of a pair's repeats within a round, and the
     * passes' differences belong in it (a loaded machine or fabric moves a whole pass: with the pass as its own
     * round, a healthy pair slowed in both its passes was named a bad path at a scale of the iterations alone).
     * The model fits no round offsets by default, so the id does nothing else. */
    int round = 0;
    int ns = x->nsamples > 0 ? x->nsamples : 1;
    for (int k = 0; k < ns; k++) {
      double bw = x->nsamples > 0 ? x->samples[k] : x->value;
      if (isfinite(bw) && bw > 0) v[n++] = (pm_obs){a, b, round, log(bw)};
    }
  }
  *obs = v, *nobs = n;
  return DDP_OK;
}

/* ---- the baseline's pair level, from baseline.h's figures and floors ---------------------------------------- */
int accept_baseline_pair_level(const accept_rules *r, double *log_level, double *log_sd, int *runs) {
  int n = !r->baseline ? 0 : r->baseline_runs > 0 ? r->baseline_runs : 1;
  if (!n) return 0;
  double *med = malloc(2 * (size_t)n * sizeof *med), *spread = med + n;
  if (!med) return 0;
  for (int k = 0; k < n; k++) baseline_doc_pairs(&r->baseline[k], &med[k], &spread[k], NULL, NULL);
  baseline_figure f;
  baseline_floor bf;
  baseline_figure_of(med, spread, n, &f);
  free(med);
  baseline_floor_make(&f, NAN, r->tolerance_pct, r->baseline_cv_pct > 0 ? r->baseline_cv_pct : BASELINE_CV_PCT, &bf);
  if (!f.runs || bf.refused) return 0;
  double b = isfinite(f.between) ? f.between : 0;
  if (isfinite(f.within)) b = fmax(b, f.within);
  *log_level = log(f.level), *log_sd = b, *runs = f.runs;
  return 1;
}

/* ---- options ------------------------------------------------------------------------------------------------ */
void pair_judge_opts(const accept_rules *rules, pm_opts *o) {
  *o = pm_opts_default();
  if (rules->bad_pct > 0) o->bad_pct = rules->bad_pct / 100;
  if (rules->prior_bad > 0) o->prior = rules->prior_bad;
  if (rules->drain_threshold > 0) o->drain_threshold = rules->drain_threshold;
  o->baseline_cv = rules->baseline_cv_pct > 0 ? rules->baseline_cv_pct / 100 : PAIR_BASELINE_CV;
  double level, sd;
  int runs;
  if (accept_baseline_pair_level(rules, &level, &sd, &runs)) { /* the runs' level and between-run spread */
    o->have_baseline = 1;
    o->baseline_log = level;
    o->baseline_sd = sd;
    o->baseline_runs = runs;
  }
}

/* ---- the noise when nothing repeats ------------------------------------------------------------------------ */
static int cmp_desc(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? 1 : a > b ? -1 : 0;
}

/* With one figure per pair and round (a document without samples or per-pass records), the model has no repeats
 * to take its scale from, and its default (3 %) is far below the noise of a loaded fabric: on emulated hosts a
 * healthy ring's pairs spread 10x and the default drained a healthy node. Then the scale is the spread of the
 * upper half of the pair figures (the pairs most likely healthy): 0.88 x 1.4826 x their MAD of log busbw (a
 * Gaussian's sigma, and sigma in the model's units: the median |difference| of two draws is 0.954 sigma, and
 * 1.088 s), at least the default. A stand-in, larger than the noise when slow pairs reach the upper half; the
 * pair_model finding says it was used. 0 when the observations repeat (the model takes its own). */
static double scale_without_repeats(const pm_obs *obs, int nobs, double floor_s) {
  for (int i = 0; i < nobs; i++)
    for (int j = i + 1; j < nobs; j++)
      if (obs[i].a == obs[j].a && obs[i].b == obs[j].b && obs[i].round == obs[j].round) return 0;
  double *v = malloc(((size_t)nobs + 1) * sizeof *v);
  if (!v) return floor_s;
  for (int i = 0; i < nobs; i++) v[i] = obs[i].y;
  qsort(v, (size_t)nobs, sizeof *v, cmp_desc);
  int h = (nobs + 1) / 2;
  double m = stats_percentile(v, h, 0.5);
  for (int i = 0; i < h; i++) v[i] = fabs(v[i] - m);
  double s = 0.88 * 1.4826 * stats_percentile(v, h, 0.5);
  free(v);
  return s > floor_s ? s : floor_s;
}

/* What one iteration counts for (pm_opts.iter_weight), from d's pair_pass records (2 passes or more, 3 iterations
 * a pass or more): k iterations of one pass, independent, give pass medians whose differences between passes have a
 * median of 0.6745 sqrt(pi / k) sigma (sigma the iterations' spread inside a pass: the median over every pair's
 * passes of 1.4826 x MAD of log busbw; the median of k normal draws has variance about pi sigma^2 / 2k). Measured
 * larger (D, the median over pairs of |difference| of their passes' medians), a pass's k iterations are worth
 * about k (D0 / D)^2 independent ones: the weight is (D0 / D)^2, between 1/k and 1. 1 when it cannot be read.
 * *k_out: the iterations a pass (the median). Seen on 4 emulated hosts of a loaded 2-core machine: one pair's two
 * passes at 0.15 and 0.61 GB/s, five iterations alike in each, and at full weight its lucky pass set the healthy
 * level that drained a healthy host at P 0.70. */
static double iteration_weight(const result_doc *d, int nnodes, int *k_out) {
  int n = 0, cap = 0, a, b;
  *k_out = 0;
  for (int i = 0; i < d->nrecords; i++) cap += pair_of(&d->records[i], "pair_pass", nnodes, &a, &b);
  if (cap < 2) return 1;
  double *med = malloc(4 * (size_t)cap * sizeof *med), *sig = med + cap, *kk = sig + cap, *diff = kk + cap;
  int *pa = malloc(3 * (size_t)cap * sizeof *pa), *pb = pa + cap, *ps = pb + cap;
  if (!med || !pa) {
    free(med), free(pa);
    return 1;
  }
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *x = &d->records[i];
    if (!pair_of(x, "pair_pass", nnodes, &a, &b) || x->nsamples < 3) continue;
    double v[512];
    int k = 0;
    for (int j = 0; j < x->nsamples && k < 512; j++)
      if (isfinite(x->samples[j]) && x->samples[j] > 0) v[k++] = log(x->samples[j]);
    if (k < 3) continue;
    double m = stats_percentile(v, k, 0.5);
    for (int j = 0; j < k; j++) v[j] = fabs(v[j] - m);
    const char *pass = result_record_label(x, "pass");
    med[n] = m, sig[n] = 1.4826 * stats_percentile(v, k, 0.5), kk[n] = k;
    pa[n] = a < b ? a : b, pb[n] = a < b ? b : a, ps[n] = pass ? atoi(pass) : 0;
    n++;
  }
  int nd = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (pa[i] == pa[j] && pb[i] == pb[j] && ps[i] != ps[j] && nd < cap) diff[nd++] = fabs(med[i] - med[j]);
  double w = 1;
  if (nd >= 1 && n >= 2) {
    double sw = stats_percentile(sig, n, 0.5), k = stats_percentile(kk, n, 0.5), dd = stats_percentile(diff, nd, 0.5);
    double d0 = 0.6745 * sqrt(3.14159265358979 / k) * sw;
    w = dd > d0 ? (d0 / dd) * (d0 / dd) : 1;
    if (w < 1 / k) w = 1 / k;
    *k_out = (int)k;
  }
  free(med), free(pa);
  return w;
}

/* The passes of pair a-b (pair_pass records, either order) and how many ran below floor (*nslow). */
static int path_passes(const result_doc *d, int a, int b, double floor_v, int *nslow) {
  int n = 0, x, y;
  *nslow = 0;
  for (int i = 0; i < d->nrecords; i++)
    if (pair_of(&d->records[i], "pair_pass", PM_MAX_NODES, &x, &y) && ((x == a && y == b) || (x == b && y == a))) {
      n++;
      *nslow += d->records[i].value < floor_v;
    }
  return n;
}

/* The passes over the pair schedule that d kept (pair_passes.h's duration records, stage "pairs"): 0 when it kept
 * none (a result with the best pass's figures only, or a soak's first cycle, is one pass). */
static int pair_pass_count(const result_doc *d) {
  double sec[256];
  const char *stage[256];
  int n = pair_passes_durations(d, sec, stage, 256), k = 0;
  for (int i = 0; i < n; i++) k += !strcmp(stage[i], "pairs");
  return k;
}

/* ---- rounds ------------------------------------------------------------------------------------------------- */
/* round[a][b]: the round of pair a-b in the schedule the run measured (its "pairs" config over N nodes, pairs.h),
 * -1 for a pair outside it or measured outside it too (a confirmation pass's pair_pass records, stage "confirm":
 * they ran beside other partners). Returns the schedule's round count, 0 when unknown. */
static int sched_rounds(const result_doc *d, int N, int round[PM_MAX_NODES][PM_MAX_NODES]) {
  for (int a = 0; a < N; a++)
    for (int b = 0; b < N; b++) round[a][b] = -1;
  const char *m = "auto";
  for (int i = 0; i < d->nconfig; i++)
    if (!strcmp(d->config[i].key, "pairs")) m = d->config[i].value;
  int mode = !strcmp(m, "auto") ? (int)node_pairs_default(N) : node_pairs_mode_parse(m);
  if (mode <= 0) return 0;
  node_pair pp[PM_MAX_NODES * PM_MAX_NODES];
  int np = node_pairs((node_pairs_mode)mode, N, pp, PM_MAX_NODES * PM_MAX_NODES), nround = 0;
  for (int p = 0; p < np && p < PM_MAX_NODES * PM_MAX_NODES; p++) {
    round[pp[p].a][pp[p].b] = round[pp[p].b][pp[p].a] = pp[p].round;
    nround = pp[p].round + 1 > nround ? pp[p].round + 1 : nround;
  }
  for (int i = 0; i < d->nrecords; i++) {
    int a, b;
    const char *st = result_record_label(&d->records[i], "stage");
    if (pair_of(&d->records[i], "pair_pass", N, &a, &b) && st && strcmp(st, "pairs")) round[a][b] = round[b][a] = -1;
  }
  return nround;
}

/* ---- findings ----------------------------------------------------------------------------------------------- */
static ddp_result note(result_doc *d, finding_severity sev, const char *check, finding_scope scope, const char *host,
                       const char *subject, double measured, double expected, const char *unit, int passed,
                       const char *text) {
  DDP_TRY(findings_add_at(&d->findings, host, -1, check, sev, scope, subject, measured, expected, unit, "%s", text));
  d->findings.v[d->findings.n - 1].passed = passed;
  return DDP_OK;
}

static ddp_result findings_from(result_doc *d, const pm_result *pr, const pm_opts *o, const char *const *host,
                                int from_passes, int nobs, int stand_in, int one_pass, double floor_gbs,
                                int iters_a_pass) {
  int N = pr->n;
  char subj[160], text[1200];
  double bad = 100 * o->bad_pct;
  int drained[PM_MAX_NODES] = {0}, grey[PM_MAX_NODES] = {0};
  ddp_result r = DDP_OK;
  /* stand_in (one figure per pair: the noise not measured), or one pass only (the iterations' noise measured, not
   * how passes differ: a burst of load on a shared machine or fabric slows a whole round, and in CI a healthy
   * soak's first cycle drained a host on it): no error rate can be stated, so nothing is drained on the model's
   * word; the nodes it would drain are retested and its paths are warnings */
  int no_rate = stand_in || one_pass;
  /* with a baseline, every node below its level together is a shift the run shares (the machine's load, the
   * fabric, a setting), not N faults at once at a prior of o->prior each: nobody is drained on it, and the model's
   * probabilities, which rest on the baseline's level being this run's healthy level, are not stated (seen: a
   * healthy run's pairs about 38 % below a 3-run baseline, all 4 hosts drained at P 0.87 to 0.97) */
  int shared = o->have_baseline && pr->state == PM_OK && N >= 3 && pr->ndrain == N;
  int drains = pr->state == PM_OK && !no_rate && !shared;
  int ndrain = drains ? pr->ndrain : 0;
  double efd = drains ? pr->exp_false_drains : 0, emiss = drains ? pr->exp_misses : pr->exp_bad;
  efd = efd > 0 ? efd : 0.0, emiss = emiss > 0 ? emiss : 0.0; /* sums of 1 - P can round below 0: never "-0.00" */
  static const char unmeasured[] = "; from one figure per pair the noise was not measured (no repeats), so no error "
                                   "rate can be stated and nothing is drained on it: retest with repeated passes";
  static const char onepass[] = "; from one pass over the pairs how passes differ was not measured (a burst of load "
                                "slows a whole round), so no error rate can be stated and nothing is drained on it: "
                                "retest with accept --pair-repeats 2 or more";
  const char *why_no_rate = stand_in ? unmeasured : one_pass ? onepass : "";
  if (pr->state == PM_CANNOT_TELL) { /* the slower nodes are named, not drained: the rest are not shown healthy */
    char slower[200] = "";
    for (int n = 0; n < N; n++)
      if (pr->p_node[n] > o->drain_threshold && strlen(slower) + strlen(host[n]) + 3 < sizeof slower)
        snprintf(slower + strlen(slower), sizeof slower - strlen(slower), "%s%s", slower[0] ? ", " : "", host[n]);
    if (!slower[0] && floor_gbs > 0) { /* nobody differs, and the operator stated what a pair must reach */
      snprintf(text, sizeof text, "every pair at one level: the model alone cannot tell (%s); --expect's floor of "
               "%g GB/s decides instead (pair_busbw.abs): all healthy and all slow alike look the same from pairs "
               "alone, and the floor says which is acceptable", pr->why, floor_gbs);
      r = note(d, SEV_INFO, "pair_busbw", SCOPE_JOB, "", "job", NAN, floor_gbs, "GB/s", 0, text);
    } else {
      snprintf(text, sizeof text, "cannot tell: every pair at one level: %s; %s%s%snobody is drained on this evidence. "
               "Give --baseline (a known-good run's --json) or run with more nodes", pr->why, slower[0] ? "slower "
               "than the rest: " : "", slower, slower[0] ? "; " : "");
      r = note(d, SEV_WARN, "pair_busbw", SCOPE_JOB, "", "job", NAN, NAN, "nodes", 0, text);
    }
  } else if (shared) {
    double gap[PM_MAX_NODES];
    for (int n = 0; n < N; n++) gap[n] = pr->d_node[n];
    double g = 100 * stats_percentile(gap, N, 0.5);
    snprintf(text, sizeof text, "cannot tell: every node's pairs sat below the baseline's level together (a gap of "
             "about %.0f %% each): a shift the whole run shares (the machine's load, the fabric, a setting) rather "
             "than %d nodes failing at once; nobody is drained on it. A re-run on a quiet fabric, or a baseline taken "
             "under the same conditions, would tell load from a fault of the whole fabric", g, N);
    r = note(d, g > BASELINE_REFUSE_PCT ? SEV_FAIL : SEV_WARN, "pair_busbw", SCOPE_JOB, "", "job", NAN, NAN, "nodes",
             0, text);
  } else {
    for (int k = 0; k < pr->ndrain; k++) drained[pr->drain[k]] = 1;
    for (int k = 0; k < pr->ngrey; k++) grey[pr->grey[k].node] = 1 + k;
    for (int n = 0; no_rate && n < N; n++) grey[n] = grey[n] && !drained[n]; /* said once, below */
  }
  for (int n = 0; r == DDP_OK && n < N; n++) { /* the drained: a failure on the host, so the drain list has it */
    if (!drained[n]) continue;
    snprintf(subj, sizeof subj, "%.100s (its pairs)", host[n]);
    snprintf(text, sizeof text, "P(bad) = %.3f that this node runs more than %g %% below the healthy pair level (its "
             "gap if bad: about %.0f %%); above the drain threshold %g: its NIC, its link or its host, not its partners%s",
             pr->p_node[n], bad, 100 * pr->d_node[n], o->drain_threshold, why_no_rate);
    r = note(d, no_rate ? SEV_WARN : SEV_FAIL, no_rate ? PAIR_RETEST_CHECK : "pair_busbw", SCOPE_HOST, host[n], subj,
             pr->p_node[n], o->drain_threshold, "P(bad)", 0, text);
  }
  /* a path: named as the path, never its hosts. Every pair of one round named (2 pairs or more) is not failed:
   * pairs that run at once share the fabric (an uplink that ECMP hashes them onto, a spine; on emulated hosts the
   * machine's cores), so a round slow as a whole is that as well as several bad paths at once, and the model has no
   * round term for rounds of fewer than 4 pairs (seen here: 2 of 40 healthy runs of 4 emulated hosts exited 4 on the
   * two pairs of one round, slow in both passes, at P 0.96-0.99) */
  int named[PM_MAX_NODES][PM_MAX_NODES] = {{0}}, round[PM_MAX_NODES][PM_MAX_NODES], together[PM_MAX_NODES] = {0};
  int nround = sched_rounds(d, N, round);
  for (int a = 0; pr->state == PM_OK && !shared && a < N; a++)
    for (int b = a + 1; b < N; b++) named[a][b] = pr->p_path[a][b] > o->drain_threshold && !drained[a] && !drained[b];
  for (int q = 0; q < nround && q < PM_MAX_NODES; q++) {
    int in = 0, nm = 0;
    for (int a = 0; a < N; a++)
      for (int b = a + 1; b < N; b++)
        if (round[a][b] == q) in++, nm += named[a][b];
    together[q] = in >= 2 && nm == in ? in : 0;
  }
  for (int a = 0; r == DDP_OK && a < N; a++)
    for (int b = a + 1; r == DDP_OK && b < N; b++) {
      double p = pr->p_path[a][b];
      if (!named[a][b]) continue;
      snprintf(subj, sizeof subj, "%.70s<->%.70s", host[a], host[b]);
      int q = round[a][b], all = q >= 0 && q < PM_MAX_NODES ? together[q] : 0;
      /* a path fails only when it was slow in every pass (2 or more): one pair measured once at a bad moment (a
       * burst of load on the machine or the fabric) looks like a bad path to a model whose scale is the pair's own
       * repeats; a slow cable is slow every time */
      int nslow = 0, npass = from_passes ? path_passes(d, a, b, exp(pr->mu) * (1 - o->bad_pct), &nslow) : 0;
      int every = npass >= 2 && nslow == npass;
      char passes[192] = "";
      if (from_passes && !every)
        snprintf(passes, sizeof passes, "; but slow in %d of its %d pass%s (a path is slow in every pass, a burst "
                 "of load is not): measure again, --pair-repeats 3 or more", nslow, npass, npass == 1 ? "" : "es");
      else if (!from_passes) /* one pass (a soak's first cycle, a result without per-pass records) */
        snprintf(passes, sizeof passes, "; but measured in one pass only (a path is slow in every pass, a burst of "
                 "load is not): measure again, accept --pair-repeats 3 or more");
      char mates[384] = "";
      if (all) {
        snprintf(mates, sizeof mates, "; but cannot tell: every pair of its round (round %d, %d pairs, each named) ran "
                 "slow together, which pairs sharing the fabric while they run at once (an uplink, a spine) explains "
                 "as well as %d bad paths: measure these pairs beside other partners, or again", q + 1, all, all);
      }
      snprintf(text, sizeof text, "P(bad) = %.3f that this path runs more than %g %% below the healthy level while "
               "both ends are fine with other partners: the path between them (cable, switch port), not a host%s%s%s",
               p, bad, stand_in ? unmeasured : "", passes, mates);
      int fails = !stand_in && every && !all;
      r = note(d, fails ? SEV_FAIL : SEV_WARN, "pair_busbw", SCOPE_PAIR, "", subj, p, o->drain_threshold, "P(bad)",
               0, text);
    }
  for (int k = 0; r == DDP_OK && pr->state == PM_OK && !shared && k < pr->ngrey; k++) {
    const pm_grey *g = &pr->grey[k];
    if (no_rate && drained[g->node]) continue; /* its retest finding is above */
    snprintf(subj, sizeof subj, "%.100s (grey zone)", host[g->node]);
    char need[96];
    if (g->pairs_needed >= 99) snprintf(need, sizeof need, "it needs a baseline or less noise");
    else snprintf(need, sizeof need, "%d more pair round%s with nodes that passed would decide it", g->pairs_needed,
                  g->pairs_needed == 1 ? "" : "s");
    snprintf(text, sizeof text, "P(bad) = %.3f: neither drained nor shown healthy (grey zone %g to %g); %s "
             "(--retest-hosts lists it)", g->p, o->grey_lo, o->grey_hi, need);
    r = note(d, SEV_WARN, PAIR_RETEST_CHECK, SCOPE_HOST, host[g->node], subj, g->p, o->drain_threshold, "P(bad)", 0,
             text);
  }
  /* every node's probability, for the JSON and Prometheus; when the model cannot tell, its probabilities rest on
   * taking the one level seen as healthy, so none is stated (no Prometheus series either) */
  for (int n = 0; r == DDP_OK && n < N; n++) {
    int told = pr->state == PM_OK && !shared;
    if (told)
      snprintf(text, sizeof text, "P(bad) = %.4f (more than %g %% below the healthy pair level)", pr->p_node[n], bad);
    else if (shared)
      snprintf(text, sizeof text, "P(bad) = -: cannot tell (every node below the baseline together, see the "
               "pair_busbw warning)");
    else
      snprintf(text, sizeof text, "P(bad) = -: cannot tell (every pair at one level, see the pair_busbw warning)");
    r = note(d, SEV_INFO, PAIR_PROB_CHECK, SCOPE_HOST, host[n], host[n], told ? pr->p_node[n] : NAN,
             o->drain_threshold, "P(bad)", told && !drained[n] && !grey[n], text);
  }
  if (r != DDP_OK) return r;
  char weight[192] = "";
  if (o->iter_weight > 0 && o->iter_weight < 1)
    snprintf(weight, sizeof weight, ", each counting %.2f (a pass's iterations moved together: its passes' medians "
             "differ more than its iterations spread; about %.1f independent a pass)", o->iter_weight,
             o->iter_weight * iters_a_pass);
  char base[160] = "no baseline: the healthy level from the run itself";
  if (o->have_baseline && o->baseline_runs < 3)
    snprintf(base, sizeof base, "baseline level %.4g GB/s from %d run, widened by a stated between-run CV of %g %%",
             exp(o->baseline_log), o->baseline_runs, 100 * o->baseline_cv);
  else if (o->have_baseline)
    snprintf(base, sizeof base, "baseline level %.4g GB/s from %d runs (between-run sd %.3g in log)",
             exp(o->baseline_log), o->baseline_runs, o->baseline_sd);
  snprintf(text, sizeof text, "pair model (docs/accept.md): %d drained, expected false drains %.3f, expected misses "
           "%.3f; prior %g, bad = more than %g %% below healthy, drain threshold %g; noise scale %.2f %% (%s), %d "
           "iterations from %s%s; %ld states summed; %s; the stated rates assume the prior",
           ndrain, efd, emiss, o->prior, bad, o->drain_threshold, 100 * pr->scale,
           pr->scale_from_repeats ? "from the run's repeats"
           : stand_in ? "no repeats: the spread of the upper half of the pairs, a stand-in; nothing drained on it"
                      : "the default: no repeats", nobs,
           one_pass && (from_passes || !stand_in) ? "one pass, so nothing drained on it"
           : from_passes                           ? "every pass"
                                                   : "the best pass",
           weight, pr->states, base);
  /* measured and expected: the list's expected false drains and misses, when the model drew the list (the
   * bottom line prints them); NaN when it could not tell or had no repeats (the text still says what it can) */
  return note(d, SEV_INFO, "pair_model", SCOPE_JOB, "", "job", drains ? efd : NAN, drains ? emiss : NAN, "nodes", 0,
              text);
}

ddp_result pair_judge(result_doc *d, const accept_rules *rules, int nnodes, const char *const *host, double floor_gbs,
                      int *judged) {
  *judged = 0;
  if (nnodes < 2 || nnodes > PM_MAX_NODES) return DDP_OK;
  pm_obs *obs;
  int nobs, from_passes;
  DDP_TRY(pair_judge_obs(d, nnodes, &obs, &nobs, &from_passes));
  if (!nobs) {
    free(obs);
    return DDP_OK;
  }
  pm_opts o;
  pair_judge_opts(rules, &o);
  o.scale = scale_without_repeats(obs, nobs, o.scale_default);
  int iters_a_pass = 0;
  o.iter_weight = iteration_weight(d, nnodes, &iters_a_pass);
  pm_result *pr = malloc(sizeof *pr);
  if (!pr) {
    free(obs);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  pm_state s = pm_judge(nnodes, obs, nobs, &o, pr);
  free(obs);
  ddp_result r = DDP_OK;
  if (s == PM_BAD_INPUT) /* the options were checked and the figures filtered: say so, never pass */
    r = note(d, SEV_WARN, "pair_busbw", SCOPE_JOB, "", "job", NAN, NAN, "", 0, pr->why);
  else
    r = findings_from(d, pr, &o, host, from_passes, nobs, o.scale > 0, pair_pass_count(d) < 2, floor_gbs,
                      iters_a_pass);
  free(pr);
  *judged = r == DDP_OK;
  return r;
}

ddp_result pair_retest_text(const result_doc *d, char **text, size_t *n) {
  size_t len = 1;
  for (int i = 0; i < d->findings.n; i++) len += 4 * strlen(d->findings.v[i].host) + 1;
  char *t = malloc(len);
  DDP_CHECK_ALLOC(t);
  size_t k = 0;
  t[0] = 0;
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    if (strcmp(f->check, PAIR_RETEST_CHECK) || !f->host[0]) continue;
    int seen = 0;
    for (int j = 0; j < i && !seen; j++)
      seen = !strcmp(d->findings.v[j].check, PAIR_RETEST_CHECK) && !strcmp(d->findings.v[j].host, f->host);
    for (int j = 0; j < d->findings.n && !seen; j++) /* a host another check fails is drained, not retested */
      seen = d->findings.v[j].severity == SEV_FAIL && !strcmp(d->findings.v[j].host, f->host);
    if (seen) continue;
    /* as --failed-hosts writes them (result/outputs.c): a byte no host name holds is \xHH, so that a name never
     * splits into two lines or two entries of a comma list */
    for (const unsigned char *c = (const unsigned char *)f->host; *c; c++)
      if (*c > 0x20 && *c != 0x7f && *c != ',' && *c != '\\') t[k++] = (char)*c;
      else k += (size_t)sprintf(t + k, "\\x%02x", *c);
    t[k++] = '\n';
    t[k] = 0;
  }
  *text = t, *n = k;
  return DDP_OK;
}
