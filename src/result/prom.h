/* prom.h: a result document as a node_exporter textfile (Prometheus text format): prom.c says how records
 * become metrics. Reads the result model only. */
#ifndef DDPBENCH_PROM_H
#define DDPBENCH_PROM_H

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The text (malloc'd, *out) for d. end_time: seconds since the epoch, or NaN to leave the end time out. */
ddp_result prom_format(const result_doc *d, double end_time, char **out);

#ifdef __cplusplus
}
#endif
#endif
