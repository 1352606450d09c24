/* pair_passes.h: the node-pair passes' own check. accept keeps every pass over the pairs ("pair_pass" records:
 * each pair's iterations, each pass's wall time); a pass far slower than the others is a link that stalls
 * (flaps) or a neighbour's burst, which the best-of pair figures hide. This check says so, as a warning: it
 * never drains, and it never lets a stalled pass go unsaid. Pure: no MPI, no measuring, no printing.
 *
 * defines: PAIR_PASS_SLOW_X, PAIR_PASS_SLOW_MIN_S, pair_passes_judge, pair_passes_durations */
#ifndef DDPBENCH_PAIR_PASSES_H
#define DDPBENCH_PAIR_PASSES_H
#include "result.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A pass is slow when it took more than this many times the median of the other passes of its stage (all other
 * passes when it is its stage's only one) and at least this many seconds more (below a second, scheduling noise
 * on a shared machine moves a short pass by as much). */
#define PAIR_PASS_SLOW_X 3.0
#define PAIR_PASS_SLOW_MIN_S 1.0

/* The passes' wall times ("pair_pass" "world" "duration_s" records) in pass order, into sec[] (at most cap;
 * stage[] their stages, NULL allowed); returns how many (0: none recorded, as in results of older releases). */
int pair_passes_durations(const result_doc *d, double *sec, const char **stage, int cap);
/* Appends a warning finding (check "pair_passes") to d->findings for every slow pass. */
ddp_result pair_passes_judge(result_doc *d);

#ifdef __cplusplus
}
#endif
#endif
