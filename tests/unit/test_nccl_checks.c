/* test_nccl_checks: NCCL's account held against the topology (src/verdict/nccl_checks.h). The "topology" section
 * is what topo_cluster_report writes for saved machines (argv[1] = fixtures): two DGX-2 hosts (16 V100 in PLX
 * trees, NV6 to the NVSwitches; hwloc's fixture lists no NIC, so the test puts the eight mlx5 HCAs of a real
 * DGX-2 where they sit, one on each PLX switch with two GPUs), two 3-GPU Xeons whose one HCA is PHB from GPU0 and
 * SYS from the others, and the 2 x H200 VM with a fake NVML (NV18). The "nccl" sections are made by hand in
 * nccl_account_json's shape. What must hold:
 *   - P2P between NVLinked GPUs and GDRDMA through the PIX HCA: passed findings only;
 *   - NET without GDRDMA on a PIX HCA warns (and names nvidia-peermem when NCCL said GDR disabled);
 *   - NET/Socket on a host with an HCA fails, once per host;
 *   - SHM between NVLinked GPUs fails, once per pair, naming NCCL_P2P_DISABLE when it is set;
 *   - an HCA across the NUMA boundary while a PIX one exists warns; plain NET on a PHB HCA is information;
 *   - NVLS asked and not used warns, forbidden and used fails;
 *   - not reported (no section, reported false, an account null): one information finding, nothing else. */
#include "topo_testlib.h"

#include <math.h>

#include "nccl_checks.h"

static const char *fixtures;

/* ---- topologies ---- */

/* The DGX-2 fixture with its eight HCAs: mlx5_k on the PLX switch of GPUs 2k and 2k+1 (PIX), the others at the
 * class their GPUs have to GPU 2k (PXB under the same host bridge, NODE on the socket, SYS across). */
static topo_node *dgx2_node(void) {
  topo_node *n = fixture_node(fixtures, "hwloc-tests-nvidiaDGX2.xml");
  if (!n) return NULL;
  CHECK(n->ngpu == 16 && n->nnic == 0, "DGX-2 fixture: %d GPUs %d NICs (expected 16, 0)", n->ngpu, n->nnic);
  n->nnic = 8;
  for (int k = 0; k < 8; k++) {
    snprintf(n->nic[k].name, sizeof n->nic[k].name, "mlx5_%d", k);
    snprintf(n->nic[k].also, sizeof n->nic[k].also, "ib%d", k);
    snprintf(n->nic[k].busid, sizeof n->nic[k].busid, "0000:%02x:00.0", 0x35 + 0x10 * k);
    snprintf(n->nic[k].kind, sizeof n->nic[k].kind, "OpenFabrics");
    for (int g = 0; g < n->ngpu; g++) n->nic_pcie[g][k] = g / 2 == k ? TOPO_PIX : n->pcie[g][2 * k];
  }
  return n;
}

static topo_rank_rec recs[32];

/* nhosts hosts of per ranks each, rank r on GPU r % per; env: every rank's NCCL_* environment. */
static cJSON *topology_of(const topo_node *node, int nhosts, int per, const char *env) {
  int nranks = nhosts * per;
  memset(recs, 0, sizeof recs);
  topo_node *nodes = calloc((size_t)nhosts, sizeof *nodes);
  for (int r = 0; r < nranks; r++) {
    topo_rank_rec *x = &recs[r];
    x->rank = r, x->local_rank = r % per, x->local_size = per;
    x->host_hash = (0xd0ull + (unsigned)(r / per)) << 32;
    snprintf(x->host, sizeof x->host, "node%02d", r / per);
    x->leader = r % per == 0;
    x->gpu_index = r % per;
    snprintf(x->gpu_busid, sizeof x->gpu_busid, "%s", node->gpu[r % per].busid);
    x->visible_gpus = node->ngpu;
    x->bind.mode = -1, x->bind.near = -1;
    snprintf(x->versions.nccl_runtime, sizeof x->versions.nccl_runtime, "2.28.3");
    snprintf(x->nccl_env, sizeof x->nccl_env, "%s", env);
  }
  for (int h = 0; h < nhosts; h++) nodes[h] = *node;
  cJSON *json = NULL;
  int cons = -1, und = -1;
  ddp_result rc = topo_cluster_report(recs, nranks, nodes, nhosts, 0, NULL, &json, &cons, &und);
  CHECK(rc == DDP_OK && json, "topo_cluster_report: %s", ddp_result_str(rc));
  free(nodes);
  return json;
}

/* ---- NCCL's account, by hand ---- */

static cJSON *section(void) {
  cJSON *s = cJSON_CreateObject();
  cJSON_AddTrueToObject(s, "reported");
  cJSON_AddNullToObject(s, "why");
  cJSON_AddStringToObject(s, "source", "ddpbench");
  cJSON_AddArrayToObject(s, "ranks");
  return s;
}

/* An account of one communicator; returns the communicator (peers are added to it). */
static cJSON *rank_account(cJSON *sec, int rank, const char *host, const char *label, int crank, int nranks,
                           int nvls, int nvls_supported, cJSON **acc_out) {
  cJSON *e = cJSON_CreateObject(), *acc = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "rank", rank);
  cJSON_AddStringToObject(e, "host", host);
  cJSON_AddItemToObject(e, "account", acc);
  cJSON_AddItemToArray(cJSON_GetObjectItem(sec, "ranks"), e);
  cJSON_AddStringToObject(acc, "version", "2.28.3+cuda13.0");
  cJSON_AddStringToObject(acc, "net", "IB");
  cJSON_AddArrayToObject(acc, "net_devices");
  cJSON *comm = cJSON_CreateObject();
  cJSON_AddItemToArray(cJSON_AddArrayToObject(acc, "communicators"), comm);
  cJSON_AddStringToObject(comm, "label", label);
  cJSON_AddNumberToObject(comm, "rank", crank);
  cJSON_AddNumberToObject(comm, "nranks", nranks);
  cJSON_AddItemToObject(comm, "nvls", nvls < 0 ? cJSON_CreateNull() : cJSON_CreateNumber(nvls));
  cJSON_AddItemToObject(comm, "nvls_supported", nvls_supported < 0 ? cJSON_CreateNull() : cJSON_CreateNumber(nvls_supported));
  cJSON_AddArrayToObject(comm, "peers");
  if (acc_out) *acc_out = acc;
  return comm;
}

static void netdev(cJSON *acc, int index, const char *name, int gdr) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "index", index);
  cJSON_AddStringToObject(d, "name", name);
  cJSON_AddNumberToObject(d, "port", 1);
  cJSON_AddStringToObject(d, "link", "IB");
  cJSON_AddItemToObject(d, "gdr", gdr < 0 ? cJSON_CreateNull() : cJSON_CreateNumber(gdr));
  cJSON_AddItemToArray(cJSON_GetObjectItem(acc, "net_devices"), d);
}

/* A (peer, transport) entry from NCCL's words: "P2P/CUMEM/read", "NET/IB/3/GDRDMA", "NET/Socket/0". */
static void peer(cJSON *comm, int p, const char *via, const char *dev_name) {
  cJSON *o = cJSON_CreateObject();
  char words[64], *w[4] = {0};
  snprintf(words, sizeof words, "%s", via);
  int n = 0;
  for (char *save = NULL, *t = strtok_r(words, "/", &save); t && n < 4; t = strtok_r(NULL, "/", &save)) w[n++] = t;
  int net = w[0] && !strcmp(w[0], "NET");
  cJSON_AddNumberToObject(o, "peer", p);
  cJSON_AddStringToObject(o, "via", via);
  cJSON_AddStringToObject(o, "transport", w[0] ? w[0] : "");
  cJSON_AddItemToObject(o, "net", net && w[1] ? cJSON_CreateString(w[1]) : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "net_dev", net && w[2] ? cJSON_CreateNumber(atoi(w[2])) : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "net_dev_name", net && dev_name ? cJSON_CreateString(dev_name) : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "gdrdma", net ? cJSON_CreateNumber(w[3] && !strcmp(w[3], "GDRDMA")) : cJSON_CreateNull());
  cJSON_AddNumberToObject(o, "sends", 2);
  cJSON_AddNumberToObject(o, "recvs", 2);
  cJSON_AddItemToArray(cJSON_GetObjectItem(comm, "peers"), o);
}

/* ---- findings ---- */

/* Findings of severity sev (passed or not as asked; passed < 0: either) whose text holds every piece given. */
static int count(const finding_list *l, finding_severity sev, int passed, const char *a, const char *b) {
  int n = 0;
  for (int i = 0; i < l->n; i++) {
    const finding *f = &l->v[i];
    n += f->severity == sev && (passed < 0 || f->passed == passed) && !strcmp(f->check, "nccl") &&
         (!a || strstr(f->text, a)) && (!b || strstr(f->text, b));
  }
  return n;
}

static void dump(const char *what, const finding_list *l) {
  fprintf(stderr, "-- %s: %d findings\n", what, l->n);
  for (int i = 0; i < l->n; i++)
    fprintf(stderr, "  %s%s %s %s [%s rank %d]: %s\n", finding_severity_name(l->v[i].severity),
            l->v[i].passed ? " (passed)" : "", finding_scope_name(l->v[i].scope), l->v[i].subject, l->v[i].host,
            l->v[i].rank, l->v[i].text);
}

/* Two DGX-2 hosts, 32 ranks of communicator "training": a ring inside each host (r-1, r+1: P2P over NVLink
 * where the two GPUs share a baseboard) and NET to the same GPU of the other host through via_net (its HCA:
 * mlx5_<nic>, nic < 0: the one on the GPU's own switch). */
static cJSON *dgx2_accounts(const char *intra, const char *via_net, int nic, int gdr_said) {
  cJSON *sec = section();
  for (int r = 0; r < 32; r++) {
    int local = r % 16, base = r - local;
    char host[16], dev[16];
    snprintf(host, sizeof host, "node%02d", r / 16);
    cJSON *acc;
    cJSON *comm = rank_account(sec, r, host, "training", r, 32, 0, 0, &acc);
    snprintf(dev, sizeof dev, "mlx5_%d", nic < 0 ? local / 2 : nic);
    netdev(acc, 0, dev, gdr_said);
    peer(comm, base + (local + 15) % 16, intra, NULL);
    peer(comm, base + (local + 1) % 16, intra, NULL);
    peer(comm, (r + 16) % 32, via_net, dev);
  }
  return sec;
}

static void run_checks(const cJSON *topo, const cJSON *sec, finding_list *l) {
  findings_init(l);
  CHECK(nccl_checks(topo, sec, l) == DDP_OK, "nccl_checks failed");
}

static void test_dgx2_good(const cJSON *topo) {
  cJSON *sec = dgx2_accounts("P2P/CUMEM/read", "NET/IB/0/GDRDMA", -1, 1);
  finding_list l;
  run_checks(topo, sec, &l);
  CHECK(findings_count(&l, SEV_WARN) == 0, "P2P + GDRDMA: %d warnings or failures", findings_count(&l, SEV_WARN));
  /* each host: the ring's 14 NVLinked neighbours (GPU7-GPU8 and GPU15-GPU0 cross baseboards: SYS, not judged) */
  CHECK(count(&l, SEV_INFO, 1, "talk P2P/CUMEM/read over NVLink", NULL) == 28, "passed pairs: %d (want 28)",
        count(&l, SEV_INFO, 1, "talk P2P/CUMEM/read over NVLink", NULL));
  CHECK(count(&l, SEV_INFO, 1, "uses GPUDirect RDMA through mlx5_", "(PIX)") == 32, "GDR passes: %d",
        count(&l, SEV_INFO, 1, "uses GPUDirect RDMA", NULL));
  CHECK(count(&l, SEV_INFO, 1, "its nearest OpenFabrics NIC", NULL) == 32, "nearest-NIC passes: %d",
        count(&l, SEV_INFO, 1, "its nearest", NULL));
  CHECK(count(&l, SEV_INFO, 0, "not reported", NULL) == 0, "nothing unreported");
  int hosted = 1;
  for (int i = 0; i < l.n; i++) hosted &= l.v[i].scope == SCOPE_JOB || !strncmp(l.v[i].host, "node0", 5);
  CHECK(hosted, "every pair and NIC finding names its host");
  if (check_failed_) dump("dgx2 good", &l);
  findings_free(&l);
  cJSON_Delete(sec);
}

static void test_dgx2_no_gdr(const cJSON *topo) {
  cJSON *sec = dgx2_accounts("P2P/CUMEM/read", "NET/IB/0", -1, 0);
  finding_list l;
  run_checks(topo, sec, &l);
  int w = count(&l, SEV_WARN, 0, "at PIX (its own PCIe switch)", "expected GPUDirect RDMA there");
  CHECK(w == 32, "NET without GDRDMA on the PIX HCA: %d warnings (want 32)", w);
  CHECK(count(&l, SEV_WARN, 0, "disabled for mlx5_0", "nvidia-peermem") == 4, "GDR disabled named: %d",
        count(&l, SEV_WARN, 0, "nvidia-peermem", NULL));
  CHECK(findings_count(&l, SEV_FAIL) == 0, "no failure");
  const finding *f = NULL;
  for (int i = 0; i < l.n && !f; i++)
    if (l.v[i].severity == SEV_WARN && l.v[i].rank == 17) f = &l.v[i];
  CHECK(f && f->scope == SCOPE_GPU && !strcmp(f->host, "node01") && strstr(f->subject, "rank 17 (node01) GPU1 mlx5_0"),
        "rank 17's warning: %s %s", f ? f->host : "(none)", f ? f->subject : "");
  findings_free(&l);
  cJSON_Delete(sec);
}

static void test_dgx2_socket(const cJSON *topo) {
  cJSON *sec = dgx2_accounts("P2P/CUMEM/read", "NET/Socket/0", -1, -1);
  finding_list l;
  run_checks(topo, sec, &l);
  int f = count(&l, SEV_FAIL, 0, "NCCL fell back to sockets on node0", "16 ranks");
  CHECK(f == 2 && findings_count(&l, SEV_FAIL) == 2, "sockets with HCAs: %d failures (want one per host)", f);
  CHECK(count(&l, SEV_FAIL, 0, "(mlx5_0)", "expected NET/IB") == 2, "the HCA named");
  findings_free(&l);
  cJSON_Delete(sec);
}

static void test_dgx2_far_nic(const cJSON *topo) {
  /* every rank sends through mlx5_7, on the second socket's last switch */
  cJSON *sec = dgx2_accounts("P2P/CUMEM/read", "NET/IB/0/GDRDMA", 7, 1);
  finding_list l;
  run_checks(topo, sec, &l);
  /* GPUs 0-7 (socket 0) on each host: SYS to mlx5_7 while their own switch's HCA is PIX */
  int w = count(&l, SEV_WARN, 0, "across the NUMA boundary (SYS)", "is PIX: expected its nearest NIC");
  CHECK(w == 16, "far NIC: %d warnings (want 16: GPUs 0-7 of both hosts)", w);
  CHECK(count(&l, SEV_WARN, 0, "rank 0's GPU0 sends through mlx5_7", "although mlx5_0 is PIX") == 1, "rank 0's words");
  /* GPUs 8-13 reach mlx5_7 at NODE or PXB (the same socket): no warning */
  CHECK(count(&l, SEV_INFO, 1, "rank 8's GPU8 sends through mlx5_7 (NODE)", NULL) == 1, "rank 8 passes");
  CHECK(count(&l, SEV_INFO, 1, "rank 12's GPU12 sends through mlx5_7 (PXB)", NULL) == 1, "rank 12 passes");
  findings_free(&l);
  cJSON_Delete(sec);
}

static void test_shm_pair(void) {
  topo_node *n = dgx2_node();
  cJSON *topo = topology_of(n, 1, 16, "NCCL_P2P_DISABLE=1\n");
  cJSON *sec = section();
  for (int r = 0; r < 16; r++) {
    cJSON *comm = rank_account(sec, r, "node00", "training", r, 16, 0, 0, NULL);
    peer(comm, (r + 15) % 16, "SHM/direct/direct", NULL);
    peer(comm, (r + 1) % 16, "SHM/direct/direct", NULL);
  }
  finding_list l;
  run_checks(topo, sec, &l);
  int f = count(&l, SEV_FAIL, 0, "GPU0-GPU1 joined by NV6 talk SHM/direct/direct", "expected P2P over NVLink");
  CHECK(f == 1, "NVLinked pair over SHM: %d failures for GPU0-GPU1 (want one, seen from both ranks)", f);
  CHECK(count(&l, SEV_FAIL, 0, "NCCL_P2P_DISABLE=1 is set", "IOMMU/ACS") == 14, "causes named: %d",
        count(&l, SEV_FAIL, 0, "NCCL_P2P_DISABLE=1", NULL));
  const finding *x = NULL;
  for (int i = 0; i < l.n && !x; i++)
    if (l.v[i].severity == SEV_FAIL) x = &l.v[i];
  CHECK(x && x->scope == SCOPE_PAIR && !strcmp(x->host, "node00") && x->rank >= 0, "scope pair with host and rank");
  if (check_failed_) dump("shm", &l);
  findings_free(&l);
  cJSON_Delete(sec);
  cJSON_Delete(topo);
  free(n);
}

/* The 3-GPU Xeon: mlx4_0 is PHB from GPU0 and SYS from GPUs 1 and 2 (the only HCA: nothing nearer). */
static void test_phb_nic(void) {
  topo_node *n = fixture_node(fixtures, "hwloc-tests-24em64t-2n6c2t-pci.xml");
  if (!n) return;
  cJSON *topo = topology_of(n, 2, 3, "");
  cJSON *sec = section();
  for (int r = 0; r < 6; r++) {
    cJSON *acc;
    cJSON *comm = rank_account(sec, r, r < 3 ? "node00" : "node01", "training", r, 6, -1, -1, &acc);
    netdev(acc, 0, "mlx4_0", -1);
    peer(comm, (r + 3) % 6, "NET/IB/0", "mlx4_0:1");
  }
  finding_list l;
  run_checks(topo, sec, &l);
  CHECK(findings_count(&l, SEV_WARN) == 0, "plain NET beyond PXB, the only HCA far: %d warnings",
        findings_count(&l, SEV_WARN));
  CHECK(count(&l, SEV_INFO, 0, "reaches mlx4_0 only at PHB", "is expected there") == 2, "PHB: information");
  CHECK(count(&l, SEV_INFO, 0, "reaches mlx4_0 only at SYS", NULL) == 4, "SYS: information");
  CHECK(count(&l, SEV_INFO, 0, "NCCL's account not reported: NVLS not reported for 6 of 6", NULL) == 1,
        "NVLS null: not reported");
  if (check_failed_) dump("phb", &l);
  findings_free(&l);
  cJSON_Delete(sec);
  cJSON_Delete(topo);
  free(n);
}

static void test_nvls(void) {
  fake_h200_pair();
  topo_node *n = h200_node(fixtures);
  if (!n) return;
  const char *env[] = {"NCCL_NVLS_ENABLE=1\n", "NCCL_NVLS_ENABLE=0\n", ""};
  const int nvls[] = {0, 1, 1};
  for (int k = 0; k < 3; k++) {
    cJSON *topo = topology_of(n, 1, 2, env[k]);
    cJSON *sec = section();
    for (int r = 0; r < 2; r++) {
      cJSON *comm = rank_account(sec, r, "node00", "training", r, 2, nvls[k], 1, NULL);
      peer(comm, 1 - r, "P2P/CUMEM/read", NULL);
      /* a split communicator of one rank: its peer numbering is not the world's, so its pair is not judged */
      cJSON *acc = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(sec, "ranks"), r), "account");
      cJSON *split = cJSON_CreateObject();
      cJSON_AddStringToObject(split, "label", "accept pair");
      cJSON_AddNumberToObject(split, "rank", 0);
      cJSON_AddNumberToObject(split, "nranks", 1);
      cJSON_AddNumberToObject(split, "nvls", nvls[k]);
      cJSON_AddNumberToObject(split, "nvls_supported", 1);
      cJSON *pp = cJSON_AddArrayToObject(split, "peers");
      (void)pp;
      peer(split, 0, "SHM/direct/direct", NULL);
      cJSON_AddItemToArray(cJSON_GetObjectItem(acc, "communicators"), split);
    }
    finding_list l;
    run_checks(topo, sec, &l);
    CHECK(count(&l, SEV_INFO, 1, "GPU0-GPU1 joined by NV18 talk P2P/CUMEM/read", NULL) == 1, "H200 pair passes");
    CHECK(count(&l, SEV_FAIL, 0, "SHM", NULL) == 0, "the split communicator's peer is not judged");
    if (k == 0)
      CHECK(count(&l, SEV_WARN, 0, "NCCL_NVLS_ENABLE=1 asked for NVLS", "2 communicators of 4 run without it") == 1,
            "NVLS asked, supported, unused: warns (not for the one-rank split communicators)");
    if (k == 1)
      CHECK(count(&l, SEV_FAIL, 0, "NCCL_NVLS_ENABLE=0 turned NVLS off, but 4 communicators", NULL) == 1,
            "NVLS forbidden and used: fails");
    if (k == 2)
      CHECK(count(&l, SEV_INFO, 0, "NVLS used by 4 of 4 communicators (NCCL_NVLS_ENABLE unset", NULL) == 1 &&
                findings_count(&l, SEV_WARN) == 0,
            "NVLS by default: information");
    if (check_failed_) dump("nvls", &l);
    findings_free(&l);
    cJSON_Delete(sec);
    cJSON_Delete(topo);
  }
  free(n);
}

/* Two H200 VMs whose only NIC is eth0: sockets are all there is, no failure. */
static void test_socket_only(void) {
  fake_h200_pair();
  topo_node *n = h200_node(fixtures);
  if (!n) return;
  cJSON *topo = topology_of(n, 2, 2, "");
  cJSON *sec = section();
  for (int r = 0; r < 4; r++) {
    cJSON *comm = rank_account(sec, r, r < 2 ? "node00" : "node01", "training", r, 4, 0, 0, NULL);
    peer(comm, r ^ 1, "P2P/CUMEM/read", NULL);
    peer(comm, (r + 2) % 4, "NET/Socket/0", "eth0");
  }
  finding_list l;
  run_checks(topo, sec, &l);
  CHECK(findings_count(&l, SEV_WARN) == 0, "sockets without an HCA: %d warnings", findings_count(&l, SEV_WARN));
  CHECK(count(&l, SEV_INFO, 1, "NCCL uses sockets on 4 ranks whose hosts have no IB/RoCE HCA", NULL) == 1,
        "sockets without an HCA: a passed finding");
  CHECK(count(&l, SEV_INFO, 1, "GPU0-GPU1 joined by NV18 talk P2P", NULL) == 2, "one pair per host");
  if (check_failed_) dump("socket only", &l);
  findings_free(&l);
  cJSON_Delete(sec);
  cJSON_Delete(topo);
  free(n);
}

static void test_not_reported(const cJSON *topo) {
  finding_list l;
  run_checks(topo, NULL, &l);
  CHECK(l.n == 1 && l.v[0].severity == SEV_INFO && !l.v[0].passed &&
            strstr(l.v[0].text, "NCCL's account not reported: the result has no \"nccl\" section"),
        "no section: one information finding");
  findings_free(&l);

  cJSON *sec = cJSON_CreateObject();
  cJSON_AddFalseToObject(sec, "reported");
  cJSON_AddStringToObject(sec, "why", "NCCL_DEBUG_FILE is the user's and could not be read");
  run_checks(topo, sec, &l);
  CHECK(l.n == 1 && l.v[0].severity == SEV_INFO && !l.v[0].passed &&
            !strcmp(l.v[0].text, "NCCL's account not reported: NCCL_DEBUG_FILE is the user's and could not be read"),
        "reported false: one information finding with the why (%s)", l.n ? l.v[0].text : "none");
  findings_free(&l);
  cJSON_Delete(sec);

  /* one rank's account null: the rest is checked, the hole said once */
  sec = dgx2_accounts("P2P/CUMEM/read", "NET/IB/0/GDRDMA", -1, 1);
  cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(sec, "ranks"), 5);
  cJSON_ReplaceItemInObject(e, "account", cJSON_CreateNull());
  cJSON_AddStringToObject(e, "why", "its log file was empty");
  run_checks(topo, sec, &l);
  CHECK(count(&l, SEV_INFO, 0, "NCCL's account not reported: 1 of 32 ranks have no account (rank 5: its log file was "
                               "empty)", NULL) == 1 && findings_count(&l, SEV_WARN) == 0,
        "an account null");
  if (check_failed_) dump("null account", &l);
  findings_free(&l);
  cJSON_Delete(sec);

  /* no topology: not checked, one finding */
  sec = dgx2_accounts("P2P/CUMEM/read", "NET/IB/0/GDRDMA", -1, 1);
  run_checks(NULL, sec, &l);
  CHECK(l.n == 1 && l.v[0].severity == SEV_INFO && strstr(l.v[0].text, "the topology was not reported"),
        "no topology: one information finding");
  findings_free(&l);
  cJSON_Delete(sec);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_nccl_checks FIXTURES_DIR\n");
    return 2;
  }
  fixtures = argv[1];
  topo_node *dgx = dgx2_node();
  if (dgx) {
    cJSON *topo = topology_of(dgx, 2, 16, "");
    test_dgx2_good(topo);
    test_dgx2_no_gdr(topo);
    test_dgx2_socket(topo);
    test_dgx2_far_nic(topo);
    test_not_reported(topo);
    cJSON_Delete(topo);
    test_shm_pair();
  }
  free(dgx);
  test_phb_nic();
  test_nvls();
  test_socket_only();
  return check_summary();
}
