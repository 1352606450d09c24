/* compare_nccl_diff.c: what NCCL did differently on side B, from the runs' "nccl" sections (NCCL's own account,
 * one nccl_account_json object per rank): the data of cmp_nccl and its free (compare.h: cmp_nccl_build,
 * cmp_nccl_free). Below the model: it knows no metric line; compare_nccl_explain.c ties the diff to the table.
 *
 * Each run becomes a flat list of items, one per thing NCCL chose, each with a sort key that orders them for
 * reading (version, network, then per communicator label: channels, NVLS, CollNet, transports by rank and peer,
 * algorithms by collective and size). Items of every run are matched by key: a side's runs agree when each key
 * has one value over them; B differs from A where a key's values differ. Transports are counted per change
 * ("P2P/CUMEM/read -> SHM/direct/direct for 1 peer"); algorithms become size ranges of one change. Reads JSON
 * only: compare has no NCCL, and a file's account is data, not this build's structs. */
#include "compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "json.h"

enum { K_VERSION, K_NET, K_CHANNELS, K_NVLS, K_COLLNET, K_TRANSPORT, K_ALGO };

typedef struct {
  char *key, *value;
  int kind, rank, peer;
  int seq; /* the order read in; -1 while merging: a repeated value */
  char label[32], coll[24];
  double bytes;
} nitem;

typedef struct {
  nitem *v;
  int n, cap; /* cap doubles: a realloc per item copied the list once per rank (quadratic in 20,000 ranks) */
  int reported;
  char why[256];
} nrun;

/* ---- JSON ------------------------------------------------------------------------------------------------ */


/* ---- a run's items ---------------------------------------------------------------------------------------- */

static int item_add(nrun *r, int kind, const char *label, const char *coll, double bytes, int rank, int peer,
                    const char *value) {
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 16;
    nitem *g = realloc(r->v, (size_t)cap * sizeof *g);
    if (!g) return -1;
    r->v = g, r->cap = cap;
  }
  nitem *it = &r->v[r->n];
  memset(it, 0, sizeof *it);
  it->kind = kind, it->rank = rank, it->peer = peer, it->bytes = bytes, it->seq = r->n;
  snprintf(it->label, sizeof it->label, "%s", label);
  snprintf(it->coll, sizeof it->coll, "%s", coll);
  char key[256];
  /* the reading order: run-wide items first, then each label's; sizes and ranks as zero-padded numbers */
  if (kind <= K_NET) snprintf(key, sizeof key, "%d", kind);
  else snprintf(key, sizeof key, "9\x1f%s\x1f%d\x1f%s\x1f%020.0f\x1f%09d\x1f%09d", label, kind, coll, bytes, rank, peer);
  it->key = strdup(key), it->value = strdup(value);
  if (!it->key || !it->value) return free(it->key), free(it->value), -1;
  r->n++;
  return 0;
}

static int by_key(const void *x, const void *y) { return strcmp(((const nitem *)x)->key, ((const nitem *)y)->key); }

/* The reading order, and among equal keys the order the items were read in (qsort is not stable). */
static int by_key_seq(const void *x, const void *y) {
  const nitem *a = x, *b = y;
  int c = strcmp(a->key, b->key);
  return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

static int by_value_seq(const void *x, const void *y) {
  const nitem *a = *(const nitem *const *)x, *b = *(const nitem *const *)y;
  int c = strcmp(a->value, b->value);
  return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

/* Equal keys made one: transports of one (rank, peer) joined by "+" (a peer may be reached two ways), every
 * other item's distinct values by ", " (ranks that disagree on a run-wide figure say so), in the order read;
 * an algorithm keeps the first rank's. O(n log n) in the items: 20,000 ranks with a version each are one sort,
 * not a rescan of the joined text per rank. */
static int run_merge(nrun *r) {
  if (r->n > 1) qsort(r->v, (size_t)r->n, sizeof *r->v, by_key_seq);
  nitem **grp = malloc((size_t)(r->n ? r->n : 1) * sizeof *grp);
  if (!grp) return -1;
  int out = 0, rc = 0;
  for (int i = 0, j; i < r->n; i = j) {
    for (j = i + 1; j < r->n && !strcmp(r->v[i].key, r->v[j].key);) j++;
    nitem *k = &r->v[i];
    if (k->kind != K_ALGO && j - i > 1 && !rc) {
      /* the distinct values: sorted by value, the first read of each kept (its value left non-NULL) */
      int g = 0;
      for (int q = i; q < j; q++) grp[g++] = &r->v[q];
      qsort(grp, (size_t)g, sizeof *grp, by_value_seq);
      for (int q = 1; q < g; q++)
        if (!strcmp(grp[q]->value, grp[q - 1]->value)) grp[q]->seq = -1; /* a repeat */
      const char *sep = k->kind == K_TRANSPORT ? "+" : ", ";
      size_t len = 1;
      for (int q = i; q < j; q++)
        if (r->v[q].seq >= 0) len += strlen(r->v[q].value) + strlen(sep);
      char *joined = malloc(len), *p = joined;
      if (!joined) rc = -1;
      for (int q = i; joined && q < j; q++)
        if (r->v[q].seq >= 0) p += sprintf(p, "%s%s", p == joined ? "" : sep, r->v[q].value);
      if (joined) free(k->value), k->value = joined;
    }
    for (int q = i + 1; q < j; q++) free(r->v[q].key), free(r->v[q].value);
    r->v[out++] = *k;
  }
  free(grp);
  r->n = out;
  return rc;
}

static const char *onoff(int v) { return v == 1 ? "on" : "off"; }

/* One run's section into items. */
static int run_read(const cJSON *sec, nrun *r) {
  memset(r, 0, sizeof *r);
  if (!sec) {
    snprintf(r->why, sizeof r->why, "no \"nccl\" section in its result files (from before ddpbench recorded it)");
    return 0;
  }
  if (!cJSON_IsTrue(json_get(sec, "reported"))) {
    snprintf(r->why, sizeof r->why, "%s", json_str(sec, "why")[0] ? json_str(sec, "why") : "the run says not reported");
    return 0;
  }
  const cJSON *e, *c, *p, *a;
  int accounts = 0, rc = 0;
  char buf[160];
  cJSON_ArrayForEach(e, json_get(sec, "ranks")) {
    const cJSON *acc = json_get(e, "account");
    int rank = json_int(e, "rank", -1);
    if (!cJSON_IsObject(acc)) continue;
    accounts++;
    if (json_str(acc, "version")[0]) rc |= item_add(r, K_VERSION, "", "", 0, 0, 0, json_str(acc, "version"));
    if (json_str(acc, "net")[0]) rc |= item_add(r, K_NET, "", "", 0, 0, 0, json_str(acc, "net"));
    cJSON_ArrayForEach(c, json_get(acc, "communicators")) {
      const char *label = json_str(c, "label")[0] ? json_str(c, "label") : "(unlabelled)";
      int ch = json_int(json_get(c, "channels"), "coll", -1), nvls = json_int(c, "nvls", -1), collnet = json_int(c, "collnet", -1);
      if (ch >= 0) snprintf(buf, sizeof buf, "%d", ch), rc |= item_add(r, K_CHANNELS, label, "", 0, 0, 0, buf);
      if (nvls >= 0) rc |= item_add(r, K_NVLS, label, "", 0, 0, 0, onoff(nvls));
      if (collnet >= 0) rc |= item_add(r, K_COLLNET, label, "", 0, 0, 0, onoff(collnet));
      cJSON_ArrayForEach(p, json_get(c, "peers")) {
        const char *via = json_str(p, "via")[0] ? json_str(p, "via") : json_str(p, "transport");
        /* keyed by world rank: communicators of one label (accept's pairs) number their members from 0 each */
        if (via[0]) rc |= item_add(r, K_TRANSPORT, label, "", 0, rank, json_int(p, "peer", -1), via);
      }
      /* Every rank runs the same choice for a collective (NCCL decides it from the communicator, not the rank):
       * the first rank that reports one stands for all (run_merge keeps the first). */
      cJSON_ArrayForEach(a, json_get(c, "algorithms")) {
        const cJSON *bytes = json_get(a, "bytes");
        if (!json_str(a, "coll")[0] || !cJSON_IsNumber(bytes)) continue;
        int chan = json_int(a, "channels", -1);
        char cs[16] = "?";
        if (chan >= 0) snprintf(cs, sizeof cs, "%d", chan);
        snprintf(buf, sizeof buf, "%s/%s/%s", json_str(a, "algo")[0] ? json_str(a, "algo") : "?",
                 json_str(a, "proto")[0] ? json_str(a, "proto") : "?", cs);
        rc |= item_add(r, K_ALGO, label, json_str(a, "coll"), bytes->valuedouble, 0, 0, buf);
      }
    }
  }
  if (rc) return -1;
  if (!accounts) {
    snprintf(r->why, sizeof r->why, "no rank's account was read");
    return 0;
  }
  r->reported = 1;
  return run_merge(r);
}

static void run_free(nrun *r) {
  for (int i = 0; i < r->n; i++) free(r->v[i].key), free(r->v[i].value);
  free(r->v);
}

static const nitem *run_find(const nrun *r, const char *key) {
  nitem k = {.key = (char *)key};
  return r->n ? bsearch(&k, r->v, (size_t)r->n, sizeof *r->v, by_key) : NULL;
}

/* ---- words ------------------------------------------------------------------------------------------------ */

/* "64 MiB": the largest unit the size is a whole number of (compare_load.c's names of collectives rows). A size
 * that is no byte count (negative, fractional, at or past 2^63, NaN: a crafted file) is printed as the number it
 * is ("-1 B", "1e+308 B"): converting it to an integer would be undefined. */
static void fmt_bytes(char *buf, size_t n, double bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (!(bytes >= 0 && bytes < 0x1p63) || bytes != floor(bytes)) {
    snprintf(buf, n, "%.6g B", bytes);
    return;
  }
  unsigned long long b = (unsigned long long)bytes, unit = 1;
  int ui = 0;
  while (ui < 4 && b >= unit * 1024 && b % (unit * 1024) == 0) unit *= 1024, ui++;
  snprintf(buf, n, "%llu %s", b / unit, units[ui]);
}

void cmp_nccl_fmt_range(char *buf, size_t n, double lo, double hi) {
  char a[32], b[32];
  fmt_bytes(a, sizeof a, lo);
  fmt_bytes(b, sizeof b, hi);
  if (lo == hi) snprintf(buf, n, "%s", a);
  else snprintf(buf, n, "%s-%s", a, b);
}

static void what_of(const nitem *it, char *buf, size_t n) {
  char size[32];
  switch (it->kind) {
  case K_VERSION: snprintf(buf, n, "version"); break;
  case K_NET: snprintf(buf, n, "net"); break;
  case K_CHANNELS: snprintf(buf, n, "%s: coll channels", it->label); break;
  case K_NVLS: snprintf(buf, n, "%s: nvls", it->label); break;
  case K_COLLNET: snprintf(buf, n, "%s: collnet", it->label); break;
  case K_TRANSPORT: snprintf(buf, n, "%s: rank %d -> peer %d", it->label, it->rank, it->peer); break;
  default: fmt_bytes(size, sizeof size, it->bytes), snprintf(buf, n, "%s: %s %s", it->label, it->coll, size); break;
  }
}

typedef struct {
  char ap[40]; /* "RING/SIMPLE" */
  char ch[16]; /* "32", "?" */
} choice;

static void choice_parse(const char *v, choice *c) {
  const char *slash = v ? strrchr(v, '/') : NULL;
  snprintf(c->ap, sizeof c->ap, "%.*s", slash ? (int)(slash - v) : 0, v ? v : "");
  snprintf(c->ch, sizeof c->ch, "%s", slash ? slash + 1 : "");
}

/* The change between two algorithm choices in words: "channels 32 -> 16, RING/SIMPLE both"; "" when none. The
 * words say both sides whole, so that sizes with the same words make one range. choice_a/b: what changed
 * ("RING/LL on 32" / "TREE/LL on 16 channels"), for the sentence that ties it to the metrics. */
static void algo_change(const char *va, const char *vb, char *buf, size_t n, char *ca, char *cb, size_t cn) {
  buf[0] = ca[0] = cb[0] = 0;
  if (!va || !vb) {
    if (va || vb) snprintf(buf, n, "%s on %s, not reported on %s", va ? va : vb, va ? "A" : "B", va ? "B" : "A");
    return;
  }
  if (!strcmp(va, vb)) return;
  choice a, b;
  choice_parse(va, &a), choice_parse(vb, &b);
  int ap = strcmp(a.ap, b.ap) != 0, ch = strcmp(a.ch, b.ch) != 0;
  if (ap && ch) {
    snprintf(buf, n, "%s -> %s, channels %s -> %s", a.ap, b.ap, a.ch, b.ch);
    snprintf(ca, cn, "%s on %s", a.ap, a.ch), snprintf(cb, cn, "%s on %s channels", b.ap, b.ch);
  } else if (ch) {
    snprintf(buf, n, "channels %s -> %s, %s both", a.ch, b.ch, a.ap);
    snprintf(ca, cn, "%s", a.ch), snprintf(cb, cn, "%s channels", b.ch);
  } else {
    snprintf(buf, n, "%s -> %s, %s channels both", a.ap, b.ap, a.ch);
    snprintf(ca, cn, "%s", a.ap), snprintf(cb, cn, "%s", b.ap);
  }
}

/* ---- the model -------------------------------------------------------------------------------------------- */

static char *xstrdup(const char *s) { return strdup(s ? s : ""); }

static int diff_add(cmp_nccl *m, const char *what, const char *a, const char *b, const char *text) {
  cmp_nccl_diff *g = realloc(m->diff, (size_t)(m->ndiff + 1) * sizeof *g);
  if (!g) return -1;
  m->diff = g;
  cmp_nccl_diff *d = &m->diff[m->ndiff];
  memset(d, 0, sizeof *d);
  d->what = xstrdup(what), d->a = xstrdup(a ? a : "not reported"), d->b = xstrdup(b ? b : "not reported");
  d->text = xstrdup(text);
  if (!d->what || !d->a || !d->b || !d->text) return free(d->what), free(d->a), free(d->b), free(d->text), -1;
  m->ndiff++;
  return 0;
}


void cmp_nccl_free(cmp_nccl *n) {
  for (int i = 0; i < n->ndiff; i++)
    free(n->diff[i].what), free(n->diff[i].a), free(n->diff[i].b), free(n->diff[i].text);
  for (int i = 0; i < n->nsays; i++) free(n->says[i]);
  for (int s = 0; s < 2; s++) free(n->why[s]), free(n->disagree[s]);
  free(n->diff), free(n->says);
  memset(n, 0, sizeof *n);
}

/* A transport change seen on some (rank, peer) pairs. */
typedef struct {
  char label[32];
  const char *a, *b;
  int peers;
} tchange;

static int by_ptr_key(const void *x, const void *y) {
  return strcmp((*(const nitem *const *)x)->key, (*(const nitem *const *)y)->key);
}

/* The side's value of key: its first run's; *mixed when another run of the side says otherwise. */
static const char *side_value(const nrun *runs, int n, const char *key, int *mixed) {
  const nitem *f = run_find(&runs[0], key);
  for (int i = 1; i < n; i++) {
    const nitem *o = run_find(&runs[i], key);
    if ((f == NULL) != (o == NULL) || (f && strcmp(f->value, o->value))) *mixed = 1;
  }
  return f ? f->value : NULL;
}

static int build(nrun *runs[2], const int nruns[2], cmp_report *r) {
  cmp_nccl *m = &r->nccl;
  for (int s = 0; s < 2; s++) {
    int missing = 0, first = -1;
    for (int i = 0; i < nruns[s]; i++)
      if (!runs[s][i].reported && !missing++) first = i;
    m->reported[s] = nruns[s] > 0 && !missing;
    if (missing) {
      char why[400];
      if (missing < nruns[s])
        snprintf(why, sizeof why, "%d of %d runs: %s", missing, nruns[s], runs[s][first].why);
      else
        snprintf(why, sizeof why, "%s", runs[s][first].why);
      if (!(m->why[s] = strdup(why))) return -1;
    }
  }
  if (!m->reported[0] || !m->reported[1]) return 0;
  /* every key of every run, in reading order */
  int total = 0;
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < nruns[s]; i++) total += runs[s][i].n;
  const nitem **keys = malloc((size_t)(total ? total : 1) * sizeof *keys);
  tchange *tc = NULL;
  int ntc = 0, nkeys = 0, rc = 0;
  if (!keys) return -1;
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < nruns[s]; i++)
      for (int k = 0; k < runs[s][i].n; k++) keys[nkeys++] = &runs[s][i].v[k];
  qsort(keys, (size_t)nkeys, sizeof *keys, by_ptr_key);
  int u = 0;
  for (int i = 0; i < nkeys; i++)
    if (!u || strcmp(keys[u - 1]->key, keys[i]->key)) keys[u++] = keys[i];
  nkeys = u;
  int ndisagree[2] = {0, 0};
  char what[200], text[600], ca[72], cb[72];
  for (int i = 0; i < nkeys && !rc; i++) {
    const nitem *it = keys[i];
    int mixed[2] = {0, 0};
    const char *va = side_value(runs[0], nruns[0], it->key, &mixed[0]);
    const char *vb = side_value(runs[1], nruns[1], it->key, &mixed[1]);
    for (int s = 0; s < 2; s++)
      if (mixed[s] && !ndisagree[s]++) {
        what_of(it, what, sizeof what);
        char buf[400];
        snprintf(buf, sizeof buf, "%s (the first run says %s)", what, (s ? vb : va) ? (s ? vb : va) : "not reported");
        if (!(m->disagree[s] = strdup(buf))) rc = -1;
      }
    int same = (va == NULL) == (vb == NULL) && (!va || !strcmp(va, vb));
    if (same) continue;
    if (it->kind == K_TRANSPORT) {
      int k = 0;
      while (k < ntc && !(!strcmp(tc[k].label, it->label) && !strcmp(tc[k].a ? tc[k].a : "", va ? va : "") &&
                          !strcmp(tc[k].b ? tc[k].b : "", vb ? vb : "") && (tc[k].a == NULL) == (va == NULL) &&
                          (tc[k].b == NULL) == (vb == NULL)))
        k++;
      if (k == ntc) {
        tchange *g = realloc(tc, (size_t)(ntc + 1) * sizeof *g);
        if (!g) {
          rc = -1;
          break;
        }
        tc = g;
        memset(&tc[ntc], 0, sizeof *tc);
        snprintf(tc[ntc].label, sizeof tc[ntc].label, "%s", it->label);
        tc[ntc].a = va, tc[ntc].b = vb;
        ntc++;
      }
      tc[k].peers++;
      continue;
    }
    if (it->kind == K_ALGO) {
      /* this size and the following ones of the same collective with the same change make one range */
      algo_change(va, vb, text, sizeof text, ca, cb, sizeof ca);
      double lo = it->bytes, hi = it->bytes;
      int j = i + 1;
      for (; j < nkeys; j++) {
        const nitem *nx = keys[j];
        if (nx->kind != K_ALGO || strcmp(nx->label, it->label) || strcmp(nx->coll, it->coll)) break;
        int mx = 0;
        const char *xa = side_value(runs[0], nruns[0], nx->key, &mx), *xb = side_value(runs[1], nruns[1], nx->key, &mx);
        char t2[600], c2a[72], c2b[72];
        algo_change(xa, xb, t2, sizeof t2, c2a, c2b, sizeof c2a);
        if (strcmp(t2, text)) break;
        hi = nx->bytes;
      }
      /* keys i+1 .. j-1 are in this range: their disagreement checks are skipped with them */
      char range[80];
      cmp_nccl_fmt_range(range, sizeof range, lo, hi);
      snprintf(what, sizeof what, "%s: %s %s", it->label, it->coll, range);
      if (diff_add(m, what, va, vb, text)) rc = -1;
      else {
        cmp_nccl_diff *d = &m->diff[m->ndiff - 1];
        snprintf(d->coll, sizeof d->coll, "%s", it->coll);
        d->lo_bytes = lo, d->hi_bytes = hi;
        snprintf(d->choice_a, sizeof d->choice_a, "%s", ca);
        snprintf(d->choice_b, sizeof d->choice_b, "%s", cb);
      }
      i = j - 1;
      continue;
    }
    what_of(it, what, sizeof what);
    snprintf(text, sizeof text, "%s -> %s", va ? va : "not reported", vb ? vb : "not reported");
    if (diff_add(m, what, va, vb, text)) rc = -1;
  }
  /* transports: one entry per change, after the run-wide and channel entries */
  for (int k = 0; k < ntc && !rc; k++) {
    snprintf(what, sizeof what, "%s: transport", tc[k].label);
    snprintf(text, sizeof text, "%s -> %s for %d peer%s", tc[k].a ? tc[k].a : "none", tc[k].b ? tc[k].b : "none",
             tc[k].peers, tc[k].peers == 1 ? "" : "s");
    if (diff_add(m, what, tc[k].a, tc[k].b, text)) rc = -1;
    else m->diff[m->ndiff - 1].peers = tc[k].peers;
  }
  for (int s = 0; s < 2 && !rc; s++)
    if (ndisagree[s] > 1) {
      char buf[600];
      snprintf(buf, sizeof buf, "%s, and %d more", m->disagree[s], ndisagree[s] - 1);
      free(m->disagree[s]);
      if (!(m->disagree[s] = strdup(buf))) rc = -1;
    }
  free(tc);
  free(keys);
  return rc;
}

int cmp_nccl_build(const cJSON *const *a, int na, const cJSON *const *b, int nb, cmp_report *r) {
  cmp_nccl_free(&r->nccl);
  nrun *runs[2] = {calloc((size_t)na + 1, sizeof(nrun)), calloc((size_t)nb + 1, sizeof(nrun))};
  int nruns[2] = {na, nb}, rc = runs[0] && runs[1] ? 0 : -1;
  for (int s = 0; s < 2 && !rc; s++)
    for (int i = 0; i < nruns[s] && !rc; i++) rc = run_read((s ? b : a)[i], &runs[s][i]);
  if (!rc) rc = build(runs, nruns, r);
  for (int s = 0; s < 2; s++) {
    for (int i = 0; runs[s] && i < nruns[s]; i++) run_free(&runs[s][i]);
    free(runs[s]);
  }
  return rc;
}
