/* test_topo_mpi: the collective path under mpiexec -np 2 on the live machine: topo_rank_init on every rank
 * (auto binding, --topo-xml written by the host's local rank 0 and readable again), topo_rank_report
 * gathering to rank 0 (JSON there only, the same verdict on every rank), a CUDA runtime and an NCCL_*
 * variable differing between the ranks named in the report and turning the verdict to 1, and doctor_main's
 * options and exit codes. Holds on a machine with or without GPUs. */
#include "check_mpi.h"
#include "topo_testlib.h"
#include "commands.h"

#include <unistd.h>

#include "envcheck.h"
#include "testlib.h"

/* doctor through the skeleton, inside this MPI job (cmd_nested): its exit code on every rank. */
static int doctor(const ddp_dist *d, int argc, char **argv) {
  cmd_ctx *c = calloc(1, sizeof *c);
  if (!c) return -1;
  c->dist = *d;
  int code = cmd_nested(c, &cmd_doctor, argc, argv);
  free(c);
  return code;
}

/* Runs one report; rank 0's text comes back in *text (NULL elsewhere). */
static ddp_result report(topo_rank *t, const ddp_versions *v, char **text, cJSON **json, int *consistent) {
  size_t len = 0;
  *text = NULL;
  FILE *f = ddp_rank() == 0 ? open_memstream(text, &len) : NULL;
  ddp_result r = topo_rank_report(t, v, f, json, consistent);
  if (f) fclose(f);
  return r;
}

static int file_exists(const char *path) { return access(path, R_OK) == 0; }

int main(int argc, char **argv) {
  ddp_dist d;
  if (dist_init(&argc, &argv, &d) != DDP_OK) return 1;
  int root = d.rank == 0;
  CHECK(d.size == 2, "run with 2 ranks, got %d", d.size);

  /* A directory both ranks name, for --topo-xml. */
  char dir[64] = "/tmp/ddpbench-topo-mpi-XXXXXX";
  if (root) CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, d.world);

  topo_options opt = {.bind_gpu = -1, .pcie_only = 0, .xml_dir = dir};
  topo_rank *t = NULL;
  ddp_result r = topo_rank_init(&d, &opt, NULL, &t);
  CHECK(r == DDP_OK && t, "topo_rank_init: %s", ddp_result_str(r));
  if (!t) dist_abort(1);

  ddp_versions v;
  cmd_versions(&v);
  snprintf(v.cuda_runtime, sizeof v.cuda_runtime, "13.0");
  char *text = NULL;
  cJSON *json = NULL;
  int consistent = -1;
  r = report(t, &v, &text, &json, &consistent);
  CHECK(r == DDP_OK && consistent == 1, "same versions: %s, consistent %d\n%s", ddp_result_str(r), consistent,
        text ? text : "");
  CHECK(topo_rank_exit_code(t) == 0 || topo_rank_exit_code(t) == 2, "exit code %d", topo_rank_exit_code(t));
  CHECK(root ? json != NULL : json == NULL, "JSON on rank 0 only");
  if (root && json) {
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(json, "ranks")) == 2, "JSON ranks");
    cJSON *host = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "hosts"), 0);
    CHECK(cJSON_IsString(cJSON_GetObjectItem(host, "ranks")) &&
              !strcmp(cJSON_GetObjectItem(host, "ranks")->valuestring, "ranks 0-1"),
          "both ranks on one host");
    CHECK(text && strstr(text, "== topology: 2 ranks on 1 host ==") && strstr(text, "versions (rank 0): "), "text:\n%s",
          text ? text : "");
  }
  cJSON_Delete(json);
  free(text);

  /* The host's XML, written by local rank 0, loads again with the same GPUs and NICs. */
  MPI_Barrier(d.world);
  if (root) {
    char path[512];
    snprintf(path, sizeof path, "%s/hwloc-%s-%016llx.xml", dir, d.host, (unsigned long long)d.host_hash);
    CHECK(file_exists(path), "--topo-xml wrote no %s", path);
    hwloc_topology_t live = NULL, saved = NULL;
    topo_node *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    if (a && b && topo_load(NULL, &live) == DDP_OK && topo_load(path, &saved) == DDP_OK) {
      CHECK(topo_node_scan(live, NULL, a) == DDP_OK && topo_node_scan(saved, path, b) == DDP_OK, "scans");
      CHECK(a->ngpu == b->ngpu && a->nnic == b->nnic, "saved XML: %d GPUs %d NICs, live %d %d", b->ngpu, b->nnic,
            a->ngpu, a->nnic);
    } else {
      CHECK(0, "cannot load %s", path);
    }
    if (live) hwloc_topology_destroy(live);
    if (saved) hwloc_topology_destroy(saved);
    free(a);
    free(b);
    unlink(path);
    rmdir(dir);
  }

  /* Rank 1 runs another CUDA runtime and sets an NCCL variable: both named, verdict 1 everywhere. */
  if (d.rank == 1) {
    snprintf(v.cuda_runtime, sizeof v.cuda_runtime, "12.8");
    setenv("NCCL_DEBUG", "INFO", 1);
  }
  r = report(t, &v, &text, NULL, &consistent);
  CHECK(r == DDP_OK && consistent == 0 && topo_rank_exit_code(t) == 1, "differences: %s consistent %d exit %d",
        ddp_result_str(r), consistent, topo_rank_exit_code(t));
  if (root)
    CHECK(text && strstr(text, "  CUDA runtime differs: 13.0 on rank 0; 12.8 on rank 1\n") &&
              strstr(text, "  NCCL_DEBUG differs: <unset> on rank 0; INFO on rank 1\n") && strstr(text, "INCONSISTENT"),
          "text:\n%s", text ? text : "");
  free(text);
  unsetenv("NCCL_DEBUG");
  topo_rank_free(t);

  /* doctor: options first (no collective before they are checked), then a full run with --json. */
  const char *bad[] = {"doctor", "--bogus"};
  const char *missing[] = {"doctor", "--topo-xml"};
  CHECK(doctor(&d, 2, (char **)bad) == 2, "doctor --bogus");
  CHECK(doctor(&d, 2, (char **)missing) == 2, "doctor --topo-xml without a directory");
  char jpath[64] = "/tmp/ddpbench-doctor-XXXXXX";
  if (root) {
    int fd = mkstemp(jpath);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) close(fd);
  }
  MPI_Bcast(jpath, sizeof jpath, MPI_CHAR, 0, d.world);
  /* The file exists (mkstemp): refused without --force on every rank, before any work; written with it. */
  const char *no_force[] = {"doctor", "--json", jpath};
  CHECK(doctor(&d, 3, (char **)no_force) == 2, "doctor --json over an existing file without --force");
  /* --topo-xml naming a file, not a directory: exit 2 on every rank (the run's check, shared). */
  const char *xml_file[] = {"doctor", "--topo-xml", jpath};
  CHECK(doctor(&d, 3, (char **)xml_file) == 2, "doctor --topo-xml naming a regular file");
  const char *full[] = {"doctor", "--json", jpath, "--force"};
  int code = doctor(&d, 4, (char **)full);
  /* No GPU here: nothing to be undecided about, so 0; with GPUs and NVML also 0 unless degraded. */
  CHECK(code == 0 || code == 1 || code == 2, "doctor exit %d", code);
  int codes[2] = {code, code};
  MPI_Allgather(&code, 1, MPI_INT, codes, 1, MPI_INT, d.world);
  CHECK(codes[0] == codes[1], "doctor exit codes differ between ranks: %d %d", codes[0], codes[1]);
  if (root) {
    cJSON *doc = tl_json_load(jpath);
    cJSON *consistent_item = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "topology"), "consistent");
    CHECK(cJSON_IsBool(consistent_item) && cJSON_IsTrue(consistent_item) == (code != 1),
          "--json document agrees with exit %d", code);
    /* The verdict is the findings': the same array a run writes, one per report entry, exit code from them. */
    finding_list fl;
    findings_init(&fl);
    char why[300] = "";
    CHECK(findings_from_json(cJSON_GetObjectItem(doc, "findings"), &fl, why, sizeof why) == DDP_OK,
          "doctor --json findings read back: %s", why);
    CHECK(fl.n == cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "topology"), "findings")),
          "doctor: one finding per topology entry (%d)", fl.n);
    CHECK(topo_findings_exit_code(&fl) == code, "doctor exit %d is its findings' %d", code, topo_findings_exit_code(&fl));
    findings_free(&fl);
    cJSON_Delete(doc);
  }
  /* An NCCL_* variable on one rank only: a versions warning in the findings, exit 1 on every rank. */
  if (d.rank == 1) setenv("NCCL_DEBUG", "WARN", 1);
  code = doctor(&d, 4, (char **)full);
  unsetenv("NCCL_DEBUG");
  MPI_Allgather(&code, 1, MPI_INT, codes, 1, MPI_INT, d.world);
  CHECK(codes[0] == 1 && codes[1] == 1, "doctor with NCCL_DEBUG on rank 1 only: exit %d %d, want 1", codes[0], codes[1]);
  if (root) {
    cJSON *doc = tl_json_load(jpath);
    finding_list fl;
    findings_init(&fl);
    char why[300] = "";
    CHECK(findings_from_json(cJSON_GetObjectItem(doc, "findings"), &fl, why, sizeof why) == DDP_OK, "%s", why);
    int versions_warn = 0;
    for (int i = 0; i < fl.n; i++)
      versions_warn += !strcmp(fl.v[i].check, "versions") && fl.v[i].severity == SEV_WARN;
    CHECK(versions_warn >= 1, "doctor's findings hold a versions warning (%d findings)", fl.n);
    CHECK(topo_findings_exit_code(&fl) == 1, "findings give exit 1");
    findings_free(&fl);
    cJSON_Delete(doc);
    unlink(jpath);
  }
  /* The verdict rule on hand-made reports: warnings 1, undecided alone 2, notes 0. */
  if (root) {
    const char *cases[][2] = {{"differs", "1"}, {"degraded", "1"}, {"environment", "1"}, {"undecided", "2"}, {"note", "0"}};
    for (int c = 0; c < 5; c++) {
      cJSON *topo = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(topo, "findings"), *e = cJSON_CreateObject();
      cJSON_AddStringToObject(e, "kind", cases[c][0]);
      cJSON_AddStringToObject(e, "text", "x");
      cJSON_AddItemToArray(arr, e);
      finding_list fl;
      findings_init(&fl);
      CHECK(topo_findings(topo, &fl) == DDP_OK && fl.n == 1, "topo_findings %s", cases[c][0]);
      CHECK(topo_findings_exit_code(&fl) == atoi(cases[c][1]), "%s gives exit %s", cases[c][0], cases[c][1]);
      findings_free(&fl);
      cJSON_Delete(topo);
    }
  }

  /* Counts summed over the ranks; every rank fails if any did. */
  int rc = check_summary_world();
  dist_finalize(&d);
  return rc;
}
