/* summary.c: every figure derived from what the ranks measured in the training phases (report_summarize:
 * step-time statistics per rank and across ranks, throughput, model TFLOP/s, MFU, scaling efficiency, exposed
 * and hidden communication, allreduce bandwidth), the records made from them directly, and the "phases"
 * section of the JSON document. Arithmetic and formatting on gathered results: nothing here measures or
 * communicates, so that the human summary, the JSON and the records can never disagree. */
#include "summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int report_peak_sustained(const run_report *r) {
  return r->cfg && r->cfg->peak_seconds > 0 && r->device_is_gpu;
}

double busbw_factor(int world) { return world > 1 ? 2.0 * (world - 1) / world : 0.0; }

double busbw_factor_gather(int world) { return world > 1 ? (double)(world - 1) / world : 0.0; }

double row_bus_factor(const allreduce_row *row, int world) {
  int ar = !strcmp(row->kind, "allreduce") || !strcmp(row->kind, "all_reduce");
  return ar ? busbw_factor(world) : busbw_factor_gather(world);
}

int report_train_phase(const run_report *r) { return phase_train(r->cfg ? (ddp_strategy)r->cfg->strategy : STRATEGY_DDP); }

#define ONE_RANK_BW "1 rank: the allreduce moves no data between ranks"

const char *report_phase_why(const run_summary *s, int p, const char *metric) {
  const phase_summary *ps = &s->ph[p];
  const char *w = !strcmp(metric, "samples_per_s")       ? ps->why_samples
                  : !strcmp(metric, "mfu_table_peak")    ? ps->why_mfu_table
                  : !strcmp(metric, "mfu_measured_peak") ? ps->why_mfu_measured
                  : strstr(metric, "bw_gbs")             ? ps->why_bw
                                                         : "";
  return *w ? w : NULL;
}

double report_spread(const ddp_stats *a, const ddp_stats *b) { return (a->p90 - a->p10) + (b->p90 - b->p10); }

/* The reason MFU against peak (the datasheet's, or --peak-tflops when `given`) is not given, or "" when it is:
 * no peak, or a ratio above 1 (the peak is wrong for this device). */
static void mfu_why(double tflops, double peak, int given, char *why, size_t n) {
  why[0] = 0;
  if (!(peak > 0))
    snprintf(why, n, "no datasheet peak is known for this device and precision (give it with --peak-tflops)");
  else if (tflops > peak)
    snprintf(why, n, "%.4g TFLOP/s is above the %s peak of %.4g TFLOP/s, so that peak is wrong for this device%s", tflops,
             given ? "given" : "datasheet", peak, given ? " (--peak-tflops)" : " (give the right one with --peak-tflops)");
}

/* Why bucket row k's figures are not given: its own reason (above the plausibility bound: time, algbw and
 * busbw), else why its algbw and busbw are not (its time is), or NULL. */
static const char *row_why(const run_summary *s, int p, int k) {
  const allreduce_row *row = &s->ph[p].rows[k];
  if (row->why[0]) return row->why;
  return isnan(row->time_us) ? NULL : report_phase_why(s, p, "allreduce_busbw_gbs");
}

/* ---- figures ------------------------------------------------------------------------------------ */
static double median_of(double *x, int n) { return stats_percentile(x, n, 0.5); }

/* Each row's time, algbw and busbw from the calls of that row (row_of[b] for timed call b): the median over steps
 * of the mean over ranks and calls. */
static void rows_time(const run_report *r, const phase_data *pd, phase_summary *ps, const int *row_of, double *per_step) {
  int nb = pd->nbuckets, W = r->world, S = pd->steps;
  for (int k = 0; k < ps->nrows; k++) {
    allreduce_row *row = &ps->rows[k];
    int valid = 1;
    for (int s = 0; s < S; s++) {
      double sum = 0;
      int n = 0;
      for (int rk = 0; rk < W; rk++)
        for (int b = 0; b < nb; b++)
          if (row_of[b] == k) {
            double t = pd->bucket_ms[((size_t)rk * S + s) * nb + b];
            if (isnan(t)) valid = 0;
            sum += t;
            n++;
          }
      per_step[s] = sum / n;
    }
    if (!valid) {
      row->time_us = row->algbw = row->busbw = NAN;
      continue;
    }
    row->time_us = median_of(per_step, S) * 1e3;
    row->algbw = W > 1 ? (double)row->bytes / (row->time_us * 1e-6) / 1e9 : NAN; /* ps->why_bw says why */
    row->busbw = row->algbw * row_bus_factor(row, W); /* nccl-tests' factor of the row's kind */
    /* Faster than any link of the device: a timing artefact, never a figure (not in compare, the plots, the
     * prom or the CSV; report_findings tells it). */
    if (r->link_gbs > 0 && row->algbw > r->link_gbs) {
      row->implausible_gbs = row->algbw;
      snprintf(row->why, sizeof row->why, "%zu bytes in %.3g us (algbw %.4g GB/s) is above this device's plausibility "
               "bound of %.4g GB/s (%.200s): a timing artefact, not a measurement of the link", row->bytes, row->time_us,
               row->algbw, r->link_gbs, r->link_why);
      row->time_us = row->algbw = row->busbw = NAN;
    }
  }
}

/* ddp: one row per distinct bucket size, in bucket order; fsdp: one row per kind of collective, in the order the
 * kinds first appear in the step. */
static ddp_result summarize_allreduce(const run_report *r, const phase_data *pd, phase_summary *ps) {
  int nb = pd->nbuckets, S = pd->steps;
  size_t es = dtype_size(r->comm_type);
  ps->rows = calloc((size_t)(nb > 0 ? nb : 1), sizeof *ps->rows);
  double *per_step = malloc((size_t)(S > 0 ? S : 1) * sizeof(double));
  int *row_of = malloc((size_t)(nb > 0 ? nb : 1) * sizeof(int));
  if (!ps->rows || !per_step || !row_of) {
    free(per_step);
    free(row_of);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  static const char *const names[] = {[FSDP_ALL_GATHER] = "all_gather", [FSDP_REDUCE_SCATTER] = "reduce_scatter",
                                      [FSDP_ALL_REDUCE] = "all_reduce"};
  const fsdp_layer *ly = r->fsdp ? &r->fsdp->layers[0] : NULL;
  for (int b = 0; b < nb; b++) {
    allreduce_row want = {0};
    if (r->fsdp) {
      fsdp_coll_kind k = r->slots[b];
      want.kind = names[k];
      want.dt = k == FSDP_ALL_GATHER ? r->fsdp->args.param_dtype : k == FSDP_REDUCE_SCATTER ? r->fsdp->args.reduce_dtype : DT_I32;
      want.count = k == FSDP_ALL_GATHER ? ly->ag_out : k == FSDP_REDUCE_SCATTER ? ly->rs_in : 1;
    } else {
      want.kind = "allreduce";
      want.dt = r->comm_type;
      want.count = r->plan->buckets[b].count;
    }
    want.bytes = want.count * (r->fsdp ? dtype_size(want.dt) : es);
    int k = 0;
    while (k < ps->nrows && (ps->rows[k].bytes != want.bytes || strcmp(ps->rows[k].kind, want.kind))) k++;
    if (k == ps->nrows) ps->rows[ps->nrows++] = want;
    ps->rows[k].nbuckets++;
    row_of[b] = k;
  }
  rows_time(r, pd, ps, row_of, per_step);
  free(per_step);
  free(row_of);
  return DDP_OK;
}

/* Exposed communication is what a ddp step costs beyond a local step, ddp - local; hidden is the share of
 * the comm phase's time that did not show, 1 - exposed / comm. Both mean something only when
 * local <= ddp <= local + comm: a ddp step can neither beat training without communication nor take longer
 * than doing both in turn, unless the two slow each other down (contention for cores, memory or links) or
 * the timings are noise. Within the spread of the step times (p10 to p90 of both phases) the figure is
 * clamped to its range; beyond it, or when the spread is as large as the comm phase itself, the measurement
 * cannot tell and both are NaN with the reason in overlap_why. */
static void overlap(run_summary *s, const ddp_stats *comm, const ddp_stats *local, const ddp_stats *ddp, const char *tn) {
  double ex = ddp->median - local->median;
  double spread = report_spread(local, ddp);
  if (!comm) { /* no comm phase: exposed only, and only when it is not negative beyond noise */
    if (ex < -spread) {
      snprintf(s->overlap_why, sizeof s->overlap_why, "the %s step (%.3f ms) is faster than the local step (%.3f ms) by more than the step times vary", tn, ddp->median, local->median);
      return;
    }
    s->exposed_comm_ms = fmax(ex, 0);
    return;
  }
  double c = comm->median;
  if (spread >= c) {
    snprintf(s->overlap_why, sizeof s->overlap_why,
             "the step times vary by %.3f ms (p10 to p90 of local and %s), as much as the comm phase takes (%.3f ms)", spread, tn, c);
    return;
  }
  if (ex < 0 && ex >= -spread) ex = 0;
  if (ex > c && ex <= c + spread) ex = c;
  if (ex < 0) {
    snprintf(s->overlap_why, sizeof s->overlap_why,
             "the %s step (%.3f ms) is faster than the local step (%.3f ms) beyond the step times' spread", tn, ddp->median, local->median);
    return;
  }
  if (ex > c) {
    snprintf(s->overlap_why, sizeof s->overlap_why,
             "the %s step (%.3f ms) is %.3f ms longer than local + comm (%.3f ms): overlapping slowed compute or "
             "communication (contention for cores, memory or links)", tn, ddp->median, ex - c, local->median + c);
    return;
  }
  s->exposed_comm_ms = ex;
  s->hidden_fraction = c > 0 ? 1 - ex / c : NAN;
}

/* Weak-scaling efficiency, local / ddp. On 1 rank it is 100 % by definition, so not a measurement: the figure
 * there is the DDP overhead, ddp - local. Above 100 % (a ddp step faster than a local one) it is noise at best:
 * within the step times' spread (as overlap() measures it) it is given with that noise; beyond it the
 * measurement cannot tell. */
static void efficiency(run_summary *s, int W, const ddp_stats *local, const ddp_stats *ddp, const char *tn) {
  double spread = report_spread(local, ddp);
  if (W == 1) {
    s->ddp_overhead_ms = ddp->median - local->median;
    snprintf(s->why_efficiency, sizeof s->why_efficiency,
             "1 rank: 100 %% by definition; the DDP overhead there, %s - local, is %.3f ms, step times' spread %.3f ms", tn, s->ddp_overhead_ms, spread);
    return;
  }
  if (!(ddp->median > 0)) return;
  if (local->median - ddp->median > spread) {
    snprintf(s->why_efficiency, sizeof s->why_efficiency,
             "cannot tell: the %s step (%.3f ms) is faster than the local step (%.3f ms) beyond the step times' "
             "spread (%.3f ms)", tn, ddp->median, local->median, spread);
    return;
  }
  s->scaling_efficiency = local->median / ddp->median;
  s->efficiency_noise = spread / ddp->median;
}

ddp_result report_summarize(const run_report *r, run_summary *s) {
  memset(s, 0, sizeof *s);
  int W = r->world;
  double *peaks = malloc((size_t)W * sizeof(double));
  DDP_CHECK_ALLOC(peaks);
  for (int i = 0; i < W; i++) peaks[i] = r->ranks[i].gemm_tflops;
  s->measured_peak_tflops = median_of(peaks, W);
  free(peaks);

  for (int p = 0; p < PHASE_COUNT; p++) {
    const phase_data *pd = &r->phases[p];
    phase_summary *ps = &s->ph[p];
    if (!pd->present) continue;
    ps->present = 1;
    int S = pd->steps;
    double *agg = malloc((size_t)S * sizeof(double));
    double *med = malloc((size_t)W * sizeof(double));
    ps->rank_step = calloc((size_t)W, sizeof(ddp_stats));
    ps->rank_compute = calloc((size_t)W, sizeof(ddp_stats));
    if (!agg || !med || !ps->rank_step || !ps->rank_compute) {
      free(agg);
      free(med);
      return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    }
    for (int st = 0; st < S; st++) {
      agg[st] = 0;
      for (int rk = 0; rk < W; rk++) agg[st] = fmax(agg[st], pd->step_ms[(size_t)rk * S + st]);
    }
    ps->step = stats_compute(agg, S);
    int have_compute = 1;
    for (int rk = 0; rk < W; rk++) {
      ps->rank_step[rk] = stats_compute(pd->step_ms + (size_t)rk * S, S);
      const double *c = pd->compute_ms + (size_t)rk * S;
      int n = 0;
      for (int st = 0; st < S; st++) n += !isnan(c[st]);
      if (n == S) {
        ps->rank_compute[rk] = stats_compute(c, S);
      } else {
        ps->rank_compute[rk].n = 0;
        have_compute = 0;
      }
    }
    for (int rk = 0; rk < W; rk++) med[rk] = have_compute ? ps->rank_compute[rk].median : ps->rank_step[rk].median;
    ps->slowest_rank = 0;
    for (int rk = 1; rk < W; rk++)
      if (med[rk] > med[ps->slowest_rank]) ps->slowest_rank = rk;
    double mm = median_of(med, W);
    ps->slowest_excess = mm > 0 ? med[ps->slowest_rank] / mm - 1.0 : 0;
    free(agg);
    free(med);

    double sec = ps->step.median * 1e-3;
    ps->samples_per_s = ps->tflops_per_rank = ps->mfu_measured = ps->mfu_table = ps->algbw = ps->busbw = NAN;
    if (W == 1)
      snprintf(ps->why_bw, sizeof ps->why_bw, "%s", r->fsdp ? "1 rank: FSDP's all-gathers and reduce-scatters are "
                                                              "copies that move no data between ranks" : ONE_RANK_BW);
    if (p != PHASE_COMM) {
      ps->samples_per_s = (double)r->cfg->batch * W / sec;
      ps->tflops_per_rank = r->flops_per_step / sec / 1e12;
      /* MFU: against the datasheet dense peak of the precision (or the one given); above it, the peak is wrong */
      mfu_why(ps->tflops_per_rank, r->table_peak_tflops, r->cfg->peak_tflops > 0, ps->why_mfu_table,
              sizeof ps->why_mfu_table);
      if (!ps->why_mfu_table[0]) ps->mfu_table = ps->tflops_per_rank / r->table_peak_tflops;
      /* the ratio to the run's own GEMM: above 1 when the step runs at higher clocks than that GEMM did */
      if (s->measured_peak_tflops > 0) ps->mfu_measured = ps->tflops_per_rank / s->measured_peak_tflops;
      else snprintf(ps->why_mfu_measured, sizeof ps->why_mfu_measured, "no GEMM peak was measured");
    } else {
      snprintf(ps->why_samples, sizeof ps->why_samples, "the comm phase trains on no samples: it times the %s alone",
               r->fsdp ? "all-gathers and reduce-scatters" : "allreduces");
      if (W > 1) {
        ps->algbw = r->comm_bytes / sec / 1e9;
        ps->busbw = ps->algbw * (r->fsdp ? busbw_factor_gather(W) : busbw_factor(W));
      }
    }
    if (p != PHASE_LOCAL) DDP_TRY(summarize_allreduce(r, pd, ps));
    if (pd->skipped) {
      int total = pd->warmup + pd->steps;
      for (int st = 0; st < total; st++) ps->skipped_steps += pd->skipped[st] != 0;
      ps->final_scale = pd->scale[total - 1];
    }
  }

  const phase_summary *lo = &s->ph[PHASE_LOCAL], *cm = &s->ph[PHASE_COMM], *dd = &s->ph[report_train_phase(r)];
  s->scaling_efficiency = s->efficiency_noise = s->ddp_overhead_ms = NAN;
  if (lo->present && dd->present) efficiency(s, W, &lo->step, &dd->step, phase_name((ddp_phase)report_train_phase(r)));
  s->exposed_comm_ms = s->hidden_fraction = NAN;
  if (lo->present && dd->present && W > 1) overlap(s, cm->present ? &cm->step : NULL, &lo->step, &dd->step, phase_name((ddp_phase)report_train_phase(r)));

  /* Verification: ranks whose final weights differ from the most common checksum. */
  s->weights_identical = -1;
  if (dd->present) {
    s->mismatch = calloc((size_t)W, sizeof(int));
    DDP_CHECK_ALLOC(s->mismatch);
    int best = 0, best_n = 0;
    for (int i = 0; i < W; i++) {
      int n = 0;
      for (int j = 0; j < W; j++) n += r->ranks[j].checksum == r->ranks[i].checksum;
      if (n > best_n) {
        best_n = n;
        best = i;
      }
    }
    for (int i = 0; i < W; i++)
      if (!r->ranks[i].checksum_valid || r->ranks[i].checksum != r->ranks[best].checksum) s->mismatch[s->nmismatch++] = i;
    if (best_n * 2 == W && W > 1 && s->nmismatch) { /* a tie has no majority: name every rank */
      s->nmismatch = W;
      for (int i = 0; i < W; i++) s->mismatch[i] = i;
    }
    s->weights_identical = s->nmismatch == 0;
  }
  return DDP_OK;
}

void report_summary_free(run_summary *s) {
  for (int p = 0; p < PHASE_COUNT; p++) {
    free(s->ph[p].rank_step);
    free(s->ph[p].rank_compute);
    free(s->ph[p].rows);
  }
  free(s->mismatch);
  memset(s, 0, sizeof *s);
}

/* ---- JSON ----------------------------------------------------------------------------------- */
/* The "phases" section (schema version 1's layout, still written): the records are derived from it by
 * result_records_from_phases, the same mapping that reads version 1 files. */
#define num result_json_number

#define stats_json result_stats_json

static cJSON *doubles_json(const double *x, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, num(x[i]));
  return a;
}
cJSON *report_phase_json(const run_report *r, const run_summary *s, int p) {
  const phase_data *pd = &r->phases[p];
  const phase_summary *ps = &s->ph[p];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "warmup", pd->warmup);
  cJSON_AddNumberToObject(o, "steps", pd->steps);
  cJSON_AddItemToObject(o, "step_ms", stats_json(&ps->step));
  cJSON_AddItemToObject(o, "samples_per_s", num(ps->samples_per_s));
  if (p != PHASE_COMM) {
    cJSON_AddItemToObject(o, "tflops_per_rank", num(ps->tflops_per_rank));
    cJSON_AddItemToObject(o, "mfu_measured_peak", num(ps->mfu_measured));
    cJSON_AddItemToObject(o, "mfu_table_peak", num(ps->mfu_table));
  } else {
    cJSON_AddItemToObject(o, "algbw_gbs", num(ps->algbw));
    cJSON_AddItemToObject(o, "busbw_gbs", num(ps->busbw));
  }
  static const char *const why_keys[] = {"samples_per_s", "mfu_measured_peak", "mfu_table_peak", "algbw_gbs", "busbw_gbs"};
  cJSON *why = NULL;
  for (size_t k = 0; k < sizeof why_keys / sizeof why_keys[0]; k++) {
    const char *w = report_phase_why(s, p, why_keys[k]);
    if (!w || !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, why_keys[k]))) continue;
    if (!why) why = cJSON_AddObjectToObject(o, "why");
    cJSON_AddStringToObject(why, why_keys[k], w);
  }
  cJSON_AddNumberToObject(o, "slowest_rank", ps->slowest_rank);
  cJSON_AddItemToObject(o, "slowest_rank_excess", num(ps->slowest_excess));
  cJSON *ranks = cJSON_AddArrayToObject(o, "per_rank");
  for (int rk = 0; rk < r->world; rk++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "rank", rk);
    cJSON_AddItemToObject(x, "step_ms", stats_json(&ps->rank_step[rk]));
    if (ps->rank_compute[rk].n) cJSON_AddItemToObject(x, "compute_ms", stats_json(&ps->rank_compute[rk]));
    cJSON_AddItemToObject(x, "step_ms_samples", doubles_json(pd->step_ms + (size_t)rk * pd->steps, pd->steps));
    cJSON_AddItemToArray(ranks, x);
  }
  if (ps->nrows) { /* ddp: "allreduce", a row per bucket size; fsdp: "collectives", a row per kind */
    cJSON *rows = cJSON_AddArrayToObject(o, r->fsdp ? "collectives" : "allreduce");
    for (int k = 0; k < ps->nrows; k++) {
      cJSON *x = cJSON_CreateObject();
      if (r->fsdp) cJSON_AddStringToObject(x, "kind", ps->rows[k].kind);
      cJSON_AddNumberToObject(x, "bytes", (double)ps->rows[k].bytes);
      cJSON_AddNumberToObject(x, "count", (double)ps->rows[k].count);
      cJSON_AddStringToObject(x, "type", dtype_name(ps->rows[k].dt));
      cJSON_AddNumberToObject(x, r->fsdp ? "calls" : "buckets", ps->rows[k].nbuckets);
      cJSON_AddItemToObject(x, "time_us", num(ps->rows[k].time_us));
      cJSON_AddItemToObject(x, "algbw_gbs", num(ps->rows[k].algbw));
      cJSON_AddItemToObject(x, "busbw_gbs", num(ps->rows[k].busbw));
      if (row_why(s, p, k)) cJSON_AddStringToObject(x, "why", row_why(s, p, k));
      cJSON_AddItemToArray(rows, x);
    }
  }
  if (pd->loss) cJSON_AddItemToObject(o, "loss", doubles_json(pd->loss, pd->warmup + pd->steps));
  if (pd->scale) {
    int total = pd->warmup + pd->steps;
    cJSON *sc = cJSON_AddArrayToObject(o, "loss_scale");
    cJSON *sk = cJSON_AddArrayToObject(o, "skipped_steps");
    for (int st = 0; st < total; st++) {
      cJSON_AddItemToArray(sc, cJSON_CreateNumber(pd->scale[st]));
      if (pd->skipped[st]) cJSON_AddItemToArray(sk, cJSON_CreateNumber(st));
    }
  }
  return o;
}

/* ---- records, straight from the summary ---------------------------------------------------------------
 * The same records result_records_from_phases derives from a "phases" section (the reader's mapping for
 * version 1 files): test_report checks that the two agree record for record. */
static ddp_result phase_records_add(const run_report *r, const run_summary *s, int p, const char *group,
                                    const int *rank_of, const char *const *host_of, result_doc *d) {
  const char *phase = phase_name((ddp_phase)p);
  const phase_data *pd = &r->phases[p];
  const phase_summary *ps = &s->ph[p];
  DDP_TRY(result_add(d, phase, group, "step_ms", "ms", BETTER_LOWER, ps->step.median, &ps->step, NULL, 0, NULL));
  DDP_TRY(result_add(d, phase, group, "samples_per_s", "1/s", BETTER_HIGHER, ps->samples_per_s, NULL, NULL, 0, NULL));
  DDP_TRY(result_set_why(d, report_phase_why(s, p, "samples_per_s")));
  if (p != PHASE_COMM) {
    DDP_TRY(result_add(d, phase, group, "tflops_per_rank", "TFLOP/s", BETTER_HIGHER, ps->tflops_per_rank, NULL, NULL, 0, NULL));
    DDP_TRY(result_add(d, phase, group, "mfu_measured_peak", "", BETTER_HIGHER, ps->mfu_measured, NULL, NULL, 0, NULL));
    DDP_TRY(result_set_why(d, report_phase_why(s, p, "mfu_measured_peak")));
    DDP_TRY(result_add(d, phase, group, "mfu_table_peak", "", BETTER_HIGHER, ps->mfu_table, NULL, NULL, 0, NULL));
    DDP_TRY(result_set_why(d, report_phase_why(s, p, "mfu_table_peak")));
  } else {
    DDP_TRY(result_add(d, phase, group, "algbw_gbs", "GB/s", BETTER_HIGHER, ps->algbw, NULL, NULL, 0, NULL));
    DDP_TRY(result_set_why(d, report_phase_why(s, p, "algbw_gbs")));
    DDP_TRY(result_add(d, phase, group, "busbw_gbs", "GB/s", BETTER_HIGHER, ps->busbw, NULL, NULL, 0, NULL));
    DDP_TRY(result_set_why(d, report_phase_why(s, p, "busbw_gbs")));
  }
  for (int rk = 0; rk < r->world; rk++) {
    char rank[16];
    snprintf(rank, sizeof rank, "%d", rank_of ? rank_of[rk] : rk);
    const char *host = host_of && host_of[rk] ? host_of[rk] : "";
    DDP_TRY(result_add(d, phase, group, "step_ms", "ms", BETTER_LOWER, ps->rank_step[rk].median, &ps->rank_step[rk],
                       pd->step_ms + (size_t)rk * pd->steps, pd->steps, "rank", rank, "host", host, NULL));
    if (ps->rank_compute[rk].n)
      DDP_TRY(result_add(d, phase, group, "compute_ms", "ms", BETTER_LOWER, ps->rank_compute[rk].median,
                         &ps->rank_compute[rk], NULL, 0, "rank", rank, "host", host, NULL));
  }
  for (int k = 0; k < ps->nrows; k++) {
    char bytes[32], m_time[64], m_alg[64], m_bus[64];
    snprintf(bytes, sizeof bytes, "%zu", ps->rows[k].bytes);
    snprintf(m_time, sizeof m_time, "%s_time_us", ps->rows[k].kind);
    snprintf(m_alg, sizeof m_alg, "%s_algbw_gbs", ps->rows[k].kind);
    snprintf(m_bus, sizeof m_bus, "%s_busbw_gbs", ps->rows[k].kind);
    const char *type = dtype_name(ps->rows[k].dt);
    DDP_TRY(result_add(d, phase, group, m_time, "us", BETTER_LOWER, ps->rows[k].time_us, NULL, NULL, 0,
                       "bytes", bytes, "type", type, NULL));
    const char *why = row_why(s, p, k);
    if (ps->rows[k].why[0]) DDP_TRY(result_set_why(d, why));
    DDP_TRY(result_add(d, phase, group, m_alg, "GB/s", BETTER_HIGHER, ps->rows[k].algbw, NULL, NULL, 0,
                       "bytes", bytes, "type", type, NULL));
    DDP_TRY(result_set_why(d, why));
    DDP_TRY(result_add(d, phase, group, m_bus, "GB/s", BETTER_HIGHER, ps->rows[k].busbw, NULL, NULL, 0,
                       "bytes", bytes, "type", type, NULL));
    DDP_TRY(result_set_why(d, why));
  }
  int total = pd->warmup + pd->steps;
  if (pd->loss && total > 0)
    DDP_TRY(result_add(d, phase, group, "loss", "", BETTER_NONE, pd->loss[total - 1], NULL, pd->loss, total, NULL));
  if (pd->scale && total > 0) {
    double *v = malloc((size_t)total * sizeof *v);
    DDP_CHECK_ALLOC(v);
    int skipped = 0;
    for (int st = 0; st < total; st++) v[st] = pd->scale[st], skipped += pd->skipped[st] != 0;
    ddp_result e = result_add(d, phase, group, "loss_scale", "", BETTER_NONE, v[total - 1], NULL, v, total, NULL);
    free(v);
    DDP_TRY(e);
    DDP_TRY(result_add(d, phase, group, "skipped_steps", "", BETTER_LOWER, skipped, NULL, NULL, 0, NULL));
  }
  return DDP_OK;
}

ddp_result report_records(const run_report *r, const run_summary *s, const char *group, const int *rank_of,
                          const char *const *host_of, int job, result_doc *d) {
  for (int p = 0; p < PHASE_COUNT; p++)
    if (s->ph[p].present) DDP_TRY(phase_records_add(r, s, p, group, rank_of, host_of, d));
  if (!job) return DDP_OK;
  for (int i = 0; i < r->world; i++) {
    char rank[16];
    snprintf(rank, sizeof rank, "%d", rank_of ? rank_of[i] : i);
    DDP_TRY(result_add(d, "gemm", group, "gemm_tflops", "TFLOP/s", BETTER_HIGHER, r->ranks[i].gemm_tflops, NULL, NULL,
                       0, "rank", rank, "host", host_of && host_of[i] ? host_of[i] : "", NULL));
  }
  DDP_TRY(result_add(d, "gemm", group, "measured_peak_tflops", "TFLOP/s", BETTER_HIGHER, s->measured_peak_tflops, NULL,
                     NULL, 0, NULL));
  DDP_TRY(result_add(d, "job", group, "scaling_efficiency", "", BETTER_HIGHER, s->scaling_efficiency, NULL, NULL, 0, NULL));
  DDP_TRY(result_set_why(d, s->why_efficiency));
  /* its half-width (the step times' spread over the ddp step): a figure, never a regression to compare */
  DDP_TRY(result_add(d, "job", group, "scaling_efficiency_noise", "", BETTER_NONE, s->efficiency_noise, NULL, NULL, 0,
                     NULL));
  DDP_TRY(result_set_why(d, s->why_efficiency));
  DDP_TRY(result_add(d, "job", group, "exposed_comm_ms", "ms", BETTER_LOWER, s->exposed_comm_ms, NULL, NULL, 0, NULL));
  DDP_TRY(result_set_why(d, s->overlap_why));
  DDP_TRY(result_add(d, "job", group, "hidden_comm_fraction", "", BETTER_HIGHER, s->hidden_fraction, NULL, NULL, 0, NULL));
  DDP_TRY(result_set_why(d, s->overlap_why));
  return DDP_OK;
}
