/* testhooks.h: every DDPBENCH_TEST_* variable in one table, each with what it does. They exist for the tests
 * alone (fault injection, emulated nodes on one machine); nothing else in ddpbench reads the environment for
 * them, so that grepping this table finds every hook. None is set in production: each is a no-op when unset.
 *
 * defines: testhook, testhook_{value,int} */
#ifndef DDPBENCH_TESTHOOKS_H
#define DDPBENCH_TESTHOOKS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  HOOK_RANKS_PER_NODE,     /* K: every K consecutive ranks are one node, named nodeNN (dist.h) */
  HOOK_FAULT,              /* ACTION:RANK:WHERE: stall, stop or kill RANK when it reaches WHERE (watchdog.h; "soak":
                            * the start of accept --soak's third interval) */
  HOOK_STALL_RANK,         /* R: stall rank R in the ddp phase's second step */
  HOOK_CORRUPT_RANK,       /* R: report rank R's weights with one bit flipped (accept --soak: R[:I], from interval I) */
  HOOK_CORRUPT_COLLECTIVE, /* RANK[:ELEMENT]: one received element goes wrong before each data check */
  HOOK_STALL_COLLECTIVE,   /* RANK: stop before its first timed call */
  HOOK_WATCHDOG_TCP,       /* 1: ask this host's ranks over TCP too, as other hosts' ranks are asked */
  HOOK_WRITE_DELAY,        /* SECONDS[:N]: sleep before renaming a written file into place (N: only each file's
                            * N-th write) (atomic_file.h) */
  HOOK_PEAK_FIRST,         /* 1: measure a run's GEMM peak before its phases, not after (the order test) */
  HOOK_WRITE_FAIL,         /* FROM[:TO]: every file's FROM-th to TO-th write fails with ENOSPC (atomic_file.c) */
  HOOK_PROGRESS_INTERVAL,  /* SECONDS: --progress log's interval inside a phase, instead of 10 s (progress.h) */
  HOOK_PAIR_PASS_DELAY,    /* K:SECONDS: accept's node-pair pass K (1-based, the confirmation's passes after the
                            * schedule's) starts SECONDS late on every rank (a pass slowed as a flapping link slows it) */
  HOOK_NCCL_FINDING,       /* 1: rank 0 adds a failing finding as NCCL's account checks would (nccl_section.c) */
  HOOK_COUNT
} testhook;

/* The value, NULL when unset or empty. */
const char *testhook_value(testhook h);
/* The value as an integer (atoi), def when unset. */
int testhook_int(testhook h, int def);

#ifdef __cplusplus
}
#endif
#endif
