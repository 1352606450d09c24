/* test_nvml_counters: the burn-in's NVML counter layer (nvml_counters.h) through the fake NVML of
 * lib/topo_testlib.h, whose answers change over the test's time by a script:
 *  - a snapshot of an H200 reads every figure, measured;
 *  - deltas over intervals in which ECC, replay and NVLink counters rise, a remap becomes pending, the PCIe
 *    width drops and an NVLink goes down; a counter that goes backwards (driver reload) gives no delta;
 *  - Xid events: registered for critical Xids, delivered mid-run, each with its GPU, number and poll time;
 *    none from before registration; the application Xids apart; a GPU lost during the wait;
 *  - not measured: missing symbols and NOT_SUPPORTED answers, never 0, and propagated into deltas;
 *  - the PCIe-0 fix: a driver without the PCIe symbols, or without the current width alone, reports the
 *    figures as not measured, and the topology report neither prints x0 nor calls the GPU degraded.
 * argv[1] = fixtures. */
#include "nvml_counters.h"
#include "topo_testlib.h"

static nvml_device dev_of(int g) { return (nvml_device)(uintptr_t)(g + 1); }

static void test_snapshot(void) {
  fake_h200_pair();
  fake_script_set(NULL, 0);
  fake_gpu *g = &fake_gpus[0];
  g->ecc[0][0] = 4, g->ecc[1][0] = 0, g->ecc[0][1] = 99; /* aggregate is not what the snapshot reads */
  g->rows[0] = 2, g->rows[1] = 1, g->rows[2] = 0, g->rows[3] = 0;
  g->replay = 17;
  g->link_err[3][NVML_CTR_NVLINK_DL_CRC_FLIT] = 11;
  g->viol_ns[NVML_CTR_VIOL_POWER] = 5000000000ull;
  g->reasons = NVML_DL_REASON_SW_POWER_CAP;
  g->temp_c = 61, g->power_mw = 698000, g->sm_mhz = 1980;
  nvml_api api = fake_api();
  nvml_counters c;
  nvml_counters_read(&api, dev_of(0), 12.5, &c);
  CHECK(c.t == 12.5, "time %.1f", c.t);
  CHECK(c.ecc_corr.measured && c.ecc_corr.v == 4 && c.ecc_unc.measured && c.ecc_unc.v == 0, "ECC %llu/%llu",
        c.ecc_corr.v, c.ecc_unc.v);
  CHECK(c.rows_corr.v == 2 && c.rows_unc.v == 1 && c.rows_pending.measured && !c.rows_pending.v &&
            c.rows_failure.measured && !c.rows_failure.v && c.retired_pending.measured && !c.retired_pending.v,
        "rows");
  CHECK(c.pcie_replay.measured && c.pcie_replay.v == 17, "replay");
  CHECK(c.pcie_gen.v == 5 && c.pcie_width.v == 16 && c.pcie_gen_max.v == 5 && c.pcie_width_max.v == 16 &&
            c.pcie_gen_gpu_max.measured && c.pcie_gen_gpu_max.v == 5 && c.pcie_width.measured,
        "PCIe gen%llu x%llu", c.pcie_gen.v, c.pcie_width.v);
  CHECK(c.nvlink_measured && c.nlinks == 18, "links %d", c.nlinks);
  int up = 0;
  for (int l = 0; l < c.nlinks; l++) up += c.link[l].up.measured && c.link[l].up.v;
  CHECK(up == 18, "%d links up", up);
  CHECK(c.link[3].err[NVML_CTR_NVLINK_DL_CRC_FLIT].measured && c.link[3].err[NVML_CTR_NVLINK_DL_CRC_FLIT].v == 11 &&
            c.link[3].err[NVML_CTR_NVLINK_DL_REPLAY].measured && c.link[3].err[NVML_CTR_NVLINK_DL_REPLAY].v == 0,
        "link 3 counters");
  CHECK(c.reasons.measured && c.reasons.v == NVML_DL_REASON_SW_POWER_CAP, "reasons");
  CHECK(c.violation_ns[NVML_CTR_VIOL_POWER].v == 5000000000ull && c.violation_ns[NVML_CTR_VIOL_RELIABILITY].measured,
        "violation");
  CHECK(c.temp_c.v == 61 && c.power_mw.v == 698000 && c.sm_mhz.v == 1980 && c.sm_mhz.measured, "temp/power/clock");
  /* a GPU without NVLink: the probe answers NOT_SUPPORTED at link 0, which is measured as "no links" */
  fake_gpus[1].links = 0, fake_gpus[1].end_code = NVML_DL_ERROR_NOT_SUPPORTED;
  nvml_counters_read(&api, dev_of(1), 0, &c);
  CHECK(c.nvlink_measured && c.nlinks == 0, "no NVLink: measured %d links %d", c.nvlink_measured, c.nlinks);
}

/* A run of three intervals (times 0, 1, 2, 3) on GPU 0. */
static const fake_step run_script[] = {
    {1, 0, FAKE_SET_ECC_CORR, 0, 0, 3},
    {1, 0, FAKE_SET_REPLAY, 0, 0, 40},
    {1, 0, FAKE_SET_LINK_ERR, 7, NVML_CTR_NVLINK_DL_RECOVERY, 2},
    {2, 0, FAKE_SET_LINK_ERR, 7, NVML_CTR_NVLINK_DL_RECOVERY, 9},
    {2, 0, FAKE_SET_LINK_ERR, 7, NVML_CTR_NVLINK_DL_CRC_DATA, 5},
    {2, 0, FAKE_SET_WIDTH, 0, 0, 8}, /* the link retrains at x8 under load */
    {2, 0, FAKE_SET_ROWS_PENDING, 0, 0, 1},
    {2, 0, FAKE_SET_VIOLATION, 0, NVML_CTR_VIOL_THERMAL, 750000000},
    {3, 0, FAKE_SET_LINK_UP, 7, 0, 0}, /* link 7 goes down */
    {3, 0, FAKE_SET_ECC_UNC, 0, 0, 1},
    {3, 0, FAKE_SET_ECC_CORR, 0, 0, 1}, /* went backwards: the volatile count restarted */
};

static void test_deltas(void) {
  fake_h200_pair();
  fake_script_set(run_script, (int)(sizeof run_script / sizeof run_script[0]));
  nvml_api api = fake_api();
  nvml_counters s[4];
  for (int t = 0; t < 4; t++) {
    fake_time(t);
    nvml_counters_read(&api, dev_of(0), 60.0 * t, &s[t]);
  }
  nvml_counters_delta d;
  nvml_counters_diff(&s[0], &s[1], &d);
  CHECK(d.t0 == 0 && d.t1 == 60, "interval %.0f-%.0f", d.t0, d.t1);
  CHECK(d.ecc_corr.measured && d.ecc_corr.v == 3 && d.ecc_unc.measured && d.ecc_unc.v == 0, "interval 1 ECC %llu",
        d.ecc_corr.v);
  CHECK(d.pcie_replay.measured && d.pcie_replay.v == 40, "interval 1 replay %llu", d.pcie_replay.v);
  CHECK(d.nlinks == 18 && d.link[7].err[NVML_CTR_NVLINK_DL_RECOVERY].v == 2 &&
            d.link[7].err[NVML_CTR_NVLINK_DL_RECOVERY].measured && d.link[6].err[NVML_CTR_NVLINK_DL_RECOVERY].v == 0,
        "interval 1 link 7 recovery %llu", d.link[7].err[NVML_CTR_NVLINK_DL_RECOVERY].v);
  CHECK(d.new_rows_pending.measured && !d.new_rows_pending.v, "no pending remap in interval 1");

  nvml_counters_diff(&s[1], &s[2], &d);
  CHECK(d.ecc_corr.v == 0 && d.pcie_replay.v == 0, "interval 2: ECC and replay quiet");
  CHECK(d.link[7].err[NVML_CTR_NVLINK_DL_RECOVERY].v == 7 && d.link[7].err[NVML_CTR_NVLINK_DL_CRC_DATA].v == 5,
        "interval 2 link 7: recovery %llu CRC data %llu", d.link[7].err[NVML_CTR_NVLINK_DL_RECOVERY].v,
        d.link[7].err[NVML_CTR_NVLINK_DL_CRC_DATA].v);
  CHECK(d.new_rows_pending.measured && d.new_rows_pending.v == 1, "new pending remap in interval 2");
  CHECK(d.violation_ns[NVML_CTR_VIOL_THERMAL].v == 750000000 && d.violation_ns[NVML_CTR_VIOL_POWER].v == 0,
        "thermal violation %llu ns", d.violation_ns[NVML_CTR_VIOL_THERMAL].v);
  CHECK(s[2].pcie_width.measured && s[2].pcie_width.v == 8 && s[2].pcie_width_max.v == 16,
        "width dropped to x%llu of x%llu", s[2].pcie_width.v, s[2].pcie_width_max.v);
  CHECK(d.link[7].went_down.measured && !d.link[7].went_down.v, "link 7 still up in interval 2");

  nvml_counters_diff(&s[2], &s[3], &d);
  CHECK(d.link[7].went_down.measured && d.link[7].went_down.v == 1, "link 7 went down in interval 3");
  int down = 0;
  for (int l = 0; l < d.nlinks; l++) down += d.link[l].went_down.v != 0;
  CHECK(down == 1, "%d links down, expected only link 7", down);
  CHECK(s[3].link[7].up.measured && s[3].link[7].up.v == 0, "link 7 reads inactive");
  CHECK(d.ecc_unc.measured && d.ecc_unc.v == 1, "uncorrected ECC in interval 3");
  CHECK(!d.ecc_corr.measured, "a count that went backwards is no delta (%llu)", d.ecc_corr.v);
  CHECK(d.new_rows_pending.measured && !d.new_rows_pending.v, "the pending remap is not new again");
  /* over the whole run */
  nvml_counters_diff(&s[0], &s[3], &d);
  CHECK(d.link[7].err[NVML_CTR_NVLINK_DL_RECOVERY].v == 9 && d.link[7].went_down.v == 1 && d.new_rows_pending.v == 1,
        "whole run");
}

static const fake_step xid_script[] = {
    {0, 1, FAKE_XID, 0, 0, 79}, /* before the watch: NVML did not record it */
    {2, 1, FAKE_XID, 0, 0, 79}, /* GPU 1 falls off the bus */
    {2, 0, FAKE_XID, 0, 0, 13}, /* an application's graphics engine exception */
    {4, 0, FAKE_XID, 0, 0, 999},
};

static void test_xid(void) {
  fake_h200_pair();
  fake_script_set(xid_script, (int)(sizeof xid_script / sizeof xid_script[0]));
  nvml_api api = fake_api();
  fake_time(0);
  nvml_device devs[2] = {dev_of(0), dev_of(1)};
  nvml_xid_watch w;
  CHECK(nvml_xid_watch_open(&api, devs, 2, &w) == 1 && w.measured && w.registered == 3, "watch open: %s", w.why);
  nvml_xid_event ev[8];
  fake_time(1);
  int n = nvml_xid_poll(&api, &w, 10.0, ev, 8, NULL);
  CHECK(n == 0, "interval 1: %d Xids (the one before the watch must not count)", n);
  fake_time(2);
  n = nvml_xid_poll(&api, &w, 20.0, ev, 8, NULL);
  CHECK(n == 2, "interval 2: %d Xids", n);
  if (n == 2) {
    CHECK(ev[0].gpu == 1 && ev[0].xid == 79 && ev[0].t == 20.0 && !ev[0].application, "Xid 79 on GPU %d at %.0f",
          ev[0].gpu, ev[0].t);
    CHECK(ev[1].gpu == 0 && ev[1].xid == 13 && ev[1].application, "Xid 13 on GPU %d, application %d", ev[1].gpu,
          ev[1].application);
  }
  n = nvml_xid_poll(&api, &w, 21.0, ev, 8, NULL);
  CHECK(n == 0, "a poll with nothing new: %d", n);
  fake_time(4);
  n = nvml_xid_poll(&api, &w, 40.0, ev, 1, NULL);
  CHECK(n == 1 && ev[0].xid == NVML_CTR_XID_UNKNOWN && !ev[0].application, "an unknown Xid fails its GPU");
  /* the GPU is lost during the wait: an error, named */
  fake_wait_code = NVML_DL_ERROR_GPU_IS_LOST;
  int got_n = -5;
  n = nvml_xid_poll(&api, &w, 41.0, ev, 8, &got_n);
  CHECK(n == -1 && got_n == 0 && strstr(w.why, "fallen off the bus"), "lost GPU: %d '%s'", n, w.why);
  fake_wait_code = 0;
  nvml_xid_watch_close(&api, &w);
  CHECK(fake_sets_open == 0 && !w.measured, "event set freed");

  /* GPUs that cannot register: the watch is "not measured", and a poll finds nothing rather than failing */
  fake_h200_pair();
  fake_script_set(xid_script, (int)(sizeof xid_script / sizeof xid_script[0]));
  fake_gpus[0].no_events = fake_gpus[1].no_events = 1;
  CHECK(nvml_xid_watch_open(&api, devs, 2, &w) == 0 && !w.measured && strstr(w.why, "RegisterEvents"),
        "no events: %s", w.why);
  fake_time(2);
  CHECK(nvml_xid_poll(&api, &w, 1.0, ev, 8, NULL) == 0, "a watch not measured polls nothing");
  nvml_xid_watch_close(&api, &w);
  CHECK(fake_sets_open == 0, "set freed after a failed registration");
  /* one of two GPUs registers: measured, for that GPU */
  fake_h200_pair();
  fake_gpus[0].no_events = 1;
  fake_script_set(xid_script, (int)(sizeof xid_script / sizeof xid_script[0]));
  CHECK(nvml_xid_watch_open(&api, devs, 2, &w) == 1 && w.registered == 2, "partial: registered %x", w.registered);
  nvml_xid_watch_close(&api, &w);
  /* a driver without the event API */
  api.event_set_wait = NULL;
  CHECK(nvml_xid_watch_open(&api, devs, 2, &w) == 0 && !w.measured && strstr(w.why, "event API"), "no API: %s",
        w.why);

  /* the classification */
  static const unsigned app[] = {13, 31, 43, 45, 109};
  static const unsigned fail[] = {48, 63, 64, 68, 74, 79, 92, 94, 95, 119, 120, 999, 149, 1};
  for (size_t i = 0; i < sizeof app / sizeof app[0]; i++)
    CHECK(nvml_xid_is_application(app[i]), "Xid %u is an application Xid", app[i]);
  for (size_t i = 0; i < sizeof fail / sizeof fail[0]; i++)
    CHECK(!nvml_xid_is_application(fail[i]), "Xid %u must fail its GPU", fail[i]);
  CHECK(!strcmp(nvml_xid_name(79), "GPU has fallen off the bus") && !strcmp(nvml_xid_name(5), "Xid"), "names");
}

static void test_not_measured(void) {
  fake_h200_pair();
  fake_script_set(NULL, 0);
  nvml_api api = fake_api();
  api.pcie_replay = NULL;          /* an older driver lacks the symbol */
  api.pcie_gen_gpu_max = NULL;
  api.violation_status = NULL;
  fake_gpus[0].no_ecc = 1;         /* ECC disabled: NOT_SUPPORTED */
  fake_gpus[0].unsupported = FAKE_NS_NVLINK_ERR | FAKE_NS_ROWS | FAKE_NS_RETIRED;
  nvml_counters c;
  nvml_counters_read(&api, dev_of(0), 0, &c);
  CHECK(!c.pcie_replay.measured && !c.pcie_gen_gpu_max.measured, "missing symbols are not measured");
  CHECK(!c.ecc_corr.measured && !c.ecc_unc.measured, "ECC not supported is not measured");
  CHECK(!c.rows_pending.measured && !c.rows_corr.measured && !c.retired_pending.measured, "rows not measured");
  CHECK(!c.violation_ns[0].measured && !c.violation_ns[5].measured, "violations not measured");
  CHECK(c.nlinks == 18 && c.link[0].up.measured && !c.link[0].err[0].measured, "link state measured, counters not");
  CHECK(c.pcie_width.measured && c.temp_c.measured, "the rest still measured");
  char buf[32];
  CHECK(!strcmp(nvml_count_str(c.pcie_replay, buf, sizeof buf), "-") &&
            !strcmp(nvml_count_str(c.pcie_width, buf, sizeof buf), "16"),
        "printed '%s'", buf);
  nvml_counters c2 = c;
  c2.t = 60;
  nvml_counters_delta d;
  nvml_counters_diff(&c, &c2, &d);
  CHECK(!d.pcie_replay.measured && !d.ecc_corr.measured && !d.ecc_unc.measured && !d.new_rows_pending.measured &&
            !d.link[0].err[0].measured && !d.violation_ns[1].measured,
        "not measured propagates into the deltas");
  /* one end measured is not enough */
  nvml_counters a, b;
  fake_gpus[0].no_ecc = 0;
  nvml_counters_read(&api, dev_of(0), 0, &a);
  fake_gpus[0].no_ecc = 1;
  nvml_counters_read(&api, dev_of(0), 1, &b);
  nvml_counters_diff(&a, &b, &d);
  CHECK(a.ecc_corr.measured && !d.ecc_corr.measured, "a delta with an unmeasured end is not measured");
  /* no NVML at all */
  nvml_counters_read(NULL, NULL, 5, &c);
  CHECK(c.t == 5 && !c.ecc_corr.measured && !c.pcie_gen.measured && !c.nvlink_measured && !c.temp_c.measured &&
            !c.reasons.measured,
        "no NVML: nothing measured");
  /* a link that stops answering is not measured, not down */
  fake_h200_pair();
  api = fake_api();
  nvml_counters_read(&api, dev_of(0), 0, &a);
  fake_gpus[0].state_code = NVML_DL_ERROR_UNKNOWN;
  nvml_counters_read(&api, dev_of(0), 1, &b);
  nvml_counters_diff(&a, &b, &d);
  CHECK(!b.nvlink_measured && !d.link[0].went_down.measured, "unanswered link: went_down measured %d",
        d.link[0].went_down.measured);
}

static void test_pcie_fix(const char *dir) {
  /* A driver without the four PCIe link symbols: NVML knows the GPU, the figures are not measured. */
  fake_h200_pair();
  topo_node *n = fixture_node(dir, "h200x2-vm.hwloc.xml");
  if (n) {
    nvml_api api = fake_api();
    api.pcie_gen = api.pcie_gen_max = api.pcie_width = api.pcie_width_max = NULL;
    topo_node_query_nvml(n, &api, NULL, -1);
    const nvml_gpu *g = &n->gpu[0].nvml;
    CHECK(g->known && g->pcie_known == 0 && !nvml_gpu_pcie_has(g, NVML_GPU_PCIE_WIDTH), "PCIe known bits %x",
          g->pcie_known);
    char why[512] = "";
    CHECK(topo_node_degraded(n, why, sizeof why) == 0, "no PCIe symbols called degraded: %s", why);
    char *text = node_text(n, 0);
    CHECK(!strstr(text, "gen0") && !strstr(text, " x0") && strstr(text, "PCIe 63.02 GB/s (hwloc)"), "text:\n%s", text);
    free(text);
    topo_sig s;
    topo_node_signature(n, 0, &s);
    CHECK(!strstr(s.summary, "gen0") && !strstr(s.summary, "x0"), "summary '%s'", s.summary);
    cJSON *j = topo_node_json(n, 0);
    cJSON *pcie = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "gpus"), 0), "pcie");
    CHECK(pcie && !cJSON_GetObjectItem(pcie, "width") && !cJSON_GetObjectItem(pcie, "gen"), "JSON writes no 0 figure");
    cJSON_Delete(j);
    free(n);
  }
  /* Only the current width refused (NOT_SUPPORTED): the generation still reads; x0 below x16 is no downtrain. */
  fake_h200_pair();
  fake_gpus[0].unsupported = FAKE_NS_PCIE_WIDTH;
  n = h200_node(dir);
  if (n) {
    const nvml_gpu *g = &n->gpu[0].nvml;
    CHECK(nvml_gpu_pcie_has(g, NVML_GPU_PCIE_GEN | NVML_GPU_PCIE_GEN_MAX | NVML_GPU_PCIE_WIDTH_MAX) &&
              !nvml_gpu_pcie_has(g, NVML_GPU_PCIE_WIDTH),
          "known bits %x", g->pcie_known);
    char why[512] = "";
    CHECK(topo_node_degraded(n, why, sizeof why) == 0, "an unmeasured width called a downtrain: %s", why);
    char *text = node_text(n, 0);
    CHECK(strstr(text, "PCIe gen5 x? (max gen5 x16)") != NULL, "text:\n%s", text);
    free(text);
    free(n);
  }
  /* and a real drop is still caught */
  fake_h200_pair();
  fake_gpus[1].width = 8;
  n = h200_node(dir);
  if (n) {
    char why[512] = "";
    CHECK(topo_node_degraded(n, why, sizeof why) == 1 &&
              strstr(why, "GPU1 0000:00:07.0: PCIe gen5 x8 below its max gen5 x16"),
          "width drop: %s", why);
    free(n);
  }
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "tests/data/fixtures";
  test_snapshot();
  test_deltas();
  test_xid();
  test_not_measured();
  test_pcie_fix(dir);
  return check_summary();
}
