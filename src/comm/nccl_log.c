/* nccl_log.c: NCCL's INFO log read into an account (nccl_log.h), and that account as JSON and back. It reads
 * the text one line at a time, in place (no copy of a line, no allocation: every table is bounded), and knows
 * each line by its message, the words after "NCCL INFO " (the line shapes are those of NCCL 2.18-2.28's INFO
 * calls; which call each rule follows is noted at the rule). It must never read past len, never fail on what
 * it does not know (an unknown line is counted), and never keep a host name or an address: the "host:pid:tid"
 * prefix gives it the thread only, and of the net's device lists it keeps the device names, never the OOB or
 * socket addresses that follow them. */
#include "nccl_log.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* ---- a view of the text: pointer and length, never NUL-terminated ---- */
typedef struct {
  const char *p;
  size_t n;
} txt;

static txt txt_from(txt t, size_t i) { return i <= t.n ? (txt){t.p + i, t.n - i} : (txt){t.p + t.n, 0}; }
/* Offset of the first lit in t, or (size_t)-1. */
static size_t find(txt t, const char *lit) {
  size_t k = strlen(lit);
  if (k == 0 || k > t.n) return (size_t)-1;
  const char *f = memmem(t.p, t.n, lit, k);
  return f ? (size_t)(f - t.p) : (size_t)-1;
}
static int has(txt t, const char *lit) { return find(t, lit) != (size_t)-1; }
static int starts(txt t, const char *lit) {
  size_t k = strlen(lit);
  return t.n >= k && memcmp(t.p, lit, k) == 0;
}
static int eat(txt *t, const char *lit) {
  if (!starts(*t, lit)) return 0;
  *t = txt_from(*t, strlen(lit));
  return 1;
}
static void skip_sp(txt *t) {
  while (t->n && (t->p[0] == ' ' || t->p[0] == '\t')) *t = txt_from(*t, 1);
}
/* After lit (the first one in t), or an empty view when t has none. */
static txt after(txt t, const char *lit) {
  size_t i = find(t, lit);
  return i == (size_t)-1 ? (txt){t.p + t.n, 0} : txt_from(t, i + strlen(lit));
}
/* A decimal integer (optional '-'); more than 9 digits is refused (no overflow). */
static int eat_int(txt *t, int *v) {
  txt s = *t;
  int neg = eat(&s, "-");
  long x = 0;
  size_t d = 0;
  while (d < s.n && isdigit((unsigned char)s.p[d])) {
    if (d == 9) return 0;
    x = x * 10 + (s.p[d] - '0');
    d++;
  }
  if (d == 0) return 0;
  *v = (int)(neg ? -x : x);
  *t = txt_from(s, d);
  return 1;
}
static int eat_uint64(txt *t, unsigned long long *v, int base) {
  size_t d = 0;
  unsigned long long x = 0;
  while (d < t->n && d < 20) {
    int c = (unsigned char)t->p[d], k;
    if (isdigit(c))
      k = c - '0';
    else if (base == 16 && isxdigit(c))
      k = tolower(c) - 'a' + 10;
    else
      break;
    x = x * (unsigned)base + (unsigned)k;
    d++;
  }
  if (d == 0) return 0;
  *v = x;
  *t = txt_from(*t, d);
  return 1;
}
static int eat_double(txt *t, double *v) {
  char buf[40];
  size_t k = 0;
  while (k < t->n && k < sizeof buf - 1 && (isdigit((unsigned char)t->p[k]) || t->p[k] == '.' || t->p[k] == '-')) {
    buf[k] = t->p[k];
    k++;
  }
  if (k == 0) return 0;
  buf[k] = '\0';
  char *end;
  double x = strtod(buf, &end);
  if (end == buf || !isfinite(x)) return 0;
  *v = x;
  *t = txt_from(*t, (size_t)(end - buf));
  return 1;
}
/* The word at the start of t, up to one of stop (or the end); a NUL is part of a word. */
static txt word(txt t, const char *stop) {
  size_t k = 0;
  while (k < t.n && (t.p[k] == '\0' || !strchr(stop, t.p[k]))) k++;
  return (txt){t.p, k};
}
/* An IPv4 address (four numbers and dots) or an IPv6 one ("::", "fe80:") somewhere in s. */
static int has_address(const char *s) {
  if (strstr(s, "::") || strstr(s, "fe80:")) return 1;
  for (const char *p = s; *p; p++) {
    if (!isdigit((unsigned char)*p) || (p > s && isdigit((unsigned char)p[-1]))) continue;
    int dots = 0;
    const char *q = p;
    while (isdigit((unsigned char)*q)) {
      while (isdigit((unsigned char)*q)) q++;
      if (*q != '.' || !isdigit((unsigned char)q[1])) break;
      dots++;
      q++;
    }
    if (dots >= 3) return 1;
  }
  return 0;
}
/* Copies t into dst (cap bytes, NUL-terminated, truncated), anything but printable ASCII as '?'; a text that
 * holds an address is not kept at all (no NCCL line this file reads has one where it reads: a garbled one may). */
static void copy(char *dst, size_t cap, txt t) {
  size_t k = 0;
  for (; k < t.n && k + 1 < cap; k++) dst[k] = (t.p[k] >= 0x20 && t.p[k] < 0x7f) ? t.p[k] : '?';
  dst[k] = '\0';
  if (has_address(dst)) dst[0] = '\0';
}
static txt trim(txt t) {
  while (t.n && (t.p[0] == ' ' || t.p[0] == '\t')) t = txt_from(t, 1);
  while (t.n && (t.p[t.n - 1] == ' ' || t.p[t.n - 1] == '\t' || t.p[t.n - 1] == '\r')) t.n--;
  return t;
}
/* The integer after the word key (" key N" or "key N" at the start), as a whole word. */
static int key_int(txt t, const char *key, int *v) {
  size_t k = strlen(key);
  for (size_t i = 0; i + k < t.n;) {
    txt r = txt_from(t, i);
    size_t f = find(r, key);
    if (f == (size_t)-1) return 0;
    size_t at = i + f;
    if ((at == 0 || t.p[at - 1] == ' ') && at + k < t.n && t.p[at + k] == ' ') {
      txt s = txt_from(t, at + k + 1);
      if (eat_int(&s, v)) return 1;
    }
    i = at + 1;
  }
  return 0;
}
/* The word after the word key, as key_int. */
static txt key_word(txt t, const char *key) {
  size_t k = strlen(key);
  for (size_t i = 0; i + k < t.n;) {
    size_t f = find(txt_from(t, i), key);
    if (f == (size_t)-1) break;
    size_t at = i + f;
    if ((at == 0 || t.p[at - 1] == ' ') && at + k < t.n && t.p[at + k] == ' ')
      return word(txt_from(t, at + k + 1), " ");
    i = at + 1;
  }
  return (txt){t.p + t.n, 0};
}
/* A "0x..." pointer as glibc's %p prints it; 0 for "(nil)" or none. */
static unsigned long long pointer(txt t) {
  unsigned long long v = 0;
  if (eat(&t, "0x") && eat_uint64(&t, &v, 16)) return v;
  return 0;
}

/* A device or interface name we may keep: letters, digits, '_', '-', '.', and not an IPv4 address. */
static int name_ok(txt t) {
  if (t.n == 0 || t.n > 31) return 0;
  int letter = 0;
  for (size_t i = 0; i < t.n; i++) {
    int c = (unsigned char)t.p[i];
    if (!(isalnum(c) || c == '_' || c == '-' || c == '.')) return 0;
    if (isalpha(c)) letter = 1;
  }
  return letter;
}

/* ---- parse state: bounded tables beside the account ---- */
enum { MAX_THREADS = 64, RINGBITS = 1024 };
typedef struct {
  unsigned long long pid, tid;
  int comm;
  unsigned long stamp;
} thread_slot;
typedef struct {
  nccl_account *acc;
  const nccl_log_span *spans;
  int nspans;
  unsigned long long span_comm[NCCL_LOG_MAX_SPANS];
  thread_slot threads[MAX_THREADS];
  unsigned long stamp;
  unsigned char started[NCCL_ACC_MAX_COMMS];
  unsigned char ring_seen[NCCL_ACC_MAX_COMMS][RINGBITS / 8];
  unsigned char graph_ring_seen[NCCL_ACC_MAX_COMMS][RINGBITS / 8];
  int graph_rings[NCCL_ACC_MAX_COMMS];
  unsigned long long dropped[NCCL_ACC_MAX_COMMS];
  int ndropped;
  struct {
    unsigned long long comm;
    char label[32];
  } labels[NCCL_ACC_MAX_COMMS];
  int nlabels;
} parser;

static void comm_init(nccl_acc_comm *c, unsigned long long ptr) {
  memset(c, 0, sizeof *c);
  c->comm = ptr;
  c->rank = c->nranks = c->nnodes = c->local_ranks = c->local_rank = c->cuda_dev = -1;
  c->nvml_dev = c->mnnvl = -1;
  c->coll_channels = c->nvls_channels = c->collnet_channels = c->p2p_channels = c->p2p_per_peer = -1;
  c->ring_channels = -1;
  c->nvls = c->nvls_supported = c->collnet = c->pxn = c->gdr = -1;
}
static void account_init(nccl_account *acc) { memset(acc, 0, sizeof *acc); }

/* The index of the communicator ptr, made when create and there is room; -1 otherwise. */
static int comm_index(parser *ps, unsigned long long ptr, int create) {
  nccl_account *acc = ps->acc;
  if (!ptr) return -1;
  for (int i = 0; i < acc->ncomms; i++)
    if (acc->comms[i].comm == ptr) return i;
  if (!create) return -1;
  if (acc->ncomms == NCCL_ACC_MAX_COMMS) {
    int seen = 0;
    for (int i = 0; i < ps->ndropped; i++) seen |= ps->dropped[i] == ptr;
    if (!seen) {
      acc->comms_dropped++;
      if (ps->ndropped < NCCL_ACC_MAX_COMMS) ps->dropped[ps->ndropped++] = ptr;
    }
    return -1;
  }
  nccl_acc_comm *c = &acc->comms[acc->ncomms];
  comm_init(c, ptr);
  for (int i = 0; i < ps->nlabels; i++)
    if (ps->labels[i].comm == ptr) memcpy(c->label, ps->labels[i].label, sizeof c->label);
  return acc->ncomms++;
}

static void thread_set(parser *ps, unsigned long long pid, unsigned long long tid, int comm) {
  int oldest = 0;
  for (int i = 0; i < MAX_THREADS; i++) {
    thread_slot *t = &ps->threads[i];
    if (t->stamp && t->pid == pid && t->tid == tid) {
      t->comm = comm;
      t->stamp = ++ps->stamp;
      return;
    }
    if (t->stamp < ps->threads[oldest].stamp) oldest = i;
  }
  ps->threads[oldest] = (thread_slot){pid, tid, comm, ++ps->stamp};
}
static int thread_get(const parser *ps, unsigned long long pid, unsigned long long tid) {
  for (int i = 0; i < MAX_THREADS; i++)
    if (ps->threads[i].stamp && ps->threads[i].pid == pid && ps->threads[i].tid == tid) return ps->threads[i].comm;
  return -1;
}

/* The communicator a line without its own comm pointer belongs to (header: spans, then the thread), -1. */
static int attribute(parser *ps, size_t off, int have_tid, unsigned long long pid, unsigned long long tid) {
  int best = -1;
  size_t width = (size_t)-1;
  for (int i = 0; i < ps->nspans; i++) {
    const nccl_log_span *s = &ps->spans[i];
    if (off >= s->begin && off < s->end && ps->span_comm[i] && s->end - s->begin < width) {
      best = i;
      width = s->end - s->begin;
    }
  }
  if (best >= 0) return comm_index(ps, ps->span_comm[best], 1);
  return have_tid ? thread_get(ps, pid, tid) : -1;
}

/* ---- the account-level rules ---- */
static nccl_acc_netdev *netdev_at(nccl_account *acc, txt net, int index) {
  char nm[16];
  copy(nm, sizeof nm, net);
  for (int i = 0; i < acc->nnetdevs; i++)
    if (acc->netdev[i].index == index && !strcmp(acc->netdev[i].net, nm)) return &acc->netdev[i];
  if (acc->nnetdevs == NCCL_ACC_MAX_NETDEVS) return NULL;
  nccl_acc_netdev *d = &acc->netdev[acc->nnetdevs++];
  memset(d, 0, sizeof *d);
  d->index = index;
  d->port = -1;
  d->gdr = -1;
  memcpy(d->net, nm, sizeof d->net);
  return d;
}

/* "NET/<net> : rest": the net's name (a plugin's may hold a space: "AWS Libfabric") and what follows. */
static int net_name(txt m, txt *net, txt *rest) {
  if (!starts(m, "NET/")) return 0;
  txt r = txt_from(m, 4);
  size_t k = find(r, " : ");
  if (k == (size_t)-1 || k == 0 || k > 15) return 0;
  *net = (txt){r.p, k};
  *rest = txt_from(r, k + 3);
  return 1;
}

/* NCCL net_ib.cc "NET/IB : Using%s %s; OOB %s:%s" with " [%d]%s:%d/%s" per device (dev, port, IB/RoCE);
 * NCCL net_socket.cc "NET/Socket : Using%s" with " [%d]%s:%s" per interface (name, address): the address and
 * everything after IB's ';' (the OOB interface and address) are never read. */
static int rule_net_using(nccl_account *acc, txt m) {
  txt net, rest;
  if (!net_name(m, &net, &rest) || !eat(&rest, "Using")) return 0;
  if (!rest.n || rest.p[0] != ' ') return 0;
  size_t semi = find(rest, ";");
  if (semi != (size_t)-1) rest.n = semi;
  int ib = net.n == 2 && !memcmp(net.p, "IB", 2);
  for (size_t i = 0; i < rest.n;) {
    txt r = txt_from(rest, i);
    size_t f = find(r, " [");
    if (f == (size_t)-1) break;
    txt e = txt_from(r, f + 2);
    int index;
    i += f + 2;
    if (!eat_int(&e, &index) || !eat(&e, "]")) continue;
    txt name = word(e, ": ");
    nccl_acc_netdev *d = name_ok(name) ? netdev_at(acc, net, index) : NULL;
    if (!d) continue;
    copy(d->name, sizeof d->name, name);
    e = txt_from(e, name.n);
    int port;
    if (ib && eat(&e, ":") && eat_int(&e, &port)) {
      d->port = port;
      if (eat(&e, "/")) copy(d->link, sizeof d->link, word(e, " "));
    }
  }
  return 1;
}

/* NCCL topo.cc "NET/%s : GPU Direct RDMA %s for HCA %d '%s'" (Enabled/Disabled), 2.18-2.28. */
static int rule_net_gdr(nccl_account *acc, txt m) {
  txt net, rest;
  if (!net_name(m, &net, &rest) || !eat(&rest, "GPU Direct RDMA ")) return 0;
  int on = eat(&rest, "Enabled");
  if (!on && !eat(&rest, "Disabled")) return 0;
  int index;
  if (!eat(&rest, " for HCA ") || !eat_int(&rest, &index)) return 0;
  nccl_acc_netdev *d = netdev_at(acc, net, index);
  if (!d) return 1;
  d->gdr = on;
  txt q = after(rest, "'");
  txt name = word(q, "'");
  if (!d->name[0] && name_ok(name)) copy(d->name, sizeof d->name, name);
  return 1;
}

/* The net plugin: 2.18 NCCL net.cc "NET/Plugin : No plugin found, using internal implementation", "NET/Plugin:
 * Loaded net plugin %s (v%d)"; 2.21-2.23 "NET/Plugin: Using internal network plugin.", "... Could not find:%s.
 * Using internal network plugin."; 2.26+ NCCL plugin_open.cc "NET/Plugin: Could not find:%s" and net.cc
 * "Successfully loaded external network plugin %s" (a path: only its last part is kept). */
static int rule_plugin(nccl_account *acc, txt m) {
  if (eat(&m, "Successfully loaded external network plugin ")) {
    txt path = word(trim(m), " ");
    size_t k = path.n;
    while (k && path.p[k - 1] != '/') k--;
    copy(acc->net_plugin, sizeof acc->net_plugin, txt_from(path, k));
    return 1;
  }
  if (!starts(m, "NET/Plugin")) return 0;
  txt loaded = after(m, "Loaded net plugin ");
  if (loaded.n) {
    size_t v = find(loaded, " (v");
    if (v != (size_t)-1) loaded.n = v;
    copy(acc->net_plugin, sizeof acc->net_plugin, trim(loaded));
  } else if ((has(m, "internal") || has(m, "Could not find")) && !acc->net_plugin[0]) {
    strcpy(acc->net_plugin, "internal");
  }
  return 1;
}

/* ---- the communicator rules: each takes the communicator the line belongs to ---- */

/* NCCL init.cc's Init START/COMPLETE lines: 2.18 "comm %p rank %d nranks %d cudaDev %d [nvmlDev %d] busId %lx
 * commId 0x%llx - Init COMPLETE"; 2.21 "ncclCommInitRank comm %p ..." and "ncclCommSplit comm %p ... parent %p
 * color %d key %d commId 0x%llx - Init START"; 2.23+ "%s comm %p ..." (the API's name: ncclCommInitRank,
 * ncclCommInitRankConfig, ncclCommInitAll, ncclCommSplit, ...) with "parent %p [splitCount %d] color %d key
 * %d- Init START" for a split. Read as words: whatever order or extra words a version has. */
static void read_init(nccl_acc_comm *c, txt m, int complete) {
  size_t at = find(m, "comm 0x");
  if (at > 0 && at != (size_t)-1) copy(c->init_func, sizeof c->init_func, word(m, " "));
  int v;
  if (key_int(m, "rank", &v)) c->rank = v;
  if (key_int(m, "nranks", &v)) c->nranks = v;
  if (key_int(m, "cudaDev", &v)) c->cuda_dev = v;
  if (key_int(m, "nvmlDev", &v)) c->nvml_dev = v;
  txt bus = key_word(m, "busId");
  if (bus.n) copy(c->busid, sizeof c->busid, bus);
  txt id = key_word(m, "commId");
  if (id.n) copy(c->comm_id, sizeof c->comm_id, id);
  if (complete) c->init_complete = 1;
}

/* NCCL init.cc (2.21+) "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d". */
static void read_nnodes(nccl_acc_comm *c, txt m) {
  int v;
  if (key_int(m, "rank", &v)) c->rank = v;
  if (key_int(m, "nRanks", &v)) c->nranks = v;
  if (key_int(m, "nNodes", &v)) c->nnodes = v;
  if (key_int(m, "localRanks", &v)) c->local_ranks = v;
  if (key_int(m, "localRank", &v)) c->local_rank = v;
  if (key_int(m, "MNNVL", &v)) c->mnnvl = v;
}

static void add_peer(nccl_acc_comm *c, int peer, txt via, int send) {
  char v[64];
  copy(v, sizeof v, via);
  for (int i = 0; i < c->npeers; i++) {
    nccl_acc_peer *p = &c->peer[i];
    if (p->peer == peer && !strcmp(p->via, v)) {
      (*(send ? &p->sends : &p->recvs))++;
      return;
    }
  }
  if (c->npeers == NCCL_ACC_MAX_PEERS) {
    c->peers_dropped++;
    return;
  }
  nccl_acc_peer *p = &c->peer[c->npeers++];
  memset(p, 0, sizeof *p);
  p->peer = peer;
  memcpy(p->via, v, sizeof p->via);
  p->net_dev = p->gdrdma = p->proxy_rank = -1;
  txt t = word(via, "/");
  copy(p->transport, sizeof p->transport, t);
  if (!strcmp(p->transport, "NET")) {
    txt r = txt_from(via, t.n);
    eat(&r, "/");
    txt net = word(r, "/");
    copy(p->net, sizeof p->net, net);
    r = txt_from(r, net.n);
    int d;
    if (eat(&r, "/") && eat_int(&r, &d)) {
      p->net_dev = d;
      if (eat(&r, "(") && eat_int(&r, &d)) p->proxy_rank = d;
    }
    p->gdrdma = has(r, "/GDRDMA");
  }
  (*(send ? &p->sends : &p->recvs))++;
}

/* The transport of one connection: NCCL p2p.cc "Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/%s%s%s" (CUMEM, MNNVL,
 * IPC, direct pointer, indirect/%d[%d], /read, /CE), NCCL shm.cc "Channel %02d : %d[%d] -> %d[%d] via SHM/%s/%s", net.cc
 * "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d[(%d)]%s%s%s" and its "[receive]" form (the receiver
 * printing the sender first); 2.18.1 printed busIds in the brackets ("%d[%lx]"). P2P and SHM lines are the
 * sender's. The peer is the rank that is not this one; when this rank is not known, [receive] names the
 * sender first and everything else the receiver second. */
static int rule_channel_via(nccl_acc_comm *c, txt m) {
  txt r = m;
  int ch, a, b;
  if (!eat(&r, "Channel ") || !eat_int(&r, &ch)) return 0;
  if (eat(&r, "/") && !eat_int(&r, &ch)) return 0;
  if (!eat(&r, " : ") || !eat_int(&r, &a)) return 0;
  if (eat(&r, "[")) r = after(r, "]");
  if (!eat(&r, " -> ") || !eat_int(&r, &b)) return 0;
  if (eat(&r, "[")) r = after(r, "]");
  skip_sp(&r);
  int recv = eat(&r, "[receive]");
  if (!recv) eat(&r, "[send]");
  skip_sp(&r);
  if (!eat(&r, "via ")) return 0;
  txt via = trim(r);
  if (!via.n) return 0;
  if (!c) return 1;
  int send = !recv, peer = recv ? a : b;
  if (c->rank >= 0 && a == c->rank && b != c->rank)
    send = 1, peer = b;
  else if (c->rank >= 0 && b == c->rank && a != c->rank)
    send = 0, peer = a;
  add_peer(c, peer, via, send);
  return 1;
}

/* NCCL coll_net.cc "CollNet %02d/%1d : %d [send] via COLLNET/%s/%d%s%s" and "[receive]": the collective network,
 * no peer rank (peer -1). */
static int rule_collnet_via(nccl_acc_comm *c, txt m) {
  txt r = m;
  int ch, me;
  if (!eat(&r, "CollNet ") || !eat_int(&r, &ch) || !eat(&r, "/") || !eat_int(&r, &ch)) return 0;
  if (!eat(&r, " : ") || !eat_int(&r, &me)) return 0;
  skip_sp(&r);
  int recv = eat(&r, "[receive]");
  if (!recv) eat(&r, "[send]");
  skip_sp(&r);
  if (!eat(&r, "via ")) return 0;
  if (!c) return 1;
  add_peer(c, -1, trim(r), !recv);
  c->collnet = 1;
  return 1;
}

static int bit_set(unsigned char *bits, int ch) {
  if (ch < 0 || ch >= RINGBITS) return 0;
  int was = bits[ch / 8] >> (ch % 8) & 1;
  bits[ch / 8] |= (unsigned char)(1u << (ch % 8));
  return !was;
}

/* NCCL rings.cc's dumpLine (rank 0 only): 2.18-2.21 "Channel %02d/%02d : " then " %d" per rank, 2.23+ "Channel
 * %02d/%02d :" then " %*d" per rank, "..." when cut at 128 characters. */
static int rule_ring(parser *ps, int ci, txt m) {
  txt r = m;
  int ch, n;
  if (!eat(&r, "Channel ") || !eat_int(&r, &ch) || !eat(&r, "/") || !eat_int(&r, &n) || !eat(&r, " :")) return 0;
  txt ranks = trim(r);
  for (size_t i = 0; i < ranks.n; i++)
    if (!isdigit((unsigned char)ranks.p[i]) && ranks.p[i] != ' ' && ranks.p[i] != '.') return 0;
  if (ci < 0) return 1;
  nccl_acc_comm *c = &ps->acc->comms[ci];
  if (bit_set(ps->ring_seen[ci], ch)) c->ring_channels = c->ring_channels < 0 ? 1 : c->ring_channels + 1;
  if (ch == 0) {
    /* one space between ranks, whatever the width NCCL padded them to */
    size_t k = 0;
    for (size_t i = 0; i < ranks.n && k + 1 < sizeof c->ring0; i++)
      if (ranks.p[i] != ' ' || (k && c->ring0[k - 1] != ' ')) c->ring0[k++] = ranks.p[i];
    c->ring0[k] = '\0';
  }
  return 1;
}

/* NCCL init.cc "Ring %02d : %d -> %d -> %d" (NCCL_GRAPH, every rank): ring_channels when no dumpLine came. */
static int rule_ring_graph(parser *ps, int ci, txt m) {
  txt r = m;
  int ch, x;
  if (!eat(&r, "Ring ") || !eat_int(&r, &ch) || !eat(&r, " : ") || !eat_int(&r, &x) || !eat(&r, " -> ")) return 0;
  if (ci >= 0 && bit_set(ps->graph_ring_seen[ci], ch)) ps->graph_rings[ci]++;
  return 1;
}

/* NCCL search.cc "Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d" (bw and type are
 * intra/inter), the same from 2.18 to 2.28. */
static int rule_pattern(nccl_acc_comm *c, txt m) {
  txt r = m;
  int pattern, x;
  if (!eat(&r, "Pattern ") || !eat_int(&r, &pattern) || !eat(&r, ", crossNic ") || !eat_int(&r, &x)) return 0;
  if (!c) return 1;
  if (c->ngraphs == NCCL_ACC_MAX_GRAPHS) return 1;
  nccl_acc_graph *g = &c->graph[c->ngraphs++];
  g->pattern = pattern;
  g->nchannels = -1;
  g->bw_intra = g->bw_inter = -1;
  g->type[0] = '\0';
  if (key_int(r, "nChannels", &x)) g->nchannels = x;
  txt bw = after(r, " bw ");
  double d;
  if (eat_double(&bw, &d)) {
    g->bw_intra = d;
    if (eat(&bw, "/") && eat_double(&bw, &d)) g->bw_inter = d;
  }
  txt type = word(after(r, " type "), ", ");
  if (type.n) copy(g->type, sizeof g->type, type);
  return 1;
}

/* NCCL init.cc 2.18 "%d coll channels, %d nvls channels, %d p2p channels, %d p2p channels per peer"; 2.21+ adds
 * "%d collnet channels" after coll (NCCL prints nChannels there). Read as comma-separated "N <name>" items. */
static int rule_channels(nccl_acc_comm *c, txt m) {
  if (!has(m, " coll channels")) return 0;
  txt r = m;
  int any = 0;
  while (r.n) {
    txt item = word(r, ",");
    r = txt_from(r, item.n);
    eat(&r, ",");
    item = trim(item);
    int v;
    if (!eat_int(&item, &v)) continue;
    item = trim(item);
    int *f = NULL;
    if (item.n == 13 && !memcmp(item.p, "coll channels", 13))
      f = c ? &c->coll_channels : NULL;
    else if (item.n == 16 && !memcmp(item.p, "collnet channels", 16))
      f = c ? &c->collnet_channels : NULL;
    else if (item.n == 13 && !memcmp(item.p, "nvls channels", 13))
      f = c ? &c->nvls_channels : NULL;
    else if (item.n == 12 && !memcmp(item.p, "p2p channels", 12))
      f = c ? &c->p2p_channels : NULL;
    else if (item.n == 21 && !memcmp(item.p, "p2p channels per peer", 21))
      f = c ? &c->p2p_per_peer : NULL;
    else
      continue;
    any = 1;
    if (f) *f = v;
  }
  if (c && c->nvls_channels >= 0 && c->nvls != 1) c->nvls = c->nvls_channels > 0;
  return any;
}

/* The rest, each a fixed sentence: NCCL init.cc "Trees%s" (" [%d] %d/%d/%d->%d->%d" per channel); generic.cc (2.26+)
 * "Connected all rings, use ring PXN %d GDR %d" (before: "Connected all rings"); NCCL nvls.cc "NVLS multicast
 * support is %savailable on dev %d[ (NVLS_NCHANNELS %d)]", "Connected NVLS tree"; NCCL init.cc "Communicator has %d
 * nodes which is less than CollNet node threshold %d, disabling CollNet"; NCCL coll_net.cc "rank %d Connected
 * CollNet", "Connected Collnet Chains %s". */
static int rule_sentences(nccl_acc_comm *c, txt m) {
  nccl_acc_comm dummy;
  if (!c) c = &dummy;
  if (starts(m, "Trees") && (m.n == 5 || m.p[5] == ' ')) {
    copy(c->trees, sizeof c->trees, trim(txt_from(m, 5)));
    return 1;
  }
  if (eat(&m, "Connected all rings")) {
    int v;
    txt r = m;
    if (eat(&r, ", use ring PXN ") && eat_int(&r, &v)) {
      c->pxn = v;
      if (eat(&r, " GDR ") && eat_int(&r, &v)) c->gdr = v;
    }
    return 1;
  }
  if (eat(&m, "NVLS multicast support is ")) {
    c->nvls_supported = !starts(m, "not ");
    return 1;
  }
  if (starts(m, "Connected NVLS tree")) {
    c->nvls = 1;
    return 1;
  }
  if (starts(m, "Communicator has ") && has(m, "disabling CollNet")) {
    c->collnet = 0;
    return 1;
  }
  if ((starts(m, "rank ") && has(m, " Connected CollNet")) || starts(m, "Connected Collnet Chains")) {
    c->collnet = 1;
    return 1;
  }
  return 0;
}

/* ---- one line ---- */
static void parse_line(parser *ps, txt line, size_t off) {
  nccl_account *acc = ps->acc;
  acc->lines++;
  line = trim(line);
  size_t tag = find(line, "NCCL INFO ");
  size_t wtag = find(line, "NCCL WARN ");
  int warn = wtag != (size_t)-1 && (tag == (size_t)-1 || wtag < tag);
  if (warn) tag = wtag;
  if (tag == (size_t)-1) {
    /* NCCL debug.cc's VERSION level: the bare "NCCL version 2.28.3+cuda12.9", no prefix */
    txt v = line;
    if (eat(&v, "NCCL version ")) copy(acc->version, sizeof acc->version, word(v, " "));
    return;
  }
  acc->nccl_lines++;
  if (warn) acc->warn_lines++;
  txt msg = trim(txt_from(line, tag + 10));

  /* NCCL debug.cc's prefix: "[timestamp ]host:pid:tid [cudaDev] NCCL INFO " (WARN: "[cudaDev] file:line NCCL WARN ").
   * The thread is the token before the first " [" that ends in ":digits:digits"; the host is never kept. */
  txt prefix = {line.p, tag};
  unsigned long long pid = 0, tid = 0;
  int have_tid = 0;
  for (size_t i = 1; i + 1 < prefix.n && !have_tid; i++) {
    if (prefix.p[i] != ' ' || prefix.p[i + 1] != '[') continue;
    size_t e = i, k = e;
    while (k > 0 && isdigit((unsigned char)prefix.p[k - 1])) k--;
    if (k == e || k == 0 || prefix.p[k - 1] != ':') continue;
    size_t e2 = k - 1, k2 = e2;
    while (k2 > 0 && isdigit((unsigned char)prefix.p[k2 - 1])) k2--;
    if (k2 == e2 || k2 == 0 || prefix.p[k2 - 1] != ':' || e - k > 19 || e2 - k2 > 19) continue;
    txt tp = {prefix.p + k2, e2 - k2}, tt = {prefix.p + k, e - k};
    have_tid = eat_uint64(&tp, &pid, 10) && eat_uint64(&tt, &tid, 10);
  }

  /* account-level lines */
  txt v = msg;
  if (eat(&v, "NCCL version ")) {
    copy(acc->version, sizeof acc->version, word(v, " "));
    return;
  }
  if (eat(&v, "Using network ")) { /* NCCL init.cc "Using network %s" */
    copy(acc->net, sizeof acc->net, trim(v));
    return;
  }
  if (rule_net_using(acc, msg) || rule_net_gdr(acc, msg) || rule_plugin(acc, msg)) return;

  /* lines that name their communicator */
  size_t cp = find(msg, "comm 0x");
  if (cp != (size_t)-1 && (cp == 0 || msg.p[cp - 1] == ' ')) {
    txt cm = txt_from(msg, cp + 5);
    unsigned long long ptr = pointer(cm);
    int start = has(msg, "Init START"), complete = has(msg, "Init COMPLETE");
    int nnodes = has(msg, " nNodes ") && cp == 0;
    int nvls = cp > 0 && starts(msg, "NVLS comm 0x"); /* NCCL nvls.cc "NVLS comm %p headRank %d nHeads %d ..." */
    int ci = comm_index(ps, ptr, start || complete || nnodes || nvls);
    if (ci < 0) {
      if (start || complete || nnodes || nvls)
        acc->unattributed++;
      else
        acc->unknown_lines++;
      return;
    }
    nccl_acc_comm *c = &acc->comms[ci];
    c->lines++;
    if (have_tid) thread_set(ps, pid, tid, ci);
    if (start || complete) {
      read_init(c, msg, complete);
      if (start) ps->started[ci] = 1;
    } else if (nnodes) {
      read_nnodes(c, msg);
    } else if (nvls) {
      c->nvls = 1;
    }
    return;
  }

  /* lines for the communicator of the span or the thread: first recognise, then attribute */
  int kind = rule_channel_via(NULL, msg)    ? 1
             : rule_collnet_via(NULL, msg)  ? 2
             : rule_ring(ps, -1, msg)       ? 3
             : rule_ring_graph(ps, -1, msg) ? 4
             : rule_pattern(NULL, msg)      ? 5
             : rule_channels(NULL, msg)     ? 6
             : rule_sentences(NULL, msg)    ? 7
                                            : 0;
  if (!kind) {
    acc->unknown_lines++;
    return;
  }
  int ci = attribute(ps, off, have_tid, pid, tid);
  if (ci < 0) {
    acc->unattributed++;
    return;
  }
  nccl_acc_comm *c = &acc->comms[ci];
  c->lines++;
  switch (kind) {
  case 1:
    rule_channel_via(c, msg);
    break;
  case 2:
    rule_collnet_via(c, msg);
    break;
  case 3:
    rule_ring(ps, ci, msg);
    break;
  case 4:
    rule_ring_graph(ps, ci, msg);
    break;
  case 5:
    rule_pattern(c, msg);
    break;
  case 6:
    rule_channels(c, msg);
    break;
  default:
    rule_sentences(c, msg);
    break;
  }
}

/* Calls fn on each line of text (the last may have no '\n'); 1 when the text ends inside a line. */
static int each_line(const char *text, size_t len, void (*fn)(parser *, txt, size_t), parser *ps) {
  size_t i = 0;
  while (i < len) {
    const char *nl = memchr(text + i, '\n', len - i);
    size_t end = nl ? (size_t)(nl - text) : len;
    fn(ps, (txt){text + i, end - i}, i);
    if (!nl) return 1;
    i = end + 1;
  }
  return 0;
}

/* First pass: the comm of each span marked 0 is that of the first "Init START" line inside it. */
static void find_span_comms(parser *ps, txt line, size_t off) {
  if (!has(line, "Init START")) return;
  txt cm = after(line, "comm 0x");
  if (!cm.n) return;
  unsigned long long ptr = pointer((txt){cm.p - 2, cm.n + 2});
  for (int i = 0; i < ps->nspans; i++)
    if (!ps->span_comm[i] && ps->spans[i].comm == 0 && off >= ps->spans[i].begin && off < ps->spans[i].end)
      ps->span_comm[i] = ptr;
}

int nccl_log_parse(const char *text, size_t len, const nccl_log_span *spans, int nspans, nccl_account *acc) {
  parser ps_store; /* about 12 KB */
  parser *ps = &ps_store;
  memset(ps, 0, sizeof *ps);
  ps->acc = acc;
  for (int i = 0; i < acc->ncomms && i < NCCL_ACC_MAX_COMMS; i++)
    if (acc->comms[i].comm && acc->comms[i].label[0] && ps->nlabels < NCCL_ACC_MAX_COMMS) {
      ps->labels[ps->nlabels].comm = acc->comms[i].comm;
      memcpy(ps->labels[ps->nlabels].label, acc->comms[i].label, sizeof ps->labels[0].label);
      ps->labels[ps->nlabels].label[sizeof ps->labels[0].label - 1] = '\0';
      ps->nlabels++;
    }
  account_init(acc);
  ps->spans = spans;
  ps->nspans = spans && nspans > 0 ? (nspans < NCCL_LOG_MAX_SPANS ? nspans : NCCL_LOG_MAX_SPANS) : 0;
  int unresolved = 0;
  for (int i = 0; i < ps->nspans; i++) {
    ps->span_comm[i] = spans[i].comm;
    unresolved |= spans[i].comm == 0;
  }
  if (!text) len = 0;
  if (unresolved) each_line(text, len, find_span_comms, ps);
  acc->truncated = each_line(text, len, parse_line, ps);
  for (int i = 0; i < acc->ncomms; i++) {
    nccl_acc_comm *c = &acc->comms[i];
    if (ps->started[i] && !c->init_complete) acc->truncated = 1;
    if (c->ring_channels < 0 && ps->graph_rings[i] > 0) c->ring_channels = ps->graph_rings[i];
    for (int k = 0; k < c->npeers; k++) {
      nccl_acc_peer *p = &c->peer[k];
      if (p->net_dev < 0) continue;
      for (int d = 0; d < acc->nnetdevs; d++)
        if (acc->netdev[d].index == p->net_dev && !strcmp(acc->netdev[d].net, p->net))
          memcpy(p->net_dev_name, acc->netdev[d].name, sizeof p->net_dev_name);
    }
  }
  return acc->ncomms;
}

nccl_acc_comm *nccl_acc_find_comm(nccl_account *acc, unsigned long long comm) {
  for (int i = 0; i < acc->ncomms && i < NCCL_ACC_MAX_COMMS; i++)
    if (acc->comms[i].comm == comm) return &acc->comms[i];
  return NULL;
}

/* ---- JSON: every figure not reported is null ---- */
static int put(cJSON *o, const char *k, cJSON *v) { return v && cJSON_AddItemToObject(o, k, v); }
static int put_str(cJSON *o, const char *k, const char *s) {
  return put(o, k, s[0] ? cJSON_CreateString(s) : cJSON_CreateNull());
}
static int put_int(cJSON *o, const char *k, int v) {
  return put(o, k, v >= 0 ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}
static int put_count(cJSON *o, const char *k, int v) { return put(o, k, cJSON_CreateNumber(v)); }
static int put_dbl(cJSON *o, const char *k, double v) {
  return put(o, k, v >= 0 ? json_number(v) : cJSON_CreateNull());
}

static cJSON *comm_json(const nccl_acc_comm *c) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok = put_str(o, "label", c->label) && put_str(o, "comm_id", c->comm_id) && put_int(o, "rank", c->rank) &&
           put_int(o, "nranks", c->nranks) && put_int(o, "nnodes", c->nnodes) &&
           put_int(o, "local_ranks", c->local_ranks) && put_int(o, "local_rank", c->local_rank) &&
           put_int(o, "cuda_dev", c->cuda_dev) && put_int(o, "nvml_dev", c->nvml_dev) &&
           put_int(o, "mnnvl", c->mnnvl) && put_str(o, "init_func", c->init_func) && put_str(o, "busid", c->busid) &&
           put(o, "init_complete", cJSON_CreateBool(c->init_complete));
  cJSON *ch = cJSON_CreateObject();
  ok = ok && put(o, "channels", ch) && put_int(ch, "coll", c->coll_channels) && put_int(ch, "nvls", c->nvls_channels) &&
       put_int(ch, "collnet", c->collnet_channels) && put_int(ch, "p2p", c->p2p_channels) &&
       put_int(ch, "p2p_per_peer", c->p2p_per_peer) && put_int(ch, "ring", c->ring_channels);
  ok = ok && put_str(o, "ring0", c->ring0) && put_str(o, "trees", c->trees);
  cJSON *gs = cJSON_CreateArray();
  ok = ok && put(o, "graphs", gs);
  for (int i = 0; ok && i < c->ngraphs && i < NCCL_ACC_MAX_GRAPHS; i++) {
    const nccl_acc_graph *g = &c->graph[i];
    cJSON *x = cJSON_CreateObject();
    ok = x && cJSON_AddItemToArray(gs, x) && put_int(x, "pattern", g->pattern) &&
         put_int(x, "nchannels", g->nchannels) && put_dbl(x, "bw_intra", g->bw_intra) &&
         put_dbl(x, "bw_inter", g->bw_inter) && put_str(x, "type", g->type);
  }
  cJSON *ps = cJSON_CreateArray();
  ok = ok && put(o, "peers", ps);
  for (int i = 0; ok && i < c->npeers && i < NCCL_ACC_MAX_PEERS; i++) {
    const nccl_acc_peer *p = &c->peer[i];
    cJSON *x = cJSON_CreateObject();
    ok = x && cJSON_AddItemToArray(ps, x) && put_int(x, "peer", p->peer) && put_str(x, "via", p->via) &&
         put_str(x, "transport", p->transport) && put_str(x, "net", p->net) && put_int(x, "net_dev", p->net_dev) &&
         put_str(x, "net_dev_name", p->net_dev_name) && put_int(x, "gdrdma", p->gdrdma) &&
         put_count(x, "sends", p->sends) && put_count(x, "recvs", p->recvs) && put_int(x, "proxy_rank", p->proxy_rank);
  }
  ok = ok && put_count(o, "peers_dropped", c->peers_dropped) && put_int(o, "nvls", c->nvls) &&
       put_int(o, "nvls_supported", c->nvls_supported) && put_int(o, "collnet", c->collnet) &&
       put_int(o, "pxn", c->pxn) && put_int(o, "gdr", c->gdr);
  if (ok && c->nalgos > 0) {
    cJSON *as = cJSON_CreateArray();
    ok = put(o, "algorithms", as);
    for (int i = 0; ok && i < c->nalgos && i < NCCL_ACC_MAX_ALGOS; i++) {
      const nccl_acc_algo *a = &c->algo[i];
      cJSON *x = cJSON_CreateObject();
      ok = x && cJSON_AddItemToArray(as, x) && put_str(x, "coll", a->coll) && put_dbl(x, "bytes", a->bytes) &&
           put_str(x, "algo", a->algo) && put_str(x, "proto", a->proto) && put_int(x, "channels", a->channels) &&
           put_count(x, "calls", a->calls);
    }
  } else if (ok) {
    ok = put(o, "algorithms", cJSON_CreateNull());
  }
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

cJSON *nccl_account_json(const nccl_account *acc) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok =
      put_str(o, "version", acc->version) && put_str(o, "net", acc->net) && put_str(o, "net_plugin", acc->net_plugin);
  cJSON *ds = cJSON_CreateArray();
  ok = ok && put(o, "net_devices", ds);
  for (int i = 0; ok && i < acc->nnetdevs && i < NCCL_ACC_MAX_NETDEVS; i++) {
    const nccl_acc_netdev *d = &acc->netdev[i];
    cJSON *x = cJSON_CreateObject();
    ok = x && cJSON_AddItemToArray(ds, x) && put_int(x, "index", d->index) && put_str(x, "name", d->name) &&
         put_int(x, "port", d->port) && put_str(x, "link", d->link) && put_int(x, "gdr", d->gdr) &&
         put_str(x, "net", d->net);
  }
  cJSON *cs = cJSON_CreateArray();
  ok = ok && put(o, "communicators", cs);
  for (int i = 0; ok && i < acc->ncomms && i < NCCL_ACC_MAX_COMMS; i++) {
    cJSON *x = comm_json(&acc->comms[i]);
    ok = x && cJSON_AddItemToArray(cs, x);
    if (!ok) cJSON_Delete(x);
  }
  ok = ok && put_count(o, "comms_dropped", acc->comms_dropped) && put_count(o, "lines", acc->lines) &&
       put_count(o, "nccl_lines", acc->nccl_lines) && put_count(o, "warn_lines", acc->warn_lines) &&
       put_count(o, "unknown_lines", acc->unknown_lines) && put_count(o, "unattributed", acc->unattributed) &&
       put(o, "truncated", cJSON_CreateBool(acc->truncated));
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

/* ---- reading it back: null or missing is "not reported", a wrong type is refused with its key ---- */
typedef struct {
  char *why;
  size_t whylen;
  int bad;
} reader;

static void fail(reader *r, const char *where, const char *key, const char *what) {
  if (!r->bad && r->why && r->whylen)
    snprintf(r->why, r->whylen, "NCCL account: %s%s%s %s", where, where[0] ? "." : "", key, what);
  r->bad = 1;
}
static const cJSON *item(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNull(v) ? NULL : v;
}
/* A number, also as json_number writes it into a document not yet printed (a raw item); NAN when not one. */
static double number_of(const cJSON *v) {
  if (cJSON_IsNumber(v)) return v->valuedouble;
  if (cJSON_IsRaw(v) && v->valuestring) {
    char *end;
    double d = strtod(v->valuestring, &end);
    if (end != v->valuestring && !*end) return d;
  }
  return NAN;
}
static void get_int(reader *r, const cJSON *o, const char *where, const char *k, int *out, int absent) {
  const cJSON *v = item(o, k);
  *out = absent;
  if (!v) return;
  if (cJSON_IsBool(v)) {
    *out = cJSON_IsTrue(v);
    return;
  }
  double d = number_of(v);
  if (!(d >= INT_MIN && d <= INT_MAX) || d != floor(d)) {
    fail(r, where, k, "is not an integer");
    return;
  }
  *out = (int)d;
}
static void get_dbl(reader *r, const cJSON *o, const char *where, const char *k, double *out) {
  const cJSON *v = item(o, k);
  *out = -1;
  if (!v) return;
  double d = number_of(v);
  if (!isfinite(d)) {
    fail(r, where, k, "is not a number");
    return;
  }
  *out = d;
}
static void get_str(reader *r, const cJSON *o, const char *where, const char *k, char *out, size_t cap) {
  const cJSON *v = item(o, k);
  out[0] = '\0';
  if (!v) return;
  if (!cJSON_IsString(v) || !v->valuestring) {
    fail(r, where, k, "is not a string");
    return;
  }
  snprintf(out, cap, "%s", v->valuestring);
}
static const cJSON *get_array(reader *r, const cJSON *o, const char *where, const char *k) {
  const cJSON *v = item(o, k);
  if (v && !cJSON_IsArray(v)) {
    fail(r, where, k, "is not an array");
    return NULL;
  }
  return v;
}

static void comm_from_json(reader *r, const cJSON *o, nccl_acc_comm *c) {
  const char *w = "communicators[]";
  comm_init(c, 0);
  if (!cJSON_IsObject(o)) {
    fail(r, "", "communicators[]", "is not an object");
    return;
  }
  get_str(r, o, w, "label", c->label, sizeof c->label);
  get_str(r, o, w, "comm_id", c->comm_id, sizeof c->comm_id);
  get_int(r, o, w, "rank", &c->rank, -1);
  get_int(r, o, w, "nranks", &c->nranks, -1);
  get_int(r, o, w, "nnodes", &c->nnodes, -1);
  get_int(r, o, w, "local_ranks", &c->local_ranks, -1);
  get_int(r, o, w, "local_rank", &c->local_rank, -1);
  get_int(r, o, w, "cuda_dev", &c->cuda_dev, -1);
  get_int(r, o, w, "nvml_dev", &c->nvml_dev, -1);
  get_int(r, o, w, "mnnvl", &c->mnnvl, -1);
  get_str(r, o, w, "init_func", c->init_func, sizeof c->init_func);
  get_str(r, o, w, "busid", c->busid, sizeof c->busid);
  get_int(r, o, w, "init_complete", &c->init_complete, 0);
  const cJSON *ch = item(o, "channels");
  if (ch && !cJSON_IsObject(ch))
    fail(r, w, "channels", "is not an object");
  else if (ch) {
    const char *cw = "communicators[].channels";
    get_int(r, ch, cw, "coll", &c->coll_channels, -1);
    get_int(r, ch, cw, "nvls", &c->nvls_channels, -1);
    get_int(r, ch, cw, "collnet", &c->collnet_channels, -1);
    get_int(r, ch, cw, "p2p", &c->p2p_channels, -1);
    get_int(r, ch, cw, "p2p_per_peer", &c->p2p_per_peer, -1);
    get_int(r, ch, cw, "ring", &c->ring_channels, -1);
  }
  get_str(r, o, w, "ring0", c->ring0, sizeof c->ring0);
  get_str(r, o, w, "trees", c->trees, sizeof c->trees);
  const cJSON *x, *arr = get_array(r, o, w, "graphs");
  cJSON_ArrayForEach(x, arr) {
    if (c->ngraphs == NCCL_ACC_MAX_GRAPHS) break;
    if (!cJSON_IsObject(x)) {
      fail(r, w, "graphs[]", "is not an object");
      return;
    }
    nccl_acc_graph *g = &c->graph[c->ngraphs++];
    const char *gw = "communicators[].graphs[]";
    get_int(r, x, gw, "pattern", &g->pattern, -1);
    get_int(r, x, gw, "nchannels", &g->nchannels, -1);
    get_dbl(r, x, gw, "bw_intra", &g->bw_intra);
    get_dbl(r, x, gw, "bw_inter", &g->bw_inter);
    get_str(r, x, gw, "type", g->type, sizeof g->type);
  }
  arr = get_array(r, o, w, "peers");
  cJSON_ArrayForEach(x, arr) {
    if (c->npeers == NCCL_ACC_MAX_PEERS) {
      c->peers_dropped++;
      continue;
    }
    if (!cJSON_IsObject(x)) {
      fail(r, w, "peers[]", "is not an object");
      return;
    }
    nccl_acc_peer *p = &c->peer[c->npeers++];
    const char *pw = "communicators[].peers[]";
    get_int(r, x, pw, "peer", &p->peer, -1);
    get_str(r, x, pw, "via", p->via, sizeof p->via);
    get_str(r, x, pw, "transport", p->transport, sizeof p->transport);
    get_str(r, x, pw, "net", p->net, sizeof p->net);
    get_int(r, x, pw, "net_dev", &p->net_dev, -1);
    get_str(r, x, pw, "net_dev_name", p->net_dev_name, sizeof p->net_dev_name);
    get_int(r, x, pw, "gdrdma", &p->gdrdma, -1);
    get_int(r, x, pw, "sends", &p->sends, 0);
    get_int(r, x, pw, "recvs", &p->recvs, 0);
    get_int(r, x, pw, "proxy_rank", &p->proxy_rank, -1);
  }
  int dropped;
  get_int(r, o, w, "peers_dropped", &dropped, 0);
  c->peers_dropped += dropped;
  get_int(r, o, w, "nvls", &c->nvls, -1);
  get_int(r, o, w, "nvls_supported", &c->nvls_supported, -1);
  get_int(r, o, w, "collnet", &c->collnet, -1);
  get_int(r, o, w, "pxn", &c->pxn, -1);
  get_int(r, o, w, "gdr", &c->gdr, -1);
  arr = get_array(r, o, w, "algorithms");
  cJSON_ArrayForEach(x, arr) {
    if (c->nalgos == NCCL_ACC_MAX_ALGOS) break;
    if (!cJSON_IsObject(x)) {
      fail(r, w, "algorithms[]", "is not an object");
      return;
    }
    nccl_acc_algo *a = &c->algo[c->nalgos++];
    const char *aw = "communicators[].algorithms[]";
    get_str(r, x, aw, "coll", a->coll, sizeof a->coll);
    get_dbl(r, x, aw, "bytes", &a->bytes);
    get_str(r, x, aw, "algo", a->algo, sizeof a->algo);
    get_str(r, x, aw, "proto", a->proto, sizeof a->proto);
    get_int(r, x, aw, "channels", &a->channels, -1);
    get_int(r, x, aw, "calls", &a->calls, 0);
  }
}

int nccl_account_from_json(const cJSON *j, nccl_account *acc, char *why, size_t whylen) {
  reader r = {why, whylen, 0};
  account_init(acc);
  if (why && whylen) why[0] = '\0';
  if (!cJSON_IsObject(j)) {
    fail(&r, "", "the document", "is not an object");
    return -1;
  }
  get_str(&r, j, "", "version", acc->version, sizeof acc->version);
  get_str(&r, j, "", "net", acc->net, sizeof acc->net);
  get_str(&r, j, "", "net_plugin", acc->net_plugin, sizeof acc->net_plugin);
  const cJSON *x, *arr = get_array(&r, j, "", "net_devices");
  cJSON_ArrayForEach(x, arr) {
    if (acc->nnetdevs == NCCL_ACC_MAX_NETDEVS) break;
    if (!cJSON_IsObject(x)) {
      fail(&r, "", "net_devices[]", "is not an object");
      break;
    }
    nccl_acc_netdev *d = &acc->netdev[acc->nnetdevs++];
    get_int(&r, x, "net_devices[]", "index", &d->index, -1);
    get_str(&r, x, "net_devices[]", "name", d->name, sizeof d->name);
    get_int(&r, x, "net_devices[]", "port", &d->port, -1);
    get_str(&r, x, "net_devices[]", "link", d->link, sizeof d->link);
    get_int(&r, x, "net_devices[]", "gdr", &d->gdr, -1);
    get_str(&r, x, "net_devices[]", "net", d->net, sizeof d->net);
  }
  arr = get_array(&r, j, "", "communicators");
  cJSON_ArrayForEach(x, arr) {
    if (acc->ncomms == NCCL_ACC_MAX_COMMS) {
      acc->comms_dropped++;
      continue;
    }
    comm_from_json(&r, x, &acc->comms[acc->ncomms++]);
    if (r.bad) break;
  }
  int dropped;
  get_int(&r, j, "", "comms_dropped", &dropped, 0);
  acc->comms_dropped += dropped;
  get_int(&r, j, "", "lines", &acc->lines, 0);
  get_int(&r, j, "", "nccl_lines", &acc->nccl_lines, 0);
  get_int(&r, j, "", "warn_lines", &acc->warn_lines, 0);
  get_int(&r, j, "", "unknown_lines", &acc->unknown_lines, 0);
  get_int(&r, j, "", "unattributed", &acc->unattributed, 0);
  get_int(&r, j, "", "truncated", &acc->truncated, 0);
  return r.bad ? -1 : 0;
}
