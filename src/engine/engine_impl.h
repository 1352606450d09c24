/* engine_impl.h: the engine's state, shared by engine.c (the model, DDP, the phases) and engine_fsdp.c (the
 * fsdp strategy's step). Private to src/engine/: nothing outside includes it. */
#ifndef DDPBENCH_ENGINE_IMPL_H
#define DDPBENCH_ENGINE_IMPL_H

#include "engine.h"
#include "fsdp_plan.h"

struct engine {
  ddp_config cfg;
  ddp_device *dev;
  ddp_comm *comm;
  engine_progress_fn progress;
  void *progress_ctx;
  int H, L, B, world, rank;
  size_t HH, BH;
  ddp_dtype ct;     /* GEMM inputs and activations: fp32 or the 16-bit autocast type */
  ddp_dtype comm_t; /* allreduce type */
  int mixed, fp16;
  scaler_cfg scaler;
  ddp_stream *S, *C;
  float *W, *G, *V, *bucket; /* L*H*H each (V only with momentum; G only where it is written, see below) */
  void *W16, *comm16;        /* L*H*H, 16-bit (mixed / 16-bit grad_comm only) */
  void *G16;                 /* L*H*H of ct (mixed only): autocast's 16-bit weight gradients */
  void *act;                 /* (L+1) * B*H of ct: a_0 = x, ..., a_L = y */
  void *dz, *da;             /* B*H scratch of ct each */
  float *t;                  /* B*H targets */
  ddp_step_state *state;     /* device */
  ddp_step_state *state0;    /* device: the state a phase starts from (engine_settle's blocks restart from it) */
  double *loss_hist;         /* device, [max steps] */
  float *scale_hist;
  int *skip_hist;
  int hist_len;
  bucket_plan plan;
  int *bucket_of_param;   /* [L]: bucket holding parameter i */
  int *last_of_bucket;    /* [L]: 1 if parameter i completes its bucket */
  ddp_event **ev_ready;   /* [nbuckets], S -> C */
  ddp_event *ev_fork, *ev_comm_done;
  /* timing events, per timed step: */
  ddp_event **ev_step;    /* [steps + 1] on S at each step's start and after the last */
  ddp_event **ev_cend;    /* [steps] on S after the backward pass */
  ddp_event **ev_bstart;  /* [steps * nbuckets] on C */
  ddp_event **ev_bend;
  int nev_steps;
  int ntimed;             /* timed comm calls a step: DDP's buckets, or FSDP's collectives (fsdp_slots) */
  /* strategy fsdp (engine_fsdp.c): this rank's shards and the unit buffers, as fsdp_plan lays them out */
  int fsdp;
  fsdp_plan fp;
  ddp_dtype rt;                     /* the reduce-scatter's type (grad_comm: MixedPrecisionPolicy.reduce_dtype) */
  size_t shard_rows, my_rows, my_first; /* every rank's padded shard rows; this rank's real rows */
  size_t shard_n, full_n;           /* shard_rows * H, shard_rows * world * H */
  float *Wsh, *Gsh, *Vsh;           /* L * shard_n fp32 master shards and gradients (model order, padding 0);
                                     * momentum: L * my_rows * H */
  void *Wsh16;                      /* L * shard_n of ct (16-bit GEMMs only): what the all-gathers read */
  void *gath[2];                    /* full_n of ct: the unit being computed and the one prefetched */
  void *gfull;                      /* H * H of ct: the unit's unsharded gradient */
  void *rsin;                       /* full_n of rt: the reduce-scatter's input (rows past H stay 0) */
  void *rsout16;                    /* shard_n of rt when rt is 16-bit: the output before its cast to fp32 */
  ddp_event *ev_ag[2], *ev_free[2]; /* per gathered buffer: gathered (C), done with (S) */
  ddp_event *ev_rs, *ev_rsin;       /* the last reduce-scatter done (C); its input written (S) */
  fsdp_memory mem;                  /* what engine_create allocated, by the plan's categories */
  double mem_drop;                  /* the device's free memory before FSDP's allocations less after (NaN: the
                                     * device cannot tell) */
  fsdp_coll_kind *log;              /* [ntimed]: the kinds of one step's comm calls in issue order (tests) */
  int nlog;
};

static inline size_t ct_size(const engine *e) { return dtype_size(e->ct); }
static inline void *act_of(engine *e, int l) { return (char *)e->act + (size_t)l * e->BH * ct_size(e); }

/* engine_fsdp.c, called by engine.c */
ddp_result fsdp_create(engine *e);
void fsdp_free(engine *e);
ddp_result fsdp_weights_init(engine *e);
ddp_result fsdp_reset(engine *e, ddp_phase p);
ddp_result fsdp_step(engine *e, ddp_phase p, int timed, int step);
ddp_result fsdp_weights(engine *e, float *host);
/* Operands of the GEMM peak measurement: two H x H matrices of ct and an output. */
ddp_result fsdp_gemm_operands(engine *e, const void **a, const void **b, void **c);

#endif
