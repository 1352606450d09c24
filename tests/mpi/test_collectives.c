/* test_collectives (1, 2, 3 and 4 ranks): the comm interface's general collectives on the CPU device with
 * the MPI comm, against an independent oracle, and nccl-tests' accounting.
 *  - every collective (allreduce, reduce_scatter, all_gather, broadcast, alltoall, reduce, gather, scatter,
 *    sendrecv, alltoallv) x every type x every op (reductions) x counts {0, 1, 7, 1000} x out-of-place and
 *    in-place (alltoall, alltoallv, sendrecv: out-of-place only; alltoallv at skews 0, 1 and 2.5): each rank's
 *    input is random (its own generator, values kept where the type is exact), the oracle gathers every
 *    rank's input with MPI_Allgather and computes the expected output in double / int64. Exact, except avg in
 *    floating types: within 2 ULP of the exact quotient (nccl-tests' tolerance). What a call must not write
 *    (reduce's and gather's receive buffer off the root, alltoallv's past what a rank receives) still holds
 *    what was there: the fill, or the rank's own input in place;
 *  - in-place and out-of-place give bitwise the same result on the same input;
 *  - out-of-place leaves the send buffer alone; alltoall, alltoallv and sendrecv in place are refused;
 *  - ops enqueued back to back on one stream complete in order (the sweep's timed loop);
 *  - with the argument `cuda` (label gpu; exits 77 without a GPU): the same matrix on the CUDA device through
 *    NCCL (when each rank has its own GPU) and through MPI staged in host memory, each eagerly and captured
 *    in a CUDA graph;
 *  - the sweep as a measurement (measure_collectives) through measure.h's driver, over the world and each node;
 *  - nccl-tests' size columns and busbw factors (doc/PERFORMANCE.md;
 *    reduce_perf, gather_perf, scatter_perf, sendrecv_perf, alltoallv_perf) for n = 1..8, a published
 *    nccl-tests row re-derived from its time, and alltoallv's matrix: uniform at skew 0, row sums within the
 *    total, the same for the same seed, non-decreasing in the total, the hot rank's load near n / H(n). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_mpi.h"
#include "collectives.h"
#include "config.h"
#include "measure.h"
#include "result.h"
#include "comm.h"
#include "device.h"
#include "dist.h"
#include "dtype.h"

static int W, R;

/* A value this rank may send so that any order of reduction over W ranks is exact in the type. Signed
 * types get negative values too. */
static double draw(unsigned *seed, ddp_dtype t, ddp_redop op) {
  int lim = t == DT_BF16 ? 256 : t == DT_I8 ? 127 : t == DT_U8 ? 255 : t == DT_F16 ? 2048 : 100000;
  int sign = (t == DT_I8 || t == DT_I32 || t == DT_I64 || dtype_is_float(t)) && rand_r(seed) % 2 ? -1 : 1;
  switch (op) {
    case REDOP_PROD: return rand_r(seed) % 2 ? 2 : 1; /* at most 2^4 with 4 ranks */
    case REDOP_MAX:
    case REDOP_MIN: return sign * (rand_r(seed) % (lim / 2));
    default: return (sign < 0 && op == REDOP_SUM ? -1 : 1) * (rand_r(seed) % (lim / W / 2 + 1));
  }
}

/* What the oracle knows: every rank's input (all: W x stride elements), this rank's own and its fill. */
typedef struct {
  ddp_coll_kind kind;
  ddp_redop op;
  ddp_dtype t;
  const char *all, *own; /* own: this rank's input, as placed before an in-place call */
  size_t stride, count;
  int root, inplace;
  const size_t *m; /* alltoallv's matrix */
} truth;

#define FILL NAN /* the oracle's answer for "still the 0x5a fill" (compared bytewise: not every type's value is a double) */

/* Expected out[k] for this rank, or FILL. */
static double oracle(const truth *u, size_t k) {
  size_t es = dtype_size(u->t), count = u->count, sn = u->stride;
  const char *all = u->all;
  ddp_redop op = u->op;
  int off_root = R != u->root;
  switch (u->kind) {
    case COLL_REDUCE: /* at the root, allreduce's value */
      if (off_root) return u->inplace ? dtype_load(u->own, u->t, k) : FILL;
      /* fall through */
    case COLL_ALLREDUCE:
    case COLL_REDUCE_SCATTER: {
      size_t i = u->kind == COLL_REDUCE_SCATTER ? (size_t)R * count + k : k;
      double acc = dtype_load(all, u->t, i);
      for (int r = 1; r < W; r++) {
        double v = dtype_load(all + (size_t)r * sn * es, u->t, i);
        acc = op == REDOP_PROD ? acc * v : op == REDOP_MAX ? fmax(acc, v) : op == REDOP_MIN ? fmin(acc, v) : acc + v;
      }
      if (op == REDOP_AVG) acc = dtype_is_float(u->t) ? acc / W : trunc(acc / W);
      return acc;
    }
    case COLL_GATHER:
      if (off_root) return u->inplace && k / count == (size_t)R ? dtype_load(u->own, u->t, k % count) : FILL;
      /* fall through */
    case COLL_ALL_GATHER: return dtype_load(all + (k / count) * sn * es, u->t, k % count);
    case COLL_ALLTOALL: return dtype_load(all + (k / count) * sn * es, u->t, (size_t)R * count + k % count);
    case COLL_SCATTER: return dtype_load(all + (size_t)u->root * sn * es, u->t, (size_t)R * count + k);
    case COLL_SENDRECV: return dtype_load(all + (size_t)((R + W - 1) % W) * sn * es, u->t, k);
    case COLL_ALLTOALLV:
      for (int i = 0; i < W; i++) { /* sender i's part, in rank order; within it, what i sent to R */
        size_t c = u->m[(size_t)i * W + R], at = 0;
        if (k < c) {
          for (int j = 0; j < R; j++) at += u->m[(size_t)i * W + j];
          return dtype_load(all + (size_t)i * sn * es, u->t, at + k);
        }
        k -= c;
      }
      return FILL; /* past what this rank receives */
    default: return dtype_load(all + (size_t)u->root * sn * es, u->t, k);
  }
}

/* ULP distance between the stored got and the exact value, in the type (0 when bitwise equal). */
static int close_enough(ddp_dtype t, const void *got, double want, int ulps) {
  char w[8];
  dtype_store(w, t, 0, want);
  size_t es = dtype_size(t);
  if (!memcmp(w, got, es)) return 1;
  if (!ulps) return 0;
  double g = dtype_load(got, t, 0);
  double ulp = t == DT_BF16 ? 1.0 / 128 : t == DT_F16 ? 1.0 / 1024 : t == DT_F32 ? 1.0 / 8388608 : 1e-15;
  return fabs(g - want) <= ulps * ulp * fmax(fabs(want), 1e-30);
}

/* One call through device buffers (host memory on the cpu device), eagerly or captured in a graph; returns
 * the number of wrong elements on this rank and leaves the result in res (recv_count elements). alltoallv:
 * the matrix of `skew` for count per peer. */
static int use_graph;
static long one(ddp_device *d, ddp_comm *c, ddp_stream *s, ddp_coll_kind kind, ddp_dtype t, ddp_redop op, size_t count,
                int inplace, double skew, unsigned seed, char *res) {
  size_t *m = kind == COLL_ALLTOALLV ? calloc((size_t)W * W, sizeof *m) : NULL;
  if (m) coll_alltoallv_matrix(m, W, count * W, skew, 7);
  ddp_coll a = {kind, NULL, NULL, count, t, op, W - 1, m};
  size_t es = dtype_size(t), sn = coll_send_count(&a, R, W), rn = coll_recv_count(&a, R, W);
  size_t S = 0, RN = 0; /* the most any rank sends and receives: every rank's input is S elements */
  for (int r = 0; r < W; r++) {
    size_t x = coll_send_count(&a, r, W), y = coll_recv_count(&a, r, W);
    S = x > S ? x : S, RN = y > RN ? y : RN;
  }
  size_t big = ((S > RN ? S : RN) + count * W + 1) * es;
  char *send = calloc(big, 1), *recv = calloc(big, 1), *all = calloc((size_t)W * S + 1, es), *keep = calloc(big, 1);
  void *dsend = NULL, *drecv = NULL;
  ddp_result r = d->alloc(d, &dsend, big);
  if (r == DDP_OK) r = d->alloc(d, &drecv, big);
  for (size_t i = 0; i < S; i++) dtype_store(send, t, i, draw(&seed, t, op));
  MPI_Allgather(send, (int)(S * es), MPI_BYTE, all, (int)(S * es), MPI_BYTE, MPI_COMM_WORLD);
  memset(recv, 0x5a, big);
  char *ds = dsend, *dr = drecv;
  a.send = ds;
  a.recv = dr;
  if (inplace) {
    if (kind == COLL_ALL_GATHER || kind == COLL_GATHER) {
      memcpy(recv + (size_t)R * count * es, send, count * es);
      a.send = dr + (size_t)R * count * es;
    } else {
      memcpy(recv, send, S * es);
      a.send = dr;
      if (kind == COLL_REDUCE_SCATTER || kind == COLL_SCATTER) a.recv = dr + (size_t)R * count * es;
    }
  }
  if (r == DDP_OK) r = d->copy(d, dsend, send, big, s);
  if (r == DDP_OK) r = d->copy(d, drecv, recv, big, s);
  if (r == DDP_OK && use_graph) {
    ddp_graph *g = NULL;
    r = d->graph_begin(d, s);
    ddp_result r1 = r == DDP_OK ? c->collective(c, &a, s) : r;
    ddp_result r2 = r == DDP_OK ? d->graph_end(d, s, &g) : r;
    r = r1 != DDP_OK ? r1 : r2;
    if (r == DDP_OK) r = d->graph_launch(d, g, s);
    if (r == DDP_OK) r = d->stream_synchronize(d, s);
    if (g) d->graph_destroy(d, g);
  } else if (r == DDP_OK) {
    r = c->collective(c, &a, s);
  }
  if (r == DDP_OK) r = d->copy(d, keep, dsend, big, s);
  if (r == DDP_OK) r = d->copy(d, recv, drecv, big, s);
  if (r == DDP_OK) r = d->stream_synchronize(d, s);
  CHECK(r == DDP_OK, "%s %s %s count %zu inplace %d", coll_name(kind), dtype_name(t), redop_name(op), count, inplace);
  long wrong = 0;
  int ulps = op == REDOP_AVG && dtype_is_float(t) && coll_is_reduction(kind) ? 2 : 0;
  const char *out = recv + ((const char *)a.recv - dr);
  /* reduce and gather off the root: the whole receive region they were given, to show it untouched */
  size_t region = (kind == COLL_REDUCE ? count : kind == COLL_GATHER ? count * W : kind == COLL_ALLTOALLV ? RN : rn);
  truth u = {kind, op, t, all, send, S, count, W - 1, inplace, m};
  for (size_t k = 0; k < region; k++) {
    double want = oracle(&u, k);
    static const char fill[8] = {0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a};
    if (isnan(want) ? memcmp(out + k * es, fill, es) != 0 : !close_enough(t, out + k * es, want, ulps)) {
      if (!wrong)
        fprintf(stderr, "rank %d %s %s %s count %zu inplace %d: element %zu got %g want %g\n", R, coll_name(kind),
                dtype_name(t), redop_name(op), count, inplace, k, dtype_load(out, t, k), want);
      wrong++;
    }
  }
  if (!inplace) CHECK(!memcmp(send, keep, sn * es), "%s out-of-place changed its send buffer", coll_name(kind));
  memcpy(res, out, rn * es);
  if (dsend) d->free(d, dsend);
  if (drecv) d->free(d, drecv);
  free(send), free(recv), free(all), free(keep), free(m);
  return wrong;
}

static void sizes_check(void) {
  for (int n = 1; n <= 8; n++) {
    size_t bytes = 1 << 20;
    coll_sizes z = coll_sizes_for(COLL_ALLREDUCE, bytes, 4, n);
    CHECK(z.count == bytes / 4 && z.size_bytes == bytes && z.base_bytes == bytes, "allreduce sizes n=%d", n);
    CHECK(fabs(z.bus_factor - 2.0 * (n - 1) / n) < 1e-15, "allreduce factor n=%d: %g", n, z.bus_factor);
    size_t per = bytes / 4 / n;
    z = coll_sizes_for(COLL_REDUCE_SCATTER, bytes, 4, n);
    CHECK(z.count == per && z.recv_count == per && z.send_count == per * n && z.size_bytes == per * n * 4 &&
              z.base_bytes == (double)per * n * 4 && fabs(z.bus_factor - (double)(n - 1) / n) < 1e-15,
          "reduce_scatter n=%d", n);
    z = coll_sizes_for(COLL_ALL_GATHER, bytes, 4, n);
    CHECK(z.count == per && z.send_count == per && z.recv_count == per * n && z.size_bytes == per * n * 4 &&
              z.base_bytes == (double)per * n * 4 && fabs(z.bus_factor - (double)(n - 1) / n) < 1e-15,
          "all_gather n=%d", n);
    z = coll_sizes_for(COLL_ALLTOALL, bytes, 4, n);
    CHECK(z.count == per && z.send_count == per * n && z.recv_count == per * n &&
              z.base_bytes == (double)per * n * 4 && fabs(z.bus_factor - (double)(n - 1) / n) < 1e-15,
          "alltoall n=%d", n);
    z = coll_sizes_for(COLL_BROADCAST, bytes, 2, n);
    CHECK(z.count == bytes / 2 && z.base_bytes == bytes && z.bus_factor == 1.0, "broadcast n=%d", n);
    /* reduce_perf: count elements, factor 1 */
    z = coll_sizes_for(COLL_REDUCE, bytes, 4, n);
    CHECK(z.count == bytes / 4 && z.send_count == bytes / 4 && z.recv_count == bytes / 4 && z.size_bytes == bytes &&
              z.base_bytes == bytes && z.bus_factor == 1.0,
          "reduce n=%d", n);
    /* gather_perf, scatter_perf: count per rank, the total at the root, factor (n-1)/n */
    z = coll_sizes_for(COLL_GATHER, bytes, 4, n);
    CHECK(z.count == per && z.send_count == per && z.recv_count == per * n && z.size_bytes == per * n * 4 &&
              z.base_bytes == (double)per * n * 4 && fabs(z.bus_factor - (double)(n - 1) / n) < 1e-15,
          "gather n=%d", n);
    z = coll_sizes_for(COLL_SCATTER, bytes, 4, n);
    CHECK(z.count == per && z.send_count == per * n && z.recv_count == per && z.size_bytes == per * n * 4 &&
              z.base_bytes == (double)per * n * 4 && fabs(z.bus_factor - (double)(n - 1) / n) < 1e-15,
          "scatter n=%d", n);
    /* sendrecv_perf: count elements to rank + 1, factor 1 */
    z = coll_sizes_for(COLL_SENDRECV, bytes, 2, n);
    CHECK(z.count == bytes / 2 && z.send_count == bytes / 2 && z.recv_count == bytes / 2 && z.size_bytes == bytes &&
              z.base_bytes == bytes && z.bus_factor == 1.0,
          "sendrecv n=%d", n);
    /* alltoallv_perf: the busiest rank's bytes, factor (n-1)/n; at skew 0 exactly alltoall */
    size_t m[64], m2[64], big[64];
    coll_alltoallv_matrix(m, n, per * n, 0, 1);
    coll_sizes za = coll_sizes_alltoallv(m, n, 4, per), zt = coll_sizes_for(COLL_ALLTOALL, bytes, 4, n);
    int uniform = 1;
    for (int k = 0; k < n * n; k++) uniform &= m[k] == per;
    CHECK(uniform && za.count == zt.count && za.send_count == zt.send_count && za.recv_count == zt.recv_count &&
              za.size_bytes == zt.size_bytes && za.base_bytes == zt.base_bytes && za.bus_factor == zt.bus_factor,
          "alltoallv at skew 0 is alltoall, n=%d", n);
    coll_alltoallv_matrix(m, n, per * n, 1, 1);
    coll_alltoallv_matrix(m2, n, per * n, 1, 1);
    coll_alltoallv_matrix(big, n, per * n * 3 + 5, 1, 1);
    za = coll_sizes_alltoallv(m, n, 4, per);
    size_t maxs = 0, maxr = 0;
    int rows_ok = 1, monotone = 1;
    for (int i = 0; i < n; i++) {
      size_t rs = 0, cs = 0;
      for (int j = 0; j < n; j++) {
        rs += m[i * n + j], cs += m[j * n + i];
        monotone &= big[i * n + j] >= m[i * n + j];
      }
      rows_ok &= rs <= per * n && rs + (size_t)n >= per * n; /* floor loses < 1 element per receiver */
      maxs = rs > maxs ? rs : maxs, maxr = cs > maxr ? cs : maxr;
    }
    double H = 0;
    for (int j = 1; j <= n; j++) H += 1.0 / j;
    double hot = (double)maxr / (double)(per * n), want = n / H; /* the hot rank's load in senders' shares */
    CHECK(rows_ok && monotone && !memcmp(m, m2, sizeof(size_t) * n * n), "alltoallv matrix n=%d: rows %d, monotone %d",
          n, rows_ok, monotone);
    CHECK(hot > 0.75 * want && hot < 1.25 * want, "alltoallv skew 1 n=%d: hot rank %.3f shares, want about %.3f", n, hot,
          want);
    CHECK(za.count == per && za.send_count == maxs && za.recv_count == maxr &&
              za.size_bytes == (maxs > maxr ? maxs : maxr) * 4 && za.base_bytes == za.size_bytes &&
              fabs(za.bus_factor - (double)(n - 1) / n) < 1e-15,
          "alltoallv sizes n=%d", n);
  }
  /* another seed makes another rank hot (8 ranks, seeds 1..8: not always the same one) */
  size_t m[64];
  int hot_of[8], differ = 0;
  for (int sd = 1; sd <= 8; sd++) {
    coll_alltoallv_matrix(m, 8, 8000, 1, (uint64_t)sd);
    hot_of[sd - 1] = 0;
    for (int j = 1; j < 8; j++)
      if (m[j] > m[hot_of[sd - 1]]) hot_of[sd - 1] = j;
    differ += hot_of[sd - 1] != hot_of[0];
  }
  CHECK(differ > 0, "alltoallv: the seed picks the hot rank");
  /* nccl-tests issue #194's row: 1073741824 B float allreduce on 2 ranks, 9306.7 us -> 115.37 GB/s both. */
  coll_sizes z = coll_sizes_for(COLL_ALLREDUCE, 1073741824, 4, 2);
  double algbw = z.base_bytes / 9306.7e-6 / 1e9;
  CHECK(fabs(algbw - 115.37) < 0.005 && fabs(algbw * z.bus_factor - 115.37) < 0.005, "published row: %g", algbw);
  CHECK(z.count == 268435456, "published row count %zu", z.count);
}

/* Every collective, type, op, count and placement on one comm; in-place and out-of-place compared. */
static void matrix(ddp_device *d, ddp_comm *c, ddp_stream *s, const char *what) {
  static const size_t counts[] = {0, 1, 7, 1000};
  long total_wrong = 0, calls = 0, disagree = 0;
  size_t most = (size_t)8 * W * W * 1000 + 64; /* alltoallv: a rank may receive W times its share */
  char *res[2] = {malloc(most), malloc(most)};
  static const double skews[] = {0, 1, 2.5}; /* alltoallv's matrices */
  for (int kind = 0; kind < COLL_COUNT; kind++) {
    ddp_coll_kind k = (ddp_coll_kind)kind;
    /* the variants: every op of a reduction, every skew of alltoallv */
    int nv = coll_is_reduction(k) ? REDOP_COUNT : k == COLL_ALLTOALLV ? 3 : 1;
    for (int t = 0; t < DT_COUNT; t++)
      for (int v = 0; v < nv; v++)
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
          unsigned seed = 1234u + 7919u * (unsigned)R + 31u * (unsigned)(kind * 100 + t * 10 + v) + (unsigned)ci;
          ddp_redop op = coll_is_reduction(k) ? (ddp_redop)v : REDOP_SUM;
          double skew = k == COLL_ALLTOALLV ? skews[v] : 0;
          for (int ip = 0; ip < (coll_out_of_place_only(k) ? 1 : 2); ip++) {
            total_wrong += one(d, c, s, k, (ddp_dtype)t, op, counts[ci], ip, skew, seed, res[ip]);
            calls++;
          }
          if (!coll_out_of_place_only(k)) {
            ddp_coll a = {.kind = k, .count = counts[ci], .dt = (ddp_dtype)t, .op = op, .root = W - 1};
            disagree += memcmp(res[0], res[1], coll_recv_count(&a, R, W) * dtype_size((ddp_dtype)t)) != 0;
          }
        }
  }
  MPI_Allreduce(MPI_IN_PLACE, &total_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &disagree, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (R == 0) {
    CHECK(total_wrong == 0, "%s: %ld wrong elements over %ld calls", what, total_wrong, calls);
    CHECK(disagree == 0, "%s: in-place and out-of-place differ in %ld cases", what, disagree);
    printf("%s: %ld calls per rank on %d ranks\n", what, calls, W);
  }
  free(res[0]), free(res[1]);
}

/* measure_collectives registered from here and run by measure.h's driver over the world and each node: its
 * records reach world rank 0, named by group, one busbw per size and placement, nothing wrong. */
static void measurement_check(const ddp_dist *dist, ddp_device *d, ddp_comm *world) {
  CHECK(measure_register(&measure_collectives) == DDP_OK, "measure_collectives registers");
  ddp_config cfg;
  config_defaults(&cfg);
  measure_env env = {.cfg = &cfg, .dist = dist, .dev = d};
  static const measure_group_kind kinds[] = {GROUP_WORLD, GROUP_NODE};
  for (int k = 0; k < 2; k++) {
    measure_round *rounds = NULL;
    int n = 0;
    result_doc doc;
    result_init(&doc);
    CHECK(measure_rounds_build(dist, world, kinds[k], 0, &rounds, &n) == DDP_OK, "groups of kind %d", k);
    CHECK(measure_run(&env, &measure_collectives, rounds, n, R == 0 ? &doc : NULL) == DDP_OK, "run over kind %d", k);
    measure_rounds_free(rounds, n);
    if (R == 0) {
      char group[300];
      snprintf(group, sizeof group, k ? "node:%s" : "world", dist->host);
      int bus = 0, wrong = 0, other = 0;
      for (int i = 0; i < doc.nrecords; i++) {
        const result_record *r = &doc.records[i];
        other += strcmp(r->measurement, "collectives") || strcmp(r->group, group);
        bus += !strcmp(r->metric, "busbw_gbs") && r->value >= 0;
        wrong += !strcmp(r->metric, "nwrong") && r->value != 0;
      }
      CHECK(bus == 4 && !wrong && !other, "measurement over %s: %d busbw records (want 2 sizes x 2 placements), "
            "%d wrong, %d of another measurement or group", group, bus, wrong, other);
      const result_record *big = result_find(&doc, "collectives", group, "algbw_gbs", "bytes", "4194304", "placement",
                                             "in_place", NULL);
      CHECK(big && big->value > 0, "measurement over %s: 4 MiB in-place", group);
    }
    result_free(&doc);
  }
}

/* The element access the checks below rely on (dtype.h), against bit patterns worked out by hand. */
static void test_element_access(void) {
  unsigned char buf[8];
  memset(buf, 0, sizeof buf);
  dtype_store(buf, DT_BF16, 0, 1.5);
  CHECK(buf[0] == 0xc0 && buf[1] == 0x3f && dtype_load(buf, DT_BF16, 0) == 1.5, "bf16 1.5 is 0x3fc0");
  dtype_store(buf, DT_F16, 1, -2.0);
  CHECK(buf[2] == 0x00 && buf[3] == 0xc0 && dtype_load(buf, DT_F16, 1) == -2.0, "fp16 -2 is 0xc000");
  dtype_store(buf, DT_I8, 5, -3);
  CHECK(buf[5] == 0xfd && dtype_load(buf, DT_I8, 5) == -3 && dtype_load(buf, DT_U8, 5) == 253, "int8 -3 is 0xfd");
  dtype_store(buf, DT_U32, 1, 4000000000.0);
  CHECK(dtype_load(buf, DT_U32, 1) == 4000000000.0 && dtype_load(buf, DT_I32, 1) == 4000000000.0 - 4294967296.0,
        "uint32 4e9 reads back, and as int32 wraps");
  CHECK(dtype_is_float(DT_BF16) && dtype_is_float(DT_F64) && !dtype_is_float(DT_I64), "float types");
}

int main(int argc, char **argv) {
  ddp_dist dist;
  if (dist_init(&argc, &argv, &dist) != DDP_OK) return 1;
  W = dist.size;
  R = dist.rank;
  test_element_access();
  int cuda = argc > 1 && !strcmp(argv[1], "cuda");
  ddp_device *d = NULL;
  ddp_comm *c = NULL;
  ddp_stream *s = NULL;
  if (cuda) { /* every rank skips when any rank sees no GPU */
    int ngpu = device_cuda_count(), min_gpu = ngpu;
    MPI_Allreduce(MPI_IN_PLACE, &min_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (min_gpu == 0) {
      if (R == 0) printf("no GPU: skipped\n");
      dist_finalize(&dist);
      return CHECK_SKIP;
    }
    CHECK(device_cuda_create(&d, dist.local_rank % ngpu) == DDP_OK, "cuda device");
    CHECK(d->stream_create(d, &s, 0) == DDP_OK, "stream");
    if (dist.local_size <= ngpu) { /* NCCL needs one GPU per rank */
      CHECK(comm_nccl_create(&c, MPI_COMM_WORLD, d) == DDP_OK, "nccl comm");
      matrix(d, c, s, "nccl");
      use_graph = 1;
      matrix(d, c, s, "nccl, CUDA graph");
      use_graph = 0;
      c->destroy(c);
    }
    CHECK(comm_mpi_create(&c, MPI_COMM_WORLD, d) == DDP_OK, "mpi comm");
    matrix(d, c, s, "mpi staged");
    use_graph = 1;
    matrix(d, c, s, "mpi staged, CUDA graph");
    use_graph = 0;
  } else {
    CHECK(device_cpu_create(&d, 1) == DDP_OK, "cpu device");
    CHECK(comm_mpi_create(&c, MPI_COMM_WORLD, d) == DDP_OK, "mpi comm");
    CHECK(d->stream_create(d, &s, 0) == DDP_OK, "stream");
    if (R == 0) sizes_check();
    matrix(d, c, s, "mpi");
    measurement_check(&dist, d, c);
  }

  /* Back to back on one stream, same buffers (the timed loop): all complete, the last result is right. */
  float buf[64], out[64];
  if (cuda) goto done; /* host buffers: cpu device only */
  /* NCCL defines no in-place alltoall, alltoallv or sendrecv: refused, on every rank, before any MPI call */
  size_t mat[16] = {0};
  static const ddp_coll_kind oop[] = {COLL_ALLTOALL, COLL_ALLTOALLV, COLL_SENDRECV};
  for (int i = 0; i < 3; i++) {
    ddp_coll in = {.kind = oop[i], .send = buf, .recv = buf, .count = 1, .dt = DT_F32, .counts = mat};
    CHECK(c->collective(c, &in, s) == DDP_ERR_INTERNAL, "%s in place is refused", coll_name(oop[i]));
  }
  for (int i = 0; i < 64; i++) buf[i] = (float)(R + i);
  ddp_coll a = {.kind = COLL_ALLREDUCE, .send = buf, .recv = out, .count = 64, .dt = DT_F32, .op = REDOP_SUM};
  ddp_result r = DDP_OK;
  for (int i = 0; i < 50 && r == DDP_OK; i++) r = c->collective(c, &a, s);
  if (r == DDP_OK) r = d->stream_synchronize(d, s);
  int ok = r == DDP_OK;
  for (int i = 0; i < 64; i++) ok &= out[i] == (float)(W * i + W * (W - 1) / 2);
  CHECK(ok, "50 allreduces back to back on rank %d", R);
done:

  d->stream_destroy(d, s);
  c->destroy(c);
  d->destroy(d);
  int rc = check_summary_world();
  dist_finalize(&dist);
  return rc;
}
