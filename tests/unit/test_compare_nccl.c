/* test_compare_nccl.c: compare names what NCCL did differently (src/cmd/compare/compare_nccl_*.c), on synthetic
 * collectives result files: the saved collectives-v3.json (argv[1] = fixtures) with an allreduce sweep of
 * 16 MiB to 1 GiB whose busbw is seeded noise (tests/lib/compare_synth.h), 4 runs a side, and a hand-made
 * "nccl" section in nccl_account_json's shape. What must hold:
 *   - the same choices and a slower B: "same NCCL choices; the kernel got slower";
 *   - channels 32 -> 16 from 64 MiB up, busbw 18 % lower there: the range in one line, and "B uses 16 channels
 *     instead of 32 at 64 MiB-1 GiB; busbw -18 % there", in text, markdown and JSON;
 *   - a version change and a transport change named ("P2P/CUMEM/read -> SHM/direct/direct for 1 peer");
 *   - a side without the section (files from before it) or with reported false: "not reported on side A: why",
 *     never an error; runs over MPI: "the comm was MPI, no NCCL account"; runs of one side that disagree: said. */
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

#define RUNS 4
#define NSIZES 7 /* 16 MiB .. 1 GiB */

static const char *fixtures;
static char tmp[256];

/* What one run's NCCL did. */
typedef struct {
  int reported;           /* 0: reported false; -1: no section at all */
  const char *version;
  int big_channels;       /* channels of the allreduce from 64 MiB up (32 below) */
  const char *rank0_peer; /* rank 0's transport to rank 1 */
  int mpi;                /* the run's comm was MPI (no section then) */
} nccl_spec;

static cJSON *account(const nccl_spec *n, int rank) {
  cJSON *acc = cJSON_CreateObject();
  cJSON_AddStringToObject(acc, "version", n->version);
  cJSON_AddStringToObject(acc, "net", "IB");
  cJSON *c = cJSON_CreateObject();
  cJSON_AddItemToArray(cJSON_AddArrayToObject(acc, "communicators"), c);
  cJSON_AddStringToObject(c, "label", "collectives");
  cJSON_AddNumberToObject(c, "rank", rank);
  cJSON_AddNumberToObject(c, "nranks", 2);
  cJSON *ch = cJSON_AddObjectToObject(c, "channels");
  cJSON_AddNumberToObject(ch, "coll", 32);
  cJSON_AddNullToObject(ch, "nvls");
  cJSON_AddNumberToObject(c, "nvls", 0);
  cJSON_AddNumberToObject(c, "nvls_supported", 0);
  cJSON_AddNullToObject(c, "collnet");
  cJSON *p = cJSON_CreateObject();
  cJSON_AddItemToArray(cJSON_AddArrayToObject(c, "peers"), p);
  const char *via = rank == 0 ? n->rank0_peer : "P2P/CUMEM/read";
  cJSON_AddNumberToObject(p, "peer", 1 - rank);
  cJSON_AddStringToObject(p, "via", via);
  char t[16];
  snprintf(t, sizeof t, "%.*s", (int)strcspn(via, "/"), via);
  cJSON_AddStringToObject(p, "transport", t);
  cJSON *algos = cJSON_AddArrayToObject(c, "algorithms");
  for (int k = 0; k < NSIZES; k++) {
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "coll", "AllReduce");
    cJSON_AddNumberToObject(a, "bytes", (double)(16ull << 20 << k));
    cJSON_AddStringToObject(a, "algo", "RING");
    cJSON_AddStringToObject(a, "proto", "SIMPLE");
    cJSON_AddNumberToObject(a, "channels", k >= 2 ? n->big_channels : 32);
    cJSON_AddNumberToObject(a, "calls", 20);
    cJSON_AddItemToArray(algos, a);
  }
  return acc;
}

/* Writes run i of side s (0 A, 1 B) into tmp/<case>-<s>-<i>.json: busbw 100 GB/s times factor[k] at size k,
 * 0.5 % noise. Returns the path (static per side and run). */
static const char *write_run(const char *name, int s, int i, const double *factor, const nccl_spec *n) {
  static char paths[2][RUNS][512];
  char src[512];
  snprintf(src, sizeof src, "%s/collectives-v3.json", fixtures);
  cJSON *doc = tl_json_load(src);
  CHECK(doc != NULL, "cannot read %s", src);
  if (!doc) return "";
  char start[32];
  snprintf(start, sizeof start, "2026-12-02T03:%02d:%02dZ", 10 + s, 10 + i); /* every run its own */
  cJSON_ReplaceItemInObject(doc, "start_time", cJSON_CreateString(start));
  cJSON_ReplaceItemInObject(doc, "comm", cJSON_CreateString(n->mpi ? "mpi" : "nccl")); /* the fixture's is mpi */
  cJSON *recs = cJSON_CreateArray();
  synth_rng rng = {(uint64_t)(1000 * s + i + 7)};
  for (int k = 0; k < NSIZES; k++) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "measurement", "collectives");
    cJSON_AddStringToObject(r, "group", "world");
    cJSON_AddStringToObject(r, "metric", "busbw_gbs");
    cJSON_AddStringToObject(r, "unit", "GB/s");
    cJSON_AddStringToObject(r, "better", "higher");
    cJSON *lab = cJSON_AddObjectToObject(r, "labels");
    char bytes[32], count[32];
    snprintf(bytes, sizeof bytes, "%llu", 16ull << 20 << k);
    snprintf(count, sizeof count, "%llu", 4ull << 20 << k);
    cJSON_AddStringToObject(lab, "bytes", bytes);
    cJSON_AddStringToObject(lab, "collective", "allreduce");
    cJSON_AddStringToObject(lab, "count", count);
    cJSON_AddStringToObject(lab, "cycle", "0");
    cJSON_AddStringToObject(lab, "placement", "out_of_place");
    cJSON_AddStringToObject(lab, "redop", "sum");
    cJSON_AddStringToObject(lab, "root", "-1");
    cJSON_AddStringToObject(lab, "type", "float");
    double v;
    synth_fill(&rng, &v, 1, 100.0 * (s ? factor[k] : 1.0), 0.005);
    cJSON_AddNumberToObject(r, "value", v);
    cJSON_AddItemToArray(recs, r);
  }
  cJSON_ReplaceItemInObject(doc, "records", recs);
  if (n->reported >= 0) {
    cJSON *sec = cJSON_AddObjectToObject(doc, "nccl");
    cJSON_AddBoolToObject(sec, "reported", n->reported);
    if (n->reported) cJSON_AddNullToObject(sec, "why");
    else cJSON_AddStringToObject(sec, "why", "NCCL_DEBUG_FILE was the user's (/scratch/nccl.%h.%p) and not readable");
    cJSON_AddStringToObject(sec, "source", n->reported ? "ddpbench" : "user");
    cJSON *ranks = cJSON_AddArrayToObject(sec, "ranks");
    for (int r = 0; n->reported && r < 2; r++) {
      cJSON *e = cJSON_CreateObject();
      cJSON_AddNumberToObject(e, "rank", r);
      cJSON_AddStringToObject(e, "host", "vm");
      cJSON_AddItemToObject(e, "account", account(n, r));
      cJSON_AddItemToArray(ranks, e);
    }
  }
  snprintf(paths[s][i], sizeof paths[s][i], "%s/%s-%c-%d.json", tmp, name, s ? 'b' : 'a', i);
  char *text = cJSON_Print(doc);
  tl_file_write(paths[s][i], text);
  free(text);
  cJSON_Delete(doc);
  return paths[s][i];
}

typedef struct {
  char *text, *md, *json;
  cJSON *nccl; /* the JSON's "nccl" object (owned by doc) */
  cJSON *doc;
  int rc;
} outcome;

/* Compares side A (specs a[0..RUNS)) with side B, busbw of B at factor[k] of A's. */
static outcome compare(const char *name, const nccl_spec *a, const nccl_spec *b, const double *factor) {
  char *pa[RUNS], *pb[RUNS];
  for (int i = 0; i < RUNS; i++) {
    pa[i] = strdup(write_run(name, 0, i, factor, &a[i]));
    pb[i] = strdup(write_run(name, 1, i, factor, &b[i]));
  }
  cmp_options o;
  cmp_options_defaults(&o);
  cmp_report r;
  cmp_report_init(&r, &o);
  outcome out = {0};
  out.rc = cmp_load(pa, RUNS, pb, RUNS, NULL, 0, &r);
  CHECK(out.rc == 0, "%s: cmp_load = %d", name, out.rc);
  cmp_format f[3] = {CMP_TEXT, CMP_MD, CMP_JSON};
  char **dst[3] = {&out.text, &out.md, &out.json};
  for (int k = 0; k < 3; k++) {
    size_t len = 0;
    FILE *m = open_memstream(dst[k], &len);
    cmp_report_print(&r, f[k], m);
    fclose(m);
  }
  out.doc = cJSON_Parse(out.json);
  out.nccl = cJSON_GetObjectItem(out.doc, "nccl");
  CHECK(cJSON_IsObject(out.nccl), "%s: the JSON has a \"nccl\" object", name);
  cmp_report_free(&r);
  for (int i = 0; i < RUNS; i++) free(pa[i]), free(pb[i]);
  return out;
}

static void outcome_free(outcome *o) {
  free(o->text), free(o->md), free(o->json);
  cJSON_Delete(o->doc);
}

/* 1 when the JSON's nccl.says holds a sentence containing s. */
static int json_says(const outcome *o, const char *s) {
  const cJSON *x;
  cJSON_ArrayForEach(x, cJSON_GetObjectItem(o->nccl, "says")) if (cJSON_IsString(x) && strstr(x->valuestring, s)) return 1;
  return 0;
}

static const double SAME[NSIZES] = {1, 1, 1, 1, 1, 1, 1};

static void fill(nccl_spec *s, const nccl_spec *v) {
  for (int i = 0; i < RUNS; i++) s[i] = *v;
}

static void test_same_choices(void) {
  nccl_spec a[RUNS], b[RUNS];
  fill(a, &(nccl_spec){1, "2.28.3+cuda13.0", 32, "P2P/CUMEM/read", 0});
  fill(b, &a[0]);
  const double slower[NSIZES] = {0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9};
  outcome o = compare("same", a, b, slower);
  CHECK(strstr(o.text, "NCCL's account: the same choices on both sides") != NULL, "same: header\n%s", o.text);
  CHECK(strstr(o.text, "same NCCL choices; the kernel got slower") != NULL, "same: the sentence\n%s", o.text);
  CHECK(json_says(&o, "same NCCL choices; the kernel got slower") &&
            cJSON_GetArraySize(cJSON_GetObjectItem(o.nccl, "differences")) == 0,
        "same: JSON");
  outcome_free(&o);
  /* nothing slower: no sentence */
  o = compare("aa", a, b, SAME);
  CHECK(strstr(o.text, "the kernel got slower") == NULL && strstr(o.text, "the same choices on both sides"),
        "A/A: no sentence\n%s", o.text);
  outcome_free(&o);
}

static void test_channels(void) {
  nccl_spec a[RUNS], b[RUNS];
  fill(a, &(nccl_spec){1, "2.28.3+cuda13.0", 32, "P2P/CUMEM/read", 0});
  fill(b, &(nccl_spec){1, "2.28.3+cuda13.0", 16, "P2P/CUMEM/read", 0});
  const double f[NSIZES] = {1, 1, 0.82, 0.82, 0.82, 0.82, 0.82};
  outcome o = compare("channels", a, b, f);
  CHECK(strstr(o.text, "  collectives: AllReduce 64 MiB-1 GiB: channels 32 -> 16, RING/SIMPLE both\n") != NULL,
        "channels: the range in one line\n%s", o.text);
  CHECK(strstr(o.text, "B uses 16 channels instead of 32 at 64 MiB-1 GiB; busbw -18 % there") != NULL,
        "channels: the sentence\n%s", o.text);
  CHECK(strstr(o.text, "16 MiB") == NULL || strstr(o.text, "AllReduce 16 MiB") == NULL, "unchanged sizes not named");
  CHECK(strstr(o.md, "### NCCL's account") && strstr(o.md, "| collectives: AllReduce 64 MiB-1 GiB | `RING/SIMPLE/32` | "
                                                          "`RING/SIMPLE/16` | channels 32 -> 16, RING/SIMPLE both |"),
        "channels: markdown\n%s", o.md);
  const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItem(o.nccl, "differences"), 0);
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(o.nccl, "differences")) == 1 &&
            !strcmp(cJSON_GetObjectItem(d, "collective")->valuestring, "AllReduce") &&
            cJSON_GetObjectItem(d, "bytes_from")->valuedouble == 64.0 * (1 << 20) &&
            cJSON_GetObjectItem(d, "bytes_to")->valuedouble == 1024.0 * (1 << 20),
        "channels: JSON difference");
  CHECK(json_says(&o, "B uses 16 channels instead of 32 at 64 MiB-1 GiB; busbw -18 % there"), "channels: JSON says");
  for (const char *p = o.text, *e; *p; p = e + 1) { /* the text still fits 120 columns (but the bottom line) */
    e = strchr(p, '\n');
    if (!e) break;
    CHECK(e - p <= CMP_TEXT_COLS || !strncmp(p, "ddpbench compare:", 17), "line of %d columns: %.*s", (int)(e - p),
          (int)(e - p), p);
  }
  outcome_free(&o);
}

static void test_version_transport(void) {
  nccl_spec a[RUNS], b[RUNS];
  fill(a, &(nccl_spec){1, "2.27.7+cuda12.9", 32, "P2P/CUMEM/read", 0});
  fill(b, &(nccl_spec){1, "2.28.3+cuda13.0", 32, "SHM/direct/direct", 0});
  outcome o = compare("version", a, b, SAME);
  CHECK(strstr(o.text, "  version: 2.27.7+cuda12.9 -> 2.28.3+cuda13.0\n") != NULL, "version named\n%s", o.text);
  CHECK(strstr(o.text, "  collectives: transport: P2P/CUMEM/read -> SHM/direct/direct for 1 peer\n") != NULL,
        "transport named\n%s", o.text);
  CHECK(strstr(o.text, "the kernel got slower") == NULL, "nothing slower");
  outcome_free(&o);
}

static void test_not_reported(void) {
  nccl_spec a[RUNS], b[RUNS];
  fill(a, &(nccl_spec){-1, "", 32, "", 0});
  fill(b, &(nccl_spec){1, "2.28.3+cuda13.0", 32, "P2P/CUMEM/read", 0});
  outcome o = compare("old", a, b, SAME);
  CHECK(o.rc == 0, "a side without the section is no error");
  CHECK(strstr(o.text, "NCCL's account not reported on side A: no \"nccl\" section in its result files") != NULL,
        "absent: not reported\n%s", o.text);
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(o.nccl, "reported"), "a")) &&
            cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(o.nccl, "reported"), "b")),
        "absent: JSON reported");
  outcome_free(&o);
  fill(b, &(nccl_spec){0, "", 32, "", 0});
  a[2] = (nccl_spec){1, "2.28.3+cuda13.0", 32, "P2P/CUMEM/read", 0};
  const double slower[NSIZES] = {0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9};
  o = compare("false", b, b, slower);
  CHECK(strstr(o.text, "NCCL's account not reported on sides A and B: NCCL_DEBUG_FILE was the user's") != NULL &&
            strstr(o.text, "the kernel got slower") == NULL,
        "reported false: why, and no claim\n%s", o.text);
  outcome_free(&o);
  o = compare("some", a, b, SAME);
  CHECK(strstr(o.text, "not reported on side A: 3 of 4 runs: no \"nccl\" section") != NULL, "3 of 4\n%s", o.text);
  outcome_free(&o);
  /* runs over MPI have no account to miss: the comm is named, not the files' age */
  fill(a, &(nccl_spec){-1, "", 32, "", 1});
  o = compare("mpi", a, a, SAME);
  CHECK(strstr(o.text, "NCCL's account not reported on sides A and B: the comm was MPI, no NCCL account") != NULL &&
            strstr(o.text, "from before ddpbench") == NULL,
        "MPI: said\n%s", o.text);
  outcome_free(&o);
}

static void test_disagree(void) {
  nccl_spec a[RUNS], b[RUNS];
  fill(a, &(nccl_spec){1, "2.28.3+cuda13.0", 32, "P2P/CUMEM/read", 0});
  fill(b, &a[0]);
  b[3].big_channels = 24;
  outcome o = compare("disagree", a, b, SAME);
  CHECK(strstr(o.text, "side B's runs disagree on NCCL's account: collectives: AllReduce 64 MiB (the first run says "
                       "RING/SIMPLE/32), and 4") != NULL && strstr(o.text, "first runs made the same choices"),
        "disagreement said\n%s", o.text);
  CHECK(cJSON_IsString(cJSON_GetObjectItem(cJSON_GetObjectItem(o.nccl, "runs_disagree"), "b")), "JSON disagree");
  outcome_free(&o);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_compare_nccl FIXTURES_DIR\n");
    return 2;
  }
  fixtures = argv[1];
  snprintf(tmp, sizeof tmp, "/tmp/test_compare_nccl.XXXXXX");
  if (!mkdtemp(tmp)) return perror("mkdtemp"), 1;
  test_same_choices();
  test_channels();
  test_version_transport();
  test_not_reported();
  test_disagree();
  if (!check_failed_) tl_rmtree(tmp);
  return check_summary();
}
