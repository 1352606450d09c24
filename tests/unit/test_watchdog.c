/* test_watchdog: what a rank says about where it waits (watchdog.h), without MPI:
 *  - the location alone, then "; waiting in X" while a blocking call X is entered, the newest call shown;
 *  - calls left out of order (two threads) leave the right one shown; a token of 0 (more blocking calls
 *    than slots) is harmless;
 *  - a host wait for the device names the last collective started ("the device to finish phase ddp (last
 *    collective started: ncclAllReduce(...))");
 *  - the subcommands' --timeout read before MPI starts: "--timeout S", "--timeout=S", the last one wins, and a
 *    bad value keeps the default (the subcommand's own parser reports it). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "watchdog.h"

static char text[512];
static const char *where(void) {
  watchdog_where_text(text, sizeof text);
  return text;
}

int main(void) {
  watchdog_where("phase ddp, step 3 of 8");
  CHECK(!strcmp(where(), "phase ddp, step 3 of 8"), "location alone: '%s'", text);

  unsigned a = watchdog_enter("MPI_Allreduce(1 x MPI_INT) on MPI_COMM_WORLD (4 ranks)");
  CHECK(a != 0, "a token");
  CHECK(!strcmp(where(), "phase ddp, step 3 of 8; waiting in MPI_Allreduce(1 x MPI_INT) on MPI_COMM_WORLD (4 ranks)"),
        "in a call: '%s'", text);
  unsigned b = watchdog_enter("MPI_Waitall for MPI_Iallreduce(4096 x MPI_FLOAT) on MPI_COMM_WORLD (4 ranks)");
  CHECK(strstr(where(), "; waiting in MPI_Waitall for MPI_Iallreduce") != NULL, "the newest call shown: '%s'", text);
  watchdog_leave(a); /* out of order: the other thread's call is still the one it waits in */
  CHECK(strstr(where(), "; waiting in MPI_Waitall for MPI_Iallreduce") != NULL, "left out of order: '%s'", text);
  watchdog_leave(b);
  CHECK(!strcmp(where(), "phase ddp, step 3 of 8"), "all left: '%s'", text);

  unsigned t[5];
  for (int i = 0; i < 5; i++) t[i] = watchdog_enter("call %d", i);
  CHECK(t[4] == 0 && t[3] != 0, "more blocking calls than slots: the extra one gets token 0 (%u, %u)", t[3], t[4]);
  CHECK(strstr(where(), "; waiting in call 3") != NULL, "the newest recorded call shown: '%s'", text);
  for (int i = 4; i >= 0; i--) watchdog_leave(t[i]);
  CHECK(!strcmp(where(), "phase ddp, step 3 of 8"), "token 0 left harmlessly: '%s'", text);

  watchdog_where("phase ddp: all 8 steps enqueued");
  unsigned d = watchdog_enter_device("phase ddp");
  CHECK(!strcmp(where(), "phase ddp: all 8 steps enqueued; waiting in the device to finish phase ddp"),
        "no collective started yet: '%s'", text);
  watchdog_leave(d);
  const wd_call nccl = {.call = "ncclAllReduce", .count = 6553600, .size = 8, .peer = -1, .type = "float",
                        .comm = "a NCCL communicator"};
  watchdog_started_call(&nccl);
  d = watchdog_enter_device("phase ddp");
  CHECK(!strcmp(where(), "phase ddp: all 8 steps enqueued; waiting in the device to finish phase ddp (last collective "
                         "started: ncclAllReduce(6553600 x float) on a NCCL communicator (8 ranks))"),
        "the device wait names the last collective: '%s'", text);
  watchdog_leave(d);

  return check_summary();
}
