/* input_file.c: see input_file.h. */
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

const char *input_file_kind(mode_t m) {
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISLNK(m)) return "a symbolic link";
  return "a special file";
}

static void human(double b, char *out, size_t n) {
  if (b >= (1 << 30))
    snprintf(out, n, "%.1f GiB", b / (1 << 30));
  else if (b >= (1 << 20))
    snprintf(out, n, "%.1f MiB", b / (1 << 20));
  else
    snprintf(out, n, "%.0f KiB", b / 1024);
}

char *input_file_read(const char *path, size_t max, size_t *len, char *why, size_t whyn) {
  *len = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, whyn, "cannot read: %s", strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    snprintf(why, whyn, "cannot read: %s", strerror(errno));
    close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(why, whyn, "is %s, not a regular file (ddpbench reads regular files only)", input_file_kind(st.st_mode));
    close(fd);
    return NULL;
  }
  if ((unsigned long long)st.st_size > max) {
    char size[32], lim[32];
    human((double)st.st_size, size, sizeof size);
    human((double)max, lim, sizeof lim);
    snprintf(why, whyn, "is %s, more than the %s ddpbench reads from such a file", size, lim);
    close(fd);
    return NULL;
  }
  /* Blocking reads from here on (a regular file never blocks for long); the size may change while it is read
   * (a file being written): read what is there, up to max. */
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  size_t cap = (size_t)st.st_size + 1, n = 0;
  char *buf = malloc(cap + 1);
  if (!buf) {
    snprintf(why, whyn, "cannot read: out of host memory");
    close(fd);
    return NULL;
  }
  for (;;) {
    if (n == cap) {
      if (cap > max) {
        char lim[32];
        human((double)max, lim, sizeof lim);
        snprintf(why, whyn, "grew past the %s ddpbench reads from such a file while it was read", lim);
        free(buf);
        close(fd);
        return NULL;
      }
      size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
      char *b = realloc(buf, ncap + 1);
      if (!b) {
        snprintf(why, whyn, "cannot read: out of host memory");
        free(buf);
        close(fd);
        return NULL;
      }
      buf = b, cap = ncap;
    }
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      snprintf(why, whyn, "cannot read: %s", strerror(errno));
      free(buf);
      close(fd);
      return NULL;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  close(fd);
  buf[n] = 0;
  *len = n;
  return buf;
}
