/* gpu_model.h: the probability that a GPU's figure (a GEMM, a copy) is bad, judged against the GPUs of its model in
 * the same job (4 or more), and the expected false drains and misses of the GPUs failed on it. Pure arithmetic on
 * numbers the caller measured: no I/O, no global state.
 *
 * The model (docs/accept.md, "GPUs against their peers", says it in an operator's words). A GPU's figure x against
 * the healthy level m (the median of the other GPUs of its model in the job, its peers):
 *     g = ln(x / m) = ln(1 - d) + e
 * d the GPU's degradation. The noise e: with probability 1 - GM_MOVED_FRAC, t(nu) at scale s, s^2 = peer^2 + own^2
 * (peer the robust spread of the peers' ln x, 1.4826 MAD: how the job's GPUs differ now; own the noise of the
 * GPU's median); with probability GM_MOVED_FRAC the GPU moved on its own for this run (a scheduler's placement, a
 * neighbour's load, a clock state), t(nu_w) at scale sqrt(s^2 + time^2), time how far a GPU moves against its
 * peers between runs: the device's row (gm_time_default: 10 % for CPU ranks sharing cores, seen at 11 %; 5 % for a
 * GPU), or what a --baseline's runs measured when they hold 40 GPU-runs or more (accept_verdicts.c: fewer rarely
 * show a move that comes in 1 figure of 20). A run's few peers cannot show
 * such a move: one rank of 4 at 11 % below three that agree within 0.3 % is robust z -43 and was healthy.
 * nu and nu_w (Welch-Satterthwaite): only the peers' spread is estimated, from n values (n - 1 degrees), so
 * nu = (n - 1) (s / peer)^4: t(2) where 3 peers that spread decide the noise, Gaussian where the known terms do.
 * The peers are the others, not the group with the GPU in it: a bad GPU among 4 widened its own yardstick, and the
 * simulation's misses read 2.6x their stated rate; a floor of 4 degrees on nu stated P(bad) 0.11 where 3 % were bad.
 * A GPU is bad when d > bad_pct. Prior: bad with probability prior, its d log-uniform on (bad_pct, PM_BAD_MAX) as a
 * pair model's node; a good GPU's d is 0: how healthy boards differ is the peers' spread, measured (a prior of
 * slight slowness on top of it, as the pair model's, counted that spread twice: P(bad) read 3x too low in the
 * simulation).
 *
 * defines: gm_noise, gm_p_bad, gm_judge, gm_judgement, gm_rates, gm_time_default, GM_MOVED_FRAC,
 *          GM_NU_GAUSS */
#ifndef DDPBENCH_GPU_MODEL_H
#define DDPBENCH_GPU_MODEL_H

#ifdef __cplusplus
extern "C" {
#endif

#define GM_MOVED_FRAC 0.05   /* the share of GPU figures that moved on their own in a run */
#define GM_NU_GAUSS 100      /* nu at or above this (or infinite): Gaussian */

/* The assumed between-run move (ln) of a GPU of this model against its peers: a row per device kind (a model
 * whose name starts with "cpu": 0.10; any GPU model: 0.05). */
double gm_time_default(const char *model);

typedef struct {
  double s, nu;     /* the usual noise: scale (ln) and degrees of freedom */
  double s_w, nu_w; /* a GPU that moved on its own: scale and degrees */
  double moved;     /* its share (GM_MOVED_FRAC) */
} gm_noise;

/* P(bad | g) for g = ln(x / m) under noise n; bad_pct in (0, 1), prior in (0, 1). NaN when an input is out of
 * range or not finite. */
double gm_p_bad(double g, const gm_noise *n, double bad_pct, double prior);

/* The judgement of x[i] among x[0..m) (one model's figures in one job; values not finite and positive left out, 4 or
 * more needed): g = ln(x[i] / the others' median), peer the others' baseline_spread_log of ln x, the noise as above
 * with time_sd (the between-run move, ln) and own_sd (the noise of x[i]'s median, ln; NaN: 0), p = gm_p_bad.
 * Everything but time NaN when fewer than 4 values or x[i] not positive. */
typedef struct {
  double p, g, peer, time;
  gm_noise noise;
} gm_judgement;
void gm_judge(const double *x, int m, int i, double time_sd, double own_sd, double bad_pct, double prior,
              gm_judgement *j);

/* The expected false drains (sum over failed of 1 - p) and misses (sum over the rest of p) of n GPUs with
 * probabilities p[] (NaN: not judged, left out), failed[i] != 0 for those failed. */
void gm_rates(const double *p, const int *failed, int n, double *false_drains, double *misses);

#ifdef __cplusplus
}
#endif
#endif
