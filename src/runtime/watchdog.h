/* watchdog.h: nothing hangs forever, and a signal leaves nothing behind.
 *
 * The watchdog is one thread per rank, started before MPI_Init, that ends the whole job (exit code 3,
 * DDP_EXIT_RUNTIME) when the main thread has made no progress for `timeout` seconds and no other rank has
 * either (a rank that waits for others, outside a measurement's group or for a slower group, is not stuck
 * while they progress), naming the rank, the host and where the rank was. It is the job's timer: engine waits, MPI start-up, collectives and NCCL calls are
 * all covered by it (the collectives measurement's -T bounds its own waits besides, measure/collectives.c). Before aborting it asks every rank, out of band, where it is, and names the ranks that do not
 * answer as suspects with host, pid and last known location. SIGINT and SIGTERM end the rank with 130 and 143 (128 + the signal, the shell's convention)
 * after removing the temporary file being written (atomic_file_abandon). */
#ifndef DDPBENCH_WATCHDOG_H
#define DDPBENCH_WATCHDOG_H

#include "dist.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { DDP_EXIT_SIGINT = 130, DDP_EXIT_SIGTERM = 143 };

/* Arms the watchdog (timeout > 0; 0 = never) with "what" as the first location, and installs the SIGINT and
 * SIGTERM handlers. Call before MPI_Init; call watchdog_signals_install again after it (MPI may install its
 * own handlers). */
void watchdog_start(double timeout, const char *what);
/* Changes the timeout once the subcommand has read its options (0 = never); starts the thread if need be. */
void watchdog_set_timeout(double timeout);
/* Collective, right after MPI starts: shares this host's status board and every rank's query address, so that
 * a timeout can ask every rank where it is (see watchdog.c) and name the ranks that do not answer. */
ddp_result watchdog_join(const ddp_dist *d);
/* The shutdown after the work (MPI_Finalize): the location says so, and whether the results were written
 * (printed, and every output file in place), so that a timeout there names the launcher, which MPI_Finalize
 * waits for, instead of no one. Not progress. The job's exit code is decided by then:
 * a SIGINT or SIGTERM from here on ends this rank with that code, silently (the launcher signals the ranks
 * still finalizing or exiting once a first one has left with a non-zero code; that must not turn a decided
 * exit 2 into 143). */
void watchdog_shutdown(int written, int code);
/* Progress: resets the timer and, when what != NULL, records where this rank is ("phase ddp, step 3 of 8"). */
void watchdog_tick(const char *what);
/* Records where this rank is without resetting the timer (a wait on peers is not progress); NULL: no change. */
void watchdog_where(const char *what);
/* A section where this rank works alone and its peers wait for it (rank 0 summarising and writing the outputs):
 * it counts as progress, ticked by the watchdog thread, for up to max(--timeout, 600 s), so that a large report
 * is not taken for a stall while a write that hangs for ever still ends the job.
 * watchdog_busy_end closes it (and ticks). */
void watchdog_busy(const char *what);
void watchdog_busy_end(void);
/* A wait of this rank's own ran out (collectives' -T): the watchdog thread asks every rank where it is, prints
 * the report after `why` (one line, no newline), names the suspects and aborts the job, as a timeout does
 * (a stopped rank was never named there). Returns only when the watchdog is not joined, or
 * after 20 s without the abort; the caller then fails as before. */
void watchdog_report_abort(const char *why);
/* Blocking calls, so that a rank waiting for a stopped peer says in which collective: watchdog_enter (printf
 * format: "MPI_Allreduce(1 x MPI_INT, MPI_MIN) on world (4 ranks)") before the call and watchdog_leave(its
 * token) after it; the location then reads "phase ddp, step 3 of 8; waiting in ...". Any thread may call them.
 * The MPI wrappers in mpi_where.c do this for every blocking MPI call. */
unsigned watchdog_enter(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void watchdog_leave(unsigned token);
/* A call kept raw, for the calls made inside timed loops (every MPI call through mpi_where.c, every NCCL
 * collective): recording one is a copy, and its text ("MPI_Iallreduce(4096 x MPI_FLOAT) on MPI_COMM_WORLD
 * (3 ranks)") is made only when someone asks where the rank is. Formatting each call as it was made added
 * 0.3-0.5 us to a 1 us MPI allreduce. count < 0: no count and type; comm "": no communicator; peer >= 0: "to
 * rank PEER" (peer_from: "from rank PEER") after the count: "MPI_Recv(3 x MPI_INT) from rank 1 on ...". */
typedef struct {
  const char *call; /* a static string */
  long count;
  int size, peer, peer_from;
  char type[64], comm[64];
} wd_call;
void wd_call_text(const wd_call *c, char *out, size_t n);
/* watchdog_enter for a call; with wait (a static string such as "MPI_Wait"), a wait for the non-blocking
 * collective c and `more` requests besides. */
unsigned watchdog_enter_call(const char *wait, int more, const wd_call *c);
/* The last collective started without blocking (NCCL's, MPI's non-blocking ones); a later wait names it.
 * watchdog_started_text: its text, "" before the first. */
void watchdog_started_call(const wd_call *c);
void watchdog_started_text(char *out, size_t n);
/* Where this rank is now, as the query and the timeout message say it (location, then the newest blocking call). */
void watchdog_where_text(char *out, size_t n);
/* A host wait for the device, which may itself wait in a collective: watchdog_enter("the device to finish
 * WHAT (last collective started: ...)"). */
unsigned watchdog_enter_device(const char *what);
/* Test hook for the fault tests: DDPBENCH_TEST_FAULT=ACTION:RANK:WHERE makes rank RANK, when it reaches WHERE
 * (a phase name, "accept", "soak"; "exit": after MPI_Finalize, before the process exits), stall (loop forever, as a hung GPU or a dead link would), stop (SIGSTOP) or kill
 * itself (SIGKILL); watchdog_test_fault_act does it unconditionally. */
void watchdog_test_fault(int rank, const char *where);
void watchdog_test_fault_act(const char *action, int rank, const char *where);
/* The end of a job the watchdog aborts, on rank 0 (a soak writes its outputs once more: how it ended and whom the
 * watchdog named). Every rank calls watchdog_on_end (fn NULL off rank 0): rank 0's watchdog thread then calls
 * fn(arg, suspects, n) after its report and before the abort, and the other ranks, whose timer may run out first,
 * leave rank 0 the abort for 10 s once while it answers. fn runs on the watchdog thread while the main thread is
 * stuck: it must take its own lock, with a time limit. watchdog_on_end_clear ends it (every rank). */
typedef struct {
  int rank;
  char host[64];
  char where[400];
} watchdog_suspect;
typedef void (*watchdog_end_fn)(void *arg, const watchdog_suspect *s, int n);
void watchdog_on_end(watchdog_end_fn fn, void *arg);
void watchdog_on_end_clear(void);
/* A line the SIGINT/SIGTERM handler writes after its own (rank 0's soak: which output files hold which
 * interval); NULL or "" for none. Copied; the handler reads the last complete copy. */
void watchdog_signal_note(const char *line);
/* SIGINT/SIGTERM: remove the temporary file being written, one line on stderr, _exit(128 + signal). */
void watchdog_signals_install(void);

#ifdef __cplusplus
}
#endif
#endif
