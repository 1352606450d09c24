/* report.c: rank 0's cluster report from the gathered records: ranks grouped by host id, one signature
 * per host, hosts that differ from the majority and degraded links flagged, versions and NCCL_* compared,
 * ranks per host against GPUs, binding. Analysis first, then text and JSON from the same findings. No MPI
 * and no hardware access here: it is tested with hand-made records. */
#include "topo.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "envcheck.h"

typedef struct {
  unsigned long long hash;
  const char *name;
  char label[280]; /* "vm#c433f1df" */
  int *ranks, nranks;
  int node; /* index into nodes[], -1 when its leader sent none */
  int leaders;
  int group; /* first host with the same signature */
  topo_sig sig;
} host_info;

enum { FIND_DIFFERS, FIND_DEGRADED, FIND_ENV, FIND_UNDECIDED, FIND_NOTE };
static const char *find_kind[] = {"differs", "degraded", "environment", "undecided", "note"};

typedef struct {
  FILE *out;
  cJSON *list; /* findings array, or NULL */
  int counts[5];
} report_notes;

static void note(report_notes *f, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(report_notes *f, int kind, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  f->counts[kind]++;
  if (f->out) fprintf(f->out, "  %-11s %s\n", find_kind[kind], msg);
  if (f->list) {
    cJSON *o = cJSON_CreateObject();
    if (o) {
      cJSON_AddStringToObject(o, "kind", find_kind[kind]);
      cJSON_AddStringToObject(o, "text", msg);
      cJSON_AddItemToArray(f->list, o);
    }
  }
}

/* ---- hosts ---- */

static host_info *hosts_group(const topo_rank_rec *ranks, int nranks, int nnodes, int *nhosts) {
  host_info *h = calloc((size_t)nranks, sizeof *h);
  int *slots = malloc((size_t)nranks * sizeof *slots);
  if (!h || !slots) {
    free(h);
    free(slots);
    return NULL;
  }
  int n = 0, leader = 0;
  for (int r = 0; r < nranks; r++) {
    int k = 0;
    while (k < n && h[k].hash != ranks[r].host_hash) k++;
    if (k == n) {
      h[n].hash = ranks[r].host_hash;
      h[n].name = ranks[r].host;
      snprintf(h[n].label, sizeof h[n].label, "%s#%08llx", ranks[r].host, ranks[r].host_hash >> 32);
      h[n].node = -1;
      h[n].ranks = slots; /* carved below */
      n++;
    }
    h[k].nranks++;
    if (ranks[r].leader) {
      if (h[k].node < 0 && leader < nnodes) h[k].node = leader;
      h[k].leaders++;
      leader++;
    }
  }
  /* One shared array of rank lists, in host order. */
  int off = 0;
  for (int k = 0; k < n; k++) {
    h[k].ranks = slots + off;
    off += h[k].nranks;
    h[k].nranks = 0;
  }
  for (int r = 0; r < nranks; r++)
    for (int k = 0; k < n; k++)
      if (h[k].hash == ranks[r].host_hash) {
        h[k].ranks[h[k].nranks++] = ranks[r].rank;
        break;
      }
  *nhosts = n;
  return h;
}

static void hosts_free(host_info *h) {
  if (h) free(h[0].ranks);
  free(h);
}

/* What makes host h's node differ from the majority's, in words. */
static void node_diff(const topo_node *m, const topo_node *h, int pcie_only, char *buf, size_t len) {
  buf[0] = 0;
  if (h->ngpu != m->ngpu) topo_appendf(buf, len, "%d GPUs (majority %d); ", h->ngpu, m->ngpu);
  int n = h->ngpu < m->ngpu ? h->ngpu : m->ngpu;
  for (int g = 0; g < n; g++)
    if (strcmp(h->gpu[g].model, m->gpu[g].model)) {
      topo_appendf(buf, len, "GPU%d is %s (majority %s); ", g, h->gpu[g].model[0] ? h->gpu[g].model : "unknown",
                   m->gpu[g].model[0] ? m->gpu[g].model : "unknown");
      break;
    }
  for (int g = 0; g < n; g++) {
    const nvml_gpu *a = &h->gpu[g].nvml, *b = &m->gpu[g].nvml;
    if (a->nvlink_known && b->nvlink_known && a->links_active < b->links_active)
      topo_appendf(buf, len, "GPU%d has fewer NVLinks up: %d/%d (majority %d/%d); ", g, a->links_active, a->links_total,
                   b->links_active, b->links_total);
    /* a figure compared only where both hosts measured it: "not measured" is not lower */
    int gen_low = nvml_gpu_pcie_has(a, NVML_GPU_PCIE_GEN) && nvml_gpu_pcie_has(b, NVML_GPU_PCIE_GEN) &&
                  a->pcie_gen < b->pcie_gen;
    int width_low = nvml_gpu_pcie_has(a, NVML_GPU_PCIE_WIDTH) && nvml_gpu_pcie_has(b, NVML_GPU_PCIE_WIDTH) &&
                    a->pcie_width < b->pcie_width;
    if (gen_low || width_low) {
      char w[4][16];
      topo_appendf(buf, len, "GPU%d PCIe %s %s (majority %s %s); ", g, nvml_pcie_gen_str(a, 0, w[0], 16),
                   nvml_pcie_width_str(a, 0, w[1], 16), nvml_pcie_gen_str(b, 0, w[2], 16),
                   nvml_pcie_width_str(b, 0, w[3], 16));
    }
  }
  if (h->nnic != m->nnic) topo_appendf(buf, len, "%d NICs (majority %d); ", h->nnic, m->nnic);
  if (h->ngpu == m->ngpu) {
    int cells = 0;
    char ca[16], cb[16], first[96] = "";
    for (int a = 0; a < n; a++)
      for (int b = a + 1; b < n; b++) {
        const char *x = topo_cell(h, a, b, pcie_only, ca, sizeof ca), *y = topo_cell(m, a, b, pcie_only, cb, sizeof cb);
        if (strcmp(x, y) && !cells++) snprintf(first, sizeof first, "GPU%d-GPU%d %s, majority %s", a, b, x, y);
      }
    if (cells)
      topo_appendf(buf, len, "%d GPU pair%s connected differently (%s); ", cells, cells == 1 ? "" : "s", first);
  }
  size_t l = strlen(buf);
  if (l >= 2)
    buf[l - 2] = 0;
  else
    snprintf(buf, len, "another topology signature");
}

/* ---- the report ---- */

static cJSON *rank_json(const topo_rank_rec *r, int host) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "rank", r->rank);
  cJSON_AddNumberToObject(o, "host", host);
  cJSON_AddNumberToObject(o, "local_rank", r->local_rank);
  cJSON_AddNumberToObject(o, "local_size", r->local_size);
  if (r->gpu_busid[0])
    cJSON_AddStringToObject(o, "gpu_busid", r->gpu_busid);
  else
    cJSON_AddNullToObject(o, "gpu_busid");
  cJSON_AddNumberToObject(o, "gpu_index", r->gpu_index);
  cJSON_AddNumberToObject(o, "visible_gpus", r->visible_gpus);
  cJSON *b = cJSON_AddObjectToObject(o, "binding");
  if (b) {
    cJSON_AddStringToObject(b, "mode", r->bind.mode == 1 ? "gpu" : r->bind.mode == 0 ? "none" : "auto");
    cJSON_AddBoolToObject(b, "bound", r->bind.bound);
    cJSON_AddBoolToObject(b, "flat", r->bind.flat);
    if (r->bind.near >= 0) cJSON_AddBoolToObject(b, "near_gpu", r->bind.near);
    cJSON_AddStringToObject(b, "cpus_before", r->bind.before);
    cJSON_AddStringToObject(b, "cpus", r->bind.after);
    cJSON_AddStringToObject(b, "what", r->bind.what);
  }
  return o;
}

static void host_notes(const host_info *h, const topo_rank_rec *ranks, const topo_node *node, report_notes *f) {
  /* Ranks against GPUs. */
  if (node && node->ngpu) {
    int ngpu = node->ngpu + node->gpus_dropped; /* the host's GPUs, also those beyond the TOPO_MAX_GPUS shown */
    if (h->nranks > ngpu)
      note(f, FIND_NOTE, "host %s: %d ranks on %d GPUs", h->label, h->nranks, ngpu);
    else if (h->nranks < ngpu)
      note(f, FIND_NOTE, "host %s: %d rank%s for %d GPUs (%d idle)", h->label, h->nranks, h->nranks == 1 ? "" : "s",
              ngpu, ngpu - h->nranks);
  }
  for (int i = 0; i < h->nranks; i++) {
    const topo_rank_rec *r = &ranks[h->ranks[i]];
    if (r->gpu_busid[0] && r->gpu_index < 0)
      note(f, FIND_NOTE, "rank %d: GPU %s is not in hwloc's topology of host %s", r->rank, r->gpu_busid, h->label);
    if (r->gpu_index >= 0 && r->bind.near == 0 && node && r->gpu_index < node->ngpu)
      note(f, FIND_NOTE, "rank %d runs on cpus %s, away from its GPU%d (cpus %s): try --bind gpu", r->rank,
              r->bind.after, r->gpu_index, node->gpu[r->gpu_index].cpus);
    for (int j = i + 1; j < h->nranks && r->gpu_index >= 0; j++) {
      const topo_rank_rec *o = &ranks[h->ranks[j]];
      if (o->gpu_index == r->gpu_index)
        note(f, FIND_NOTE, "ranks %d and %d share GPU%d %s (NCCL refuses that)", r->rank, o->rank, r->gpu_index,
                r->gpu_busid);
    }
  }
  if (h->leaders > 1) note(f, FIND_NOTE, "host %s: %d MPI node groups share this host id", h->label, h->leaders);
}

ddp_result topo_cluster_report(const topo_rank_rec *ranks, int nranks, const topo_node *nodes, int nnodes,
                               int pcie_only, FILE *out, cJSON **json, int *consistent, int *undecided) {
  if (json) *json = NULL;
  *consistent = 0;
  *undecided = 1;
  int nhosts = 0;
  host_info *hosts = hosts_group(ranks, nranks, nnodes, &nhosts);
  cJSON *root = json ? cJSON_CreateObject() : NULL;
  if (!hosts || (json && !root)) {
    hosts_free(hosts);
    cJSON_Delete(root);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  /* Signatures, and the majority among hosts with a record: the largest group of equal signatures (the
   * first found on a tie), named by its first host; every host is judged against it. */
  int majority = -1, best = 0;
  for (int k = 0; k < nhosts; k++) {
    hosts[k].group = k;
    if (hosts[k].node < 0) continue;
    topo_node_signature(&nodes[hosts[k].node], pcie_only, &hosts[k].sig);
    for (int j = 0; j < k; j++)
      if (hosts[j].node >= 0 && !strcmp(hosts[j].sig.key, hosts[k].sig.key)) {
        hosts[k].group = hosts[j].group;
        break;
      }
  }
  for (int k = 0; k < nhosts; k++) {
    if (hosts[k].node < 0 || hosts[k].group != k) continue;
    int count = 0;
    for (int j = 0; j < nhosts; j++) count += hosts[j].node >= 0 && hosts[j].group == k;
    if (count > best) best = count, majority = k;
  }

  if (out)
    fprintf(out, "== topology: %d rank%s on %d host%s ==\n", nranks, nranks == 1 ? "" : "s", nhosts,
            nhosts == 1 ? "" : "s");
  /* One matrix per distinct signature, the majority's first, and the legend once under them. */
  int gpus = 0;
  for (int pass = 0; out && pass < 2; pass++)
    for (int k = 0; k < nhosts; k++) {
      if (hosts[k].node < 0 || hosts[k].group != k || (pass == 0) != (k == majority)) continue;
      int same = 0;
      for (int j = 0; j < nhosts; j++) same += hosts[j].node >= 0 && hosts[j].group == k;
      fprintf(out, "-- %s%s (signature %08x, %d host%s):\n", hosts[k].label, k == majority ? ", majority" : "",
              hosts[k].sig.hash, same, same == 1 ? "" : "s");
      topo_node_print(&nodes[hosts[k].node], pcie_only, out);
      gpus += nodes[hosts[k].node].ngpu;
    }
  if (out && gpus) topo_legend_print(out);

  cJSON *jhosts = root ? cJSON_AddArrayToObject(root, "hosts") : NULL;
  if (out) fprintf(out, "hosts:\n");
  char set[256];
  for (int k = 0; k < nhosts; k++) {
    rankset_format(hosts[k].ranks, hosts[k].nranks, set, sizeof set);
    if (out) {
      if (hosts[k].node >= 0)
        fprintf(out, "  %-20s %-14s %08x %s%s\n", hosts[k].label, set, hosts[k].sig.hash, hosts[k].sig.summary,
                hosts[k].group == majority ? "" : "  <- differs");
      else
        fprintf(out, "  %-20s %-14s no topology record\n", hosts[k].label, set);
    }
    cJSON *jh = jhosts ? cJSON_CreateObject() : NULL;
    if (jh) {
      char id[24];
      snprintf(id, sizeof id, "%016llx", hosts[k].hash);
      cJSON_AddStringToObject(jh, "host", hosts[k].name);
      cJSON_AddStringToObject(jh, "host_id", id);
      cJSON_AddStringToObject(jh, "ranks", set);
      if (hosts[k].node >= 0) {
        snprintf(id, sizeof id, "%08x", hosts[k].sig.hash);
        cJSON_AddStringToObject(jh, "signature", id);
        cJSON_AddStringToObject(jh, "summary", hosts[k].sig.summary);
        cJSON_AddBoolToObject(jh, "majority", hosts[k].group == majority);
        cJSON_AddItemToObject(jh, "node", topo_node_json(&nodes[hosts[k].node], pcie_only));
      }
      cJSON_AddItemToArray(jhosts, jh);
    }
  }

  /* Ranks: all of them when few, else only the notes below speak of them. */
  cJSON *jranks = root ? cJSON_AddArrayToObject(root, "ranks") : NULL;
  for (int r = 0; r < nranks; r++) {
    int k = 0;
    while (k < nhosts && hosts[k].hash != ranks[r].host_hash) k++;
    if (out && nranks <= 16) {
      if (r == 0) fprintf(out, "ranks:\n");
      char gpu[48] = "cpu device";
      if (ranks[r].gpu_busid[0]) snprintf(gpu, sizeof gpu, "GPU%d %s", ranks[r].gpu_index, ranks[r].gpu_busid);
      fprintf(out, "  rank %-3d %s local %d/%d  %s (sees %d)  bind: %s\n", ranks[r].rank, hosts[k].label,
              ranks[r].local_rank, ranks[r].local_size, gpu, ranks[r].visible_gpus, ranks[r].bind.what);
    }
    if (jranks) cJSON_AddItemToArray(jranks, rank_json(&ranks[r], k));
  }

  /* Environment. */
  envcheck_rank *env = malloc((size_t)nranks * sizeof *env);
  if (!env) {
    hosts_free(hosts);
    cJSON_Delete(root);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  for (int r = 0; r < nranks; r++) env[r] = (envcheck_rank){ranks[r].rank, &ranks[r].versions, ranks[r].nccl_env};
  cJSON *jenv = root ? cJSON_AddObjectToObject(root, "environment") : NULL;
  if (jenv) {
    cJSON_AddItemToObject(jenv, "versions_rank0", envcheck_versions_json(&ranks[0].versions));
    cJSON_AddStringToObject(jenv, "nccl_env_rank0", ranks[0].nccl_env);
  }
  cJSON *jdiffs = jenv ? cJSON_AddArrayToObject(jenv, "differences") : NULL;
  if (out) {
    fprintf(out, "versions (rank 0): ");
    envcheck_print_versions(&ranks[0].versions, out);
    fprintf(out, "NCCL_* (rank 0): ");
    const char *e = ranks[0].nccl_env;
    if (!e[0]) fprintf(out, "none");
    for (const char *p = e; *p; p++) fputc(*p == '\n' ? (p[1] ? ' ' : '\n') : *p, out);
    if (!e[0]) fputc('\n', out);
  }
  int env_diffs = envcheck_compare(env, nranks, out, jdiffs);
  free(env);

  /* Findings. */
  report_notes f = {out, root ? cJSON_AddArrayToObject(root, "findings") : NULL, {0}};
  if (out) fprintf(out, "findings:\n");
  if (env_diffs)
    note(&f, FIND_ENV, "%d version or NCCL_* item%s between ranks (above)", env_diffs,
            env_diffs == 1 ? " differs" : "s differ");
  char why[1024];
  for (int k = 0; k < nhosts; k++) {
    if (hosts[k].node < 0) {
      note(&f, FIND_UNDECIDED, "host %s sent no topology record", hosts[k].label);
      continue;
    }
    const topo_node *node = &nodes[hosts[k].node];
    if (hosts[k].group != majority) {
      node_diff(&nodes[hosts[majority].node], node, pcie_only, why, sizeof why);
      note(&f, FIND_DIFFERS, "host %s differs from the majority (%s): %s", hosts[k].label, hosts[majority].label,
              why);
    }
    why[0] = 0;
    if (topo_node_degraded(node, why, sizeof why)) {
      size_t l = strlen(why);
      if (l >= 2) why[l - 2] = 0;
      note(&f, FIND_DEGRADED, "host %s: %s", hosts[k].label, why);
    }
    if (node->ngpu && node->nvml_state != TOPO_NVML_OK && !node->hwloc_nvlink)
      note(&f, FIND_UNDECIDED, "host %s: NVLink unknown: NVML unavailable (%s)", hosts[k].label, node->nvml_why);
    for (int g = 0; g < node->ngpu && node->nvml_state == TOPO_NVML_OK; g++)
      if (!node->gpu[g].nvml.known || !node->gpu[g].nvml.nvlink_known)
        note(&f, FIND_UNDECIDED, "host %s: GPU%d %s: NVML could not tell its links (%s)", hosts[k].label, g,
                node->gpu[g].busid, node->gpu[g].nvml.error[0] ? node->gpu[g].nvml.error : "no NVLink query");
    host_notes(&hosts[k], ranks, node, &f);
  }
  *consistent = !f.counts[FIND_DIFFERS] && !f.counts[FIND_DEGRADED] && !f.counts[FIND_ENV];
  *undecided = f.counts[FIND_UNDECIDED] > 0;
  if (out) {
    if (!f.counts[FIND_DIFFERS] && !f.counts[FIND_DEGRADED] && !f.counts[FIND_ENV] && !f.counts[FIND_UNDECIDED] &&
        !f.counts[FIND_NOTE])
      fprintf(out, "  none\n");
    fprintf(out, "verdict: %s\n",
            !*consistent ? "INCONSISTENT: something differs or is degraded"
            : *undecided ? "could not decide (see findings)"
                         : "consistent: all ranks and hosts agree, nothing degraded");
  }
  if (root) {
    cJSON_AddBoolToObject(root, "consistent", *consistent);
    cJSON_AddBoolToObject(root, "undecided", *undecided);
    cJSON_AddBoolToObject(root, "pcie_only", pcie_only);
    *json = root;
  }
  hosts_free(hosts);
  return DDP_OK;
}

/* The report's {kind, text} entries as findings: differs and degraded a warning about a host, environment a
 * warning about the job's versions and NCCL_* variables, undecided and note information. The kind is the
 * subject, so that doctor's verdict reads back from the findings alone (topo_findings_exit_code). */
ddp_result topo_findings(const cJSON *topology, finding_list *f) {
  const cJSON *tf = topology ? cJSON_GetObjectItemCaseSensitive(topology, "findings") : NULL;
  for (const cJSON *x = cJSON_IsArray(tf) ? tf->child : NULL; x; x = x->next) {
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(x, "kind"), *text = cJSON_GetObjectItemCaseSensitive(x, "text");
    if (!cJSON_IsString(kind) || !cJSON_IsString(text)) continue;
    int env = strcmp(kind->valuestring, "environment") == 0;
    int info = strcmp(kind->valuestring, "note") == 0 || strcmp(kind->valuestring, "undecided") == 0;
    DDP_TRY(findings_add(f, env ? "versions" : "topology", info ? SEV_INFO : SEV_WARN, env ? SCOPE_JOB : SCOPE_HOST,
                         kind->valuestring, NAN, NAN, "", "%s", text->valuestring));
  }
  return DDP_OK;
}

int topo_findings_exit_code(const finding_list *f) {
  int undecided = 0;
  for (int i = 0; i < f->n; i++) {
    const finding *x = &f->v[i];
    if (strcmp(x->check, "topology") && strcmp(x->check, "versions")) continue;
    if (x->severity >= SEV_WARN) return 1;
    undecided |= strcmp(x->subject, find_kind[FIND_UNDECIDED]) == 0;
  }
  return undecided ? 2 : 0;
}
