/* print.c: a topo_node as people and programs read it: the nvidia-smi style matrix with NCCL's names
 * beside where they differ, per-GPU lines, the legend, the JSON object, the host signature and the list of
 * degraded links. Pure formatting of plain structs: nothing here queries hardware, uses MPI or fails. */
#include "topo.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


/* ---- cells ---- */

const char *topo_cell(const topo_node *n, int a, int b, int pcie_only, char *buf, size_t len) {
  if (a == b) return "X";
  if (!pcie_only && n->nvlinks[a][b] > 0) {
    snprintf(buf, len, "NV%d", n->nvlinks[a][b]);
    return buf;
  }
  return topo_class_str((topo_class)n->pcie[a][b]);
}

/* NCCL has no NODE: GPUs under different host bridges of one NUMA node are PHB to it. */
static const char *nccl_pcie(topo_class c) { return c == TOPO_NODE ? "PHB" : c == TOPO_X ? "LOC" : topo_class_str(c); }

const char *topo_nccl_gpu_class(const topo_node *n, int a, int b, int pcie_only) {
  if (a == b) return "LOC";
  if (!pcie_only) {
    if (n->nvlinks[a][b] > 0) return "NVL";
    for (int c = 0; c < n->ngpu; c++)
      if (c != a && c != b && n->nvlinks[a][c] > 0 && n->nvlinks[c][b] > 0) return "NVB";
  }
  return nccl_pcie((topo_class)n->pcie[a][b]);
}

const char *topo_nccl_nic_class(const topo_node *n, int gpu, int nic, int pcie_only) {
  topo_class c = (topo_class)n->nic_pcie[gpu][nic];
  if (!pcie_only && c > TOPO_PXB)
    for (int p = 0; p < n->ngpu; p++)
      if (p != gpu && n->nvlinks[gpu][p] > 0 && n->nic_pcie[p][nic] <= TOPO_PXB) return "PXN";
  return nccl_pcie(c);
}

static const char *nic_cell(const topo_node *n, int g, int i) { return topo_class_str((topo_class)n->nic_pcie[g][i]); }

/* The cells NCCL names differently, beyond NV# = NVL: "NODE is PHB; GPU0-GPU2 NVB; GPU1-NIC0 PXN". */
static void nccl_differences(const topo_node *n, int pcie_only, char *buf, size_t len) {
  int node = 0, listed = 0;
  buf[0] = 0;
  for (int a = 0; a < n->ngpu; a++) {
    for (int b = 0; b < n->ngpu; b++)
      node |= a != b && n->pcie[a][b] == TOPO_NODE && (pcie_only || n->nvlinks[a][b] <= 0);
    for (int i = 0; i < n->nnic; i++) node |= n->nic_pcie[a][i] == TOPO_NODE;
  }
  if (node) topo_appendf(buf, len, "NODE is PHB");
  for (int a = 0; a < n->ngpu; a++) {
    for (int b = a + 1; b < n->ngpu; b++)
      if (!strcmp(topo_nccl_gpu_class(n, a, b, pcie_only), "NVB") && listed++ < 16)
        topo_appendf(buf, len, "%sGPU%d-GPU%d NVB", buf[0] ? "; " : "", a, b);
    for (int i = 0; i < n->nnic; i++)
      if (!strcmp(topo_nccl_nic_class(n, a, i, pcie_only), "PXN") && listed++ < 16)
        topo_appendf(buf, len, "%sGPU%d-NIC%d PXN", buf[0] ? "; " : "", a, i);
  }
  if (listed > 16) topo_appendf(buf, len, "; %d more", listed - 16);
}

/* ---- per-GPU words ---- */

/* The NIC with the best PCIe class to GPU g (the first of equals), or -1 without NICs. */
static int nearest_nic(const topo_node *n, int g) {
  int best = -1;
  for (int i = 0; i < n->nnic; i++)
    if (best < 0 || n->nic_pcie[g][i] < n->nic_pcie[g][best]) best = i;
  return best;
}

static int nvlink_known(const topo_gpu *g) { return g->nvml.known && g->nvml.nvlink_known; }

static void nvlink_words(const topo_node *n, int gi, char *buf, size_t len) {
  const topo_gpu *g = &n->gpu[gi];
  buf[0] = 0;
  if (nvlink_known(g)) {
    const nvml_gpu *v = &g->nvml;
    if (!v->links_total) {
      snprintf(buf, len, "NVLink: none");
      return;
    }
    snprintf(buf, len, "NVLink %d/%d up", v->links_active, v->links_total);
    if (v->link_version) topo_appendf(buf, len, " v%s", nvml_link_version_str(v->link_version));
    const char *sep = ": ";
    if (v->to_switch) topo_appendf(buf, len, "%sNVSwitch x%d", sep, v->to_switch), sep = ", ";
    for (int p = 0; p < v->npeers; p++) {
      int peer = topo_gpu_find(n, v->peer[p].busid);
      if (peer >= 0)
        topo_appendf(buf, len, "%sGPU%d x%d", sep, peer, v->peer[p].links);
      else
        topo_appendf(buf, len, "%s%s x%d", sep, v->peer[p].busid, v->peer[p].links);
      sep = ", ";
    }
    if (v->to_cpu) topo_appendf(buf, len, "%sCPU x%d", sep, v->to_cpu), sep = ", ";
    if (v->to_unknown) topo_appendf(buf, len, "%sunknown x%d", sep, v->to_unknown);
  } else if (n->hwloc_nvlink) {
    snprintf(buf, len, "NVLink (%s)",
             n->hwloc_nvlink == TOPO_HWLOC_NVLINK_SAVED ? "saved by ddpbench from NVML" : "hwloc NVLinkBandwidth");
    const char *sep = ": ";
    if (g->hwloc_to_switch) topo_appendf(buf, len, "%sNVSwitch x%d", sep, g->hwloc_to_switch), sep = ", ";
    for (int p = 0; p < n->ngpu && !g->hwloc_to_switch; p++)
      if (p != gi && n->nvlinks_hwloc[gi][p] > 0)
        topo_appendf(buf, len, "%sGPU%d x%d", sep, p, n->nvlinks_hwloc[gi][p]), sep = ", ";
    if (g->hwloc_to_cpu) topo_appendf(buf, len, "%sCPU x%d", sep, g->hwloc_to_cpu), sep = ", ";
    if (!strcmp(sep, ": ")) topo_appendf(buf, len, ": none");
  } else {
    snprintf(buf, len, "NVLink: unknown");
  }
}

static void pcie_words(const topo_gpu *g, char *buf, size_t len) {
  buf[0] = 0;
  char a[16], b[16], c[16], d[16]; /* a figure NVML did not measure prints as "gen?"/"x?", never as 0 */
  if (g->nvml.known && g->nvml.pcie_known)
    snprintf(buf, len, "PCIe %s %s (max %s %s), ", nvml_pcie_gen_str(&g->nvml, 0, a, sizeof a),
             nvml_pcie_width_str(&g->nvml, 0, b, sizeof b), nvml_pcie_gen_str(&g->nvml, 1, c, sizeof c),
             nvml_pcie_width_str(&g->nvml, 1, d, sizeof d));
  else
    snprintf(buf, len, "PCIe ");
  if (g->link_gbs > 0)
    topo_appendf(buf, len, "%.2f GB/s (hwloc)", g->link_gbs);
  else
    topo_appendf(buf, len, "link speed unknown");
}

/* ---- the host report ---- */

void topo_node_print(const topo_node *n, int pcie_only, FILE *out) {
  fprintf(out, "host topology (%s, hwloc %s", n->source, n->hwloc_version[0] ? n->hwloc_version : "?");
  if (n->driver[0]) fprintf(out, ", driver %s", n->driver);
  if (n->cuda_driver[0]) fprintf(out, ", CUDA driver %s", n->cuda_driver);
  fprintf(out, ")%s\n", pcie_only ? ": by PCIe path alone (NVLink ignored), the path when NVLink is off or down" : "");
  if (!n->ngpu) {
    fprintf(out, "no NVIDIA GPU (PCI class 0x0302/0x0300, vendor 0x10de) in this topology\n");
    for (int i = 0; i < n->nnic; i++)
      fprintf(out, "NIC%d: %s %s (%s)\n", i, n->nic[i].name, n->nic[i].busid, n->nic[i].kind);
    return;
  }
  /* Column width: the widest cell (classes are at most 4 characters, NV# up to 5). */
  char cell[16];
  int w = 6;
  for (int a = 0; a < n->ngpu; a++)
    for (int b = 0; b < n->ngpu; b++) {
      int len = (int)strlen(topo_cell(n, a, b, pcie_only, cell, sizeof cell)) + 2;
      if (len > w) w = len;
    }
  char label[16];
  fprintf(out, "%-7s", "");
  for (int b = 0; b < n->ngpu; b++) snprintf(label, sizeof label, "GPU%d", b), fprintf(out, "%-*s", w, label);
  for (int i = 0; i < n->nnic; i++) snprintf(label, sizeof label, "NIC%d", i), fprintf(out, "%-*s", w, label);
  fprintf(out, "%-16s%s\n", "CPU Affinity", "NUMA Affinity");
  for (int a = 0; a < n->ngpu; a++) {
    snprintf(label, sizeof label, "GPU%d", a);
    fprintf(out, "%-7s", label);
    for (int b = 0; b < n->ngpu; b++) fprintf(out, "%-*s", w, topo_cell(n, a, b, pcie_only, cell, sizeof cell));
    for (int i = 0; i < n->nnic; i++) fprintf(out, "%-*s", w, nic_cell(n, a, i));
    fprintf(out, "%-15s %s\n", n->gpu[a].cpus, n->gpu[a].numa);
  }
  for (int i = 0; i < n->nnic; i++) {
    snprintf(label, sizeof label, "NIC%d", i);
    fprintf(out, "%-7s", label);
    for (int b = 0; b < n->ngpu; b++) fprintf(out, "%-*s", w, nic_cell(n, b, i));
    for (int j = 0; j < n->nnic; j++) fprintf(out, "%-*s", w, topo_class_str((topo_class)n->nic_nic[i][j]));
    fputc('\n', out);
  }
  for (int i = 0; i < n->nnic; i++)
    fprintf(out, "NIC%d: %s%s%s%s %s (%s)\n", i, n->nic[i].name, n->nic[i].also[0] ? " (" : "", n->nic[i].also,
            n->nic[i].also[0] ? ")" : "", n->nic[i].busid, n->nic[i].kind);
  char words[512];
  nccl_differences(n, pcie_only, words, sizeof words);
  if (words[0]) fprintf(out, "NCCL path types where they differ: %s\n", words);
  if (n->nics_dropped) fprintf(out, "(%d more NICs not shown)\n", n->nics_dropped);
  if (n->gpus_dropped) fprintf(out, "(%d more GPUs not shown)\n", n->gpus_dropped);

  for (int a = 0; a < n->ngpu; a++) {
    const topo_gpu *g = &n->gpu[a];
    fprintf(out, "GPU%d %s %s [%04x:%04x]", a, g->busid, g->model[0] ? g->model : "NVIDIA GPU", g->vendor, g->device);
    if (g->nvml.cc_major >= 0) fprintf(out, " sm_%d%d", g->nvml.cc_major, g->nvml.cc_minor);
    if (g->nvml.memory_bytes) fprintf(out, " %s", ddp_fmt_bytes(words, sizeof words, (double)g->nvml.memory_bytes));
    if (g->uuid[0]) fprintf(out, " %s", g->uuid);
    pcie_words(g, words, sizeof words);
    fprintf(out, "\n     %s; path %s\n", words, g->path);
    nvlink_words(n, a, words, sizeof words);
    int nic = nearest_nic(n, a);
    if (nic >= 0)
      topo_appendf(words, sizeof words, "; nearest NIC%d %s (%s)", nic, n->nic[nic].name,
                   topo_class_str((topo_class)n->nic_pcie[a][nic]));
    fprintf(out, "     %s\n", words);
  }
  if (n->nvml_state == TOPO_NVML_ABSENT) fprintf(out, "NVLink: unknown: NVML unavailable (%s)\n", n->nvml_why);
  if (n->flat)
    fprintf(out, "locality: flat (%d NUMA node%s, no GPU closer to some CPUs than to others)\n", n->numa_nodes,
            n->numa_nodes == 1 ? "" : "s");
}

void topo_legend_print(FILE *out) {
  fprintf(out,
          "legend: X self; NV# a bonded set of # NVLinks (through NVSwitches: the links both GPUs have into the "
          "fabric);\n"
          "  PIX at most one PCIe bridge; PXB several PCIe bridges, no host bridge; PHB a PCIe host bridge "
          "(the CPU);\n"
          "  NODE between PCIe host bridges of one NUMA node; SYS across NUMA nodes (QPI/UPI/xGMI).\n"
          "  NCCL: NV# is NVL; NCCL has no NODE (PHB); NVB = NVLink through another GPU; PXN = NVLink to a GPU\n"
          "  that is PIX/PXB to the NIC.\n");
}

/* ---- JSON ---- */

static cJSON *json_str_or_null(const char *s) { return s && s[0] ? cJSON_CreateString(s) : cJSON_CreateNull(); }

static cJSON *gpu_json(const topo_node *n, int gi) {
  const topo_gpu *g = &n->gpu[gi];
  const nvml_gpu *v = &g->nvml;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  char buf[64];
  cJSON_AddNumberToObject(o, "index", gi);
  cJSON_AddStringToObject(o, "busid", g->busid);
  snprintf(buf, sizeof buf, "%04x:%04x", g->vendor, g->device);
  cJSON_AddStringToObject(o, "pci_id", buf);
  cJSON_AddItemToObject(o, "model", json_str_or_null(g->model));
  cJSON_AddItemToObject(o, "uuid", json_str_or_null(g->uuid));
  if (v->cc_major >= 0) {
    snprintf(buf, sizeof buf, "%d.%d", v->cc_major, v->cc_minor);
    cJSON_AddStringToObject(o, "compute_capability", buf);
  }
  if (v->memory_bytes) cJSON_AddNumberToObject(o, "memory_bytes", (double)v->memory_bytes);
  cJSON *pcie = cJSON_AddObjectToObject(o, "pcie");
  if (pcie) {
    cJSON_AddNumberToObject(pcie, "link_GBps_hwloc", g->link_gbs);
    /* only the figures NVML measured; an absent key is "not measured" */
    if (nvml_gpu_pcie_has(v, NVML_GPU_PCIE_GEN)) cJSON_AddNumberToObject(pcie, "gen", v->pcie_gen);
    if (nvml_gpu_pcie_has(v, NVML_GPU_PCIE_GEN_MAX)) cJSON_AddNumberToObject(pcie, "gen_max", v->pcie_gen_max);
    if (nvml_gpu_pcie_has(v, NVML_GPU_PCIE_WIDTH)) cJSON_AddNumberToObject(pcie, "width", v->pcie_width);
    if (nvml_gpu_pcie_has(v, NVML_GPU_PCIE_WIDTH_MAX)) cJSON_AddNumberToObject(pcie, "width_max", v->pcie_width_max);
    cJSON_AddStringToObject(pcie, "path", g->path);
  }
  cJSON_AddStringToObject(o, "cpus", g->cpus);
  cJSON_AddStringToObject(o, "numa", g->numa);
  int nic = nearest_nic(n, gi);
  if (nic >= 0) cJSON_AddNumberToObject(o, "nearest_nic", nic);
  cJSON *nv = cJSON_AddObjectToObject(o, "nvlink");
  if (nv) {
    int known = nvlink_known(g);
    cJSON_AddStringToObject(nv, "source", known ? "nvml" : n->hwloc_nvlink ? "hwloc xml" : "unknown");
    if (known) {
      cJSON_AddNumberToObject(nv, "active", v->links_active);
      cJSON_AddNumberToObject(nv, "total", v->links_total);
      cJSON_AddStringToObject(nv, "version", v->link_version ? nvml_link_version_str(v->link_version) : "");
      cJSON_AddNumberToObject(nv, "to_switch", v->to_switch);
      cJSON_AddNumberToObject(nv, "to_gpu", v->to_gpu);
      cJSON_AddNumberToObject(nv, "to_cpu", v->to_cpu);
      cJSON_AddNumberToObject(nv, "to_unknown", v->to_unknown);
      cJSON *peers = cJSON_AddArrayToObject(nv, "peers");
      for (int p = 0; peers && p < v->npeers; p++) {
        cJSON *po = cJSON_CreateObject();
        if (!po) break;
        cJSON_AddStringToObject(po, "busid", v->peer[p].busid);
        cJSON_AddNumberToObject(po, "links", v->peer[p].links);
        cJSON_AddItemToArray(peers, po);
      }
    } else if (n->hwloc_nvlink) {
      cJSON_AddNumberToObject(nv, "to_switch", g->hwloc_to_switch);
      cJSON_AddNumberToObject(nv, "to_cpu", g->hwloc_to_cpu);
    } else if (v->error[0]) {
      cJSON_AddStringToObject(nv, "error", v->error);
    }
  }
  return o;
}

cJSON *topo_node_json(const topo_node *n, int pcie_only) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "source", n->source);
  cJSON_AddStringToObject(o, "hwloc", n->hwloc_version);
  cJSON_AddItemToObject(o, "driver", json_str_or_null(n->driver));
  cJSON_AddItemToObject(o, "cuda_driver", json_str_or_null(n->cuda_driver));
  cJSON_AddStringToObject(o, "nvml",
                          n->nvml_state == TOPO_NVML_OK       ? "ok"
                          : n->nvml_state == TOPO_NVML_ABSENT ? "absent"
                                                              : "not asked");
  if (n->nvml_state == TOPO_NVML_ABSENT) cJSON_AddStringToObject(o, "nvml_error", n->nvml_why);
  cJSON_AddStringToObject(o, "hwloc_nvlink_matrix",
                          n->hwloc_nvlink == TOPO_HWLOC_NVLINK_BANDWIDTH ? "NVLinkBandwidth"
                          : n->hwloc_nvlink == TOPO_HWLOC_NVLINK_SAVED   ? "ddpbenchNVLinks"
                                                                         : "none");
  cJSON_AddNumberToObject(o, "numa_nodes", n->numa_nodes);
  cJSON_AddBoolToObject(o, "flat", n->flat);
  cJSON_AddBoolToObject(o, "pcie_only", pcie_only);
  cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
  for (int g = 0; gpus && g < n->ngpu; g++) cJSON_AddItemToArray(gpus, gpu_json(n, g));
  cJSON *nics = cJSON_AddArrayToObject(o, "nics");
  for (int i = 0; nics && i < n->nnic; i++) {
    cJSON *x = cJSON_CreateObject();
    if (!x) break;
    cJSON_AddNumberToObject(x, "index", i);
    cJSON_AddStringToObject(x, "name", n->nic[i].name);
    cJSON_AddStringToObject(x, "also", n->nic[i].also);
    cJSON_AddStringToObject(x, "busid", n->nic[i].busid);
    cJSON_AddStringToObject(x, "kind", n->nic[i].kind);
    cJSON_AddItemToArray(nics, x);
  }
  char cell[16];
  cJSON *pairs = cJSON_AddArrayToObject(o, "gpu_pairs");
  for (int a = 0; pairs && a < n->ngpu; a++)
    for (int b = a + 1; b < n->ngpu; b++) {
      cJSON *p = cJSON_CreateObject();
      if (!p) break;
      cJSON_AddNumberToObject(p, "a", a);
      cJSON_AddNumberToObject(p, "b", b);
      if (n->nvlinks[a][b] >= 0)
        cJSON_AddNumberToObject(p, "nvlinks", n->nvlinks[a][b]);
      else
        cJSON_AddNullToObject(p, "nvlinks");
      if (n->hwloc_nvlink) cJSON_AddNumberToObject(p, "nvlinks_hwloc", n->nvlinks_hwloc[a][b]);
      cJSON_AddStringToObject(p, "pcie", topo_class_str((topo_class)n->pcie[a][b]));
      cJSON_AddStringToObject(p, "class", topo_cell(n, a, b, pcie_only, cell, sizeof cell));
      cJSON_AddStringToObject(p, "nccl", topo_nccl_gpu_class(n, a, b, pcie_only));
      cJSON_AddItemToArray(pairs, p);
    }
  cJSON *gn = cJSON_AddArrayToObject(o, "gpu_nic");
  for (int a = 0; gn && a < n->ngpu; a++)
    for (int i = 0; i < n->nnic; i++) {
      cJSON *p = cJSON_CreateObject();
      if (!p) break;
      cJSON_AddNumberToObject(p, "gpu", a);
      cJSON_AddNumberToObject(p, "nic", i);
      cJSON_AddStringToObject(p, "pcie", topo_class_str((topo_class)n->nic_pcie[a][i]));
      cJSON_AddStringToObject(p, "nccl", topo_nccl_nic_class(n, a, i, pcie_only));
      cJSON_AddItemToArray(gn, p);
    }
  return o;
}

/* ---- signature and degradation ---- */


void topo_node_signature(const topo_node *n, int pcie_only, topo_sig *s) {
  memset(s, 0, sizeof *s);
  char cell[16];
  topo_appendf(s->key, sizeof s->key, "gpus=%d nics=%d", n->ngpu, n->nnic);
  int lo_active = -1, hi_total = 0, known = n->ngpu > 0;
  unsigned gen = 0, width = 0;
  float gbs = 0;
  for (int g = 0; g < n->ngpu; g++) {
    const topo_gpu *x = &n->gpu[g];
    topo_appendf(s->key, sizeof s->key, "|%s", x->model);
    if (nvlink_known(x)) {
      topo_appendf(s->key, sizeof s->key, " nvl=%d/%d", x->nvml.links_active, x->nvml.links_total);
      if (lo_active < 0 || x->nvml.links_active < lo_active) lo_active = x->nvml.links_active;
      if (x->nvml.links_total > hi_total) hi_total = x->nvml.links_total;
    } else {
      known = 0;
    }
    if (x->nvml.known && x->nvml.pcie_known) {
      char a[16], b[16], c[16], d[16];
      topo_appendf(s->key, sizeof s->key, " pcie=%s/%s %s/%s", nvml_pcie_gen_str(&x->nvml, 0, a, sizeof a),
                   nvml_pcie_gen_str(&x->nvml, 1, b, sizeof b), nvml_pcie_width_str(&x->nvml, 0, c, sizeof c),
                   nvml_pcie_width_str(&x->nvml, 1, d, sizeof d));
      /* the summary's lowest link, over the figures measured */
      if (nvml_gpu_pcie_has(&x->nvml, NVML_GPU_PCIE_GEN) && (!gen || x->nvml.pcie_gen < gen)) gen = x->nvml.pcie_gen;
      if (nvml_gpu_pcie_has(&x->nvml, NVML_GPU_PCIE_WIDTH) && (!width || x->nvml.pcie_width < width))
        width = x->nvml.pcie_width;
    }
    if (!gbs || (x->link_gbs > 0 && x->link_gbs < gbs)) gbs = x->link_gbs;
  }
  /* Pair cells, and a histogram of them for the summary. */
  char names[64][16];
  int counts[64], kinds = 0;
  topo_appendf(s->key, sizeof s->key, "|pairs");
  for (int a = 0; a < n->ngpu; a++)
    for (int b = a + 1; b < n->ngpu; b++) {
      const char *c = topo_cell(n, a, b, pcie_only, cell, sizeof cell);
      topo_appendf(s->key, sizeof s->key, " %s", c);
      int k = 0;
      while (k < kinds && strcmp(names[k], c)) k++;
      if (k == kinds && kinds < 64) snprintf(names[kinds], sizeof names[0], "%s", c), counts[kinds++] = 0;
      if (k < kinds) counts[k]++;
    }
  topo_appendf(s->key, sizeof s->key, "|nics");
  for (int a = 0; a < n->ngpu; a++)
    for (int i = 0; i < n->nnic; i++)
      topo_appendf(s->key, sizeof s->key, " %s", topo_class_str((topo_class)n->nic_pcie[a][i]));

  if (!n->ngpu) {
    snprintf(s->summary, sizeof s->summary, "no GPU, %d NIC%s", n->nnic, n->nnic == 1 ? "" : "s");
  } else {
    snprintf(s->summary, sizeof s->summary, "%dx %s", n->ngpu, n->gpu[0].model[0] ? n->gpu[0].model : "NVIDIA GPU");
    for (int g = 1; g < n->ngpu; g++)
      if (strcmp(n->gpu[g].model, n->gpu[0].model)) {
        topo_appendf(s->summary, sizeof s->summary, " (mixed models)");
        break;
      }
    if (known)
      topo_appendf(s->summary, sizeof s->summary, " | NVLink %d/%d", lo_active, hi_total);
    else if (n->hwloc_nvlink)
      topo_appendf(s->summary, sizeof s->summary, " | NVLink from the topology file");
    else
      topo_appendf(s->summary, sizeof s->summary, " | NVLink unknown");
    if (gen && width)
      topo_appendf(s->summary, sizeof s->summary, " | PCIe gen%u x%u", gen, width);
    else if (gen || width)
      topo_appendf(s->summary, sizeof s->summary, gen ? " | PCIe gen%u x?" : " | PCIe gen? x%u", gen ? gen : width);
    else if (gbs > 0)
      topo_appendf(s->summary, sizeof s->summary, " | PCIe %.1f GB/s", gbs);
    for (int k = 0; k < kinds; k++)
      topo_appendf(s->summary, sizeof s->summary, "%s%s x%d", k ? ", " : " | pairs ", names[k], counts[k]);
  }
  uint64_t h = ddp_fnv1a64(s->key, strlen(s->key), DDP_FNV1A64_INIT);
  s->hash = (unsigned)(h ^ (h >> 32)); /* 8 hex digits for people; the key itself is what is compared */
}

int topo_node_degraded(const topo_node *n, char *buf, size_t len) {
  int count = 0, host_up = 0;
  for (int g = 0; g < n->ngpu; g++)
    if (nvlink_known(&n->gpu[g]) && n->gpu[g].nvml.links_active > 0) host_up = 1;
  for (int g = 0; g < n->ngpu; g++) {
    const topo_gpu *x = &n->gpu[g];
    const nvml_gpu *v = &x->nvml;
    if (nvlink_known(x) && v->links_active < v->links_total && host_up) {
      topo_appendf(buf, len, "GPU%d %s: NVLink %d/%d up; ", g, x->busid, v->links_active, v->links_total);
      count++;
    }
    /* Each figure is judged only against a measured maximum: a figure NVML did not give is no downtrain. */
    int gen_low = nvml_gpu_pcie_has(v, NVML_GPU_PCIE_GEN | NVML_GPU_PCIE_GEN_MAX) && v->pcie_gen < v->pcie_gen_max;
    int width_low =
        nvml_gpu_pcie_has(v, NVML_GPU_PCIE_WIDTH | NVML_GPU_PCIE_WIDTH_MAX) && v->pcie_width < v->pcie_width_max;
    if (gen_low || width_low) {
      char a[16], b[16], c[16], d[16];
      topo_appendf(buf, len, "GPU%d %s: PCIe %s %s below its max %s %s%s; ", g, x->busid,
                   nvml_pcie_gen_str(v, 0, a, sizeof a), nvml_pcie_width_str(v, 0, b, sizeof b),
                   nvml_pcie_gen_str(v, 1, c, sizeof c), nvml_pcie_width_str(v, 1, d, sizeof d),
                   width_low ? "" : " (an idle GPU may lower its generation: rerun under load)");
      count++;
    }
  }
  return count;
}
