/* bottom.c: the bottom line (bottom.h). */
#include "bottom.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

const char *bottom_verdict(int exit_code, const finding_list *f) {
  switch (exit_code) {
    case DDP_EXIT_OK: /* a warning that is not a failure (findings_count counts those at least as bad) */
      return f && findings_count(f, SEV_WARN) - findings_count(f, SEV_FAIL) > 0 ? "WARN" : "PASS";
    case DDP_EXIT_USAGE:
    case DDP_EXIT_RUNTIME: return "ERROR";
    default: return "FAIL"; /* weights differ, a failed check, non-finite values */
  }
}

static int rank_of(const char *v) {
  static const char *order[] = {"PASS", "WARN", "FAIL", "ERROR"};
  for (int i = 3; i >= 0; i--)
    if (v && !strcmp(v, order[i])) return i;
  return 3;
}

const char *bottom_worst(const char *a, const char *b) { return rank_of(a) >= rank_of(b) ? a : b; }

void bottom_compose(char *out, size_t n, const char *command, const char *verdict, const char *figures,
                    const char *context) {
  snprintf(out, n, "ddpbench %s: %s%s%s  (%s)", command, verdict, figures && figures[0] ? "  " : "",
           figures ? figures : "", context);
}

void bottom_context(char *out, size_t n, int ranks, int hosts, const finding_list *f) {
  int fail = f ? findings_count(f, SEV_FAIL) : 0, warn = f ? findings_count(f, SEV_WARN) - fail : 0;
  if (ranks > 0)
    snprintf(out, n, "%d rank%s, %d host%s; %d fail, %d warn", ranks, ranks == 1 ? "" : "s", hosts,
             hosts == 1 ? "" : "s", fail, warn);
  else
    snprintf(out, n, "%d fail, %d warn", fail, warn);
}

void bottom_num(double v, char *out, size_t n) {
  if (!isfinite(v)) snprintf(out, n, "-");
  else if (fabs(v) >= 1000) snprintf(out, n, "%.0f", v);
  else snprintf(out, n, "%.4g", v);
}

void bottom_si(double v, char *out, size_t n) {
  static const char *suffix[] = {"", "k", "M", "G", "T"};
  if (!isfinite(v)) {
    snprintf(out, n, "-");
    return;
  }
  int s = 0;
  if (fabs(v) >= 10000)
    while (fabs(v) >= 1000 && s < 4) v /= 1000, s++;
  if (s == 0) snprintf(out, n, "%.4g", v);
  else snprintf(out, n, "%.3g%s", v, suffix[s]);
}

void bottom_scaling(double e, double noise, char *out, size_t n) {
  if (!isfinite(e))
    snprintf(out, n, "-");
  else if (!isfinite(noise)) /* a file from before the noise was a record */
    snprintf(out, n, "%.1f %%", 100 * e);
  else if (noise > BOTTOM_SCALING_NOISE_MAX || (e - noise <= 1 && 1 <= e + noise))
    snprintf(out, n, "cannot tell (%.1f %% ±%.1f)", 100 * e, 100 * noise);
  else
    snprintf(out, n, "%.1f %% ±%.1f", 100 * e, 100 * noise);
}
