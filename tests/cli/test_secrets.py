#!/usr/bin/env python3
"""test_secrets: a secret in the environment reaches no output (docs/outputs.md).

Plants secret values under several names that ddpbench records the family of (NCCL_*, CUDA_*, UCX_*, DDPBENCH_*,
OMPI_MCA_btl*, names holding KEY, TOKEN, SECRET, PASSWORD or PASSWD in any case) and under names it never records
(AWS_SECRET_ACCESS_KEY), beside one plain NCCL_ variable whose value must be recorded (so that the grep below
searches outputs that do hold the environment). Then, on 2 ranks of the CPU device, every subcommand writes
every output it has: run (text, stderr, --json, --csv, --prom, --failed-hosts), accept (the same), collectives
(text, --json), doctor (text, --json), topo (text, --json) and export (--prom, --csv, --json). No secret value
may appear in any of them; each secret name from the recorded families appears with "<redacted>" in the
run's JSON (environment and topology.environment.nccl_env_rank0) and in the text report's NCCL_* line.
argv: MPIEXEC DDPBENCH SOURCE_DIR. Ends with "N passed, N failed"."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pycheck  # noqa: E402
from pycheck import check  # noqa: E402

if len(sys.argv) < 4:
    print("usage: test_secrets.py MPIEXEC DDPBENCH SOURCE_DIR", file=sys.stderr)
    sys.exit(2)
mpiexec, prog, src = sys.argv[1:4]

SECRETS = {  # name -> value: each value unique, so a hit names the leak
    "NCCL_IB_TOKEN": "s3cret-nccl-token-4d1f",
    "NCCL_NET_PASSWORD": "s3cret-nccl-password-88aa",
    "NCCL_plugin_api_key": "s3cret-lower-case-key-71c2",
    "CUDA_LICENSE_SECRET": "s3cret-cuda-secret-09be",
    "UCX_IB_PASSWD": "s3cret-ucx-passwd-5e5e",
    "DDPBENCH_UPLOAD_TOKEN": "s3cret-ddpbench-token-c0de",
    "OMPI_MCA_btl_tcp_secret": "s3cret-ompi-secret-beef",
    "AWS_SECRET_ACCESS_KEY": "s3cret-aws-never-recorded-1234",
}
PLAIN = ("NCCL_DEBUG_SUBSYS", "plain-visible-value-ab12")  # recorded as it is
RECORDED = [n for n in SECRETS if not n.startswith("AWS_")]

ENV = dict(os.environ)
for k, val in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
               ("OMPI_MCA_rmaps_base_oversubscribe", "1")):
    ENV.setdefault(k, val)
ENV.update(SECRETS)
ENV[PLAIN[0]] = PLAIN[1]
# mpirun passes these to the ranks (-x): a launcher that forwards the environment is what users have
fwd = []
for name in list(SECRETS) + [PLAIN[0]]:
    fwd += ["-x", name]
mpi = [mpiexec, "-np", "2", "--oversubscribe"] + fwd + [prog]

tmp = tempfile.mkdtemp(prefix="ddpbench-test-secrets-")
outputs = {}  # label -> text


def run(label, cmd, ok=(0, 1, 4, 5), timeout=120):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=ENV, cwd=tmp)
    except subprocess.TimeoutExpired:
        check(False, f"{label}: no end within {timeout} s")
        return False
    outputs[label + " stdout"] = p.stdout
    outputs[label + " stderr"] = p.stderr
    return check(p.returncode in ok, f"{label}: exit {p.returncode} (want {ok}): {p.stderr[-1500:]}")


try:
    f = lambda name: os.path.join(tmp, name)  # noqa: E731
    cfg = os.path.join(src, "configs/ci.ini")
    outs = lambda k: ["--json", f(k + ".json"), "--csv", f(k + ".csv"), "--prom", f(k + ".prom"),  # noqa: E731
                      "--failed-hosts", f(k + ".hosts")]
    run("run", mpi + ["--config", cfg, "--device", "cpu"] + outs("run"))
    run("accept", mpi + ["accept", "--health-seconds", "0.3", "--device", "cpu"] + outs("accept"))
    run("collectives", mpi + ["collectives", "allreduce", "-b", "1K", "-e", "4K", "-f", "4", "-n", "3", "--device",
                              "cpu", "--json", f("collectives.json")])
    run("doctor", mpi + ["doctor", "--json", f("doctor.json")], ok=(0, 1, 2))
    run("topo", [prog, "topo"], ok=(0,))
    run("topo --json", [prog, "topo", "--json"], ok=(0,))
    if os.path.isfile(f("run.json")):
        run("export", [prog, "export", f("run.json"), "--prom", f("export.prom"), "--csv", f("export.csv"),
                       "--json", f("export.json")], ok=(0,))
    for path in sorted(glob.glob(os.path.join(tmp, "*"))):
        with open(path, errors="replace") as fh:
            outputs[os.path.basename(path)] = fh.read()
    for want in ("run.json", "run.csv", "run.prom", "accept.json", "accept.prom", "collectives.json", "doctor.json",
                 "export.prom", "export.csv", "export.json", "run stdout", "doctor stdout", "topo stdout"):
        check(want in outputs and outputs[want], f"{want} was written")

    # No secret value anywhere.
    leaks = [(label, name) for label, text in outputs.items() for name, value in SECRETS.items() if value in text]
    check(not leaks, "secret values in the outputs: " + "; ".join(f"{n} in {lab}" for lab, n in leaks))
    check(len(outputs) >= 20, f"{len(outputs)} outputs searched")

    # The search is meaningful: the environment is recorded, the plain value is there, the secrets' names redacted.
    doc = json.load(open(f("run.json"))) if os.path.isfile(f("run.json")) else {}
    env = {e.get("name", e.get("key")): e.get("value") for e in doc.get("environment", [])} \
        if isinstance(doc.get("environment"), list) else doc.get("environment", {})
    check(env.get(PLAIN[0]) == PLAIN[1], f"the plain NCCL_ variable is recorded as it is: {env.get(PLAIN[0])}")
    for name in RECORDED:
        check(env.get(name) == "<redacted>", f"{name} recorded as <redacted> in environment: {env.get(name)}")
    check("AWS_SECRET_ACCESS_KEY" not in env, "a name outside the recorded families is not recorded at all")
    nccl0 = ((doc.get("topology") or {}).get("environment") or {}).get("nccl_env_rank0", "")
    check(PLAIN[1] in nccl0, f"nccl_env_rank0 holds the plain variable: {nccl0!r}")
    for name in [n for n in RECORDED if n.startswith("NCCL_")]:
        check(f"{name}=<redacted>" in nccl0, f"nccl_env_rank0 has {name}=<redacted>: {nccl0!r}")
    line = [ln for ln in outputs.get("run stdout", "").splitlines() if "NCCL_* (rank 0)" in ln]
    check(line and "NCCL_IB_TOKEN=<redacted>" in line[0] and PLAIN[1] in line[0],
          f"the text report's NCCL_* line redacts: {line}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

sys.exit(pycheck.summary())
