/* nccl_checks.c: NCCL's account against the topology (nccl_checks.h). Three passes: walk every rank's account
 * and tally what each GPU pair, each host and each rank's NICs showed (a pair is seen from both of its ranks and
 * from every communicator: it is judged once); then judge the tallies; then say what could not be checked.
 * Reads JSON only and never trusts it: a key absent or of another type is "not reported". */
#include "nccl_checks.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common.h"
#include "json.h"

#define CHECK_NAME "nccl"

/* Appends to a NUL-terminated buffer of n bytes, truncating. */
static void appendf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t n, const char *fmt, ...) {
  size_t u = strlen(buf);
  if (u + 1 >= n) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + u, n - u, fmt, ap);
  va_end(ap);
}

/* ---- JSON helpers ------------------------------------------------------------------------------------- */


/* PCIe classes in NCCL's order, nearest first (topo.h's topo_class); 6 unknown. */
enum { C_X, C_PIX, C_PXB, C_PHB, C_NODE, C_SYS, C_UNKNOWN };
static const char *const CLASS_NAMES[] = {"X", "PIX", "PXB", "PHB", "NODE", "SYS", "?"};

static int class_of(const char *s) {
  for (int c = 0; c < C_UNKNOWN; c++)
    if (!strcmp(s, CLASS_NAMES[c])) return c;
  return C_UNKNOWN;
}

/* ---- the topology, as this file reads it ------------------------------------------------------------ */

typedef struct {
  const cJSON *hosts, *ranks; /* the topology's arrays */
  const char *env;            /* rank 0's NCCL_* environment, "NCCL_A=1\n..." */
} topo_view;

/* The topology's entry of world rank r, or NULL. */
static const cJSON *topo_rank(const topo_view *t, int r) {
  const cJSON *e = cJSON_GetArrayItem(t->ranks, r); /* written in rank order: try the index first */
  if (e && json_int(e, "rank", -1) == r) return e;
  cJSON_ArrayForEach(e, t->ranks) if (json_int(e, "rank", -1) == r) return e;
  return NULL;
}

static const cJSON *host_node(const topo_view *t, int h) { return json_get(cJSON_GetArrayItem(t->hosts, h), "node"); }
static const char *host_name(const topo_view *t, int h) { return json_str(cJSON_GetArrayItem(t->hosts, h), "host"); }

/* NVLinks between GPUs a and b of a node; -1 when not known. */
static int pair_nvlinks(const cJSON *node, int a, int b) {
  int lo = a < b ? a : b, hi = a < b ? b : a;
  const cJSON *p;
  cJSON_ArrayForEach(p, json_get(node, "gpu_pairs")) if (json_int(p, "a", -1) == lo && json_int(p, "b", -1) == hi) return json_int(p, "nvlinks", -1);
  return -1;
}

/* The PCIe class between GPU g and NIC i of a node. */
static int gpu_nic_class(const cJSON *node, int g, int i) {
  const cJSON *p;
  cJSON_ArrayForEach(p, json_get(node, "gpu_nic")) if (json_int(p, "gpu", -1) == g && json_int(p, "nic", -1) == i) return class_of(json_str(p, "pcie"));
  return C_UNKNOWN;
}

static int node_nics(const cJSON *node) { return cJSON_GetArraySize(json_get(node, "nics")); }
static const cJSON *node_nic(const cJSON *node, int i) { return cJSON_GetArrayItem(json_get(node, "nics"), i); }
static int nic_is_hca(const cJSON *node, int i) { return !strcmp(json_str(node_nic(node, i), "kind"), "OpenFabrics"); }

/* The NIC NCCL calls name ("mlx5_0", "mlx5_0:1", "eth0"): by its OpenFabrics name or another of its OS devices. */
static int nic_by_name(const cJSON *node, const char *name) {
  char want[64];
  snprintf(want, sizeof want, "%s", name);
  want[strcspn(want, ":")] = 0;
  if (!want[0]) return -1;
  for (int i = 0; i < node_nics(node); i++) {
    const cJSON *n = node_nic(node, i);
    if (!strcmp(json_str(n, "name"), want)) return i;
    char also[128];
    snprintf(also, sizeof also, "%s", json_str(n, "also"));
    for (char *save = NULL, *w = strtok_r(also, " ", &save); w; w = strtok_r(NULL, " ", &save))
      if (!strcmp(w, want)) return i;
  }
  return -1;
}

/* The first HCA of a node, or -1. */
static int first_hca(const cJSON *node) {
  for (int i = 0; i < node_nics(node); i++)
    if (nic_is_hca(node, i)) return i;
  return -1;
}

/* NCCL_X's value in "NCCL_A=1\nNCCL_B=x\n" into buf; 0 when not set. */
static int env_value(const char *env, const char *key, char *buf, size_t n) {
  size_t k = strlen(key);
  for (const char *p = env; p && *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > k && !strncmp(p, key, k) && p[k] == '=') {
      snprintf(buf, n, "%.*s", (int)(len - k - 1), p + k + 1);
      return 1;
    }
    p = e ? e + 1 : p + len;
  }
  return 0;
}

/* ---- tallies -------------------------------------------------------------------------------------------- */

/* One NVLink pair of one host, as its ranks' accounts saw it. */
typedef struct {
  int host, a, b, nvlinks;
  int rank, peer_rank;        /* the first account that showed it (world ranks) */
  int p2p, other;             /* (peer, transport) entries: P2P, anything else */
  char via[64], label[32];    /* the first non-P2P one (or the first P2P one) */
} pair_tally;

/* One NIC one rank's NET peers went through. */
typedef struct {
  int rank, host, gpu, nic;   /* nic: index in the host's node, -1 not found there */
  char name[32];              /* as NCCL named it */
  int gdr, plain;             /* NET entries with and without GDRDMA */
  int gdr_said;               /* the account's net_devices gdr for it: 1, 0, -1 not said */
} nic_tally;

/* Sockets on one host. */
typedef struct {
  int host, rank, ranks;      /* the first rank, how many ranks */
  char label[32];
} socket_tally;

typedef struct {
  pair_tally *pair;
  int npair;
  nic_tally *nic;
  int nnic;
  socket_tally *sock;
  int nsock;
  int socket_ok_hosts;        /* ranks with sockets on hosts without an HCA: nothing better exists there */
  /* NVLS over every communicator */
  int nvls_used, nvls_unused_supported, nvls_unknown, ncomms;
  /* what could not be checked */
  int no_account, no_account_first, no_transport, no_gpu, unmapped, nic_unknown;
  char no_account_why[160], unmapped_label[32], nic_unknown_name[32];
} tallies;

/* Room for element n of an array of n (one at a time: a job has a few thousand at most). */
static void *grow(void *v, int n, size_t size) { return realloc(v, (size_t)(n + 1) * size); }

static pair_tally *pair_get(tallies *t, int host, int a, int b, int nvlinks) {
  int lo = a < b ? a : b, hi = a < b ? b : a;
  for (int i = 0; i < t->npair; i++)
    if (t->pair[i].host == host && t->pair[i].a == lo && t->pair[i].b == hi) return &t->pair[i];
  pair_tally *g = grow(t->pair, t->npair, sizeof *g);
  if (!g) return NULL;
  t->pair = g;
  pair_tally *p = &t->pair[t->npair++];
  memset(p, 0, sizeof *p);
  p->host = host, p->a = lo, p->b = hi, p->nvlinks = nvlinks, p->rank = p->peer_rank = -1;
  return p;
}

/* The NICs of rank (the ranks are walked one after the other: its entries are at the end). */
static nic_tally *nic_get(tallies *t, int rank, const char *dev) {
  char name[32];
  snprintf(name, sizeof name, "%.*s", (int)strcspn(dev, ":"), dev); /* "mlx5_0:1": the device, not its port */
  for (int i = t->nnic - 1; i >= 0 && t->nic[i].rank == rank; i--)
    if (t->nic[i].rank == rank && !strcmp(t->nic[i].name, name)) return &t->nic[i];
  nic_tally *g = grow(t->nic, t->nnic, sizeof *g);
  if (!g) return NULL;
  t->nic = g;
  nic_tally *n = &t->nic[t->nnic++];
  memset(n, 0, sizeof *n);
  n->rank = rank, n->gdr_said = -1;
  snprintf(n->name, sizeof n->name, "%s", name);
  return n;
}

static socket_tally *sock_get(tallies *t, int host) {
  for (int i = 0; i < t->nsock; i++)
    if (t->sock[i].host == host) return &t->sock[i];
  socket_tally *g = grow(t->sock, t->nsock, sizeof *g);
  if (!g) return NULL;
  t->sock = g;
  socket_tally *s = &t->sock[t->nsock++];
  memset(s, 0, sizeof *s);
  s->host = host, s->rank = -1;
  return s;
}

/* The name of NET device dev in an account's net_devices, or "". */
static const char *netdev_name(const cJSON *acc, int dev) {
  const cJSON *d;
  cJSON_ArrayForEach(d, json_get(acc, "net_devices")) if (json_int(d, "index", -1) == dev) return json_str(d, "name");
  return "";
}

/* The account's "GPU Direct RDMA Enabled/Disabled for HCA" word for the device called name: 1, 0, -1. */
static int netdev_gdr(const cJSON *acc, const char *name) {
  const cJSON *d;
  size_t k = strcspn(name, ":");
  cJSON_ArrayForEach(d, json_get(acc, "net_devices")) {
    const char *n = json_str(d, "name");
    if (strlen(n) == k && !strncmp(n, name, k)) return json_int(d, "gdr", -1);
  }
  return -1;
}

/* Walks one rank's account into the tallies. Returns -1 when out of memory. */
static int tally_rank(tallies *t, const topo_view *tv, int world, int rank, const cJSON *acc) {
  const cJSON *tr = topo_rank(tv, rank);
  int host = json_int(tr, "host", -1), gpu = json_int(tr, "gpu_index", -1);
  const cJSON *node = host_node(tv, host);
  const cJSON *c;
  int socket_seen = 0;
  char socket_label[32] = "";
  cJSON_ArrayForEach(c, json_get(acc, "communicators")) {
    const char *label = json_str(c, "label");
    int nranks = json_int(c, "nranks", -1), crank = json_int(c, "rank", -1);
    /* Peers are numbered in the communicator. The world's communicators ("training", "collectives") have
     * nranks == world size and rank == world rank, so a peer is its world rank; a split communicator (accept's
     * node and pair groups) numbers its members afresh and the account does not say which world rank each is,
     * so its intra-host pairs are not judged (its NET peers still are: they need only this rank's GPU). */
    int mapped = nranks == world && crank == rank;
    t->ncomms++;
    int nvls = json_int(c, "nvls", -1), sup = json_int(c, "nvls_supported", -1);
    /* NVLS joins the GPUs of a node through the NVSwitch: a communicator with one rank, or one rank a node, has
     * nothing to join and runs without it although the hardware has it */
    int joinable = nranks != 1 && json_int(c, "local_ranks", -1) != 1;
    if (nvls == 1) t->nvls_used++;
    else if (nvls == 0 && sup == 1 && joinable) t->nvls_unused_supported++;
    else if (nvls < 0) t->nvls_unknown++;
    const cJSON *p;
    cJSON_ArrayForEach(p, json_get(c, "peers")) {
      const char *transport = json_str(p, "transport"), *via = json_str(p, "via");
      int peer = json_int(p, "peer", -1);
      if (!transport[0]) {
        t->no_transport++;
        continue;
      }
      /* An intra-host pair of NVLinked GPUs: P2P or a failure, whatever else it went through. */
      const cJSON *pr = mapped && peer >= 0 && peer != rank ? topo_rank(tv, peer) : NULL;
      int phost = json_int(pr, "host", -2), pgpu = json_int(pr, "gpu_index", -1);
      if (pr && phost == host && gpu >= 0 && pgpu >= 0 && pgpu != gpu) {
        int nvl = pair_nvlinks(node, gpu, pgpu);
        if (nvl > 0) {
          pair_tally *pt = pair_get(t, host, gpu, pgpu, nvl);
          if (!pt) return -1;
          int ok = !strcmp(transport, "P2P");
          if (pt->rank < 0 || (!ok && !pt->other)) {
            pt->rank = rank, pt->peer_rank = peer;
            snprintf(pt->via, sizeof pt->via, "%s", via[0] ? via : transport);
            snprintf(pt->label, sizeof pt->label, "%s", label);
          }
          ok ? pt->p2p++ : pt->other++;
          continue;
        }
      } else if (!mapped && strcmp(transport, "NET")) {
        if (!t->unmapped++) snprintf(t->unmapped_label, sizeof t->unmapped_label, "%s", label);
      }
      if (strcmp(transport, "NET")) continue;
      const char *net = json_str(p, "net");
      if (!strcasecmp(net, "Socket")) {
        socket_seen = 1;
        if (!socket_label[0]) snprintf(socket_label, sizeof socket_label, "%s", label);
        continue;
      }
      if (gpu < 0 || !node) {
        t->no_gpu++;
        continue;
      }
      const char *name = json_str(p, "net_dev_name");
      if (!name[0]) name = netdev_name(acc, json_int(p, "net_dev", -1));
      if (!name[0]) {
        t->no_transport++;
        continue;
      }
      nic_tally *nt = nic_get(t, rank, name);
      if (!nt) return -1;
      nt->host = host, nt->gpu = gpu, nt->nic = nic_by_name(node, name), nt->gdr_said = netdev_gdr(acc, name);
      int g = json_int(p, "gdrdma", -1);
      if (g == 1) nt->gdr++;
      else if (g == 0) nt->plain++;
    }
  }
  if (socket_seen) {
    if (host < 0 || !node) {
      t->no_gpu++;
    } else if (first_hca(node) < 0) {
      t->socket_ok_hosts++;
    } else {
      socket_tally *s = sock_get(t, host);
      if (!s) return -1;
      if (s->rank < 0) s->rank = rank, snprintf(s->label, sizeof s->label, "%s", socket_label);
      s->ranks++;
    }
  }
  return 0;
}

/* ---- judging ------------------------------------------------------------------------------------------ */

#define ADD(sev, scope, host, rank, subject, ...) \
  DDP_TRY(findings_add_at(l, host, rank, CHECK_NAME, sev, scope, subject, NAN, NAN, "", __VA_ARGS__))
#define PASSED() (l->v[l->n - 1].passed = 1)

/* The likely causes of NVLinked GPUs not talking P2P, the ones the environment shows first. */
static void p2p_causes(const char *env, char *buf, size_t n) {
  char v[64];
  buf[0] = 0;
  if (env_value(env, "NCCL_P2P_DISABLE", v, sizeof v) && strcmp(v, "0"))
    appendf(buf, n, "NCCL_P2P_DISABLE=%s is set (unset it); ", v);
  if (env_value(env, "NCCL_P2P_LEVEL", v, sizeof v)) appendf(buf, n, "NCCL_P2P_LEVEL=%s is set (NVL or unset); ", v);
  if (env_value(env, "NCCL_SHM_DISABLE", v, sizeof v)) appendf(buf, n, "NCCL_SHM_DISABLE=%s; ", v);
  appendf(buf, n, "%s", buf[0] ? "else " : "");
  appendf(buf, n, "check NCCL_P2P_DISABLE / NCCL_P2P_LEVEL, peer access in the container or VM, and IOMMU/ACS "
                       "redirecting peer traffic (nvidia-smi topo -p2p r)");
}

static ddp_result judge_pairs(const tallies *t, const topo_view *tv, finding_list *l) {
  for (int i = 0; i < t->npair; i++) {
    const pair_tally *p = &t->pair[i];
    const char *host = host_name(tv, p->host);
    char subject[64], causes[400];
    snprintf(subject, sizeof subject, "GPU%d-GPU%d (%s)", p->a, p->b, host);
    if (p->other) {
      p2p_causes(tv->env, causes, sizeof causes);
      ADD(SEV_FAIL, SCOPE_PAIR, host, p->rank, subject,
          "GPU%d-GPU%d joined by NV%d talk %s (communicator %s, rank %d -> %d): expected P2P over NVLink; through host "
          "memory they lose most of NVLink's bandwidth: %s",
          p->a, p->b, p->nvlinks, p->via, p->label[0] ? p->label : "?", p->rank, p->peer_rank, causes);
    } else {
      ADD(SEV_INFO, SCOPE_PAIR, host, p->rank, subject, "GPU%d-GPU%d joined by NV%d talk %s over NVLink, as expected",
          p->a, p->b, p->nvlinks, p->via);
      PASSED();
    }
  }
  return DDP_OK;
}

static ddp_result judge_sockets(const tallies *t, const topo_view *tv, finding_list *l) {
  for (int i = 0; i < t->nsock; i++) {
    const socket_tally *s = &t->sock[i];
    const cJSON *node = host_node(tv, s->host);
    const char *host = host_name(tv, s->host);
    ADD(SEV_FAIL, SCOPE_HOST, host, s->rank, host,
        "NCCL fell back to sockets on %s (%d rank%s, first rank %d, communicator %s) although it has an IB/RoCE HCA "
        "(%s): expected NET/IB; check NCCL_NET / NCCL_IB_DISABLE in the environment, that libibverbs and rdma-core "
        "are in the container, and that the HCA's port is Active (ibstat)",
        host, s->ranks, s->ranks == 1 ? "" : "s", s->rank, s->label[0] ? s->label : "?",
        json_str(node_nic(node, first_hca(node)), "name"));
  }
  return DDP_OK;
}

static ddp_result judge_socket_only(const tallies *t, finding_list *l) {
  if (!t->socket_ok_hosts) return DDP_OK;
  ADD(SEV_INFO, SCOPE_JOB, "", -1, "job",
      "NCCL uses sockets on %d rank%s whose hosts have no IB/RoCE HCA: the only network there", t->socket_ok_hosts,
      t->socket_ok_hosts == 1 ? "" : "s");
  PASSED();
  return DDP_OK;
}

static ddp_result judge_nics(const tallies *t, const topo_view *tv, finding_list *l) {
  for (int i = 0; i < t->nnic; i++) {
    const nic_tally *n = &t->nic[i];
    const cJSON *node = host_node(tv, n->host);
    const char *host = host_name(tv, n->host);
    char subject[128];
    snprintf(subject, sizeof subject, "rank %d (%s) GPU%d %s", n->rank, host, n->gpu, n->name);
    if (n->nic < 0) {
      ADD(SEV_INFO, SCOPE_GPU, host, n->rank, subject,
          "rank %d's NET peers go through %s, which the topology of %s does not list: its place was not checked",
          n->rank, n->name, host);
      continue;
    }
    int cls = gpu_nic_class(node, n->gpu, n->nic), hca = nic_is_hca(node, n->nic);
    const char *kind = json_str(node_nic(node, n->nic), "kind");
    /* GPUDirect RDMA: NCCL_NET_GDR_LEVEL's default reaches PXB. */
    if (hca && n->plain && cls <= C_PXB) {
      char said[160] = "";
      if (n->gdr_said == 0)
        snprintf(said, sizeof said, "NCCL said GPU Direct RDMA is disabled for %s (is the nvidia-peermem module "
                                    "loaded? lsmod | grep peermem); ", n->name);
      ADD(SEV_WARN, SCOPE_GPU, host, n->rank, subject,
          "rank %d's GPU%d reaches %s at %s (its own PCIe switch) but %d of its NET peers go without GDRDMA: expected "
          "GPUDirect RDMA there; %scheck nvidia-peermem, NCCL_NET_GDR_LEVEL and NCCL_NET_GDR_READ, and ACS on the "
          "switch",
          n->rank, n->gpu, n->name, CLASS_NAMES[cls], n->plain, said);
    } else if (hca && n->plain) {
      ADD(SEV_INFO, SCOPE_GPU, host, n->rank, subject,
          "rank %d's GPU%d reaches %s only at %s, beyond NCCL_NET_GDR_LEVEL's default (PXB): plain NET without "
          "GPUDirect RDMA is expected there",
          n->rank, n->gpu, n->name, CLASS_NAMES[cls]);
    } else if (hca && n->gdr) {
      ADD(SEV_INFO, SCOPE_GPU, host, n->rank, subject, "rank %d's GPU%d uses GPUDirect RDMA through %s (%s)", n->rank,
          n->gpu, n->name, CLASS_NAMES[cls]);
      PASSED();
    }
    /* The nearest NIC: across the NUMA boundary while a NIC of the same kind is nearer. */
    int best = -1;
    for (int k = 0; k < node_nics(node); k++)
      if (k != n->nic && !strcmp(json_str(node_nic(node, k), "kind"), kind) &&
          (best < 0 || gpu_nic_class(node, n->gpu, k) < gpu_nic_class(node, n->gpu, best)))
        best = k;
    int bcls = best >= 0 ? gpu_nic_class(node, n->gpu, best) : C_UNKNOWN;
    if (cls == C_SYS && bcls < C_SYS) {
      ADD(SEV_WARN, SCOPE_GPU, host, n->rank, subject,
          "rank %d's GPU%d sends through %s across the NUMA boundary (SYS) although %s is %s: expected its nearest "
          "NIC; check NCCL_IB_HCA / NCCL_SOCKET_IFNAME, the rank-to-GPU mapping and CUDA_VISIBLE_DEVICES",
          n->rank, n->gpu, n->name, json_str(node_nic(node, best), "name"), CLASS_NAMES[bcls]);
    } else if (cls != C_UNKNOWN) {
      ADD(SEV_INFO, SCOPE_GPU, host, n->rank, subject, "rank %d's GPU%d sends through %s (%s), its nearest %s NIC",
          n->rank, n->gpu, n->name, CLASS_NAMES[cls], kind);
      PASSED();
    }
  }
  return DDP_OK;
}

static ddp_result judge_nvls(const tallies *t, const topo_view *tv, finding_list *l) {
  if (!t->ncomms) return DDP_OK;
  char v[16] = "";
  int asked = env_value(tv->env, "NCCL_NVLS_ENABLE", v, sizeof v) ? atoi(v) != 0 : -1;
  int known = t->ncomms - t->nvls_unknown;
  if (asked == 1 && t->nvls_unused_supported) {
    ADD(SEV_WARN, SCOPE_JOB, "", -1, "job",
        "NCCL_NVLS_ENABLE=1 asked for NVLS and NCCL says the hardware supports it, but %d communicator%s of %d run "
        "without it: expected NVLS on; check NCCL_NVLS_ENABLE's value on every rank, the fabric manager and "
        "IMEX/multicast support (nvidia-smi -q | grep -i fabric)",
        t->nvls_unused_supported, t->nvls_unused_supported == 1 ? "" : "s", t->ncomms);
  } else if (asked == 0 && t->nvls_used) {
    ADD(SEV_FAIL, SCOPE_JOB, "", -1, "job",
        "NCCL_NVLS_ENABLE=0 turned NVLS off, but %d communicator%s of %d use it: expected NVLS off; the variable did "
        "not reach NCCL (set it in every rank's environment before NCCL initialises)",
        t->nvls_used, t->nvls_used == 1 ? "" : "s", t->ncomms);
  } else if (known) {
    ADD(SEV_INFO, SCOPE_JOB, "", -1, "job", "NVLS used by %d of %d communicator%s (NCCL_NVLS_ENABLE%s%s)",
        t->nvls_used, known, known == 1 ? "" : "s", asked < 0 ? " unset: NCCL's default" : "=", asked < 0 ? "" : v);
    if (asked >= 0) PASSED();
  }
  return DDP_OK;
}

/* What was not reported, in one finding. */
static ddp_result judge_unreported(const tallies *t, int naccounts, finding_list *l) {
  char why[480] = "";
  if (t->no_account)
    appendf(why, sizeof why, "%d of %d ranks have no account (rank %d: %s); ", t->no_account, naccounts,
                 t->no_account_first, t->no_account_why[0] ? t->no_account_why : "null");
  if (t->no_transport) appendf(why, sizeof why, "%d peer transports or NET devices not reported; ", t->no_transport);
  if (t->no_gpu) appendf(why, sizeof why, "%d NET peers of ranks whose GPU or host the topology does not know; ", t->no_gpu);
  if (t->nvls_unknown && t->ncomms) appendf(why, sizeof why, "NVLS not reported for %d of %d communicators; ", t->nvls_unknown, t->ncomms);
  if (t->unmapped)
    ADD(SEV_INFO, SCOPE_JOB, "", -1, "job",
        "NCCL's transports not checked against NVLink for %d intra-host peer%s of split communicators (\"%s\"): "
        "their ranks are numbered in the communicator, not the world",
        t->unmapped, t->unmapped == 1 ? "" : "s", t->unmapped_label);
  size_t n = strlen(why);
  if (n < 2) return DDP_OK;
  why[n - 2] = 0; /* the last "; " */
  ADD(SEV_INFO, SCOPE_JOB, "", -1, "job", "NCCL's account not reported: %s", why);
  return DDP_OK;
}

ddp_result nccl_checks(const cJSON *topology, const cJSON *nccl, finding_list *l) {
  if (!cJSON_IsObject(nccl) || !cJSON_IsTrue(json_get(nccl, "reported"))) {
    const char *why = json_str(nccl, "why");
    ADD(SEV_INFO, SCOPE_JOB, "", -1, "job", "NCCL's account not reported: %s",
        why[0] ? why : !nccl ? "the result has no \"nccl\" section (NCCL's INFO log was not read)" : "no reason given");
    return DDP_OK;
  }
  topo_view tv = {json_get(topology, "hosts"), json_get(topology, "ranks"), json_str(json_get(topology, "environment"), "nccl_env_rank0")};
  const cJSON *ranks = json_get(nccl, "ranks");
  if (!cJSON_IsArray(tv.hosts) || !cJSON_GetArraySize(tv.ranks)) {
    ADD(SEV_INFO, SCOPE_JOB, "", -1, "job",
        "NCCL's account not checked: the topology was not reported, so what NCCL chose cannot be held against the "
        "machine");
    return DDP_OK;
  }
  int world = cJSON_GetArraySize(tv.ranks);
  tallies t;
  memset(&t, 0, sizeof t);
  ddp_result rc = DDP_OK;
  const cJSON *e;
  int naccounts = 0;
  cJSON_ArrayForEach(e, ranks) {
    naccounts++;
    int rank = json_int(e, "rank", -1);
    const cJSON *acc = json_get(e, "account");
    if (!cJSON_IsObject(acc) || rank < 0) {
      if (!t.no_account++) {
        t.no_account_first = rank;
        snprintf(t.no_account_why, sizeof t.no_account_why, "%s", json_str(e, "why"));
      }
      continue;
    }
    if (tally_rank(&t, &tv, world, rank, acc)) {
      rc = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
      break;
    }
  }
  if (!naccounts) t.no_account = 1, t.no_account_first = -1, snprintf(t.no_account_why, sizeof t.no_account_why, "the section lists no rank");
  if (rc == DDP_OK) rc = judge_pairs(&t, &tv, l);
  if (rc == DDP_OK) rc = judge_sockets(&t, &tv, l);
  if (rc == DDP_OK) rc = judge_socket_only(&t, l);
  if (rc == DDP_OK) rc = judge_nics(&t, &tv, l);
  if (rc == DDP_OK) rc = judge_nvls(&t, &tv, l);
  if (rc == DDP_OK) rc = judge_unreported(&t, naccounts ? naccounts : 1, l);
  free(t.pair), free(t.nic), free(t.sock);
  return rc;
}
