/* run_baseline.c: --baseline's files to the straggler rule's floor (run_baseline.h). One file at a time is held
 * in memory (a large job's result is hundreds of MiB); only each rank's median of each judged phase is kept. */
#include "run_baseline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"
#include "rules.h"

static const char *config_value(const result_doc *d, const char *key) {
  for (int i = 0; i < d->nconfig; i++)
    if (!strcmp(d->config[i].key, key)) return d->config[i].value;
  return NULL;
}

/* The first key in which baseline d is not a run of job, as "key VALUE, this run's VALUE" into why; 0 when
 * none differs. */
static int job_differs(const result_doc *d, const run_baseline_job *job, char *why, size_t n) {
  if (!d->kind || strcmp(d->kind, "run")) {
    snprintf(why, n, "kind %s: not a run's result (one written by `ddpbench --json`)", d->kind ? d->kind : "unknown");
    return 1;
  }
  if (d->world_size != job->world) {
    snprintf(why, n, "world_size %d, this run's %d", d->world_size, job->world);
    return 1;
  }
  if (!d->device || strcmp(d->device, job->device)) {
    snprintf(why, n, "device %s, this run's %s", d->device ? d->device : "(none)", job->device);
    return 1;
  }
  char mine[3][16];
  snprintf(mine[0], sizeof mine[0], "%d", job->hidden);
  snprintf(mine[1], sizeof mine[1], "%d", job->layers);
  snprintf(mine[2], sizeof mine[2], "%d", job->batch);
  const char *keys[] = {"hidden", "layers", "batch", "precision"}, *want[] = {mine[0], mine[1], mine[2], job->precision};
  for (int k = 0; k < 4; k++) {
    const char *v = config_value(d, keys[k]);
    if (!v || strcmp(v, want[k])) {
      snprintf(why, n, "config.%s %s, this run's %s", keys[k], v ? v : "(missing)", want[k]);
      return 1;
    }
  }
  return 0;
}

/* Each rank's median of phase p in d, as the rule judges it: compute_ms, or step_ms where rank 0 has no
 * compute record; into med[W]. 0, or 1 with why naming what is missing. */
static int phase_medians(const result_doc *d, const char *phase, int W, double *med, char *why, size_t n) {
  const char *metric = result_find(d, phase, "world", "compute_ms", "rank", "0", NULL) ? "compute_ms" : "step_ms";
  for (int rk = 0; rk < W; rk++) {
    char rank[16];
    snprintf(rank, sizeof rank, "%d", rk);
    const result_record *x = result_find(d, phase, "world", metric, "rank", rank, NULL);
    if (!x && rk == 0) {
      snprintf(why, n, "phase %s: missing, and this run judges it (run the baseline with the same --phases)", phase);
      return 1;
    }
    if (!x || !(x->value > 0) || !isfinite(x->value)) {
      snprintf(why, n, "phase %s: rank %d's median %s is missing or not a time", phase, rk, metric);
      return 1;
    }
    med[rk] = x->value;
  }
  return 0;
}

ddp_result run_baseline_read(const char *list, const char *where, const run_baseline_job *job, run_baseline *b) {
  memset(b, 0, sizeof *b);
  for (int p = 0; p < PHASE_COUNT; p++) b->spread_pct[p] = NAN;
  if (job->world < 2)
    return ddp_usage_error("%s %s: a 1-rank run names no straggler (the rule compares ranks), so a baseline sets "
                           "nothing", where, list);
  int nfiles = 1;
  for (const char *s = list; *s; s++) nfiles += *s == ',';
  char *names = strdup(list);
  double *med = calloc((size_t)nfiles * PHASE_COUNT * (size_t)job->world, sizeof *med);
  if (!names || !med) {
    free(names), free(med);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  ddp_result r = DDP_OK;
  char msg[600], why[300];
  int k = 0;
  for (char *s = names, *next; r == DDP_OK && s; s = next, k++) {
    next = strchr(s, ',');
    if (next) *next++ = 0;
    if (!*s) {
      r = ddp_usage_error("%s %s: an empty file name in the list", where, list);
      break;
    }
    result_doc d;
    ddp_usage_capture(msg, sizeof msg); /* result_load's one line ("FILE: what is wrong"), said as ours */
    r = result_load(s, &d);
    ddp_usage_capture(NULL, 0);
    if (r == DDP_ERR_USAGE) r = ddp_usage_error("%s %s", where, msg);
    if (r == DDP_OK && job_differs(&d, job, why, sizeof why))
      r = ddp_usage_error("%s %s: %s: a baseline is an earlier healthy run of the same job", where, s, why);
    for (int p = 0; r == DDP_OK && p < PHASE_COUNT; p++)
      if (job->judged[p] &&
          phase_medians(&d, phase_name((ddp_phase)p), job->world, med + ((size_t)p * nfiles + k) * job->world, why,
                        sizeof why))
        r = ddp_usage_error("%s %s: %s", where, s, why);
    result_free(&d);
  }
  if (r == DDP_OK) {
    b->runs = nfiles;
    for (int p = 0; p < PHASE_COUNT; p++)
      if (job->judged[p]) b->spread_pct[p] = straggler_spread(med + (size_t)p * nfiles * job->world, nfiles, job->world);
  }
  free(names), free(med);
  return r;
}
