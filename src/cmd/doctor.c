/* doctor.c: `ddpbench doctor`: under mpirun, every rank collects its topology, versions and NCCL_*
 * environment, rank 0 prints the report and its findings (the one findings type, the same table as a run
 * and, in --json, the same "findings" array), and the exit code is derived from those findings (0 all agree,
 * 1 something differs or is degraded, 2 could not decide). No training, no CUDA context, no NCCL communicator. Every
 * rank returns the same code (rank 0 alone returns 2 when it cannot write --json); a failure on one rank is
 * shared before any collective that could hang. Outputs are checked before any work (exit 2 on every rank) and
 * written through atomic_file; main.c arms the watchdog (--timeout, default 120 s) before MPI starts. */
#include "topo.h"

#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "atomic_file.h"
#include "envcheck.h"

static void doctor_usage(void) {
  printf(
      "usage: mpirun -np N ddpbench doctor [--topo-xml DIR] [--pcie] [--json FILE] [--force] [--timeout S]\n"
      "  Checks that all ranks run the same driver, CUDA, cuBLAS, NCCL, MPI and hwloc, with the same NCCL_*\n"
      "  variables, and that every host is wired like the majority with no NVLink down and PCIe at its maximum.\n"
      "  Exit code: 0 all agree, 1 something differs or is degraded, 2 could not decide.\n"
      "  --topo-xml DIR  each host's local rank 0 writes its hwloc XML there (read it with ddpbench topo --hwloc-xml)\n"
      "  --pcie          compare GPU pairs by PCIe path alone\n"
      "  --json FILE     rank 0 writes {\"topology\": ..., \"findings\": [...]} there (atomically; an existing file only with --force)\n"
      "  --force         replace existing output files (regular files only)\n"
      "  --timeout S     end the job (exit 3) when a rank makes no progress for S seconds (default 120; 0 = never)\n");
}

static ddp_result json_write(const char *path, cJSON *topology, const finding_list *f, int force) {
  cJSON *doc = cJSON_CreateObject();
  cJSON *arr = findings_json(f);
  if (!doc || !arr) {
    cJSON_Delete(doc);
    cJSON_Delete(arr);
    return DDP_FAIL(DDP_ERR_JSON, "out of memory building %s", path);
  }
  cJSON_AddItemReferenceToObject(doc, "topology", topology);
  cJSON_AddItemToObject(doc, "findings", arr);
  char *s = cJSON_Print(doc);
  cJSON_Delete(doc);
  if (!s) return DDP_FAIL(DDP_ERR_JSON, "out of memory printing %s", path);
  size_t n = strlen(s);
  char *text = realloc(s, n + 2);
  if (!text) {
    free(s);
    return DDP_FAIL(DDP_ERR_JSON, "out of memory printing %s", path);
  }
  text[n] = '\n';
  text[n + 1] = 0;
  ddp_result r = atomic_file_write(path, text, n + 1, force);
  free(text);
  return r;
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
    } else if (!strcmp(argv[i], "--force")) {
      opt.force = 1;
    } else if (topo_arg(argc, argv, &i, "--timeout", &v)) {
      char *end = NULL;
      double x = v ? strtod(v, &end) : -1;
      if (!v || end == v || *end || !(x >= 0 && x <= 1e9))
        return ddp_exit_code(ddp_usage_error("doctor: --timeout must be a number of seconds in [0, 1e9], got '%s'",
                                             v ? v : ""));
    } else if (topo_arg(argc, argv, &i, "--topo-xml", &v)) {
      if (!v || !*v) return ddp_exit_code(ddp_usage_error("doctor: --topo-xml needs a directory"));
      opt.xml_dir = v;
    } else if (topo_arg(argc, argv, &i, "--json", &v)) {
      if (!v || !*v || !strncmp(v, "--", 2))
        return ddp_exit_code(ddp_usage_error("doctor: --json needs a file name%s%s", v && *v ? ", got the option " : "",
                                             v && *v ? v : ""));
      json_path = v;
    } else {
      return ddp_exit_code(ddp_usage_error("doctor: unknown option '%s' (ddpbench doctor --help lists them)", argv[i]));
    }
  }
  /* Outputs before any work: rank 0's --json, each host's XML. Exit 2 on every rank, as a run does. */
  char err[1400] = "";
  int bad = 0;
  if (d->rank == 0 && json_path) bad = atomic_file_check(json_path, opt.force, err, sizeof err) != DDP_OK;
  if (!bad && d->local_rank == 0 && opt.xml_dir) bad = topo_xml_dir_check(d, opt.xml_dir, opt.force, err, sizeof err) != 0;
  if (bad) fprintf(stderr, "ddpbench: doctor: rank %d (host %s): %s\n", d->rank, d->host, err);
  if (any_failed(d, bad) != 0) return DDP_EXIT_USAGE;
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
  /* Rank 0 turns the report into findings, prints them as a run does and derives the verdict from them. */
  cJSON *json = NULL;
  int consistent = 0;
  r = topo_rank_report(t, &versions, stdout, &json, &consistent);
  finding_list f;
  findings_init(&f);
  int code = r == DDP_OK ? topo_rank_exit_code(t) : 2;
  if (r == DDP_OK && d->rank == 0) {
    if (topo_findings(json, &f) == DDP_OK) {
      findings_print(stdout, &f);
      code = topo_findings_exit_code(&f);
    } else {
      code = 2;
    }
    if (json_path && json_write(json_path, json, &f, opt.force) != DDP_OK) code = 2;
  }
  fflush(stdout);
  if (r == DDP_OK && d->rank == 0 && code != 2 && code != topo_rank_exit_code(t))
    fprintf(stderr, "ddpbench: doctor: internal: findings say %d, the report %d\n", code, topo_rank_exit_code(t));
  findings_free(&f);
  cJSON_Delete(json);
  topo_rank_free(t);
  return code;
}
