/* test_report: the figures derived from gathered results (step statistics over the slowest rank, throughput,
 * efficiency, exposed and hidden communication, busbw, the slowest rank, the verification verdict) on
 * made-up measurements whose answers are known; the JSON document written atomically, read back with cJSON
 * and compared; an existing file is never overwritten without force; the environment allowlist. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "bottom.h"
#include "bottom_figures.h"
#include "check.h"
#include "outputs.h"
#include "expect.h"
#include "run_report.h"
#include "result.h"
#include "testlib.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1, fabs(b)); }

/* strategy fsdp: 2 layers of 10 x 10 on 3 ranks (4 rows a shard, 12 padded), one step's calls AG1 AG2 | AG2 AG1
 * RS2 RS1; rows per kind with nccl-tests' sizes and (n-1)/n, the training phase fsdp for the efficiency and the
 * overlap, the fsdp section instead of DDP's bytes, and the records the reader derives from the phases section
 * the same as the summary's own. */
static void test_fsdp_report(void) {
  enum { W = 3, S = 4, NC = 6 };
  ddp_config cfg;
  config_defaults(&cfg);
  cfg.hidden = 10;
  cfg.layers = 2;
  cfg.batch = 10;
  cfg.steps = S;
  cfg.warmup = 0;
  cfg.strategy = STRATEGY_FSDP;
  rank_info ranks[W];
  memset(ranks, 0, sizeof ranks);
  for (int r = 0; r < W; r++) ranks[r].rank = r, ranks[r].checksum = 7, ranks[r].checksum_valid = 1;
  fsdp_plan fp;
  fsdp_plan_args a = {.hidden = 10, .layers = 2, .world = W, .param_dtype = DT_BF16, .reduce_dtype = DT_F32};
  CHECK(fsdp_plan_build(&fp, &a) == DDP_OK, "fsdp plan");
  fsdp_coll_kind slots[NC] = {FSDP_ALL_GATHER, FSDP_ALL_GATHER, FSDP_ALL_GATHER, FSDP_ALL_GATHER, FSDP_REDUCE_SCATTER,
                              FSDP_REDUCE_SCATTER};
  double local_ms[W * S], comm_ms[W * S], fsdp_ms[W * S], compute[W * S], nan_ms[W * S], coll_ms[W * S * NC];
  for (int i = 0; i < W * S; i++) local_ms[i] = 10, comm_ms[i] = 4, fsdp_ms[i] = 12, compute[i] = 9, nan_ms[i] = NAN;
  for (int i = 0; i < W * S; i++)
    for (int k = 0; k < NC; k++) coll_ms[i * NC + k] = slots[k] == FSDP_ALL_GATHER ? 0.002 : 0.008;
  double loss[S] = {5, 4, 3, 2};
  bucket_plan none = {0};
  fsdp_memory alloc;
  fsdp_plan_memory(&fp, 0, &alloc);
  run_report rep;
  memset(&rep, 0, sizeof rep);
  rep.cfg = &cfg;
  rep.world = W;
  rep.nodes = 1;
  rep.device = "cpu";
  rep.comm = "mpi";
  rep.ranks = ranks;
  rep.plan = &none;
  rep.fsdp = &fp;
  rep.slots = slots;
  rep.fsdp_alloc = &alloc;
  rep.fsdp_device_drop = NAN;
  rep.comm_bytes = 2.0 * 120 * (2 + 2 + 4);
  rep.comm_type = DT_F32;
  rep.flops_per_step = 1e6;
  rep.phases[PHASE_LOCAL] = (phase_data){1, 0, S, NC, local_ms, compute, coll_ms, loss, NULL, NULL, 0};
  rep.phases[PHASE_COMM] = (phase_data){1, 0, S, NC, comm_ms, nan_ms, coll_ms, NULL, NULL, NULL, 0};
  rep.phases[PHASE_FSDP] = (phase_data){1, 0, S, NC, fsdp_ms, compute, coll_ms, loss, NULL, NULL, 0};
  run_summary s;
  CHECK(report_summarize(&rep, &s) == DDP_OK, "fsdp: summarize");
  const phase_summary *f = &s.ph[PHASE_FSDP];
  CHECK(f->present && f->nrows == 2 && !strcmp(f->rows[0].kind, "all_gather") && f->rows[0].nbuckets == 4 &&
            !strcmp(f->rows[1].kind, "reduce_scatter") && f->rows[1].nbuckets == 2,
        "fsdp: a row per kind, with its calls: %d rows", f->nrows);
  CHECK(f->rows[0].bytes == 120 * 2 && f->rows[0].dt == DT_BF16 && f->rows[1].bytes == 120 * 4 && f->rows[1].dt == DT_F32,
        "fsdp: nccl-tests' sizes, the all-gather's output in bf16, the reduce-scatter's input in fp32: %zu %zu",
        f->rows[0].bytes, f->rows[1].bytes);
  CHECK(near(f->rows[0].time_us, 2) && near(f->rows[0].algbw, 240 / 2e-6 / 1e9) &&
            near(f->rows[0].busbw, f->rows[0].algbw * 2 / 3) && near(f->rows[1].busbw, 480 / 8e-6 / 1e9 * 2 / 3),
        "fsdp: busbw = algbw x (n-1)/n: %g %g", f->rows[0].busbw, f->rows[1].busbw);
  CHECK(near(s.ph[PHASE_COMM].busbw, s.ph[PHASE_COMM].algbw * 2 / 3), "fsdp: the comm phase's busbw x (n-1)/n");
  CHECK(near(s.scaling_efficiency, 10.0 / 12) && near(s.exposed_comm_ms, 2) && near(s.hidden_fraction, 0.5),
        "fsdp: efficiency local / fsdp, exposed fsdp - local, hidden 1 - exposed / comm: %g %g %g", s.scaling_efficiency,
        s.exposed_comm_ms, s.hidden_fraction);
  CHECK(s.weights_identical == 1, "fsdp: the training phase's weights verified");
  cJSON *doc = report_sections(&rep, &s);
  CHECK(doc && cJSON_GetObjectItem(doc, "fsdp") && !cJSON_GetObjectItem(doc, "allreduce_bytes_per_step") &&
            cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "fsdp"), "memory_bytes"),
                                             "allocated_matches_plan")),
        "fsdp: the fsdp section, with the allocation against the plan, and no DDP bytes");
  const cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "phases"), "fsdp"), "collectives");
  CHECK(cJSON_GetArraySize(rows) == 2 && !strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(rows, 1), "kind")->valuestring,
                                                 "reduce_scatter"),
        "fsdp: the phase's collectives rows");
  result_doc direct, mapped;
  result_init(&direct);
  result_init(&mapped);
  CHECK(report_records(&rep, &s, "world", NULL, NULL, 0, &direct) == DDP_OK, "fsdp: records");
  char why[300] = "";
  CHECK(result_records_from_phases(doc, "world", &mapped, why, sizeof why) == DDP_OK, "fsdp: mapping: %s", why);
  int same = 0, coll = 0;
  for (int i = 0; i < direct.nrecords; i++) {
    const result_record *x = &direct.records[i];
    const char *bytes = result_record_label(x, "bytes");
    const result_record *y = result_find(&mapped, x->measurement, x->group, x->metric, bytes ? "bytes" : NULL, bytes, NULL);
    same += y && ((isnan(x->value) && isnan(y->value)) || x->value == y->value);
    coll += strstr(x->metric, "all_gather_") != NULL || strstr(x->metric, "reduce_scatter_") != NULL;
  }
  CHECK(same == direct.nrecords && coll == 12, "fsdp: %d of %d records found again through the phases section, %d of "
        "the collectives'", same, direct.nrecords, coll);
  result_free(&direct);
  result_free(&mapped);
  cJSON_Delete(doc);
  report_summary_free(&s);
  fsdp_plan_free(&fp);
}

/* The device's plausibility bound (run_report.link_gbs): a bucket row timed faster than it (the cpu device's
 * 3 MiB in 4.4 us, 717 GB/s) gives no time, algbw or busbw, says why in the JSON, the records (direct and
 * through the phases section alike) and one info finding; a row within it, and every row without a bound
 * (0), is given as measured. */
static void test_link_bound(void) {
  enum { W = 2, S = 3 };
  ddp_config cfg;
  config_defaults(&cfg);
  cfg.steps = S;
  cfg.warmup = 0;
  rank_info ranks[W];
  memset(ranks, 0, sizeof ranks);
  for (int r = 0; r < W; r++) ranks[r].rank = r, ranks[r].checksum_valid = 1;
  bucket_plan plan = {0};
  size_t counts[2] = {1000, 786432};
  CHECK(bucket_plan_build(&plan, counts, 2, 4, 4000, 4 * 786432) == DDP_OK && plan.nbuckets == 2, "bound: plan");
  double step_ms[W * S] = {1, 1, 1, 1, 1, 1}, nan_ms[W * S], bucket_ms[W * S * 2];
  for (int i = 0; i < W * S; i++) {
    nan_ms[i] = NAN;
    bucket_ms[2 * i] = 0.004;      /* 4000 B in 4 us: 1 GB/s */
    bucket_ms[2 * i + 1] = 0.0044; /* 3 MiB in 4.4 us: 715 GB/s */
  }
  run_report rep;
  memset(&rep, 0, sizeof rep);
  rep.cfg = &cfg;
  rep.world = W;
  rep.nodes = 1;
  rep.device = "cpu";
  rep.comm = "mpi";
  rep.ranks = ranks;
  rep.plan = &plan;
  rep.comm_bytes = 4.0 * (1000 + 786432);
  rep.comm_type = DT_F32;
  rep.phases[PHASE_COMM] = (phase_data){1, 0, S, 2, step_ms, nan_ms, bucket_ms, NULL, NULL, NULL, 0};
  for (int bounded = 0; bounded < 2; bounded++) {
    rep.link_gbs = bounded ? 40 : 0;
    snprintf(rep.link_why, sizeof rep.link_why, "%s", bounded ? "twice this host's memcpy bandwidth (20 GB/s)" : "no bound");
    run_summary s;
    CHECK(report_summarize(&rep, &s) == DDP_OK, "bound: summarize");
    const phase_summary *c = &s.ph[PHASE_COMM];
    CHECK(c->nrows == 2 && near(c->rows[0].algbw, 1) && near(c->rows[0].time_us, 4) && !c->rows[0].why[0],
          "bound %d: the 1 GB/s row as measured: %g", bounded, c->rows[0].algbw);
    finding_list fl;
    findings_init(&fl);
    CHECK(report_findings(&rep, &s, &fl) == DDP_OK, "bound: findings");
    int found = 0;
    for (int i = 0; i < fl.n; i++)
      if (!strcmp(fl.v[i].check, "plausibility") && ++found)
        CHECK(fl.v[i].severity == SEV_INFO && near(fl.v[i].expected, 40) && fl.v[i].measured > 700 &&
                           strstr(fl.v[i].text, "bytes=3145728") && strstr(fl.v[i].text, "memcpy"),
                       "bound: an info finding naming the row, the figure and the bound: %s", fl.v[i].text);
    findings_free(&fl);
    result_doc direct, mapped;
    result_init(&direct);
    result_init(&mapped);
    CHECK(report_records(&rep, &s, "world", NULL, NULL, 0, &direct) == DDP_OK, "bound: records");
    cJSON *doc = report_sections(&rep, &s);
    char why[300] = "";
    CHECK(doc && result_records_from_phases(doc, "world", &mapped, why, sizeof why) == DDP_OK, "bound: mapping %s", why);
    static const char *const metrics[] = {"allreduce_time_us", "allreduce_algbw_gbs", "allreduce_busbw_gbs"};
    for (int m = 0; m < 3; m++)
      for (int way = 0; way < 2; way++) {
        const result_record *x = result_find(way ? &mapped : &direct, "comm", "world", metrics[m], "bytes", "3145728", NULL);
        if (!bounded)
          CHECK(x && x->value > 0 && !x->why, "no bound: %s given (%s)", metrics[m], way ? "phases" : "direct");
        else
          CHECK(x && isnan(x->value) && x->why && strstr(x->why, "plausibility bound of 40 GB/s") &&
                    strstr(x->why, "memcpy"),
                "bound: %s null with its reason (%s): %s", metrics[m], way ? "phases" : "direct",
                x && x->why ? x->why : "(none)");
      }
    const cJSON *row = cJSON_GetArrayItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "phases"), "comm"), "allreduce"), 1);
    CHECK(row && (bounded ? cJSON_IsNull(cJSON_GetObjectItem(row, "time_us")) && cJSON_GetObjectItem(row, "why")
                          : !cJSON_IsNull(cJSON_GetObjectItem(row, "time_us"))),
          "bound %d: the JSON row's time_us %s", bounded, bounded ? "null, with why" : "given");
    CHECK(found == bounded, "bound %d: %d plausibility findings", bounded, found);
    cJSON_Delete(doc);
    result_free(&direct);
    result_free(&mapped);
    report_summary_free(&s);
  }
  bucket_plan_free(&plan);
}

/* The run's bottom line gives the scaling efficiency with its noise, read from the document that
 * report_doc_fill and report_sections build (as run.c does): "80.0 % ±0.0" for steady steps, "cannot tell
 * (... ±...)" when the interval holds 100 % or is wider than 25 points. */
static void bottom_case(const double *local, const double *ddp, const char *want) {
  enum { W = 2, S = 4 };
  ddp_config cfg;
  config_defaults(&cfg);
  cfg.steps = S;
  cfg.warmup = 0;
  rank_info ranks[W];
  memset(ranks, 0, sizeof ranks);
  for (int r = 0; r < W; r++) {
    ranks[r].rank = r, ranks[r].checksum = 7, ranks[r].checksum_valid = 1, ranks[r].gemm_tflops = 1;
    snprintf(ranks[r].host, sizeof ranks[r].host, "n%d", r + 1);
  }
  bucket_plan plan = {0};
  size_t counts[1] = {1000};
  CHECK(bucket_plan_build(&plan, counts, 1, 4, 4000, 4000) == DDP_OK, "bottom: plan");
  double comm[W * S], compute[W * S], nan_ms[W * S], bms[W * S];
  for (int i = 0; i < W * S; i++) comm[i] = 1, compute[i] = local[i] - 0.5, nan_ms[i] = NAN, bms[i] = 0.01;
  run_report rep;
  memset(&rep, 0, sizeof rep);
  rep.cfg = &cfg;
  rep.world = W;
  rep.nodes = 2;
  rep.device = "cpu";
  rep.comm = "mpi";
  rep.ranks = ranks;
  rep.plan = &plan;
  rep.comm_bytes = 4000;
  rep.comm_type = DT_F32;
  rep.flops_per_step = 1e6;
  rep.phases[PHASE_LOCAL] = (phase_data){1, 0, S, 1, (double *)local, compute, bms, NULL, NULL, NULL, 0};
  rep.phases[PHASE_COMM] = (phase_data){1, 0, S, 1, comm, nan_ms, bms, NULL, NULL, NULL, 0};
  rep.phases[PHASE_DDP] = (phase_data){1, 0, S, 1, (double *)ddp, compute, bms, NULL, NULL, NULL, 0};
  run_summary s;
  CHECK(report_summarize(&rep, &s) == DDP_OK, "bottom: summarize");
  cmd_ctx c;
  memset(&c, 0, sizeof c);
  result_init(&c.doc);
  CHECK(report_doc_fill(&rep, &s, &c.doc) == DDP_OK, "bottom: the document");
  c.sections = report_sections(&rep, &s);
  char line[512] = "";
  run_bottom(&c, line, sizeof line);
  CHECK(strstr(line, want) != NULL, "bottom: '%s' in '%s' (efficiency %g, noise %g)", want, line,
        s.scaling_efficiency, s.efficiency_noise);
  cJSON_Delete(c.sections);
  result_free(&c.doc);
  report_summary_free(&s);
  bucket_plan_free(&plan);
}

static void test_bottom_scaling(void) {
  const double steady_local[] = {8, 8, 8, 8, 8, 8, 8, 8}, steady_ddp[] = {10, 10, 10, 10, 10, 10, 10, 10};
  bottom_case(steady_local, steady_ddp, "scaling 80.0 % ±0.0");
  const double loose_local[] = {6, 8, 10, 12, 6, 8, 10, 12}, loose_ddp[] = {10, 10, 10, 10, 10, 10, 10, 10};
  bottom_case(loose_local, loose_ddp, "scaling cannot tell (");
  char t[64];
  bottom_scaling(0.888, 0.05, t, sizeof t);
  CHECK(!strcmp(t, "88.8 % ±5.0"), "bottom_scaling: %s", t);
  bottom_scaling(0.888, 0.304, t, sizeof t); /* wider than 25 points */
  CHECK(!strcmp(t, "cannot tell (88.8 % ±30.4)"), "bottom_scaling: %s", t);
  bottom_scaling(1.128, 0.2, t, sizeof t); /* holds 100 % */
  CHECK(!strcmp(t, "cannot tell (112.8 % ±20.0)"), "bottom_scaling: %s", t);
  bottom_scaling(1.128, NAN, t, sizeof t);
  CHECK(!strcmp(t, "112.8 %"), "bottom_scaling, no noise known: %s", t);
}

/* accept's bottom line when checks fail with no host to drain (a slow path between two healthy hosts): it says
 * so, never "4 of 4 hosts pass" beside FAIL; and the findings' counts line counts the info findings as the JSON
 * and Prometheus do (passed checks among them). */
static void test_accept_bottom_no_host(void) {
  cmd_ctx c;
  memset(&c, 0, sizeof c);
  result_init(&c.doc);
  c.doc.nodes = 4;
  findings_add(&c.doc.findings, "pair_busbw", SEV_FAIL, SCOPE_PAIR, "n1<->n3", 1, 2, "GB/s", "this pair alone is slow");
  findings_add_at(&c.doc.findings, "n1", 0, "gemm_fp32.rel", SEV_INFO, SCOPE_GPU, "rank 0 cpu", 1, 1, "TFLOP/s", "ok");
  c.doc.findings.v[1].passed = 1;
  findings_add(&c.doc.findings, "throttle", SEV_INFO, SCOPE_GPU, "rank 0 cpu", 1, NAN, "%", "not sampled");
  char line[512] = "";
  accept_bottom(&c, line, sizeof line);
  CHECK(!strcmp(line, "no host to drain, 1 check fail (pair_busbw fails (n1<->n3))"), "accept, no host to drain: '%s'",
        line);
  /* the pair model's drain list: its stated error rate ends the line when it drew one (finite), never otherwise */
  findings_add(&c.doc.findings, "pair_model", SEV_INFO, SCOPE_JOB, "job", NAN, NAN, "nodes", "could not tell");
  accept_bottom(&c, line, sizeof line);
  CHECK(!strstr(line, "pairs:"), "no stated rate when the model drew no list: '%s'", line);
  c.doc.findings.v[c.doc.findings.n - 1].measured = 0.0213, c.doc.findings.v[c.doc.findings.n - 1].expected = 0.0094;
  accept_bottom(&c, line, sizeof line);
  CHECK(!strcmp(line, "no host to drain, 1 check fail (pair_busbw fails (n1<->n3))  pairs: expected false drains "
                      "0.02, misses 0.01"), "the pair model's stated rates: '%s'", line);
  c.doc.findings.v[c.doc.findings.n - 1].measured = -1e-17; /* 8 emulated hosts in CI: 1 - P(bad) summed below 0 */
  accept_bottom(&c, line, sizeof line);
  CHECK(strstr(line, "pairs: expected false drains 0.00, misses 0.01"), "never -0.00: '%s'", line);
  /* the GPU model's stated rates follow the pairs' */
  findings_add(&c.doc.findings, "gpu_model", SEV_INFO, SCOPE_JOB, "job", 0.184, 0.0021, "GPUs", "GPU model");
  accept_bottom(&c, line, sizeof line);
  CHECK(strstr(line, "misses 0.01  GPUs: expected false drains 0.18, misses 0.00") != NULL,
        "the GPU model's stated rates after the pairs': '%s'", line);
  c.doc.findings.n -= 2; /* the counts below are the three findings' */
  c.doc.nfailed_hosts = 0;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK(f != NULL, "memstream");
  if (f) {
    findings_print(f, &c.doc.findings);
    fclose(f);
    CHECK(text && strstr(text, "# findings (1 fail, 0 warn, 2 info, of which 1 passed check, in the JSON)\n"),
          "the counts line counts the passed checks among the info findings, as the JSON does: %s", text);
  }
  free(text);
  result_free(&c.doc);
}

int main(void) {
  enum { W = 2, S = 4, NB = 2 };
  test_link_bound();
  ddp_config cfg;
  config_defaults(&cfg);
  cfg.batch = 100;
  cfg.steps = S;
  cfg.warmup = 1;
  cfg.precision = PREC_FP16;
  rank_info ranks[W];
  memset(ranks, 0, sizeof ranks);
  for (int r = 0; r < W; r++) {
    ranks[r].rank = r;
    snprintf(ranks[r].host, sizeof ranks[r].host, "node%d", r);
    ranks[r].gemm_tflops = 100 + 20 * r; /* median 110 */
    ranks[r].checksum = 0xabcdef;
    ranks[r].checksum_valid = 1;
  }
  bucket_plan plan = {0};
  size_t counts[3] = {1000, 3000, 3000};
  CHECK(bucket_plan_build(&plan, counts, 3, 4, 4000, 4000) == DDP_OK, "plan"); /* [1000] [3000] [3000] */
  CHECK(plan.nbuckets == 3, "3 buckets");

  /* Step times (ms): rank 1 is slower in local; the slowest rank per step is what counts. */
  double local_ms[W * S] = {10, 10, 10, 10, 11, 12, 13, 14};
  double comm_ms[W * S] = {4, 4, 4, 4, 4, 4, 4, 4};
  double ddp_ms[W * S] = {12, 12, 12, 12, 12, 12, 12, 12};
  double compute[W * S] = {9, 9, 9, 9, 10, 10, 10, 10};
  double nan_ms[W * S];
  for (int i = 0; i < W * S; i++) nan_ms[i] = NAN;
  double bucket_ms[W * S * 3];
  for (int r = 0; r < W; r++)
    for (int s = 0; s < S; s++) {
      bucket_ms[(r * S + s) * 3 + 0] = 0.004; /* 4000 B in 4 us */
      bucket_ms[(r * S + s) * 3 + 1] = 0.010; /* 12000 B in 10 us */
      bucket_ms[(r * S + s) * 3 + 2] = 0.014; /* 12000 B in 14 us */
    }
  double loss[S + 1] = {5, 4, 3, 3, 2};
  float scale[S + 1] = {8, 8, 8, 4, 4};
  int skipped[S + 1] = {0, 0, 1, 0, 0};

  run_report rep;
  memset(&rep, 0, sizeof rep);
  rep.cfg = &cfg;
  rep.world = W;
  rep.nodes = 2;
  rep.device = "cpu";
  rep.comm = "mpi";
  rep.ranks = ranks;
  rep.plan = &plan;
  rep.comm_bytes = 7000 * 4;
  rep.comm_type = DT_F32;
  rep.flops_per_step = 2e9;
  rep.table_peak_tflops = 1000;
  snprintf(rep.start_time, sizeof rep.start_time, "2026-11-29T00:00:00Z");
  phase_data *lo = &rep.phases[PHASE_LOCAL], *cm = &rep.phases[PHASE_COMM], *dd = &rep.phases[PHASE_DDP];
  *lo = (phase_data){1, 1, S, 3, local_ms, compute, bucket_ms, loss, scale, skipped, 0};
  *cm = (phase_data){1, 1, S, 3, comm_ms, nan_ms, bucket_ms, NULL, NULL, NULL, 0};
  *dd = (phase_data){1, 1, S, 3, ddp_ms, compute, bucket_ms, loss, scale, skipped, 0};

  run_summary s;
  CHECK(report_summarize(&rep, &s) == DDP_OK, "summarize");
  CHECK(near(s.ph[PHASE_LOCAL].step.median, 12.5), "local median of per-step max (11,12,13,14): %g", s.ph[PHASE_LOCAL].step.median);
  CHECK(near(s.ph[PHASE_LOCAL].step.min, 11) && near(s.ph[PHASE_LOCAL].step.max, 14), "min/max over the slowest rank");
  CHECK(near(s.ph[PHASE_LOCAL].rank_step[0].median, 10), "rank 0's own median");
  CHECK(near(s.ph[PHASE_LOCAL].samples_per_s, 200 / 0.0125), "samples/s = global batch / median");
  CHECK(near(s.ph[PHASE_LOCAL].tflops_per_rank, 2e9 / 0.0125 / 1e12), "TFLOP/s per rank");
  CHECK(near(s.measured_peak_tflops, 110), "measured peak = median over ranks");
  CHECK(near(s.ph[PHASE_LOCAL].mfu_measured, 0.16 / 110) && near(s.ph[PHASE_LOCAL].mfu_table, 0.16 / 1000), "MFU");
  CHECK(s.ph[PHASE_LOCAL].slowest_rank == 1, "slowest rank by compute time");
  CHECK(near(s.scaling_efficiency, 12.5 / 12), "efficiency = local / ddp");
  /* ddp (12) is 0.5 ms faster than local (12.5), inside the step times' spread (local p10-p90 2.4 ms): no
   * exposed communication, all of it hidden, never "hidden 112 %". */
  CHECK(near(s.exposed_comm_ms, 0) && near(s.hidden_fraction, 1) && !s.overlap_why[0],
        "exposed clamped to 0 within noise: %g %g", s.exposed_comm_ms, s.hidden_fraction);
  {
    run_summary t;
    double slow[W * S] = {20, 20, 20, 20, 20, 20, 20, 20}, mid[W * S] = {14, 14, 14, 14, 14, 14, 14, 14};
    dd->step_ms = mid; /* 14 - 12.5 = 1.5 of comm 4: exposed 1.5, hidden 62.5 % */
    CHECK(report_summarize(&rep, &t) == DDP_OK && near(t.exposed_comm_ms, 1.5) && near(t.hidden_fraction, 1 - 1.5 / 4),
          "exposed = ddp - local, hidden = 1 - exposed / comm: %g %g", t.exposed_comm_ms, t.hidden_fraction);
    report_summary_free(&t);
    dd->step_ms = slow; /* 20 > 12.5 + 4 + spread: contention, the measurement cannot tell */
    CHECK(report_summarize(&rep, &t) == DDP_OK && isnan(t.exposed_comm_ms) && isnan(t.hidden_fraction) &&
              strstr(t.overlap_why, "longer than local + comm"),
          "ddp beyond local + comm: cannot tell, and says why: %s", t.overlap_why);
    report_summary_free(&t);
    /* a ddp step faster than the local one beyond the spread: the efficiency cannot tell (never "140 %") */
    double fast[W * S] = {9, 9, 9, 9, 9, 9, 9, 9};
    dd->step_ms = fast;
    CHECK(report_summarize(&rep, &t) == DDP_OK && isnan(t.scaling_efficiency) && strstr(t.why_efficiency, "cannot tell"),
          "efficiency above 100 %% beyond noise: none, with the reason: %g %s", t.scaling_efficiency, t.why_efficiency);
    report_summary_free(&t);
    dd->step_ms = ddp_ms;
  }
  /* Figures that are not defined are NaN with the reason: samples/s of the comm phase; MFU above its
   * peak (a wrong peak), with a warning; on 1 rank the efficiency (100 % by definition: the DDP overhead is
   * given instead) and every bandwidth (no data moves between ranks). */
  CHECK(isnan(s.ph[PHASE_COMM].samples_per_s) && report_phase_why(&s, PHASE_COMM, "samples_per_s") &&
            !report_phase_why(&s, PHASE_LOCAL, "samples_per_s"),
        "the comm phase has no samples/s, and says why");
  CHECK(near(s.efficiency_noise, (2.4 + 0) / 12) && isnan(s.ddp_overhead_ms),
        "the efficiency's noise: the step times' spread over the ddp median: %g", s.efficiency_noise);
  {
    run_summary t;
    finding_list pf;
    findings_init(&pf);
    rep.table_peak_tflops = cfg.peak_tflops = 0.1; /* the step does 0.16 TFLOP/s */
    CHECK(report_summarize(&rep, &t) == DDP_OK && isnan(t.ph[PHASE_LOCAL].mfu_table) &&
              strstr(t.ph[PHASE_LOCAL].why_mfu_table, "above the given peak of 0.1 TFLOP/s") &&
              near(t.ph[PHASE_LOCAL].mfu_measured, 0.16 / 110),
          "MFU above the given peak: none, with the reason: %s", t.ph[PHASE_LOCAL].why_mfu_table);
    CHECK(report_findings(&rep, &t, &pf) == DDP_OK, "findings with a wrong peak");
    int peak = 0;
    for (int i = 0; i < pf.n; i++) peak += !strcmp(pf.v[i].check, "peak") && pf.v[i].severity == SEV_WARN;
    CHECK(peak == 2, "a wrong peak warns, once per phase: %d", peak);
    findings_free(&pf);
    report_summary_free(&t);
    rep.table_peak_tflops = 0, cfg.peak_tflops = 0;
    CHECK(report_summarize(&rep, &t) == DDP_OK && isnan(t.ph[PHASE_DDP].mfu_table) &&
              strstr(report_phase_why(&t, PHASE_DDP, "mfu_table_peak"), "no datasheet peak"),
          "no peak known: no MFU, with the reason");
    report_summary_free(&t);
    rep.table_peak_tflops = 1000;
    rep.world = 1;
    CHECK(report_summarize(&rep, &t) == DDP_OK, "summarize 1 rank");
    CHECK(isnan(t.scaling_efficiency) && strstr(t.why_efficiency, "1 rank: 100 % by definition") &&
              near(t.ddp_overhead_ms, 2),
          "1 rank: no efficiency, the DDP overhead (12 - 10 ms) instead: %g, %s", t.ddp_overhead_ms, t.why_efficiency);
    CHECK(isnan(t.ph[PHASE_COMM].busbw) && isnan(t.ph[PHASE_COMM].algbw) && isnan(t.ph[PHASE_COMM].rows[0].algbw) &&
              isnan(t.ph[PHASE_DDP].rows[0].busbw) && near(t.ph[PHASE_COMM].rows[0].time_us, 4) &&
              strstr(report_phase_why(&t, PHASE_COMM, "busbw_gbs"), "1 rank"),
          "1 rank: no bandwidth (times kept), with the reason");
    report_summary_free(&t);
    rep.world = W;
  }
  CHECK(near(s.ph[PHASE_COMM].algbw, 28000 / 0.004 / 1e9) && near(s.ph[PHASE_COMM].busbw, 28000 / 0.004 / 1e9),
        "comm phase bandwidth (2 ranks: busbw = algbw)");
  CHECK(s.ph[PHASE_COMM].nrows == 2, "two distinct bucket sizes: %d", s.ph[PHASE_COMM].nrows);
  CHECK(s.ph[PHASE_COMM].rows[1].nbuckets == 2 && near(s.ph[PHASE_COMM].rows[1].time_us, 12),
        "buckets of one size are averaged (10 and 14 us -> 12)");
  CHECK(near(s.ph[PHASE_COMM].rows[0].algbw, 4000 / 4e-6 / 1e9), "algbw of the small bucket");
  CHECK(s.ph[PHASE_DDP].skipped_steps == 1 && near(s.ph[PHASE_DDP].final_scale, 4), "skipped steps and scale");
  CHECK(s.weights_identical == 1 && s.nmismatch == 0, "identical checksums");
  CHECK(near(busbw_factor(8), 1.75) && busbw_factor(1) == 0, "busbw factor 2(n-1)/n");
  CHECK(peak_table_tflops("NVIDIA H200", "bf16") > 989 && peak_table_tflops("NVIDIA H200", "bf16") < 990,
        "H200 bf16 table peak");
  CHECK(peak_table_tflops("NVIDIA H100 PCIe", "bf16") == 0 && peak_table_tflops("cpu", "fp32") == 0,
        "unknown parts give 0, never a guess");

  /* Findings: identical weights are information; rank 1's local compute (10 ms every step) is above rank 0's
   * p90 (9 ms) in every step, but 4 timed steps are too short to judge (the rule needs 10; test_straggler has
   * the warning beyond noise on 10 steps): information; exit code 0 (no fail). */
  finding_list fl;
  findings_init(&fl);
  CHECK(report_findings(&rep, &s, &fl) == DDP_OK, "findings");
  int warn_slowest = 0, info_weights = 0;
  for (int i = 0; i < fl.n; i++) {
    warn_slowest += strcmp(fl.v[i].check, "slowest_rank") == 0 && fl.v[i].severity == SEV_INFO &&
                    strstr(fl.v[i].subject, "rank 1") != NULL && strstr(fl.v[i].text, "too short to judge");
    info_weights += strcmp(fl.v[i].check, "weights") == 0 && fl.v[i].severity == SEV_INFO;
  }
  CHECK(warn_slowest == 2 && info_weights == 1 && findings_exit_code(&fl) == 0, "4 steps: too short to judge, information: %d %d",
        warn_slowest, info_weights);
  findings_free(&fl);
  {
    double close_c[W * S] = {9, 10, 9, 10, 9.5, 9.6, 9.4, 9.5}; /* rank 1 slower in median, inside rank 0's spread */
    double *saved = lo->compute_ms;
    lo->compute_ms = close_c;
    dd->present = 0;
    run_summary t;
    findings_init(&fl);
    CHECK(report_summarize(&rep, &t) == DDP_OK && report_findings(&rep, &t, &fl) == DDP_OK, "findings, close ranks");
    CHECK(fl.n == 1 && fl.v[0].severity == SEV_INFO && strstr(fl.v[0].text, "too short to judge"),
          "ranks within noise: information, not a problem: %s", fl.n ? fl.v[0].text : "none");
    findings_free(&fl);
    ranks[1].checksum ^= 1;
    dd->present = 1;
    report_summary_free(&t);
    CHECK(report_summarize(&rep, &t) == DDP_OK && report_findings(&rep, &t, &fl) == DDP_OK, "findings, weights differ");
    CHECK(findings_exit_code(&fl) == DDP_EXIT_CHECK && findings_count(&fl, SEV_FAIL) == 2,
          "differing weights (a tie of 2: both named) fail the run with exit code 1");
    findings_free(&fl);
    report_summary_free(&t);
    ranks[1].checksum ^= 1;
    lo->compute_ms = saved;
  }

  /* JSON: write atomically, read back. */
  char dir[] = "/tmp/ddpbench-test-report-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "tmpdir");
  char path[256];
  snprintf(path, sizeof path, "%s/run.json", dir);
  /* The document as the skeleton writes it: provenance (here: ranks and config by hand), the run's records
   * and sections. */
  result_doc m;
  result_init(&m);
  m.world_size = W;
  m.nodes = W;
  m.nranks = W;
  m.ranks = calloc(W, sizeof *m.ranks);
  for (int r = 0; r < W; r++) {
    m.ranks[r].rank = r;
    m.ranks[r].host = strdup(ranks[r].host);
    m.ranks[r].ordinal = -1;
  }
  const char *key;
  char value[1100];
  for (int i = 0; config_key_at(&cfg, i, &key, value, sizeof value); i++) result_kv_push(&m.config, &m.nconfig, key, value);
  CHECK(report_doc_fill(&rep, &s, &m) == DDP_OK, "the document's records");
  cJSON *doc = report_sections(&rep, &s);
  CHECK(doc != NULL, "the document's sections");
  /* The records made from the summary are the records the reader derives from the "phases" section (the
   * mapping of version 1 files): record for record, value for value. */
  {
    result_doc v1;
    result_init(&v1);
    v1.nranks = W;
    v1.world_size = W;
    v1.ranks = m.ranks;
    for (int r = 0; r < W; r++) m.ranks[r].gemm_tflops = ranks[r].gemm_tflops;
    char why[300] = "";
    CHECK(result_records_from_phases(doc, "world", &v1, why, sizeof why) == DDP_OK, "v1 mapping: %s", why);
    v1.ranks = NULL;
    v1.nranks = 0;
    CHECK(v1.nrecords == m.nrecords, "as many records directly (%d) as through the phases section (%d)", m.nrecords,
          v1.nrecords);
    int same = 0;
    for (int i = 0; i < v1.nrecords && i < m.nrecords; i++) {
      const result_record *a = &m.records[i], *b = &v1.records[i];
      int eq = !strcmp(a->measurement, b->measurement) && !strcmp(a->group, b->group) && !strcmp(a->metric, b->metric) &&
               !strcmp(a->unit, b->unit) && a->better == b->better && a->nlabels == b->nlabels &&
               a->has_stats == b->has_stats && a->nsamples == b->nsamples &&
               ((isnan(a->value) && isnan(b->value)) || a->value == b->value) &&
               (a->why ? b->why && !strcmp(a->why, b->why) : !b->why);
      for (int k = 0; eq && k < a->nlabels; k++)
        eq = !strcmp(a->labels[k].key, b->labels[k].key) && !strcmp(a->labels[k].value, b->labels[k].value);
      for (int k = 0; eq && k < a->nsamples; k++)
        eq = (isnan(a->samples[k]) && isnan(b->samples[k])) || a->samples[k] == b->samples[k];
      if (eq && a->has_stats) eq = a->stats.n == b->stats.n && (a->stats.p90 == b->stats.p90 || isnan(a->stats.p90));
      if (!eq) fprintf(stderr, "record %d differs: %s/%s/%s\n", i, a->measurement, a->metric, b->metric);
      same += eq;
    }
    CHECK(same == m.nrecords && same > 10, "%d of %d records the same both ways", same, m.nrecords);
    const result_record *sps = result_find(&m, "comm", "world", "samples_per_s", NULL);
    CHECK(sps && isnan(sps->value) && sps->why && strstr(sps->why, "no samples"), "the record says why it has no value");
    result_free(&v1);
  }
  char *text = NULL;
  CHECK(outputs_json_text(&m, doc, &text) == DDP_OK && text, "json");
  result_free(&m);
  CHECK(atomic_file_write(path, text, strlen(text), 0) == DDP_OK, "write");
  static char buf[1 << 20];
  tl_file_read(path, buf, sizeof buf);
  cJSON *back = cJSON_Parse(buf);
  CHECK(back != NULL, "parses back");
  if (back) {
    CHECK(cJSON_GetObjectItem(back, "schema_version")->valueint == RESULT_SCHEMA_VERSION, "schema_version");
    CHECK(cJSON_GetObjectItem(back, "world_size")->valueint == W, "world_size");
    cJSON *ph = cJSON_GetObjectItem(back, "phases");
    cJSON *ddp = cJSON_GetObjectItem(ph, "ddp");
    CHECK(ddp && near(cJSON_GetObjectItem(cJSON_GetObjectItem(ddp, "step_ms"), "median")->valuedouble, 12), "ddp median");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(ddp, "loss")) == S + 1, "loss has warmup + steps entries");
    cJSON *sk = cJSON_GetObjectItem(ddp, "skipped_steps");
    CHECK(cJSON_GetArraySize(sk) == 1 && cJSON_GetArrayItem(sk, 0)->valueint == 2, "skipped step list");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(ddp, "loss_scale")) == S + 1, "loss_scale per step");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(back, "weights_identical")), "weights_identical");
    CHECK(near(cJSON_GetObjectItem(back, "scaling_efficiency")->valuedouble, 12.5 / 12), "efficiency");
    cJSON *conf = cJSON_GetObjectItem(back, "config");
    CHECK(cJSON_GetObjectItem(conf, "bucket_mb")->valuedouble == 25 &&
              strcmp(cJSON_GetObjectItem(conf, "precision")->valuestring, "fp16") == 0 &&
              cJSON_IsFalse(cJSON_GetObjectItem(conf, "gradient_as_bucket_view")),
          "config: every effective setting with its type");
    cJSON *comm = cJSON_GetObjectItem(ph, "comm");
    CHECK(cJSON_GetObjectItem(comm, "loss") == NULL, "the comm phase has no loss");
    CHECK(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(comm, "per_rank"), 0), "compute_ms") == NULL,
          "unmeasured compute time is absent, not a number");
    cJSON_Delete(back);
  }
  /* Never overwritten silently. */
  CHECK(atomic_file_write(path, "{}", 2, 0) == DDP_ERR_USAGE, "existing file refused without force");
  CHECK(tl_file_read(path, buf, sizeof buf) > 2, "the first document is still there");
  CHECK(atomic_file_write(path, "{}", 2, 1) == DDP_OK, "force replaces it");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
  FILE *p = popen(cmd, "r");
  int files = 0;
  if (p && fscanf(p, "%d", &files) != 1) files = -1;
  if (p) pclose(p);
  CHECK(files == 1, "no temporary file left behind (%d entries)", files);
  snprintf(cmd, sizeof cmd, "%s/no-such-dir/run.json", dir);
  CHECK(atomic_file_write(cmd, "{}", 2, 0) == DDP_ERR_SYSTEM, "unwritable place is an error");
  free(text);
  cJSON_Delete(doc);

  /* The findings warn when the loss diverged or fp16 skipped most timed updates; a loss that is still not
   * finite at the last step fails the run (exit 5); one that recovered is a warning. */
  {
    double recovered[S + 1] = {5, 4, NAN, 3, 2};
    rep.phases[PHASE_DDP].loss = recovered;
    finding_list rl;
    findings_init(&rl);
    CHECK(report_findings(&rep, &s, &rl) == DDP_OK, "findings");
    int warn = 0;
    for (int i = 0; i < rl.n; i++) warn |= !strcmp(rl.v[i].check, "loss") && rl.v[i].severity == SEV_WARN;
    CHECK(warn && findings_exit_code(&rl) == DDP_EXIT_OK, "a loss that recovered: warning, exit 0");
    findings_free(&rl);
    double bad_loss[S + 1] = {5, 4, NAN, NAN, NAN};
    int all_skipped[S + 1] = {1, 1, 1, 1, 1};
    rep.phases[PHASE_DDP].loss = bad_loss;
    rep.phases[PHASE_DDP].skipped = all_skipped;
    char *txt = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&txt, &len);
    finding_list dl;
    findings_init(&dl);
    CHECK(report_findings(&rep, &s, &dl) == DDP_OK, "findings");
    findings_print(mf, &dl);
    fclose(mf);
    CHECK(txt && strstr(txt, "fail  nonfinite") && strstr(txt, "ddp loss is not finite at the last step (4; from step 2"),
          "a loss still NaN at the end fails: %s", txt ? txt : "");
    CHECK(findings_exit_code(&dl) == DDP_EXIT_NONFINITE, "exit code 5 for non-finite results");
    CHECK(txt && strstr(txt, "ddp skipped the update in 4 of 4 timed steps"), "skipped-steps warning");
    CHECK(txt && !strstr(txt, "local loss"), "no warning for the healthy phase");
    findings_free(&dl);
    free(txt);
    rep.phases[PHASE_DDP].loss = loss;
    rep.phases[PHASE_DDP].skipped = skipped;
  }

  /* A rank with different weights is named. */
  ranks[1].checksum = 0x1234;
  rank_info three[3];
  memcpy(three, ranks, sizeof ranks);
  three[2] = ranks[0];
  three[2].rank = 2;
  rep.ranks = three;
  rep.world = 3;
  run_summary s3;
  double ms3[3 * S], b3[3 * S * 3];
  for (int i = 0; i < 3 * S; i++) ms3[i] = 1;
  for (int i = 0; i < 3 * S * 3; i++) b3[i] = 0.01;
  for (int p2 = 0; p2 < PHASE_COUNT; p2++) {
    rep.phases[p2].step_ms = ms3;
    rep.phases[p2].compute_ms = ms3;
    rep.phases[p2].bucket_ms = b3;
  }
  CHECK(report_summarize(&rep, &s3) == DDP_OK, "summarize 3 ranks");
  CHECK(s3.weights_identical == 0 && s3.nmismatch == 1 && s3.mismatch[0] == 1, "the odd rank out is named");
  report_summary_free(&s3);
  report_summary_free(&s);

  CHECK(result_env_allowed("NCCL_ALGO") && result_env_allowed("CUDA_VISIBLE_DEVICES") &&
            result_env_allowed("OMPI_MCA_btl") && result_env_allowed("UCX_TLS") &&
            result_env_allowed("SLURM_JOB_ID") && result_env_allowed("DDPBENCH_X"),
        "allowlisted names");
  CHECK(!result_env_allowed("AWS_SECRET_ACCESS_KEY") && !result_env_allowed("HOME") &&
            !result_env_allowed("SLURM_JOB_ACCOUNT") && !result_env_allowed("PATH"),
        "everything else stays out");
  bucket_plan_free(&plan);
  tl_rmtree(dir);
  test_fsdp_report();
  test_bottom_scaling();
  test_accept_bottom_no_host();
  return check_summary();
}
