/* collectives.h: the "collectives" measurement (collectives.c): nccl-tests' sweep over a group, with exact
 * data checks and --under-load; its options (nccl-tests' names, short and long, and ddpbench's); and the
 * printer of nccl-tests' tables from its records, row by row as they come or from a document.
 *
 * Records (measurement "collectives", group = the group's name), per row and placement, labelled collective,
 * type, redop, root, bytes, count, placement and cycle: time_us, algbw_gbs, busbw_gbs, iter_time_us (with
 * per-iteration statistics), slowest_rank_time_us, slowest_rank, nwrong (when checked), and under load
 * load_time_us, load_busbw_gbs, gemm_tflops_idle, gemm_tflops_load; wrong_elements per rank and placement with
 * wrong data (labels rank, host, first, got, expected, received); maxbytes_used once per group.
 *
 * defines: coll_opts, agg_mode, collectives_options, coll_options_finish, measure_collectives, coll_printer */
#ifndef DDPBENCH_COLLECTIVES_H
#define DDPBENCH_COLLECTIVES_H

#include <stdio.h>

#include "coll.h"
#include "measure.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { AGG_RANK0 = 0, AGG_AVG, AGG_MIN, AGG_MAX } agg_mode;

typedef struct {
  char names[256];              /* the operands: collective names, comma-separated */
  int colls[COLL_COUNT], ncoll; /* from names */
  size_t min_bytes, max_bytes, step_bytes;
  int step_factor, iters, warmup, check, root, graph, cycles, average;
  char dtype[32], op[16], under_load[32];
  int dtypes[DT_COUNT], ndtype; /* -d: one, or all */
  int ops[REDOP_COUNT], nop;    /* -o: one, or all */
  double timeout;               /* seconds */
  int load_h;                   /* --under-load gemm[:H]: 0 off, -1 default H */
  int fixed[4];                 /* -t, -g, -m, -z: accepted at their only supported value */
  double a2av_skew;             /* alltoallv's matrix (coll_alltoallv_matrix) */
  int a2av_seed;
} coll_opts;

/* The keys (operands: the collectives' names), over a coll_opts. */
extern const opt_table collectives_options;
/* The lists (collectives, types, ops) and the checks across keys; s (may be NULL) says what was given. One line
 * naming the option and DDP_ERR_USAGE on bad input. */
ddp_result coll_options_finish(coll_opts *o, const opt_set *s);

extern const measurement measure_collectives;

/* Prints nccl-tests' tables from the measurement's records: a header when a collective (or group, or cycle)
 * starts, a row per row, the wrong-data lines, the footer when it ends. prov (may be NULL): the document whose
 * ranks name a group's members. max_bytes_asked: -e as given (0: no "Reducing maxBytes" line). */
typedef struct {
  FILE *f;
  const result_doc *prov;
  size_t max_bytes_asked;
  int open;
  char coll[32], group[64], cycle[16];
  long long bad;
  double bw_sum;
  int bw_n;
} coll_printer;
void coll_printer_init(coll_printer *p, FILE *f, const result_doc *prov, size_t max_bytes_asked);
void coll_printer_feed(coll_printer *p, const result_doc *recs);
void coll_printer_end(coll_printer *p);

#ifdef __cplusplus
}
#endif
#endif
