/* run_report.h: the run's human summary, its findings and the run's sections of the JSON document, from the
 * summary (measure/summary.h). Rank 0 only; nothing here measures or communicates.
 *
 * defines: report_print, report_findings, report_sections, report_doc_fill */
#ifndef DDPBENCH_RUN_REPORT_H
#define DDPBENCH_RUN_REPORT_H

#include <stdio.h>

#include "summary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Human summary, nccl-tests style ('#' lines and a table). */
void report_print(FILE *out, const run_report *r, const run_summary *s);
/* Every verdict the figures call for, appended to f: the weights (fail per rank that differs), the slowest
 * rank (warn only beyond noise), exposed communication that cannot be told, a diverged loss, and the topology
 * report's findings (r->topology). */
ddp_result report_findings(const run_report *r, const run_summary *s, finding_list *f);
/* The run's detail sections of the JSON document, after the model's keys: buckets, the per-step figures,
 * "phases" (per rank, raw step times, the loss), scaling, the weights' mismatched ranks and "topology".
 * NULL when out of memory. */
cJSON *report_sections(const run_report *r, const run_summary *s);
/* Into m (whose provenance the skeleton built): each rank's GEMM figure and weights checksum, the weights
 * verdict (the top-level checksum is the majority's: null when no majority agrees), the world's records and
 * those of r->extra (the sweep, the groups). */
ddp_result report_doc_fill(const run_report *r, const run_summary *s, result_doc *m);

#ifdef __cplusplus
}
#endif
#endif
