/* test_topo_nvml: the NVML paths through a fake NVML table, on the 2 x H200 fixture (argv[1] = fixtures):
 * NV18 through a hidden NVSwitch with the PCIe class kept beside it, degraded links, PCIe below its maximum,
 * direct GPU links and CPU links, a driver without the remote-type query, the end of the link probe, a GPU
 * NVML does not know, NVML absent, the JSON pair record, the saved-XML round trip, CUDA_VISIBLE_DEVICES
 * mapping, and bus id spellings. */
#include <math.h>

#include "topo_testlib.h"

static void test_healthy(const char *dir) {
  fake_h200_pair();
  topo_node *n = h200_node(dir);
  if (!n) return;
  const nvml_gpu *g = &n->gpu[0].nvml;
  CHECK(n->nvml_state == TOPO_NVML_OK && !strcmp(n->driver, "580.159.04") && !strcmp(n->cuda_driver, "13.0"),
        "driver '%s' cuda '%s'", n->driver, n->cuda_driver);
  CHECK(g->known && g->nvlink_known && g->links_total == 18 && g->links_active == 18 && g->to_switch == 18 &&
            g->to_gpu == 0 && g->npeers == 0,
        "GPU0 links %d/%d switch %d gpu %d", g->links_active, g->links_total, g->to_switch, g->to_gpu);
  CHECK(g->link_version == 6 && !strcmp(nvml_link_version_str(g->link_version), "4.0"), "version %u", g->link_version);
  { /* the cuda device's plausibility bound from these answers: 18 NVLink 4.0 links, 900 GB/s both ways; without
     * them, PCIe gen5 x16 (126 GB/s); with neither, no bound */
    char why[256];
    double peak = nvml_gpu_link_peak_gbs(g, why, sizeof why);
    CHECK(peak == 900 && strstr(why, "18 active NVLink 4.0"), "link peak %g: %s", peak, why);
    nvml_gpu p = *g;
    p.links_active = 0;
    peak = nvml_gpu_link_peak_gbs(&p, why, sizeof why);
    CHECK(fabs(peak - 2 * 16 * 3.938) < 1e-9 && strstr(why, "PCIe peak: gen5 x16"), "PCIe peak %g: %s", peak, why);
    p.pcie_known = 0;
    peak = nvml_gpu_link_peak_gbs(&p, why, sizeof why);
    CHECK(peak == 0 && strstr(why, "no bound"), "no bound %g: %s", peak, why);
  }
  CHECK(!strcmp(n->gpu[1].model, "NVIDIA H200") && !strcmp(n->gpu[1].uuid, H200_UUID1), "GPU1 %s %s", n->gpu[1].model,
        n->gpu[1].uuid);
  CHECK(g->pcie_gen == 5 && g->pcie_gen_max == 5 && g->pcie_width == 16 && g->pcie_width_max == 16 && g->cc_major == 9,
        "PCIe gen%u/%u x%u/%u", g->pcie_gen, g->pcie_gen_max, g->pcie_width, g->pcie_width_max);
  /* nvidia-smi topo -m on the machine: NV18, while the PCIe class (and NVML's common ancestor) is PHB. */
  static const char *const nvl[] = {"X NV18", "NV18 X"};
  static const char *const pcie[] = {"X PHB", "PHB X"};
  matrix_expect(n, 0, nvl, 2, "h200 + NVML");
  matrix_expect(n, 1, pcie, 2, "h200 + NVML --pcie");
  CHECK(!strcmp(topo_nccl_gpu_class(n, 0, 1, 0), "NVL") && !strcmp(topo_nccl_gpu_class(n, 0, 1, 1), "PHB") &&
            !strcmp(topo_nccl_nic_class(n, 0, 0, 0), "PHB"),
        "NCCL %s %s %s", topo_nccl_gpu_class(n, 0, 1, 0), topo_nccl_gpu_class(n, 0, 1, 1),
        topo_nccl_nic_class(n, 0, 0, 0));
  char why[512] = "";
  CHECK(topo_node_degraded(n, why, sizeof why) == 0, "healthy pair degraded: %s", why);
  topo_sig s;
  topo_node_signature(n, 0, &s);
  CHECK(!strcmp(s.summary, "2x NVIDIA H200 | NVLink 18/18 | PCIe gen5 x16 | pairs NV18 x1"), "summary '%s'", s.summary);
  char *text = node_text(n, 0);
  CHECK(strstr(text, "GPU0   X     NV18  PHB   0-31") && strstr(text, "NVLink 18/18 up v4.0: NVSwitch x18") &&
            strstr(text, "PCIe gen5 x16 (max gen5 x16), 63.02 GB/s (hwloc)") && strstr(text, "driver 580.159.04") &&
            strstr(text, "sm_90"),
        "text:\n%s", text);
  free(text);
  /* JSON keeps both the NVLink count and the PCIe class of the pair. */
  cJSON *j = topo_node_json(n, 0);
  cJSON *pair = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpu_pairs"), 0);
  cJSON *nvlinks = cJSON_GetObjectItem(pair, "nvlinks"), *cls = cJSON_GetObjectItem(pair, "pcie");
  CHECK(cJSON_IsNumber(nvlinks) && nvlinks->valueint == 18 && cJSON_IsString(cls) && !strcmp(cls->valuestring, "PHB"),
        "JSON pair nvlinks/pcie");
  cJSON *gpu1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), 1);
  cJSON *active = cJSON_GetObjectItem(cJSON_GetObjectItem(gpu1, "nvlink"), "active");
  CHECK(cJSON_IsNumber(active) && active->valueint == 18, "JSON gpu nvlink.active");
  cJSON_Delete(j);
  free(n);
}

static void test_degraded(const char *dir) {
  fake_h200_pair();
  fake_gpus[1].up &= ~((1ull << 3) | (1ull << 11)); /* two links down, as on Azure#443's H100 VMs */
  fake_gpus[0].gen = 4;                             /* trained below Gen5 */
  topo_node *n = h200_node(dir);
  if (!n) return;
  static const char *const nvl[] = {"X NV16", "NV16 X"};
  matrix_expect(n, 0, nvl, 2, "two links down");
  char why[512] = "";
  int count = topo_node_degraded(n, why, sizeof why);
  CHECK(count == 2, "degraded count %d: %s", count, why);
  CHECK(strstr(why, "GPU1 0000:00:07.0: NVLink 16/18 up") != NULL, "NVLink not flagged: %s", why);
  CHECK(strstr(why, "GPU0 0000:00:06.0: PCIe gen4 x16 below its max gen5 x16") != NULL, "PCIe not flagged: %s", why);
  topo_sig s;
  topo_node_signature(n, 0, &s);
  CHECK(!strcmp(s.summary, "2x NVIDIA H200 | NVLink 16/18 | PCIe gen4 x16 | pairs NV16 x1"), "summary '%s'", s.summary);
  free(n);
}

static void test_direct_links(const char *dir) {
  /* No switch: links 0-3 go to the other GPU, 4-5 to a CPU (POWER style), 6-7 are down. */
  fake_h200_pair();
  for (int i = 0; i < 2; i++) {
    fake_gpu *g = &fake_gpus[i];
    g->links = 8;
    g->up = 0x3f;
    for (int l = 0; l < 8; l++) {
      g->remote_type[l] = l < 4 ? NVML_DL_REMOTE_GPU : NVML_DL_REMOTE_IBMNPU;
      g->remote_busid[l] = l < 4 ? (i ? "00000000:00:06.0" : "00000000:00:07.0") : "00000000:00:00.0";
    }
  }
  topo_node *n = h200_node(dir);
  if (!n) return;
  const nvml_gpu *g = &n->gpu[0].nvml;
  CHECK(g->to_gpu == 4 && g->to_cpu == 2 && g->to_switch == 0 && g->links_active == 6 && g->links_total == 8,
        "gpu %d cpu %d switch %d active %d/%d", g->to_gpu, g->to_cpu, g->to_switch, g->links_active, g->links_total);
  CHECK(g->npeers == 1 && !strcmp(g->peer[0].busid, "0000:00:07.0") && g->peer[0].links == 4, "peer %s x%d",
        g->peer[0].busid, g->peer[0].links);
  static const char *const nvl[] = {"X NV4", "NV4 X"};
  matrix_expect(n, 0, nvl, 2, "direct links");
  char *text = node_text(n, 0);
  CHECK(strstr(text, "NVLink 6/8 up v4.0: GPU1 x4, CPU x2") != NULL, "text:\n%s", text);
  free(text);
  free(n);
}

static void test_old_driver(const char *dir) {
  /* No nvmlDeviceGetNvLinkRemoteDeviceType: the hidden peer (domain ffffffff) is a switch, as NCCL assumes, and
   * a visible peer that is no GPU of this host (a bare-metal NVSwitch at 00:10.0) counts as a switch too. */
  fake_h200_pair();
  for (int l = 0; l < 18; l++) fake_gpus[1].remote_busid[l] = "00000000:00:10.0";
  topo_node *n = fixture_node(dir, "h200x2-vm.hwloc.xml");
  if (!n) return;
  nvml_api api = fake_api();
  api.nvlink_remote_type = NULL;
  topo_node_query_nvml(n, &api, NULL, -1);
  CHECK(n->gpu[0].nvml.to_switch == 18, "hidden peer: switch %d", n->gpu[0].nvml.to_switch);
  CHECK(n->gpu[1].nvml.to_gpu == 18 && n->gpu[1].nvml.npeers == 1, "visible peer taken for a GPU: gpu %d",
        n->gpu[1].nvml.to_gpu);
  static const char *const nvl[] = {"X NV18", "NV18 X"};
  matrix_expect(n, 0, nvl, 2, "old driver");
  free(n);
}

static void test_probe_ends(const char *dir) {
  /* A GPU without NVLink answers NOT_SUPPORTED for link 0: no links, and the pair falls back to PCIe. */
  fake_h200_pair();
  fake_gpus[0].links = fake_gpus[1].links = 0;
  fake_gpus[0].end_code = fake_gpus[1].end_code = NVML_DL_ERROR_NOT_SUPPORTED;
  topo_node *n = h200_node(dir);
  if (n) {
    CHECK(n->gpu[0].nvml.nvlink_known && n->gpu[0].nvml.links_total == 0 && n->nvlinks[0][1] == 0,
          "no NVLink: known %d total %d nv %d", n->gpu[0].nvml.nvlink_known, n->gpu[0].nvml.links_total,
          n->nvlinks[0][1]);
    static const char *const pcie[] = {"X PHB", "PHB X"};
    matrix_expect(n, 0, pcie, 2, "no NVLink");
    char *text = node_text(n, 0);
    CHECK(strstr(text, "NVLink: none") != NULL, "text:\n%s", text);
    free(text);
    free(n);
  }
  /* A failing state query makes NVLink unknown for that GPU, with the reason kept. */
  fake_h200_pair();
  fake_gpus[1].state_code = 999;
  n = h200_node(dir);
  if (n) {
    CHECK(!n->gpu[1].nvml.nvlink_known && strstr(n->gpu[1].nvml.error, "nvmlDeviceGetNvLinkState(link 0)"),
          "error '%s'", n->gpu[1].nvml.error);
    CHECK(n->nvlinks[0][1] == -1, "pair known with one GPU unknown: %d", n->nvlinks[0][1]);
    free(n);
  }
  /* NVML does not know GPU1 at all. */
  fake_h200_pair();
  fake_gpus[1].busid = "00000000:00:09.0";
  n = h200_node(dir);
  if (n) {
    CHECK(!n->gpu[1].nvml.known && strstr(n->gpu[1].nvml.error, "0000:00:07.0") &&
              strstr(n->gpu[1].nvml.error, "Not Found"),
          "error '%s'", n->gpu[1].nvml.error);
    CHECK(n->gpu[0].nvml.known && n->nvlinks[0][1] == -1, "pair with an unknown GPU: %d", n->nvlinks[0][1]);
    free(n);
  }
  /* Only GPU0 asked. */
  fake_h200_pair();
  n = fixture_node(dir, "h200x2-vm.hwloc.xml");
  if (n) {
    nvml_api api = fake_api();
    topo_node_query_nvml(n, &api, NULL, 0);
    CHECK(n->gpu[0].nvml.known && !n->gpu[1].nvml.known, "only = 0 asked GPU1 too");
    free(n);
  }
}

static void test_absent(const char *dir) {
  topo_node *n = fixture_node(dir, "h200x2-vm.hwloc.xml");
  if (!n) return;
  topo_node_query_nvml(n, NULL, "libnvidia-ml.so.1: cannot open shared object file", -1);
  CHECK(n->nvml_state == TOPO_NVML_ABSENT && !n->gpu[0].nvml.known && n->nvlinks[0][1] == -1, "NVML absent");
  char *text = node_text(n, 0);
  CHECK(strstr(text, "NVLink: unknown: NVML unavailable (libnvidia-ml.so.1: cannot open") && strstr(text, "PHB"),
        "text:\n%s", text);
  free(text);
  free(n);
  /* The real loader: on a machine without the driver it says why; with one it opens. */
  nvml_api api;
  char why[128] = "";
  int ok = nvml_open(&api, why, sizeof why);
  CHECK(ok ? api.handle_by_busid != NULL : why[0] != 0, "nvml_open %d: '%s'", ok, why);
  printf("NVML on this machine: %s\n", ok ? "present" : why);
  if (ok) nvml_close(&api);
}

static void test_xml_roundtrip(const char *dir) {
  /* What --topo-xml writes: NVML's model, UUID and NV# go into the XML and come back without NVML. */
  fake_h200_pair();
  char path[1024], out[] = "/tmp/ddpbench-topo-XXXXXX";
  snprintf(path, sizeof path, "%s/h200x2-vm.hwloc.xml", dir);
  hwloc_topology_t topo = NULL;
  CHECK(topo_load(path, &topo) == DDP_OK, "load");
  topo_node *n = calloc(1, sizeof *n), *back = calloc(1, sizeof *back);
  int fd = mkstemp(out);
  CHECK(topo && n && back && fd >= 0, "setup");
  if (!topo || !n || !back || fd < 0) return;
  close(fd);
  nvml_api api = fake_api();
  CHECK(topo_node_scan(topo, path, n) == DDP_OK, "scan");
  topo_node_query_nvml(n, &api, NULL, -1);
  CHECK(topo_node_annotate(topo, n) == DDP_OK, "annotate");
  CHECK(hwloc_topology_export_xml(topo, out, 0) == 0, "export");
  hwloc_topology_destroy(topo);
  topo = NULL;
  CHECK(topo_load(out, &topo) == DDP_OK && topo_node_scan(topo, out, back) == DDP_OK, "reload");
  static const char *const nvl[] = {"X NV18", "NV18 X"};
  matrix_expect(back, 0, nvl, 2, "saved XML");
  CHECK(back->hwloc_nvlink == TOPO_HWLOC_NVLINK_SAVED && !strcmp(back->gpu[0].model, "NVIDIA H200") &&
            !strcmp(back->gpu[1].uuid, H200_UUID1),
        "saved: matrix %d model '%s' uuid '%s'", back->hwloc_nvlink, back->gpu[0].model, back->gpu[1].uuid);
  if (topo) hwloc_topology_destroy(topo);
  unlink(out);
  free(n);
  free(back);
}

static void test_visible(const char *dir) {
  fake_h200_pair();
  topo_node *n = h200_node(dir);
  if (!n) return;
  int idx[8], c;
  c = topo_visible_gpus(n, NULL, idx, 8);
  CHECK(c == 2 && idx[0] == 0 && idx[1] == 1, "unset: %d", c);
  c = topo_visible_gpus(n, "1", idx, 8);
  CHECK(c == 1 && idx[0] == 1, "\"1\": %d", c);
  c = topo_visible_gpus(n, "1,0", idx, 8);
  CHECK(c == 2 && idx[0] == 1 && idx[1] == 0, "\"1,0\": %d", c);
  c = topo_visible_gpus(n, "0,7,1", idx, 8);
  CHECK(c == 1 && idx[0] == 0, "the list ends at an invalid entry: %d", c);
  c = topo_visible_gpus(n, "GPU-0f1e2d3c", idx, 8);
  CHECK(c == 1 && idx[0] == 1, "UUID prefix: %d", c);
  c = topo_visible_gpus(n, "", idx, 8);
  CHECK(c == 0, "empty: %d", c);
  free(n);
}

static void test_busids(void) {
  char b[20];
  CHECK(!nvml_busid_normalize("00000000:06:00.0", b, sizeof b) && !strcmp(b, "0000:06:00.0"), "NVML form: %s", b);
  CHECK(!nvml_busid_normalize("0000:3B:00.0", b, sizeof b) && !strcmp(b, "0000:3b:00.0"), "CUDA form: %s", b);
  CHECK(!nvml_busid_normalize("06:00.1", b, sizeof b) && !strcmp(b, "0000:06:00.1"), "short form: %s", b);
  CHECK(!nvml_busid_normalize("FFFFFFFF:FF:FF.0", b, sizeof b) && !strcmp(b, "ffffffff:ff:ff.0"), "hidden: %s", b);
  CHECK(nvml_busid_normalize("GPU-1234", b, sizeof b) == -1 && !b[0], "junk accepted: %s", b);
  CHECK(nvml_busid_normalize("0000:06:00.9", b, sizeof b) == -1, "function 9 accepted");
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "tests/data/fixtures";
  test_healthy(dir);
  test_degraded(dir);
  test_direct_links(dir);
  test_old_driver(dir);
  test_probe_ends(dir);
  test_absent(dir);
  test_xml_roundtrip(dir);
  test_visible(dir);
  test_busids();
  return check_summary();
}
