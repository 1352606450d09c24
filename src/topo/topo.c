/* topo.c: the per-rank side of the topology report: load the live topology, bind near the GPU, ask NVML,
 * write the host's hwloc XML, then gather every rank's record and every host's topo_node to rank 0 (plain
 * MPI calls, checked with DDP_CHECK_MPI) for topo_cluster_report. Errors are returned, never exit(); no
 * CUDA or NCCL call is made here, so it runs before any GPU context exists. */
#include "topo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "envcheck.h"

struct topo_rank {
  const ddp_dist *d;
  topo_options opt;
  hwloc_topology_t topo;
  topo_node *node; /* this host, hwloc + NVML for every GPU */
  int gpu_index;   /* into node->gpu, -1 for the CPU device or a GPU hwloc does not show */
  char busid[20];  /* normalised; "" for the CPU device */
  topo_bind bind;
  int exit_code; /* doctor's verdict, set by topo_rank_report */
};

/* ---- the host's XML ---- */

void topo_xml_path(const ddp_dist *d, const char *xml_dir, char *path, size_t n) {
  char host[256];
  snprintf(host, sizeof host, "%s", d->host);
  for (char *c = host; *c; c++)
    if (*c == '/' || *c == ' ') *c = '_';
  snprintf(path, n, "%s/hwloc-%s-%016llx.xml", xml_dir, host, (unsigned long long)d->host_hash);
}

int topo_xml_dir_check(const ddp_dist *d, const char *xml_dir, int force, char *err, size_t errn) {
  struct stat st;
  if (stat(xml_dir, &st) == 0 && !S_ISDIR(st.st_mode))
    return snprintf(err, errn, "%s is not a directory", xml_dir), -1;
  if (mkdir(xml_dir, 0777) != 0 && errno != EEXIST)
    return snprintf(err, errn, "%s: cannot create the directory: %s", xml_dir, strerror(errno)), -1;
  char path[4096];
  topo_xml_path(d, xml_dir, path, sizeof path);
  return atomic_file_check(path, force, err, errn) == DDP_OK ? 0 : -1;
}

/* Through atomic_file: never half a document, never over anything but a regular file, and only with force. */
static ddp_result xml_write(topo_rank *t) {
  const char *dir = t->opt.xml_dir;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return DDP_FAIL(DDP_ERR_SYSTEM, "--topo-xml %s: cannot create the directory: %s", dir, strerror(errno));
  DDP_TRY(topo_node_annotate(t->topo, t->node));
  char path[4096];
  topo_xml_path(t->d, dir, path, sizeof path);
  char *buf = NULL;
  int len = 0;
  if (hwloc_topology_export_xmlbuffer(t->topo, &buf, &len, 0) != 0)
    return DDP_FAIL(DDP_ERR_HWLOC, "exporting the topology for %s: %s", path, strerror(errno));
  ddp_result r = atomic_file_write(path, buf, len > 0 ? (size_t)len - 1 : 0, t->opt.force); /* len counts the NUL */
  hwloc_free_xmlbuffer(t->topo, buf);
  return r;
}

/* ---- lifecycle ---- */

static ddp_result rank_init(topo_rank *t, const char *gpu_busid) {
  t->node = calloc(1, sizeof *t->node);
  DDP_CHECK_ALLOC(t->node);
  DDP_TRY(topo_load(NULL, &t->topo));
  DDP_TRY(topo_node_scan(t->topo, "live", t->node));
  hwloc_obj_t gpu = NULL;
  if (gpu_busid) {
    if (nvml_busid_normalize(gpu_busid, t->busid, sizeof t->busid) != 0)
      return DDP_FAIL(DDP_ERR_INTERNAL, "GPU bus id \"%s\" is not a PCI bus id", gpu_busid);
    t->gpu_index = topo_gpu_find(t->node, t->busid);
    gpu = hwloc_get_pcidev_by_busidstring(t->topo, t->busid);
  }
  DDP_TRY(topo_bind_apply(t->topo, gpu, t->opt.bind_gpu, &t->bind));
  if (gpu_busid && !gpu)
    snprintf(t->bind.what, sizeof t->bind.what, "none: GPU %s is not in hwloc's topology; cpus %s as launched",
             t->busid, t->bind.before);
  /* NVML on every rank (as NCCL does): cheap next to nvmlInit, and each rank can then map GPU UUIDs. */
  nvml_api api;
  char why[128];
  int ok = nvml_open(&api, why, sizeof why);
  topo_node_query_nvml(t->node, ok ? &api : NULL, why, -1);
  if (ok) nvml_close(&api);
  if (t->opt.xml_dir && t->d->local_rank == 0) DDP_TRY(xml_write(t));
  return DDP_OK;
}

ddp_result topo_rank_init(const ddp_dist *d, const topo_options *opt, const char *gpu_busid, topo_rank **out) {
  *out = NULL;
  topo_rank *t = calloc(1, sizeof *t);
  DDP_CHECK_ALLOC(t);
  t->d = d;
  t->opt = *opt;
  t->gpu_index = -1;
  t->exit_code = 2;
  ddp_result r = rank_init(t, gpu_busid);
  if (r != DDP_OK) {
    topo_rank_free(t);
    ddp_trace(__FILE__, __LINE__);
    return r;
  }
  *out = t;
  return DDP_OK;
}

void topo_rank_free(topo_rank *t) {
  if (!t) return;
  if (t->topo) hwloc_topology_destroy(t->topo);
  free(t->node);
  free(t);
}

void topo_rank_assume_gpu(topo_rank *t) {
  int idx[TOPO_MAX_GPUS];
  int n = topo_visible_gpus(t->node, getenv("CUDA_VISIBLE_DEVICES"), idx, TOPO_MAX_GPUS);
  if (n <= 0) return;
  t->gpu_index = idx[t->d->local_rank % n];
  snprintf(t->busid, sizeof t->busid, "%s", t->node->gpu[t->gpu_index].busid);
  hwloc_obj_t gpu = hwloc_get_pcidev_by_busidstring(t->topo, t->busid);
  if (topo_bind_apply(t->topo, gpu, 0, &t->bind) != DDP_OK) t->bind.near = -1; /* mode 0 cannot fail */
}

int topo_rank_exit_code(const topo_rank *t) { return t->exit_code; }

/* ---- the collective report ---- */

void topo_rank_rec_fill(const topo_rank *t, const ddp_versions *mine, topo_rank_rec *rec) {
  const ddp_dist *d = t->d;
  memset(rec, 0, sizeof *rec);
  rec->rank = d->rank;
  rec->local_rank = d->local_rank;
  rec->local_size = d->local_size;
  rec->host_hash = (unsigned long long)d->host_hash;
  snprintf(rec->host, sizeof rec->host, "%s", d->host);
  rec->leader = d->local_rank == 0;
  rec->gpu_index = t->gpu_index;
  snprintf(rec->gpu_busid, sizeof rec->gpu_busid, "%s", t->busid);
  int idx[TOPO_MAX_GPUS];
  rec->visible_gpus = topo_visible_gpus(t->node, getenv("CUDA_VISIBLE_DEVICES"), idx, TOPO_MAX_GPUS);
  rec->bind = t->bind;
  if (mine) rec->versions = *mine;
  envcheck_nccl_env(rec->nccl_env, sizeof rec->nccl_env);
}

/* The host leaders' nodes to rank 0, which runs the cluster report over every rank's record (`all`, rank 0's,
 * gathered by the caller) into status[]. Buffers are rank 0's. */
static ddp_result nodes_report(topo_rank *t, const topo_rank_rec *all, FILE *out, cJSON **json, int status[3]) {
  const ddp_dist *d = t->d;
  int root = d->rank == 0, nleaders = 0;
  int *counts = root ? calloc((size_t)d->size, sizeof *counts) : NULL;
  int *displs = root ? calloc((size_t)d->size, sizeof *displs) : NULL;
  topo_node *nodes = NULL;
  ddp_result r = DDP_OK;
  if (root && (!all || !counts || !displs)) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (root && r == DDP_OK) {
    for (int k = 0, off = 0; k < d->size; k++) {
      counts[k] = all[k].leader ? (int)sizeof(topo_node) : 0;
      displs[k] = off;
      off += counts[k];
      nleaders += all[k].leader;
    }
    nodes = calloc(nleaders ? (size_t)nleaders : 1, sizeof *nodes);
    if (!nodes) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory for %d host records", nleaders);
  }
  if (r == DDP_OK) {
    int e = MPI_Gatherv(t->node, d->local_rank == 0 ? (int)sizeof(topo_node) : 0, MPI_BYTE, nodes, counts, displs,
                        MPI_BYTE, 0, d->world);
    if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Gatherv(host topologies)", __FILE__, __LINE__);
  }
  if (root && r == DDP_OK)
    status[0] = topo_cluster_report(all, d->size, nodes, nleaders, t->opt.pcie_only, out, json, &status[1], &status[2]);
  free(counts);
  free(displs);
  free(nodes);
  return r;
}

/* A rank that fails here returns at once; main's abort path (MPI_Abort) then ends the peers waiting in a
 * collective. Rank 0's verdict, or its failure, reaches every rank in one broadcast. */
ddp_result topo_rank_report_gathered(topo_rank *t, const topo_rank_rec *all, FILE *out, cJSON **json,
                                     int *consistent) {
  if (json) *json = NULL;
  *consistent = 0;
  int status[3] = {DDP_OK, 0, 1}; /* rank 0's result, consistent, undecided */
  DDP_TRY(nodes_report(t, all, out, json, status));
  DDP_CHECK_MPI(MPI_Bcast(status, 3, MPI_INT, 0, t->d->world));
  if (status[0] != DDP_OK) {
    if (json && *json) cJSON_Delete(*json), *json = NULL;
    return t->d->rank == 0 ? (ddp_result)status[0]
                           : DDP_FAIL((ddp_result)status[0], "the topology report failed on rank 0");
  }
  *consistent = status[1];
  t->exit_code = !status[1] ? 1 : status[2] ? 2 : 0;
  return DDP_OK;
}

ddp_result topo_rank_report(topo_rank *t, const ddp_versions *mine, FILE *out, cJSON **json, int *consistent) {
  if (json) *json = NULL;
  *consistent = 0;
  const ddp_dist *d = t->d;
  topo_rank_rec *rec = malloc(sizeof *rec);
  topo_rank_rec *all = d->rank == 0 ? calloc((size_t)d->size, sizeof *all) : NULL;
  ddp_result r = rec && (d->rank != 0 || all) ? DDP_OK : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (r == DDP_OK) {
    topo_rank_rec_fill(t, mine, rec);
    int e = MPI_Gather(rec, (int)sizeof *rec, MPI_BYTE, all, (int)sizeof *rec, MPI_BYTE, 0, d->world);
    if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Gather(topology records)", __FILE__, __LINE__);
  }
  if (r == DDP_OK) r = topo_rank_report_gathered(t, all, out, json, consistent);
  free(rec);
  free(all);
  return r;
}
