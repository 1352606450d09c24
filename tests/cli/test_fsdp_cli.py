#!/usr/bin/env python3
"""test_fsdp_cli: `ddpbench --strategy fsdp` from the command line, on the CPU device.

- a 3-rank run with a hidden size that does not divide by 3 (H = 62: 21 rows a shard, padded to 63): exit 0, the
  phases local, comm and fsdp (no ddp), each layer's two all-gathers and one reduce-scatter in the phase's
  "collectives" rows with nccl-tests' (n-1)/n bus factor, the fsdp section's rows adding up to H with the padding
  on the last rank, the memory the engine allocated equal to the plan's, FSDP's state below DDP's, the weights
  identical on every rank, and the bottom line naming the fsdp phase; the document is valid against
  docs/result.schema.json (when jsonschema is installed);
- --csv and --prom carry the collectives' figures (all_gather_busbw_gbs, reduce_scatter_time_us) and FSDP's memory
  per rank (records fsdp state_bytes and buffer_bytes, labelled rank and host: the plan's figures);
- fp16 with a NaN injected in step 3: the fsdp phase skips step 3 alone;
- the sweep under fsdp: its busbw inside the fsdp phase, - on 1 rank;
- bad input, one line and exit 2: the other strategy's phase (in phases, in --group-measure), DDP's bucket keys,
  a sweep without the fsdp phase, an unknown strategy;
- compare refuses a fsdp run against a ddp run (config key strategy), and compares them with --allow-config-diff.
About 40 s on the 2-core machine. argv: MPIEXEC DDPBENCH. Ends with "N passed, N failed"."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

mpiexec, prog = sys.argv[1], os.path.abspath(sys.argv[2])
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
env = dict(os.environ)
env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
           OPENBLAS_NUM_THREADS="1", OMPI_MCA_mpi_yield_when_idle="1")
tmp = tempfile.mkdtemp(prefix="ddpbench-fsdp-cli-")
SMALL = ["--hidden", "62", "--layers", "3", "--batch", "8", "--steps", "6", "--warmup", "2", "--warmup-seconds", "0",
         "--quiet"]


def run(args, np=None, timeout=120):
    cmd = ([mpiexec, "-np", str(np), "--bind-to", "none"] if np else []) + [prog] + args
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=tmp)
    return p.returncode, p.stdout, p.stderr


def load(name):
    with open(os.path.join(tmp, name)) as f:
        return json.load(f)


rc, out, err = run(SMALL + ["--strategy", "fsdp", "--momentum", "0.9", "--json", "f.json", "--csv", "f.csv",
                            "--prom", "f.prom"], np=3)
check(rc == 0, "3-rank fsdp run: exit %d %s" % (rc, err[-600:]))
d = load("f.json")
ph = d.get("phases", {})
check(sorted(ph) == ["comm", "fsdp", "local"], "phases local, comm, fsdp: %r" % sorted(ph))
check(d.get("config", {}).get("strategy") == "fsdp", "config.strategy fsdp: %r" % d.get("config", {}).get("strategy"))
rows = {r["kind"]: r for r in ph.get("fsdp", {}).get("collectives", [])}
check(sorted(rows) == ["all_gather", "reduce_scatter"], "fsdp collectives: %r" % sorted(rows))
ag, rs = rows.get("all_gather", {}), rows.get("reduce_scatter", {})
check(ag.get("calls") == 6 and rs.get("calls") == 3, "2L all-gathers and L reduce-scatters: %r %r" %
      (ag.get("calls"), rs.get("calls")))
check(ag.get("count") == 63 * 62 and ag.get("bytes") == 63 * 62 * 4, "all-gather output: 63 padded rows x 62: %r" % ag)
ok = all(r.get("time_us", 0) > 0 and abs(r["busbw_gbs"] - r["algbw_gbs"] * 2 / 3) < 1e-9 * max(1, r["algbw_gbs"])
         for r in rows.values())
check(ok, "busbw = algbw x (n-1)/n for the all-gathers and reduce-scatters: %r" % rows)
cm = ph.get("comm", {})
check({r["kind"] for r in cm.get("collectives", [])} == {"all_gather", "reduce_scatter"} and "allreduce" not in cm,
      "the comm phase times FSDP's collectives: %r" % list(cm))
f = d.get("fsdp", {})
rr = f.get("rank_rows", [])
check([x.get("rows") for x in rr] == [21, 21, 20] and [x.get("first") for x in rr] == [0, 21, 42],
      "rank rows 21, 21, 20 from 0, 21, 42: %r" % rr)
check(f.get("shard_rows") == 21 and f.get("padded_rows") == 63 and f.get("reduce_op") == "avg",
      "shard 21 rows, padded 63, AVG: %r" % {k: f.get(k) for k in ("shard_rows", "padded_rows", "reduce_op")})
mem = f.get("memory_bytes", {})
check(mem.get("allocated_matches_plan") is True, "allocated = plan: %r" % mem.get("allocated_rank0"))
plan0 = (mem.get("plan_per_rank") or [{}])[0]
state = sum(plan0.get(k, 0) for k in ("params_master", "params_lowp", "grads", "optim"))
check(0 < state < mem.get("ddp", {}).get("total", 0), "FSDP's state %r below DDP's %r" % (state, mem.get("ddp")))
check(plan0.get("params_master") == 3 * 21 * 62 * 4, "fp32 master shards: 3 x 21 x 62 x 4: %r" % plan0)
check(d.get("weights_identical") is True, "weights identical: %r" % d.get("weights_identical"))
check("PASS  fsdp " in d.get("bottom_line", ""), "bottom line names fsdp: %r" % d.get("bottom_line"))
check("allreduce_bytes_per_step" not in d and d.get("buckets", {}).get("count") == 0, "no DDP buckets")
try:
    import jsonschema
    with open(os.path.join(root, "docs", "result.schema.json")) as sf:
        schema = json.load(sf)
    errs = [e.message[:200] for e in jsonschema.Draft202012Validator(schema).iter_errors(d)]
    check(not errs, "valid against docs/result.schema.json: %r" % errs[:3])
except ImportError:
    print("# jsonschema not installed: schema validity not checked here (test_schema_live does)")
with open(os.path.join(tmp, "f.csv")) as cf:
    metrics = {r.get("metric") for r in csv.DictReader(cf)}
check({"all_gather_busbw_gbs", "reduce_scatter_time_us"} <= metrics, "--csv carries the collectives' figures")
with open(os.path.join(tmp, "f.prom")) as pf:
    prom = pf.read()
check("ddpbench_fsdp_all_gather_busbw_bytes_per_second{" in prom and "ddpbench_comm_reduce_scatter_time" in prom,
      "--prom carries them")
# FSDP's memory per rank as records: each rank's state and buffers, the plan's figures
recs = {(r["metric"], r["labels"].get("rank")): r["value"] for r in d.get("records", []) if r.get("measurement") == "fsdp"}
plan = mem.get("plan_per_rank") or []
want = {}
for k, p in enumerate(plan):
    want[("state_bytes", str(k))] = sum(p[x] for x in ("params_master", "params_lowp", "grads", "optim"))
    want[("buffer_bytes", str(k))] = p["gathered"] + p["reduce"]
check(len(plan) == 3 and all(recs.get(k) == v for k, v in want.items()),
      "fsdp state_bytes and buffer_bytes records per rank = the plan's: %r vs %r" % (want, recs))
check("ddpbench_fsdp_rank_state_bytes{" in prom and "ddpbench_fsdp_rank_buffer_bytes{" in prom and
      {"state_bytes", "buffer_bytes"} <= metrics, "--prom and --csv carry FSDP's memory per rank")

def fmt_bytes(b):
    """ddp_fmt_bytes: B, KiB, MiB, ... with two decimals past bytes."""
    units, u = ["B", "KiB", "MiB", "GiB", "TiB"], 0
    while b >= 1024 and u < 4:
        b, u = b / 1024, u + 1
    return "%.0f %s" % (b, units[u]) if u == 0 else "%.2f %s" % (b, units[u])


# The report's memory line says the JSON's figures (each printed figure its own, never another's).
rc, out, err = run([x for x in SMALL if x != "--quiet"] + ["--strategy", "fsdp", "--json", "m.json"], np=2)
check(rc == 0, "2-rank fsdp run with its report: exit %d" % rc)
if rc == 0:
    mb = load("m.json")["fsdp"]["memory_bytes"]
    p0, ddp_total = mb["plan_per_rank"][0], mb["ddp"]["total"]
    line = next((x for x in out.splitlines() if x.startswith("# fsdp memory per rank")), "")
    want = ["params %s" % fmt_bytes(p0["params_master"] + p0["params_lowp"]), "grads %s" % fmt_bytes(p0["grads"]),
            "optimizer %s" % fmt_bytes(p0["optim"]), "DDP holds %s" % fmt_bytes(ddp_total),
            "plus %s gathered" % fmt_bytes(p0["gathered"] + p0["reduce"])]
    check(all(w in line for w in want) and "allocated exactly that" in line,
          "the memory line says %r: %r" % (want, line))

rc, out, err = run(SMALL + ["--strategy", "fsdp", "--precision", "fp16", "--loss-scale-init", "1024",
                            "--inject-nonfinite", "3", "--json", "i.json"], np=2)
check(rc == 0, "fp16 injection: exit %d %s" % (rc, err[-400:]))
if rc == 0:
    fs = load("i.json")["phases"]["fsdp"]
    check(fs.get("skipped_steps") == [3], "fsdp skipped step 3 alone: %r" % fs.get("skipped_steps"))
    check(any(r["kind"] == "all_reduce" and r["calls"] == 1 for r in fs.get("collectives", [])),
          "one found_inf all-reduce a step: %r" % fs.get("collectives"))

for args, want in ((["--strategy", "fsdp", "--phases", "local,ddp"], "phase ddp belongs to strategy ddp"),
                   (["--phases", "fsdp"], "phase fsdp belongs to strategy fsdp"),
                   (["--strategy", "fsdp", "--bucket-mb", "5"], "bucket_mb is DDP's"),
                   (["--strategy", "fsdp", "--gradient-as-bucket-view"], "gradient_as_bucket_view is DDP's"),
                   (["--strategy", "fsdp", "--sweep", "--phases", "local,comm"], "sweep needs the fsdp phase"),
                   (["--strategy", "fsdp", "--group-measure", "ddp"], "group_measure ddp belongs to strategy ddp"),
                   (["--strategy", "zero3"], "strategy")):
    rc, out, err = run(SMALL + args)
    lines = [x for x in err.strip().splitlines() if x]
    check(rc == 2 and len(lines) == 1 and want in err, "%s: exit 2, one line with %r: %d %r" % (args, want, rc, err))

rc, out, err = run(SMALL + ["--strategy", "fsdp", "--sweep", "--phases", "local,fsdp", "--json", "s.json"], np=2)
check(rc == 0, "fsdp sweep: exit %d %s" % (rc, err[-300:]))
if rc == 0:
    recs = load("s.json")["records"]
    sc = {r["group"]: r["value"] for r in recs if r["measurement"] == "scaling" and r["metric"] == "busbw_gbs"}
    check(sorted(sc) == ["first:1", "first:2"] and sc["first:1"] is None and sc["first:2"] > 0,
          "the sweep's busbw inside fsdp: - on 1 rank, measured on 2: %r" % sc)

rc, out, err = run(SMALL + ["--momentum", "0.9", "--json", "d.json"], np=3)
check(rc == 0, "3-rank ddp run: exit %d" % rc)
rc, out, err = run(["compare", "d.json", "f.json"])
check(rc == 2 and "strategy" in err, "compare refuses ddp against fsdp: %d %r" % (rc, err[-300:]))
rc, out, err = run(["compare", "d.json", "f.json", "--allow-config-diff"])
check(rc in (0, 1, 4) and "model config key 'strategy'" not in err, "compare --allow-config-diff: %d %r" % (rc, err[-300:]))
sys.exit(pycheck.summary())
