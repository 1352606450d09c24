/* soak_probe.c: one rank's hardware counters over a soak's intervals (soak_probe.h). */
#include "soak_probe.h"

#include <math.h>
#include <string.h>

static soak_counter ctr(nvml_count c) { return (soak_counter){c.measured ? (double)c.v : 0, c.measured}; }

void soak_sample_counters(const nvml_counters *a, const nvml_counters *b, const nvml_xid_event *ev, int nev,
                          int xid_measured, double t_origin, int under_load, soak_gpu_sample *out) {
  nvml_counters_delta d;
  nvml_counters_diff(a, b, &d);
  out->ecc_corrected = ctr(d.ecc_corr);
  out->ecc_uncorrected = ctr(d.ecc_unc);
  out->pcie_replay = ctr(d.pcie_replay);
  /* a new pending remap (Ampere and later) or page retirement (before): either is a row waiting for a reset */
  nvml_count rows = d.new_rows_pending, pages = d.new_retired_pending;
  if (rows.measured || pages.measured)
    out->remap_pending = (soak_counter){(double)((rows.measured ? rows.v : 0) + (pages.measured ? pages.v : 0)), 1};
  else
    out->remap_pending = (soak_counter){0, 0};
  out->under_load = under_load;
  out->pcie_gen = b->pcie_gen.measured ? (unsigned)b->pcie_gen.v : 0;
  out->pcie_width = b->pcie_width.measured ? (unsigned)b->pcie_width.v : 0;
  out->pcie_gen_max = b->pcie_gen_max.measured ? (unsigned)b->pcie_gen_max.v : 0;
  out->pcie_width_max = b->pcie_width_max.measured ? (unsigned)b->pcie_width_max.v : 0;
  /* NVLinks: every link that answered at either end; one inactive at both ends and at the soak's start is one
   * this GPU does not use (the caller marks those absent) */
  int n = d.nlinks < SOAK_MAX_NVLINKS ? d.nlinks : SOAK_MAX_NVLINKS;
  out->nlinks = b->nvlink_measured || a->nvlink_measured ? n : 0;
  for (int l = 0; l < out->nlinks; l++) {
    soak_nvlink *k = &out->link[l];
    memset(k, 0, sizeof *k);
    k->state = l < b->nlinks && b->link[l].up.measured ? (b->link[l].up.v ? 1 : 0) : -1;
    nvml_count fl = d.link[l].err[NVML_CTR_NVLINK_DL_CRC_FLIT], da = d.link[l].err[NVML_CTR_NVLINK_DL_CRC_DATA];
    k->crc = (soak_counter){(double)((fl.measured ? fl.v : 0) + (da.measured ? da.v : 0)), fl.measured || da.measured};
    k->replay = ctr(d.link[l].err[NVML_CTR_NVLINK_DL_REPLAY]);
    k->recovery = ctr(d.link[l].err[NVML_CTR_NVLINK_DL_RECOVERY]);
  }
  out->xid_measured = xid_measured;
  out->nxid = 0;
  for (int e = 0; e < nev && out->nxid < SOAK_MAX_XIDS; e++)
    out->xid[out->nxid++] = (soak_xid){(unsigned)ev[e].xid, ev[e].t - t_origin};
  /* the load figures at the interval's end where the GEMM gave none (a rank whose GEMM was skipped) */
  if (!isfinite(out->sm_mhz) && b->sm_mhz.measured) out->sm_mhz = (double)b->sm_mhz.v;
  if (!isfinite(out->power_w) && b->power_mw.measured) out->power_w = 1e-3 * (double)b->power_mw.v;
  if (!isfinite(out->temp_c) && b->temp_c.measured) out->temp_c = (double)b->temp_c.v;
  if (b->reasons.measured) out->reasons |= b->reasons.v, out->reasons_measured = 1;
}

void soak_probe_open(soak_probe *p, const char *busid, const nvml_api *api) {
  memset(p, 0, sizeof *p);
  if (!busid || !busid[0]) {
    snprintf(p->why, sizeof p->why, "no GPU (the CPU device)");
    return;
  }
  if (api) {
    p->api = *api;
  } else if (nvml_open(&p->api, p->why, sizeof p->why)) {
    p->open = 1;
  } else {
    return;
  }
  if (p->api.handle_by_busid && p->api.handle_by_busid(busid, &p->dev) == NVML_DL_SUCCESS) p->have_dev = 1;
  else snprintf(p->why, sizeof p->why, "NVML does not know the GPU at %s", busid);
}

void soak_probe_start(soak_probe *p, double t) {
  memset(&p->last, 0, sizeof p->last);
  nvml_counters_read(p->have_dev ? &p->api : NULL, p->dev, t, &p->last);
  p->have_last = 1;
  for (int l = 0; l < p->last.nlinks && l < NVML_DL_MAX_LINKS; l++)
    p->up0[l] = p->last.link[l].up.measured && p->last.link[l].up.v;
  if (p->have_dev && !p->xid_open) {
    nvml_xid_watch_open(&p->api, &p->dev, 1, &p->xw); /* xw.measured says whether it watches */
    p->xid_open = 1;
  }
}

void soak_probe_interval(soak_probe *p, double t, double t_origin, int under_load, soak_gpu_sample *out) {
  nvml_counters b;
  nvml_counters_read(p->have_dev ? &p->api : NULL, p->dev, t, &b);
  if (!p->have_last) p->last = b, p->have_last = 1;
  nvml_xid_event ev[SOAK_MAX_XIDS];
  int nev = 0, measured = p->xid_open && p->xw.measured;
  if (measured) {
    int got = 0, n = nvml_xid_poll(&p->api, &p->xw, t, ev, SOAK_MAX_XIDS, &got);
    nev = n >= 0 ? n : got;
    if (n < 0) measured = 0; /* NVML failed to answer: this interval's "no Xid" is not known */
  }
  soak_sample_counters(&p->last, &b, ev, nev, measured, t_origin, under_load, out);
  for (int l = 0; l < out->nlinks && l < NVML_DL_MAX_LINKS; l++)
    out->link[l].absent = !p->up0[l] && out->link[l].state != 1;
  p->last = b;
}

void soak_probe_close(soak_probe *p) {
  if (p->xid_open) nvml_xid_watch_close(&p->api, &p->xw);
  if (p->open) nvml_close(&p->api);
  memset(p, 0, sizeof *p);
}
