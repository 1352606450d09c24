/* test_accept_links.c: link verdicts through the real query path: the project's 2 x H200 hwloc fixture, the
 * fake NVML answering for both GPUs, topo_node_query_nvml, then accept_link_checks and the expectation floors:
 *  - healthy: no verdict;
 *  - an NVLink down (16 of 18): fail on an SXM part, warn on a part outside the table;
 *  - a PCIe link trained at x8 on an x16 slot: fail; at Gen4 on Gen5: warn (idle GPUs lower the generation),
 *    and the H2D floor still comes from the slot's Gen5 x16, so a Gen4-bound copy fails the bandwidth check.
 * argv[1] = fixtures. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rules.h"
#include "expect.h"
#include "topo_testlib.h"

static const char *dir;

/* The fixture's node with the fake NVML's current answers; verdicts of GPU g. */
static int verdicts(int g, int sxm, accept_link_verdict *v) {
  topo_node *n = h200_node(dir);
  if (!n) return -1;
  const nvml_gpu *x = &n->gpu[g].nvml; /* what accept's gpu measurement records of it */
  accept_links l = {x->known, x->nvlink_known, x->links_active, x->links_total,
                    x->pcie_gen, x->pcie_gen_max, x->pcie_width, x->pcie_width_max};
  int k = accept_link_checks(&l, sxm, v);
  free(n);
  return k;
}

int main(int argc, char **argv) {
  if (argc < 2) return fprintf(stderr, "usage: test_accept_links FIXTURES\n"), 2;
  dir = argv[1];
  accept_link_verdict v[3];
  fake_h200_pair();
  int k = verdicts(0, 1, v);
  CHECK(k == 0, "healthy H200: %d verdicts (%s)", k, k > 0 ? v[0].text : "");

  fake_gpus[1].up &= ~((1ull << 3) | (1ull << 11)); /* two links of GPU 1 down */
  k = verdicts(1, 1, v);
  CHECK(k == 1 && v[0].sev == ACCEPT_FAIL && !strcmp(v[0].check, "nvlink") && v[0].measured == 16 &&
            v[0].expected == 18 && strstr(v[0].text, "16 of 18"),
        "NVLink down fails: %d %s", k, k ? v[0].text : "");
  k = verdicts(0, 1, v);
  CHECK(k == 0, "GPU 0 is not blamed for GPU 1's links (%d)", k);
  k = verdicts(1, 0, v);
  CHECK(k == 1 && v[0].sev == ACCEPT_WARN, "outside the table: a warning");
  fake_h200_pair();

  fake_gpus[0].width = 8; /* x8 in an x16 slot */
  k = verdicts(0, 1, v);
  CHECK(k == 1 && v[0].sev == ACCEPT_FAIL && !strcmp(v[0].check, "pcie_width") && v[0].measured == 8 &&
            v[0].expected == 16,
        "x8 on x16 fails: %d %s", k, k ? v[0].text : "");
  fake_h200_pair();

  fake_gpus[0].gen = 4; /* Gen4 on a Gen5 slot */
  k = verdicts(0, 1, v);
  CHECK(k == 1 && v[0].sev == ACCEPT_WARN && !strcmp(v[0].check, "pcie_gen"), "Gen4 on Gen5 warns: %d", k);
  topo_node *n = h200_node(dir);
  if (n) {
    const nvml_gpu *g = &n->gpu[0].nvml;
    expect_set e;
    expect_builtin(&e, g->name, g->pcie_gen_max, g->pcie_width_max, g->link_version);
    double m;
    /* 88 % of Gen4 x16 (what the 88 % of the link measured on one H200, results/2026-12-01-h200x1/, would give at Gen4) is below the Gen5 floor */
    CHECK(accept_judge(0.88 * expect_pcie_gbps(4, 16), e.v[EXP_H2D], 1, 0, 0, &m) == ACCEPT_FAIL,
          "a Gen4-bound copy fails the Gen5 x16 floor %.1f", e.v[EXP_H2D]);
    CHECK(e.v[EXP_P2P] == 335 && !strcmp(e.model, "h200_sxm"), "the fixture's GPUs are H200 SXM with NVLink 4");
    free(n);
  }
  fake_h200_pair();

  fake_gpus[0].width = 8, fake_gpus[0].gen = 3, fake_gpus[0].up = 1; /* everything wrong at once */
  k = verdicts(0, 1, v);
  CHECK(k == 3, "three verdicts at once: %d", k);
  return check_summary();
}
