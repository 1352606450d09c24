/* scaling.h: the scaling sweep (--sweep): the train phases over the first 1, 2, 4, ... ranks of the
 * first node, then all ranks of the first 1, 2, 4, ... nodes and the whole job, as the "scaling" measurement's
 * records (scaling.c says which). Nothing here prints except the measurement's print(). */
#ifndef DDPBENCH_SCALING_H
#define DDPBENCH_SCALING_H

#include "measure.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const measurement measure_scaling;

/* Collective over d->world: the group sizes of the sweep, ascending and distinct (at most max): powers of two
 * below the first node's rank count, that count, then the ranks of the first 2, 4, ... nodes, then the world. */
ddp_result sweep_sizes(const ddp_dist *d, int *sizes, int max, int *n);
/* Collective over the world: the whole sweep; records on world rank 0's doc (NULL elsewhere), with the
 * efficiency records added by sweep_efficiency. */
ddp_result sweep_run(const measure_env *env, ddp_comm *world, result_doc *doc);
/* Adds {scaling, <group>, efficiency} = step_ms of first:1 / step_ms of the group for every group in doc
 * (NaN without a 1-rank row). */
ddp_result sweep_efficiency(result_doc *doc);
/* An info finding naming where efficiency falls most between consecutive sizes, inside a node or across
 * nodes; nothing with fewer than two sizes. */
ddp_result sweep_findings(const result_doc *doc, finding_list *f);

#ifdef __cplusplus
}
#endif
#endif
