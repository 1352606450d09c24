/* topo.h: the topology and environment report. Per rank: the GPU's PCI identity, PCIe link, bridge path,
 * CPU/NUMA locality and NVLinks (hwloc + NVML); per host: a matrix like `nvidia-smi topo -m` with NCCL's
 * names beside where they differ; per cluster: hosts grouped by host id with one signature each, hosts that
 * differ from the majority flagged, and software versions and NCCL_* variables compared across ranks.
 * Also binds a rank near its GPU, and provides `ddpbench topo` and `ddpbench doctor`.
 * Nothing here may exit, abort, create a CUDA context, or need NVML: without NVML, NVLink is "unknown" and
 * the rest still works. The matrices are pure functions of a topo_node, so they are tested on saved
 * topologies (hwloc XML) and a fake NVML.
 *
 * defines: for main.c and run.c: topo_options, topo_rank_{init,report,exit_code,free};
 *          building blocks (tests, doctor): topo_class, topo_gpu, topo_nic, topo_node, topo_load,
 *          topo_node_scan, topo_node_query_nvml, topo_node_link, topo_node_annotate, topo_pcie_class, the cell/NCCL
 * names, topo_node_print, topo_node_json, topo_bind, topo_rank_rec, topo_cluster_report. */
#ifndef DDPBENCH_TOPO_H
#define DDPBENCH_TOPO_H

#include <stdio.h>

#include <cJSON.h>
#include <hwloc.h>

#include "common.h"
#include "dist.h"
#include "findings.h"
#include "nvml_dl.h"
#include "versions.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== the interface main.c and run.c use ==== */

typedef struct topo_rank topo_rank; /* opaque: this rank's collected topology and binding */
typedef struct {
  int bind_gpu;        /* 1 = --bind gpu, 0 = none, -1 = auto (gpu when the machine shows locality) */
  int pcie_only;       /* --pcie: classify GPU pairs by PCIe path alone */
  const char *xml_dir; /* --topo-xml DIR: each host's local rank 0 writes its hwloc XML there; or NULL */
  int force;          /* replace an existing XML file in xml_dir (regular files only: atomic_file.h) */
} topo_options;

/* Every rank, after MPI_Init and before any CUDA/NCCL context: loads the live topology (with I/O objects),
 * finds this rank's GPU by PCI bus id ("0000:06:00.0" style, any case; NULL for the CPU device), binds this
 * process's CPUs and memory near it as opt->bind_gpu asks, and, on each host's local rank 0, asks NVML about
 * every GPU of the host and writes the host's XML when opt->xml_dir is set. Not collective. `d` and
 * opt->xml_dir must outlive *out. Fails (DDP_ERR_HWLOC) when hwloc cannot load the topology, or when
 * --bind gpu was asked explicitly and the binding failed. */
ddp_result topo_rank_init(const ddp_dist *d, const topo_options *opt, const char *gpu_busid, topo_rank **out);
/* The file a host's local rank 0 writes into xml_dir: DIR/hwloc-HOST-HOSTHASH.xml. */
void topo_xml_path(const ddp_dist *d, const char *xml_dir, char *path, size_t n);
/* Before any work, on each host's local rank 0: xml_dir is a directory (made when missing) and this host's
 * file in it can be written by atomic_file's rules (force to replace one). 0, or -1 with one line in err. */
int topo_xml_dir_check(const ddp_dist *d, const char *xml_dir, int force, char *err, size_t errn);
/* Every rank (collective over d->world): gathers all ranks' topology, binding, versions (`mine`) and NCCL_*
 * environment to rank 0, which prints the human report to `out` (one block) and sets *json to a new cJSON
 * object the caller owns (the run document's "topology"); *json is NULL on other ranks. *consistent is set on
 * every rank: 1 when all ranks agree and nothing is degraded, else 0. json may be NULL (no JSON wanted). */
ddp_result topo_rank_report(topo_rank *t, const ddp_versions *mine, FILE *out, cJSON **json, int *consistent);
/* After topo_rank_report, on every rank: doctor's verdict: 0 all agree, 1 something differs or is degraded,
 * 2 could not decide (GPUs without NVML, report not run). */
int topo_rank_exit_code(const topo_rank *t);
/* Without an engine to name the GPU (doctor): takes the GPU CUDA would give this local rank: the host's GPUs
 * in PCI order, filtered by CUDA_VISIBLE_DEVICES (indices or GPU-UUID prefixes), local_rank modulo their
 * number. No GPU: the rank stays a CPU-device rank. Does not bind. */
void topo_rank_assume_gpu(topo_rank *t);
/* Frees t (NULL is fine). The binding stays. */
void topo_rank_free(topo_rank *t);


/* ==== building blocks ==== */

/* PCIe path classes, best first, as nvidia-smi names them. NV# is not a class: it is shown instead of the
 * PCIe class when a pair has NVLinks. */
typedef enum { TOPO_X = 0, TOPO_PIX, TOPO_PXB, TOPO_PHB, TOPO_NODE, TOPO_SYS, TOPO_UNKNOWN } topo_class;
const char *topo_class_str(topo_class c); /* "X", "PIX", ..., "?" */

#define TOPO_MAX_GPUS 32
#define TOPO_MAX_NICS 16

typedef struct {
  char busid[20]; /* "0000:06:00.0", the key shared with CUDA, NVML and NCCL */
  unsigned vendor, device, class_id;
  float link_gbs;                    /* hwloc: current PCIe link, GB/s per direction; 0 unknown */
  char model[96], uuid[96];          /* from hwloc's GPU OS devices or our annotations; "" when absent */
  char path[256];                    /* bridges from the host bridge down: "HostBridge 0000:[2b-3b] > 2b:00.0 > ..." */
  char cpus[256], numa[64];          /* local cpuset and NUMA nodes as lists ("0-31", "0") */
  int local;                         /* 1 when the locality is narrower than the whole machine */
  int hwloc_to_switch, hwloc_to_cpu; /* links by hwloc's NVLinkBandwidth matrix (0 without one) */
  nvml_gpu nvml;                     /* NVML's answers (nvml.known = 0 when not asked or absent) */
} topo_gpu;

typedef struct {
  char name[32]; /* OpenFabrics name ("mlx5_0"), else the network interface ("eth0"), else the bus id */
  char also[64]; /* the function's other OS devices ("ib0 eth2") */
  char busid[20];
  char kind[16]; /* "OpenFabrics", "Network" or "PCI" (a network-class device without an OS device) */
} topo_nic;

enum { TOPO_NVML_NOT_ASKED = 0, TOPO_NVML_OK, TOPO_NVML_ABSENT };
enum { TOPO_HWLOC_NVLINK_NONE = 0, TOPO_HWLOC_NVLINK_BANDWIDTH, TOPO_HWLOC_NVLINK_SAVED };

/* One host's devices and matrices. Fixed size, no pointers: host leaders send it to rank 0 as bytes. */
typedef struct {
  char source[160]; /* "live" or the XML file */
  char hwloc_version[16];
  int ngpu, nnic, numa_nodes;
  int gpus_dropped, nics_dropped; /* found beyond TOPO_MAX_GPUS / TOPO_MAX_NICS */
  int flat;                       /* no GPU has a locality narrower than the machine (or one NUMA node) */
  int nvml_state;                 /* TOPO_NVML_* */
  char nvml_why[128];             /* why NVML is absent */
  char driver[32], cuda_driver[16];
  int hwloc_nvlink;            /* TOPO_HWLOC_NVLINK_*: NVLink counts found in the topology itself */
  topo_gpu gpu[TOPO_MAX_GPUS]; /* in PCI bus id order (NVML / nvidia-smi order) */
  topo_nic nic[TOPO_MAX_NICS];
  unsigned char pcie[TOPO_MAX_GPUS][TOPO_MAX_GPUS];     /* topo_class by PCIe path */
  short nvlinks[TOPO_MAX_GPUS][TOPO_MAX_GPUS];          /* NV# count: NVML, else hwloc; -1 unknown */
  short nvlinks_hwloc[TOPO_MAX_GPUS][TOPO_MAX_GPUS];    /* from the topology's matrix; -1 without one */
  unsigned char nic_pcie[TOPO_MAX_GPUS][TOPO_MAX_NICS]; /* GPU x NIC topo_class */
  unsigned char nic_nic[TOPO_MAX_NICS][TOPO_MAX_NICS];
} topo_node;

/* Loads a topology with I/O objects (PCI bridges kept): the live machine when xml_path is NULL, else the
 * XML file; hwloc 3.0 XML is rewritten for a 2.x library (version and OS-device types). The opencl, gl and
 * cuda discovery components are left out (they would start GPU runtimes in every rank). On failure the
 * message names the file; DDP_ERR_USAGE for an unreadable or invalid file, DDP_ERR_HWLOC otherwise. */
ddp_result topo_load(const char *xml_path, hwloc_topology_t *out);
/* Fills node from hwloc alone: NVIDIA GPUs (PCI class 0x0302/0x0300 of vendor 0x10de, or any PCI device
 * carrying a cuda/nvml OS device), NICs, the PCIe classes of every GPU pair and GPU x NIC, locality, and
 * NVLink counts from the topology's own matrix: hwloc's NVLinkBandwidth (link counts derived from its
 * per-link rates), else a ddpbenchNVLinks matrix saved by topo_node_annotate. `source` is stored. */
ddp_result topo_node_scan(hwloc_topology_t topo, const char *source, topo_node *node);
/* Asks NVML (api NULL: absent, `why` says why) about GPU `only` or every GPU (only = -1), records driver
 * versions, and recomputes the NVLink matrix. */
void topo_node_query_nvml(topo_node *node, const nvml_api *api, const char *why, int only);
/* Recomputes node->nvlinks from the GPUs' NVML answers (direct links to the peer's bus id, plus
 * min(switch links of both) through NVSwitches), falling back to nvlinks_hwloc, else -1. Peers that are
 * not GPUs of this host count as switch links. Call after changing any gpu[].nvml. */
void topo_node_link(topo_node *node);
/* Writes what NVML told into topology `topo` (the one node was scanned from), so that an XML export keeps it:
 * GPUModel and NVIDIAUUID infos on the GPUs' PCI objects and, when hwloc has no NVLink matrix and NVML knows
 * every GPU's links, a "ddpbenchNVLinks" distance matrix (kind FROM_USER|MEANS_BANDWIDTH) holding each GPU pair's NV#
 * count. Counts, not hwloc's NVLinkBandwidth: through hidden NVSwitches there is no bandwidth per pair to give. */
ddp_result topo_node_annotate(hwloc_topology_t topo, const topo_node *n);
/* PCIe class of two PCI objects of one topology from their bridge chains: same object X; first common
 * ancestor a PCI bridge: PIX when each is at most one bridge below it, else PXB; a host bridge: PHB;
 * different host bridges: NODE when the CPU-side objects holding them have the same NUMA nodes, else SYS. */
topo_class topo_pcie_class(hwloc_obj_t a, hwloc_obj_t b);
/* Index of the GPU with this bus id (any accepted spelling), or -1. */
int topo_gpu_find(const topo_node *node, const char *busid);

/* The nvidia-smi cell of GPU pair (a, b): "X", "NV18", or the PCIe class ("PHB"); pcie_only ignores NVLink. */
const char *topo_cell(const topo_node *n, int a, int b, int pcie_only, char *buf, size_t len);
/* NCCL's path type for the pair: LOC, NVL, NVB (NVLink through a third GPU), PIX, PXB, PHB, SYS. */
const char *topo_nccl_gpu_class(const topo_node *n, int a, int b, int pcie_only);
/* NCCL's path type GPU -> NIC: PIX, PXB, PXN (NVLink to a peer GPU that is PIX/PXB to the NIC), PHB, SYS. */
const char *topo_nccl_nic_class(const topo_node *n, int gpu, int nic, int pcie_only);
/* Prints the host report: matrix with CPU/NUMA affinity, NIC names, NCCL's names where they differ, two lines
 * per GPU (identity; PCIe, bridge path; NVLink), locality. */
void topo_node_print(const topo_node *n, int pcie_only, FILE *out);
/* The legend of the classes, nvidia-smi's and NCCL's (printed once under the matrices). */
void topo_legend_print(FILE *out);
/* The node as JSON (GPUs, NICs, every GPU pair with both its NVLink count and PCIe class); NULL when out of
 * memory. */
cJSON *topo_node_json(const topo_node *n, int pcie_only);
/* Host signature: what must match between hosts, and a one-line summary of it. */
typedef struct {
  char key[4096];    /* canonical: GPU count, models, NVLinks, PCIe, every pair's cell */
  char summary[256]; /* "2x NVIDIA H200 | NVLink 18/18 | PCIe gen5 x16 | pairs NV18 x1" */
  unsigned hash;     /* of key, printed as 8 hex digits */
} topo_sig;
void topo_node_signature(const topo_node *n, int pcie_only, topo_sig *s);
/* Appends to `buf` what is degraded on this host ("GPU1 0000:00:07.0: NVLink 16/18 up; "): NVLinks down on a
 * GPU that has some up (or whose host peers have), PCIe below its maximum generation or width. Returns the
 * count. */
int topo_node_degraded(const topo_node *n, char *buf, size_t len);

/* What binding did. */
typedef struct {
  int mode;                     /* as asked: 1 gpu, 0 none, -1 auto */
  int bound;                    /* 1 when CPUs (and memory) were bound to the GPU's locality */
  int flat;                     /* the machine shows no locality for this GPU */
  int near;                     /* 1 the final CPU binding overlaps the GPU-local cpus, 0 it does not, -1 no GPU */
  char before[128], after[128]; /* CPU binding before and after, as lists */
  char what[400];               /* one line: "bound to GPU-local cpus 0-15 and NUMA 0", "flat: ...", "none: ..." */
} topo_bind;
/* Binds the calling process near GPU object `gpu` (NULL: nothing to bind to) of a live topology: CPUs to its
 * local cpuset (hwloc_set_cpubind, whole process) and memory to its NUMA nodes (hwloc_set_membind), when
 * mode is 1, or -1 and the machine shows locality. Fails only when mode is 1 and CPU binding fails. */
ddp_result topo_bind_apply(hwloc_topology_t topo, hwloc_obj_t gpu, int mode, topo_bind *out);

/* What each rank sends to rank 0. Fixed size, no pointers. */
typedef struct {
  int rank, local_rank, local_size;
  unsigned long long host_hash;
  char host[256];
  int leader;         /* 1 on the rank whose topo_node describes its host */
  int gpu_index;      /* this rank's GPU in its host's list; -1 CPU device or not found */
  char gpu_busid[20]; /* as the engine named it ("" for the CPU device) */
  int visible_gpus;   /* GPUs this rank may use (CUDA_VISIBLE_DEVICES applied) */
  topo_bind bind;
  ddp_versions versions;
  char nccl_env[2048]; /* "NCCL_A=1\nNCCL_B=x\n", sorted */
} topo_rank_rec;
/* The same report from records the caller gathered itself (run.c gathers each rank's identity once, for
 * its rank table and for this): topo_rank_rec_fill fills this rank's record; `all` is rank 0's [d->size]
 * records in rank order (NULL on other ranks). Collective: the host leaders' nodes still travel here. */
void topo_rank_rec_fill(const topo_rank *t, const ddp_versions *mine, topo_rank_rec *rec);
ddp_result topo_rank_report_gathered(topo_rank *t, const topo_rank_rec *all, FILE *out, cJSON **json,
                                     int *consistent);
/* The topology report's findings (the "findings" array of the object topo_cluster_report returns) appended
 * to f as findings of the one type: a run's and doctor's. Out of memory: DDP_ERR_SYSTEM. */
ddp_result topo_findings(const cJSON *topology, finding_list *f);
/* doctor's verdict from findings: 1 when a topology or versions finding is a warning or worse (something
 * differs or is degraded), else 2 when one says undecided, else 0; the same as topo_rank_exit_code. */
int topo_findings_exit_code(const finding_list *f);
/* Rank 0's half of topo_rank_report, without MPI: groups ranks by host id, prints the report to out (NULL:
 * no text), and returns in *json (NULL: not wanted) the "topology" object. ranks[i] is rank i's record;
 * nodes[] holds one record per rank with .leader set, in rank order. Sets *consistent (1 all agree, nothing degraded)
 * and *undecided (1 some check could not run, e.g. GPUs without NVML). */
ddp_result topo_cluster_report(const topo_rank_rec *ranks, int nranks, const topo_node *nodes, int nnodes,
                               int pcie_only, FILE *out, cJSON **json, int *consistent, int *undecided);
/* Number of GPUs of node visible under CUDA_VISIBLE_DEVICES value `cvd` (NULL = unset: all), their indices
 * into idx (up to max). Entries are indices (PCI order) or GPU-UUID prefixes; like CUDA, the list ends at
 * the first entry that names no GPU. */
int topo_visible_gpus(const topo_node *n, const char *cvd, int *idx, int max);
/* printf onto the end of the string in buf (size n), silently truncating. */
void topo_appendf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif
#endif
