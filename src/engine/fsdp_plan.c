/* fsdp_plan.c: fsdp_plan_build, FSDP2's sharding of ddpbench's model (fsdp_plan.h; docs/fsdp.md says where in
 * PyTorch each rule comes from). All sizes are computed once here with overflow checks, for rank 0, which holds
 * the most (every other rank differs only in fewer real rows of momentum). */
#include "fsdp_plan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t fsdp_chunk(size_t rows, int world, int rank, fsdp_rows *out) {
  size_t c = rows && world > 0 ? rows / (size_t)world + (rows % (size_t)world != 0) : 0;
  if (out) {
    /* rank * c is only formed where it is at most rows (no overflow); past the end a shard is empty */
    size_t start = c && (size_t)rank <= rows / c ? (size_t)rank * c : rows;
    out->first = start;
    out->rows = rows - start < c ? rows - start : c;
  }
  return c;
}

void fsdp_divide_factors(int world, ddp_dtype reduce, int *avg, double *pre, double *post) {
  *pre = *post = 1;
  if (reduce == DT_F32 || reduce == DT_BF16) { /* no overflow risk: NCCL divides */
    *avg = world > 1;
    return;
  }
  *avg = 0;
  int p = 1; /* doubles while it divides world and stays below world / p */
  while (world % p == 0 && world / p > p) p *= 2;
  *pre = p;
  *post = (double)world / p;
}

/* a * b and a + b into *r; 0 on overflow. */
static int mul_ok(size_t a, size_t b, size_t *r) {
  if (a && b > SIZE_MAX / a) return 0;
  *r = a * b;
  return 1;
}
static int add_ok(size_t a, size_t b, size_t *r) {
  if (b > SIZE_MAX - a) return 0;
  *r = a + b;
  return 1;
}
/* n * a * b * c, checked. */
static int mul4_ok(size_t n, size_t a, size_t b, size_t c, size_t *r) {
  return mul_ok(n, a, r) && mul_ok(*r, b, r) && mul_ok(*r, c, r);
}

static ddp_result fail(fsdp_plan *p, const char *why) {
  snprintf(p->why, sizeof p->why, "%s", why);
  return DDP_ERR_USAGE;
}

static int model_type(ddp_dtype t) { return t == DT_F32 || t == DT_BF16 || t == DT_F16; }

/* The unchecked sum of what rank holds; fsdp_plan_build has checked rank 0's, the largest. */
static void memory_of(const fsdp_plan *p, int rank, fsdp_memory *m) {
  const fsdp_plan_args *a = &p->args;
  const fsdp_layer *ly = &p->layers[0];
  size_t L = (size_t)a->layers, H = (size_t)a->hidden, shard = ly->shard_rows * H;
  size_t pb = dtype_size(a->param_dtype), rb = dtype_size(a->reduce_dtype);
  memset(m, 0, sizeof *m);
  m->params_master = L * shard * 4;
  m->params_lowp = a->param_dtype == DT_F32 ? 0 : L * shard * pb;
  m->grads = L * shard * 4;
  m->optim = a->momentum ? L * p->ranks[rank].rows * H * 4 : 0;
  m->gathered = (a->layers > 1 ? 2 : 1) * ly->ag_out * pb;
  m->reduce = ly->rows * ly->cols * pb + ly->rs_in * rb + (a->reduce_dtype == DT_F32 ? 0 : ly->rs_out * rb);
  m->total = m->params_master + m->params_lowp + m->grads + m->optim + m->gathered + m->reduce;
}

/* 1 when rank 0's memory (the most any rank holds) fits size_t, counting two gathered units even for L = 1. */
static int memory_checked(const fsdp_plan *p) {
  const fsdp_plan_args *a = &p->args;
  const fsdp_layer *ly = &p->layers[0];
  size_t L = (size_t)a->layers, H = (size_t)a->hidden;
  size_t pb = dtype_size(a->param_dtype), rb = dtype_size(a->reduce_dtype);
  size_t master, lowp, grads, optim, gathered, g, r1, r2, t = 0;
  if (!mul4_ok(L, ly->shard_rows, H, 4, &master) || !mul4_ok(L, ly->shard_rows, H, pb, &lowp)) return 0;
  grads = master;
  if (!mul4_ok(L, p->ranks[0].rows, H, 4, &optim)) return 0;
  if (!mul_ok(ly->ag_out, pb, &g) || !mul_ok(g, 2, &gathered)) return 0;
  size_t r3;
  if (!mul4_ok(1, ly->rows, ly->cols, pb, &r1) || !mul_ok(ly->rs_in, rb, &r2) || !mul_ok(ly->rs_out, rb, &r3)) return 0;
  size_t parts[] = {master, lowp, grads, optim, gathered, r1, r2, r3};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    if (!add_ok(t, parts[i], &t)) return 0;
  return 1;
}

/* engine_create's buffers: W, G (unless 16-bit GEMMs write G16 and the buckets are the .grad), the bucket
 * buffer and its 16-bit copy for 16-bit gradient communication, V, and W16 + G16 with 16-bit GEMMs. */
static int ddp_memory_of(const fsdp_plan_args *a, ddp_memory *d) {
  size_t P, p4, p2, pc = 0;
  int mixed = a->param_dtype != DT_F32;
  memset(d, 0, sizeof *d);
  if (!mul4_ok((size_t)a->layers, (size_t)a->hidden, (size_t)a->hidden, 1, &P) || !mul_ok(P, 4, &p4) ||
      !mul_ok(P, 2, &p2) || (mixed && !mul_ok(P, 2 * dtype_size(a->param_dtype), &pc)))
    return 0;
  d->weights = p4;
  d->grads = mixed && a->ddp_grad_view ? 0 : p4;
  d->momentum = a->momentum ? p4 : 0;
  d->buckets = p4;
  if (a->reduce_dtype != DT_F32 && !add_ok(d->buckets, p2, &d->buckets)) return 0;
  d->lowp = mixed ? pc : 0;
  size_t t = 0;
  size_t parts[] = {d->weights, d->grads, d->momentum, d->buckets, d->lowp};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    if (!add_ok(t, parts[i], &t)) return 0;
  d->total = t;
  return 1;
}

static void coll_add(fsdp_plan *p, fsdp_coll_kind kind, fsdp_pass pass, int layer, int overlaps) {
  const fsdp_layer *ly = &p->layers[layer > 0 ? layer - 1 : 0];
  fsdp_coll *c = &p->colls[p->ncolls++];
  c->kind = kind;
  c->pass = pass;
  c->layer = layer;
  c->overlaps = overlaps;
  if (kind == FSDP_ALL_GATHER) {
    c->in = ly->ag_in, c->out = ly->ag_out, c->dtype = p->args.param_dtype;
  } else if (kind == FSDP_REDUCE_SCATTER) {
    c->in = ly->rs_in, c->out = ly->rs_out, c->dtype = p->args.reduce_dtype;
  } else {
    c->in = c->out = 1, c->dtype = DT_F32;
  }
}

/* One step's collectives (docs/fsdp.md, "One step"). Forward: each unit's pre-forward all-gathers it; the next
 * unit's all-gather runs on the all-gather stream beside this unit's compute (implicit prefetch), and each
 * unit is freed after its forward (reshard_after_forward). Backward: unit L is gathered again, each unit's
 * pre-backward prefetches the unit before it, and its post-backward reduce-scatters its gradient, which
 * runs beside the next unit's backward. At world size 1 FSDP2 issues none of them. */
static void schedule(fsdp_plan *p) {
  int L = p->args.layers;
  p->ncolls = 0;
  if (p->args.world == 1) return;
  for (int l = 1; l <= L; l++) coll_add(p, FSDP_ALL_GATHER, FSDP_FORWARD, l, l - 1);
  coll_add(p, FSDP_ALL_GATHER, FSDP_BACKWARD, L, 0);
  for (int l = L; l >= 1; l--) {
    if (l > 1) coll_add(p, FSDP_ALL_GATHER, FSDP_BACKWARD, l - 1, l);
    coll_add(p, FSDP_REDUCE_SCATTER, FSDP_BACKWARD, l, l - 1);
  }
  if (p->args.grad_scaling) coll_add(p, FSDP_ALL_REDUCE, FSDP_STEP, 0, 0);
}

ddp_result fsdp_plan_build(fsdp_plan *p, const fsdp_plan_args *a) {
  memset(p, 0, sizeof *p);
  p->args = *a;
  if (a->hidden < 1 || a->layers < 1 || a->world < 1)
    return fail(p, "hidden, layers and world size must be at least 1");
  if (!model_type(a->param_dtype) || !model_type(a->reduce_dtype))
    return fail(p, "param_dtype and reduce_dtype must be fp32, bf16 or fp16");
  if (a->layers > (INT32_MAX - 1) / 3) return fail(p, "too many layers for one step's schedule");
  size_t H = (size_t)a->hidden, W = (size_t)a->world;
  p->ranks = calloc(W, sizeof *p->ranks);
  p->layers = calloc((size_t)a->layers, sizeof *p->layers);
  p->colls = calloc(3 * (size_t)a->layers + 1, sizeof *p->colls);
  if (!p->ranks || !p->layers || !p->colls) { /* no DDP_CHECK_ALLOC: it prints, and the plan does no I/O */
    snprintf(p->why, sizeof p->why, "out of host memory");
    return DDP_ERR_SYSTEM;
  }

  size_t c = fsdp_chunk(H, a->world, 0, NULL), padded, shard_n, full_n;
  for (int r = 0; r < a->world; r++) fsdp_chunk(H, a->world, r, &p->ranks[r]);
  if (!mul_ok(c, W, &padded) || !mul_ok(c, H, &shard_n) || !mul_ok(padded, H, &full_n))
    return fail(p, "the padded layer's element count overflows size_t");
  for (int l = 0; l < a->layers; l++) {
    fsdp_layer *ly = &p->layers[l];
    ly->layer = l + 1;
    ly->rows = ly->cols = H;
    ly->shard_rows = c;
    ly->padded_rows = padded;
    ly->ranks = p->ranks;
    ly->ag_in = ly->rs_out = shard_n;
    ly->ag_out = ly->rs_in = full_n;
  }
  fsdp_divide_factors(a->world, a->reduce_dtype, &p->divide_avg, &p->prediv, &p->postdiv);
  if (!memory_checked(p) || !ddp_memory_of(a, &p->ddp)) return fail(p, "the model's memory in bytes overflows size_t");
  fsdp_memory m0;
  memory_of(p, 0, &m0);
  p->max_total = m0.total;
  schedule(p);
  return DDP_OK;
}

void fsdp_plan_free(fsdp_plan *p) {
  free(p->layers);
  free(p->ranks);
  free(p->colls);
  p->layers = NULL;
  p->ranks = NULL;
  p->colls = NULL;
  p->ncolls = 0;
}

void fsdp_plan_memory(const fsdp_plan *p, int rank, fsdp_memory *out) { memory_of(p, rank, out); }
