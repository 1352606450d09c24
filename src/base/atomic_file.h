/* atomic_file.h: the one way ddpbench writes a file (result JSON, hwloc XML, doctor's JSON, and every output
 * to come). Readers see either nothing or the whole document: a temporary file in the same folder, fsync,
 * then rename (with force) or link (without: an existing file is never overwritten, even one that appeared
 * while the run was going).
 *
 * What may be replaced: only a regular file, and only with force. Anything else at the path - a device
 * node (/dev/null), a FIFO, a socket, a directory - is refused with DDP_ERR_USAGE naming what it is.
 * A symbolic link is refused too, with or without force: replacing it would silently drop the link, and
 * writing through it would let whoever planted it (in /tmp, say) aim a root-run benchmark at any file.
 * Give the path of the real file instead. Links in the folders above the file are followed as usual.
 *
 * The path "-" is standard output (a pipe to jq, promtool or pandas): written whole, never a file named "-".
 * atomic_file_stdout_take keeps the process's standard output for it and sends what the program prints to
 * stdout on to standard error from then on, so that the report and the document do not mix.
 *
 * atomic_file_check is the pre-flight: it runs the same rules, and creates and removes a probe temporary
 * file, so that an output that cannot be written is found before any work starts. */
#ifndef DDPBENCH_ATOMIC_FILE_H
#define DDPBENCH_ATOMIC_FILE_H

#include <stddef.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DDP_ERR_USAGE (one line naming the file) when it exists and !force, or is not a regular file;
 * DDP_ERR_SYSTEM when its folder cannot take a new file (atomic_file_check finds that before the work) or on
 * I/O errors while writing. */
ddp_result atomic_file_write(const char *path, const char *data, size_t n, int force);
/* The errno of the last atomic_file_write that failed on the file system (ENOSPC, EROFS, ...), 0 when the last
 * one did not fail there. */
int atomic_file_errno(void);
/* The pre-flight check of atomic_file_write's rules; writes nothing that stays. DDP_ERR_USAGE with the
 * message in err (nothing printed) when `path` cannot be written. */
ddp_result atomic_file_check(const char *path, int force, char *err, size_t errn);
#define ATOMIC_FILE_STDOUT "-"
/* 1 when path is "-" (standard output). */
int atomic_file_is_stdout(const char *path);
/* Keeps standard output for "-" and points file descriptor 1 (stdout) at standard error. Once per process. */
ddp_result atomic_file_stdout_take(void);
/* Async-signal-safe: removes the temporary file being written right now, if any (signal handlers call it). */
void atomic_file_abandon(void);

#ifdef __cplusplus
}
#endif
#endif
