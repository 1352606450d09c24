/* cmd.c: the subcommand skeleton (cmd.h): options, MPI under the watchdog, preflight, placement, identity and
 * provenance, the work, the verdict and outputs, the exit protocol. In that order, the same for everyone. */
#include "cmd.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "bottom.h"
#include "nccl_section.h"
#include "envcheck.h"
#include "hosts.h"
#include "preflight.h"
#include "topo.h"
#include "watchdog.h"

static const cmd_def *const *g_all;

void cmd_use(const cmd_def *const *cmds) { g_all = cmds; }

/* ---- options ---------------------------------------------------------------------------------------- */
static int is_run(const cmd_def *def) { return !strcmp(def->name, "run"); }

/* The value of key in s as text ("" when s has no such key). */
static const char *set_value(const opt_set *s, const char *key, char *buf, size_t n) {
  const char *k;
  buf[0] = 0;
  for (int i = 0; opt_key_at(s, i, &k, buf, n, NULL); i++)
    if (!strcmp(k, key)) return buf;
  buf[0] = 0;
  return buf;
}

/* A set over fresh structs for def: its tables, then the skeleton's (--quiet for those that have none). */
static ddp_result set_build(const cmd_def *def, opt_set *s, void *args, result_outputs *out, placement_choice *want) {
  opt_set_init(s, is_run(def) ? NULL : def->name);
  DDP_TRY(def->tables(s, args));
  if (def->flags & CMD_PLACE) DDP_TRY(opt_set_add(s, def->flags & CMD_COMM ? &placement_table : &placement_device_table, want));
  if (def->flags & CMD_OUTPUTS) DDP_TRY(opt_set_add(s, &outputs_table, out));
  else if (def->flags & CMD_JSON) DDP_TRY(opt_set_add(s, &outputs_json_table, out));
  char v[8];
  if ((def->flags & (CMD_OUTPUTS | CMD_JSON)) && !set_value(s, "quiet", v, sizeof v)[0])
    DDP_TRY(opt_set_add(s, &outputs_quiet_table, out));
  return DDP_OK;
}

/* The other subcommands' sets (scratch), so that their sections of a config file are checked too. */
typedef struct {
  opt_set *sets[16];
  opt_set *list[17];
  void *mem[16];
  int n;
} others;

static void others_free(others *o) {
  for (int i = 0; i < o->n; i++) free(o->sets[i]), free(o->mem[i]);
  memset(o, 0, sizeof *o);
}

static ddp_result others_build(const cmd_def *def, others *o) {
  memset(o, 0, sizeof *o);
  for (int i = 0; g_all && g_all[i] && o->n < 16; i++) {
    const cmd_def *x = g_all[i];
    if (x == def) continue;
    size_t a = (x->args_size + 15) / 16 * 16;
    o->sets[o->n] = calloc(1, sizeof(opt_set));
    o->mem[o->n] = calloc(1, a + sizeof(result_outputs) + sizeof(placement_choice) + 16);
    if (!o->sets[o->n] || !o->mem[o->n]) {
      free(o->sets[o->n]), free(o->mem[o->n]);
      others_free(o);
      return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    }
    char *m = o->mem[o->n];
    ddp_result r = set_build(x, o->sets[o->n], m, (result_outputs *)(m + a),
                             (placement_choice *)(m + a + sizeof(result_outputs)));
    o->list[o->n] = o->sets[o->n];
    o->n++;
    if (r != DDP_OK) {
      others_free(o);
      return r;
    }
  }
  o->list[o->n] = NULL;
  return DDP_OK;
}

/* Options of def from argv into c (every rank, before MPI): the parse, then def's cross-key checks. */
static ddp_result ctx_parse(cmd_ctx *c, const cmd_def *def, int argc, char **argv) {
  c->def = def;
  c->argc = argc;
  c->argv = argv;
  c->exit_code = -1;
  c->args = calloc(1, def->args_size ? def->args_size : 1);
  DDP_CHECK_ALLOC(c->args);
  DDP_TRY(set_build(def, &c->opts, c->args, &c->out, &c->want));
  others o;
  DDP_TRY(others_build(def, &o));
  ddp_result r = opt_parse(&c->opts, argc, argv, o.list);
  others_free(&o);
  char q[8];
  c->quiet = r == DDP_OK && !strcmp(set_value(&c->opts, "quiet", q, sizeof q), "true");
  if (r == DDP_OK && !c->opts.help && !c->opts.version && def->validate) r = def->validate(c);
  return r;
}

ddp_result cmd_parse(cmd_ctx *c, const cmd_def *def, int argc, char **argv) {
  memset(c, 0, sizeof *c);
  return ctx_parse(c, def, argc, argv);
}

void cmd_free(cmd_ctx *c) {
  free(c->args);
  c->args = NULL;
}

/* The timeout the watchdog starts with when the options did not parse: the subcommand's default. */
static double default_timeout(const cmd_def *def) {
  cmd_ctx *d = calloc(1, sizeof *d);
  double t = 600;
  if (d && set_build(def, &d->opts, d->args = calloc(1, def->args_size ? def->args_size : 1), &d->out, &d->want) ==
               DDP_OK &&
      opt_defaults(&d->opts) == DDP_OK && def->timeout)
    t = def->timeout(d->args);
  if (d) free(d->args);
  free(d);
  return t;
}

static void help_print(const cmd_def *def, const opt_set *s) {
  char about[4096] = "";
  size_t o = 0;
  if (def->about) o += (size_t)snprintf(about + o, sizeof about - o, "%s", def->about);
  if (is_run(def) && g_all) { /* the program's own help lists the subcommands */
    o += (size_t)snprintf(about + o, sizeof about - o, "\nsubcommands (ddpbench SUBCOMMAND --help for each):\n");
    for (int i = 0; g_all[i] && o < sizeof about; i++)
      if (!is_run(g_all[i]))
        o += (size_t)snprintf(about + o, sizeof about - o, "  %-13s %s\n", g_all[i]->name, g_all[i]->summary);
  }
  opt_help(s, stdout, def->usage, about);
  char tail[1024];
  snprintf(tail, sizeof tail, "\nExit codes: %s. An output file is replaced only with --force, and only if it is a "
           "regular file.\n", def->exit_codes ? def->exit_codes
           : "0 success, 1 verification failed (data or weights differ), 2 bad input, 3 runtime error or timeout, 4 a "
             "check failed (--strict: or warned), 5 non-finite weights or loss (training), 130/143 SIGINT/SIGTERM");
  opt_print_wrapped(stdout, tail);
}

/* ---- before work ------------------------------------------------------------------------------------ */
/* This rank's outputs: rank 0's files, each host's first rank's folder (OPT_OUTDIR keys). */
static ddp_result outputs_preflight(void *ctx, const ddp_dist *d, char *err, size_t errn) {
  cmd_ctx *c = ctx;
  if (d->rank == 0 && outputs_check(&c->out, err, errn) != DDP_OK) return DDP_ERR_USAGE;
  const char *key;
  char value[1100];
  const opt_spec *k;
  for (int i = 0; opt_key_at(&c->opts, i, &key, value, sizeof value, &k); i++) {
    char why[1200];
    if ((k->flags & OPT_OUTDIR) && value[0] && d->local_rank == 0 &&
        topo_xml_dir_check(d, value, c->out.force, why, sizeof why) != 0) {
      char opt[80];
      snprintf(opt, sizeof opt, "%s", key);
      for (char *p = opt; *p; p++)
        if (*p == '_') *p = '-';
      snprintf(err, errn, "%s%s--%s: %s", is_run(c->def) ? "" : c->def->name, is_run(c->def) ? "" : ": ", opt, why);
      return DDP_ERR_USAGE;
    }
    if ((k->flags & OPT_OUTPUT) && k->type == OPT_STR && value[0] && d->rank == 0 && !(c->def->flags & (CMD_OUTPUTS | CMD_JSON))) {
      char why2[1200];
      if (atomic_file_check(value, c->out.force, why2, sizeof why2) != DDP_OK) {
        snprintf(err, errn, "--%s: %s", key, why2);
        return DDP_ERR_USAGE;
      }
    }
  }
  return DDP_OK;
}

/* Every rank's identity to rank 0 (c->ranks). */
static ddp_result identity_gather(cmd_ctx *c) {
  const ddp_dist *d = &c->dist;
  cmd_rank me;
  memset(&me, 0, sizeof me);
  me.rank = d->rank;
  me.local_rank = d->local_rank;
  me.node_index = d->node_index;
  me.pid = (int)getpid();
  snprintf(me.host, sizeof me.host, "%.63s", d->host);
  me.host_hash = d->host_hash;
  if (c->dev) me.dev = c->dev->info;
  else me.dev.ordinal = -1;
  cmd_versions(&me.ver);
  if (d->rank == 0) {
    c->ranks = calloc((size_t)d->size, sizeof *c->ranks);
    DDP_CHECK_ALLOC(c->ranks);
  }
  DDP_CHECK_MPI(MPI_Gather(&me, (int)sizeof me, MPI_BYTE, c->ranks, (int)sizeof me, MPI_BYTE, 0, d->world));
  return DDP_OK;
}

/* The document's provenance, once, from the option set, the placement and the ranks (rank 0). */
static ddp_result provenance(cmd_ctx *c) {
  result_doc *m = &c->doc;
  m->schema_version = RESULT_SCHEMA_VERSION;
  DDP_CHECK_ALLOC(m->kind = strdup(c->def->name));
  DDP_CHECK_ALLOC(m->ddpbench_version = strdup(DDPBENCH_VERSION));
  DDP_CHECK_ALLOC(m->command_line = strdup(c->opts.command_line));
  DDP_CHECK_ALLOC(m->start_time = strdup(c->start_time));
  DDP_CHECK_ALLOC(m->device = strdup(c->pl.device ? c->pl.device->name : "none"));
  DDP_CHECK_ALLOC(m->comm = strdup(c->comm ? c->comm->name : c->pl.comm ? c->pl.comm->name : "none"));
  m->world_size = c->dist.size;
  m->nodes = c->dist.node_count;
  const char *key;
  char value[4200];
  const opt_spec *k;
  for (int i = 0; opt_key_at(&c->opts, i, &key, value, sizeof value, &k); i++) {
    DDP_TRY(result_kv_push(&m->config, &m->nconfig, key, value));
    m->config[m->nconfig - 1].text = k->type == OPT_STR || k->type == OPT_CUSTOM;
  }
  DDP_TRY(result_env_collect(m));
  if (!c->ranks) return DDP_OK;
  m->ranks = calloc((size_t)c->dist.size, sizeof *m->ranks);
  DDP_CHECK_ALLOC(m->ranks);
  m->nranks = c->dist.size;
  for (int i = 0; i < c->dist.size; i++) {
    const cmd_rank *ri = &c->ranks[i];
    result_rank *x = &m->ranks[i];
    x->rank = ri->rank;
    x->local_rank = ri->local_rank;
    x->node = ri->node_index;
    x->pid = ri->pid;
    x->ordinal = ri->dev.ordinal;
    x->memory_bytes = (double)ri->dev.memory;
    x->gemm_tflops = NAN;
    DDP_CHECK_ALLOC(x->host = strdup(ri->host));
    DDP_CHECK_ALLOC(x->device_name = strdup(ri->dev.name));
    DDP_CHECK_ALLOC(x->pci_bus_id = strdup(ri->dev.pci_bus_id));
    const char *fname, *fval;
    for (int f = 0; (fval = envcheck_version_field(&ri->ver, f, &fname)) != NULL; f++)
      DDP_TRY(result_kv_push(&x->versions, &x->nversions, fname, fval));
  }
  return DDP_OK;
}

/* ---- after work (rank 0) ------------------------------------------------------------------------------ */
static int worse(int a, int b) {
  /* weights differ (1) before non-finite (5) before bad input (2) before a failed check (4) before runtime (3) */
  static const int order[] = {DDP_EXIT_CHECK, DDP_EXIT_NONFINITE, DDP_EXIT_USAGE, DDP_EXIT_EXPECT, DDP_EXIT_RUNTIME};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    if (a == order[i] || b == order[i]) return order[i];
  return a ? a : b;
}

/* The run's name among others: its start, command line, rank 0's host and pid. */
static void run_id(const cmd_ctx *c, char out[17]) {
  uint64_t h = DDP_FNV1A64_INIT;
  const char *parts[] = {c->start_time, c->opts.command_line, cmd_rank_host(c, 0)};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) h = ddp_fnv1a64(parts[i], strlen(parts[i]) + 1, h);
  int pid = c->ranks ? c->ranks[0].pid : (int)getpid(), world = c->dist.size;
  h = ddp_fnv1a64(&pid, sizeof pid, h);
  h = ddp_fnv1a64(&world, sizeof world, h);
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The bottom line for code; its verdict in c->verdict. */
static void bottom_line(cmd_ctx *c, int code, char *line, size_t n) {
  /* a document rewritten from another (an export) holds its source's findings, not its own: its verdict is
   * its exit code's alone (the source's follows among its figures) */
  c->verdict = bottom_verdict(code, c->doc.source_kind ? NULL : &c->doc.findings);
  char figs[1024] = "", ctx[160];
  if (c->def->bottom) c->def->bottom(c, figs, sizeof figs);
  /* judge sets dist.size to the stored run's ranks without MPI: its bottom line is the run's */
  bottom_context(ctx, sizeof ctx, c->def->flags & CMD_MPI || c->dist.size > 0 ? c->dist.size : 0, c->dist.node_count,
                 &c->doc.findings);
  bottom_compose(line, n, c->def->name, c->verdict, figs, ctx);
}

/* Now on the wall clock, as the start time plus the monotonic time since: a wall clock stepped back during the
 * run (NTP, an operator) never puts the end before the start. */
static double wall_now(const cmd_ctx *c) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  if (!c->start_time[0] || !strptime(c->start_time, "%Y-%m-%dT%H:%M:%SZ", &tm)) return (double)time(NULL);
  return (double)timegm(&tm) + (ddp_now() - c->t0);
}

/* The outcome into the document (a document rewritten from another, an export, keeps its source's). */
static ddp_result outcome_record(cmd_ctx *c, int code, const char *line) {
  result_doc *d = &c->doc;
  DDP_TRY(outputs_labels_apply(&c->out, d));
  if (d->source_kind) return DDP_OK;
  time_t end = (time_t)(isfinite(d->end_epoch) ? d->end_epoch : wall_now(c));
  char when[32], id[17];
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&end));
  run_id(c, id);
  free(d->verdict), free(d->bottom_line), free(d->end_time), free(d->run_id);
  d->verdict = strdup(c->verdict);
  d->bottom_line = strdup(line);
  d->end_time = strdup(when);
  d->run_id = strdup(id);
  if (!d->state || strcmp(d->state, "interrupted")) { /* interrupted: said by the soak, kept */
    free(d->state);
    d->state = strdup(strcmp(c->verdict, "INCOMPLETE") ? "complete" : "running");
  }
  DDP_CHECK_ALLOC(d->verdict && d->bottom_line && d->end_time && d->run_id && d->state);
  d->exit_code = code;
  d->duration_s = ddp_now() - c->t0;
  return DDP_OK;
}

ddp_result cmd_outcome_incomplete(cmd_ctx *c, const char *line) {
  const char *was = c->verdict;
  c->verdict = "INCOMPLETE";
  c->doc.end_epoch = wall_now(c);
  ddp_result r = outcome_record(c, DDP_EXIT_RUNTIME, line);
  c->verdict = was;
  return r;
}

/* The findings table, the hosts' verdict, the outputs and the bottom line; returns the exit code. */
static int conclude(cmd_ctx *c) {
  ddp_result fr = DDP_OK;
  if (c->finish) { /* the subcommand's own outputs, now that NCCL's account has added its findings */
    fr = c->finish(c);
    c->finish = NULL;
  }
  int code = c->exit_code >= 0 ? c->exit_code : findings_exit_code(&c->doc.findings);
  if (fr != DDP_OK) code = worse(code, DDP_EXIT_RUNTIME);
  if (c->def->flags & CMD_VERDICT) {
    int n = c->dist.size ? c->dist.size : 0;
    const char **hosts = calloc((size_t)n + 1, sizeof *hosts);
    for (int i = 0; hosts && i < n; i++) hosts[i] = cmd_rank_host(c, i);
    hosts_verdict v;
    ddp_result r = hosts ? hosts_judge(&c->doc, hosts, n, c->strict, &v) : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
    if (r == DDP_OK && c->quiet) {
      findings_print_notable(stdout, &c->doc.findings);
    } else if (r == DDP_OK) {
      findings_print(stdout, &c->doc.findings);
      hosts_print(stdout, c->def->flags & CMD_HASH_LINES ? "# " : "", &c->doc, hosts, n, &v);
    }
    free((void *)hosts);
    if (r != DDP_OK) return DDP_EXIT_RUNTIME;
    if (code == DDP_EXIT_OK && v.failing_findings) code = DDP_EXIT_EXPECT; /* strict: a warning fails */
  }
  fflush(stdout);
  if (c->def->flags & CMD_MPI) c->doc.end_epoch = wall_now(c);
  char line[1400];
  bottom_line(c, code, line, sizeof line);
  ddp_result r = outcome_record(c, code, line);
  if (r == DDP_OK) r = outputs_write_some(&c->out, ~c->outputs_own, c->outputs_replace, 0, &c->doc, c->sections, c->quiet);
  c->written = r == DDP_OK;
  if (r != DDP_OK) {
    code = worse(code, r == DDP_ERR_USAGE ? DDP_EXIT_USAGE : DDP_EXIT_RUNTIME);
    bottom_line(c, code, line, sizeof line); /* the outputs' error is above it */
  }
  if (c->def->bottom) {
    FILE *o = c->report_stderr ? stderr : stdout;
    /* nccl-tests' tables: every line that is not a row starts with '#' (parsers read the others as rows) */
    fprintf(o, "%s%s\n", c->def->flags & CMD_HASH_LINES ? "# " : "", line);
    fflush(o);
  }
  return code;
}

static void ctx_free_devices(cmd_ctx *c) {
  if (c->comm) c->comm->destroy(c->comm);
  if (c->dev) c->dev->destroy(c->dev);
  c->comm = NULL;
  c->dev = NULL;
}

static void ctx_free(cmd_ctx *c) {
  ctx_free_devices(c);
  if (c->finish_free) c->finish_free(c->finish_state);
  c->finish = NULL, c->finish_free = NULL, c->finish_state = NULL;
  free(c->ranks);
  c->ranks = NULL;
  result_free(&c->doc);
  cJSON_Delete(c->sections);
  c->sections = NULL;
  free(c->args);
  c->args = NULL;
}

/* --quiet: the report that run() prints goes nowhere (fd 1 to /dev/null); the findings that are not passes and
 * the bottom line follow it. Returns the saved stdout for quiet_end (-1: nothing to restore). */
static int quiet_begin(void) {
  fflush(stdout);
  int saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (saved < 0 || null < 0 || dup2(null, STDOUT_FILENO) < 0) {
    ddp_notice("--quiet: cannot silence the report (%s): printing it", ddp_strerror_errno());
    if (null >= 0) close(null);
    if (saved >= 0) close(saved);
    return -1;
  }
  close(null);
  return saved;
}

static void quiet_end(int saved) {
  if (saved < 0) return;
  fflush(stdout);
  if (dup2(saved, STDOUT_FILENO) < 0) ddp_notice("--quiet: cannot restore standard output: %s", ddp_strerror_errno());
  close(saved);
}

/* Steps 3 to 5 (cmd.h) on a started MPI job; returns the exit code, or ends the job. */
static int work(cmd_ctx *c, ddp_result parsed, const char *msg) {
  const cmd_def *def = c->def;
  ddp_dist *d = &c->dist;
  time_t now = time(NULL);
  c->t0 = ddp_now();
  strftime(c->start_time, sizeof c->start_time, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  result_init(&c->doc);
  watchdog_tick("checking the options and outputs on every rank");
  ddp_result r = preflight_run(d, &c->opts, parsed, msg, outputs_preflight, c);
  if (r == DDP_OK && def->timeout) watchdog_set_timeout(def->timeout(c->args));
  if (r == DDP_OK && (def->flags & CMD_PLACE)) {
    watchdog_tick("choosing the device and comm");
    r = placement_choose(d, &c->want, (def->flags & CMD_COMM) != 0, def->cpu_note, &c->pl);
    if (r == DDP_OK && def->placed) r = def->placed(c);
    if (r == DDP_OK) watchdog_tick("creating the device and the communicator");
    if (r == DDP_OK)
      r = placement_create(&c->pl, d, def->cpu_threads, d->world, &c->dev, def->flags & CMD_COMM ? &c->comm : NULL);
  }
  if (r == DDP_OK) r = identity_gather(c);
  if (r == DDP_OK && d->rank == 0) r = provenance(c);
  if (r == DDP_OK) {
    watchdog_tick("start-up");
    int saved = d->rank == 0 && c->quiet ? quiet_begin() : -1;
    r = def->run(c);
    quiet_end(saved);
  }
  if (r == DDP_OK) { /* NCCL's account: collective, after the work, before the findings table */
    watchdog_tick("NCCL's account (its set-up log) to rank 0");
    r = nccl_section_collect(c);
  }
  int code = DDP_EXIT_OK;
  if (r == DDP_OK && d->rank == 0) {
    watchdog_busy("rank 0: the findings and the outputs (the other ranks wait for it)");
    code = conclude(c);
  }
  if (d->rank == 0) watchdog_busy_end();
  if (r == DDP_OK) { /* rank 0's outcome travels to every rank */
    int status[3] = {r, code, c->written};
    int e = MPI_Bcast(status, 3, MPI_INT, 0, d->world);
    if (e != MPI_SUCCESS) r = mpi_fail(e, "MPI_Bcast(the outcome)", __FILE__, __LINE__);
    else if (status[0] != DDP_OK) r = DDP_ERR_INTERNAL; /* rank 0 is aborting */
    else code = status[1], c->written = status[2];
  }
  if (r == DDP_ERR_USAGE || r == DDP_ERR_EXPECT) { /* decided collectively: every rank leaves cleanly */
    ctx_free(c);
    return ddp_exit_code(r);
  }
  if (r != DDP_OK) { /* peers may be inside a collective: only MPI_Abort ends them */
    fprintf(stderr, "[ddpbench rank %d host %s] aborting the job: %s\n", d->rank, d->host, ddp_result_str(r));
    if (c->comm) c->comm->abort(c->comm);
    dist_abort(ddp_exit_code(r));
  }
  ctx_free_devices(c);
  if (def->after) code = def->after(c, code);
  ctx_free(c);
  return code;
}

int cmd_nested(cmd_ctx *outer, const cmd_def *def, int argc, char **argv) {
  cmd_ctx *c = calloc(1, sizeof *c);
  if (!c) dist_abort(DDP_EXIT_RUNTIME);
  char msg[1400] = "";
  ddp_usage_capture(msg, sizeof msg);
  ddp_result parsed = ctx_parse(c, def, argc, argv);
  ddp_usage_capture(NULL, 0);
  c->dist = outer->dist;
  int code = work(c, parsed, msg);
  outer->nested_verdict = c->verdict;
  free(c);
  return code;
}

int cmd_main(const cmd_def *const *cmds, int argc, char **argv) {
  g_all = cmds;
  const cmd_def *def = NULL;
  int shift = argc > 1 && argv[1][0] != '-';
  for (int i = 0; shift && cmds[i] && !def; i++)
    if (!strcmp(cmds[i]->name, argv[1]) && !is_run(cmds[i])) def = cmds[i];
  if (shift && !def) {
    ddp_usage_error("unknown subcommand '%s' (ddpbench --help lists them)", argv[1]);
    return DDP_EXIT_USAGE;
  }
  for (int i = 0; !def && cmds[i]; i++)
    if (is_run(cmds[i])) def = cmds[i];
  static cmd_ctx c; /* large; one per process */
  char msg[1400] = "";
  ddp_usage_capture(msg, sizeof msg); /* every rank's error reaches rank 0 through preflight */
  ddp_result parsed = ctx_parse(&c, def, argc - shift, argv + shift);
  ddp_usage_capture(NULL, 0);
  if (parsed == DDP_OK && (c.opts.help || c.opts.version)) {
    if (ddp_launcher_rank() == 0) {
      if (c.opts.help) help_print(def, &c.opts);
      else printf("ddpbench %s\n", DDPBENCH_VERSION);
    }
    free(c.args);
    return DDP_EXIT_OK;
  }
  /* One output to "-": standard output is the document's; the report goes to stderr from here on. */
  if (parsed == DDP_OK && outputs_to_stdout(&c.out) == 1 && atomic_file_stdout_take() != DDP_OK) {
    free(c.args);
    return DDP_EXIT_RUNTIME;
  }
  if (!(def->flags & CMD_MPI)) { /* a plain program: the message, or the work, here */
    if (parsed != DDP_OK) {
      if (msg[0]) fprintf(stderr, "ddpbench: %s\n", msg);
      free(c.args);
      return ddp_exit_code(parsed);
    }
    result_init(&c.doc);
    time_t now = time(NULL);
    c.t0 = ddp_now();
    strftime(c.start_time, sizeof c.start_time, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int saved = c.quiet ? quiet_begin() : -1;
    ddp_result r = def->run(&c);
    quiet_end(saved);
    int code = r == DDP_OK ? conclude(&c) : ddp_exit_code(r);
    ctx_free(&c);
    return code;
  }
  /* Armed before MPI_Init: a peer that never starts leaves MPI_Init waiting. */
  watchdog_start(parsed == DDP_OK && def->timeout ? def->timeout(c.args) : default_timeout(def),
                 "MPI start-up (MPI_Init: did every rank start?)");
  if (dist_init(&argc, &argv, &c.dist) != DDP_OK) dist_abort(DDP_EXIT_RUNTIME);
  watchdog_signals_install();
  if (watchdog_join(&c.dist) != DDP_OK) dist_abort(DDP_EXIT_RUNTIME);
  dist_emulate_nodes(&c.dist);
  int code = work(&c, parsed, msg);
  watchdog_shutdown(c.written, code); /* a launcher that stops answering now holds MPI_Finalize: the report says so */
  dist_finalize(&c.dist);
  watchdog_test_fault(c.dist.rank, "exit"); /* a rank still exiting when a peer has left with its code */
  return code;
}
