/* health.c: the sustained GEMM and the pinned-copy measurements of one device (see health.h). Times come from
 * device events; the wall clock only bounds how long the loop runs. It must never judge a figure or print
 * one, and never run inside a training step. */
#include "health.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

const char *health_prec_name(health_prec p) {
  static const char *n[] = {"bf16", "fp16", "tf32", "fp32"};
  return p >= 0 && p < HEALTH_NPREC ? n[p] : "?";
}

typedef struct {
  ddp_device *dev;
  ddp_stream *s;
  ddp_event *e0, *e1;
  void *a, *b, *c, *h;
} res;

static void res_free(res *r) {
  ddp_device *d = r->dev;
  if (r->e0) d->event_destroy(d, r->e0);
  if (r->e1) d->event_destroy(d, r->e1);
  if (r->s) d->stream_destroy(d, r->s);
  if (r->a) d->free(d, r->a);
  if (r->b) d->free(d, r->b);
  if (r->c) d->free(d, r->c);
  if (r->h) d->free_host(d, r->h);
}

static ddp_result res_init(res *r, ddp_device *dev) {
  memset(r, 0, sizeof *r);
  r->dev = dev;
  DDP_TRY(dev->stream_create(dev, &r->s, 0));
  DDP_TRY(dev->event_create(dev, &r->e0, 1));
  DDP_TRY(dev->event_create(dev, &r->e1, 1));
  return DDP_OK;
}

/* k GEMMs between two events; returns their time in ms (synchronises the host with the end event). */
static ddp_result gemm_batch(res *r, const ddp_gemm *g, int k, float *ms) {
  ddp_device *d = r->dev;
  DDP_TRY(d->event_record(d, r->e0, r->s));
  for (int i = 0; i < k; i++) DDP_TRY(d->gemm(d, r->s, g));
  DDP_TRY(d->event_record(d, r->e1, r->s));
  DDP_TRY(d->stream_synchronize(d, r->s)); /* e1 is the last work on s */
  return d->event_elapsed_ms(d, ms, r->e0, r->e1);
}

static unsigned median_u(const unsigned *x, int n) {
  double *t = malloc((size_t)n * sizeof *t);
  if (!t) return 0;
  for (int i = 0; i < n; i++) t[i] = x[i];
  unsigned m = (unsigned)lround(stats_percentile(t, n, 0.5));
  free(t);
  return m;
}

static ddp_result gemm_loop(res *r, health_prec prec, int n, double seconds, double interval_s, const nvml_api *nvml,
                            nvml_device nd, health_gemm_result *out, double *rate, double *start_s, unsigned *mhz,
                            double *watts) {
  ddp_device *d = r->dev;
  ddp_dtype t = prec == HEALTH_BF16 ? DT_BF16 : prec == HEALTH_FP16 ? DT_F16 : DT_F32;
  size_t bytes = (size_t)n * n * dtype_size(t);
  DDP_TRY(d->alloc(d, &r->a, bytes));
  DDP_TRY(d->alloc(d, &r->b, bytes));
  DDP_TRY(d->alloc(d, &r->c, bytes));
  /* inputs in [-1, 1]: no overflow in any precision, and no zeros that would let hardware skip work */
  DDP_TRY(d->generate(d, r->s, r->a, t, (size_t)n * n, 12345, 1, 0, 1.0));
  DDP_TRY(d->generate(d, r->s, r->b, t, (size_t)n * n, 12345, 2, 0, 1.0));
  ddp_gemm g = {0, 0, n, n, n, r->a, n, r->b, n, r->c, n, t, t, prec == HEALTH_TF32, 0};
  double flop = 2.0 * n * (double)n * n;

  /* one GEMM sizes the intervals; then ~0.3 s of warm-up (clocks ramp, cuBLASLt picks its algorithm) */
  float ms = 0;
  DDP_TRY(gemm_batch(r, &g, 1, &ms));
  int k = ms > 0 ? (int)(interval_s * 1e3 / ms) : 1;
  if (k < 1) k = 1;
  double t0 = ddp_now();
  while (ddp_now() - t0 < 0.3) DDP_TRY(gemm_batch(r, &g, k, &ms));

  out->gemms_per_interval = k;
  int m = 0;
  t0 = ddp_now();
  while (m < HEALTH_MAX_INTERVALS) {
    double at = ddp_now() - t0;
    if (at >= seconds) break;
    DDP_TRY(gemm_batch(r, &g, k, &ms));
    start_s[m] = at;
    rate[m] = ms > 0 ? k * flop / (ms * 1e-3) / 1e12 : NAN;
    if (nvml && nd) { /* sampled right after the interval, the GPU still at its loaded clock and power */
      nvml_sample smp;
      nvml_sample_read(nvml, nd, &smp);
      if (smp.known & 1) mhz[out->nsamples] = smp.sm_mhz;
      if (smp.known & 2) watts[out->nsamples] = smp.power_w;
      if (smp.known & 4 && smp.temp_c > out->temp_c_max) out->temp_c_max = smp.temp_c;
      out->reasons |= smp.reasons;
      if (smp.power_limit_w > 0) out->power_limit_w = smp.power_limit_w;
      if (smp.known & 3) out->nsamples++;
    }
    m++;
  }
  out->seconds = ddp_now() - t0;
  out->intervals = m;
  if (!m) return DDP_FAIL(DDP_ERR_INTERNAL, "sustained GEMM: no interval completed in %.1f s", seconds);
  ddp_stats st = stats_compute(rate, m);
  out->median_tflops = st.median;
  out->min_tflops = st.min;
  out->max_tflops = st.max;
  /* first and last second: medians of the intervals that started in them */
  int nf = 0, nl = 0;
  double *tmp = malloc((size_t)m * sizeof *tmp);
  DDP_CHECK_ALLOC(tmp);
  for (int i = 0; i < m; i++)
    if (start_s[i] < 1.0) tmp[nf++] = rate[i];
  out->first_tflops = nf ? stats_percentile(tmp, nf, 0.5) : NAN;
  double last_from = out->seconds - 1.0;
  for (int i = 0; i < m; i++)
    if (start_s[i] >= last_from) tmp[nl++] = rate[i];
  if (!nl) tmp[nl++] = rate[m - 1];
  out->last_tflops = stats_percentile(tmp, nl, 0.5);
  free(tmp);
  out->drift_pct = 100 * (out->last_tflops - out->first_tflops) / out->first_tflops;
  if (out->nsamples) {
    int ns = out->nsamples;
    out->sm_mhz_median = median_u(mhz, ns);
    out->sm_mhz_min = out->sm_mhz_max = mhz[0];
    out->power_w_max = watts[0];
    for (int i = 0; i < ns; i++) {
      if (mhz[i] < out->sm_mhz_min) out->sm_mhz_min = mhz[i];
      if (mhz[i] > out->sm_mhz_max) out->sm_mhz_max = mhz[i];
      if (watts[i] > out->power_w_max) out->power_w_max = watts[i];
    }
    out->power_w_median = stats_percentile(watts, ns, 0.5);
  }
  return DDP_OK;
}

ddp_result health_gemm_run(ddp_device *dev, health_prec prec, int n, double seconds, double interval_s,
                           const nvml_api *nvml, nvml_device nd, health_gemm_result *out) {
  memset(out, 0, sizeof *out);
  out->prec = prec;
  out->n = n;
  if (dev->host_memory && prec != HEALTH_FP32)
    return ddp_usage_error("the %s GEMM needs the cuda device: the cpu device (OpenBLAS) measures fp32 only",
                           health_prec_name(prec));
  if (n < 1 || seconds <= 0 || interval_s <= 0) return ddp_usage_error("sustained GEMM: bad size or time");
  double *rate = calloc(HEALTH_MAX_INTERVALS, sizeof *rate), *start_s = calloc(HEALTH_MAX_INTERVALS, sizeof *start_s);
  double *watts = calloc(HEALTH_MAX_INTERVALS, sizeof *watts);
  unsigned *mhz = calloc(HEALTH_MAX_INTERVALS, sizeof *mhz);
  res r;
  ddp_result e = rate && start_s && watts && mhz ? res_init(&r, dev) : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (e == DDP_OK) {
    e = gemm_loop(&r, prec, n, seconds, interval_s, nvml, nd, out, rate, start_s, mhz, watts);
    ddp_result e2 = dev->stream_synchronize(dev, r.s);
    if (e == DDP_OK) e = e2;
    res_free(&r);
  }
  free(rate);
  free(start_s);
  free(watts);
  free(mhz);
  return e;
}

static ddp_result copy_dir(res *r, void *dst, const void *src, size_t bytes, int iters, double *gbps, double *med,
                           double *min) {
  ddp_device *d = r->dev;
  float ms = 0;
  DDP_TRY(d->copy(d, dst, src, bytes, r->s)); /* warm-up */
  DDP_TRY(d->stream_synchronize(d, r->s));
  for (int i = 0; i < iters; i++) {
    DDP_TRY(d->event_record(d, r->e0, r->s));
    DDP_TRY(d->copy(d, dst, src, bytes, r->s));
    DDP_TRY(d->event_record(d, r->e1, r->s));
    DDP_TRY(d->stream_synchronize(d, r->s)); /* e1 is the last work on s */
    DDP_TRY(d->event_elapsed_ms(d, &ms, r->e0, r->e1));
    gbps[i] = ms > 0 ? bytes / (ms * 1e-3) / 1e9 : NAN;
  }
  ddp_stats st = stats_compute(gbps, iters);
  *med = st.median;
  *min = st.min;
  return DDP_OK;
}

ddp_result health_copy_run(ddp_device *dev, size_t bytes, int iters, health_copy_result *out) {
  memset(out, 0, sizeof *out);
  out->bytes = bytes;
  out->iters = iters;
  if (iters < 1 || bytes == 0) return ddp_usage_error("copy test: bad size or iteration count");
  double *gbps = calloc((size_t)iters, sizeof *gbps);
  DDP_CHECK_ALLOC(gbps);
  res r;
  ddp_result e = res_init(&r, dev);
  if (e == DDP_OK) e = dev->alloc_host(dev, &r.h, bytes);
  if (e == DDP_OK) e = dev->alloc(dev, &r.a, bytes);
  if (e == DDP_OK) e = dev->memset_zero(dev, r.a, bytes, r.s);
  if (e == DDP_OK) memset(r.h, 1, bytes);
  if (e == DDP_OK) e = copy_dir(&r, r.a, r.h, bytes, iters, gbps, &out->h2d_gbps, &out->h2d_min_gbps);
  if (e == DDP_OK) e = copy_dir(&r, r.h, r.a, bytes, iters, gbps, &out->d2h_gbps, &out->d2h_min_gbps);
  if (r.s) dev->stream_synchronize(dev, r.s);
  res_free(&r);
  free(gbps);
  return e;
}

ddp_result health_peak_tflops(ddp_device *dev, int precision, double seconds, double *tflops) {
  static const health_prec of[] = {HEALTH_FP32, HEALTH_TF32, HEALTH_BF16, HEALTH_FP16};
  health_gemm_result g;
  if (precision < 0 || precision > 3) return DDP_FAIL(DDP_ERR_INTERNAL, "precision %d", precision);
  DDP_TRY(health_gemm_run(dev, of[precision], 8192, seconds, 0.1, NULL, NULL, &g));
  *tflops = g.median_tflops;
  return DDP_OK;
}
