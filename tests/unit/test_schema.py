#!/usr/bin/env python3
"""test_schema: docs/result.schema.json is a valid JSON Schema (draft 2020-12); every file given satisfies it; the
files given include a version 1 and a version 2 result file and at least one version 3 document of every kind (run,
accept, collectives, doctor, export, compare); and documents that break it, made from the first valid one of each, are
rejected (per kind: a missing required key, a key of another kind, a wrong type or value), while a few legal variants
are accepted. argv: SCHEMA FILE... (CMake passes tests/data/fixtures and a few real GPU results from results/)
tests/cli/test_schema_live.py runs it on documents the built binary has just written. Test-only helper: ddpbench itself
never needs Python."""
import copy
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed (apt-get install python3-jsonschema)", file=sys.stderr)
    print("0 passed, 0 failed")
    sys.exit(77)

KINDS = ["run", "accept", "collectives", "doctor", "export", "compare"]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402


def errors(v, doc):
    return [e.message for e in v.iter_errors(doc)]


def label(doc):
    """run, accept, ..., compare for documents that say their kind; v1, v2 for result files before kinds."""
    if not isinstance(doc, dict):
        return "?"
    if "kind" in doc:
        return str(doc["kind"])
    if "ddpbench_compare" in doc:
        return "compare before kinds"
    return f"v{doc.get('schema_version')}"


if len(sys.argv) < 2:
    print("usage: test_schema.py SCHEMA FILE...", file=sys.stderr)
    sys.exit(2)
schema = json.load(open(sys.argv[1]))
try:
    jsonschema.Draft202012Validator.check_schema(schema)
    check(True, "schema")
except jsonschema.SchemaError as e:
    check(False, f"schema is not a valid JSON Schema: {e.message}")
    sys.exit(pycheck.summary())
v = jsonschema.Draft202012Validator(schema)

first = {}  # label -> the first valid document of that label
soak_first = {}  # soak state (running, complete) -> the first valid accept --soak document in that state
for path in sys.argv[2:]:
    doc = json.load(open(path))
    errs = errors(v, doc)
    check(not errs, f"{path} ({label(doc)}): {errs[:3]}")
    if not errs:
        first.setdefault(label(doc), doc)
        if isinstance(doc, dict) and "soak" in doc:
            soak_first.setdefault(doc["soak"].get("state"), doc)
for want in ["v1", "v2"] + KINDS:
    check(want in first, f"a valid {want} document was given (have: {sorted(first)})")


def rejected(base, what, mutate):
    """mutate a deep copy of base; the schema must reject the result."""
    if base is None:
        return
    bad = copy.deepcopy(base)
    mutate(bad)
    check(errors(v, bad), f"{label(base)}: {what} rejected")


def accepted(base, what, mutate):
    if base is None:
        return
    ok = copy.deepcopy(base)
    mutate(ok)
    errs = errors(v, ok)
    check(not errs, f"{label(base)}: {what} accepted: {errs[:3]}")


def set_(key, value):
    return lambda d: d.__setitem__(key, value)


def del_(key):
    return lambda d: d.pop(key)


def new_finding(**kw):
    f = {"check": "x", "severity": "info", "scope": "job", "subject": "job", "host": None, "rank": None,
         "measured": None, "expected": None, "unit": "", "text": "t"}
    f.update(kw)
    return f


def v2_finding(**kw):
    f = new_finding(**kw)
    for k in ("host", "rank"):
        if k not in kw:
            del f[k]
    return f


v1, v2 = first.get("v1"), first.get("v2")
run, acc, coll = first.get("run"), first.get("accept"), first.get("collectives")
doct, exp, cmp_ = first.get("doctor"), first.get("export"), first.get("compare")

# ---- strategy fsdp (a kind run document with an fsdp section, when one was given) ----
fsdp_doc = next((json.load(open(x)) for x in sys.argv[2:]
                 if (json.load(open(x)).get("config") or {}).get("strategy") == "fsdp"), None)
if fsdp_doc is not None:
    check(not errors(v, fsdp_doc), "an fsdp run document is valid")
    rejected(fsdp_doc, "an fsdp run with DDP's allreduce_bytes_per_step", set_("allreduce_bytes_per_step", 1))
    rejected(fsdp_doc, "an fsdp run without its fsdp section", del_("fsdp"))
    rejected(fsdp_doc, "a ddp and an fsdp phase in one run", lambda d: d["phases"].__setitem__("ddp", d["phases"]["fsdp"]))
    rejected(fsdp_doc, "an unknown collective kind", lambda d: d["phases"]["fsdp"]["collectives"][0].__setitem__("kind", "bcast"))
    rejected(fsdp_doc, "the fsdp phase with DDP's allreduce rows", lambda d: d["phases"]["fsdp"].__setitem__("allreduce", []))
    rejected(run, "a ddp run with an fsdp section", lambda d: d.__setitem__("fsdp", fsdp_doc["fsdp"]))

# ---- versions 1 and 2 (as before version 3) ----
rejected(v2, "an unknown severity", set_("findings", [v2_finding(severity="fatal")]))
rejected(v2, "a hidden fraction below 0", set_("hidden_comm_fraction", -1.55))
rejected(v2, "a record without metric", lambda d: d["records"][0].pop("metric"))
rejected(v2, "no records", del_("records"))
rejected(v2, "a run (no accept records, no collectives subcommand) without phases", del_("phases"))
accepted(v2, "an acceptance run (accept records) without phases", lambda d: (
    d.pop("phases"), d["records"][0].__setitem__("measurement", "accept")))
rejected(v2, "a kind (version 2 had none)", set_("kind", "run"))
rejected(v2, "findings with a host (version 2 had none)", lambda d: d["findings"].append(v2_finding(host="h")))
accepted(v2, "a finding of version 2's layout", lambda d: d["findings"].append(v2_finding(scope="rank")))
rejected(v2, "schema_version 4", set_("schema_version", 4))
rejected(v1, "records in version 1", set_("records", []))
rejected(v1, "no phases", del_("phases"))

# ---- every version 3 result document ----
for base in (run, acc, coll, doct, exp):
    rejected(base, "no kind", del_("kind"))
    rejected(base, "an unknown kind", set_("kind", "benchmark"))
    rejected(base, "the kind compare", set_("kind", "compare"))
    rejected(base, "no records", del_("records"))
    rejected(base, "no findings", del_("findings"))
    rejected(base, "no failed_hosts", del_("failed_hosts"))
    rejected(base, "failed_hosts not an array of names", set_("failed_hosts", "vm"))
    rejected(base, "failed_hosts with a number", set_("failed_hosts", [0]))
    rejected(base, "an unknown key", set_("recods", []))
    rejected(base, "a finding with a non-integer rank", lambda d: d["findings"].append(new_finding(rank=0.5)))
    rejected(base, "a finding with a rank as text", lambda d: d["findings"].append(new_finding(rank="0")))
    rejected(base, "a finding without host", lambda d: d["findings"].append(
        {k: x for k, x in new_finding().items() if k != "host"}))
    rejected(base, "a finding with passed false", lambda d: d["findings"].append(new_finding(passed=False)))
    rejected(base, "a passed finding that warns", lambda d: d["findings"].append(new_finding(severity="warn", passed=True)))
    rejected(base, "a finding with an unknown key", lambda d: d["findings"].append(new_finding(why="x")))
    rejected(base, "a record of an unknown group", lambda d: d["records"].append(
        {"measurement": "x", "group": "everyone", "metric": "m", "unit": "", "better": "none", "labels": {}, "value": 1}))
    rejected(base, "a record with a label that is a number", lambda d: d["records"].append(
        {"measurement": "x", "group": "world", "metric": "m", "unit": "", "better": "none", "labels": {"n": 1}, "value": 1}))
    rejected(base, "a rank without pid", lambda d: d["ranks"][0].pop("pid"))
    rejected(base, "a start time that is not UTC ISO 8601", set_("start_time", "2026-12-02 03:52:33"))
    rejected(base, "an environment variable outside the allowlist", lambda d: d["environment"].__setitem__(
        "OMPI_MCA_orte_hnp_uri", "1;tcp://192.0.2.2:1"))
    rejected(base, "a weights checksum without a weights verdict", lambda d: (
        d.__setitem__("weights_identical", None), d.__setitem__("weights_checksum", "0123456789abcdef")))
    if base is not exp:
        rejected(base, "a finding of scope rank without a rank", lambda d: d["findings"].append(new_finding(scope="rank")))

# ---- per kind ----
rejected(run, "no phases", del_("phases"))
rejected(run, "no topology", del_("topology"))
rejected(run, "no buckets", del_("buckets"))
rejected(run, "a phase of an unknown name", lambda d: d["phases"].__setitem__("warm", copy.deepcopy(d["phases"]["ddp"])))
rejected(run, "a ddp phase without per_rank", lambda d: d["phases"]["ddp"].pop("per_rank"))
rejected(run, "a comm phase with a FLOP rate", lambda d: d["phases"]["comm"].__setitem__("tflops_per_rank", 1.0))
rejected(run, "a phase with an unknown key", lambda d: d["phases"]["ddp"].__setitem__("steps_ms", 1.0))
STRAGGLER_FLOOR = {"floor": "baseline", "baseline_runs": 2, "baseline_spread_pct": 4.8, "floor_pct": 8.2, "straggler_pct": 5, "threshold_pct": 8.2}  # --baseline's floor (docs/straggler.md)
accepted(run, "a --baseline straggler floor", lambda d: d["phases"]["ddp"].__setitem__("straggler", dict(STRAGGLER_FLOOR)))
rejected(run, "a straggler floor with an unknown key", lambda d: d["phases"]["ddp"].__setitem__(
    "straggler", dict(STRAGGLER_FLOOR, spread=1.0)))
rejected(run, "a straggler floor of another source", lambda d: d["phases"]["ddp"].__setitem__(
    "straggler", dict(STRAGGLER_FLOOR, floor="device")))
rejected(run, "a straggler floor without its runs", lambda d: d["phases"]["ddp"].__setitem__(
    "straggler", {k: x for k, x in STRAGGLER_FLOOR.items() if k != "baseline_runs"}))
rejected(run, "weights identical with mismatched ranks", set_("weights_mismatched_ranks", [1]))
rejected(run, "weights verified without weights_mismatched_ranks", del_("weights_mismatched_ranks"))
rejected(run, "a hidden fraction above 1", set_("hidden_comm_fraction", 1.5))
rejected(run, "the device none", set_("device", "none"))
rejected(run, "a source_kind", set_("source_kind", "run"))
rejected(run, "a topology rank whose host is a name", lambda d: d["topology"]["ranks"][0].__setitem__("host", "vm"))
accepted(run, "weights not verified (no ddp phase)", lambda d: (
    d.__setitem__("weights_identical", None), d.__setitem__("weights_checksum", None), d.pop("weights_mismatched_ranks")))

rejected(acc, "phases (written by kind run only)", set_("phases", {}))
rejected(acc, "a weights verdict", lambda d: (
    d.__setitem__("weights_identical", True), d.__setitem__("weights_checksum", "0123456789abcdef")))
rejected(acc, "a record of measurement collectives", lambda d: d["records"][0].__setitem__("measurement", "collectives"))
rejected(acc, "a topology", lambda d: d.__setitem__("topology", copy.deepcopy(doct["topology"]) if doct else {}))

rejected(coll, "phases (written by kind run only)", set_("phases", {}))
def row_record(d):
    """The first record of a row (not the sweep's maxbytes_used, which has no labels)."""
    return next(r for r in d["records"] if r["metric"] != "maxbytes_used")


rejected(coll, "a record without its collective label", lambda d: row_record(d)["labels"].pop("collective"))
rejected(coll, "a record of an unknown collective", lambda d: row_record(d)["labels"].__setitem__("collective", "hypercube"))
rejected(coll, "a record with bytes that are not a count", lambda d: row_record(d)["labels"].__setitem__("bytes", "1K"))
rejected(coll, "maxbytes_used with labels", lambda d: next(
    r for r in d["records"] if r["metric"] == "maxbytes_used")["labels"].__setitem__("bytes", "8") if any(
    r["metric"] == "maxbytes_used" for r in d["records"]) else d.__setitem__("kind", "nothing"))
rejected(coll, "a record of another measurement", lambda d: d["records"][0].__setitem__("measurement", "accept"))

rejected(doct, "no topology", del_("topology"))
rejected(doct, "a record (doctor measures nothing)", lambda d: d["records"].append(copy.deepcopy(run["records"][0]) if run else {}))
accepted(doct, "a device and a comm (doctor makes them for NCCL's account)",
         lambda d: (d.__setitem__("device", "cuda"), d.__setitem__("comm", "nccl")))
rejected(doct, "phases (written by kind run only)", set_("phases", {}))
rejected(doct, "a topology without its verdict", lambda d: d["topology"].pop("consistent"))

# ---- NCCL's account (any kind whose ranks made a NCCL communicator) ----
NCCL = {"reported": True, "why": None, "source": "ddpbench", "ranks": [{"rank": 0, "host": "h", "account": {
    "version": "2.28.3+cuda13.0", "net": "Socket", "communicators": [{
        "label": "world", "nranks": 2, "channels": {"coll": 24}, "peers": [{"peer": 1, "via": "P2P/CUMEM/read"}],
        "algorithms": [{"coll": "AllReduce", "bytes": 1048576, "algo": "RING", "proto": "SIMPLE", "channels": 24,
                        "calls": 1}]}]}}]}
NOT_REPORTED = {"reported": False, "why": "NCCL_DEBUG=WARN is set", "source": "user",
                "ranks": [{"rank": 0, "host": "h", "account": None, "why": "NCCL_DEBUG=WARN is set"}]}
for base in (run, acc, coll, doct):
    accepted(base, "NCCL's account", set_("nccl", copy.deepcopy(NCCL)))
    accepted(base, "NCCL's account not reported, and why", set_("nccl", copy.deepcopy(NOT_REPORTED)))
rejected(coll, "an account section without its ranks", lambda d: d.__setitem__("nccl", {
    k: v for k, v in copy.deepcopy(NCCL).items() if k != "ranks"}))
rejected(coll, "an account from an unknown source", lambda d: d.__setitem__("nccl", dict(copy.deepcopy(NCCL), source="x")))
rejected(coll, "an algorithm choice without its protocol", lambda d: (
    d.__setitem__("nccl", copy.deepcopy(NCCL)),
    d["nccl"]["ranks"][0]["account"]["communicators"][0]["algorithms"][0].pop("proto")))

# ---- accept --soak: the soak section (given when a soak document is among the files) ----
soak, soak_run = soak_first.get("complete"), soak_first.get("running")


def soak_gpu(d):
    return d["soak"]["gpus"][0]


rejected(soak_run, "an interim soak document (state running) that is not INCOMPLETE", set_("verdict", "PASS"))
rejected(soak_run, "an interim soak document with exit code 0", set_("exit_code", 0))
rejected(soak, "a complete soak with verdict INCOMPLETE", set_("verdict", "INCOMPLETE"))
rejected(soak, "an unknown soak state", lambda d: d["soak"].__setitem__("state", "paused"))
# the run's state (every kind) and the watchdog's suspects of a soak ended early
SUSPECT = {"rank": 1, "host": "node01", "where": "not answering (stopped or frozen for 12 s); last known: soak"}
accepted(soak_run, "an interrupted soak with its suspects", lambda d: (
    d.__setitem__("state", "interrupted"), d["soak"].__setitem__("state", "interrupted"),
    d.__setitem__("suspects", [dict(SUSPECT)])))
rejected(soak_run, "an interrupted soak that is not INCOMPLETE", lambda d: (
    d["soak"].__setitem__("state", "interrupted"), d.__setitem__("verdict", "PASS")))
rejected(soak, "an unknown run state", set_("state", "paused"))
rejected(soak, "a suspect without its rank", set_("suspects", [{"host": "node01", "where": "x"}]))
rejected(soak, "a soak section without its intervals", lambda d: d["soak"].pop("intervals"))
rejected(soak, "a soak section with a key of its own", lambda d: d["soak"].__setitem__("cycles", 3))
rejected(soak, "a GPU without its steady state", lambda d: soak_gpu(d).pop("steady"))
rejected(soak, "a series entry that is text", lambda d: soak_gpu(d)["tflops"].__setitem__(0, "1.0"))
rejected(soak, "a negative throughput", lambda d: soak_gpu(d)["tflops"].__setitem__(0, -1.0))
rejected(soak, "a link of an unknown kind", lambda d: d["soak"]["links"].append({"name": "a-b", "kind": "ring", "busbw_gbs": []}))
rejected(soak, "an interval numbered 0", lambda d: d["soak"]["intervals"][0].__setitem__("interval", 0))
rejected(soak, "an Xid without its interval", lambda d: soak_gpu(d)["xids"].append({"xid": 79, "t_s": 3.5}))
rejected(soak, "a record of an unknown measurement", lambda d: d["records"][0].__setitem__("measurement", "burnin"))
rejected(run, "a soak section in a run's document", set_("soak", copy.deepcopy(soak["soak"]) if soak else {}))
accepted(soak, "a GPU's figures, an Xid, an NVLink and a throttle", lambda d: (
    soak_gpu(d).update(sm_clock_mhz=[1980.0] * len(soak_gpu(d)["tflops"]), pcie_gen_max=5, pcie_width_max=16,
                       xids=[{"xid": 79, "t_s": 3.5, "interval": 1}],
                       nvlinks=[{"link": 0, "up": [1] * len(soak_gpu(d)["tflops"]), "crc": [0] * len(soak_gpu(d)["tflops"]),
                                 "replay": [None] * len(soak_gpu(d)["tflops"]), "recovery": [0] * len(soak_gpu(d)["tflops"])}]),
    soak_gpu(d)["steady"].update(first_throttle_s=12.5, first_throttle_interval=2),
    d["findings"].append(new_finding(check="soak_xid", severity="fail", scope="gpu", subject="GPU0", host="h", rank=0,
                                     interval=1, t_s=3.5))))
accepted(soak, "a node-pair link not measured in most intervals", lambda d: d["soak"]["links"].append(
    {"name": "a-b", "kind": "pair", "busbw_gbs": [None] * len(d["soak"]["intervals"])}))

rejected(exp, "no source_kind", del_("source_kind"))
rejected(exp, "source_kind export (an export keeps its origin)", set_("source_kind", "export"))
rejected(exp, "an unknown source_kind", set_("source_kind", "benchmark"))
rejected(exp, "phases", set_("phases", copy.deepcopy(run["phases"]) if run else {}))
rejected(exp, "a topology", set_("topology", copy.deepcopy(run["topology"]) if run else {}))
if exp and exp.get("source_kind") == "run":
    rejected(exp, "source_kind doctor with records", set_("source_kind", "doctor"))

rejected(cmp_, "no metrics (its rows)", del_("metrics"))
rejected(cmp_, "metrics not an array", set_("metrics", {}))
rejected(cmp_, "the kind run", set_("kind", "run"))
rejected(cmp_, "neither kind nor ddpbench_compare", lambda d: (d.pop("kind"), d.pop("ddpbench_compare")))
accepted(cmp_, "no kind (compare before kinds, ddpbench_compare 1)", del_("kind"))
rejected(cmp_, "a schema_version (not a result document)", set_("schema_version", 3))
rejected(cmp_, "an unknown verdict", lambda d: d["metrics"][0].__setitem__("verdict", "!"))
rejected(cmp_, "a metric without its p", lambda d: d["metrics"][0].pop("p"))
rejected(cmp_, "a confidence interval of one number", lambda d: d["metrics"][0].__setitem__("ci_pct", [1.0]))
rejected(cmp_, "a p-value above 1", lambda d: d["metrics"][0].__setitem__("p", 1.5))
rejected(cmp_, "an untested metric with a p-value", lambda d: d["metrics"][0].update(verdict="?", p=0.5, ci_pct=None))
rejected(cmp_, "a regression that is not worse", lambda d: d["metrics"][0].update(verdict="+", regression=True))
rejected(cmp_, "a side without runs", lambda d: d["a"].pop("runs"))
if cmp_:
    any_regression = any(m["regression"] for m in cmp_["metrics"])
    rejected(cmp_, "regression disagreeing with its metrics", set_("regression", not any_regression))
    if cmp_["same_provenance"]:
        rejected(cmp_, "an A/A comparison with a provenance diff", lambda d: d["provenance_diff"].append(
            {"key": "env.X", "a": "1", "b": "2", "a_runs_disagree": False, "b_runs_disagree": False, "model_config": False}))
    else:
        rejected(cmp_, "an A/B comparison without a provenance diff", set_("provenance_diff", []))
        rejected(cmp_, "an A/B comparison with A/A noise", lambda d: d["metrics"][0].__setitem__("aa_noise_pct", 1.0))

sys.exit(pycheck.summary())
