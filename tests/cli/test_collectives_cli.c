/* test_collectives_cli: `ddpbench collectives` end to end under mpirun on the CPU device (MPI comm).
 * argv: mpiexec ddpbench.
 *  - every collective, type and op at three sizes on 1, 2, 3 and 4 ranks: exit 0, #wrong 0 in every row,
 *    nccl-tests' table (13 leading columns per row, one `# Avg bus bandwidth` line per collective), the
 *    JSON holds the same rows, busbw = algbw x nccl-tests' factor for that collective and rank count,
 *    p10 <= median <= p90, the slowest rank's time is at least the average;
 *  - the collectives nccl-tests has beyond those (reduce, gather, scatter, sendrecv, alltoallv) in a sweep of
 *    their own on 3 ranks with -r 1 and a skewed alltoallv: root labels, in-place rows where NCCL has them,
 *    alltoallv's size column = its busiest rank's bytes (more than the nominal size), its matrix options in
 *    the JSON's config; with a corrupted element on a rank off the root (an element reduce and gather must
 *    leave alone), every row and placement counts it;
 *  - a corrupted element on one rank (test hook): exit 1, the row's #wrong is 1 per placement, and the
 *    line and the JSON name the rank, its host and the element;
 *  - -i additive steps, -N cycles, -a, nccl-tests' habitual -t 1 -g 1, --under-load gemm:H (both figures, in the table and the JSON);
 *  - --group node and --group pairs (measure.h's groups; nodes faked by a test hook): labelled tables, and a
 *    corrupted rank found in exactly the pairs that contain it;
 *  - a rank that stops answering (test hook): its peers time out after -T, exit 3;
 *  - bad options (-b > -e, -f below 2 without -i, an unknown collective, op or type, a size that is not a
 *    multiple of the element size, an alltoallv skew or seed out of range, an existing -J file): exit 2 and one
 *    line naming the option. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "testlib.h"
#include "result.h"

static char dir[] = "/tmp/ddpbench-test-coll-XXXXXX";
static const char *mpiexec, *prog;
static char out[1 << 22], err[1 << 18];

/* `ddpbench collectives`: `[env ENV] timeout 300 mpiexec -np N --oversubscribe ddpbench collectives ARGS`, or
 * alone (no mpirun) under `timeout 60`. */
static tl_job job = {.timeout = 300, .dir = dir, .out = out, .outn = sizeof out, .err = err, .errn = sizeof err};
static tl_job alone = {.timeout = 60, .dir = dir, .out = out, .outn = sizeof out, .err = err, .errn = sizeof err};

static const char *lab(const result_record *r, const char *k) {
  const char *v = result_record_label(r, k);
  return v ? v : "";
}

/* The record of `metric` that shares every identity label with r (same group, row and placement). */
static const result_record *twin(const result_doc *m, const result_record *r, const char *metric) {
  return result_find(m, "collectives", r->group, metric, "collective", lab(r, "collective"), "type", lab(r, "type"),
                     "redop", lab(r, "redop"), "bytes", lab(r, "bytes"), "placement", lab(r, "placement"), "cycle",
                     lab(r, "cycle"), "root", lab(r, "root"), NULL);
}

static int count_metric(const result_doc *m, const char *metric) {
  int n = 0;
  for (int i = 0; i < m->nrecords; i++) n += !strcmp(m->records[i].metric, metric);
  return n;
}

/* nccl-tests' busbw factors (*GetBw of each *_perf) */
static double factor(const char *coll, int n) {
  if (!strcmp(coll, "allreduce")) return 2.0 * (n - 1) / n;
  if (!strcmp(coll, "broadcast") || !strcmp(coll, "reduce") || !strcmp(coll, "sendrecv")) return 1.0;
  return (double)(n - 1) / n; /* reduce_scatter, all_gather, alltoall, gather, scatter, alltoallv */
}

/* Table rows (lines not starting with '#'): how many, how many with 13+ fields, and the #wrong total. */
static void table(const char *text, int *rows, int *wide, long *wrong, int *avg_lines) {
  *rows = *wide = *avg_lines = 0;
  *wrong = 0;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(len < 1023 ? len : 1023), p);
    if (!strncmp(line, "# Avg bus bandwidth", 19)) (*avg_lines)++;
    if (line[0] && line[0] != '#') {
      (*rows)++;
      char *f[40];
      int nf = 0;
      for (char *save = NULL, *t = strtok_r(line, " ", &save); t && nf < 40; t = strtok_r(NULL, " ", &save)) f[nf++] = t;
      if (nf >= 13) {
        (*wide)++;
        if (strcmp(f[8], "N/A")) *wrong += atol(f[8]);
        if (strcmp(f[12], "N/A")) *wrong += atol(f[12]);
      }
    }
    p += len;
    if (*p) p++;
  }
}

int main(int argc, char **argv) {
  if (argc < 3 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: test_collectives_cli MPIEXEC DDPBENCH\n");
    return 1;
  }
  mpiexec = argv[1], prog = argv[2];
  char job_prog[1100];
  /* the CPU device (MPI comm) throughout: up to 4 ranks, which a machine with fewer GPUs could not place under
   * NCCL; test_collectives_gpu covers NCCL */
  snprintf(job_prog, sizeof job_prog, "%s collectives --device cpu", prog);
  job.mpiexec = mpiexec;
  job.prog = alone.prog = job_prog;
  char args[2048], json[512];
  char host[256] = "";
  gethostname(host, sizeof host);

  /* 1. every collective, type and op on 1..4 ranks */
  for (int np = 1; np <= 4; np++) {
    snprintf(json, sizeof json, "%s/all%d.json", dir, np);
    snprintf(args, sizeof args, "all -d all -o all -b 24 -e 3K -f 8 -n 3 -w 1 -J %s", json);
    int rc = tl_job_run(&job, np, NULL, args);
    CHECK(rc == 0, "np %d: exit %d: %s", np, rc, err);
    int rows, wide, avg;
    long wrong;
    table(out, &rows, &wide, &wrong, &avg);
    /* 3 reductions x 10 types x 5 ops x 3 sizes + 7 others x 10 types x 3 sizes */
    CHECK(rows == 660 && wide == rows, "np %d: %d rows, %d with nccl-tests' columns", np, rows, wide);
    CHECK(wrong == 0, "np %d: %ld wrong", np, wrong);
    CHECK(avg == 10, "np %d: %d '# Avg bus bandwidth' lines", np, avg);
    CHECK(strstr(out, "# Out of bounds values : 0 OK") != NULL, "np %d: out of bounds line", np);
    result_doc m;
    CHECK(result_load(json, &m) == DDP_OK, "np %d: the result file reads back", np);
    int nbus = count_metric(&m, "busbw_gbs");
    /* out-of-place for every row, in-place for all but alltoall's, alltoallv's and sendrecv's 30 each */
    CHECK(nbus == 2 * rows - 90, "np %d: %d busbw records for %d rows", np, nbus, rows);
    int bad_bw = 0, bad_pct = 0, bad_slow = 0, bad_wrong = 0, missing = 0;
    for (int i = 0; i < m.nrecords; i++) {
      const result_record *r = &m.records[i];
      if (strcmp(r->metric, "busbw_gbs")) continue;
      const result_record *alg = twin(&m, r, "algbw_gbs"), *t = twin(&m, r, "time_us"), *it = twin(&m, r, "iter_time_us"),
                          *slow = twin(&m, r, "slowest_rank_time_us"), *nw = twin(&m, r, "nwrong");
      if (!alg || !t || !it || !slow || !nw) {
        missing++;
        continue;
      }
      const char *coll = lab(r, "collective");
      /* nccl-tests' algbw numerator: count x type size (x n for reduce_scatter, all_gather, alltoall, gather,
       * scatter; alltoallv: the busiest rank's bytes), which is the size column in every case. */
      double base = atof(lab(r, "bytes"));
      bad_bw += fabs(r->value - alg->value * factor(coll, np)) > 1e-9 * fmax(1, r->value) ||
                fabs(alg->value - base / (t->value * 1e-6) / 1e9) > 1e-6 * fmax(1, alg->value);
      bad_pct += !(it->has_stats && it->stats.p10 <= it->stats.median && it->stats.median <= it->stats.p90 &&
                   it->value == it->stats.median && it->stats.n == 3);
      bad_slow += !(slow->value >= t->value * (1 - 1e-12));
      bad_wrong += nw->value != 0;
    }
    CHECK(!missing, "np %d: %d rows without all their metrics", np, missing);
    CHECK(!bad_bw, "np %d: %d placements where busbw/algbw do not follow nccl-tests' formulas", np, bad_bw);
    CHECK(!bad_pct, "np %d: %d placements with p10 <= median <= p90 broken", np, bad_pct);
    CHECK(!bad_slow, "np %d: %d placements whose slowest rank is faster than the average", np, bad_slow);
    CHECK(!bad_wrong && m.findings.n == 0, "np %d: wrong elements in the result", np);
    result_free(&m);
  }

  /* 1b. the new collectives on their own: 3 ranks, root 1, a skewed alltoallv */
  snprintf(json, sizeof json, "%s/new.json", dir);
  snprintf(args, sizeof args, "reduce gather scatter sendrecv alltoallv -r 1 -b 1K -e 64K -f 8 -n 3 -o max "
           "--alltoallv-skew 2 --alltoallv-seed 5 -J %s --csv %s/new.csv", json, dir);
  int rc = tl_job_run(&job, 3, NULL, args);
  CHECK(rc == 0, "new collectives: exit %d: %s", rc, err);
  {
    int rows, wide, avg;
    long wrong;
    table(out, &rows, &wide, &wrong, &avg);
    CHECK(rows == 15 && wide == rows && wrong == 0 && avg == 5, "new collectives: %d rows, %d wide, %ld wrong, %d avg",
          rows, wide, wrong, avg);
    result_doc m;
    CHECK(result_load(json, &m) == DDP_OK, "new collectives: the result file reads back");
    static const struct { const char *coll, *root, *redop; int inplace; } want[] = {
        {"reduce", "1", "max", 1}, {"gather", "1", "none", 1}, {"scatter", "1", "none", 1},
        {"sendrecv", "-1", "none", 0}, {"alltoallv", "-1", "none", 0}};
    for (int i = 0; i < 5; i++) {
      const result_record *o = result_find(&m, "collectives", "world", "busbw_gbs", "collective", want[i].coll,
                                           "placement", "out_of_place", "root", want[i].root, "redop", want[i].redop, NULL);
      const result_record *ip = result_find(&m, "collectives", "world", "busbw_gbs", "collective", want[i].coll,
                                            "placement", "in_place", NULL);
      const result_record *nw = o ? twin(&m, o, "nwrong") : NULL;
      CHECK(o && nw && nw->value == 0 && !ip == !want[i].inplace, "new collectives: %s (root %s, redop %s, in place %d)",
            want[i].coll, want[i].root, want[i].redop, want[i].inplace);
    }
    /* alltoallv's 64K row: count = 64K / 4 / 3 per peer; the size column is the busiest rank's bytes, above the
     * 3 x count x 4 a balanced rank sends, at most all of it to one rank */
    int a2av = 0;
    for (int i = 0; i < m.nrecords; i++) {
      const result_record *r = &m.records[i];
      if (strcmp(r->metric, "busbw_gbs") || strcmp(lab(r, "collective"), "alltoallv") || strcmp(lab(r, "count"), "5461"))
        continue;
      double bytes = atof(lab(r, "bytes"));
      a2av++;
      CHECK(bytes > 5461 * 3 * 4 && bytes <= 5461 * 3 * 4 * 3, "new collectives: alltoallv's size %.0f", bytes);
    }
    CHECK(a2av == 1, "new collectives: %d alltoallv rows of count 5461", a2av);
    const char *skew = NULL, *seed = NULL;
    for (int i = 0; i < m.nconfig; i++) {
      if (!strcmp(m.config[i].key, "alltoallv_skew")) skew = m.config[i].value;
      if (!strcmp(m.config[i].key, "alltoallv_seed")) seed = m.config[i].value;
    }
    CHECK(skew && atof(skew) == 2 && seed && !strcmp(seed, "5"), "new collectives: the matrix options recorded");
    CHECK(strstr(out, "# Collective test concluded: alltoallv"), "new collectives: table");
    static char csv[1 << 20];
    char csvpath[600];
    snprintf(csvpath, sizeof csvpath, "%s/new.csv", dir);
    FILE *f = fopen(csvpath, "r");
    size_t got = f ? fread(csv, 1, sizeof csv - 1, f) : 0;
    if (f) fclose(f);
    csv[got] = 0;
    CHECK(strstr(csv, "busbw_gbs,GB/s,higher,,,,,bytes=") && strstr(csv, "collective=alltoallv;") &&
              strstr(csv, "collective=sendrecv;") && strstr(csv, "collective=reduce;count=256;cycle=0;placement=in_place;redop=max;root=1"),
          "new collectives: the CSV rows");
    result_free(&m);
  }
  /* a corrupted element on rank 0, off the root: reduce's and gather's receive buffers there must stay as they
   * were, and are checked (nccl-tests checks them too) */
  snprintf(args, sizeof args, "reduce gather scatter sendrecv alltoallv -r 1 -b 1K -e 1K -n 2");
  rc = tl_job_run(&job, 3, "DDPBENCH_TEST_CORRUPT_COLLECTIVE=0:5", args);
  {
    int rows, wide, avg;
    long wrong;
    table(out, &rows, &wide, &wrong, &avg);
    CHECK(rc == 1 && rows == 5 && wrong == 8, "new collectives corrupted off the root: exit %d, %d rows, %ld wrong "
          "(want 1 per row and placement: 8)", rc, rows, wrong);
  }

  /* 2. a corrupted element on rank 1 of 3 */
  snprintf(json, sizeof json, "%s/corrupt.json", dir);
  snprintf(args, sizeof args, "allreduce reduce_scatter -b 3K -e 3K -n 2 -J %s", json);
  rc = tl_job_run(&job, 3, "DDPBENCH_TEST_CORRUPT_COLLECTIVE=1:5", args);
  CHECK(rc == 1, "corrupted: exit %d (want 1)", rc);
  int rows, wide, avg;
  long wrong;
  table(out, &rows, &wide, &wrong, &avg);
  CHECK(wrong == 4, "corrupted: %ld wrong in the table (want 1 per row and placement)", wrong);
  char want[512];
  snprintf(want, sizeof want, "# wrong data: rank 1 host %s, out-of-place: 1 wrong element(s)", host);
  CHECK(strstr(out, want) != NULL, "corrupted: no line '%s' in:\n%s", want, out);
  CHECK(strstr(out, "first at element 5 (byte offset 20)") != NULL, "corrupted: element not named");
  CHECK(strstr(out, "# Out of bounds values : 2 FAILED") != NULL, "corrupted: out of bounds line");
  result_doc m;
  CHECK(result_load(json, &m) == DDP_OK, "corrupted: the result file reads back");
  int named = 0;
  char subject[300];
  snprintf(subject, sizeof subject, "rank 1 (%s)", host);
  for (int i = 0; i < m.findings.n; i++) {
    const finding *f = &m.findings.v[i];
    named += f->severity == SEV_FAIL && !strcmp(f->check, "collectives_data") && !strcmp(f->subject, subject) &&
             f->measured == 1 && strstr(f->text, "first at element 5 (byte offset 20)") != NULL;
  }
  CHECK(m.findings.n == 4 && named == 4, "corrupted: %d findings, %d name rank 1, its host and element 5",
        m.findings.n, named);
  result_free(&m);

  /* 3. additive steps, cycles, aggregation, under load */
  snprintf(json, sizeof json, "%s/misc.json", dir);
  snprintf(args, sizeof args, "broadcast -b 8 -e 40 -i 16 -N 2 -a max -r 1 --under-load gemm:64 -n 4 -t 1 -g 1 -J %s", json);
  rc = tl_job_run(&job, 2, NULL, args);
  CHECK(rc == 0, "misc: exit %d: %s", rc, err);
  CHECK(result_load(json, &m) == DDP_OK, "misc: the result file reads back");
  CHECK(count_metric(&m, "busbw_gbs") == 12, "misc: %d busbw records (want 3 sizes x 2 placements x 2 cycles)",
        count_metric(&m, "busbw_gbs"));
  const result_record *last = result_find(&m, "collectives", "world", "busbw_gbs", "bytes", "40", "cycle", "1",
                                          "placement", "out_of_place", "root", "1", NULL);
  const result_record *mid = result_find(&m, "collectives", "world", "busbw_gbs", "bytes", "24", "cycle", "0", NULL);
  CHECK(last && mid, "misc: sizes 8, 24, 40 in two cycles, root 1");
  const result_record *gi = last ? twin(&m, last, "gemm_tflops_idle") : NULL, *gl = last ? twin(&m, last, "gemm_tflops_load") : NULL,
                      *lb = last ? twin(&m, last, "load_busbw_gbs") : NULL;
  CHECK(gi && gi->value > 0 && gl && lb, "misc: under-load records");
  const char *agg = NULL;
  for (int i = 0; i < m.nconfig; i++)
    if (!strcmp(m.config[i].key, "average")) agg = m.config[i].value;
  CHECK(agg && !strcmp(agg, "max"), "misc: -a max recorded");
  CHECK(strstr(out, "TF idle") && strstr(out, "# Collective test concluded: broadcast"), "misc: table");
  result_free(&m);

  /* 4. groups on one machine (a test hook makes each rank, or each two ranks, a node): per node, two groups of
   * two; node pairs on 3 "nodes", 3 rounds, and a corrupted rank 2 named in the two pairs it is in only. */
  snprintf(json, sizeof json, "%s/node.json", dir);
  snprintf(args, sizeof args, "allreduce all_gather -b 1K -e 4K -f 4 -n 2 --group node -J %s", json);
  rc = tl_job_run(&job, 4, "DDPBENCH_TEST_RANKS_PER_NODE=2", args);
  CHECK(rc == 0, "node groups: exit %d: %s", rc, err);
  char g0[600], g1[600];
  snprintf(g0, sizeof g0, "# Group: node:node00, 2 ranks (mpi): 0@node00 1@node00\n");
  snprintf(g1, sizeof g1, "# Group: node:node01, 2 ranks (mpi): 2@node01 3@node01\n");
  CHECK(strstr(out, g0) && strstr(out, g1), "node groups: labels:\n%s", out);
  CHECK(result_load(json, &m) == DDP_OK, "node groups: the result file reads back");
  CHECK(count_metric(&m, "busbw_gbs") == 16, "node groups: %d busbw records (want 2 nodes x 2 collectives x 2 sizes x 2)",
        count_metric(&m, "busbw_gbs"));
  char n1name[300];
  snprintf(n1name, sizeof n1name, "node:node01");
  const result_record *n1 = result_find(&m, "collectives", n1name, "busbw_gbs", "collective", "allreduce", NULL);
  const result_record *a1 = n1 ? twin(&m, n1, "algbw_gbs") : NULL;
  /* allreduce on a group of 2: the factor is 2(n-1)/n = 1 */
  CHECK(n1 && a1 && n1->value == a1->value, "node groups: the group's size sets the factor");
  result_free(&m);
  snprintf(json, sizeof json, "%s/pairs.json", dir);
  snprintf(args, sizeof args, "-b 1K -e 1K -n 2 --group pairs -J %s", json);
  rc = tl_job_run(&job, 3, "DDPBENCH_TEST_RANKS_PER_NODE=1 DDPBENCH_TEST_CORRUPT_COLLECTIVE=2", args);
  CHECK(rc == 1, "pairs with a corrupted rank: exit %d (want 1)", rc);
  CHECK(result_load(json, &m) == DDP_OK, "pairs: the result file reads back");
  static const struct { const char *group; int bad; } want_pairs[] = {{"pair:0-1", 0}, {"pair:0-2", 1}, {"pair:1-2", 1}};
  for (int i = 0; i < 3; i++) {
    const result_record *nw = result_find(&m, "collectives", want_pairs[i].group, "nwrong", "placement", "out_of_place", NULL);
    CHECK(nw && (nw->value > 0) == want_pairs[i].bad, "pairs: %s %s", want_pairs[i].group,
          nw ? "misjudged" : "missing");
  }
  int others = 0;
  for (int i = 0; i < m.findings.n; i++) others += strncmp(m.findings.v[i].subject, "rank 2 (", 8) != 0;
  CHECK(m.findings.n == 4 && !others, "pairs: %d findings, %d about another rank than 2", m.findings.n, others);
  result_free(&m);
  rc = tl_job_run(&job, 2, NULL, "--group pairs -b 8 -e 8");
  CHECK(rc == 2 && strstr(err, "--group pairs needs ranks on at least 2 nodes"), "pairs on one node: exit %d", rc);

  /* 5. a rank that stops answering: its peers time out after -T and end the job (exit 3), nothing hangs */
  double t0 = tl_now();
  rc = tl_job_run(&job, 3, "DDPBENCH_TEST_STALL_COLLECTIVE=1", "-b 1K -e 1K -T 3");
  double took = tl_now() - t0;
  CHECK(rc == 3 && strstr(err, "did not complete within -T 3 s (a peer stopped answering?)"),
        "stalled rank: exit %d: %s", rc, err);
  /* ... and names it (the -T wait fired before the watchdog ever asked): every rank is asked
   * where it is, and the stalled one is elsewhere than the others */
  CHECK(strstr(err, "asked every rank where it is") && strstr(err, "SUSPECT rank 1 host"),
        "stalled rank: named: %s", err);
  /* the ranks that timed out abort at once (not at the watchdog's -T + 30 s: freeing a stream that holds the
   * unanswered collective used to wait for it) */
  CHECK(took < 20, "stalled rank: the job ended %.1f s after it started (want well under the watchdog's 33 s)", took);

  /* 6. bad options: exit 2, one line naming the option (with and without mpirun) */
  static const struct { const char *args, *names; } bad[] = {
      {"-b 2K -e 1K", "-b/--minbytes"},
      {"-f 1", "-f/--stepfactor"},
      {"allgatherv", "'allgatherv'"},
      {"-o mean", "-o"},
      {"-d float8", "-d"},
      {"-b 6 -e 6", "-b/--minbytes"},
      {"-d int64 -b 8 -e 12", "-e/--maxbytes"},
      {"--bogus 1", "--bogus"},
      {"--under-load gpu", "--under-load"},
      {"-g 2", "ngpus 2 is not supported"},
      {"alltoallv --alltoallv-skew -1", "--alltoallv-skew"},
      {"alltoallv --alltoallv-seed x", "--alltoallv-seed"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    for (int np = 0; np <= 2; np += 2) {
      rc = tl_job_run(np ? &job : &alone, np, NULL, bad[i].args);
      int lines = tl_lines_starting(err, "ddpbench:"); /* ours; mpirun adds its own notice about the exit code */
      CHECK(rc == 2 && strstr(err, bad[i].names) && lines == 1, "'%s' on %d ranks: exit %d, stderr: %s", bad[i].args,
            np, rc, err);
    }
  snprintf(args, sizeof args, "-b 8 -e 8 -J %s/all1.json", dir);
  rc = tl_job_run(&job, 2, NULL, args);
  CHECK(rc == 2 && strstr(err, "file exists"), "existing JSON: exit %d: %s", rc, err);
  /* the writer's rules, before any work: a device node, a folder that does not exist */
  rc = tl_job_run(&job, 2, NULL, "-b 8 -e 8 -J /dev/null --force");
  CHECK(rc == 2 && strstr(err, "/dev/null is a character device") && !strstr(out, "# Collective test starting"),
        "-J /dev/null: exit %d: %s", rc, err);
  snprintf(args, sizeof args, "-b 8 -e 8 -J %s/no/such/dir.json", dir);
  rc = tl_job_run(&job, 2, NULL, args);
  CHECK(rc == 2 && strstr(err, "its folder does not exist") && !strstr(out, "# Collective test starting"),
        "-J into a missing folder: exit %d: %s", rc, err);
  /* MPMD: an option error on rank 1 only is printed (naming the rank), and ranks with different arguments are
   * refused, both before any work */
  char mpmd[4096];
  snprintf(mpmd, sizeof mpmd, "timeout 120 %s --oversubscribe -np 1 %s collectives -b 8 -e 8 : -np 1 %s collectives -b 8 "
           "-e 8 --bogus", mpiexec, prog, prog);
  rc = tl_capture(mpmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 2 && strstr(err, "rank 1 (host") && strstr(err, "'--bogus'") && !strstr(out, "# Collective test starting"),
        "an option error on rank 1 only: exit %d: %s", rc, err);
  snprintf(mpmd, sizeof mpmd, "timeout 120 %s --oversubscribe -np 1 %s collectives -b 8 -e 8 : -np 1 %s collectives -b 8 "
           "-e 16", mpiexec, prog, prog);
  rc = tl_capture(mpmd, dir, out, sizeof out, err, sizeof err);
  CHECK(rc == 2 && strstr(err, "do not run the same ddpbench collectives options") && strstr(err, "rank 1 (host") &&
            !strstr(out, "# Collective test starting"),
        "different arguments on rank 1: exit %d: %s", rc, err);
  rc = tl_job_run(&alone, 0, NULL, "--help");
  CHECK(rc == 0 && strstr(out, "--minbytes") && strstr(out, "--under-load") && strstr(out, "sendrecv, alltoallv") &&
            strstr(out, "--alltoallv-skew"),
        "--help: exit %d", rc);

  tl_rmtree(dir);
  return check_summary();
}
