#!/usr/bin/env python3
"""gen_golden.py: records PyTorch's side of ddpbench's conformance suite as golden files.

Every case is built from ddpbench's own spec, so that the C test (tests/mpi/test_conformance.c) can replay it
without PyTorch: the same weights and data (splitmix64 with the tags and bounds of src/numerics.h, seed 42),
L x nn.Linear(H, H, bias=False) + ReLU, loss 0.5 * sum((y.float() - t)^2) / B, plain SGD (lr 0.01),
torch.autocast (bf16, or fp16 with GradScaler's defaults). It writes, into --out:

  buckets.json       DDP's buckets (gloo, 2 CPU processes) for a table of (H, L) and caps: the first
                     iteration's buckets and the rebuilt ones, each as bytes and layer numbers in the order
                     the bucket holds them, read from a recording comm hook (and DDP's logger where it has them);
                     also with static_graph=True and with find_unused_parameters=True.
  losses_cpu.json    per-step loss (and fp16 loss scale, skipped steps) of one CPU process, per precision.
  ddp2_cpu.json      the same on 2 CPU processes under DDP (gloo), fp32/bf16, with and without the
                     fp16/bf16 compress hooks; the loss recorded is the mean of the ranks' losses.
  hooks.json         the result of fp16_compress_hook and bf16_compress_hook on 2 ranks for inputs
                     whose magnitudes run from fp32 subnormals to past fp16's range (where casting before
                     dividing by the world size differs from dividing first), as fp32 bit patterns.
  losses_gpu.json    per-step loss on CUDA, per precision, for several equally valid PyTorch settings
                     (cuBLAS vs cuBLASLt, reduced-precision reductions on/off, a repeat): the spread between
                     them is the tolerance the GPU test allows ddpbench. Needs a GPU (else not written).

Each file records the PyTorch version (and numpy, CUDA, device, date) that made it.

  python3 tests/data/golden/gen_golden.py --out tests/data/golden  # everything this machine can do
  python3 tests/data/golden/gen_golden.py --out /tmp/g --parts hooks,cpu  # a subset

Needs only the standard library, numpy and torch. Runs in well under 5 minutes on the GPU machine (16 cores).
"""
import argparse
import datetime
import json
import math
import os
import platform
import sys
import tempfile
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

# ---- ddpbench's generator (src/numerics.h) -----------------------------------------------------------
TAG_WEIGHT, TAG_INPUT, TAG_TARGET, TAG_FILL = 0x100, 0x200, 0x300, 0x400
SEED = 42
LR = 0.01
U64 = np.uint64


def splitmix64(z):
    """splitmix64 on a uint64 array (wrapping arithmetic, as in C)."""
    with np.errstate(over="ignore"):
        z = z + U64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
        return z ^ (z >> U64(31))


def gen_key(seed, tag):
    return splitmix64(np.array([seed ^ tag], dtype=np.uint64))[0]


def gen_values(seed, tag, offset, n, bound):
    """float32 values (2u - 1) * bound, u = (splitmix64(key + i) >> 40) * 2^-24, i = offset .. offset + n - 1,
    computed in double and rounded once, as gen_value() does. bound may be an array (one per element)."""
    key = gen_key(seed, tag)
    out = np.empty(n, dtype=np.float32)
    chunk = 1 << 22
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        with np.errstate(over="ignore"):
            i = np.arange(offset + lo, offset + hi, dtype=np.uint64) + key
        u = (splitmix64(i) >> U64(40)).astype(np.float64) * (1.0 / 16777216.0)
        b = bound[lo:hi] if isinstance(bound, np.ndarray) else bound
        out[lo:hi] = ((2.0 * u - 1.0) * b).astype(np.float32)
    return out


def make_model(H, L, dev, generated=True):
    layers = []
    for l in range(1, L + 1):
        lin = torch.nn.Linear(H, H, bias=False)
        if generated:
            w = gen_values(SEED, TAG_WEIGHT + l, 0, H * H, math.sqrt(6.0 / H)).reshape(H, H)
            with torch.no_grad():
                lin.weight.copy_(torch.from_numpy(w))
        layers += [lin, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).to(dev)


def make_scaler(devtype):
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        return torch.amp.GradScaler(devtype)  # init 65536, growth 2, backoff 0.5, interval 2000
    if devtype == "cuda":
        return torch.cuda.amp.GradScaler()
    raise RuntimeError(f"torch {torch.__version__} has no GradScaler for {devtype}")


def train(H, L, B, prec, nsteps, dev, rank=0, world=1, wrap=None):
    """Trains ddpbench's model; returns per-step loss (mean over ranks), loss scale and skipped flags.
    wrap(model) -> model puts DDP around it. The loss recorded is computed as ddpbench records it: the
    fp32 difference y - t, squared and summed in double."""
    model = make_model(H, L, dev)
    if wrap:
        model = wrap(model)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    x = torch.from_numpy(gen_values(SEED, TAG_INPUT, rank * B * H, B * H, 1.0).reshape(B, H)).to(dev)
    t = torch.from_numpy(gen_values(SEED, TAG_TARGET, rank * B * H, B * H, 1.0).reshape(B, H)).to(dev)
    amp = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
    scaler = make_scaler(dev.type) if prec == "fp16" else None
    losses, scales, skipped = [], [], []
    for _ in range(nsteps):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=dev.type, dtype=amp or torch.bfloat16, enabled=amp is not None):
            y = model(x)
        if amp is not None and y.dtype != amp:
            raise RuntimeError(f"autocast ran nn.Linear in {y.dtype}, not {amp}, on {dev.type}")
        diff = y.float() - t
        loss = 0.5 * (diff ** 2).sum() / B
        rec = torch.tensor([0.5 * (diff.detach().double() ** 2).sum().item() / B], dtype=torch.float64)
        if world > 1:
            dist.all_reduce(rec)
            rec /= world
        losses.append(rec.item())
        if scaler:
            s = scaler.get_scale()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            scales.append(s)
            skipped.append(int(scaler.get_scale() < s))
        else:
            loss.backward()
            opt.step()
    out = {"loss": losses}
    if scaler:
        out["scale"] = scales
        out["skipped"] = skipped
    return out


def rel_diff(a, b):
    """The largest per-step relative difference |a - b| / |b|, as tests/mpi/test_conformance.c measures it."""
    return max(abs(x - y) / abs(y) if y else abs(x - y) for x, y in zip(a, b))


# ---- the cases ------------------------------------------------------------------------------------
# (H, L, B per rank, steps)
CPU_SHAPES = [(256, 3, 64, 12), (768, 5, 96, 12)]
GPU_SHAPES = [(1024, 4, 256, 20), (2048, 6, 512, 20), (768, 5, 96, 20)]
DDP2_SHAPE = (256, 3, 32, 10)
DDP2_BUCKET_MB = 0.25  # one 256 x 256 fp32 layer per bucket
DDP2_CASES = [("fp32", None), ("bf16", None), ("fp16", None), ("fp32", "fp16"), ("fp32", "bf16"), ("bf16", "bf16")]
BUCKET_SHAPES = [(1024, 4), (1500, 9), (2048, 10), (700, 13)]
BUCKET_CAPS = [None, 25, 50, 2.5]  # bucket_cap_mb; None = DDP's default
LARGE_BUCKET_CASES = [(8192, 8, None), (8192, 8, 25)]  # 2 GiB of parameters per rank: --small leaves them out
FIRST_BUCKET_CASES = [(2048, 10, 40), (1500, 9, 20)]  # (H, L, dist._DEFAULT_FIRST_BUCKET_BYTES in MiB)
HOOK_N = 4096


def hook_inputs(rank):
    """Rank r's fp32 inputs to the compress hooks: gen_value(key(42, TAG_FILL + r), i, 2^e), e = i % 161 - 140:
    from fp32 subnormals to 2^20 (past fp16's 65504)."""
    e = (np.arange(HOOK_N) % 161 - 140).astype(np.float64)
    return gen_values(SEED, TAG_FILL + rank, 0, HOOK_N, np.ldexp(1.0, e.astype(np.int64)))


def meta(dev_desc):
    return {"torch": torch.__version__, "numpy": np.__version__, "cuda": torch.version.cuda,
            "python": platform.python_version(), "device": dev_desc, "host_cpu": platform.processor() or platform.machine(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "generator": "tests/data/golden/gen_golden.py", "command": " ".join(sys.argv), "seed": SEED, "lr": LR}


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    print(f"wrote {path}", flush=True)


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---- one process: CPU and GPU losses -------------------------------------------------------------------
def losses_cpu():
    cases = []
    for H, L, B, n in CPU_SHAPES:
        for prec in ("fp32", "bf16", "fp16"):
            c = {"hidden": H, "layers": L, "batch": B, "steps": n, "precision": prec}
            try:
                c.update(train(H, L, B, prec, n, torch.device("cpu")))
            except Exception as ex:  # e.g. no CPU fp16 autocast/GradScaler in this torch
                c["unsupported"] = f"{type(ex).__name__}: {ex}".splitlines()[0][:300]
            log(f"cpu {H}x{L}x{B} {prec}: {'unsupported' if 'unsupported' in c else 'done'}")
            cases.append(c)
    doc = meta("cpu")
    doc["threads"] = torch.get_num_threads()
    doc["cases"] = cases
    return doc


class gpu_settings:
    """One equally valid PyTorch configuration of the CUDA GEMMs, applied for a with-block."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        m = torch.backends.cuda.matmul
        try:  # torch.backends.cuda.matmul raises AssertionError, not AttributeError, for a name it lacks
            bf16 = m.allow_bf16_reduced_precision_reduction
        except Exception:
            bf16 = None
        self.saved = (m.allow_fp16_reduced_precision_reduction, bf16)
        self.lib = torch.backends.cuda.preferred_blas_library() if hasattr(torch.backends.cuda, "preferred_blas_library") else None
        if self.name == "no_reduced_precision_reduction":
            m.allow_fp16_reduced_precision_reduction = False
            if self.saved[1] is not None:
                m.allow_bf16_reduced_precision_reduction = False
        elif self.name == "cublaslt":
            if self.lib is None:
                raise RuntimeError("torch.backends.cuda.preferred_blas_library is missing")
            torch.backends.cuda.preferred_blas_library("cublaslt")
        return self

    def __exit__(self, *a):
        m = torch.backends.cuda.matmul
        m.allow_fp16_reduced_precision_reduction = self.saved[0]
        if self.saved[1] is not None:
            m.allow_bf16_reduced_precision_reduction = self.saved[1]
        if self.lib is not None:
            try:
                torch.backends.cuda.preferred_blas_library(self.lib)
            except Exception:
                torch.backends.cuda.preferred_blas_library(str(self.lib).split(".")[-1].lower())


def losses_gpu():
    dev = torch.device("cuda", 0)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32 (ddpbench: --precision fp32)
    torch.backends.cudnn.allow_tf32 = False
    cases = []
    for H, L, B, n in GPU_SHAPES:
        for prec in ("fp32", "bf16", "fp16"):
            c = {"hidden": H, "layers": L, "batch": B, "steps": n, "precision": prec, "variants": {}}
            for v in ("default", "repeat", "no_reduced_precision_reduction", "cublaslt"):
                try:
                    with gpu_settings(v):
                        c["variants"][v] = train(H, L, B, prec, n, dev)
                    torch.cuda.synchronize()
                except Exception as ex:
                    c.setdefault("variants_unavailable", {})[v] = f"{type(ex).__name__}: {ex}".splitlines()[0][:300]
            if "default" not in c["variants"]:
                log(f"gpu {H}x{L}x{B} {prec}: no default run ({c['variants_unavailable']['default']})")
                cases.append(c)
                continue
            d = c["variants"]["default"]["loss"]
            c["spread"] = max(rel_diff(x["loss"], d) for x in c["variants"].values())
            c["repeat_bitwise"] = c["variants"].get("repeat", {}).get("loss") == d
            log(f"gpu {H}x{L}x{B} {prec}: spread {c['spread']:.3g} over {sorted(c['variants'])}, "
                f"repeat bitwise {c['repeat_bitwise']}")
            cases.append(c)
    doc = meta(torch.cuda.get_device_name(dev))
    doc["tf32"] = False
    doc["cases"] = cases
    return doc


# ---- two processes (gloo): buckets, compress hooks, DDP losses --------------------------------------------
def record_hook(state, bucket):
    """Records the bucket (step, index, bytes, layers) and reduces it as DDP's default does (allreduce_hook)."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    buf = bucket.buffer()
    layers = [state["layer_of"].get(p.data_ptr(), -1) for p in bucket.parameters()]
    state["log"].append({"step": state["step"], "index": bucket.index(), "bytes": buf.numel() * buf.element_size(),
                         "layers": layers})
    return default_hooks.allreduce_hook(None, bucket)


def bucket_case(H, L, cap_mb, first_mib, mode=None):
    """mode: None (DDP's defaults), "static_graph" or "find_unused_parameters" (set to True)."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    saved_first = dist._DEFAULT_FIRST_BUCKET_BYTES
    if first_mib is not None:
        dist._DEFAULT_FIRST_BUCKET_BYTES = int(first_mib * 1024 * 1024)
    try:
        model = make_model(H, L, torch.device("cpu"), generated=False)
        layer_of = {m.weight.data_ptr(): i // 2 + 1 for i, m in enumerate(model) if isinstance(m, torch.nn.Linear)}
        kw = {} if cap_mb is None else {"bucket_cap_mb": cap_mb}
        if mode:
            kw[mode] = True
        ddp = DDP(model, **kw)
        state = {"layer_of": layer_of, "log": [], "step": 0}
        ddp.register_comm_hook(state, record_hook)
        x = torch.ones(2, H)
        # Iteration 1: construction buckets; rebuilt at the 2nd forward (static_graph: 1.13 at the 3rd); one more
        # to see that they stay. Gradients are zeroed, not freed, so that 2 GiB are not faulted in again each time.
        nit = 4 if mode == "static_graph" else 3
        for s in range(nit):
            state["step"] = s
            ddp.zero_grad(set_to_none=False)
            ddp(x).sum().backward()
        per_step = []
        for s in range(nit):
            b = sorted((e for e in state["log"] if e["step"] == s), key=lambda e: e["index"])
            per_step.append([{"bytes": e["bytes"], "layers": e["layers"]} for e in b])
        steady_from = nit
        while steady_from > 1 and per_step[steady_from - 2] == per_step[-1]:
            steady_from -= 1
        rec = {"hidden": H, "layers": L, "bucket_cap_mb": cap_mb, "mode": mode,
               "first_bucket_mib": first_mib, "first_iteration": per_step[0], "rebuilt": per_step[-1],
               "steady_from_iteration": steady_from, "stable": per_step[-2] == per_step[-1], "iterations": nit}
        args = []
        if cap_mb is not None:
            args += ["--bucket-mb", repr(cap_mb)]
        if first_mib is not None:
            args += ["--first-bucket-mb", repr(first_mib)]
        rec["ddpbench_args"] = args
        try:
            ld = ddp._get_ddp_logging_data()
            for k in ("bucket_sizes", "rebuilt_bucket_sizes", "rebuilt_per_bucket_param_indices", "bucket_cap_bytes"):
                if k in ld:
                    rec["logger_" + k] = ld[k]
        except Exception:
            pass
        del ddp, model
        return rec
    finally:
        dist._DEFAULT_FIRST_BUCKET_BYTES = saved_first


def hooks_case():
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    class Bucket:  # what the hooks read of a GradBucket: its flat buffer
        def __init__(self, t):
            self.t = t

        def buffer(self):
            return self.t

    rank, world = dist.get_rank(), dist.get_world_size()
    out = {"n": HOOK_N, "world": world, "inputs": "gen_value(gen_key(42, TAG_FILL + rank), i, 2^(i % 161 - 140))"}
    for name, hook, dt in (("fp16", default_hooks.fp16_compress_hook, torch.float16),
                           ("bf16", default_hooks.bf16_compress_hook, torch.bfloat16)):
        try:
            try:
                fut = hook(None, Bucket(torch.from_numpy(hook_inputs(rank).copy())))
                res = fut.wait()
                res = res[0] if isinstance(res, (list, tuple)) else res
                out[name] = {"collective": "the hook itself, gloo allreduce"}
            except Exception as ex:
                # gloo without this 16-bit type (or a hook that insists on NCCL): the hook's own steps with
                # PyTorch ops - cast, divide by the world size, sum over the ranks in fp32 rounded once to 16 bits
                # (what a 2-rank ring allreduce computes), cast back.
                why = f"{type(ex).__name__}: {ex}".splitlines()[0][:200]
                mine = torch.from_numpy(hook_inputs(rank).copy()).to(dt).div_(world)
                parts_ = [torch.empty_like(mine.float()) for _ in range(world)]
                dist.all_gather(parts_, mine.float())
                res = sum(parts_[1:], parts_[0].clone()).to(dt).float()
                out[name] = {"collective": f"emulated: hook cast + divide, fp32 sum rounded once ({why})"}
            out[name]["result_bits"] = res.float().numpy().view(np.uint32).tolist()
            # How many elements would differ had the hook divided before casting: the data must show the order.
            ins = [torch.from_numpy(hook_inputs(r)) for r in range(world)]
            cast_first = sum(i.to(dt) / world for i in ins).float() if world == 2 else None
            div_first = sum((i / world).to(dt) for i in ins).float() if world == 2 else None
            if cast_first is not None:
                same = (cast_first == div_first) | (torch.isnan(cast_first) & torch.isnan(div_first))
                out[name]["order_sensitive_elements"] = int((~same).sum())
        except Exception as ex:
            out[name] = {"unsupported": f"{type(ex).__name__}: {ex}".splitlines()[0][:300]}
    return out


def ddp2_case(prec, hook_name):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel as DDP
    H, L, B, n = DDP2_SHAPE
    hook = {"fp16": default_hooks.fp16_compress_hook, "bf16": default_hooks.bf16_compress_hook}.get(hook_name)

    def wrap(m):
        d = DDP(m, bucket_cap_mb=DDP2_BUCKET_MB)
        if hook:
            d.register_comm_hook(None, hook)
        return d

    c = {"hidden": H, "layers": L, "batch": B, "steps": n, "precision": prec, "grad_comm": hook_name or "fp32",
         "bucket_cap_mb": DDP2_BUCKET_MB, "world": dist.get_world_size()}
    try:
        c.update(train(H, L, B, prec, n, torch.device("cpu"), dist.get_rank(), dist.get_world_size(), wrap))
    except Exception as ex:
        c["unsupported"] = f"{type(ex).__name__}: {ex}".splitlines()[0][:300]
    return c


def worker(rank, world, store_dir, parts, results_path, small):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(max(1, min(8, (os.cpu_count() or 2) // world)))
    dist.init_process_group("gloo", init_method="file://" + os.path.join(store_dir, "store"), rank=rank,
                            world_size=world)
    res = {}
    if "buckets" in parts:
        res["buckets"] = []
        table = [(H, L, cap) for H, L in BUCKET_SHAPES for cap in BUCKET_CAPS] + ([] if small else LARGE_BUCKET_CASES)
        for H, L, cap in table:
            res["buckets"].append(bucket_case(H, L, cap, None))
            if rank == 0:
                log(f"buckets {H}x{L} cap {cap}: {[b['bytes'] for b in res['buckets'][-1]['rebuilt']]}")
        for H, L, first in FIRST_BUCKET_CASES:
            res["buckets"].append(bucket_case(H, L, None, first))
            if rank == 0:
                log(f"buckets {H}x{L} first {first} MiB: {[b['bytes'] for b in res['buckets'][-1]['rebuilt']]}")
        for H, L in BUCKET_SHAPES:
            for mode in ("static_graph", "find_unused_parameters"):
                res["buckets"].append(bucket_case(H, L, None, None, mode))
                if rank == 0:
                    log(f"buckets {H}x{L} {mode}: {[b['bytes'] for b in res['buckets'][-1]['rebuilt']]}")
    if "hooks" in parts:
        res["hooks"] = hooks_case()
        if rank == 0:
            log("compress hooks done")
    if "ddp2" in parts:
        res["ddp2"] = []
        for prec, hook in DDP2_CASES:
            res["ddp2"].append(ddp2_case(prec, hook))
            if rank == 0:
                log(f"ddp2 {prec} grad_comm {hook or 'fp32'}: {'unsupported' if 'unsupported' in res['ddp2'][-1] else 'done'}")
    dist.barrier()
    if rank == 0:
        with open(results_path, "w") as f:
            json.dump(res, f)
    dist.destroy_process_group()


def two_process_parts(parts, out, small):
    with tempfile.TemporaryDirectory(prefix="ddpbench-golden-") as tmp:
        results = os.path.join(tmp, "results.json")
        mp.spawn(worker, args=(2, tmp, parts, results, small), nprocs=2, join=True)
        with open(results) as f:
            res = json.load(f)
    m = meta("cpu, 2 processes, gloo")
    if "buckets" in res:
        write_json(os.path.join(out, "buckets.json"), dict(m, world=2, cases=res["buckets"]))
    if "hooks" in res:
        write_json(os.path.join(out, "hooks.json"), dict(m, **res["hooks"]))
    if "ddp2" in res:
        write_json(os.path.join(out, "ddp2_cpu.json"), dict(m, world=2, cases=res["ddp2"]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="folder for the golden files (created)")
    p.add_argument("--parts", default="buckets,hooks,ddp2,cpu,gpu",
                   help="comma list of buckets,hooks,ddp2,cpu,gpu (default all; gpu is skipped without CUDA)")
    p.add_argument("--small", action="store_true", help="leave out the 8192 x 8 bucket case (2 GiB per rank): for trying the script out")
    a = p.parse_args()
    parts = set(a.parts.split(","))
    unknown = parts - {"buckets", "hooks", "ddp2", "cpu", "gpu"}
    if unknown:
        p.error(f"unknown part(s) {sorted(unknown)}")
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    log(f"torch {torch.__version__}, numpy {np.__version__}, cuda {torch.version.cuda}, "
        f"GPU {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none'}")
    if parts & {"buckets", "hooks", "ddp2"}:
        two_process_parts(parts & {"buckets", "hooks", "ddp2"}, a.out, a.small)
    if "cpu" in parts:
        write_json(os.path.join(a.out, "losses_cpu.json"), losses_cpu())
    if "gpu" in parts:
        if torch.cuda.is_available():
            write_json(os.path.join(a.out, "losses_gpu.json"), losses_gpu())
        else:
            log("no CUDA device: losses_gpu.json not written")
    log(f"done in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
