/* test_export (unit): the textfile and CSV writers on a model built in memory.
 *  - names: unit suffix stripped and replaced by the base unit, values scaled (ms -> s, GB/s -> B/s, TFLOP/s ->
 *    FLOP/s), a measurement's own name not repeated (gemm's gemm_tflops -> ddpbench_gemm_rank_flops_per_second);
 *  - per-rank records get host, gpu, rank, bus_id from the result's ranks; group records get group (and host
 *    for a node's group);
 *  - label values with a quote, a backslash and a line break are escaped; a NaN figure is left out (never NaN);
 *  - a repeated series is written once; each family has exactly one HELP and one TYPE, before its samples;
 *  - the verdict: ddpbench_run_ok 0 when a finding failed; the end time only when given;
 *  - CSV: a field with a comma or quote is quoted with the quote doubled; NaN is an empty cell; one line per
 *    record after the header; numbers in %.17g read back exactly;
 *  - the sweep's derived rows on a model built by hand: efficiency = step(first:1) / step, and the finding
 *    that names the largest fall (4 -> 8 GPUs, across nodes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv.h"
#include "scaling.h"
#include "prom.h"

static int count(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p++) n++;
  return n;
}

int main(void) {
  result_doc d;
  result_init(&d);
  d.world_size = 2;
  d.nodes = 1;
  d.nranks = 2;
  d.ranks = calloc(2, sizeof *d.ranks);
  for (int i = 0; i < 2; i++) {
    d.ranks[i].rank = i;
    d.ranks[i].host = strdup("gpu-node-7");
    d.ranks[i].ordinal = i;
    d.ranks[i].pci_bus_id = strdup(i ? "0000:19:00.0" : "0000:18:00.0");
  }
  CHECK(result_add(&d, "ddp", "world", "step_ms", "ms", BETTER_LOWER, 12.5, NULL, NULL, 0, NULL) == DDP_OK, "add");
  CHECK(result_add(&d, "ddp", "world", "step_ms", "ms", BETTER_LOWER, 13.0, NULL, NULL, 0, "rank", "1", "host",
                   "gpu-node-7", NULL) == DDP_OK, "add");
  CHECK(result_add(&d, "gemm", "world", "gemm_tflops", "TFLOP/s", BETTER_HIGHER, 765.5, NULL, NULL, 0, "rank", "0",
                   "host", "gpu-node-7", NULL) == DDP_OK, "add");
  CHECK(result_add(&d, "accept", "node:gpu-node-7", "busbw_gbs", "GB/s", BETTER_HIGHER, 350, NULL, NULL, 0, "bytes",
                   "67108864", NULL) == DDP_OK, "add");
  CHECK(result_add(&d, "accept", "node:gpu-node-7", "busbw_gbs", "GB/s", BETTER_HIGHER, 351, NULL, NULL, 0, "bytes",
                   "67108864", NULL) == DDP_OK, "add a repeat");
  CHECK(result_add(&d, "job", "world", "exposed_comm_ms", "ms", BETTER_LOWER, NAN, NULL, NULL, 0, "note",
                   "a \"b\" \\c\nd,e", NULL) == DDP_OK, "add");
  CHECK(result_add(&d, "job", "world", "hidden_comm_fraction", "", BETTER_HIGHER, 0.5, NULL, NULL, 0, "note",
                   "a \"b\" \\c\nd,e", NULL) == DDP_OK, "add");
  CHECK(result_add(&d, "accept", "world", "h2d_gbps", "GB/s", BETTER_HIGHER, 55.5, NULL, NULL, 0, "rank", "7", "host",
                   "other-node", "gpu", "0000:9a:00.0", NULL) == DDP_OK, "add a rank the result does not list");
  CHECK(findings_add(&d.findings, "weights", SEV_FAIL, SCOPE_JOB, "job", NAN, NAN, "", "differ") == DDP_OK, "finding");
  /* findings about hosts: gpu-node-7 fails gemm, other-node passes it and warns of throttling */
  CHECK(findings_add_at(&d.findings, "gpu-node-7", 0, "gemm", SEV_FAIL, SCOPE_GPU, "rank 0", 1, 2, "TFLOP/s",
                        "below its floor, \"quoted\", a comma") == DDP_OK, "finding");
  CHECK(findings_add_at(&d.findings, "other-node", 7, "gemm", SEV_INFO, SCOPE_GPU, "rank 7", 3, 2, "TFLOP/s",
                        "passes") == DDP_OK, "finding");
  d.findings.v[d.findings.n - 1].passed = 1;
  CHECK(findings_add_at(&d.findings, "other-node", 7, "throttle", SEV_WARN, SCOPE_GPU, "rank 7", NAN, NAN, "",
                        "throttled") == DDP_OK, "finding");

  char *t = NULL;
  CHECK(prom_format(&d, 1796000000.0, &t) == DDP_OK && t, "prom_format");
  if (!t) return check_summary();
  CHECK(strstr(t, "\nddpbench_ddp_step_seconds{kind=\"run\",group=\"world\"} 0.0125\n") != NULL, "group step in seconds");
  CHECK(strstr(t, "\nddpbench_ddp_rank_step_seconds{kind=\"run\",host=\"gpu-node-7\",gpu=\"1\",rank=\"1\",bus_id=\"0000:19:00.0\","
                  "group=\"world\"} 0.013\n") != NULL, "per-rank labels host, gpu, rank, bus_id");
  CHECK(strstr(t, "\nddpbench_gemm_rank_flops_per_second{kind=\"run\",host=\"gpu-node-7\",gpu=\"0\",rank=\"0\",bus_id=\"0000:18:00.0\","
                  "group=\"world\"} 765500000000000\n") != NULL, "GEMM in FLOP/s");
  CHECK(strstr(t, "\nddpbench_accept_busbw_bytes_per_second{kind=\"run\",group=\"node:gpu-node-7\",host=\"gpu-node-7\","
                  "bytes=\"67108864\"} 350000000000\n") != NULL, "per-host busbw with the host label");
  CHECK(count(t, "ddpbench_accept_busbw_bytes_per_second{") == 1, "a repeated series written once");
  CHECK(strstr(t, "\nddpbench_accept_rank_h2d_bytes_per_second{kind=\"run\",host=\"other-node\",rank=\"7\",bus_id=\"0000:9a:00.0\","
                  "group=\"world\"} 55500000000\n") != NULL, "_gbps stripped; labels from the record when ranks lack it");
  CHECK(strstr(t, "note=\"a \\\"b\\\" \\\\c\\nd,e\"} 0.5\n") != NULL, "escaped label value");
  CHECK(!strstr(t, "NaN") && !strstr(t, "exposed_comm"), "a NaN figure is left out, its family too");
  CHECK(strstr(t, "\nddpbench_run_ok{kind=\"run\"} 0\n") != NULL, "verdict 0 with a failed finding");
  CHECK(strstr(t, "\nddpbench_findings{kind=\"run\",severity=\"fail\"} 2\n") != NULL, "failed findings counted");
  CHECK(strstr(t, "\nddpbench_run_end_time_seconds{kind=\"run\"} 1796000000\n") != NULL, "end time");
  /* every host and every check judged about a host: 1 failed, 0 passed (or only warned, not drained) */
  CHECK(strstr(t, "\nddpbench_host_failed{kind=\"run\",host=\"gpu-node-7\",check=\"gemm\"} 1\n") &&
            strstr(t, "\nddpbench_host_failed{kind=\"run\",host=\"gpu-node-7\",check=\"throttle\"} 0\n") &&
            strstr(t, "\nddpbench_host_failed{kind=\"run\",host=\"other-node\",check=\"gemm\"} 0\n") &&
            strstr(t, "\nddpbench_host_failed{kind=\"run\",host=\"other-node\",check=\"throttle\"} 0\n") &&
            count(t, "ddpbench_host_failed{") == 4,
        "ddpbench_host_failed for 2 hosts x 2 checks, passing hosts included");
  /* how the run stands: complete (no state said, no INCOMPLETE verdict), run_ok 1 only for a complete exit 0 */
  CHECK(strstr(t, "\nddpbench_run_state{kind=\"run\",state=\"complete\"} 1\n") != NULL, "state complete");
  CHECK(strstr(t, "\nddpbench_run_updated_time_seconds{kind=\"run\"} 1796000000\n") != NULL, "updated time");
  {
    result_doc w;
    result_init(&w);
    w.kind = strdup("accept");
    w.exit_code = 0;
    char *u = NULL;
    CHECK(prom_format(&w, 1796000000.0, &u) == DDP_OK && u && strstr(u, "\nddpbench_run_ok{kind=\"accept\"} 1\n"),
          "complete, exit 0: run_ok 1");
    free(u), u = NULL;
    w.state = strdup("running");
    w.exit_code = 3;
    CHECK(prom_format(&w, 1796000000.0, &u) == DDP_OK && u && strstr(u, "\nddpbench_run_ok{kind=\"accept\"} 0\n") &&
              strstr(u, "\nddpbench_run_state{kind=\"accept\",state=\"running\"} 1\n") &&
              !strstr(u, "ddpbench_run_end_time_seconds") && strstr(u, "ddpbench_run_updated_time_seconds{"),
          "running, no failing finding: run_ok 0, state running, no end time:\n%s", u ? u : "");
    free(u), u = NULL;
    free(w.state);
    w.state = strdup("interrupted");
    CHECK(result_suspect_add(&w, 1, "node01", "not answering") == DDP_OK, "a suspect");
    CHECK(prom_format(&w, 1796000000.0, &u) == DDP_OK && u &&
              strstr(u, "\nddpbench_run_state{kind=\"accept\",state=\"interrupted\"} 1\n") &&
              strstr(u, "\nddpbench_run_suspect{kind=\"accept\",rank=\"1\",host=\"node01\"} 1\n") &&
              strstr(u, "\nddpbench_run_ok{kind=\"accept\"} 0\n"),
          "interrupted: the state, the suspect, run_ok 0:\n%s", u ? u : "");
    free(u);
    result_free(&w);
  }
  /* one HELP and one TYPE per family, right before its first sample */
  int ok = 1, families = 0;
  for (const char *p = t; *p;) {
    const char *eol = strchr(p, '\n');
    if (!eol) break;
    if (!strncmp(p, "# HELP ", 7)) {
      char name[200];
      sscanf(p + 7, "%199s", name);
      char type[460], help[460];
      snprintf(type, sizeof type, "\n# TYPE %s gauge\n%s", name, name);
      snprintf(help, sizeof help, "# HELP %s ", name);
      ok &= strncmp(eol, type, strlen(type)) == 0 && count(t, help) == 1;
      families++;
    }
    p = eol + 1;
  }
  CHECK(ok && families >= 8, "one HELP and TYPE per family, before its samples (%d families)", families);
  free(t);
  t = NULL;
  CHECK(prom_format(&d, NAN, &t) == DDP_OK && t && !strstr(t, "run_end_time"), "no end time when not given");
  free(t);

  char *c = NULL;
  CHECK(csv_format(&d, &c) == DDP_OK && c, "csv_format");
  if (c) {
    CHECK(count(c, "\r\n") == d.nrecords + d.findings.n + 1, "a line per record and per finding after the header");
    CHECK(strstr(c, ",mean,n,run_id,start_time,run_labels,text\r\n") != NULL,
          "the run's identity and a finding's text close every row");
    CHECK(strstr(c, "\r\nddp,world,step_ms,ms,lower,1,gpu-node-7,1,0000:19:00.0,,13,13,,,,,,") == NULL &&
              strstr(c, "\r\nddp,world,step_ms,ms,lower,1,gpu-node-7,1,0000:19:00.0,,13,,,,,,,") != NULL,
          "per-rank row: rank, host, gpu, bus id; no statistics -> empty cells");
    CHECK(strstr(c, "\"note=a \"\"b\"\" \\c\nd,e\",,") != NULL, "quoted field with the quotes doubled, NaN empty");
    CHECK(strstr(c, "\r\nfinding,gpu,gemm,TFLOP/s,,0,gpu-node-7,0,0000:18:00.0,severity=fail;subject=rank 0;expected=2,"
                    "1,,,,,,,,,,,\"below its floor, \"\"quoted\"\", a comma\"\r\n") != NULL,
          "a finding's row: scope, check, rank, host, gpu, bus id, severity and bound, measured, its text last");
    CHECK(strstr(c, ";expected=2;passed=1,3,") != NULL, "a passed check's row says so");
  }
  free(c);
  result_free(&d);

  /* the sweep's efficiency and its finding */
  result_doc w;
  result_init(&w);
  static const double step[] = {10, 10.2, 10.5, 14.0}, nodes[] = {1, 1, 1, 2};
  for (int i = 0; i < 4; i++) {
    char g[16];
    snprintf(g, sizeof g, "first:%d", 1 << i);
    CHECK(result_add(&w, "scaling", g, "gpus", "", BETTER_NONE, 1 << i, NULL, NULL, 0, NULL) == DDP_OK, "gpus");
    CHECK(result_add(&w, "scaling", g, "nodes", "", BETTER_NONE, nodes[i], NULL, NULL, 0, NULL) == DDP_OK, "nodes");
    CHECK(result_add(&w, "scaling", g, "step_ms", "ms", BETTER_LOWER, step[i], NULL, NULL, 0, NULL) == DDP_OK, "step");
  }
  CHECK(sweep_efficiency(&w) == DDP_OK, "sweep_efficiency");
  const result_record *e = result_find(&w, "scaling", "first:8", "efficiency", NULL);
  CHECK(e && e->value == 10 / 14.0, "efficiency of first:8 = 10 / 14: %g", e ? e->value : NAN);
  e = result_find(&w, "scaling", "first:1", "efficiency", NULL);
  CHECK(e && e->value == 1, "efficiency of first:1 = 1");
  finding_list fl;
  memset(&fl, 0, sizeof fl);
  CHECK(sweep_findings(&w, &fl) == DDP_OK && fl.n == 1, "one scaling finding");
  CHECK(fl.n == 1 && fl.v[0].severity == SEV_INFO && strstr(fl.v[0].text, "from 4 to 8 GPUs (across nodes") != NULL,
        "the fall named 4 -> 8 across nodes: %s", fl.n ? fl.v[0].text : "none");
  findings_free(&fl);
  result_free(&w);
  return check_summary();
}
