/* default_job.h: the GPU default job's model for this job (`mpirun ddpbench` with no options on GPUs), sized
 * collectively: run.c's default job and accept_soak.c's training both size their model with it. Nothing here
 * measures, prints or judges. */
#ifndef DDPBENCH_DEFAULT_JOB_H
#define DDPBENCH_DEFAULT_JOB_H

#include "dist.h"
#include "device.h"
#include "gpu_default.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over d->world: gpu_default_size from the smallest GPU memory of the job (*mem, bytes), its bf16
 * peak (*peak, 0 when unknown) and the GPUs per node; *fits = 0 when that memory is below 2 GiB (g is then not
 * set). The same on every rank. */
ddp_result cmd_gpu_default(const ddp_dist *d, const ddp_device *dev, gpu_default *g, double *mem, double *peak,
                           int *fits);

#ifdef __cplusplus
}
#endif
#endif
