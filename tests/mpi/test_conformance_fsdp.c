/* test_conformance_fsdp DIR (4 ranks, CPU device, MPI comm): strategy fsdp against PyTorch's FSDP2 itself, through
 * DIR/fsdp_cpu.json, which tests/data/golden/gen_fsdp_golden.py records from real fully_shard (each Linear, then
 * the root) on ddpbench's weights and data, over gloo on 2 to 4 CPU processes. Per case, on the first `world`
 * ranks:
 *  - the per-step loss (the mean of the ranks' losses, as ddpbench's global loss is) within CPU_TOL, relative
 *    (fp32 1e-5, bf16 and fp16 2e-3, as test_conformance's: the GEMMs sum in another order on each side); fp16's
 *    loss scale and skipped steps exactly;
 *  - every rank's shard of every layer: its first real row, its number of rows and its padded numel, as
 *    fsdp_plan makes them (torch.chunk's rows, padded to chunk 0's);
 *  - rank 0's collectives of step 1, in order: kind, input and output numel, against fsdp_plan's schedule (the
 *    engine's own is held to the plan by test_fsdp).
 * The golden file is made on the GPU machine, whose PyTorch is there; without it the test exits 77 (skipped),
 * naming the command, and with one from another PyTorch than GOLDEN_TORCH it fails (DDPBENCH_GOLDEN_TORCH
 * overrides, as in test_conformance). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "device.h"
#include "dist.h"
#include "engine_run.h"
#include "fsdp_plan.h"
#include "golden.h"
#include "testlib.h"

#define GOLDEN_TORCH "2.11"
#define REGEN                                                                                              \
  "python3 tests/data/golden/gen_fsdp_golden.py --out tests/data/golden (PyTorch " GOLDEN_TORCH ", on the GPU " \
  "machine: launch/fsdp-gpu.sh fsdp)"

static const double CPU_TOL[4] = {1e-5, 0, 2e-3, 2e-3}; /* fp32, tf32 (unused), bf16, fp16 */

static ddp_dtype dtype_of(const char *torch_name) {
  return strstr(torch_name, "bfloat16") ? DT_BF16 : strstr(torch_name, "float16") ? DT_F16 : DT_F32;
}

/* The case's shards and step-1 collectives against the plan (rank 0 checks, the plan is the same everywhere). */
static void check_layout(const cJSON *cs, const fsdp_plan *p, const char *what) {
  const cJSON *shards = cJSON_GetObjectItem(cs, "shards"), *ly;
  int nl = 0, bad = 0;
  cJSON_ArrayForEach(ly, shards) {
    const cJSON *ranks = cJSON_GetObjectItem(ly, "ranks"), *rk;
    int r = 0;
    cJSON_ArrayForEach(rk, ranks) {
      if (r >= p->args.world) break;
      int rows = jint(rk, "rows"), first = jint(rk, "first_row"), padded = jint(rk, "padded_shard_numel");
      int ok = rows == (int)p->ranks[r].rows && (rows == 0 || first == (int)p->ranks[r].first) &&
               padded == (int)p->layers[0].ag_in;
      CHECK(ok, "%s: layer %d rank %d: PyTorch's shard rows %d from %d, padded %d; the plan's %zu from %zu, padded %zu",
            what, nl + 1, r, rows, first, padded, p->ranks[r].rows, p->ranks[r].first, p->layers[0].ag_in);
      bad += !ok;
      r++;
    }
    CHECK(r == p->args.world, "%s: layer %d has a shard for each of %d ranks (%d)", what, nl + 1, p->args.world, r);
    nl++;
  }
  CHECK(nl == p->args.layers, "%s: %d layers' shards recorded, %d in the model", what, nl, p->args.layers);
  const cJSON *colls = cJSON_GetObjectItem(cJSON_GetObjectItem(cs, "collectives_rank0"), "step1"), *c;
  int i = 0, same = cJSON_IsArray(colls);
  cJSON_ArrayForEach(c, colls) {
    const char *kind = jstr(c, "kind", "?");
    if (i >= p->ncolls) {
      same = 0;
      break;
    }
    const fsdp_coll *w = &p->colls[i];
    const char *wk = w->kind == FSDP_ALL_GATHER ? "all_gather" : w->kind == FSDP_REDUCE_SCATTER ? "reduce_scatter" : "all_reduce";
    int ok = !strcmp(kind, wk) && jint(c, "input_numel") == (int)w->in && jint(c, "output_numel") == (int)w->out;
    CHECK(ok, "%s: step 1's collective %d: PyTorch %s %d -> %d, the plan %s %zu -> %zu", what, i, kind,
          jint(c, "input_numel"), jint(c, "output_numel"), wk, w->in, w->out);
    same &= ok;
    i++;
  }
  CHECK(same && i == p->ncolls, "%s: PyTorch issued the plan's %d collectives in step 1 (%d recorded)", what, p->ncolls, i);
  if (!bad) printf("# %-40s shards and step 1's %d collectives as the plan's\n", what, i);
}

static void check_case(ddp_comm *c, MPI_Comm g, const cJSON *cs) {
  char h[16], l[16], b[16], n[16], m[32];
  snprintf(h, sizeof h, "%d", jint(cs, "hidden"));
  snprintf(l, sizeof l, "%d", jint(cs, "layers"));
  snprintf(b, sizeof b, "%d", jint(cs, "batch"));
  snprintf(n, sizeof n, "%d", jint(cs, "steps"));
  const cJSON *mom = cJSON_GetObjectItem(cs, "momentum");
  snprintf(m, sizeof m, "%.17g", cJSON_IsNumber(mom) ? mom->valuedouble : 0.0);
  const char *prec = jstr(cs, "precision", "?"), *rd = jstr(cs, "reduce_dtype", "float32");
  const char *gc = dtype_of(rd) == DT_BF16 ? "bf16" : dtype_of(rd) == DT_F16 ? "fp16" : "fp32";
  const char *argv[] = {"ddpbench", "--strategy", "fsdp", "--phases", "fsdp", "--hidden", h, "--layers", l,
                        "--batch", b, "--steps", n, "--warmup", "0", "--precision", prec, "--grad-comm", gc,
                        "--momentum", m, "--device", "cpu", "--seed", "42", "--lr", "0.01", "--timeout", "300"};
  char what[128];
  snprintf(what, sizeof what, "fsdp_cpu.json %s (%sx%sx%s %s, %d ranks)", jstr(cs, "name", "?"), h, l, b, prec, c->size);
  ddp_config cfg;
  if (parse_args(&cfg, (int)(sizeof argv / sizeof argv[0]), argv) != DDP_OK) {
    CHECK(0, "%s: options rejected", what);
    return;
  }
  engine *e;
  phase_result r;
  CHECK(engine_create(&e, &cfg, c->dev, c, NULL, NULL) == DDP_OK, "%s: engine", what);
  CHECK(engine_run_phase(e, PHASE_FSDP, &r) == DDP_OK, "%s: run", what);
  int total = r.warmup + r.steps;
  double loss[64] = {0};
  for (int s = 0; s < total && s < 64 && r.loss; s++) loss[s] = r.loss[s];
  MPI_Allreduce(MPI_IN_PLACE, loss, total, MPI_DOUBLE, MPI_SUM, g); /* the ranks' shares: the global loss */
  double want[64], scale[64], skipped[64];
  int nl = jdoubles(cs, "loss", want, 64);
  CHECK(nl == total && nl > 0, "%s: %d steps in the golden file, %d run", what, nl, total);
  double worst = 0;
  int ws = 0;
  for (int s = 0; s < nl && s < total; s++) {
    double q = fabs(loss[s] - want[s]) / fabs(want[s]);
    if (!(q <= worst)) worst = q, ws = s;
  }
  double tol = CPU_TOL[cfg.precision];
  CHECK(worst <= tol, "%s: loss differs from PyTorch's by %.3g (relative, step %d: %.9g vs %.9g) > %.1g", what, worst, ws,
        loss[ws], want[ws], tol);
  if (cfg.precision == PREC_FP16) {
    int ns = jdoubles(cs, "scale", scale, 64), nk = jdoubles(cs, "skipped", skipped, 64), same = ns == total && nk == total;
    for (int s = 0; same && s < total; s++) same &= (double)r.scale[s] == scale[s] && r.skipped[s] == (int)skipped[s];
    CHECK(same, "%s: loss scale and skipped steps equal PyTorch's at every step", what);
  }
  if (c->rank == 0) {
    printf("# %-52s loss rel diff %.3g (tolerance %.1g; PyTorch's reduction: %s)\n", what, worst, tol,
           jstr(cs, "reduction", "?"));
    check_layout(cs, engine_fsdp_plan(e), what);
  }
  phase_result_free(&r);
  engine_free(e);
}

int main(int argc, char **argv) {
  ddp_dist d;
  if (dist_init(&argc, &argv, &d) != DDP_OK) return 1;
  if (d.size != 4 || argc < 2) {
    if (d.rank == 0) fprintf(stderr, "usage: mpiexec -np 4 test_conformance_fsdp GOLDEN_DIR\n");
    dist_finalize(&d);
    return 1;
  }
  char path[2048];
  snprintf(path, sizeof path, "%s/fsdp_cpu.json", argv[1]);
  FILE *probe = fopen(path, "r");
  if (probe) fclose(probe);
  if (!probe) {
    if (d.rank == 0) printf("%s is not there yet: skipped (make it with %s)\n", path, REGEN);
    dist_finalize(&d);
    return CHECK_SKIP;
  }
  cJSON *doc = golden_file(argv[1], "fsdp_cpu.json", d.rank, GOLDEN_TORCH, REGEN);
  ddp_device *dev;
  ddp_comm *world;
  CHECK(device_cpu_create(&dev, 1) == DDP_OK, "cpu device");
  CHECK(comm_mpi_create(&world, MPI_COMM_WORLD, dev) == DDP_OK, "world comm");
  const cJSON *cases = doc ? cJSON_GetObjectItem(doc, "cases") : NULL, *cs;
  int ran = 0;
  cJSON_ArrayForEach(cs, cases) {
    int W = jint(cs, "world");
    const cJSON *errs = cJSON_GetObjectItem(cs, "errors");
    if (W < 1 || W > 4 || !cJSON_IsArray(cJSON_GetObjectItem(cs, "loss")) || (cJSON_IsArray(errs) && cJSON_GetArraySize(errs))) {
      if (d.rank == 0) printf("# fsdp_cpu.json %s: PyTorch recorded no result (%s): not compared\n", jstr(cs, "name", "?"),
                              cJSON_IsArray(errs) && cJSON_GetArraySize(errs) ? "errors" : "no loss");
      continue;
    }
    int in = d.rank < W;
    ddp_comm *c = NULL;
    MPI_Comm g = MPI_COMM_NULL;
    CHECK(world->split(world, in ? 0 : -1, d.rank, &c) == DDP_OK, "split %d", W);
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, d.rank, &g);
    if (in) {
      check_case(c, g, cs);
      c->destroy(c);
      MPI_Comm_free(&g);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ran++;
  }
  CHECK(ran > 0, "fsdp_cpu.json: at least one case compared (%d)", ran);
  cJSON_Delete(doc);
  world->destroy(world);
  dev->destroy(dev);
  int rc = check_summary_world();
  dist_finalize(&d);
  return rc;
}
