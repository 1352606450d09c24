/* test_compare.c: compare's verdicts on synthetic samples with a known shift and noise (tests/lib/compare_synth.h),
 * the report's four formats, exit codes and the A/A noise file. What must hold:
 *   - a 5 % shift with 1 % noise and 10 runs a side is found in every one of 100 seeded trials, with the
 *     right sign for the metric's direction, and the CI covers the shift;
 *   - A/A with the same noise is '~' in at least 95 of 100 seeded trials;
 *   - a 0.5 % shift inside a 2 % noise floor is '~' although its p is tiny; the same through --noise FILE;
 *   - fewer than 4 runs a side: medians and changes, no verdict, no regression exit, whatever the shift; marked
 *     "not enough runs to test", and WARN on the bottom line when a median is worse beyond the threshold;
 *   - the summary (before the detail) and the bottom line (the last line) say FAIL with the regressions, PASS
 *     when nothing regressed; the text fits CMP_TEXT_COLS columns but for the bottom line, --wide does not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "compare.h"
#include "compare_synth.h"
#include "testlib.h"

#define N 10

static cmp_input make_input(const double *a, int na, const double *b, int nb, cmp_better better) {
  return (cmp_input){.a = a, .b = b, .na = na, .nb = nb, .runs_a = na, .runs_b = nb, .better = better};
}

static void test_shift_found(void) {
  cmp_options o;
  cmp_options_defaults(&o);
  int found = 0, covered = 0, worse_better = 0;
  for (int t = 0; t < 100; t++) {
    synth_rng r = {1000 + t};
    double a[N], b[N];
    synth_fill(&r, a, N, 12.5, 0.01);
    synth_fill(&r, b, N, 12.5 * 1.05, 0.01);
    cmp_input in = make_input(a, N, b, N, CMP_LOWER_BETTER); /* a step time: 5 % slower is worse */
    cmp_row w;
    CHECK(cmp_evaluate(&in, &o, &w) == 0, "trial %d: evaluate failed", t);
    found += w.verdict == '-' && w.regression && w.p < 0.05;
    covered += w.ci_lo_pct <= 5.0 && 5.0 <= w.ci_hi_pct;
    in.better = CMP_HIGHER_BETTER; /* the same numbers as a bandwidth: better */
    CHECK(cmp_evaluate(&in, &o, &w) == 0, "trial %d: evaluate failed", t);
    worse_better += w.verdict == '+' && !w.regression;
  }
  CHECK(found == 100, "5 %% shift, 1 %% noise, 10 runs: found as a regression in %d of 100 trials", found);
  CHECK(worse_better == 100, "the same shift on a higher-is-better metric: '+' in %d of 100", worse_better);
  /* a 95 % interval covers the true shift in about 95 of 100; allow the binomial spread */
  CHECK(covered >= 88, "CI covers the true 5 %% shift in %d of 100 trials", covered);
  printf("5%% shift, 1%% noise, 10+10 runs: found %d/100, CI covers the shift %d/100\n", found, covered);
}

static void test_aa(void) {
  cmp_options o;
  cmp_options_defaults(&o);
  int same = 0, covered = 0;
  for (int t = 0; t < 100; t++) {
    synth_rng r = {5000 + t};
    double a[N], b[N];
    synth_fill(&r, a, N, 12.5, 0.01);
    synth_fill(&r, b, N, 12.5, 0.01);
    cmp_input in = make_input(a, N, b, N, CMP_LOWER_BETTER);
    cmp_row w;
    CHECK(cmp_evaluate(&in, &o, &w) == 0, "A/A trial %d: evaluate failed", t);
    same += w.verdict == '~';
    covered += w.ci_lo_pct <= 0 && 0 <= w.ci_hi_pct;
  }
  CHECK(same >= 95, "A/A with 1 %% noise: '~' in %d of 100 trials (want >= 95)", same);
  CHECK(same == covered, "'~' (%d) and 'CI covers 0' (%d) disagree: the CI must invert the same test", same, covered);
  printf("A/A, 1%% noise, 10+10 runs: ~ in %d/100\n", same);
}

static void test_floor(void) {
  cmp_options o;
  cmp_options_defaults(&o);
  synth_rng r = {77};
  double a[N], b[N];
  synth_fill(&r, a, N, 12.5, 0.0005); /* quiet enough that 0.5 % is significant by p alone */
  synth_fill(&r, b, N, 12.5 * 1.005, 0.0005);
  cmp_input in = make_input(a, N, b, N, CMP_LOWER_BETTER);
  cmp_row w;
  cmp_evaluate(&in, &o, &w);
  CHECK(w.verdict == '-' && w.p < 1e-3, "0.5 %% shift, 0.05 %% noise, no floor: verdict '%c' p %g (want '-')",
        w.verdict, w.p);
  o.noise_pct = 2.0;
  cmp_evaluate(&in, &o, &w);
  CHECK(w.verdict == '~' && w.p < 1e-3 && w.floor_pct == 2.0 && !w.regression,
        "0.5 %% shift inside a 2 %% floor: verdict '%c' p %g floor %g (want '~')", w.verdict, w.p, w.floor_pct);
  o.noise_pct = 0;
  in.floor_pct = 2.0; /* the same floor from a noise file's entry */
  cmp_evaluate(&in, &o, &w);
  CHECK(w.verdict == '~' && w.floor_pct == 2.0, "per-metric floor 2 %%: verdict '%c'", w.verdict);

  /* threshold: significant but small regressions are '-' without failing the exit code */
  synth_fill(&r, b, N, 12.5 * 1.015, 0.0005);
  in.floor_pct = 0;
  cmp_report rep;
  cmp_report_init(&rep, &o);
  CHECK(cmp_report_add(&rep, "ddp step_ms", "ms", &in) == 0, "report_add");
  CHECK(rep.lines[0].row.verdict == '-' && !rep.lines[0].row.regression && cmp_report_exit_code(&rep) == 0,
        "1.5 %% regression under a 2 %% threshold: verdict '%c' regression %d exit %d", rep.lines[0].row.verdict,
        rep.lines[0].row.regression, cmp_report_exit_code(&rep));
  cmp_report_free(&rep);
  o.threshold_pct = 1.0;
  cmp_report_init(&rep, &o);
  cmp_report_add(&rep, "ddp step_ms", "ms", &in);
  CHECK(cmp_report_exit_code(&rep) == CMP_EXIT_REGRESSION, "1.5 %% regression over a 1 %% threshold: exit %d",
        cmp_report_exit_code(&rep));
  cmp_report_free(&rep);
}

static void test_few_runs(void) {
  cmp_options o;
  cmp_options_defaults(&o);
  double a[3] = {10, 10.1, 9.9}, b[N];
  for (int i = 0; i < N; i++) b[i] = 20 + 0.01 * i;
  cmp_input in = make_input(a, 3, b, N, CMP_LOWER_BETTER);
  cmp_report rep;
  cmp_report_init(&rep, &o);
  rep.runs_a = 3, rep.runs_b = N;
  CHECK(cmp_report_add(&rep, "local step_ms", "ms", &in) == 0, "report_add");
  const cmp_row *w = &rep.lines[0].row;
  CHECK(!w->tested && w->verdict == ' ' && isnan(w->p) && w->med_a == 10 && fabs(w->med_b - 20.045) < 1e-12,
        "3 runs vs 10: tested %d verdict '%c' p %g medians %g %g (want medians only)", w->tested, w->verdict, w->p,
        w->med_a, w->med_b);
  CHECK(cmp_report_exit_code(&rep) == 0, "100 %% slower on 3 runs must not claim a regression");
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cmp_report_print(&rep, CMP_TEXT, f);
  fclose(f);
  CHECK(strstr(buf, "no significance can be claimed") && strstr(buf, "not enough runs to test") &&
            strstr(buf, "+100.5%") && strstr(buf, "? worse"),
        "text output does not show the change marked not enough runs to test:\n%s", buf);
  CHECK(w->moved_worse, "100 %% slower on 3 runs: not moved worse");
  char bottom[1024];
  cmp_bottom_line(&rep, bottom, sizeof bottom);
  CHECK(strstr(bottom, "ddpbench compare: WARN  1 median worse beyond 2 %, not enough runs to test (local step_ms "
                       "+100.5 %)") == bottom && strstr(bottom, "0 fail, 1 warn)"),
        "3 runs, 100 %% slower: bottom line %s", bottom);
  const char *last = buf + strlen(buf) - 1;
  while (last > buf && last[-1] != '\n') last--;
  CHECK(!strncmp(last, bottom, strlen(bottom)), "the bottom line is not the text's last line:\n%s", last);
  free(buf);
  cmp_report_free(&rep);

  /* pooled steps: many samples, but the runs behind them still decide */
  double sa[60], sb[60];
  synth_rng r = {3};
  synth_fill(&r, sa, 60, 10, 0.01);
  synth_fill(&r, sb, 60, 11, 0.01);
  cmp_input p = {.a = sa, .b = sb, .na = 60, .nb = 60, .runs_a = 3, .runs_b = 3, .better = CMP_LOWER_BETTER};
  cmp_row pw;
  cmp_evaluate(&p, &o, &pw);
  CHECK(!pw.tested, "3 runs pooled into 60 steps a side must still print medians only");
  double nan_[2] = {1, NAN};
  cmp_input bad = make_input(nan_, 2, b, N, CMP_LOWER_BETTER);
  CHECK(cmp_evaluate(&bad, &o, &pw) == -1, "NaN sample accepted");
  bad = make_input(a, 0, b, N, CMP_LOWER_BETTER);
  CHECK(cmp_evaluate(&bad, &o, &pw) == -1, "empty side accepted");
}

static char *print_to_string(const cmp_report *r, cmp_format fmt) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cmp_report_print(r, fmt, f);
  fclose(f);
  return buf;
}

static void test_formats_and_noise_file(void) {
  cmp_options o;
  cmp_options_defaults(&o);
  synth_rng r = {11};
  double a[N], b[N], c[N], d[N];
  synth_fill(&r, a, N, 12.5, 0.01);
  synth_fill(&r, b, N, 12.5 * 1.05, 0.01);
  synth_fill(&r, c, N, 300, 0.01);
  synth_fill(&r, d, N, 300, 0.01);
  cmp_report rep;
  cmp_report_init(&rep, &o);
  rep.label_a = strdup("a/"), rep.label_b = strdup("b, with comma/");
  rep.runs_a = rep.runs_b = N;
  cmp_input t = make_input(a, N, b, N, CMP_LOWER_BETTER), bw = make_input(c, N, d, N, CMP_HIGHER_BETTER);
  cmp_report_add(&rep, "ddp step_ms", "ms", &t);
  cmp_report_add(&rep, "comm busbw_gbs 1 MiB", "GB/s", &bw);
  cmp_report_add_diff(&rep, "versions.nccl_runtime", "2.28.3", "2.28.9", 0, 0, 0);
  cmp_report_add_diff(&rep, "env.NCCL_ALGO", "Ring (3 runs), Tree (7 runs)", "Ring", 1, 0, 0);

  char *text = print_to_string(&rep, CMP_TEXT);
  char *sum_at = strstr(text, "summary: FAIL"), *diff_at = strstr(text, "versions.nccl_runtime"),
       *rows_at = strstr(text, "\nddp step_ms");
  CHECK(sum_at && diff_at && rows_at && sum_at < diff_at && diff_at < rows_at,
        "text: the summary, then the provenance diff, then the metrics:\n%s", text);
  CHECK(strstr(text, "1 regressed beyond 2 %:\n    ddp step_ms") != NULL, "text: the summary does not list it:\n%s", text);
  CHECK(strstr(text, "(A's runs disagree)") != NULL, "text: a side whose runs disagree is not flagged");
  CHECK(strstr(text, "- REGRESSION") != NULL, "text: the regression is not named:\n%s", text);
  char bottom[1024];
  cmp_bottom_line(&rep, bottom, sizeof bottom);
  CHECK(strstr(bottom, "ddpbench compare: FAIL  1 regression beyond 2 % (ddp step_ms +5.4 %)  1 unchanged") == bottom &&
            strstr(bottom, "(A: 10 runs, B: 10 runs; noise floor none; 1 fail, 0 warn)"),
        "bottom line: %s", bottom);
  int widest = 0, lines = 0;
  for (const char *p = text; *p; lines++) {
    const char *e = strchr(p, '\n');
    int len = e ? (int)(e - p) : (int)strlen(p);
    if (e && e[1] && len > widest) widest = len; /* every line but the last (the bottom line) */
    p = e ? e + 1 : p + len;
  }
  CHECK(widest <= CMP_TEXT_COLS, "text: a line of %d columns (limit %d)", widest, CMP_TEXT_COLS);
  printf("%s", text);
  free(text);
  rep.opt.wide = 1;
  text = print_to_string(&rep, CMP_TEXT);
  CHECK(strstr(text, "worse, beyond threshold") && strstr(text, "unit      better"), "--wide: the full table:\n%s", text);
  free(text);
  rep.opt.wide = 0;
  /* nothing worse: PASS */
  cmp_report pass;
  cmp_report_init(&pass, &o);
  pass.runs_a = pass.runs_b = N;
  cmp_report_add(&pass, "comm busbw_gbs 1 MiB", "GB/s", &bw);
  cmp_bottom_line(&pass, bottom, sizeof bottom);
  CHECK(strstr(bottom, "ddpbench compare: PASS  no regression beyond 2 %") == bottom && cmp_report_exit_code(&pass) == 0,
        "nothing worse: %s", bottom);
  cmp_report_free(&pass);

  char *csv = print_to_string(&rep, CMP_CSV);
  CHECK(!strncmp(csv, "metric,unit,better,", 19) && strstr(csv, "\nddp step_ms,ms,lower,10,10,") &&
            strstr(csv, "#") == NULL && strstr(csv, ",regressed,1,A,B,10,10,2\n"),
        "csv rows missing:\n%s", csv);
  free(csv);
  char *md = print_to_string(&rep, CMP_MD);
  CHECK(strstr(md, "| metric | unit |") && strstr(md, "| `versions.nccl_runtime` | 2.28.3 | 2.28.9 |"),
        "md tables missing:\n%s", md);
  free(md);
  char *js = print_to_string(&rep, CMP_JSON);
  cJSON *doc = cJSON_Parse(js);
  cJSON *ms = cJSON_GetObjectItem(doc, "metrics");
  CHECK(doc && cJSON_GetArraySize(ms) == 2 &&
            strcmp(cJSON_GetObjectItem(cJSON_GetArrayItem(ms, 0), "verdict")->valuestring, "-") == 0 &&
            cJSON_IsTrue(cJSON_GetObjectItem(doc, "regression")) &&
            !strcmp(cJSON_GetObjectItem(doc, "verdict")->valuestring, "FAIL") &&
            cJSON_GetObjectItem(doc, "exit_code")->valueint == 5 &&
            !strncmp(cJSON_GetObjectItem(doc, "bottom_line")->valuestring, "ddpbench compare: FAIL", 22),
        "json: metrics/verdict/regression wrong:\n%s", js);
  cJSON_Delete(doc);
  free(js);

  /* --noise: a recorded A/A (same_provenance) gives each metric the larger |CI end| as its floor */
  rep.same_provenance = 1;
  rep.opt.wide = 1; /* the A/A noise column is --wide's */
  char *aa_text = print_to_string(&rep, CMP_TEXT), want_spread[32];
  rep.opt.wide = 0;
  snprintf(want_spread, sizeof want_spread, "+-%.2f%%",
           fmax(fabs(rep.lines[0].row.ci_lo_pct), fabs(rep.lines[0].row.ci_hi_pct)));
  CHECK(strstr(aa_text, "A/A noise") && strstr(aa_text, want_spread), "A/A text lacks the noise column (%s):\n%s",
        want_spread, aa_text);
  free(aa_text);
  char path[] = "/tmp/ddpbench-test-noise-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  cmp_report_print(&rep, CMP_JSON, f);
  fclose(f);
  cmp_noise noise;
  int rc = cmp_noise_read(path, &noise);
  double want = fmax(fabs(rep.lines[0].row.ci_lo_pct), fabs(rep.lines[0].row.ci_hi_pct));
  CHECK(rc == 0 && noise.n == 2 && fabs(cmp_noise_floor(&noise, "ddp step_ms") - want) < 1e-4 &&
            cmp_noise_floor(&noise, "no such metric") == 0,
        "noise file: rc %d n %d floor %g (want %g)", rc, noise.n, cmp_noise_floor(&noise, "ddp step_ms"), want);
  cmp_noise_free(&noise);
  rep.same_provenance = 0; /* not an A/A: refused */
  f = fopen(path, "w");
  cmp_report_print(&rep, CMP_JSON, f);
  fclose(f);
  CHECK(cmp_noise_read(path, &noise) == 2, "a comparison of different stacks accepted as a noise floor");
  tl_file_write(path, "{\"ddpbench_compare\": 1, \"same_provenance\": true, \"metrics\": ["); /* truncated */
  CHECK(cmp_noise_read(path, &noise) == 2, "truncated noise file accepted");
  unlink(path);
  CHECK(cmp_noise_read(path, &noise) == 2, "missing noise file accepted");
  cmp_report_free(&rep);
}

int main(void) {
  test_shift_found();
  test_aa();
  test_floor();
  test_few_runs();
  test_formats_and_noise_file();
  return check_summary();
}
