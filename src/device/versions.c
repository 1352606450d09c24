/* versions.c: versions_base(): what every build of this process loaded. The device- and comm-side fields come
 * from the plug-ins themselves (devices.c, comms.c); nothing here fails. */
#include "versions.h"

#include <hwloc.h>
#include <stdio.h>
#include <string.h>

#include "dist.h"
#include "nvml_dl.h"

char *openblas_get_config(void); /* OpenBLAS's cblas.h does not declare it in every release */

void versions_base(ddp_versions *v) {
  memset(v, 0, sizeof *v);
  snprintf(v->ddpbench, sizeof v->ddpbench, "%s", DDPBENCH_VERSION);
  snprintf(v->mpi, sizeof v->mpi, "%s", dist_mpi_version());
  const char *blas = openblas_get_config();
  snprintf(v->blas, sizeof v->blas, "%s", blas ? blas : "OpenBLAS");
  /* hwloc has no run-time release number: the release built against, and the library's API level. */
  unsigned api = hwloc_get_api_version();
  snprintf(v->hwloc, sizeof v->hwloc, "%s api %u.%u", HWLOC_VERSION, api >> 16, (api >> 8) & 0xff);
  /* The kernel driver's version comes from NVML, when the machine has it (loaded at run time). */
  nvml_api nvml;
  char why[128], cuda_by_driver[32];
  if (nvml_open(&nvml, why, sizeof why)) {
    nvml_driver_versions(&nvml, v->nvidia_driver, sizeof v->nvidia_driver, cuda_by_driver, sizeof cuda_by_driver);
    nvml_close(&nvml);
  }
}
