/* pairs.c: the node-pair schedules (pairs.h). */
#include "pairs.h"

#include <string.h>

int node_pairs_mode_parse(const char *s) {
  if (!strcmp(s, "none")) return PAIRS_NONE;
  if (!strcmp(s, "tournament")) return PAIRS_TOURNAMENT;
  if (!strcmp(s, "ring")) return PAIRS_RING;
  return -1;
}

node_pairs_mode node_pairs_default(int nnodes) { return nnodes <= 16 ? PAIRS_TOURNAMENT : PAIRS_RING; }

static void pair_put(node_pair *out, int cap, int *k, int round, int a, int b) {
  if (*k < cap) out[*k] = (node_pair){round, a < b ? a : b, a < b ? b : a};
  (*k)++;
}

int node_pairs(node_pairs_mode mode, int n, node_pair *out, int cap) {
  int k = 0;
  if (n < 2 || mode == PAIRS_NONE) return 0;
  if (mode == PAIRS_TOURNAMENT) {
    /* Circle method: node m-1 stays put, the others turn one place per round; odd n plays a phantom m-1. */
    int m = n + (n & 1);
    for (int r = 0; r < m - 1; r++) {
      if (m - 1 < n) pair_put(out, cap, &k, r, r, m - 1);
      for (int i = 1; i < m / 2; i++) pair_put(out, cap, &k, r, (r + i) % (m - 1), (r - i + m - 1) % (m - 1));
    }
    return k;
  }
  if (n == 2) {
    pair_put(out, cap, &k, 0, 0, 1);
    return k;
  }
  /* ring: round 0 the even edges (i, i+1), round 1 the odd ones; odd n leaves the edge (n-1, 0) to round 2. */
  for (int i = 0; i + 1 < n; i += 2) pair_put(out, cap, &k, 0, i, i + 1);
  for (int i = 1; i < n; i += 2) {
    if (i + 1 < n) pair_put(out, cap, &k, 1, i, i + 1);
    else pair_put(out, cap, &k, 1, i, 0); /* even n: the closing edge (n-1, 0) */
  }
  if (n & 1) pair_put(out, cap, &k, 2, n - 1, 0);
  return k;
}

