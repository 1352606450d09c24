/* main.c: ddpbench's entry point. Its subcommands (cmd/commands.c) are each a cmd_def (cmd/cmd.h: an option table
 * plus its orchestration, run by one skeleton); the layers under them are described in docs/ARCHITECTURE.md.
 *
 *   run          the training run (the default when argv[1] is an option): cmd/run.c
 *   accept       cluster acceptance checks with verdicts and a drain list: cmd/accept.c
 *   collectives  nccl-tests' sweep through the comm interface: cmd/collectives.c
 *   doctor       environment and topology checks across the ranks: cmd/doctor.c
 *   topo         this or a saved machine's topology, no MPI: cmd/topo.c
 *   compare      two sets of result files, benchstat's statistics: cmd/compare/
 *   export       a result file as a textfile, CSV or the current schema's JSON: cmd/export.c
 * A new subcommand: its file, and one line in cmd/commands.c. */
#include "commands.h"

int main(int argc, char **argv) { return cmd_main(ddpbench_commands, argc, argv); }
