/* test_baseline.c: --baseline's floors carry the baseline's spread (verdict/baseline.h), on documents written down
 * here and judged through accept_judge_doc: the robust spreads (2 runs: half the difference; 3 or more: 1.4826 x
 * MAD); a healthy re-run 5 % (and 12 %) below a 1-run baseline passes, the floor saying "1 run, between-run CV
 * assumed 5 %"; a 3-run baseline with 1 % spread fails a GPU and a pair 12 % and 20 % below the rest; a drop the
 * whole run shares moves the floors and is said once (test_shift); a baseline whose GEMM drifted
 * inside its run, or whose pairs spread 3x, is refused for that figure with the reason (never a point floor), one
 * that spreads 14 % widens its floors and says so; a run whose pairs spread 3x is told it is a poor baseline; the
 * pair level handed to the pair model (accept_baseline_pair_level); a comma list naming a missing file is a usage
 * error naming it; the allreduce inside a node gets its floor the same way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accept_verdicts.h"
#include "pair_judge.h"
#include "baseline.h"
#include "check.h"

/* The GPUs' model: a GPU's name (the GPU model's 5 % row for a move of its own between runs; the CPU's 10 % would make
 * a rank 20 % below three identical peers "cannot tell", test_gpu_model.c) with no built-in floors */
#define MODEL "gpu under test"

/* N nodes of one rank each (host hK), rank k's fp32 GEMM gemm[k] (its first and last seconds first[k] and
 * last[k] times it; NULL: 1, 1) and the pairs' busbw pair[] in the order 0-1, 0-2, ..., 1-2, ... (NULL: none). */
static void doc_make(result_doc *d, int N, const double *gemm, const double *first, const double *last,
                     const double *pair) {
  result_init(d);
  d->ranks = calloc((size_t)N, sizeof *d->ranks);
  d->nranks = N;
  for (int i = 0; i < N; i++) {
    char h[16], rk[16], m[64];
    snprintf(h, sizeof h, "h%d", i);
    snprintf(rk, sizeof rk, "%d", i);
    d->ranks[i].rank = i, d->ranks[i].node = i, d->ranks[i].host = strdup(h);
    if (!gemm) continue;
    const char *what[] = {"tflops", "first_tflops", "last_tflops"};
    double v[] = {gemm[i], gemm[i] * (first ? first[i] : 1), gemm[i] * (last ? last[i] : 1)};
    for (int k = 0; k < 3; k++) {
      snprintf(m, sizeof m, "gemm_fp32_%s", what[k]);
      result_add(d, "accept", "world", m, "TFLOP/s", BETTER_HIGHER, v[k], NULL, NULL, 0, "rank", rk, "host", h, "gpu",
                 "", "model", MODEL, NULL);
    }
  }
  int p = 0;
  for (int a = 0; pair && a < N; a++)
    for (int b = a + 1; b < N; b++, p++) {
      char g[32], hosts[32];
      snprintf(g, sizeof g, "pair:%d-%d", a, b);
      snprintf(hosts, sizeof hosts, "h%d,h%d", a, b);
      result_add(d, "allreduce", g, "busbw_gbs", "GB/s", BETTER_HIGHER, pair[p], NULL, NULL, 0, "hosts", hosts, NULL);
    }
}

static void fill(double *v, int n, double x) {
  for (int i = 0; i < n; i++) v[i] = x;
}

/* The findings of check (NULL: any) of severity sev whose text holds needle (NULL: any). */
static int count(const result_doc *d, const char *check, finding_severity sev, const char *needle) {
  int k = 0;
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    k += (!check || !strcmp(f->check, check)) && f->severity == sev && (!needle || strstr(f->text, needle));
  }
  return k;
}

/* Judges a run of 4 nodes (GEMM g, every pair pv) against runs baseline documents. */
static int judge(result_doc *d, double g, double pv, const result_doc *base, int runs) {
  double gemm[4], pair[6];
  fill(gemm, 4, g), fill(pair, 6, pv);
  doc_make(d, 4, gemm, NULL, NULL, pair);
  accept_rules rules = {.rel_warn_pct = 5, .rel_fail_pct = 10, .tolerance_pct = 10, .baseline = base,
                        .baseline_runs = runs};
  return accept_judge_doc(d, &rules) == DDP_OK;
}

/* As judge, with only GPU 0 at g and pair 0-1 at pv; the others at the baselines' level (1 and 10). */
static int judge_one(result_doc *d, double g, double pv, const result_doc *base, int runs) {
  double gemm[4], pair[6];
  fill(gemm, 4, 1), fill(pair, 6, 10);
  gemm[0] = g, pair[0] = pv;
  doc_make(d, 4, gemm, NULL, NULL, pair);
  accept_rules rules = {.rel_warn_pct = 5, .rel_fail_pct = 10, .tolerance_pct = 10, .baseline = base,
                        .baseline_runs = runs};
  return accept_judge_doc(d, &rules) == DDP_OK;
}

static void test_spread(void) {
  double two[] = {log(1.0), log(1.1)};
  CHECK(fabs(baseline_spread_log(two, 2) - log(1.1) / 2) < 1e-12, "2 runs: half the difference");
  double three[] = {0, 0.01, -0.02, NAN};
  CHECK(fabs(baseline_spread_log(three, 4) - 1.4826 * 0.01) < 1e-12, "3 runs: 1.4826 x MAD (%g)",
        baseline_spread_log(three, 4));
  double one[] = {0.3};
  CHECK(isnan(baseline_spread_log(one, 1)), "1 run: no spread");
  double s[] = {10, 10, 10, 11, 9};
  result_record x = {.samples = s, .nsamples = 5};
  /* logs about log 10: 0 0 0 log 1.1 log 0.9 -> MAD 0 */
  CHECK(baseline_samples_spread(&x) == 0, "a record's samples: MAD 0 when most agree (%g)", baseline_samples_spread(&x));
  double t[] = {10, 11, 9.1};
  x.samples = t, x.nsamples = 3;
  CHECK(fabs(baseline_samples_spread(&x) - 1.4826 * log(10 / 9.1)) < 1e-9, "3 samples: 1.4826 x MAD of their logs (%g)",
        baseline_samples_spread(&x));
  x.nsamples = 2;
  CHECK(isnan(baseline_samples_spread(&x)), "2 samples: none");
}

static void test_one_run(void) {
  result_doc b, d;
  double gemm[4], pair[6];
  fill(gemm, 4, 1.0), fill(pair, 6, 10);
  doc_make(&b, 4, gemm, NULL, NULL, pair);
  /* 5 % below: passes, the floors saying how they were made */
  CHECK(judge(&d, 0.95, 9.5, &b, 1), "judge 5 %% below");
  CHECK(count(&d, NULL, SEV_FAIL, NULL) == 0 && count(&d, NULL, SEV_WARN, NULL) == 0,
        "a healthy re-run 5 %% below a 1-run baseline: no failure, no warning (%d, %d)",
        count(&d, NULL, SEV_FAIL, NULL), count(&d, NULL, SEV_WARN, NULL));
  CHECK(count(&d, "gemm_fp32", SEV_INFO, "1 run, between-run CV assumed 5 %") == 4 &&
            count(&d, "pair_busbw.abs", SEV_INFO, "1 run, between-run CV assumed 5 %") == 6,
        "each floor says it comes from 1 run with an assumed CV");
  result_free(&d);
  /* 12 % below: inside 3 x 5 % (13.6 %), beyond the old point floor less 10 % */
  CHECK(judge(&d, 0.88, 8.8, &b, 1), "judge 12 %% below");
  CHECK(count(&d, "gemm_fp32", SEV_FAIL, NULL) == 0 && count(&d, "pair_busbw.abs", SEV_FAIL, NULL) == 0,
        "12 %% below a 1-run baseline is within its assumed spread: %d, %d failures",
        count(&d, "gemm_fp32", SEV_FAIL, NULL), count(&d, "pair_busbw.abs", SEV_FAIL, NULL));
  result_free(&d);
  /* one GPU and one pair 20 % below: they fail (the rest at the baseline's level: no shared shift) */
  CHECK(judge_one(&d, 0.80, 8.0, &b, 1), "judge 20 %% below");
  CHECK(count(&d, "gemm_fp32", SEV_FAIL, NULL) == 1 && count(&d, "pair_busbw.abs", SEV_FAIL, NULL) == 1 &&
            count(&d, "baseline_shift", SEV_INFO, NULL) + count(&d, "baseline_shift", SEV_WARN, NULL) == 0,
        "one GPU and one pair 20 %% below a 1-run baseline fail, no shift said (%d, %d, %d)",
        count(&d, "gemm_fp32", SEV_FAIL, NULL), count(&d, "pair_busbw.abs", SEV_FAIL, NULL),
        count(&d, "baseline_shift", SEV_INFO, NULL) + count(&d, "baseline_shift", SEV_WARN, NULL));
  result_free(&d), result_free(&b);
}

/* A 3-run baseline of 4 nodes at levels 1.00, 1.01 and 0.99 (GEMM) and 10 times that (pairs): spread 1.5 %. */
static void three_runs(result_doc *b) {
  const double lv[3] = {1.00, 1.01, 0.99};
  for (int k = 0; k < 3; k++) {
    double gemm[4], pair[6];
    fill(gemm, 4, lv[k]), fill(pair, 6, 10 * lv[k]);
    doc_make(&b[k], 4, gemm, NULL, NULL, pair);
  }
}

static void test_three_runs(void) {
  result_doc b[3], d;
  three_runs(b);
  CHECK(judge_one(&d, 0.80, 8.0, b, 3), "judge a 20 %% drop");
  CHECK(count(&d, "gemm_fp32", SEV_FAIL, "3 runs, spread 1.5 %") == 1 &&
            count(&d, "pair_busbw.abs", SEV_FAIL, "3 runs, spread 1.5 %") == 1,
        "a 20 %% drop fails a 3-run baseline of 1 %% spread, which the floor states");
  result_free(&d);
  CHECK(judge_one(&d, 0.88, 8.8, b, 3), "judge a 12 %% drop");
  /* the GEMM: below its floor (--tolerance-pct the margin), but against the 3 peers beside it the GPU model cannot
   * tell (a GPU moves 5 % on its own in 1 run of 20, which 12 GPU-runs of baseline do not measure): a warning */
  CHECK(count(&d, "gemm_fp32", SEV_WARN, "--tolerance-pct); cannot tell: against the peers") == 1 &&
            count(&d, "gemm_fp32", SEV_FAIL, NULL) == 0 && count(&d, "pair_busbw.abs", SEV_FAIL, NULL) == 1,
        "a 12 %% drop: the GEMM's floor says it and the GPU model cannot tell; the pair fails its floor");
  result_free(&d);
  CHECK(judge(&d, 0.97, 9.7, b, 3), "judge a 3 %% drop");
  CHECK(count(&d, NULL, SEV_FAIL, NULL) == 0, "a 3 %% drop passes");
  result_free(&d);
  /* the pair level for the pair model */
  accept_rules rules = {.tolerance_pct = 10, .baseline = b, .baseline_runs = 3};
  double lev = NAN, sd = NAN;
  int runs = 0;
  CHECK(accept_baseline_pair_level(&rules, &lev, &sd, &runs) == 1 && fabs(lev - log(10)) < 1e-12 && runs == 3 &&
            fabs(sd - 1.4826 * log(1.01)) < 2e-4,
        "pair level: log 10, sd 1.4826 x MAD, 3 runs (%g %g %d)", lev, sd, runs);
  /* 2 runs: half the difference, and the floor at least the assumed CV */
  CHECK(judge_one(&d, 0.88, 8.8, b + 1, 2), "judge 2 runs");
  CHECK(count(&d, "gemm_fp32", SEV_WARN, "2 runs, spread 1.0 %, at least the assumed 5 %") == 1 &&
            count(&d, "gemm_fp32", SEV_FAIL, NULL) == 0,
        "2 runs: spread 1 %% stated, floor at least 3 x 5 %% (12 %% below: in the warn band above it)");
  result_free(&d);
  rules.baseline = NULL;
  CHECK(accept_baseline_pair_level(&rules, &lev, &sd, &runs) == 0, "no baseline: no pair level");
  for (int k = 0; k < 3; k++) result_free(&b[k]);
}

static void test_noisy(void) {
  result_doc b, d;
  /* the hostile trial's baseline: GEMM from -21 % to +61 % in its run, healthy pairs from 0.0595 to 0.182 GB/s */
  double gemm[4], first[4], last[4], pair[6] = {0.0595, 0.182, 0.11, 0.075, 0.15, 0.09};
  fill(gemm, 4, 1.0), fill(first, 4, 0.79), fill(last, 4, 1.61);
  doc_make(&b, 4, gemm, first, last, pair);
  /* used: refused for both figures, with the reason; a run 12 % (GEMM) and 59 % (pairs) below is not failed by it */
  CHECK(judge(&d, 0.88, 0.11 * 0.412, &b, 1), "judge against a noisy baseline");
  CHECK(count(&d, "baseline_noisy", SEV_WARN, "baseline too noisy for gemm_fp32_tflops: spread") == 1 &&
            count(&d, "baseline_noisy", SEV_WARN, "baseline too noisy for pair busbw: spread") == 1,
        "a noisy baseline is refused for each figure, said once each");
  CHECK(count(&d, "gemm_fp32", SEV_FAIL, NULL) == 0 && count(&d, "pair_busbw.abs", SEV_FAIL, NULL) == 0 &&
            count(&d, NULL, SEV_INFO, "floor from baseline") == 0,
        "never a point floor: no figure judged against it");
  accept_rules rules = {.tolerance_pct = 10, .baseline = &b, .baseline_runs = 1};
  double lev = NAN, sd = NAN;
  int runs = 0;
  CHECK(accept_baseline_pair_level(&rules, &lev, &sd, &runs) == 0 && isnan(lev), "too noisy: no pair level");
  /* written: the baseline itself, judged as a run, is told it is a poor one */
  result_free(&d);
  CHECK(accept_judge_doc(&b, &(accept_rules){.rel_warn_pct = 5, .rel_fail_pct = 10, .tolerance_pct = 10}) == DDP_OK,
        "judge the noisy run");
  CHECK(count(&b, "baseline_quality", SEV_WARN, "this run's pair figures spread 3.1x") == 1 &&
            count(&b, "baseline_quality", SEV_WARN, "this run's gemm_fp32_tflops varied inside the run on 4 of 4 GPUs") == 1,
        "a noisy run is flagged as a poor baseline when written");
  result_free(&b);
  /* --tolerance-pct beyond the noise: the floor stands (the hard floor is the wider one) */
  fill(first, 4, 1), fill(last, 4, 1);
  doc_make(&b, 4, gemm, first, last, pair);
  double g4[4], p6[6];
  fill(g4, 4, 1);
  for (int p = 0; p < 6; p++) p6[p] = pair[p] * (p ? 1 : 0.05);
  doc_make(&d, 4, g4, NULL, NULL, p6);
  CHECK(accept_judge_doc(&d, &(accept_rules){.tolerance_pct = 90, .baseline = &b}) == DDP_OK &&
            count(&d, "pair_busbw.abs", SEV_FAIL, "less 90 % (--tolerance-pct)") == 1 &&
            count(&d, "baseline_noisy", SEV_WARN, NULL) == 0,
        "--tolerance-pct 90 covers the noise: a pair at 5 %% of the baseline fails it");
  result_free(&d), result_free(&b);
  /* 14 % spread in its pairs: widened, said, not refused */
  double mild[6] = {10, 11, 9.1, 10, 11, 9.1};
  doc_make(&b, 4, NULL, NULL, NULL, mild);
  fill(p6, 6, 7.5);
  doc_make(&d, 4, NULL, NULL, NULL, p6);
  CHECK(accept_judge_doc(&d, &(accept_rules){.tolerance_pct = 10, .baseline = &b}) == DDP_OK &&
            count(&d, "baseline_noisy", SEV_INFO, "baseline noisy for pair busbw") == 1 &&
            count(&d, "pair_busbw.abs", SEV_INFO, "noisy: spread") == 6 && count(&d, "pair_busbw.abs", SEV_FAIL, NULL) == 0,
        "a 14 %% spread widens the pair floors and says so; 25 %% below passes them");
  CHECK(accept_baseline_pair_level(&(accept_rules){.tolerance_pct = 10, .baseline = &b}, &lev, &sd, &runs) == 1 &&
            sd > 0.1 && runs == 1,
        "1 run: the pair level's spread is at least its pairs' (%g)", sd);
  result_free(&d), result_free(&b);
  /* a quiet run is not flagged */
  fill(p6, 6, 10);
  doc_make(&d, 4, g4, NULL, NULL, p6);
  CHECK(accept_judge_doc(&d, &(accept_rules){.tolerance_pct = 10}) == DDP_OK && count(&d, "baseline_quality", SEV_WARN, NULL) == 0,
        "a quiet run is not a poor baseline");
  result_free(&d);
}

/* The allreduce inside each node (group node:<host>, label bytes), every node at v. */
static void node_add(result_doc *d, int N, double v) {
  for (int i = 0; i < N; i++) {
    char g[32];
    snprintf(g, sizeof g, "node:h%d", i);
    result_add(d, "allreduce", g, "busbw_gbs", "GB/s", BETTER_HIGHER, v, NULL, NULL, 0, "bytes", "8388608", NULL);
  }
}

/* A shift all the GPUs share: their floors move down with it (the upper quartile of the changes), no GPU fails for
 * it alone (the pairs get no shift), one job finding per figure says it (a remark within the floors' margin, a
 * warning beyond, a failure beyond BASELINE_REFUSE_PCT); a GPU far below the rest still fails; a run above its
 * baseline moves nothing; fewer than 4 figures: no shift. */
static void test_shift(void) {
  result_doc b[3], d;
  three_runs(b);
  CHECK(judge(&d, 0.88, 8.8, b, 3), "judge a 12 %% shared drop");
  CHECK(count(&d, "gemm_fp32", SEV_FAIL, NULL) == 0 && count(&d, "pair_busbw.abs", SEV_FAIL, NULL) == 6 &&
            count(&d, "baseline_shift", SEV_WARN, "sat 12.0 % below their baseline") == 1 &&
            count(&d, "gemm_fp32", SEV_INFO, "moved -12.0 % with the job's shift") == 4,
        "a 12 %% drop every GPU shares: floors moved, no GPU fails, one warning; the pairs get no shift and fail "
        "(%d fail, %d warn)", count(&d, NULL, SEV_FAIL, NULL), count(&d, "baseline_shift", SEV_WARN, NULL));
  result_free(&d);
  double gemm[4], pair[6];
  fill(gemm, 4, 0.88), fill(pair, 6, 8.8);
  gemm[2] = 0.5, pair[5] = 4;
  doc_make(&d, 4, gemm, NULL, NULL, pair);
  accept_rules rules = {.rel_warn_pct = 5, .rel_fail_pct = 10, .tolerance_pct = 10, .baseline = b, .baseline_runs = 3};
  CHECK(accept_judge_doc(&d, &rules) == DDP_OK && count(&d, "gemm_fp32", SEV_FAIL, "moved -12.0 %") == 1 &&
            count(&d, "gemm_fp32", SEV_FAIL, NULL) == 1,
        "beside the shared 12 %%, a GPU at half fails alone (%d)", count(&d, "gemm_fp32", SEV_FAIL, NULL));
  result_free(&d);
  CHECK(judge(&d, 0.3, 3, b, 3), "judge a 70 %% shared drop");
  CHECK(count(&d, "baseline_shift", SEV_FAIL, "far beyond any load") == 1 && count(&d, "gemm_fp32", SEV_FAIL, NULL) == 0,
        "a 70 %% drop everywhere: the job fails on it, no GPU alone");
  result_free(&d);
  CHECK(judge(&d, 0.97, 9.7, b, 3), "judge a 3 %% shared drop");
  CHECK(count(&d, "baseline_shift", SEV_INFO, "sat 3.0 % below") == 1 && count(&d, NULL, SEV_WARN, NULL) == 0,
        "3 %% shared: a remark, within the margin");
  result_free(&d);
  CHECK(judge(&d, 1.2, 12, b, 3), "judge a run above its baseline");
  CHECK(count(&d, "baseline_shift", SEV_INFO, NULL) == 0, "above the baseline: nothing moves");
  result_free(&d);
  double three[] = {-0.2, -0.2, -0.2}, four[] = {-0.3, -0.2, -0.1, NAN, 0};
  CHECK(baseline_shared_shift(three, 3) == 0 && fabs(baseline_shared_shift(four, 5) + 0.075) < 1e-12,
        "under 4 figures no shift; else the upper quartile of the finite ones (%g)", baseline_shared_shift(four, 5));
  for (int k = 0; k < 3; k++) result_free(&b[k]);
}

static void test_node(void) {
  result_doc b, d;
  doc_make(&b, 4, NULL, NULL, NULL, NULL);
  node_add(&b, 4, 100);
  doc_make(&d, 4, NULL, NULL, NULL, NULL);
  node_add(&d, 4, 95);
  accept_rules rules = {.rel_warn_pct = 5, .rel_fail_pct = 10, .tolerance_pct = 10, .baseline = &b};
  CHECK(accept_judge_doc(&d, &rules) == DDP_OK &&
            count(&d, "node_busbw", SEV_INFO, "floor from baseline 100 (1 run, between-run CV assumed 5 %)") == 4 &&
            count(&d, "node_busbw", SEV_FAIL, NULL) == 0,
        "node allreduce 5 %% below a 1-run baseline: passes its floor, which says so");
  result_free(&d);
  doc_make(&d, 4, NULL, NULL, NULL, NULL);
  node_add(&d, 4, 80);
  CHECK(accept_judge_doc(&d, &rules) == DDP_OK && count(&d, "node_busbw", SEV_FAIL, "floor from baseline") == 4,
        "node allreduce 20 %% below: fails");
  result_free(&d), result_free(&b);
}

static void test_load(void) {
  char dir[] = "/tmp/test-baseline-XXXXXX", a[300], list[700], msg[600];
  CHECK(mkdtemp(dir) != NULL, "temporary folder");
  snprintf(a, sizeof a, "%s/missing.json", dir);
  snprintf(list, sizeof list, "%s/also-missing.json,%s", dir, a);
  result_doc *docs = (result_doc *)1;
  int n = -1;
  ddp_usage_capture(msg, sizeof msg);
  ddp_result r = baseline_docs_load(list, "accept: --baseline", &docs, &n);
  ddp_usage_capture(NULL, 0);
  CHECK(r == DDP_ERR_USAGE && strstr(msg, "also-missing.json") && !docs && n == 0,
        "a missing file in the list: usage error naming it: '%s'", msg);
  snprintf(list, sizeof list, "%s,", a);
  ddp_usage_capture(msg, sizeof msg);
  r = baseline_docs_load(list, "accept: --baseline", &docs, &n);
  ddp_usage_capture(NULL, 0);
  CHECK(r == DDP_ERR_USAGE && (strstr(msg, "missing.json") || strstr(msg, "empty file name")), "an empty name: '%s'", msg);
  rmdir(dir);
}

int main(void) {
  test_spread();
  test_one_run();
  test_three_runs();
  test_noisy();
  test_shift();
  test_node();
  test_load();
  return check_summary();
}
