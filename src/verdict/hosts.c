/* hosts.c: each host's worst severity, --strict and the drain list (hosts.h). */
#include "hosts.h"

#include <math.h>
#include <string.h>

/* A grey-zone node of the pair model (pair_judge.h: "pair_retest") is a warning on its host even with strict: it
 * goes to --retest-hosts, never to the drain list (a wrong drain is worse than none); strict fails the run. */
static int retest(const finding *f) { return !strcmp(f->check, "pair_retest"); }

static int effective(const finding *f, int strict) {
  return f->severity == SEV_WARN && strict && !retest(f) ? SEV_FAIL : (int)f->severity;
}

static int seen_before(const char *const *hosts, int k) {
  for (int j = 0; j < k; j++)
    if (!strcmp(hosts[j], hosts[k])) return 1;
  return 0;
}

ddp_result hosts_judge(result_doc *d, const char *const *hosts, int n, int strict, hosts_verdict *v) {
  memset(v, 0, sizeof *v);
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    v->failing_findings += effective(f, strict) == SEV_FAIL || (strict && retest(f) && f->severity == SEV_WARN);
  }
  for (int k = 0; k < n; k++) {
    if (seen_before(hosts, k)) continue;
    int worst = SEV_INFO;
    for (int i = 0; i < d->findings.n; i++) {
      const finding *f = &d->findings.v[i];
      if (!strcmp(f->host, hosts[k]) && effective(f, strict) > worst) worst = effective(f, strict);
    }
    worst == SEV_FAIL ? v->fail++ : worst == SEV_WARN ? v->warn++ : v->pass++;
    if (worst == SEV_FAIL) DDP_TRY(result_failed_host_add(d, hosts[k]));
  }
  return DDP_OK;
}

static void line(FILE *out, const char *prefix, const char *who, const finding *f) {
  fprintf(out, "%s%s: %s %s %s: %s", prefix, who, finding_severity_name(f->severity), f->check, f->subject, f->text);
  if (!isnan(f->measured)) {
    fprintf(out, " [%.4g", f->measured);
    if (!isnan(f->expected)) fprintf(out, " vs %.4g", f->expected);
    fprintf(out, "%s%s]", f->unit[0] ? " " : "", f->unit);
  }
  fputc('\n', out);
}

void hosts_print(FILE *out, const char *prefix, const result_doc *d, const char *const *hosts, int n,
                 const hosts_verdict *v) {
  int notable = 0; /* the header only above something (an empty one sent users looking for what failed) */
  for (int i = 0; i < d->findings.n; i++) notable += d->findings.v[i].severity != SEV_INFO;
  if (notable) fprintf(out, "# hosts: failing and warning checks\n");
  for (int k = 0; k < n; k++) {
    if (seen_before(hosts, k)) continue;
    for (int i = 0; i < d->findings.n; i++) {
      const finding *f = &d->findings.v[i];
      if (f->severity != SEV_INFO && !strcmp(f->host, hosts[k])) line(out, prefix, hosts[k], f);
    }
  }
  int hostless = 0; /* failing checks that name no host of the job */
  for (int i = 0; i < d->findings.n; i++) { /* about no host of the job: the job itself, pairs, paths */
    const finding *f = &d->findings.v[i];
    int known = 0;
    for (int k = 0; k < n && !known; k++) known = !strcmp(f->host, hosts[k]);
    if (f->severity != SEV_INFO && !known)
      line(out, prefix, f->host[0] ? f->host : f->scope == SCOPE_JOB ? "job" : finding_scope_name(f->scope), f);
    hostless += f->severity == SEV_FAIL && !known;
  }
  fprintf(out, "%shosts: %d pass, %d warn, %d fail", prefix, v->pass, v->warn, v->fail);
  if (hostless)
    fprintf(out, "; %d failing check%s with no culprit host (a pair, a path or the job): nothing to drain for %s",
            hostless, hostless == 1 ? "" : "s", hostless == 1 ? "it" : "them");
  fputc('\n', out);
}
