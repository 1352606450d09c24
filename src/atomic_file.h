/* atomic_file.h: write a result file so that readers see either nothing or the whole document: a
 * temporary file in the same folder, fsync, then rename (with force) or link (without: an existing file is
 * never overwritten, even one that appeared while the run was going). */
#ifndef DDPBENCH_ATOMIC_FILE_H
#define DDPBENCH_ATOMIC_FILE_H

#include <stddef.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DDP_ERR_USAGE (one line naming the file) when it exists and !force; DDP_ERR_SYSTEM on I/O errors. */
ddp_result atomic_file_write(const char *path, const char *data, size_t n, int force);

#ifdef __cplusplus
}
#endif
#endif
