/* soak_doc.c: a soak's document, for `accept --soak` and `judge` (soak_doc.h). */
#include "soak_doc.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "hosts.h"

void soak_layout_free(soak_layout *l) {
  free(l->pairs);
  free(l->node_host);
  memset(l, 0, sizeof *l);
}

ddp_result soak_params_for(const char *model, const char *expect_file, soak_params *p) {
  soak_params_default(p);
  expect_set e;
  expect_builtin(&e, model ? model : "", 0, 0, 0);
  if (expect_file && expect_file[0]) DDP_TRY(expect_load_file(&e, expect_file));
  p->ecc_corrected_per_min = e.v[EXP_SOAK_ECC_CORRECTED];
  p->pcie_replay_per_min = e.v[EXP_SOAK_PCIE_REPLAY];
  p->nvlink_crc_per_s = e.v[EXP_SOAK_NVLINK_CRC];
  p->nvlink_replay_per_interval = e.v[EXP_SOAK_NVLINK_REPLAY];
  p->nvlink_recovery_per_interval = e.v[EXP_SOAK_NVLINK_RECOVERY];
  return DDP_OK;
}

/* ---- verdicts ---- */

/* A host every one of whose measured pairs dropped, while a pair without it did not: named (the pairs alone
 * count against neither host). */
static ddp_result localise(const soak_series *S, const soak_layout *lay, const finding_list *f, finding_list *out) {
  int nodes = S->nlink - lay->npairs;
  if (lay->npairs < 2) return DDP_OK;
  int *dropped = calloc((size_t)lay->npairs, sizeof *dropped), *first = calloc((size_t)lay->npairs, sizeof *first);
  double *t = calloc((size_t)lay->npairs, sizeof *t);
  if (!dropped || !first || !t) {
    free(dropped), free(first), free(t);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  int any_clean = 0;
  for (int q = 0; q < lay->npairs; q++) {
    for (int k = 0; k < f->n; k++)
      if (!strcmp(f->v[k].check, "soak_busbw_drop") && !strcmp(f->v[k].subject, S->link[nodes + q].name))
        dropped[q] = 1, first[q] = f->v[k].interval, t[q] = f->v[k].t_s;
    any_clean |= !dropped[q];
  }
  ddp_result r = DDP_OK;
  for (int n = 0; any_clean && n < lay->nnodes && r == DDP_OK; n++) {
    int in = 0, bad = 0, fi = 0;
    double ft = NAN;
    for (int q = 0; q < lay->npairs; q++) {
      if (lay->pairs[q].a != n && lay->pairs[q].b != n) continue;
      in++;
      if (dropped[q]) {
        bad++;
        if (!fi || first[q] < fi) fi = first[q], ft = t[q];
      }
    }
    if (!in || bad < in) continue;
    const char *h = lay->node_host[n];
    r = findings_add_at(out, h, -1, "soak_host_link", SEV_FAIL, SCOPE_HOST, h, bad, in, "",
                        "busbw dropped in all %d of its node pairs, from interval %d (%.0f s), while pairs without it "
                        "held: the host's network link degraded during the soak",
                        in, fi, ft);
    if (r == DDP_OK) out->v[out->n - 1].interval = fi, out->v[out->n - 1].t_s = ft;
  }
  free(dropped), free(first), free(t);
  return r;
}

ddp_result soak_doc_judge(const soak_series *S, const soak_params *p, const soak_layout *lay, finding_list *f,
                          soak_gpu_steady *gs) {
  soak_params prm = *p;
  soak_verdicts v;
  soak_verdicts_init(&v);
  memset(gs, 0, (size_t)S->ngpu * sizeof *gs);
  ddp_result r = soak_judge_counters(S, &prm, &v);
  if (r == DDP_OK) r = soak_judge_throttle(S, &prm, &v, gs);
  if (r == DDP_OK) r = soak_judge_steady(S, &prm, &v, gs);
  if (r == DDP_OK) r = soak_judge_links(S, &prm, gs, &v);
  if (r == DDP_OK) r = soak_judge_ranks(S, &prm, &v);
  for (int k = 0; r == DDP_OK && k < v.f.n; k++) r = findings_push(f, &v.f.v[k]);
  if (r == DDP_OK) r = localise(S, lay, &v.f, f);
  soak_verdicts_free(&v);
  return r;
}

ddp_result soak_doc_summary(const soak_series *S, const soak_gpu_steady *gs, const char *prec, result_doc *d) {
  for (int k = 0; k < S->ngpu; k++) {
    char rank[16];
    snprintf(rank, sizeof rank, "%d", S->gpu[k].rank);
    DDP_TRY(result_add(d, "soak", "world", "equilibrium_tflops", "TFLOP/s", BETTER_HIGHER, gs[k].equilibrium, NULL,
                       NULL, 0, "rank", rank, "precision", prec, NULL));
    DDP_TRY(result_add(d, "soak", "world", "first_minute_tflops", "TFLOP/s", BETTER_HIGHER, gs[k].first_minute, NULL,
                       NULL, 0, "rank", rank, "precision", prec, NULL));
    DDP_TRY(result_add(d, "soak", "world", "first_throttle_s", "s", BETTER_HIGHER,
                       gs[k].first_throttle_interval ? gs[k].first_throttle_s : NAN, NULL, NULL, 0, "rank", rank, NULL));
    if (!gs[k].first_throttle_interval)
      DDP_TRY(result_set_why(d, "no failing or warning throttle reason during the soak"));
  }
  return DDP_OK;
}

ddp_result soak_doc_series_records(const soak_series *S, const char *prec, int i, int with_interval, result_doc *doc) {
  char iv[16], ts[32], rank[16];
  snprintf(iv, sizeof iv, "%d", i + 1);
  snprintf(ts, sizeof ts, "%.3f", S->t1[i] - S->t0[0]);
#define ADD(group, metric, unit, better, v, ...)                                                                    \
  DDP_TRY(with_interval ? result_add(doc, "soak", group, metric, unit, better, v, NULL, NULL, 0, "interval", iv, "t_s", \
                                     ts, __VA_ARGS__, NULL)                                                         \
                        : result_add(doc, "soak", group, metric, unit, better, v, NULL, NULL, 0, __VA_ARGS__, NULL))
  for (int k = 0; k < S->ngpu; k++) {
    const soak_gpu_sample *g = soak_gpu_at(S, i, k);
    snprintf(rank, sizeof rank, "%d", S->gpu[k].rank);
    ADD("world", "gemm_tflops", "TFLOP/s", BETTER_HIGHER, g->tflops, "rank", rank, "precision", prec);
    ADD("world", "sm_clock_mhz", "MHz", BETTER_NONE, g->sm_mhz, "rank", rank);
    ADD("world", "power_w", "W", BETTER_NONE, g->power_w, "rank", rank);
    ADD("world", "temperature_c", "C", BETTER_NONE, g->temp_c, "rank", rank);
    ADD("world", "throttle_reasons", "", BETTER_NONE, g->reasons_measured ? (double)g->reasons : NAN, "rank", rank);
    ADD("world", "compute_ms", "ms", BETTER_LOWER, *soak_step_at(S, i, k), "rank", rank);
  }
  for (int l = 0; l < S->nlink; l++) {
    char group[128];
    snprintf(group, sizeof group, "%s:%s", S->link[l].scope == SCOPE_PAIR ? "pair" : "node", S->link[l].name);
    double v = *soak_busbw_at(S, i, l);
    if (!isfinite(v) && S->link[l].scope == SCOPE_PAIR) continue; /* pairs run every --pair-every cycles */
    ADD(group, "busbw_gbs", "GB/s", BETTER_HIGHER, v, "link", S->link[l].name);
  }
#undef ADD
  return DDP_OK;
}

ddp_result soak_doc_last_records(const soak_series *S, const char *prec, result_doc *doc) {
  if (!S->nint) return DDP_OK;
  int i = S->nint - 1;
  DDP_TRY(soak_doc_series_records(S, prec, i, 0, doc));
  DDP_TRY(result_add(doc, "soak", "world", "interval", "", BETTER_NONE, i + 1, NULL, NULL, 0, NULL));
  DDP_TRY(result_add(doc, "soak", "world", "elapsed_s", "s", BETTER_NONE, S->t1[i] - S->t0[0], NULL, NULL, 0, NULL));
  return result_add(doc, "soak", "world", "intervals_complete", "", BETTER_NONE, S->nint, NULL, NULL, 0, NULL);
}

/* ---- the section: one table of a GPU's per-interval arrays, written and read back by the same rows ---- */

typedef enum { F_DOUBLE, F_COUNTER, F_UINT, F_REASONS, F_INT, F_STEP } field_kind;
/* F_DOUBLE: NaN when not measured; F_COUNTER: a soak_counter; F_UINT: 0 when not measured; F_REASONS: with
 * reasons_measured; F_INT: a plain int written as it is (absent in an older file: left at its cleared value);
 * F_STEP: the rank's compute time from the series' step_ms. */
static const struct {
  const char *name;
  field_kind kind;
  size_t off;
} GPU_FIELDS[] = {
    {"tflops", F_DOUBLE, offsetof(soak_gpu_sample, tflops)},
    {"sm_clock_mhz", F_DOUBLE, offsetof(soak_gpu_sample, sm_mhz)},
    {"power_w", F_DOUBLE, offsetof(soak_gpu_sample, power_w)},
    {"temperature_c", F_DOUBLE, offsetof(soak_gpu_sample, temp_c)},
    {"throttle_reasons", F_REASONS, offsetof(soak_gpu_sample, reasons)},
    {"ecc_corrected", F_COUNTER, offsetof(soak_gpu_sample, ecc_corrected)},
    {"ecc_uncorrected", F_COUNTER, offsetof(soak_gpu_sample, ecc_uncorrected)},
    {"remap_pending", F_COUNTER, offsetof(soak_gpu_sample, remap_pending)},
    {"pcie_replay", F_COUNTER, offsetof(soak_gpu_sample, pcie_replay)},
    {"pcie_gen", F_UINT, offsetof(soak_gpu_sample, pcie_gen)},
    {"pcie_width", F_UINT, offsetof(soak_gpu_sample, pcie_width)},
    {"compute_ms", F_STEP, 0},
    {"under_load", F_INT, offsetof(soak_gpu_sample, under_load)},
    {"xid_measured", F_INT, offsetof(soak_gpu_sample, xid_measured)},
    {"nvlinks_read", F_INT, offsetof(soak_gpu_sample, nlinks)},
};
enum { NGPU_FIELDS = (int)(sizeof GPU_FIELDS / sizeof GPU_FIELDS[0]) };

static double field_get(const soak_series *S, int i, int k, int q) {
  const soak_gpu_sample *x = soak_gpu_at(S, i, k);
  const char *p = (const char *)x + GPU_FIELDS[q].off;
  switch (GPU_FIELDS[q].kind) {
  case F_DOUBLE: return *(const double *)p;
  case F_COUNTER: return ((const soak_counter *)p)->measured ? ((const soak_counter *)p)->delta : NAN;
  case F_UINT: return *(const unsigned *)p ? (double)*(const unsigned *)p : NAN;
  case F_REASONS: return x->reasons_measured ? (double)x->reasons : NAN;
  case F_INT: return *(const int *)p;
  case F_STEP: return *soak_step_at(S, i, k);
  }
  return NAN;
}

static void field_set(soak_series *S, int i, int k, int q, double v) {
  soak_gpu_sample *x = soak_gpu_at(S, i, k);
  char *p = (char *)x + GPU_FIELDS[q].off;
  int fin = isfinite(v);
  switch (GPU_FIELDS[q].kind) {
  case F_DOUBLE: *(double *)p = v; break;
  case F_COUNTER: ((soak_counter *)p)->delta = fin ? v : 0, ((soak_counter *)p)->measured = fin; break;
  case F_UINT: *(unsigned *)p = fin && v > 0 ? (unsigned)v : 0; break;
  case F_REASONS: x->reasons = fin && v > 0 ? (unsigned long long)v : 0, x->reasons_measured = fin; break;
  case F_INT: *(int *)p = fin ? (int)v : 0; break;
  case F_STEP: *soak_step_at(S, i, k) = v; break;
  }
}

static cJSON *num(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

cJSON *soak_doc_steady_json(const soak_gpu_steady *s) {
  cJSON *y = cJSON_CreateObject();
  if (!y) return NULL;
  cJSON_AddItemToObject(y, "first_minute_tflops", num(s->first_minute));
  cJSON_AddItemToObject(y, "equilibrium_tflops", num(s->equilibrium));
  cJSON_AddItemToObject(y, "peers_tflops", num(s->peers));
  cJSON_AddItemToObject(y, "sink", num(s->sink));
  cJSON_AddItemToObject(y, "first_throttle_s", num(s->first_throttle_interval ? s->first_throttle_s : NAN));
  cJSON_AddItemToObject(y, "first_throttle_interval",
                        s->first_throttle_interval ? cJSON_CreateNumber(s->first_throttle_interval) : cJSON_CreateNull());
  return y;
}

/* One GPU's object: its identity, the table's arrays, its Xid events and NVLinks, its steady state. */
static cJSON *gpu_json(const soak_series *S, int k, const soak_gpu_steady *gs) {
  const soak_gpu_id *id = &S->gpu[k];
  cJSON *g = cJSON_CreateObject();
  if (!g) return NULL;
  cJSON_AddNumberToObject(g, "rank", id->rank);
  cJSON_AddNumberToObject(g, "index", id->index);
  cJSON_AddStringToObject(g, "host", id->host);
  cJSON_AddStringToObject(g, "gpu", id->busid);
  cJSON_AddStringToObject(g, "model", id->model);
  for (int q = 0; q < NGPU_FIELDS; q++) {
    cJSON *a = cJSON_AddArrayToObject(g, GPU_FIELDS[q].name);
    for (int i = 0; a && i < S->nint; i++) cJSON_AddItemToArray(a, num(field_get(S, i, k, q)));
  }
  const soak_gpu_sample *x0 = S->nint ? soak_gpu_at(S, S->nint - 1, k) : NULL;
  cJSON_AddItemToObject(g, "pcie_gen_max", num(x0 && x0->pcie_gen_max ? x0->pcie_gen_max : NAN));
  cJSON_AddItemToObject(g, "pcie_width_max", num(x0 && x0->pcie_width_max ? x0->pcie_width_max : NAN));
  cJSON *xids = cJSON_AddArrayToObject(g, "xids");
  for (int i = 0; xids && i < S->nint; i++) {
    const soak_gpu_sample *x = soak_gpu_at(S, i, k);
    for (int e = 0; e < x->nxid; e++) {
      cJSON *xe = cJSON_CreateObject();
      cJSON_AddNumberToObject(xe, "xid", x->xid[e].xid);
      cJSON_AddNumberToObject(xe, "t_s", x->xid[e].t);
      cJSON_AddNumberToObject(xe, "interval", i + 1);
      cJSON_AddItemToArray(xids, xe);
    }
  }
  cJSON *nv = cJSON_AddArrayToObject(g, "nvlinks");
  int nl = x0 ? x0->nlinks : 0;
  for (int l = 0; nv && l < nl; l++) {
    cJSON *lk = cJSON_CreateObject();
    cJSON_AddNumberToObject(lk, "link", l);
    cJSON_AddBoolToObject(lk, "absent", x0->link[l].absent);
    cJSON *up = cJSON_AddArrayToObject(lk, "up"), *crc = cJSON_AddArrayToObject(lk, "crc"),
          *rep = cJSON_AddArrayToObject(lk, "replay"), *recv = cJSON_AddArrayToObject(lk, "recovery");
    for (int i = 0; i < S->nint; i++) {
      const soak_nvlink *y = l < soak_gpu_at(S, i, k)->nlinks ? &soak_gpu_at(S, i, k)->link[l] : NULL;
      cJSON_AddItemToArray(up, num(y && y->state >= 0 && !y->absent ? y->state : NAN));
      cJSON_AddItemToArray(crc, num(y && y->crc.measured ? y->crc.delta : NAN));
      cJSON_AddItemToArray(rep, num(y && y->replay.measured ? y->replay.delta : NAN));
      cJSON_AddItemToArray(recv, num(y && y->recovery.measured ? y->recovery.delta : NAN));
    }
    cJSON_AddItemToArray(nv, lk);
  }
  if (gs) cJSON_AddItemToObject(g, "steady", soak_doc_steady_json(&gs[k]));
  return g;
}

ddp_result soak_doc_series_json(const soak_series *S, const soak_gpu_steady *gs, cJSON *o) {
  cJSON *iv = cJSON_AddArrayToObject(o, "intervals");
  for (int i = 0; iv && i < S->nint; i++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "interval", i + 1);
    cJSON_AddNumberToObject(x, "t0_s", S->t0[i] - S->t0[0]);
    cJSON_AddNumberToObject(x, "t1_s", S->t1[i] - S->t0[0]);
    cJSON_AddItemToArray(iv, x);
  }
  cJSON *gpus = cJSON_AddArrayToObject(o, "gpus");
  for (int k = 0; gpus && k < S->ngpu; k++) cJSON_AddItemToArray(gpus, gpu_json(S, k, gs));
  cJSON *links = cJSON_AddArrayToObject(o, "links");
  for (int l = 0; links && l < S->nlink; l++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "name", S->link[l].name);
    cJSON_AddStringToObject(x, "kind", S->link[l].scope == SCOPE_PAIR ? "pair" : "node");
    cJSON *a = cJSON_AddArrayToObject(x, "busbw_gbs");
    for (int i = 0; a && i < S->nint; i++) cJSON_AddItemToArray(a, num(*soak_busbw_at(S, i, l)));
    cJSON_AddItemToArray(links, x);
  }
  return iv && gpus && links ? DDP_OK : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
}

/* ---- the section read back ---- */

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), DDP_ERR_USAGE)

/* x[i] of array a as a number: NaN for null; -1 (and err) when a is not an array of nint numbers or nulls. */
static int array_get(const cJSON *a, int nint, int i, double *v) {
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != nint) return -1;
  const cJSON *e = cJSON_GetArrayItem(a, i);
  if (cJSON_IsNull(e)) return *v = NAN, 0;
  if (!cJSON_IsNumber(e)) return -1;
  *v = e->valuedouble;
  return 0;
}

static const char *str_of(const cJSON *o, const char *key) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* The GPU's figures, Xids and NVLinks, interval by interval. */
static ddp_result gpu_load(const cJSON *g, int k, soak_series *S, char *err, size_t errlen) {
  for (int q = 0; q < NGPU_FIELDS; q++) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(g, GPU_FIELDS[q].name);
    if (!a && GPU_FIELDS[q].kind == F_INT) continue; /* a section written before it was */
    for (int i = 0; i < S->nint; i++) {
      double v;
      if (array_get(a, S->nint, i, &v))
        return BAD("soak.gpus[%d].%s is not an array of %d numbers", k, GPU_FIELDS[q].name, S->nint);
      field_set(S, i, k, q, v);
    }
  }
  const cJSON *gm = cJSON_GetObjectItemCaseSensitive(g, "pcie_gen_max"),
              *wm = cJSON_GetObjectItemCaseSensitive(g, "pcie_width_max");
  int has_load = cJSON_GetObjectItemCaseSensitive(g, "under_load") != NULL;
  for (int i = 0; i < S->nint; i++) {
    soak_gpu_sample *x = soak_gpu_at(S, i, k);
    x->pcie_gen_max = cJSON_IsNumber(gm) && gm->valuedouble > 0 ? (unsigned)gm->valuedouble : 0;
    x->pcie_width_max = cJSON_IsNumber(wm) && wm->valuedouble > 0 ? (unsigned)wm->valuedouble : 0;
    if (!has_load) x->under_load = x->pcie_gen != 0; /* older: read under load whenever read at all */
  }
  const cJSON *xids = cJSON_GetObjectItemCaseSensitive(g, "xids"), *e;
  if (xids && !cJSON_IsArray(xids)) return BAD("soak.gpus[%d].xids is not an array", k);
  cJSON_ArrayForEach(e, xids) {
    const cJSON *xid = cJSON_GetObjectItemCaseSensitive(e, "xid"), *t = cJSON_GetObjectItemCaseSensitive(e, "t_s"),
                *iv = cJSON_GetObjectItemCaseSensitive(e, "interval");
    if (!cJSON_IsNumber(xid) || !cJSON_IsNumber(t) || !cJSON_IsNumber(iv) || iv->valueint < 1 || iv->valueint > S->nint)
      return BAD("soak.gpus[%d].xids: an event without its xid, t_s and interval (1 to %d)", k, S->nint);
    soak_gpu_sample *x = soak_gpu_at(S, iv->valueint - 1, k);
    if (x->nxid < SOAK_MAX_XIDS) x->xid[x->nxid].xid = (unsigned)xid->valuedouble, x->xid[x->nxid++].t = t->valuedouble;
    x->xid_measured = 1;
  }
  const cJSON *nv = cJSON_GetObjectItemCaseSensitive(g, "nvlinks");
  if (nv && !cJSON_IsArray(nv)) return BAD("soak.gpus[%d].nvlinks is not an array", k);
  int nl = nv ? cJSON_GetArraySize(nv) : 0;
  if (nl > SOAK_MAX_NVLINKS) return BAD("soak.gpus[%d].nvlinks: %d links, at most %d", k, nl, SOAK_MAX_NVLINKS);
  int has_read = cJSON_GetObjectItemCaseSensitive(g, "nvlinks_read") != NULL;
  for (int l = 0; l < nl; l++) {
    const cJSON *lk = cJSON_GetArrayItem(nv, l);
    int absent = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lk, "absent"));
    static const char *const key[4] = {"up", "crc", "replay", "recovery"};
    for (int i = 0; i < S->nint; i++) {
      soak_gpu_sample *x = soak_gpu_at(S, i, k);
      if (!has_read) x->nlinks = nl;
      if (l >= x->nlinks) continue;
      soak_nvlink *y = &x->link[l];
      y->absent = absent;
      for (int c = 0; c < 4; c++) {
        double v;
        if (array_get(cJSON_GetObjectItemCaseSensitive(lk, key[c]), S->nint, i, &v))
          return BAD("soak.gpus[%d].nvlinks[%d].%s is not an array of %d numbers", k, l, key[c], S->nint);
        soak_counter *cn = c == 1 ? &y->crc : c == 2 ? &y->replay : &y->recovery;
        if (c == 0) y->state = isfinite(v) ? (v != 0) : -1;
        else cn->delta = isfinite(v) ? v : 0, cn->measured = isfinite(v);
      }
    }
  }
  return DDP_OK;
}

/* The nodes (from the document's ranks) and which pair of them each pair link is (by the name the soak gave it). */
static ddp_result layout_load(const result_doc *d, const soak_series *S, soak_layout *lay, char *err, size_t errlen) {
  lay->nnodes = d->nodes > 0 ? d->nodes : 1;
  lay->node_host = calloc((size_t)lay->nnodes + 1, sizeof *lay->node_host);
  DDP_CHECK_ALLOC(lay->node_host);
  for (int n = 0; n < lay->nnodes; n++) snprintf(lay->node_host[n], sizeof lay->node_host[n], "?");
  for (int k = d->nranks - 1; k >= 0; k--)
    if (d->ranks[k].node >= 0 && d->ranks[k].node < lay->nnodes && d->ranks[k].host)
      snprintf(lay->node_host[d->ranks[k].node], sizeof lay->node_host[0], "%s", d->ranks[k].host);
  for (int l = 0; l < S->nlink; l++) lay->npairs += S->link[l].scope == SCOPE_PAIR;
  lay->pairs = calloc((size_t)lay->npairs + 1, sizeof *lay->pairs);
  DDP_CHECK_ALLOC(lay->pairs);
  int q = 0, nodes = S->nlink - lay->npairs;
  for (int l = 0; l < S->nlink; l++) {
    int pair = S->link[l].scope == SCOPE_PAIR;
    if (pair != (l >= nodes))
      return BAD("soak.links: the node links come first, then the pairs ('%s')", S->link[l].name);
    if (!pair) continue;
    int found = 0;
    char name[96];
    for (int a = 0; a < lay->nnodes && !found; a++)
      for (int b = 0; b < lay->nnodes && !found; b++) {
        snprintf(name, sizeof name, "%.40s-%.40s", lay->node_host[a], lay->node_host[b]);
        if (a != b && !strcmp(name, S->link[l].name)) lay->pairs[q].a = a, lay->pairs[q].b = b, found = 1;
      }
    if (!found) return BAD("soak.links: pair '%s' is not two of the document's hosts", S->link[l].name);
    q++;
  }
  return DDP_OK;
}

ddp_result soak_doc_load(const cJSON *sec, const result_doc *d, soak_series *S, soak_layout *lay, char *err,
                         size_t errlen) {
  memset(S, 0, sizeof *S);
  memset(lay, 0, sizeof *lay);
  const cJSON *iv = cJSON_GetObjectItemCaseSensitive(sec, "intervals"),
              *gpus = cJSON_GetObjectItemCaseSensitive(sec, "gpus"),
              *links = cJSON_GetObjectItemCaseSensitive(sec, "links");
  if (!cJSON_IsArray(iv) || !cJSON_IsArray(gpus) || !cJSON_IsArray(links))
    return BAD("the soak section lacks its intervals, gpus or links array");
  int ngpu = cJSON_GetArraySize(gpus), nlink = cJSON_GetArraySize(links), nint = cJSON_GetArraySize(iv);
  if (ngpu < 1) return BAD("soak.gpus is empty");
  ddp_result r = soak_series_init(S, ngpu, nlink, ngpu);
  for (int i = 0; r == DDP_OK && i < nint; i++) {
    const cJSON *x = cJSON_GetArrayItem(iv, i), *t0 = cJSON_GetObjectItemCaseSensitive(x, "t0_s"),
                *t1 = cJSON_GetObjectItemCaseSensitive(x, "t1_s");
    if (!cJSON_IsNumber(t0) || !cJSON_IsNumber(t1)) r = BAD("soak.intervals[%d] lacks t0_s or t1_s", i);
    else if (soak_series_add(S, t0->valuedouble, t1->valuedouble) < 0)
      r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  for (int k = 0; r == DDP_OK && k < ngpu; k++) {
    const cJSON *g = cJSON_GetArrayItem(gpus, k), *rank = cJSON_GetObjectItemCaseSensitive(g, "rank"),
                *index = cJSON_GetObjectItemCaseSensitive(g, "index");
    const char *host = str_of(g, "host");
    if (!cJSON_IsNumber(rank) || !host) {
      r = BAD("soak.gpus[%d] lacks its rank or host", k);
      break;
    }
    soak_gpu_id *id = &S->gpu[k];
    id->rank = rank->valueint;
    id->index = cJSON_IsNumber(index) ? index->valueint
              : id->rank >= 0 && id->rank < d->nranks ? d->ranks[id->rank].ordinal : id->rank;
    snprintf(id->host, sizeof id->host, "%s", host);
    snprintf(id->busid, sizeof id->busid, "%s", str_of(g, "gpu") ? str_of(g, "gpu") : "");
    snprintf(id->model, sizeof id->model, "%s", str_of(g, "model") ? str_of(g, "model") : "");
    S->rank[k].rank = id->rank;
    snprintf(S->rank[k].host, sizeof S->rank[k].host, "%s", host);
    r = gpu_load(g, k, S, err, errlen);
  }
  for (int l = 0; r == DDP_OK && l < nlink; l++) {
    const cJSON *x = cJSON_GetArrayItem(links, l);
    const char *name = str_of(x, "name"), *kind = str_of(x, "kind");
    if (!name || !kind || (strcmp(kind, "pair") && strcmp(kind, "node"))) {
      r = BAD("soak.links[%d] lacks its name or kind (node or pair)", l);
      break;
    }
    soak_link_id *id = &S->link[l];
    snprintf(id->name, sizeof id->name, "%s", name);
    id->scope = strcmp(kind, "pair") ? SCOPE_HOST : SCOPE_PAIR;
    snprintf(id->host, sizeof id->host, "%s", id->scope == SCOPE_HOST ? name : "");
    for (int i = 0; r == DDP_OK && i < S->nint; i++)
      if (array_get(cJSON_GetObjectItemCaseSensitive(x, "busbw_gbs"), S->nint, i, soak_busbw_at(S, i, l)))
        r = BAD("soak.links[%d].busbw_gbs is not an array of %d numbers", l, S->nint);
  }
  if (r == DDP_OK) r = layout_load(d, S, lay, err, errlen);
  if (r != DDP_OK) soak_series_free(S), soak_layout_free(lay);
  return r;
}

ddp_result soak_doc_write_records(const result_outputs *o, unsigned which, unsigned replace, int files_only,
                                  result_doc *d, const result_doc *from, const cJSON *sections, int quiet) {
  result_record *keep = d->records;
  int n = d->nrecords, cap = d->cap_records;
  if (from) d->records = from->records, d->nrecords = from->nrecords, d->cap_records = from->cap_records;
  ddp_result r = outputs_write_some(o, which, replace, files_only, d, sections, quiet);
  d->records = keep, d->nrecords = n, d->cap_records = cap;
  return r;
}

ddp_result soak_doc_exit_code(cmd_ctx *c, int *code) {
  const char **hosts = calloc((size_t)c->dist.size + 1, sizeof *hosts);
  DDP_CHECK_ALLOC(hosts);
  for (int k = 0; k < c->dist.size; k++) hosts[k] = cmd_rank_host(c, k);
  hosts_verdict hv;
  ddp_result r = hosts_judge(&c->doc, hosts, c->dist.size, c->strict, &hv);
  free((void *)hosts);
  DDP_TRY(r);
  *code = c->exit_code >= 0 ? c->exit_code : findings_exit_code(&c->doc.findings);
  if (*code == DDP_EXIT_OK && hv.failing_findings) *code = DDP_EXIT_EXPECT; /* strict */
  return DDP_OK;
}
