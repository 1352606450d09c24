/* preflight.c: the checks every rank agrees on right after MPI starts and before any work: that each rank
 * parsed its command line and config file, that all ranks run the same options, and that every file the job
 * will write can be written (the caller's check). One collective (an allgather of a small record per rank, plus a gather
 * of the configuration text when the hashes differ); rank 0 prints every rank's error, grouped, so that an
 * error seen by one rank alone is never lost. Never starts work, never exits: it returns DDP_ERR_USAGE on
 * every rank alike, or DDP_OK on every rank alike. */
#include "preflight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct {
  int failed;
  uint64_t hash;
  char command[32]; /* the subcommand this rank runs */
  char host[64];
  char msg[1400];
} rank_check;

/* Rank 0: one line per distinct message, naming the ranks that reported it (or none when all did). */
static void errors_print(const rank_check *all, int world) {
  char *done = calloc((size_t)world, 1);
  int nfailed = 0;
  for (int r = 0; r < world; r++) nfailed += all[r].failed;
  for (int r = 0; r < world; r++) {
    if (!all[r].failed || (done && done[r])) continue;
    int same = 0;
    for (int q = r; q < world; q++)
      if (all[q].failed && strcmp(all[q].msg, all[r].msg) == 0) {
        same++;
        if (done) done[q] = 1;
      }
    if (same == world) {
      fprintf(stderr, "ddpbench: %s\n", all[r].msg);
    } else if (same == 1) {
      fprintf(stderr, "ddpbench: rank %d (host %s): %s\n", r, all[r].host, all[r].msg);
    } else {
      fprintf(stderr, "ddpbench: ranks %d", r);
      int shown = 1;
      for (int q = r + 1; q < world && shown < 8; q++)
        if (all[q].failed && strcmp(all[q].msg, all[r].msg) == 0) fprintf(stderr, ",%d", q), shown++;
      fprintf(stderr, "%s (%d ranks): %s\n", same > shown ? ",..." : "", same, all[r].msg);
    }
  }
  (void)nfailed;
  free(done);
  fflush(stderr);
}

#define TEXT_MAX 8192

static void config_text(const opt_set *s, char *buf, size_t n) {
  const char *name;
  char value[1100];
  size_t o = 0;
  buf[0] = 0;
  const opt_spec *k;
  for (int i = 0; opt_key_agreed(s, i, &name, value, sizeof value, &k) && o < n; i++) {
    if (k->flags & OPT_NO_HASH) continue;
    int w = snprintf(buf + o, n - o, "%s=%s\n", name, value);
    if (w < 0) break;
    o += (size_t)w;
  }
}

/* The value of key in a "key=value\n" text ("" when absent). */
static const char *text_value(const char *text, const char *key, char *out, size_t n) {
  size_t k = strlen(key);
  out[0] = 0;
  for (const char *p = text; *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (len > k && strncmp(p, key, k) == 0 && p[k] == '=') {
      size_t v = len - k - 1 < n - 1 ? len - k - 1 : n - 1;
      memcpy(out, p + k + 1, v);
      out[v] = 0;
      break;
    }
    if (!eol) break;
    p = eol + 1;
  }
  return out;
}

/* Every rank whose hash differs from rank 0's: rank 0 prints its keys that differ. */
static ddp_result mismatch_report(const ddp_dist *d, const opt_set *s, const rank_check *all) {
  char *mine = malloc(TEXT_MAX), *texts = NULL;
  DDP_CHECK_ALLOC(mine);
  config_text(s, mine, TEXT_MAX);
  if (d->rank == 0) texts = malloc((size_t)d->size * TEXT_MAX);
  if (d->rank == 0 && !texts) {
    free(mine);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  int err = MPI_Gather(mine, TEXT_MAX, MPI_CHAR, texts, TEXT_MAX, MPI_CHAR, 0, d->world);
  free(mine);
  if (err != MPI_SUCCESS) {
    free(texts);
    return mpi_fail(err, "MPI_Gather(configuration)", __FILE__, __LINE__);
  }
  if (d->rank != 0) return DDP_OK;
  int nbad = 0;
  for (int r = 1; r < d->size; r++) nbad += all[r].hash != all[0].hash;
  fprintf(stderr, "ddpbench: the ranks do not run the same %s%s options (%d of %d differ from rank 0; give every "
                  "rank the same options and input files)\n", s->command ? "ddpbench " : "", s->command ? s->command : "training",
          nbad, d->size);
  const char *name;
  char v0[1100], v[1100];
  for (int r = 1, shown = 0; r < d->size && shown < 16; r++) {
    if (all[r].hash == all[0].hash) continue;
    shown++;
    char line[2048];
    size_t o = 0;
    o += (size_t)snprintf(line + o, sizeof line - o, "ddpbench: rank %d (host %s) differs from rank 0 in:", r,
                          all[r].host);
    const opt_spec *k;
    for (int i = 0; opt_key_agreed(s, i, &name, v0, sizeof v0, &k) && o < sizeof line; i++) {
      if (k->flags & OPT_NO_HASH) continue;
      text_value(texts + (size_t)r * TEXT_MAX, name, v, sizeof v);
      if (strcmp(v, v0) != 0) o += (size_t)snprintf(line + o, sizeof line - o, " %s = %s (rank 0: %s);", name, v, v0);
    }
    if (o < sizeof line && line[o - 1] == ';') line[o - 1] = 0;
    fprintf(stderr, "%s\n", line);
  }
  fflush(stderr);
  free(texts);
  return DDP_OK;
}

/* Allgathers every rank's check; rank 0 prints the errors. *any_failed: some rank failed. */
static ddp_result agree(const ddp_dist *d, const rank_check *me, rank_check **all, int *any_failed, int *differ) {
  *all = malloc((size_t)d->size * sizeof **all);
  DDP_CHECK_ALLOC(*all);
  int err = MPI_Allgather(me, (int)sizeof *me, MPI_BYTE, *all, (int)sizeof *me, MPI_BYTE, d->world);
  if (err != MPI_SUCCESS) {
    free(*all);
    *all = NULL;
    return mpi_fail(err, "MPI_Allgather(preflight)", __FILE__, __LINE__);
  }
  *any_failed = *differ = 0;
  int other = -1; /* a rank that runs another subcommand than rank 0 */
  for (int r = 0; r < d->size; r++) {
    *any_failed |= (*all)[r].failed;
    *differ |= (*all)[r].hash != (*all)[0].hash;
    if (other < 0 && strcmp((*all)[r].command, (*all)[0].command)) other = r;
  }
  if (other >= 0) { /* nothing else can be compared: say that, and nothing else */
    if (d->rank == 0)
      fprintf(stderr, "ddpbench: the ranks do not run the same subcommand: rank %d (host %s) runs `ddpbench %s`, rank 0 "
                      "`ddpbench %s` (give every rank the same command line)\n", other, (*all)[other].host,
              (*all)[other].command, (*all)[0].command);
    *any_failed = 1;
    return DDP_OK;
  }
  if (*any_failed && d->rank == 0) errors_print(*all, d->size);
  return DDP_OK;
}

ddp_result preflight_run(const ddp_dist *d, const opt_set *s, ddp_result parsed, const char *parse_msg,
                         preflight_check_fn check, void *ctx) {
  rank_check me;
  memset(&me, 0, sizeof me);
  snprintf(me.host, sizeof me.host, "%.63s", d->host);
  snprintf(me.command, sizeof me.command, "%s", s->command ? s->command : "run");
  if (parsed != DDP_OK) {
    me.failed = 1;
    snprintf(me.msg, sizeof me.msg, "%s", parse_msg && *parse_msg ? parse_msg : "bad command line");
  } else {
    me.hash = opt_hash(s);
    if (check && check(ctx, d, me.msg, sizeof me.msg) != DDP_OK) me.failed = 1;
  }
  rank_check *all = NULL;
  int failed = 0, differ = 0;
  DDP_TRY(agree(d, &me, &all, &failed, &differ));
  ddp_result r = DDP_OK;
  if (failed) {
    r = DDP_ERR_USAGE;
  } else if (differ) {
    r = mismatch_report(d, s, all);
    if (r == DDP_OK) r = DDP_ERR_USAGE;
  }
  free(all);
  return r;
}
