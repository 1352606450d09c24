/* test_accept.c: the acceptance rules on numbers written down here: the straggler rule names a slow rank and
 * nobody on a quiet job, relative references per GPU model, verdict bands, the pair schedules (every pair
 * exactly once, disjoint within a round, the stated round counts) and localisation (a node whose every pair
 * is slow vs a single slow pair), and the failed-hosts file. Groups of 2 and 3 GPUs: 14 % of peers fails, a 12 % gap
 * inside 20 % noise is "cannot tell", of 2 without a floor "cannot tell which", healthy passes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accept_verdicts.h"
#include "hosts.h"
#include "outputs.h"
#include "rules.h"
#include "check.h"
#include "testlib.h"

static void test_robust_z(void) {
  /* median 10, deviations 0 1 1 0 20 -> MAD 1 -> z = 0.6745 * (x - 10) */
  double x[] = {10, 9, 11, 10, 30}, z[8];
  double med = accept_robust_z(x, 5, z);
  CHECK(med == 10, "median %g", med);
  CHECK(fabs(z[4] - 0.6745 * 20) < 1e-12, "z[4] = %g", z[4]);
  CHECK(fabs(z[1] + 0.6745) < 1e-12, "z[1] = %g", z[1]);
  /* MAD 0: 6 of 8 equal; mean abs deviation = (5 + 1) / 8 = 0.75 -> z = 5 / (1.253314 * 0.75) */
  double y[] = {100, 100, 100, 100, 100, 100, 105, 99};
  accept_robust_z(y, 8, z);
  CHECK(fabs(z[6] - 5 / (1.253314 * 0.75)) < 1e-9, "MAD=0 fallback z = %g", z[6]);
  double c[] = {7, 7, 7};
  accept_robust_z(c, 3, z);
  CHECK(z[0] == 0 && z[2] == 0, "constant: z = 0");
}

static void test_stragglers(void) {
  int out[16];
  double z[16];
  /* 8 ranks, rank 5 is 30 % slower: named */
  double slow[] = {100, 101, 99, 100.5, 99.5, 130, 100.2, 100.1};
  int k = accept_stragglers(slow, 8, 5, 3.5, out, z);
  CHECK(k == 1 && out[0] == 5, "one straggler, rank 5 (k = %d)", k);
  /* every rank within 0.2 %: the z-score of the slowest is large, but the 5 % rule keeps it quiet */
  double quiet[] = {100, 100.01, 100.02, 100.0, 99.99, 100.2, 100.01, 100.0};
  k = accept_stragglers(quiet, 8, 5, 3.5, out, z);
  CHECK(k == 0, "quiet job: nobody named (k = %d, z[5] = %.1f)", k, z[5]);
  CHECK(z[5] > 3.5, "the z-score alone would have named rank 5 (z = %.1f)", z[5]);
  /* widely spread job: 8 % above the median but not an outlier among its noisy peers: nobody */
  double noisy[] = {100, 92, 108, 95, 105, 90, 110, 100};
  k = accept_stragglers(noisy, 8, 5, 3.5, out, z);
  CHECK(k == 0, "noisy job: nobody named (k = %d)", k);
  /* two ranks: never (z is 0.6745 at most) */
  double two[] = {100, 200};
  CHECK(accept_stragglers(two, 2, 5, 3.5, out, z) == 0, "two ranks: nobody");
  /* faster than the median is never a straggler */
  double fast[] = {100, 100, 100, 100, 50};
  CHECK(accept_stragglers(fast, 5, 5, 3.5, out, NULL) == 0, "a fast rank is not named");
}

static void test_group_median(void) {
  const char *g[] = {"H200", "H200", "A100", "H200", "A100", "A100"};
  double x[] = {680, 670, 250, 300, 240, NAN}, ref[6];
  accept_group_median(x, g, 6, ref);
  CHECK(ref[0] == 670 && ref[3] == 670, "H200 median %g", ref[0]);
  CHECK(ref[2] == 245 && ref[5] == 245, "A100 median %g (NaN ignored)", ref[2]);
  accept_severity s;
  double margin;
  s = accept_judge(x[3], ref[3], 1, 5, 10, &margin);
  CHECK(s == ACCEPT_FAIL && fabs(margin - 100.0 * (300 - 670) / 670) < 1e-9, "slow H200 fails, margin %g", margin);
  s = accept_judge(630, 670, 1, 5, 10, &margin);
  CHECK(s == ACCEPT_WARN, "6 %% short at 5/10 warns, got %s", accept_severity_str(s));
}

static void test_relative(void) {
  /* 8 H200s, one 20 % slow: named; 2 A100s 20 % apart: too few to tell; noisy group: nobody */
  const char *g[] = {"H200", "H200", "H200", "H200", "H200", "H200", "H200", "H200", "A100", "A100"};
  double x[] = {680, 682, 678, 681, 544, 679, 683, 680, 250, 200}, ref[10], z[10], m;
  int size[10];
  accept_group_stats(x, g, 10, ref, z, size);
  CHECK(ref[4] == 680 && size[4] == 8 && size[9] == 2, "group stats: ref %g size %d", ref[4], size[4]);
  CHECK(accept_relative(x[4], ref[4], z[4], size[4], 5, 10, 3.5, &m) == ACCEPT_FAIL && fabs(m + 20) < 1e-9,
        "slow H200 fails (z %.1f, margin %g)", z[4], m);
  CHECK(accept_relative(x[0], ref[0], z[0], size[0], 5, 10, 3.5, &m) == ACCEPT_PASS, "healthy H200 passes");
  CHECK(accept_relative(x[9], ref[9], z[9], size[9], 5, 10, 3.5, &m) == ACCEPT_PASS, "two A100s: nobody named");
  const char *h[] = {"c", "c", "c", "c", "c", "c"};
  double noisy[] = {100, 80, 120, 90, 110, 85};
  accept_group_stats(noisy, h, 6, ref, z, size);
  CHECK(accept_relative(noisy[1], ref[1], z[1], size[1], 5, 10, 3.5, &m) == ACCEPT_PASS,
        "noisy group: 80 is %.0f %% below but z %.1f: nobody", m, z[1]);
}

static void test_judge(void) {
  double m;
  CHECK(accept_judge(100, 100, 1, 5, 10, &m) == ACCEPT_PASS && m == 0, "equal passes");
  CHECK(accept_judge(94, 100, 1, 5, 10, &m) == ACCEPT_WARN, "6 %% short warns");
  CHECK(accept_judge(89, 100, 1, 5, 10, &m) == ACCEPT_FAIL, "11 %% short fails");
  CHECK(accept_judge(200, 100, 1, 5, 10, &m) == ACCEPT_PASS && m == 100, "faster passes, margin +100");
  CHECK(accept_judge(112, 100, 0, 5, 10, &m) == ACCEPT_FAIL, "time 12 %% over fails");
  CHECK(accept_judge(NAN, 100, 1, 5, 10, &m) == ACCEPT_FAIL && isnan(m), "missing measurement fails closed");
  CHECK(accept_judge(5, NAN, 1, 5, 10, &m) == ACCEPT_PASS && isnan(m), "no expectation: nothing judged");
}

/* Every unordered pair once (tournament) or the ring's edges once, disjoint within each round. */
static void check_schedule(node_pairs_mode mode, int n, int want_pairs, int want_rounds) {
  int np = node_pairs(mode, n, NULL, 0);
  CHECK(np == want_pairs, "mode %d n %d: %d pairs, expected %d", mode, n, np, want_pairs);
  node_pair *p = calloc((size_t)np + 1, sizeof *p);
  CHECK(node_pairs(mode, n, p, np) == np, "same count when filled");
  int *seen = calloc((size_t)n * n, sizeof *seen), rounds = 0;
  for (int i = 0; i < np; i++) {
    CHECK(p[i].a >= 0 && p[i].a < p[i].b && p[i].b < n, "pair (%d,%d) in range and ordered", p[i].a, p[i].b);
    seen[p[i].a * n + p[i].b]++;
    if (p[i].round + 1 > rounds) rounds = p[i].round + 1;
    for (int j = 0; j < i; j++)
      if (p[j].round == p[i].round)
        CHECK(p[j].a != p[i].a && p[j].a != p[i].b && p[j].b != p[i].a && p[j].b != p[i].b,
              "n %d round %d: pairs (%d,%d) and (%d,%d) share a node", n, p[i].round, p[j].a, p[j].b, p[i].a, p[i].b);
  }
  CHECK(rounds == want_rounds, "mode %d n %d: %d rounds, expected %d", mode, n, rounds, want_rounds);
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++) {
      int want = mode == PAIRS_TOURNAMENT ? 1 : (b == a + 1 || (a == 0 && b == n - 1)) ? 1 : 0;
      CHECK(seen[a * n + b] == want, "mode %d n %d: pair (%d,%d) seen %d times, expected %d", mode, n, a, b,
            seen[a * n + b], want);
    }
  free(seen);
  free(p);
}

static void test_pairs(void) {
  for (int n = 2; n <= 17; n++) check_schedule(PAIRS_TOURNAMENT, n, n * (n - 1) / 2, n & 1 ? n : n - 1);
  check_schedule(PAIRS_RING, 2, 1, 1);
  check_schedule(PAIRS_RING, 3, 3, 3);
  check_schedule(PAIRS_RING, 8, 8, 2);
  check_schedule(PAIRS_RING, 9, 9, 3);
  check_schedule(PAIRS_RING, 64, 64, 2);
  CHECK(node_pairs(PAIRS_NONE, 8, NULL, 0) == 0, "none: no pairs");
  CHECK(node_pairs(PAIRS_TOURNAMENT, 1, NULL, 0) == 0, "one node: no pairs");
  CHECK(node_pairs_default(16) == PAIRS_TOURNAMENT && node_pairs_default(17) == PAIRS_RING, "default");
  CHECK(node_pairs_mode_parse("ring") == PAIRS_RING && node_pairs_mode_parse("all") == -1, "parse");
}

/* Bandwidth of pair (a, b): 100, times `node_factor` per bad node in it, times `pair_factor` for (pa, pb). */
static void localize_case(node_pairs_mode mode, int n, const int *bad_nodes, int nbad, double node_factor,
                          int pa, int pb, double pair_factor, const char *what) {
  int np = node_pairs(mode, n, NULL, 0);
  node_pair *p = calloc((size_t)np, sizeof *p);
  double *v = calloc((size_t)np, sizeof *v);
  node_pairs(mode, n, p, np);
  for (int i = 0; i < np; i++) {
    v[i] = 100 + 0.3 * ((i * 7) % 5); /* a little noise: 100 .. 101.2 */
    for (int j = 0; j < nbad; j++)
      if (p[i].a == bad_nodes[j] || p[i].b == bad_nodes[j]) v[i] *= node_factor;
    if (p[i].a == pa && p[i].b == pb) v[i] *= pair_factor;
  }
  accept_localization loc;
  CHECK(accept_localize(n, p, v, np, 10, 3.5, &loc) == DDP_OK, "%s: localize", what);
  for (int i = 0; i < n; i++) {
    int want = 0;
    for (int j = 0; j < nbad; j++) want |= bad_nodes[j] == i;
    CHECK(loc.node_bad[i] == want, "%s: node %d bad = %d, expected %d", what, i, loc.node_bad[i], want);
  }
  for (int i = 0; i < np; i++) {
    int want = p[i].a == pa && p[i].b == pb ? 1 : 0;
    if (loc.pair_state[i] != 2) /* pairs of a bad node are attributed to it */
      CHECK(loc.pair_state[i] == want, "%s: pair (%d,%d) state %d, expected %d", what, p[i].a, p[i].b,
            loc.pair_state[i], want);
  }
  CHECK(loc.reference >= 100 && loc.reference <= 101.2, "%s: reference %g from the healthy pairs", what, loc.reference);
  accept_localization_free(&loc);
  free(v);
  free(p);
}

static void test_localize(void) {
  int two[] = {2};
  localize_case(PAIRS_TOURNAMENT, 4, two, 1, 0.85, -1, -1, 1, "tournament 4, node 2 at 85 %");
  localize_case(PAIRS_TOURNAMENT, 4, NULL, 0, 1, 1, 2, 0.5, "tournament 4, pair (1,2) at 50 %");
  localize_case(PAIRS_TOURNAMENT, 8, two, 1, 0.5, -1, -1, 1, "tournament 8, node 2 at 50 %");
  int twobad[] = {2, 5};
  localize_case(PAIRS_TOURNAMENT, 8, twobad, 2, 0.6, -1, -1, 1, "tournament 8, nodes 2 and 5");
  localize_case(PAIRS_TOURNAMENT, 8, two, 1, 0.5, 3, 6, 0.7, "tournament 8, node 2 and pair (3,6)");
  localize_case(PAIRS_RING, 8, two, 1, 0.5, -1, -1, 1, "ring 8, node 2");
  localize_case(PAIRS_RING, 8, NULL, 0, 1, 1, 2, 0.5, "ring 8, pair (1,2)");
  localize_case(PAIRS_RING, 9, two, 1, 0.5, -1, -1, 1, "ring 9, node 2");
  localize_case(PAIRS_TOURNAMENT, 2, NULL, 0, 1, -1, -1, 1, "two nodes, healthy");
  localize_case(PAIRS_TOURNAMENT, 6, NULL, 0, 1, -1, -1, 1, "six nodes, healthy");
  {
    /* a noisy fabric (pairs 0.36-0.93, as a shared CI machine measured them): nobody named */
    node_pair p[6];
    node_pairs(PAIRS_TOURNAMENT, 4, p, 6);
    double v[6] = {0.533, 0.429, 0.929, 0.818, 0.4, 0.359};
    accept_localization loc;
    CHECK(accept_localize(4, p, v, 6, 10, 3.5, &loc) == DDP_OK, "localize noise");
    int named = 0;
    for (int i = 0; i < 4; i++) named += loc.node_bad[i];
    for (int i = 0; i < 6; i++) named += loc.pair_state[i] != 0;
    CHECK(named == 0, "noise: %d named (reference %g, scale %g)", named, loc.reference, loc.scale);
    accept_localization_free(&loc);
  }
}

static void test_failed_hosts(void) { /* the one writer of the drain list: outputs_write (result/outputs.c) */
  char dir[] = "/tmp/i12-accept-XXXXXX", path[64];
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(path, sizeof path, "%s/failed", dir);
  result_doc d;
  result_init(&d);
  const char *hosts[] = {"node07", "node12", "node07", "node03", "two\nlines", "", "a,b"};
  d.failed_hosts = (char **)hosts;
  d.nfailed_hosts = 7;
  result_outputs o;
  memset(&o, 0, sizeof o);
  snprintf(o.failed_hosts, sizeof o.failed_hosts, "%s", path);
  CHECK(outputs_write(&o, &d, NULL, 1) == DDP_OK, "write");
  char buf[128] = {0};
  long n = tl_file_read(path, buf, sizeof buf);
  /* a name with a byte no host name has is written escaped, never dropped or split */
  CHECK(n > 0 && !strcmp(buf, "node07\nnode12\nnode03\ntwo\\x0alines\n\\x00\na\\x2cb\n"),
        "one host per line, no duplicates, odd names escaped: '%s'", buf);
  d.nfailed_hosts = 1;
  CHECK(outputs_write(&o, &d, NULL, 1) == DDP_ERR_USAGE, "never overwritten silently");
  /* the drain file that appeared meanwhile costs no other output: the JSON is written. */
  char json[80];
  snprintf(json, sizeof json, "%s/run.json", dir);
  snprintf(o.json, sizeof o.json, "%s", json);
  CHECK(outputs_write(&o, &d, NULL, 1) == DDP_ERR_USAGE && tl_file_read(json, buf, sizeof buf) > 0,
        "a refused --failed-hosts still lets --json be written");
  unlink(json);
  o.json[0] = 0;
  d.nfailed_hosts = 0;
  o.force = 1;
  CHECK(outputs_write(&o, &d, NULL, 1) == DDP_OK, "force: empty list");
  n = tl_file_read(path, buf, sizeof buf);
  CHECK(n == 0, "empty file for no failing host");
  d.failed_hosts = NULL;
  result_free(&d);
  unlink(path);
  rmdir(dir);
}

/* Pair verdicts (--baseline) read with the pair structure, on N nodes of one rank each (host hK).
 * v[] holds the pairs' busbw in the order 0-1, 0-2, ..., 1-2, ...; the baseline has 10 GB/s for every pair. */
static void ranks_doc(result_doc *d, int N) {
  result_init(d);
  d->ranks = calloc((size_t)N, sizeof *d->ranks);
  d->nranks = N;
  for (int i = 0; i < N; i++) {
    char h[16];
    snprintf(h, sizeof h, "h%d", i);
    d->ranks[i].rank = i, d->ranks[i].node = i, d->ranks[i].host = strdup(h);
  }
}

/* A node-pair record of d: pair:a-b, hosts "ha,hb". */
static void pair_add(result_doc *d, int a, int b, double v) {
  char g[32], hosts[32];
  snprintf(g, sizeof g, "pair:%d-%d", a, b);
  snprintf(hosts, sizeof hosts, "h%d,h%d", a, b);
  result_add(d, "allreduce", g, "busbw_gbs", "GB/s", BETTER_HIGHER, v, NULL, NULL, 0, "hosts", hosts, NULL);
}

static void pair_doc(result_doc *d, int N, const double *v) {
  ranks_doc(d, N);
  int p = 0;
  for (int a = 0; a < N; a++)
    for (int b = a + 1; b < N; b++, p++) pair_add(d, a, b, v ? v[p] : 10);
}

/* Judges the pairs; returns the drain list joined by ',' in drained, the hosts block in text. */
static int pair_judge(int N, const double *v, int baseline, char *drained, char *text, size_t n, result_doc *d) {
  result_doc b;
  pair_doc(&b, N, NULL);
  pair_doc(d, N, v);
  accept_rules rules = {.rel_warn_pct = 5, .rel_fail_pct = 10, .tolerance_pct = 10, .baseline = baseline ? &b : NULL, .bad_pct = 10, .prior_bad = 0.01, .drain_threshold = 0.5};
  int ok = accept_judge_doc(d, &rules) == DDP_OK;
  const char *hosts[16];
  for (int i = 0; i < N; i++) hosts[i] = d->ranks[i].host;
  hosts_verdict hv;
  FILE *f = fmemopen(text, n, "w");
  ok = ok && f && hosts_judge(d, hosts, N, 0, &hv) == DDP_OK;
  if (f) {
    if (ok) hosts_print(f, "", d, hosts, N, &hv);
    fclose(f);
  }
  drained[0] = 0;
  for (int i = 0; i < d->nfailed_hosts; i++) strcat(strcat(drained, i ? "," : ""), d->failed_hosts[i]);
  result_free(&b);
  return ok;
}

static int has_finding(const result_doc *d, const char *check, finding_severity sev, const char *host) {
  int k = 0;
  for (int i = 0; i < d->findings.n; i++)
    k += !strcmp(d->findings.v[i].check, check) && d->findings.v[i].severity == sev &&
         (!host || !strcmp(d->findings.v[i].host, host));
  return k;
}

/* Groups of 2 and 3 GPUs of a model: judged against the run's own noise (accept_relative_small). */
static void test_relative_small(void) {
  accept_small_verdict v;
  /* 3 GPUs, one at 14 % of its peers, each wandering 3 % in its run: far beyond 5 noise units, named */
  double x3[] = {0.0227, 0.0224, 0.0031}, quiet[] = {0.03, 0.02, 0.03};
  accept_relative_small(x3, quiet, 3, 2, 5, 10, 0, &v);
  CHECK(v.sev == ACCEPT_FAIL && !v.cannot_tell && fabs(v.ref - 0.0224) < 1e-12, "3 GPUs, 14 %% of peers: FAIL (%s)",
        v.why);
  accept_relative_small(x3, quiet, 3, 0, 5, 10, 0, &v);
  CHECK(v.sev == ACCEPT_PASS, "3 GPUs: the healthy one passes (%s)", v.why);
  /* a 12 % gap inside 20 % noise: cannot tell, a WARN that says what would decide it */
  double x12[] = {100, 101, 88}, noisy[] = {0.18, 0.2, 0.1};
  accept_relative_small(x12, noisy, 3, 2, 5, 10, 0, &v);
  CHECK(v.sev == ACCEPT_WARN && v.cannot_tell && strstr(v.why, "--baseline"), "12 %% in 20 %% noise: cannot tell (%s)",
        v.why);
  /* the noise unmeasured: never a FAIL */
  double nan3[] = {NAN, NAN, NAN};
  accept_relative_small(x3, nan3, 3, 2, 5, 10, 0, &v);
  CHECK(v.sev == ACCEPT_WARN && v.cannot_tell, "no spread measured: cannot tell (%s)", v.why);
  /* a spread below the floor counts as the floor: 9 % at 2 % noise is 4.7 units, within 5; at warn, not fail */
  double x9[] = {100, 91.4}, tiny[] = {0.001, 0.001};
  accept_relative_small(x9, tiny, 2, 1, 5, 10, 1, &v);
  CHECK(v.sev == ACCEPT_PASS && fabs(v.noise - ACCEPT_SMALL_NOISE_FLOOR) < 1e-12, "noise floored at 2 %%: %g (%s)",
        v.noise, v.why);
  /* 2 GPUs, 14 %: named only when the faster one meets its floor */
  double x2[] = {0.0227, 0.0031};
  accept_relative_small(x2, quiet, 2, 1, 5, 10, 1, &v);
  CHECK(v.sev == ACCEPT_FAIL, "2 GPUs, 14 %%, the faster at its floor: FAIL (%s)", v.why);
  accept_relative_small(x2, quiet, 2, 1, 5, 10, 0, &v);
  CHECK(v.sev == ACCEPT_WARN && v.cannot_tell && strstr(v.why, "which"), "2 GPUs, no floor: cannot tell which (%s)",
        v.why);
  accept_relative_small(x2, quiet, 2, 0, 5, 10, 1, &v);
  CHECK(v.sev == ACCEPT_PASS, "2 GPUs: the faster passes");
  /* healthy: 3 % apart, 3 % noise */
  double h3[] = {100, 97, 99};
  accept_relative_small(h3, quiet, 3, 1, 5, 10, 0, &v);
  CHECK(v.sev == ACCEPT_PASS && !v.cannot_tell, "healthy 3: pass (%s)", v.why);

  /* through accept_judge_doc: 3 CPU ranks, rank 2 at 14 %; then 2 ranks (no floor on a CPU: cannot tell which);
   * then 4 ranks whose peers spread 45 % (4 CPU ranks on 2 cores), rank 2 held to 10 % of a CPU at 66 % below the
   * median: robust z -2.0 only, so not named, but never a bare pass: "cannot tell" */
  for (int W = 4; W >= 2; W--) {
    result_doc d;
    ranks_doc(&d, W);
    const double med[] = {0.0227, 0.0224, 0.0031}, four[] = {0.0276, 0.0190, 0.0066, 0.0199};
    for (int i = 0; i < W; i++) {
      double v_i = W == 4 ? four[i] : W == 2 && i == 1 ? med[2] : med[i];
      char rk[8], h[8];
      snprintf(rk, sizeof rk, "%d", i), snprintf(h, sizeof h, "h%d", i);
      const char *metric[] = {"gemm_fp32_tflops", "gemm_fp32_first_tflops", "gemm_fp32_last_tflops"};
      const double f[] = {1, 1.03, 0.98};
      for (int k = 0; k < 3; k++)
        result_add(&d, "accept", "world", metric[k], "TFLOP/s", BETTER_HIGHER, v_i * f[k], NULL, NULL, 0, "rank", rk,
                   "host", h, "gpu", "", "model", "cpu", NULL);
    }
    accept_rules rules = {.rel_warn_pct = 5, .rel_fail_pct = 10, .tolerance_pct = 10};
    CHECK(accept_judge_doc(&d, &rules) == DDP_OK, "judge %d ranks", W);
    if (W == 4)
      CHECK(has_finding(&d, "gemm_fp32.rel", SEV_WARN, "h2") == 1 && has_finding(&d, "gemm_fp32.rel", SEV_WARN, NULL) == 1 &&
            has_finding(&d, "gemm_fp32.rel", SEV_FAIL, NULL) == 0,
            "4 ranks spread 45 %%, rank 2 at 66 %% below, z -2.0: cannot tell (a WARN on it alone), no FAIL");
    else if (W == 3)
      CHECK(has_finding(&d, "gemm_fp32.rel", SEV_FAIL, "h2") == 1 && has_finding(&d, "gemm_fp32.rel", SEV_FAIL, NULL) == 1,
            "3 ranks: rank 2's GEMM at 14 %% fails, alone");
    else
      CHECK(has_finding(&d, "gemm_fp32.rel", SEV_WARN, "h1") == 1 && has_finding(&d, "gemm_fp32.rel", SEV_FAIL, NULL) == 0,
            "2 ranks, no floor: a WARN, no FAIL");
    result_free(&d);
  }
}

static void test_pair_structure(void) {
  char drained[256], text[8192];
  result_doc d;
  /* 3 nodes, node 2's link slow: both its pairs fail, 0-1 passes: node 2 is the culprit and drained alone */
  double slow2[] = {10, 0.02, 0.02};
  CHECK(pair_judge(3, slow2, 1, drained, text, sizeof text, &d), "judge 3 nodes");
  CHECK(!strcmp(drained, "h2"), "3 nodes, one slow host: drain list 'h2': '%s'", drained);
  int culprit_lines = 0;
  for (int i = 0; i < d.findings.n; i++)
    culprit_lines += d.findings.v[i].scope == SCOPE_HOST && !strcmp(d.findings.v[i].subject, "h2 (all its pairs)");
  int indexed = 0; /* hosts by their names, never by 0-based node indices ("node 2", "nodes 0-2") */
  for (int i = 0; i < d.findings.n; i++)
    indexed += strstr(d.findings.v[i].subject, "node ") != NULL || strstr(d.findings.v[i].subject, "nodes ") != NULL;
  CHECK(indexed == 0, "no finding names a host by its node index: %d", indexed);
  CHECK(culprit_lines == 1 && has_finding(&d, "pair_busbw.abs", SEV_FAIL, "h2") == 3 &&
            has_finding(&d, "pair_busbw.abs", SEV_FAIL, "") == 0 && strstr(text, "hosts: 2 pass, 0 warn, 1 fail\n"),
        "h2 fails as a host, its two failed pairs are counted against it, nothing left without a culprit:\n%s", text);
  result_free(&d);
  /* 4 nodes, node 3 slow: h3 alone */
  double slow3[] = {10, 10, 0.02, 10, 0.02, 0.02};
  CHECK(pair_judge(4, slow3, 1, drained, text, sizeof text, &d) && !strcmp(drained, "h3"),
        "4 nodes, one slow host: drain list 'h3': '%s'", drained);
  result_free(&d);
  /* 3 nodes, the path 0-2 slow (both ends pass with node 1): nobody drained, the bottom line says why */
  double path[] = {10, 0.02, 10};
  CHECK(pair_judge(3, path, 1, drained, text, sizeof text, &d) && !drained[0] &&
            has_finding(&d, "pair_suspect", SEV_WARN, NULL) == 0 && strstr(text, "no culprit host"),
        "a slow path drains nobody and says so: '%s'\n%s", drained, text);
  result_free(&d);
  /* 2 nodes, the pair fails: both hosts suspects (warnings), nobody drained, with the reason */
  double two[] = {0.02};
  CHECK(pair_judge(2, two, 1, drained, text, sizeof text, &d) && !drained[0] &&
            has_finding(&d, "pair_suspect", SEV_WARN, "h0") == 1 && has_finding(&d, "pair_suspect", SEV_WARN, "h1") == 1 &&
            strstr(text, "two nodes cannot tell"),
        "2 nodes: both suspects, none drained: '%s'\n%s", drained, text);
  result_free(&d);
  /* every pair fails: the fabric, one finding for the job, nobody drained */
  double all[] = {0.02, 0.02, 0.02};
  CHECK(pair_judge(3, all, 1, drained, text, sizeof text, &d) && !drained[0] &&
            has_finding(&d, "pair_suspect", SEV_WARN, "") == 1,
        "every pair fails: one job warning, none drained: '%s'", drained);
  result_free(&d);
  /* relative checks only on 3 nodes, one figure per pair (no repeats): the pair model cannot tell one fast pair
   * from a hiccup and says so as a warning, not a silent pass (test_pair_judge has repeats, and names the host) */
  CHECK(pair_judge(3, slow2, 0, drained, text, sizeof text, &d), "judge without a baseline");
  int said = 0;
  for (int i = 0; i < d.findings.n; i++)
    said += d.findings.v[i].severity == SEV_WARN && strstr(d.findings.v[i].text, "cannot tell") != NULL;
  CHECK(said == 1 && !drained[0], "3 nodes without a baseline or repeats: 'cannot tell' said, nobody drained:\n%s", text);
  result_free(&d);
}

/* A ring's pairs only (i with i+1 mod N), as --pairs ring measures them. */
static void ring_doc(result_doc *d, int N, const double *v) {
  ranks_doc(d, N);
  for (int i = 0; i < N; i++) {
    int a = i < (i + 1) % N ? i : (i + 1) % N, b = i < (i + 1) % N ? (i + 1) % N : i;
    pair_add(d, a, b, v ? v[i] : 10);
  }
}

static void drain_list(const result_doc *d, char *out) {
  out[0] = 0;
  for (int i = 0; i < d->nfailed_hosts; i++) strcat(strcat(out, i ? "," : ""), d->failed_hosts[i]);
}

/* The confirmation pass: on a ring of 6 (--pairs ring), hosts 1 and 3 slow. Pairs 0-1, 1-2, 2-3 and 3-4
 * fail, so every pair of the healthy host 2 fails too: without a confirmation it is drained with 1 and 3. The plan
 * pairs 2 with a node that passed (0, the least used); measured healthy, host 2 is cleared and 1, 3 stay. */
static void test_confirmation(void) {
  double v[6] = {0.02, 0.02, 0.02, 0.02, 10, 10}; /* 0-1 1-2 2-3 3-4 4-5 0-5 */
  result_doc b, d;
  ring_doc(&b, 6, NULL);
  accept_rules rules = {.rel_warn_pct = 5, .rel_fail_pct = 10, .tolerance_pct = 10, .baseline = &b, .bad_pct = 10, .prior_bad = 0.01, .drain_threshold = 0.5};
  const char *hosts[6] = {"h0", "h1", "h2", "h3", "h4", "h5"};
  hosts_verdict hv;
  char drained[128];
  /* without the pass: the healthy host between the slow ones is drained too */
  ring_doc(&d, 6, v);
  CHECK(accept_judge_doc(&d, &rules) == DDP_OK && hosts_judge(&d, hosts, 6, 0, &hv) == DDP_OK, "judge the ring");
  drain_list(&d, drained);
  CHECK(!strcmp(drained, "h1,h2,h3"), "ring, no confirmation: '%s' (the flaw the pass is for)", drained);
  result_free(&d);
  /* the plan */
  ring_doc(&d, 6, v);
  node_pair plan[6];
  int n = -1, kept = d.findings.n;
  CHECK(accept_confirm_plan(&d, &rules, plan, 6, &n) == DDP_OK && n == 1 && plan[0].a == 0 && plan[0].b == 2 &&
            plan[0].round == 0,
        "plan: node 2 with node 0, one round: %d pair(s), first %d-%d", n, n > 0 ? plan[0].a : -1, n > 0 ? plan[0].b : -1);
  CHECK(d.findings.n == kept, "the trial judgement leaves no findings (%d, was %d)", d.findings.n, kept);
  /* measured healthy: host 2 cleared (the pair is not in the baseline: the baseline's pair median is its floor) */
  pair_add(&d, 0, 2, 9.5);
  CHECK(accept_judge_doc(&d, &rules) == DDP_OK && hosts_judge(&d, hosts, 6, 0, &hv) == DDP_OK, "judge with the pair");
  drain_list(&d, drained);
  CHECK(!strcmp(drained, "h1,h3"), "confirmed: drain list 'h1,h3': '%s'", drained);
  int median_floor = 0;
  for (int i = 0; i < d.findings.n; i++)
    median_floor += strstr(d.findings.v[i].text, "baseline's pair median 10 (1 run, between-run CV assumed 5 %)") != NULL;
  CHECK(median_floor == 1, "the confirmation pair judged against the baseline's pair median");
  /* measured slow as well: host 2 stays drained, now proven against a node that passed */
  result_free(&d);
  ring_doc(&d, 6, v);
  pair_add(&d, 0, 2, 0.02);
  CHECK(accept_judge_doc(&d, &rules) == DDP_OK && hosts_judge(&d, hosts, 6, 0, &hv) == DDP_OK, "judge, slow 0-2");
  drain_list(&d, drained);
  CHECK(!strcmp(drained, "h1,h2,h3"), "host 2 slow with a good node too: drained: '%s'", drained);
  n = -1;
  CHECK(accept_confirm_plan(&d, &rules, plan, 6, &n) == DDP_OK && n == 0, "nothing left to confirm: %d", n);
  result_free(&d);
  /* a tournament (every pair measured) and two nodes: nothing to confirm */
  double slow3[] = {10, 10, 0.02, 10, 0.02, 0.02};
  pair_doc(&d, 4, slow3);
  result_doc tb;
  pair_doc(&tb, 4, NULL);
  rules.baseline = &tb;
  CHECK(accept_confirm_plan(&d, &rules, plan, 6, &n) == DDP_OK && n == 0, "tournament: no confirmation pairs (%d)", n);
  result_free(&d), result_free(&tb);
  double two[] = {0.02};
  pair_doc(&d, 2, two);
  pair_doc(&tb, 2, NULL);
  CHECK(accept_confirm_plan(&d, &rules, plan, 6, &n) == DDP_OK && n == 0, "2 nodes: no third to confirm with (%d)", n);
  result_free(&d), result_free(&tb), result_free(&b);
}

int main(void) {
  test_pair_structure();
  test_confirmation();
  test_robust_z();
  test_stragglers();
  test_group_median();
  test_judge();
  test_relative();
  test_relative_small();
  test_pairs();
  test_localize();
  test_failed_hosts();
  return check_summary();
}
