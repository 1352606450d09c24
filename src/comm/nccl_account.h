/* nccl_account.h: this process's NCCL log, set up and read back. Before the first NCCL call it asks NCCL to
 * log its set-up (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,GRAPH,TRANSPORT,NET) into a private file, unless the
 * user set those variables (then theirs stand, and their NCCL_DEBUG_FILE is read). The comm plug-in tells it
 * which communicator it is creating or first calling (a span of the file), so that lines NCCL writes without
 * naming their communicator are attributed (nccl_log.h). The private file is unlinked as soon as NCCL has
 * opened it and read through a descriptor kept here, so nothing is left behind even when the job aborts.
 * Nothing here talks to other ranks, prints, or fails a run: what cannot be read is "not reported" and why.
 *
 * defines: nccl_account_setup, nccl_account_active, nccl_account_offset, nccl_account_comm,
 *          nccl_account_span, nccl_account_read, nccl_account_choices, nccl_account_choices_why,
 *          nccl_account_source */
#ifndef DDPBENCH_NCCL_ACCOUNT_H
#define DDPBENCH_NCCL_ACCOUNT_H

#include <stddef.h>

#include "nccl_log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Once per process, before the first NCCL call that can log (ncclGetUniqueId, ncclCommInitRank): sets the
 * environment as above. Later calls do nothing. */
void nccl_account_setup(void);
/* 1 once this process registered a NCCL communicator. */
int nccl_account_active(void);
/* The log's current length in bytes (0 when there is none to read); a span's begin or end. */
size_t nccl_account_offset(void);
/* After a communicator's init (or split): its comm pointer, the caller's name for it ("world", "group 3"),
 * and the offset taken before the init: [begin, now) becomes its span. */
void nccl_account_comm(unsigned long long comm, const char *label, size_t begin);
/* Around a communicator's first call of a kind (NCCL connects lazily there): [begin, now) is its span. */
void nccl_account_span(unsigned long long comm, size_t begin);
/* Parses the log as it stands into *acc (labels set). 0; or -1 with one sentence in why saying why NCCL's
 * account is not reported (no NCCL communicator, the user's NCCL_DEBUG sends the log elsewhere, ...). */
int nccl_account_read(nccl_account *acc, char *why, size_t n);
/* NCCL's algorithm, protocol and channels per collective and size (the profiler plugin, nccl_prof.h): on
 * around untimed calls only (doctor's probe, the collectives' warm-up), off before anything is timed; off
 * keeps what was recorded for nccl_account_read. Does nothing when the plugin is not set up. */
void nccl_account_choices(int on);
/* Why the choices are not reported (NULL: they are, possibly none). */
const char *nccl_account_choices_why(void);
/* Where the log came from: "ddpbench" (its private file) or "user" (the user's NCCL_DEBUG_FILE). */
const char *nccl_account_source(void);

#ifdef __cplusplus
}
#endif
#endif
