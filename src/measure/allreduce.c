/* allreduce.c: the "allreduce" measurement: in-place fp32 allreduces over a group at a few sizes, each
 * iteration timed between device events on every rank; the group's rank 0 takes each iteration's slowest rank
 * (a collective ends when its last rank does), the median over iterations (a preempted iteration does not
 * condemn a group) and records nccl-tests' busbw, with every iteration's busbw (its slowest rank's) as the
 * record's samples, in order: a link that stalls shows there even when the median hides it. Acceptance runs it over each node and over node pairs. It
 * never judges its figures (verdict/ does) and never prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "allreduce.h"
#include "stats.h"
#include "watchdog.h"

/* ---- options --------------------------------------------------------------------------------------- */
static int parse_sizes(void *field, const char *v, char *err, size_t n) {
  allreduce_params *p = field;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", v);
  int k = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *end = NULL;
    double x = strtod(t, &end);
    if (end == t || *end || !(x > 0 && x <= 65536) || k == ALLREDUCE_MAX_SIZES)
      return snprintf(err, n, "a comma list of at most %d sizes in MiB, each in (0, 65536]", ALLREDUCE_MAX_SIZES), -1;
    p->mib[k++] = x;
  }
  if (!k) return snprintf(err, n, "at least one size in MiB"), -1;
  p->nsizes = k;
  return 0;
}
static void format_sizes(const void *field, char *out, size_t n) {
  const allreduce_params *p = field;
  size_t o = 0;
  out[0] = 0;
  for (int k = 0; k < p->nsizes && o < n; k++) o += (size_t)snprintf(out + o, n - o, "%s%g", k ? "," : "", p->mib[k]);
}
static const opt_spec AR[] = {
    {"allreduce_mib", NULL, 0, OPT_CUSTOM, 0, 0, "64", .parse = parse_sizes, .format = format_sizes, .arg = "LIST",
     .help = "the allreduce measurement's sizes, MiB (comma-separated, at most 4)"},
    {"allreduce_iters", NULL, 0, OPT_INT, offsetof(allreduce_params, iters), 0, "5", 1, 1 << 20,
     .help = "the allreduce measurement's timed allreduces per size and group"},
};
static const opt_table AR_TABLE = {"the allreduce measurement (--group-measure allreduce)", AR, 2};

/* The group's hosts on its rank 0, as a label: ("host", "h") when it is one host, ("hosts", "a,b") else. */
static ddp_result hosts_label(const measure_env *env, const measure_group *g, char *key, char *val, size_t n) {
  char mine[64];
  snprintf(mine, sizeof mine, "%.63s", env->dist->host);
  char (*all)[64] = g->rank == 0 ? calloc((size_t)g->size, sizeof *all) : NULL;
  if (g->rank == 0 && !all) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  int e = MPI_Gather(mine, 64, MPI_CHAR, all, 64, MPI_CHAR, 0, g->mpi);
  if (e != MPI_SUCCESS) {
    free(all);
    return mpi_fail(e, "MPI_Gather(hosts)", __FILE__, __LINE__);
  }
  size_t o = 0;
  int distinct = 0;
  val[0] = 0;
  for (int i = 0; all && i < g->size; i++) {
    int seen = 0;
    for (int j = 0; j < i && !seen; j++) seen = !strcmp(all[i], all[j]);
    if (seen || o >= n) continue;
    o += (size_t)snprintf(val + o, n - o, "%s%s", distinct++ ? "," : "", all[i]);
  }
  strcpy(key, distinct > 1 ? "hosts" : "host");
  free(all);
  return DDP_OK;
}

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
  allreduce_params defaults;
  const allreduce_params *p = measure_params(env, &measure_allreduce, &defaults);
  if (!p) return DDP_FAIL(DDP_ERR_INTERNAL, "allreduce: no parameters");
  char hkey[8], hval[512];
  DDP_TRY(hosts_label(env, g, hkey, hval, sizeof hval));
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
    for (int i = 0; i < it; i++) /* each iteration's busbw, in place of its time (t is not read again) */
      t[i] = n > 1 && t[i] > 0 ? bytes / (t[i] * 1e-3) / 1e9 * 2.0 * (n - 1) / n : NAN;
    char b[32], rk[16];
    snprintf(b, sizeof b, "%zu", bytes);
    snprintf(rk, sizeof rk, "%d", n);
    r = result_add(out, "allreduce", g->name, "busbw_gbs", "GB/s", BETTER_HIGHER, busbw, NULL, n > 1 ? t : NULL, n > 1 ? it : 0, "bytes", b,
                   "ranks", rk, hkey, hval, NULL);
  }
  if (s) dev->stream_destroy(dev, s);
  if (buf) dev->free(dev, buf);
  free(ms), free(all), free(t);
  return r;
}

const measurement measure_allreduce = {
    "allreduce", "in-place fp32 allreduce over the group: busbw per size (acceptance: each node, node pairs)",
    ar_run, NULL, &AR_TABLE, sizeof(allreduce_params)};
