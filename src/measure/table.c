/* table.c: the table of measurements: the built-in ones in the order --help lists them, then those registered
 * at run time (tests). Adding one: its file, and one line below. */
#include "measure.h"

#include <stdio.h>
#include <string.h>

#include "allreduce.h"
#include "gpu_checks.h"
#include "scaling.h"
#include "train.h"

static const measurement *const builtin[] = {&measure_local,    &measure_comm, &measure_ddp, &measure_fsdp,  &measure_scaling,
                                             &measure_allreduce, &measure_gpu,  &measure_gemm, &measure_host_copy,
                                             &measure_p2p};
enum { NBUILTIN = sizeof builtin / sizeof builtin[0], MAX_EXTRA = 16 };
static const measurement *extra[MAX_EXTRA];
static int nextra;

const measurement *measure_at(int i) {
  if (i >= 0 && i < NBUILTIN) return builtin[i];
  if (i >= NBUILTIN && i < NBUILTIN + nextra) return extra[i - NBUILTIN];
  return NULL;
}

const measurement *measure_find(const char *name) {
  const measurement *m;
  for (int i = 0; (m = measure_at(i)) != NULL; i++)
    if (strcmp(m->name, name) == 0) return m;
  return NULL;
}

void measure_names(char *buf, size_t n) {
  size_t o = 0;
  if (n) buf[0] = 0;
  for (int i = 0; measure_at(i) && o < n; i++) {
    int w = snprintf(buf + o, n - o, "%s%s", i ? ", " : "", measure_at(i)->name);
    if (w < 0) break;
    o += (size_t)w;
  }
}

ddp_result measure_register(const measurement *m) {
  if (!m || !m->name || !m->run) return ddp_usage_error("measure_register: a measurement needs a name and run()");
  if (measure_find(m->name)) return ddp_usage_error("measurement '%s' is registered twice", m->name);
  if (nextra == MAX_EXTRA) return ddp_usage_error("more than %d measurements registered", MAX_EXTRA);
  extra[nextra++] = m;
  return DDP_OK;
}
