/* progress.h: the progress lines on stderr (--progress auto|tty|log|none, docs/progress.md), one writer per
 * process, fed by whatever runs: the engine's step callback, the sweep's groups, accept's stages, the
 * collectives' rows. A job is a sequence of phases (a name, and a number of steps when it has them),
 * optionally inside groups ("group 3/7 np=4").
 *   tty:  one line rewritten in place ("\r", the line, then clear to its end), at most every 0.2 s; a newline
 *         when progress_end is called (and before anything else is printed: progress_clear);
 *   log:  one line when each group or phase starts and ends, and at most one line every 10 s in between, with
 *         the step and an ETA from the elapsed time;
 *   none: nothing. Also what every call does before progress_start, and on every rank but 0 (the caller
 *         passes PROGRESS_NONE there).
 * A step costs a clock read and a compare; a line is formatted only when one is due. Never exits, never calls
 * MPI, never syncs anything.
 *
 * defines: progress_mode, PROGRESS_CHOICES, progress_table, progress_{auto,mode_name,start,end,clear,group,group_end,phase,
 *          phase_end,step} */
#ifndef DDPBENCH_PROGRESS_H
#define DDPBENCH_PROGRESS_H

#include <stdio.h>

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { PROGRESS_AUTO = 0, PROGRESS_TTY, PROGRESS_LOG, PROGRESS_NONE } progress_mode;
#define PROGRESS_CHOICES "auto|tty|log|none" /* the option's choices, in progress_mode's order */
#define PROGRESS_LOG_INTERVAL_S 10.0        /* log: the least time between two lines inside a phase */
#define PROGRESS_TTY_INTERVAL_S 0.2         /* tty: the least time between two rewrites */

/* The --progress key over an int (progress_mode), for the subcommands whose tables have no field of their own
 * for it (accept, collectives): opt_set_add(s, &progress_table, &field). Not hashed: ranks need not agree. */
extern const opt_table progress_table;

/* What auto means for this process (its stderr, fd 2), and why in a few words (static text) when why != NULL:
 *   - launched by mpirun, mpiexec, srun or another PMI launcher (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK,
 *     PMI_SIZE or SLURM_PROCID set): a rank's own stderr says nothing of where the launcher writes it (a pty
 *     or a pipe to mpirun, whatever mpirun's output is), so tty only when the launcher is an ancestor process
 *     on this host whose own stderr is a terminal (/proc/PID/fd/2 -> /dev/pts/N or /dev/ttyN), else log;
 *   - otherwise tty when stderr is a terminal and TERM is not "dumb", else log. */
progress_mode progress_auto(const char **why);
const char *progress_mode_name(progress_mode m);

/* Starts the lines of one subcommand ("run", "accept", "collectives") in mode (PROGRESS_AUTO: progress_auto's
 * choice) on out (NULL: stderr). A second start ends the first. */
void progress_start(progress_mode mode, FILE *out, const char *command);
/* Ends the open phase and group; tty: the final newline. Idempotent. */
void progress_end(void);
/* tty: clears the line (and forgets it) so that other output can follow; the next step draws it again. */
void progress_clear(void);

/* Group index (0-based) of count begins, described by label ("np=4", "pair:0-1"); ends the open one. */
void progress_group(int index, int count, const char *label);
void progress_group_end(void);
/* A phase begins (nsteps 0: it has no steps to count), each step a unit ("step" when NULL; "row", "round");
 * ends the open one. */
void progress_phase(const char *name, int nsteps, const char *unit);
void progress_phase_end(void);
/* done steps of the open phase are finished (or enqueued): a clock read and a compare unless a line is due. */
void progress_step(int done);

#ifdef __cplusplus
}
#endif
#endif
