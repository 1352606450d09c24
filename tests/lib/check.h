/* check.h: the test helper every ddpbench test program uses: CHECK(cond, fmt, ...) counts and reports a
 * failed condition with file and line; check_summary() prints the closing "N passed, N failed" line and
 * returns the exit status. MPI tests sum the counts over ranks first (check_summary_world, engine_run.h). */
#ifndef DDPBENCH_TESTS_CHECK_H
#define DDPBENCH_TESTS_CHECK_H

#include <stdio.h>

static int check_passed_, check_failed_;

#define CHECK(cond, ...)                                                      \
  do {                                                                        \
    if (cond) {                                                               \
      check_passed_++;                                                        \
    } else {                                                                  \
      check_failed_++;                                                        \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
      fprintf(stderr, __VA_ARGS__);                                           \
      fputc('\n', stderr);                                                    \
    }                                                                         \
  } while (0)

/* Exit code a test returns when its hardware is absent; CTest reports it as skipped. */
#define CHECK_SKIP 77

static inline int check_summary(void) {
  printf("%d passed, %d failed\n", check_passed_, check_failed_);
  return check_failed_ ? 1 : 0;
}

#endif
