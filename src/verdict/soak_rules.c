/* soak_rules.c: the soak's verdicts over its time series (soak_rules.h). Each rule walks the series once per
 * part, emits at most one finding per part and check (at the first interval it saw the fault, with how often it
 * saw it), and says in the text what it measured against what. */
#include "soak_rules.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_reasons.h"
#include "rules.h"
#include "stats.h"

/* ---- the series --------------------------------------------------------------------------------------------- */

ddp_result soak_series_init(soak_series *s, int ngpu, int nlink, int nrank) {
  memset(s, 0, sizeof *s);
  s->ngpu = ngpu, s->nlink = nlink, s->nrank = nrank;
  s->gpu = calloc((size_t)(ngpu > 0 ? ngpu : 1), sizeof *s->gpu);
  s->link = calloc((size_t)(nlink > 0 ? nlink : 1), sizeof *s->link);
  s->rank = calloc((size_t)(nrank > 0 ? nrank : 1), sizeof *s->rank);
  if (!s->gpu || !s->link || !s->rank) {
    soak_series_free(s);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  return DDP_OK;
}

void soak_series_free(soak_series *s) {
  free(s->t0), free(s->t1), free(s->gpu), free(s->link), free(s->rank), free(s->g), free(s->busbw), free(s->step_ms);
  memset(s, 0, sizeof *s);
}

static int grow(void **p, size_t elem, int cap) {
  size_t bytes = elem * (size_t)(cap > 0 ? cap : 1);
  void *q = realloc(*p, bytes ? bytes : 1); /* never 0: realloc(p, 0) frees p */
  if (!q) return 0;
  *p = q;
  return 1;
}

void soak_gpu_sample_clear(soak_gpu_sample *g) {
  memset(g, 0, sizeof *g);
  g->tflops = g->sm_mhz = g->power_w = g->temp_c = NAN;
  for (int l = 0; l < SOAK_MAX_NVLINKS; l++) g->link[l].state = -1;
}

int soak_series_add(soak_series *s, double t0, double t1) {
  if (s->nint == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    if (!grow((void **)&s->t0, sizeof *s->t0, cap) || !grow((void **)&s->t1, sizeof *s->t1, cap) ||
        !grow((void **)&s->g, sizeof *s->g * (size_t)s->ngpu, cap) ||
        !grow((void **)&s->busbw, sizeof *s->busbw * (size_t)s->nlink, cap) ||
        !grow((void **)&s->step_ms, sizeof *s->step_ms * (size_t)s->nrank, cap))
      return -1;
    s->cap = cap;
  }
  int i = s->nint++;
  s->t0[i] = t0, s->t1[i] = t1;
  for (int k = 0; k < s->ngpu; k++) soak_gpu_sample_clear(soak_gpu_at(s, i, k));
  for (int l = 0; l < s->nlink; l++) *soak_busbw_at(s, i, l) = NAN;
  for (int r = 0; r < s->nrank; r++) *soak_step_at(s, i, r) = NAN;
  return i;
}

/* ---- parameters and their sources --------------------------------------------------------------------------- */

void soak_params_default(soak_params *p) {
  memset(p, 0, sizeof *p);
  /* Application Xids: the list of nvml_counters.c (nvml_xid_is_application, which cites its sources): the ones
   * NVIDIA's k8s-device-plugin skips as application errors after which the GPU is healthy, 13 graphics engine
   * exception, 31 GPU memory page fault, 43 GPU stopped processing, 45 preemptive cleanup after previous errors,
   * 109 context switch timeout; 68 (video processor) fails, as Azure NHC counts it, since a soak decodes no
   * video. Keep the two lists in step. */
  static const unsigned app[] = {13, 31, 43, 45, 109};
  p->napp_xids = (int)(sizeof app / sizeof app[0]);
  memcpy(p->app_xids, app, sizeof app);
  /* NVIDIA DCGM, dcgm_gpu_hardware_limits.h, the limits its health watches warn at:
   *  DCGM_LIMIT_MAX_PCIREPLAY_RATE 8 ("8 replays per minute is the maximum recommended by RM");
   *  DCGM_LIMIT_MAX_SBE_RATE 10 (single-bit, i.e. corrected, ECC errors; DCGM itself labels it "dummy value until a
   *  real one is determined", so read it as a placeholder with a name behind it; taken here per minute);
   *  DCGM_LIMIT_MAX_NVLINK_CRC_ERROR 100.0 ("CRC errors only matter at rates of 100+ per second");
   *  DCGM_LIMIT_MAX_NVLINK_ERROR 1 (replay and recovery errors: any one is worth a warning). */
  p->pcie_replay_per_min = 8;
  p->ecc_corrected_per_min = 10;
  p->nvlink_crc_per_s = 100;
  p->nvlink_replay_per_interval = 1;
  p->nvlink_recovery_per_interval = 1;
  p->first_minute_s = 60;
  /* The sink of a GPU's throughput beyond the job's: warn 3.5 %, fail 7 %, the per-GPU GEMM margins of Azure
   * ai-infra's "GEMM per GPU" check, with the robust-z convention of
   * 3.5 (Iglewicz-Hoaglin, as accept_stragglers). */
  p->sink_warn_pct = 3.5, p->sink_fail_pct = 7, p->sink_zmin = 3.5;
  /* ddpbench's own: a median of the last third needs at least 2 intervals, a "first minute" 1 and the change-point
   * 2 a side, so 6 intervals; a MAD across GPUs needs 4 values (accept_group_stats' rule: a MAD over 3 is noise). */
  p->min_intervals = 6, p->min_gpus = 4;
  /* ddpbench's own: a drop in busbw or a rise in step time is named beyond 5 %, over twice the 2 % practical
   * threshold that cluster validation guides give for busbw and step time between two runs (a soak compares
   * a run with itself across hours, with the heat and the neighbours' load changing), and beyond z 5, the steady
   * rule's STEADY_ZMIN (the largest of some hundred split z-scores of pure noise stays below 4). */
  p->busbw_drop_pct = 5, p->step_rise_pct = 5, p->cp_zmin = STEADY_ZMIN, p->cp_min_side = 2;
}

/* ---- verdicts ----------------------------------------------------------------------------------------------- */

void soak_verdicts_init(soak_verdicts *v) {
  memset(v, 0, sizeof *v);
  findings_init(&v->f);
}

void soak_verdicts_free(soak_verdicts *v) {
  findings_free(&v->f);
  free(v->interval), free(v->t);
  memset(v, 0, sizeof *v);
}

/* Appends one finding with its interval (from 1; 0 the whole run) and time. */
static ddp_result add(soak_verdicts *v, int interval, double t, const char *host, int rank, const char *check,
                      finding_severity sev, finding_scope scope, const char *subject, double measured,
                      double expected, const char *unit, const char *fmt, ...) __attribute__((format(printf, 13, 14)));
static ddp_result add(soak_verdicts *v, int interval, double t, const char *host, int rank, const char *check,
                      finding_severity sev, finding_scope scope, const char *subject, double measured,
                      double expected, const char *unit, const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (v->f.n + 1 > v->cap) {
    int cap = v->cap ? 2 * v->cap : 32;
    if (!grow((void **)&v->interval, sizeof *v->interval, cap) || !grow((void **)&v->t, sizeof *v->t, cap))
      return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    v->cap = cap;
  }
  ddp_result r = findings_add_at(&v->f, host, rank, check, sev, scope, subject, measured, expected, unit, "%s", text);
  if (r != DDP_OK) return r;
  v->interval[v->f.n - 1] = interval, v->t[v->f.n - 1] = t;
  v->f.v[v->f.n - 1].interval = interval, v->f.v[v->f.n - 1].t_s = interval > 0 ? t : NAN;
  return DDP_OK;
}

static void gpu_subject(const soak_gpu_id *id, char *buf, size_t n) {
  snprintf(buf, n, "GPU%d %s (%s, rank %d)", id->index, id->busid, id->host, id->rank);
}

/* ---- counters ------------------------------------------------------------------------------------------------ */

static int app_xid(const soak_params *p, unsigned x) {
  for (int i = 0; i < p->napp_xids; i++)
    if (p->app_xids[i] == x) return 1;
  return 0;
}

/* A counter that fails at its first nonzero delta: one finding with the total over the run. */
static ddp_result judge_any(const soak_series *s, int k, size_t off, const char *check, const char *what,
                            soak_verdicts *v) {
  int first = -1;
  double total = 0;
  for (int i = 0; i < s->nint; i++) {
    const soak_counter *c = (const soak_counter *)((const char *)soak_gpu_at(s, i, k) + off);
    if (c->measured && c->delta > 0) {
      if (first < 0) first = i;
      total += c->delta;
    }
  }
  if (first < 0) return DDP_OK;
  char sub[160];
  gpu_subject(&s->gpu[k], sub, sizeof sub);
  return add(v, first + 1, s->t0[first], s->gpu[k].host, s->gpu[k].rank, check, SEV_FAIL, SCOPE_GPU, sub, total, 0,
             "", "%s: %.0f during the soak, the first in interval %d (%.0f-%.0f s); replace or reset the GPU", what,
             total, first + 1, s->t0[first], s->t1[first]);
}

/* A counter whose rate over an interval above limit warns: one finding at the first such interval, with the
 * highest rate and the number of intervals above. per: seconds of the rate's unit (60 per minute, 1 per second,
 * 0 per interval). */
static ddp_result judge_rate(const soak_series *s, int i_count, const soak_counter *const *c, double limit, double per,
                             const char *host, int rank, const char *check, finding_scope scope, const char *subject,
                             const char *what, const char *unit, soak_verdicts *v) {
  int first = -1, over = 0;
  double worst = 0;
  for (int i = 0; i < i_count; i++) {
    if (!c[i]->measured) continue;
    double len = s->t1[i] - s->t0[i];
    double rate = per > 0 ? (len > 0 ? c[i]->delta * per / len : NAN) : c[i]->delta;
    int over_limit = per > 0 ? rate > limit : rate >= limit; /* a rate warns above, a count at the limit */
    if (!over_limit) continue;
    if (first < 0) first = i;
    over++;
    if (rate > worst) worst = rate;
  }
  if (first < 0) return DDP_OK;
  return add(v, first + 1, s->t0[first], host, rank, check, SEV_WARN, scope, subject, worst, limit, unit,
             "%s reached %.3g %s (limit %.3g) in %d of %d intervals, the first interval %d (%.0f-%.0f s)", what, worst,
             unit, limit, over, i_count, first + 1, s->t0[first], s->t1[first]);
}

/* Not-measured bookkeeping: which counters were missing on which GPU, for the one info finding. */
enum { NM_XID, NM_ECC_CORR, NM_ECC_UNCORR, NM_REMAP, NM_PCIE_REPLAY, NM_PCIE_LINK, NM_THROTTLE, NM_NVLINK, NM_COUNT };
static const char *const nm_name[NM_COUNT] = {"Xid events",      "corrected ECC",         "uncorrected ECC",
                                              "pending remaps",  "PCIe replays",          "PCIe generation/width",
                                              "throttle reasons", "NVLink state/counters"};

/* 1 when one of the GPU's NVLinks had its state or an error counter unread in the interval. */
static int nvlink_unread(const soak_gpu_sample *g) {
  for (int l = 0; l < g->nlinks && l < SOAK_MAX_NVLINKS; l++) {
    const soak_nvlink *k = &g->link[l];
    if (k->absent) continue;
    if (k->state < 0 || !k->crc.measured || !k->replay.measured || !k->recovery.measured) return 1;
  }
  return 0;
}

static ddp_result not_measured_finding(const soak_series *s, soak_verdicts *v) {
  char text[FINDING_TEXT_MAX - 64] = ""; /* the finding's text, less its opening words */
  size_t len = 0;
  int any = 0;
  for (int c = 0; c < NM_COUNT; c++) {
    int n = 0;
    char gpus[256] = "";
    size_t gl = 0;
    for (int k = 0; k < s->ngpu; k++) {
      int missing = 0;
      for (int i = 0; i < s->nint && !missing; i++) {
        const soak_gpu_sample *g = soak_gpu_at(s, i, k);
        missing = c == NM_XID ? !g->xid_measured
                  : c == NM_ECC_CORR ? !g->ecc_corrected.measured
                  : c == NM_ECC_UNCORR ? !g->ecc_uncorrected.measured
                  : c == NM_REMAP ? !g->remap_pending.measured
                  : c == NM_PCIE_REPLAY ? !g->pcie_replay.measured
                  : c == NM_PCIE_LINK ? (g->under_load && (!g->pcie_gen || !g->pcie_gen_max || !g->pcie_width ||
                                                           !g->pcie_width_max))
                  : c == NM_THROTTLE ? !g->reasons_measured
                                     : nvlink_unread(g);
      }
      if (!missing) continue;
      if (n++ < 4 && gl < sizeof gpus)
        gl += (size_t)snprintf(gpus + gl, sizeof gpus - gl, "%sGPU%d@%s", n > 1 ? ", " : "", s->gpu[k].index,
                               s->gpu[k].host);
    }
    if (!n) continue;
    any = 1;
    if (len < sizeof text) {
      if (n > 4)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s on %d GPUs (%s, ...)", len ? "; " : "",
                                nm_name[c], n, gpus);
      else
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%s on %s", len ? "; " : "", nm_name[c], gpus);
    }
  }
  if (!any) return DDP_OK;
  return add(v, 0, NAN, "", -1, "soak_not_measured", SEV_INFO, SCOPE_JOB, "job", NAN, NAN, "",
             "not measured, so neither passed nor failed: %s", text);
}

ddp_result soak_judge_counters(const soak_series *s, const soak_params *p, soak_verdicts *v) {
  const soak_counter **c = malloc((size_t)(s->nint > 0 ? s->nint : 1) * sizeof *c);
  if (!c) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  ddp_result r = DDP_OK;
  for (int k = 0; k < s->ngpu && r == DDP_OK; k++) {
    const soak_gpu_id *id = &s->gpu[k];
    char sub[160];
    gpu_subject(id, sub, sizeof sub);
    /* Xid: every event its own finding (two different Xids are two faults) */
    for (int i = 0; i < s->nint && r == DDP_OK; i++) {
      const soak_gpu_sample *g = soak_gpu_at(s, i, k);
      for (int e = 0; e < g->nxid && e < SOAK_MAX_XIDS && r == DDP_OK; e++) {
        const soak_xid *x = &g->xid[e];
        if (app_xid(p, x->xid))
          r = add(v, i + 1, x->t, id->host, id->rank, "soak_xid", SEV_INFO, SCOPE_GPU, sub, x->xid, NAN, "",
                  "Xid %u at %.1f s (interval %d): an application Xid, on the ignore list; not a GPU fault", x->xid,
                  x->t, i + 1);
        else
          r = add(v, i + 1, x->t, id->host, id->rank, "soak_xid", SEV_FAIL, SCOPE_GPU, sub, x->xid, NAN, "",
                  "Xid %u at %.1f s (interval %d): a hardware or driver fault, not an application Xid; look it up "
                  "in NVIDIA's Xid catalog for the recovery (reset, reboot or RMA)",
                  x->xid, x->t, i + 1);
      }
    }
    if (r == DDP_OK)
      r = judge_any(s, k, offsetof(soak_gpu_sample, ecc_uncorrected), "soak_ecc_uncorrected", "uncorrected ECC errors",
                    v);
    if (r == DDP_OK)
      r = judge_any(s, k, offsetof(soak_gpu_sample, remap_pending), "soak_remap_pending", "new pending row remaps", v);
    /* PCIe link under load */
    for (int pass = 0; pass < 2 && r == DDP_OK; pass++) {
      int first = -1, n = 0;
      unsigned worst = 0, max = 0;
      for (int i = 0; i < s->nint; i++) {
        const soak_gpu_sample *g = soak_gpu_at(s, i, k);
        unsigned cur = pass ? g->pcie_width : g->pcie_gen, top = pass ? g->pcie_width_max : g->pcie_gen_max;
        if (!g->under_load || !cur || !top || cur >= top) continue;
        if (first < 0) first = i, worst = cur, max = top;
        if (cur < worst) worst = cur;
        n++;
      }
      if (first >= 0)
        r = add(v, first + 1, s->t0[first], id->host, id->rank, pass ? "soak_pcie_width" : "soak_pcie_gen", SEV_FAIL,
                SCOPE_GPU, sub, worst, max, "",
                pass ? "PCIe link at x%u of x%u under load in %d intervals, from interval %d (%.0f s): a lane "
                       "trained down; reseat the GPU or its riser"
                     : "PCIe link at Gen%u of Gen%u under load in %d intervals, from interval %d (%.0f s): the link "
                       "trained down (an idle GPU lowers it, a loaded one must not)",
                worst, max, n, first + 1, s->t0[first]);
    }
    /* rates */
    for (int i = 0; i < s->nint; i++) c[i] = &soak_gpu_at(s, i, k)->ecc_corrected;
    if (r == DDP_OK)
      r = judge_rate(s, s->nint, c, p->ecc_corrected_per_min, 60, id->host, id->rank, "soak_ecc_corrected", SCOPE_GPU,
                     sub, "corrected ECC errors", "/min", v);
    for (int i = 0; i < s->nint; i++) c[i] = &soak_gpu_at(s, i, k)->pcie_replay;
    if (r == DDP_OK)
      r = judge_rate(s, s->nint, c, p->pcie_replay_per_min, 60, id->host, id->rank, "soak_pcie_replay", SCOPE_GPU, sub,
                     "PCIe replays", "/min", v);
    /* NVLinks */
    for (int l = 0; l < SOAK_MAX_NVLINKS && r == DDP_OK; l++) {
      char lsub[192];
      snprintf(lsub, sizeof lsub, "%s NVLink %d", sub, l);
      int first = -1, down = 0, seen = 0;
      for (int i = 0; i < s->nint; i++) {
        const soak_gpu_sample *g = soak_gpu_at(s, i, k);
        if (l >= g->nlinks || g->link[l].absent) continue;
        seen = 1;
        if (g->link[l].state == 0) {
          if (first < 0) first = i;
          down++;
        }
      }
      if (!seen) continue;
      if (first >= 0)
        r = add(v, first + 1, s->t0[first], id->host, id->rank, "soak_nvlink_down", SEV_FAIL, SCOPE_LINK, lsub, down,
                0, "", "NVLink %d down in %d of %d intervals, from interval %d (%.0f s)", l, down, s->nint, first + 1,
                s->t0[first]);
      static const soak_counter none = {0, 0};
      const struct {
        size_t off;
        double limit, per;
        const char *check, *what, *unit;
      } cnt[3] = {
          {offsetof(soak_nvlink, crc), p->nvlink_crc_per_s, 1, "soak_nvlink_crc", "NVLink CRC errors", "/s"},
          {offsetof(soak_nvlink, replay), p->nvlink_replay_per_interval, 0, "soak_nvlink_replay", "NVLink replays",
           "/interval"},
          {offsetof(soak_nvlink, recovery), p->nvlink_recovery_per_interval, 0, "soak_nvlink_recovery",
           "NVLink recoveries", "/interval"},
      };
      for (int q = 0; q < 3 && r == DDP_OK; q++) {
        for (int i = 0; i < s->nint; i++) {
          const soak_gpu_sample *g = soak_gpu_at(s, i, k);
          c[i] = l < g->nlinks ? (const soak_counter *)((const char *)&g->link[l] + cnt[q].off) : &none;
        }
        r = judge_rate(s, s->nint, c, cnt[q].limit, cnt[q].per, id->host, id->rank, cnt[q].check, SCOPE_LINK, lsub,
                       cnt[q].what, cnt[q].unit, v);
      }
    }
  }
  free(c);
  if (r == DDP_OK) r = not_measured_finding(s, v);
  return r;
}

/* ---- throttle ------------------------------------------------------------------------------------------------ */

ddp_result soak_judge_throttle(const soak_series *s, const soak_params *p, soak_verdicts *v, soak_gpu_steady *st) {
  (void)p;
  static const struct {
    unsigned long long bit;
    finding_severity sev;
    const char *check, *what;
  } rs[] = {
      {NVML_DL_REASON_HW_SLOWDOWN, SEV_FAIL, "soak_hw_slowdown", "HW slowdown (the GPU halved its clocks: a power "
                                                                  "supply, thermal or board fault)"},
      {NVML_DL_REASON_HW_THERMAL, SEV_FAIL, "soak_hw_thermal", "HW thermal slowdown (over temperature: check airflow "
                                                                "and the heatsink)"},
      {NVML_DL_REASON_HW_POWER_BRAKE, SEV_FAIL, "soak_power_brake", "HW power brake (asserted by the system's power "
                                                                     "supply)"},
      {NVML_DL_REASON_SW_THERMAL, SEV_WARN, "soak_sw_thermal", "SW thermal slowdown (the driver lowered clocks for "
                                                                "temperature: cooling is marginal)"},
  };
  const unsigned long long counted = NVML_DL_REASON_HW_SLOWDOWN | NVML_DL_REASON_HW_THERMAL |
                                     NVML_DL_REASON_HW_POWER_BRAKE | NVML_DL_REASON_SW_THERMAL;
  ddp_result r = DDP_OK;
  for (int k = 0; k < s->ngpu && r == DDP_OK; k++) {
    char sub[160];
    gpu_subject(&s->gpu[k], sub, sizeof sub);
    if (st) st[k].first_throttle_interval = 0, st[k].first_throttle_s = NAN, st[k].first_reasons = 0;
    for (int i = 0; st && i < s->nint; i++) {
      const soak_gpu_sample *g = soak_gpu_at(s, i, k);
      if (g->reasons_measured && (g->reasons & counted)) {
        st[k].first_throttle_interval = i + 1;
        st[k].first_throttle_s = s->t0[i] - s->t0[0];
        st[k].first_reasons = g->reasons & counted;
        break;
      }
    }
    for (size_t q = 0; q < sizeof rs / sizeof rs[0] && r == DDP_OK; q++) {
      int first = -1, n = 0;
      for (int i = 0; i < s->nint; i++) {
        const soak_gpu_sample *g = soak_gpu_at(s, i, k);
        if (!g->reasons_measured || !(g->reasons & rs[q].bit)) continue;
        if (first < 0) first = i;
        n++;
      }
      if (first >= 0)
        r = add(v, first + 1, s->t0[first], s->gpu[k].host, s->gpu[k].rank, rs[q].check, rs[q].sev, SCOPE_GPU, sub,
                s->t0[first] - s->t0[0], NAN, "s", "%s from interval %d, %.0f s into the soak, in %d of %d intervals",
                rs[q].what, first + 1, s->t0[first] - s->t0[0], n, s->nint);
    }
  }
  return r;
}

/* ---- robust helpers ------------------------------------------------------------------------------------------ */

static int finite_copy(const double *x, int n, double *out, int *idx) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(x[i])) {
      if (idx) idx[m] = i;
      out[m++] = x[i];
    }
  return m;
}

static double median(const double *x, int n) { return n > 0 ? stats_percentile(x, n, 0.5) : NAN; }

/* 1.4826 MAD of successive differences / sqrt 2: one value's noise, which a level shift moves by one difference. */
static double diff_sigma(const double *x, int n, double *tmp) {
  if (n < 3) return NAN;
  for (int i = 0; i + 1 < n; i++) tmp[i] = fabs(x[i + 1] - x[i]);
  double m = median(tmp, n - 1);
  if (m == 0) { /* more than half the steps equal: the mean absolute step stands in */
    double sum = 0;
    for (int i = 0; i + 1 < n; i++) sum += tmp[i];
    return 1.2533 * sum / (n - 1) / sqrt(2.0);
  }
  return 1.4826 * m / sqrt(2.0);
}

/* ---- the change-point rule ----------------------------------------------------------------------------------- */

ddp_result soak_changepoint(const double *x, int n, int higher_better, double floor_pct, double zmin, int min_side,
                            soak_change *c) {
  memset(c, 0, sizeof *c);
  c->split = -1;
  c->early = c->late = c->rel = c->z = c->sigma = NAN;
  if (min_side < 1) min_side = 1;
  double *v = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *v);
  int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
  if (!v || !idx) {
    free(v), free(idx);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  double *tmp = v + n;
  int m = finite_copy(x, n, v, idx);
  if (m < 2 * min_side || m < 3) goto done;
  c->judged = 1;
  double sigma = diff_sigma(v, m, tmp), sgn = higher_better ? 1 : -1;
  c->sigma = sigma;
  double total = 0, pre = 0, best = -INFINITY;
  int bk = -1;
  for (int i = 0; i < m; i++) total += v[i];
  for (int k = 1; k < m; k++) {
    pre += v[k - 1];
    if (k < min_side || m - k < min_side) continue;
    double d = sgn * (pre / k - (total - pre) / (m - k)) / sqrt(1.0 / k + 1.0 / (m - k));
    if (d > best) best = d, bk = k;
  }
  if (bk < 0) goto done;
  memcpy(tmp, v, (size_t)bk * sizeof *tmp);
  c->early = median(tmp, bk);
  memcpy(tmp, v + bk, (size_t)(m - bk) * sizeof *tmp);
  c->late = median(tmp, m - bk);
  /* The residuals around each side's median are the noise with the step taken out. A MAD over a dozen values is
   * itself noisy (a third of the efficiency of a standard deviation), and the split was chosen where the sides
   * look cleanest, so the largest of three estimates is kept: the successive differences' MAD (above), the
   * residuals' MAD and their mean absolute value (1.2533 x, nine tenths efficient; an outlier raises it, which
   * can only hide a change). A noise estimated too small is what would name a healthy part. */
  double sum = 0;
  for (int i = 0; i < m; i++) tmp[i] = fabs(v[i] - (i < bk ? c->early : c->late)), sum += tmp[i];
  double res = 1.4826 * median(tmp, m), mad = 1.2533 * sum / m;
  if (!(sigma >= res)) sigma = res;
  if (!(sigma >= mad)) sigma = mad;
  c->sigma = sigma;
  c->split = idx[bk];
  c->rel = c->early != 0 ? c->late / c->early - 1 : NAN;
  double se = 1.2533 * sigma * sqrt(1.0 / bk + 1.0 / (m - bk)), d = sgn * (c->early - c->late);
  c->z = se > 0 ? d / se : d > 0 ? INFINITY : 0;
  c->found = isfinite(c->rel) && sgn * -c->rel * 100 > floor_pct && c->z > zmin;
done:
  free(v), free(idx);
  return DDP_OK;
}

/* ---- steady state -------------------------------------------------------------------------------------------- */

/* How many GPUs of GPU k's model the job has. */
static int np_of(const soak_series *s, int k) {
  int n = 0;
  for (int j = 0; j < s->ngpu; j++) n += !strcmp(s->gpu[j].model, s->gpu[k].model);
  return n;
}

/* The steady-state rule per GPU, over its TFLOP/s per interval:
 *  - figures: first minute, the median over the intervals that end within first_minute_s of the soak's start (the
 *    first interval when it alone is longer); equilibrium, the median of the last third (ceil(n / 3), at least 2);
 *    sink = equilibrium / first minute - 1; peers = the median equilibrium of the job's GPUs of the same model;
 *  - judged from min_intervals finite intervals on and with at least min_gpus GPUs of its model; with fewer GPUs
 *    nobody is named: a lone GPU's own drop from its first minute is mostly the warm-up from boost clocks to the
 *    power cap, which peers would cancel (its figures are still reported, as info);
 *  - the GPU's series relative to the job: r[i] = x[i] / (the median of its model's GPUs in interval i), so that
 *    what the whole job does together (warm-up, a shared power or cooling limit) cancels;
 *  - named when both hold:
 *    (a) the change-point rule over r finds a drop beyond sink_warn_pct with z > sink_zmin against the GPU's own
 *        spread: it sank, and from that interval (start_interval). (The links' and ranks' z of 5 is not needed
 *        here: (b) must hold as well, and a 3.5 % drop is already beyond 4 sigma of a healthy GPU's 1 % noise);
 *    (b) its equilibrium relative to the job, the median of r over the last third, is below the other GPUs' by
 *        more than sink_zmin noise units, noise = sqrt(job^2 + own^2): job = 1.4826 MAD of those medians across
 *        the model's GPUs, own = its median's standard error from its own spread (1.2533 sigma / sqrt(count)).
 *        Neither a quiet job nor a noisy GPU alone makes a verdict;
 *    fail when the drop (a) is beyond sink_fail_pct, warn otherwise;
 *  - with 2 or 3 GPUs of its model (a MAD across GPUs is noise there), from 3 finite intervals and 2 in the last
 *    third: accept_relative_small over the equilibria, each GPU's noise the 1.4826 MAD of ln TFLOP/s over its last
 *    third (at least 5 %): beyond sink_fail_pct and 5 noise units below the median of 3 fails; within the noise
 *    (or of 2, where which one is off cannot be told) a WARN "cannot tell" with what would decide it. The interval
 *    it began is the change point of its series relative to the others. */
ddp_result soak_judge_steady(const soak_series *s, const soak_params *p, soak_verdicts *v, soak_gpu_steady *st) {
  int n = s->nint, G = s->ngpu, big = (n > G ? n : G) + 1;
  double *x = malloc((size_t)big * 3 * sizeof *x), *rel = malloc(((size_t)n * G + 1) * sizeof *rel);
  double *erel = malloc((size_t)big * 3 * sizeof *erel);
  int *small_ok = calloc((size_t)G + 1, sizeof *small_ok);
  if (!x || !rel || !erel || !small_ok) {
    free(x), free(rel), free(erel), free(small_ok);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  double *small_sp = erel + 2 * big;
  double *fin = x + big, *tmp = x + 2 * big, *own = erel + big;
  ddp_result r = DDP_OK;
  int nfirst = 0;
  while (nfirst < n && s->t1[nfirst] - s->t0[0] <= p->first_minute_s + 1e-9) nfirst++;
  if (nfirst == 0 && n > 0) nfirst = 1;
  int third = (n + 2) / 3 < 2 ? 2 : (n + 2) / 3, from = n > third ? n - third : 0;
  /* the figures, and each GPU's series relative to its model's median interval by interval */
  for (int k = 0; k < G; k++) {
    soak_gpu_steady *g = &st[k];
    g->judged = g->named = g->start_interval = 0;
    g->first_minute = g->equilibrium = g->peers = g->sink = g->peers_sink = g->z = NAN;
    erel[k] = own[k] = NAN;
    for (int i = 0; i < n; i++) x[i] = soak_gpu_at(s, i, k)->tflops;
    int m = finite_copy(x, n, fin, NULL), mf = finite_copy(x, nfirst, tmp, NULL);
    g->first_minute = median(tmp, mf);
    int ml = finite_copy(x + from, n - from, tmp, NULL);
    g->equilibrium = median(tmp, ml);
    if (mf && g->first_minute > 0) g->sink = g->equilibrium / g->first_minute - 1;
    int np = 0;
    for (int j = 0; j < G; j++) np += !strcmp(s->gpu[j].model, s->gpu[k].model);
    g->judged = m >= p->min_intervals && ml >= 2 && np >= p->min_gpus;
    /* own noise of its equilibrium for the small-group rule: 1.4826 MAD of ln TFLOP/s over the last third */
    small_sp[k] = NAN;
    if (!g->judged && np >= 2 && np <= 3 && ml >= 2 && m >= 3 && g->equilibrium > 0) {
      int c = 0;
      for (int i = from; i < n; i++)
        if (x[i] > 0) tmp[c++] = log(x[i]);
      double lm = median(tmp, c);
      for (int i = 0; i < c; i++) tmp[i] = fabs(tmp[i] - lm);
      small_sp[k] = c >= 2 ? 1.4826 * median(tmp, c) : NAN;
      if (!isfinite(small_sp[k])) small_sp[k] = NAN;
      small_ok[k] = 1;
    }
    for (int i = 0; i < n; i++) {
      int c = 0;
      for (int j = 0; j < G; j++)
        if (!strcmp(s->gpu[j].model, s->gpu[k].model) && isfinite(soak_gpu_at(s, i, j)->tflops))
          tmp[c++] = soak_gpu_at(s, i, j)->tflops;
      double med = median(tmp, c);
      rel[(size_t)k * n + i] = med > 0 ? x[i] / med : NAN;
    }
    if (!g->judged) continue;
    m = finite_copy(rel + (size_t)k * n, n, fin, NULL);
    double sig = diff_sigma(fin, m, tmp);
    ml = finite_copy(rel + (size_t)k * n + from, n - from, tmp, NULL);
    erel[k] = median(tmp, ml);
    own[k] = 1.2533 * sig / sqrt(ml > 0 ? ml : 1);
  }
  for (int k = 0; k < G && r == DDP_OK; k++) {
    soak_gpu_steady *g = &st[k];
    const soak_gpu_id *id = &s->gpu[k];
    char sub[160];
    gpu_subject(id, sub, sizeof sub);
    int ne = 0, np = 0;
    double *peer = fin;
    for (int j = 0; j < G; j++)
      if (!strcmp(s->gpu[j].model, id->model)) {
        if (isfinite(st[j].equilibrium)) tmp[ne++] = st[j].equilibrium;
        if (isfinite(erel[j])) peer[np++] = erel[j];
      }
    g->peers = median(tmp, ne);
    ne = 0;
    for (int j = 0; j < G; j++)
      if (!strcmp(s->gpu[j].model, id->model) && isfinite(st[j].sink)) tmp[ne++] = st[j].sink;
    g->peers_sink = median(tmp, ne);
    finding_severity sev = SEV_INFO;
    soak_change cp = {0};
    if (g->judged && np >= p->min_gpus) {
      double ref = median(peer, np);
      for (int j = 0; j < np; j++) tmp[j] = fabs(peer[j] - ref);
      double job = 1.4826 * median(tmp, np), noise = sqrt(job * job + own[k] * own[k]), ex = erel[k] - ref;
      g->z = noise > 0 ? ex / noise : ex < 0 ? -INFINITY : 0;
      r = soak_changepoint(rel + (size_t)k * n, n, 1, p->sink_warn_pct, p->sink_zmin, p->cp_min_side, &cp);
      if (r != DDP_OK) break;
      if (cp.found && g->z < -p->sink_zmin) {
        g->named = 1, g->start_interval = cp.split + 1;
        sev = -cp.rel * 100 > p->sink_fail_pct ? SEV_FAIL : SEV_WARN;
      }
    }
    accept_small_verdict sv = {.sev = ACCEPT_PASS};
    int small = small_ok[k], small_said = 0; /* small_said: a FAIL, or a WARN "cannot tell" (not named) */
    if (small) { /* 2 or 3 GPUs of its model: its equilibrium against theirs, in units of the run's own noise */
      double eq[3], sp[3];
      int ng = 0, me = 0;
      for (int j = 0; j < G && ng < 3; j++)
        if (!strcmp(s->gpu[j].model, id->model) && small_ok[j]) {
          if (j == k) me = ng;
          eq[ng] = st[j].equilibrium, sp[ng++] = small_sp[j];
        }
      small = ng >= 2;
      if (small) accept_relative_small(eq, sp, ng, me, p->sink_warn_pct, p->sink_fail_pct, 0, &sv);
      if (small && sv.sev != ACCEPT_PASS) { /* from where: the change point of its series relative to the others */
        r = soak_changepoint(rel + (size_t)k * n, n, 1, 0, 0, 1, &cp);
        if (r != DDP_OK) break;
        small_said = 1, g->named = sv.sev == ACCEPT_FAIL;
        g->start_interval = cp.judged && cp.split >= 0 ? cp.split + 1 : 1;
        g->z = isfinite(sv.noise) && sv.noise > 0 ? -sv.gap / sv.noise : NAN;
        sev = sv.sev == ACCEPT_FAIL ? SEV_FAIL : SEV_WARN;
      }
    }
    char thr[96];
    if (g->first_throttle_interval)
      snprintf(thr, sizeof thr, "first throttle %.0f s in (interval %d)", g->first_throttle_s,
               g->first_throttle_interval);
    else
      snprintf(thr, sizeof thr, "no failing or warning throttle");
    int si = g->start_interval;
    if (small_said)
      r = add(v, si, s->t0[si - 1], id->host, id->rank, "soak_steady", sev, SCOPE_GPU, sub, g->equilibrium, sv.ref,
              "TFLOP/s",
              "equilibrium %.4g TFLOP/s against %.4g of %s among %d %s GPUs (%+.1f %%), from about interval %d (%.0f s): "
              "%s; first minute %.4g; %s",
              g->equilibrium, sv.ref, np_of(s, k) == 2 ? "the other" : "the median",
              np_of(s, k), id->model[0] ? id->model : "unnamed", sv.margin_pct, si, s->t0[si - 1], sv.why,
              g->first_minute, thr);
    else if (g->named)
      r = add(v, si, s->t0[si - 1], id->host, id->rank, "soak_steady", sev, SCOPE_GPU, sub, g->equilibrium,
              g->peers, "TFLOP/s",
              "throughput sank against the job's %s GPUs from interval %d (%.0f s): %+.1f %% relative to them "
              "(z %.1f on its own noise), its equilibrium %.1f noise units below theirs; equilibrium %.4g TFLOP/s "
              "against the peers' %.4g, %+.1f %% on its first minute (%.4g; the job's median %+.1f %%); %s",
              id->model[0] ? id->model : "unnamed", si, s->t0[si - 1], 100 * cp.rel, cp.z, -g->z, g->equilibrium,
              g->peers, 100 * g->sink, g->first_minute, 100 * g->peers_sink, thr);
    else
      r = add(v, 0, NAN, id->host, id->rank, "soak_steady", SEV_INFO, SCOPE_GPU, sub, g->equilibrium, g->peers,
              "TFLOP/s",
              "equilibrium %.4g TFLOP/s (median of the last third), first minute %.4g (%+.1f %%), peers' median "
              "%.4g; %s%s",
              g->equilibrium, g->first_minute, 100 * g->sink, g->peers, thr,
              g->judged || small ? "" : "; not judged: too few intervals or GPUs of its model");
    if (r == DDP_OK && !g->named && !small_said) v->f.v[v->f.n - 1].passed = g->judged || small;
    if (small) g->judged = 1;
  }
  free(x), free(rel), free(erel), free(small_ok);
  return r;
}

/* ---- links and ranks ----------------------------------------------------------------------------------------- */

/* The median of the finite values of x[n] (NaN when none); tmp[n] scratch. */
static double finite_median(const double *x, int n, double *tmp) { return median(tmp, finite_copy(x, n, tmp, NULL)); }

/* A slowdown of a rank: where it began (interval, from 1) and what showed it. */
typedef struct {
  int rank, interval;
  char host[64], what[48];
} slow_rank;

/* 1 when the link is on host h: a node's link (its host) or a node pair's (its name "a-b" holds h as a or b). */
static int link_on(const soak_link_id *l, const char *h) {
  if (!h[0]) return 0;
  if (l->scope != SCOPE_PAIR) return !strcmp(l->host, h);
  size_t n = strlen(h), ln = strlen(l->name);
  return ln > n && ((!strncmp(l->name, h, n) && l->name[n] == '-') ||
                    (!strcmp(l->name + ln - n, h) && l->name[ln - n - 1] == '-'));
}

static ddp_result judge_series(const soak_series *s, const soak_params *p, soak_verdicts *v, int links,
                               const slow_rank *slow, int nslow) {
  int n = s->nint, count = links ? s->nlink : s->nrank;
  int big = (n > count ? n : count) + 1;
  double *x = malloc((size_t)big * 4 * sizeof *x);
  if (!x) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  double *raw = x + big, *med = x + 2 * big, *tmp = x + 3 * big;
  ddp_result r = DDP_OK;
  /* Ranks are judged against the job: each interval's compute time over the other ranks' median (from 3 ranks), so that
   * a load that slows every rank at once (the machine got busier, a whole job's power cap) names none of them;
   * such a rise of the median rank itself is one warning about the job, which no host can be drained for. */
  int peers = !links && s->nrank >= 3;
  if (peers) {
    for (int i = 0; i < n; i++) med[i] = finite_median(soak_step_at(s, i, 0), s->nrank, tmp);
    int m = 0;
    for (int i = 0; i < n; i++) m += isfinite(med[i]) != 0;
    soak_change c;
    if (m >= p->min_intervals &&
        (r = soak_changepoint(med, n, 0, p->step_rise_pct, p->cp_zmin * (1 + 4.0 / m), p->cp_min_side, &c)) == DDP_OK &&
        c.found)
      r = add(v, c.split + 1, s->t0[c.split], "", -1, "soak_step_rise_job", SEV_WARN, SCOPE_JOB, "job", c.late, c.early,
              "ms",
              "the median rank's compute time rose from interval %d (%.0f s): %.3g ms after, %.3g before (%+.1f %%, z "
              "%.1f): the job's, not one rank's, so no rank or host is named: a job-wide cause (other work on the machines, "
              "a power or thermal limit shared by all)",
              c.split + 1, s->t0[c.split], c.late, c.early, 100 * c.rel, c.z);
  }
  for (int j = 0; j < count && r == DDP_OK; j++) {
    for (int i = 0; i < n; i++) {
      raw[i] = links ? *soak_busbw_at(s, i, j) : *soak_step_at(s, i, j);
      x[i] = raw[i];
      if (peers) { /* over the median of the other ranks: a rank that is itself the median would read exactly 1 */
        int m = 0;
        for (int k = 0; k < s->nrank; k++)
          if (k != j && isfinite(*soak_step_at(s, i, k))) tmp[m++] = *soak_step_at(s, i, k);
        x[i] = raw[i] / median(tmp, m);
      }
    }
    int m = 0;
    for (int i = 0; i < n; i++) m += isfinite(x[i]) != 0;
    /* from 2 cp_min_side intervals (4), not min_intervals: on a short series the z the rule asks grows with 4 / m
     * (10 at m = 4), so only a step far beyond the series' own noise is named */
    if (m < 2 * p->cp_min_side || m < 3) continue;
    /* cp_zmin x (1 + 4 / m): the noise comes from the series itself, with few effective degrees of freedom on a
     * short one, and the split is the best of up to m; ddpbench's own margin, calibrated on the seeded noise-only
     * series of test_soak_rules (m = 12, the minute at --interval 5s: z 6.7; m = 240, 4 h of minutes:
     * 5.1). The steady rule needs none: it asks a second, independent condition of the job's GPUs. */
    soak_change c;
    r = soak_changepoint(x, n, links, links ? p->busbw_drop_pct : p->step_rise_pct, p->cp_zmin * (1 + 4.0 / m),
                         p->cp_min_side, &c);
    if (r != DDP_OK || !c.found) continue;
    int i = c.split;
    if (links) {
      const soak_link_id *l = &s->link[j];
      const slow_rank *why = NULL; /* the fewest causes: a rank on this link that slowed within one interval */
      for (int q = 0; q < nslow && !why; q++)
        if (abs(slow[q].interval - (i + 1)) <= 1 && link_on(l, slow[q].host)) why = &slow[q];
      if (why)
        r = add(v, i + 1, s->t0[i], l->host, -1, "soak_busbw_drop", SEV_INFO, l->scope, l->name, c.late, c.early,
                "GB/s",
                "busbw dropped from interval %d (%.0f s): median %.3g GB/s after, %.3g before (%+.1f %%, z %.1f); "
                "explained by rank %d's slowdown on %s (its %s from interval %d): an allreduce waits for its slowest "
                "rank, so the link is not named",
                i + 1, s->t0[i], c.late, c.early, 100 * c.rel, c.z, why->rank, why->host, why->what, why->interval);
      else
        r = add(v, i + 1, s->t0[i], l->host, -1, "soak_busbw_drop", SEV_FAIL, l->scope, l->name, c.late, c.early,
                "GB/s",
                "busbw dropped from interval %d (%.0f s): median %.3g GB/s after, %.3g before (%+.1f %%, z %.1f); the "
                "link degraded during the soak",
                i + 1, s->t0[i], c.late, c.early, 100 * c.rel, c.z);
    } else {
      const soak_rank_id *rk = &s->rank[j];
      char sub[128];
      snprintf(sub, sizeof sub, "rank %d (%s)", rk->rank, rk->host);
      double early = c.early, late = c.late; /* the rank's own milliseconds, either side of the split */
      if (peers) early = finite_median(raw, i, tmp), late = finite_median(raw + i, n - i, tmp);
      r = add(v, i + 1, s->t0[i], rk->host, rk->rank, "soak_step_rise", SEV_FAIL, SCOPE_RANK, sub, late, early, "ms",
              "step time rose from interval %d (%.0f s): median %.3g ms after, %.3g before (%+.1f %% %s, z %.1f); look "
              "for throttling, a CPU quota or other work on %s",
              i + 1, s->t0[i], late, early, 100 * c.rel, peers ? "against the median rank" : "on its own", c.z,
              rk->host);
    }
  }
  free(x);
  return r;
}

ddp_result soak_judge_links(const soak_series *s, const soak_params *p, const soak_gpu_steady *st, soak_verdicts *v) {
  /* the ranks that slowed, and from when: each named step-time rise (the ranks' rule, judged here on the side) and
   * each GPU whose throughput sank (st, as soak_judge_steady left it) */
  soak_verdicts rk;
  soak_verdicts_init(&rk);
  ddp_result r = judge_series(s, p, &rk, 0, NULL, 0);
  int cap = rk.f.n + s->ngpu + 1, n = 0;
  slow_rank *slow = calloc((size_t)cap, sizeof *slow);
  if (r == DDP_OK && !slow) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int k = 0; r == DDP_OK && k < rk.f.n; k++) {
    const finding *f = &rk.f.v[k];
    if (strcmp(f->check, "soak_step_rise")) continue;
    slow[n] = (slow_rank){.rank = f->rank, .interval = rk.interval[k]};
    snprintf(slow[n].host, sizeof slow[n].host, "%.63s", f->host);
    snprintf(slow[n++].what, sizeof slow[0].what, "compute time's rise");
  }
  for (int k = 0; r == DDP_OK && st && k < s->ngpu; k++) {
    if (!st[k].named || st[k].start_interval < 1) continue;
    slow[n] = (slow_rank){.rank = s->gpu[k].rank, .interval = st[k].start_interval};
    snprintf(slow[n].host, sizeof slow[n].host, "%s", s->gpu[k].host);
    snprintf(slow[n++].what, sizeof slow[0].what, "GEMM's drop");
  }
  soak_verdicts_free(&rk);
  if (r == DDP_OK) r = judge_series(s, p, v, 1, slow, n);
  free(slow);
  return r;
}

ddp_result soak_judge_ranks(const soak_series *s, const soak_params *p, soak_verdicts *v) {
  return judge_series(s, p, v, 0, NULL, 0);
}

ddp_result soak_judge(const soak_series *s, const soak_params *p, soak_verdicts *v) {
  soak_gpu_steady *st = calloc((size_t)(s->ngpu > 0 ? s->ngpu : 1), sizeof *st);
  if (!st) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  ddp_result r = soak_judge_counters(s, p, v);
  if (r == DDP_OK) r = soak_judge_throttle(s, p, v, st);
  if (r == DDP_OK) r = soak_judge_steady(s, p, v, st);
  if (r == DDP_OK) r = soak_judge_links(s, p, st, v);
  if (r == DDP_OK) r = soak_judge_ranks(s, p, v);
  free(st);
  return r;
}
