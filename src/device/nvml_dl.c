/* nvml_dl.c: loads NVML with dlopen, fills the nvml_api table, and asks it about one GPU at a time
 * (identity, PCIe, NVLink). Every NVML answer is checked; a missing symbol or a refused query leaves the
 * field unknown. Nothing here may abort, print, or make NVML's absence an error. */
#include "nvml_dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* dlsym returns an object pointer; POSIX guarantees it converts to a function pointer of the same size. */
#define NVML_LOAD(field, symbol)                 \
  do {                                           \
    void *p_ = dlsym(api->lib, symbol);          \
    memcpy(&api->field, &p_, sizeof api->field); \
  } while (0)

int nvml_open(nvml_api *api, char *why, size_t why_len) {
  memset(api, 0, sizeof *api);
  if (why_len) why[0] = 0;
  api->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->lib) {
    const char *e = dlerror();
    snprintf(why, why_len, "%s", e ? e : "libnvidia-ml.so.1 not found");
    return 0;
  }
  NVML_LOAD(init, "nvmlInit_v2");
  if (!api->init) NVML_LOAD(init, "nvmlInit");
  NVML_LOAD(shutdown, "nvmlShutdown");
  NVML_LOAD(error_string, "nvmlErrorString");
  NVML_LOAD(system_driver_version, "nvmlSystemGetDriverVersion");
  NVML_LOAD(system_cuda_driver_version, "nvmlSystemGetCudaDriverVersion_v2");
  if (!api->system_cuda_driver_version) NVML_LOAD(system_cuda_driver_version, "nvmlSystemGetCudaDriverVersion");
  NVML_LOAD(handle_by_busid, "nvmlDeviceGetHandleByPciBusId_v2");
  NVML_LOAD(name, "nvmlDeviceGetName");
  NVML_LOAD(uuid, "nvmlDeviceGetUUID");
  NVML_LOAD(compute_capability, "nvmlDeviceGetCudaComputeCapability");
  NVML_LOAD(memory_info, "nvmlDeviceGetMemoryInfo");
  NVML_LOAD(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
  NVML_LOAD(pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
  NVML_LOAD(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
  NVML_LOAD(pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
  NVML_LOAD(nvlink_state, "nvmlDeviceGetNvLinkState");
  NVML_LOAD(nvlink_version, "nvmlDeviceGetNvLinkVersion");
  NVML_LOAD(nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  NVML_LOAD(nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  NVML_LOAD(device_count, "nvmlDeviceGetCount_v2");
  NVML_LOAD(handle_by_index, "nvmlDeviceGetHandleByIndex_v2");
  NVML_LOAD(compute_mode, "nvmlDeviceGetComputeMode");
  NVML_LOAD(mig_mode, "nvmlDeviceGetMigMode");
  NVML_LOAD(clock, "nvmlDeviceGetClockInfo");
  NVML_LOAD(power_usage, "nvmlDeviceGetPowerUsage");
  NVML_LOAD(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  NVML_LOAD(temperature, "nvmlDeviceGetTemperature");
  NVML_LOAD(clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!api->clocks_event_reasons) NVML_LOAD(clocks_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  NVML_LOAD(ecc_total, "nvmlDeviceGetTotalEccErrors");
  NVML_LOAD(remapped_rows, "nvmlDeviceGetRemappedRows");
  /* burn-in counters: signatures as in NVML nvml.h, API version 13 (nvml_counters.h names each) */
  NVML_LOAD(pcie_gen_gpu_max, "nvmlDeviceGetGpuMaxPcieLinkGeneration");
  NVML_LOAD(pcie_replay, "nvmlDeviceGetPcieReplayCounter");
  NVML_LOAD(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
  NVML_LOAD(nvlink_error_counter, "nvmlDeviceGetNvLinkErrorCounter");
  NVML_LOAD(violation_status, "nvmlDeviceGetViolationStatus"); /* deprecated in 13.0, still exported */
  NVML_LOAD(event_set_create, "nvmlEventSetCreate");
  NVML_LOAD(register_events, "nvmlDeviceRegisterEvents");
  NVML_LOAD(event_set_wait, "nvmlEventSetWait_v2"); /* the _v2 entry point is the one nvml_event_data matches */
  NVML_LOAD(event_set_free, "nvmlEventSetFree");
  if (!api->init || !api->shutdown || !api->handle_by_busid) {
    snprintf(why, why_len, "libnvidia-ml.so.1 lacks nvmlInit/nvmlShutdown/nvmlDeviceGetHandleByPciBusId_v2");
    dlclose(api->lib);
    memset(api, 0, sizeof *api);
    return 0;
  }
  nvml_return r = api->init();
  if (r != NVML_DL_SUCCESS) {
    snprintf(why, why_len, "nvmlInit failed: %s", api->error_string ? api->error_string(r) : "unknown error");
    dlclose(api->lib);
    memset(api, 0, sizeof *api);
    return 0;
  }
  return 1;
}

void nvml_close(nvml_api *api) {
  if (api->shutdown) api->shutdown();
  if (api->lib) dlclose(api->lib);
  memset(api, 0, sizeof *api);
}

static const char *nvml_errstr(const nvml_api *api, nvml_return r) {
  static _Thread_local char buf[32];
  if (api->error_string) {
    const char *s = api->error_string(r);
    if (s) return s;
  }
  snprintf(buf, sizeof buf, "NVML error %d", r);
  return buf;
}

void nvml_driver_versions(const nvml_api *api, char *driver, size_t driver_len, char *cuda, size_t cuda_len) {
  if (driver_len) driver[0] = 0;
  if (cuda_len) cuda[0] = 0;
  if (!api) return;
  char buf[96] = "";
  if (api->system_driver_version && api->system_driver_version(buf, sizeof buf) == NVML_DL_SUCCESS)
    snprintf(driver, driver_len, "%s", buf);
  int v = 0;
  if (api->system_cuda_driver_version && api->system_cuda_driver_version(&v) == NVML_DL_SUCCESS && v > 0)
    snprintf(cuda, cuda_len, "%d.%d", v / 1000, (v % 1000) / 10);
}

const char *nvml_link_version_str(unsigned version) {
  static const char *names[] = {"?", "1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0", "6.0"};
  return version < sizeof names / sizeof names[0] ? names[version] : "?";
}

const char *nvml_pcie_gen_str(const nvml_gpu *g, int max, char *buf, size_t n) {
  if (nvml_gpu_pcie_has(g, max ? NVML_GPU_PCIE_GEN_MAX : NVML_GPU_PCIE_GEN))
    snprintf(buf, n, "gen%u", max ? g->pcie_gen_max : g->pcie_gen);
  else
    snprintf(buf, n, "gen?");
  return buf;
}

const char *nvml_pcie_width_str(const nvml_gpu *g, int max, char *buf, size_t n) {
  if (nvml_gpu_pcie_has(g, max ? NVML_GPU_PCIE_WIDTH_MAX : NVML_GPU_PCIE_WIDTH))
    snprintf(buf, n, "x%u", max ? g->pcie_width_max : g->pcie_width);
  else
    snprintf(buf, n, "x?");
  return buf;
}

int nvml_busid_normalize(const char *in, char *out, size_t n) {
  unsigned long dom = 0, bus = 0, dev = 0, fn = 0;
  int used = 0;
  if (n) out[0] = 0;
  if (!in) return -1;
  int ok = sscanf(in, "%lx:%lx:%lx.%lx%n", &dom, &bus, &dev, &fn, &used) == 4 && in[used] == 0;
  if (!ok) {
    dom = 0;
    used = 0;
    ok = sscanf(in, "%lx:%lx.%lx%n", &bus, &dev, &fn, &used) == 3 && in[used] == 0;
  }
  if (!ok || dom > 0xfffffffful || bus > 0xff || dev > 0xff || fn > 7) return -1;
  snprintf(out, n, "%04lx:%02lx:%02lx.%lx", dom, bus, dev, fn);
  return 0;
}

/* Counts one active link into the peer table (links to the same GPU are bonded). */
static void peer_add(nvml_gpu *g, const char *busid) {
  for (int i = 0; i < g->npeers; i++)
    if (!strcmp(g->peer[i].busid, busid)) {
      g->peer[i].links++;
      return;
    }
  if (g->npeers == NVML_DL_MAX_PEERS) {
    g->to_unknown++;
    g->to_gpu--;
    return;
  }
  snprintf(g->peer[g->npeers].busid, sizeof g->peer[0].busid, "%s", busid);
  g->peer[g->npeers++].links = 1;
}

/* One active link: what is at its far end. */
static void link_classify(const nvml_api *api, nvml_device dev, unsigned link, nvml_gpu *g) {
  char peer[20] = "";
  nvml_pci_info pci;
  memset(&pci, 0, sizeof pci);
  if (api->nvlink_remote_pci && api->nvlink_remote_pci(dev, link, &pci) == NVML_DL_SUCCESS) {
    pci.bus_id[sizeof pci.bus_id - 1] = 0;
    pci.bus_id_legacy[sizeof pci.bus_id_legacy - 1] = 0;
    if (nvml_busid_normalize(pci.bus_id[0] ? pci.bus_id : pci.bus_id_legacy, peer, sizeof peer) != 0) peer[0] = 0;
  }
  int hidden = !strncmp(peer, "ffffffff", 8);
  unsigned type = NVML_DL_REMOTE_UNKNOWN;
  if (!api->nvlink_remote_type || api->nvlink_remote_type(dev, link, &type) != NVML_DL_SUCCESS)
    type = (hidden || !peer[0]) ? NVML_DL_REMOTE_SWITCH : NVML_DL_REMOTE_GPU; /* NCCL's rule */
  switch (type) {
    case NVML_DL_REMOTE_GPU:
      if (!peer[0] || hidden) {
        g->to_unknown++;
      } else {
        g->to_gpu++;
        peer_add(g, peer);
      }
      break;
    case NVML_DL_REMOTE_SWITCH:
      g->to_switch++;
      break;
    case NVML_DL_REMOTE_IBMNPU:
      g->to_cpu++;
      break;
    default:
      g->to_unknown++;
      break;
  }
}

static void links_probe(const nvml_api *api, nvml_device dev, nvml_gpu *g) {
  if (!api->nvlink_state) return;
  g->nvlink_known = 1;
  for (unsigned link = 0; link < NVML_DL_MAX_LINKS; link++) {
    unsigned active = 0;
    nvml_return r = api->nvlink_state(dev, link, &active);
    if (r == NVML_DL_ERROR_INVALID_ARGUMENT || r == NVML_DL_ERROR_NOT_SUPPORTED) break; /* past the last link */
    if (r != NVML_DL_SUCCESS) {
      snprintf(g->error, sizeof g->error, "nvmlDeviceGetNvLinkState(link %u): %s", link, nvml_errstr(api, r));
      if (link == 0) g->nvlink_known = 0;
      break;
    }
    g->links_total++;
    if (active != NVML_DL_LINK_ENABLED) continue;
    g->links_active++;
    unsigned v = 0;
    if (!g->link_version && api->nvlink_version && api->nvlink_version(dev, link, &v) == NVML_DL_SUCCESS)
      g->link_version = v;
    link_classify(api, dev, link, g);
  }
}

void nvml_gpu_query(const nvml_api *api, const char *busid, nvml_gpu *g) {
  memset(g, 0, sizeof *g);
  g->cc_major = g->cc_minor = -1;
  if (!api || !api->handle_by_busid || !busid) return;
  nvml_device dev = NULL;
  nvml_return r = api->handle_by_busid(busid, &dev);
  if (r != NVML_DL_SUCCESS) {
    snprintf(g->error, sizeof g->error, "nvmlDeviceGetHandleByPciBusId(%s): %s", busid, nvml_errstr(api, r));
    return;
  }
  g->known = 1;
  if (!api->name || api->name(dev, g->name, sizeof g->name) != NVML_DL_SUCCESS) g->name[0] = 0;
  if (!api->uuid || api->uuid(dev, g->uuid, sizeof g->uuid) != NVML_DL_SUCCESS) g->uuid[0] = 0;
  g->name[sizeof g->name - 1] = g->uuid[sizeof g->uuid - 1] = 0;
  if (!api->compute_capability || api->compute_capability(dev, &g->cc_major, &g->cc_minor) != NVML_DL_SUCCESS)
    g->cc_major = g->cc_minor = -1;
  nvml_memory mem;
  if (api->memory_info && api->memory_info(dev, &mem) == NVML_DL_SUCCESS) g->memory_bytes = mem.total;
  /* A missing symbol or a refused query leaves the figure not measured (its bit clear), never a 0 read as x0. */
  struct {
    nvml_return (*fn)(nvml_device, unsigned *);
    unsigned *v, bit;
  } pcie[] = {{api->pcie_gen, &g->pcie_gen, NVML_GPU_PCIE_GEN},
              {api->pcie_gen_max, &g->pcie_gen_max, NVML_GPU_PCIE_GEN_MAX},
              {api->pcie_width, &g->pcie_width, NVML_GPU_PCIE_WIDTH},
              {api->pcie_width_max, &g->pcie_width_max, NVML_GPU_PCIE_WIDTH_MAX}};
  for (size_t i = 0; i < sizeof pcie / sizeof pcie[0]; i++) {
    unsigned v = 0;
    if (pcie[i].fn && pcie[i].fn(dev, &v) == NVML_DL_SUCCESS) *pcie[i].v = v, g->pcie_known |= pcie[i].bit;
  }
  links_probe(api, dev, g);
}

/* ---- health ---- */

void nvml_sample_read(const nvml_api *api, nvml_device dev, nvml_sample *s) {
  memset(s, 0, sizeof *s);
  unsigned v = 0;
  if (api->clock && api->clock(dev, 1, &v) == NVML_DL_SUCCESS) s->sm_mhz = v, s->known |= 1;
  if (api->power_usage && api->power_usage(dev, &v) == NVML_DL_SUCCESS) s->power_w = v / 1000.0, s->known |= 2;
  if (api->power_limit && api->power_limit(dev, &v) == NVML_DL_SUCCESS) s->power_limit_w = v / 1000.0;
  if (api->temperature && api->temperature(dev, 0, &v) == NVML_DL_SUCCESS) s->temp_c = v, s->known |= 4;
  unsigned long long r = 0;
  if (api->clocks_event_reasons && api->clocks_event_reasons(dev, &r) == NVML_DL_SUCCESS) s->reasons = r, s->known |= 8;
}

void nvml_mem_health_read(const nvml_api *api, nvml_device dev, nvml_mem_health *h) {
  long long *ecc[2][2] = {{&h->ecc_corr_volatile, &h->ecc_corr_aggregate}, {&h->ecc_unc_volatile, &h->ecc_unc_aggregate}};
  for (int type = 0; type < 2; type++)
    for (int counter = 0; counter < 2; counter++) {
      unsigned long long c = 0;
      *ecc[type][counter] =
          api->ecc_total && api->ecc_total(dev, type, counter, &c) == NVML_DL_SUCCESS ? (long long)c : -1;
    }
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  if (api->remapped_rows && api->remapped_rows(dev, &corr, &unc, &pending, &failure) == NVML_DL_SUCCESS) {
    h->rows_corr = (int)corr, h->rows_unc = (int)unc, h->rows_pending = (int)pending, h->rows_failure = (int)failure;
  } else {
    h->rows_corr = h->rows_unc = h->rows_pending = h->rows_failure = -1;
  }
}

/* GB/s (1e9) per link or lane, one direction, by NVML's NVLink version enum and by PCIe generation. */
static const double NVLINK_GBS[] = {[1] = 20, [2] = 25, [3] = 25, [4] = 25, [5] = 25, [6] = 25, [7] = 50};
static const double PCIE_LANE_GBS[] = {[1] = 0.25, [2] = 0.5, [3] = 0.985, [4] = 1.969, [5] = 3.938, [6] = 7.877};

double nvml_gpu_link_peak_gbs(const nvml_gpu *g, char *why, size_t n) {
  double nvl = 0, pcie = 0;
  unsigned v = g->link_version, gen = g->pcie_gen_max, width = g->pcie_width_max;
  if (g->known && g->nvlink_known && g->links_active > 0 && v < sizeof NVLINK_GBS / sizeof NVLINK_GBS[0])
    nvl = 2.0 * g->links_active * NVLINK_GBS[v];
  if (nvml_gpu_pcie_has(g, NVML_GPU_PCIE_GEN_MAX | NVML_GPU_PCIE_WIDTH_MAX) &&
      gen < sizeof PCIE_LANE_GBS / sizeof PCIE_LANE_GBS[0])
    pcie = 2.0 * width * PCIE_LANE_GBS[gen];
  if (nvl > 0 && nvl >= pcie) {
    snprintf(why, n, "this GPU's NVLink peak: %d active NVLink %s links x %g GB/s, both directions", g->links_active,
             nvml_link_version_str(v), NVLINK_GBS[v]);
    return nvl;
  }
  if (pcie > 0) {
    snprintf(why, n, "this GPU's PCIe peak: gen%u x%u, both directions (NVML knows no active NVLink of it)", gen, width);
    return pcie;
  }
  snprintf(why, n, "no bound: NVML tells neither this GPU's NVLinks nor its PCIe link");
  return 0;
}
