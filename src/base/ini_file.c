/* ini_file.c: see ini_file.h. inih (Debian's build) reads lines into a 200-byte buffer and splits longer ones,
 * and reads an indented line after a key as a continuation of its value. Our line reader hands inih whole
 * lines only and counts them itself; a line it cannot hand over whole stops the parse with an error on that
 * line. */
#include "ini_file.h"

#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "input_file.h"

typedef struct {
  FILE *f;
  ini_file_handler h;
  void *user;
  int line;        /* lines handed to inih so far: the line inih is working on */
  int failed_line; /* the first line the reader or the handler refused (0: none) */
  char *err;
  size_t errn;
  char *buf;
  size_t cap;
} ini_ctx;

static char *read_line(char *str, int num, void *stream) {
  ini_ctx *c = stream;
  if (c->failed_line) return NULL;
  ssize_t n = getline(&c->buf, &c->cap, c->f);
  if (n < 0) return NULL;
  c->line++;
  size_t lead = strspn(c->buf, " \t\v\f\r"); /* all that inih's lskip (isspace) skips before a continuation */
  if ((size_t)n > (size_t)num - 1) {
    snprintf(c->err, c->errn, "line longer than %d characters (ddpbench refuses it rather than split it)", num - 2);
  } else if (memchr(c->buf, 0, (size_t)n)) {
    snprintf(c->err, c->errn, "NUL byte in the line");
  } else if (lead > 0 && c->buf[lead] && !strchr("\r\n;#", c->buf[lead])) {
    snprintf(c->err, c->errn, "indented line (continuation lines are not supported: start every "
                              "'key = value' at the beginning of its line)");
  } else {
    memcpy(str, c->buf, (size_t)n + 1);
    return str;
  }
  c->failed_line = c->line;
  return NULL;
}

static int on_key(void *user, const char *section, const char *name, const char *value) {
  ini_ctx *c = user;
  if (c->failed_line) return 1;
  if (c->h(c->user, section ? section : "", name, value, c->line, c->err, c->errn) != 0) c->failed_line = c->line;
  return 1; /* keep inih going: failed_line stops the reader */
}

int ini_file_parse(FILE *f, ini_file_handler h, void *user, char *err, size_t errn) {
  ini_ctx c = {.f = f, .h = h, .user = user, .err = err, .errn = errn};
  if (errn) err[0] = 0;
  int line = ini_parse_stream(read_line, &c, on_key, &c);
  free(c.buf);
  if (line < 0) return -1;
  /* The earliest error wins: inih's syntax errors (its line) or ours. */
  if (line > 0 && (!c.failed_line || line < c.failed_line)) {
    snprintf(err, errn, "syntax error (expected 'key = value' or '[section]')");
    return line;
  }
  return c.failed_line;
}

int ini_file_parse_path(const char *path, size_t max, ini_file_handler h, void *user, char *err, size_t errn) {
  size_t len = 0;
  char *text = input_file_read(path, max, &len, err, errn);
  if (!text) return -1;
  if (len == 0) { /* no keys (fmemopen takes no empty buffer) */
    free(text);
    return 0;
  }
  FILE *f = fmemopen(text, len, "r");
  if (!f) {
    snprintf(err, errn, "cannot read: %s", strerror(errno));
    free(text);
    return -1;
  }
  int line = ini_file_parse(f, h, user, err, errn);
  fclose(f);
  free(text);
  if (line < 0) snprintf(err, errn, "cannot parse (out of memory)");
  return line;
}
