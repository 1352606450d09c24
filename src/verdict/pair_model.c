/* pair_model.c: the posterior of pair_model.h: the run's noise scale from its repeats, the round offsets, the
 * healthy level, and the exact sum over the good/bad states of up to PM_MAX_NODES nodes. Pure arithmetic: no
 * MPI, no I/O, no printing; its only allocations are freed before pm_judge returns.
 *
 * Layout of the work. Every pair's iterations are read once into tables over (healthy level m, node level):
 * llg/llb (the pair at each good or bad level, averaged over the level's bin), tgg (both ends good, at the lower
 * of their best good levels, or a bad path), tmix[k] (one end bad at level k: it limits the pair; the path may
 * limit it further), ell (a pair between two bad ends, summed in bb_pair from the ends' posteriors). A state's
 * log likelihood at level m is then a sum of table entries: all pairs good-good, corrected for the pairs that
 * touch a bad node (with good_levels_exact: zg, the good nodes' exact sum, one entry per set of good nodes), plus
 * for each bad node the sum over its levels of its mixed pairs, plus the bad-bad pairs.
 * States are visited by number of bad nodes, 0, 1, 2, ..., and the visit stops once a whole number carries a
 * negligible and falling share of the mass. */
#include "pair_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPAIR_MAX (PM_MAX_NODES * (PM_MAX_NODES - 1) / 2)
#define KB 16 /* levels of a bad node or path: d log-uniform on (bad_pct, PM_BAD_MAX) */
#define KG 9  /* levels of a good node: d = 0 (0.8), or uniform on (0, bad_pct) in 8 steps */
#define NMU 9
#define KNORM 2.6136636604911 /* sqrt(pi/2) + sqrt(3) pi / 4: the noise density's normaliser */

pm_opts pm_opts_default(void) {
  pm_opts o;
  memset(&o, 0, sizeof o);
  o.bad_pct = 0.10;
  o.prior = 0.01;
  o.path_prior = 0.001;
  o.drain_threshold = 0.5;
  o.grey_lo = 0.05;
  o.grey_hi = 0.95;
  o.baseline_cv = 0.05;
  o.scale_floor = 0.002;
  o.scale_default = 0.03;
  return o;
}

const char *pm_state_str(pm_state s) {
  switch (s) {
  case PM_OK: return "ok";
  case PM_CANNOT_TELL: return "cannot tell: every pair at one level";
  case PM_BAD_INPUT: return "bad input";
  }
  return "?";
}

/* The noise's constants for one scale, so that the inner loop takes one log and at most one exp. */
typedef struct {
  double inv_s, core0, wide0, inv_sc;
} noise_k;

static noise_k noise_k_of(double s) {
  noise_k k;
  k.inv_s = 1 / s;
  k.inv_sc = 1 / (PM_OUTLIER_SCALE * s);
  k.core0 = log1p(-PM_OUTLIER_FRAC) - log(KNORM * s);
  k.wide0 = log(PM_OUTLIER_FRAC) + log(0.36755259694786 / (PM_OUTLIER_SCALE * s)); /* t(3) at 0 */
  return k;
}

static double noise_k_ll(const noise_k *k, double x) {
  double z = x * k->inv_s, zc = x * k->inv_sc;
  double core = k->core0 + (z >= 0 ? -0.5 * z * z : -2.0 * log1p(z * z / 3.0));
  double wide = k->wide0 - 2.0 * log1p(zc * zc / 3.0);
  return core > wide ? core + log1p(exp(wide - core)) : wide + log1p(exp(core - wide));
}

double pm_noise_logpdf(double x, double s) {
  noise_k k = noise_k_of(s);
  return noise_k_ll(&k, x);
}

static double noise_ll(const noise_k *k, double x, int gauss) {
  if (gauss) return -0.5 * (x * k->inv_s) * (x * k->inv_s) + log(0.3989422804014327 * k->inv_s);
  return noise_k_ll(k, x);
}

static double lse2(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

static double lse(const double *v, int n) {
  double mx = -INFINITY, s = 0;
  for (int i = 0; i < n; i++)
    if (v[i] > mx) mx = v[i];
  if (mx == -INFINITY) return mx;
  for (int i = 0; i < n; i++) s += exp(v[i] - mx);
  return mx + log(s);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) { /* sorts v */
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The work of one call: grids, tables and the nodes' pair lists. */
typedef struct {
  int n, npair;
  int pa[NPAIR_MAX], pb[NPAIR_MAX], pidx[PM_MAX_NODES][PM_MAX_NODES];
  int adj[PM_MAX_NODES][PM_MAX_NODES], nadj[PM_MAX_NODES]; /* pair indices of each node */
  double ab[KB], db[KB], lwb;          /* bad levels (log), degradations, log weight (equal) */
  double ag[KG], lwg[KG];              /* good levels, log weights */
  double mu[NMU], lwmu[NMU];
  double tgg[NPAIR_MAX][NMU], tmix[NPAIR_MAX][NMU][KB];
  double qgg[NPAIR_MAX][NMU], qmix[NPAIR_MAX][NMU][KB]; /* P(path bad | ...) */
  double ell[NPAIR_MAX][NMU][KB], lmx[NPAIR_MAX][NMU]; /* the pair at bad level k: exp(ll - lmx), lmx */
  double rho;                                          /* path_prior */
  double llg[NPAIR_MAX][NMU][KG], llb[NPAIR_MAX][NMU][KB]; /* the pair's log likelihood at each level */
  double gsum[NMU];                    /* sum over all pairs of tgg */
  double ngg[PM_MAX_NODES][NMU];       /* node: sum of tgg over its pairs */
  double nmix[PM_MAX_NODES][NMU][KB];  /* node: sum of tmix over its pairs */
  double lprior_bad, lprior_good;
  double *zg; /* good_levels_exact: zg[m << n | G], G's good part exactly (good_levels_sum); NULL: gsum, ngg */
} work;

/* One pair with both ends bad (i, j): the sum over its level, the lower of the two ends' levels (and the path's),
 * each end's level weighted by its posterior from its pairs with good nodes (pi, pj: the prior for a node that
 * has none). Exact for two bad nodes; with more, the pairs among them are taken as independent given those
 * posteriors. *q: P(path bad | this state). */
static double bb_pair(const work *w, int p, int m, const double *pi, const double *pj, double *q) {
  double ci = 0, cj = 0, cw = 0, prev2 = 0, prev3 = 0, s2 = 0, s3 = 0;
  for (int k = 0; k < KB; k++) { /* level index k: higher k, lower level; the pair shows the highest index */
    ci += pi[k], cj += pj[k], cw += 1.0 / KB;
    double c2 = ci * cj, c3 = c2 * cw;
    s2 += (c2 - prev2) * w->ell[p][m][k];
    s3 += (c3 - prev3) * w->ell[p][m][k];
    prev2 = c2, prev3 = c3;
  }
  double t = (1 - w->rho) * s2 + w->rho * s3;
  if (t < 1e-300) t = 1e-300;
  if (q) *q = w->rho * s3 / t;
  return w->lmx[p][m] + log(t);
}

/* The log likelihood of the state `bad` (bit i: node i bad) at healthy level m; with post != NULL, also each
 * bad node's posterior over its levels (post[i][k]), and with qbb != NULL P(path bad) of each pair between bad
 * nodes (qbb[p]). */
static double state_ll(const work *w, unsigned bad, int m, double post[PM_MAX_NODES][KB], double *qbb) {
  double l, pl[PM_MAX_NODES][KB];
  int bl[PM_MAX_NODES], nb = 0;
  if (!post) post = pl;
  for (int i = 0; i < w->n; i++)
    if (bad >> i & 1u) bl[nb++] = i;
  if (w->zg) {
    l = w->zg[((size_t)m << w->n) | (~bad & ((1u << w->n) - 1))]; /* the good nodes and their pairs */
  } else {
    l = w->gsum[m];
    for (int x = 0; x < nb; x++) {
      int i = bl[x];
      l -= w->ngg[i][m];
      for (int y = x + 1; y < nb; y++) {
        int p = w->pidx[i][bl[y]];
        if (p >= 0) l += w->tgg[p][m]; /* taken twice above */
      }
    }
  }
  for (int x = 0; x < nb; x++) {
    int i = bl[x];
    double acc[KB];
    for (int k = 0; k < KB; k++) acc[k] = w->lwb + w->nmix[i][m][k];
    for (int y = 0; y < nb; y++) {
      int p = y == x ? -1 : w->pidx[i][bl[y]];
      if (p < 0) continue;
      for (int k = 0; k < KB; k++) acc[k] -= w->tmix[p][m][k];
    }
    double z = lse(acc, KB);
    l += z;
    if (post != pl || nb > 1) /* wanted by the caller, or by the pairs between bad nodes below */
      for (int k = 0; k < KB; k++) post[i][k] = exp(acc[k] - z);
  }
  for (int x = 0; x < nb; x++)
    for (int y = x + 1; y < nb; y++) {
      int p = w->pidx[bl[x]][bl[y]];
      if (p >= 0) l += bb_pair(w, p, m, post[bl[x]], post[bl[y]], qbb ? &qbb[p] : NULL);
    }
  return l;
}

static double state_lw(const work *w, unsigned bad, int nb) {
  double v[NMU];
  for (int m = 0; m < NMU; m++) v[m] = w->lwmu[m] + state_ll(w, bad, m, NULL, NULL);
  return nb * w->lprior_bad + (w->n - nb) * w->lprior_good + lse(v, NMU);
}

/* lse2 that skips the exp and the log where the smaller term is under 1e-17 of the larger. */
static double lse2_fast(double a, double b) {
  double d = b - a;
  if (d < -40 || b == -INFINITY) return a;
  if (d > 40 || a == -INFINITY) return b;
  return d < 0 ? a + log1p(exp(d)) : b + log1p(exp(-d));
}

/* The good nodes' part of every state, exactly: for every set G of nodes and every healthy level m, the log of
 * the sum over the good levels g_i of the nodes in G (prior weights lwg) of the product over the measured pairs
 * inside G of f_p(max(g_a, g_b)) (the slower end's level; f_p: the pair at that level, or a bad path), into
 * w->zg[m << n | G]. The sum runs over the levels from the healthiest to the slowest: S_t, the nodes at level t
 * or better, grows from S_(t-1) by the nodes at level t, and the pairs inside S_t but not inside S_(t-1) are the
 * ones whose slower end sits at t. So D_t(S) = F_t(S) w_t^|S| sum over S' in S of D_(t-1)(S') / (F_t(S')
 * w_t^|S'|), F_t(S) the product of f_p(t) over the pairs inside S, and the sum over subsets is a zeta transform:
 * n 2^n steps a level. Returns 0, or -1 out of memory. */
static int good_levels_sum(work *w, double lrho, double l1rho) {
  int n = w->n;
  size_t ns = (size_t)1 << n;
  double *lf = malloc(sizeof *lf * ns), *g = malloc(sizeof *g * ns);
  w->zg = malloc(sizeof *w->zg * ns * NMU);
  if (!lf || !g || !w->zg) {
    free(lf), free(g);
    return -1;
  }
  for (int m = 0; m < NMU; m++) {
    double *D = w->zg + ((size_t)m << n), path[NPAIR_MAX], f[PM_MAX_NODES][PM_MAX_NODES];
    for (size_t S = 0; S < ns; S++) D[S] = S ? -INFINITY : 0;
    for (int p = 0; p < w->npair; p++) {
      double v[KB];
      for (int k = 0; k < KB; k++) v[k] = w->lwb + w->llb[p][m][k];
      path[p] = lrho + lse(v, KB); /* a bad path is slower than any good level */
    }
    for (int t = 0; t < KG; t++) {
      memset(f, 0, sizeof f);
      for (int p = 0; p < w->npair; p++)
        f[w->pa[p]][w->pb[p]] = f[w->pb[p]][w->pa[p]] = lse2(l1rho + w->llg[p][m][t], path[p]);
      lf[0] = 0;
      for (size_t S = 1; S < ns; S++) {
        int i = __builtin_ctz((unsigned)S);
        size_t R = S & (S - 1);
        double acc = lf[R];
        for (size_t b = R; b; b &= b - 1) acc += f[i][__builtin_ctz((unsigned)b)];
        lf[S] = acc;
      }
      for (size_t S = 0; S < ns; S++)
        g[S] = D[S] == -INFINITY ? -INFINITY : D[S] - lf[S] - __builtin_popcount((unsigned)S) * w->lwg[t];
      for (int i = 0; i < n; i++)
        for (size_t S = 0; S < ns; S++)
          if (S >> i & 1u) g[S] = lse2_fast(g[S], g[S ^ ((size_t)1 << i)]);
      for (size_t S = 0; S < ns; S++)
        D[S] = g[S] == -INFINITY ? -INFINITY : lf[S] + __builtin_popcount((unsigned)S) * w->lwg[t] + g[S];
    }
  }
  free(lf), free(g);
  return 0;
}

static pm_state bad_input(pm_result *r, const char *why) {
  r->state = PM_BAD_INPUT;
  snprintf(r->why, sizeof r->why, "%s", why);
  return r->state;
}

static int ok_frac(double x, double lo, double hi) { return isfinite(x) && x > lo && x < hi; }

static double logit(double p) {
  p = p < 1e-12 ? 1e-12 : p > 1 - 1e-12 ? 1 - 1e-12 : p;
  return log(p / (1 - p));
}

/* The iterations' y after offsets, grouped by pair; the scale; the levels. Returns 0, or -1 out of memory. */
static int read_pairs(work *w, const pm_obs *obs, int nobs, const pm_opts *o, pm_result *r, double **yp,
                      int *ystart, int *ycount) {
  /* round ids -> dense */
  int *rid = malloc(sizeof *rid * (size_t)nobs);
  double *off = NULL, *tmp = malloc(sizeof *tmp * (size_t)nobs);
  double *y = malloc(sizeof *y * (size_t)nobs);
  int *order = malloc(sizeof *order * (size_t)nobs);
  int nround = 0, rc = -1;
  if (!rid || !tmp || !y || !order) goto out;
  {
    int *ids = malloc(sizeof *ids * (size_t)nobs);
    if (!ids) goto out;
    for (int k = 0; k < nobs; k++) {
      int f = -1;
      for (int q = 0; q < nround && f < 0; q++)
        if (ids[q] == obs[k].round) f = q;
      if (f < 0) ids[f = nround++] = obs[k].round;
      rid[k] = f;
    }
    free(ids);
  }
  off = calloc((size_t)nround, sizeof *off);
  if (!off) goto out;
  /* Round offsets: a round with 4 pairs or more is set at its second-highest pair median (the healthy pairs'
   * level in that round: bad ends and paths pull pairs down, never up; the second, so that one pair's luck does
   * not move the round), relative to the median of those levels over the rounds. */
  {
    double *lvl = malloc(sizeof *lvl * (size_t)nround);
    int nl = 0;
    if (!lvl) goto out;
    for (int q = 0; q < nround; q++) {
      int np = 0;
      double pm[NPAIR_MAX];
      for (int p = 0; p < w->npair; p++) {
        int c = 0;
        for (int k = 0; k < nobs; k++)
          if (rid[k] == q && w->pidx[obs[k].a][obs[k].b] == p) tmp[c++] = obs[k].y;
        if (c) pm[np++] = median(tmp, c);
      }
      lvl[q] = NAN;
      if (o->round_offsets && np >= 4) {
        qsort(pm, (size_t)np, sizeof *pm, cmp_double);
        lvl[q] = pm[np - 2];
        nl++;
      }
    }
    nl = 0;
    for (int q = 0; q < nround; q++)
      if (!isnan(lvl[q])) tmp[nl++] = lvl[q];
    double ref = nl ? median(tmp, nl) : 0;
    for (int q = 0; q < nround; q++) off[q] = isnan(lvl[q]) ? 0 : lvl[q] - ref;
    free(lvl);
  }
  /* y grouped by pair */
  {
    int pos = 0;
    for (int p = 0; p < w->npair; p++) {
      ystart[p] = pos;
      for (int k = 0; k < nobs; k++)
        if (w->pidx[obs[k].a][obs[k].b] == p) {
          order[pos] = k;
          y[pos++] = obs[k].y - off[rid[k]];
        }
      ycount[p] = pos - ystart[p];
    }
  }
  /* scale: median |difference| of repeats of a pair within a round, over every pair, or over the pairs at or above
   * the median pair level (the likeliest healthy) when that is larger: a slow link that a rate limit holds is
   * steadier than a healthy one, and with its repeats pooled in, one host's tbf-shaped link (3 of 6 pairs at 0.012
   * GB/s, every repeat alike) made the scale 2.3 % where the healthy pairs' repeats spread 20 %, and a healthy node
   * looked slow beside it. Never the smaller of the two: in a healthy cluster under load the slower pairs are the
   * noisier, and the upper half alone would make the model surer than the run is. */
  {
    int *use = calloc((size_t)w->npair + 1, sizeof *use);
    double *pl = malloc(((size_t)w->npair + 1) * sizeof *pl), *pl2 = malloc(((size_t)w->npair + 1) * sizeof *pl2);
    long nd = 0;
    for (int p = 0; p < w->npair; p++)
      for (int u = ystart[p]; u < ystart[p] + ycount[p]; u++)
        for (int v = u + 1; v < ystart[p] + ycount[p]; v++)
          if (rid[order[u]] == rid[order[v]]) nd++;
    double *d = malloc(sizeof *d * ((size_t)nd + 1));
    if (!use || !pl || !pl2 || !d) {
      free(use), free(pl), free(pl2), free(d);
      goto out;
    }
    int npl = 0;
    for (int p = 0; p < w->npair; p++) {
      pl[p] = NAN;
      if (!ycount[p]) continue;
      for (int u = 0; u < ycount[p]; u++) tmp[u] = y[ystart[p] + u];
      pl[p] = median(tmp, ycount[p]);
      pl2[npl++] = pl[p];
    }
    double mid = npl ? median(pl2, npl) : 0, md = 0;
    for (int p = 0; p < w->npair; p++) use[p] = ycount[p] > 0 && !(pl[p] < mid);
    for (int upper = 0; upper < 2; upper++) { /* every pair, then the upper half */
      long c = 0;
      for (int p = 0; p < w->npair; p++)
        for (int u = ystart[p]; (!upper || use[p]) && u < ystart[p] + ycount[p]; u++)
          for (int v = u + 1; v < ystart[p] + ycount[p]; v++)
            if (rid[order[u]] == rid[order[v]]) d[c++] = fabs(y[u] - y[v]);
      if (!c) continue;
      qsort(d, (size_t)c, sizeof *d, cmp_double);
      double m = c % 2 ? d[c / 2] : 0.5 * (d[c / 2 - 1] + d[c / 2]);
      if (m > md) md = m;
    }
    free(use), free(pl), free(pl2), free(d);
    r->scale_diffs = nd;
    r->scale_from_repeats = 0;
    if (o->scale > 0) {
      r->scale = o->scale;
    } else if (nd == 0) {
      r->scale = o->scale_default;
    } else {
      r->scale = md / (o->gauss_likelihood ? 0.9538725524 : PM_SCALE_DIFF_MEDIAN); /* Gaussian: sqrt(2) 0.6745 */
      r->scale_from_repeats = 1;
    }
    if (r->scale < o->scale_floor) r->scale = o->scale_floor;
  }
  *yp = y;
  y = NULL;
  rc = 0;
out:
  free(rid);
  free(off);
  free(tmp);
  free(y);
  free(order);
  return rc;
}

pm_state pm_judge(int n, const pm_obs *obs, int nobs, const pm_opts *o, pm_result *r) {
  memset(r, 0, sizeof *r);
  r->n = n;
  if (n < 2 || n > PM_MAX_NODES) return bad_input(r, "nodes: 2 to 16 for the exact posterior");
  if (!obs || nobs <= 0) return bad_input(r, "no pair measurement");
  if (!ok_frac(o->bad_pct, 0, 0.9)) return bad_input(r, "bad_pct: a fraction in (0, 0.9)");
  if (!(o->prior < 0 || ok_frac(o->prior, 0, 1))) return bad_input(r, "prior: a fraction in (0, 1)");
  if (!ok_frac(o->path_prior, 0, 1)) return bad_input(r, "path_prior: a fraction in (0, 1)");
  if (!ok_frac(o->drain_threshold, 0, 1)) return bad_input(r, "drain_threshold: a fraction in (0, 1)");
  if (!(o->grey_lo >= 0 && o->grey_lo < o->grey_hi && o->grey_hi <= 1)) return bad_input(r, "grey zone");
  if (!(o->iter_weight >= 0 && o->iter_weight <= 1)) return bad_input(r, "iter_weight: in (0, 1], or 0 for 1");
  if (!(isfinite(o->scale) && o->scale >= 0 && o->scale_floor > 0 && o->scale_default > 0))
    return bad_input(r, "scale");
  if (o->have_baseline &&
      !(isfinite(o->baseline_log) && isfinite(o->baseline_sd) && o->baseline_sd >= 0 && o->baseline_runs >= 1 &&
        o->baseline_cv >= 0))
    return bad_input(r, "baseline: a finite level, a spread >= 0 and 1 run or more");
  for (int k = 0; k < nobs; k++) {
    if (obs[k].a < 0 || obs[k].a >= n || obs[k].b < 0 || obs[k].b >= n || obs[k].a == obs[k].b)
      return bad_input(r, "pair: a node index out of range, or a node paired with itself");
    if (!isfinite(obs[k].y)) return bad_input(r, "pair: a log busbw that is not a finite number");
  }

  work *w = calloc(1, sizeof *w);
  double *y = NULL, *lw = NULL;
  unsigned *masks = NULL;
  int ystart[NPAIR_MAX], ycount[NPAIR_MAX];
  if (!w) return bad_input(r, "out of memory");
  w->n = n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) w->pidx[i][j] = -1;
  for (int k = 0; k < nobs; k++) {
    int a = obs[k].a < obs[k].b ? obs[k].a : obs[k].b, b = obs[k].a ^ obs[k].b ^ a;
    if (w->pidx[a][b] < 0) {
      int p = w->npair++;
      w->pa[p] = a;
      w->pb[p] = b;
      w->pidx[a][b] = w->pidx[b][a] = p;
      w->adj[a][w->nadj[a]++] = p;
      w->adj[b][w->nadj[b]++] = p;
    }
  }
  if (read_pairs(w, obs, nobs, o, r, &y, ystart, ycount) != 0) {
    free(w);
    return bad_input(r, "out of memory");
  }
  double s = r->scale;

  /* levels */
  for (int k = 0; k < KB; k++) {
    w->db[k] = o->bad_pct * pow(PM_BAD_MAX / o->bad_pct, (k + 0.5) / KB);
    w->ab[k] = log1p(-w->db[k]);
  }
  w->lwb = -log((double)KB);
  w->ag[0] = 0;
  w->lwg[0] = log(0.8);
  for (int g = 1; g < KG; g++) {
    w->ag[g] = log1p(-o->bad_pct * (g - 0.5) / (KG - 1));
    w->lwg[g] = log(0.2 / (KG - 1));
  }
  double prior = o->prior < 0 ? 0.01 : o->prior; /* TODO: estimate from the run when n >= 64 */
  r->prior_used = prior;
  w->lprior_bad = log(prior);
  w->lprior_good = log1p(-prior);

  /* healthy level grid */
  if (o->have_baseline) {
    double sd = o->baseline_sd;
    if (o->baseline_runs < 3 && sd < log1p(o->baseline_cv)) sd = log1p(o->baseline_cv);
    if (sd < s / 4) sd = s / 4; /* the grid must be finer than the noise, not the prior */
    for (int m = 0; m < NMU; m++) {
      double z = -3.0 + 6.0 * m / (NMU - 1);
      w->mu[m] = o->baseline_log + z * sd;
      w->lwmu[m] = -0.5 * z * z;
    }
  } else {
    /* Without a baseline the healthy level is the run's top: the highest pair median (noise is light-tailed
     * upwards), on a grid from 2.5 scales below it to 1.5 above. */
    double top = -INFINITY, tmp[512];
    for (int p = 0; p < w->npair; p++) {
      int c = ycount[p] < 512 ? ycount[p] : 512;
      memcpy(tmp, y + ystart[p], sizeof *tmp * (size_t)c);
      double md = median(tmp, c);
      if (md > top) top = md;
    }
    for (int m = 0; m < NMU; m++) {
      w->mu[m] = top + s * (-2.5 + 4.0 * m / (NMU - 1));
      w->lwmu[m] = 0;
    }
  }
  {
    double z = lse(w->lwmu, NMU);
    for (int m = 0; m < NMU; m++) w->lwmu[m] -= z;
  }

  /* tables */
  double lrho = log(o->path_prior), l1rho = log1p(-o->path_prior);
  w->rho = o->path_prior;
  /* Each level stands for a bin of degradations (equal prior mass); its likelihood is the average over the
   * bin, on sub-levels half a scale apart, so that no healthy level is favoured because it puts a slow node
   * on a grid point (the upper tail is light: a pair a little above its level costs much). */
  double dlo[KB + KG], dhi[KB + KG];
  noise_k nk = noise_k_of(s);
  double iw = o->iter_weight > 0 ? o->iter_weight : 1;
  for (int k = 0; k < KB; k++) {
    dlo[k] = o->bad_pct * pow(PM_BAD_MAX / o->bad_pct, (double)k / KB);
    dhi[k] = o->bad_pct * pow(PM_BAD_MAX / o->bad_pct, (k + 1.0) / KB);
  }
  for (int g = 0; g < KG; g++) {
    dlo[KB + g] = g ? o->bad_pct * (g - 1.0) / (KG - 1) : 0;
    dhi[KB + g] = g ? o->bad_pct * (double)g / (KG - 1) : 0;
  }
  for (int p = 0; p < w->npair; p++) {
    double tmp[512];
    int c = ycount[p] < 512 ? ycount[p] : 512;
    memcpy(tmp, y + ystart[p], sizeof *tmp * (size_t)c);
    double ymed = median(tmp, c);
    for (int m = 0; m < NMU; m++)
      for (int q = 0; q < KB + KG; q++) {
        double alo = log1p(-dlo[q]), ahi = log1p(-dhi[q]), at = ymed - w->mu[m];
        /* fine only near the pair's own level: far from it every sub-level is equally unlikely */
        int nsub = at > alo + 6 * s || at < ahi - 6 * s ? 1 : (int)ceil((alo - ahi) / (0.5 * s));
        nsub = nsub < 1 ? 1 : nsub > 256 ? 256 : nsub;
        double acc = -INFINITY;
        for (int j = 0; j < nsub; j++) {
          double d = q < KB ? dlo[q] * pow(dhi[q] / dlo[q], (j + 0.5) / nsub) /* log-uniform in the bin */
                            : dlo[q] + (dhi[q] - dlo[q]) * (j + 0.5) / nsub;     /* uniform; level 0: 0 */
          double a = log1p(-d), l = 0;
          for (int u = 0; u < ycount[p]; u++)
            l += noise_ll(&nk, y[ystart[p] + u] - w->mu[m] - a, o->gauss_likelihood);
          l *= iw;
          acc = lse2(acc, l);
        }
        acc -= log((double)nsub);
        if (q < KB) w->llb[p][m][q] = acc;
        else w->llg[p][m][q - KB] = acc;
      }
  }
  /* A good node's level (at or above the line at bad_pct): the one that explains its pairs best, each pair
   * summed over its partner's level at the prior (cpair); the node pays once the prior weight of the good levels
   * that fit as well as that one (gocc: all of them when the noise is wide, the best one's when it is narrow). A pair between good nodes then sits at the lower of its ends' levels. One level per node, not a
   * sum over them: summing each pair over both ends' levels charged a slightly slow node once per pair, and
   * a sum with the ends independent let the healthy level rise with every node "slightly slow" for free. */
  static const int two = 2;
  double(*cpair)[NMU][KG] = malloc(sizeof *cpair * (size_t)(w->npair ? w->npair : 1));
  double(*cnode)[NMU][KG] = calloc((size_t)n, sizeof *cnode);
  int(*gbest)[NMU] = calloc((size_t)n, sizeof *gbest);
  double(*gocc)[NMU] = calloc((size_t)n, sizeof *gocc);
  if (!cpair || !cnode || !gbest || !gocc) {
    free(cpair), free(cnode), free(gbest), free(gocc), free(w), free(y);
    return bad_input(r, "out of memory");
  }
  for (int p = 0; p < w->npair; p++)
    for (int m = 0; m < NMU; m++) {
      /* partner bad: the pair at the partner's level; partner good at l: at the lower of g and l */
      double v[KB], mx = -INFINITY, wle = 0, suf[KG + 1];
      for (int k = 0; k < KB; k++) v[k] = w->lwb + w->llb[p][m][k];
      double bad = w->lprior_bad + lse(v, KB);
      for (int g = 0; g < KG; g++) mx = w->llg[p][m][g] > mx ? w->llg[p][m][g] : mx;
      suf[KG] = 0;
      for (int l = KG - 1; l >= 0; l--) suf[l] = suf[l + 1] + exp(w->lwg[l] + w->llg[p][m][l] - mx);
      for (int g = 0; g < KG; g++) {
        wle += exp(w->lwg[g]);
        double sg = wle * exp(w->llg[p][m][g] - mx) + suf[g + 1];
        cpair[p][m][g] = lse2(w->lprior_good + mx + log(sg > 1e-300 ? sg : 1e-300), bad);
        for (int e = 0; e < two; e++) cnode[e ? w->pb[p] : w->pa[p]][m][g] += cpair[p][m][g];
      }
    }
  for (int i = 0; i < n; i++)
    for (int m = 0; m < NMU; m++) {
      int best = 0;
      for (int g = 1; g < KG; g++)
        if (w->lwg[g] + cnode[i][m][g] > w->lwg[best] + cnode[i][m][best]) best = g;
      gbest[i][m] = best;
      double v[KG];
      for (int g = 0; g < KG; g++) v[g] = w->lwg[g] + cnode[i][m][g];
      gocc[i][m] = lse(v, KG) - cnode[i][m][best]; /* the good levels' weight that fits as well as the best */
    }
  for (int p = 0; p < w->npair; p++)
    for (int m = 0; m < NMU; m++) {
      double v[KB > KG ? KB : KG];
      int ga = gbest[w->pa[p]][m], gb = gbest[w->pb[p]][m];
      double good = l1rho + w->llg[p][m][ga > gb ? ga : gb];
      for (int k = 0; k < KB; k++) v[k] = w->lwb + w->llb[p][m][k];
      double path = lrho + lse(v, KB);
      w->tgg[p][m] = lse2(good, path);
      w->qgg[p][m] = exp(path - w->tgg[p][m]);
      double mx = -INFINITY;
      for (int k = 0; k < KB; k++) mx = w->llb[p][m][k] > mx ? w->llb[p][m][k] : mx;
      w->lmx[p][m] = mx;
      for (int k = 0; k < KB; k++) w->ell[p][m][k] = exp(w->llb[p][m][k] - mx);
      for (int k = 0; k < KB; k++) {
        for (int q = 0; q < KB; q++) v[q] = w->lwb + w->llb[p][m][q > k ? q : k];
        good = l1rho + w->llb[p][m][k];
        path = lrho + lse(v, KB);
        w->tmix[p][m][k] = lse2(good, path);
        w->qmix[p][m][k] = exp(path - w->tmix[p][m][k]);
      }
    }
  for (int m = 0; m < NMU; m++)
    for (int i = 0; i < n; i++) { /* the good levels' weight, paid by a node while it is good */
      w->gsum[m] += gocc[i][m];
      w->ngg[i][m] += gocc[i][m];
    }
  free(cpair);
  free(cnode);
  free(gbest);
  free(gocc);
  for (int m = 0; m < NMU; m++)
    for (int p = 0; p < w->npair; p++) {
      w->gsum[m] += w->tgg[p][m];
      for (int e = 0; e < 2; e++) {
        int i = e ? w->pb[p] : w->pa[p];
        w->ngg[i][m] += w->tgg[p][m];
        for (int k = 0; k < KB; k++) w->nmix[i][m][k] += w->tmix[p][m][k];
      }
    }

  /* pass 1: every state's log weight, by number of bad nodes, until the levels' mass falls away */
  size_t cap = (size_t)1 << n;
  lw = malloc(sizeof *lw * cap);
  masks = malloc(sizeof *masks * cap);
  if (!lw || !masks || (o->good_levels_exact && n <= PM_EXACT_GOOD_MAX && good_levels_sum(w, lrho, l1rho) != 0)) {
    free(w->zg), free(w), free(y), free(lw), free(masks);
    return bad_input(r, "out of memory");
  }
  long ns = 0;
  double total = -INFINITY, prev_level = -INFINITY;
  r->mass_dropped = 0;
  for (int b = 0; b <= n; b++) {
    double level = -INFINITY;
    unsigned msk = b ? (1u << b) - 1 : 0, lim = 1u << n;
    while (msk < lim) {
      masks[ns] = msk;
      lw[ns] = state_lw(w, msk, b);
      level = lse2(level, lw[ns]);
      ns++;
      if (b == 0) break;
      unsigned c = msk & -msk, rr = msk + c; /* next subset of the same size (Gosper) */
      msk = (((rr ^ msk) >> 2) / c) | rr;
    }
    total = lse2(total, level);
    if (b >= 2 && b < n && level < total + log(1e-12) && level <= prev_level) {
      r->mass_dropped = exp(level - total); /* the last level's share: the ones after it fall away */
      break;
    }
    prev_level = level;
  }
  r->states = ns;

  /* pass 2: the posterior */
  double dsum[PM_MAX_NODES] = {0}, mu_sum = 0;
  for (int p = 0; p < w->npair; p++) r->p_path[w->pa[p]][w->pb[p]] = 0;
  for (long t = 0; t < ns; t++) {
    double ws = exp(lw[t] - total);
    if (ws < 1e-14) continue;
    unsigned msk = masks[t];
    int nb = __builtin_popcount(msk);
    if (2 * nb >= n) r->p_half_bad += ws;
    double lm[NMU];
    for (int m = 0; m < NMU; m++) lm[m] = w->lwmu[m] + state_ll(w, msk, m, NULL, NULL);
    double zm = lse(lm, NMU);
    for (int m = 0; m < NMU; m++) {
      double wm = ws * exp(lm[m] - zm);
      if (wm < 1e-16) continue;
      double post[PM_MAX_NODES][KB], qbb[NPAIR_MAX];
      state_ll(w, msk, m, post, qbb);
      mu_sum += wm * w->mu[m];
      for (int i = 0; i < n; i++)
        if (msk >> i & 1u) {
          r->p_node[i] += wm;
          for (int k = 0; k < KB; k++) dsum[i] += wm * post[i][k] * w->db[k];
        }
      for (int p = 0; p < w->npair; p++) {
        int ea = msk >> w->pa[p] & 1u, eb = msk >> w->pb[p] & 1u;
        double q;
        if (!ea && !eb) q = w->qgg[p][m];
        else if (ea && eb) q = qbb[p];
        else {
          int i = ea ? w->pa[p] : w->pb[p];
          q = 0;
          for (int k = 0; k < KB; k++) q += post[i][k] * w->qmix[p][m][k];
        }
        r->p_path[w->pa[p]][w->pb[p]] += wm * q;
      }
    }
  }
  r->mu = mu_sum;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i < j) r->p_path[j][i] = w->pidx[i][j] >= 0 ? r->p_path[i][j] : -1;
      else if (i == j || w->pidx[i][j] < 0) r->p_path[i][j] = -1;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) r->p_path[i][j] = r->p_path[j][i];

  /* the decision and its error rate */
  double iters = 0;
  for (int p = 0; p < w->npair; p++) iters += ycount[p];
  iters = w->npair ? iters / w->npair * iw : 1;
  for (int i = 0; i < n; i++) {
    double p = r->p_node[i];
    r->d_node[i] = p > 0 ? dsum[i] / p : 0;
    r->exp_bad += p;
    if (p > o->drain_threshold) {
      r->drain[r->ndrain++] = i;
      r->exp_false_drains += 1 - p;
    } else {
      r->exp_misses += p;
    }
    if (p > o->grey_lo && p < o->grey_hi) {
      /* Evidence per further pair with a node that passed: iters * delta^2 / (2 s^2) of log odds, delta the
       * distance of the node's level (if bad) from the line at bad_pct. */
      double delta = fabs(log1p(-r->d_node[i]) - log1p(-o->bad_pct));
      if (delta < s / 4) delta = s / 4;
      double gain = iters * delta * delta / (2 * s * s);
      double need = p > o->drain_threshold ? logit(o->grey_hi) - logit(p) : logit(p) - logit(o->grey_lo);
      double k = ceil(need / gain);
      pm_grey *gz = &r->grey[r->ngrey++];
      gz->node = i;
      gz->p = p;
      gz->pairs_needed = k < 1 ? 1 : k > 99 ? 99 : (int)k;
    }
  }
  r->state = PM_OK;
  if (!o->have_baseline) {
    if (n == 2) {
      r->state = PM_CANNOT_TELL;
      snprintf(r->why, sizeof r->why, "2 nodes: one pair cannot separate its ends, and without a baseline its "
                                      "level is its own reference; needs --baseline (known-good runs)");
    } else if (2 * r->exp_bad >= n || r->p_half_bad >= 0.5) {
      r->state = PM_CANNOT_TELL;
      snprintf(r->why, sizeof r->why, "%.1f of %d nodes look slow: the run's top level may itself be slow; "
                                      "needs --baseline (known-good runs)", r->exp_bad, n);
    } else {
      /* Every pair at one level: all healthy, or all but one node slow alike (then every pair has a slow
       * end); the run cannot tell them apart. */
      int one = 1;
      for (int i = 0; i < n; i++) {
        if (r->p_node[i] > o->grey_lo) one = 0;
        for (int j = i + 1; j < n; j++)
          if (r->p_path[i][j] > o->grey_lo) one = 0;
      }
      if (one) {
        r->state = PM_CANNOT_TELL;
        snprintf(r->why, sizeof r->why, "no node differs from the others, and all healthy looks the same as "
                                        "all but one slow; needs --baseline (known-good runs)");
      }
    }
  }
  free(w->zg);
  free(w);
  free(y);
  free(lw);
  free(masks);
  return r->state;
}
