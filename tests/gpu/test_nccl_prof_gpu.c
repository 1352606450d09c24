/* test_nccl_prof_gpu (one process, needs a GPU; exits 77 without one): the NCCL profiler plugin under real
 * NCCL. nccl_prof_setup_env points NCCL_PROFILER_PLUGIN at the built libddpbench-nccl-profiler.so, then one
 * communicator of min(2, GPUs) ranks in this process (ncclCommInitAll). With profiling on: one AllReduce each of
 * 8 B, 1 MiB and 256 MiB of floats, one ReduceScatter and one AllGather (256 KiB per rank); with it off: 100
 * AllReduces of 1 MiB, which must leave no record.
 *  - 2 GPUs: every rank has one record per collective, with NCCL's algorithm and protocol named (not "" nor
 *    "Unknown") and channels > 0; each record is printed ("# AllReduce 1048576 B ...").
 *  - 1 GPU: a 1-rank communicator. NCCL runs its collectives as a copy (enqueue.cc, taskAppend: nRanks == 1 ->
 *    ncclLaunchOneRank) before any task or profiler event exists, so the test asserts what is true then: the
 *    plugin was initialised (take answers 0, not "not reported") and no collective was recorded.
 * Every wait polls the stream and ncclCommGetAsyncError under a deadline, and aborts the communicators past it. */
#include <cuda_runtime_api.h>
#include <limits.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "nccl_prof.h"

#define MAX_DEV 2
#define WAIT_S 120.0

static int ndev;
static ncclComm_t comms[MAX_DEV];
static cudaStream_t streams[MAX_DEV];
static float *bufs[MAX_DEV], *outs[MAX_DEV];

static int cuda_ok(cudaError_t e, const char *call, int line) {
  CHECK(e == cudaSuccess, "line %d: %s: %s", line, call, cudaGetErrorString(e));
  return e == cudaSuccess;
}
static int nccl_ok(ncclResult_t r, const char *call, int line) {
  CHECK(r == ncclSuccess, "line %d: %s: %s %s", line, call, ncclGetErrorString(r),
        ndev && comms[0] ? ncclGetLastError(comms[0]) : "");
  return r == ncclSuccess;
}
#define CUDA_OK(call) cuda_ok((call), #call, __LINE__)
#define NCCL_OK(call) nccl_ok((call), #call, __LINE__)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Every stream done, then every device (NCCL's host-side work for the plan, where it reports its collective
 * events, runs on its own stream). 1, or 0 after aborting the communicators. */
static int wait_all(void) {
  double end = now() + WAIT_S;
  for (int d = 0; d < ndev; d++) {
    cudaError_t e;
    while ((e = cudaStreamQuery(streams[d])) == cudaErrorNotReady) {
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comms[d], &async);
      if (async != ncclSuccess || now() > end) {
        CHECK(async == ncclSuccess, "rank %d: NCCL's asynchronous error: %s", d, ncclGetErrorString(async));
        CHECK(now() <= end, "rank %d did not finish within %.0f s", d, WAIT_S);
        for (int k = 0; k < ndev; k++) ncclCommAbort(comms[k]);
        ndev = 0;
        return 0;
      }
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    if (!CUDA_OK(e) || !CUDA_OK(cudaSetDevice(d)) || !CUDA_OK(cudaDeviceSynchronize())) return 0;
  }
  return 1;
}

typedef enum { ALLREDUCE, REDUCE_SCATTER, ALL_GATHER } kind;

/* One collective on every rank, in one group. count: NCCL's count argument. */
static int coll(kind k, size_t count) {
  if (!NCCL_OK(ncclGroupStart())) return 0;
  int ok = 1;
  for (int d = 0; d < ndev && ok; d++) {
    if (k == ALLREDUCE)
      ok = NCCL_OK(ncclAllReduce(bufs[d], bufs[d], count, ncclFloat32, ncclSum, comms[d], streams[d]));
    else if (k == REDUCE_SCATTER)
      ok = NCCL_OK(ncclReduceScatter(bufs[d], outs[d], count, ncclFloat32, ncclSum, comms[d], streams[d]));
    else
      ok = NCCL_OK(ncclAllGather(bufs[d], outs[d], count, ncclFloat32, comms[d], streams[d]));
  }
  return NCCL_OK(ncclGroupEnd()) && ok;
}

static int take(ddpbench_prof_record *r, const char *when) {
  char why[PATH_MAX + 128];
  long dropped = -1;
  int n = nccl_prof_take(r, DDPBENCH_PROF_MAX_RECORDS, &dropped, why, sizeof why);
  CHECK(n >= 0, "%s: %s", when, why);
  CHECK(dropped <= 0, "%s: %ld dropped", when, dropped);
  return n;
}

/* The record of rank `rank` for coll/bytes, or NULL. */
static const ddpbench_prof_record *find(const ddpbench_prof_record *r, int n, int rank, const char *c,
                                        uint64_t bytes) {
  for (int i = 0; i < n; i++)
    if (r[i].rank == rank && strcmp(r[i].coll, c) == 0 && r[i].bytes == bytes) return &r[i];
  return NULL;
}

static int named(const char *s) { return s[0] && strcmp(s, "Unknown") != 0; }

int main(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("no GPU visible: skipped\n");
    return CHECK_SKIP;
  }
  ndev = count < MAX_DEV ? count : MAX_DEV;
  char why[PATH_MAX + 128];
  unsetenv("NCCL_PROFILER_PLUGIN"); /* this test is about ours */
  CHECK(nccl_prof_setup_env(DDPBENCH_PROF_PLUGIN_DIR, why, sizeof why) == 1, "setup: %s", why);
  printf("# NCCL_PROFILER_PLUGIN=%s, %d rank(s) on %d GPU(s)\n", getenv("NCCL_PROFILER_PLUGIN"), ndev, count);

  const size_t big = (256u << 20) / sizeof(float), mib = (1u << 20) / sizeof(float), part = mib / 4;
  int devs[MAX_DEV] = {0, 1};
  if (!NCCL_OK(ncclCommInitAll(comms, ndev, devs))) return check_summary();
  for (int d = 0; d < ndev; d++) {
    if (!CUDA_OK(cudaSetDevice(d)) || !CUDA_OK(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking)) ||
        !CUDA_OK(cudaMalloc((void **)&bufs[d], big * sizeof(float))) ||
        !CUDA_OK(cudaMalloc((void **)&outs[d], (size_t)ndev * part * sizeof(float))) ||
        !CUDA_OK(cudaMemset(bufs[d], 0, big * sizeof(float))))
      return check_summary();
  }
  CHECK(nccl_prof_enable(1, why, sizeof why) == 0, "enable: %s", why);
  ddpbench_prof_record r[DDPBENCH_PROF_MAX_RECORDS];
  take(r, "clear"); /* nothing should be there; start clean regardless */

  const size_t sizes[] = {2, mib, big}; /* 8 B, 1 MiB, 256 MiB */
  int ran = 1;
  for (int i = 0; i < 3; i++) ran &= coll(ALLREDUCE, sizes[i]);
  ran &= coll(REDUCE_SCATTER, part) && coll(ALL_GATHER, part);
  ran &= wait_all();
  CHECK(ran, "the collectives ran");
  int n = take(r, "profiled");
  for (int i = 0; i < n; i++)
    printf("# %s %llu B (%s x %llu): %s %s %d channels (rank %d of %d, comm %#llx, %d call%s)\n", r[i].coll,
           (unsigned long long)r[i].bytes, r[i].datatype, (unsigned long long)r[i].count, r[i].algo, r[i].proto,
           r[i].channels, r[i].rank, r[i].nranks, (unsigned long long)r[i].comm_hash, r[i].calls,
           r[i].calls == 1 ? "" : "s");

  if (ndev == 1) {
    printf("# a 1-rank communicator: NCCL copies instead of running a collective (enqueue.cc taskAppend, "
           "nRanks == 1 -> ncclLaunchOneRank) and emits no profiler event; %d records\n", n);
    CHECK(n == 0, "1 rank: no collective events (got %d)", n);
  } else {
    CHECK(n == 5 * ndev, "%d records, want %d (5 collectives x %d ranks)", n, 5 * ndev, ndev);
    struct {
      const char *coll;
      uint64_t bytes;
    } want[] = {{"AllReduce", 8}, {"AllReduce", 1u << 20}, {"AllReduce", 256u << 20},
                {"ReduceScatter", part * sizeof(float)}, {"AllGather", part * sizeof(float)}};
    for (int d = 0; d < ndev; d++)
      for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        const ddpbench_prof_record *x = find(r, n, d, want[w].coll, want[w].bytes);
        CHECK(x != NULL, "rank %d: no record for %s %llu B", d, want[w].coll, (unsigned long long)want[w].bytes);
        if (!x) continue;
        CHECK(named(x->algo) && named(x->proto) && x->channels > 0 && x->calls == 1 && x->nranks == ndev,
              "rank %d %s %llu B: algo '%s' proto '%s' %d channels %d calls", d, x->coll,
              (unsigned long long)x->bytes, x->algo, x->proto, x->channels, x->calls);
      }
  }

  /* off: NCCL calls no plugin function, so 100 collectives leave nothing */
  CHECK(nccl_prof_enable(0, why, sizeof why) == 0, "disable: %s", why);
  ran = 1;
  for (int i = 0; i < 100 && ran; i++) ran = coll(ALLREDUCE, mib);
  CHECK(ran && wait_all(), "100 AllReduces ran");
  n = take(r, "disabled");
  CHECK(n == 0, "disabled: %d records after 100 calls", n);

  /* and on again: the switch works both ways */
  if (ndev > 1) {
    CHECK(nccl_prof_enable(1, why, sizeof why) == 0, "enable again: %s", why);
    CHECK(coll(ALLREDUCE, mib) && wait_all(), "one more AllReduce");
    n = take(r, "enabled again");
    CHECK(n == ndev && find(r, n, 0, "AllReduce", 1u << 20), "enabled again: %d records", n);
    nccl_prof_enable(0, NULL, 0);
  }

  for (int d = 0; d < ndev; d++) {
    cudaSetDevice(d);
    cudaFree(bufs[d]);
    cudaFree(outs[d]);
    cudaStreamDestroy(streams[d]);
  }
  /* Communicators of one process finalise together, in one group (NCCL's rule for ncclCommInitAll's). */
  int fin = ncclGroupStart() == ncclSuccess;
  for (int d = 0; d < ndev; d++) fin &= ncclCommFinalize(comms[d]) == ncclSuccess;
  fin &= ncclGroupEnd() == ncclSuccess;
  for (int d = 0; d < ndev; d++) fin &= ncclCommDestroy(comms[d]) == ncclSuccess;
  CHECK(fin, "communicators finalised and destroyed");
  return check_summary();
}
