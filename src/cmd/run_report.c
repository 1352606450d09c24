/* run_report.c: the run's human summary (nccl-tests style), its findings (the weights, the straggler rule,
 * the loss, the topology report's findings) and the run's detail sections of the JSON document. It sits with
 * the subcommands because it joins three layers: the summary (measure/summary.h), the verdict rules
 * (verdict/rules.h) and the topology report (topo/topo.h). Nothing here measures or communicates. */
#include "run_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bottom.h"
#include "json.h"
#include "rules.h"
#include "envcheck.h"
#include "result.h"
#include "topo.h"

static int memory_same(const fsdp_memory *a, const fsdp_memory *b);

/* ---- text --------------------------------------------------------------------------------------- */
static const char *fmt_num(char *buf, size_t n, double v, const char *f) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, f, v);
  return buf;
}

/* The run-to-run floor of phase p's straggler rule: --baseline's (straggler_baseline_floor of the baselines'
 * spread) when given, else the device's. */
static double straggler_floor(const run_report *r, int p) {
  return r->baseline_runs > 0 ? straggler_baseline_floor(r->baseline_spread_pct[p]) : r->judge_floor_pct;
}

void report_print(FILE *out, const run_report *r, const run_summary *s) {
  const ddp_config *c = r->cfg;
  char b1[32], b2[96], b3[32], b4[32], b5[32];
  double params = (double)c->layers * c->hidden * c->hidden;
  fprintf(out, "# ddpbench %s  device %s  comm %s  world %d (%d node%s)\n", DDPBENCH_VERSION, r->device, r->comm,
          r->world, r->nodes, r->nodes == 1 ? "" : "s");
  if (!r->topology_text || !*r->topology_text) { /* else the topology block below has the same line */
    fprintf(out, "# versions (rank 0): ");
    envcheck_print_versions(&r->ranks[0].ver, out);
  }
  fprintf(out, "# model: hidden %d  layers %d  batch %d/rank (%d global)  params %.1fM (%s fp32)  precision %s  grad_comm %s\n",
          c->hidden, c->layers, c->batch, c->batch * r->world, params / 1e6, ddp_fmt_bytes(b1, sizeof b1, params * 4),
          precision_name(c->precision), precision_name(c->grad_comm));
  if (r->fsdp) {
    const fsdp_plan *fp = r->fsdp;
    fprintf(out, "# fsdp: fully_shard per layer, shards of %zu of %zu rows (dim 0 padded to %zu), params %s, reduce %s "
                 "(%s), reshard after forward, one layer prefetched; %s moved per step\n",
            fp->layers[0].shard_rows, fp->layers[0].rows, fp->layers[0].padded_rows, dtype_name(fp->args.param_dtype),
            dtype_name(fp->args.reduce_dtype), fp->divide_avg ? "avg" : "sum with pre/post divide",
            ddp_fmt_bytes(b2, sizeof b2, r->comm_bytes));
  } else {
    fprintf(out, "# ddp: %d bucket%s (first_bucket_mb %g, bucket_mb %g, gradient_as_bucket_view %s), %s allreduced per step\n",
            r->plan->nbuckets, r->plan->nbuckets == 1 ? "" : "s", c->first_bucket_mb, c->bucket_mb,
            c->gradient_as_bucket_view ? "true" : "false", ddp_fmt_bytes(b2, sizeof b2, r->comm_bytes));
  }
  fprintf(out, "# steps %d timed + %d warmup  lr %g  momentum %g  seed %llu  cuda_graph %s", c->steps, c->warmup, c->lr,
          c->momentum, c->seed, c->cuda_graph ? "true" : "false");
  if (c->precision == PREC_FP16)
    fprintf(out, "  loss_scale %g (x%g every %d, x%g on overflow)", c->loss_scale_init, c->loss_scale_growth_factor,
            c->loss_scale_growth_interval, c->loss_scale_backoff);
  fprintf(out, "\n#\n# Using devices\n");
  for (int i = 0; i < r->world; i++) {
    const rank_info *ri = &r->ranks[i];
    fprintf(out, "#  Rank %2d Pid %7d on %10s device %2d [%s] %s  GEMM %s TFLOP/s\n", ri->rank, ri->pid, ri->host,
            ri->dev.ordinal, ri->dev.pci_bus_id[0] ? ri->dev.pci_bus_id : "-", ri->dev.name,
            fmt_num(b1, sizeof b1, ri->gemm_tflops, "%.4g"));
  }
  if (r->topology_text && *r->topology_text) {
    fprintf(out, "#\n");
    for (const char *p = r->topology_text; *p;) { /* as comment lines, like the rest of the header */
      size_t n = strcspn(p, "\n");
      fprintf(out, "# %.*s\n", (int)n, p);
      p += n + (p[n] == '\n');
    }
  }
  char how[64] = "H x H x H GEMM";
  if (report_peak_sustained(r)) snprintf(how, sizeof how, "8192^3 GEMM sustained %g s", c->peak_seconds);
  fprintf(out, "#\n# measured peak %s TFLOP/s (%s, %s, median over ranks, %s); MFU peak %s\n#\n",
          fmt_num(b1, sizeof b1, s->measured_peak_tflops, "%.4g"), how, precision_name(c->precision),
          r->peak_first ? "before the phases" : "after the phases",
          r->table_peak_tflops > 0 && c->peak_tflops > 0 ? fmt_num(b2, sizeof b2, r->table_peak_tflops, "%.4g TFLOP/s (given: --peak-tflops)")
          : r->table_peak_tflops > 0 ? fmt_num(b2, sizeof b2, r->table_peak_tflops, "%.4g TFLOP/s (datasheet, dense)")
                                     : "unknown (no datasheet figure for this device: --peak-tflops gives one)");

  fprintf(out, "#  phase   step(ms)      p10      p90      min      max   samples/s  TFLOP/s/rank        MFU    vs GEMM\n");
  const char *why_notes[PHASE_COUNT]; /* the MFU's reasons, each once (they live in s) */
  int nnotes = 0;
  for (int p = 0; p < PHASE_COUNT; p++) {
    const phase_summary *ps = &s->ph[p];
    if (!ps->present) continue;
    fprintf(out, "  %6s %9.3f %8.3f %8.3f %8.3f %8.3f %11s", phase_name((ddp_phase)p), ps->step.median, ps->step.p10,
            ps->step.p90, ps->step.min, ps->step.max, ddp_fmt_figure(b3, sizeof b3, ps->samples_per_s));
    if (p == PHASE_COMM) {
      if (isnan(ps->busbw))
        fprintf(out, "   busbw - (%s)\n", ps->why_bw);
      else
        fprintf(out, "   busbw %s GB/s (algbw %s; all %s bytes over the whole comm step)\n",
                ddp_fmt_figure(b4, sizeof b4, ps->busbw), ddp_fmt_figure(b5, sizeof b5, ps->algbw),
                r->fsdp ? "collectives'" : "buckets'");
    } else {
      fprintf(out, " %13s %10s %10s\n", ddp_fmt_figure(b3, sizeof b3, ps->tflops_per_rank),
              fmt_num(b4, sizeof b4, ps->mfu_table * 100, "%.1f%%"), fmt_num(b5, sizeof b5, ps->mfu_measured * 100, "%.1f%%"));
      const char *w = report_phase_why(s, p, "mfu_table_peak");
      int seen = 0;
      for (int i = 0; w && i < nnotes; i++) seen |= !strcmp(why_notes[i], w);
      if (w && !seen) why_notes[nnotes++] = w;
    }
  }
  char state[128]; /* the steady state the figures describe (docs/steady.md) */
  if (r->settle_seconds > 0)
    snprintf(state, sizeof state, "each phase after %g s of its own workload and %d warm-up steps", r->settle_seconds,
             c->warmup);
  else
    snprintf(state, sizeof state, "each phase after %d warm-up steps", c->warmup);
  fprintf(out, "#  (step time: the slowest rank's, per step; statistics over the %d timed steps,\n"
               "#  %s. MFU: model TFLOP/s\n"
               "#  over the MFU peak above. vs GEMM: over the measured peak, the run's own GEMM; %s)\n",
          c->steps, state,
          report_peak_sustained(r) ? "that one ran at the power\n#  cap, so a step at higher clocks can pass 100 %"
                                   : "a step whose GEMMs run\n#  faster than that one can pass 100 %");
  for (int i = 0; i < nnotes; i++) fprintf(out, "#  MFU -: %s\n", why_notes[i]); /* one line per reason */

  const int tp = report_train_phase(r);
  const phase_summary *cm = &s->ph[PHASE_COMM], *dd = &s->ph[tp];
  if ((cm->present && cm->nrows) || (dd->present && dd->nrows)) {
    const phase_summary *any = cm->present && cm->nrows ? cm : dd;
    char inside[32];
    snprintf(inside, sizeof inside, "inside %s", phase_name((ddp_phase)tp));
    if (r->fsdp) {
      fprintf(out, "#\n#  FSDP's collectives, per call       %24s %24s\n", "comm phase", inside);
      fprintf(out, "#  kind            size        count      type  calls   time(us) algbw  busbw   time(us) algbw  busbw\n");
    } else {
      fprintf(out, "#\n#  allreduce per bucket size         %24s %24s\n", "comm phase", inside);
      fprintf(out, "#         size        count      type  buckets   time(us) algbw  busbw   time(us) algbw  busbw\n");
    }
    for (int k = 0; k < any->nrows; k++) {
      const allreduce_row *a = &any->rows[k];
      if (r->fsdp)
        fprintf(out, "  %-14s %7zu %12zu %9s %6d", a->kind, a->bytes, a->count, dtype_name(a->dt), a->nbuckets);
      else
        fprintf(out, "  %12zu %12zu %9s %8d", a->bytes, a->count, dtype_name(a->dt), a->nbuckets);
      for (int q = 0; q < 2; q++) {
        const phase_summary *ps = q == 0 ? cm : dd;
        if (ps->present && k < ps->nrows && !isnan(ps->rows[k].time_us))
          fprintf(out, " %10.1f %6s %6s", ps->rows[k].time_us, fmt_num(b1, sizeof b1, ps->rows[k].algbw, "%.1f"),
                  fmt_num(b2, sizeof b2, ps->rows[k].busbw, "%.1f"));
        else
          fprintf(out, " %10s %6s %6s", "-", "-", "-");
      }
      fputc('\n', out);
    }
    if (r->fsdp)
      fprintf(out, "#  (GB/s = 1e9 B/s; size as nccl-tests': an all-gather's output, a reduce-scatter's input; busbw =\n"
                   "#  algbw x (n-1)/n, the all-reduce's x 2(n-1)/n; each call timed on the comm stream; 'inside fsdp'\n"
                   "#  overlaps the forward and backward passes%s%s)\n", any->why_bw[0] ? "; bandwidth -: " : "", any->why_bw);
    else
      fprintf(out, "#  (GB/s = 1e9 B/s; busbw = algbw x 2(n-1)/n as nccl-tests; each allreduce timed alone; 'inside ddp'\n"
                   "#  overlaps the backward pass%s%s)\n", any->why_bw[0] ? "; bandwidth -: " : "", any->why_bw);
    for (int q = 0; q < 2; q++) { /* rows above the plausibility bound: why they show '-' */
      const phase_summary *ps = q == 0 ? cm : dd;
      for (int k = 0; ps->present && k < ps->nrows; k++)
        if (ps->rows[k].why[0]) fprintf(out, "#  %s -: %s\n", q == 0 ? "comm phase" : inside, ps->rows[k].why);
    }
  }

  if (r->fsdp) { /* what a rank holds for FSDP's state, against DDP's (docs/fsdp.md §11) */
    fsdp_memory m0;
    fsdp_plan_memory(r->fsdp, 0, &m0);
    char a[32], b[32], t[32], g[32], d[32], dt[32]; /* one buffer per figure: the arguments of one call */
    fprintf(out, "#\n# fsdp memory per rank (rank 0, the most): params %s + grads %s + optimizer %s = %s of state, "
                 "plus %s gathered and reduce buffers; DDP holds %s for the same model; %s\n",
            ddp_fmt_bytes(a, sizeof a, (double)(m0.params_master + m0.params_lowp)),
            ddp_fmt_bytes(b, sizeof b, (double)m0.grads), ddp_fmt_bytes(t, sizeof t, (double)m0.optim),
            ddp_fmt_bytes(g, sizeof g, (double)(m0.params_master + m0.params_lowp + m0.grads + m0.optim)),
            ddp_fmt_bytes(d, sizeof d, (double)(m0.gathered + m0.reduce)),
            ddp_fmt_bytes(dt, sizeof dt, (double)r->fsdp->ddp.total),
            !r->fsdp_alloc ? "allocation not known" : memory_same(r->fsdp_alloc, &m0) ? "the engine allocated exactly that"
                                                                                     : "the ENGINE ALLOCATED OTHERWISE (JSON fsdp.memory_bytes)");
    if (!isnan(r->fsdp_device_drop))
      fprintf(out, "# (the device's free memory fell by %s while rank 0 allocated it: the driver's granularity, and any "
                   "other process on the device, show there)\n", ddp_fmt_bytes(a, sizeof a, r->fsdp_device_drop));
  }
  fprintf(out, "#\n");
  if (s->why_efficiency[0])
    fprintf(out, "# weak-scaling efficiency%s%s%s: - (%s)\n", r->world == 1 ? "" : " (local / ",
            r->world == 1 ? "" : phase_name((ddp_phase)tp), r->world == 1 ? "" : " step time)", s->why_efficiency);
  if (!isnan(s->scaling_efficiency)) {
    char eff[64]; /* as the bottom line gives it: with its noise, "cannot tell" when that is too wide */
    bottom_scaling(s->scaling_efficiency, s->efficiency_noise, eff, sizeof eff);
    fprintf(out, "# weak-scaling efficiency (local / %s step time): %s", phase_name((ddp_phase)tp), eff);
    if (!isnan(s->exposed_comm_ms)) fprintf(out, "   exposed communication %.3f ms", s->exposed_comm_ms);
    if (!isnan(s->hidden_fraction))
      fprintf(out, "   hidden %.0f %% of the comm phase's %.3f ms", s->hidden_fraction * 100, cm->step.median);
    if (s->overlap_why[0]) fprintf(out, "\n# exposed and hidden communication: cannot tell: %s", s->overlap_why);
    fputc('\n', out);
  }
  for (int p = 0; p < PHASE_COUNT; p++) {
    const phase_summary *ps = &s->ph[p];
    if (!ps->present || p == PHASE_COMM || r->world < 2) continue;
    int have_c = ps->rank_compute[0].n > 0;
    fprintf(out, "# %s per rank, median %s: ", phase_name((ddp_phase)p), have_c ? "compute ms (forward+backward)" : "step ms");
    for (int rk = 0; rk < r->world; rk++)
      fprintf(out, "%s%d:%.3f", rk ? " " : "", rk, have_c ? ps->rank_compute[rk].median : ps->rank_step[rk].median);
    fputc('\n', out);
  }
  if (r->baseline_runs > 0 && r->world > 1) { /* which floor the straggler rule used, once */
    fprintf(out, "# straggler floor from --baseline (%d run%s: %s), instead of the %s device's %g %%:", r->baseline_runs,
            r->baseline_runs == 1 ? "" : "s", r->baseline, r->device ? r->device : "this", r->judge_floor_pct);
    const char *sep = "";
    for (int p = 0; p < PHASE_COUNT; p++) {
      if (!s->ph[p].present || p == PHASE_COMM) continue;
      double f = straggler_floor(r, p), pct = c->straggler_pct;
      fprintf(out, "%s %s spread %+.1f %% -> named above %.1f %%%s", sep, phase_name((ddp_phase)p),
              r->baseline_spread_pct[p], fmax(f, pct), pct >= f ? " (--straggler-pct)" : "");
      sep = ";";
    }
    fprintf(out, " (spread + half of it + %g point)\n", STRAGGLER_BASELINE_MARGIN_PP);
  }
  for (int p = 0; p < PHASE_COUNT; p++) {
    const phase_data *pd = &r->phases[p];
    if (!pd->present || !pd->loss) continue;
    int total = pd->warmup + pd->steps;
    fprintf(out, "# %s loss: %.6g (step 0) -> %.6g (step %d)", phase_name((ddp_phase)p), pd->loss[0], pd->loss[total - 1],
            total - 1);
    if (pd->skipped) {
      fprintf(out, "; fp16 skipped steps %d", s->ph[p].skipped_steps);
      int first = 1;
      for (int st = 0; st < total; st++)
        if (pd->skipped[st]) {
          fprintf(out, "%s%d", first ? " [" : ",", st);
          first = 0;
        }
      fprintf(out, "%s, loss scale in the last step %g", first ? "" : "]", s->ph[p].final_scale);
    }
    fputc('\n', out);
  }
  /* Non-finite weights fail the verification even when every rank has the same NaN. */
  int nf_ranks = 0;
  unsigned long long nf_max = 0;
  for (int i = 0; i < r->world; i++)
    if (r->ranks[i].checksum_valid && r->ranks[i].nonfinite) {
      nf_ranks++;
      if (r->ranks[i].nonfinite > nf_max) nf_max = r->ranks[i].nonfinite;
    }
  if (nf_ranks)
    fprintf(out, "# verification: FAILED: final weights not finite (NaN/Inf) on %d of %d ranks (up to %llu of %.0f "
                 "values)%s\n", nf_ranks, r->world, nf_max, (double)r->cfg->layers * r->cfg->hidden * r->cfg->hidden,
            s->weights_identical == 1 ? "; the ranks agree bitwise, which proves nothing here" : "");
  if (s->weights_identical == 1 && nf_ranks) {
    /* said above */
  } else if (s->weights_identical == 1) {
    fprintf(out, "# verification: final weights bitwise identical on all %d ranks (fnv1a64 %016llx)  OK\n", r->world,
            (unsigned long long)r->ranks[0].checksum);
  } else if (s->weights_identical == 0) {
    fprintf(out, "# verification: FAILED: final weights differ on rank%s", s->nmismatch > 1 ? "s" : "");
    for (int i = 0; i < s->nmismatch; i++) {
      const rank_info *ri = &r->ranks[s->mismatch[i]];
      fprintf(out, "%s %d (%s, %016llx)", i ? "," : "", ri->rank, ri->host, (unsigned long long)ri->checksum);
    }
    fputc('\n', out);
  } else {
    fprintf(out, "# verification: not run (needs the %s phase)\n", phase_name((ddp_phase)report_train_phase(r)));
  }
}

/* ---- findings ---------------------------------------------------------------------------------- */
/* The steady-state rule (steady_judge, docs/steady.md) over every rank's timed steps of phase p: the rank
 * that drifted most among those beyond the floor and the noise (ndrift of them), or else the rank that drifted
 * most. Not judged (v->judged = 0) below STEADY_MIN_STEPS steps. */
static ddp_result phase_steady(const run_report *r, int p, steady_verdict *v, int *rank, int *ndrift, char *why,
                               size_t whyn) {
  const phase_data *pd = &r->phases[p];
  memset(v, 0, sizeof *v);
  *rank = 0, *ndrift = 0;
  v->n = pd->steps;
  snprintf(why, whyn, "%d timed steps: the steady-state check needs %d", pd->steps, STEADY_MIN_STEPS);
  if (pd->steps < STEADY_MIN_STEPS) return DDP_OK;
  /* Steps below the device's least judged time (the straggler rule's) are launch jitter, not a state. */
  double med = stats_percentile(pd->step_ms, r->world * pd->steps, 0.5);
  if (r->judge_min_ms > 0 && !(med >= r->judge_min_ms)) {
    snprintf(why, whyn, "steps of %.3g ms: below the least the steady-state check judges on the %s device (%g ms)",
             med, r->device ? r->device : "this", r->judge_min_ms);
    return DDP_OK;
  }
  for (int rk = 0; rk < r->world; rk++) {
    steady_verdict x;
    DDP_TRY(steady_judge(pd->step_ms + (size_t)rk * pd->steps, pd->steps, r->steady_floor_pct, &x));
    if (!x.judged) continue;
    *ndrift += x.drifted;
    int better = !v->judged || (x.drifted > v->drifted) ||
                 (x.drifted == v->drifted && fabs(x.drift) > fabs(v->drift));
    if (better) *v = x, *rank = rk;
  }
  if (!v->judged) snprintf(why, whyn, "a step was not timed");
  return DDP_OK;
}

static ddp_result steady_finding(const run_report *r, int p, finding_list *f) {
  steady_verdict v;
  int k, nd;
  char why[160];
  DDP_TRY(phase_steady(r, p, &v, &k, &nd, why, sizeof why));
  if (!v.drifted) return DDP_OK;
  char subject[128], ranks[48] = "";
  snprintf(subject, sizeof subject, "rank %d (%s)", k, r->ranks[k].host);
  if (r->world > 1) snprintf(ranks, sizeof ranks, "; %d of %d ranks drifted", nd, r->world);
  return findings_add_at(f, r->ranks[k].host, k, "steady", SEV_WARN, SCOPE_RANK, subject, v.second_ms, v.first_ms, "ms",
                         "phase %s not steady: step time drifted %+.1f %% within the phase (first half median %.4g ms, "
                         "second half %.4g ms, z %.1f; steady within %g %% and the steps' noise%s); raise --steps or "
                         "--warmup-seconds", phase_name((ddp_phase)p), v.drift * 100, v.first_ms, v.second_ms, v.z,
                         r->steady_floor_pct, ranks);
}

/* The phase's settle time and steady-state verdict, into its JSON object. */
static ddp_result steady_json(const run_report *r, int p, cJSON *o) {
  steady_verdict v;
  int k, nd;
  char w[160];
  DDP_TRY(phase_steady(r, p, &v, &k, &nd, w, sizeof w));
  cJSON_AddItemToObject(o, "settle_seconds", json_number(r->phases[p].settle_s));
  if (!v.judged) {
    cJSON_AddNullToObject(o, "steady");
    cJSON *why = cJSON_GetObjectItemCaseSensitive(o, "why");
    if (!why) why = cJSON_AddObjectToObject(o, "why");
    cJSON_AddStringToObject(why, "steady", w);
    return DDP_OK;
  }
  cJSON *x = cJSON_AddObjectToObject(o, "steady");
  cJSON_AddBoolToObject(x, "steady", !v.drifted);
  cJSON_AddNumberToObject(x, "rank", k);
  cJSON_AddItemToObject(x, "drift_pct", json_number(v.drift * 100));
  cJSON_AddItemToObject(x, "z", json_number(v.z));
  cJSON_AddItemToObject(x, "first_half_ms", json_number(v.first_ms));
  cJSON_AddItemToObject(x, "second_half_ms", json_number(v.second_ms));
  cJSON_AddItemToObject(x, "floor_pct", json_number(r->steady_floor_pct));
  cJSON_AddNumberToObject(x, "ranks_drifted", nd);
  return DDP_OK;
}

/* The threshold that applied and where it came from, for the findings: "200 % (the cpu device's run-to-run
 * floor; --straggler-pct 5)", "9.3 % (the spread of 2 baseline runs, +5.5 %, plus half of it and 1 point;
 * --straggler-pct 5)", "5 % (--straggler-pct)". */
static void straggler_named(const run_report *r, int p, const straggler_rule *rule, char *out, size_t n) {
  double t = fmax(rule->pct, rule->floor_pct);
  const char *dev = r->device ? r->device : "this";
  int k = r->baseline_runs;
  double s = r->baseline_spread_pct[p];
  if (k > 0 && rule->floor_pct > rule->pct)
    snprintf(out, n, "%.1f %% (the spread of %d baseline run%s, %+.1f %%, plus half of it and %g point; "
             "--straggler-pct %g)", t, k, k == 1 ? "" : "s", s, STRAGGLER_BASELINE_MARGIN_PP, rule->pct);
  else if (k > 0)
    snprintf(out, n, "%g %% (--straggler-pct; above the spread of %d baseline run%s, %+.1f %%, plus half of it and "
             "%g point: %.1f %%)", t, k, k == 1 ? "" : "s", s, STRAGGLER_BASELINE_MARGIN_PP, rule->floor_pct);
  else if (rule->floor_pct > rule->pct)
    snprintf(out, n, "%g %% (the %s device's run-to-run floor; --straggler-pct %g)", t, dev, rule->pct);
  else
    snprintf(out, n, "%g %% (--straggler-pct)", t);
}

/* --baseline: the floor phase p's straggler rule used, into its JSON object (only then: without --baseline the
 * device's floor applies, as the finding says). */
static void straggler_json(const run_report *r, int p, cJSON *o) {
  if (r->baseline_runs <= 0 || r->world < 2 || p == PHASE_COMM) return;
  double f = straggler_floor(r, p), pct = r->cfg ? r->cfg->straggler_pct : 5;
  cJSON *x = cJSON_AddObjectToObject(o, "straggler");
  cJSON_AddStringToObject(x, "floor", "baseline");
  cJSON_AddNumberToObject(x, "baseline_runs", r->baseline_runs);
  cJSON_AddItemToObject(x, "baseline_spread_pct", json_number(r->baseline_spread_pct[p]));
  cJSON_AddItemToObject(x, "floor_pct", json_number(f));
  cJSON_AddItemToObject(x, "straggler_pct", json_number(pct));
  cJSON_AddItemToObject(x, "threshold_pct", json_number(fmax(f, pct)));
}

/* The straggler rule (straggler_judge, docs/straggler.md): too short to judge below the device's stated size;
 * above it, a rank is named (a failing finding) only beyond max(--straggler-pct, the run-to-run floor: the
 * device's, or --baseline's), beyond a robust z-score of 3.5 and beyond its steps' noise; with two ranks the slower is at most a
 * warning. Otherwise the slowest rank is information, with the reason. */
static ddp_result slowest_finding(const run_report *r, const phase_summary *ps, ddp_phase p, finding_list *f) {
  int have_c = ps->rank_compute[0].n > 0, W = r->world;
  const ddp_stats *st = have_c ? ps->rank_compute : ps->rank_step;
  double *z = malloc((size_t)W * sizeof(double));
  int *who = malloc((size_t)W * sizeof(int));
  if (!z || !who) {
    free(z), free(who);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  straggler_rule rule = {r->cfg ? r->cfg->straggler_pct : 5, straggler_floor(r, p), r->judge_min_ms,
                         STRAGGLER_MIN_STEPS};
  straggler_verdict v;
  ddp_result e = straggler_judge(st, W, &rule, who, z, &v);
  if (e != DDP_OK) {
    free(z), free(who);
    return e;
  }
  const char *what = have_c ? "compute time" : "step time";
  const char *dev = r->device ? r->device : "this";
  char subject[128], named[160];
  straggler_named(r, p, &rule, named, sizeof named);
  int k = v.slowest;
  snprintf(subject, sizeof subject, "rank %d (%s)", k, r->ranks[k].host);
  if (v.too_short) {
    char size[96] = "";
    if (rule.min_ms > 0) snprintf(size, sizeof size, " of >= %g ms on the %s device", rule.min_ms, dev);
    e = findings_add_at(f, r->ranks[k].host, k, "slowest_rank", SEV_INFO, SCOPE_RANK, subject, st[k].median,
                        v.median, "ms",
                        "%s: too short to judge a straggler (%d timed steps, median %s %.3g ms; the rule judges "
                        ">= %d steps%s: raise --steps%s); slowest rank %+.1f %% over the median rank",
                        phase_name(p), v.steps, what, v.median, rule.min_steps, size,
                        rule.min_ms > 0 ? " or the model's size" : "", v.excess * 100);
    free(z), free(who);
    return e;
  }
  for (int i = 0; i < v.n_named && e == DDP_OK; i++) {
    int s = who[i];
    snprintf(subject, sizeof subject, "rank %d (%s)", s, r->ranks[s].host);
    e = findings_add_at(f, r->ranks[s].host, s, "straggler", SEV_FAIL, SCOPE_RANK, subject, st[s].median, v.median,
                        "ms", "%s: median %s %+.1f %% over the job's median, robust z-score %.1f (named above %s "
                        "and 3.5, and beyond its steps' noise)",
                        phase_name(p), what, 100 * (st[s].median / v.median - 1), z[s], named);
  }
  if (e == DDP_OK && v.pair_warn)
    e = findings_add_at(f, r->ranks[k].host, k, "slowest_rank", SEV_WARN, SCOPE_RANK, subject, st[k].median, v.median,
                        "ms",
                        "%s: %s %+.1f %% over the median rank, beyond %s and beyond noise (its p10 %.3g ms > the "
                        "other rank's p90 %.3g ms); two ranks cannot tell which one is off",
                        phase_name(p), what, v.excess * 100, named, st[k].p10, st[1 - k].p90);
  if (e == DDP_OK && !v.n_named && !v.pair_warn) {
    if (W >= 3)
      e = findings_add_at(f, r->ranks[k].host, k, "slowest_rank", SEV_INFO, SCOPE_RANK, subject, st[k].median,
                          v.median, "ms",
                          "%s: no straggler (slowest median %s %+.1f %% over the median rank, robust z-score %.1f; "
                          "a straggler is beyond %s, > 3.5 and slower beyond its steps' noise)",
                          phase_name(p), what, v.excess * 100, z[k], named);
    else /* two ranks: nobody is ever named, the slower is a warning beyond the threshold and the noise */
      e = findings_add_at(f, r->ranks[k].host, k, "slowest_rank", SEV_INFO, SCOPE_RANK, subject, st[k].median,
                          v.median, "ms",
                          "%s: nothing to warn of (slower median %s %+.1f %% over the two ranks' median; two ranks "
                          "warn beyond %s and beyond noise, and never name a straggler)",
                          phase_name(p), what, v.excess * 100, named);
  }
  free(z), free(who);
  return e;
}

ddp_result report_findings(const run_report *r, const run_summary *s, finding_list *f) {
  char subject[128];
  int nf_ranks = 0; /* ranks whose final weights hold NaN or Inf */
  for (int i = 0; i < r->world; i++) nf_ranks += r->ranks[i].checksum_valid && r->ranks[i].nonfinite > 0;
  if (s->weights_identical == 1 && !nf_ranks)
    DDP_TRY(findings_add(f, "weights", SEV_INFO, SCOPE_JOB, "job", NAN, NAN, "",
                         "final weights bitwise identical on all %d ranks (fnv1a64 %016llx)", r->world,
                         (unsigned long long)r->ranks[0].checksum));
  for (int i = 0; s->weights_identical == 0 && i < s->nmismatch; i++) {
    const rank_info *ri = &r->ranks[s->mismatch[i]];
    snprintf(subject, sizeof subject, "rank %d (%s)", ri->rank, ri->host);
    DDP_TRY(findings_add_at(f, ri->host, ri->rank, "weights", SEV_FAIL, SCOPE_RANK, subject, NAN, NAN, "",
                         "final weights (fnv1a64 %016llx) differ %s: silent data corruption or a non-deterministic "
                         "reduction", (unsigned long long)ri->checksum,
                         s->nmismatch == r->world ? "between ranks, with no majority to tell which is wrong"
                                                  : "from the majority's"));
  }
  /* Non-finite final weights: a failed verification of its own (exit code 5), whether or not the ranks agree. */
  double nweights = (double)r->cfg->layers * r->cfg->hidden * r->cfg->hidden;
  for (int i = 0; i < r->world && nf_ranks; i++) {
    const rank_info *ri = &r->ranks[i];
    if (!ri->checksum_valid || !ri->nonfinite) continue;
    if (nf_ranks == r->world) { /* one finding for the job */
      DDP_TRY(findings_add(f, "nonfinite", SEV_FAIL, SCOPE_JOB, "job", (double)ri->nonfinite, 0, "values",
                           "final weights: %llu of %.0f values are NaN or infinite on every rank: the model diverged "
                           "or a NaN/Inf reached the allreduce; bitwise agreement of NaNs verifies nothing",
                           (unsigned long long)ri->nonfinite, nweights));
      break;
    }
    snprintf(subject, sizeof subject, "rank %d (%s)", ri->rank, ri->host);
    DDP_TRY(findings_add_at(f, ri->host, ri->rank, "nonfinite", SEV_FAIL, SCOPE_RANK, subject, (double)ri->nonfinite, 0,
                            "values",
                         "final weights: %llu of %.0f values are NaN or infinite on this rank",
                         (unsigned long long)ri->nonfinite, nweights));
  }
  for (int p = 0; p < PHASE_COUNT && r->world > 1; p++)
    if (s->ph[p].present && p != PHASE_COMM) DDP_TRY(slowest_finding(r, &s->ph[p], (ddp_phase)p, f));
  for (int p = 0; p < PHASE_COUNT; p++)
    if (s->ph[p].present) DDP_TRY(steady_finding(r, p, f));
  /* A model step faster than the MFU peak: the peak (given or from the datasheet table) is wrong. */
  for (int p = 0; p < PHASE_COUNT; p++) {
    const phase_summary *ps = &s->ph[p];
    if (!ps->present || p == PHASE_COMM || !(r->table_peak_tflops > 0) || !ps->why_mfu_table[0]) continue;
    DDP_TRY(findings_add(f, "peak", SEV_WARN, SCOPE_JOB, phase_name((ddp_phase)p), ps->tflops_per_rank,
                         r->table_peak_tflops, "TFLOP/s", "%s: MFU not given: %s", phase_name((ddp_phase)p),
                         ps->why_mfu_table));
  }
  /* A bucket row faster than the device's links allow: not given (summary.c), and said here. */
  for (int p = 0; p < PHASE_COUNT; p++)
    for (int k = 0; s->ph[p].present && k < s->ph[p].nrows; k++) {
      const allreduce_row *row = &s->ph[p].rows[k];
      if (row->implausible_gbs > 0)
        DDP_TRY(findings_add(f, "plausibility", SEV_INFO, SCOPE_JOB, phase_name((ddp_phase)p), row->implausible_gbs,
                             r->link_gbs, "GB/s", "%s %s bytes=%zu: not given: %s", phase_name((ddp_phase)p), row->kind,
                             row->bytes, row->why));
    }
  if (s->overlap_why[0])
    DDP_TRY(findings_add(f, "overlap", SEV_INFO, SCOPE_JOB, "job", NAN, NAN, "",
                         "exposed and hidden communication cannot be told: %s", s->overlap_why));
  /* A diverged model times NaN arithmetic (or, in fp16, steps whose update is skipped). */
  for (int p = 0; p < PHASE_COUNT; p++) {
    const phase_data *pd = &r->phases[p];
    if (!pd->present || !pd->loss) continue;
    int total = pd->warmup + pd->steps, bad = -1;
    for (int st = 0; st < total && bad < 0; st++)
      if (!isfinite(pd->loss[st])) bad = st;
    if (!isfinite(pd->loss[total - 1]))
      DDP_TRY(findings_add(f, "nonfinite", SEV_FAIL, SCOPE_JOB, phase_name((ddp_phase)p), bad, NAN, "step",
                           "%s loss is not finite at the last step (%d; from step %d on): a failed run, whatever the "
                           "ranks agree on", phase_name((ddp_phase)p), total - 1, bad));
    else if (bad >= 0)
      DDP_TRY(findings_add(f, "loss", SEV_WARN, SCOPE_JOB, phase_name((ddp_phase)p), bad, NAN, "step",
                           "%s loss is not finite from step %d: the model diverged (lower --lr); its step times are "
                           "not those of real training", phase_name((ddp_phase)p), bad));
    /* fp16 with a loss scale so small that the scaled gradients underflow to zero: the loss never moves. */
    int moved = 0, skips = 0; /* (a loss that stands still because every update was skipped is an overflow,
                               * said below, not an underflow) */
    for (int st = 1; st < total; st++) moved |= pd->loss[st] != pd->loss[0];
    for (int st = 0; pd->skipped && st < total; st++) skips += pd->skipped[st] != 0;
    if (pd->scale && total > 1 && !moved && !skips && isfinite(pd->loss[0]) && r->cfg->lr > 0)
      DDP_TRY(findings_add(f, "loss_scale", SEV_WARN, SCOPE_JOB, phase_name((ddp_phase)p), pd->scale[0], NAN, "",
                           "%s loss never changed in %d steps: with fp16 loss scale %g the scaled gradients underflow "
                           "to zero, so nothing trains (raise --loss-scale-init)", phase_name((ddp_phase)p), total,
                           (double)pd->scale[0]));
    int timed_skips = 0;
    for (int st = pd->warmup; pd->skipped && st < total; st++) timed_skips += pd->skipped[st] != 0;
    if (timed_skips * 2 > pd->steps)
      DDP_TRY(findings_add(f, "loss", SEV_WARN, SCOPE_JOB, phase_name((ddp_phase)p), timed_skips, pd->steps, "steps",
                           "%s skipped the update in %d of %d timed steps (fp16 overflow): its step times leave out "
                           "the optimizer (lower --lr or --loss-scale-init)", phase_name((ddp_phase)p), timed_skips,
                           pd->steps));
  }
  /* The topology report's findings: hosts that differ or are degraded, versions and NCCL_* variables that
   * differ between ranks, what NVML could not tell, and notes. */
  DDP_TRY(topo_findings(r->topology, f));
  return DDP_OK;
}

#define num result_json_number

static cJSON *memory_json(const fsdp_memory *m) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "params_master", (double)m->params_master);
  cJSON_AddNumberToObject(o, "params_lowp", (double)m->params_lowp);
  cJSON_AddNumberToObject(o, "grads", (double)m->grads);
  cJSON_AddNumberToObject(o, "optim", (double)m->optim);
  cJSON_AddNumberToObject(o, "gathered", (double)m->gathered);
  cJSON_AddNumberToObject(o, "reduce", (double)m->reduce);
  cJSON_AddNumberToObject(o, "total", (double)m->total);
  return o;
}

static int memory_same(const fsdp_memory *a, const fsdp_memory *b) {
  return a->params_master == b->params_master && a->params_lowp == b->params_lowp && a->grads == b->grads &&
         a->optim == b->optim && a->gathered == b->gathered && a->reduce == b->reduce && a->total == b->total;
}

/* The fsdp section: the shard plan, the bytes a step moves, and the memory a rank holds for FSDP's state (the
 * plan's per rank; rank 0's as its engine allocated it, checked against the plan) next to DDP's for the model. */
static cJSON *fsdp_json(const run_report *r) {
  const fsdp_plan *p = r->fsdp;
  const fsdp_layer *ly = &p->layers[0];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "param_dtype", dtype_name(p->args.param_dtype));
  cJSON_AddStringToObject(o, "reduce_dtype", dtype_name(p->args.reduce_dtype));
  cJSON_AddStringToObject(o, "reduce_op", p->divide_avg ? "avg" : "sum");
  cJSON_AddNumberToObject(o, "predivide_factor", p->prediv);
  cJSON_AddNumberToObject(o, "postdivide_factor", p->postdiv);
  cJSON_AddBoolToObject(o, "reshard_after_forward", 1);
  cJSON_AddNumberToObject(o, "shard_rows", (double)ly->shard_rows);
  cJSON_AddNumberToObject(o, "padded_rows", (double)ly->padded_rows);
  cJSON *rows = cJSON_AddArrayToObject(o, "rank_rows");
  for (int k = 0; k < p->args.world; k++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "first", (double)p->ranks[k].first);
    cJSON_AddNumberToObject(x, "rows", (double)p->ranks[k].rows);
    cJSON_AddItemToArray(rows, x);
  }
  cJSON_AddNumberToObject(o, "collective_bytes_per_step", r->comm_bytes);
  cJSON *mem = cJSON_AddObjectToObject(o, "memory_bytes");
  cJSON *per = cJSON_AddArrayToObject(mem, "plan_per_rank");
  fsdp_memory m0;
  memset(&m0, 0, sizeof m0);
  for (int k = 0; k < p->args.world; k++) {
    fsdp_memory m;
    fsdp_plan_memory(p, k, &m);
    if (k == 0) m0 = m;
    cJSON_AddItemToArray(per, memory_json(&m));
  }
  if (r->fsdp_alloc) {
    cJSON_AddItemToObject(mem, "allocated_rank0", memory_json(r->fsdp_alloc));
    cJSON_AddBoolToObject(mem, "allocated_matches_plan", memory_same(r->fsdp_alloc, &m0));
  }
  /* What the device says it gave: its free memory's fall around those allocations (GPUs) */
  cJSON_AddItemToObject(mem, "device_free_drop_rank0", num(r->fsdp_device_drop));
  if (isnan(r->fsdp_device_drop))
    cJSON_AddStringToObject(mem, "why_device_free_drop", "the device does not tell its free memory (cpu)");
  cJSON *dd = cJSON_AddObjectToObject(mem, "ddp");
  cJSON_AddNumberToObject(dd, "weights", (double)p->ddp.weights);
  cJSON_AddNumberToObject(dd, "grads", (double)p->ddp.grads);
  cJSON_AddNumberToObject(dd, "momentum", (double)p->ddp.momentum);
  cJSON_AddNumberToObject(dd, "buckets", (double)p->ddp.buckets);
  cJSON_AddNumberToObject(dd, "lowp", (double)p->ddp.lowp);
  cJSON_AddNumberToObject(dd, "total", (double)p->ddp.total);
  return o;
}

cJSON *report_sections(const run_report *r, const run_summary *s) {
  cJSON *legacy = cJSON_CreateObject();
  if (!legacy) return NULL;
  cJSON *bk = cJSON_AddObjectToObject(legacy, "buckets");
  cJSON_AddNumberToObject(bk, "count", r->plan->nbuckets);
  cJSON *bytes = cJSON_AddArrayToObject(bk, "bytes");
  cJSON *nparams = cJSON_AddArrayToObject(bk, "params");
  for (int b = 0; b < r->plan->nbuckets; b++) {
    cJSON_AddItemToArray(bytes, cJSON_CreateNumber((double)r->plan->buckets[b].bytes));
    cJSON_AddItemToArray(nparams, cJSON_CreateNumber(r->plan->buckets[b].nparams));
  }
  if (r->fsdp) cJSON_AddItemToObject(legacy, "fsdp", fsdp_json(r));
  else cJSON_AddNumberToObject(legacy, "allreduce_bytes_per_step", r->comm_bytes);
  cJSON_AddNumberToObject(legacy, "model_flops_per_step_per_rank", r->flops_per_step);
  cJSON_AddItemToObject(legacy, "measured_peak_tflops", num(s->measured_peak_tflops));
  cJSON_AddItemToObject(legacy, "table_peak_tflops", r->table_peak_tflops > 0 ? num(r->table_peak_tflops) : cJSON_CreateNull());
  cJSON *phases = cJSON_AddObjectToObject(legacy, "phases");
  for (int p = 0; p < PHASE_COUNT; p++)
    if (s->ph[p].present) {
      cJSON *o = report_phase_json(r, s, p);
      cJSON_AddItemToObject(phases, phase_name((ddp_phase)p), o);
      straggler_json(r, p, o);
      if (steady_json(r, p, o) != DDP_OK) { /* out of memory, as a NULL document says */
        cJSON_Delete(legacy);
        return NULL;
      }
    }
  cJSON_AddItemToObject(legacy, "scaling_efficiency", num(s->scaling_efficiency));
  if (!isnan(s->efficiency_noise)) cJSON_AddItemToObject(legacy, "scaling_efficiency_noise", num(s->efficiency_noise));
  if (s->why_efficiency[0] || s->overlap_why[0]) {
    cJSON *why = cJSON_AddObjectToObject(legacy, "figures_why");
    if (s->why_efficiency[0]) cJSON_AddStringToObject(why, "scaling_efficiency", s->why_efficiency);
    if (s->overlap_why[0] && isnan(s->exposed_comm_ms)) cJSON_AddStringToObject(why, "exposed_comm_ms", s->overlap_why);
    if (s->overlap_why[0] && isnan(s->hidden_fraction)) cJSON_AddStringToObject(why, "hidden_comm_fraction", s->overlap_why);
  }
  if (!isnan(s->ddp_overhead_ms)) cJSON_AddItemToObject(legacy, "ddp_overhead_ms", num(s->ddp_overhead_ms));
  cJSON_AddItemToObject(legacy, "exposed_comm_ms", num(s->exposed_comm_ms));
  cJSON_AddItemToObject(legacy, "hidden_comm_fraction", num(s->hidden_fraction));
  if (s->weights_identical >= 0) {
    cJSON *mm = cJSON_AddArrayToObject(legacy, "weights_mismatched_ranks");
    for (int i = 0; i < s->nmismatch; i++) cJSON_AddItemToArray(mm, cJSON_CreateNumber(s->mismatch[i]));
  }
  if (r->topology) cJSON_AddItemToObject(legacy, "topology", cJSON_Duplicate(r->topology, 1)); /* outlives r */
  return legacy;
}

ddp_result report_doc_fill(const run_report *r, const run_summary *s, result_doc *m) {
  for (int i = 0; i < r->world && i < m->nranks; i++) {
    const rank_info *ri = &r->ranks[i];
    result_rank *x = &m->ranks[i];
    x->gemm_tflops = ri->gemm_tflops;
    if (ri->checksum_valid) {
      x->weights_checksum = malloc(17);
      DDP_CHECK_ALLOC(x->weights_checksum);
      snprintf(x->weights_checksum, 17, "%016llx", (unsigned long long)ri->checksum);
    }
  }
  m->weights_identical = s->weights_identical;
  int major = -1; /* the majority's checksum: that of a rank the summary did not list as differing */
  for (int i = 0; s->weights_identical >= 0 && major < 0 && i < r->world; i++) {
    int listed = !r->ranks[i].checksum_valid;
    for (int k = 0; !listed && k < s->nmismatch; k++) listed = s->mismatch[k] == i;
    if (!listed) major = i;
  }
  if (major >= 0) {
    m->weights_checksum = malloc(17);
    DDP_CHECK_ALLOC(m->weights_checksum);
    snprintf(m->weights_checksum, 17, "%016llx", (unsigned long long)r->ranks[major].checksum);
  }
  const char **hosts = calloc((size_t)r->world + 1, sizeof *hosts);
  DDP_CHECK_ALLOC(hosts);
  for (int i = 0; i < r->world; i++) hosts[i] = i < m->nranks ? m->ranks[i].host : r->ranks[i].host;
  ddp_result e = report_records(r, s, "world", NULL, hosts, 1, m);
  free(hosts);
  DDP_TRY(e);
  for (int i = 0; r->extra && i < r->extra->nrecords; i++) DDP_TRY(result_add_record(m, &r->extra->records[i]));
  /* FSDP's memory per rank as records, so that the CSV and Prometheus series carry it (the fsdp section has the
   * parts): the state a rank holds (its shard of the weights, grads and optimizer) and its gathered and reduce
   * buffers. A plan's figures, not a performance: no direction. */
  for (int k = 0; r->fsdp && k < r->fsdp->args.world; k++) {
    fsdp_memory mk;
    fsdp_plan_memory(r->fsdp, k, &mk);
    char rank[16];
    snprintf(rank, sizeof rank, "%d", k);
    const char *host = k < m->nranks && m->ranks[k].host ? m->ranks[k].host : r->ranks[k].host;
    DDP_TRY(result_add(m, "fsdp", "world", "state_bytes", "B", BETTER_NONE,
                       (double)(mk.params_master + mk.params_lowp + mk.grads + mk.optim), NULL, NULL, 0, "rank", rank,
                       "host", host, NULL));
    DDP_TRY(result_add(m, "fsdp", "world", "buffer_bytes", "B", BETTER_NONE, (double)(mk.gathered + mk.reduce), NULL,
                       NULL, 0, "rank", rank, "host", host, NULL));
  }
  return DDP_OK;
}
