/* nccl_prof.h: what NCCL chose for each collective (algorithm, protocol, channels), told by NCCL itself through
 * ddpbench's profiler plugin, libddpbench-nccl-profiler.so (kernels/nccl_prof_plugin.c), never by a log line
 * written inside a timed call. Two halves share this header:
 *
 *  - the plugin's control API, exported by the .so (C, default visibility): ddpbench_prof_loaded,
 *    ddpbench_prof_enable, ddpbench_prof_take, ddpbench_prof_dropped, and the record they fill;
 *  - ddpbench's side (src/comm/nccl_prof.c; in a build without CUDA, stubs in nonccl.c that say "not
 *    reported"): point NCCL_PROFILER_PLUGIN at the .so before the first NCCL call, then switch collective
 *    events on around untimed probe calls and off for timed loops, and take what was recorded.
 *
 * How it stays out of the timed path: NCCL hands the plugin's init a pointer to its activation mask and reads
 * that mask atomically at every collective call (NCCL src/plugin/profiler.cc, ncclProfilerStartGroupApiEvent); the
 * task keeps the value read (NCCL enqueue.cc, collTaskAppend). ddpbench_prof_enable(0) writes 0 there, and NCCL then
 * calls no plugin function for the collectives that follow: a timed loop pays one relaxed load per call.
 *
 * CUDA graphs: a captured collective keeps the mask of its capture, and NCCL reports it when the graph's host
 * work runs (at every replay when its plan has proxy operations). Capture timed graphs with profiling off.
 *
 * What it cannot see: a collective on a 1-rank communicator (NCCL copies the buffer, ncclLaunchOneRank, and makes
 * no task and no profiler event), copy-engine collectives on symmetric windows (no event either), and NCCL
 * before 2.28 (which does not load plugin API v5: ddpbench_prof_loaded() stays 0). None of these is an error:
 * the result says "not reported" and why.
 *
 * defines: ddpbench_prof_record, DDPBENCH_PROF_MAX_RECORDS, DDPBENCH_PROF_LIBRARY, ddpbench_prof_loaded,
 *          ddpbench_prof_enable, ddpbench_prof_take, ddpbench_prof_dropped, nccl_prof_setup_env, nccl_prof_enable,
 *          nccl_prof_take */
#ifndef DDPBENCH_NCCL_PROF_H
#define DDPBENCH_NCCL_PROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DDPBENCH_PROF_LIBRARY "libddpbench-nccl-profiler.so" /* next to the ddpbench binary */
#define DDPBENCH_PROF_MAX_RECORDS 256                        /* distinct records the plugin holds */

/* One (communicator, rank, collective, count, datatype, algorithm, protocol, channels) and how many calls had
 * it. Strings are NCCL's own words, truncated to fit, "" when NCCL gave NULL. */
typedef struct {
  uint64_t comm_hash;  /* NCCL's commHash, given to init: the same on every rank of one communicator */
  int rank, nranks;    /* this rank in it, its size (-1: init not seen for this event's context) */
  char coll[24];       /* "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce" */
  char datatype[20];   /* "ncclFloat32", ...; AllGather and Broadcast always "ncclInt8" (NCCL counts bytes) */
  char algo[16];       /* "RING", "TREE", "NVLS", "NVLS_TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "PAT" */
  char proto[16];      /* "LL", "LL128", "SIMPLE" */
  uint64_t count;      /* elements of NCCL's task: the call's count (AllGather: sendcount, ReduceScatter:
                          recvcount; for AllGather and Broadcast in bytes) */
  uint64_t bytes;      /* count x the datatype's size, per rank (nccl-tests' size is this x nranks for
                          AllGather and ReduceScatter); 0 when the datatype is not one NCCL 2.28 names */
  int channels;        /* the collective's nChannels */
  int calls;           /* collectives that had exactly this record */
} ddpbench_prof_record;

/* ---- the plugin's control API (libddpbench-nccl-profiler.so) ----
 * Thread-safe. Reached by ddpbench through dlopen of the very library NCCL loaded (RTLD_NOLOAD), never linked. */

/* 1 once NCCL has called the plugin's init (some communicator was created with it), else 0. */
int ddpbench_prof_loaded(void);
/* on: NCCL reports collective events to the plugin from the next call on; 0: it reports none (it calls no
 * plugin function for them). Writes NCCL's activation mask, and remembers the choice for communicators created
 * later. Events NCCL already decided to report (a call made while on, launched after) are still recorded. */
void ddpbench_prof_enable(int on);
/* Copies up to max records (oldest first) into out, returns how many, and empties the table: records past max
 * are lost (pass DDPBENCH_PROF_MAX_RECORDS). out may be NULL with max 0, to clear. */
int ddpbench_prof_take(ddpbench_prof_record *out, int max);
/* Collective events not recorded since the last take because the table was full. */
long ddpbench_prof_dropped(void);

/* ---- ddpbench's side ----
 * Call from one thread (the rank's main thread). No function here fails a run: each says "not reported" with
 * the reason. */

/* Before the first NCCL call of the process. When NCCL_PROFILER_PLUGIN is unset, sets it to the absolute path
 * of DDPBENCH_PROF_LIBRARY in exe_dir (NULL: the directory of /proc/self/exe) if that file exists, and returns
 * 1. Returns 0 with the reason in why otherwise: the file is not there (left unset), or the user set
 * NCCL_PROFILER_PLUGIN (theirs is left; records are then "not reported: the user's NCCL_PROFILER_PLUGIN=... is
 * loaded"), or this build has no NCCL. A value that already names our library counts as ours. */
int nccl_prof_setup_env(const char *exe_dir, char *why, size_t n);
/* ddpbench_prof_enable through the library NCCL loaded. 0, or -1 with the reason (not set up, not loaded by
 * NCCL yet, a symbol missing). */
int nccl_prof_enable(int on, char *why, size_t n);
/* ddpbench_prof_take through the library NCCL loaded: the number of records (0 is a real answer: none
 * happened), or -1 with "not reported: <reason>" in why. *dropped (may be NULL) gets ddpbench_prof_dropped. */
int nccl_prof_take(ddpbench_prof_record *out, int max, long *dropped, char *why, size_t n);

#ifdef __cplusplus
}
#endif
#endif
