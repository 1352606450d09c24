/* test_conformance: ddpbench against PyTorch itself, through golden files that tests/data/golden/gen_golden.py
 * recorded from PyTorch (tests/data/golden/, each naming the PyTorch version that made it). No PyTorch needed
 * here.
 *
 * test_conformance DIR (2 ranks, CPU device, MPI comm):
 *  - buckets.json: for every (H, L, caps) case, the plan ddpbench builds from the same options (--bucket-mb
 *    for bucket_cap_mb, --first-bucket-mb for dist._DEFAULT_FIRST_BUCKET_BYTES, through config_parse) equals
 *    DDP's rebuilt buckets exactly: the number of buckets, each one's bytes and its layers in order;
 *  - hooks.json: --grad-comm fp16/bf16 (cast to 16 bits, divide by the world size, allreduce, cast back, as
 *    engine.c's bucket_allreduce does) equals fp16_compress_hook / bf16_compress_hook on 2 ranks bit for bit,
 *    on inputs from fp32 subnormals to past fp16's range, where the other order would differ;
 *  - losses_cpu.json: one rank, per-step loss within CPU_TOL (relative, per step); fp16 loss scale and
 *    skipped steps exactly;
 *  - ddp2_cpu.json: two ranks under DDP with PyTorch's explicit bucket_cap_mb, fp32/bf16/fp16 and the
 *    compress hooks, the mean loss over ranks per step within CPU_TOL; scales and skips exactly.
 * test_conformance DIR gpu (1 rank, CUDA device; exit 77 without a GPU):
 *  - losses_gpu.json: per-step loss within max(2 x spread, GPU_FLOOR), where spread is the largest relative
 *    difference PyTorch shows between its own equally valid runs (cuBLAS vs cuBLASLt, reduced-precision
 *    reductions on or off, a repeat); fp16 loss scale and skipped steps exactly.
 * A golden file that is missing, or was made by a PyTorch other than GOLDEN_TORCH (override with the
 * environment variable DDPBENCH_GOLDEN_TORCH to try the generator with another version), fails the test. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bucket.h"
#include "check.h"
#include "commands.h"
#include "config.h"
#include "device.h"
#include "dist.h"
#include "engine_run.h"
#include "golden.h"
#include "numerics.h"
#include "testlib.h"

#define GOLDEN_TORCH "2.11"
#define REGEN \
  "python3 tests/data/golden/gen_golden.py --out tests/data/golden (PyTorch " GOLDEN_TORCH ", on the GPU machine)"

/* Relative loss tolerances, per step: |ddpbench - PyTorch| / |PyTorch|. On the CPU both sides round the
 * same values to 16 bits, but the GEMMs sum in another order (OpenBLAS vs oneDNN/MKL), which can move a
 * 16-bit rounding: fp32 agrees to ~1e-7, the 16-bit types to ~1e-4 over a dozen steps. */
static const double CPU_TOL[4] = {1e-5, 0, 2e-3, 2e-3}; /* fp32, tf32 (unused), bf16, fp16 */
static const double GPU_FLOOR = 1e-6;

static const char *golden_dir;
static int rank;

/* ---- golden files ------------------------------------------------------------------------------------ */
static cJSON *golden_load(const char *name) { return golden_file(golden_dir, name, rank, GOLDEN_TORCH, REGEN); }

/* ---- bucket plans ------------------------------------------------------------------------------------ */
static void check_buckets(void) {
  cJSON *doc = golden_load("buckets.json");
  if (!doc) return;
  int ncases = 0, explicit_cases = 0;
  const cJSON *cs;
  cJSON_ArrayForEach(cs, cJSON_GetObjectItem(doc, "cases")) {
    int H = jint(cs, "hidden"), L = jint(cs, "layers");
    char h[16], l[16], desc[160] = "";
    snprintf(h, sizeof h, "%d", H);
    snprintf(l, sizeof l, "%d", L);
    const char *argv[16] = {"ddpbench", "--hidden", h, "--layers", l};
    int argc = 5;
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(cs, "ddpbench_args")) if (argc < 15 && cJSON_IsString(a)) {
      argv[argc++] = a->valuestring;
      strncat(desc, " ", sizeof desc - strlen(desc) - 1);
      strncat(desc, a->valuestring, sizeof desc - strlen(desc) - 1);
    }
    explicit_cases += argc > 5;
    const char *mode = jstr(cs, "mode", "");
    const cJSON *first = cJSON_GetObjectItem(cs, "first_iteration");
    int steady_from = jint(cs, "steady_from_iteration");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cs, "stable")), "%dx%d%s %s: PyTorch's buckets settle", H, L, desc, mode);
    if (strcmp(mode, "find_unused_parameters") == 0) {
      /* Not mirrored: PyTorch never rebuilds; its construction-time buckets put the small one last. */
      CHECK(steady_from == 1, "%dx%d find_unused_parameters=True: PyTorch keeps its first buckets (steady from %d)", H, L,
            steady_from);
      char theirs[512] = "";
      const cJSON *gb;
      cJSON_ArrayForEach(gb, cJSON_GetObjectItem(cs, "rebuilt"))
        snprintf(theirs + strlen(theirs), sizeof theirs - strlen(theirs), " %.0f", cJSON_GetObjectItem(gb, "bytes")->valuedouble);
      printf("# buckets %5dx%-3d find_unused_parameters=True (not mirrored), PyTorch:%s\n", H, L, theirs);
      continue;
    }
    /* The first iteration's single bucket is not mirrored (ddpbench starts with the rebuilt plan). */
    CHECK(cJSON_GetArraySize(first) == 1 && (double)H * H * 4 * L == cJSON_GetObjectItem(cJSON_GetArrayItem(first, 0), "bytes")->valuedouble,
          "%dx%d%s %s: PyTorch's first iteration is one bucket of every gradient", H, L, desc, mode);
    /* Rebuilt at the 2nd forward; static_graph: PyTorch 1.13 waited for the 3rd. */
    CHECK(mode[0] ? steady_from >= 2 : steady_from == 2, "%dx%d%s %s: PyTorch's buckets are rebuilt for iteration %d",
          H, L, desc, mode, steady_from);
    if (mode[0]) snprintf(desc + strlen(desc), sizeof desc - strlen(desc), " (%s=True)", mode);
    ddp_config c;
    CHECK(parse_args(&c, argc, argv) == DDP_OK, "%dx%d%s: options accepted", H, L, desc);
    size_t *counts = malloc((size_t)L * sizeof *counts);
    for (int i = 0; i < L; i++) counts[i] = (size_t)H * H;
    bucket_plan p;
    CHECK(bucket_plan_build(&p, counts, L, 4, bucket_cap_bytes(c.first_bucket_mb), bucket_cap_bytes(c.bucket_mb)) == DDP_OK,
          "plan");
    free(counts);
    const cJSON *rebuilt = cJSON_GetObjectItem(cs, "rebuilt");
    int nb = cJSON_GetArraySize(rebuilt), same = nb == p.nbuckets;
    char ours[512] = "", theirs[512] = "";
    for (int b = 0; b < nb; b++) {
      const cJSON *gb = cJSON_GetArrayItem(rebuilt, b);
      double bytes = cJSON_GetObjectItem(gb, "bytes")->valuedouble;
      snprintf(theirs + strlen(theirs), sizeof theirs - strlen(theirs), " %.0f", bytes);
      if (b >= p.nbuckets) continue;
      const ddp_bucket *bk = &p.buckets[b];
      same &= (double)bk->bytes == bytes;
      const cJSON *layers = cJSON_GetObjectItem(gb, "layers");
      same &= cJSON_GetArraySize(layers) == bk->nparams;
      for (int j = 0; j < bk->nparams && j < cJSON_GetArraySize(layers); j++) /* planning index i = L - layer */
        same &= cJSON_GetArrayItem(layers, j)->valueint == L - (bk->first_param + j);
    }
    for (int b = 0; b < p.nbuckets; b++) snprintf(ours + strlen(ours), sizeof ours - strlen(ours), " %zu", p.buckets[b].bytes);
    CHECK(same, "%dx%d%s: ddpbench's buckets [%s ] (layers in order) differ from PyTorch DDP's rebuilt [%s ]", H, L, desc,
          ours, theirs);
    printf("# buckets %5dx%-3d%-38s %s (PyTorch's from iteration %d)\n", H, L, desc[0] ? desc : " (defaults)",
           same ? "same as PyTorch" : "DIFFER", steady_from);
    printf("#   ddpbench%s\n#   pytorch %s\n", ours, theirs);
    bucket_plan_free(&p);
    ncases++;
  }
  CHECK(ncases >= 10 && explicit_cases >= 4, "buckets.json holds the table (%d cases, %d with explicit caps)", ncases,
        explicit_cases);
  cJSON_Delete(doc);
}

/* ---- compress hooks ---------------------------------------------------------------------------------- */
static void check_hooks(ddp_comm *world) {
  cJSON *doc = golden_load("hooks.json");
  if (!doc) return;
  int n = jint(doc, "n");
  CHECK(jint(doc, "world") == world->size && n > 0, "hooks.json: %d ranks, %d elements", jint(doc, "world"), n);
  ddp_device *d = world->dev;
  ddp_stream *s;
  CHECK(d->stream_create(d, &s, 0) == DDP_OK, "stream");
  float *in = malloc((size_t)n * 4), *out = malloc((size_t)n * 4);
  uint64_t key = gen_key(42, TAG_FILL + (uint64_t)world->rank);
  for (int i = 0; i < n; i++) in[i] = gen_value(key, (uint64_t)i, ldexp(1.0, i % 161 - 140));
  const char *names[] = {"fp16", "bf16"};
  ddp_dtype types[] = {DT_F16, DT_BF16};
  for (int k = 0; k < 2; k++) {
    const cJSON *g = cJSON_GetObjectItem(doc, names[k]);
    const cJSON *bits = cJSON_GetObjectItem(g, "result_bits");
    CHECK(cJSON_GetArraySize(bits) == n, "hooks.json has PyTorch's %s_compress_hook result (%s)", names[k],
          jstr(g, "unsupported", "present"));
    if (cJSON_GetArraySize(bits) != n) continue;
    void *buf, *c16;
    CHECK(d->alloc(d, &buf, (size_t)n * 4) == DDP_OK && d->alloc(d, &c16, (size_t)n * 2) == DDP_OK, "alloc");
    /* engine.c's bucket_allreduce with a 16-bit grad_comm: */
    ddp_result r = d->copy(d, buf, in, (size_t)n * 4, s);
    if (r == DDP_OK) r = d->cast(d, s, c16, types[k], buf, DT_F32, (size_t)n, 1.0f / (float)world->size, 1);
    if (r == DDP_OK) r = world->allreduce(world, c16, (size_t)n, types[k], s);
    if (r == DDP_OK) r = d->cast(d, s, buf, DT_F32, c16, types[k], (size_t)n, 1.0f, 0);
    if (r == DDP_OK) r = d->copy(d, out, buf, (size_t)n * 4, s);
    if (r == DDP_OK) r = d->stream_synchronize(d, s);
    CHECK(r == DDP_OK, "%s hook through the device and comm", names[k]);
    int bad = 0, first = -1, nonfinite = 0;
    for (int i = 0; i < n; i++) {
      float want = f32_from_bits((uint32_t)cJSON_GetArrayItem(bits, i)->valuedouble);
      int same = f32_bits(out[i]) == f32_bits(want) || (isnan(out[i]) && isnan(want));
      nonfinite += !isfinite(want);
      if (!same && first < 0) first = i;
      bad += !same;
    }
    int sensitive = jint(g, "order_sensitive_elements");
    CHECK(bad == 0, "rank %d: --grad-comm %s differs from PyTorch's %s_compress_hook in %d of %d elements (first: %d: %a vs %a)",
          world->rank, names[k], names[k], bad, n, first, first >= 0 ? out[first] : 0.0f,
          first >= 0 ? f32_from_bits((uint32_t)cJSON_GetArrayItem(bits, first)->valuedouble) : 0.0f);
    CHECK(sensitive > 0, "hooks.json %s: the inputs show the rounding order (%d elements would differ)", names[k], sensitive);
    if (world->rank == 0)
      printf("# hook %s: %d of %d elements bitwise PyTorch's (%d non-finite; %d would differ had it divided first; %s)\n",
             names[k], n - bad, n, nonfinite, sensitive, jstr(g, "collective", "?"));
    d->free(d, buf);
    d->free(d, c16);
  }
  free(in);
  free(out);
  d->stream_destroy(d, s);
  cJSON_Delete(doc);
}

/* ---- losses ------------------------------------------------------------------------------------------ */
/* Runs ddpbench for golden case cs on comm (device name for --device) and compares loss, scale and skips with
 * `ref` (an object with loss[, scale, skipped]); tol < 0 means: take the tolerance from spread (GPU). */
static void check_loss_case(ddp_comm *comm, const char *device, const cJSON *cs, const cJSON *ref, double tol,
                            const char *file) {
  char h[16], l[16], b[16], n[16];
  snprintf(h, sizeof h, "%d", jint(cs, "hidden"));
  snprintf(l, sizeof l, "%d", jint(cs, "layers"));
  snprintf(b, sizeof b, "%d", jint(cs, "batch"));
  snprintf(n, sizeof n, "%d", jint(cs, "steps"));
  const char *prec = jstr(cs, "precision", "?"), *gc = jstr(cs, "grad_comm", "fp32");
  const char *argv[32] = {"ddpbench", "--hidden", h, "--layers", l, "--batch", b, "--steps", n, "--warmup", "0",
                          "--precision", prec, "--grad-comm", gc, "--device", device, "--seed", "42", "--lr", "0.01",
                          "--timeout", "300"};
  int argc = 23;
  char cap[32];
  const cJSON *capj = cJSON_GetObjectItem(cs, "bucket_cap_mb");
  if (cJSON_IsNumber(capj)) {
    snprintf(cap, sizeof cap, "%.17g", capj->valuedouble);
    argv[argc++] = "--bucket-mb";
    argv[argc++] = cap;
  }
  char what[128];
  snprintf(what, sizeof what, "%s %sx%sx%s %s grad_comm %s, %d rank%s", file, h, l, b, prec, gc, comm->size,
           comm->size > 1 ? "s" : "");
  ddp_config c;
  if (parse_args(&c, argc, argv) != DDP_OK) {
    CHECK(0, "%s: options rejected", what);
    return;
  }
  run_out o;
  CHECK(run_engine(comm, &c, PHASE_DDP, &o) == DDP_OK, "%s: run", what);
  if (comm->size > 1) /* the global loss: the ranks' shares summed (comm is the world here) */
    MPI_Allreduce(MPI_IN_PLACE, o.loss, o.n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double want[64], scale[64], skipped[64];
  int nl = jdoubles(ref, "loss", want, 64);
  CHECK(nl == o.n && nl > 0, "%s: %d steps in the golden file, %d run", what, nl, o.n);
  double worst = 0;
  int worst_s = 0;
  for (int s = 0; s < nl && s < o.n; s++) {
    double r = fabs(o.loss[s] - want[s]) / fabs(want[s]);
    if (!(r <= worst)) worst = r, worst_s = s;
  }
  CHECK(worst <= tol, "%s: loss differs from PyTorch's by %.3g (relative, step %d: %.9g vs %.9g) > %.1g", what, worst,
        worst_s, o.loss[worst_s], want[worst_s], tol);
  int scales_same = 1, nskip = 0;
  if (c.precision == PREC_FP16) {
    int ns = jdoubles(ref, "scale", scale, 64), nk = jdoubles(ref, "skipped", skipped, 64);
    scales_same = ns == o.n && nk == o.n;
    for (int s = 0; scales_same && s < o.n; s++) {
      scales_same &= (double)o.scale[s] == scale[s] && o.skipped[s] == (int)skipped[s];
      nskip += o.skipped[s];
    }
    CHECK(scales_same, "%s: loss scale and skipped steps equal PyTorch's at every step", what);
  }
  if (rank == 0 || comm->size == 1) {
    printf("# %-52s loss rel diff %.3g (tolerance %.1g)", what, worst, tol);
    if (c.precision == PREC_FP16) printf(", scales %s, %d skipped", scales_same ? "equal" : "DIFFER", nskip);
    printf("\n");
  }
  out_free(&o);
}

/* CPU: each rank takes every other 1-rank case on its own comm of one. */
static void check_losses_cpu(ddp_comm *self, ddp_comm *world) {
  cJSON *doc = golden_load("losses_cpu.json");
  if (doc) {
    int i = 0, have[4] = {0};
    const cJSON *cs;
    cJSON_ArrayForEach(cs, cJSON_GetObjectItem(doc, "cases")) {
      const char *prec = jstr(cs, "precision", "?");
      ddp_precision p = strcmp(prec, "bf16") == 0 ? PREC_BF16 : strcmp(prec, "fp16") == 0 ? PREC_FP16 : PREC_FP32;
      if (cJSON_GetObjectItem(cs, "unsupported")) {
        if (rank == 0) printf("# losses_cpu %s: not recorded (%s)\n", prec, jstr(cs, "unsupported", ""));
        continue;
      }
      have[p]++;
      if (i++ % world->size == world->rank) check_loss_case(self, "cpu", cs, cs, CPU_TOL[p], "cpu");
    }
    CHECK(have[PREC_FP32] >= 2 && have[PREC_BF16] >= 2, "losses_cpu.json: 2 shapes or more of fp32 (%d) and bf16 (%d)",
          have[PREC_FP32], have[PREC_BF16]);
    cJSON_Delete(doc);
  }
  doc = golden_load("ddp2_cpu.json");
  if (!doc) return;
  int n = 0;
  const cJSON *cs;
  cJSON_ArrayForEach(cs, cJSON_GetObjectItem(doc, "cases")) {
    const char *prec = jstr(cs, "precision", "?");
    ddp_precision p = strcmp(prec, "bf16") == 0 ? PREC_BF16 : strcmp(prec, "fp16") == 0 ? PREC_FP16 : PREC_FP32;
    if (cJSON_GetObjectItem(cs, "unsupported")) {
      if (rank == 0)
        printf("# ddp2 %s grad_comm %s: not recorded (%s)\n", prec, jstr(cs, "grad_comm", "?"), jstr(cs, "unsupported", ""));
      continue;
    }
    n++;
    double tol = CPU_TOL[p];
    if (strcmp(jstr(cs, "grad_comm", "fp32"), "fp32") != 0 && tol < CPU_TOL[PREC_BF16]) tol = CPU_TOL[PREC_BF16];
    check_loss_case(world, "cpu", cs, cs, tol, "ddp2");
  }
  CHECK(n >= 3, "ddp2_cpu.json: %d DDP cases recorded (at least fp32, bf16 and the fp16 hook)", n);
  cJSON_Delete(doc);
}

static void check_losses_gpu(ddp_comm *gpu, const char *device) {
  cJSON *doc = golden_load("losses_gpu.json");
  if (!doc) return;
  int n = 0;
  const cJSON *cs;
  cJSON_ArrayForEach(cs, cJSON_GetObjectItem(doc, "cases")) {
    const cJSON *spread = cJSON_GetObjectItem(cs, "spread");
    const cJSON *def = cJSON_GetObjectItem(cJSON_GetObjectItem(cs, "variants"), "default");
    CHECK(cJSON_IsNumber(spread) && def, "losses_gpu.json case %d has PyTorch's default run and its spread", n);
    if (!cJSON_IsNumber(spread) || !def) continue;
    double tol = fmax(2 * spread->valuedouble, GPU_FLOOR);
    check_loss_case(gpu, device, cs, def, tol, "gpu");
    n++;
  }
  CHECK(n >= 6, "losses_gpu.json: %d cases (2 shapes or more x fp32, bf16, fp16)", n);
  cJSON_Delete(doc);
}

int main(int argc, char **argv) {
  ddp_dist d;
  if (dist_init(&argc, &argv, &d) != DDP_OK) return 1;
  rank = d.rank;
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: test_conformance GOLDEN_DIR [gpu]\n");
    dist_finalize(&d);
    return 2;
  }
  golden_dir = argv[1];
  if (argc > 2 && strcmp(argv[2], "gpu") == 0) {
    /* DDPBENCH_CONFORMANCE_DEVICE=cpu runs this part on the CPU device: only to try the test itself. */
    const char *devname = getenv("DDPBENCH_CONFORMANCE_DEVICE") ? getenv("DDPBENCH_CONFORMANCE_DEVICE") : "cuda";
    int ngpu = strcmp(devname, "cpu") == 0 ? 1 : device_cuda_count();
    if (ngpu == 0) {
      /* Still insist on the golden file: a missing one fails in CI too. */
      cJSON *doc = golden_load("losses_gpu.json");
      cJSON_Delete(doc);
      if (rank == 0) printf("no GPU visible: GPU losses not compared\n");
      int failed = check_failed_;
      int rc = check_summary_world();
      dist_finalize(&d);
      return failed || rc ? rc : CHECK_SKIP;
    }
    ddp_device *gpu;
    ddp_comm *gcomm, *gself;
    CHECK((strcmp(devname, "cpu") == 0 ? device_cpu_create(&gpu, 1) : device_cuda_create(&gpu, d.local_rank % ngpu)) == DDP_OK,
          "%s device", devname);
    CHECK(comm_mpi_create(&gcomm, MPI_COMM_WORLD, gpu) == DDP_OK, "comm");
    CHECK(gcomm->split(gcomm, d.rank == 0 ? 0 : -1, 0, &gself) == DDP_OK, "split");
    if (gself) check_losses_gpu(gself, devname);
    int rc = check_summary_world();
    dist_finalize(&d);
    return rc;
  }
  if (d.size != 2) {
    if (rank == 0) fprintf(stderr, "test_conformance needs exactly 2 ranks\n");
    dist_finalize(&d);
    return 1;
  }
  ddp_device *dev;
  ddp_comm *world, *self;
  CHECK(device_cpu_create(&dev, 1) == DDP_OK, "cpu device");
  CHECK(comm_mpi_create(&world, MPI_COMM_WORLD, dev) == DDP_OK, "world comm");
  CHECK(world->split(world, d.rank, 0, &self) == DDP_OK && self && self->size == 1, "a comm of one per rank");
  if (rank == 0) check_buckets();
  check_hooks(world);
  check_losses_cpu(self, world);
  int rc = check_summary_world();
  dist_finalize(&d);
  return rc;
}
