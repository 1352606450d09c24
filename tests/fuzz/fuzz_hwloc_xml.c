/* fuzz_hwloc_xml: libFuzzer target for the hwloc-XML path of `ddpbench topo --hwloc-xml FILE`: topo_load (which
 * loads a user's file in a forked child first, because libhwloc can crash on a malformed one), then the scan
 * into a topo_node and the printed report. Property: never a crash, sanitizer report or hang in this process;
 * a file libhwloc cannot take is a usage error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topo.h"

static char path[64];
static FILE *devnull;

/* Every input forks (topo_load's crash-isolating child), and a fork copies the page tables of all the memory
 * this process has touched. ASan's default 256 MiB quarantine of freed blocks keeps hundreds of MiB touched,
 * so each fork cost 10-20 ms (64 executions a second here, against 100 with 16 MiB; the kernel's
 * copy_page_range was the top of the profile). 16 MiB still holds many inputs' worth of freed blocks, so a
 * use after free within one input is still caught. ASAN_OPTIONS set by the caller adds to this. */
const char *__asan_default_options(void) { return "quarantine_size_mb=16"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/ddpbench-fuzz-hwloc-%ld.xml", (long)getpid());
    devnull = fopen("/dev/null", "w");
    setenv("HWLOC_XML_VERBOSE", "0", 1);
    /* libhwloc loads its plugins (libxml2's among them) when the first topology is created and unloads them
     * when the last one is destroyed, so each input would dlopen them twice (child and parent). One idle
     * topology kept for the life of the fuzzer keeps them loaded, as they are in a ddpbench run, which loads
     * one file once; the code under test is unchanged. */
    static hwloc_topology_t keep;
    if (hwloc_topology_init(&keep) != 0) abort();
  }
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  fwrite(data, 1, n, f);
  fclose(f);
  char msg[1400];
  ddp_usage_capture(msg, sizeof msg);
  hwloc_topology_t topo = NULL;
  ddp_result r = topo_load(path, &topo);
  if (r != DDP_OK && r != DDP_ERR_USAGE) abort();
  if (r == DDP_OK) {
    static topo_node node;
    memset(&node, 0, sizeof node);
    if (topo_node_scan(topo, "fuzz", &node) == DDP_OK) {
      topo_node_print(&node, 0, devnull);
      topo_node_print(&node, 1, devnull);
    }
    hwloc_topology_destroy(topo);
  }
  ddp_usage_capture(NULL, 0);
  return 0;
}
