/* test_measure (3 ranks): measurements as plug-ins and the groups they run over.
 *  - a toy measurement defined and registered here alone (no line in src/) runs through the driver over the
 *    world, each node, the first 2 ranks and every node pair; its records reach rank 0 with the group's name,
 *    and its value (an allreduce over the group's own comm) proves each group holds exactly its ranks;
 *  - the built-in ddp measurement over the first 2 ranks gives records (step time, loss) for group first:2
 *    and the same loss as the same model run by the engine directly on a comm of those ranks;
 *  - --groups / --group-measure from the command line run the toy over the kinds of groups listed, and bad
 *    entries, an unknown measurement and a first:K beyond the world are refused (DDP_ERR_USAGE);
 *  - registering a name twice is refused; the registry lists local, comm, ddp first. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "check.h"
#include "engine_run.h"
#include "group_sum.h"
#include "measure.h"
#include "train.h"

/* The toy: each rank adds rank + 1 of the world over the group; rank 0 of the group records the sum. */
static ddp_result toy_run(const measure_env *env, const measure_group *g, result_doc *out) {
  float v = (float)(g->world_rank + 1);
  DDP_TRY(group_sum_f32(env, g, &v));
  char size[16];
  snprintf(size, sizeof size, "%d", g->size);
  if (g->rank == 0) DDP_TRY(result_add(out, "toy", g->name, "rank_sum", "", BETTER_NONE, v, NULL, NULL, 0, "size", size, NULL));
  return DDP_OK;
}
static const measurement toy = {"toy", "sums world ranks + 1 over the group", toy_run, NULL, NULL, 0};

int main(int argc, char **argv) {
  ddp_dist d;
  if (dist_init(&argc, &argv, &d) != DDP_OK) return 1;
  ddp_device *dev = NULL;
  ddp_comm *world = NULL;
  CHECK(device_cpu_create(&dev, 1) == DDP_OK, "cpu device");
  CHECK(comm_mpi_create(&world, MPI_COMM_WORLD, dev) == DDP_OK, "world comm");
  ddp_config cfg;
  small_model(&cfg, PREC_FP32, 32, 8);

  CHECK(measure_register(&toy) == DDP_OK, "toy registered from the test file");
  CHECK(measure_find("toy") == &toy && measure_register(&toy) == DDP_ERR_USAGE, "found; a second registration refused");
  CHECK(measure_at(0) == &measure_local && measure_at(1) == &measure_comm && measure_at(2) == &measure_ddp,
        "local, comm, ddp are the first three");
  for (int p = 0; p < PHASE_COUNT; p++)
    CHECK(strcmp(measure_at(p)->name, phase_name((ddp_phase)p)) == 0, "measurement %d is named as its phase", p);

  result_doc doc;
  result_init(&doc);
  measure_env env = {.cfg = &cfg, .dist = &d, .dev = dev};
  static const measure_group_kind kinds[] = {GROUP_WORLD, GROUP_NODE, GROUP_FIRST, GROUP_PAIR};
  int pair_rounds = -1, np = 0;
  for (int k = 0; k < 4; k++) {
    measure_round *rounds = NULL;
    int n = 0;
    CHECK(measure_rounds_build(&d, world, kinds[k], 2, &rounds, &n) == DDP_OK, "groups of kind %d", k);
    if (kinds[k] == GROUP_PAIR) pair_rounds = n;
    CHECK(measure_run(&env, &toy, rounds, n, &doc) == DDP_OK, "toy over kind %d", k);
    if (kinds[k] == GROUP_FIRST) CHECK(measure_run(&env, &measure_ddp, rounds, n, &doc) == DDP_OK, "ddp over first:2");
    measure_rounds_free(rounds, n);
  }
  int want_rounds = 0;
  np = node_pairs(node_pairs_default(d.node_count), d.node_count, NULL, 0);
  node_pair *sched = calloc((size_t)np + 1, sizeof *sched);
  node_pairs(node_pairs_default(d.node_count), d.node_count, sched, np);
  for (int i = 0; i < np; i++) want_rounds = sched[i].round + 1 > want_rounds ? sched[i].round + 1 : want_rounds;
  free(sched);
  CHECK(pair_rounds == want_rounds, "node pairs in the schedule's rounds of disjoint pairs: %d, expected %d",
        pair_rounds, want_rounds);

  if (d.rank == 0) {
    int W = d.size;
    const result_record *r = result_find(&doc, "toy", "world", "rank_sum", NULL);
    CHECK(r && r->value == W * (W + 1) / 2.0, "world: 1 + ... + %d = %g", W, r ? r->value : NAN);
    r = result_find(&doc, "toy", "first:2", "rank_sum", "size", "2", NULL);
    CHECK(r && r->value == 3, "first:2 holds ranks 0 and 1: %g", r ? r->value : NAN);
    char node[80];
    snprintf(node, sizeof node, "node:%.56s", d.host);
    r = result_find(&doc, "toy", node, "rank_sum", NULL);
    CHECK(r != NULL, "a record for this node's group %s", node);
    int pairs = 0;
    for (int i = 0; i < doc.nrecords; i++) pairs += strncmp(doc.records[i].group, "pair:", 5) == 0;
    CHECK(pairs == np, "one record per node pair: %d of %d", pairs, np);
    const result_record *st = result_find(&doc, "ddp", "first:2", "step_ms", NULL);
    const result_record *loss = result_find(&doc, "ddp", "first:2", "loss", NULL);
    CHECK(st && st->has_stats && st->value > 0 && st->stats.n == cfg.steps, "ddp over first:2: step time record");
    CHECK(loss && loss->nsamples == cfg.warmup + cfg.steps, "ddp over first:2: loss per step");
    const result_record *r1 = result_find(&doc, "ddp", "first:2", "step_ms", "rank", "1", "host", d.host, NULL);
    CHECK(r1 && r1->nsamples == cfg.steps && !result_find(&doc, "ddp", "first:2", "step_ms", "rank", "2", NULL),
          "per-rank records of first:2: ranks 0 and 1 with their host, not rank 2");
    measure_print_records(stdout, &toy, &doc);
  }
  /* The same from the command line: --groups and --group-measure pick the toy and the kinds of groups. */
  {
    ddp_config gc;
    char *argv_ok[] = {"ddpbench", "--groups", "world,node,pairs,first:2,node", "--group-measure", "toy", NULL};
    CHECK(config_parse(&gc, 5, argv_ok, NULL) == DDP_OK, "--groups world,node,pairs,first:2,node parses");
    int gk[CONFIG_MAX_GROUPS], gn[CONFIG_MAX_GROUPS];
    CHECK(config_groups(&gc, gk, gn, CONFIG_MAX_GROUPS) == 4 && gk[0] == GROUP_WORLD && gk[1] == GROUP_NODE &&
              gk[2] == GROUP_PAIR && gk[3] == GROUP_FIRST && gn[3] == 2,
          "config_groups: world, node, pairs, first:2 in order, the repeated node dropped");
    measure_env genv = {.cfg = &gc, .dist = &d, .dev = dev};
    result_doc gdoc;
    result_init(&gdoc);
    const measurement *used = NULL;
    CHECK(measure_groups_run(&genv, world, &gdoc, &used, 0) == DDP_OK && used == &toy, "measure_groups_run with the toy");
    if (d.rank == 0) {
      int W = d.size;
      const result_record *r = result_find(&gdoc, "toy", "world", "rank_sum", NULL);
      CHECK(r && r->value == W * (W + 1) / 2.0, "--groups world: the world's sum %g", r ? r->value : NAN);
      r = result_find(&gdoc, "toy", "first:2", "rank_sum", "size", "2", NULL);
      CHECK(r && r->value == 3, "--groups first:2: ranks 0 and 1 (%g)", r ? r->value : NAN);
      char node[80];
      snprintf(node, sizeof node, "node:%.56s", d.host);
      CHECK(result_find(&gdoc, "toy", node, "rank_sum", NULL) != NULL, "--groups node: %s", node);
      int pairs = 0;
      for (int i = 0; i < gdoc.nrecords; i++) pairs += strncmp(gdoc.records[i].group, "pair:", 5) == 0;
      CHECK(gdoc.nrecords == 3 + np && pairs == np, "--groups: %d records (world, node, first:2 and %d pairs)",
            gdoc.nrecords, np);
    }
    result_free(&gdoc);
    /* Bad input: refused on every rank before any group, naming the key. */
    char *argv_far[] = {"ddpbench", "--groups", "first:99", "--group-measure", "toy", NULL};
    CHECK(config_parse(&gc, 5, argv_far, NULL) == DDP_OK, "first:99 parses (the world size is known later)");
    CHECK(measure_groups_run(&genv, world, &gdoc, &used, 0) == DDP_ERR_USAGE, "first:99 beyond %d ranks refused", d.size);
    char *argv_nom[] = {"ddpbench", "--groups", "world", "--group-measure", "nope", NULL};
    CHECK(config_parse(&gc, 5, argv_nom, NULL) == DDP_OK && measure_groups_run(&genv, world, &gdoc, &used, 0) == DDP_ERR_USAGE,
          "an unknown --group-measure refused");
    char *argv_bad[] = {"ddpbench", "--groups", "nodes", NULL};
    CHECK(config_parse(&gc, 3, argv_bad, NULL) == DDP_ERR_USAGE, "--groups nodes refused");
    char *argv_zero[] = {"ddpbench", "--groups", "first:0", NULL};
    CHECK(config_parse(&gc, 3, argv_zero, NULL) == DDP_ERR_USAGE, "--groups first:0 refused");
    result_free(&gdoc);
  }

  /* The same model on a comm of ranks 0 and 1, through the engine directly: the same global loss (the sum of
   * the two ranks' shares; a + b + 0 is exact in any order). */
  ddp_comm *two = NULL;
  run_out o;
  CHECK(world->split(world, d.rank < 2 ? 0 : -1, d.rank, &two) == DDP_OK, "split of ranks 0 and 1");
  if (two) {
    CHECK(run_engine(two, &cfg, PHASE_DDP, &o) == DDP_OK, "engine on ranks 0 and 1");
    two->destroy(two);
  } else {
    memset(&o, 0, sizeof o);
  }
  double global[64] = {0};
  MPI_Reduce(o.loss, global, 64, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (d.rank == 0) {
    const result_record *loss = result_find(&doc, "ddp", "first:2", "loss", NULL);
    int same = loss && loss->nsamples == o.n;
    for (int i = 0; same && i < o.n; i++) same = loss->samples[i] == global[i];
    CHECK(same, "the driver's ddp over first:2 has the engine's loss, bit for bit");
  }
  out_free(&o);
  result_free(&doc);
  world->destroy(world);
  dev->destroy(dev);
  int rc = check_summary_world();
  dist_finalize(&d);
  return rc;
}
