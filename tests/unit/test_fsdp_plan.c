/* test_fsdp_plan: FSDP2's shard plan (engine/fsdp_plan.h) against values worked out by hand from the rules in
 * docs/fsdp.md: torch.chunk's rows per rank with H divisible by W and not (H=1000 over 3 and 7, H=6 over 4
 * where the last rank is empty although H >= W, H=5 over 8 where three ranks are), W=1, the padded sizes and
 * element counts of both collectives, the divide factors, every memory figure of one case summed by hand
 * against DDP's for the same model, and one step's collectives in issue order. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fsdp_plan.h"

static fsdp_plan_args args(int H, int L, int W) {
  fsdp_plan_args a = {.hidden = H, .layers = L, .world = W, .param_dtype = DT_BF16, .reduce_dtype = DT_F32,
                      .momentum = 1};
  return a;
}

/* Rank r's rows are [first[r], first[r] + rows[r]); every layer the same shard_rows and padded rows. */
static void rows_case(int H, int W, size_t shard, size_t padded, const size_t *first, const size_t *rows) {
  fsdp_plan p;
  fsdp_plan_args a = args(H, 2, W);
  CHECK(fsdp_plan_build(&p, &a) == DDP_OK, "H=%d W=%d: %s", H, W, p.why);
  for (int l = 0; l < 2 && p.layers; l++) {
    const fsdp_layer *ly = &p.layers[l];
    CHECK(ly->layer == l + 1, "H=%d W=%d: layer %d numbered %d", H, W, l + 1, ly->layer);
    CHECK(ly->shard_rows == shard && ly->padded_rows == padded, "H=%d W=%d: shard %zu padded %zu, want %zu %zu", H, W,
          ly->shard_rows, ly->padded_rows, shard, padded);
    CHECK(ly->ag_in == shard * H && ly->ag_out == padded * H, "H=%d W=%d: all-gather %zu -> %zu", H, W, ly->ag_in,
          ly->ag_out);
    CHECK(ly->rs_in == padded * H && ly->rs_out == shard * H, "H=%d W=%d: reduce-scatter %zu -> %zu", H, W, ly->rs_in,
          ly->rs_out);
    size_t sum = 0;
    for (int r = 0; r < W; r++) {
      CHECK(ly->ranks[r].first == first[r] && ly->ranks[r].rows == rows[r],
            "H=%d W=%d rank %d: [%zu +%zu), want [%zu +%zu)", H, W, r, ly->ranks[r].first, ly->ranks[r].rows,
            first[r], rows[r]);
      sum += ly->ranks[r].rows;
    }
    CHECK(sum == (size_t)H, "H=%d W=%d: the ranks hold %zu rows", H, W, sum);
  }
  fsdp_plan_free(&p);
}

static void test_rows(void) {
  /* 1000 over 3: c = ceil(1000/3) = 334, padded 1002; chunks 334, 334, 332. */
  rows_case(1000, 3, 334, 1002, (size_t[]){0, 334, 668}, (size_t[]){334, 334, 332});
  /* 1000 over 7: c = 143 (7 * 143 = 1001), six chunks of 143 end at 858, the last holds 142. */
  rows_case(1000, 7, 143, 1001, (size_t[]){0, 143, 286, 429, 572, 715, 858},
            (size_t[]){143, 143, 143, 143, 143, 143, 142});
  /* 6 over 4: c = 2, torch.chunk makes three chunks; rank 3 is empty (not 2, 2, 1, 1). */
  rows_case(6, 4, 2, 8, (size_t[]){0, 2, 4, 6}, (size_t[]){2, 2, 2, 0});
  /* 10 over 4: c = 3, chunks 3, 3, 3, 1. */
  rows_case(10, 4, 3, 12, (size_t[]){0, 3, 6, 9}, (size_t[]){3, 3, 3, 1});
  /* 5 over 8: c = 1, padded 8; ranks 5, 6, 7 hold nothing (their start clamps to 5). */
  rows_case(5, 8, 1, 8, (size_t[]){0, 1, 2, 3, 4, 5, 5, 5}, (size_t[]){1, 1, 1, 1, 1, 0, 0, 0});
  /* Divisible: 8192 over 8 is 1024 each, no padding. */
  rows_case(8192, 8, 1024, 8192, (size_t[]){0, 1024, 2048, 3072, 4096, 5120, 6144, 7168},
            (size_t[]){1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024});
  /* W = 1: the whole weight, unpadded. */
  rows_case(1000, 1, 1000, 1000, (size_t[]){0}, (size_t[]){1000});
  /* The rule alone, at the edges: rows 1 over 1, a huge dim 0 over 3 (no overflow forming r * c). */
  fsdp_rows o;
  CHECK(fsdp_chunk(1, 1, 0, &o) == 1 && o.first == 0 && o.rows == 1, "1 over 1");
  size_t big = SIZE_MAX - 1, c = fsdp_chunk(big, 3, 2, &o);
  CHECK(c == big / 3 + 1 && o.first == 2 * c && o.rows == big - 2 * c, "SIZE_MAX-1 over 3: c %zu, rank 2 [%zu +%zu)", c,
        o.first, o.rows);
}

/* _get_gradient_divide_factors by hand: p doubles while p | W and W / p > p. */
static void test_divide(void) {
  struct {
    int W;
    ddp_dtype t;
    int avg;
    double pre, post;
  } cases[] = {
      {8, DT_F32, 1, 1, 1},  {8, DT_BF16, 1, 1, 1}, {1, DT_F32, 0, 1, 1},  {1, DT_F16, 0, 1, 1},
      {2, DT_F16, 0, 2, 1},  {3, DT_F16, 0, 2, 1.5}, {6, DT_F16, 0, 4, 1.5}, {7, DT_F16, 0, 2, 3.5},
      {8, DT_F16, 0, 4, 2},  {12, DT_F16, 0, 4, 3}, {16, DT_F16, 0, 4, 4},  {64, DT_F16, 0, 8, 8},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int avg;
    double pre, post;
    fsdp_divide_factors(cases[i].W, cases[i].t, &avg, &pre, &post);
    CHECK(avg == cases[i].avg && pre == cases[i].pre && post == cases[i].post,
          "W=%d %s: avg %d pre %g post %g, want %d %g %g", cases[i].W, dtype_name(cases[i].t), avg, pre, post,
          cases[i].avg, cases[i].pre, cases[i].post);
    CHECK(pre * post == cases[i].W || cases[i].avg, "W=%d: pre * post is not W", cases[i].W);
  }
}

/* H=1000, L=2, W=3, bf16 params, fp32 reduction, momentum (sums in the comments, bytes). */
static void test_memory(void) {
  fsdp_plan p;
  fsdp_plan_args a = args(1000, 2, 3);
  CHECK(fsdp_plan_build(&p, &a) == DDP_OK, "build: %s", p.why);
  fsdp_memory m;
  fsdp_plan_memory(&p, 2, &m);
  CHECK(m.params_master == 2672000, "master %zu: 2 * 334*1000 * 4", m.params_master);
  CHECK(m.params_lowp == 1336000, "lowp %zu: 2 * 334*1000 * 2", m.params_lowp);
  CHECK(m.grads == 2672000, "grads %zu: padded, fp32", m.grads);
  CHECK(m.optim == 2656000, "rank 2 momentum %zu: 2 * 332*1000 * 4", m.optim);
  CHECK(m.gathered == 4008000, "gathered %zu: 2 units * 1002*1000 * 2", m.gathered);
  CHECK(m.reduce == 6008000, "reduce %zu: 1000*1000 * 2 + 1002*1000 * 4", m.reduce);
  CHECK(m.total == 19352000, "rank 2 total %zu", m.total);
  fsdp_plan_memory(&p, 0, &m);
  CHECK(m.optim == 2672000 && m.total == 19368000 && p.max_total == m.total, "rank 0: momentum %zu total %zu max %zu",
        m.optim, m.total, p.max_total);
  /* DDP (engine.c): W, G, buckets, V in fp32 (4 * 2e6 B each), W16 + G16 (2 * 2 * 2e6), no 16-bit comm copy. */
  CHECK(p.ddp.weights == 8000000 && p.ddp.grads == 8000000 && p.ddp.momentum == 8000000 && p.ddp.buckets == 8000000 &&
            p.ddp.lowp == 8000000 && p.ddp.total == 40000000,
        "DDP: %zu %zu %zu %zu %zu = %zu", p.ddp.weights, p.ddp.grads, p.ddp.momentum, p.ddp.buckets, p.ddp.lowp,
        p.ddp.total);
  fsdp_plan_free(&p);

  /* H=5, W=8, L=1, fp32 throughout, no momentum: ranks 5..7 hold padding only; one gathered unit. */
  a = args(5, 1, 8);
  a.param_dtype = a.reduce_dtype = DT_F32;
  a.momentum = 0;
  CHECK(fsdp_plan_build(&p, &a) == DDP_OK, "build: %s", p.why);
  fsdp_plan_memory(&p, 7, &m);
  CHECK(m.params_master == 20 && m.params_lowp == 0 && m.grads == 20 && m.optim == 0, "H=5 W=8: %zu %zu %zu %zu",
        m.params_master, m.params_lowp, m.grads, m.optim);
  CHECK(m.gathered == 160 && m.reduce == 100 + 160 && m.total == 20 + 20 + 160 + 260,
        "H=5 W=8: gathered %zu reduce %zu", m.gathered, m.reduce);
  /* DDP fp32: W, G, buckets only. With gradient_as_bucket_view and fp32 GEMMs G stays (engine.c writes it). */
  CHECK(p.ddp.total == 300 && p.ddp.lowp == 0, "DDP fp32 %zu", p.ddp.total);
  fsdp_plan_free(&p);

  /* bf16 GEMMs with gradient_as_bucket_view and bf16 gradients: no G, a 16-bit bucket copy (engine.c). */
  a = args(4, 3, 2);
  a.reduce_dtype = DT_BF16;
  a.ddp_grad_view = 1;
  CHECK(fsdp_plan_build(&p, &a) == DDP_OK, "build: %s", p.why);
  CHECK(p.ddp.weights == 192 && p.ddp.grads == 0 && p.ddp.momentum == 192 && p.ddp.buckets == 192 + 96 &&
            p.ddp.lowp == 192 && p.ddp.total == 864,
        "DDP view: %zu %zu %zu %zu %zu", p.ddp.weights, p.ddp.grads, p.ddp.momentum, p.ddp.buckets, p.ddp.lowp);
  fsdp_plan_free(&p);

  /* W = 1: FSDP holds what DDP holds in weights and grads, and more transient buffers. */
  a = args(1000, 2, 1);
  CHECK(fsdp_plan_build(&p, &a) == DDP_OK, "build: %s", p.why);
  fsdp_plan_memory(&p, 0, &m);
  CHECK(m.params_master == p.ddp.weights && m.grads == p.ddp.grads && m.optim == p.ddp.momentum, "W=1 against DDP");
  fsdp_plan_free(&p);
}

static void test_schedule(void) {
  /* H=6, L=3, W=4: shard 2 rows (12 elements), padded 8 rows (48). */
  fsdp_plan p;
  fsdp_plan_args a = args(6, 3, 4);
  a.grad_scaling = 1;
  a.param_dtype = a.reduce_dtype = DT_F16;
  CHECK(fsdp_plan_build(&p, &a) == DDP_OK, "build: %s", p.why);
  struct {
    fsdp_coll_kind k;
    fsdp_pass pass;
    int layer, overlaps;
    size_t in, out;
  } want[] = {
      {FSDP_ALL_GATHER, FSDP_FORWARD, 1, 0, 12, 48},      {FSDP_ALL_GATHER, FSDP_FORWARD, 2, 1, 12, 48},
      {FSDP_ALL_GATHER, FSDP_FORWARD, 3, 2, 12, 48},      {FSDP_ALL_GATHER, FSDP_BACKWARD, 3, 0, 12, 48},
      {FSDP_ALL_GATHER, FSDP_BACKWARD, 2, 3, 12, 48},     {FSDP_REDUCE_SCATTER, FSDP_BACKWARD, 3, 2, 48, 12},
      {FSDP_ALL_GATHER, FSDP_BACKWARD, 1, 2, 12, 48},     {FSDP_REDUCE_SCATTER, FSDP_BACKWARD, 2, 1, 48, 12},
      {FSDP_REDUCE_SCATTER, FSDP_BACKWARD, 1, 0, 48, 12}, {FSDP_ALL_REDUCE, FSDP_STEP, 0, 0, 1, 1},
  };
  int n = (int)(sizeof want / sizeof *want);
  CHECK(p.ncolls == n, "%d collectives, want %d", p.ncolls, n);
  for (int i = 0; i < n && i < p.ncolls; i++) {
    const fsdp_coll *c = &p.colls[i];
    CHECK(c->kind == want[i].k && c->pass == want[i].pass && c->layer == want[i].layer &&
              c->overlaps == want[i].overlaps && c->in == want[i].in && c->out == want[i].out,
          "collective %d: kind %d pass %d layer %d overlaps %d %zu -> %zu", i, c->kind, c->pass, c->layer, c->overlaps,
          c->in, c->out);
    CHECK(c->dtype == (c->kind == FSDP_ALL_REDUCE ? DT_F32 : DT_F16), "collective %d type", i);
  }
  CHECK(!p.divide_avg && p.prediv == 2 && p.postdiv == 2, "fp16 over 4: pre %g post %g", p.prediv, p.postdiv);
  fsdp_plan_free(&p);

  /* L = 1: AG1 forward, AG1 again and RS1 backward; sizes 1000 over 7. */
  a = args(1000, 1, 7);
  CHECK(fsdp_plan_build(&p, &a) == DDP_OK, "build: %s", p.why);
  CHECK(p.ncolls == 3 && p.colls[0].kind == FSDP_ALL_GATHER && p.colls[1].kind == FSDP_ALL_GATHER &&
            p.colls[2].kind == FSDP_REDUCE_SCATTER && p.colls[2].in == 1001000 && p.colls[2].out == 143000 &&
            p.colls[2].dtype == DT_F32 && p.colls[0].dtype == DT_BF16,
        "L=1 schedule");
  CHECK(p.divide_avg && p.prediv == 1 && p.postdiv == 1, "fp32 over 7: AVG");
  fsdp_plan_free(&p);

  /* A deep model: 3L collectives, L all-gathers each way, reduce-scatters in reverse layer order. */
  a = args(1000, 40, 3);
  CHECK(fsdp_plan_build(&p, &a) == DDP_OK, "build: %s", p.why);
  int ag = 0, rs = 0, last_rs = 41, order = 1;
  for (int i = 0; i < p.ncolls; i++) {
    if (p.colls[i].kind == FSDP_ALL_GATHER) ag++;
    if (p.colls[i].kind == FSDP_REDUCE_SCATTER) {
      rs++;
      order &= p.colls[i].layer == last_rs - 1;
      last_rs = p.colls[i].layer;
    }
  }
  CHECK(p.ncolls == 120 && ag == 80 && rs == 40 && order, "L=40: %d collectives, %d AG, %d RS", p.ncolls, ag, rs);
  fsdp_plan_free(&p);

  /* W = 1: FSDP2 issues no collective (unshard copies, the reduce-scatter is a copy). */
  a = args(1000, 4, 1);
  a.grad_scaling = 1;
  CHECK(fsdp_plan_build(&p, &a) == DDP_OK && p.ncolls == 0, "W=1: %d collectives", p.ncolls);
  fsdp_plan_free(&p);
}

static void test_errors(void) {
  fsdp_plan p;
  fsdp_plan_args a = args(0, 2, 2);
  CHECK(fsdp_plan_build(&p, &a) == DDP_ERR_USAGE && strstr(p.why, "at least 1"), "H=0: %s", p.why);
  fsdp_plan_free(&p);
  a = args(8, 2, 2);
  a.param_dtype = DT_I8;
  CHECK(fsdp_plan_build(&p, &a) == DDP_ERR_USAGE && strstr(p.why, "bf16"), "int8 params: %s", p.why);
  fsdp_plan_free(&p);
  /* 4 layers of (2^31-1)^2 fp32 elements (2^30 rows a shard over 2) overflow 64 bits. */
  a = args(2147483647, 4, 2);
  CHECK(fsdp_plan_build(&p, &a) == DDP_ERR_USAGE && strstr(p.why, "overflows"), "huge: %s", p.why);
  fsdp_plan_free(&p);
}

int main(void) {
  test_rows();
  test_divide();
  test_memory();
  test_schedule();
  test_errors();
  return check_summary();
}
