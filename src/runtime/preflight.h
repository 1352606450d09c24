/* preflight.h: what every rank checks together after MPI starts and before any work (see preflight.c). */
#ifndef DDPBENCH_PREFLIGHT_H
#define DDPBENCH_PREFLIGHT_H

#include "config.h"
#include "dist.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over d->world. `parsed` is this rank's config_parse result and parse_msg its message (captured
 * with ddp_usage_capture). Rank 0 prints every rank's parse error and every output that cannot be written
 * (--json on rank 0, --topo-xml on each host's local rank 0), each naming the ranks; or, when the ranks'
 * configurations differ, one line per differing rank naming the keys and both values. Returns DDP_ERR_USAGE on
 * every rank when anything is wrong, DDP_OK on every rank otherwise (or an MPI error). */
ddp_result preflight_run(const ddp_dist *d, const ddp_config *cfg, ddp_result parsed, const char *parse_msg);

/* The same agreement for a subcommand that parses its own options (accept): `checked` and msg are this
 * rank's option check (captured; rank 0's includes its outputs, atomic_file_check), argv its arguments. Rank
 * 0 prints every rank's error naming the ranks, or the ranks whose arguments differ from rank 0's. Returns
 * DDP_ERR_USAGE on every rank when anything is wrong, DDP_OK on every rank otherwise (or an MPI error). */
ddp_result preflight_agree(const ddp_dist *d, const char *what, ddp_result checked, const char *msg, int argc,
                           char **argv);

#ifdef __cplusplus
}
#endif
#endif
