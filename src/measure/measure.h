/* measure.h: measurements as plug-ins, the groups of ranks they run over, and the driver.
 * A measurement is a struct of function pointers: run() measures over one group of ranks (collective over
 * the group) and, on the group's rank 0, appends what it found as records (result.h) to a document;
 * print() formats those records for people. Records are also its serialised form: the result file stores
 * them as they are, so a new measurement changes neither the writer nor the reader. The driver runs a
 * measurement over every group of a kind (the world, each node, each pair of nodes, the first k ranks),
 * groups built with comm->split, and brings every group's records to rank 0 of the world.
 * Adding a measurement: one file defining a `measurement` (with its option table, if it has options), and one
 * line in table.c (or measure_register() at run time, as the tests do). Nothing here prints (but for the
 * progress lines, through progress.h: a sweep's groups, a collective's rows), exits or touches the device.
 *
 * defines: measurement, measure_env, measure_group, measure_round, measure_group_kind,
 *          measure_{register,find,at,rounds_build,pair_rounds_build,rounds_free,run,groups_run,print_records,params} */
#ifndef DDPBENCH_MEASURE_H
#define DDPBENCH_MEASURE_H

#include <stdio.h>

#include "comm.h"
#include "config.h"
#include "device.h"
#include "dist.h"
#include "options.h"
#include "pairs.h"
#include "phase.h"
#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One group of ranks as this rank sees it. */
typedef struct {
  char name[64];    /* "world", "node:<host>", "pair:<node a>-<node b>", "first:<k>" (the first k ranks in
                     * node order: node index, then local rank; world-rank order under block placement) */
  ddp_comm *comm;   /* the data plane over the group (comm->split of the world's) */
  MPI_Comm mpi;     /* the same ranks in the same order, for gathering results */
  int rank, size;   /* this rank's place in the group */
  int world_rank;   /* this rank in the world */
  int owned;        /* comm and mpi were made for the group (freed with it); the world's are borrowed */
} measure_group;

/* A round: groups that run at the same time, each rank in at most one of them. */
typedef struct {
  int member;       /* 1 when this rank is in a group of this round */
  measure_group g;  /* that group (valid when member) */
} measure_round;

typedef enum { GROUP_WORLD = 0, GROUP_NODE, GROUP_PAIR, GROUP_FIRST } measure_group_kind;

struct train_state; /* train.h */
struct device_entry;

/* What a measurement runs with. */
typedef struct {
  const ddp_config *cfg;
  const ddp_dist *dist;
  ddp_device *dev;
  engine_progress_fn progress;
  void *progress_ctx;
  /* The train measurements' engine and per-phase results, kept across local/comm/ddp of one group. When the
   * caller keeps it (the job's world report), the phases leave their data here and add no records. */
  struct train_state *train;
  /* Called now and then while this rank waits for a round's groups to finish (what: why, or NULL when it was
   * in a group itself); may be NULL. The job's watchdog hears from it that the rank is alive. */
  void (*waiting)(void *ctx, const char *what);
  /* The measurement's own parameters (its options' struct), NULL for its defaults. */
  const void *params;
  /* This rank's device entry (its optional ops: the peer copy matrix), or NULL. */
  const struct device_entry *device;
  /* On a group's rank 0, records as the measurement makes them, before its round ends (a sweep's rows, for a
   * table that grows as they come); may be NULL. The records are the measurement's to keep. */
  void (*emit)(void *ctx, const result_doc *recs);
  void *emit_ctx;
} measure_env;

typedef struct measurement {
  const char *name;
  const char *help; /* one line for --help */
  /* Collective over g. Any member may append records to out (usually measurement = name, group = g->name;
   * figures of one rank carry its rank and host as labels); the driver brings every member's to world rank 0. */
  ddp_result (*run)(const measure_env *env, const measure_group *g, result_doc *out);
  /* Rank 0 of the world: this measurement's records in doc, for people. NULL: measure_print_records. */
  void (*print)(FILE *f, const struct measurement *m, const result_doc *doc);
  /* Its own keys (NULL: none), composed into the option set of every subcommand that runs it; they fill a
   * struct of params_size bytes that env->params points at (NULL: the table's defaults, measure_params). */
  const opt_table *options;
  size_t params_size;
} measurement;

/* The table (table.c): the built-in measurements, then those registered at run time.
 * measure_register keeps the pointer (m must outlive the program's use of it); DDP_ERR_USAGE when the
 * name is taken. */
ddp_result measure_register(const measurement *m);
const measurement *measure_find(const char *name);
const measurement *measure_at(int i); /* NULL past the end */
/* "local, comm, ddp, ..." : every name in the table, for messages. */
void measure_names(char *buf, size_t n);

/* Collective over world (the world's comm; NULL: groups with no data-plane comm, g->comm NULL, for measurements
 * that only need their ranks to agree, such as the per-GPU checks): the rounds of one kind of group. k: GROUP_FIRST's size; for
 * GROUP_PAIR the schedule (PAIRS_TOURNAMENT or PAIRS_RING of base/pairs.h; 0 = the default for the node count).
 * Node pairs run in the schedule's rounds (pairs.h: tournament up to 16 nodes, every pair in
 * n-1 rounds of disjoint pairs; ring beyond), each rank in its node's pair of the round; nodes run all at once. */
ddp_result measure_rounds_build(const ddp_dist *d, ddp_comm *world, measure_group_kind kind, int k,
                                measure_round **rounds, int *nrounds);
/* Collective over d->world: the rounds of the given node pairs (a < b, sorted by round; every rank passes the same
 * list), as GROUP_PAIR builds its schedule's: acceptance's confirmation pass. */
ddp_result measure_pair_rounds_build(const ddp_dist *d, ddp_comm *world, const node_pair *pairs, int npairs,
                                     measure_round **rounds, int *nrounds);
void measure_rounds_free(measure_round *rounds, int nrounds);

/* Collective over d->world: runs m in every round; the records of every group reach doc on world rank 0
 * (doc may be NULL elsewhere). */
ddp_result measure_run(const measure_env *env, const measurement *m, const measure_round *rounds, int nrounds,
                       result_doc *doc);
/* Collective over d->world: what --groups and --group-measure ask for (config_groups): the measurement named
 * by cfg->group_measure over each kind of group listed, in that order, records to doc on world rank 0. *used
 * is that measurement (NULL when --groups is empty). An unknown measurement or a first:K beyond the world:
 * DDP_ERR_USAGE on every rank (one line naming the key), before any group is built. skip_world: the world's
 * records of that measurement exist already (the run's own phases), so the world kind is left out. */
ddp_result measure_groups_run(const measure_env *env, ddp_comm *world, result_doc *doc, const measurement **used,
                              int skip_world);
/* A table of m's records: group, metric, labels, value, unit. */
void measure_print_records(FILE *f, const measurement *m, const result_doc *doc);
/* m's parameters: env->params, or m's defaults (from its options table) in buf (at least m->params_size
 * bytes, zeroed here). NULL when m has none. */
const void *measure_params(const measure_env *env, const measurement *m, void *buf);

#ifdef __cplusplus
}
#endif
#endif
