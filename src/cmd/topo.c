/* topo_cli.c: `ddpbench topo`: the host report of the live machine or of a saved hwloc XML, without MPI,
 * and the option parsing `topo` and `doctor` share. Returns exit codes; never exits. */
#include "topo.h"

#include <stdlib.h>
#include <string.h>

int topo_arg(int argc, char **argv, int *i, const char *name, const char **value) {
  size_t len = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, len)) return 0;
  if (a[len] == '=') {
    *value = a + len + 1;
    return 1;
  }
  if (a[len]) return 0;
  *value = *i + 1 < argc ? argv[++*i] : NULL;
  return 1;
}

static void topo_usage(void) {
  printf(
      "usage: ddpbench topo [--hwloc-xml FILE] [--pcie] [--json]\n"
      "  Prints this machine's GPU/NIC topology like `nvidia-smi topo -m`, from hwloc and NVML.\n"
      "  --hwloc-xml FILE  a saved topology instead (lstopo FILE.xml, hwloc 2.x or 3.0 format; no NVML)\n"
      "  --pcie            classify GPU pairs by PCIe path alone (the path when NVLink is off or down)\n"
      "  --json            print the report as JSON\n");
}

int topo_main(int argc, char **argv) {
  const char *xml = NULL;
  int pcie = 0, json = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      topo_usage();
      return DDP_EXIT_OK;
    } else if (!strcmp(argv[i], "--pcie")) {
      pcie = 1;
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (topo_arg(argc, argv, &i, "--hwloc-xml", &v)) {
      if (!v || !*v) return ddp_exit_code(ddp_usage_error("topo: --hwloc-xml needs a file"));
      xml = v;
    } else {
      return ddp_exit_code(ddp_usage_error("topo: unknown option '%s' (ddpbench topo --help lists them)", argv[i]));
    }
  }
  hwloc_topology_t topo = NULL;
  ddp_result r = topo_load(xml, &topo);
  if (r != DDP_OK) return ddp_exit_code(r);
  topo_node *n = calloc(1, sizeof *n);
  if (!n) {
    hwloc_topology_destroy(topo);
    return ddp_exit_code(DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory"));
  }
  r = topo_node_scan(topo, xml ? xml : "live", n);
  if (r == DDP_OK && !xml) { /* NVML speaks of this machine only, never of a saved topology */
    nvml_api api;
    char why[128];
    int ok = nvml_open(&api, why, sizeof why);
    topo_node_query_nvml(n, ok ? &api : NULL, why, -1);
    if (ok) nvml_close(&api);
  }
  if (r == DDP_OK && json) {
    cJSON *o = topo_node_json(n, pcie);
    char *s = o ? cJSON_Print(o) : NULL;
    if (s)
      printf("%s\n", s);
    else
      r = DDP_FAIL(DDP_ERR_JSON, "cannot build the JSON report (out of memory)");
    free(s);
    cJSON_Delete(o);
  } else if (r == DDP_OK) {
    topo_node_print(n, pcie, stdout);
    if (n->ngpu) topo_legend_print(stdout);
  }
  free(n);
  hwloc_topology_destroy(topo);
  if (fflush(stdout) != 0 && r == DDP_OK) r = DDP_FAIL(DDP_ERR_SYSTEM, "writing the report: %s", ddp_strerror_errno());
  return ddp_exit_code(r);
}
