/* test_sweep_groups (4 ranks): the sweep's groups on emulated node layouts (the rank's node index, node count
 * and local rank set by the test, as several hosts would give them):
 *  - sizes: 2 nodes of 2 -> 1, 2, 4; 4 nodes of 1 -> 1, 2, 4; 1 node of 4 -> 1, 2, 4; 3 nodes of 2, 1, 1
 *    ranks -> 1, 2 (the first node), 3 (the first 2 nodes), 4 (the job);
 *  - first:k is the first k ranks in node order: with ranks placed round-robin over 2 nodes (node = rank % 2),
 *    first:2 holds ranks 0 and 2 (both on node 0), not 0 and 1;
 *  - a whole sweep over 2 emulated nodes of 2: groups first:1, first:2 on one node and first:4 on two, the
 *    gpus record naming ranks 0, 0-1, 0-3 and the nodes 1, 1, 2; the finding places the fall. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine_run.h"
#include "group_sum.h"
#include "scaling.h"

/* The group's members summed over its own comm: which world ranks it holds, as a bit mask. */
static ddp_result members(const measure_env *env, const measure_group *g, result_doc *out) {
  float v = (float)(1 << g->world_rank);
  DDP_TRY(group_sum_f32(env, g, &v));
  if (g->rank == 0) DDP_TRY(result_add(out, "members", g->name, "mask", "", BETTER_NONE, v, NULL, NULL, 0, NULL));
  return DDP_OK;
}
static const measurement mask_m = {"members", "world ranks of the group as a bit mask", members, NULL, NULL, 0};

static int sizes_are(const ddp_dist *d, const int *want, int n) {
  int got[16], m = 0;
  if (sweep_sizes(d, got, 16, &m) != DDP_OK || m != n) return 0;
  for (int i = 0; i < n; i++)
    if (got[i] != want[i]) return 0;
  return 1;
}

int main(int argc, char **argv) {
  ddp_dist real;
  if (dist_init(&argc, &argv, &real) != DDP_OK) return 1;
  if (real.size != 4) {
    fprintf(stderr, "test_sweep_groups needs 4 ranks\n");
    return 1;
  }
  int R = real.rank;
  ddp_device *dev = NULL;
  ddp_comm *world = NULL;
  CHECK(device_cpu_create(&dev, 1) == DDP_OK, "cpu device");
  CHECK(comm_mpi_create(&world, MPI_COMM_WORLD, dev) == DDP_OK, "world comm");

  ddp_dist d = real; /* emulated layouts */
  d.node_count = 2, d.node_index = R / 2, d.local_rank = R % 2, d.local_size = 2;
  static const int s124[] = {1, 2, 4}, s1234[] = {1, 2, 3, 4};
  CHECK(sizes_are(&d, s124, 3), "2 nodes of 2: 1, 2, 4");
  d.node_count = 4, d.node_index = R, d.local_rank = 0, d.local_size = 1;
  CHECK(sizes_are(&d, s124, 3), "4 nodes of 1: 1, 2, 4");
  d.node_count = 1, d.node_index = 0, d.local_rank = R, d.local_size = 4;
  CHECK(sizes_are(&d, s124, 3), "1 node of 4: 1, 2, 4");
  d.node_count = 3, d.node_index = R < 2 ? 0 : R - 1, d.local_rank = R < 2 ? R : 0, d.local_size = R < 2 ? 2 : 1;
  CHECK(sizes_are(&d, s1234, 4), "3 nodes (2, 1, 1): 1, 2, 3, 4");

  /* round-robin placement over 2 nodes: first:2 is ranks 0 and 2 */
  d.node_count = 2, d.node_index = R % 2, d.local_rank = R / 2, d.local_size = 2;
  ddp_config cfg;
  small_model(&cfg, PREC_FP32, 16, 3);
  cfg.steps = 3;
  cfg.warmup = 1;
  result_doc doc;
  result_init(&doc);
  measure_env env = {.cfg = &cfg, .dist = &d, .dev = dev};
  measure_round *rounds = NULL;
  int n = 0;
  CHECK(measure_rounds_build(&d, world, GROUP_FIRST, 2, &rounds, &n) == DDP_OK, "first:2, round-robin");
  CHECK(measure_run(&env, &mask_m, rounds, n, &doc) == DDP_OK, "members of first:2");
  measure_rounds_free(rounds, n);
  if (R == 0) {
    const result_record *r = result_find(&doc, "members", "first:2", "mask", NULL);
    CHECK(r && r->value == (1 | 4), "round-robin: first:2 holds ranks 0 and 2 (mask %g)", r ? r->value : NAN);
  }
  result_free(&doc);

  /* a whole sweep over 2 emulated nodes of 2 (block placement) */
  d.node_count = 2, d.node_index = R / 2, d.local_rank = R % 2, d.local_size = 2;
  result_init(&doc);
  CHECK(sweep_run(&env, world, &doc) == DDP_OK, "sweep over 2 emulated nodes");
  if (R == 0) {
    static const char *groups[] = {"first:1", "first:2", "first:4"}, *ranks[] = {"0", "0-1", "0-3"};
    static const double nodes[] = {1, 1, 2};
    for (int i = 0; i < 3; i++) {
      const result_record *g = result_find(&doc, "scaling", groups[i], "gpus", NULL);
      const char *rl = g ? result_record_label(g, "ranks") : NULL;
      CHECK(rl && !strcmp(rl, ranks[i]), "%s formed by ranks %s (got %s)", groups[i], ranks[i], rl ? rl : "none");
      const result_record *nd = result_find(&doc, "scaling", groups[i], "nodes", NULL);
      CHECK(nd && nd->value == nodes[i], "%s spans %g node(s)", groups[i], nodes[i]);
      CHECK(result_find(&doc, "scaling", groups[i], "efficiency", NULL) != NULL, "%s: efficiency", groups[i]);
    }
    finding_list f;
    memset(&f, 0, sizeof f);
    CHECK(sweep_findings(&doc, &f) == DDP_OK, "sweep_findings");
    int named = f.n == 0; /* efficiency may not fall at all on a shared machine; when it does, the finding says where */
    for (int i = 0; i < f.n; i++)
      named |= strstr(f.v[i].text, "from 1 to 2 GPUs (inside one node)") != NULL ||
               strstr(f.v[i].text, "from 2 to 4 GPUs (across nodes") != NULL;
    CHECK(named, "the fall placed inside or across nodes by the emulated layout");
    findings_free(&f);
  }
  result_free(&doc);

  world->destroy(world);
  dev->destroy(dev);
  int rc = check_summary_world();
  dist_finalize(&real);
  return rc;
}
