/* test_steady: the steady-state rule (steady_judge, docs/steady.md) on made-up step-time series, and the
 * run's report path (report_findings, report_sections) over it:
 *  - a steady series (0.2 % noise): judged, steady, drift near 0;
 *  - a drift of +10 % over the phase: not steady beyond a 4 % floor, steady under the cpu device's 200 %;
 *  - noise alone, 2,000 seeded series each of i.i.d. +-30 % noise, of a loaded machine's bursts (1 step in 5 at
 *    3-10 x) and of bursts that start halfway through (other work arriving mid-run): no drift called on the
 *    cpu device's floor, and i.i.d. noise under 4 % almost never (|z| > 5);
 *  - fewer than 20 steps, or a NaN step: not judged;
 *  - through the report: a drifting rank gets one "steady" warning naming the phase, the drift and the remedy,
 *    exit 4 under the findings' codes; the JSON phase carries steady {steady: false, rank, drift_pct, ...}
 *    and settle_seconds; under 20 steps, or with steps under the device's least judged time, it carries
 *    steady null and why.steady. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "findings_of.h"
#include "rules.h"
#include "run_report.h"

static uint64_t rng = 88172645463325252ull;
static double urand(void) { /* xorshift64, [0, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

enum { N = 40, W = 3 };
static double base_ms = 10; /* each step's compute time; the step is 10 % longer */

/* The report path over W ranks: rank `drifting` ramps by `ramp` over the phase, the others are steady. */
static int report_case(int steps, int drifting, double ramp, finding_list *fl, cJSON **sections) {
  static ddp_config cfg;
  config_defaults(&cfg);
  cfg.steps = steps;
  cfg.warmup = 0;
  static rank_info ranks[W];
  memset(ranks, 0, sizeof ranks);
  for (int r = 0; r < W; r++) {
    ranks[r].rank = r, ranks[r].gemm_tflops = 100, ranks[r].checksum = 7, ranks[r].checksum_valid = 1;
    snprintf(ranks[r].host, sizeof ranks[r].host, "node%d", r);
  }
  static bucket_plan plan;
  size_t counts[1] = {1000};
  bucket_plan_build(&plan, counts, 1, 4, 4000, 4000);
  static double compute[W * N], step[W * N], bucket[W * N], loss[N];
  for (int r = 0; r < W; r++)
    for (int s = 0; s < steps; s++) {
      double f = 1 + 0.002 * (urand() - 0.5);
      if (r == drifting) f *= 1 + ramp * s / (steps - 1);
      compute[r * steps + s] = base_ms * f, step[r * steps + s] = 1.1 * base_ms * f, bucket[r * steps + s] = 0.5;
    }
  for (int s = 0; s < steps; s++) loss[s] = 1;
  static run_report rep;
  memset(&rep, 0, sizeof rep);
  rep.cfg = &cfg, rep.world = W, rep.nodes = W, rep.device = "cuda", rep.comm = "nccl", rep.ranks = ranks;
  rep.judge_min_ms = 0.1, rep.steady_floor_pct = 4;
  rep.plan = &plan, rep.comm_bytes = 4000, rep.comm_type = DT_F32, rep.flops_per_step = 1e9;
  rep.phases[PHASE_LOCAL] = (phase_data){1, 0, steps, 1, step, compute, bucket, loss, NULL, NULL, 2.0};
  static run_summary sum;
  findings_init(fl);
  int ok = report_summarize(&rep, &sum) == DDP_OK && report_findings(&rep, &sum, fl) == DDP_OK;
  CHECK(ok, "summarize and findings");
  cJSON *raw = ok ? report_sections(&rep, &sum) : NULL; /* its numbers are raw text: read it back */
  char *text = raw ? cJSON_PrintUnformatted(raw) : NULL;
  *sections = text ? cJSON_Parse(text) : NULL;
  CHECK(*sections != NULL, "the sections print and parse");
  free(text);
  cJSON_Delete(raw);
  report_summary_free(&sum);
  bucket_plan_free(&plan);
  return findings_exit_code(fl);
}

int main(void) {
  double x[N];
  steady_verdict v;

  for (int s = 0; s < N; s++) x[s] = 5 * (1 + 0.002 * (urand() - 0.5));
  CHECK(steady_judge(x, N, 4, &v) == DDP_OK && v.judged && !v.drifted, "steady series: judged %d drifted %d",
        v.judged, v.drifted);
  CHECK(fabs(v.drift) < 0.002, "steady series: drift %g", v.drift);

  for (int s = 0; s < N; s++) x[s] = 5 * (1 + 0.10 * s / (N - 1)) * (1 + 0.005 * (urand() - 0.5));
  CHECK(steady_judge(x, N, 4, &v) == DDP_OK && v.judged && v.drifted, "+10 %% ramp over 4 %%: drifted %d", v.drifted);
  CHECK(v.drift > 0.04 && v.drift < 0.08 && v.z > STEADY_ZMIN, "+10 %% ramp: drift %g z %g", v.drift, v.z);
  CHECK(v.second_ms > v.first_ms, "+10 %% ramp: halves %g -> %g", v.first_ms, v.second_ms);
  CHECK(steady_judge(x, N, 200, &v) == DDP_OK && v.judged && !v.drifted, "+10 %% ramp under 200 %%: drifted %d",
        v.drifted);
  for (int s = 0; s < N; s++) x[s] = 5 * (1 - 0.10 * s / (N - 1));
  CHECK(steady_judge(x, N, 4, &v) == DDP_OK && v.drifted && v.drift < -0.04, "-10 %% ramp: drift %g", v.drift);

  /* Noise alone. */
  int iid4 = 0, iid200 = 0, burst200 = 0, late200 = 0;
  for (int t = 0; t < 2000; t++) {
    for (int s = 0; s < N; s++) x[s] = 1 + 0.3 * (2 * urand() - 1);
    steady_judge(x, N, 4, &v), iid4 += v.drifted;
    steady_judge(x, N, 200, &v), iid200 += v.drifted;
    for (int s = 0; s < N; s++) x[s] = urand() < 0.2 ? 3 + 7 * urand() : 1 + 0.05 * urand();
    steady_judge(x, N, 200, &v), burst200 += v.drifted;
    for (int s = 0; s < N; s++) x[s] = s >= N / 2 && urand() < 0.4 ? 1.5 + urand() : 1 + 0.05 * urand();
    steady_judge(x, N, 200, &v), late200 += v.drifted;
  }
  CHECK(iid200 == 0 && burst200 == 0 && late200 == 0, "noise on the cpu floor: %d, %d, %d of 2000 called drifting",
        iid200, burst200, late200);
  CHECK(iid4 <= 10, "i.i.d. +-30 %% noise over a 4 %% floor: %d of 2000 called drifting", iid4);
  printf("noise alone, 2000 series each: i.i.d. over 4 %% %d, over 200 %%: i.i.d. %d, bursts %d, late bursts %d\n",
         iid4, iid200, burst200, late200);

  CHECK(steady_judge(x, STEADY_MIN_STEPS - 1, 4, &v) == DDP_OK && !v.judged && !v.drifted, "19 steps: judged %d",
        v.judged);
  for (int s = 0; s < N; s++) x[s] = 5 * (1 + 0.10 * s / (N - 1));
  x[7] = NAN;
  CHECK(steady_judge(x, N, 4, &v) == DDP_OK && !v.judged, "a NaN step: judged %d", v.judged);

  /* The report path. */
  finding_list fl;
  cJSON *sec = NULL, *why = NULL;
  int code = report_case(N, 1, 0.12, &fl, &sec);
  CHECK(findings_of(&fl, "steady", SEV_WARN) == 1, "one steady warning (got %d)", findings_of(&fl, "steady", SEV_WARN));
  CHECK(code == 4, "a warning: exit 4 under --strict's codes (got %d)", code);
  for (int i = 0; i < fl.n; i++)
    if (!strcmp(fl.v[i].check, "steady")) {
      CHECK(fl.v[i].rank == 1 && !strcmp(fl.v[i].host, "node1"), "on rank 1, node1 (got %d, %s)", fl.v[i].rank,
            fl.v[i].host);
      CHECK(strstr(fl.v[i].text, "phase local not steady: step time drifted +") &&
                strstr(fl.v[i].text, "raise --steps or --warmup-seconds") && strstr(fl.v[i].text, "1 of 3 ranks"),
            "text: %s", fl.v[i].text);
    }
  cJSON *ph = cJSON_GetObjectItem(cJSON_GetObjectItem(sec, "phases"), "local");
  cJSON *st = cJSON_GetObjectItem(ph, "steady");
  CHECK(cJSON_IsObject(st) && cJSON_IsFalse(cJSON_GetObjectItem(st, "steady")), "JSON steady false");
  CHECK(cJSON_GetObjectItem(st, "rank") && cJSON_GetObjectItem(st, "rank")->valueint == 1, "JSON steady rank 1");
  cJSON *dp = cJSON_GetObjectItem(st, "drift_pct");
  CHECK(cJSON_IsNumber(dp) && dp->valuedouble > 4 && dp->valuedouble < 9, "JSON drift_pct %g", dp ? dp->valuedouble : NAN);
  cJSON *ss = cJSON_GetObjectItem(ph, "settle_seconds");
  CHECK(cJSON_IsNumber(ss) && ss->valuedouble == 2.0, "JSON settle_seconds 2");
  cJSON_Delete(sec);
  findings_free(&fl);

  code = report_case(N, -1, 0, &fl, &sec);
  CHECK(findings_of(&fl, "steady", SEV_WARN) == 0 && code == 0, "steady ranks: no warning, exit 0 (got %d, %d)",
        findings_of(&fl, "steady", SEV_WARN), code);
  st = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(sec, "phases"), "local"), "steady");
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(st, "steady")), "JSON steady true");
  cJSON_Delete(sec);
  findings_free(&fl);

  base_ms = 0.03; /* steps of 33 us, under the cuda device's least judged 0.1 ms: launch jitter, not a state */
  code = report_case(N, 1, 0.5, &fl, &sec);
  CHECK(findings_of(&fl, "steady", SEV_WARN) == 0, "33 us steps: not judged, no warning");
  why = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(sec, "phases"), "local"),
                                                "why"), "steady");
  CHECK(cJSON_IsString(why) && strstr(why->valuestring, "below the least the steady-state check judges on the cuda "
                                                        "device (0.1 ms)"), "why.steady: %s",
        cJSON_IsString(why) ? why->valuestring : "(none)");
  cJSON_Delete(sec);
  findings_free(&fl);
  base_ms = 10;

  code = report_case(12, 1, 0.5, &fl, &sec);
  CHECK(findings_of(&fl, "steady", SEV_WARN) == 0, "12 steps: not judged, no warning");
  ph = cJSON_GetObjectItem(cJSON_GetObjectItem(sec, "phases"), "local");
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(ph, "steady")), "12 steps: JSON steady null");
  why = cJSON_GetObjectItem(cJSON_GetObjectItem(ph, "why"), "steady");
  CHECK(cJSON_IsString(why) && strstr(why->valuestring, "needs 20"), "why.steady: %s",
        cJSON_IsString(why) ? why->valuestring : "(none)");
  cJSON_Delete(sec);
  findings_free(&fl);
  return check_summary();
}
