/* atomic_file.c: temporary file, fsync, rename or link. Leaves no temporary file behind on failure. */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

ddp_result atomic_file_write(const char *path, const char *data, size_t n, int force) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
    return ddp_usage_error("%s: path too long", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return DDP_FAIL(DDP_ERR_SYSTEM, "cannot create %s: %s", tmp, strerror(errno));
  const char *p = data;
  size_t left = n;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int err = errno;
      close(fd);
      unlink(tmp);
      return DDP_FAIL(DDP_ERR_SYSTEM, "cannot write %s: %s", tmp, strerror(err));
    }
    p += w;
    left -= (size_t)w;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int err = errno;
    unlink(tmp);
    return DDP_FAIL(DDP_ERR_SYSTEM, "cannot write %s: %s", tmp, strerror(err));
  }
  if (force) {
    if (rename(tmp, path) != 0) {
      int err = errno;
      unlink(tmp);
      return DDP_FAIL(DDP_ERR_SYSTEM, "cannot rename %s to %s: %s", tmp, path, strerror(err));
    }
    return DDP_OK;
  }
  if (link(tmp, path) != 0) {
    int err = errno;
    unlink(tmp);
    if (err == EEXIST) return ddp_usage_error("--json %s: file exists (use --force to overwrite it)", path);
    return DDP_FAIL(DDP_ERR_SYSTEM, "cannot create %s: %s", path, strerror(err));
  }
  unlink(tmp);
  return DDP_OK;
}
