/* driver.c: the groups of ranks (comm->split), and the driver that runs a measurement in every round and
 * brings every member's records to world rank 0 (as JSON text, read back with result.c's reader: the same
 * checks as a file). Control plane only: measurements do the measuring. */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pairs.h"

/* ---- groups ------------------------------------------------------------------------------------- */
/* Collective over the world: the group of ranks with color >= 0, ordered by world rank. */
static ddp_result group_split(const ddp_dist *d, ddp_comm *world, int color, const char *name, measure_round *rd) {
  ddp_comm *sub = NULL;
  MPI_Comm mpi = MPI_COMM_NULL;
  if (world) DDP_TRY(world->split(world, color, d->rank, &sub)); /* no world comm: control-plane groups only */
  DDP_CHECK_MPI(MPI_Comm_split(d->world, color < 0 ? MPI_UNDEFINED : color, d->rank, &mpi));
  memset(rd, 0, sizeof *rd);
  rd->g.mpi = MPI_COMM_NULL;
  if (color < 0) return DDP_OK;
  rd->member = 1;
  rd->g.owned = 1;
  rd->g.comm = sub;
  rd->g.mpi = mpi;
  DDP_CHECK_MPI(MPI_Comm_set_name(mpi, name)); /* the watchdog names it (mpi_where.c) */
  DDP_CHECK_MPI(MPI_Comm_rank(mpi, &rd->g.rank));
  DDP_CHECK_MPI(MPI_Comm_size(mpi, &rd->g.size));
  rd->g.world_rank = d->rank;
  snprintf(rd->g.name, sizeof rd->g.name, "%s", name);
  return DDP_OK;
}

ddp_result measure_rounds_build(const ddp_dist *d, ddp_comm *world, measure_group_kind kind, int k,
                                measure_round **rounds, int *nrounds) {
  if (kind == GROUP_PAIR) { /* the acceptance schedule (pairs.h): tournament up to 16 nodes, ring beyond */
    node_pairs_mode mode = k == PAIRS_TOURNAMENT || k == PAIRS_RING ? (node_pairs_mode)k : node_pairs_default(d->node_count);
    int npairs = node_pairs(mode, d->node_count, NULL, 0);
    node_pair *pairs = calloc((size_t)npairs + 1, sizeof *pairs);
    DDP_CHECK_ALLOC(pairs);
    node_pairs(mode, d->node_count, pairs, npairs);
    ddp_result r = measure_pair_rounds_build(d, world, pairs, npairs, rounds, nrounds);
    free(pairs);
    return r;
  }
  *rounds = calloc(1, sizeof **rounds);
  *nrounds = 0;
  DDP_CHECK_ALLOC(*rounds);
  char name[64];
  switch (kind) {
    case GROUP_WORLD: { /* the world's own comm: no split (NCCL would build a second communicator) */
      measure_group *g = &(*rounds)[0].g;
      (*rounds)[0].member = 1;
      snprintf(g->name, sizeof g->name, "world");
      g->comm = world;
      g->mpi = d->world;
      g->rank = d->rank;
      g->size = d->size;
      g->world_rank = d->rank;
      *nrounds = 1;
      break;
    }
    case GROUP_NODE: /* every node at once: the color is the node */
      snprintf(name, sizeof name, "node:%.56s", d->host);
      DDP_TRY(group_split(d, world, d->node_index, name, &(*rounds)[0]));
      *nrounds = 1;
      break;
    case GROUP_FIRST: { /* the first k ranks in node order (node index, then local rank) */
      if (k < 1 || k > d->size) return ddp_usage_error("a group of the first %d ranks needs 1 to %d ranks", k, d->size);
      int *where = malloc((size_t)d->size * 2 * sizeof *where), mine[2] = {d->node_index, d->local_rank};
      DDP_CHECK_ALLOC(where);
      ddp_result r = dist_allgather(d, mine, where, (int)sizeof mine);
      int before = 0; /* ranks ahead of this one in node order */
      for (int i = 0; r == DDP_OK && i < d->size; i++)
        before += where[2 * i] < mine[0] || (where[2 * i] == mine[0] && where[2 * i + 1] < mine[1]);
      free(where);
      DDP_TRY(r);
      snprintf(name, sizeof name, "first:%d", k);
      DDP_TRY(group_split(d, world, before < k ? 0 : -1, name, &(*rounds)[0]));
      *nrounds = 1;
      break;
    }
    case GROUP_PAIR: /* above */
      break;
  }
  return DDP_OK;
}

ddp_result measure_pair_rounds_build(const ddp_dist *d, ddp_comm *world, const node_pair *pairs, int npairs,
                                     measure_round **rounds, int *nrounds) {
  *rounds = calloc((size_t)(npairs > 0 ? npairs : 1), sizeof **rounds);
  *nrounds = 0;
  DDP_CHECK_ALLOC(*rounds);
  char name[64] = "";
  for (int p = 0; p < npairs;) { /* this rank's group in each round */
    int round = pairs[p].round, color = -1;
    for (; p < npairs && pairs[p].round == round; p++)
      if (d->node_index == pairs[p].a || d->node_index == pairs[p].b) {
        color = p;
        snprintf(name, sizeof name, "pair:%d-%d", pairs[p].a, pairs[p].b);
      }
    DDP_TRY(group_split(d, world, color, name, &(*rounds)[*nrounds]));
    (*nrounds)++;
  }
  return DDP_OK;
}

void measure_rounds_free(measure_round *rounds, int nrounds) {
  for (int i = 0; rounds && i < nrounds; i++) {
    if (!rounds[i].g.owned) continue;
    if (rounds[i].g.comm) rounds[i].g.comm->destroy(rounds[i].g.comm);
    if (rounds[i].g.mpi != MPI_COMM_NULL) MPI_Comm_free(&rounds[i].g.mpi);
  }
  free(rounds);
}

/* ---- the driver --------------------------------------------------------------------------------- */
/* Collective over the world: every rank's records (JSON text; empty where none) to world rank 0's doc. */
static ddp_result records_to_root(const ddp_dist *d, const result_doc *mine, result_doc *doc) {
  char *text = NULL;
  if (mine->nrecords) {
    cJSON *a = result_records_json(mine);
    text = a ? cJSON_PrintUnformatted(a) : NULL;
    cJSON_Delete(a);
    if (!text) return DDP_FAIL(DDP_ERR_JSON, "cannot format the records");
  }
  int len = text ? (int)strlen(text) : 0, *lens = NULL, *offs = NULL;
  char *all = NULL;
  ddp_result r = DDP_OK;
  if (d->rank == 0) {
    lens = calloc((size_t)d->size, sizeof *lens);
    offs = calloc((size_t)d->size, sizeof *offs);
    if (!lens || !offs) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  int e = MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, d->world);
  if (e != MPI_SUCCESS && r == DDP_OK) r = mpi_fail(e, "MPI_Gather", __FILE__, __LINE__);
  long total = 0;
  if (d->rank == 0 && r == DDP_OK) {
    for (int i = 0; i < d->size; i++) offs[i] = (int)total, total += lens[i];
    all = malloc((size_t)total + 1);
    if (!all) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  e = MPI_Gatherv(text ? text : "", len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, d->world);
  if (e != MPI_SUCCESS && r == DDP_OK) r = mpi_fail(e, "MPI_Gatherv", __FILE__, __LINE__);
  for (int i = 0; d->rank == 0 && r == DDP_OK && i < d->size; i++) {
    if (!lens[i]) continue;
    cJSON *a = cJSON_ParseWithLength(all + offs[i], (size_t)lens[i]);
    char why[300] = "";
    if (!a || result_records_read(a, doc, why, sizeof why) != DDP_OK)
      r = DDP_FAIL(DDP_ERR_INTERNAL, "records from rank %d do not read back: %s", i, a ? why : "not JSON");
    cJSON_Delete(a);
  }
  free(text);
  free(all);
  free(lens);
  free(offs);
  return r;
}

/* Collective over the world: the end of a round. Ranks outside its groups wait here, asleep between polls
 * (on the CPU device a spinning MPI wait would take the cores the group measures with) and telling the
 * watchdog they are waiting, not stuck. */
static ddp_result round_wait(const measure_env *env, const char *outside) {
  MPI_Request req;
  DDP_CHECK_MPI(MPI_Ibarrier(env->dist->world, &req));
  char what[96];
  snprintf(what, sizeof what, "waiting for a measurement's group to finish");
  for (int done = 0, polls = 0;; polls++) {
    DDP_CHECK_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return DDP_OK;
    if (env->waiting && polls % 100 == 0) env->waiting(env->progress_ctx, outside ? what : NULL);
    struct timespec ts = {0, 2000000}; /* 2 ms */
    nanosleep(&ts, NULL);
  }
}

ddp_result measure_run(const measure_env *env, const measurement *m, const measure_round *rounds, int nrounds,
                       result_doc *doc) {
  for (int i = 0; i < nrounds; i++) {
    result_doc mine;
    result_init(&mine);
    /* A rank whose measurement fails returns at once: the job's abort path (MPI_Abort at the top) ends the
     * peers, which may be waiting inside the measurement's own collectives, where no agreement could reach them. */
    ddp_result r = rounds[i].member ? m->run(env, &rounds[i].g, &mine) : DDP_OK;
    if (r == DDP_OK) r = round_wait(env, rounds[i].member ? NULL : rounds[i].g.name);
    if (r == DDP_OK) r = records_to_root(env->dist, &mine, doc);
    result_free(&mine);
    DDP_TRY(r);
  }
  return DDP_OK;
}

void measure_print_records(FILE *f, const measurement *m, const result_doc *doc) {
  fprintf(f, "# %s\n#  %-20s %-24s %-28s %14s  %s\n", m->name, "group", "metric", "labels", "value", "unit");
  for (int i = 0; i < doc->nrecords; i++) {
    const result_record *r = &doc->records[i];
    if (strcmp(r->measurement, m->name)) continue;
    char labels[128] = "";
    size_t used = 0;
    for (int k = 0; k < r->nlabels && used < sizeof labels; k++)
      used += (size_t)snprintf(labels + used, sizeof labels - used, "%s%s=%s", k ? "," : "", r->labels[k].key,
                               r->labels[k].value);
    char value[32];
    if (isnan(r->value))
      snprintf(value, sizeof value, "-");
    else
      snprintf(value, sizeof value, "%.6g", r->value);
    fprintf(f, "   %-20s %-24s %-28s %14s  %s\n", r->group, r->metric, labels[0] ? labels : "-", value, r->unit);
  }
}

const void *measure_params(const measure_env *env, const measurement *m, void *buf) {
  if (env->params) return env->params;
  if (!m->options || !m->params_size) return NULL;
  memset(buf, 0, m->params_size);
  opt_set s;
  opt_set_init(&s, m->name);
  if (opt_set_add(&s, m->options, buf) != DDP_OK || opt_defaults(&s) != DDP_OK) return NULL;
  return buf;
}
