/* nccl_section.c: after a subcommand's work, NCCL's account of every rank reaches rank 0 (nccl_account.h,
 * nccl_log.h) and becomes the result's "nccl" section, a short block of the report, and the findings of its
 * checks against the topology report (verdict/nccl_checks.h). Collective over the world, on the success
 * path only; a rank whose log cannot be read sends "not reported" and why, never an error. Nothing is sent
 * when no rank made a NCCL communicator (the section is then absent: the MPI comm has no such account). */
#include "nccl_section.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "nccl_account.h"
#include "nccl_checks.h"
#include "testhooks.h"
#include "topo.h"

/* This rank's account as JSON text: {"account": {...}} or {"account": null, "why": "..."}. malloc'd. */
static char *mine_json(void) {
  nccl_account *acc = calloc(1, sizeof *acc);
  char why[512] = "";
  cJSON *o = cJSON_CreateObject();
  if (!acc || !o) {
    free(acc);
    cJSON_Delete(o);
    return NULL;
  }
  if (nccl_account_read(acc, why, sizeof why) == 0) {
    cJSON *a = nccl_account_json(acc);
    if (a) cJSON_AddItemToObject(o, "account", a);
    else cJSON_AddNullToObject(o, "account"), cJSON_AddStringToObject(o, "why", "out of host memory");
    /* why "algorithms" is null where it is */
    int with = 0, multi = 0;
    for (int i = 0; i < acc->ncomms; i++) with += acc->comms[i].nalgos > 0, multi += acc->comms[i].nranks > 1;
    const char *aw = nccl_account_choices_why();
    if (!aw && !with)
      aw = multi ? "no untimed call was recorded on these communicators"
                 : "NCCL makes no profiler event on a 1-rank communicator (it copies the buffer)";
    if (aw) cJSON_AddStringToObject(o, "algorithms_why", aw);
  } else {
    cJSON_AddNullToObject(o, "account");
    cJSON_AddStringToObject(o, "why", why);
  }
  free(acc);
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

/* "AllReduce 8 B-32 KiB LL/RING 2 ch, 128 KiB-64 MiB SIMPLE/RING 16 ch; ReduceScatter ..." from one rank's
 * choices (sorted by collective then size, as they were recorded in size order per call site: sorted here). */
static int algo_cmp(const void *a, const void *b) {
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  int c = strcmp(json_str(x, "coll"), json_str(y, "coll"));
  if (c) return c;
  double bx = cJSON_GetNumberValue(json_get(x, "bytes")), by = cJSON_GetNumberValue(json_get(y, "bytes"));
  return (bx > by) - (bx < by);
}

static void choices_line(const cJSON *algos, char *out, size_t n) {
  int k = cJSON_GetArraySize(algos);
  out[0] = 0;
  if (k <= 0) return;
  const cJSON **v = malloc((size_t)k * sizeof *v);
  if (!v) return;
  for (int i = 0; i < k; i++) v[i] = cJSON_GetArrayItem(algos, i);
  qsort(v, (size_t)k, sizeof *v, algo_cmp);
  size_t o = 0;
  for (int i = 0; i < k && o < n;) {
    int j = i; /* a run of sizes with the same choice */
    while (j + 1 < k && !strcmp(json_str(v[j + 1], "coll"), json_str(v[i], "coll")) &&
           !strcmp(json_str(v[j + 1], "algo"), json_str(v[i], "algo")) &&
           !strcmp(json_str(v[j + 1], "proto"), json_str(v[i], "proto")) &&
           json_int(v[j + 1], "channels", -1) == json_int(v[i], "channels", -1))
      j++;
    int first = i == 0 || strcmp(json_str(v[i - 1], "coll"), json_str(v[i], "coll"));
    char lo[32], hi[32];
    ddp_fmt_bytes(lo, sizeof lo, cJSON_GetNumberValue(json_get(v[i], "bytes")));
    ddp_fmt_bytes(hi, sizeof hi, cJSON_GetNumberValue(json_get(v[j], "bytes")));
    o += (size_t)snprintf(out + o, n - o, "%s%s%s%s%s%s %s/%s %d ch", i ? (first ? "; " : ", ") : "",
                          first ? json_str(v[i], "coll") : "", first ? " " : "", lo, i == j ? "" : "-", i == j ? "" : hi,
                          json_str(v[i], "proto"), json_str(v[i], "algo"), json_int(v[i], "channels", -1));
    i = j + 1;
  }
  free(v);
}

/* One line per communicator label: ranks, channels, and the transports of its peers counted over ranks. */
void nccl_section_print(FILE *out, const cJSON *sec) {
  const cJSON *ranks = json_get(sec, "ranks");
  const cJSON *first = NULL, *r;
  int reported = 0, n = 0;
  int first_rank = -1;
  const char *first_why = NULL;
  cJSON_ArrayForEach(r, ranks) {
    n++;
    const cJSON *a = json_get(r, "account");
    if (cJSON_IsObject(a) && !first) {
      first = a, first_rank = json_int(r, "rank", -1);
      first_why = *json_str(r, "algorithms_why") ? json_str(r, "algorithms_why") : NULL;
    }
    if (cJSON_IsObject(a)) reported++;
  }
  if (!first) {
    const char *why = json_str(sec, "why");
    fprintf(out, "# NCCL's account: not reported (%s)\n", *why ? why : "no rank sent one");
    return;
  }
  const char *ver = json_str(first, "version"), *net = json_str(first, "net");
  fprintf(out, "# NCCL's account (its set-up log, %d of %d rank%s): NCCL %s, network %s\n", reported, n, n == 1 ? "" : "s",
          *ver ? ver : "(version not reported)", *net ? net : "not reported");
  /* labels in the order rank 0 (or the first reporting rank) lists them */
  const cJSON *c;
  cJSON_ArrayForEach(c, json_get(first, "communicators")) {
    const char *lb = json_str(c, "label");
    /* transports over every rank's communicators of this label */
    enum { VIAS = 12 };
    char via[VIAS][64];
    int count[VIAS], nv = 0, others = 0, nranks = -1, chan_min = 1 << 30, chan_max = -1, algos = 0;
    const cJSON *rr;
    cJSON_ArrayForEach(rr, ranks) {
      const cJSON *cc;
      cJSON_ArrayForEach(cc, json_get(json_get(rr, "account"), "communicators")) {
        if (!cJSON_IsString(json_get(cc, "label")) || strcmp(json_str(cc, "label"), lb)) continue;
        if (json_int(cc, "nranks", -1) >= 0) nranks = json_int(cc, "nranks", -1);
        int coll = json_int(json_get(cc, "channels"), "coll", -1);
        if (coll >= 0 && coll < chan_min) chan_min = coll;
        if (coll > chan_max) chan_max = coll;
        algos += cJSON_GetArraySize(json_get(cc, "algorithms"));
        const cJSON *p;
        cJSON_ArrayForEach(p, json_get(cc, "peers")) {
          const char *vs = *json_str(p, "via") ? json_str(p, "via") : "?";
          int k = 0;
          while (k < nv && strcmp(via[k], vs)) k++;
          if (k == nv && nv < VIAS) snprintf(via[nv], sizeof via[0], "%s", vs), count[nv++] = 0;
          if (k < nv) count[k]++;
          else others++;
        }
      }
    }
    char chans[48];
    if (chan_max < 0) snprintf(chans, sizeof chans, "channels not reported");
    else if (chan_min == chan_max) snprintf(chans, sizeof chans, "%d coll channels", chan_max);
    else snprintf(chans, sizeof chans, "%d-%d coll channels", chan_min, chan_max);
    char tr[700] = "";
    size_t o = 0;
    for (int k = 0; k < nv && o < sizeof tr; k++)
      o += (size_t)snprintf(tr + o, sizeof tr - o, "%s%s x%d", k ? ", " : "", via[k], count[k]);
    if (others && o < sizeof tr) snprintf(tr + o, sizeof tr - o, ", %d more", others);
    char nrs[24];
    if (nranks >= 0) snprintf(nrs, sizeof nrs, "%d rank%s", nranks, nranks == 1 ? "" : "s");
    else snprintf(nrs, sizeof nrs, "ranks not reported");
    char ch[900] = "";
    choices_line(json_get(c, "algorithms"), ch, sizeof ch);
    fprintf(out, "#   %s (%s): %s; peers: %s\n", lb[0] ? lb : "(unlabelled)", nrs, chans,
            nv ? tr : "none (one rank per communicator, or not connected yet)");
    if (ch[0]) fprintf(out, "#     NCCL's choices (rank %d): %s\n", first_rank, ch);
    else if (!algos) fprintf(out, "#     NCCL's choices: not reported (%s)\n", first_why ? first_why : "none recorded");
  }
}

ddp_result nccl_section_collect(cmd_ctx *c) {
  const ddp_dist *d = &c->dist;
  if (d->rank == 0 && testhook_int(HOOK_NCCL_FINDING, 0)) { /* where nccl_checks adds its findings (tests) */
    DDP_TRY(findings_add(&c->doc.findings, "nccl_test", SEV_FAIL, SCOPE_JOB, "job", NAN, NAN, "",
                         "a test hook's failing finding, added where NCCL's account is judged"));
    if (c->exit_code == DDP_EXIT_OK) c->exit_code = DDP_EXIT_EXPECT;
  }
  int active = nccl_account_active();
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &active, 1, MPI_INT, MPI_MAX, d->world));
  if (!active) return DDP_OK;
  /* Subcommands without a topology report of their own (collectives, accept): one now, not printed, for the
   * checks only (collective; binds nothing; after the timed work) */
  cJSON *topo_own = NULL;
  int have_topo = d->rank == 0 && c->sections && cJSON_GetObjectItemCaseSensitive(c->sections, "topology");
  DDP_CHECK_MPI(MPI_Bcast(&have_topo, 1, MPI_INT, 0, d->world));
  if (!have_topo) {
    topo_options opt = {.bind_gpu = 0};
    topo_rank *t = NULL;
    int ok = topo_rank_init(d, &opt, c->pl.bus_id[0] ? c->pl.bus_id : NULL, &t) == DDP_OK;
    DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, d->world));
    if (ok) {
      ddp_versions v;
      cmd_versions(&v);
      int consistent = 0;
      if (topo_rank_report(t, &v, NULL, &topo_own, &consistent) != DDP_OK) cJSON_Delete(topo_own), topo_own = NULL;
    }
    topo_rank_free(t);
  }
  char *s = mine_json();
  int len = s ? (int)strlen(s) + 1 : 0;
  int *lens = d->rank == 0 ? calloc((size_t)d->size, sizeof *lens) : NULL;
  int *offs = d->rank == 0 ? calloc((size_t)d->size, sizeof *offs) : NULL;
  int ok = d->rank != 0 || (lens && offs);
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, d->world));
  if (!ok) {
    free(s), free(lens), free(offs);
    cJSON_Delete(topo_own);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory gathering NCCL's account");
  }
  DDP_CHECK_MPI(MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, d->world));
  char *all = NULL;
  long total = 0;
  if (d->rank == 0) {
    for (int i = 0; i < d->size; i++) offs[i] = (int)total, total += lens[i];
    all = malloc(total ? (size_t)total : 1);
  }
  ok = d->rank != 0 || all;
  DDP_CHECK_MPI(MPI_Bcast(&ok, 1, MPI_INT, 0, d->world));
  if (!ok) {
    free(s), free(lens), free(offs);
    cJSON_Delete(topo_own);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory gathering NCCL's account");
  }
  DDP_CHECK_MPI(MPI_Gatherv(s ? s : "", len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, d->world));
  free(s);
  ddp_result r = DDP_OK;
  if (d->rank == 0) {
    cJSON *sec = cJSON_CreateObject();
    cJSON *ranks = sec ? cJSON_AddArrayToObject(sec, "ranks") : NULL;
    int reported = 0;
    const char *why = NULL;
    for (int i = 0; ranks && i < d->size; i++) {
      cJSON *one = lens[i] ? cJSON_Parse(all + offs[i]) : NULL;
      cJSON *rec = cJSON_CreateObject();
      if (!rec) break;
      cJSON_AddNumberToObject(rec, "rank", i);
      cJSON_AddStringToObject(rec, "host", cmd_rank_host(c, i));
      cJSON *acc = one ? cJSON_DetachItemFromObjectCaseSensitive(one, "account") : NULL;
      cJSON *aw = one ? cJSON_DetachItemFromObjectCaseSensitive(one, "algorithms_why") : NULL;
      if (cJSON_IsObject(acc)) {
        reported++;
        cJSON_AddItemToObject(rec, "account", acc);
        if (aw) cJSON_AddItemToObject(rec, "algorithms_why", aw), aw = NULL;
      } else {
        cJSON_Delete(acc);
        cJSON_AddNullToObject(rec, "account");
        const cJSON *w = one ? cJSON_GetObjectItemCaseSensitive(one, "why") : NULL;
        cJSON_AddStringToObject(rec, "why", cJSON_IsString(w) ? w->valuestring : "the rank sent nothing readable");
        if (!why) why = cJSON_GetObjectItemCaseSensitive(rec, "why")->valuestring;
      }
      cJSON_Delete(aw);
      cJSON_AddItemToArray(ranks, rec);
      cJSON_Delete(one);
    }
    if (!ranks) {
      cJSON_Delete(sec);
      r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    } else {
      cJSON_AddBoolToObject(sec, "reported", reported > 0);
      if (reported) cJSON_AddNullToObject(sec, "why");
      else cJSON_AddStringToObject(sec, "why", why ? why : "no rank reported");
      cJSON_AddStringToObject(sec, "source", nccl_account_source());
      if (!c->quiet) nccl_section_print(stdout, sec);
      if (!c->sections) c->sections = cJSON_CreateObject();
      const cJSON *topo = topo_own ? topo_own : c->sections ? cJSON_GetObjectItemCaseSensitive(c->sections, "topology") : NULL;
      int fails = findings_count(&c->doc.findings, SEV_FAIL);
      r = nccl_checks(topo, sec, &c->doc.findings);
      if (r == DDP_OK && findings_count(&c->doc.findings, SEV_FAIL) > fails && c->exit_code == DDP_EXIT_OK)
        c->exit_code = strcmp(c->def->name, "doctor") ? DDP_EXIT_EXPECT : DDP_EXIT_CHECK; /* doctor: 1 = degraded */
      if (c->sections) cJSON_AddItemToObject(c->sections, "nccl", sec);
      else cJSON_Delete(sec);
    }
  }
  free(all), free(lens), free(offs);
  cJSON_Delete(topo_own);
  return r;
}
