/* nccl_log.h: NCCL's own account of what it did, read from its INFO log (NCCL_DEBUG=INFO with the INIT, GRAPH,
 * TRANSPORT and NET subsystems, written to NCCL_DEBUG_FILE). One parser for every version we meet: it knows the
 * line shapes of NCCL 2.18-2.28 (read from NCCL's source, not copied), tolerates every line it does not know,
 * and leaves a figure "not reported" (-1, "" or NULL in JSON) rather than guess. Pure text in, plain data out:
 * no NCCL, no MPI, no files here, so it is tested and fuzzed on captured and hand-made logs.
 *
 * Attribution. One log file serves a whole process and every communicator in it. A line that names its
 * communicator ("comm 0x55d5c9a0 rank 0 nranks 2 ... commId 0x1234 - Init START", "comm 0x.. rank 0 nRanks 2
 * nNodes 1 localRanks 2 ...") goes to that communicator. A line that does not (channel, ring, tree and
 * transport lines) goes to the communicator of the span the caller marked around it (ddpbench knows which
 * communicator it was initialising or first calling), else to the last communicator named on the same
 * thread id (the "host:pid:tid" prefix), else it is counted as unattributed. (NCCL 2.18.1 names a
 * communicator only in its last init line, "Init COMPLETE": without a span, its init lines are unattributed.)
 * No host name or address is kept: the prefix gives the thread only, the net's device lists give names only,
 * and a text holding an address (a garbled line) is dropped.
 *
 * defines: nccl_acc_peer, nccl_acc_graph, nccl_acc_algo, nccl_acc_netdev, nccl_acc_comm, nccl_account,
 *          nccl_log_span, nccl_log_parse, nccl_account_json, nccl_account_from_json, nccl_acc_find_comm */
#ifndef DDPBENCH_NCCL_LOG_H
#define DDPBENCH_NCCL_LOG_H

#include <stddef.h>

#include <cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCL_ACC_MAX_COMMS 32
#define NCCL_ACC_MAX_PEERS 128  /* (peer, transport) pairs per communicator; more are counted in peers_dropped */
#define NCCL_ACC_MAX_GRAPHS 8
#define NCCL_ACC_MAX_ALGOS 128
#define NCCL_ACC_MAX_NETDEVS 16

/* One (peer, transport) pair of one communicator, from the "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read"
 * lines (and their "[send]"/"[receive]" forms). */
typedef struct {
  int peer;            /* the other rank, in the communicator's numbering */
  char via[64];        /* NCCL's words after "via": "P2P/CUMEM/read", "SHM/direct/direct", "NET/IB/0/GDRDMA" */
  char transport[12];  /* the first word of via: "P2P", "SHM", "NET", "COLLNET", "NVLS"; "" unknown */
  char net[16];        /* NET's second word: "IB", "Socket", a plugin's name; "" when not NET */
  int net_dev;         /* NET's device index (the number after the net's name); -1 not NET or not said */
  char net_dev_name[32]; /* that device's name from the net's "Using [0]mlx5_0:1/IB ..." line; "" unknown */
  int gdrdma;          /* NET: 1 via ".../GDRDMA", 0 without it; -1 not NET */
  int sends, recvs;    /* channel lines seen for each direction (this rank -> peer, peer -> this rank) */
  int proxy_rank;      /* NET through another rank's NIC (PXN: "NET/IB/0(3)/GDRDMA" -> 3); -1 not said */
} nccl_acc_peer;

/* One search result of NCCL's topology graph ("Pattern 4, crossNic 0, nChannels 16, bw 40.0/40.0, type
 * NVL/PIX, sameChannels 1"), in the order logged (ring, tree, collnet..., nvls). */
typedef struct {
  int pattern;        /* NCCL's pattern number; -1 */
  int nchannels;      /* -1 */
  double bw_intra, bw_inter; /* GB/s NCCL assumed; -1 */
  char type[24];      /* "NVL/PIX": the intra-node and inter-node path types; "" */
} nccl_acc_graph;

/* What NCCL chose for one collective of one size (from the profiler plugin, nccl_prof.h, never from a log
 * line written inside a timed call). */
typedef struct {
  char coll[24];      /* NCCL's name: "AllReduce", "ReduceScatter", ... */
  double bytes;       /* the collective's size as nccl-tests gives it (count x type size) */
  char algo[16];      /* "RING", "TREE", "NVLS", "COLLNET_DIRECT", ...; "" not reported */
  char proto[16];     /* "LL", "LL128", "SIMPLE"; "" */
  int channels;       /* channels it ran on; -1 */
  int calls;          /* how many calls of this (coll, bytes) agreed on this choice */
} nccl_acc_algo;

/* A device of the network NCCL uses ("NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE; OOB ib0:..."). */
typedef struct {
  int index;
  char name[32];      /* "mlx5_0", "eth0" */
  int port;           /* -1 */
  char link[12];      /* "IB", "RoCE", "" */
  int gdr;            /* "GPU Direct RDMA Enabled for HCA 0": 1, "Disabled": 0, -1 not said */
  char net[16];       /* the net that listed it: "IB", "Socket" (its "NET/<net> : Using" line); "" */
} nccl_acc_netdev;

typedef struct {
  unsigned long long comm; /* NCCL's comm pointer, as it prints it */
  char comm_id[24];   /* NCCL's commId ("0x1a2b3c4d5e6f7a8b"), "" */
  char label[32];     /* the caller's name for it ("training", "accept node", "collectives"): not from the log */
  int rank, nranks, nnodes, local_ranks, local_rank, cuda_dev; /* -1 each */
  char busid[20];     /* as NCCL printed it ("7000", "0000:07:00.0"), "" */
  char init_func[32]; /* the Init line's first word: "ncclCommInitRank", "ncclCommSplit", ...; "" (2.18 has none) */
  int nvml_dev, mnnvl; /* the Init line's nvmlDev and the nNodes line's MNNVL; -1 each */
  int init_complete;  /* "Init COMPLETE" seen */
  int coll_channels, nvls_channels, collnet_channels, p2p_channels, p2p_per_peer; /* -1: not reported */
  int ring_channels;  /* "Channel 00/24 :  0 1" lines (rank 0 only): distinct channels; else the distinct
                       * channels of the "Ring 00 : 1 -> 0 -> 1" lines every rank writes; -1 */
  char ring0[256];    /* channel 0's ring order ("0 1 2 3"), truncated; "" */
  char trees[512];    /* the "Trees" line's text after "Trees", truncated; "" */
  int ngraphs;
  nccl_acc_graph graph[NCCL_ACC_MAX_GRAPHS];
  int npeers, peers_dropped;
  nccl_acc_peer peer[NCCL_ACC_MAX_PEERS];
  int nvls;           /* 1 used (nvls channels > 0 or NVLS connect lines), 0 not, -1 not reported */
  int nvls_supported; /* 0 "NVLS multicast support is not available", 1 said available, -1 */
  int collnet;        /* as nvls */
  int pxn, gdr;       /* "Connected all rings, use ring PXN 0 GDR 1": each -1 when not logged */
  int lines;          /* lines attributed to it */
  int nalgos;
  nccl_acc_algo algo[NCCL_ACC_MAX_ALGOS];
} nccl_acc_comm;

/* One process's account (one rank). */
typedef struct {
  char version[48];   /* "2.28.3+cuda13.0" from "NCCL version ...", "" */
  char net[16];       /* "Using network IB" -> "IB"; "" */
  char net_plugin[64];/* the plugin line's words ("internal", "libnccl-net.so"), "" */
  int nnetdevs;
  nccl_acc_netdev netdev[NCCL_ACC_MAX_NETDEVS];
  int ncomms, comms_dropped;
  nccl_acc_comm comms[NCCL_ACC_MAX_COMMS];
  int lines;          /* lines read */
  int nccl_lines;     /* lines with NCCL's "NCCL INFO"/"NCCL WARN" tag */
  int unknown_lines;  /* NCCL lines no rule matched (normal: NCCL logs much we do not need) */
  int unattributed;   /* lines for a communicator that none could be attributed to */
  int truncated;      /* the text ended inside a line, or a communicator had Init START without COMPLETE */
  int warn_lines;     /* lines with "NCCL WARN" */
} nccl_account;

/* A byte range of the log the caller knows belongs to communicator `comm` (0: the one whose "Init START"
 * line falls inside it). A line belongs to the narrowest span holding its first byte; only the first
 * NCCL_LOG_MAX_SPANS spans are read. */
#define NCCL_LOG_MAX_SPANS 256
typedef struct {
  size_t begin, end;
  unsigned long long comm;
} nccl_log_span;

/* Parses len bytes of NCCL log text (not NUL-terminated, may end mid-line, may hold anything) into *acc,
 * which it first zeroes and sets to "not reported". Communicators that acc->comms already names by comm
 * pointer keep their label: call with the labels set, or set them after by nccl_acc_find_comm. Returns the
 * number of communicators found (0 when the text has none: a log of another level, garbage). Never fails,
 * never reads past len. */
int nccl_log_parse(const char *text, size_t len, const nccl_log_span *spans, int nspans, nccl_account *acc);

/* The communicator with this comm pointer, or NULL. */
nccl_acc_comm *nccl_acc_find_comm(nccl_account *acc, unsigned long long comm);

/* The account as JSON: {"version", "net", "net_plugin", "net_devices": [{index, name, port, link, gdr}],
 * "communicators": [{"label", "comm_id", "rank", "nranks", "nnodes", "local_ranks", "busid", "init_complete",
 * "channels": {"coll", "nvls", "collnet", "p2p", "p2p_per_peer", "ring"}, "ring0", "trees",
 * "graphs": [{pattern, nchannels, bw_intra, bw_inter, type}], "peers": [{peer, via, transport, net, net_dev,
 * net_dev_name, gdrdma, sends, recvs}], "nvls", "nvls_supported", "collnet", "pxn", "gdr",
 * "algorithms": [{coll, bytes, algo, proto, channels, calls}] or null}], "lines", "unknown_lines",
 * "unattributed", "truncated"}. Every figure not reported is null (never -1 or ""). The comm pointer is not
 * written (it differs per run and says nothing). NULL when out of memory.
 * Added keys (fields added after the contract): net_devices[].net; communicators[].local_rank, cuda_dev,
 * nvml_dev, mnnvl, init_func, peers_dropped, peers[].proxy_rank; top level nccl_lines, warn_lines,
 * comms_dropped. init_complete and truncated are JSON booleans. */
cJSON *nccl_account_json(const nccl_account *acc);
/* Reads such an object back (compare, tests). Unknown keys are ignored, missing ones are "not reported".
 * 0, or -1 with the reason in why. */
int nccl_account_from_json(const cJSON *j, nccl_account *acc, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
