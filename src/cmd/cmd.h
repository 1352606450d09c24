/* cmd.h: a subcommand is an option table plus its orchestration; the skeleton (cmd.c) does everything else,
 * the same way for every subcommand:
 *   1. options: its tables (and those of the measurements it runs, the outputs, the device and comm choice)
 *      read from --config and the command line by the option layer (options.h), every other subcommand's
 *      section of the file checked against that subcommand's keys; --help and --version answered without
 *      starting MPI; its cross-key checks. All before MPI starts, on every rank.
 *   2. MPI, under the watchdog armed before MPI_Init with the subcommand's timeout;
 *   3. preflight: every rank's option error printed once, ranks whose effective options differ refused, every
 *      output checked (rank 0's files, each host's folder) before any work: exit 2 on every rank alike;
 *   4. placement (placement.h) and this rank's device and comm, when the subcommand asks for them; each
 *      rank's identity to rank 0 (the result document's provenance, built once here from the option set);
 *   5. its run(); then, on rank 0, the findings table, the hosts' verdict and the outputs (outputs.h) from the
 *      one result model;
 *   6. the exit protocol: rank 0's outcome broadcast, usage errors and failed checks leave cleanly on every
 *      rank, a runtime error ends the job through MPI_Abort naming the rank and host.
 * A new subcommand is a cmd_def in its own file and one line in commands.c's table.
 *
 * defines: cmd_def, cmd_ctx, cmd_rank, CMD_* flags, cmd_{main,parse,free,nested,use,outcome_incomplete},
 *          cmd_{versions,rank_host} (ctx.c) */
#ifndef DDPBENCH_CMD_H
#define DDPBENCH_CMD_H

#include <cJSON.h>
#include <stdio.h>

#include "comm.h"
#include "device.h"
#include "dist.h"
#include "options.h"
#include "outputs.h"
#include "placement.h"
#include "result.h"
#include "versions.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CMD_MPI = 1u << 0,       /* starts MPI (under mpirun or srun); else a plain program */
  CMD_PLACE = 1u << 1,     /* --device: the skeleton chooses and creates this rank's device */
  CMD_COMM = 1u << 2,      /* --comm too: and the world's comm over that device */
  CMD_OUTPUTS = 1u << 3,   /* --json, --prom, --csv, --failed-hosts, --force */
  CMD_JSON = 1u << 4,      /* --json and --force only */
  CMD_VERDICT = 1u << 5,   /* the findings table and the hosts' verdict after run() */
  CMD_HASH_LINES = 1u << 6, /* ... every line of it starting with '#' (nccl-tests' tables: other lines are rows) */
};

/* One rank as the provenance records it; gathered to rank 0 once, after placement. */
typedef struct {
  int rank, local_rank, node_index, pid;
  char host[64];
  uint64_t host_hash;
  ddp_device_info dev; /* ordinal -1 and no name where the subcommand made no device */
  ddp_versions ver;
} cmd_rank;

typedef struct cmd_ctx cmd_ctx;

typedef struct cmd_def {
  const char *name;   /* "accept"; "run" for the training run (its INI keys live in any section that names no
                       * subcommand) */
  const char *summary; /* one line for the program's --help */
  const char *usage;  /* the usage lines */
  const char *about;  /* what it is for, with an example */
  const char *exit_codes; /* "0 ..., 2 bad input, ..." when they differ from the run's (NULL: the run's) */
  const char *cpu_note; /* CMD_PLACE: what the CPU device does instead when no GPU is visible (NULL: nothing) */
  unsigned flags;
  size_t args_size;   /* its options struct, zeroed then filled from the tables */
  /* Adds its own tables (and its measurements') over args. */
  ddp_result (*tables)(opt_set *s, void *args);
  /* Cross-key checks, on every rank before MPI starts (c->opts says where each value came from). NULL: none. */
  ddp_result (*validate)(cmd_ctx *c);
  /* The watchdog's timeout from its options (seconds; 0 = never). NULL: none. */
  double (*timeout)(const void *args);
  int cpu_threads;    /* CMD_PLACE: OpenBLAS threads of the CPU device (0: the rank's share of its cores) */
  /* CMD_PLACE: after the placement is chosen, before the device exists (binding near the GPU). NULL: none. */
  ddp_result (*placed)(cmd_ctx *c);
  /* The work. On rank 0 it fills c->doc's records and findings (and c->sections) and prints its report; it
   * sets c->exit_code. DDP_ERR_USAGE and DDP_ERR_EXPECT must be returned on every rank alike; any other error
   * ends the job. */
  ddp_result (*run)(cmd_ctx *c);
  /* On every rank after the outcome is known and this rank's device and comm are gone (the GPU default job's
   * acceptance checks): returns the exit code, from the one run() decided. NULL: none. */
  int (*after)(cmd_ctx *c, int code);
  /* The figures of its bottom line (bottom.h) from c->doc, on rank 0 after run(): "ddp 126.6 ms/step ...".
   * NULL: the subcommand prints no bottom line of the skeleton's (compare prints its own). */
  void (*bottom)(const cmd_ctx *c, char *figures, size_t n);
} cmd_def;

struct cmd_ctx {
  const cmd_def *def;
  opt_set opts;
  void *args;             /* the subcommand's options (def->args_size bytes) */
  result_outputs out;     /* CMD_OUTPUTS, CMD_JSON */
  placement_choice want;  /* CMD_PLACE */
  int argc;
  char **argv;
  /* CMD_MPI */
  ddp_dist dist;
  placement pl;           /* CMD_PLACE */
  ddp_device *dev;        /* CMD_PLACE: this rank's */
  ddp_comm *comm;         /* CMD_COMM: the world's */
  cmd_rank *ranks;        /* rank 0: [world], every rank's identity */
  /* rank 0: the result document (provenance filled before run()) and extra sections of its JSON */
  result_doc doc;
  cJSON *sections;
  int strict;             /* a warning fails a host too (the subcommand sets it from its options) */
  int quiet;              /* --quiet: the findings that are not passes and the bottom line; no "wrote FILE" */
  int report_stderr;      /* the bottom line goes to stderr (stdout holds a document: topo --json) */
  const char *verdict;    /* rank 0, after the outputs: the bottom line's verdict (a static string) */
  const char *nested_verdict; /* rank 0: the verdict of the last cmd_nested (NULL: none ran) */
  int exit_code;
  /* rank 0: outputs (OUTPUT_* bits) the subcommand writes itself (a soak's time series in --csv and --prom),
   * which the skeleton leaves alone, and those it wrote before conclude() that the skeleton replaces (a soak's
   * interim --json) */
  unsigned outputs_own, outputs_replace;
  /* rank 0: outputs of its own that run() leaves until every finding is in (NCCL's account is judged after run():
   * a soak's final --csv and --prom, whose ddpbench_run_ok must be the run's): conclude() calls finish(c) first,
   * before it judges the hosts (an error: exit 3), and ctx_free calls finish_free(finish_state) whether it ran or
   * not. NULL: none. */
  ddp_result (*finish)(cmd_ctx *c);
  void *finish_state;
  void (*finish_free)(void *state);
  int written;            /* every rank: rank 0 printed the results and wrote every output (the shutdown says so) */
  char start_time[32];
  double t0;              /* ddp_now() at the start (the document's duration_s) */
};

/* The program: finds argv[1] among cmds (NULL-terminated; the entry named "run" when argv[1] is an option or
 * absent) and runs it through the skeleton. Returns the exit code (or ends the job through MPI_Abort). */
int cmd_main(const cmd_def *const *cmds, int argc, char **argv);
/* Step 1 alone (tests, tools): def's options from argv (argv[0] its name or the program's) into c, checked
 * across keys; no MPI. c->args, c->want and c->out hold the values; free with cmd_free. */
ddp_result cmd_parse(cmd_ctx *c, const cmd_def *def, int argc, char **argv);
void cmd_free(cmd_ctx *c);
/* Runs another subcommand inside this MPI job (the GPU default job's acceptance checks after its training):
 * its options from argv (argv[0] its name), then steps 3 to 5 above; returns its exit code. */
int cmd_nested(cmd_ctx *outer, const cmd_def *def, int argc, char **argv);
void cmd_use(const cmd_def *const *cmds);

/* Rank 0, during run(): the document's outcome as INCOMPLETE (exit_code 3, the bottom line `line`, the end time
 * now), for a document written before the subcommand ends (a soak's after each interval); conclude() replaces it. */
ddp_result cmd_outcome_incomplete(cmd_ctx *c, const char *line);

/* Every version this process loaded (ctx.c): versions_base and each device's and comm's own. */
void cmd_versions(ddp_versions *v);
/* The host of a world rank (ctx.c; rank 0, after the identity gather), "" when unknown. */
const char *cmd_rank_host(const cmd_ctx *c, int rank);

#ifdef __cplusplus
}
#endif
#endif
