/* topo.c: `ddpbench topo`: the host report of the live machine or of a saved hwloc XML, without MPI. */
#include <stddef.h>

#include "commands.h"
#include "topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char hwloc_xml[4096];
  int pcie, json;
} topo_args;

#define OFF(f) offsetof(topo_args, f), 0
static const opt_spec TOPO[] = {
    {"hwloc_xml", NULL, 0, OPT_STR, offsetof(topo_args, hwloc_xml), sizeof(((topo_args *)0)->hwloc_xml), "", .arg = "FILE", .flags = OPT_INPUT,
     .help = "a saved topology instead (lstopo FILE.xml, hwloc 2.x or 3.0 format; no NVML)"},
    {"pcie", NULL, 0, OPT_BOOL, OFF(pcie), "false", .help = "classify GPU pairs by PCIe path alone (the path when NVLink is off or down)"},
    {"json", NULL, 0, OPT_BOOL, OFF(json), "false", .help = "print the report as JSON"},
};
static const opt_table TOPO_TABLE = {"topology", TOPO, 3};

static ddp_result topo_tables(opt_set *s, void *args) { return opt_set_add(s, &TOPO_TABLE, args); }

static struct {
  int ngpu, nnic, numa, scanned;
} g_seen; /* what the report showed, for its bottom line */

static void topo_bottom(const cmd_ctx *c, char *out, size_t n) {
  const topo_args *a = c->args;
  if (!g_seen.scanned) {
    snprintf(out, n, "no topology read");
    return;
  }
  snprintf(out, n, "%d GPU%s, %d NIC%s, %d NUMA node%s (%s)", g_seen.ngpu, g_seen.ngpu == 1 ? "" : "s", g_seen.nnic,
           g_seen.nnic == 1 ? "" : "s", g_seen.numa, g_seen.numa == 1 ? "" : "s",
           a->hwloc_xml[0] ? a->hwloc_xml : "this machine");
}

static ddp_result topo_run(cmd_ctx *c) {
  const topo_args *a = c->args;
  const char *xml = a->hwloc_xml[0] ? a->hwloc_xml : NULL;
  int pcie = a->pcie, json = a->json;
  c->exit_code = DDP_EXIT_OK;
  hwloc_topology_t topo = NULL;
  DDP_TRY(topo_load(xml, &topo));
  topo_node *n = calloc(1, sizeof *n);
  if (!n) {
    hwloc_topology_destroy(topo);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  ddp_result r = topo_node_scan(topo, xml ? xml : "live", n);
  if (r == DDP_OK) g_seen.ngpu = n->ngpu, g_seen.nnic = n->nnic, g_seen.numa = n->numa_nodes, g_seen.scanned = 1;
  c->report_stderr = json; /* standard output holds the JSON document */
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
  return r;
}

const cmd_def cmd_topo = {
    .name = "topo",
    .summary = "this machine's (or a saved one's) GPU/NIC topology, like nvidia-smi topo -m",
    .usage = "usage: ddpbench topo [--hwloc-xml FILE] [--pcie] [--json]\n",
    .exit_codes = "0 success, 2 bad input or an unreadable --hwloc-xml",
    .about = "Prints this machine's GPU/NIC topology like `nvidia-smi topo -m`, from hwloc and NVML.\nExample: "
             "ddpbench topo --hwloc-xml saved.xml --pcie\n",
    .args_size = sizeof(topo_args),
    .tables = topo_tables,
    .run = topo_run,
    .bottom = topo_bottom,
};
