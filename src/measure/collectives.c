/* collectives.c: the "collectives" measurement: nccl-tests' sweep over one group of ranks, through the comm
 * interface. Per collective, type, op and size, and per placement (out-of-place, then in-place), in
 * nccl-tests' order: fill the buffers (when checking), warm up, barrier, time `-n` back-to-back calls with the
 * host clock (nccl-tests' figure: the `time` column, combined across ranks by `-a`) while events between the
 * calls give each iteration's time (its slowest rank's is the sample for median/p10/p90), then check `-c` times
 * on fresh data, untimed (exact_data.h): fill on the host, one collective, copy back, compare every element
 * with the value it must have. Each call's buffers shift through the allocation as nccl-tests' do. With
 * `-G k` the `-n` calls are captured in one CUDA graph launched k times. With `--under-load gemm[:H]` the
 * out-of-place collective is also timed while a GEMM loop runs on a second stream, and the GEMM's rate is
 * measured alone and beside it: both figures come from the items that ran wholly inside the time both loops
 * ran. The group's rank 0 records each row as it is measured (env->emit sees it then) and the wrong data of
 * any rank, and the table of nccl-tests is printed from those records (coll_printer).
 *
 * Measuring, reducing across ranks and printing are separate passes. Nothing here waits without a timeout:
 * every wait polls the stream and the comm's asynchronous error. */
#include "collectives.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "exact_data.h"
#include "stats.h"
#include "testhooks.h"
#include "progress.h"
#include "watchdog.h"

/* ---- options ------------------------------------------------------------------------------------------ */



static int parse_agg(void *field, const char *v, char *err, size_t n) {
  static const char *names[] = {"rank0", "avg", "min", "max"};
  for (int i = 0; i < 4; i++)
    if (strcasecmp(v, names[i]) == 0 || (v[0] == '0' + i && !v[1])) return *(int *)field = i, 0;
  if (strcasecmp(v, "average") == 0) return *(int *)field = AGG_AVG, 0;
  snprintf(n ? err : err, n, "0|rank0, 1|avg, 2|min or 3|max");
  return -1;
}
static void format_agg(const void *field, char *out, size_t n) {
  static const char *names[] = {"rank0", "avg", "min", "max"};
  snprintf(out, n, "%s", names[*(const int *)field & 3]);
}

#define OO(f) offsetof(coll_opts, f), 0
#define OS(f) offsetof(coll_opts, f), sizeof(((coll_opts *)0)->f)
static const opt_spec SWEEP[] = {
    {"collectives", NULL, 0, OPT_STR, OS(names), "allreduce", .arg = "LIST",
     .help = "allreduce, reduce_scatter, all_gather, broadcast, alltoall, reduce, gather, scatter, sendrecv, alltoallv "
             "or all (the words after the subcommand)",
     .flags = OPT_OPERANDS},
    {"minbytes", "min_bytes", 'b', OPT_SIZE, OO(min_bytes), "32M", .help = "smallest size in bytes (K/M/G: 1024-based)"},
    {"maxbytes", "max_bytes", 'e', OPT_SIZE, OO(max_bytes), "32M", .help = "largest size in bytes"},
    {"stepbytes", "step_bytes", 'i', OPT_SIZE, OO(step_bytes), "1M", .help = "additive step (when -f is not given)"},
    {"stepfactor", "step_factor", 'f', OPT_INT, OO(step_factor), "1", 0, 1 << 20, .help = "multiplicative step (>= 2)"},
    {"iters", NULL, 'n', OPT_INT, OO(iters), "20", 1, 1 << 24, .help = "timed iterations per size"},
    {"warmup_iters", "warmup", 'w', OPT_INT, OO(warmup), "1", 0, 1 << 24, .help = "untimed iterations per size"},
    {"check", NULL, 'c', OPT_INT, OO(check), "1", 0, 1 << 20, .help = "data checks per size and placement (0 = none)"},
    {"datatype", "dtype", 'd', OPT_STR, OS(dtype), "float", .arg = "TYPE",
     .help = "float|half|bfloat16|double|int8|uint8|int32|uint32|int64|uint64|all"},
    {"op", NULL, 'o', OPT_STR, OS(op), "sum", .arg = "OP", .help = "sum|prod|max|min|avg|all (allreduce, reduce_scatter, reduce)"},
    {"root", NULL, 'r', OPT_INT, OO(root), "0", 0, 1 << 30, .help = "root of broadcast, reduce, gather and scatter"},
    {"average", NULL, 'a', OPT_CUSTOM, OO(average), "1", .parse = parse_agg, .format = format_agg, .arg = "MODE",
     .help = "time across ranks: 0|rank0, 1|avg, 2|min, 3|max"},
    {"cudagraph", "cuda_graph", 'G', OPT_INT, OO(graph), "0", 0, 1 << 20,
     .help = "capture the -n calls in a CUDA graph, launch it N times"},
    {"run_cycles", "cycles", 'N', OPT_INT, OO(cycles), "1", 0, 1 << 30, .help = "repeat the whole sweep N times (0 = forever)"},
    {"timeout", NULL, 'T', OPT_DOUBLE, OO(timeout), "300", 0, 1e9, .arg = "SECONDS",
     .help = "seconds a wait may last before the job is aborted (0 = never)"},
    {"under_load", NULL, 0, OPT_STR, OS(under_load), "", .arg = "gemm[:H]",
     .help = "also time it beside a bf16 HxHxH GEMM loop (H: 8192 on a GPU, 256 on cpu)"},
    /* nccl-tests options whose only value here is their default (scripts pass them out of habit) */
    {"nthreads", NULL, 't', OPT_INT, OO(fixed[0]), "1", 1, 1, .help = "threads per process: 1 (one rank per GPU)", .flags = OPT_HIDDEN},
    {"ngpus", NULL, 'g', OPT_INT, OO(fixed[1]), "1", 1, 1, .help = "GPUs per thread: 1 (one rank per GPU)", .flags = OPT_HIDDEN},
    {"agg_iters", NULL, 'm', OPT_INT, OO(fixed[2]), "1", 1, 1, .help = "calls per group: 1", .flags = OPT_HIDDEN},
    {"blocking", NULL, 'z', OPT_INT, OO(fixed[3]), "0", 0, 0, .help = "blocking calls: 0", .flags = OPT_HIDDEN | OPT_FIXED},
    /* alltoallv's traffic matrix (coll.h: coll_alltoallv_matrix) */
    {"alltoallv_skew", NULL, 0, OPT_DOUBLE, OO(a2av_skew), "1", 0, 16, .arg = "S",
     .help = "alltoallv's MoE matrix: rank i sends rank j a share of its data in proportion to (1 + p(j))^-S "
             "(p: a seeded ranking of the ranks, 0 = the hot one) times a noise of up to +-25 % per (i, j); 0 = "
             "alltoall"},
    {"alltoallv_seed", NULL, 0, OPT_INT, OO(a2av_seed), "1", 0, 2147483647, .arg = "N",
     .help = "alltoallv's matrix seed (which ranks are hot, the noise)"},
};
const opt_table collectives_options = {"the sweep (nccl-tests' options)", SWEEP, (int)(sizeof SWEEP / sizeof SWEEP[0])};


/* The option behind a key, for messages: -b/--minbytes. */
static const char *optname(const char *key, char *buf, size_t n) {
  for (size_t i = 0; i < sizeof SWEEP / sizeof SWEEP[0]; i++)
    if (!strcmp(SWEEP[i].key, key)) {
      if (SWEEP[i].shrt) snprintf(buf, n, "-%c/--%s", SWEEP[i].shrt, key);
      else snprintf(buf, n, "--%s", key);
      for (char *p = buf; *p; p++)
        if (*p == '_') *p = '-';
      return buf;
    }
  return key;
}

ddp_result coll_options_finish(coll_opts *o, const opt_set *s) {
  char b1[64], b2[64];
  o->ncoll = 0;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", o->names);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!strcasecmp(tok, "all")) {
      o->ncoll = 0;
      for (int k = 0; k < COLL_COUNT; k++) o->colls[o->ncoll++] = k;
      continue;
    }
    ddp_coll_kind k;
    if (!coll_parse(tok, &k))
      return ddp_usage_error("collectives: unknown collective '%s' (allreduce, reduce_scatter, all_gather, "
                             "broadcast, alltoall, reduce, gather, scatter, sendrecv, alltoallv or all)", tok);
    int seen = 0;
    for (int j = 0; j < o->ncoll; j++) seen |= o->colls[j] == (int)k;
    if (!seen) o->colls[o->ncoll++] = k;
  }
  if (!o->ncoll) o->colls[o->ncoll++] = COLL_ALLREDUCE;
  o->ndtype = 0;
  if (!strcasecmp(o->dtype, "all")) {
    for (int t = 0; t < DT_COUNT; t++) o->dtypes[o->ndtype++] = t;
  } else {
    ddp_dtype t;
    if (!dtype_parse(o->dtype, &t))
      return ddp_usage_error("collectives: %s must be one of %s, got '%s'", optname("datatype", b1, sizeof b1),
                             SWEEP[8].help, o->dtype);
    o->dtypes[o->ndtype++] = t;
  }
  o->nop = 0;
  if (!strcasecmp(o->op, "all")) {
    for (int p = 0; p < REDOP_COUNT; p++) o->ops[o->nop++] = p;
  } else {
    int p = 0;
    while (p < REDOP_COUNT && strcasecmp(o->op, redop_name((ddp_redop)p)) != 0) p++;
    if (p == REDOP_COUNT)
      return ddp_usage_error("collectives: %s must be one of sum|prod|max|min|avg|all, got '%s'", optname("op", b1, sizeof b1), o->op);
    o->ops[o->nop++] = p;
  }
  const char *v = o->under_load;
  char *end = NULL;
  if (!*v || !strcmp(v, "none")) {
    o->load_h = 0;
  } else if (!strcmp(v, "gemm")) {
    o->load_h = -1;
  } else if (!strncmp(v, "gemm:", 5)) {
    long h = strtol(v + 5, &end, 10);
    if (end == v + 5 || *end || h < 16 || h > 65536)
      return ddp_usage_error("collectives: --under-load gemm:H needs H in [16, 65536], got '%s'", v);
    o->load_h = (int)h;
  } else {
    return ddp_usage_error("collectives: --under-load must be gemm or gemm:H, got '%s'", v);
  }
  int set_factor = s && opt_given(s, "stepfactor"), set_step = s && opt_given(s, "stepbytes");
  if (o->min_bytes > o->max_bytes)
    return ddp_usage_error("collectives: %s (%zu) is greater than %s (%zu)", optname("minbytes", b1, sizeof b1),
                           o->min_bytes, optname("maxbytes", b2, sizeof b2), o->max_bytes);
  if (set_factor && o->step_factor < 2 && !set_step)
    return ddp_usage_error("collectives: -f/--stepfactor must be at least 2 (got %d); for additive steps give "
                           "-i/--stepbytes instead", o->step_factor);
  int mult = o->step_factor >= 2;
  if (mult && o->min_bytes == 0 && o->max_bytes > 0)
    return ddp_usage_error("collectives: -b/--minbytes must be > 0 with -f/--stepfactor");
  if (!mult && o->step_bytes == 0 && o->max_bytes > o->min_bytes)
    return ddp_usage_error("collectives: -i/--stepbytes must be > 0");
  for (int d = 0; d < o->ndtype; d++) {
    size_t es = dtype_size((ddp_dtype)o->dtypes[d]);
    const char *bad = o->min_bytes % es ? "-b/--minbytes" : o->max_bytes % es ? "-e/--maxbytes"
                      : !mult && o->step_bytes % es ? "-i/--stepbytes" : NULL;
    if (bad)
      return ddp_usage_error("collectives: %s is not a multiple of the %s element size (%zu bytes)", bad,
                             dtype_name((ddp_dtype)o->dtypes[d]), es);
  }
  return DDP_OK;
}


/* ---- one group's sweep ------------------------------------------------------------------------------------ */
typedef struct {
  int ran;
  double time_us;      /* -a aggregate of the ranks' host-clock time per call */
  double algbw, busbw; /* from time_us, nccl-tests' formulas */
  double slowest_us;
  int slowest_rank;
  ddp_stats iter; /* per-iteration (or per graph launch / -n) time of the slowest rank, us */
  long long wrong;
  int checked;
  /* --under-load, out-of-place only */
  int load;
  double load_time_us, load_busbw, gemm_idle_tflops, gemm_load_tflops;
} place_result;

typedef struct {
  int cycle;
  ddp_coll_kind kind;
  ddp_dtype dt;
  ddp_redop op; /* REDOP_COUNT = none */
  int root;
  coll_sizes z;
  place_result pl[2];
} row_result;

typedef struct {
  int place, rank;
  wrong_info w;
} wrong_entry;

typedef struct {
  int rank, pid, ordinal, node, local_rank;
  double memory;
  char host[64], bus[32], name[128];
} rank_desc;

typedef struct {
  coll_opts o;
  const measure_env *env;
  ddp_dist dist;
  ddp_device *dev;
  ddp_comm *comm;     /* the group's data plane */
  MPI_Comm ctl;       /* the same ranks, for gathering results */
  int *gworld;        /* group rank -> world rank */
  char glabel[64];    /* the group's name */
  ddp_stream *s, *gs; /* collective stream, GEMM stream */
  ddp_event **ev;     /* iters + 1 (or graph launches + 1) */
  int nev;
  void *dsend, *drecv; /* device buffers of alloc_bytes */
  size_t alloc_bytes;
  void *hsend, *hrecv, *hwant; /* host buffers for the checks */
  size_t *a2av;                /* alltoallv's matrix of the row being measured (group size squared) */
  int corrupt_rank;
  long long corrupt_elem;
  int threads; /* for filling and comparing: this rank's share of the host's cores */
  int clamped; /* -e was reduced to what the GPUs hold */
  /* --under-load */
  int H;
  void *ga, *gb, *gc;
  rank_desc *ranks; /* by world rank, filled for the group's ranks */
} coll_ctx;

/* Waits for event e, polling the comm for asynchronous errors; never longer than the timeout. A completed wait
 * is progress for the watchdog: one row makes many waits (warm-up, timed calls in and out of place, checks),
 * each bounded by -T, so the row as a whole may take longer than the watchdog's -T + 30 s. */
static ddp_result wait_event(coll_ctx *x, ddp_event *e, const char *what) {
  double t0 = ddp_now();
  unsigned tok = 0; /* told to the watchdog once the wait outlasts the spin */
  ddp_result r;
  for (;;) {
    int done = 0;
    if ((r = x->dev->event_query(x->dev, e, &done)) != DDP_OK) break;
    if (done) {
      watchdog_tick(NULL);
      break;
    }
    if ((r = x->comm->check(x->comm)) != DDP_OK) break;
    if (x->o.timeout > 0 && ddp_now() - t0 > x->o.timeout) {
      char last[160], why[200];
      watchdog_started_text(last, sizeof last);
      snprintf(why, sizeof why, "collectives: %s did not complete within -T %g s (a peer stopped answering?)", what,
               x->o.timeout);
      watchdog_report_abort(why); /* asks every rank where it is and names who stopped (aborts) */
      r = DDP_FAIL(DDP_ERR_TIMEOUT, "%s; last collective started: %s", why, last[0] ? last : "none");
      break;
    }
    if (ddp_now() - t0 > 0.01) { /* spin for the first 10 ms: a sleep would add its granularity to short timings */
      if (!tok) tok = watchdog_enter_device(what);
      struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);
    }
  }
  watchdog_leave(tok);
  return r;
}

/* The group's barrier before timing, on the control plane (as nccl-tests' MPI_Barrier), polled under the same
 * timeout: a rank that stopped answering ends the job instead of holding it. */
static ddp_result ctl_barrier(coll_ctx *x) {
  MPI_Request req;
  DDP_CHECK_MPI(MPI_Ibarrier(x->ctl, &req));
  double t0 = ddp_now();
  for (;;) {
    int done = 0;
    DDP_CHECK_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) {
      watchdog_tick(NULL);
      return DDP_OK;
    }
    if (x->o.timeout > 0 && ddp_now() - t0 > x->o.timeout) {
      char why[160];
      snprintf(why, sizeof why, "collectives: the barrier before timing did not complete within -T %g s (a peer "
               "stopped answering?)", x->o.timeout);
      watchdog_report_abort(why);
      return DDP_FAIL(DDP_ERR_TIMEOUT, "%s", why);
    }
    if (ddp_now() - t0 > 0.01) {
      struct timespec ts = {0, 20000};
      nanosleep(&ts, NULL);
    }
  }
}

/* Test hook: DDPBENCH_TEST_STALL_COLLECTIVE=RANK makes that rank stop before its first timed call, as a hung
 * GPU or a dead link would: its peers must time out (-T) and end the job, naming themselves and the wait. */
static void maybe_stall(const coll_ctx *x) {
  if (testhook_int(HOOK_STALL_COLLECTIVE, -1) != x->dist.rank) return;
  fprintf(stderr, "[ddpbench rank %d] DDPBENCH_TEST_STALL_COLLECTIVE: stalling on purpose\n", x->dist.rank);
  for (;;) sleep(1000);
}

static ddp_result sync_stream(coll_ctx *x, ddp_stream *s, const char *what) {
  DDP_TRY(x->dev->event_record(x->dev, x->ev[0], s));
  return wait_event(x, x->ev[0], what);
}

static ddp_result ensure_events(coll_ctx *x, int n) {
  if (n <= x->nev) return DDP_OK;
  ddp_event **ev = realloc(x->ev, (size_t)n * sizeof *ev);
  DDP_CHECK_ALLOC(ev);
  x->ev = ev;
  for (; x->nev < n; x->nev++) DDP_TRY(x->dev->event_create(x->dev, &x->ev[x->nev], 1));
  return DDP_OK;
}

/* The call for iteration `it` of a row: buffers shifted by whole rows through the allocation. */
static ddp_coll call_at(const coll_ctx *x, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, const coll_sizes *z,
                        int inplace, long it) {
  size_t es = dtype_size(dt), row = z->size_bytes;
  size_t slots = row ? x->alloc_bytes / row : 1, shift = it >= 0 && slots ? row * (size_t)(it % (long)slots) : 0;
  char *s = (char *)x->dsend + shift, *r = (char *)x->drecv + shift;
  ddp_coll c = {kind, s, r, z->count, dt, op == REDOP_COUNT ? REDOP_SUM : op, x->o.root, x->a2av};
  if (inplace) { /* nccl-tests' in-place offsets (comm.h) */
    c.send = r;
    if (kind == COLL_ALL_GATHER || kind == COLL_GATHER) c.send = r + (size_t)x->comm->rank * z->count * es;
    if (kind == COLL_REDUCE_SCATTER || kind == COLL_SCATTER) c.recv = r + (size_t)x->comm->rank * z->count * es;
  }
  return c;
}

/* One round of check_row: w == NULL runs the call without comparing (a wrong element was found already). */
static ddp_result check_round(coll_ctx *x, const data_spec *ds, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op,
                              const coll_sizes *z, int inplace, wrong_info *w) {
  ddp_device *d = x->dev;
  size_t es = dtype_size(dt);
  ddp_coll c = call_at(x, kind, dt, op, z, inplace, -1);
  data_pass(ds, x->hsend, z->send_count, 0, x->threads, NULL); /* this rank's send buffer */
  memset(x->hrecv, UNTOUCHED, z->recv_count * es); /* a call that writes nothing fails (where it must write) */
  DDP_TRY(d->copy(d, x->drecv, x->hrecv, z->recv_count * es, x->s));
  DDP_TRY(d->copy(d, (void *)c.send, x->hsend, z->send_count * es, x->s));
  if (x->o.graph) {
    ddp_graph *g = NULL;
    DDP_TRY(d->graph_begin(d, x->s));
    ddp_result r = x->comm->collective(x->comm, &c, x->s);
    ddp_result r2 = d->graph_end(d, x->s, &g);
    DDP_TRY(r);
    DDP_TRY(r2);
    r = d->graph_launch(d, g, x->s);
    if (r == DDP_OK) r = sync_stream(x, x->s, "the data check");
    d->graph_destroy(d, g);
    DDP_TRY(r);
  } else {
    DDP_TRY(x->comm->collective(x->comm, &c, x->s));
  }
  size_t rn = z->recv_count;
  if (x->corrupt_rank == x->dist.rank && rn) { /* test hook: one element goes wrong after the call */
    size_t k = x->corrupt_elem >= 0 ? (size_t)x->corrupt_elem % rn : rn / 2;
    unsigned char want[8];
    expect_at(ds, k, want);
    dtype_store(x->hwant, dt, 0, dtype_load(want, dt, 0) + 1);
    if (!memcmp(x->hwant, want, es)) ((unsigned char *)x->hwant)[es - 1] ^= 0x40; /* +1 changed nothing (UNTOUCHED) */
    DDP_TRY(d->copy(d, (char *)c.recv + k * es, x->hwant, es, x->s));
  }
  DDP_TRY(d->copy(d, x->hrecv, c.recv, rn * es, x->s));
  DDP_TRY(sync_stream(x, x->s, "the data check"));
  if (w) data_pass(ds, x->hrecv, rn, 1, x->threads, w);
  return DDP_OK;
}

/* Untimed data checks: -c rounds of fill, one call (through a graph with -G), copy back, compare. */
static ddp_result check_row(coll_ctx *x, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, const coll_sizes *z,
                            int inplace, wrong_info *w) {
  memset(w, 0, sizeof *w);
  w->first = -1;
  int failed = 0;
  /* Every rank makes every round's call (peers must not wait for a call we skip); as in nccl-tests, the
   * count is that of the first round with a wrong element. */
  for (int round = 0; round < x->o.check; round++) {
    data_spec ds;
    DDP_TRY(data_init(&ds, kind, op, dt, x->comm->size, x->comm->rank, x->o.root, z->count, inplace, x->a2av,
                      99 + (uint64_t)round));
    ddp_result r = check_round(x, &ds, kind, dt, op, z, inplace, failed ? NULL : w);
    data_free(&ds);
    DDP_TRY(r);
    failed = w->wrong > 0;
  }
  return DDP_OK;
}

/* Timed: -w warm-up calls, barrier, -n calls (or -G launches of a graph of -n calls) with events between. */
static ddp_result time_row(coll_ctx *x, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, const coll_sizes *z,
                           int inplace, double *host_us, double *samples, int *nsamples) {
  ddp_device *d = x->dev;
  int n = x->o.iters;
  /* NCCL's choice for this size is recorded in the warm-up only (the profiler is off for the timed calls) */
  if (x->comm->record_choices) x->comm->record_choices(x->comm, 1);
  ddp_result wr = DDP_OK;
  for (int i = 0; i < x->o.warmup && wr == DDP_OK; i++) {
    ddp_coll c = call_at(x, kind, dt, op, z, inplace, i);
    wr = x->comm->collective(x->comm, &c, x->s);
  }
  if (wr == DDP_OK) wr = sync_stream(x, x->s, "the warm-up");
  if (x->comm->record_choices) x->comm->record_choices(x->comm, 0);
  DDP_TRY(wr);
  ddp_graph *g = NULL;
  if (x->o.graph) {
    DDP_TRY(d->graph_begin(d, x->s));
    ddp_result r = DDP_OK;
    for (int i = 0; i < n && r == DDP_OK; i++) {
      ddp_coll c = call_at(x, kind, dt, op, z, inplace, i);
      r = x->comm->collective(x->comm, &c, x->s);
    }
    ddp_result r2 = d->graph_end(d, x->s, &g);
    DDP_TRY(r);
    DDP_TRY(r2);
    r = d->graph_launch(d, g, x->s); /* once untimed: the first launch uploads the graph */
    if (r == DDP_OK) r = sync_stream(x, x->s, "the graph warm-up");
    if (r != DDP_OK) d->graph_destroy(d, g);
    DDP_TRY(r);
  }
  int items = x->o.graph ? x->o.graph : n;
  ddp_result r = ctl_barrier(x);
  maybe_stall(x);
  double t0 = ddp_now();
  if (r == DDP_OK) r = d->event_record(d, x->ev[0], x->s);
  for (int i = 0; i < items && r == DDP_OK; i++) {
    if (g) {
      r = d->graph_launch(d, g, x->s);
    } else {
      ddp_coll c = call_at(x, kind, dt, op, z, inplace, i);
      r = x->comm->collective(x->comm, &c, x->s);
    }
    if (r == DDP_OK) r = d->event_record(d, x->ev[i + 1], x->s);
  }
  if (r == DDP_OK) r = wait_event(x, x->ev[items], "the timed calls");
  double t1 = ddp_now();
  if (g) d->graph_destroy(d, g);
  DDP_TRY(r);
  *host_us = (t1 - t0) * 1e6 / ((double)n * (g ? items : 1));
  for (int i = 0; i < items; i++) {
    float ms = 0;
    DDP_TRY(d->event_elapsed_ms(d, &ms, x->ev[i], x->ev[i + 1]));
    samples[i] = ms * 1e3 / (g ? n : 1);
  }
  *nsamples = items;
  return DDP_OK;
}

/* ---- under load ---------------------------------------------------------------------------------- */
static double span_ms(ddp_device *d, ddp_event *origin, ddp_event *e) {
  float ms = 0;
  return d->event_elapsed_ms(d, &ms, origin, e) == DDP_OK ? ms : NAN;
}

/* Mean duration (ms) of the items i (events e[i] .. e[i+1], i < n) that lie wholly in [lo, hi]. */
static double mean_inside(ddp_device *d, ddp_event *origin, ddp_event **e, int n, double lo, double hi, int *count) {
  double sum = 0;
  *count = 0;
  double a = span_ms(d, origin, e[0]);
  for (int i = 0; i < n; i++) {
    double b = span_ms(d, origin, e[i + 1]);
    if (a >= lo && b <= hi) sum += b - a, (*count)++;
    a = b;
  }
  return *count ? sum / *count : NAN;
}

static ddp_result gemm_run(coll_ctx *x, ddp_stream *s) {
  ddp_gemm g = {.m = x->H, .n = x->H, .k = x->H, .a = x->ga, .lda = x->H, .b = x->gb, .ldb = x->H, .c = x->gc,
                .ldc = x->H, .ab_type = DT_BF16, .c_type = DT_BF16};
  return x->dev->gemm(x->dev, s, &g);
}

/* The out-of-place call beside a GEMM loop. t_coll_us: its idle per-call time. Per rank: the collective's
 * time per call under load, the GEMM's TFLOP/s alone and under the collective. */
static ddp_result load_row(coll_ctx *x, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, const coll_sizes *z,
                           double t_coll_us, double out[3]) {
  ddp_device *d = x->dev;
  double flop = 2.0 * x->H * (double)x->H * x->H;
  /* The GEMM alone: a few to find its time, then as many as the loaded run will use. */
  DDP_TRY(ensure_events(x, 4));
  DDP_TRY(d->event_record(d, x->ev[0], x->gs));
  for (int i = 0; i < 3; i++) DDP_TRY(gemm_run(x, x->gs));
  DDP_TRY(d->event_record(d, x->ev[1], x->gs));
  DDP_TRY(wait_event(x, x->ev[1], "the GEMM"));
  double t_gemm_ms = span_ms(d, x->ev[0], x->ev[1]) / 3;
  if (!(t_gemm_ms > 0)) t_gemm_ms = 1e-3;
  double T = fmax(x->o.iters * t_coll_us * 1e-3, 10 * t_gemm_ms);
  int MK[2] = {(int)fmin(20000, fmax(x->o.iters, ceil(T / fmax(t_coll_us * 1e-3, 1e-6)))),
               (int)fmin(20000, fmax(3, ceil(T / t_gemm_ms)))};
  /* Every rank must make the same number of calls: the largest count any rank asked for. */
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, MK, 2, MPI_INT, MPI_MAX, x->ctl));
  int M = MK[0], K = MK[1];
  DDP_TRY(ensure_events(x, 1 + (M + 1) + (K + 1)));
  ddp_event *start = x->ev[0], **ce = x->ev + 1, **ge = x->ev + 2 + M;
  DDP_TRY(d->event_record(d, ge[0], x->gs));
  for (int k = 0; k < K; k++) {
    DDP_TRY(gemm_run(x, x->gs));
    DDP_TRY(d->event_record(d, ge[k + 1], x->gs));
  }
  DDP_TRY(wait_event(x, ge[K], "the GEMM"));
  double idle_ms = span_ms(d, ge[0], ge[K]) / K;
  /* Both loops together. On a GPU the K GEMMs are enqueued first: interleaved with M collectives whose launches
   * take longer on the host than a small call takes on the device, the GEMM stream would wait for the host
   * between GEMMs and the gaps would count as GEMM time (seen on an H200: 80 TFLOP/s "under" a 1 MiB
   * allreduce). The cpu device runs each operation as it is enqueued, so there they are interleaved. */
  DDP_TRY(ctl_barrier(x));
  DDP_TRY(d->event_record(d, start, x->s));
  DDP_TRY(d->stream_wait_event(d, x->gs, start));
  DDP_TRY(d->event_record(d, ce[0], x->s));
  DDP_TRY(d->event_record(d, ge[0], x->gs));
  int ic = 0, ig = 0, gemms_first = !d->host_memory;
  while (ic < M || ig < K) {
    if (ig < K && (gemms_first || ic >= M || (long long)ig * M <= (long long)ic * K)) {
      DDP_TRY(gemm_run(x, x->gs));
      DDP_TRY(d->event_record(d, ge[++ig], x->gs));
    } else {
      ddp_coll c = call_at(x, kind, dt, op, z, 0, ic);
      DDP_TRY(x->comm->collective(x->comm, &c, x->s));
      DDP_TRY(d->event_record(d, ce[++ic], x->s));
    }
  }
  DDP_TRY(wait_event(x, ce[M], "the collective under load"));
  DDP_TRY(wait_event(x, ge[K], "the GEMM under load"));
  double lo = fmax(span_ms(d, start, ce[0]), span_ms(d, start, ge[0]));
  double hi = fmin(span_ms(d, start, ce[M]), span_ms(d, start, ge[K]));
  int nc = 0, ng = 0;
  double c_ms = mean_inside(d, start, ce, M, lo, hi, &nc), g_ms = mean_inside(d, start, ge, K, lo, hi, &ng);
  out[0] = c_ms * 1e3;
  out[1] = flop / (idle_ms * 1e-3) / 1e12;
  out[2] = flop / (g_ms * 1e-3) / 1e12;
  return DDP_OK;
}

static double agg_combine(const double *v, int n, int mode) {
  double r = v[0];
  for (int i = 1; i < n; i++) {
    if (mode == AGG_AVG || mode == AGG_RANK0) r = mode == AGG_AVG ? r + v[i] : r;
    if (mode == AGG_MIN) r = fmin(r, v[i]);
    if (mode == AGG_MAX) r = fmax(r, v[i]);
  }
  return mode == AGG_AVG ? r / n : r;
}

/* ---- set-up --------------------------------------------------------------------------------------------- */
/* Streams, events, buffers and who is where, collective over ctl (the world, or the group a measurement
 * runs on); x->ranks is indexed by world rank and filled for ctl's ranks. */
static ddp_result ctx_buffers(coll_ctx *x, MPI_Comm ctl) {
  ddp_dist *d = &x->dist;
  int n = 0;
  DDP_CHECK_MPI(MPI_Comm_size(ctl, &n));
  int cuda = !x->dev->host_memory;
  DDP_TRY(x->dev->stream_create(x->dev, &x->s, 0));
  DDP_TRY(ensure_events(x, (x->o.graph ? x->o.graph : x->o.iters) + 1));
  /* As nccl-tests: -e is reduced to what the smallest GPU holds (two buffers, after a reserve for NCCL and
   * CUDA of 1 GiB per 16 GiB, at most 4 GiB, plus 1 GiB, and the GEMM's operands under load). */
  double mem = x->dev->info.memory > 0 ? (double)x->dev->info.memory : INFINITY, fit = INFINITY;
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &mem, 1, MPI_DOUBLE, MPI_MIN, ctl));
  if (isfinite(mem)) {
    double gib = 1073741824.0, reserve = fmin(ceil(mem / (16 * gib)) * gib, 4 * gib);
    double gemm = x->o.load_h ? 3.0 * 2 * pow(x->o.load_h > 0 ? x->o.load_h : 8192, 2) : 0;
    fit = floor((mem - reserve - gib - gemm) / 2 / 8) * 8; /* a multiple of every element size */
    if (fit > 0 && (double)x->o.max_bytes > fit) {
      x->o.max_bytes = (size_t)fit;
      x->clamped = 1;
    }
  }
  /* Buffers for the largest row of any selected collective and type (alltoallv: the matrix of -e bounds every
   * smaller one, coll.h; its busiest rank may need more than -e, so a clamped -e shrinks by that ratio). */
  int a2av = 0;
  for (int c = 0; c < x->o.ncoll; c++) a2av |= x->o.colls[c] == COLL_ALLTOALLV;
  if (a2av) {
    x->a2av = malloc((size_t)n * n * sizeof *x->a2av);
    DDP_CHECK_ALLOC(x->a2av);
  }
  size_t need = 64;
  for (int c = 0; c < x->o.ncoll; c++)
    for (int t = 0; t < x->o.ndtype; t++) {
      ddp_coll_kind k = (ddp_coll_kind)x->o.colls[c];
      size_t es = dtype_size((ddp_dtype)x->o.dtypes[t]);
      coll_sizes z = coll_sizes_for(k, x->o.max_bytes, es, n);
      while (k == COLL_ALLTOALLV) {
        coll_alltoallv_matrix(x->a2av, n, z.send_count, x->o.a2av_skew, (uint64_t)x->o.a2av_seed);
        z = coll_sizes_alltoallv(x->a2av, n, es, z.count);
        if ((double)z.size_bytes <= fit || x->o.max_bytes <= 64) break;
        x->o.max_bytes = (size_t)(floor((double)x->o.max_bytes * 0.99 * fit / (double)z.size_bytes / 8) * 8);
        if (x->o.max_bytes < 64) x->o.max_bytes = 64;
        x->clamped = 1;
        z = coll_sizes_for(k, x->o.max_bytes, es, n);
      }
      if (z.size_bytes > need) need = z.size_bytes;
    }
  x->alloc_bytes = need;
  DDP_TRY(x->dev->alloc(x->dev, &x->dsend, need));
  DDP_TRY(x->dev->alloc(x->dev, &x->drecv, need));
  DDP_TRY(x->dev->memset_zero(x->dev, x->dsend, need, x->s));
  DDP_TRY(x->dev->memset_zero(x->dev, x->drecv, need, x->s));
  if (x->o.check) {
    x->hsend = malloc(need);
    x->hrecv = malloc(need);
    x->hwant = malloc(16);
    if (!x->hsend || !x->hrecv || !x->hwant) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory (%zu bytes)", need);
  }
  if (x->o.load_h) {
    x->H = x->o.load_h > 0 ? x->o.load_h : cuda ? 8192 : 256;
    size_t hh = (size_t)x->H * x->H;
    DDP_TRY(x->dev->stream_create(x->dev, &x->gs, 0));
    DDP_TRY(x->dev->alloc(x->dev, &x->ga, hh * 2));
    DDP_TRY(x->dev->alloc(x->dev, &x->gb, hh * 2));
    DDP_TRY(x->dev->alloc(x->dev, &x->gc, hh * 2));
    /* Random operands: a GEMM of zeros draws less power and would run faster than real work. */
    DDP_TRY(x->dev->generate(x->dev, x->gs, x->ga, DT_BF16, hh, 7, 1, 0, 1.0));
    DDP_TRY(x->dev->generate(x->dev, x->gs, x->gb, DT_BF16, hh, 7, 2, 0, 1.0));
    DDP_TRY(sync_stream(x, x->gs, "the GEMM operands"));
  }
  DDP_TRY(sync_stream(x, x->s, "the buffer set-up"));
  /* Who is where, for the device list and the wrong-data lines. */
  rank_desc mine;
  memset(&mine, 0, sizeof mine);
  mine.rank = d->rank;
  mine.pid = (int)getpid();
  mine.ordinal = x->dev->info.ordinal;
  mine.node = d->node_index;
  mine.local_rank = d->local_rank;
  mine.memory = (double)x->dev->info.memory;
  snprintf(mine.host, sizeof mine.host, "%.63s", d->host);
  snprintf(mine.bus, sizeof mine.bus, "%s", x->dev->info.pci_bus_id);
  snprintf(mine.name, sizeof mine.name, "%s", x->dev->info.name);
  x->ranks = calloc((size_t)d->size, sizeof *x->ranks);
  rank_desc *got = calloc((size_t)n, sizeof *got);
  if (!x->ranks || !got) {
    free(got);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  int e = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, got, (int)sizeof mine, MPI_BYTE, ctl);
  for (int i = 0; e == MPI_SUCCESS && i < n; i++) x->ranks[got[i].rank] = got[i];
  free(got);
  if (e != MPI_SUCCESS) return mpi_fail(e, "gathering who is where", __FILE__, __LINE__);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  x->threads = cores > 0 ? (int)(cores / d->local_size) : 1;
  const char *cr = testhook_value(HOOK_CORRUPT_COLLECTIVE);
  x->corrupt_rank = -1;
  x->corrupt_elem = -1;
  if (cr && *cr) {
    x->corrupt_rank = atoi(cr);
    const char *colon = strchr(cr, ':');
    if (colon) x->corrupt_elem = atoll(colon + 1);
  }
  return DDP_OK;
}

static void ctx_free(coll_ctx *x) {
  if (x->dev) {
    for (int i = 0; i < x->nev; i++) x->dev->event_destroy(x->dev, x->ev[i]);
    if (x->dsend) x->dev->free(x->dev, x->dsend);
    if (x->drecv) x->dev->free(x->dev, x->drecv);
    if (x->ga) x->dev->free(x->dev, x->ga);
    if (x->gb) x->dev->free(x->dev, x->gb);
    if (x->gc) x->dev->free(x->dev, x->gc);
  }
  if (x->dev) {
    if (x->s) x->dev->stream_destroy(x->dev, x->s);
    if (x->gs) x->dev->stream_destroy(x->dev, x->gs);
  }
  free(x->ev);
  free(x->hsend), free(x->hrecv), free(x->hwant);
  free(x->ranks), free(x->gworld), free(x->a2av);
}

/* ---- records ---------------------------------------------------------------------------------------------- */
static const char *const PLACEMENT[] = {"out_of_place", "in_place"};

/* One row's figures as records of measurement "collectives" (the group's rank 0), and a "wrong_elements" record
 * per rank and placement with wrong data. */
static ddp_result row_records(const coll_ctx *x, const row_result *row, const wrong_entry *wrong, int nwrong,
                              result_doc *m) {
  const char *group = x->glabel;
  char bytes[32], count[32], root[16], cycle[16];
  snprintf(bytes, sizeof bytes, "%zu", row->z.size_bytes);
  snprintf(count, sizeof count, "%zu", row->z.count);
  snprintf(root, sizeof root, "%d", row->root);
  snprintf(cycle, sizeof cycle, "%d", row->cycle);
  const char *redop = row->op == REDOP_COUNT ? "none" : redop_name(row->op);
  for (int p = 0; p < 2; p++) {
    const place_result *pl = &row->pl[p];
    if (!pl->ran) continue;
#define ADD(metric, unit, better, value, stats)                                                                   \
  DDP_TRY(result_add(m, "collectives", group, metric, unit, better, value, stats, NULL, 0, "collective",            \
                     coll_name(row->kind), "type", dtype_name(row->dt), "redop", redop, "root", root, "bytes", bytes, \
                     "count", count, "placement", PLACEMENT[p], "cycle", cycle, NULL))
    ADD("time_us", "us", BETTER_LOWER, pl->time_us, NULL);
    ADD("algbw_gbs", "GB/s", BETTER_HIGHER, pl->algbw, NULL);
    ADD("busbw_gbs", "GB/s", BETTER_HIGHER, pl->busbw, NULL);
    ADD("iter_time_us", "us", BETTER_LOWER, pl->iter.median, &pl->iter);
    ADD("slowest_rank_time_us", "us", BETTER_LOWER, pl->slowest_us, NULL);
    ADD("slowest_rank", "", BETTER_NONE, pl->slowest_rank, NULL);
    if (pl->checked) ADD("nwrong", "elements", BETTER_LOWER, (double)pl->wrong, NULL);
    if (pl->load) {
      ADD("load_time_us", "us", BETTER_LOWER, pl->load_time_us, NULL);
      ADD("load_busbw_gbs", "GB/s", BETTER_HIGHER, pl->load_busbw, NULL);
      ADD("gemm_tflops_idle", "TFLOP/s", BETTER_HIGHER, pl->gemm_idle_tflops, NULL);
      ADD("gemm_tflops_load", "TFLOP/s", BETTER_HIGHER, pl->gemm_load_tflops, NULL);
    }
#undef ADD
  }
  for (int i = 0; i < nwrong; i++) {
    const wrong_entry *w = &wrong[i];
    char rank[16], first[32], got[40], want[40], recv[32];
    snprintf(rank, sizeof rank, "%d", w->rank);
    snprintf(first, sizeof first, "%lld", w->w.first);
    snprintf(got, sizeof got, "%.17g", w->w.got);
    snprintf(want, sizeof want, "%.17g", w->w.want);
    snprintf(recv, sizeof recv, "%zu", row->z.recv_count);
    DDP_TRY(result_add(m, "collectives", group, "wrong_elements", "elements", BETTER_LOWER, (double)w->w.wrong, NULL,
                       NULL, 0, "collective", coll_name(row->kind), "type", dtype_name(row->dt), "redop", redop, "root",
                       root, "bytes", bytes, "count", count, "placement", PLACEMENT[w->place], "cycle", cycle, "rank",
                       rank, "host", x->ranks[w->rank].host, "first", first, "got", got, "expected", want, "received",
                       recv, NULL));
  }
  return DDP_OK;
}

/* ---- one row: measure both placements, reduce across ranks --------------------------------------------------- */
static ddp_result run_row(coll_ctx *x, int cycle, ddp_coll_kind kind, ddp_dtype dt, ddp_redop op, size_t bytes,
                          result_doc *out) {
  int W = x->comm->size, me = x->comm->rank;
  MPI_Comm mc = x->ctl;
  row_result row;
  memset(&row, 0, sizeof row);
  row.cycle = cycle;
  row.kind = kind;
  row.dt = dt;
  row.op = coll_is_reduction(kind) ? op : REDOP_COUNT;
  row.root = coll_is_rooted(kind) ? x->o.root : -1;
  row.z = coll_sizes_for(kind, bytes, dtype_size(dt), W);
  if (kind == COLL_ALLTOALLV) { /* this size's matrix: group rank 0's, so that every rank has the same one */
    coll_alltoallv_matrix(x->a2av, W, row.z.send_count, x->o.a2av_skew, (uint64_t)x->o.a2av_seed);
    int e = MPI_Bcast(x->a2av, (int)((size_t)W * W * sizeof *x->a2av), MPI_BYTE, 0, mc);
    if (e != MPI_SUCCESS) return mpi_fail(e, "MPI_Bcast(alltoallv matrix)", __FILE__, __LINE__);
    row.z = coll_sizes_alltoallv(x->a2av, W, dtype_size(dt), row.z.count);
  }
  int items = x->o.graph ? x->o.graph : x->o.iters;
  double *samples = malloc((size_t)items * sizeof *samples), *maxs = malloc((size_t)items * sizeof *maxs);
  double *times = malloc((size_t)W * sizeof *times);
  wrong_info *wi = malloc((size_t)W * sizeof *wi);
  wrong_entry *wrong = malloc((size_t)(2 * W) * sizeof *wrong);
  int nwrong = 0;
  if (!samples || !maxs || !times || !wi || !wrong) {
    free(samples), free(maxs), free(times), free(wi), free(wrong);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  ddp_result r = DDP_OK;
  for (int ip = 0; ip < 2 && r == DDP_OK; ip++) {
    place_result *pl = &row.pl[ip];
    if (ip && coll_out_of_place_only(kind)) continue; /* see comm.h */
    double host_us = 0, load[3] = {NAN, NAN, NAN};
    int ns = 0;
    wrong_info w = {0, -1, 0, 0};
    r = time_row(x, kind, dt, op, &row.z, ip, &host_us, samples, &ns);
    if (r == DDP_OK && !ip && x->H) r = load_row(x, kind, dt, op, &row.z, stats_percentile(samples, ns, 0.5), load);
    if (r == DDP_OK && x->o.check) r = check_row(x, kind, dt, op, &row.z, ip, &w);
    if (r != DDP_OK) break;
    /* Reduce across ranks: every rank's time and wrong count to rank 0, the per-iteration maximum. */
    int e = MPI_Gather(&host_us, 1, MPI_DOUBLE, times, 1, MPI_DOUBLE, 0, mc);
    if (e == MPI_SUCCESS) e = MPI_Reduce(samples, maxs, ns, MPI_DOUBLE, MPI_MAX, 0, mc);
    if (e == MPI_SUCCESS) e = MPI_Gather(&w, (int)sizeof w, MPI_BYTE, wi, (int)sizeof w, MPI_BYTE, 0, mc);
    double lsum[3] = {load[0], load[1], load[2]}, lagg[3] = {0, 0, 0};
    if (e == MPI_SUCCESS && x->H) e = MPI_Reduce(lsum, lagg, 3, MPI_DOUBLE, MPI_SUM, 0, mc);
    if (e != MPI_SUCCESS) {
      r = mpi_fail(e, "gathering a row's results", __FILE__, __LINE__);
      break;
    }
    if (me) continue;
    pl->ran = 1;
    pl->time_us = agg_combine(times, W, x->o.average);
    pl->algbw = row.z.base_bytes / (pl->time_us * 1e-6) / 1e9;
    pl->busbw = pl->algbw * row.z.bus_factor;
    int slow = 0;
    for (int k = 1; k < W; k++)
      if (times[k] > times[slow]) slow = k;
    pl->slowest_us = times[slow];
    pl->slowest_rank = x->gworld[slow]; /* as a world rank, like every rank named in the output */
    pl->iter = stats_compute(maxs, ns);
    pl->checked = x->o.check > 0;
    for (int k = 0; k < W; k++) {
      pl->wrong += wi[k].wrong;
      if (wi[k].wrong) wrong[nwrong++] = (wrong_entry){ip, x->gworld[k], wi[k]};
    }
    if (x->H && !ip) { /* means over ranks */
      pl->load = 1;
      pl->load_time_us = lagg[0] / W;
      pl->load_busbw = row.z.base_bytes / (pl->load_time_us * 1e-6) / 1e9 * row.z.bus_factor;
      pl->gemm_idle_tflops = lagg[1] / W;
      pl->gemm_load_tflops = lagg[2] / W;
    }
  }
  if (r == DDP_OK && me == 0) r = row_records(x, &row, wrong, nwrong, out);
  free(samples), free(maxs), free(times), free(wi), free(wrong);
  return r;
}

/* The sweep over the group: each row's records into out, and to env->emit as soon as they exist (group rank 0).
 * With -N 0 (forever) nothing is kept: the rows are emitted and dropped. */
static ddp_result sweep(coll_ctx *x, result_doc *out) {
  const coll_opts *o = &x->o;
  int me = x->comm->rank;
  if (me == 0) { /* the largest size the buffers hold: what -e became (nccl-tests: "Reducing maxBytes") */
    result_doc first;
    result_init(&first);
    ddp_result r = result_add(&first, "collectives", x->glabel, "maxbytes_used", "B", BETTER_NONE, (double)o->max_bytes,
                              NULL, NULL, 0, NULL);
    if (r == DDP_OK && x->env->emit) x->env->emit(x->env->emit_ctx, &first);
    if (r == DDP_OK && o->cycles) r = result_add_record(out, &first.records[0]);
    result_free(&first);
    DDP_TRY(r);
  }
  int nsizes = 0; /* the rows of one collective, for the progress lines: sizes x types (x operations) */
  for (size_t bytes = o->min_bytes; bytes <= o->max_bytes;) { /* the sizes as the loop below steps them */
    nsizes++;
    size_t next = o->step_factor >= 2 ? bytes * (size_t)o->step_factor : bytes + o->step_bytes;
    if (next <= bytes) break;
    bytes = next;
  }
  for (int cycle = 0; o->cycles == 0 || cycle < o->cycles; cycle++)
    for (int c = 0; c < o->ncoll; c++) {
      ddp_coll_kind kind = (ddp_coll_kind)o->colls[c];
      char phase[64];
      if (o->cycles == 1) snprintf(phase, sizeof phase, "%s", coll_name(kind));
      else if (o->cycles == 0) snprintf(phase, sizeof phase, "%s, cycle %d", coll_name(kind), cycle + 1); /* -N 0 */
      else snprintf(phase, sizeof phase, "%s, cycle %d of %d", coll_name(kind), cycle + 1, o->cycles);
      int rows = 0;
      progress_phase(phase, o->ndtype * (coll_is_reduction(kind) ? o->nop : 1) * nsizes, "row");
      for (int t = 0; t < o->ndtype; t++)
        for (int p = 0; p < (coll_is_reduction(kind) ? o->nop : 1); p++)
          for (size_t bytes = o->min_bytes; bytes <= o->max_bytes;) {
            char what[128];
            snprintf(what, sizeof what, "collectives: %s of %zu bytes, %s%s%s", coll_name(kind), bytes,
                     dtype_name((ddp_dtype)o->dtypes[t]), coll_is_reduction(kind) ? " " : "",
                     coll_is_reduction(kind) ? redop_name((ddp_redop)o->ops[p]) : "");
            watchdog_tick(what);
            result_doc row;
            result_init(&row);
            ddp_result r = run_row(x, cycle, kind, (ddp_dtype)o->dtypes[t], (ddp_redop)o->ops[p], bytes, &row);
            progress_step(++rows);
            if (r == DDP_OK && me == 0 && x->env->emit) x->env->emit(x->env->emit_ctx, &row);
            for (int i = 0; r == DDP_OK && o->cycles && i < row.nrecords; i++) r = result_add_record(out, &row.records[i]);
            result_free(&row);
            DDP_TRY(r);
            size_t next = o->step_factor >= 2 ? bytes * (size_t)o->step_factor : bytes + o->step_bytes;
            if (next <= bytes) break; /* -e reached, or overflow */
            bytes = next;
          }
      progress_phase_end();
    }
  return DDP_OK;
}

/* ---- the measurement ------------------------------------------------------------------------------------- */
/* The measurement's sweep when its caller gives no options (env->params NULL; `ddpbench collectives` always
 * gives them, and --group-measure cannot name it: measure_collectives is in no table, measure/table.c): float
 * sum allreduce, 64 MiB to 1 GiB on GPUs (1 to 4 MiB on the CPU device), data checked. */
static ddp_result preset(coll_opts *o, int cpu) {
  static const char *gpu_kv[] = {"minbytes", "64M", "maxbytes", "1G", "stepfactor", "16", "iters", "20", NULL};
  static const char *cpu_kv[] = {"minbytes", "1M", "maxbytes", "4M", "stepfactor", "4", "iters", "5", NULL};
  const char *const *kv = cpu ? cpu_kv : gpu_kv;
  opt_set s;
  opt_set_init(&s, "collectives");
  memset(o, 0, sizeof *o);
  DDP_TRY(opt_set_add(&s, &collectives_options, o));
  DDP_TRY(opt_defaults(&s));
  for (int i = 0; kv[i]; i += 2) DDP_TRY(opt_apply(&s, kv[i], kv[i + 1], "measurement collectives", OPT_SRC_CLI, 0));
  return coll_options_finish(o, &s);
}

static ddp_result coll_run(const measure_env *env, const measure_group *g, result_doc *out) {
  coll_ctx *x = calloc(1, sizeof *x);
  DDP_CHECK_ALLOC(x);
  ddp_result r = DDP_OK;
  if (env->params) x->o = *(const coll_opts *)env->params; /* the subcommand finished them (coll_options_finish) */
  else r = preset(&x->o, env->dev->host_memory);
  x->env = env;
  x->dist = *env->dist;
  x->dev = env->dev;
  x->comm = g->comm;
  x->ctl = g->mpi;
  snprintf(x->glabel, sizeof x->glabel, "%s", g->name);
  if (r == DDP_OK) {
    x->gworld = malloc((size_t)g->size * sizeof *x->gworld);
    if (!x->gworld) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  if (r == DDP_OK) {
    int e = MPI_Allgather(&x->dist.rank, 1, MPI_INT, x->gworld, 1, MPI_INT, g->mpi);
    if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Allgather(group ranks)", __FILE__, __LINE__);
  }
  if (r == DDP_OK) r = ctx_buffers(x, g->mpi);
  if (r == DDP_OK) r = sweep(x, out);
  /* After a failure the streams may hold a collective that a peer never joins (a timeout, a stopped rank):
   * freeing them would wait for it forever. The job's abort path ends the process; nothing is freed here. */
  if (r != DDP_OK) return r;
  ctx_free(x);
  free(x);
  return r;
}

/* ---- printing: nccl-tests' tables, from the records ---------------------------------------------------------- */
/* nccl-tests' number squeezing: %.2f, then %.1f, then %.0f, then an exponent, to fit `width`. */
static const char *fit(char *buf, size_t n, int width, double v) {
  if (isnan(v)) return snprintf(buf, n, "-"), buf;
  static const char *fmts[] = {"%.2f", "%.1f", "%.0f"};
  for (int i = 0; i < 3; i++)
    if (snprintf(buf, n, fmts[i], v) <= width) return buf;
  snprintf(buf, n, "%.*e", width > 6 ? width - 6 : 0, v);
  return buf;
}

static const char *lab(const result_record *r, const char *k) {
  const char *v = result_record_label(r, k);
  return v ? v : "";
}

/* The identity of a record's row: every label but placement (and, for wrong data, the rank's). */
static int same_row(const result_record *a, const result_record *b) {
  static const char *keys[] = {"collective", "type", "redop", "root", "bytes", "count", "cycle"};
  if (strcmp(a->group, b->group)) return 0;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strcmp(lab(a, keys[i]), lab(b, keys[i]))) return 0;
  return 1;
}

static double fig(const result_record *const *row, int n, const char *placement, const char *metric, const ddp_stats **st) {
  for (int i = 0; i < n; i++)
    if (!strcmp(row[i]->metric, metric) && !strcmp(lab(row[i], "placement"), placement)) {
      if (st) *st = row[i]->has_stats ? &row[i]->stats : NULL;
      return row[i]->value;
    }
  if (st) *st = NULL;
  return NAN;
}

static int fig_has(const result_record *const *row, int n, const char *placement, const char *metric) {
  for (int i = 0; i < n; i++)
    if (!strcmp(row[i]->metric, metric) && !strcmp(lab(row[i], "placement"), placement)) return 1;
  return 0;
}

void coll_printer_init(coll_printer *p, FILE *f, const result_doc *prov, size_t max_bytes_asked) {
  memset(p, 0, sizeof *p);
  p->f = f;
  p->prov = prov;
  p->max_bytes_asked = max_bytes_asked;
}

static void footer(coll_printer *p) {
  if (!p->open) return;
  fprintf(p->f, "# Out of bounds values : %lld %s\n", p->bad, p->bad ? "FAILED" : "OK");
  fprintf(p->f, "# Avg bus bandwidth    : %g\n", p->bw_n ? p->bw_sum / p->bw_n : 0.0);
  fprintf(p->f, "#\n# Collective test concluded: %s\n#\n", p->coll);
  p->open = 0;
  p->bad = 0;
  p->bw_sum = 0;
  p->bw_n = 0;
}

static void header(coll_printer *p, const char *coll, const char *group, int load) {
  fprintf(p->f, "# Collective test starting: %s\n", coll);
  if (strcmp(group, "world") && p->prov) { /* the group's ranks, from the provenance: world rank @ host */
    int n = 0;
    const result_doc *d = p->prov;
    char members[4096] = "";
    size_t o = 0;
    for (int i = 0; i < d->nranks; i++) {
      const result_rank *r = &d->ranks[i];
      char node[128], pair[64];
      snprintf(node, sizeof node, "node:%.56s", r->host ? r->host : "");
      int a = -1, b = -1, in = !strcmp(group, node) || (sscanf(group, "pair:%d-%d", &a, &b) == 2 && (r->node == a || r->node == b));
      if (!strncmp(group, "first:", 6)) in = i < atoi(group + 6);
      (void)pair;
      if (!in) continue;
      n++;
      if (o < sizeof members) o += (size_t)snprintf(members + o, sizeof members - o, " %d@%s", r->rank, r->host);
    }
    fprintf(p->f, "# Group: %s, %d ranks (%s):%s\n", group, n, d->comm ? d->comm : "?", members);
  }
  fprintf(p->f, "#\n");
  /* Titles centred over their column groups (33 characters each, 38 for the per-iteration ones). */
  fprintf(p->f, "#%51s%*s%*s%*s%*s", "", 22, "out-of-place", 11, "", 19, "in-place", 14, "");
  fprintf(p->f, "%*s%*s%*s%*s", 29, "out-of-place per call", 9, "", 27, "in-place per call", 11, "");
  if (load) fprintf(p->f, "  %-29s", "under load (out-of-place)");
  fprintf(p->f, "\n");
  fprintf(p->f, "#%11s  %12s  %8s  %6s  %6s", "size", "count", "type", "redop", "root");
  for (int i = 0; i < 2; i++) fprintf(p->f, "  %7s  %6s  %6s  %6s", "time", "algbw", "busbw", "#wrong");
  for (int i = 0; i < 2; i++) fprintf(p->f, "  %7s %7s %7s %7s %4s", "p50", "p10", "p90", "slowest", "rank");
  if (load) fprintf(p->f, "  %6s %6s %7s %7s", "busbw", "busbw", "GEMM", "GEMM");
  fprintf(p->f, "\n");
  fprintf(p->f, "#%11s  %12s  %8s  %6s  %6s", "(B)", "(elements)", "", "", "");
  for (int i = 0; i < 2; i++) fprintf(p->f, "  %7s  %6s  %6s  %6s", "(us)", "(GB/s)", "(GB/s)", "");
  for (int i = 0; i < 2; i++) fprintf(p->f, "  %7s %7s %7s %7s %4s", "(us)", "(us)", "(us)", "(us)", "");
  if (load) fprintf(p->f, "  %6s %6s %7s %7s", "idle", "load", "TF idle", "TF load");
  fprintf(p->f, "\n");
}

static void print_row(coll_printer *p, const result_record *const *row, int n) {
  const result_record *r0 = row[0];
  int load = fig_has(row, n, "out_of_place", "load_busbw_gbs");
  if (!p->open || strcmp(p->coll, lab(r0, "collective")) || strcmp(p->group, r0->group) ||
      strcmp(p->cycle, lab(r0, "cycle"))) {
    footer(p);
    snprintf(p->coll, sizeof p->coll, "%s", lab(r0, "collective"));
    snprintf(p->group, sizeof p->group, "%s", r0->group);
    snprintf(p->cycle, sizeof p->cycle, "%s", lab(r0, "cycle"));
    header(p, p->coll, p->group, load);
    p->open = 1;
  }
  char b[4][32];
  fprintf(p->f, "%12s  %12s  %8s  %6s  %6s", lab(r0, "bytes"), lab(r0, "count"), lab(r0, "type"), lab(r0, "redop"),
          lab(r0, "root"));
  for (int k = 0; k < 2; k++) {
    const char *pl = PLACEMENT[k];
    if (!fig_has(row, n, pl, "time_us")) {
      fprintf(p->f, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
      continue;
    }
    if (fig_has(row, n, pl, "nwrong")) snprintf(b[3], sizeof b[3], "%.0f", fig(row, n, pl, "nwrong", NULL));
    else snprintf(b[3], sizeof b[3], "N/A");
    fprintf(p->f, "  %7s  %6s  %6s  %6s", fit(b[0], 32, 7, fig(row, n, pl, "time_us", NULL)),
            fit(b[1], 32, 6, fig(row, n, pl, "algbw_gbs", NULL)), fit(b[2], 32, 6, fig(row, n, pl, "busbw_gbs", NULL)), b[3]);
    p->bw_sum += fig(row, n, pl, "busbw_gbs", NULL);
    p->bw_n++;
  }
  for (int k = 0; k < 2; k++) {
    const char *pl = PLACEMENT[k];
    const ddp_stats *st = NULL;
    fig(row, n, pl, "iter_time_us", &st);
    if (!st) {
      fprintf(p->f, "  %7s %7s %7s %7s %4s", "N/A", "N/A", "N/A", "N/A", "");
      continue;
    }
    char s[32];
    fprintf(p->f, "  %7s %7s %7s %7s %4.0f", fit(b[0], 32, 7, st->median), fit(b[1], 32, 7, st->p10),
            fit(b[2], 32, 7, st->p90), fit(s, 32, 7, fig(row, n, pl, "slowest_rank_time_us", NULL)),
            fig(row, n, pl, "slowest_rank", NULL));
  }
  if (load) {
    char s[32];
    fprintf(p->f, "  %6s %6s %7s %7s", fit(b[0], 32, 6, fig(row, n, "out_of_place", "busbw_gbs", NULL)),
            fit(b[1], 32, 6, fig(row, n, "out_of_place", "load_busbw_gbs", NULL)),
            fit(b[2], 32, 7, fig(row, n, "out_of_place", "gemm_tflops_idle", NULL)),
            fit(s, 32, 7, fig(row, n, "out_of_place", "gemm_tflops_load", NULL)));
  }
  fprintf(p->f, "\n");
  for (int i = 0; i < n; i++) {
    const result_record *w = row[i];
    if (strcmp(w->metric, "wrong_elements")) continue;
    ddp_dtype t = DT_F32;
    dtype_parse(lab(w, "type"), &t);
    long long first = atoll(lab(w, "first"));
    fprintf(p->f, "# wrong data: rank %s host %s, %s: %.0f wrong element(s) of %s received; first at element %lld "
            "(byte offset %lld): got %s, expected %s\n",
            lab(w, "rank"), lab(w, "host"), strcmp(lab(w, "placement"), "in_place") ? "out-of-place" : "in-place",
            w->value, lab(w, "received"), first, first * (long long)dtype_size(t), lab(w, "got"), lab(w, "expected"));
    p->bad++;
  }
  fflush(p->f);
}

void coll_printer_feed(coll_printer *p, const result_doc *recs) {
  const result_record **row = malloc(((size_t)recs->nrecords + 1) * sizeof *row);
  if (!row) return;
  int n = 0;
  for (int i = 0; i < recs->nrecords; i++) {
    const result_record *r = &recs->records[i];
    if (strcmp(r->measurement, "collectives")) continue;
    if (!strcmp(r->metric, "maxbytes_used")) {
      if (p->max_bytes_asked && r->value < (double)p->max_bytes_asked)
        fprintf(p->f, "# Reducing maxBytes to %.0f due to memory limitation\n", r->value);
      continue;
    }
    if (n && !same_row(row[0], r)) {
      print_row(p, row, n);
      n = 0;
    }
    row[n++] = r;
  }
  if (n) print_row(p, row, n);
  free(row);
}

void coll_printer_end(coll_printer *p) { footer(p); }

static void coll_print(FILE *f, const measurement *m, const result_doc *doc) {
  (void)m;
  coll_printer p;
  coll_printer_init(&p, f, doc, 0);
  coll_printer_feed(&p, doc);
  coll_printer_end(&p);
}

const measurement measure_collectives = {
    "collectives", "nccl-tests' sweep over each group (default: allreduce 64 MiB to 1 GiB; cpu: 1 to 4 MiB), exact data",
    coll_run, coll_print, &collectives_options, sizeof(coll_opts)};
