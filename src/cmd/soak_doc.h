/* soak_doc.h: a soak's document, shared by `accept --soak`, which measures it (accept_soak.c), and `judge`, which
 * reads a stored one back and judges it again (judge.c): the series' layout (which links are nodes, which are the
 * pairs of which nodes), the soak's verdicts over the series (verdict/soak_rules.h's, then a host every one of
 * whose pairs dropped), the per-GPU summary records and the per-interval series records, the rules' parameters from
 * the expectations, and the `soak` section's series to JSON and back (docs/outputs.md). The weights checks are not
 * here: they are taken live (checksums are not stored), and judge carries them over.
 *
 * defines: soak_layout, soak_layout_free, soak_params_for, soak_doc_judge, soak_doc_summary,
 *          soak_doc_{series,last}_records, soak_doc_series_json, soak_doc_steady_json, soak_doc_load,
 *          soak_doc_write_records, soak_doc_exit_code */
#ifndef DDPBENCH_SOAK_DOC_H
#define DDPBENCH_SOAK_DOC_H

#include <cJSON.h>

#include "cmd.h"
#include "outputs.h"
#include "pairs.h"
#include "result.h"
#include "soak_rules.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The links of a series: S.nlink - npairs nodes first (each a host's allreduce), then the npairs node pairs. */
typedef struct {
  int nnodes, npairs;
  node_pair *pairs;      /* [npairs], node indices */
  char (*node_host)[64]; /* [nnodes] */
} soak_layout;
void soak_layout_free(soak_layout *l);

/* soak_params_default with the ceilings of the expectations of GPU model `model` (built in, or expect_file's when
 * not empty: its errors are said in one line, DDP_ERR_USAGE). */
ddp_result soak_params_for(const char *model, const char *expect_file, soak_params *p);

/* The soak's verdicts over the series, in order: soak_judge_counters, _throttle, _steady, _links, _ranks, then a
 * host every one of whose measured pairs dropped while a pair without it held (named, SCOPE_HOST). gs[S->ngpu] gets
 * each GPU's steady state. */
ddp_result soak_doc_judge(const soak_series *S, const soak_params *p, const soak_layout *lay, finding_list *f,
                          soak_gpu_steady *gs);
/* Per GPU, the summary records (measurement "soak": equilibrium_tflops, first_minute_tflops, first_throttle_s). */
ddp_result soak_doc_summary(const soak_series *S, const soak_gpu_steady *gs, const char *prec, result_doc *d);
/* Interval i's series records (per GPU, per link), labelled (with_interval) with the interval and its end. */
ddp_result soak_doc_series_records(const soak_series *S, const char *prec, int i, int with_interval, result_doc *doc);
/* The last interval's series records, unlabelled, and the interval, its end and the intervals complete (--prom). */
ddp_result soak_doc_last_records(const soak_series *S, const char *prec, result_doc *doc);

/* The series into o: "intervals", "gpus" (each with its arrays and, gs not NULL, its "steady"), "links". */
ddp_result soak_doc_series_json(const soak_series *S, const soak_gpu_steady *gs, cJSON *o);
/* One GPU's "steady" object. */
cJSON *soak_doc_steady_json(const soak_gpu_steady *s);
/* The series back from a `soak` section (sec) of document d (whose ranks give the nodes' hosts): what
 * soak_doc_series_json wrote, figure for figure. A section written before a field was (the GPUs' "under_load",
 * "xid_measured", "nvlinks_read", "index", an NVLink's "absent") reads as not measured, or as the rank's ordinal.
 * Bad or missing structure: DDP_ERR_USAGE with one line naming the key (err). S and lay are freed on failure. */
ddp_result soak_doc_load(const cJSON *sec, const result_doc *d, soak_series *S, soak_layout *lay, char *err,
                         size_t errlen);

/* The exit code conclude() (cmd.c) will give c's document, for a soak's own --csv and --prom written before it:
 * c->exit_code when set, else the findings', and under --strict a failing host finding's; hosts_judge adds the
 * failed hosts to c->doc as conclude's own call does. */
ddp_result soak_doc_exit_code(cmd_ctx *c, int *code);

/* outputs_write_some of the outputs in `which` from d, with from's records in place of d's for the write (from NULL:
 * d's own): a soak's --csv holds the whole series, its --prom the last interval. */
ddp_result soak_doc_write_records(const result_outputs *o, unsigned which, unsigned replace, int files_only,
                                  result_doc *d, const result_doc *from, const cJSON *sections, int quiet);

#ifdef __cplusplus
}
#endif
#endif
