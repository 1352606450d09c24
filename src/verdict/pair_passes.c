/* pair_passes.c: the slow-pass warning over accept's kept node-pair passes (pair_passes.h). */
#include "pair_passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "stats.h"

#define MAX_PASSES 256

int pair_passes_durations(const result_doc *d, double *sec, const char **stage, int cap) {
  int n = 0;
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *x = &d->records[i];
    const char *p = result_record_label(x, "pass");
    int k = p ? atoi(p) : 0;
    if (strcmp(x->measurement, "pair_pass") || strcmp(x->group, "world") || strcmp(x->metric, "duration_s") || k < 1 ||
        k > cap)
      continue;
    for (; n < k; n++) { /* a pass not recorded (none today) reads as unknown */
      sec[n] = NAN;
      if (stage) stage[n] = "";
    }
    sec[k - 1] = x->value;
    if (stage) stage[k - 1] = result_record_label(x, "stage") ? result_record_label(x, "stage") : "";
  }
  return n;
}

ddp_result pair_passes_judge(result_doc *d) {
  double sec[MAX_PASSES], ref[MAX_PASSES];
  const char *stage[MAX_PASSES];
  int n = pair_passes_durations(d, sec, stage, MAX_PASSES);
  for (int k = 0; k < n; k++) {
    if (!isfinite(sec[k])) continue;
    int m = 0;
    for (int same = 1; same >= 0 && m == 0; same--) /* its stage's other passes; else every other pass */
      for (int j = 0; j < n; j++)
        if (j != k && isfinite(sec[j]) && (!same || !strcmp(stage[j], stage[k]))) ref[m++] = sec[j];
    if (m == 0) continue;
    double med = stats_percentile(ref, m, 0.5);
    if (!(med > 0) || sec[k] <= PAIR_PASS_SLOW_X * med || sec[k] - med < PAIR_PASS_SLOW_MIN_S) continue;
    DDP_TRY(findings_add(&d->findings, "pair_passes", SEV_WARN, SCOPE_JOB, "job", sec[k], med, "s",
                         "pair pass %d took %.1f s, %.0fx the others (median %.1f s): a link that stalls (flaps) or a "
                         "neighbour's burst; the pairs' best-of figures hide it, each pass's iterations are in the "
                         "JSON's pair_pass records",
                         k + 1, sec[k], sec[k] / med, med));
  }
  return DDP_OK;
}
