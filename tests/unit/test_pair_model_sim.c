/* test_pair_model_sim: the pair model's posterior (verdict/pair_model.h) against clusters simulated with a known
 * truth, seed 20261207, on the tournament schedule ddpbench runs (base/pairs.h). It checks what the posterior
 * states about its own errors:
 *  (a) calibration, on clusters drawn from the model's own priors (N = 2, 3, 4, 8, 16, prior 0.15 so that bad
 *      nodes are common, a baseline of 5 runs): per probability bin (0, .05, .2, .5, .8, .95, 1) with 50 nodes or
 *      more, the fraction bad lies in the 99.9 % Wilson interval of the bin's mean probability; ECE <= 0.03;
 *  (b) on the same clusters, the mean stated expected false drains and misses each within max(0.05, 3 SE) of
 *      the observed means;
 *  (c) on fixed configurations (healthy; one node 5, 8, 20, 50 % slow; a quarter of the nodes slow; one bad path;
 *      two and three slow hosts among 4-6; noise Student-t 3 dof, Gaussian, bimodal, slow drift) the posterior is
 *      never optimistic: observed false drains and misses <= stated + max(0.05, 3 SE);
 *  (d) never worse than today's rule (accept_localize, run on the same pairs): wrong nodes (false drains +
 *      misses) per cluster at most today's + max(0.05, 3 SE);
 *  (e) two slow hosts of 4 and of 5 without a baseline: both named (drained), in 95 % of the clusters or more;
 *  and that 2 nodes without a baseline are "cannot tell", that the scale constant PM_SCALE_DIFF_MEDIAN holds, and
 *  that good_levels_exact does not charge both ends of a slightly slow pair.
 * It prints the calibration table and stated against observed per configuration (results/ keeps a copy).
 * Clusters per size: 50, or PM_SIM_CLUSTERS (200 in the full test command). PM_SIM_BREAK=gauss|scale|prior
 * judges with a broken model (docs/design/noise-model.md says which checks then fail); PM_SIM_GOOD=exact with
 * the good nodes' levels summed exactly (pm_opts.good_levels_exact). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pair_model.h"
#include "pairs.h"
#include "rules.h"
#include "sim_rng.h"

typedef enum { NZ_MODEL, NZ_T3, NZ_GAUSS, NZ_BIMODAL, NZ_DRIFT } noise_kind;
static const char *noise_name[] = {"model", "t3", "gauss", "bimodal", "drift"};

/* One draw of unit noise of each kind (the drift is added per round by the caller). */
static double noise(noise_kind k) {
  switch (k) {
  case NZ_MODEL:
  case NZ_DRIFT: {
    double pu = 1.2533141373155 / 2.6136636604911; /* the model's mass above 0 */
    if (urand() < PM_OUTLIER_FRAC) return PM_OUTLIER_SCALE * t3();
    return urand() < pu ? fabs(gauss()) : -fabs(t3());
  }
  case NZ_T3: return t3();
  case NZ_GAUSS: return gauss();
  case NZ_BIMODAL: return urand() < 0.25 ? -3 + 0.5 * gauss() : 0.5 * gauss();
  }
  return 0;
}

typedef struct {
  const char *name;
  int n;
  int nbad;          /* nodes slowed by dbad */
  double dbad;
  int badpath;       /* 1: the path 0-1 slowed by 30 % (its ends healthy) */
  noise_kind noise;
  int baseline;      /* 1: a baseline of 5 runs with a 2 % spread */
  int named;         /* (e): every slow node must be drained in every cluster */
} config;

typedef struct {
  int n;
  double d[PM_MAX_NODES];                   /* true degradation */
  double dpath[PM_MAX_NODES][PM_MAX_NODES]; /* true path degradation */
  double mu;
} truth;

#define ITERS 5
#define MAXOBS (PM_MAX_NODES * PM_MAX_NODES * ITERS * 2)

/* Measure a cluster: one tournament pass, ITERS iterations a pair, noise scale s. Returns the observations. */
static int measure(const truth *t, noise_kind nk, double s, pm_obs *obs) {
  node_pair pr[256];
  int np = node_pairs(PAIRS_TOURNAMENT, t->n, pr, 256), nobs = 0, nround = 0;
  for (int p = 0; p < np; p++)
    if (pr[p].round + 1 > nround) nround = pr[p].round + 1;
  for (int p = 0; p < np; p++) {
    int a = pr[p].a, b = pr[p].b;
    double d = t->d[a] > t->d[b] ? t->d[a] : t->d[b];
    if (t->dpath[a][b] > d) d = t->dpath[a][b];
    double off = nk == NZ_DRIFT ? -3 * s * pr[p].round / (nround > 1 ? nround - 1 : 1) : 0;
    for (int k = 0; k < ITERS; k++) {
      obs[nobs].a = a, obs[nobs].b = b, obs[nobs].round = pr[p].round;
      obs[nobs].y = t->mu + off + log1p(-d) + s * noise(nk);
      nobs++;
    }
  }
  return nobs;
}

typedef struct {
  double fd_stated, fd_obs, miss_stated, miss_obs;
  int all_named, cannot_tell;
} outcome;

static outcome judge(const truth *t, const pm_obs *obs, int nobs, const pm_opts *o, pm_result *r) {
  outcome c = {0, 0, 0, 0, 1, 0};
  pm_state st = pm_judge(t->n, obs, nobs, o, r);
  CHECK(st != PM_BAD_INPUT, "%s", r->why);
  c.cannot_tell = st == PM_CANNOT_TELL;
  c.fd_stated = r->exp_false_drains, c.miss_stated = r->exp_misses;
  int drained[PM_MAX_NODES] = {0};
  for (int k = 0; k < r->ndrain; k++) drained[r->drain[k]] = 1;
  for (int i = 0; i < t->n; i++) {
    int bad = t->d[i] > o->bad_pct;
    if (drained[i] && !bad) c.fd_obs++;
    if (!drained[i] && bad) c.miss_obs++, c.all_named = 0;
  }
  return c;
}

/* Today's rule on the same cluster: accept_localize (verdict/rules.h, what accept runs on the pair matrix: robust
 * z > 3.5 and 10 % below the median reference), each pair's value its best iteration (--pair-repeats keeps the
 * best). Not replicated: the confirmation pass and the baseline's floor. Adds its false drains and misses. */
static void today(const truth *t, const pm_obs *obs, int nobs, double bad_pct, double *fd, double *miss) {
  node_pair pr[PM_MAX_NODES * PM_MAX_NODES];
  double val[PM_MAX_NODES * PM_MAX_NODES];
  int np = 0;
  for (int k = 0; k < nobs; k++) {
    if (!np || obs[k].a != pr[np - 1].a || obs[k].b != pr[np - 1].b) {
      pr[np] = (node_pair){obs[k].round, obs[k].a, obs[k].b};
      val[np++] = exp(obs[k].y);
    } else if (exp(obs[k].y) > val[np - 1]) {
      val[np - 1] = exp(obs[k].y);
    }
  }
  accept_localization loc;
  if (accept_localize(t->n, pr, val, np, 10, 3.5, &loc) != DDP_OK) {
    CHECK(0, "accept_localize failed");
    return;
  }
  for (int i = 0; i < t->n; i++) {
    int bad = t->d[i] > bad_pct;
    *fd += loc.node_bad[i] && !bad;
    *miss += !loc.node_bad[i] && bad;
  }
  accept_localization_free(&loc);
}

/* PM_SIM_BREAK, to see the checks fail: "gauss" judges with a Gaussian likelihood, "scale" with a noise scale of
 * 0.5 % whatever the repeats say, "prior" the calibration clusters with a prior 10 times too low. */
static int broken(const char *what) { return getenv("PM_SIM_BREAK") && !strcmp(getenv("PM_SIM_BREAK"), what); }

static pm_opts base_opts(void) {
  pm_opts o = pm_opts_default();
  o.gauss_likelihood = broken("gauss");
  o.good_levels_exact = getenv("PM_SIM_GOOD") && !strcmp(getenv("PM_SIM_GOOD"), "exact");
  if (broken("scale")) o.scale = 0.005;
  return o;
}

/* mean and standard error of x[0..n) */
static void mean_se(const double *x, int n, double *m, double *se) {
  double s = 0, ss = 0;
  for (int i = 0; i < n; i++) s += x[i];
  *m = s / n;
  for (int i = 0; i < n; i++) ss += (x[i] - *m) * (x[i] - *m);
  *se = n > 1 ? sqrt(ss / (n - 1) / n) : 0;
}

static void wilson(double p, int n, double z, double *lo, double *hi) {
  double d = 1 + z * z / n, c = (p + z * z / (2 * n)) / d, h = z * sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / d;
  *lo = c - h, *hi = c + h;
}

/* (a), (b): clusters drawn from the model's priors. */
static void calibration(int nc) {
  static const int sizes[] = {2, 3, 4, 8, 16};
  static const double edges[] = {0, 0.05, 0.2, 0.5, 0.8, 0.95, 1.0000001};
  enum { NBIN = 6 };
  double psum[NBIN] = {0};
  int cnt[NBIN] = {0}, badc[NBIN] = {0}, nnode = 0;
  double *dfd = malloc(sizeof *dfd * 5 * (size_t)nc), *dmiss = malloc(sizeof *dmiss * 5 * (size_t)nc);
  double sfd = 0, ofd = 0, smiss = 0, omiss = 0;
  pm_obs *obs = malloc(sizeof *obs * MAXOBS);
  pm_result *r = malloc(sizeof *r);
  int ncl = 0;
  pm_opts o = base_opts();
  double prior = 0.15;
  o.prior = broken("prior") ? prior / 10 : prior, o.path_prior = 0.01;
  o.have_baseline = 1, o.baseline_log = 0, o.baseline_sd = 0.02, o.baseline_runs = 5;
  for (int z = 0; z < 5; z++)
    for (int c = 0; c < nc; c++) {
      truth t;
      memset(&t, 0, sizeof t);
      t.n = sizes[z];
      t.mu = o.baseline_sd * gauss();
      for (int i = 0; i < t.n; i++) {
        if (urand() < prior) t.d[i] = o.bad_pct * pow(PM_BAD_MAX / o.bad_pct, urand());
        else t.d[i] = urand() < 0.8 ? 0 : o.bad_pct * urand();
      }
      for (int i = 0; i < t.n; i++)
        for (int j = i + 1; j < t.n; j++)
          t.dpath[i][j] = t.dpath[j][i] = urand() < o.path_prior ? o.bad_pct * pow(PM_BAD_MAX / o.bad_pct, urand()) : 0;
      double s = 0.02 * pow(4, urand()); /* 2 % to 8 %: many nodes near the line */
      int nobs = measure(&t, NZ_MODEL, s, obs);
      outcome oc = judge(&t, obs, nobs, &o, r);
      for (int i = 0; i < t.n; i++) {
        int b = 0;
        while (b < NBIN - 1 && r->p_node[i] >= edges[b + 1]) b++;
        psum[b] += r->p_node[i], cnt[b]++, badc[b] += t.d[i] > o.bad_pct, nnode++;
      }
      dfd[ncl] = oc.fd_obs - oc.fd_stated, dmiss[ncl] = oc.miss_obs - oc.miss_stated, ncl++;
      sfd += oc.fd_stated, ofd += oc.fd_obs, smiss += oc.miss_stated, omiss += oc.miss_obs;
    }
  double ece = 0;
  printf("calibration: %d clusters (N = 2, 3, 4, 8, 16; %d each), %d nodes, prior 0.15, model noise 2-8 %%, "
         "baseline of 5 runs\n  bin          nodes  mean P   fraction bad  99.9 %% Wilson\n", ncl, nc, nnode);
  for (int b = 0; b < NBIN; b++) {
    if (!cnt[b]) continue;
    double mp = psum[b] / cnt[b], fb = (double)badc[b] / cnt[b], lo, hi;
    wilson(mp, cnt[b], 3.2905, &lo, &hi);
    ece += cnt[b] * fabs(fb - mp) / nnode;
    printf("  [%.2f,%.2f) %6d  %.4f   %.4f        [%.4f, %.4f]%s\n", edges[b], edges[b + 1] > 1 ? 1 : edges[b + 1],
           cnt[b], mp, fb, lo, hi, cnt[b] >= 50 ? "" : "  (under 50 nodes: not checked)");
    /* in counts: 0 bad of 280 at a mean of 0.0001 lies in the interval even though 0 < its lower end */
    int in = badc[b] >= floor(lo * cnt[b]) && badc[b] <= ceil(hi * cnt[b]);
    if (cnt[b] >= 50) CHECK(in, "bin [%.2f,%.2f): %.4f bad, P %.4f", edges[b], edges[b + 1], fb, mp);
  }
  printf("  ECE %.4f (<= 0.03)\n", ece);
  CHECK(ece <= 0.03, "ECE %.4f", ece);
  double m, se;
  mean_se(dfd, ncl, &m, &se);
  printf("  false drains per cluster: stated %.4f, observed %.4f (difference %.4f, SE %.4f)\n", sfd / ncl, ofd / ncl,
         m, se);
  CHECK(fabs(m) <= fmax(0.05, 3 * se), "false drains stated %.4f observed %.4f", sfd / ncl, ofd / ncl);
  mean_se(dmiss, ncl, &m, &se);
  printf("  misses per cluster:       stated %.4f, observed %.4f (difference %.4f, SE %.4f)\n", smiss / ncl,
         omiss / ncl, m, se);
  CHECK(fabs(m) <= fmax(0.05, 3 * se), "misses stated %.4f observed %.4f", smiss / ncl, omiss / ncl);
  free(dfd), free(dmiss), free(obs), free(r);
}

static const config configs[] = {
    {"healthy", 2, 0, 0, 0, NZ_T3, 1, 0},
    {"healthy", 3, 0, 0, 0, NZ_T3, 0, 0},
    {"healthy", 4, 0, 0, 0, NZ_T3, 0, 0},
    {"healthy", 8, 0, 0, 0, NZ_T3, 0, 0},
    {"healthy", 16, 0, 0, 0, NZ_T3, 0, 0},
    {"healthy", 4, 0, 0, 0, NZ_GAUSS, 0, 0},
    {"healthy", 16, 0, 0, 0, NZ_GAUSS, 0, 0},
    {"healthy", 4, 0, 0, 0, NZ_BIMODAL, 0, 0},
    {"healthy", 16, 0, 0, 0, NZ_BIMODAL, 0, 0},
    {"healthy", 8, 0, 0, 0, NZ_DRIFT, 0, 0},
    {"healthy", 16, 0, 0, 0, NZ_DRIFT, 0, 0},
    {"1 at 5 %", 4, 1, 0.05, 0, NZ_T3, 0, 0},
    {"1 at 5 %", 16, 1, 0.05, 0, NZ_T3, 0, 0},
    {"1 at 8 %", 4, 1, 0.08, 0, NZ_T3, 0, 0},
    {"1 at 8 %", 16, 1, 0.08, 0, NZ_T3, 0, 0},
    {"1 at 20 %", 2, 1, 0.20, 0, NZ_T3, 1, 0},
    {"1 at 20 %", 3, 1, 0.20, 0, NZ_T3, 0, 0},
    {"1 at 20 %", 4, 1, 0.20, 0, NZ_T3, 0, 0},
    {"1 at 20 %", 8, 1, 0.20, 0, NZ_T3, 0, 0},
    {"1 at 20 %", 16, 1, 0.20, 0, NZ_T3, 0, 0},
    {"1 at 20 %", 8, 1, 0.20, 0, NZ_GAUSS, 0, 0},
    {"1 at 20 %", 8, 1, 0.20, 0, NZ_BIMODAL, 0, 0},
    {"1 at 20 %", 8, 1, 0.20, 0, NZ_DRIFT, 0, 0},
    {"1 at 50 %", 3, 1, 0.50, 0, NZ_T3, 0, 0},
    {"1 at 50 %", 16, 1, 0.50, 0, NZ_T3, 0, 0},
    {"2 of 8 at 20 %", 8, 2, 0.20, 0, NZ_T3, 0, 0},
    {"4 of 16 at 20 %", 16, 4, 0.20, 0, NZ_T3, 0, 0},
    {"bad path 30 %", 4, 0, 0, 1, NZ_T3, 0, 0},
    {"bad path 30 %", 8, 0, 0, 1, NZ_T3, 0, 0},
    {"bad path 30 %", 16, 0, 0, 1, NZ_T3, 0, 0},
    {"2 of 4 at 20 %", 4, 2, 0.20, 0, NZ_T3, 0, 1},
    {"2 of 5 at 20 %", 5, 2, 0.20, 0, NZ_T3, 0, 1},
    {"2 of 6 at 20 %", 6, 2, 0.20, 0, NZ_T3, 0, 0},
    {"3 of 5 at 20 %", 5, 3, 0.20, 0, NZ_T3, 0, 0},
    {"3 of 6 at 20 %", 6, 3, 0.20, 0, NZ_T3, 0, 0},
    {"3 of 4 at 20 %", 4, 3, 0.20, 0, NZ_T3, 1, 0},
};

/* (c), (e): fixed configurations, noise scale 2 %. */
static void fixed(int nc) {
  pm_obs *obs = malloc(sizeof *obs * MAXOBS);
  pm_result *r = malloc(sizeof *r);
  double *dfd = malloc(sizeof *dfd * (size_t)nc), *dmiss = malloc(sizeof *dmiss * (size_t)nc);
  double *dtoday = malloc(sizeof *dtoday * (size_t)nc);
  printf("fixed configurations: %d clusters each, noise scale 2 %%, %d iterations a pair, one tournament pass, "
         "prior 0.01, threshold 0.5; today: accept_localize on the same pairs\n"
         "  %-16s %3s %-8s %-3s %7s %8s %8s %8s %8s %8s %8s %s\n",
         nc, ITERS, "fault", "N", "noise", "bl", "cannot", "FD stat", "FD obs", "miss st", "miss obs", "FD today",
         "ms today", "");
  for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
    const config *cf = &configs[c];
    pm_opts o = base_opts();
    if (cf->baseline) o.have_baseline = 1, o.baseline_log = 0, o.baseline_sd = 0.02, o.baseline_runs = 5;
    double sfd = 0, ofd = 0, smiss = 0, omiss = 0, today_fd = 0, today_miss = 0;
    int cannot = 0, named = 0;
    for (int k = 0; k < nc; k++) {
      truth t;
      memset(&t, 0, sizeof t);
      t.n = cf->n;
      t.mu = cf->baseline ? 0.02 * gauss() : 3.0;
      for (int i = 0; i < cf->nbad; i++) t.d[cf->n - 1 - i] = cf->dbad; /* the last nodes: not 0-1 */
      if (cf->badpath) t.dpath[0][1] = t.dpath[1][0] = 0.30;
      int nobs = measure(&t, cf->noise, 0.02, obs);
      outcome oc = judge(&t, obs, nobs, &o, r);
      dfd[k] = oc.fd_obs - oc.fd_stated, dmiss[k] = oc.miss_obs - oc.miss_stated;
      double tfd = 0, tmiss = 0;
      today(&t, obs, nobs, o.bad_pct, &tfd, &tmiss);
      dtoday[k] = oc.fd_obs + oc.miss_obs - tfd - tmiss;
      today_fd += tfd, today_miss += tmiss;
      sfd += oc.fd_stated, ofd += oc.fd_obs, smiss += oc.miss_stated, omiss += oc.miss_obs;
      cannot += oc.cannot_tell, named += oc.all_named;
    }
    double mfd, sefd, mmiss, semiss, mt, set;
    mean_se(dfd, nc, &mfd, &sefd);
    mean_se(dmiss, nc, &mmiss, &semiss);
    mean_se(dtoday, nc, &mt, &set);
    int okfd = mfd <= fmax(0.05, 3 * sefd), okmiss = mmiss <= fmax(0.05, 3 * semiss);
    int oktoday = mt <= fmax(0.05, 3 * set);
    printf("  %-16s %3d %-8s %-3s %7.2f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %s%s\n", cf->name, cf->n,
           noise_name[cf->noise], cf->baseline ? "yes" : "no", (double)cannot / nc, sfd / nc, ofd / nc, smiss / nc,
           omiss / nc, today_fd / nc, today_miss / nc, okfd && okmiss ? "" : "OPTIMISTIC ",
           oktoday ? "" : "WORSE THAN TODAY");
    /* (d) never worse than today: false drains + misses per cluster at most today's + max(0.05, 3 SE) */
    CHECK(oktoday, "%s N=%d %s: wrong nodes %.3f, today %.3f", cf->name, cf->n, noise_name[cf->noise],
          (ofd + omiss) / nc, (today_fd + today_miss) / nc);
    CHECK(okfd, "%s N=%d %s: false drains observed %.3f stated %.3f", cf->name, cf->n, noise_name[cf->noise],
          ofd / nc, sfd / nc);
    CHECK(okmiss, "%s N=%d %s: misses observed %.3f stated %.3f", cf->name, cf->n, noise_name[cf->noise],
          omiss / nc, smiss / nc);
    /* 95 %: at seed 20261207, 1 cluster of 50 at 2 of 4 keeps a slow node whose pair with a healthy one drew
     * 3 of 5 iterations 5 scales high (the t noise here is heavy upwards too; the model's is not) */
    if (cf->named) CHECK(named >= 0.95 * nc, "%s: both slow hosts named in %d of %d clusters", cf->name, named, nc);
    if (cf->named) printf("  (e) %s: every slow host named in %d of %d clusters\n", cf->name, named, nc);
    if (cf->n == 2 && !cf->baseline) CHECK(cannot == nc, "2 nodes without a baseline: cannot tell");
  }
  free(obs), free(r), free(dfd), free(dmiss), free(dtoday);
}

/* Small groups: 2 nodes without a baseline cannot separate their ends; 3 at one level cannot tell; a node at a
 * seventh of 3 peers is named. */
static void two_nodes(void) {
  pm_obs obs[3] = {{0, 1, 0, 2.0}, {0, 1, 0, 2.01}, {0, 1, 0, 1.99}};
  pm_opts o = pm_opts_default();
  pm_result r;
  CHECK(pm_judge(2, obs, 3, &o, &r) == PM_CANNOT_TELL, "2 nodes without a baseline: %s", pm_state_str(r.state));
  o.have_baseline = 1, o.baseline_log = 2.0 - log(7.0), o.baseline_sd = 0.01, o.baseline_runs = 5;
  CHECK(pm_judge(2, obs, 3, &o, &r) == PM_OK, "with a baseline 7x lower: %s", r.why);
  CHECK(r.ndrain == 0, "nobody slow against the baseline: %d drained", r.ndrain);
  o.baseline_log = 2.0 + log(7.0);
  CHECK(pm_judge(2, obs, 3, &o, &r) == PM_OK && r.p_node[0] + r.p_node[1] > 0.9,
        "a pair at a seventh of its baseline: one end or the path is bad (P %.3f, %.3f)", r.p_node[0], r.p_node[1]);
  /* 3 nodes, every pair at one level, no baseline: all healthy and 2 of 3 slow look alike */
  pm_obs three[9];
  const int ends[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int k = 0; k < 9; k++)
    three[k] = (pm_obs){ends[k / 3][0], ends[k / 3][1], k / 3, 2.0 + 0.01 * (k % 3 - 1)};
  pm_opts o3 = pm_opts_default();
  CHECK(pm_judge(3, three, 9, &o3, &r) == PM_CANNOT_TELL, "3 nodes at one level: %s", pm_state_str(r.state));
  /* 4 nodes, node 3 at a seventh of its peers, no baseline: named, state ok */
  pm_obs four[18];
  const int e4[6][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}, {0, 3}, {1, 2}};
  for (int k = 0; k < 18; k++) {
    int a = e4[k / 3][0], b = e4[k / 3][1];
    four[k] = (pm_obs){a, b, k / 6, 3.0 + 0.01 * (k % 3 - 1) - (b == 3 ? log(7.0) : 0)};
  }
  CHECK(pm_judge(4, four, 18, &o3, &r) == PM_OK && r.ndrain == 1 && r.drain[0] == 3 && r.p_node[3] > 0.99,
        "a node at a seventh of 3 peers: %s, %d drained, P %.3f", pm_state_str(r.state), r.ndrain, r.p_node[3]);
  /* A pair 7 % slow between 2 nodes, a baseline, prior 0.15: most likely both good, one of them a little slow.
   * The one-level approximation charges both ends for it (P(bad) 0.19 each); the exact sum (good_levels_exact)
   * does not (0.007). */
  pm_obs seven[5];
  const double z[5] = {0.3, -0.5, 1.2, -0.1, 0.4};
  for (int k = 0; k < 5; k++) seven[k] = (pm_obs){0, 1, 0, log(0.93) + 0.02 * z[k]};
  pm_opts o7 = pm_opts_default();
  o7.have_baseline = 1, o7.baseline_log = 0, o7.baseline_sd = 0.02, o7.baseline_runs = 5, o7.prior = 0.15;
  pm_judge(2, seven, 5, &o7, &r);
  double approx = r.p_node[0];
  o7.good_levels_exact = 1;
  CHECK(pm_judge(2, seven, 5, &o7, &r) == PM_OK && approx > 0.1 && r.p_node[0] < 0.05 && r.p_node[1] < 0.05,
        "a pair 7 %% slow of 2: P(bad) %.4f approximated, %.4f and %.4f exact", approx, r.p_node[0], r.p_node[1]);
  pm_obs bad = {0, 0, 0, 1.0};
  CHECK(pm_judge(2, &bad, 1, &o, &r) == PM_BAD_INPUT, "a node paired with itself is bad input");
}

/* PM_SCALE_DIFF_MEDIAN: the median |x - y| of the unit noise, by simulation (1e6 pairs: +-0.003). */
static void scale_constant(void) {
  enum { M = 1000000 };
  double *d = malloc(sizeof *d * M);
  uint64_t keep = rng;
  for (int i = 0; i < M; i++) d[i] = fabs(noise(NZ_MODEL) - noise(NZ_MODEL));
  rng = keep;
  int lo = 0;
  for (int i = 0; i < M; i++) lo += d[i] < PM_SCALE_DIFF_MEDIAN;
  CHECK(fabs((double)lo / M - 0.5) < 0.002, "P(|x - y| < %.4f) = %.4f, not 0.5", PM_SCALE_DIFF_MEDIAN,
        (double)lo / M);
  free(d);
}

int main(void) {
  int nc = getenv("PM_SIM_CLUSTERS") ? atoi(getenv("PM_SIM_CLUSTERS")) : 50;
  if (nc < 10) nc = 10;
  scale_constant();
  two_nodes();
  calibration(nc);
  fixed(nc);
  return check_summary();
}
