/* default_job.c: the GPU default job's model for this job (default_job.h), apart from run.c so that the soak
 * (accept_soak.c) sizes its training with it without needing the run subcommand. */
#include "default_job.h"

#include "common.h"
#include "expect.h"

ddp_result cmd_gpu_default(const ddp_dist *d, const ddp_device *dev, gpu_default *g, double *mem, double *peak,
                           int *fits) {
  *mem = (double)dev->info.memory;
  DDP_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, mem, 1, MPI_DOUBLE, MPI_MIN, d->world));
  *peak = peak_table_tflops(dev->info.name, "bf16");
  *fits = gpu_default_size(*mem, *peak, d->local_size, g) == 0;
  return DDP_OK;
}
