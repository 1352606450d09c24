/* main.c: ddpbench's entry point. An index of the program, in the order a run goes through it:
 *
 *   config.h    every setting, the INI file and the command line          (config_parse, config_print_help)
 *   dist.h      MPI start-up, rank/local rank/host, gathers, abort         (dist_init, dist_abort)
 *   topo.h      topology, binding near the GPU, environment checks          (topo_rank_init, topo_rank_report)
 *   registry.h  the devices and comms of this build, as tables              (registry_device, registry_comm)
 *   device.h    the device interface: cpu (OpenBLAS) and cuda (cuBLASLt)    (device_cpu_create, device_cuda_create)
 *   comm.h      the comm interface: mpi and nccl                            (comm_mpi_create, comm_nccl_create)
 *   measure.h   measurements as plug-ins over groups of ranks, the driver   (measure_rounds_build, measure_run)
 *   engine.h    the model, DDP buckets, the local/comm/ddp phases           (engine_create, engine_run_phase)
 *   report.h    figures, the human summary, findings from the figures       (report_summarize, report_findings)
 *   findings.h  the one verdict type; the exit code comes from it           (findings_add, findings_exit_code)
 *   result.h    the result model, its JSON writer and reader                (result_to_json, result_load)
 *   preflight.h what all ranks check together before any work               (preflight_run)
 *   watchdog.h  no hangs (one timer per rank, armed before MPI_Init), signals (watchdog_start)
 *   run.h       the job that strings these together                        (run_main)
 *
 * Subcommands: `ddpbench topo` (topology of this or a saved machine, no MPI), `ddpbench doctor`
 * (environment and topology checks across the ranks of an mpirun), `ddpbench collectives` (the nccl-tests
 * sweep through the comm interface, collectives.h), `ddpbench compare` (two sets of result files,
 * benchstat's statistics; compare.h), `ddpbench accept` (per-GPU, per-node and per-pair acceptance checks
 * with verdicts: accept_main.h) and `ddpbench export` (a result file as a node_exporter textfile, CSV or the
 * current schema's JSON: prom.h, csv.h, export.h). The data flow: docs/ARCHITECTURE.md. */
#include <string.h>

#include "accept_main.h"
#include "collectives.h"
#include "compare.h"
#include "dist.h"
#include "export.h"
#include "run.h"
#include "topo.h"
#include "watchdog.h"

/* Every subcommand that starts MPI runs under the watchdog, armed before MPI_Init (watchdog.h). */
static void mpi_start(int *argc, char ***argv, ddp_dist *d, double timeout) {
  watchdog_start(timeout, "MPI start-up (MPI_Init: did every rank start?)");
  if (dist_init(argc, argv, d) != DDP_OK) dist_abort(DDP_EXIT_RUNTIME);
  watchdog_signals_install();
  if (watchdog_join(d) != DDP_OK) dist_abort(DDP_EXIT_RUNTIME);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "export") == 0) return export_main(argc - 1, argv + 1);
  if (argc > 1 && strcmp(argv[1], "topo") == 0) return topo_main(argc - 1, argv + 1);
  if (argc > 1 && strcmp(argv[1], "compare") == 0) return compare_main(argc - 1, argv + 1);
  if (argc > 1 && (strcmp(argv[1], "doctor") == 0 || strcmp(argv[1], "accept") == 0)) {
    int doctor = argv[1][0] == 'd';
    ddp_dist d;
    /* accept refuses a --timeout below 2 x --health-seconds + 10 (so below 10) with exit 2 once MPI is up: it
     * must not end MPI_Init first with exit 3 */
    double t = watchdog_timeout_arg(argc - 1, argv + 1, doctor ? 120 : 600);
    mpi_start(&argc, &argv, &d, !doctor && t > 0 && t < 10 ? 10 : t);
    watchdog_tick(doctor ? "doctor: collecting the topology and environment" : "accept: checking the options");
    int code = doctor ? doctor_main(&d, argc - 1, argv + 1) : accept_main(&d, argc - 1, argv + 1);
    dist_finalize(&d);
    return code;
  }
  if (argc > 1 && strcmp(argv[1], "collectives") == 0) return collectives_main(argc - 1, argv + 1);
  return run_main(argc, argv);
}
