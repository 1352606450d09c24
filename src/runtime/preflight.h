/* preflight.h: what every rank checks together after MPI starts and before any work (see preflight.c). */
#ifndef DDPBENCH_PREFLIGHT_H
#define DDPBENCH_PREFLIGHT_H

#include "dist.h"
#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* This rank's own checks before work (the outputs it writes): DDP_OK, or DDP_ERR_USAGE with the message in err. */
typedef ddp_result (*preflight_check_fn)(void *ctx, const ddp_dist *d, char *err, size_t errn);

/* Collective over d->world. `parsed` is this rank's option parse result and parse_msg its message (captured
 * with ddp_usage_capture); check (may be NULL) runs on ranks that parsed. Rank 0 prints every rank's error
 * once, naming the ranks that saw it; or, when the ranks' effective options differ (opt_hash), one line per
 * differing rank naming the keys and both values. Returns DDP_ERR_USAGE on every rank when anything is wrong,
 * DDP_OK on every rank otherwise (or an MPI error). */
ddp_result preflight_run(const ddp_dist *d, const opt_set *s, ddp_result parsed, const char *parse_msg,
                         preflight_check_fn check, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
