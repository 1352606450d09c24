/* test_nccl_prof: the NCCL profiler plugin (libddpbench-nccl-profiler.so) driven as NCCL drives it, on the CPU:
 * dlopen the built library, find ncclProfiler_v5, call its init with a local int as NCCL's activation mask, and
 * feed startEvent/stopEvent hand-built v5 descriptors (nccl_prof_abi.h). Checks that
 *  - ddpbench_prof_enable writes the mask (collective events only, or 0), and a later init gets the current one;
 *  - two AllReduce 1 MiB RING SIMPLE 16 channels make one record with 2 calls; another size another record;
 *    a NULL algorithm (and NULL strings anywhere, a NULL descriptor or context) is "" and no crash;
 *  - the other event types NCCL starts for the Coll bit (Group, GroupApi, CollApi) record nothing and get a
 *    NULL handle, as every event does;
 *  - take clears the table; after enable(0) events still arriving are handled (recorded, not lost);
 *  - the table is bounded: records past DDPBENCH_PROF_MAX_RECORDS are counted as dropped;
 *  - ddpbench's side (nccl_prof.c): nccl_prof_setup_env sets NCCL_PROFILER_PLUGIN to the library's absolute path,
 *    leaves a user's value (and says so), says when the file is not there; nccl_prof_enable/take reach the very
 *    library this process loaded (as NCCL would have) and say "not reported" before it is loaded or initialised.
 * Exits 77 when the plugin was not built (a build without CUDA). */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nccl_prof.h"
#include "nccl_prof_abi.h"

#ifndef DDPBENCH_PROF_PLUGIN_PATH
int main(void) {
  printf("the NCCL profiler plugin is not built (no CUDA in this build): skipped\n");
  return CHECK_SKIP;
}
#else

static const ddpbench_nccl_profiler_v5 *prof;
static int (*loaded)(void);
static void (*enable)(int);
static int (*take)(ddpbench_prof_record *, int);
static long (*dropped)(void);

/* One Coll event as NCCL sends it (start, then stop with the handle start gave); 1 when the plugin answered it
 * as it must (success, NULL handle). */
static int coll(void *ctx, const char *func, size_t count, const char *dt, const char *algo, const char *proto,
                int nch) {
  ddpbench_nccl_prof_descr_v5 d;
  memset(&d, 0, sizeof d);
  d.type = DDPBENCH_NCCL_PROFILE_COLL;
  d.rank = 0;
  d.coll.func = func;
  d.coll.count = count;
  d.coll.datatype = dt;
  d.coll.nChannels = (uint8_t)nch;
  d.coll.algo = algo;
  d.coll.proto = proto;
  void *h = (void *)&d; /* the plugin must overwrite it */
  int ok = prof->startEvent(ctx, &h, &d) == 0 && h == NULL;
  return ok && prof->stopEvent(h) == 0;
}

static const ddpbench_prof_record *find(const ddpbench_prof_record *r, int n, const char *c, uint64_t bytes) {
  for (int i = 0; i < n; i++)
    if (strcmp(r[i].coll, c) == 0 && r[i].bytes == bytes) return &r[i];
  return NULL;
}

/* nccl_prof_setup_env's three answers, before any library is loaded. */
static void setup_env_cases(void) {
  char why[PATH_MAX + 128];
  CHECK(nccl_prof_take(NULL, 0, NULL, why, sizeof why) == -1 && strstr(why, "setup_env was not called"),
        "take before setup: %s", why);
  setenv("NCCL_PROFILER_PLUGIN", "/elsewhere/libtheirs.so", 1);
  CHECK(nccl_prof_setup_env(DDPBENCH_PROF_PLUGIN_DIR, why, sizeof why) == 0 &&
            strstr(why, "not reported: the user's NCCL_PROFILER_PLUGIN=/elsewhere/libtheirs.so is loaded"),
        "a user's plugin is left: %s", why);
  CHECK(strcmp(getenv("NCCL_PROFILER_PLUGIN"), "/elsewhere/libtheirs.so") == 0, "theirs unchanged");
  CHECK(nccl_prof_enable(1, why, sizeof why) == -1 && strstr(why, "the user's"), "enable says why: %s", why);
  unsetenv("NCCL_PROFILER_PLUGIN");
  CHECK(nccl_prof_setup_env("/nonexistent/dir", why, sizeof why) == 0 && strstr(why, "is not there"),
        "no library: %s", why);
  char deep[300];
  memset(deep, 'd', sizeof deep - 1);
  deep[0] = '/';
  deep[sizeof deep - 1] = '\0';
  CHECK(nccl_prof_setup_env(deep, why, sizeof why) == 0 && strstr(why, "over the 255 characters"),
        "a path NCCL would truncate: %s", why);
  CHECK(nccl_prof_setup_env(NULL, why, sizeof why) == 0 && strstr(why, "/tests/unit/" DDPBENCH_PROF_LIBRARY),
        "NULL: the directory of /proc/self/exe (this test's, without the library): %s", why);
  CHECK(getenv("NCCL_PROFILER_PLUGIN") == NULL, "left unset when the library is not there");
  CHECK(nccl_prof_setup_env(DDPBENCH_PROF_PLUGIN_DIR, why, sizeof why) == 1, "setup: %s", why);
  char *real = realpath(DDPBENCH_PROF_PLUGIN_PATH, NULL);
  const char *env = getenv("NCCL_PROFILER_PLUGIN");
  CHECK(real && env && strcmp(env, real) == 0, "NCCL_PROFILER_PLUGIN=%s", env ? env : "(unset)");
  free(real);
  CHECK(nccl_prof_setup_env(DDPBENCH_PROF_PLUGIN_DIR, why, sizeof why) == 1, "our own value counts as ours");
  CHECK(nccl_prof_enable(1, why, sizeof why) == -1 && strstr(why, "NCCL has not loaded"),
        "enable before NCCL loaded it: %s", why);
}

int main(void) {
  setup_env_cases();
  char why[PATH_MAX + 128];
  void *lib = dlopen(DDPBENCH_PROF_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("cannot open %s (%s): skipped\n", DDPBENCH_PROF_PLUGIN_PATH, dlerror());
    return CHECK_SKIP;
  }
  prof = dlsym(lib, "ncclProfiler_v5");
  *(void **)&loaded = dlsym(lib, "ddpbench_prof_loaded");
  *(void **)&enable = dlsym(lib, "ddpbench_prof_enable");
  *(void **)&take = dlsym(lib, "ddpbench_prof_take");
  *(void **)&dropped = dlsym(lib, "ddpbench_prof_dropped");
  CHECK(prof && loaded && enable && take && dropped, "the plugin exports ncclProfiler_v5 and the control API");
  if (!(prof && loaded && enable && take && dropped)) return check_summary();
  CHECK(dlsym(lib, "record") == NULL && dlsym(lib, "prof_init") == NULL, "internal functions are hidden");
  CHECK(prof->name && strcmp(prof->name, "ddpbench") == 0, "name %s", prof->name ? prof->name : "(null)");

  /* init: the mask it writes is what ddpbench asked for (nothing yet: 0) */
  CHECK(!loaded(), "not loaded before init");
  CHECK(nccl_prof_take(NULL, 0, NULL, why, sizeof why) == -1 && strstr(why, "did not initialise"),
        "take before init: %s", why);
  int mask = -1;
  void *ctx = NULL;
  CHECK(prof->init(&ctx, 0x1234abcdULL, &mask, "test", 1, 2, 1, NULL) == 0, "init");
  CHECK(loaded(), "loaded after init");
  CHECK(mask == 0, "mask after init %d (disabled)", mask);
  CHECK(ctx != NULL, "a context per communicator");
  enable(1);
  CHECK(mask == DDPBENCH_NCCL_PROFILE_COLL, "enable(1): mask %#x, collective events only", mask);
  enable(0);
  CHECK(mask == 0, "enable(0): mask %d", mask);
  enable(1);
  int mask2 = 0;
  void *ctx2 = NULL;
  CHECK(prof->init(&ctx2, 0x99ULL, &mask2, NULL, 1, 1, 0, NULL) == 0, "second init (NULL name)");
  CHECK(mask2 == DDPBENCH_NCCL_PROFILE_COLL, "a later init gets the current mask: %#x", mask2);

  /* the events NCCL starts for the Coll bit besides Coll itself: nothing recorded, NULL handle */
  const uint64_t others[] = {DDPBENCH_NCCL_PROFILE_GROUP, DDPBENCH_NCCL_PROFILE_GROUP_API,
                             DDPBENCH_NCCL_PROFILE_COLL_API, DDPBENCH_NCCL_PROFILE_P2P};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    ddpbench_nccl_prof_descr_v5 d;
    memset(&d, 0, sizeof d);
    d.type = others[i];
    d.collApi.func = "AllReduce";
    void *h = &d;
    CHECK(prof->startEvent(ctx, &h, &d) == 0 && h == NULL, "event type %#llx: NULL handle", (unsigned long long)d.type);
  }
  CHECK(prof->startEvent(ctx, NULL, NULL) == 0, "NULL handle pointer and descriptor");
  CHECK(prof->recordEventState(NULL, 23, NULL) == 0, "recordEventState(NULL)");

  const size_t mib = 1 << 20;
  CHECK(coll(ctx, "AllReduce", mib / 4, "ncclFloat32", "RING", "SIMPLE", 16), "AllReduce 1 MiB");
  CHECK(coll(ctx, "AllReduce", mib / 4, "ncclFloat32", "RING", "SIMPLE", 16), "AllReduce 1 MiB again");
  CHECK(coll(ctx, "AllReduce", 2, "ncclFloat32", "RING", "LL", 16), "AllReduce 8 B");
  CHECK(coll(ctx, "ReduceScatter", mib / 2, "ncclBfloat16", NULL, "LL128", 8), "ReduceScatter, NULL algo");
  CHECK(coll(NULL, NULL, 7, NULL, NULL, NULL, 0), "everything NULL, no context");
  CHECK(coll(ctx2, "AllReduce", mib / 4, "ncclFloat32", "RING", "SIMPLE", 16), "AllReduce on another comm");

  ddpbench_prof_record r[DDPBENCH_PROF_MAX_RECORDS];
  CHECK(dropped() == 0, "nothing dropped");
  int n = take(r, DDPBENCH_PROF_MAX_RECORDS);
  CHECK(n == 5, "5 records, got %d", n);
  const ddpbench_prof_record *a = find(r, n, "AllReduce", mib);
  CHECK(a && a->calls == 2, "AllReduce 1 MiB twice: one record, %d calls", a ? a->calls : -1);
  if (a) {
    CHECK(strcmp(a->algo, "RING") == 0 && strcmp(a->proto, "SIMPLE") == 0 && a->channels == 16,
          "AllReduce 1 MiB: %s %s %d channels", a->algo, a->proto, a->channels);
    CHECK(a->comm_hash == 0x1234abcdULL && a->rank == 1 && a->nranks == 2, "communicator %#llx rank %d of %d",
          (unsigned long long)a->comm_hash, a->rank, a->nranks);
    CHECK(a->count == mib / 4 && strcmp(a->datatype, "ncclFloat32") == 0, "count %llu %s",
          (unsigned long long)a->count, a->datatype);
  }
  const ddpbench_prof_record *s = find(r, n, "AllReduce", 8);
  CHECK(s && s->calls == 1 && strcmp(s->proto, "LL") == 0, "AllReduce 8 B: its own record");
  const ddpbench_prof_record *rs = find(r, n, "ReduceScatter", mib);
  CHECK(rs && rs->algo[0] == '\0' && strcmp(rs->proto, "LL128") == 0 && rs->channels == 8,
        "ReduceScatter bf16 1 MiB: NULL algo is \"\"");
  const ddpbench_prof_record *z = find(r, n, "", 0);
  CHECK(z && z->count == 7 && z->datatype[0] == '\0' && z->nranks == -1 && z->comm_hash == 0,
        "all-NULL event: empty strings, bytes 0 (unknown type), no communicator");
  int other_comm = 0;
  for (int i = 0; i < n; i++) other_comm += r[i].comm_hash == 0x99ULL && r[i].calls == 1 && r[i].bytes == mib;
  CHECK(other_comm == 1, "the same collective on another communicator is another record");
  CHECK(take(r, DDPBENCH_PROF_MAX_RECORDS) == 0, "take cleared the table");

  /* the same through ddpbench's side, on the library this process loaded */
  CHECK(nccl_prof_enable(1, why, sizeof why) == 0 && mask2 == DDPBENCH_NCCL_PROFILE_COLL, "nccl_prof_enable(1): %s",
        why);
  CHECK(coll(ctx, "Broadcast", 64, "ncclInt8", "RING", "LL", 1) && coll(ctx, "Broadcast", 64, "ncclInt8", "RING", "LL", 1),
        "two Broadcasts");
  long lost = -1;
  n = nccl_prof_take(r, DDPBENCH_PROF_MAX_RECORDS, &lost, why, sizeof why);
  CHECK(n == 1 && r[0].calls == 2 && r[0].bytes == 64 && lost == 0 && why[0] == '\0', "nccl_prof_take: %d %s", n, why);

  /* after enable(0): NCCL stops asking, but an event it already decided on may still come: handled */
  enable(0);
  CHECK(mask2 == 0, "enable(0) writes the mask the last init gave (NCCL gives one pointer to all): %d", mask2);
  CHECK(coll(ctx, "AllGather", 4096, "ncclInt8", "RING", "LL", 2), "AllGather after enable(0)");
  n = take(r, 1);
  CHECK(n == 1 && r[0].bytes == 4096 && r[0].calls == 1, "an event after enable(0) is recorded");
  CHECK(coll(ctx, "AllGather", 4096, "ncclInt8", "RING", "LL", 2) && take(r, -1) == 0 && take(r, 1) == 0,
        "take(r, -1) returns 0 and clears");
  CHECK(coll(ctx, "AllGather", 4096, "ncclInt8", "RING", "LL", 2) && take(NULL, 0) == 0 && take(r, 1) == 0,
        "take(NULL, 0) clears");

  /* the table is bounded */
  int answered = 0;
  for (int i = 0; i < DDPBENCH_PROF_MAX_RECORDS + 10; i++)
    answered += coll(ctx, "AllReduce", (size_t)i + 1, "ncclFloat64", "TREE", "LL", 4);
  CHECK(answered == DDPBENCH_PROF_MAX_RECORDS + 10, "a full table still answers every event (%d)", answered);
  CHECK(dropped() == 10, "10 dropped past the table's %d, got %ld", DDPBENCH_PROF_MAX_RECORDS, dropped());
  n = take(r, DDPBENCH_PROF_MAX_RECORDS);
  CHECK(n == DDPBENCH_PROF_MAX_RECORDS && r[0].bytes == 8 && r[n - 1].bytes == 8ull * DDPBENCH_PROF_MAX_RECORDS,
        "a full table, oldest first: %d", n);
  CHECK(dropped() == 0, "take resets the dropped count");

  CHECK(prof->finalize(ctx) == 0 && prof->finalize(ctx2) == 0 && prof->finalize(NULL) == 0, "finalize");
  dlclose(lib);
  return check_summary();
}
#endif
