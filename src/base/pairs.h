/* pairs.h: the schedule of node pairs that acceptance and the measurement driver share: rounds of disjoint
 * pairs of nodes that can run at the same time (tournament: every pair once; ring: each node with its
 * neighbours). Pure arithmetic: no MPI, no measuring.
 *
 * defines: node_pairs_mode, node_pair, node_pairs, node_pairs_default, node_pairs_mode_parse */
#ifndef DDPBENCH_PAIRS_H
#define DDPBENCH_PAIRS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { PAIRS_NONE = 0, PAIRS_TOURNAMENT, PAIRS_RING } node_pairs_mode;
/* "none", "tournament", "ring"; -1 for other names. */
int node_pairs_mode_parse(const char *s);
/* The default: tournament up to 16 nodes, ring beyond. */
node_pairs_mode node_pairs_default(int nnodes);

typedef struct {
  int round, a, b; /* a < b */
} node_pair;

/* The pair schedule over n nodes: rounds of disjoint pairs, in round order. tournament: every pair once,
 * n-1 rounds of n/2 pairs by the circle method (odd n: n rounds, one node sits each round out). ring: node i
 * with i+1 (mod n): two rounds, three for odd n (n = 2: one pair). none, or n < 2: no pairs. Writes at most
 * cap pairs; returns the number of pairs the schedule has (call with cap 0 to size the array). */
int node_pairs(node_pairs_mode mode, int n, node_pair *out, int cap);

#ifdef __cplusplus
}
#endif
#endif
