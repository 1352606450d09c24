/* fsdp_plan.h: the shard plan PyTorch FSDP2 (fully_shard) makes for ddpbench's model, each of the L H x H
 * layers one FSDP unit and the root holding no parameter of its own (docs/fsdp.md): dim 0 chunked as torch.chunk
 * does and padded to a multiple of the world size, the element counts of every all-gather and reduce-scatter,
 * the reduce-scatter's op and divide factors, the memory a rank holds against DDP's (as engine.c allocates it),
 * and the collectives of one step in issue order (reshard_after_forward, one unit prefetched ahead). The groundwork
 * of FSDP as a second strategy: pure planning, no device, no MPI, no I/O. Every size is checked against size_t
 * overflow once, in fsdp_plan_build; an error is a message in the plan, never printed.
 *
 * defines: fsdp_rows, fsdp_chunk, fsdp_divide_factors, fsdp_plan_args, fsdp_layer, fsdp_coll, fsdp_memory,
 *          ddp_memory, fsdp_plan, fsdp_plan_build, fsdp_plan_free, fsdp_plan_memory */
#ifndef DDPBENCH_FSDP_PLAN_H
#define DDPBENCH_FSDP_PLAN_H

#include <stddef.h>

#include "common.h"
#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A rank's real rows of a parameter's dim 0: [first, first + rows). rows may be 0 (an empty shard). */
typedef struct {
  size_t first, rows;
} fsdp_rows;

/* FSDP2's chunk rule (_fsdp_param.py _init_sharded_param: torch.chunk on dim 0 into `world` pieces, empty ones
 * appended): every chunk but the last holds c = ceil(rows / world) rows, so rank r's real rows start at
 * min(r * c, rows) and number min(c, rows - start). The last ranks may hold fewer rows, or none: rows 6 over 4
 * ranks is 2, 2, 2, 0, not 2, 2, 1, 1. Every rank's shard is still padded to c rows (chunk 0's size). Returns c
 * (0 when rows or world is 0); out may be NULL. Needs rank < world. */
size_t fsdp_chunk(size_t rows, int world, int rank, fsdp_rows *out);

/* The gradient average FSDP2 applies around a reduce-scatter of `world` ranks in `reduce` (_fsdp_collectives.py
 * _get_gradient_divide_factors, no gradient_divide_factor set): fp32 and bf16 use NCCL's AVG (SUM at world 1) and
 * divide nothing; any other type (fp16) sums, dividing by pre before and post after, pre the power of two
 * near sqrt(world) that keeps pre * post == world. Sets *avg (1: ReduceOp.AVG) and the factors (1 = no division). */
void fsdp_divide_factors(int world, ddp_dtype reduce, int *avg, double *pre, double *post);

typedef struct {
  int hidden, layers, world; /* H, L, W: all >= 1 */
  ddp_dtype param_dtype;     /* MixedPrecisionPolicy.param_dtype: DT_F32 (none), DT_BF16 or DT_F16 */
  ddp_dtype reduce_dtype;    /* the type gradients are reduce-scattered in (reduce_dtype, or param_dtype when None) */
  int momentum;              /* 1: SGD keeps a momentum buffer */
  int grad_scaling;          /* 1: a GradScaler checks the sharded grads (fp16): one found_inf all-reduce a step */
  int ddp_grad_view;         /* DDP's gradient_as_bucket_view, for the DDP figures only */
} fsdp_plan_args;

typedef struct {
  int layer;               /* 1..L, the model's order */
  size_t rows, cols;       /* the weight's shape; dim 0 is sharded */
  size_t shard_rows;       /* every rank's padded shard: ceil(rows / W) rows */
  size_t padded_rows;      /* shard_rows * W: dim 0 padded to a multiple of W */
  const fsdp_rows *ranks;  /* [W]: each rank's real rows (the plan's, shared: every layer is H x H) */
  size_t ag_in, ag_out;    /* all-gather elements per rank: shard_rows * cols in, padded_rows * cols out */
  size_t rs_in, rs_out;    /* reduce-scatter: padded_rows * cols in, shard_rows * cols out */
} fsdp_layer;

typedef enum { FSDP_ALL_GATHER, FSDP_REDUCE_SCATTER, FSDP_ALL_REDUCE } fsdp_coll_kind;
typedef enum { FSDP_FORWARD, FSDP_BACKWARD, FSDP_STEP } fsdp_pass; /* STEP: GradScaler's unscale before the optimizer */

/* One collective of a step. overlaps: the layer whose compute it can run beside (issued before that layer's
 * compute ends, on FSDP2's all-gather or reduce-scatter stream), 0 for none. */
typedef struct {
  fsdp_coll_kind kind;
  fsdp_pass pass;
  int layer;         /* the unit it serves; 0 for the found_inf all-reduce */
  size_t in, out;    /* elements per rank */
  ddp_dtype dtype;   /* param_dtype (all-gather), reduce_dtype (reduce-scatter), fp32 (found_inf) */
  int overlaps;
} fsdp_coll;

/* Device bytes one rank holds. Persistent: params, grads, optim; transient, at the peak of a unit's backward:
 * gathered and reduce. The 16-bit shard in params_lowp is ddpbench's choice (engine.c keeps W16 likewise):
 * FSDP2 casts the shard at each all-gather's copy-in instead (docs/fsdp.md). */
typedef struct {
  size_t params_master; /* fp32 shards, padded: L * shard_rows * H * 4 */
  size_t params_lowp;   /* param_dtype shards, padded (0 when param_dtype is fp32) */
  size_t grads;         /* fp32 sharded gradients, padded (they are views of the reduce-scatter output) */
  size_t optim;         /* momentum: this rank's real rows only (a clone of the unpadded sharded gradient) */
  size_t gathered;      /* full param_dtype buffers: the unit being computed and the one prefetched */
  size_t reduce;        /* one unit's unsharded param_dtype gradient, its reduce-scatter input and, when
                         * reduce_dtype is 16-bit, the reduce-scatter's output before its cast to the fp32 grads */
  size_t total;
} fsdp_memory;

/* DDP's device bytes for the same model, as engine_create allocates them (activations aside, equal in both). */
typedef struct {
  size_t weights;  /* W: fp32 L*H*H */
  size_t grads;    /* G: fp32, absent with 16-bit GEMMs and gradient_as_bucket_view */
  size_t momentum; /* V */
  size_t buckets;  /* the fp32 flat bucket buffer, and the 16-bit copy when gradients travel in 16 bits */
  size_t lowp;     /* W16 and G16 with 16-bit GEMMs */
  size_t total;
} ddp_memory;

typedef struct {
  fsdp_plan_args args;
  int divide_avg;        /* the reduce-scatter's op and factors (fsdp_divide_factors) */
  double prediv, postdiv;
  fsdp_layer *layers;    /* [L] */
  fsdp_rows *ranks;      /* [W] */
  fsdp_coll *colls;      /* [ncolls], issue order: forward, then backward, then the found_inf all-reduce */
  int ncolls;
  size_t max_total;      /* the largest fsdp_memory.total over the ranks (rank 0's) */
  ddp_memory ddp;
  char why[128];         /* the error, when fsdp_plan_build fails */
} fsdp_plan;

/* Plans a. Returns DDP_OK; DDP_ERR_USAGE with p->why set when an argument is out of range or a size overflows
 * size_t; DDP_ERR_SYSTEM (why set too) when out of host memory. Prints nothing. Either way p is left for
 * fsdp_plan_free. */
ddp_result fsdp_plan_build(fsdp_plan *p, const fsdp_plan_args *a);
void fsdp_plan_free(fsdp_plan *p);

/* Rank's memory (0 <= rank < W; ranks differ only in optim). Cannot overflow once the plan is built. */
void fsdp_plan_memory(const fsdp_plan *p, int rank, fsdp_memory *out);

#ifdef __cplusplus
}
#endif
#endif
