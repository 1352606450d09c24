/* test_soak_probe: the soak's probe (cmd/soak_probe.h) driven as the soak loop drives it, on the fake NVML of
 * lib/topo_testlib.h: two H200s (GPU0 rank 6, GPU1 rank 7, both on node07), each with its own probe and Xid
 * watch, over 8 intervals of 30 s; the fake's counters change between intervals by a script, as a driver's
 * would; every interval's samples go into a soak_series, and soak_judge judges it. Each fault must come out as
 * one finding naming its GPU (subject, host, rank), its link where it has one, its interval (field and text)
 * and its time (the interval's start, or the Xid's poll time), and nothing else may warn or fail:
 *  a. corrected ECC above 10/min warns; an uncorrected ECC in interval 4 and a new pending remap (row remap,
 *     or page retirement on a GPU without row remapping) fail;
 *  b. Xid 79 and 68 fail with their interval and time; Xid 13 and 109 are info; one from before the watch is
 *     not seen, and one GPU's Xid is not the other's;
 *  c. a PCIe width drop under load from interval 5 fails; a generation drop while idle is nothing (and the
 *     same drop under load fails);
 *  d. an NVLink down from interval 6 fails naming "NVLink 2"; a link inactive since the start is absent;
 *  e. a missing symbol or NOT_SUPPORTED is not measured: no pass or fail from it, one info finding listing it;
 *  f. a healthy run (counters flat, SW power cap) gives no warning or failure;
 *  g. the Xid ignore lists of nvml_counters.c and soak_params_default agree;
 *  h. findings_json writes "interval" and "t_s" on the soak's findings that name an interval. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cJSON.h>

#include "clock_reasons.h"
#include "findings.h"
#include "nvml_counters.h"
#include "soak_probe.h"
#include "soak_rules.h"
#include "topo_testlib.h"

enum { NGPU = 2, NINT = 8 };
#define T_ORIGIN 1000.0 /* the caller's clock at the soak's start: times in findings are seconds since it */
#define DT 30.0         /* interval length, s */

/* ---- the soak loop, in small ---- */

/* One soak over NINT intervals: fake_gpus[0..1] as the caller set them, api[k] for GPU k's probe, the script
 * applied between intervals (a step at `at` = i happens during interval i, so the read at its end sees it).
 * idle: intervals (from 1) in which the GPUs were not under load, 0-terminated (NULL: always under load).
 * Fills *s (ids and samples) and *v (soak_judge). Returns 0 when the run itself went wrong (counted). */
static int soak_run(const fake_step *script, int nsteps, const nvml_api api[NGPU], const int *idle, soak_series *s,
                    soak_verdicts *v) {
  soak_verdicts_init(v);
  fake_script_set(script, nsteps);
  if (soak_series_init(s, NGPU, 0, 0) != DDP_OK) {
    CHECK(0, "soak_series_init");
    return 0;
  }
  for (int k = 0; k < NGPU; k++) {
    soak_gpu_id *id = &s->gpu[k];
    snprintf(id->host, sizeof id->host, "node07");
    snprintf(id->busid, sizeof id->busid, "0000:00:%02x.0", 6 + k);
    snprintf(id->model, sizeof id->model, "NVIDIA H200");
    id->rank = 6 + k, id->index = k;
  }
  soak_probe p[NGPU];
  fake_time(0); /* before the watch: an Xid now is not the soak's */
  for (int k = 0; k < NGPU; k++) {
    soak_probe_open(&p[k], fake_gpus[k].busid, &api[k]);
    CHECK(p[k].have_dev, "GPU%d: the probe found its GPU (%s)", k, p[k].why);
    soak_probe_start(&p[k], T_ORIGIN);
  }
  CHECK(fake_sets_open == NGPU, "one Xid event set per probe (%d)", fake_sets_open);
  for (int i = 1; i <= NINT; i++) {
    fake_time(i);
    int load = 1;
    for (const int *q = idle; q && *q; q++) load &= *q != i;
    int idx = soak_series_add(s, (i - 1) * DT, i * DT);
    if (idx != i - 1) {
      CHECK(0, "soak_series_add gave %d for interval %d", idx, i);
      return 0;
    }
    for (int k = 0; k < NGPU; k++) {
      soak_gpu_sample *g = soak_gpu_at(s, idx, k);
      g->tflops = 680; /* the GEMM's figure; the probe leaves it */
      soak_probe_interval(&p[k], T_ORIGIN + i * DT, T_ORIGIN, load, g);
    }
  }
  for (int k = 0; k < NGPU; k++) soak_probe_close(&p[k]);
  CHECK(fake_sets_open == 0, "the probes freed their event sets (%d open)", fake_sets_open);
  soak_params par;
  soak_params_default(&par);
  ddp_result r = soak_judge(s, &par, v);
  CHECK(r == DDP_OK, "soak_judge: %s", ddp_result_str(r));
  return r == DDP_OK;
}

static void two_apis(nvml_api api[NGPU]) {
  for (int k = 0; k < NGPU; k++) api[k] = fake_api();
}

static void healthy_pair(void) {
  fake_h200_pair();
  for (int k = 0; k < NGPU; k++) {
    fake_gpus[k].reasons = NVML_DL_REASON_SW_POWER_CAP;
    fake_gpus[k].sm_mhz = 1980, fake_gpus[k].power_mw = 698000, fake_gpus[k].temp_c = 61;
  }
}

/* ---- looking at the verdicts ---- */

static int is_gpu(const finding *f, int k) {
  char pre[16];
  snprintf(pre, sizeof pre, "GPU%d ", k);
  return !strncmp(f->subject, pre, strlen(pre));
}
static int count(const soak_verdicts *v, const char *check, finding_severity sev) {
  int n = 0;
  for (int i = 0; i < v->f.n; i++)
    if ((!check || !strcmp(v->f.v[i].check, check)) && v->f.v[i].severity == sev) n++;
  return n;
}
static int notable(const soak_verdicts *v) { return count(v, NULL, SEV_WARN) + count(v, NULL, SEV_FAIL); }
/* The n-th (from 0) finding of check and severity about GPU k (k < 0: any), or -1. */
static int find_nth(const soak_verdicts *v, const char *check, finding_severity sev, int k, int nth) {
  for (int i = 0; i < v->f.n; i++)
    if (!strcmp(v->f.v[i].check, check) && v->f.v[i].severity == sev && (k < 0 || is_gpu(&v->f.v[i], k)) &&
        nth-- == 0)
      return i;
  return -1;
}
static int find(const soak_verdicts *v, const char *check, finding_severity sev, int k) {
  return find_nth(v, check, sev, k, 0);
}
static void dump(const char *what, const soak_verdicts *v) {
  fprintf(stderr, "  %s: %d findings\n", what, v->f.n);
  for (int i = 0; i < v->f.n; i++)
    fprintf(stderr, "  [%s] %s %s host '%s' rank %d (interval %d, %g s): %s\n",
            finding_severity_name(v->f.v[i].severity), v->f.v[i].check, v->f.v[i].subject, v->f.v[i].host,
            v->f.v[i].rank, v->f.v[i].interval, v->f.v[i].t_s, v->f.v[i].text);
}

/* Finding x names GPU k of s (subject, host, rank), interval `interval` (the finding's field, the verdicts' array
 * and the text) at time t_s (both records). what: the case, for the messages. */
static void expect_named(const soak_verdicts *v, const soak_series *s, int x, int k, int interval, double t_s,
                         const char *what) {
  CHECK(x >= 0, "%s: no finding", what);
  if (x < 0) return;
  const finding *f = &v->f.v[x];
  const soak_gpu_id *id = &s->gpu[k];
  char want[160];
  snprintf(want, sizeof want, "GPU%d %s (%s, rank %d)", id->index, id->busid, id->host, id->rank);
  CHECK(!strncmp(f->subject, want, strlen(want)), "%s: subject '%s', expected '%s...'", what, f->subject, want);
  CHECK(!strcmp(f->host, id->host) && f->rank == id->rank, "%s: host '%s' rank %d, expected %s rank %d", what,
        f->host, f->rank, id->host, id->rank);
  CHECK(f->interval == interval && v->interval[x] == interval, "%s: interval %d (verdicts %d), expected %d", what,
        f->interval, v->interval[x], interval);
  CHECK(f->t_s == t_s && v->t[x] == t_s, "%s: t_s %g (verdicts %g), expected %g", what, f->t_s, v->t[x], t_s);
  char in[32];
  snprintf(in, sizeof in, "interval %d", interval);
  const char *at = strstr(f->text, in);
  CHECK(at && !(at[strlen(in)] >= '0' && at[strlen(in)] <= '9'), "%s: the text names no '%s': %s", what, in,
        f->text);
}

/* ---- a. counters that change during the run ---- */

static const fake_step ecc_script[] = {
    {2, 1, FAKE_SET_ECC_CORR, 0, 0, 2},       /* 2 in 30 s: 4/min, below 10 */
    {3, 1, FAKE_SET_ECC_CORR, 0, 0, 14},      /* +12: 24/min, above */
    {4, 1, FAKE_SET_ECC_UNC, 0, 0, 1},        /* an uncorrected error in interval 4 */
    {5, 1, FAKE_SET_ECC_CORR, 0, 0, 20},      /* +6: 12/min, above again */
    {6, 1, FAKE_SET_ROWS_PENDING, 0, 0, 1},   /* a row waits for a reset from interval 6, and stays pending */
    {7, 0, FAKE_SET_RETIRED_PENDING, 0, 0, 1}, /* GPU0 retires pages (no row remapping): pending from 7 */
};

static void test_counters(void) {
  healthy_pair();
  fake_gpus[0].unsupported = FAKE_NS_ROWS; /* a GPU before Ampere: page retirement only */
  nvml_api api[NGPU];
  two_apis(api);
  soak_series s;
  soak_verdicts v;
  if (soak_run(ecc_script, (int)(sizeof ecc_script / sizeof ecc_script[0]), api, NULL, &s, &v)) {
    const soak_gpu_sample *g3 = soak_gpu_at(&s, 2, 1), *g4 = soak_gpu_at(&s, 3, 1);
    CHECK(g3->ecc_corrected.measured && g3->ecc_corrected.delta == 12, "interval 3: corrected delta %g",
          g3->ecc_corrected.delta);
    CHECK(g4->ecc_uncorrected.measured && g4->ecc_uncorrected.delta == 1 && g3->ecc_uncorrected.delta == 0,
          "interval 4: uncorrected delta %g", g4->ecc_uncorrected.delta);
    CHECK(soak_gpu_at(&s, 5, 1)->remap_pending.delta == 1 && soak_gpu_at(&s, 6, 1)->remap_pending.measured &&
              soak_gpu_at(&s, 6, 1)->remap_pending.delta == 0,
          "the pending remap is new in interval 6 only");
    int x = find(&v, "soak_ecc_corrected", SEV_WARN, 1);
    expect_named(&v, &s, x, 1, 3, 60, "corrected ECC above 10/min");
    if (x >= 0)
      CHECK(v.f.v[x].measured == 24 && v.f.v[x].expected == 10 && strstr(v.f.v[x].text, "in 2 of 8 intervals"),
            "corrected ECC: %g/min against %g: %s", v.f.v[x].measured, v.f.v[x].expected, v.f.v[x].text);
    x = find(&v, "soak_ecc_uncorrected", SEV_FAIL, 1);
    expect_named(&v, &s, x, 1, 4, 90, "uncorrected ECC");
    if (x >= 0) CHECK(v.f.v[x].measured == 1, "uncorrected total %g", v.f.v[x].measured);
    x = find(&v, "soak_remap_pending", SEV_FAIL, 1);
    expect_named(&v, &s, x, 1, 6, 150, "pending row remap");
    x = find(&v, "soak_remap_pending", SEV_FAIL, 0);
    expect_named(&v, &s, x, 0, 7, 180, "pending page retirement");
    CHECK(notable(&v) == 4, "exactly those four (%d)", notable(&v));
    CHECK(find(&v, "soak_ecc_corrected", SEV_WARN, 0) < 0 && find(&v, "soak_ecc_uncorrected", SEV_FAIL, 0) < 0,
          "GPU0 had no ECC");
    /* GPU0 lacks row remapping but has page retirement: its remap figure is measured (the one or the other) */
    CHECK(count(&v, "soak_not_measured", SEV_INFO) == 0, "everything measured");
    if (notable(&v) != 4) dump("counters", &v);
  }
  soak_verdicts_free(&v);
  soak_series_free(&s);
}

/* ---- b. Xid events ---- */

static const fake_step xid_script[] = {
    {0, 1, FAKE_XID, 0, 0, 79},  /* before the soak's watch: not its Xid */
    {2, 0, FAKE_XID, 0, 0, 13},  /* an application's graphics engine exception, on GPU0 */
    {3, 1, FAKE_XID, 0, 0, 109}, /* an application's context switch timeout */
    {5, 1, FAKE_XID, 0, 0, 79},  /* GPU1 falls off the bus in interval 5 */
    {7, 1, FAKE_XID, 0, 0, 68},  /* a video processor exception: no video in a soak, so a GPU fault */
};

static void xid_run(soak_series *s, soak_verdicts *v) {
  healthy_pair();
  nvml_api api[NGPU];
  two_apis(api);
  soak_run(xid_script, (int)(sizeof xid_script / sizeof xid_script[0]), api, NULL, s, v);
}

static void test_xid(void) {
  soak_series s;
  soak_verdicts v;
  xid_run(&s, &v);
  if (s.nint == NINT) {
    int n0 = 0, n1 = 0;
    for (int i = 0; i < NINT; i++) {
      n0 += soak_gpu_at(&s, i, 0)->nxid, n1 += soak_gpu_at(&s, i, 1)->nxid;
      CHECK(soak_gpu_at(&s, i, 0)->xid_measured && soak_gpu_at(&s, i, 1)->xid_measured, "interval %d: Xids watched",
            i + 1);
    }
    CHECK(n0 == 1 && n1 == 3, "Xids seen: GPU0 %d (expected 1), GPU1 %d (expected 3: not the one before the watch)",
          n0, n1);
    const soak_gpu_sample *g5 = soak_gpu_at(&s, 4, 1);
    CHECK(g5->nxid == 1 && g5->xid[0].xid == 79 && g5->xid[0].t == 150, "interval 5: Xid %u at %g s",
          g5->nxid ? g5->xid[0].xid : 0, g5->nxid ? g5->xid[0].t : NAN);
    /* Xid 79: failed at its interval, at the time its poll saw it (the interval's end), within the interval */
    int x = find(&v, "soak_xid", SEV_FAIL, 1);
    expect_named(&v, &s, x, 1, 5, s.t1[4], "Xid 79");
    if (x >= 0) {
      CHECK(v.f.v[x].measured == 79 && strstr(v.f.v[x].text, "Xid 79 at 150.0 s"), "Xid 79: %s", v.f.v[x].text);
      CHECK(v.f.v[x].t_s > s.t0[4] && v.f.v[x].t_s <= s.t1[4], "Xid 79 at %g s, inside interval 5 (%g-%g)",
            v.f.v[x].t_s, s.t0[4], s.t1[4]);
    }
    x = find_nth(&v, "soak_xid", SEV_FAIL, 1, 1);
    expect_named(&v, &s, x, 1, 7, s.t1[6], "Xid 68");
    if (x >= 0) CHECK(v.f.v[x].measured == 68, "Xid 68 fails (%g)", v.f.v[x].measured);
    CHECK(count(&v, "soak_xid", SEV_FAIL) == 2, "two Xids fail (%d)", count(&v, "soak_xid", SEV_FAIL));
    /* the application Xids: info, each on its own GPU and interval */
    x = find(&v, "soak_xid", SEV_INFO, 0);
    expect_named(&v, &s, x, 0, 2, s.t1[1], "Xid 13 (application)");
    if (x >= 0) CHECK(v.f.v[x].measured == 13 && strstr(v.f.v[x].text, "application"), "Xid 13: %s", v.f.v[x].text);
    x = find(&v, "soak_xid", SEV_INFO, 1);
    expect_named(&v, &s, x, 1, 3, s.t1[2], "Xid 109 (application)");
    if (x >= 0) CHECK(v.f.v[x].measured == 109, "Xid 109 is info (%g)", v.f.v[x].measured);
    CHECK(count(&v, "soak_xid", SEV_INFO) == 2 && notable(&v) == 2, "info %d, notable %d",
          count(&v, "soak_xid", SEV_INFO), notable(&v));
    if (notable(&v) != 2) dump("xid", &v);
  }
  soak_verdicts_free(&v);
  soak_series_free(&s);
}

/* ---- c. the PCIe link ---- */

static const fake_step pcie_script[] = {
    {2, 0, FAKE_SET_GEN, 0, 0, 1}, /* GPU0 idles in interval 2: the link drops to Gen1, as an idle GPU's may */
    {3, 0, FAKE_SET_GEN, 0, 0, 5},
    {5, 1, FAKE_SET_WIDTH, 0, 0, 8}, /* GPU1 retrains at x8 under load from interval 5 */
};

static void test_pcie(void) {
  healthy_pair();
  nvml_api api[NGPU];
  two_apis(api);
  static const int idle[] = {2, 0};
  soak_series s;
  soak_verdicts v;
  if (soak_run(pcie_script, (int)(sizeof pcie_script / sizeof pcie_script[0]), api, idle, &s, &v)) {
    const soak_gpu_sample *g2 = soak_gpu_at(&s, 1, 0), *g5 = soak_gpu_at(&s, 4, 1);
    CHECK(!g2->under_load && g2->pcie_gen == 1 && g2->pcie_gen_max == 5, "interval 2: idle at Gen%u of Gen%u",
          g2->pcie_gen, g2->pcie_gen_max);
    CHECK(g5->under_load && g5->pcie_width == 8 && g5->pcie_width_max == 16, "interval 5: x%u of x%u",
          g5->pcie_width, g5->pcie_width_max);
    int x = find(&v, "soak_pcie_width", SEV_FAIL, 1);
    expect_named(&v, &s, x, 1, 5, 120, "PCIe width x8");
    if (x >= 0)
      CHECK(v.f.v[x].measured == 8 && v.f.v[x].expected == 16 && strstr(v.f.v[x].text, "x8 of x16") &&
                strstr(v.f.v[x].text, "in 4 intervals"),
            "width: %s", v.f.v[x].text);
    CHECK(count(&v, "soak_pcie_gen", SEV_FAIL) == 0, "an idle GPU's lower generation is nothing");
    CHECK(notable(&v) == 1, "only the width (%d)", notable(&v));
    CHECK(count(&v, "soak_not_measured", SEV_INFO) == 0, "everything measured");
    if (notable(&v) != 1) dump("pcie", &v);
  }
  soak_verdicts_free(&v);
  soak_series_free(&s);
  /* the same generation drop under load is a fault: the idle case above was spared by the load flag */
  healthy_pair();
  two_apis(api);
  if (soak_run(pcie_script, 2, api, NULL, &s, &v)) {
    int x = find(&v, "soak_pcie_gen", SEV_FAIL, 0);
    expect_named(&v, &s, x, 0, 2, 30, "PCIe Gen1 under load");
    CHECK(notable(&v) == 1, "only the generation (%d)", notable(&v));
  }
  soak_verdicts_free(&v);
  soak_series_free(&s);
}

/* ---- d. NVLinks ---- */

static const fake_step nvlink_script[] = {
    {4, 0, FAKE_SET_LINK_ERR, 5, NVML_CTR_NVLINK_DL_REPLAY, 1}, /* GPU0 link 5: a replay in interval 4 */
    {6, 1, FAKE_SET_LINK_UP, 2, 0, 0},                          /* GPU1 link 2 goes down in interval 6 */
};

static void test_nvlink(void) {
  healthy_pair();
  fake_gpus[1].up &= ~(1ull << 17); /* GPU1 link 17 inactive since before the soak: one this GPU does not use */
  nvml_api api[NGPU];
  two_apis(api);
  soak_series s;
  soak_verdicts v;
  if (soak_run(nvlink_script, (int)(sizeof nvlink_script / sizeof nvlink_script[0]), api, NULL, &s, &v)) {
    const soak_gpu_sample *g5 = soak_gpu_at(&s, 4, 1), *g6 = soak_gpu_at(&s, 5, 1);
    CHECK(g6->nlinks == 18 && g5->link[2].state == 1 && g6->link[2].state == 0 && !g6->link[2].absent,
          "link 2: up in interval 5, down in 6 (%d, %d, absent %d)", g5->link[2].state, g6->link[2].state,
          g6->link[2].absent);
    int absent = 1;
    for (int i = 0; i < NINT; i++) absent &= soak_gpu_at(&s, i, 1)->link[17].absent == 1;
    CHECK(absent && soak_gpu_at(&s, 0, 1)->link[17].state == 0 && !soak_gpu_at(&s, 0, 0)->link[17].absent,
          "GPU1 link 17 absent in every interval, GPU0's not");
    int x = find(&v, "soak_nvlink_down", SEV_FAIL, 1);
    expect_named(&v, &s, x, 1, 6, 150, "NVLink 2 down");
    if (x >= 0) {
      CHECK(v.f.v[x].scope == SCOPE_LINK && !strcmp(v.f.v[x].subject, "GPU1 0000:00:07.0 (node07, rank 7) NVLink 2"),
            "subject '%s'", v.f.v[x].subject);
      CHECK(v.f.v[x].measured == 3 && strstr(v.f.v[x].text, "NVLink 2 down in 3 of 8 intervals"), "down: %s",
            v.f.v[x].text);
    }
    CHECK(count(&v, "soak_nvlink_down", SEV_FAIL) == 1, "one link down (%d)", count(&v, "soak_nvlink_down", SEV_FAIL));
    x = find(&v, "soak_nvlink_replay", SEV_WARN, 0);
    expect_named(&v, &s, x, 0, 4, 90, "NVLink 5 replay");
    if (x >= 0) CHECK(strstr(v.f.v[x].subject, " NVLink 5") != NULL, "replay subject '%s'", v.f.v[x].subject);
    int l17 = 0;
    for (int i = 0; i < v.f.n; i++) l17 += strstr(v.f.v[i].subject, "NVLink 17") != NULL;
    CHECK(l17 == 0, "the link inactive since the start is not judged (%d findings)", l17);
    CHECK(count(&v, "soak_not_measured", SEV_INFO) == 0, "an absent link is not 'not measured'");
    CHECK(notable(&v) == 2, "the link down and the replay (%d)", notable(&v));
    if (notable(&v) != 2) dump("nvlink", &v);
  }
  soak_verdicts_free(&v);
  soak_series_free(&s);
}

/* ---- e. not measured ---- */

static const fake_step nm_script[] = {
    {3, 0, FAKE_SET_ECC_CORR, 0, 0, 500}, /* would warn: 1000/min */
    {3, 0, FAKE_SET_ECC_UNC, 0, 0, 2},    /* would fail */
    {4, 1, FAKE_SET_REPLAY, 0, 0, 1000},  /* would warn: 2000/min */
};

static void test_not_measured(void) {
  healthy_pair();
  nvml_api api[NGPU];
  two_apis(api);
  api[0].ecc_total = NULL;   /* GPU0's driver lacks nvmlDeviceGetTotalEccErrors */
  api[1].pcie_replay = NULL; /* GPU1's lacks nvmlDeviceGetPcieReplayCounter */
  soak_series s;
  soak_verdicts v;
  if (soak_run(nm_script, (int)(sizeof nm_script / sizeof nm_script[0]), api, NULL, &s, &v)) {
    int ok = 1;
    for (int i = 0; i < NINT; i++) {
      const soak_gpu_sample *a = soak_gpu_at(&s, i, 0), *b = soak_gpu_at(&s, i, 1);
      ok &= !a->ecc_corrected.measured && !a->ecc_uncorrected.measured && !b->pcie_replay.measured;
      ok &= a->pcie_replay.measured && a->pcie_replay.delta == 0 && b->ecc_corrected.measured;
    }
    CHECK(ok, "the missing symbols' counters are not measured in every interval, the others are");
    CHECK(notable(&v) == 0, "nothing passes or fails on a counter not measured (%d)", notable(&v));
    CHECK(count(&v, "soak_ecc_corrected", SEV_WARN) + count(&v, "soak_pcie_replay", SEV_WARN) +
                  count(&v, "soak_ecc_uncorrected", SEV_FAIL) ==
              0,
          "no ECC or replay verdict");
    CHECK(count(&v, "soak_not_measured", SEV_INFO) == 1, "one not-measured finding (%d)",
          count(&v, "soak_not_measured", SEV_INFO));
    int x = find(&v, "soak_not_measured", SEV_INFO, -1);
    if (x >= 0) {
      const char *t = v.f.v[x].text;
      CHECK(strstr(t, ": corrected ECC on GPU0@node07;") && strstr(t, "; uncorrected ECC on GPU0@node07;") &&
                strstr(t, "; PCIe replays on GPU1@node07"),
            "lists what is missing where: %s", t);
      CHECK(!strstr(t, "GPU1@node07;") && !strstr(t, "PCIe replays on GPU0") && !strstr(t, "Xid") &&
                !strstr(t, "NVLink") && !strstr(t, "remaps") && !strstr(t, "throttle") && !strstr(t, "generation"),
            "lists nothing else: %s", t);
      CHECK(v.f.v[x].interval == 0 && isnan(v.f.v[x].t_s) && v.f.v[x].scope == SCOPE_JOB, "a whole-run finding");
    }
    if (notable(&v)) dump("not measured", &v);
  }
  soak_verdicts_free(&v);
  soak_series_free(&s);

  /* ECC off (NOT_SUPPORTED) on GPU1, with its counters rising: not measured either, never a 0 */
  healthy_pair();
  fake_gpus[1].no_ecc = 1;
  two_apis(api);
  static const fake_step unc1[] = {{4, 1, FAKE_SET_ECC_UNC, 0, 0, 3}};
  if (soak_run(unc1, 1, api, NULL, &s, &v)) {
    CHECK(!soak_gpu_at(&s, 3, 1)->ecc_uncorrected.measured && soak_gpu_at(&s, 3, 0)->ecc_uncorrected.measured,
          "NOT_SUPPORTED is not measured");
    int x = find(&v, "soak_not_measured", SEV_INFO, -1);
    CHECK(notable(&v) == 0 && x >= 0 && strstr(v.f.v[x].text, "uncorrected ECC on GPU1@node07") &&
              !strstr(v.f.v[x].text, "GPU0"),
          "ECC off on GPU1: %s", x >= 0 ? v.f.v[x].text : "(no finding)");
  }
  soak_verdicts_free(&v);
  soak_series_free(&s);

  /* no NVML for the rank's GPU (the CPU device): every counter of the sample is not measured, with a reason */
  soak_probe p;
  soak_probe_open(&p, "", NULL);
  soak_probe_start(&p, T_ORIGIN);
  soak_gpu_sample g;
  soak_gpu_sample_clear(&g);
  soak_probe_interval(&p, T_ORIGIN + DT, T_ORIGIN, 1, &g);
  CHECK(!p.have_dev && p.why[0], "no GPU: why '%s'", p.why);
  CHECK(!g.ecc_corrected.measured && !g.ecc_uncorrected.measured && !g.remap_pending.measured &&
            !g.pcie_replay.measured && !g.pcie_gen && !g.pcie_width && !g.nlinks && !g.xid_measured &&
            !g.reasons_measured && isnan(g.sm_mhz),
        "no NVML: nothing measured");
  soak_probe_close(&p);
  /* a bus id NVML does not know */
  api[0] = fake_api();
  soak_probe_open(&p, "0000:99:00.0", &api[0]);
  CHECK(!p.have_dev && strstr(p.why, "0000:99:00.0"), "unknown GPU: '%s'", p.why);
  soak_probe_close(&p);
}

/* ---- f. a healthy run ---- */

static void test_healthy(void) {
  healthy_pair();
  nvml_api api[NGPU];
  two_apis(api);
  /* time spent at the power cap grows, as it does under a GEMM: that is no fault */
  static const fake_step cap[] = {{3, 0, FAKE_SET_VIOLATION, 0, NVML_CTR_VIOL_POWER, 2000000000ull},
                                  {6, 1, FAKE_SET_VIOLATION, 0, NVML_CTR_VIOL_POWER, 9000000000ull}};
  soak_series s;
  soak_verdicts v;
  if (soak_run(cap, 2, api, NULL, &s, &v)) {
    int ok = 1;
    for (int i = 0; i < NINT; i++)
      for (int k = 0; k < NGPU; k++) {
        const soak_gpu_sample *g = soak_gpu_at(&s, i, k);
        ok &= g->reasons_measured && g->reasons == NVML_DL_REASON_SW_POWER_CAP && g->xid_measured && !g->nxid;
        ok &= g->ecc_corrected.measured && !g->ecc_corrected.delta && g->ecc_uncorrected.measured &&
              g->remap_pending.measured && !g->remap_pending.delta && g->pcie_replay.measured;
        ok &= g->pcie_gen == 5 && g->pcie_width == 16 && g->nlinks == 18 && g->link[0].state == 1 &&
              g->link[17].crc.measured;
        ok &= g->sm_mhz == 1980 && fabs(g->power_w - 698) < 1e-9 && g->temp_c == 61 && g->tflops == 680;
      }
    CHECK(ok, "every interval of both GPUs read, flat, at the SW power cap");
    CHECK(notable(&v) == 0, "a healthy run: no warning or failure (%d)", notable(&v));
    CHECK(count(&v, "soak_not_measured", SEV_INFO) == 0, "everything measured");
    CHECK(count(&v, "soak_steady", SEV_INFO) == NGPU, "one steady-state info per GPU (%d)",
          count(&v, "soak_steady", SEV_INFO));
    if (notable(&v)) dump("healthy", &v);
  }
  soak_verdicts_free(&v);
  soak_series_free(&s);
}

/* ---- g. the two ignore lists ---- */

static void test_xid_lists(void) {
  soak_params p;
  soak_params_default(&p);
  int differ = 0, napp = 0;
  for (unsigned x = 0; x <= 200; x++) {
    int in = 0;
    for (int i = 0; i < p.napp_xids; i++) in |= p.app_xids[i] == x;
    napp += in;
    if (in != nvml_xid_is_application(x)) {
      differ++;
      CHECK(0, "Xid %u: nvml_xid_is_application %d, soak's app_xids %d", x, nvml_xid_is_application(x), in);
    }
  }
  CHECK(differ == 0 && napp == p.napp_xids && napp > 0, "the lists agree over 0-200 (%d in soak's list)", napp);
  CHECK(!nvml_xid_is_application(NVML_CTR_XID_UNKNOWN), "an unknown Xid fails");
}

/* ---- h. the JSON of the verdicts ---- */

static void test_json(void) {
  soak_series s;
  soak_verdicts v;
  xid_run(&s, &v);
  cJSON *arr = findings_json(&v.f);
  char *text = arr ? cJSON_PrintUnformatted(arr) : NULL;
  cJSON *back = text ? cJSON_Parse(text) : NULL;
  CHECK(back && cJSON_IsArray(back) && cJSON_GetArraySize(back) == v.f.n, "findings_json parses back (%d of %d)",
        back ? cJSON_GetArraySize(back) : -1, v.f.n);
  int with = 0, xids = 0;
  for (int i = 0; back && i < v.f.n && i < cJSON_GetArraySize(back); i++) {
    const cJSON *o = cJSON_GetArrayItem(back, i);
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(o, "interval"), *ts = cJSON_GetObjectItemCaseSensitive(o, "t_s");
    const cJSON *ck = cJSON_GetObjectItemCaseSensitive(o, "check");
    const finding *f = &v.f.v[i];
    CHECK(cJSON_IsString(ck) && !strcmp(ck->valuestring, f->check), "finding %d in order", i);
    if (f->interval > 0) {
      with++;
      CHECK(cJSON_IsNumber(iv) && iv->valueint == f->interval && cJSON_IsNumber(ts) && ts->valuedouble == f->t_s,
            "%s (%s): interval %d and t_s %g in the JSON", f->check, f->subject, f->interval, f->t_s);
    } else {
      CHECK(!iv && !ts, "%s: no interval, so neither key", f->check);
    }
    if (!strcmp(f->check, "soak_xid")) {
      xids++;
      CHECK(cJSON_IsNumber(iv) && cJSON_IsNumber(ts), "soak_xid %g: interval and t_s written", f->measured);
    }
  }
  CHECK(xids == 4 && with == 4, "4 Xid findings with interval and t_s (%d, %d)", xids, with);
  /* read back: the same intervals and times */
  finding_list l;
  findings_init(&l);
  char why[256] = "";
  CHECK(back && findings_from_json(back, &l, why, sizeof why) == DDP_OK && l.n == v.f.n, "read back: %s", why);
  for (int i = 0; i < l.n && i < v.f.n; i++)
    CHECK(l.v[i].interval == v.f.v[i].interval &&
              (l.v[i].t_s == v.f.v[i].t_s || (isnan(l.v[i].t_s) && isnan(v.f.v[i].t_s))),
          "finding %d read back: interval %d t_s %g", i, l.v[i].interval, l.v[i].t_s);
  int x = find(&v, "soak_xid", SEV_FAIL, 1);
  CHECK(x >= 0 && x < l.n && l.v[x].interval == 5 && l.v[x].t_s == 150, "Xid 79 read back at interval 5, 150 s");
  findings_free(&l);
  cJSON_Delete(back);
  cJSON_free(text);
  cJSON_Delete(arr);
  soak_verdicts_free(&v);
  soak_series_free(&s);
}

int main(void) {
  test_counters();
  test_xid();
  test_pcie();
  test_nvlink();
  test_not_measured();
  test_healthy();
  test_xid_lists();
  test_json();
  return check_summary();
}
