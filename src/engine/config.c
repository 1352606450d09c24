/* config.c: the run's option tables, and the checks across its keys. Every default lives in a table as text
 * and goes through the same parser as user input (options.c), so --help prints exactly what a run uses.
 * Never touches MPI or a device; errors are one line naming the key and where its value came from. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bucket.h"
#include "phase.h"
#include "progress.h"

#define OFF(f) offsetof(ddp_config, f), 0
#define STR(f) offsetof(ddp_config, f), sizeof(((ddp_config *)0)->f)

static const opt_spec MODEL[] = {
    {"hidden", NULL, 0, OPT_INT, OFF(hidden), "1024", 1, 65536, .arg = "H", .help = "hidden size H (every layer is H x H)"},
    {"layers", NULL, 0, OPT_INT, OFF(layers), "4", 1, 4096, .arg = "L", .help = "number of layers L"},
    {"batch", NULL, 0, OPT_INT, OFF(batch), "256", 1, 1 << 24, .arg = "B", .help = "samples per rank per step"},
};
static const opt_spec SCHEDULE[] = {
    {"steps", NULL, 0, OPT_INT, OFF(steps), "20", 1, 1000000, .help = "timed steps per phase"},
    {"warmup", NULL, 0, OPT_INT, OFF(warmup), "5", 0, 1000000, .help = "untimed steps before them"},
    {"warmup_seconds", NULL, 0, OPT_DOUBLE, OFF(warmup_seconds), "-1", -1, 3600, .arg = "SECONDS",
     .help = "before its warm-up steps, each phase runs its own workload this long and restores the weights, so "
             "it is timed at its own clocks and power (-1 = the device's: 2 on GPUs, 0 on the cpu device)"},
    {"seed", NULL, 0, OPT_U64, OFF(seed), "42", 0, 0, .help = "seed of the counter-based generator"},
    {"lr", NULL, 0, OPT_DOUBLE, OFF(lr), "0.01", 0, 1e6, .help = "SGD learning rate"},
    {"momentum", NULL, 0, OPT_DOUBLE, OFF(momentum), "0", 0, 1, .help = "SGD momentum (v = m*v + g; W -= lr*v)"},
    {"phases", NULL, 0, OPT_STR, STR(phases), "local,comm,ddp", .arg = "LIST",
     .help = "phases to run, in this order: local (no communication), comm (the strategy's collectives alone), and "
             "the strategy's training phase, ddp or fsdp (default: local,comm,ddp; local,comm,fsdp with --strategy "
             "fsdp)"},
};
static const opt_spec PRECISION[] = {
    {"precision", NULL, 0, OPT_ENUM, OFF(precision), "fp32", .choices = "fp32|tf32|bf16|fp16",
     .help = "GEMM inputs (fp32 master weights; 16-bit = autocast; tf32 needs a GPU)"},
    {"grad_comm", NULL, 0, OPT_ENUM, OFF(grad_comm), "fp32", .choices = "fp32|-|bf16|fp16",
     .help = "the type gradients are reduced in: ddp's allreduce (16-bit = PyTorch's compression hooks), fsdp's "
             "reduce-scatter (MixedPrecisionPolicy's reduce_dtype)"},
    {"loss_scale_init", NULL, 0, OPT_DOUBLE, OFF(loss_scale_init), "65536", 1e-30, 1e30, .help = "fp16: initial loss scale"},
    {"loss_scale_growth_factor", NULL, 0, OPT_DOUBLE, OFF(loss_scale_growth_factor), "2", 1, 1e6,
     .help = "fp16: scale growth factor (> 1)"},
    {"loss_scale_backoff", NULL, 0, OPT_DOUBLE, OFF(loss_scale_backoff), "0.5", 0, 1,
     .help = "fp16: scale backoff factor (0 < b < 1)"},
    {"loss_scale_growth_interval", NULL, 0, OPT_INT, OFF(loss_scale_growth_interval), "2000", 1, INT_MAX,
     .help = "fp16: finite steps before the scale grows"},
};
static const opt_spec DDP[] = {
    {"strategy", NULL, 0, OPT_ENUM, OFF(strategy), "ddp", .choices = "ddp|fsdp",
     .help = "ddp: DistributedDataParallel, bucketed allreduces; fsdp: FSDP2's fully_shard per layer, sharded "
             "parameters, all-gathers and reduce-scatters (docs/fsdp.md)"},
    {"bucket_mb", NULL, 0, OPT_DOUBLE, OFF(bucket_mb), "25", 1.0 / 1024, 1 << 20, .arg = "MIB",
     .help = "bucket cap in MiB, PyTorch's bucket_cap_mb (given, it caps the first bucket too)"},
    {"first_bucket_mb", NULL, 0, OPT_DOUBLE, OFF(first_bucket_mb), "1", 1.0 / 1024, 1 << 20, .arg = "MIB",
     .help = "first bucket's cap in MiB; bucket_mb when only that is given"},
    {"gradient_as_bucket_view", NULL, 0, OPT_BOOL, OFF(gradient_as_bucket_view), "false",
     .help = "write gradients straight into the buckets"},
    {"cuda_graph", NULL, 0, OPT_BOOL, OFF(cuda_graph), "false", .help = "capture the steady-state step in a CUDA graph"},
    {"bind", NULL, 0, OPT_ENUM, OFF(bind), "auto", .choices = "auto|gpu|none",
     .help = "bind each rank near its GPU (auto = gpu when locality is known)"},
};
static const opt_spec CHECKS[] = {
    {"peak_tflops", NULL, 0, OPT_DOUBLE, OFF(peak_tflops), "0", 0, 1e6, .help = "dense peak for MFU (0 = table of known GPUs)"},
    {"peak_seconds", NULL, 0, OPT_DOUBLE, OFF(peak_seconds), "2", 0, 600,
     .help = "GPU: the measured peak behind MFU is an 8192^3 GEMM sustained this long (0 = one H x H x H burst)"},
    {"straggler_pct", NULL, 0, OPT_DOUBLE, OFF(straggler_pct), "5", 0, 1000,
     .help = "a straggler is this far above the median compute time, or beyond the run-to-run floor (the device's, "
             "or --baseline's) where that is higher (docs/straggler.md)"},
    {"baseline", NULL, 0, OPT_STR, STR(baseline), "", .arg = "FILES",
     .help = "--json files of earlier healthy runs of this same job, comma-separated (rank 0 reads them): the "
             "straggler floor is their largest slowest-over-median-rank gap per phase, plus half of it and 1 point, "
             "instead of the device's run-to-run floor (docs/straggler.md)"},
    {"strict", NULL, 0, OPT_BOOL, OFF(strict), "false", .help = "a warning fails the run too (exit 4)"},
    {"inject_nonfinite", NULL, 0, OPT_INT, OFF(inject_nonfinite), "-1", -1, INT_MAX, .arg = "K",
     .help = "put a NaN into rank 0's gradient after step K's backward (-1 = off)"},
    {"timeout", NULL, 0, OPT_DOUBLE, OFF(timeout), "600", 0, 1e9, .arg = "SECONDS",
     .help = "seconds without progress before the job is aborted (0 = never)"},
    {"quiet", NULL, 0, OPT_BOOL, OFF(quiet), "false", .help = "print only the findings that are not passes and the bottom line (no report, no progress lines)", .flags = OPT_NO_HASH},
    {"progress", NULL, 0, OPT_ENUM, OFF(progress), "auto", .choices = PROGRESS_CHOICES, .flags = OPT_NO_HASH,
     .help = "progress lines on rank 0's stderr: tty (one line rewritten, with ETA), log (a line per phase or "
             "group start and end, at most one per 10 s between), none; auto = tty only when stderr, or the "
             "launcher's under mpirun/srun, is a terminal, else log (docs/progress.md); --quiet: none"},
};
static const opt_spec MORE[] = {
    {"sweep", NULL, 0, OPT_BOOL, OFF(sweep), "false",
     .help = "scaling sweep: the phases on 1, 2, 4, ... ranks of a node, then 1, 2, 4, ... nodes and the job"},
    {"groups", NULL, 0, OPT_STR, STR(groups), "", .arg = "LIST",
     .help = "also run --group-measure over these groups, each after the phases: world, node (each node), pairs "
             "(node pairs), first:K (the first K ranks), comma-separated"},
    {"group_measure", NULL, 0, OPT_STR, STR(group_measure), "allreduce", .arg = "NAME",
     .help = "the measurement --groups runs (allreduce: busbw of a 64 MiB allreduce)"},
};
static const opt_spec TOPOLOGY[] = {
    {"pcie", NULL, 0, OPT_BOOL, OFF(pcie), "false", .help = "print the topology matrix by PCIe path alone"},
    {"topo_xml", NULL, 0, OPT_STR, STR(topo_xml), "", .arg = "DIR",
     .help = "write each host's hwloc XML into this folder", .flags = OPT_OUTDIR},
};
#define TABLE(group, v) {group, v, (int)(sizeof v / sizeof v[0])}
static const opt_table TABLES[] = {
    TABLE("model", MODEL),         TABLE("schedule", SCHEDULE), TABLE("precision", PRECISION),
    TABLE("DDP and the step", DDP), TABLE("checks", CHECKS),     TABLE("more measurements", MORE),
    TABLE("topology", TOPOLOGY),
};

ddp_result config_tables_add(opt_set *s, ddp_config *cfg) {
  for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) DDP_TRY(opt_set_add(s, &TABLES[i], cfg));
  return DDP_OK;
}

/* A set of the run's tables alone over cfg (tests, tools, the hash). */
static void run_set(opt_set *s, ddp_config *cfg) {
  opt_set_init(s, NULL);
  ddp_result r = config_tables_add(s, cfg);
  (void)r; /* the tables fit the set by construction: test_options checks it */
}

void config_defaults(ddp_config *cfg) {
  static opt_set s; /* large; the defaults are the same for every caller */
  memset(cfg, 0, sizeof *cfg);
  run_set(&s, cfg);
  ddp_result r = opt_defaults(&s);
  (void)r; /* defaults are valid by construction; test_options checks every one */
}

uint64_t config_hash(const ddp_config *cfg) {
  static opt_set s;
  run_set(&s, (ddp_config *)cfg);
  return opt_hash(&s);
}

int config_key_at(const ddp_config *cfg, int i, const char **name, char *value, size_t n) {
  static opt_set s;
  run_set(&s, (ddp_config *)cfg);
  return opt_key_at(&s, i, name, value, n, NULL);
}

ddp_result config_set(ddp_config *cfg, const char *key, const char *value, const char *where) {
  static opt_set s;
  run_set(&s, cfg);
  return opt_apply(&s, key, value, where, OPT_SRC_CLI, 0);
}

ddp_result config_parse(ddp_config *cfg, int argc, char **argv, int *help) {
  static opt_set s;
  memset(cfg, 0, sizeof *cfg);
  run_set(&s, cfg);
  DDP_TRY(opt_parse(&s, argc, argv, NULL));
  if (help) *help = s.help || s.version;
  return s.help || s.version ? DDP_OK : config_finish(cfg, &s);
}

const char *precision_name(ddp_precision p) {
  static const char *n[] = {"fp32", "tf32", "bf16", "fp16"};
  return (unsigned)p < 4 ? n[p] : "?";
}

scaler_cfg config_scaler(const ddp_config *cfg) {
  scaler_cfg s = {cfg->loss_scale_init, cfg->loss_scale_growth_factor, cfg->loss_scale_backoff,
                  cfg->loss_scale_growth_interval};
  return s;
}

int config_phases(const ddp_config *cfg, int order[3]) {
  int n = 0;
  char buf[sizeof cfg->phases];
  strcpy(buf, cfg->phases);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int p = 0;
    while (p < PHASE_COUNT && strcmp(tok, phase_name((ddp_phase)p)) != 0) p++; /* the one list of names */
    if (p == PHASE_COUNT) return -1;
    int seen = 0;
    for (int i = 0; i < n; i++) seen |= order[i] == p;
    if (!seen) order[n++] = p;
  }
  return n;
}

int config_groups(const ddp_config *cfg, int kinds[], int ks[], int max) {
  static const char *names[] = {"world", "node", "pairs"};
  int n = 0;
  char buf[sizeof cfg->groups];
  strcpy(buf, cfg->groups);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int kind = -1, k = 0;
    for (int i = 0; i < 3; i++)
      if (strcmp(tok, names[i]) == 0) kind = i;
    if (kind < 0 && strncmp(tok, "first:", 6) == 0) {
      char *end = NULL;
      long v = strtol(tok + 6, &end, 10);
      if (end != tok + 6 && !*end && v >= 1 && v <= INT_MAX) kind = 3, k = (int)v;
    }
    if (kind < 0) return -1;
    int seen = 0;
    for (int i = 0; i < n; i++) seen |= kinds[i] == kind && ks[i] == k;
    if (!seen && n < max) kinds[n] = kind, ks[n++] = k;
  }
  return n;
}

/* A cross-key error, prefixed with where the first of the named keys that the user set came from (the file
 * and line, or the option): "cfg.ini:7: loss_scale_growth_factor must be ...". */
static ddp_result invalid(const opt_set *s, const char *key1, const char *key2, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static ddp_result invalid(const opt_set *s, const char *key1, const char *key2, const char *fmt, ...) {
  char msg[600], wbuf[1100];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *w = s ? opt_where(s, key1, wbuf, sizeof wbuf) : NULL;
  if (!w && key2 && s) w = opt_where(s, key2, wbuf, sizeof wbuf);
  return w ? ddp_usage_error("%s: %s", w, msg) : ddp_usage_error("%s", msg);
}

/* a * b, or UINT64_MAX when it overflows. */
static uint64_t mul_sat(uint64_t a, uint64_t b) { return b && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

static double host_memory_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page : 0;
}

ddp_result config_validate(const ddp_config *cfg, const opt_set *s) {
  if (cfg->bucket_mb * 1048576.0 < 1024.0)
    return invalid(s, "bucket_mb", NULL, "bucket_mb must be at least 1 KiB (%g MiB), got %g", 1.0 / 1024,
                   cfg->bucket_mb);
  if (cfg->first_bucket_mb * 1048576.0 < 1024.0)
    return invalid(s, "first_bucket_mb", NULL, "first_bucket_mb must be at least 1 KiB (%g MiB), got %g",
                   1.0 / 1024, cfg->first_bucket_mb);
  if (cfg->loss_scale_growth_factor <= 1.0)
    return invalid(s, "loss_scale_growth_factor", NULL, "loss_scale_growth_factor must be greater than 1, got %g",
                   cfg->loss_scale_growth_factor);
  if (cfg->loss_scale_backoff <= 0.0 || cfg->loss_scale_backoff >= 1.0)
    return invalid(s, "loss_scale_backoff", NULL, "loss_scale_backoff must be between 0 and 1 (exclusive), got %g",
                   cfg->loss_scale_backoff);
  int order[3], nph = config_phases(cfg, order);
  const char *train = phase_name(phase_train((ddp_strategy)cfg->strategy));
  if (nph <= 0)
    return invalid(s, "phases", NULL, "phases must list local, comm and/or %s, got '%s'", train, cfg->phases);
  for (int i = 0; i < nph; i++)
    if ((order[i] == PHASE_DDP || order[i] == PHASE_FSDP) && order[i] != (int)phase_train((ddp_strategy)cfg->strategy))
      return invalid(s, "phases", "strategy", "phase %s belongs to strategy %s; strategy %s trains in phase %s",
                     phase_name((ddp_phase)order[i]), order[i] == PHASE_DDP ? "ddp" : "fsdp",
                     strategy_name((ddp_strategy)cfg->strategy), train);
  if (cfg->strategy == STRATEGY_FSDP) {
    static const char *ddp_only[] = {"bucket_mb", "first_bucket_mb", "gradient_as_bucket_view"};
    for (size_t i = 0; s && i < sizeof ddp_only / sizeof ddp_only[0]; i++)
      if (opt_given(s, ddp_only[i]))
        return invalid(s, ddp_only[i], NULL, "%s is DDP's; strategy fsdp has no buckets", ddp_only[i]);
  }
  int gk[CONFIG_MAX_GROUPS], gn[CONFIG_MAX_GROUPS];
  if (config_groups(cfg, gk, gn, CONFIG_MAX_GROUPS) < 0)
    return invalid(s, "groups", NULL, "groups must list world, node, pairs and/or first:K (K >= 1), got '%s'",
                   cfg->groups);
  int has_train = 0;
  for (int i = 0; i < nph; i++) has_train |= order[i] == (int)phase_train((ddp_strategy)cfg->strategy);
  if (cfg->sweep && !has_train)
    return invalid(s, "sweep", "phases", "sweep needs the %s phase in phases, got '%s'", train, cfg->phases);
  if (cfg->inject_nonfinite >= cfg->warmup + cfg->steps)
    return invalid(s, "inject_nonfinite", "steps", "inject_nonfinite %d is past the last step (%d)",
                   cfg->inject_nonfinite, cfg->warmup + cfg->steps - 1);

  /* Sizes. Every product of counts in 64 bits, saturating; a count that reaches an int interface (BLAS
   * dimensions, event arrays, MPI counts) must fit in an int, and what every rank keeps per timed step must
   * fit in this machine's memory. */
  uint64_t H = (uint64_t)cfg->hidden, L = (uint64_t)cfg->layers, B = (uint64_t)cfg->batch;
  if (mul_sat(B, H) > INT_MAX)
    return invalid(s, "batch", "hidden", "batch x hidden (%d x %d) exceeds %d elements", cfg->batch, cfg->hidden,
                   INT_MAX);
  uint64_t params = mul_sat(L, mul_sat(H, H));
  if (mul_sat(params, 16) > (uint64_t)PTRDIFF_MAX)
    return invalid(s, "layers", "hidden", "layers x hidden x hidden (%d x %d x %d) is too large to address",
                   cfg->layers, cfg->hidden, cfg->hidden);
  /* The bucket plan, exactly as the engine makes it (each layer is one parameter of H x H fp32). */
  size_t *counts = malloc((size_t)cfg->layers * sizeof *counts);
  if (!counts) return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  for (int i = 0; i < cfg->layers; i++) counts[i] = (size_t)(H * H);
  bucket_plan plan;
  ddp_result r = bucket_plan_build(&plan, counts, cfg->layers, 4, (size_t)(cfg->first_bucket_mb * 1048576.0),
                                   (size_t)(cfg->bucket_mb * 1048576.0));
  free(counts);
  if (r != DDP_OK) return r;
  /* fsdp times each of its collectives instead: two all-gathers and a reduce-scatter a layer, a found_inf */
  uint64_t nb = cfg->strategy == STRATEGY_FSDP ? 3 * L + 1 : (uint64_t)plan.nbuckets;
  bucket_plan_free(&plan);
  uint64_t samples = mul_sat((uint64_t)cfg->steps, nb); /* timed (step, bucket) pairs: two events + one double */
  if (samples > INT_MAX)
    return invalid(s, "steps", "bucket_mb",
                   "steps x buckets (%d x %llu) exceeds %d timed allreduces per phase: use fewer steps or larger "
                   "buckets", cfg->steps, (unsigned long long)nb, INT_MAX);
  double need = (double)samples * 256.0, have = host_memory_bytes();
  if (have > 0 && need > have) {
    char a[32], b[32];
    return invalid(s, "steps", "bucket_mb",
                   "steps x buckets (%d x %llu) needs about %s of host memory for the per-allreduce timings; this "
                   "machine has %s", cfg->steps, (unsigned long long)nb, ddp_fmt_bytes(a, sizeof a, need),
                   ddp_fmt_bytes(b, sizeof b, have));
  }
  return DDP_OK;
}


ddp_result config_finish(ddp_config *cfg, const opt_set *s) {
  /* PyTorch: an explicit bucket_cap_mb caps the first bucket too (no 1 MiB bucket). */
  if (s && opt_given(s, "bucket_mb") && !opt_given(s, "first_bucket_mb")) cfg->first_bucket_mb = cfg->bucket_mb;
  /* fsdp trains in its own phase: the default list names it instead of ddp. */
  if (cfg->strategy == STRATEGY_FSDP && (!s || !opt_given(s, "phases")) && !strcmp(cfg->phases, "local,comm,ddp"))
    snprintf(cfg->phases, sizeof cfg->phases, "local,comm,fsdp");
  return config_validate(cfg, s);
}
