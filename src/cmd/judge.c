/* judge.c: `ddpbench judge RESULT.json [rules] [outputs]`: a stored accept result judged again, without
 * measuring: its findings, verdict and drain list are dropped, and accept_judge_doc (verdict/accept_verdicts.h)
 * judges its records under the rules given here, which are accept's own options with accept's names. A rule not
 * given is the one the stored run used (its config), else accept's default, so that `judge` alone reproduces the
 * run's verdict and a changed threshold is the only change. The skeleton (cmd.h) prints the findings and the
 * hosts' verdict and writes the outputs through outputs.h, with accept's exit codes and bottom line; judge adds
 * --retest-hosts. The document it writes is an accept document whose config holds the rules used and the file
 * judged (judged_from). Nothing in it is random: the same file and rules give the same verdict. NCCL's account's
 * findings are carried over as the run made them (they were judged against the run's topology, which the result
 * does not hold). A soak's result is judged from its series, read back from its `soak` section (cmd/soak_doc.h):
 * the soak's rules over it, its weights checks (taken live) carried over, its --csv and --prom the series as the
 * soak writes them.
 * It never starts MPI and never measures. Any other kind is refused. Bad input: one line naming the file or key,
 * exit 2. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accept_verdicts.h"
#include "atomic_file.h"
#include "baseline.h"
#include "bottom_figures.h"
#include "commands.h"
#include "pair_judge.h"
#include "soak_doc.h"

typedef struct {
  char input[4096];
  double rel_warn, rel_fail, tolerance, baseline_cv, bad_pct, prior_bad, drain_threshold;
  int strict;
  char expect[512], baseline[2048], retest_hosts[1024];
} judge_args;

#define OFF(f) offsetof(judge_args, f), 0
#define STR(f) offsetof(judge_args, f), sizeof(((judge_args *)0)->f)
static const opt_spec JUDGE[] = {
    {"input", NULL, 0, OPT_STR, STR(input), "", .arg = "RESULT.json",
     .help = "the accept result file (the word after the subcommand)", .flags = OPT_OPERANDS | OPT_FILES},
    {"relative_warn_pct", NULL, 0, OPT_DOUBLE, OFF(rel_warn), "5", 0, 100, .arg = "PCT",
     .help = "as accept's (not given: the stored run's)"},
    {"relative_fail_pct", NULL, 0, OPT_DOUBLE, OFF(rel_fail), "10", 0, 100, .arg = "PCT",
     .help = "as accept's (not given: the stored run's)"},
    {"expect", NULL, 0, OPT_STR, STR(expect), "", .arg = "FILE", .flags = OPT_INPUT,
     .help = "as accept's (not given: the stored run's)"},
    {"baseline", NULL, 0, OPT_STR, STR(baseline), "", .arg = "FILE[,FILE...]", .flags = OPT_INPUT,
     .help = "as accept's: known-good runs (not given: the stored run's; --baseline '': none)"},
    {"tolerance_pct", NULL, 0, OPT_DOUBLE, OFF(tolerance), "10", 0, 99.999, .arg = "PCT",
     .help = "as accept's (not given: the stored run's)"},
    {"baseline_cv", NULL, 0, OPT_DOUBLE, OFF(baseline_cv), "5", 0.1, 50, .arg = "PCT",
     .help = "as accept's (not given: the stored run's)"},
    {"bad_pct", NULL, 0, OPT_DOUBLE, OFF(bad_pct), "10", PAIR_BAD_PCT_MIN, PAIR_BAD_PCT_MAX, .arg = "P",
     .help = "as accept's: a node is bad this far below the healthy level (not given: the stored run's)"},
    {"prior_bad", NULL, 0, OPT_DOUBLE, OFF(prior_bad), "0.01", PAIR_PRIOR_MIN, PAIR_PRIOR_MAX, .arg = "P",
     .help = "as accept's: the prior probability that a node is bad (not given: the stored run's)"},
    {"drain_threshold", NULL, 0, OPT_DOUBLE, OFF(drain_threshold), "0.5", PAIR_DRAIN_MIN, PAIR_DRAIN_MAX, .arg = "T",
     .help = "as accept's: drain a node whose probability of being bad exceeds this (not given: the stored run's)"},
    {"retest_hosts", NULL, 0, OPT_STR, STR(retest_hosts), "", .arg = "FILE", .flags = OPT_OUTPUT,
     .help = "the hosts to test again (grey: neither drained nor cleared), one a line; empty when none"},
    {"strict", NULL, 0, OPT_BOOL, OFF(strict), "false", .help = "a warning fails too (exit 4), as accept's"},
};
static const opt_table JUDGE_TABLE = {"judge", JUDGE, (int)(sizeof JUDGE / sizeof JUDGE[0])};

/* The rules that fall back to the stored run's config when not given: key, field (doubles). */
static const struct {
  const char *key;
  size_t off;
} RULES[] = {
    {"relative_warn_pct", offsetof(judge_args, rel_warn)}, {"relative_fail_pct", offsetof(judge_args, rel_fail)},
    {"tolerance_pct", offsetof(judge_args, tolerance)},    {"baseline_cv", offsetof(judge_args, baseline_cv)},
    {"bad_pct", offsetof(judge_args, bad_pct)},
    {"prior_bad", offsetof(judge_args, prior_bad)},        {"drain_threshold", offsetof(judge_args, drain_threshold)},
};

static ddp_result judge_tables(opt_set *s, void *args) { return opt_set_add(s, &JUDGE_TABLE, args); }

static ddp_result judge_validate(cmd_ctx *c) {
  const judge_args *a = c->args;
  if (!a->input[0]) return ddp_usage_error("judge: no result file given (usage: ddpbench judge RESULT.json [options])");
  if (strchr(a->input, '\n')) return ddp_usage_error("judge: one result file at a time");
  char err[1400];
  if (outputs_check(&c->out, err, sizeof err) != DDP_OK) return ddp_usage_error("judge: %s", err);
  if (a->retest_hosts[0] && atomic_file_check(a->retest_hosts, c->out.force, err, sizeof err) != DDP_OK)
    return ddp_usage_error("judge: --retest-hosts: %s", err);
  return DDP_OK;
}

static const char *cfg(const result_doc *d, const char *key) {
  for (int i = 0; i < d->nconfig; i++)
    if (!strcmp(d->config[i].key, key)) return d->config[i].value;
  return NULL;
}

/* The rules not given on the command line from the stored config; bad stored values are bad input. */
static ddp_result rules_from_doc(cmd_ctx *c, judge_args *a, const result_doc *d) {
  for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++) {
    const char *v = cfg(d, RULES[i].key);
    if (opt_given(&c->opts, RULES[i].key) || !v) continue;
    char *end = NULL;
    double x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || x < 0)
      return ddp_usage_error("judge: %s: config %s '%s' is not a number", a->input, RULES[i].key, v);
    *(double *)((char *)a + RULES[i].off) = x;
  }
  const char *e = cfg(d, "expect"), *b = cfg(d, "baseline"), *s = cfg(d, "strict");
  if (!opt_given(&c->opts, "expect") && e) snprintf(a->expect, sizeof a->expect, "%s", e);
  if (!opt_given(&c->opts, "baseline") && b) snprintf(a->baseline, sizeof a->baseline, "%s", b);
  if (!opt_given(&c->opts, "strict") && s) a->strict = !strcmp(s, "true");
  /* as accept: --relative-fail-pct given here without --bad-pct is the pairs' bar too (at most PAIR_BAD_PCT_MAX); a
   * stored run's config already holds the bar it used */
  if (opt_given(&c->opts, "relative_fail_pct") && !opt_given(&c->opts, "bad_pct"))
    a->bad_pct = fmin(a->rel_fail, PAIR_BAD_PCT_MAX);
  return DDP_OK;
}

/* The grey hosts: a pair_busbw warning that says so ("grey ..."), each host once, one a line. */
static ddp_result retest_write(const char *path, const result_doc *d, int force) {
  size_t cap = 1, n = 0;
  for (int i = 0; i < d->findings.n; i++) cap += strlen(d->findings.v[i].host) + 1;
  char *text = calloc(cap, 1);
  DDP_CHECK_ALLOC(text);
  for (int i = 0; i < d->findings.n; i++) {
    const finding *f = &d->findings.v[i];
    if (strcmp(f->check, "pair_busbw") || f->severity != SEV_WARN || strncmp(f->text, "grey", 4) || !f->host[0])
      continue;
    int seen = 0;
    for (int j = 0; j < i && !seen; j++) {
      const finding *g = &d->findings.v[j];
      seen = !strcmp(g->check, "pair_busbw") && g->severity == SEV_WARN && !strncmp(g->text, "grey", 4) &&
             !strcmp(g->host, f->host);
    }
    if (seen) continue;
    n += (size_t)snprintf(text + n, cap - n, "%s\n", f->host);
  }
  ddp_result r = atomic_file_write(path, text, n, force);
  free(text);
  return r;
}

/* ---- a soak ---- */

/* Checks taken live, whose evidence the result does not hold, carried over as the run made them: a soak's weights
 * (checksums compared while it ran, not stored; soak = 1) and NCCL's account against the run's topology (the
 * topology report is not stored in an accept result; soak = 0). */
static int taken_live(const char *check, int soak) {
  if (soak)
    return !strcmp(check, "soak_weights") || !strcmp(check, "soak_nonfinite") || !strcmp(check, "soak_weights_repeat");
  return !strncmp(check, "nccl", 4);
}

/* The series' --csv (every interval) and --prom (the last), as accept --soak writes them: conclude() calls this
 * before it writes --json and --failed-hosts, with the exit code those will say. */
typedef struct {
  result_doc all, last;
} judge_series;

static void series_free(void *p) {
  judge_series *js = p;
  if (!js) return;
  result_free(&js->all), result_free(&js->last);
  free(js);
}

static ddp_result series_write(cmd_ctx *c) {
  judge_series *js = c->finish_state;
  result_doc *d = &c->doc;
  DDP_TRY(soak_doc_exit_code(c, &d->exit_code));
  DDP_TRY(soak_doc_write_records(&c->out, OUTPUT_CSV, 0, 0, d, &js->all, NULL, c->quiet));
  return soak_doc_write_records(&c->out, OUTPUT_PROM, 0, 0, d, &js->last, NULL, c->quiet);
}

/* The soak's verdicts again, over the series read back from its section: soak_doc_judge's, the live checks
 * carried over, the summary records and each GPU's steady state made again; --csv and --prom from the series. */
static ddp_result soak_rejudge(cmd_ctx *c, const judge_args *a, result_doc *d, const soak_series *S,
                               const soak_layout *lay, finding_list *live) {
  soak_params prm;
  soak_gpu_steady *gs = calloc((size_t)S->ngpu + 1, sizeof *gs);
  judge_series *js = calloc(1, sizeof *js);
  const cJSON *pj = cJSON_GetObjectItemCaseSensitive(d->soak, "gemm_precision");
  const char *prec = cJSON_IsString(pj) ? pj->valuestring : "fp32";
  ddp_result r = gs && js ? soak_params_for(S->gpu[0].model, a->expect, &prm)
                          : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  if (js) result_init(&js->all), result_init(&js->last);
  if (r == DDP_OK) r = soak_doc_judge(S, &prm, lay, &d->findings, gs);
  for (int i = 0; r == DDP_OK && i < live->n; i++)
    if (taken_live(live->v[i].check, 1)) r = findings_push(&d->findings, &live->v[i]);
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(d->soak, "state");
  const char *state = cJSON_IsString(st) ? st->valuestring : "complete";
  if (r == DDP_OK && strcmp(state, "complete"))
    r = findings_add(&d->findings, "soak_incomplete", SEV_WARN, SCOPE_JOB, "job", S->nint, NAN, "",
                     "the soak was %s after %d interval%s: judged over what it measured, not over the soak asked for",
                     state, S->nint, S->nint == 1 ? "" : "s");
  if (r == DDP_OK) r = soak_doc_summary(S, gs, prec, d);
  cJSON *gpus = cJSON_GetObjectItemCaseSensitive(d->soak, "gpus");
  for (int k = 0; r == DDP_OK && k < S->ngpu; k++) {
    cJSON *y = soak_doc_steady_json(&gs[k]), *g = cJSON_GetArrayItem(gpus, k);
    if (!y) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    else if (cJSON_GetObjectItemCaseSensitive(g, "steady")) cJSON_ReplaceItemInObjectCaseSensitive(g, "steady", y);
    else cJSON_AddItemToObject(g, "steady", y);
  }
  for (int i = 0; r == DDP_OK && i < S->nint; i++) r = soak_doc_series_records(S, prec, i, 1, &js->all);
  if (r == DDP_OK) r = soak_doc_last_records(S, prec, &js->last);
  if (r == DDP_OK) { /* the section travels to the output, its steady states judged again */
    if (!c->sections && !(c->sections = cJSON_CreateObject())) r = DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    else cJSON_AddItemToObject(c->sections, "soak", d->soak), d->soak = NULL;
  }
  if (r == DDP_OK) {
    c->outputs_own = OUTPUT_CSV | OUTPUT_PROM;
    c->finish = series_write, c->finish_state = js, c->finish_free = series_free;
  } else {
    series_free(js);
  }
  free(gs);
  return r;
}

/* The document judged again (a soak's series S, or NULL), its outputs' config and hosts set up. */
static ddp_result judge_doc(cmd_ctx *c, judge_args *a, result_doc *d, const soak_series *S, const soak_layout *lay) {
  int is_soak = S != NULL;
  if (a->rel_warn > a->rel_fail)
    return ddp_usage_error("judge: relative_warn_pct %g is above relative_fail_pct %g: a figure would fail before it "
                           "warns", a->rel_warn, a->rel_fail);
  if (a->expect[0]) { /* as accept checks them: one line naming file, line and key */
    expect_set e;
    expect_builtin(&e, "", 0, 0, 0);
    DDP_TRY(expect_load_file(&e, a->expect));
  }
  result_doc *base = NULL; /* a comma list of known-good runs, loaded and checked as accept loads them */
  int nbase = 0;
  if (a->baseline[0]) DDP_TRY(baseline_docs_load(a->baseline, "judge: --baseline", &base, &nbase));
  /* the stored judgement goes; the records and provenance stay (the checks taken live aside) */
  finding_list live;
  findings_init(&live);
  for (int i = 0; i < d->findings.n; i++)
    if ((taken_live(d->findings.v[i].check, 1) || taken_live(d->findings.v[i].check, 0)) &&
        findings_push(&live, &d->findings.v[i]) != DDP_OK) {
      findings_free(&live);
      return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    }
  if (is_soak) /* its summary records are made again from the series */
    for (int i = d->nrecords - 1; i >= 0; i--)
      if (!strcmp(d->records[i].measurement, "soak")) result_remove_record(d, i);
  findings_free(&d->findings);
  findings_init(&d->findings);
  for (int i = 0; i < d->nfailed_hosts; i++) free(d->failed_hosts[i]);
  d->nfailed_hosts = 0;
  free(d->source_kind), d->source_kind = NULL;
  free(d->kind);
  DDP_CHECK_ALLOC(d->kind = strdup("accept"));
  if (d->nccl) { /* NCCL's account travels with the figures it explains, as export keeps it */
    if (!c->sections && !(c->sections = cJSON_CreateObject())) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    cJSON_AddItemToObject(c->sections, "nccl", d->nccl);
    d->nccl = NULL;
  }
  struct tm tm; /* when the run ended: the outputs' end time is the measurement's, not the judgement's */
  memset(&tm, 0, sizeof tm);
  const char *rest = d->end_time ? strptime(d->end_time, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
  d->end_epoch = rest && !*rest ? (double)timegm(&tm) : NAN;

  accept_rules rules = {.rel_warn_pct = a->rel_warn, .rel_fail_pct = a->rel_fail, .tolerance_pct = a->tolerance,
                        .expect_file = a->expect, .baseline = base, .baseline_runs = nbase,
                        .baseline_cv_pct = a->baseline_cv, .bad_pct = a->bad_pct, .prior_bad = a->prior_bad,
                        .drain_threshold = a->drain_threshold};
  printf("# ddpbench judge: %s (accept, %d rank%s on %d host%s, ended %s), judged again: relative warn/fail %g/%g %%, "
         "baseline %s (tolerance %g %%), expect %s, bad %g %%, prior %g, drain above %g%s\n",
         a->input, d->nranks, d->nranks == 1 ? "" : "s", d->nodes, d->nodes == 1 ? "" : "s",
         d->end_time ? d->end_time : "-", a->rel_warn, a->rel_fail, a->baseline[0] ? a->baseline : "none", a->tolerance,
         a->expect[0] ? a->expect : "built-in", a->bad_pct, a->prior_bad, a->drain_threshold, a->strict ? ", strict" : "");
  ddp_result r = accept_judge_doc(d, &rules);
  baseline_docs_free(base, nbase);
  if (r == DDP_OK && is_soak) r = soak_rejudge(c, a, d, S, lay, &live);
  for (int i = 0; r == DDP_OK && i < live.n; i++) /* NCCL's, last, as accept adds them after its run */
    if (taken_live(live.v[i].check, 0)) r = findings_push(&d->findings, &live.v[i]);
  findings_free(&live);
  if (r == DDP_OK && d->nrecords == 0) /* no evidence is no pass, as accept says */
    r = findings_add(&d->findings, "measured", SEV_FAIL, SCOPE_JOB, "job", NAN, NAN, "",
                     "nothing was measured in %s: a cluster is not accepted on no evidence", a->input);
  DDP_TRY(r);
  /* the rules used, in the output's config (a `judge` of this output reproduces this verdict) */
  char v[64];
  for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++) {
    snprintf(v, sizeof v, "%.17g", *(double *)((char *)a + RULES[i].off));
    DDP_TRY(result_config_set(d, RULES[i].key, v, 0));
  }
  DDP_TRY(result_config_set(d, "expect", a->expect, 1));
  DDP_TRY(result_config_set(d, "baseline", a->baseline, 1));
  DDP_TRY(result_config_set(d, "strict", a->strict ? "true" : "false", 0));
  DDP_TRY(result_config_set(d, "judged_from", a->input, 1));
  c->strict = a->strict;
  c->exit_code = -1; /* from the findings, as accept's */
  /* the skeleton's hosts: the stored run's ranks */
  c->dist.size = d->nranks, c->dist.node_count = d->nodes;
  c->ranks = d->nranks ? calloc((size_t)d->nranks, sizeof *c->ranks) : NULL;
  if (d->nranks) DDP_CHECK_ALLOC(c->ranks);
  for (int i = 0; i < d->nranks; i++) {
    snprintf(c->ranks[i].host, sizeof c->ranks[i].host, "%s", d->ranks[i].host ? d->ranks[i].host : "");
    c->ranks[i].rank = i, c->ranks[i].node_index = d->ranks[i].node;
  }
  if (a->retest_hosts[0]) DDP_TRY(retest_write(a->retest_hosts, d, c->out.force));
  return DDP_OK;
}

static ddp_result judge_run(cmd_ctx *c) {
  judge_args *a = c->args;
  result_doc *d = &c->doc;
  result_free(d);
  DDP_TRY(result_load(a->input, d)); /* prints its own one line */
  const char *kind = d->kind && !strcmp(d->kind, "export") ? d->source_kind : d->kind;
  if (!kind || strcmp(kind, "accept"))
    return ddp_usage_error("judge: %s: judge reads accept results; this is a%s %s result", a->input,
                           kind && strchr("aeiou", kind[0]) ? "n" : "", kind ? kind : "unknown");
  const char *soak = cfg(d, "soak");
  int soak_records = 0;
  for (int i = 0; i < d->nrecords; i++) soak_records += !strcmp(d->records[i].measurement, "soak");
  int is_soak = d->soak || soak_records || (soak && strtod(soak, NULL) > 0);
  if (is_soak && !d->soak)
    return ddp_usage_error("judge: %s: a soak result without its soak section (its time series): nothing to judge "
                           "the soak by; judge the --json that accept --soak wrote", a->input);
  DDP_TRY(rules_from_doc(c, a, d));
  soak_series S; /* a soak's series, read back before anything is said: bad input is one line */
  soak_layout lay;
  memset(&S, 0, sizeof S), memset(&lay, 0, sizeof lay);
  char err[300] = "";
  if (is_soak && soak_doc_load(d->soak, d, &S, &lay, err, sizeof err) != DDP_OK)
    return err[0] ? ddp_usage_error("judge: %s: %s", a->input, err) : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  ddp_result r = judge_doc(c, a, d, is_soak ? &S : NULL, &lay);
  soak_series_free(&S);
  soak_layout_free(&lay);
  return r;
}

const cmd_def cmd_judge = {
    .bottom = accept_bottom,
    .name = "judge",
    .summary = "a stored accept result judged again under other rules (a threshold tried on yesterday's run)",
    .usage = "usage: ddpbench judge RESULT.json [--baseline F] [--bad-pct P] [--prior-bad P] [--drain-threshold T] "
             "[--relative-fail-pct P] [--strict] [--json F] [--failed-hosts F] [--retest-hosts F] [--prom F] [--csv F]\n",
    .exit_codes = "0 every host passed (warnings allowed), 2 bad input or a result that is not an accept result, 4 a "
                  "check failed (--strict: or warned)",
    .about = "Reads an accept result (--json), drops its findings and verdict, and judges its records again with "
             "accept's code under the rules given (a rule not given is the stored run's), writing accept's outputs; a "
             "soak's (accept --soak) from its time series, its weights checks carried over. No MPI, no device; "
             "deterministic.\n"
             "Example: ddpbench judge accept.json --drain-threshold 0.9 --failed-hosts drain.txt\n",
    .flags = CMD_OUTPUTS | CMD_VERDICT,
    .args_size = sizeof(judge_args),
    .tables = judge_tables,
    .validate = judge_validate,
    .run = judge_run,
};
