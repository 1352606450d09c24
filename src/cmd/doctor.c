/* doctor.c: `ddpbench doctor`: under mpirun, every rank collects its topology, versions and NCCL_*
 * environment; rank 0 prints the report and its findings (the one findings type, the same table and hosts
 * verdict as every subcommand) and, with --json, a result document of kind "doctor": provenance, findings and
 * the "topology" section. The exit code is derived from those findings: 0 all agree, 1 something differs or is
 * degraded, 2 could not decide. No training and nothing timed. On GPUs it makes the world's NCCL communicator and
 * calls each collective once, untimed, so that NCCL's account of its transports and channels (nccl_section.h) is
 * read and checked against the topology before any bandwidth is measured. A failure on one rank is shared before
 * any collective that could hang. Outputs are checked before any work by the skeleton (cmd.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bottom_figures.h"
#include "commands.h"
#include "topo.h"
#include "watchdog.h"

typedef struct {
  char topo_xml[1024];
  int pcie;
  double timeout;
} doctor_args;

#define OFF(f) offsetof(doctor_args, f), 0
static const opt_spec DOCTOR[] = {
    {"topo_xml", NULL, 0, OPT_STR, offsetof(doctor_args, topo_xml), sizeof(((doctor_args *)0)->topo_xml), "",
     .arg = "DIR", .help = "each host's local rank 0 writes its hwloc XML there (read it with ddpbench topo --hwloc-xml)",
     .flags = OPT_OUTDIR},
    {"pcie", NULL, 0, OPT_BOOL, OFF(pcie), "false", .help = "compare GPU pairs by PCIe path alone"},
    {"timeout", NULL, 0, OPT_DOUBLE, OFF(timeout), "120", 0, 1e9, .arg = "SECONDS",
     .help = "end the job (exit 3) when a rank makes no progress this long (0 = never)"},
};
static const opt_table DOCTOR_TABLE = {"checks", DOCTOR, (int)(sizeof DOCTOR / sizeof DOCTOR[0])};

static ddp_result doctor_tables(opt_set *s, void *args) { return opt_set_add(s, &DOCTOR_TABLE, args); }
static double doctor_timeout(const void *args) { return ((const doctor_args *)args)->timeout; }

/* 1 when any rank has `failed` set; -1 when even that could not be agreed. */
static int any_failed(const ddp_dist *d, int failed) {
  if (MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, d->world) != MPI_SUCCESS) return -1;
  return failed;
}

/* One untimed call of each collective at sizes from 8 B to 64 MiB a rank, on the world's comm: NCCL connects
 * its transports on the first call of each kind (2.22 on) and logs them then, so its account (nccl_section.h)
 * is complete before any bandwidth is measured. Nothing is timed or checked here. */
static ddp_result nccl_probe(cmd_ctx *c) {
  ddp_comm *comm = c->comm;
  ddp_device *dev = c->dev;
  if (!comm || strcmp(comm->name, "nccl")) return DDP_OK;
  const size_t max_bytes = (size_t)64 << 20;
  void *send = NULL, *recv = NULL;
  ddp_stream *s = NULL;
  ddp_result r = dev->alloc(dev, &send, max_bytes * (size_t)comm->size);
  if (r == DDP_OK) r = dev->alloc(dev, &recv, max_bytes * (size_t)comm->size);
  if (r == DDP_OK) r = dev->stream_create(dev, &s, 0);
  if (r == DDP_OK) r = dev->memset_zero(dev, send, max_bytes * (size_t)comm->size, s);
  if (r == DDP_OK && comm->record_choices) comm->record_choices(comm, 1); /* nothing here is timed */
  /* the rings and trees (reductions, broadcast) and the peer-to-peer connections (alltoall, sendrecv) */
  static const ddp_coll_kind kinds[] = {COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALL_GATHER, COLL_BROADCAST,
                                        COLL_REDUCE,    COLL_ALLTOALL,       COLL_SENDRECV};
  for (size_t k = 0; r == DDP_OK && k < sizeof kinds / sizeof kinds[0]; k++)
    for (size_t bytes = 8; r == DDP_OK && bytes <= max_bytes; bytes *= 4) {
      watchdog_tick("doctor: one untimed call of each collective, so that NCCL connects and logs its transports");
      ddp_coll a = {.kind = kinds[k], .send = send, .recv = recv, .dt = DT_F32, .op = REDOP_SUM, .root = 0};
      /* count is per rank for every kind but alltoall's (per peer): keep each rank's share at `bytes` */
      a.count = bytes / 4 / (kinds[k] == COLL_ALLTOALL ? (size_t)comm->size : 1);
      if (!a.count) continue;
      r = comm->collective(comm, &a, s);
      if (r == DDP_OK) r = dev->stream_synchronize(dev, s);
    }
  if (comm->record_choices) comm->record_choices(comm, 0);
  if (s) dev->stream_destroy(dev, s);
  if (send) dev->free(dev, send);
  if (recv) dev->free(dev, recv);
  return r;
}

static ddp_result doctor_run(cmd_ctx *c) {
  const doctor_args *a = c->args;
  const ddp_dist *d = &c->dist;
  topo_options opt = {.bind_gpu = 0, .pcie_only = a->pcie, .xml_dir = a->topo_xml[0] ? a->topo_xml : NULL,
                      .force = c->out.force};
  watchdog_tick("doctor: collecting the topology and environment");
  topo_rank *t = NULL;
  ddp_result r = topo_rank_init(d, &opt, c->pl.bus_id[0] ? c->pl.bus_id : NULL, &t);
  if (any_failed(d, r != DDP_OK) != 0) {
    ddp_notice("doctor: could not collect the topology on every rank (see the errors above)");
    topo_rank_free(t);
    c->exit_code = 2;
    return DDP_OK;
  }
  if (!c->pl.bus_id[0]) topo_rank_assume_gpu(t); /* else topo_rank_init was told the engine's GPU */
  ddp_versions versions;
  cmd_versions(&versions);
  /* Rank 0 turns the report into findings and derives the verdict from them. */
  cJSON *json = NULL;
  int consistent = 0;
  r = topo_rank_report(t, &versions, stdout, &json, &consistent);
  int code = r == DDP_OK ? topo_rank_exit_code(t) : 2;
  if (r == DDP_OK && d->rank == 0) {
    if (topo_findings(json, &c->doc.findings) == DDP_OK) {
      code = topo_findings_exit_code(&c->doc.findings);
      if (code != 2 && code != topo_rank_exit_code(t))
        fprintf(stderr, "ddpbench: doctor: internal: findings say %d, the report %d\n", code, topo_rank_exit_code(t));
    } else {
      code = 2;
    }
    if (json) {
      c->sections = cJSON_CreateObject();
      if (!c->sections) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
      else cJSON_AddItemToObject(c->sections, "topology", json), json = NULL;
    }
  }
  cJSON_Delete(json);
  topo_rank_free(t);
  c->exit_code = code;
  if (r == DDP_OK) r = nccl_probe(c);
  return r;
}

const cmd_def cmd_doctor = {
    .bottom = doctor_bottom,
    .name = "doctor",
    .summary = "environment and topology checks across the ranks (versions, NCCL_*, wiring, links)",
    .usage = "usage: mpirun -np N ddpbench doctor [--topo-xml DIR] [--pcie] [--device D] [--comm C] [--json FILE] [--force] [--timeout S]\n",
    .about = "Checks that all ranks run the same driver, CUDA, cuBLAS, NCCL, MPI and hwloc, with the same NCCL_* "
             "variables, and that every host is wired like the majority with no NVLink down and PCIe at its "
             "maximum. On GPUs, NCCL's account of its transports and channels, after one untimed call of each "
             "collective, checked against the topology (docs/nccl-account.md).\nExample: "
             "mpirun -np 8 ddpbench doctor --json doctor.json --topo-xml topo/\n",
    .exit_codes = "0 all agree, 1 something differs or is degraded, 2 bad input or could not decide, 3 runtime "
                  "error or timeout",
    .flags = CMD_MPI | CMD_PLACE | CMD_COMM | CMD_JSON | CMD_VERDICT,
    .cpu_note = "doctor checks the topology and versions; NCCL's account needs GPUs",
    .args_size = sizeof(doctor_args),
    .tables = doctor_tables,
    .timeout = doctor_timeout,
    .run = doctor_run,
};
