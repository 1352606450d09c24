/* test_nccl_log: the NCCL INFO log parser (src/comm/nccl_log.c) on the hand-made logs of data/nccl-logs/ (each
 * line's NCCL source is in that folder's README.md): what each must give, "not reported" where a log says
 * nothing, the attribution rules (spans, thread, none), the JSON read back to the same text, no host name or
 * address in any JSON, and no crash on truncated, garbled, random and huge text. Every other *.log in the
 * folder (real logs, h200-*.log) and every input of the fuzz corpus is parsed too, checking only that it does
 * not crash and that its JSON reads back. Usage: test_nccl_log LOGDIR [CORPUSDIR]. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "check.h"
#include "nccl_log.h"

static const char *logdir;
static nccl_account *acc, *acc2;

static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  *n = 0;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(len > 0 ? (size_t)len : 1);
  if (buf && len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len) len = 0;
  fclose(f);
  *n = len > 0 ? (size_t)len : 0;
  return buf;
}

/* Parses LOGDIR/name into acc (labels already in acc kept); returns the communicators found, -1 unreadable. */
static int parse_file(const char *name, const nccl_log_span *spans, int nspans) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", logdir, name);
  size_t n;
  char *text = slurp(path, &n);
  CHECK(text != NULL, "cannot read %s", path);
  if (!text) return -1;
  int k = nccl_log_parse(text, n, spans, nspans, acc);
  free(text);
  return k;
}

static nccl_acc_peer *peer(nccl_acc_comm *c, int rank, const char *via) {
  for (int i = 0; c && i < c->npeers; i++)
    if (c->peer[i].peer == rank && !strcmp(c->peer[i].via, via)) return &c->peer[i];
  return NULL;
}

/* No host name, no IPv4 or IPv6 address: a run of digit.digit.digit.digit, or "fe80:", or any name the logs use. */
static int has_secret(const char *s) {
  static const char *names[] = {"gpu-node",  "node-b7", "cluster.example", "dgx-x1", "h200-rack3", "old-box", "fe80",
                                "127.0.0.1", "ib0",     "bond0",           "ib1"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strstr(s, names[i])) return 1;
  for (const char *p = s; *p; p++) {
    int dots = 0;
    const char *q = p;
    while (*q >= '0' && *q <= '9') {
      while (*q >= '0' && *q <= '9') q++;
      if (*q != '.') break;
      dots++;
      q++;
    }
    if (dots >= 3) return 1;
  }
  return 0;
}

/* The account as JSON, read back, written again: the same text. Returns 1 when it holds. */
static int round_trip(const nccl_account *a, const char *what) {
  cJSON *j = nccl_account_json(a);
  CHECK(j != NULL, "%s: no JSON", what);
  if (!j) return 0;
  char *s1 = cJSON_PrintUnformatted(j);
  cJSON *back = cJSON_Parse(s1);
  CHECK(back != NULL, "%s: JSON does not parse", what);
  char why[256] = "";
  int rc = nccl_account_from_json(back, acc2, why, sizeof why);
  CHECK(rc == 0, "%s: from_json: %s", what, why);
  cJSON *j2 = nccl_account_json(acc2);
  char *s2 = j2 ? cJSON_PrintUnformatted(j2) : NULL;
  int same = s2 && !strcmp(s1, s2);
  CHECK(same, "%s: round trip differs:\n%s\n%s", what, s1, s2 ? s2 : "(null)");
  CHECK(!has_secret(s1), "%s: a host name or address in the JSON: %s", what, s1);
  free(s1);
  free(s2);
  cJSON_Delete(j);
  cJSON_Delete(j2);
  cJSON_Delete(back);
  return same;
}

static void test_ib(void) {
  memset(acc, 0, sizeof *acc);
  CHECK(parse_file("ib-2node-gdr.log", NULL, 0) == 1, "ib: one communicator");
  CHECK(!strcmp(acc->version, "2.28.3+cuda12.9"), "ib: version %s", acc->version);
  CHECK(!strcmp(acc->net, "IB"), "ib: net %s", acc->net);
  CHECK(!strcmp(acc->net_plugin, "internal"), "ib: plugin %s", acc->net_plugin);
  CHECK(acc->nnetdevs == 2, "ib: %d net devices", acc->nnetdevs);
  CHECK(!strcmp(acc->netdev[0].name, "mlx5_0") && acc->netdev[0].port == 1 && !strcmp(acc->netdev[0].link, "IB") &&
            acc->netdev[0].gdr == 1 && acc->netdev[0].index == 0 && !strcmp(acc->netdev[0].net, "IB"),
        "ib: netdev 0 %s:%d/%s gdr %d", acc->netdev[0].name, acc->netdev[0].port, acc->netdev[0].link,
        acc->netdev[0].gdr);
  CHECK(!strcmp(acc->netdev[1].name, "mlx5_1") && acc->netdev[1].gdr == 1, "ib: netdev 1 %s", acc->netdev[1].name);
  nccl_acc_comm *c = nccl_acc_find_comm(acc, 0x55d5c9a0b2c0ULL);
  CHECK(c != NULL, "ib: comm by pointer");
  if (!c) return;
  CHECK(c->rank == 0 && c->nranks == 4 && c->nnodes == 2 && c->local_ranks == 2 && c->local_rank == 0 &&
            c->cuda_dev == 0 && c->nvml_dev == 0 && c->mnnvl == 0,
        "ib: rank %d nranks %d nnodes %d local %d/%d", c->rank, c->nranks, c->nnodes, c->local_rank, c->local_ranks);
  CHECK(!strcmp(c->busid, "18000") && !strcmp(c->comm_id, "0x7d1f3a2b4c5e6f70"), "ib: busid %s commId %s", c->busid,
        c->comm_id);
  CHECK(!strcmp(c->init_func, "ncclCommInitRankConfig") && c->init_complete, "ib: init %s %d", c->init_func,
        c->init_complete);
  CHECK(c->coll_channels == 2 && c->collnet_channels == 2 && c->nvls_channels == 0 && c->p2p_channels == 2 &&
            c->p2p_per_peer == 2,
        "ib: channels %d %d %d %d %d", c->coll_channels, c->collnet_channels, c->nvls_channels, c->p2p_channels,
        c->p2p_per_peer);
  CHECK(c->ring_channels == 2 && !strcmp(c->ring0, "0 1 2 3"), "ib: rings %d '%s'", c->ring_channels, c->ring0);
  CHECK(!strcmp(c->trees, "[0] 1/2/-1->0->-1 [1] 1/-1/-1->0->2"), "ib: trees '%s'", c->trees);
  CHECK(c->ngraphs == 3 && c->graph[0].pattern == 4 && c->graph[0].nchannels == 2 && c->graph[0].bw_intra == 20 &&
            c->graph[0].bw_inter == 20 && !strcmp(c->graph[0].type, "NVL/PXB") && c->graph[1].pattern == 1 &&
            c->graph[1].bw_intra == 40 && c->graph[2].nchannels == 0,
        "ib: graphs %d", c->ngraphs);
  CHECK(c->npeers == 4, "ib: %d peers", c->npeers);
  nccl_acc_peer *p = peer(c, 1, "P2P/CUMEM/read");
  CHECK(p && p->sends == 2 && p->recvs == 0 && !strcmp(p->transport, "P2P") && p->net_dev == -1 && p->gdrdma == -1 &&
            !p->net[0],
        "ib: peer 1 P2P");
  p = peer(c, 3, "NET/IB/0/GDRDMA");
  CHECK(p && p->recvs == 2 && p->sends == 0 && !strcmp(p->transport, "NET") && !strcmp(p->net, "IB") &&
            p->net_dev == 0 && !strcmp(p->net_dev_name, "mlx5_0") && p->gdrdma == 1 && p->proxy_rank == -1,
        "ib: peer 3 NET");
  p = peer(c, 2, "NET/IB/0/GDRDMA");
  CHECK(p && p->sends == 1 && p->recvs == 1, "ib: peer 2 both ways");
  p = peer(c, 2, "NET/IB/1(1)/GDRDMA");
  CHECK(p && p->net_dev == 1 && p->proxy_rank == 1 && !strcmp(p->net_dev_name, "mlx5_1") && p->gdrdma == 1,
        "ib: peer 2 PXN");
  CHECK(c->pxn == 0 && c->gdr == 1, "ib: pxn %d gdr %d", c->pxn, c->gdr);
  CHECK(c->nvls == 0 && c->nvls_supported == 0 && c->collnet == -1, "ib: nvls %d/%d collnet %d", c->nvls,
        c->nvls_supported, c->collnet);
  CHECK(c->nalgos == 0, "ib: no algorithms from a log");
  CHECK(acc->truncated == 0 && acc->unattributed == 0 && acc->comms_dropped == 0, "ib: truncated %d unattributed %d",
        acc->truncated, acc->unattributed);
  CHECK(acc->lines == 45 && acc->nccl_lines == 45 && acc->unknown_lines > 0, "ib: lines %d nccl %d unknown %d",
        acc->lines, acc->nccl_lines, acc->unknown_lines);
  round_trip(acc, "ib");
}

static void test_socket(void) {
  memset(acc, 0, sizeof *acc);
  CHECK(parse_file("socket-2node.log", NULL, 0) == 1, "socket: one communicator");
  CHECK(!strcmp(acc->version, "2.21.5+cuda12.4"), "socket: bare version line %s", acc->version);
  CHECK(!strcmp(acc->net, "Socket") && !strcmp(acc->net_plugin, "internal"), "socket: net %s plugin %s", acc->net,
        acc->net_plugin);
  CHECK(acc->nnetdevs == 2 && !strcmp(acc->netdev[0].name, "eth0") && !strcmp(acc->netdev[1].name, "eth1") &&
            acc->netdev[0].port == -1 && !acc->netdev[0].link[0] && acc->netdev[0].gdr == -1 &&
            !strcmp(acc->netdev[0].net, "Socket"),
        "socket: interfaces %d %s", acc->nnetdevs, acc->netdev[0].name);
  nccl_acc_comm *c = &acc->comms[0];
  CHECK(c->rank == 1 && c->nranks == 2 && c->nnodes == 2 && c->local_ranks == 1, "socket: ranks");
  CHECK(c->npeers == 1, "socket: %d peers", c->npeers);
  nccl_acc_peer *p = peer(c, 0, "NET/Socket/0");
  CHECK(p && p->sends == 2 && p->recvs == 2 && !strcmp(p->net, "Socket") && p->net_dev == 0 &&
            !strcmp(p->net_dev_name, "eth0") && p->gdrdma == 0,
        "socket: peer 0");
  CHECK(c->pxn == -1 && c->gdr == -1, "socket: 2.21 says nothing of PXN/GDR");
  CHECK(c->ring_channels == 2 && !c->ring0[0], "socket: rings from Ring lines %d, no ring0", c->ring_channels);
  CHECK(c->ngraphs == 2 && c->graph[0].bw_inter == 1.2 && !strcmp(c->graph[0].type, "LOC/SYS"), "socket: graphs");
  CHECK(c->nvls == 0 && c->nvls_supported == -1, "socket: nvls %d supported %d", c->nvls, c->nvls_supported);
  round_trip(acc, "socket");
}

static void test_split(void) {
  memset(acc, 0, sizeof *acc);
  acc->ncomms = 1; /* a label set before: kept */
  acc->comms[0].comm = 0x61a0000a1200ULL;
  strcpy(acc->comms[0].label, "training");
  CHECK(parse_file("p2p-shm-split-4gpu.log", NULL, 0) == 2, "split: two communicators");
  nccl_acc_comm *a = nccl_acc_find_comm(acc, 0x61a0000a1200ULL), *b = nccl_acc_find_comm(acc, 0x61a0000b3400ULL);
  CHECK(a && b, "split: both found");
  if (!a || !b) return;
  CHECK(!strcmp(a->label, "training") && !b->label[0], "split: labels '%s' '%s'", a->label, b->label);
  CHECK(a->rank == 2 && a->nranks == 4 && a->nnodes == 1 && a->local_ranks == 4 && a->init_complete, "split: parent");
  CHECK(b->rank == 0 && b->nranks == 2 && !strcmp(b->init_func, "ncclCommSplit") && b->init_complete &&
            !b->comm_id[0] && !strcmp(b->busid, "41000"),
        "split: child %d %d %s", b->rank, b->nranks, b->init_func);
  CHECK(a->npeers == 3 && b->npeers == 1, "split: peers %d %d", a->npeers, b->npeers);
  nccl_acc_peer *p = peer(a, 3, "P2P/CUMEM/read");
  CHECK(p && p->sends == 4, "split: parent -> 3 P2P x4");
  p = peer(a, 1, "P2P/CUMEM/read");
  CHECK(p && p->sends == 1, "split: parent -> 1 P2P");
  p = peer(a, 0, "SHM/direct/direct");
  CHECK(p && p->sends == 1 && !strcmp(p->transport, "SHM") && p->gdrdma == -1, "split: parent -> 0 SHM");
  p = peer(b, 1, "P2P/CUMEM/read");
  CHECK(p && p->sends == 2, "split: child -> 1 P2P x2");
  CHECK(a->ring_channels == 4 && b->ring_channels == 2, "split: rings %d %d", a->ring_channels, b->ring_channels);
  CHECK(a->ngraphs == 2 && b->ngraphs == 1, "split: graphs %d %d", a->ngraphs, b->ngraphs);
  CHECK(a->coll_channels == 4 && b->coll_channels == 2 && a->p2p_per_peer == 2, "split: channels");
  CHECK(a->nvls_supported == 0 && b->nvls_supported == 0 && a->pxn == 0 && a->gdr == 0, "split: nvls/pxn");
  CHECK(!strncmp(a->trees, "[0] 3/-1/-1->2->1", 17) && !strcmp(b->trees, "[0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1"),
        "split: trees");
  CHECK(acc->unattributed == 0 && !acc->truncated, "split: unattributed %d", acc->unattributed);
  CHECK(acc->nnetdevs == 1 && !strcmp(acc->netdev[0].name, "enp1s0"), "split: socket interface");
  round_trip(acc, "split");
}

static void test_timestamps(void) {
  memset(acc, 0, sizeof *acc);
  CHECK(parse_file("timestamps-2.28.9.log", NULL, 0) == 1, "timestamps: one communicator");
  CHECK(!strcmp(acc->version, "2.28.9+cuda13.0"), "timestamps: version %s", acc->version);
  CHECK(acc->nnetdevs == 4 && !strcmp(acc->netdev[3].name, "mlx5_5") && !strcmp(acc->netdev[3].link, "RoCE") &&
            acc->netdev[3].gdr == -1,
        "timestamps: net devices %d", acc->nnetdevs);
  nccl_acc_comm *c = &acc->comms[0];
  CHECK(c->rank == 0 && c->nranks == 2 && c->init_complete, "timestamps: comm");
  CHECK(c->nvls == 1 && c->nvls_supported == 1 && c->nvls_channels == 16, "timestamps: nvls %d %d %d", c->nvls,
        c->nvls_supported, c->nvls_channels);
  CHECK(c->coll_channels == 24 && c->p2p_channels == 32, "timestamps: channels");
  CHECK(c->ring_channels == 3 && !strcmp(c->ring0, "0 1"), "timestamps: ring %d '%s'", c->ring_channels, c->ring0);
  nccl_acc_peer *p = peer(c, 1, "P2P/CUMEM");
  CHECK(c->npeers == 1 && p && p->sends == 3, "timestamps: P2P/CUMEM x3");
  CHECK(c->ngraphs == 3 && c->graph[2].bw_intra == 290, "timestamps: graphs");
  CHECK(acc->warn_lines == 1 && acc->unattributed == 0, "timestamps: warn %d unattributed %d", acc->warn_lines,
        acc->unattributed);
  round_trip(acc, "timestamps");
}

static void test_old(void) {
  memset(acc, 0, sizeof *acc);
  CHECK(parse_file("old-2.18.1.log", NULL, 0) == 1, "2.18: one communicator");
  CHECK(!strcmp(acc->version, "2.18.1+cuda12.1") && !strcmp(acc->net_plugin, "internal"), "2.18: version %s plugin %s",
        acc->version, acc->net_plugin);
  nccl_acc_comm *c = nccl_acc_find_comm(acc, 0x3c5e7a0ULL);
  CHECK(c != NULL, "2.18: comm");
  if (!c) return;
  CHECK(c->rank == 0 && c->nranks == 2 && c->cuda_dev == 0 && c->nvml_dev == -1 && c->nnodes == -1 &&
            !c->init_func[0] && c->init_complete,
        "2.18: init line");
  CHECK(c->coll_channels == -1 && c->ring_channels == -1 && c->npeers == 0, "2.18: nothing before it is named");
  /* the lines before Init COMPLETE (2.18.1 has no START) were on the thread before any comm was named */
  CHECK(acc->unattributed > 0, "2.18: lines before the comm is named are unattributed (%d)", acc->unattributed);
  round_trip(acc, "2.18");
  /* a span around the whole init gives them to the communicator */
  memset(acc, 0, sizeof *acc);
  nccl_log_span all = {0, 1u << 20, 0x3c5e7a0ULL};
  parse_file("old-2.18.1.log", &all, 1);
  c = nccl_acc_find_comm(acc, 0x3c5e7a0ULL);
  nccl_acc_peer *p = c ? peer(c, 1, "P2P/IPC/read") : NULL;
  CHECK(acc->unattributed == 0 && p && p->sends == 2 && c->ring_channels == 2 && c->pxn == -1,
        "2.18 with a span: unattributed %d", acc->unattributed);
  CHECK(c && c->coll_channels == 2 && c->collnet_channels == -1 && c->nvls_channels == 0 && c->nvls == 0,
        "2.18: channels without collnet");
  CHECK(c && !strcmp(c->ring0, "0 1") && c->nvls_supported == 0 && c->ngraphs == 1, "2.18: ring '%s'",
        c ? c->ring0 : "");
  if (c) round_trip(acc, "2.18 span");
}

static void test_truncated(void) {
  memset(acc, 0, sizeof *acc);
  CHECK(parse_file("truncated.log", NULL, 0) == 1, "truncated: one communicator");
  nccl_acc_comm *c = &acc->comms[0];
  CHECK(acc->truncated == 1 && !c->init_complete, "truncated: flagged");
  CHECK(c->rank == 1 && c->nnodes == 2 && c->coll_channels == -1 && c->ring_channels == -1 && !c->trees[0] &&
            c->pxn == -1 && c->nvls == -1,
        "truncated: what it did not say is not reported");
  nccl_acc_peer *p = peer(c, 2, "P2P/CUMEM/read");
  CHECK(c->npeers == 2 && p && p->sends == 1 && peer(c, 2, "P2"), "truncated: peers %d (the cut one as 'P2')",
        c->npeers);
  cJSON *j = nccl_account_json(acc);
  cJSON *cj = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "communicators"), 0);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(cj, "channels"), "coll")) &&
            cJSON_IsNull(cJSON_GetObjectItem(cj, "trees")) && cJSON_IsNull(cJSON_GetObjectItem(cj, "pxn")) &&
            cJSON_IsNull(cJSON_GetObjectItem(cj, "algorithms")) && cJSON_IsNull(cJSON_GetObjectItem(cj, "label")) &&
            cJSON_IsTrue(cJSON_GetObjectItem(j, "truncated")) && cJSON_IsNull(cJSON_GetObjectItem(j, "net_plugin")),
        "truncated: nulls in JSON");
  cJSON_Delete(j);
  round_trip(acc, "truncated");
}

static void test_garbled(void) {
  memset(acc, 0, sizeof *acc);
  parse_file("garbled.log", NULL, 0);
  CHECK(acc->truncated == 1 && acc->lines > 400, "garbled: truncated %d lines %d", acc->truncated, acc->lines);
  CHECK(strlen(acc->version) < sizeof acc->version && acc->ncomms <= NCCL_ACC_MAX_COMMS, "garbled: bounded");
  round_trip(acc, "garbled");
  /* random bytes in buffers of exactly their size (ASan sees any read past len), then NCCL-like fragments */
  uint64_t s = 88172645463325252ULL;
  static const char *frag[] = {"x:1:2 [0] NCCL INFO ",
                               "Channel 0",
                               "/0 : ",
                               "[1] -> ",
                               " via NET/IB/",
                               "comm 0x",
                               " rank ",
                               "Init START",
                               "\n",
                               "\0",
                               "NET/IB : Using [",
                               "]mlx5_0:",
                               "Trees",
                               " coll channels",
                               "Pattern ",
                               ", crossNic ",
                               "GDRDMA",
                               "NCCL WARN ",
                               " [receive] ",
                               "Ring 00 : ",
                               " -> "};
  for (int round = 0; round < 3000; round++) {
    size_t n = (size_t)(round % 300) + 1;
    char *buf = malloc(n);
    for (size_t i = 0; i < n;) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      if (round % 2) {
        const char *f = frag[s % (sizeof frag / sizeof frag[0])];
        size_t k = f[0] ? strlen(f) : 1;
        for (size_t j = 0; j < k && i < n; j++) buf[i++] = f[j];
      } else {
        buf[i++] = (char)(s >> 24);
      }
    }
    nccl_log_span sp = {n / 3, n / 2, round % 3 ? 0 : 0x1234};
    nccl_log_parse(buf, n, &sp, 1, acc);
    free(buf);
  }
  CHECK(1, "random buffers parsed");
  CHECK(nccl_log_parse(NULL, 0, NULL, 0, acc) == 0 && acc->lines == 0 && !acc->truncated, "empty text");
}

/* Every prefix of a real-shaped log: no crash, and never more than the whole gives. */
static void test_prefixes(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/ib-2node-gdr.log", logdir);
  size_t n;
  char *text = slurp(path, &n);
  int bad = 0;
  for (size_t k = 0; text && k <= n; k++) {
    char *buf = malloc(k ? k : 1);
    memcpy(buf, text, k);
    nccl_log_parse(buf, k, NULL, 0, acc);
    if (acc->ncomms > 1 || (acc->ncomms == 1 && acc->comms[0].npeers > 4)) bad++;
    if (k > 0 && text[k - 1] != '\n' && !acc->truncated) bad++;
    free(buf);
  }
  CHECK(text && bad == 0, "prefixes: %d bad", bad);
  free(text);
}

/* Attribution: explicit comm > narrowest span > last comm named on the thread > unattributed. */
static void test_spans(void) {
  const char *lines[] = {
      "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xaaa0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x1 - "
      "Init START\n",
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n",
      "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xbbb0 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x2 - "
      "Init START\n",
      "h:1:1 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[1] via SHM/direct/direct\n",
      "h:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM\n",
      "h:1:1 [0] NCCL INFO Channel 01/0 : 1[0] -> 0[1] via SHM/direct/direct\n",
      "NCCL INFO Channel 02/0 : 1[0] -> 0[1] via SHM/direct/direct\n",
      "h:1:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0\n",
      "h:1:9 [0] NCCL INFO Channel 03/0 : 0[0] -> 1[1] via P2P/CUMEM\n",
  };
  char text[2048] = "";
  size_t off[10];
  for (int i = 0; i < 9; i++) {
    off[i] = strlen(text);
    strcat(text, lines[i]);
  }
  off[9] = strlen(text);
  nccl_log_span spans[] = {
      {off[0], off[5], 0},      /* lines 0-4: the comm whose Init START is inside (0xaaa0) */
      {off[2], off[4], 0xbbb0}, /* lines 2-3, narrower */
      {off[7], off[8], 0xccc0}, /* line 7: a comm the log never names */
  };
  memset(acc, 0, sizeof *acc);
  int k = nccl_log_parse(text, off[9], spans, 3, acc);
  nccl_acc_comm *a = nccl_acc_find_comm(acc, 0xaaa0), *b = nccl_acc_find_comm(acc, 0xbbb0),
                *c = nccl_acc_find_comm(acc, 0xccc0);
  CHECK(k == 3 && a && b && c, "spans: three communicators (%d)", k);
  if (!a || !b || !c) return;
  nccl_acc_peer *p = peer(a, 1, "P2P/CUMEM");
  CHECK(a->npeers == 1 && p && p->sends == 2, "spans: lines 1 and 4 to the span's comm (0xaaa0), not the thread's");
  p = peer(b, 0, "SHM/direct/direct");
  CHECK(b->npeers == 1 && p && p->sends == 2, "spans: line 3 by the narrower span, line 5 by the thread (0xbbb0)");
  p = peer(c, 1, "NET/IB/0");
  CHECK(c->npeers == 1 && p && p->sends == 1 && p->gdrdma == 0, "spans: line 7 to the caller's comm 0xccc0");
  CHECK(acc->unattributed == 2, "spans: no thread (line 6) and an unknown thread (line 8): %d", acc->unattributed);
  CHECK(a->lines == 3 && b->lines == 3 && c->lines == 1, "spans: lines %d %d %d", a->lines, b->lines, c->lines);
  round_trip(acc, "spans");
}

static void test_json_reader(void) {
  char why[256];
  cJSON *j = cJSON_Parse("{\"version\": 3}");
  CHECK(nccl_account_from_json(j, acc2, why, sizeof why) == -1 && strstr(why, "version"), "reader: wrong type: %s",
        why);
  cJSON_Delete(j);
  j = cJSON_Parse("[1]");
  CHECK(nccl_account_from_json(j, acc2, why, sizeof why) == -1 && why[0], "reader: not an object");
  cJSON_Delete(j);
  j = cJSON_Parse("{\"communicators\": [{\"rank\": 1.5}]}");
  CHECK(nccl_account_from_json(j, acc2, why, sizeof why) == -1 && strstr(why, "rank"), "reader: not an integer: %s",
        why);
  cJSON_Delete(j);
  j = cJSON_Parse("{\"future\": 1, \"communicators\": [{\"rank\": 3, \"peers\": [{\"peer\": null}]}]}");
  CHECK(nccl_account_from_json(j, acc2, why, sizeof why) == 0 && acc2->ncomms == 1 && acc2->comms[0].rank == 3 &&
            acc2->comms[0].nranks == -1 && acc2->comms[0].peer[0].peer == -1 && acc2->comms[0].peer[0].net_dev == -1 &&
            !acc2->version[0],
        "reader: unknown keys ignored, missing ones not reported");
  cJSON_Delete(j);
  /* algorithms (the profiler's) survive the round trip too */
  memset(acc, 0, sizeof *acc);
  acc->ncomms = 1;
  nccl_acc_comm *c = &acc->comms[0];
  memset(c, 0, sizeof *c);
  c->rank = c->nranks = c->nnodes = c->local_ranks = c->local_rank = c->cuda_dev = c->nvml_dev = c->mnnvl = -1;
  c->coll_channels = c->nvls_channels = c->collnet_channels = c->p2p_channels = c->p2p_per_peer = c->ring_channels = -1;
  c->nvls = c->nvls_supported = c->collnet = c->pxn = c->gdr = -1;
  c->nalgos = 1;
  c->algo[0] = (nccl_acc_algo){"AllReduce", 1073741824.0 + 0.1, "RING", "SIMPLE", 24, 7};
  round_trip(acc, "algorithms");
  CHECK(acc2->comms[0].nalgos == 1 && acc2->comms[0].algo[0].bytes == 1073741824.0 + 0.1 &&
            acc2->comms[0].algo[0].calls == 7,
        "algorithms read back");
}

/* A big log: linear time (a 40 MB log of repeated lines, and one 16 MB line). */
static void test_huge(void) {
  const char *line = "gpu-node-q:5:5 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n";
  size_t k = strlen(line), reps = 500000, n = k * reps;
  char *buf = malloc(n);
  for (size_t i = 0; i < reps; i++) memcpy(buf + i * k, line, k);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  nccl_log_parse(buf, n, NULL, 0, acc);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  CHECK(acc->lines == (int)reps && acc->unattributed == (int)reps, "huge: lines %d", acc->lines);
  memset(buf, ' ', n);
  const char *head = "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes";
  memcpy(buf, head, strlen(head));
  clock_gettime(CLOCK_MONOTONIC, &t0);
  nccl_log_parse(buf, n, NULL, 0, acc);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs2 = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("huge: %.1f MB of lines in %.2f s, one %.1f MB line in %.2f s\n", n / 1e6, secs, n / 1e6, secs2);
  CHECK(secs < 60 && secs2 < 60, "huge: %.1f s, %.1f s", secs, secs2);
  free(buf);
}

/* Rarer shapes, in memory: 2.21's split line, ncclCommInitAll, 2.28.9's CommRevokeAsync (names a comm, makes
 * none), CollNet, P2P/indirect, NET (PCI) and /Shared, a plugin's net with a space in its name, the external
 * plugin's path (only its file name kept), NVLS support before 2.28 (no parenthesis). */
static void test_variants(void) {
  const char *text =
      "h:7:7 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v8)\n"
      "h:7:7 [0] NCCL INFO NET/AWS Libfabric : GPU Direct RDMA Disabled for HCA 3 'rdmap16s27'\n"
      "h:7:7 [0] NCCL INFO Successfully loaded external network plugin /opt/amazon/ofi/lib/libnccl-net-ofi.so\n"
      "h:7:7 [0] NCCL INFO ncclCommSplit comm 0xc0 rank 1 nranks 2 cudaDev 1 nvmlDev 5 busId 0000:07:00.0 parent 0xb0 "
      "color 7 key 1 commId 0x00aa - Init START\n"
      "h:7:7 [0] NCCL INFO NVLS multicast support is available on dev 1\n"
      "h:7:7 [0] NCCL INFO Channel 00/0 : 1[5] -> 0[4] via P2P/indirect/2[6]/read\n"
      "h:7:7 [0] NCCL INFO Channel 00/1 : 0[4] -> 1[5] [receive] via NET/AWS Libfabric/3/GDRDMA(PCI)/Shared\n"
      "h:7:7 [0] NCCL INFO Channel 01/1 : 1[5] -> 0[4] [send] via NET/IB/2(0)/Shared\n"
      "h:7:7 [0] NCCL INFO CollNet 00/0 : 1 [send] via COLLNET/SHARP/0/GDRDMA\n"
      "h:7:7 [0] NCCL INFO CollNet 00/0 : 1 [receive] via COLLNET/SHARP/0/GDRDMA\n"
      "h:7:7 [0] NCCL INFO ncclCommSplit comm 0xc0 rank 1 nranks 2 cudaDev 1 nvmlDev 5 busId 0000:07:00.0 parent 0xb0 "
      "color 7 key 1 commId 0x00aa - Init COMPLETE\n"
      "h:7:8 [0] NCCL INFO ncclCommInitAll comm 0xd0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x1 - Init "
      "COMPLETE\n"
      "h:7:9 [0] NCCL INFO CommRevokeAsync START comm 0xe0 rank 0 nRanks 2 nNodes 1 localRank 0 cudaDev 0\n"
      "h:7:8 [0] NCCL INFO comm 0xd0 rank 0 nranks 2 cudaDev 0 busId 1000 - Destroy COMPLETE\n";
  memset(acc, 0, sizeof *acc);
  int k = nccl_log_parse(text, strlen(text), NULL, 0, acc);
  CHECK(k == 2, "variants: two communicators (%d), the revoked one not made", k);
  CHECK(!strcmp(acc->net_plugin, "libnccl-net-ofi.so"), "variants: plugin '%s'", acc->net_plugin);
  nccl_acc_comm *c = nccl_acc_find_comm(acc, 0xc0), *d = nccl_acc_find_comm(acc, 0xd0);
  CHECK(c && d, "variants: comms");
  if (!c || !d) return;
  CHECK(!strcmp(c->init_func, "ncclCommSplit") && c->rank == 1 && c->nvml_dev == 5 &&
            !strcmp(c->busid, "0000:07:00.0") && !strcmp(c->comm_id, "0x00aa") && c->init_complete &&
            c->nvls_supported == 1,
        "variants: 2.21 split line");
  CHECK(!strcmp(d->init_func, "ncclCommInitAll") && d->init_complete && d->lines == 2, "variants: InitAll");
  nccl_acc_peer *p = peer(c, 0, "P2P/indirect/2[6]/read");
  CHECK(p && p->sends == 1 && !strcmp(p->transport, "P2P"), "variants: P2P/indirect");
  p = peer(c, 0, "NET/AWS Libfabric/3/GDRDMA(PCI)/Shared");
  CHECK(acc->nnetdevs == 1 && acc->netdev[0].gdr == 0 && !strcmp(acc->netdev[0].name, "rdmap16s27") &&
            !strcmp(acc->netdev[0].net, "AWS Libfabric"),
        "variants: GDR line of a plugin's net");
  CHECK(p && p->recvs == 1 && !strcmp(p->net, "AWS Libfabric") && p->net_dev == 3 && p->gdrdma == 1 &&
            !strcmp(p->net_dev_name, "rdmap16s27") && p->proxy_rank == -1,
        "variants: plugin net");
  p = peer(c, 0, "NET/IB/2(0)/Shared");
  CHECK(p && p->sends == 1 && p->net_dev == 2 && p->proxy_rank == 0 && p->gdrdma == 0, "variants: PXN without GDR");
  p = peer(c, -1, "COLLNET/SHARP/0/GDRDMA");
  CHECK(p && p->sends == 1 && p->recvs == 1 && !strcmp(p->transport, "COLLNET") && c->collnet == 1 && p->net_dev == -1,
        "variants: CollNet");
  CHECK(acc->unknown_lines == 1 && acc->unattributed == 0 && !acc->truncated, "variants: unknown %d unattributed %d",
        acc->unknown_lines, acc->unattributed);
  round_trip(acc, "variants");
  /* an address where a name or a transport is read (no NCCL version writes one there): not kept */
  const char *hostile = "h:1:1 [0] NCCL INFO Using network 10.0.0.1\n"
                        "h:1:1 [0] NCCL INFO NET/Socket : Using [0]10.1.1.1:10.1.1.1<0> [1]eth0:10.1.1.2<0>\n"
                        "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
                        "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/Socket/0/192.168.0.1\n"
                        "h:1:1 [0] NCCL INFO Trees [0] fe80::1\n";
  memset(acc, 0, sizeof *acc);
  nccl_log_parse(hostile, strlen(hostile), NULL, 0, acc);
  CHECK(!acc->net[0] && acc->nnetdevs == 1 && !strcmp(acc->netdev[0].name, "eth0") && acc->ncomms == 1 &&
            acc->comms[0].npeers == 1 && !acc->comms[0].peer[0].via[0] && !acc->comms[0].trees[0],
        "hostile: no address kept");
  round_trip(acc, "hostile");
}

static int known(const char *name) {
  static const char *names[] = {
      "ib-2node-gdr.log", "socket-2node.log", "p2p-shm-split-4gpu.log", "timestamps-2.28.9.log", "old-2.18.1.log",
      "truncated.log",    "garbled.log"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i])) return 1;
  return 0;
}

/* Every other file of dir (only *.log when logs_only): parsed, its JSON valid and read back the same. */
static int parse_all(const char *dir, int logs_only) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  int count = 0;
  while ((e = readdir(d))) {
    size_t k = strlen(e->d_name);
    if (e->d_name[0] == '.') continue;
    if (logs_only && (k < 4 || strcmp(e->d_name + k - 4, ".log") || known(e->d_name))) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t n;
    char *text = slurp(path, &n);
    if (!text) continue;
    memset(acc, 0, sizeof *acc);
    nccl_log_parse(text, n, NULL, 0, acc);
    free(text);
    if (logs_only)
      printf("%s: %d communicators, %d lines, %d unknown, %d unattributed\n", e->d_name, acc->ncomms, acc->lines,
             acc->unknown_lines, acc->unattributed);
    round_trip(acc, e->d_name);
    count++;
  }
  closedir(d);
  return count;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_nccl_log LOGDIR [CORPUSDIR]\n");
    return 2;
  }
  logdir = argv[1];
  acc = malloc(sizeof *acc);
  acc2 = malloc(sizeof *acc2);
  test_ib();
  test_socket();
  test_split();
  test_timestamps();
  test_old();
  test_truncated();
  test_garbled();
  test_prefixes();
  test_spans();
  test_variants();
  test_json_reader();
  test_huge();
  int others = parse_all(logdir, 1);
  printf("%d other logs parsed\n", others);
  if (argc > 2) printf("%d fuzz corpus inputs parsed\n", parse_all(argv[2], 0));
  free(acc);
  free(acc2);
  return check_summary();
}
