/* bottom_figures.c: the figures of each subcommand's bottom line (bottom.h), from the result model alone
 * (c->doc), so that the line says what the document says. */
#include "bottom_figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bottom.h"

#define APPEND(...)                                                            \
  do {                                                                         \
    if (k < n) k += (size_t)snprintf(out + k, n - k, __VA_ARGS__);             \
  } while (0)

static double value_of(const result_doc *d, const char *measurement, const char *metric) {
  const result_record *r = result_find(d, measurement, "world", metric, NULL);
  return r ? r->value : NAN;
}

void run_bottom(const cmd_ctx *c, char *out, size_t n) {
  const result_doc *d = &c->doc;
  char step[32], sps[32], eff[48], bus[32];
  const char *tp = "ddp"; /* the training phase: the strategy's (config.strategy), whether or not it ran */
  for (int i = 0; i < d->nconfig; i++)
    if (!strcmp(d->config[i].key, "strategy") && d->config[i].value && !strcmp(d->config[i].value, "fsdp"))
      tp = "fsdp"; /* the strategies' names only: a crafted file's string never reaches the line */
  bottom_num(value_of(d, tp, "step_ms"), step, sizeof step);
  bottom_si(value_of(d, tp, "samples_per_s"), sps, sizeof sps);
  bottom_scaling(value_of(d, "job", "scaling_efficiency"), value_of(d, "job", "scaling_efficiency_noise"), eff,
                 sizeof eff);
  bottom_num(value_of(d, "comm", "busbw_gbs"), bus, sizeof bus);
  size_t k = 0;
  APPEND("%s %s ms/step  %s samples/s  scaling %s  busbw %s GB/s  ", tp, step, sps, eff, bus);
  APPEND("%s", d->weights_identical == 1 ? "weights identical" : d->weights_identical == 0 ? "weights DIFFER"
                                                                                           : "weights not verified");
}

static void checks_named(const result_doc *d, char *out, size_t n, const char *none);

/* The hosts named by a finding of severity sev (exactly), in order, not in skip (failed_hosts). */
static int hosts_at(const result_doc *d, finding_severity sev, const char **names, int max) {
  int m = 0;
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    if (f->severity != sev || f->passed || !f->host[0]) continue;
    int dup = 0;
    for (int j = 0; j < m && !dup; j++) dup = !strcmp(names[j], f->host);
    for (int j = 0; j < d->nfailed_hosts && !dup; j++) dup = !strcmp(d->failed_hosts[j], f->host);
    if (!dup && m < max) names[m++] = f->host;
  }
  return m;
}

static void host_list(char *out, size_t n, size_t *kk, const char *const *names, int m) {
  size_t k = *kk;
  for (int i = 0; i < m && i < 4; i++) APPEND("%s%s", i ? ", " : "", names[i]);
  if (m > 4) APPEND(", +%d more", m - 4);
  *kk = k;
}

void accept_bottom(const cmd_ctx *c, char *out, size_t n) {
  const result_doc *d = &c->doc;
  int hosts = c->dist.node_count > 0 ? c->dist.node_count : d->nodes;
  const char *warn[64];
  int nw = hosts_at(d, SEV_WARN, warn, 64), nf = d->nfailed_hosts;
  size_t k = 0;
  const cJSON *soak = c->sections ? cJSON_GetObjectItemCaseSensitive(c->sections, "soak") : NULL;
  if (soak) { /* a burn-in: how long it ran, first */
    const cJSON *el = cJSON_GetObjectItemCaseSensitive(soak, "elapsed_s"),
                *ni = cJSON_GetObjectItemCaseSensitive(soak, "intervals_complete");
    double sec = cJSON_IsNumber(el) ? el->valuedouble : 0;
    int m = cJSON_IsNumber(ni) ? ni->valueint : 0;
    if (sec >= 3600) APPEND("soak %dh%02dm", (int)(sec / 3600), (int)fmod(sec / 60, 60));
    else if (sec >= 60) APPEND("soak %dm%02ds", (int)(sec / 60), (int)fmod(sec, 60));
    else APPEND("soak %.0fs", sec);
    APPEND(" (%d interval%s): ", m, m == 1 ? "" : "s");
  }
  if (nf) {
    APPEND("%d of %d host%s fail (", nf, hosts, hosts == 1 ? "" : "s");
    host_list(out, n, &k, (const char *const *)d->failed_hosts, nf);
    APPEND(": see findings; drain list: --failed-hosts)");
  } else if (findings_count(&d->findings, SEV_FAIL) > 0) {
    /* failing checks that no host answers for (a slow path, the job's): "N of N hosts pass" beside FAIL would
     * read as a contradiction */
    int nfail = findings_count(&d->findings, SEV_FAIL);
    APPEND("no host to drain, %d check%s fail (", nfail, nfail == 1 ? "" : "s");
    char named[512];
    checks_named(d, named, sizeof named, "");
    APPEND("%s)", named);
  } else {
    APPEND("%d of %d host%s pass", hosts - nw, hosts, hosts == 1 ? "" : "s");
  }
  if (nw) {
    APPEND("  %d warn (", nw);
    host_list(out, n, &k, warn, nw);
    APPEND(")");
  }
  /* the stated error rates: the node pairs' drain list from the pair model (verdict/pair_judge.c), when it drew
   * one, and the GPUs judged against their peers (verdict/gpu_model.h) */
  static const struct {
    const char *check, *what;
  } rates[] = {{"pair_model", "pairs"}, {"gpu_model", "GPUs"}};
  for (size_t q = 0; q < sizeof rates / sizeof rates[0]; q++)
    for (int i = 0; i < d->findings.n; i++) {
      const finding *f = &d->findings.v[i];
      if (strcmp(f->check, rates[q].check) || !isfinite(f->measured) || !isfinite(f->expected)) continue;
      APPEND("  %s: expected false drains %.2f, misses %.2f", rates[q].what, f->measured > 0 ? f->measured : 0.0,
             f->expected > 0 ? f->expected : 0.0); /* a sum of 1 - P rounded below 0 reads 0.00, never -0.00 */
      break;
    }
}

void collectives_bottom(const cmd_ctx *c, char *out, size_t n) {
  const result_doc *d = &c->doc;
  /* per collective, in the order measured: busbw at its largest size (out of place, the first cycle) */
  const char *names[16]; /* more than the collectives there are */
  int m = 0;
  double wrong = 0;
  int checked = 0;
  for (int i = 0; i < d->nrecords; i++) {
    const result_record *r = &d->records[i];
    if (strcmp(r->measurement, "collectives")) continue;
    if (!strcmp(r->metric, "nwrong") && isfinite(r->value)) wrong += r->value, checked = 1;
    const char *op = result_record_label(r, "collective");
    if (!op || strcmp(r->metric, "busbw_gbs")) continue;
    int seen = 0;
    for (int j = 0; j < m && !seen; j++) seen = !strcmp(names[j], op);
    if (!seen && m < 16) names[m++] = op;
  }
  size_t k = 0;
  for (int j = 0; j < m; j++) {
    double best_bytes = -1, bw = NAN;
    for (int i = 0; i < d->nrecords; i++) {
      const result_record *r = &d->records[i];
      const char *op = result_record_label(r, "collective"), *b = result_record_label(r, "bytes"),
                 *pl = result_record_label(r, "placement"), *cy = result_record_label(r, "cycle");
      if (strcmp(r->measurement, "collectives") || strcmp(r->metric, "busbw_gbs") || !op || strcmp(op, names[j]) || !b)
        continue;
      if ((pl && strcmp(pl, "out_of_place")) || (cy && strcmp(cy, "0"))) continue;
      double bytes = strtod(b, NULL);
      if (bytes > best_bytes) best_bytes = bytes, bw = r->value;
    }
    char v[32], sz[32];
    bottom_num(bw, v, sizeof v);
    APPEND("%s%s busbw %s GB/s at %s", j ? "  " : "", names[j], v,
           best_bytes >= 0 ? ddp_fmt_bytes(sz, sizeof sz, best_bytes) : "-");
  }
  if (checked) APPEND("%s%.0f wrong value%s", k ? "  " : "", wrong, wrong == 1 ? "" : "s");
  else APPEND("%sdata not checked", k ? "  " : "");
}

/* The failing (else warning) findings' checks, at most three: what a checker without figures says. */
static void checks_named(const result_doc *d, char *out, size_t n, const char *none) {
  size_t k = 0;
  int shown = 0, more = 0;
  for (int sev = SEV_FAIL; sev >= SEV_WARN && !shown; sev--)
    for (int i = 0; i < d->findings.n; i++) {
      const finding *f = &d->findings.v[i];
      if ((int)f->severity != sev || f->passed) continue;
      if (shown < 3) APPEND("%s%s %s (%s)", shown ? ", " : "", f->check, sev == SEV_FAIL ? "fails" : "warns", f->subject);
      else more++;
      shown++;
    }
  if (more) APPEND(", +%d more", more);
  if (!shown) APPEND("%s", none);
}

void doctor_bottom(const cmd_ctx *c, char *out, size_t n) {
  checks_named(&c->doc, out, n, "versions, NCCL_* and wiring agree on every rank");
}

void export_bottom(const cmd_ctx *c, char *out, size_t n) {
  const result_doc *d = &c->doc;
  const result_outputs *o = &c->out;
  const char *paths[] = {o->json, o->prom, o->csv, o->failed_hosts};
  size_t k = 0;
  APPEND("wrote");
  int w = 0;
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    if (paths[i][0]) APPEND("%s %s", w++ ? "," : "", !strcmp(paths[i], "-") ? "standard output" : paths[i]);
  APPEND("  source: %s of %s, %s", d->source_kind ? d->source_kind : "?", d->start_time ? d->start_time : "?",
         d->verdict ? d->verdict : "verdict not recorded (schema before 4)");
}
