#!/usr/bin/env python3
"""compare_smi.py DIR: the soak's series (DIR/soak.json) beside nvidia-smi sampled every second in the same call
(DIR/smi.csv), interval by interval: temperature (ddpbench: the highest NVML sample of the GEMM; nvidia-smi: the
highest sample in the interval), power (ddpbench: the GEMM's median; nvidia-smi: the median of its samples in the
GEMM's window), the PCIe link at the interval's end (the nvidia-smi sample nearest to it), the volatile ECC totals and
the throttle reasons (ddpbench's mask; the nvidia-smi flags seen in the interval). Test-only helper (Python)."""
import csv, json, statistics, sys
from datetime import datetime, timezone

d = sys.argv[1]
doc = json.load(open(f"{d}/soak.json"))
s = doc["soak"]
g = s["gpus"][0]
rows = []
with open(f"{d}/smi.csv") as f:
    r = csv.reader(f, skipinitialspace=True)
    head = next(r)
    for x in r:
        if len(x) != len(head):
            continue
        row = dict(zip(head, x))
        t = datetime.strptime(row["timestamp"], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()
        rows.append((t - s["start_epoch_s"], row))
def num(v):
    try:
        return float(v.split()[0])
    except (ValueError, IndexError):
        return None
print("interval  t0-t1 s  | temp C ddpbench / smi max | power W ddpbench median / smi median (GEMM window) | "
      "PCIe ddpbench / smi at end | ECC corr,unc delta ddpbench / smi totals | reasons ddpbench / smi active")
bad = 0
for k, iv in enumerate(s["intervals"]):
    t0, t1 = iv["t0_s"], iv["t1_s"]
    inside = [row for t, row in rows if t0 <= t <= t1]
    gemm = s["stages_s"]["gemm"][k]
    copy = s["stages_s"]["host_copies"][k]
    g1 = t1 - copy - 0.2
    g0 = g1 - gemm + 0.2
    win = [row for t, row in rows if g0 <= t <= g1]
    tmax = max(num(x["temperature.gpu"]) for x in inside)
    pmed = statistics.median(num(x["power.draw [W]"]) for x in win) if win else None
    end = min(rows, key=lambda tr: abs(tr[0] - t1))[1]
    flags = sorted({n.split(".")[-1] for x in win for n in x if n.startswith("clocks_event_reasons.") and
                    not n.endswith(".active") and x[n] == "Active"})
    ok_t = abs(tmax - g["temperature_c"][k]) <= 1
    ok_p = pmed is not None and abs(pmed - g["power_w"][k]) <= 0.02 * pmed
    ok_pcie = (num(end["pcie.link.gen.current"]), num(end["pcie.link.width.current"])) == (g["pcie_gen"][k], g["pcie_width"][k])
    ok_r = (g["throttle_reasons"][k] == 4) == (flags == ["sw_power_cap"])
    bad += not (ok_t and ok_p and ok_pcie and ok_r)
    print(f"{k+1:8d} {t0:5.0f}-{t1:3.0f} | {g['temperature_c'][k]:.0f} / {tmax:.0f} {'ok' if ok_t else 'DIFF'} | "
          f"{g['power_w'][k]:.1f} / {pmed:.1f} {'ok' if ok_p else 'DIFF'} | Gen{g['pcie_gen'][k]:.0f} x{g['pcie_width'][k]:.0f} / "
          f"Gen{end['pcie.link.gen.current']} x{end['pcie.link.width.current']} {'ok' if ok_pcie else 'DIFF'} | "
          f"{g['ecc_corrected'][k]:.0f},{g['ecc_uncorrected'][k]:.0f} / {end['ecc.errors.corrected.volatile.total']},"
          f"{end['ecc.errors.uncorrected.volatile.total']} | {g['throttle_reasons'][k]:.0f} / {','.join(flags) or '-'}"
          f" {'ok' if ok_r else 'DIFF'}")
print(f"max PCIe: ddpbench Gen{g['pcie_gen_max']} x{g['pcie_width_max']}, smi Gen{rows[-1][1]['pcie.link.gen.max']} "
      f"x{rows[-1][1]['pcie.link.width.max']}")
print(f"{len(s['intervals']) - bad} of {len(s['intervals'])} intervals agree on every figure")
