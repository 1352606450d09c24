/* compare.c: the `compare` subcommand: its option table, the sides from the operands, and the exit code. The
 * model is model.c, the files compare_load.c, the formats formats.c. */
#include "compare.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "common.h"

/* ---- the subcommand ---------------------------------------------------------------------------------- */
typedef struct {
  char a[16384], b[16384]; /* the sides' files or folders, one a line (the operands before and after --) */
  int format;
  double threshold_pct, alpha, noise_pct;
  char noise[1024];
  int pool_steps, allow_config_diff, wide;
} cmp_args;

#define OFF(f) offsetof(cmp_args, f), 0
#define STR(f) offsetof(cmp_args, f), sizeof(((cmp_args *)0)->f)
static const opt_spec CMP[] = {
    {"a", NULL, 0, OPT_STR, STR(a), "", .arg = "FILES", .help = "side A: result files or folders (the words before --)",
     .flags = OPT_OPERANDS | OPT_FILES},
    {"b", NULL, 0, OPT_STR, STR(b), "", .arg = "FILES", .help = "side B: result files or folders (the words after --)",
     .flags = OPT_OPERANDS | OPT_FILES},
    {"format", NULL, 0, OPT_ENUM, OFF(format), "text", .choices = "text|md|csv|json", .help = "output format"},
    {"threshold_pct", NULL, 0, OPT_DOUBLE, OFF(threshold_pct), "2", 0, 1e6, .arg = "PCT",
     .help = "exit 5 when a metric is significantly worse by more than this"},
    {"alpha", NULL, 0, OPT_DOUBLE, OFF(alpha), "0.05", 1e-9, 0.5, .help = "significance level of the Mann-Whitney test"},
    {"noise", NULL, 0, OPT_STR, STR(noise), "", .arg = "FILE",
     .help = "a recorded A/A comparison (--format json): no change is called inside each metric's A/A confidence interval"},
    {"noise_pct", NULL, 0, OPT_DOUBLE, OFF(noise_pct), "0", 0, 1e6, .arg = "PCT",
     .help = "no change is called within +-PCT % for any metric"},
    {"pool_steps", NULL, 0, OPT_BOOL, OFF(pool_steps), "false",
     .help = "use every step of every run as a sample instead of one per run (step times only; steps are not "
             "independent, so p-values overstate significance)"},
    {"allow_config_diff", NULL, 0, OPT_BOOL, OFF(allow_config_diff), "false", .help = "compare sides whose model configs differ"},
    {"wide", NULL, 0, OPT_BOOL, OFF(wide), "false",
     .help = "text: every metric (each collectives figure, not only the out-of-place busbw) with every column, and "
             "the provenance unwrapped; the default fits 120 columns"},
};
static const opt_table CMP_TABLE = {"comparison", CMP, (int)(sizeof CMP / sizeof CMP[0])};

static ddp_result cmp_tables(opt_set *s, void *args) { return opt_set_add(s, &CMP_TABLE, args); }

/* A side's list (one file or folder a line: OPT_FILES) into argv-style pointers into buf (modified). */
static int split_side(char *buf, char **out, int max) {
  int n = 0;
  for (char *save = NULL, *t = strtok_r(buf, "\n", &save); t && n < max; t = strtok_r(NULL, "\n", &save)) out[n++] = t;
  return n;
}

static ddp_result cmp_run(cmd_ctx *c) {
  cmp_args *g = c->args;
  cmp_options o;
  cmp_options_defaults(&o);
  o.threshold_pct = g->threshold_pct;
  o.alpha = g->alpha;
  o.noise_pct = g->noise_pct;
  o.pool_steps = g->pool_steps;
  o.wide = g->wide;
  o.noise_file = g->noise[0] ? g->noise : NULL;
  static const cmp_format fmts[] = {CMP_TEXT, CMP_MD, CMP_CSV, CMP_JSON};
  enum { MAXF = 4096 };
  char **a = calloc(MAXF, sizeof *a), **b = calloc(MAXF, sizeof *b);
  if (!a || !b) {
    free(a), free(b);
    return DDP_FAIL(DDP_ERR_SYSTEM, "out of host memory");
  }
  int na = split_side(g->a, a, MAXF), nb = split_side(g->b, b, MAXF);
  if (nb == 0 && na == 2) b[nb++] = a[--na]; /* compare A_DIR B_DIR */
  int rc = 0;
  if (na == 0 || nb == 0)
    rc = 2, ddp_usage_error("compare: side %s is empty (usage: ddpbench compare A.json ... -- B.json ...)", na == 0 ? "A" : "B");
  cmp_noise noise = {0};
  if (!rc && g->noise[0]) rc = cmp_noise_read(g->noise, &noise);
  cmp_report r;
  cmp_report_init(&r, &o);
  if (!rc) rc = cmp_load(a, na, b, nb, g->noise[0] ? &noise : NULL, g->allow_config_diff, &r);
  if (!rc) {
    snprintf(r.start_time, sizeof r.start_time, "%s", c->start_time);
    time_t now = time(NULL);
    struct tm t0 = {0};
    strftime(r.end_time, sizeof r.end_time, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    r.duration_s = strptime(c->start_time, "%Y-%m-%dT%H:%M:%SZ", &t0) ? difftime(now, timegm(&t0)) : NAN;
    cmp_format f = fmts[g->format & 3];
    cmp_report_print(&r, f, stdout);
    fflush(stdout);
    if (f == CMP_CSV || f == CMP_JSON) { /* stdout is data for pandas or jq: the bottom line goes to stderr */
      char bottom[2048];
      cmp_bottom_line(&r, bottom, sizeof bottom);
      fprintf(stderr, "%s\n", bottom);
    }
    rc = cmp_report_exit_code(&r);
  }
  cmp_report_free(&r);
  cmp_noise_free(&noise);
  free(a), free(b);
  if (rc == 2) return DDP_ERR_USAGE;
  c->exit_code = rc;
  return DDP_OK;
}

const cmd_def cmd_compare = {
    .name = "compare",
    .summary = "two sets of result files (NCCL, driver or CUDA A/B), benchstat's statistics",
    .usage = "usage: ddpbench compare [options] A.json [A2.json ...] -- B.json [B2.json ...]\n"
             "       ddpbench compare [options] A_DIR B_DIR\n",
    .exit_codes = "0 no metric regressed beyond --threshold-pct, 2 bad input or unreadable files (or sides of different "
                  "models or job sizes without --allow-config-diff), 5 a significant regression beyond --threshold-pct, "
                  "more runs that corrupted data on B than on A (or on both sides), or a slow mode on B that A lacks",
    .about = "Compares two sets of result files, benchstat's way. Each run is one sample: its median step, "
             "because steps inside one run are not independent. Per metric: the medians of A and B, the change, "
             "its 95 % confidence interval, the two-sided Mann-Whitney U p-value and a verdict (~ no significant "
             "change, + better, - worse). With fewer than 4 runs a side the medians and changes are printed, marked "
             "not enough runs to test: no significance can be claimed. Run 10 or more per side, interleaved "
             "(launch/ab.sh does). The report leads with a summary (regressions beyond --threshold-pct, worse within "
             "it, better, unchanged, the noise floor), then the provenance diff (versions, NCCL_* and transport "
             "environment, config, hosts, GPUs) and the table, and ends with one bottom line: FAIL (a significant "
             "regression beyond --threshold-pct, or side B's runs corrupting data or intermittently slow, exit 5), WARN (too few runs to test, and a median worse beyond the "
             "threshold) or PASS. Sides whose runs carry --label values that tell them apart are named by them. "
             "--format csv and json print the data alone on stdout and the bottom line on stderr.\nExample: "
             "ddpbench compare runs/nccl-2.27/ runs/nccl-2.28/\n",
    .args_size = sizeof(cmp_args),
    .tables = cmp_tables,
    .run = cmp_run,
};
