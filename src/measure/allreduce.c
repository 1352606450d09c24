/* measure_allreduce.c: the "allreduce" measurement: in-place fp32 allreduces over a group at a few sizes, each
 * iteration timed between device events on every rank; the group's rank 0 takes each iteration's slowest rank
 * (a collective ends when its last rank does), the median over iterations (a preempted iteration does not
 * condemn a group) and records nccl-tests' busbw. Acceptance runs it over each node and over node pairs. It
 * never judges its figures (accept.h does) and never prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "stats.h"
#include "watchdog.h"

/* ms of each of `iters` allreduces of `bytes` on this rank (one warm-up first). */
static ddp_result time_iters(ddp_comm *c, ddp_device *dev, void *buf, size_t bytes, int iters, double *ms) {
  ddp_stream *s = NULL;
  ddp_event **ev = calloc((size_t)iters + 1, sizeof *ev);
  if (!ev) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  ddp_result r = dev->stream_create(dev, &s, 0);
  for (int i = 0; r == DDP_OK && i <= iters; i++) r = dev->event_create(dev, &ev[i], 1);
  if (r == DDP_OK) r = c->allreduce(c, buf, bytes / 4, DT_F32, s);
  if (r == DDP_OK) r = dev->stream_synchronize(dev, s);
  if (r == DDP_OK) r = c->barrier(c);
  if (r == DDP_OK) r = dev->event_record(dev, ev[0], s);
  for (int i = 0; r == DDP_OK && i < iters; i++) {
    r = c->allreduce(c, buf, bytes / 4, DT_F32, s);
    /* host memory (cpu): the MPI collective is in flight until the stream is synchronised, and the next one
     * reuses the buffer */
    if (r == DDP_OK && dev->host_memory) r = dev->stream_synchronize(dev, s);
    if (r == DDP_OK) r = dev->event_record(dev, ev[i + 1], s);
  }
  if (r == DDP_OK) r = dev->stream_synchronize(dev, s); /* ev[iters] is the last work on s */
  for (int i = 0; r == DDP_OK && i < iters; i++) {
    float t = 0;
    r = dev->event_elapsed_ms(dev, &t, ev[i], ev[i + 1]);
    ms[i] = t;
  }
  for (int i = 0; i <= iters; i++)
    if (ev[i]) dev->event_destroy(dev, ev[i]);
  free(ev);
  if (s) dev->stream_destroy(dev, s);
  return r;
}

static ddp_result ar_run(const measure_env *env, const measure_group *g, result_doc *out) {
  static const allreduce_params defaults = {1, {64}, 5};
  const allreduce_params *p = env->params ? env->params : &defaults;
  ddp_device *dev = env->dev;
  double maxmib = 0;
  for (int k = 0; k < p->nsizes; k++) maxmib = fmax(maxmib, p->mib[k]);
  size_t maxbytes = ((size_t)(maxmib * (1 << 20)) & ~(size_t)3) + 4;
  int n = g->size, it = p->iters > 0 ? p->iters : 1;
  void *buf = NULL;
  ddp_stream *s = NULL;
  double *ms = calloc((size_t)it, sizeof *ms), *all = g->rank == 0 ? calloc((size_t)it * n, sizeof *all) : NULL;
  double *t = calloc((size_t)it, sizeof *t);
  ddp_result r = ms && t && (g->rank || all) ? dev->alloc(dev, &buf, maxbytes) : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (r == DDP_OK) r = dev->stream_create(dev, &s, 0);
  if (r == DDP_OK) r = dev->memset_zero(dev, buf, maxbytes, s); /* zeros: no denormals to slow a CPU */
  if (r == DDP_OK) r = dev->stream_synchronize(dev, s);
  for (int k = 0; r == DDP_OK && k < p->nsizes; k++) {
    size_t bytes = (size_t)(p->mib[k] * (1 << 20)) & ~(size_t)3;
    r = time_iters(g->comm, dev, buf, bytes, it, ms);
    if (r == DDP_OK) watchdog_tick(NULL); /* one size done: progress (a slow link may take minutes a size) */
    int e = r == DDP_OK ? MPI_Gather(ms, it, MPI_DOUBLE, all, it, MPI_DOUBLE, 0, g->mpi) : MPI_SUCCESS;
    if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Gather", __FILE__, __LINE__);
    if (r != DDP_OK || g->rank != 0) continue;
    for (int i = 0; i < it; i++) {
      t[i] = 0;
      for (int q = 0; q < n; q++) t[i] = fmax(t[i], all[(size_t)q * it + i]);
    }
    double tm = stats_percentile(t, it, 0.5);
    double busbw = n > 1 && tm > 0 ? bytes / (tm * 1e-3) / 1e9 * 2.0 * (n - 1) / n : NAN;
    char b[32], rk[16];
    snprintf(b, sizeof b, "%zu", bytes);
    snprintf(rk, sizeof rk, "%d", n);
    r = result_add(out, "allreduce", g->name, "busbw_gbs", "GB/s", BETTER_HIGHER, busbw, NULL, NULL, 0, "bytes", b,
                   "ranks", rk, NULL);
  }
  if (s) dev->stream_destroy(dev, s);
  if (buf) dev->free(dev, buf);
  free(ms), free(all), free(t);
  return r;
}

const measurement measure_allreduce = {
    "allreduce", "in-place fp32 allreduce over the group: busbw per size (acceptance: each node, node pairs)",
    ar_run, NULL};
