/* nccl_prof_abi.h: NCCL's profiler-plugin ABI, version 5, declared here by hand (never copied) from NCCL's
 * headers, for the ddpbench profiler plugin (nccl_prof_plugin.c) and its unit test. Only what the plugin needs:
 * the event-type bits, the v5 event descriptor (every member, so that the layout matches), the v5 state-args
 * union and the v5 plugin table. It includes no NCCL header and the plugin links no NCCL: NCCL's enums are
 * declared as int here (ncclResult_t, ncclProfilerEventState_t, ncclDebugLogLevel are C enums of int size on
 * every ABI NCCL supports, so a function taking or returning int is called the same way).
 *
 * Which NCCL accepts which plugin API (src/plugin/profiler.cc's lookup order, read at each tag):
 *   2.23: v1 only; 2.24-2.25: v2, v1; 2.26: v3-v1; 2.27: v4-v1; 2.28.3 and 2.28.9: v5, v4, v3, v2, v1.
 * Between v2.28.3-1 and v2.28.9-1 nothing under src/plugin/profiler*, src/include/plugin/profiler/ or
 * ext-profiler/ changed (git diff), so one v5 plugin serves both.
 *
 * Mirrors (NCCL v2.28.3-1 = v2.28.9-1):
 *   ddpbench_nccl_prof_event_bits       the event-type enum of NCCL src/include/plugin/nccl_profiler.h
 *                                       (= NCCL ext-profiler/example/nccl/profiler.h)
 *   ddpbench_nccl_prof_descr_v5         ncclProfilerEventDescr_v5_t, NCCL src/include/plugin/profiler/profiler_v5.h.
 *                                       NCCL is compiled with that header, whose groupApi.graphCaptured is a
 *                                       bool; ext-profiler/example/nccl/profiler_v5.h says int. Both sit at
 *                                       offset 0 of a struct whose next member is an int at 4, so the layout
 *                                       is the same; we follow NCCL's own (bool).
 *   ddpbench_nccl_prof_state_args_v5    ncclProfilerEventStateArgs_v5_t, same header
 *   ddpbench_nccl_profiler_v5           ncclProfiler_v5_t, same header
 * The static asserts below hold the offsets derived by hand from C's layout rules on LP64 (x86-64, aarch64):
 * a member moved, resized or forgotten here fails the build instead of reading the wrong field. */
#ifndef DDPBENCH_NCCL_PROF_ABI_H
#define DDPBENCH_NCCL_PROF_ABI_H

#include <assert.h> /* static_assert, in C11 as in C++ */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The event types, as bits of the activation mask NCCL hands to init. */
enum ddpbench_nccl_prof_event_bits {
  DDPBENCH_NCCL_PROFILE_GROUP = 1 << 0,          /* ncclProfileGroup */
  DDPBENCH_NCCL_PROFILE_COLL = 1 << 1,           /* ncclProfileColl: one collective, algo/proto chosen */
  DDPBENCH_NCCL_PROFILE_P2P = 1 << 2,            /* ncclProfileP2p */
  DDPBENCH_NCCL_PROFILE_PROXY_OP = 1 << 3,       /* ncclProfileProxyOp */
  DDPBENCH_NCCL_PROFILE_PROXY_STEP = 1 << 4,     /* ncclProfileProxyStep */
  DDPBENCH_NCCL_PROFILE_PROXY_CTRL = 1 << 5,     /* ncclProfileProxyCtrl */
  DDPBENCH_NCCL_PROFILE_KERNEL_CH = 1 << 6,      /* ncclProfileKernelCh */
  DDPBENCH_NCCL_PROFILE_NET_PLUGIN = 1 << 7,     /* ncclProfileNetPlugin */
  DDPBENCH_NCCL_PROFILE_GROUP_API = 1 << 8,      /* ncclProfileGroupApi (v5) */
  DDPBENCH_NCCL_PROFILE_COLL_API = 1 << 9,       /* ncclProfileCollApi (v5) */
  DDPBENCH_NCCL_PROFILE_P2P_API = 1 << 10,       /* ncclProfileP2pApi (v5) */
  DDPBENCH_NCCL_PROFILE_KERNEL_LAUNCH = 1 << 11, /* ncclProfileKernelLaunch (v5) */
};

typedef int ddpbench_nccl_result; /* ncclResult_t: 0 is ncclSuccess, 3 ncclInternalError */
/* ncclDebugLogger_t (level is ncclDebugLogLevel, an enum). */
typedef void (*ddpbench_nccl_logger)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);

/* ncclProfilerEventDescr_v5_t. The union is anonymous in NCCL too (C11). */
typedef struct {
  uint64_t type;   /* one of the bits above */
  void *parentObj; /* the parent event's handle, as this plugin returned it (NULL when it returned NULL) */
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char *func;
      size_t count;
      const char *datatype;
      int root;
      void *stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char *func;
      size_t count;
      const char *datatype;
      void *stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void *stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char *func;     /* ncclFuncToString: "AllReduce", "AllGather", "ReduceScatter", "Broadcast", ... */
      const void *sendBuff;
      void *recvBuff;
      size_t count;         /* the task's count (AllGather and Broadcast: bytes, datatype then "ncclInt8") */
      int root;
      const char *datatype; /* ncclDatatypeToString: "ncclFloat32", ... */
      uint8_t nChannels;    /* channels the collective was scheduled on */
      uint8_t nWarps;
      const char *algo;     /* ncclAlgoToString: "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS",
                               "NVLS_TREE", "PAT", "Unknown" */
      const char *proto;    /* ncclProtoToString: "LL", "LL128", "SIMPLE", "Unknown" */
      void *parentGroup;
    } coll;
    struct {
      const char *func;
      void *buff;
      const char *datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void *parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void *data;
    } netPlugin;
  };
} ddpbench_nccl_prof_descr_v5;

/* ncclProfilerEventStateArgs_v5_t: never read by this plugin; declared for the table's signature. */
typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void *data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
} ddpbench_nccl_prof_state_args_v5;

/* ncclProfiler_v5_t: what the plugin exports under the symbol "ncclProfiler_v5". */
typedef struct {
  const char *name;
  ddpbench_nccl_result (*init)(void **context, uint64_t commId, int *eActivationMask, const char *commName,
                               int nNodes, int nranks, int rank, ddpbench_nccl_logger logfn);
  ddpbench_nccl_result (*startEvent)(void *context, void **eHandle, ddpbench_nccl_prof_descr_v5 *eDescr);
  ddpbench_nccl_result (*stopEvent)(void *eHandle);
  ddpbench_nccl_result (*recordEventState)(void *eHandle, int eState, ddpbench_nccl_prof_state_args_v5 *eStateArgs);
  ddpbench_nccl_result (*finalize)(void *context);
} ddpbench_nccl_profiler_v5;

#if defined(__LP64__) || defined(_LP64)
#define DDPBENCH_NCCL_PROF_OFF_(m) offsetof(ddpbench_nccl_prof_descr_v5, m)
static_assert(DDPBENCH_NCCL_PROF_OFF_(type) == 0 && DDPBENCH_NCCL_PROF_OFF_(parentObj) == 8 &&
                   DDPBENCH_NCCL_PROF_OFF_(rank) == 16,
               "ncclProfilerEventDescr_v5_t header");
/* The union starts at 24 (8-aligned after rank); coll is its largest member (88 bytes). */
static_assert(DDPBENCH_NCCL_PROF_OFF_(groupApi.groupDepth) == 28, "v5 groupApi");
static_assert(DDPBENCH_NCCL_PROF_OFF_(collApi.root) == 48 && DDPBENCH_NCCL_PROF_OFF_(collApi.graphCaptured) == 64,
               "v5 collApi");
static_assert(DDPBENCH_NCCL_PROF_OFF_(coll.seqNumber) == 24 && DDPBENCH_NCCL_PROF_OFF_(coll.func) == 32 &&
                   DDPBENCH_NCCL_PROF_OFF_(coll.count) == 56 && DDPBENCH_NCCL_PROF_OFF_(coll.root) == 64 &&
                   DDPBENCH_NCCL_PROF_OFF_(coll.datatype) == 72 && DDPBENCH_NCCL_PROF_OFF_(coll.nChannels) == 80 &&
                   DDPBENCH_NCCL_PROF_OFF_(coll.nWarps) == 81 && DDPBENCH_NCCL_PROF_OFF_(coll.algo) == 88 &&
                   DDPBENCH_NCCL_PROF_OFF_(coll.proto) == 96 && DDPBENCH_NCCL_PROF_OFF_(coll.parentGroup) == 104,
               "v5 coll");
static_assert(DDPBENCH_NCCL_PROF_OFF_(p2p.peer) == 56 && DDPBENCH_NCCL_PROF_OFF_(p2p.nChannels) == 60 &&
                   DDPBENCH_NCCL_PROF_OFF_(p2p.parentGroup) == 64,
               "v5 p2p");
static_assert(DDPBENCH_NCCL_PROF_OFF_(proxyOp.channelId) == 28 && DDPBENCH_NCCL_PROF_OFF_(proxyOp.isSend) == 44,
               "v5 proxyOp");
static_assert(DDPBENCH_NCCL_PROF_OFF_(kernelCh.pTimer) == 32 && DDPBENCH_NCCL_PROF_OFF_(netPlugin.data) == 32,
               "v5 kernelCh/netPlugin");
static_assert(sizeof(ddpbench_nccl_prof_descr_v5) == 112, "ncclProfilerEventDescr_v5_t size");
static_assert(sizeof(ddpbench_nccl_prof_state_args_v5) == 8, "ncclProfilerEventStateArgs_v5_t size");
static_assert(sizeof(ddpbench_nccl_profiler_v5) == 48 && offsetof(ddpbench_nccl_profiler_v5, init) == 8 &&
                   offsetof(ddpbench_nccl_profiler_v5, finalize) == 40,
               "ncclProfiler_v5_t");
#undef DDPBENCH_NCCL_PROF_OFF_
#else
#error "nccl_prof_abi.h: the layout asserts are written for LP64, the only data model NCCL builds for"
#endif

#ifdef __cplusplus
}
#endif
#endif
