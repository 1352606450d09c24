/* test_topo_cluster: rank 0's cluster report without MPI, from hand-made rank records and host nodes (the
 * 2 x H200 fixture with a fake NVML, argv[1] = fixtures): hosts grouped by host id (not hostname), the
 * majority signature, hosts that differ flagged with what differs, degraded links, version and NCCL_*
 * differences named by rank, NVML absent = undecided, and the JSON object. Also envcheck's pieces. */
#include "topo_testlib.h"

#include "envcheck.h"

#define NR 4

static topo_rank_rec recs[NR];

/* Ranks r on hosts: two ranks per host; host k has id (0xa0+k) << 32 (label vm#000000a<k>), every host is
 * called "vm". */
static void recs_init(int nranks) {
  memset(recs, 0, sizeof recs);
  for (int r = 0; r < nranks; r++) {
    topo_rank_rec *x = &recs[r];
    x->rank = r;
    x->local_rank = r % 2;
    x->local_size = 2;
    x->host_hash = (0xa0ull + (unsigned)(r / 2)) << 32;
    snprintf(x->host, sizeof x->host, "vm");
    x->leader = r % 2 == 0;
    x->gpu_index = r % 2;
    snprintf(x->gpu_busid, sizeof x->gpu_busid, r % 2 ? "0000:00:07.0" : "0000:00:06.0");
    x->visible_gpus = 2;
    x->bind.mode = -1;
    x->bind.flat = 1;
    x->bind.near = 1;
    snprintf(x->bind.what, sizeof x->bind.what, "flat (no CPU/NUMA locality for this GPU): cpus 0-31 as launched");
    snprintf(x->versions.nvidia_driver, sizeof x->versions.nvidia_driver, "580.159.04");
    snprintf(x->versions.cuda_runtime, sizeof x->versions.cuda_runtime, "13.0");
    snprintf(x->versions.nccl_runtime, sizeof x->versions.nccl_runtime, "2.28.3");
    snprintf(x->versions.mpi, sizeof x->versions.mpi, "Open MPI v4.1.6");
    snprintf(x->nccl_env, sizeof x->nccl_env, "NCCL_NVLS_ENABLE=0\n");
  }
}

/* Runs the report; returns its text (caller frees). */
static char *report(int nranks, const topo_node *nodes, int nnodes, cJSON **json, int *consistent, int *undecided) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ddp_result r = topo_cluster_report(recs, nranks, nodes, nnodes, 0, f, json, consistent, undecided);
  CHECK(r == DDP_OK, "topo_cluster_report: %s", ddp_result_str(r));
  fclose(f);
  return buf;
}

static void test_agree(const topo_node *healthy) {
  recs_init(NR);
  topo_node nodes[2] = {*healthy, *healthy};
  cJSON *json = NULL;
  int cons = -1, und = -1;
  char *text = report(NR, nodes, 2, &json, &cons, &und);
  CHECK(cons == 1 && und == 0, "healthy twins: consistent %d undecided %d\n%s", cons, und, text);
  CHECK(strstr(text, "== topology: 4 ranks on 2 hosts ==") != NULL, "two hosts although both are called vm:\n%s", text);
  CHECK(strstr(text, "vm#000000a0") && strstr(text, "vm#000000a1"), "host labels:\n%s", text);
  CHECK(strstr(text, "verdict: consistent") != NULL, "verdict:\n%s", text);
  CHECK(strstr(text, "signature") && strstr(text, "2 hosts)") && strstr(text, "NV18"), "one matrix for both hosts:\n%s",
        text);
  cJSON *hosts = cJSON_GetObjectItem(json, "hosts");
  CHECK(cJSON_GetArraySize(hosts) == 2, "JSON hosts %d", cJSON_GetArraySize(hosts));
  cJSON *ranks = cJSON_GetObjectItem(cJSON_GetArrayItem(hosts, 1), "ranks");
  CHECK(cJSON_IsString(ranks) && !strcmp(ranks->valuestring, "ranks 2-3"), "host 1 ranks");
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(json, "consistent")), "JSON consistent");
  cJSON *pair = cJSON_GetArrayItem(
      cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(hosts, 0), "node"), "gpu_pairs"), 0);
  CHECK(cJSON_GetObjectItem(pair, "nvlinks") && cJSON_GetObjectItem(pair, "nvlinks")->valueint == 18 &&
            !strcmp(cJSON_GetObjectItem(pair, "pcie")->valuestring, "PHB"),
        "JSON pair");
  cJSON_Delete(json);
  free(text);
}

/* A host with more GPUs than the node keeps (TOPO_MAX_GPUS): the note counts them all (it once said "2 ranks
 * for 32 GPUs" on a 42-GPU machine). */
static void test_many_gpus(const topo_node *healthy) {
  recs_init(2);
  topo_node node = *healthy;
  node.gpus_dropped = 42 - node.ngpu;
  cJSON *json = NULL;
  int cons = -1, und = -1;
  char *text = report(2, &node, 1, &json, &cons, &und);
  CHECK(strstr(text, "2 ranks for 42 GPUs (40 idle)") != NULL, "every GPU counted:\n%s", text);
  cJSON_Delete(json);
  free(text);
}

static void test_odd_host(const topo_node *healthy, const topo_node *degraded) {
  /* Three hosts; the third has two NVLinks down on GPU1. */
  topo_rank_rec save[NR];
  recs_init(NR);
  memcpy(save, recs, sizeof save);
  topo_rank_rec six[6];
  for (int r = 0; r < 6; r++) {
    six[r] = save[r % NR];
    six[r].rank = r;
    six[r].host_hash = (0xa0ull + (unsigned)(r / 2)) << 32;
  }
  topo_node nodes[3] = {*healthy, *healthy, *degraded};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int cons = -1, und = -1;
  cJSON *json = NULL;
  CHECK(topo_cluster_report(six, 6, nodes, 3, 0, f, &json, &cons, &und) == DDP_OK, "report");
  fclose(f);
  CHECK(cons == 0, "a degraded host went unnoticed:\n%s", buf);
  CHECK(strstr(buf,
               "differs     host vm#000000a2 differs from the majority (vm#000000a0): GPU1 has fewer NVLinks up: "
               "16/18 (majority 18/18); 1 GPU pair connected differently (GPU0-GPU1 NV16, majority NV18)"),
        "differs line:\n%s", buf);
  CHECK(strstr(buf, "degraded    host vm#000000a2: GPU1 0000:00:07.0: NVLink 16/18 up"), "degraded line:\n%s", buf);
  CHECK(strstr(buf, "NV16  <- differs") == NULL && strstr(buf, "<- differs") != NULL, "hosts table mark:\n%s", buf);
  CHECK(strstr(buf, "verdict: INCONSISTENT") != NULL, "verdict:\n%s", buf);
  cJSON *hosts = cJSON_GetObjectItem(json, "hosts");
  CHECK(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(hosts, 2), "majority")) &&
            cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(hosts, 0), "majority")),
        "JSON majority flags");
  cJSON_Delete(json);
  free(buf);
}

static void test_gpu_count(const topo_node *healthy) {
  recs_init(NR);
  topo_node nodes[2] = {*healthy, *healthy};
  nodes[1].ngpu = 1; /* host 1 lost a GPU (ranks 2 and 3 both use the one left) */
  recs[3].gpu_index = 0;
  recs[3].visible_gpus = 1;
  /* The majority of two hosts is the first one found. */
  int cons = -1, und = -1;
  char *text = report(NR, nodes, 2, NULL, &cons, &und);
  CHECK(cons == 0 && strstr(text, "1 GPUs (majority 2)"), "GPU count:\n%s", text);
  CHECK(strstr(text, "host vm#000000a1: 2 ranks on 1 GPUs") && strstr(text, "ranks 2 and 3 share GPU0"), "notes:\n%s",
        text);
  free(text);
}

static void test_environment(const topo_node *healthy) {
  recs_init(NR);
  topo_node nodes[2] = {*healthy, *healthy};
  snprintf(recs[3].versions.nccl_runtime, sizeof recs[3].versions.nccl_runtime, "2.28.9");
  snprintf(recs[1].nccl_env, sizeof recs[1].nccl_env, "NCCL_NVLS_ENABLE=0\nNCCL_P2P_LEVEL=NVL\n");
  snprintf(recs[2].nccl_env, sizeof recs[2].nccl_env, "NCCL_NVLS_ENABLE=1\n");
  cJSON *json = NULL;
  int cons = -1, und = -1;
  char *text = report(NR, nodes, 2, &json, &cons, &und);
  CHECK(cons == 0, "version difference went unnoticed:\n%s", text);
  CHECK(strstr(text, "  NCCL runtime differs: 2.28.3 on ranks 0-2; 2.28.9 on rank 3\n") != NULL, "versions:\n%s", text);
  CHECK(strstr(text, "  NCCL_NVLS_ENABLE differs: 0 on ranks 0-1,3; 1 on rank 2\n") != NULL, "NCCL env:\n%s", text);
  CHECK(strstr(text, "  NCCL_P2P_LEVEL differs: <unset> on ranks 0,2-3; NVL on rank 1\n") != NULL, "unset:\n%s", text);
  CHECK(strstr(text, "environment 3 version or NCCL_* items differ") != NULL, "finding:\n%s", text);
  cJSON *diffs = cJSON_GetObjectItem(cJSON_GetObjectItem(json, "environment"), "differences");
  CHECK(cJSON_GetArraySize(diffs) == 3, "JSON differences %d", cJSON_GetArraySize(diffs));
  cJSON *item = cJSON_GetObjectItem(cJSON_GetArrayItem(diffs, 0), "item");
  CHECK(cJSON_IsString(item) && !strcmp(item->valuestring, "NCCL runtime"), "first difference");
  cJSON_Delete(json);
  free(text);
}

static void test_undecided(const topo_node *healthy, const topo_node *no_nvml) {
  recs_init(NR);
  topo_node nodes[2] = {*no_nvml, *no_nvml};
  int cons = -1, und = -1;
  char *text = report(NR, nodes, 2, NULL, &cons, &und);
  CHECK(cons == 1 && und == 1, "NVML absent: consistent %d undecided %d", cons, und);
  CHECK(strstr(text, "undecided   host vm#000000a0: NVLink unknown: NVML unavailable (libnvidia-ml.so.1 not found)") &&
            strstr(text, "verdict: could not decide"),
        "text:\n%s", text);
  free(text);
  /* NVML present, but it does not know one GPU. */
  recs_init(NR);
  topo_node partial[2] = {*healthy, *healthy};
  partial[1].gpu[1].nvml.known = 0;
  snprintf(partial[1].gpu[1].nvml.error, sizeof partial[1].gpu[1].nvml.error, "GPU is lost");
  text = report(NR, partial, 2, NULL, &cons, &und);
  CHECK(und == 1 && strstr(text, "host vm#000000a1: GPU1 0000:00:07.0: NVML could not tell its links (GPU is lost)"),
        "GPU unknown to NVML:\n%s", text);
  free(text);
  /* A host whose leader sent nothing cannot be judged either. */
  recs_init(NR);
  recs[2].leader = 0;
  topo_node one[1] = {*healthy};
  text = report(NR, one, 1, NULL, &cons, &und);
  CHECK(und == 1 && strstr(text, "no topology record"), "missing record:\n%s", text);
  free(text);
}

static void test_envcheck(void) {
  char buf[64];
  int r[] = {0, 1, 2, 5, 7, 8};
  rankset_format(r, 6, buf, sizeof buf);
  CHECK(!strcmp(buf, "ranks 0-2,5,7-8"), "'%s'", buf);
  rankset_format(r + 3, 1, buf, sizeof buf);
  CHECK(!strcmp(buf, "rank 5"), "'%s'", buf);
  int many[40];
  for (int i = 0; i < 40; i++) many[i] = 3 * i;
  rankset_format(many, 40, buf, 32);
  CHECK(strlen(buf) < 32 && strstr(buf, "..."), "truncated '%s'", buf);

  setenv("NCCL_ZZ_TEST", "2", 1);
  setenv("NCCL_AA_TEST", "1", 1);
  char env[2048];
  CHECK(envcheck_nccl_env(env, sizeof env) == 0, "fits");
  char *a = strstr(env, "NCCL_AA_TEST=1\n"), *z = strstr(env, "NCCL_ZZ_TEST=2\n");
  CHECK(a && z && a < z, "sorted: %s", env);
  char small[20];
  CHECK(envcheck_nccl_env(small, sizeof small) == 1 && strchr(small, '\n') == small + strlen(small) - 1,
        "whole lines only: '%s'", small);
  unsetenv("NCCL_ZZ_TEST");
  unsetenv("NCCL_AA_TEST");
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "tests/data/fixtures";
  fake_h200_pair();
  topo_node *healthy = h200_node(dir);
  fake_gpus[1].up &= ~((1ull << 3) | (1ull << 11));
  topo_node *degraded = h200_node(dir);
  topo_node *no_nvml = fixture_node(dir, "h200x2-vm.hwloc.xml");
  if (!healthy || !degraded || !no_nvml) return check_summary();
  topo_node_query_nvml(no_nvml, NULL, "libnvidia-ml.so.1 not found", -1);
  test_agree(healthy);
  test_many_gpus(healthy);
  test_odd_host(healthy, degraded);
  test_gpu_count(healthy);
  test_environment(healthy);
  test_undecided(healthy, no_nvml);
  test_envcheck();
  free(healthy);
  free(degraded);
  free(no_nvml);
  return check_summary();
}
