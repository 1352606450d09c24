/* collectives.c: `ddpbench collectives`, nccl-tests' sweep through the comm interface: the "collectives"
 * measurement (measure/collectives.h) over the world, each node (--group node) or node pairs in rounds
 * (--group pairs), its table printed as nccl-tests prints it (row by row over the world; a group's table once
 * its round ends), wrong data a failing finding of the rank that received it (exit 1: corruption, as weights
 * that differ are). The skeleton (cmd.h) reads the options, places the device (NCCL on GPUs, MPI on the CPU
 * device), and writes --json and the other outputs from the records. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_verdicts.h"
#include "collectives.h"
#include "bottom_figures.h"
#include "commands.h"
#include "measure.h"
#include "progress.h"
#include "watchdog.h"

typedef struct {
  coll_opts o;
  int group; /* 0 world, 1 each node, 2 node pairs */
  int progress; /* progress_mode */
} coll_args;

static const opt_spec GROUP[] = {
    {"group", NULL, 0, OPT_ENUM, offsetof(coll_args, group), 0, "world", .choices = "world|node|pairs",
     .help = "the sweep on all ranks, on each node, or on node pairs"},
};
static const opt_table GROUP_TABLE = {"groups", GROUP, 1};

static ddp_result tables(opt_set *s, void *args) {
  coll_args *a = args;
  DDP_TRY(opt_set_add(s, &collectives_options, &a->o));
  DDP_TRY(opt_set_add(s, &GROUP_TABLE, a));
  return opt_set_add(s, &progress_table, &a->progress);
}

static double timeout(const void *args) {
  double t = ((const coll_args *)args)->o.timeout;
  return t > 0 ? t + 30 : 0; /* the watchdog backs up -T: the waits end the job themselves after -T s */
}

static ddp_result validate(cmd_ctx *c) {
  coll_args *a = c->args;
  DDP_TRY(coll_options_finish(&a->o, &c->opts));
  const device_entry *de = device_chosen(c->want.device);
  if (a->o.graph && de && !de->is_gpu) return ddp_usage_error("collectives: -G/--cudagraph needs a GPU device");
  if (a->group && a->o.cycles == 0)
    return ddp_usage_error("collectives: -N/--run_cycles 0 (forever) runs on the whole world only, not with --group");
  return DDP_OK;
}

/* What decides how many SMs NCCL's kernels take (and which algorithm), printed as set or "unset". */
static const char *const NCCL_VARS[] = {"NCCL_MAX_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_CTAS", "NCCL_MIN_CTAS",
                                        "NCCL_ALGO",          "NCCL_PROTO",         "NCCL_NVLS_ENABLE"};

static void preamble(const cmd_ctx *c, const coll_opts *o) {
  ddp_versions v;
  cmd_versions(&v);
  printf("# ddpbench %s collectives (nccl-tests 2.19.6 conventions) nccl-headers=%s nccl-library=%s\n",
         DDPBENCH_VERSION, v.nccl_header[0] ? v.nccl_header : "none", v.nccl_runtime[0] ? v.nccl_runtime : "none");
  printf("# comm %s device %s ranks %d nodes %d mpi %s\n", c->comm->name, c->pl.device->name, c->dist.size,
         c->dist.node_count, dist_mpi_version());
  printf("# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: 1 "
         "validation: %d graph: %d average: %d\n",
         o->min_bytes, o->max_bytes, o->step_factor >= 2 ? (size_t)o->step_factor : o->step_bytes,
         o->step_factor >= 2 ? "factor" : "bytes", o->warmup, o->iters, o->check, o->graph, o->average);
  printf("# NCCL SMs:");
  for (size_t i = 0; i < sizeof NCCL_VARS / sizeof NCCL_VARS[0]; i++)
    printf(" %s=%s", NCCL_VARS[i], getenv(NCCL_VARS[i]) ? getenv(NCCL_VARS[i]) : "unset");
  printf("\n");
  int H = o->load_h > 0 ? o->load_h : c->pl.device->is_gpu ? 8192 : 256;
  if (o->load_h)
    printf("# under load: bf16 %dx%dx%d GEMM loop on a second stream; its TF/s alone and beside the out-of-place call\n",
           H, H, H);
  printf("#\n# Using devices\n");
  for (int r = 0; r < c->dist.size; r++) {
    const cmd_rank *x = &c->ranks[r];
    printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s\n", r, x->pid, x->host, x->dev.ordinal,
           x->dev.pci_bus_id[0] ? x->dev.pci_bus_id : "cpu", x->dev.name);
  }
  printf("#\n");
  fflush(stdout);
}

/* Options that depend on the groups (the same decision on every rank): the root must be a rank of every group. */
static ddp_result groups_check(const cmd_ctx *c, const coll_args *a) {
  const ddp_dist *d = &c->dist;
  int *node = malloc((size_t)d->size * sizeof *node), *count = calloc((size_t)d->node_count + 1, sizeof *count);
  ddp_result r = node && count ? dist_allgather(d, &d->node_index, node, (int)sizeof(int))
                               : DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  int smallest = d->size;
  for (int i = 0; r == DDP_OK && i < d->size; i++) count[node[i]]++;
  if (r == DDP_OK && a->group)
    for (int nd = 0; nd < d->node_count; nd++)
      if (count[nd] < smallest) smallest = count[nd];
  free(node), free(count);
  DDP_TRY(r);
  if (a->group == 2) smallest *= 2;
  if (a->group == 2 && d->node_count < 2)
    return ddp_usage_error("collectives: --group pairs needs ranks on at least 2 nodes (this job has 1)");
  if (a->o.root >= smallest)
    return ddp_usage_error("collectives: -r/--root %d is not a rank of every group (the smallest has %d)", a->o.root,
                           smallest);
  return DDP_OK;
}

/* A row on stdout: the progress line (tty) makes way for it, and is drawn again below it by the next row's step. */
static void emit_rows(void *ctx, const result_doc *recs) {
  progress_clear();
  coll_printer_feed(ctx, recs);
  fflush(stdout);
}

static ddp_result run(cmd_ctx *c) {
  coll_args *a = c->args;
  const ddp_dist *d = &c->dist;
  if (a->o.graph && !c->pl.device->is_gpu) /* the placement is collective: so is this */
    return ddp_usage_error("collectives: -G/--cudagraph needs a GPU device, and no GPU is visible");
  DDP_TRY(groups_check(c, a));
  watchdog_tick("collectives: setting up");
  if (d->rank == 0) preamble(c, &a->o);
  coll_printer pr;
  coll_printer_init(&pr, stdout, &c->doc, a->o.max_bytes);
  result_doc *doc = d->rank == 0 ? &c->doc : NULL;
  measure_env env = {.dist = d, .dev = c->dev, .device = c->pl.device, .params = &a->o,
                     .waiting = NULL, .emit = NULL, .emit_ctx = &pr};
  measure_round *rounds = NULL;
  int n = 0;
  static const measure_group_kind kinds[] = {GROUP_WORLD, GROUP_NODE, GROUP_PAIR};
  ddp_result r = measure_rounds_build(d, c->comm, kinds[a->group], 0, &rounds, &n);
  progress_start(d->rank == 0 && !c->quiet ? (progress_mode)a->progress : PROGRESS_NONE, NULL, "collectives");
  if (r == DDP_OK && a->group == 0) { /* the world: rows printed as they come (world rank 0 leads the world) */
    env.emit = emit_rows;
    r = measure_run(&env, &measure_collectives, rounds, n, doc);
  }
  for (int i = 0; r == DDP_OK && a->group && i < n; i++) { /* groups run at once: their tables after the round */
    result_doc round;
    result_init(&round);
    char label[80]; /* rank 0's group of the round (a rank of a node pair's round may sit it out) */
    snprintf(label, sizeof label, "%s", rounds[i].member ? rounds[i].g.name : "(rank 0 waits)");
    progress_group(i, n, label);
    r = measure_run(&env, &measure_collectives, &rounds[i], 1, doc ? &round : NULL);
    progress_group_end();
    progress_clear();
    if (r == DDP_OK && doc) coll_printer_feed(&pr, &round);
    for (int k = 0; r == DDP_OK && doc && k < round.nrecords; k++) r = result_add_record(doc, &round.records[k]);
    result_free(&round);
  }
  progress_end(); /* before the table's end (tty: the line's newline) */
  if (r == DDP_OK) measure_rounds_free(rounds, n); /* on failure the job is aborted: peers may be in a call */
  if (r == DDP_OK && doc) {
    coll_printer_end(&pr);
    r = collectives_findings(doc, &doc->findings);
    /* Wrong data is corruption, as weights that differ are (exit 1), not a missed expectation (4). */
    c->exit_code = doc->findings.n ? DDP_EXIT_CHECK : DDP_EXIT_OK;
  }
  return r;
}

const cmd_def cmd_collectives = {
    .bottom = collectives_bottom,
    .name = "collectives",
    .summary = "nccl-tests' sweep through the comm interface, with exact data checks and --under-load",
    .usage = "usage: mpirun -np N ddpbench collectives [COLLECTIVE ...] [options]\n"
             "       COLLECTIVE: allreduce, reduce_scatter, all_gather, broadcast, alltoall, reduce,\n"
             "                   gather, scatter, sendrecv, alltoallv or all\n",
    .about = "nccl-tests' sweep through ddpbench's comm interface (NCCL on GPUs, MPI on the CPU device), with its "
             "options, table and busbw factors, plus per-iteration median/p10/p90, the slowest rank, exact data "
             "checks naming the rank, host and element of a wrong value, and --under-load. Several collectives "
             "may be given (or a comma list). Options take nccl-tests' short and long names and ddpbench's "
             "--dashed ones; nccl-tests' -t 1, -g 1, -m 1 and -z 0 are accepted at those values (one rank per GPU, "
             "one call per group, non-blocking calls).\n"
             "Example: mpirun -np 8 ddpbench collectives all_gather -b 8 -e 8G -f 2 --json coll.json\n",
    .exit_codes = "0 success, 1 wrong data (a non-zero #wrong), 2 bad input, 3 runtime error or timeout (a wait "
                  "longer than -T), 130/143 SIGINT/SIGTERM",
    .flags = CMD_MPI | CMD_PLACE | CMD_COMM | CMD_OUTPUTS | CMD_VERDICT | CMD_HASH_LINES,
    .args_size = sizeof(coll_args),
    .tables = tables,
    .validate = validate,
    .timeout = timeout,
    .cpu_threads = 1,
    .run = run,
};
