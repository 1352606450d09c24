/* model.c: small helpers on the topology model (topo.h) that both the hwloc reader (hw.c) and the printers
 * (print.c) use: the names of the PCIe classes, a GPU by bus id, and appending to a fixed buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "topo.h"

const char *topo_class_str(topo_class c) {
  static const char *names[] = {"X", "PIX", "PXB", "PHB", "NODE", "SYS", "?"};
  return (unsigned)c <= TOPO_UNKNOWN ? names[c] : "?";
}

int topo_gpu_find(const topo_node *node, const char *busid) {
  char want[20];
  if (nvml_busid_normalize(busid, want, sizeof want) != 0) return -1;
  for (int g = 0; g < node->ngpu; g++)
    if (!strcmp(node->gpu[g].busid, want)) return g;
  return -1;
}

void topo_appendf(char *buf, size_t n, const char *fmt, ...) {
  size_t used = strnlen(buf, n);
  if (used + 1 >= n) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, n - used, fmt, ap);
  va_end(ap);
}
