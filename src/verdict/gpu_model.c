/* gpu_model.c: a GPU's P(bad) against its peers (gpu_model.h). */
#include "gpu_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "pair_model.h"
#include "stats.h"

#define GM_PEER_SD_MIN 0.001 /* ln: the least spread believed of peers that agree to the bit (0.1 %) */
#define GM_BAD_BINS 64    /* a bad GPU's d: bins of equal prior mass, log-uniform on (bad_pct, PM_BAD_MAX) */

static const struct {
  const char *model; /* a model's name starts with it ("cpu (OpenBLAS 0.3.21, 1 threads)"); NULL: every other */
  double time_sd;
} TIME_ROWS[] = {{"cpu", 0.10}, {NULL, 0.05}};

double gm_time_default(const char *model) {
  size_t k = 0;
  while (TIME_ROWS[k].model && (!model || strncmp(TIME_ROWS[k].model, model, strlen(TIME_ROWS[k].model)))) k++;
  return TIME_ROWS[k].time_sd;
}

/* Student t (nu degrees, scale s; Gaussian for nu of GM_NU_GAUSS or more): ln of its density at x is
 * c - w ln(1 + (x/s)^2 / nu), or c - (x/s)^2 / 2 */
typedef struct {
  double s, nu, c, w;
  int gauss;
} t_dist;

static t_dist t_of(double s, double nu) {
  t_dist t = {.s = s, .nu = nu, .gauss = !(nu < GM_NU_GAUSS)};
  if (t.gauss) t.c = -log(2.5066282746310002 * s);
  else t.c = lgamma((nu + 1) / 2) - lgamma(nu / 2) - 0.5 * log(nu * 3.141592653589793) - log(s), t.w = (nu + 1) / 2;
  return t;
}

static double t_ll(const t_dist *t, double x) {
  double z = x / t->s;
  return t->gauss ? t->c - 0.5 * z * z : t->c - t->w * log1p(z * z / t->nu);
}

static double lse2(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

typedef struct {
  t_dist core, moved;
  double l_core, l_moved;
} mixture;

static double noise_ll(double x, const mixture *m) {
  return lse2(m->l_core + t_ll(&m->core, x), m->l_moved + t_ll(&m->moved, x));
}

/* log of the mean over k of exp(v[k]) */
static double log_mean_exp(const double *v, int n) {
  double mx = -INFINITY, sum = 0;
  for (int i = 0; i < n; i++)
    if (v[i] > mx) mx = v[i];
  if (mx == -INFINITY) return mx;
  for (int i = 0; i < n; i++) sum += exp(v[i] - mx);
  return mx + log(sum / n);
}

double gm_p_bad(double g, const gm_noise *n, double bad_pct, double prior) {
  if (!isfinite(g) || !(n->s > 0 && isfinite(n->s)) || !(n->s_w >= n->s && isfinite(n->s_w)) || !(n->nu >= 1) ||
      !(n->nu_w >= 1) || !(n->moved > 0 && n->moved < 1) || !(bad_pct > 0 && bad_pct < PM_BAD_MAX) ||
      !(prior > 0 && prior < 1))
    return NAN;
  mixture mx = {t_of(n->s, n->nu), t_of(n->s_w, n->nu_w), log1p(-n->moved), log(n->moved)};
  double bad[GM_BAD_BINS];
  for (int k = 0; k < GM_BAD_BINS; k++)
    bad[k] = noise_ll(g - log1p(-bad_pct * pow(PM_BAD_MAX / bad_pct, (k + 0.5) / GM_BAD_BINS)), &mx);
  double l_bad = log(prior) + log_mean_exp(bad, GM_BAD_BINS);
  double l_good = log1p(-prior) + noise_ll(g, &mx);
  return 1 / (1 + exp(l_good - l_bad));
}

/* Welch-Satterthwaite: of scale s, only peer is estimated, from n values */
static double dof(double s, double peer, int n) {
  double share = peer / s;
  return share > 0 ? (n - 1) / (share * share * share * share) : INFINITY;
}

void gm_judge(const double *x, int m, int i, double time_sd, double own_sd, double bad_pct, double prior,
              gm_judgement *j) {
  memset(j, 0, sizeof *j);
  j->p = j->g = j->peer = j->noise.s = j->noise.s_w = NAN;
  j->time = time_sd;
  if (i < 0 || i >= m || !(x[i] > 0)) return;
  double *v = malloc(2 * ((size_t)m + 1) * sizeof *v), *l = v ? v + m + 1 : NULL;
  int n = 0;
  for (int k = 0; v && k < m; k++) /* its peers: the others */
    if (k != i && x[k] > 0 && isfinite(x[k])) v[n] = x[k], l[n++] = log(x[k]);
  if (n >= 3) {
    j->peer = baseline_spread_log(l, n);
    j->g = log(x[i] / stats_percentile(v, n, 0.5));
  }
  free(v);
  if (!isfinite(j->peer) || !isfinite(j->g)) return;
  double o = isfinite(own_sd) ? own_sd : 0, t = isfinite(time_sd) ? time_sd : 0;
  gm_noise *z = &j->noise;
  /* the yardstick's own noise: the median of n peers varies as pi / (2 n) of one figure's variance */
  double pe = j->peer * sqrt(1 + 1.5707963267948966 / n); /* the estimated part */
  z->s = sqrt(pe * pe + o * o);
  if (!(z->s > 0)) z->s = GM_PEER_SD_MIN; /* peers that agree to the bit: no scale below the least believed */
  z->s_w = sqrt(z->s * z->s + t * t);
  z->nu = dof(z->s, pe, n), z->nu_w = dof(z->s_w, pe, n);
  z->moved = GM_MOVED_FRAC;
  j->p = gm_p_bad(j->g, z, bad_pct, prior);
}

void gm_rates(const double *p, const int *failed, int n, double *false_drains, double *misses) {
  double f = 0, m = 0;
  for (int i = 0; i < n; i++) {
    if (!isfinite(p[i])) continue;
    if (failed[i]) f += 1 - p[i];
    else m += p[i];
  }
  *false_drains = f, *misses = m;
}
