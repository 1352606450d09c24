/* watchdog.h: nothing hangs forever, and a signal leaves nothing behind.
 *
 * The watchdog is one thread per rank, started before MPI_Init, that ends the whole job (exit code 3,
 * DDP_EXIT_RUNTIME) when the main thread has made no progress for `timeout` seconds, naming the rank, the host
 * and where the rank was. It is the only timer: engine waits, MPI start-up, collectives and NCCL calls are all
 * covered by it. Before aborting it asks every rank, out of band, where it is, and names the ranks that do not
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
/* Collective, right after MPI starts: shares this host's status board and every rank's query address, so that
 * a timeout can ask every rank where it is (see watchdog.c) and name the ranks that do not answer. */
ddp_result watchdog_join(const ddp_dist *d);
/* Progress: resets the timer and, when what != NULL, records where this rank is ("phase ddp, step 3 of 8"). */
void watchdog_tick(const char *what);
/* Records where this rank is without resetting the timer (a wait on peers is not progress). */
void watchdog_where(const char *what);
/* SIGINT/SIGTERM: remove the temporary file being written, one line on stderr, _exit(128 + signal). */
void watchdog_signals_install(void);

#ifdef __cplusplus
}
#endif
#endif
