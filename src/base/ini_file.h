/* ini_file.h: the one way ddpbench reads an INI file (--config, --expect): inih underneath, handed whole lines
 * only, so that nothing in a file is ever read as something it is not. */
#ifndef DDPBENCH_INI_FILE_H
#define DDPBENCH_INI_FILE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Called for each `name = value` on its 1-based line (section "" outside any section). Returns 0 to go on;
 * anything else stops the parse at this line, with the reason written into err (no file or line: the caller
 * adds those). */
typedef int (*ini_file_handler)(void *user, const char *section, const char *name, const char *value, int line,
                                char *err, size_t errn);

/* Reads f to the end. Returns 0 when every line was taken; -1 when inih ran out of memory; else the 1-based
 * line of the first error, with the reason in err: a syntax error (inih's), a line longer than the parser's
 * buffer (inih would split it, so that the rest of a long comment became a setting), a NUL byte, an indented
 * line (inih would glue it to the previous value as a continuation), or what the handler said. The caller
 * checks ferror(f) itself. */
int ini_file_parse(FILE *f, ini_file_handler h, void *user, char *err, size_t errn);
/* The file at path, read through input_file.h (a regular file of at most max bytes), then ini_file_parse:
 * 0, a line with the reason in err, or -1 when the file cannot be read or parsed at all (the reason in err,
 * worded to follow the path: "cannot read: No such file or directory", "is a FIFO, not a regular file"). */
int ini_file_parse_path(const char *path, size_t max, ini_file_handler h, void *user, char *err, size_t errn);

#ifdef __cplusplus
}
#endif
#endif
