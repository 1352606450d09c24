#!/usr/bin/env python3
"""accept_ref.py: the PyTorch reference for `ddpbench accept`'s per-GPU figures, measured the same way.

- Sustained GEMM: torch.matmul of two n x n matrices (uniform in [-1, 1], like ddpbench's generator) in
  bf16, fp16, tf32 (fp32 inputs, allow_tf32) and fp32, for --seconds after ~0.3 s of warm-up, in intervals of
  ~100 ms timed with CUDA events; prints the median TFLOP/s over intervals and the medians of the intervals that
  started in the first and in the last second (ddpbench's drift).
- Pinned copies: a pinned host tensor of --copy-mib MiB to the GPU and back, --copy-iters timed copies each way
  after one warm-up, each timed with CUDA events; median GB/s (1e9 bytes/s).

  python3 launch/accept_ref.py --seconds 5 --n 8192 --copy-mib 256 --json ref.json
Test-only helper: a run of ddpbench never needs Python.
"""
import argparse
import json
import statistics
import time

import torch


def gemm(prec, n, seconds, interval=0.1):
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32}[prec]
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    a = (torch.rand(n, n, device="cuda") * 2 - 1).to(dt)
    b = (torch.rand(n, n, device="cuda") * 2 - 1).to(dt)
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def batch(k):
        e0.record()
        for _ in range(k):
            torch.matmul(a, b)
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1)

    ms = batch(1)
    k = max(1, int(interval * 1e3 / ms)) if ms > 0 else 1
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.3:
        batch(k)
    flop = 2.0 * n ** 3
    rates, starts = [], []
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        at = time.monotonic() - t0
        ms = batch(k)
        rates.append(k * flop / (ms * 1e-3) / 1e12)
        starts.append(at)
    total = time.monotonic() - t0
    first = [r for r, s in zip(rates, starts) if s < 1.0]
    last = [r for r, s in zip(rates, starts) if s >= total - 1.0] or rates[-1:]
    f, l = statistics.median(first), statistics.median(last)
    return {"prec": prec, "n": n, "intervals": len(rates), "gemms_per_interval": k,
            "median_tflops": statistics.median(rates), "first_tflops": f, "last_tflops": l,
            "drift_pct": 100 * (l - f) / f}


def copies(mib, iters):
    nbytes = mib << 20
    h = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True).fill_(1)
    d = torch.zeros(nbytes, dtype=torch.uint8, device="cuda")
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = {}
    for name, dst, src in (("h2d_gbps", d, h), ("d2h_gbps", h, d)):
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize()
        g = []
        for _ in range(iters):
            e0.record()
            dst.copy_(src, non_blocking=True)
            e1.record()
            e1.synchronize()
            g.append(nbytes / (e0.elapsed_time(e1) * 1e-3) / 1e9)
        out[name] = statistics.median(g)
    out["bytes"] = nbytes
    out["iters"] = iters
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--precisions", default="bf16,fp16,tf32,fp32")
    p.add_argument("--copy-mib", type=int, default=256)
    p.add_argument("--copy-iters", type=int, default=20)
    p.add_argument("--json")
    a = p.parse_args()
    res = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "gemm": [], "copy": None}
    for prec in a.precisions.split(","):
        r = gemm(prec, a.n, a.seconds)
        res["gemm"].append(r)
        print(f"pytorch gemm {prec:5s} n={a.n}: {r['median_tflops']:.1f} TFLOP/s median, first second "
              f"{r['first_tflops']:.1f}, last {r['last_tflops']:.1f} (drift {r['drift_pct']:+.1f} %)", flush=True)
    c = copies(a.copy_mib, a.copy_iters)
    res["copy"] = c
    print(f"pytorch pinned copy {a.copy_mib} MiB: H2D {c['h2d_gbps']:.1f} GB/s, D2H {c['d2h_gbps']:.1f} GB/s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
