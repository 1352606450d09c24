/* findings_of.h: how many findings of a list have one check name and severity (the unit tests of the
 * verdicts count them). */
#ifndef DDPBENCH_TESTS_FINDINGS_OF_H
#define DDPBENCH_TESTS_FINDINGS_OF_H

#include <string.h>

#include "findings.h"

static inline int findings_of(const finding_list *fl, const char *check, finding_severity sev) {
  int n = 0;
  for (int i = 0; i < fl->n; i++) n += !strcmp(fl->v[i].check, check) && fl->v[i].severity == sev;
  return n;
}

#endif
