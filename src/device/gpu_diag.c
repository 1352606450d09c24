/* gpu_diag.c: gathers why CUDA cannot use a GPU this host has, and turns the facts into causes a user can act
 * on (see gpu_diag.h). It must never decide to use the CPU: it only explains, and the caller fails the run. */
#include "gpu_diag.h"

#include <ctype.h>
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device.h"

int gpu_diag_count_pci(void) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0) return -1;
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    return -1;
  }
  int n = 0;
  for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(t, o));) {
    unsigned cls = o->attr->pcidev.class_id;
    if (o->attr->pcidev.vendor_id == 0x10de && (cls == 0x0302 || cls == 0x0300)) n++;
  }
  hwloc_topology_destroy(t);
  return n;
}

/* The device files CUDA opens: nvidiactl, nvidia-uvm and at least one nvidia<N>, all readable and writable. */
static void dev_check(const char *dir, int ngpu, char *out, size_t n) {
  char path[512];
  out[0] = 0;
  const char *must[] = {"nvidiactl", "nvidia-uvm"};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, must[i]);
    if (access(path, R_OK | W_OK) != 0) {
      snprintf(out, n, "%.120s: %.60s", path, strerror(errno));
      return;
    }
  }
  int usable = 0, first_errno = 0;
  char first[512] = "";
  for (int i = 0, upto = ngpu > 8 ? ngpu : 8; i < upto; i++) {
    snprintf(path, sizeof path, "%s/nvidia%d", dir, i);
    if (access(path, R_OK | W_OK) == 0) usable++;
    else if (!first[0] && (errno != ENOENT || i < ngpu)) snprintf(first, sizeof first, "%s", path), first_errno = errno;
  }
  if (!usable) snprintf(out, n, "%.120s: %.60s", first[0] ? first : "nvidia0", strerror(first_errno ? first_errno : ENOENT));
}

void gpu_diag_gather(gpu_diag_facts *f, int nvidia_pci, const nvml_api *api, const char *why_nvml,
                     const char *dev_dir) {
  memset(f, 0, sizeof *f);
  f->nvidia_pci = nvidia_pci;
  f->nvml_gpus = -1;
  const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
  if (cvd) f->cvd_set = 1, snprintf(f->cvd, sizeof f->cvd, "%s", cvd);
  if (!api || !api->device_count) {
    snprintf(f->nvml_why, sizeof f->nvml_why, "%s", why_nvml && why_nvml[0] ? why_nvml : "NVML not available");
  } else {
    unsigned count = 0;
    if (api->device_count(&count) == NVML_DL_SUCCESS) {
      f->nvml_gpus = (int)count;
      for (unsigned i = 0; i < count && i < GPU_DIAG_MAX; i++) {
        nvml_device dev = NULL;
        if (!api->handle_by_index || api->handle_by_index(i, &dev) != NVML_DL_SUCCESS) continue;
        if (api->uuid && api->uuid(dev, f->uuid[i], sizeof f->uuid[i]) != NVML_DL_SUCCESS) f->uuid[i][0] = 0;
        int mode = 0;
        if (api->compute_mode && api->compute_mode(dev, &mode) == NVML_DL_SUCCESS && mode == NVML_DL_COMPUTE_PROHIBITED)
          f->prohibited |= 1u << i;
        unsigned cur = 0, pend = 0;
        if (api->mig_mode && api->mig_mode(dev, &cur, &pend) == NVML_DL_SUCCESS && cur == 1) f->mig |= 1u << i;
      }
    } else {
      snprintf(f->nvml_why, sizeof f->nvml_why, "nvmlDeviceGetCount failed");
    }
    char cuda[16];
    nvml_driver_versions(api, f->driver_version, sizeof f->driver_version, cuda, sizeof cuda);
    int v = 0;
    if (api->system_cuda_driver_version && api->system_cuda_driver_version(&v) == NVML_DL_SUCCESS) f->driver_cuda = v;
  }
  int ngpu = f->nvml_gpus > 0 ? f->nvml_gpus : f->nvidia_pci;
  dev_check(dev_dir ? dev_dir : "/dev", ngpu, f->dev_problem, sizeof f->dev_problem);
}

static void list_bits(unsigned bits, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; i < GPU_DIAG_MAX; i++)
    if (bits >> i & 1) k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%d", k ? "," : "", i);
}

/* Why CUDA_VISIBLE_DEVICES hides every GPU, or "" when it does not. CUDA reads the list up to its first invalid
 * entry: an index below the GPU count, a GPU-<uuid> prefix NVML knows, or a MIG-<uuid>. */
static void cvd_problem(const gpu_diag_facts *f, int ngpu, char *out, size_t n) {
  out[0] = 0;
  if (!f->cvd_set) return;
  const char *s = f->cvd;
  while (isspace((unsigned char)*s)) s++;
  if (!*s) {
    snprintf(out, n, "CUDA_VISIBLE_DEVICES is set but empty, which hides every GPU: unset it or list GPUs "
                     "(0-%d on this host)", ngpu - 1);
    return;
  }
  char first[96];
  size_t k = 0;
  while (s[k] && s[k] != ',' && !isspace((unsigned char)s[k]) && k + 1 < sizeof first) first[k] = s[k], k++;
  first[k] = 0;
  char *end = NULL;
  long idx = strtol(first, &end, 10);
  if (end != first && !*end) {
    if (idx < 0 || (ngpu > 0 && idx >= ngpu))
      snprintf(out, n, "CUDA_VISIBLE_DEVICES=%.60s starts with GPU %ld, which does not exist (this host has %d: 0-%d)",
               f->cvd, idx, ngpu, ngpu - 1);
    return;
  }
  if (!strncmp(first, "MIG-", 4)) return;
  if (!strncmp(first, "GPU-", 4)) {
    int found = f->nvml_gpus < 0; /* without NVML, nobody can tell */
    for (int i = 0; i < GPU_DIAG_MAX && !found; i++) found = f->uuid[i][0] && !strncmp(f->uuid[i], first, k);
    if (!found) snprintf(out, n, "CUDA_VISIBLE_DEVICES=%.60s names %.60s, which is not a GPU of this host", f->cvd, first);
    return;
  }
  snprintf(out, n, "CUDA_VISIBLE_DEVICES=%.60s: '%.60s' is neither a GPU index nor a GPU-/MIG- UUID", f->cvd, first);
}

int gpu_diag_explain(const gpu_diag_facts *f, char causes[][256], int max) {
  int ngpu = f->nvml_gpus > 0 ? f->nvml_gpus : f->nvidia_pci;
  if (ngpu <= 0 || f->cuda_count > 0) return 0;
  int k = 0;
#define CAUSE(...) \
  do { if (k < max) snprintf(causes[k++], 256, __VA_ARGS__); } while (0)
  if (!f->cuda_built) {
    CAUSE("this ddpbench was built without CUDA (no nvcc at build time), yet the host has %d NVIDIA GPU%s: "
          "rebuild with the CUDA toolkit on PATH", ngpu, ngpu == 1 ? "" : "s");
    return k;
  }
  if (f->dev_problem[0])
    CAUSE("no access to the GPU device files (%.120s): check the container's --gpus/device list or the "
          "group that owns /dev/nvidia*", f->dev_problem);
  if (f->driver_cuda && f->runtime_cuda && f->driver_cuda < f->runtime_cuda)
    CAUSE("the driver %s supports CUDA %d.%d, older than ddpbench's CUDA runtime %d.%d: update the driver or "
          "build with an older toolkit", f->driver_version[0] ? f->driver_version : "(version unknown)",
          f->driver_cuda / 1000, f->driver_cuda % 1000 / 10, f->runtime_cuda / 1000, f->runtime_cuda % 1000 / 10);
  char buf[200], list[48];
  cvd_problem(f, ngpu, buf, sizeof buf);
  if (buf[0]) CAUSE("%.250s", buf);
  unsigned all = ngpu >= GPU_DIAG_MAX ? ~0u : (1u << ngpu) - 1;
  if (f->prohibited) {
    list_bits(f->prohibited, list, sizeof list);
    CAUSE("compute mode is Prohibited on GPU %s%s: `nvidia-smi -i %s -c DEFAULT` allows CUDA contexts", list,
          (f->prohibited & all) == all ? " (every GPU)" : "", list);
  }
  if (f->mig && !strstr(f->cvd, "MIG-")) {
    list_bits(f->mig, list, sizeof list);
    CAUSE("MIG is enabled on GPU %.20s and no MIG device is given: create instances (nvidia-smi mig -cgi ... -C) "
          "and set CUDA_VISIBLE_DEVICES=MIG-<uuid>, or disable MIG (nvidia-smi -i %.20s -mig 0)", list, list);
  }
  if (!k)
    CAUSE("CUDA sees no GPU (%s) although the host has %d NVIDIA GPU%s", f->cuda_error[0] ? f->cuda_error : "no error given",
          ngpu, ngpu == 1 ? "" : "s");
#undef CAUSE
  return k;
}

int gpu_diag_nvidia_not_used(char causes[][256], int max) {
  gpu_diag_facts f;
  nvml_api api;
  char why[128];
  int have = nvml_open(&api, why, sizeof why), driver = 0;
  gpu_diag_gather(&f, gpu_diag_count_pci(), have ? &api : NULL, why, "/dev");
  if (have) nvml_close(&api);
  f.cuda_count = device_cuda_probe(f.cuda_error, sizeof f.cuda_error, &f.runtime_cuda, &driver);
  f.cuda_built = f.cuda_count >= 0;
  if (driver) f.driver_cuda = driver; /* else NVML's figure stays */
  return gpu_diag_explain(&f, causes, max);
}
