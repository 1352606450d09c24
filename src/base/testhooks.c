/* testhooks.c: the table of test hooks (testhooks.h). */
#include "testhooks.h"

#include <stdlib.h>

static const struct {
  const char *name, *help;
} HOOKS[HOOK_COUNT] = {
    [HOOK_RANKS_PER_NODE] = {"DDPBENCH_TEST_RANKS_PER_NODE", "K: every K consecutive ranks are one node, named nodeNN"},
    [HOOK_FAULT] = {"DDPBENCH_TEST_FAULT", "ACTION:RANK:WHERE: stall, stop or kill RANK when it reaches WHERE (a phase, accept, soak; exit: after MPI_Finalize)"},
    [HOOK_STALL_RANK] = {"DDPBENCH_TEST_STALL_RANK", "R: stall rank R in the ddp phase's second step"},
    [HOOK_CORRUPT_RANK] = {"DDPBENCH_TEST_CORRUPT_RANK", "R: report rank R's final weights with one bit flipped"},
    [HOOK_CORRUPT_COLLECTIVE] = {"DDPBENCH_TEST_CORRUPT_COLLECTIVE",
                                 "RANK[:ELEMENT]: one received element goes wrong before each data check"},
    [HOOK_STALL_COLLECTIVE] = {"DDPBENCH_TEST_STALL_COLLECTIVE", "RANK: stop before its first timed call"},
    [HOOK_WATCHDOG_TCP] = {"DDPBENCH_TEST_WATCHDOG_TCP", "1: ask this host's ranks over TCP too"},
    [HOOK_WRITE_DELAY] = {"DDPBENCH_TEST_WRITE_DELAY", "SECONDS[:N]: sleep before a written file is renamed into place (N: only each file's N-th write)"},
    [HOOK_WRITE_FAIL] = {"DDPBENCH_TEST_WRITE_FAIL",
                         "FROM[:TO]: each file's FROM-th to TO-th write (1-based; no TO: to the last) fails with ENOSPC"},
    [HOOK_PEAK_FIRST] = {"DDPBENCH_TEST_PEAK_FIRST", "1: measure the GEMM peak before the phases (the order test)"},
    [HOOK_PROGRESS_INTERVAL] = {"DDPBENCH_TEST_PROGRESS_INTERVAL",
                                "SECONDS: --progress log's interval between a phase's lines, instead of 10 s"},
    [HOOK_PAIR_PASS_DELAY] = {"DDPBENCH_TEST_PAIR_PASS_DELAY",
                              "K:SECONDS: accept's node-pair pass K (1-based; confirmation passes follow) starts SECONDS late"},
    [HOOK_NCCL_FINDING] = {"DDPBENCH_TEST_NCCL_FINDING",
                           "1: rank 0 adds a failing nccl_test finding where NCCL's account is judged (after the work)"},
};

const char *testhook_value(testhook h) {
  if ((unsigned)h >= HOOK_COUNT) return NULL;
  const char *v = getenv(HOOKS[h].name);
  return v && *v ? v : NULL;
}

int testhook_int(testhook h, int def) {
  const char *v = testhook_value(h);
  return v ? atoi(v) : def;
}

