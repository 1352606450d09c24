/* nvml_counters.c: one GPU's hardware counters, their deltas, and Xid events, through the nvml_api table
 * (nvml_counters.h). Every NVML answer is checked; a missing symbol or any refusal leaves the figure not
 * measured. Nothing here may block, print, abort, or judge a figure. */
#include "nvml_counters.h"

#include <stdio.h>
#include <string.h>

const char *nvml_count_str(nvml_count c, char *buf, size_t n) {
  if (c.measured)
    snprintf(buf, n, "%llu", c.v);
  else
    snprintf(buf, n, "-");
  return buf;
}

/* ---- a snapshot ---- */

static nvml_count got(nvml_return r, unsigned long long v) {
  nvml_count c = {0, 0};
  if (r == NVML_DL_SUCCESS) c.v = v, c.measured = 1;
  return c;
}
/* The query runs before its output is read: C leaves the order of a call's arguments unspecified. */
#define GOT(call, var) ((r_ = (call)), got(r_, (var)))

/* One unsigned figure from a (dev, unsigned *) query; not measured when the symbol is NULL. */
static nvml_count read_u(nvml_return (*fn)(nvml_device, unsigned *), nvml_device dev) {
  unsigned v = 0;
  nvml_return r_;
  return fn ? GOT(fn(dev, &v), v) : got(NVML_DL_ERROR_FUNCTION_NOT_FOUND, 0);
}

static void links_read(const nvml_api *api, nvml_device dev, nvml_counters *c) {
  nvml_return r_;
  if (!api->nvlink_state) return;
  for (unsigned l = 0; l < NVML_DL_MAX_LINKS; l++) {
    unsigned active = 0;
    nvml_return r = api->nvlink_state(dev, l, &active);
    if (r == NVML_DL_ERROR_INVALID_ARGUMENT || r == NVML_DL_ERROR_NOT_SUPPORTED) { /* past the last link */
      if (l == 0) c->nvlink_measured = 1;                                      /* a GPU without NVLink */
      break;
    }
    if (r != NVML_DL_SUCCESS) break; /* links from here on are not measured; a link that stops answering */
    c->nvlink_measured = 1;
    c->nlinks = (int)l + 1;
    c->link[l].up = got(r, active == NVML_DL_LINK_ENABLED);
    for (int k = 0; k < NVML_CTR_NVLINK_NERR && api->nvlink_error_counter; k++) {
      unsigned long long v = 0;
      c->link[l].err[k] = GOT(api->nvlink_error_counter(dev, l, k, &v), v);
    }
  }
}

void nvml_counters_read(const nvml_api *api, nvml_device dev, double t, nvml_counters *c) {
  memset(c, 0, sizeof *c);
  c->t = t;
  if (!api) return;
  nvml_return r_;
  unsigned long long v = 0;
  if (api->ecc_total) {
    c->ecc_corr = GOT(api->ecc_total(dev, NVML_CTR_ECC_CORRECTED, NVML_CTR_ECC_VOLATILE, &v), v);
    v = 0;
    c->ecc_unc = GOT(api->ecc_total(dev, NVML_CTR_ECC_UNCORRECTED, NVML_CTR_ECC_VOLATILE, &v), v);
  }
  unsigned pending = 0;
  if (api->retired_pending)
    c->retired_pending = GOT(api->retired_pending(dev, &pending), pending == NVML_DL_LINK_ENABLED);
  unsigned rc = 0, ru = 0, rp = 0, rf = 0;
  if (api->remapped_rows && api->remapped_rows(dev, &rc, &ru, &rp, &rf) == NVML_DL_SUCCESS) {
    c->rows_corr = got(NVML_DL_SUCCESS, rc), c->rows_unc = got(NVML_DL_SUCCESS, ru);
    c->rows_pending = got(NVML_DL_SUCCESS, rp != 0), c->rows_failure = got(NVML_DL_SUCCESS, rf != 0);
  }
  c->pcie_replay = read_u(api->pcie_replay, dev);
  c->pcie_gen = read_u(api->pcie_gen, dev);
  c->pcie_width = read_u(api->pcie_width, dev);
  c->pcie_gen_max = read_u(api->pcie_gen_max, dev);
  c->pcie_width_max = read_u(api->pcie_width_max, dev);
  c->pcie_gen_gpu_max = read_u(api->pcie_gen_gpu_max, dev);
  links_read(api, dev, c);
  v = 0;
  if (api->clocks_event_reasons) c->reasons = GOT(api->clocks_event_reasons(dev, &v), v);
  for (int p = 0; p < NVML_CTR_NVIOL && api->violation_status; p++) {
    nvml_violation_time vt = {0, 0};
    c->violation_ns[p] = GOT(api->violation_status(dev, p, &vt), vt.violation_ns);
  }
  unsigned u = 0;
  if (api->temperature) c->temp_c = GOT(api->temperature(dev, NVML_CTR_TEMPERATURE_GPU, &u), u);
  c->power_mw = read_u(api->power_usage, dev);
  u = 0;
  if (api->clock) c->sm_mhz = GOT(api->clock(dev, NVML_CTR_CLOCK_SM, &u), u);
}

/* ---- deltas ---- */

static nvml_count sub(nvml_count a, nvml_count b) {
  nvml_count d = {0, 0};
  if (a.measured && b.measured && b.v >= a.v) d.v = b.v - a.v, d.measured = 1;
  return d;
}

/* 1 when a flag is set at b and was not at a; not measured unless b is (a flag unknown at a counts as clear:
 * a pending remap seen first in this interval is new to the test). */
static nvml_count rose(nvml_count a, nvml_count b) {
  nvml_count d = {0, 0};
  if (b.measured) d.v = b.v && !(a.measured && a.v), d.measured = 1;
  return d;
}

void nvml_counters_diff(const nvml_counters *a, const nvml_counters *b, nvml_counters_delta *d) {
  memset(d, 0, sizeof *d);
  d->t0 = a->t, d->t1 = b->t;
  d->ecc_corr = sub(a->ecc_corr, b->ecc_corr);
  d->ecc_unc = sub(a->ecc_unc, b->ecc_unc);
  d->pcie_replay = sub(a->pcie_replay, b->pcie_replay);
  d->rows_corr = sub(a->rows_corr, b->rows_corr);
  d->rows_unc = sub(a->rows_unc, b->rows_unc);
  d->new_rows_pending = rose(a->rows_pending, b->rows_pending);
  d->new_retired_pending = rose(a->retired_pending, b->retired_pending);
  d->new_rows_failure = rose(a->rows_failure, b->rows_failure);
  for (int p = 0; p < NVML_CTR_NVIOL; p++) d->violation_ns[p] = sub(a->violation_ns[p], b->violation_ns[p]);
  d->nlinks = a->nlinks > b->nlinks ? a->nlinks : b->nlinks;
  for (int l = 0; l < d->nlinks; l++) {
    for (int k = 0; k < NVML_CTR_NVLINK_NERR; k++) d->link[l].err[k] = sub(a->link[l].err[k], b->link[l].err[k]);
    /* down: active at t0 and inactive at t1; a link that stopped answering is not measured, not down */
    if (a->link[l].up.measured && b->link[l].up.measured)
      d->link[l].went_down = got(NVML_DL_SUCCESS, a->link[l].up.v && !b->link[l].up.v);
  }
}

/* ---- Xid events ---- */

int nvml_xid_watch_open(const nvml_api *api, const nvml_device *devs, int ndev, nvml_xid_watch *w) {
  memset(w, 0, sizeof *w);
  if (!api || !api->event_set_create || !api->register_events || !api->event_set_wait || !api->event_set_free) {
    snprintf(w->why, sizeof w->why, "NVML lacks the event API (nvmlEventSetCreate/RegisterEvents/SetWait_v2/SetFree)");
    return 0;
  }
  nvml_return r = api->event_set_create(&w->set);
  if (r != NVML_DL_SUCCESS) {
    snprintf(w->why, sizeof w->why, "nvmlEventSetCreate: NVML error %d", r);
    w->set = NULL;
    return 0;
  }
  w->ndev = ndev < NVML_XID_MAX_GPUS ? ndev : NVML_XID_MAX_GPUS;
  for (int i = 0; i < w->ndev; i++) {
    w->dev[i] = devs[i];
    r = api->register_events(devs[i], NVML_CTR_EVENT_XID_CRITICAL, w->set);
    if (r == NVML_DL_SUCCESS)
      w->registered |= 1u << i;
    else if (!w->why[0]) /* NOT_SUPPORTED leaves the set usable; other GPUs may still register */
      snprintf(w->why, sizeof w->why, "nvmlDeviceRegisterEvents(GPU %d, Xid critical): NVML error %d", i, r);
  }
  w->measured = w->registered != 0;
  return w->measured;
}

int nvml_xid_poll(const nvml_api *api, nvml_xid_watch *w, double now, nvml_xid_event *ev, int max, int *gotp) {
  int n = 0, rc = 0;
  if (gotp) *gotp = 0;
  if (!w->measured || !api || !api->event_set_wait) return 0;
  /* bounded even if NVML kept answering events of other types: a poll must return */
  for (int reads = 0; n < max && reads < max + 256; reads++) {
    nvml_event_data e;
    memset(&e, 0, sizeof e);
    nvml_return r = api->event_set_wait(w->set, &e, 0); /* timeout 0: only what is ready now */
    if (r == NVML_DL_ERROR_TIMEOUT) break;
    if (r != NVML_DL_SUCCESS) {
      snprintf(w->why, sizeof w->why, "nvmlEventSetWait_v2: NVML error %d%s", r,
               r == NVML_DL_ERROR_GPU_IS_LOST ? " (a GPU has fallen off the bus)" : "");
      rc = -1;
      break;
    }
    if (!(e.event_type & NVML_CTR_EVENT_XID_CRITICAL)) continue;
    int gpu = -1;
    for (int i = 0; i < w->ndev; i++)
      if (w->dev[i] == e.device) gpu = i;
    ev[n++] = (nvml_xid_event){gpu, e.event_data, now, nvml_xid_is_application(e.event_data)};
  }
  if (gotp) *gotp = n;
  return rc ? rc : n;
}

void nvml_xid_watch_close(const nvml_api *api, nvml_xid_watch *w) {
  if (w->set && api && api->event_set_free) api->event_set_free(w->set);
  memset(w, 0, sizeof *w);
}

/* Application Xids: errors a program causes, after which the GPU is healthy. The list is the one NVIDIA's
 * Kubernetes device plugin ignores before it marks a GPU unhealthy (github.com/NVIDIA/k8s-device-plugin, its
 * health check's ignored Xids, citing docs.nvidia.com/deploy/xid-errors: "Application errors: the GPU should
 * still be healthy"; the field survey cites its PR 268): 13, 31, 43, 45, 68, 109.
 * One departure: 68 (video processor / NVDEC0 exception) fails here.
 * Azure NHC counts 68 among its hardware Xids (check_gpu_xid: 48 56 57 58 62 63 64 65 68 69 73 74 79 80 81
 * 92 119 120), and a burn-in runs no video decoding, so its
 * program cannot be the cause. */
static const struct {
  unsigned xid;
  int application;
  const char *name;
} xids[] = {
    {13, 1, "Graphics Engine Exception"},
    {31, 1, "GPU memory page fault"},
    {43, 1, "GPU stopped processing"},
    {45, 1, "Preemptive cleanup, due to previous errors"},
    {109, 1, "Context Switch Timeout Error"},
    {48, 0, "Double Bit ECC Error"},
    {63, 0, "ECC page retirement or row remapping recording event"},
    {64, 0, "ECC page retirement or row remapper recording failure"},
    {68, 0, "Video processor exception"},
    {74, 0, "NVLink Error"},
    {79, 0, "GPU has fallen off the bus"},
    {92, 0, "High single-bit ECC error rate"},
    {94, 0, "Contained ECC error"},
    {95, 0, "Uncontained ECC error"},
    {119, 0, "GSP RPC Timeout"},
    {120, 0, "GSP Error"},
    {999, 0, "unknown Xid (NVML)"},
};

int nvml_xid_is_application(unsigned long long xid) {
  for (size_t i = 0; i < sizeof xids / sizeof xids[0]; i++)
    if (xids[i].xid == xid) return xids[i].application;
  return 0;
}

const char *nvml_xid_name(unsigned long long xid) {
  for (size_t i = 0; i < sizeof xids / sizeof xids[0]; i++)
    if (xids[i].xid == xid) return xids[i].name;
  return "Xid";
}
