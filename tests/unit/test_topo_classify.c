/* test_topo_classify: the PCIe classes, NVLink counts from hwloc, NICs, locality and paths on saved
 * topologies of real machines (tests/data/fixtures, given as argv[1]), against matrices written down here; then
 * loading errors, `ddpbench topo` options, and binding on the live machine (flat or not).
 * Checks: topo_load (incl. hwloc 3.0 XML on hwloc 2.x), topo_node_scan, topo_cell, topo_nccl_*_class,
 * topo_node_signature, topo_main, topo_bind_apply. */
#include "topo_testlib.h"
#include "commands.h"

#include <math.h>

static void test_h200(const char *dir) {
  topo_node *n = fixture_node(dir, "h200x2-vm.hwloc.xml");
  if (!n) return;
  /* Both GPUs under the VM's one synthetic host bridge: PHB, as NVML's common ancestor says there. */
  static const char *const pcie[] = {"X PHB", "PHB X"};
  matrix_expect(n, 0, pcie, 2, "h200 (no NVLink data)");
  matrix_expect(n, 1, pcie, 2, "h200 --pcie");
  CHECK(!strcmp(n->gpu[0].busid, "0000:00:06.0") && !strcmp(n->gpu[1].busid, "0000:00:07.0"), "bus ids %s %s",
        n->gpu[0].busid, n->gpu[1].busid);
  CHECK(n->gpu[0].vendor == 0x10de && n->gpu[0].device == 0x2335 && n->gpu[0].class_id == 0x0302,
        "GPU0 is %04x:%04x class %04x", n->gpu[0].vendor, n->gpu[0].device, n->gpu[0].class_id);
  CHECK(fabs(n->gpu[1].link_gbs - 63.02) < 0.01, "GPU1 link %.3f GB/s, expected 63.02 (Gen5 x16)", n->gpu[1].link_gbs);
  CHECK(!strcmp(n->gpu[0].path, "HostBridge 0000:[00-00]"), "path '%s'", n->gpu[0].path);
  CHECK(!strcmp(n->gpu[0].cpus, "0-31") && !strcmp(n->gpu[0].numa, "0"), "locality %s / %s", n->gpu[0].cpus,
        n->gpu[0].numa);
  CHECK(n->flat == 1 && n->numa_nodes == 1, "flat %d numa %d", n->flat, n->numa_nodes);
  CHECK(n->nvlinks[0][1] == -1 && n->hwloc_nvlink == TOPO_HWLOC_NVLINK_NONE, "NVLink known without NVML: %d",
        n->nvlinks[0][1]);
  CHECK(!strcmp(n->hwloc_version, "2.10.0"), "hwloc version '%s'", n->hwloc_version);
  CHECK(n->nnic == 1 && !strcmp(n->nic[0].name, "eth0") && !strcmp(n->nic[0].kind, "Network") &&
            !strcmp(n->nic[0].busid, "0000:00:03.0"),
        "NIC %s %s %s", n->nic[0].name, n->nic[0].kind, n->nic[0].busid);
  static const char *const nics[] = {"PHB", "PHB"};
  nic_matrix_expect(n, nics, 2, "h200 GPU x NIC");
  CHECK(!strcmp(topo_nccl_gpu_class(n, 0, 1, 0), "PHB") && !strcmp(topo_nccl_nic_class(n, 0, 0, 0), "PHB"),
        "NCCL classes %s %s", topo_nccl_gpu_class(n, 0, 1, 0), topo_nccl_nic_class(n, 0, 0, 0));
  CHECK(topo_gpu_find(n, "00000000:00:07.0") == 1 && topo_gpu_find(n, "0000:00:08.0") == -1 &&
            topo_gpu_find(n, "junk") == -1,
        "topo_gpu_find");
  topo_sig s;
  topo_node_signature(n, 0, &s);
  CHECK(!strcmp(s.summary, "2x NVIDIA GPU | NVLink unknown | PCIe 63.0 GB/s | pairs PHB x1"), "summary '%s'",
        s.summary);
  char *text = node_text(n, 0);
  CHECK(strstr(text, "GPU0   X     PHB   PHB   0-31            0\n") != NULL, "matrix row not in:\n%s", text);
  CHECK(strstr(text, "NVLink: unknown") && strstr(text, "locality: flat"), "text:\n%s", text);
  free(text);
  free(n);
}

static void test_dgx2(const char *dir) {
  topo_node *n = fixture_node(dir, "hwloc-tests-nvidiaDGX2.xml");
  if (!n) return;
  /* PLX trees: PIX under one switch, PXB across the switch levels of a host bridge, NODE across host bridges
   * of a socket, SYS across sockets. */
  static const char *const pcie[] = {
      "X PIX PXB PXB NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS SYS SYS",
      "PIX X PXB PXB NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS SYS SYS",
      "PXB PXB X PIX NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS SYS SYS",
      "PXB PXB PIX X NODE NODE NODE NODE SYS SYS SYS SYS SYS SYS SYS SYS",
      "NODE NODE NODE NODE X PIX PXB PXB SYS SYS SYS SYS SYS SYS SYS SYS",
      "NODE NODE NODE NODE PIX X PXB PXB SYS SYS SYS SYS SYS SYS SYS SYS",
      "NODE NODE NODE NODE PXB PXB X PIX SYS SYS SYS SYS SYS SYS SYS SYS",
      "NODE NODE NODE NODE PXB PXB PIX X SYS SYS SYS SYS SYS SYS SYS SYS",
      "SYS SYS SYS SYS SYS SYS SYS SYS X PIX PXB PXB NODE NODE NODE NODE",
      "SYS SYS SYS SYS SYS SYS SYS SYS PIX X PXB PXB NODE NODE NODE NODE",
      "SYS SYS SYS SYS SYS SYS SYS SYS PXB PXB X PIX NODE NODE NODE NODE",
      "SYS SYS SYS SYS SYS SYS SYS SYS PXB PXB PIX X NODE NODE NODE NODE",
      "SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE NODE X PIX PXB PXB",
      "SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE NODE PIX X PXB PXB",
      "SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE NODE PXB PXB X PIX",
      "SYS SYS SYS SYS SYS SYS SYS SYS NODE NODE NODE NODE PXB PXB PIX X",
  };
  matrix_expect(n, 1, pcie, 16, "DGX-2 --pcie");
  /* NVLinkBandwidth: each GPU has one 25 GB/s link to each of its baseboard's six NVSwitches, so GPUs of a
   * baseboard share six links (NV6); the matrix lists no switch-to-switch links, so across baseboards the
   * pair stays on its PCIe class. */
  static const char *const nvl[] = {
      "X NV6 NV6 NV6 NV6 NV6 NV6 NV6 SYS SYS SYS SYS SYS SYS SYS SYS",
      "NV6 X NV6 NV6 NV6 NV6 NV6 NV6 SYS SYS SYS SYS SYS SYS SYS SYS",
      "NV6 NV6 X NV6 NV6 NV6 NV6 NV6 SYS SYS SYS SYS SYS SYS SYS SYS",
      "NV6 NV6 NV6 X NV6 NV6 NV6 NV6 SYS SYS SYS SYS SYS SYS SYS SYS",
      "NV6 NV6 NV6 NV6 X NV6 NV6 NV6 SYS SYS SYS SYS SYS SYS SYS SYS",
      "NV6 NV6 NV6 NV6 NV6 X NV6 NV6 SYS SYS SYS SYS SYS SYS SYS SYS",
      "NV6 NV6 NV6 NV6 NV6 NV6 X NV6 SYS SYS SYS SYS SYS SYS SYS SYS",
      "NV6 NV6 NV6 NV6 NV6 NV6 NV6 X SYS SYS SYS SYS SYS SYS SYS SYS",
      "SYS SYS SYS SYS SYS SYS SYS SYS X NV6 NV6 NV6 NV6 NV6 NV6 NV6",
      "SYS SYS SYS SYS SYS SYS SYS SYS NV6 X NV6 NV6 NV6 NV6 NV6 NV6",
      "SYS SYS SYS SYS SYS SYS SYS SYS NV6 NV6 X NV6 NV6 NV6 NV6 NV6",
      "SYS SYS SYS SYS SYS SYS SYS SYS NV6 NV6 NV6 X NV6 NV6 NV6 NV6",
      "SYS SYS SYS SYS SYS SYS SYS SYS NV6 NV6 NV6 NV6 X NV6 NV6 NV6",
      "SYS SYS SYS SYS SYS SYS SYS SYS NV6 NV6 NV6 NV6 NV6 X NV6 NV6",
      "SYS SYS SYS SYS SYS SYS SYS SYS NV6 NV6 NV6 NV6 NV6 NV6 X NV6",
      "SYS SYS SYS SYS SYS SYS SYS SYS NV6 NV6 NV6 NV6 NV6 NV6 NV6 X",
  };
  matrix_expect(n, 0, nvl, 16, "DGX-2 NVLink");
  CHECK(n->hwloc_nvlink == TOPO_HWLOC_NVLINK_BANDWIDTH, "NVLinkBandwidth not found");
  int six = 0;
  for (int g = 0; g < n->ngpu; g++) six += n->gpu[g].hwloc_to_switch == 6 && n->gpu[g].hwloc_to_cpu == 0;
  CHECK(six == 16, "%d of 16 GPUs with 6 switch links", six);
  CHECK(!strcmp(n->gpu[0].model, "Tesla V100-SXM3-32GB-H") &&
            !strcmp(n->gpu[0].uuid, "GPU-d3977428-7a30-086b-2e20-5c1eeed647c6"),
        "GPU0 %s %s", n->gpu[0].model, n->gpu[0].uuid);
  CHECK(!strcmp(n->gpu[0].path, "HostBridge 0000:[2b-3b] > 2b:00.0 > 2c:00.0 > 2d:04.0 > 32:00.0 > 33:00.0"),
        "path '%s'", n->gpu[0].path);
  CHECK(!strcmp(n->gpu[0].numa, "0") && !strcmp(n->gpu[8].numa, "1") && !n->flat && n->nnic == 0,
        "numa %s/%s flat %d nics %d", n->gpu[0].numa, n->gpu[8].numa, n->flat, n->nnic);
  CHECK(!strcmp(topo_nccl_gpu_class(n, 0, 4, 1), "PHB") && !strcmp(topo_nccl_gpu_class(n, 0, 1, 1), "PIX") &&
            !strcmp(topo_nccl_gpu_class(n, 0, 1, 0), "NVL") && !strcmp(topo_nccl_gpu_class(n, 0, 8, 0), "SYS"),
        "NCCL classes");
  topo_sig s;
  topo_node_signature(n, 0, &s);
  CHECK(!strcmp(s.summary,
                "16x Tesla V100-SXM3-32GB-H | NVLink from the topology file | PCIe 15.8 GB/s | pairs NV6 x56, SYS x64"),
        "summary '%s'", s.summary);
  char *text = node_text(n, 1);
  CHECK(strstr(text, "NCCL path types where they differ: NODE is PHB") != NULL, "NCCL note missing:\n%s", text);
  free(text);
  free(n);
}

static void test_24em64t(const char *dir) {
  topo_node *n = fixture_node(dir, "hwloc-tests-24em64t-2n6c2t-pci.xml");
  if (!n) return;
  /* GPU0 on socket 0's host bridge; GPU1 and GPU2 on socket 1's, under different root ports; the ATI VGA
   * (vendor 1002) is not an NVIDIA GPU. */
  static const char *const pcie[] = {"X SYS SYS", "SYS X PHB", "SYS PHB X"};
  matrix_expect(n, 0, pcie, 3, "24em64t");
  CHECK(!strcmp(n->gpu[0].busid, "0000:06:00.0") && !strcmp(n->gpu[1].busid, "0000:11:00.0") &&
            !strcmp(n->gpu[2].busid, "0000:14:00.0"),
        "bus ids");
  CHECK(n->nnic == 3, "%d NICs, expected 3", n->nnic);
  if (n->nnic == 3) {
    CHECK(!strcmp(n->nic[0].name, "eth0") && !strcmp(n->nic[1].name, "eth1") && !strcmp(n->nic[2].name, "mlx4_0"),
          "NIC names %s %s %s", n->nic[0].name, n->nic[1].name, n->nic[2].name);
    CHECK(!strcmp(n->nic[2].kind, "OpenFabrics") && !strcmp(n->nic[2].also, "eth2 ib0"), "mlx4_0: %s, also '%s'",
          n->nic[2].kind, n->nic[2].also);
    static const char *const nics[] = {"PHB PHB PHB", "SYS SYS SYS", "SYS SYS SYS"};
    nic_matrix_expect(n, nics, 3, "24em64t GPU x NIC");
    CHECK(n->nic_nic[0][1] == TOPO_PIX && n->nic_nic[0][2] == TOPO_PHB && n->nic_nic[1][1] == TOPO_X, "NIC x NIC %d %d",
          n->nic_nic[0][1], n->nic_nic[0][2]);
  }
  CHECK(!strcmp(n->gpu[0].numa, "0") && !strcmp(n->gpu[1].numa, "1") && !n->flat, "numa %s %s flat %d", n->gpu[0].numa,
        n->gpu[1].numa, n->flat);
  CHECK(!strcmp(n->gpu[0].cpus, "0,2,4,6,8,10,12,14,16,18,20,22"), "GPU0 cpus %s", n->gpu[0].cpus);
  CHECK(!strcmp(n->gpu[2].path, "HostBridge 0000:[10-1f] > 10:03.0"), "path '%s'", n->gpu[2].path);
  char *text = node_text(n, 0);
  CHECK(strstr(text, "NVLink: unknown; nearest NIC0 eth0 (PHB)\n") &&
            strstr(text, "NVLink: unknown; nearest NIC0 eth0 (SYS)\n"),
        "nearest NIC:\n%s", text);
  free(text);
  free(n);
}

static void test_power8(const char *dir) {
  topo_node *n = fixture_node(dir, "hwloc-tests-power8gpudistances.xml");
  if (!n) return;
  /* One GPU per host bridge, two host bridges per socket; NVLink 1 (20 GB/s per link): two links between the
   * GPUs of a socket and two from each GPU to its CPU. */
  static const char *const pcie[] = {"X NODE SYS SYS", "NODE X SYS SYS", "SYS SYS X NODE", "SYS SYS NODE X"};
  static const char *const nvl[] = {"X NV2 SYS SYS", "NV2 X SYS SYS", "SYS SYS X NV2", "SYS SYS NV2 X"};
  matrix_expect(n, 1, pcie, 4, "power8 --pcie");
  matrix_expect(n, 0, nvl, 4, "power8 NVLink");
  CHECK(!strcmp(n->gpu[2].busid, "000a:01:00.0"), "GPU2 %s", n->gpu[2].busid);
  int ok = 0;
  for (int g = 0; g < n->ngpu; g++) ok += n->gpu[g].hwloc_to_cpu == 2 && n->gpu[g].hwloc_to_switch == 0;
  CHECK(ok == 4, "%d of 4 GPUs with 2 CPU links and no switch", ok);
  free(n);
}

static void test_gb10(const char *dir) {
  topo_node *n = fixture_node(dir, "hwloc-tests-nvidia-dgx-gb10.xml");
  if (!n) return;
  CHECK(n->ngpu == 0, "GB10's integrated GPU is no PCI GPU, found %d", n->ngpu);
  char *text = node_text(n, 0);
  CHECK(strstr(text, "no NVIDIA GPU") != NULL, "text:\n%s", text);
  free(text);
  free(n);
}

static void test_nccl_names(void) {
  /* A hand-made host: GPU0-GPU1 and GPU1-GPU2 have NVLinks, GPU0-GPU2 none (NVB through GPU1); NIC0 sits
   * on GPU0's switch (PIX) and is SYS to GPU1, which reaches it through GPU0 (PXN). */
  topo_node *n = calloc(1, sizeof *n);
  if (!n) return;
  n->ngpu = 3;
  n->nnic = 1;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) n->pcie[a][b] = a == b ? TOPO_X : TOPO_SYS;
  n->nvlinks[0][1] = n->nvlinks[1][0] = 4;
  n->nvlinks[1][2] = n->nvlinks[2][1] = 2;
  n->nic_pcie[0][0] = TOPO_PIX;
  n->nic_pcie[1][0] = n->nic_pcie[2][0] = TOPO_SYS;
  static const char *const nvl[] = {"X NV4 SYS", "NV4 X NV2", "SYS NV2 X"};
  matrix_expect(n, 0, nvl, 3, "hand-made");
  CHECK(!strcmp(topo_nccl_gpu_class(n, 0, 2, 0), "NVB") && !strcmp(topo_nccl_gpu_class(n, 0, 2, 1), "SYS"),
        "NVB: %s / --pcie %s", topo_nccl_gpu_class(n, 0, 2, 0), topo_nccl_gpu_class(n, 0, 2, 1));
  CHECK(!strcmp(topo_nccl_nic_class(n, 1, 0, 0), "PXN") && !strcmp(topo_nccl_nic_class(n, 0, 0, 0), "PIX") &&
            !strcmp(topo_nccl_nic_class(n, 2, 0, 0), "SYS") && !strcmp(topo_nccl_nic_class(n, 1, 0, 1), "SYS"),
        "PXN: %s %s %s", topo_nccl_nic_class(n, 1, 0, 0), topo_nccl_nic_class(n, 0, 0, 0),
        topo_nccl_nic_class(n, 2, 0, 0));
  char *text = node_text(n, 0);
  CHECK(strstr(text, "NCCL path types where they differ: GPU0-GPU2 NVB; GPU1-NIC0 PXN\n") != NULL, "text:\n%s", text);
  free(text);
  free(n);
}

static void test_load_errors(const char *dir) {
  hwloc_topology_t topo = NULL;
  CHECK(topo_load("/nonexistent/topology.xml", &topo) == DDP_ERR_USAGE && !topo, "missing file");
  char path[1024];
  snprintf(path, sizeof path, "%s/README.md", dir);
  CHECK(topo_load(path, &topo) == DDP_ERR_USAGE && !topo, "a non-XML file is a usage error");
}

static int run_topo(int argc, const char **argv) {
  static const cmd_def *const cmds[] = {&cmd_topo, NULL};
  char *v[16] = {"ddpbench"};
  for (int i = 0; i < argc && i < 15; i++) v[i + 1] = (char *)argv[i];
  return cmd_main(cmds, argc + 1, v);
}

static void test_cli(const char *dir) {
  char h200[1024], dgx2[1024], bad[1100];
  snprintf(h200, sizeof h200, "%s/h200x2-vm.hwloc.xml", dir);
  snprintf(dgx2, sizeof dgx2, "%s/hwloc-tests-nvidiaDGX2.xml", dir);
  snprintf(bad, sizeof bad, "--hwloc-xml=%s/missing.xml", dir);
  const char *a1[] = {"topo", "--hwloc-xml", h200};
  const char *a2[] = {"topo", "--json", "--pcie", "--hwloc-xml", dgx2};
  const char *a3[] = {"topo", "--bogus"};
  const char *a4[] = {"topo", "--hwloc-xml"};
  const char *a5[] = {"topo", bad};
  const char *a6[] = {"topo", "--help"};
  CHECK(run_topo(3, a1) == 0, "topo --hwloc-xml h200");
  CHECK(run_topo(5, a2) == 0, "topo --json --pcie --hwloc-xml dgx2");
  CHECK(run_topo(2, a3) == 2, "unknown option: exit 2");
  CHECK(run_topo(2, a4) == 2, "--hwloc-xml without a file: exit 2");
  CHECK(run_topo(2, a5) == 2, "missing XML: exit 2");
  CHECK(run_topo(2, a6) == 0, "--help");
}

static void test_bind_live(void) {
  hwloc_topology_t topo = NULL;
  ddp_result r = topo_load(NULL, &topo);
  CHECK(r == DDP_OK, "live topology: %s", ddp_result_str(r));
  if (r != DDP_OK) return;
  topo_bind b;
  CHECK(topo_bind_apply(topo, NULL, 1, &b) == DDP_OK && !b.bound && b.near == -1 && !strncmp(b.what, "none:", 5),
        "no GPU: %s", b.what);
  hwloc_obj_t dev = hwloc_get_next_pcidev(topo, NULL); /* stands in for a GPU: any PCI device has a locality */
  if (dev) {
    CHECK(topo_bind_apply(topo, dev, 0, &b) == DDP_OK && !b.bound && !strncmp(b.what, "none (--bind none)", 18) &&
              !strcmp(b.before, b.after),
          "--bind none: %s", b.what);
    r = topo_bind_apply(topo, dev, -1, &b);
    CHECK(r == DDP_OK, "--bind auto: %s", ddp_result_str(r));
    if (b.flat)
      CHECK(!b.bound && b.near == 1 && !strncmp(b.what, "flat (", 6), "flat machine: %s", b.what);
    else
      CHECK(b.bound && b.near == 1 && !strncmp(b.what, "bound to GPU-local cpus", 23), "bound: %s", b.what);
    printf("live binding near %04x:%02x:%02x.%x: %s\n", dev->attr->pcidev.domain, dev->attr->pcidev.bus,
           dev->attr->pcidev.dev, dev->attr->pcidev.func, b.what);
  } else {
    printf("the live topology has no PCI device: binding near one not tested\n");
  }
  hwloc_topology_destroy(topo);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "tests/data/fixtures";
  test_h200(dir);
  test_dgx2(dir);
  test_24em64t(dir);
  test_power8(dir);
  test_gb10(dir);
  test_nccl_names();
  test_load_errors(dir);
  test_cli(dir);
  test_bind_live();
  return check_summary();
}
