/* nccl_prof_plugin.c: libddpbench-nccl-profiler.so, an NCCL profiler plugin (API v5, nccl_prof_abi.h) that
 * records, per collective, the algorithm, protocol and channel count NCCL chose, aggregated in a fixed table,
 * and the control API ddpbench calls to switch it on and off and take the table (nccl_prof.h).
 *
 * Cost. The activation mask is 0 unless ddpbench enabled it; NCCL then calls nothing here for a collective.
 * Enabled, the mask is ncclProfileColl alone: NCCL also starts its Group, GroupApi and CollApi events for that
 * bit (their masks include it, src/plugin/profiler.cc), which are answered with a NULL handle at once, so NCCL
 * never stops or updates them. A Coll event is recorded when it starts (its descriptor holds everything) under
 * one mutex, and gets a NULL handle too: stopEvent and recordEventState have nothing to do.
 *
 * Must never: link NCCL (it is loaded by NCCL, and dlopen'ed again by ddpbench), print to stdout, crash on a NULL
 * descriptor or string, allocate per event, or block NCCL longer than one table look-up. Only the functions of
 * nccl_prof.h and the symbol ncclProfiler_v5 are visible. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_prof.h"
#include "nccl_prof_abi.h"

#define EXPORT __attribute__((visibility("default")))

/* One communicator, as init described it. */
typedef struct {
  uint64_t hash;
  int rank, nranks;
} prof_ctx;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* guards records, nrecords, dropped */
static ddpbench_prof_record records[DDPBENCH_PROF_MAX_RECORDS];
static int nrecords;
static long dropped;

static int *nccl_mask; /* NCCL's ncclProfilerEventMask (one per process, the same pointer for every comm) */
static int wanted;     /* the mask ddpbench asked for: DDPBENCH_NCCL_PROFILE_COLL or 0 */
static int inits;      /* init calls seen */

/* Size in bytes of NCCL's datatype names (ncclDatatypeToString, NCCL 2.28); 0 unknown. */
static uint64_t type_size(const char *t) {
  static const struct {
    const char *name;
    int size;
  } types[] = {{"ncclInt8", 1},    {"ncclUint8", 1},   {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1},
               {"ncclFloat16", 2}, {"ncclBfloat16", 2}, {"ncclInt32", 4},      {"ncclUint32", 4},
               {"ncclFloat32", 4}, {"ncclInt64", 8},    {"ncclUint64", 8},     {"ncclFloat64", 8}};
  for (size_t i = 0; t && i < sizeof types / sizeof types[0]; i++)
    if (strcmp(t, types[i].name) == 0) return (uint64_t)types[i].size;
  return 0;
}

static void copy_name(char *dst, size_t n, const char *src) {
  size_t len = src ? strnlen(src, n - 1) : 0;
  if (len) memcpy(dst, src, len);
  dst[len] = '\0';
}

/* Sequentially consistent with prof_init's pair (store the pointer, load wanted), so that an enable racing a
 * new communicator's init leaves NCCL's mask at the last value asked for. */
static void set_mask(int m) {
  __atomic_store_n(&wanted, m, __ATOMIC_SEQ_CST);
  int *p = __atomic_load_n(&nccl_mask, __ATOMIC_SEQ_CST);
  if (p) __atomic_store_n(p, m, __ATOMIC_SEQ_CST); /* NCCL reads it with __atomic_load_n, relaxed */
}

/* ---- ncclProfiler_v5 ---- */

static ddpbench_nccl_result prof_init(void **context, uint64_t comm_id, int *mask, const char *name, int nnodes,
                                      int nranks, int rank, ddpbench_nccl_logger logfn) {
  prof_ctx *c = calloc(1, sizeof *c);
  if (c) *c = (prof_ctx){.hash = comm_id, .rank = rank, .nranks = nranks};
  if (context) *context = c; /* NULL when out of memory: events then carry rank only */
  if (mask) {
    __atomic_store_n(&nccl_mask, mask, __ATOMIC_SEQ_CST);
    __atomic_store_n(mask, __atomic_load_n(&wanted, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
  }
  __atomic_fetch_add(&inits, 1, __ATOMIC_RELAXED);
  return 0;
}

static void record(const prof_ctx *c, const ddpbench_nccl_prof_descr_v5 *d) {
  ddpbench_prof_record r;
  memset(&r, 0, sizeof r); /* padding too: records are compared with memcmp below */
  r.comm_hash = c ? c->hash : 0;
  r.rank = c ? c->rank : d->rank;
  r.nranks = c ? c->nranks : -1;
  copy_name(r.coll, sizeof r.coll, d->coll.func);
  copy_name(r.datatype, sizeof r.datatype, d->coll.datatype);
  copy_name(r.algo, sizeof r.algo, d->coll.algo);
  copy_name(r.proto, sizeof r.proto, d->coll.proto);
  r.count = d->coll.count;
  r.bytes = r.count * type_size(d->coll.datatype);
  r.channels = d->coll.nChannels;

  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < nrecords && memcmp(&records[i], &r, offsetof(ddpbench_prof_record, calls)) != 0) i++;
  if (i < nrecords) {
    records[i].calls++;
  } else if (nrecords < DDPBENCH_PROF_MAX_RECORDS) {
    r.calls = 1;
    memcpy(&records[nrecords++], &r, sizeof r); /* with its zeroed padding, which assignment may not copy */
  } else {
    dropped++;
  }
  pthread_mutex_unlock(&lock);
}

static ddpbench_nccl_result prof_start(void *context, void **handle, ddpbench_nccl_prof_descr_v5 *d) {
  if (handle) *handle = NULL;
  if (d && d->type == DDPBENCH_NCCL_PROFILE_COLL) record(context, d);
  return 0;
}

static ddpbench_nccl_result prof_stop(void *handle) { return 0; }

static ddpbench_nccl_result prof_state(void *handle, int state, ddpbench_nccl_prof_state_args_v5 *args) { return 0; }

static ddpbench_nccl_result prof_finalize(void *context) {
  free(context);
  return 0;
}

EXPORT const ddpbench_nccl_profiler_v5 ncclProfiler_v5 = {
    .name = "ddpbench",
    .init = prof_init,
    .startEvent = prof_start,
    .stopEvent = prof_stop,
    .recordEventState = prof_state,
    .finalize = prof_finalize,
};

/* ---- the control API (nccl_prof.h) ---- */

EXPORT int ddpbench_prof_loaded(void) { return __atomic_load_n(&inits, __ATOMIC_RELAXED) > 0; }

EXPORT void ddpbench_prof_enable(int on) { set_mask(on ? DDPBENCH_NCCL_PROFILE_COLL : 0); }

EXPORT int ddpbench_prof_take(ddpbench_prof_record *out, int max) {
  pthread_mutex_lock(&lock);
  int n = out && max > 0 ? (nrecords < max ? nrecords : max) : 0;
  if (n > 0) memcpy(out, records, (size_t)n * sizeof *out);
  nrecords = 0;
  dropped = 0;
  pthread_mutex_unlock(&lock);
  return n;
}

EXPORT long ddpbench_prof_dropped(void) {
  pthread_mutex_lock(&lock);
  long d = dropped;
  pthread_mutex_unlock(&lock);
  return d;
}
