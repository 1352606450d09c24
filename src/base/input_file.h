/* input_file.h: the one way ddpbench reads a file a user names (--config, --expect, --baseline, the result
 * files of compare and export, compare's --noise, --hwloc-xml): the whole file into memory, NUL-terminated,
 * and only when it is a regular file of at most `max` bytes. It is opened without blocking, so that a FIFO
 * with no writer cannot hang a rank before the job starts, and checked with fstat before any byte is read, so
 * that a device such as /dev/zero is not read until memory runs out. Symbolic links are followed: reading
 * through one harms nothing (writing is another matter: atomic_file.h). */
#ifndef DDPBENCH_INPUT_FILE_H
#define DDPBENCH_INPUT_FILE_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits by kind of file (a config or expectations file is a few KiB; a result file of a large job with every
 * step time of every rank can be hundreds of MiB). */
enum { INPUT_MAX_INI = 1 << 20, INPUT_MAX_XML = 256 << 20, INPUT_MAX_RESULT = 1 << 30 };

/* The file, malloc'd and NUL-terminated, its length in *len (it may hold NUL bytes). NULL when it cannot be
 * read, with the reason in why, worded to follow the path: "cannot read: No such file or directory", "is a
 * FIFO, not a regular file (ddpbench reads regular files only)", "is 2.0 GiB, more than the 1.0 GiB ddpbench
 * reads from such a file". */
char *input_file_read(const char *path, size_t max, size_t *len, char *why, size_t whyn);
/* "a character device", "a FIFO", "a directory", ... ("a special file" for anything else): for messages about
 * a path that is not a regular file (the writer's too). */
const char *input_file_kind(mode_t mode);

#ifdef __cplusplus
}
#endif
#endif
