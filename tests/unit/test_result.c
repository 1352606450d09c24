/* test_result: the result model written and read back (result.h).
 *  - round trip: a model with every kind of field (labels, stats, samples, NaN, findings, secrets in the
 *    environment) written to JSON, read back, equal field by field;
 *  - a real version 2 file (tests/data/fixtures/result-v2.json, from `run.sh -np 2 --config configs/ci.ini`) reads,
 *    and turned into a version 1 file (no records, no findings) reads to the same records: the writer and
 *    the version 1 reader share one mapping;
 *  - a real version 1 file (tests/data/fixtures/result-v1.json, from the code before records existed) reads;
 *  - bad files: missing, empty, truncated, not JSON, not a ddpbench result, an unknown schema_version, a
 *    wrong type, an out-of-range value: each is refused with DDP_ERR_USAGE (exit 2) and one line naming the
 *    file and what is wrong;
 *  - the environment allowlist and its redaction.
 * argv[1]: the fixtures folder. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "result.h"
#include "testlib.h"

static char dir[] = "/tmp/ddpbench-test-result-XXXXXX";

static int same_double(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }
static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

static int same_kv(const result_kv *a, int na, const result_kv *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; i++)
    if (strcmp(a[i].key, b[i].key) || strcmp(a[i].value, b[i].value)) return 0;
  return 1;
}

static int same_stats(const ddp_stats *a, const ddp_stats *b) {
  return same_double(a->median, b->median) && same_double(a->p10, b->p10) && same_double(a->p90, b->p90) &&
         same_double(a->min, b->min) && same_double(a->max, b->max) && same_double(a->mean, b->mean) && a->n == b->n;
}

static int same_record(const result_record *a, const result_record *b) {
  if (!same_str(a->measurement, b->measurement) || !same_str(a->group, b->group) || !same_str(a->metric, b->metric) ||
      !same_str(a->unit, b->unit) || a->better != b->better || !same_double(a->value, b->value) ||
      a->has_stats != b->has_stats || (a->has_stats && !same_stats(&a->stats, &b->stats)) || a->nsamples != b->nsamples ||
      !same_kv(a->labels, a->nlabels, b->labels, b->nlabels) || (a->why || b->why ? !same_str(a->why, b->why) : 0))
    return 0;
  for (int i = 0; i < a->nsamples; i++)
    if (!same_double(a->samples[i], b->samples[i])) return 0;
  return 1;
}

static int same_records(const result_doc *a, const result_doc *b) {
  if (a->nrecords != b->nrecords) return 0;
  for (int i = 0; i < a->nrecords; i++)
    if (!same_record(&a->records[i], &b->records[i])) return 0;
  return 1;
}

/* The file in a static buffer (one caller at a time) and its length; NULL when it cannot be read. */
static char *read_text(const char *path, size_t *len) {
  static char buf[1 << 21];
  long n = tl_file_read(path, buf, sizeof buf);
  if (n < 0) return NULL;
  if (len) *len = (size_t)n;
  return buf;
}

/* Loads a file that must be refused: DDP_ERR_USAGE, and one stderr line naming the file and containing
 * `expect`. */
static void refused(const char *name, const char *text, size_t n, const char *expect) {
  char path[256], errpath[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(errpath, sizeof errpath, "%s/stderr", dir);
  if (text) tl_file_write_n(path, text, n);
  int saved = tl_stderr_redirect(errpath);
  result_doc d;
  ddp_result r = result_load(path, &d);
  static char ebuf[4096];
  char *msg = tl_stderr_restore(saved, errpath, ebuf, sizeof ebuf) < 0 ? NULL : ebuf;
  CHECK(r == DDP_ERR_USAGE, "%s: refused with a usage error (exit 2): %d", name, r);
  CHECK(msg && strstr(msg, path) && strstr(msg, expect), "%s: message names the file and '%s': %s", name, expect,
        msg ? msg : "(none)");
  CHECK(msg && strchr(msg, '\n') == msg + strlen(msg) - 1, "%s: one line", name);
  CHECK(d.nrecords == 0 && d.nranks == 0, "%s: nothing left in the model", name);
  result_free(&d);
  unlink(path);
}

static void test_round_trip(void) {
  result_doc a, b;
  result_init(&a);
  a.schema_version = RESULT_SCHEMA_VERSION;
  a.ddpbench_version = strdup("0.1.0");
  a.command_line = strdup("ddpbench --config x.ini");
  a.start_time = strdup("2026-12-01T00:00:00Z");
  a.device = strdup("cuda");
  a.comm = strdup("nccl");
  a.world_size = 2;
  a.nodes = 1;
  a.config = calloc(3, sizeof *a.config);
  a.config[0] = (result_kv){strdup("hidden"), strdup("64"), 0};
  a.config[1] = (result_kv){strdup("lr"), strdup("0.05"), 0};
  a.config[2] = (result_kv){strdup("cuda_graph"), strdup("false"), 0};
  a.nconfig = 3;
  setenv("NCCL_TEST_TOKEN", "s3cret", 1);
  setenv("NCCL_ALGO", "Ring", 1);
  setenv("OMPI_MCA_orte_precondition_transports", "0123-4567", 1);
  CHECK(result_env_collect(&a) == DDP_OK, "environment collected");
  a.ranks = calloc(2, sizeof *a.ranks);
  a.nranks = 2;
  for (int i = 0; i < 2; i++) {
    result_rank *r = &a.ranks[i];
    r->rank = i;
    r->local_rank = i;
    r->pid = 100 + i;
    r->host = strdup("node0");
    r->device_name = strdup("NVIDIA H200");
    r->pci_bus_id = strdup(i ? "0000:19:00.0" : "0000:08:00.0");
    r->ordinal = i;
    r->memory_bytes = 150e9;
    r->versions = calloc(1, sizeof *r->versions);
    r->versions[0] = (result_kv){strdup("nccl_runtime"), strdup("2.28.3"), 0};
    r->nversions = 1;
    r->gemm_tflops = i ? NAN : 712.5;
    r->weights_checksum = strdup("249ba6299a74ec8e");
  }
  a.weights_identical = 1;
  a.weights_checksum = strdup("249ba6299a74ec8e");
  ddp_stats st = {2.5, 2.0, 3.0, 1.9, 3.1, 2.55, 6};
  double samples[3] = {1.0, NAN, 0.1 + 0.2};
  CHECK(result_add(&a, "ddp", "world", "step_ms", "ms", BETTER_LOWER, 2.5, &st, samples, 3, NULL) == DDP_OK, "add");
  CHECK(result_add(&a, "collectives", "node:n0", "busbw_gbs", "GB/s", BETTER_HIGHER, 123.456, NULL, NULL, 0, "op",
                   "allreduce", "bytes", "1048576", NULL) == DDP_OK, "add with labels");
  CHECK(result_add(&a, "job", "world", "hidden_comm_fraction", "", BETTER_HIGHER, NAN, NULL, NULL, 0, NULL) == DDP_OK,
        "add NaN");
  CHECK(result_set_why(&a, "1 rank: no data moves") == DDP_OK && a.records[a.nrecords - 1].why, "a NaN's reason");
  CHECK(result_add(&a, "comm", "world", "algbw_gbs", "GB/s", BETTER_HIGHER, 5.0, NULL, NULL, 0, NULL) == DDP_OK &&
            result_set_why(&a, "not kept beside a value") == DDP_OK && !a.records[a.nrecords - 1].why,
        "a figure with a value has no reason");
  findings_add(&a.findings, "slowest_rank", SEV_INFO, SCOPE_RANK, "rank 1 (node0)", 1.02, 1.0, "ms", "within noise");
  findings_add(&a.findings, "weights", SEV_FAIL, SCOPE_JOB, "job", NAN, NAN, "", "final weights differ");
  char longer[1501]; /* a soak's list of what it could not measure runs past 511 characters */
  memset(longer, 'x', 1500);
  longer[1500] = 0;
  findings_add(&a.findings, "soak_not_measured", SEV_INFO, SCOPE_JOB, "job", NAN, NAN, "", "%s", longer);

  const result_record *bw = result_find(&a, "collectives", "node:n0", "busbw_gbs", "bytes", "1048576", NULL);
  CHECK(bw && strcmp(bw->labels[0].key, "bytes") == 0, "labels sorted by key, found by label");
  CHECK(!result_find(&a, "collectives", "node:n0", "busbw_gbs", "bytes", "2", NULL), "no record for other labels");

  cJSON *doc = cJSON_CreateObject();
  CHECK(result_to_json(&a, doc) == DDP_OK, "to JSON");
  cJSON_AddItemToObject(doc, "phases", cJSON_CreateObject());
  char *text = cJSON_Print(doc);
  char path[256];
  snprintf(path, sizeof path, "%s/rt.json", dir);
  tl_file_write(path, text);
  CHECK(strstr(text, "s3cret") == NULL && strstr(text, "\"NCCL_TEST_TOKEN\":\t\"<redacted>\""), "secret redacted");
  CHECK(strstr(text, "precondition") == NULL, "OMPI per-job secret not recorded");
  CHECK(strstr(text, "\"NCCL_ALGO\":\t\"Ring\""), "NCCL_ALGO recorded");
  free(text);
  cJSON_Delete(doc);

  CHECK(result_load(path, &b) == DDP_OK, "reads back");
  CHECK(b.schema_version == RESULT_SCHEMA_VERSION && same_str(a.ddpbench_version, b.ddpbench_version) &&
            same_str(a.command_line, b.command_line) && same_str(a.start_time, b.start_time) &&
            same_str(a.device, b.device) && same_str(a.comm, b.comm) && a.world_size == b.world_size &&
            a.nodes == b.nodes,
        "header");
  CHECK(same_kv(a.config, a.nconfig, b.config, b.nconfig), "config (numbers and booleans back to the same text)");
  CHECK(same_kv(a.environment, a.nenv, b.environment, b.nenv), "environment");
  int ranks_ok = a.nranks == b.nranks;
  for (int i = 0; ranks_ok && i < a.nranks; i++) {
    const result_rank *x = &a.ranks[i], *y = &b.ranks[i];
    ranks_ok = x->rank == y->rank && x->local_rank == y->local_rank && x->node == y->node && x->pid == y->pid &&
               same_str(x->host, y->host) && same_str(x->device_name, y->device_name) &&
               same_str(x->pci_bus_id, y->pci_bus_id) && x->ordinal == y->ordinal && x->memory_bytes == y->memory_bytes &&
               same_kv(x->versions, x->nversions, y->versions, y->nversions) && same_double(x->gemm_tflops, y->gemm_tflops) &&
               same_str(x->weights_checksum, y->weights_checksum);
  }
  CHECK(ranks_ok, "ranks");
  CHECK(same_records(&a, &b), "records (labels, stats, samples, NaN, the reason beside a NaN)");
  for (int i = 0; i < a.nrecords && i < b.nrecords; i++)
    if (!same_record(&a.records[i], &b.records[i])) fprintf(stderr, "record %d differs: %s %s\n", i, a.records[i].metric, b.records[i].metric);
  CHECK(b.findings.n == 3 && strlen(b.findings.v[2].text) == 1500, "a finding's text of 1500 characters whole: %zu",
        b.findings.n == 3 ? strlen(b.findings.v[2].text) : 0);
  CHECK(b.findings.n >= 2 && b.findings.v[1].severity == SEV_FAIL && b.findings.v[0].scope == SCOPE_RANK &&
            b.findings.v[0].measured == 1.02 && isnan(b.findings.v[1].measured) &&
            strcmp(b.findings.v[0].text, "within noise") == 0,
        "findings");
  CHECK(findings_exit_code(&b.findings) == DDP_EXIT_CHECK, "a fail finding makes exit code 1");
  CHECK(b.weights_identical == 1 && same_str(a.weights_checksum, b.weights_checksum), "weights verdict");
  result_free(&a);
  result_free(&b);
  unsetenv("NCCL_TEST_TOKEN");
  unsetenv("OMPI_MCA_orte_precondition_transports");
}

static void test_fixtures(const char *fixtures) {
  char path[512];
  result_doc v2, v1;
  snprintf(path, sizeof path, "%s/result-v2.json", fixtures);
  CHECK(result_load(path, &v2) == DDP_OK, "version 2 fixture reads");
  const result_record *ddp = result_find(&v2, "ddp", "world", "step_ms", NULL);
  CHECK(ddp && ddp->has_stats && ddp->value > 0 && ddp->value == ddp->stats.median, "ddp step time record");
  CHECK(result_find(&v2, "ddp", "world", "step_ms", "rank", "1", NULL) != NULL, "per-rank step time");
  CHECK(result_find(&v2, "comm", "world", "allreduce_busbw_gbs", "bytes", "16384", "type", "float", NULL) != NULL,
        "busbw per bucket size");
  const result_record *loss = result_find(&v2, "ddp", "world", "loss", NULL);
  CHECK(loss && loss->nsamples == 8 && fabs(loss->value - 10.02246799942013) < 1e-12, "loss series");
  CHECK(v2.weights_identical == 1 && same_str(v2.weights_checksum, "249ba6299a74ec8e"), "weights");

  /* The same file as version 1 would have had it: the records come out the same. */
  size_t n;
  char *text = read_text(path, &n);
  cJSON *doc = text ? cJSON_Parse(text) : NULL;
  CHECK(doc != NULL, "fixture parses");
  if (doc) {
    cJSON_ReplaceItemInObject(doc, "schema_version", cJSON_CreateNumber(1));
    cJSON_DeleteItemFromObject(doc, "records");
    cJSON_DeleteItemFromObject(doc, "findings");
    char why[300] = "";
    result_init(&v1);
    CHECK(result_from_json(doc, &v1, why, sizeof why) == DDP_OK, "as version 1: %s", why);
    CHECK(v1.schema_version == 1 && same_records(&v1, &v2), "version 1 reading gives the written records (%d vs %d)",
          v1.nrecords, v2.nrecords);
    result_free(&v1);
    cJSON_Delete(doc);
  }
  result_free(&v2);

  snprintf(path, sizeof path, "%s/result-v1.json", fixtures);
  CHECK(result_load(path, &v1) == DDP_OK, "version 1 fixture (written before records existed) reads");
  CHECK(v1.schema_version == 1 && result_find(&v1, "local", "world", "step_ms", NULL) &&
            result_find(&v1, "gemm", "world", "gemm_tflops", "rank", "0", NULL) && v1.weights_identical == 1,
        "version 1: records derived from phases");
  result_free(&v1);

  /* Bad files, from the good one. */
  snprintf(path, sizeof path, "%s/result-v2.json", fixtures);
  text = read_text(path, &n);
  if (!text) return;
  char *copy = malloc(n + 64);
  refused("missing.json", NULL, 0, "cannot read: No such file");
  refused("empty.json", "", 0, "empty");
  refused("truncated.json", text, n / 2, "truncated");
  refused("garbage.json", "hello, world\n", 13, "not JSON");
  refused("array.json", "[1, 2]", 6, "not a ddpbench result");
  refused("other.json", "{\"name\": \"x\"}", 13, "not a ddpbench result");
  memcpy(copy, text, n + 1);
  char *sv = strstr(copy, "\"schema_version\":\t2");
  if (sv) sv[strlen("\"schema_version\":\t")] = '7';
  refused("future.json", copy, n, "schema_version 7");
  cJSON *bad = cJSON_Parse(text);
  cJSON_ReplaceItemInObject(bad, "world_size", cJSON_CreateString("2"));
  char *bt = cJSON_Print(bad);
  refused("type.json", bt, strlen(bt), "world_size: not a number");
  free(bt);
  cJSON_Delete(bad);
  char *ws;
  memcpy(copy, text, n + 1);
  bt = strstr(copy, "\"better\":\t\"lower\"");
  if (bt) memcpy(bt + strlen("\"better\":\t\""), "lowre", 5);
  refused("better.json", copy, n, "records[0].better");
  memcpy(copy, text, n + 1);
  ws = strstr(copy, "\"nodes\":\t1");
  if (ws) ws[strlen("\"nodes\":\t")] = '9';
  refused("range.json", copy, n, "nodes: 9 is not an integer in [1, 2]");
  free(copy);
}

static void test_env(void) {
  CHECK(result_env_allowed("NCCL_ALGO") && result_env_allowed("CUDA_VISIBLE_DEVICES") && result_env_allowed("UCX_TLS") &&
            result_env_allowed("OMPI_MCA_btl") && result_env_allowed("OMPI_MCA_btl_tcp_if_include") &&
            result_env_allowed("OMPI_MCA_pml") && result_env_allowed("OMPI_MCA_coll_hcoll_enable") &&
            result_env_allowed("OMPI_MCA_osc") && result_env_allowed("SLURM_JOB_ID") &&
            result_env_allowed("SLURM_STEP_ID"),
        "what explains performance is recorded");
  CHECK(!result_env_allowed("OMPI_MCA_orte_precondition_transports") && !result_env_allowed("OMPI_MCA_orte_hnp_uri") &&
            !result_env_allowed("OMPI_MCA_pmix_server_uri") && !result_env_allowed("OMPI_COMM_WORLD_RANK") &&
            !result_env_allowed("OMPI_MCA_btlx") && !result_env_allowed("PWD") && !result_env_allowed("HOME") &&
            !result_env_allowed("SLURM_JOB_ACCOUNT") && !result_env_allowed("AWS_SECRET_ACCESS_KEY"),
        "secrets, launcher URIs and the working directory are not");
  CHECK(result_env_redacted("NCCL_IB_KEY") && result_env_redacted("UCX_Token") && result_env_redacted("CUDA_SECRET_X") &&
            result_env_redacted("DDPBENCH_PASSWORD") && !result_env_redacted("NCCL_ALGO"),
        "names with key, token, secret, password are redacted");
}

int main(int argc, char **argv) {
  if (argc < 2 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: test_result FIXTURES_DIR\n");
    return 2;
  }
  test_round_trip();
  test_fixtures(argv[1]);
  test_env();
  CHECK(tl_rmtree(dir) == 0, "clean up");
  return check_summary();
}
