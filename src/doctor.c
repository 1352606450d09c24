/* doctor.c: `ddpbench doctor`: under mpirun, every rank collects its topology, versions and NCCL_*
 * environment, rank 0 prints the report and the verdict becomes the exit code (0 all agree, 1 something
 * differs or is degraded, 2 could not decide). No training, no CUDA context, no NCCL communicator. Every
 * rank returns the same code (rank 0 alone returns 2 when it cannot write --json); a failure on one rank is
 * shared before any collective that could hang. */
#include "topo.h"

#include <stdlib.h>
#include <string.h>

#include "envcheck.h"

static void doctor_usage(void) {
  printf(
      "usage: mpirun -np N ddpbench doctor [--topo-xml DIR] [--pcie] [--json FILE]\n"
      "  Checks that all ranks run the same driver, CUDA, cuBLAS, NCCL, MPI and hwloc, with the same NCCL_*\n"
      "  variables, and that every host is wired like the majority with no NVLink down and PCIe at its maximum.\n"
      "  Exit code: 0 all agree, 1 something differs or is degraded, 2 could not decide.\n"
      "  --topo-xml DIR  each host's local rank 0 writes its hwloc XML there (read it with ddpbench topo --hwloc-xml)\n"
      "  --pcie          compare GPU pairs by PCIe path alone\n"
      "  --json FILE     rank 0 writes {\"topology\": ...} there\n");
}

static ddp_result json_write(const char *path, cJSON *topology) {
  cJSON *doc = cJSON_CreateObject();
  if (!doc) return DDP_FAIL(DDP_ERR_JSON, "out of memory building %s", path);
  cJSON_AddItemReferenceToObject(doc, "topology", topology);
  char *s = cJSON_Print(doc);
  cJSON_Delete(doc);
  if (!s) return DDP_FAIL(DDP_ERR_JSON, "out of memory printing %s", path);
  FILE *f = fopen(path, "w");
  int ok = f && fputs(s, f) >= 0 && fputc('\n', f) != EOF;
  if (f && fclose(f) != 0) ok = 0;
  free(s);
  if (!ok) return DDP_FAIL(DDP_ERR_SYSTEM, "--json %s: %s", path, ddp_strerror_errno());
  return DDP_OK;
}

/* 1 when any rank has `failed` set; -1 when even that could not be agreed. */
static int any_failed(const ddp_dist *d, int failed) {
  if (MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, d->world) != MPI_SUCCESS) return -1;
  return failed;
}

int doctor_main(const ddp_dist *d, int argc, char **argv) {
  topo_options opt = {.bind_gpu = 0, .pcie_only = 0, .xml_dir = NULL};
  const char *json_path = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      if (d->rank == 0) doctor_usage();
      return DDP_EXIT_OK;
    } else if (!strcmp(argv[i], "--pcie")) {
      opt.pcie_only = 1;
    } else if (topo_arg(argc, argv, &i, "--topo-xml", &v)) {
      if (!v || !*v) return ddp_exit_code(ddp_usage_error("doctor: --topo-xml needs a directory"));
      opt.xml_dir = v;
    } else if (topo_arg(argc, argv, &i, "--json", &v)) {
      if (!v || !*v) return ddp_exit_code(ddp_usage_error("doctor: --json needs a file"));
      json_path = v;
    } else {
      return ddp_exit_code(ddp_usage_error("doctor: unknown option '%s' (ddpbench doctor --help lists them)", argv[i]));
    }
  }
  topo_rank *t = NULL;
  ddp_result r = topo_rank_init(d, &opt, NULL, &t);
  if (any_failed(d, r != DDP_OK) != 0) {
    ddp_notice("doctor: could not collect the topology on every rank (see the errors above)");
    topo_rank_free(t);
    return 2;
  }
  topo_rank_assume_gpu(t);
  ddp_versions versions;
  versions_collect(&versions);
  cJSON *json = NULL;
  int consistent = 0;
  r = topo_rank_report(t, &versions, stdout, json_path ? &json : NULL, &consistent);
  int code = r == DDP_OK ? topo_rank_exit_code(t) : 2;
  if (r == DDP_OK && json && json_write(json_path, json) != DDP_OK) code = 2;
  fflush(stdout);
  cJSON_Delete(json);
  topo_rank_free(t);
  return code;
}
