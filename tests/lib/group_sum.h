/* group_sum.h: what the measurement-interface tests (test_measure, test_sweep_groups) share: a one-float
 * allreduce over a measurement group on its device and comm, the toy work their plug-ins do. Test-only,
 * header-only. */
#ifndef DDPBENCH_TESTS_GROUP_SUM_H
#define DDPBENCH_TESTS_GROUP_SUM_H

#include "measure.h"

/* v summed over the ranks of g (in place), through a device buffer and g's comm on a stream of its own. */
static inline ddp_result group_sum_f32(const measure_env *env, const measure_group *g, float *v) {
  float *buf;
  ddp_stream *s;
  DDP_TRY(env->dev->stream_create(env->dev, &s, 0));
  DDP_TRY(env->dev->alloc(env->dev, (void **)&buf, sizeof(float)));
  DDP_TRY(env->dev->copy(env->dev, buf, v, sizeof *v, s));
  DDP_TRY(g->comm->allreduce(g->comm, buf, 1, DT_F32, s));
  DDP_TRY(env->dev->copy(env->dev, v, buf, sizeof *v, s));
  DDP_TRY(env->dev->stream_synchronize(env->dev, s));
  env->dev->free(env->dev, buf);
  env->dev->stream_destroy(env->dev, s);
  return DDP_OK;
}

#endif
