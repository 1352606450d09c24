#!/usr/bin/env python3
"""gen_fsdp_golden.py: records PyTorch FSDP2's side of ddpbench's FSDP conformance test as fsdp_cpu.json.

The model, weights, data and loss are gen_golden.py's (imported from this folder, not copied): splitmix64
weights and data (seed 42), L x nn.Linear(H, H, bias=False) + ReLU, loss 0.5 * sum((y.float() - t)^2) / B per
rank, plain SGD lr 0.01 (momentum 0.9 in one case). Rank r trains on global samples r*B .. r*B+B-1 (the offsets
gen_golden.py gives DDP ranks). FSDP2 (torch.distributed.fsdp.fully_shard) is applied bottom-up as
docs/fsdp.md section 1 describes: fully_shard(layer) on each Linear, then fully_shard(model) on the container
(the root), default reshard_after_forward, on a 1-D CPU mesh over W gloo processes (torch.multiprocessing; one
spawn per case, so a case that fails or hangs cannot spoil the others). Precisions: fp32 (no
MixedPrecisionPolicy), bf16 and fp16 (MixedPrecisionPolicy(param_dtype=bf16/fp16, reduce_dtype=fp32); fp16
with torch.amp.GradScaler's defaults). Per case it records:

  loss            per step, the mean over ranks of each rank's loss (as ddp2_cpu.json), and each rank's own
  shards          per layer and rank: first real row, real rows, padded shard numel (read from FSDP itself;
                  the file says which attributes), and whether the local shard holds those generated rows
  collectives     steps 1 and 2 on rank 0, in issue order: kind, input/output numel, dtype, reduce op, read
                  by wrapping the torch.distributed (and functional-collective) functions FSDP2 calls
  reduction       "avg" (FSDP2's default ReduceOp.AVG) or "sum, pre X post Y": gloo has no working AVG, so
                  when a probe shows AVG does not average, FSDPModule.set_force_sum_reduction_for_comms(True)
                  makes FSDP2 sum and divide itself (docs/fsdp.md section 6.3). In the copy of
                  ProcessGroupGloo.cpp read, AVG raises in an allreduce while reduce_scatter_tensor (an allreduce
                  of a copy) drops the op and sums: FSDP2's default would silently give W times the gradient.
  final_weights   per layer, the float64 sum (and sum of |w|) of the full trained weight (DTensor.full_tensor())
  reference       fp32 cases: the same training as one plain PyTorch process on the W ranks' data together,
                  and the largest per-step relative difference from it (a self-check of the averaging)

Every step that a PyTorch version might not support is caught: its error text goes into the case ("errors",
"unsupported") and the other cases still run.

  python3 tests/data/golden/gen_fsdp_golden.py --out tests/data/golden            # all cases
  python3 tests/data/golden/gen_fsdp_golden.py --out /tmp/g --small               # a few cases, to try it
  python3 tests/data/golden/gen_fsdp_golden.py --out /tmp/g --cases fp32_w2,pad6_w4

Needs only the standard library, numpy and torch (CPU is enough). About 1-2 minutes on 16 cores.
"""
import argparse
import datetime
import json
import math
import os
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import gen_golden as gg  # noqa: E402  (splitmix64/gen_values, make_model, make_scaler, meta, write_json, ...)

GENERATOR = "tests/data/golden/gen_fsdp_golden.py"
CASE_TIMEOUT_S = 240  # the parent kills a case's processes after this (a hang, not a slow case)
PG_TIMEOUT_S = 120  # gloo's own timeout, so that a rank waiting on a failed peer raises instead of hanging


def _case(name, world, H, prec="fp32", L=3, B=32, steps=10, momentum=0.0):
    return {"name": name, "world": world, "hidden": H, "layers": L, "batch": B, "steps": steps,
            "precision": prec, "momentum": momentum}


CASES = ([_case(f"fp32_w{w}", w, 256) for w in (2, 3, 4)]
         + [_case(f"bf16_w{w}", w, 256, "bf16") for w in (2, 3, 4)]
         + [_case("pad254_w4", 4, 254), _case("pad10_w4", 4, 10), _case("pad6_w4", 4, 6)]
         + [_case("momentum_w2", 2, 256, momentum=0.9)]
         + [_case(f"fp16_w{w}", w, 256, "fp16") for w in (2, 4)])
SMALL = ["fp32_w2", "bf16_w2", "pad6_w4", "fp16_w2"]
RECORD_STEPS = (1, 2)

SHARD_SOURCE = ("rows: the registered parameter's DTensor local tensor, lin.weight.to_local().shape[0]; "
                "padded_shard_numel: FSDPParam._sharded_param_data.numel() (the padded flat storage), else "
                "prod(FSDPParam.padded_sharded_param_size); padded_sharded_size: FSDPParam.padded_sharded_param_size; "
                "first_row: torch.distributed.tensor._utils.compute_local_shape_and_global_offset on the DTensor "
                "(first_row_source says when it fell back to min(rank*c, H), c = padded rows); "
                "first_row_by_content: the generated weight row the local shard's first row equals (null: 0 rows); "
                "matches_generated_rows: the local shard equals rows first_row .. first_row+rows-1 of the weight. "
                "FSDPParams are read from module._get_fsdp_state()._fsdp_param_groups (or ._fsdp_param_group).")
COLL_SOURCE = ("wrappers installed on rank 0..W-1 just before training and removed after, around "
               "torch.distributed.{all_gather_into_tensor,_all_gather_base,reduce_scatter_tensor,_reduce_scatter_base,"
               "all_reduce} (in both torch.distributed and torch.distributed.distributed_c10d) and "
               "torch.distributed._functional_collectives.{all_reduce,all_gather_tensor,reduce_scatter_tensor} "
               "(DTensor's found_inf all-reduce under GradScaler goes through the latter); only the outermost call "
               "of nested wrapped calls is recorded. A collective issued some other way (straight to the C++ "
               "process group) would not appear. dtype is the input's; op is null for gathers.")


def errtext(ex):
    return f"{type(ex).__name__}: {ex}".strip().splitlines()[0][:400] if str(ex).strip() else type(ex).__name__


def dtname(dt):
    return None if dt is None else str(dt).replace("torch.", "")


def opname(op):
    """A reduce op (RedOpType, ReduceOp, or functional collectives' string) as a lower-case name."""
    if op is None:
        return None
    if isinstance(op, str):
        return op.lower()
    name = getattr(op, "name", None)
    if isinstance(name, str):
        return name.lower()
    s = str(op)
    return s.split(".")[-1].lower() if "." in s else s.lower()


# ---- the collective recorder --------------------------------------------------------------------------
class Recorder:
    """Wraps the torch.distributed functions FSDP2 calls and records, while a step is selected, each call's
    kind, sizes, dtype and op. emulate_avg: run a ReduceOp.AVG reduce-scatter as SUM then divide by W (only
    used when the backend cannot average and FSDP2 has no force-sum switch)."""

    DIST = [("all_gather_into_tensor", "all_gather", ("output_tensor", "input_tensor")),
            ("_all_gather_base", "all_gather", ("output_tensor", "input_tensor")),
            ("reduce_scatter_tensor", "reduce_scatter", ("output", "input")),
            ("_reduce_scatter_base", "reduce_scatter", ("output", "input")),
            ("all_reduce", "all_reduce", ("tensor",))]
    FUNCOL = [("all_reduce", "all_reduce"), ("all_gather_tensor", "all_gather"),
              ("reduce_scatter_tensor", "reduce_scatter")]

    def __init__(self, world):
        self.world = world
        self.step = None
        self.log = []
        self.saved = []
        self.depth = threading.local()
        self.emulate_avg = False
        self.install_errors = []

    def install(self):
        mods = [dist]
        try:
            import torch.distributed.distributed_c10d as c10d
            mods.append(c10d)
        except Exception as ex:
            self.install_errors.append(f"distributed_c10d: {errtext(ex)}")
        for mod in mods:
            for name, kind, argn in self.DIST:
                orig = getattr(mod, name, None)
                if orig is None or getattr(orig, "_ddpbench_wrapped", False):
                    continue
                self._patch(mod, name, self._wrap_dist(orig, name, kind, argn))
        try:
            import torch.distributed._functional_collectives as funcol
            for name, kind in self.FUNCOL:
                orig = getattr(funcol, name, None)
                if orig is not None and not getattr(orig, "_ddpbench_wrapped", False):
                    self._patch(funcol, name, self._wrap_funcol(orig, name, kind))
        except Exception as ex:
            self.install_errors.append(f"functional collectives: {errtext(ex)}")

    def remove(self):
        for mod, name, orig in reversed(self.saved):
            setattr(mod, name, orig)
        self.saved = []

    def _patch(self, mod, name, fn):
        self.saved.append((mod, name, getattr(mod, name)))
        fn._ddpbench_wrapped = True
        setattr(mod, name, fn)

    def _enter(self):
        d = getattr(self.depth, "n", 0)
        self.depth.n = d + 1
        return d == 0

    def _exit(self):
        self.depth.n -= 1

    def _add(self, **kw):
        if self.step is not None:
            kw["step"] = self.step
            self.log.append(kw)

    def _wrap_dist(self, orig, name, kind, argn):
        rec = self

        def get(args, kwargs, i, key, default=None):
            if len(args) > i:
                return args[i]
            return kwargs.get(key, default)

        def wrapper(*args, **kwargs):
            outer = rec._enter()
            try:
                if kind == "all_reduce":
                    t = get(args, kwargs, 0, "tensor")
                    op = get(args, kwargs, 1, "op")
                    inp = out = t
                else:
                    out = get(args, kwargs, 0, argn[0])
                    inp = get(args, kwargs, 1, argn[1])
                    op = get(args, kwargs, 2, "op") if kind == "reduce_scatter" else None
                if kind != "all_gather" and op is None:
                    op = dist.ReduceOp.SUM  # the default of all_reduce / reduce_scatter_tensor
                entry = None
                if outer:
                    entry = {"kind": kind, "fn": name,
                             "input_numel": int(inp.numel()) if hasattr(inp, "numel") else None,
                             "output_numel": int(out.numel()) if hasattr(out, "numel") else None,
                             "dtype": dtname(getattr(inp, "dtype", None)), "op": opname(op)}
                    rec._add(**entry)
                if (outer and rec.emulate_avg and kind == "reduce_scatter" and opname(op) == "avg"):
                    group = get(args, kwargs, 3, "group")
                    async_op = bool(get(args, kwargs, 4, "async_op", False))
                    work = orig(out, inp, op=dist.ReduceOp.SUM, group=group, async_op=async_op)
                    if work is not None and async_op:
                        work.wait()
                    out.div_(rec.world)
                    if rec.step is not None and rec.log:
                        rec.log[-1]["emulated"] = "AVG run as SUM then divide by W in the recorder"
                    return None
                return orig(*args, **kwargs)
            finally:
                rec._exit()

        return wrapper

    def _wrap_funcol(self, orig, name, kind):
        rec = self

        def wrapper(*args, **kwargs):
            outer = rec._enter()
            try:
                res = orig(*args, **kwargs)
                if outer:
                    t = args[0] if args else kwargs.get("self", kwargs.get("input"))
                    op = None
                    if kind != "all_gather":
                        op = args[1] if len(args) > 1 else kwargs.get("reduceOp")
                    rec._add(kind=kind, fn="_functional_collectives." + name,
                             input_numel=int(t.numel()) if hasattr(t, "numel") else None,
                             output_numel=int(res.numel()) if hasattr(res, "numel") else None,
                             dtype=dtname(getattr(t, "dtype", None)), op=opname(op))
                return res
            finally:
                rec._exit()

        return wrapper


# ---- FSDP2 helpers ---------------------------------------------------------------------------------
def fsdp_api():
    """fully_shard, MixedPrecisionPolicy, FSDPModule from wherever this PyTorch keeps them."""
    try:
        from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard
        return fully_shard, MixedPrecisionPolicy, FSDPModule
    except ImportError:
        from torch.distributed._composable.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard
        return fully_shard, MixedPrecisionPolicy, FSDPModule


def fsdp_state(module):
    if hasattr(module, "_get_fsdp_state"):
        return module._get_fsdp_state()
    from torch.distributed.fsdp._fully_shard._fsdp_state import _get_module_fsdp_state
    return _get_module_fsdp_state(module)


def fsdp_params(module):
    state = fsdp_state(module)
    groups = getattr(state, "_fsdp_param_groups", None)
    if groups is None:
        g = getattr(state, "_fsdp_param_group", None)
        groups = [g] if g is not None else []
    return [fp for g in groups for fp in g.fsdp_params]


def probe_avg(world, rank):
    """What a ReduceOp.AVG reduce-scatter does on this backend, on a group of its own: 'avg' (averages),
    'sum' (the op is ignored and it sums), 'error: ...', or 'wrong: ...'. Rank r gives r + 1 everywhere."""
    res = {}
    try:
        g = dist.new_group(backend="gloo")
    except Exception as ex:
        return {"reduce_scatter_avg": f"error: new_group: {errtext(ex)}"}
    avg, total = (world + 1) / 2.0, world * (world + 1) / 2.0
    for what, op in (("reduce_scatter_sum", dist.ReduceOp.SUM), ("reduce_scatter_avg", dist.ReduceOp.AVG)):
        try:
            out = torch.zeros(2)
            dist.reduce_scatter_tensor(out, torch.full((2 * world,), float(rank + 1)), op=op, group=g)
            v = out[0].item()
            res[what] = "avg" if abs(v - avg) < 1e-6 else "sum" if abs(v - total) < 1e-6 else f"wrong: {v}"
        except Exception as ex:
            res[what] = f"error: {errtext(ex)}"
    try:
        dist.destroy_process_group(g)
    except Exception:
        pass
    return res


def divide_factors(world, reduce_dtype, force_sum):
    """FSDP2's own (pre, post, reduce-scatter op) from _get_gradient_divide_factors, if it can be called."""
    try:
        from torch.distributed.fsdp._fully_shard._fsdp_collectives import _get_gradient_divide_factors
        pg = dist.group.WORLD
        # (reduce_scatter_group, all_reduce_group, reduce_dtype, device_type, factor, force_sum) in the copies
        # read; another signature raises TypeError and the caller falls back to docs/fsdp.md's rule.
        r = _get_gradient_divide_factors(pg, None, reduce_dtype, "cpu", None, force_sum)
        return {"pre": r[0], "post": r[1], "reduce_scatter_op": opname(r[2]), "source": "_get_gradient_divide_factors"}
    except Exception as ex:
        return {"error": errtext(ex)}


def describe(pre, post):
    f = lambda v: "none" if v is None else (repr(int(v)) if float(v).is_integer() else repr(float(v)))  # noqa: E731
    return f"sum, pre {f(pre)} post {f(post)}"


def shard_layout(lin, full_w, rank, world):
    """One layer's shard on this rank (see SHARD_SOURCE)."""
    H = full_w.shape[0]
    d = {"rank": rank}
    p = lin.weight
    local = p.to_local() if hasattr(p, "to_local") else p._local_tensor
    d["local_shape"] = list(local.shape)
    d["rows"] = int(local.shape[0])
    fps = fsdp_params(lin)
    if fps:
        fp = fps[0]
        pss = getattr(fp, "padded_sharded_param_size", None)
        d["padded_sharded_size"] = list(pss) if pss is not None else None
        data = getattr(fp, "_sharded_param_data", None)
        if data is not None:
            d["padded_shard_numel"] = int(data.numel())
        elif pss is not None:
            d["padded_shard_numel"] = int(math.prod(pss))
        ss = getattr(fp, "sharded_size", None)
        d["sharded_size"] = list(ss) if ss is not None else None
    c = ((d.get("padded_sharded_size") or [None])[0]) or -(-H // world)
    try:
        from torch.distributed.tensor._utils import compute_local_shape_and_global_offset
        shape, off = compute_local_shape_and_global_offset(p.shape, p.device_mesh, p.placements)
        d["first_row"] = int(off[0])
        d["first_row_source"] = "compute_local_shape_and_global_offset"
        if list(shape) != d["local_shape"]:
            d["dtensor_local_shape_disagrees"] = list(shape)
    except Exception as ex:
        d["first_row"] = min(rank * c, H)
        d["first_row_source"] = f"min(rank*c, H) ({errtext(ex)})"
    loc = local.detach().float()
    d["first_row_by_content"] = None
    if d["rows"] > 0:
        hits = (full_w == loc[0]).all(dim=1).nonzero().flatten().tolist()
        d["first_row_by_content"] = hits[0] if hits else -1
    fr = d["first_row"]
    d["matches_generated_rows"] = bool(torch.equal(loc, full_w[fr:fr + d["rows"]])) if fr + d["rows"] <= H else False
    return d


# ---- one case, one rank ---------------------------------------------------------------------------------
def run_case(case, rank, world):
    from torch.distributed.device_mesh import init_device_mesh
    fully_shard, MixedPrecisionPolicy, FSDPModule = fsdp_api()
    H, L, B, n, prec, mom = (case[k] for k in ("hidden", "layers", "batch", "steps", "precision", "momentum"))
    dev = torch.device("cpu")
    out = {"rank": rank}
    pdt = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
    out["probe"] = probe_avg(world, rank)

    model = gg.make_model(H, L, dev)
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    full_w = [lin.weight.detach().clone() for lin in linears]
    mesh = init_device_mesh("cpu", (world,))
    kw = {"mesh": mesh}
    if pdt is not None:
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=pdt, reduce_dtype=torch.float32)
    for lin in linears:
        fully_shard(lin, **kw)
    fully_shard(model, **kw)
    out["fsdp_modules"] = sum(isinstance(m, FSDPModule) for m in model.modules())

    # Reduction: FSDP2's AVG where the backend averages; else FSDP2's own force-sum switch; else emulate.
    rdt = torch.float32
    avg_ok = out["probe"].get("reduce_scatter_avg") == "avg"
    rec = Recorder(world)
    if avg_ok:
        out["reduction"] = "avg"
        out["reduction_how"] = "FSDP2 default (ReduceOp.AVG); the backend averages"
    else:
        mods = [m for m in model.modules() if isinstance(m, FSDPModule)]
        if mods and all(hasattr(m, "set_force_sum_reduction_for_comms") for m in mods):
            for m in mods:  # not recursive in the copies read: set on every FSDP module
                m.set_force_sum_reduction_for_comms(True)
            f = divide_factors(world, rdt, True)
            pre, post = (f["pre"], f["post"]) if "pre" in f else (None, float(world))
            out["reduction"] = describe(pre, post)
            out["reduction_how"] = ("FSDPModule.set_force_sum_reduction_for_comms(True) on every FSDP module "
                                    f"(backend AVG probe: {out['probe'].get('reduce_scatter_avg')}); factors from "
                                    + (f.get("source") or f"docs/fsdp.md 6.3 ({f.get('error')})"))
            out["divide_factors"] = f
        else:
            rec.emulate_avg = True
            out["reduction"] = "avg (emulated: sum then divide by W)"
            out["reduction_how"] = ("no set_force_sum_reduction_for_comms in this PyTorch: the recorder runs "
                                    "FSDP2's AVG reduce-scatter as SUM and divides the output by W")

    shards = []
    for l, (lin, w) in enumerate(zip(linears, full_w), 1):
        try:
            shards.append(dict(shard_layout(lin, w, rank, world), layer=l))
        except Exception as ex:
            shards.append({"layer": l, "rank": rank, "error": errtext(ex)})
    out["shards"] = shards

    opt = torch.optim.SGD(model.parameters(), lr=gg.LR, momentum=mom) if mom else \
        torch.optim.SGD(model.parameters(), lr=gg.LR)
    x = torch.from_numpy(gg.gen_values(gg.SEED, gg.TAG_INPUT, rank * B * H, B * H, 1.0).reshape(B, H))
    t = torch.from_numpy(gg.gen_values(gg.SEED, gg.TAG_TARGET, rank * B * H, B * H, 1.0).reshape(B, H))
    scaler = gg.make_scaler("cpu") if prec == "fp16" else None
    losses, scales, skipped, ydt = [], [], [], None
    rec.install()
    out["recorder_install_errors"] = rec.install_errors
    try:
        for s in range(1, n + 1):
            rec.step = s if s in RECORD_STEPS else None
            opt.zero_grad(set_to_none=True)
            y = model(x)
            ydt = y.dtype
            diff = y.float() - t
            loss = 0.5 * (diff ** 2).sum() / B
            losses.append(0.5 * (diff.detach().double() ** 2).sum().item() / B)
            if scaler is not None:
                sc = scaler.get_scale()
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
                scales.append(sc)
                skipped.append(int(scaler.get_scale() < sc))
            else:
                loss.backward()
                opt.step()
            rec.step = None
    finally:
        rec.step = None
        rec.remove()
    out["loss"] = losses
    out["output_dtype"] = dtname(ydt)
    if scaler is not None:
        out["scale"], out["skipped"] = scales, skipped
    out["collectives"] = {f"step{s}": [e for e in rec.log if e["step"] == s] for s in RECORD_STEPS}
    for v in out["collectives"].values():
        for e in v:
            e.pop("step", None)

    sums, abs_sums = [], []
    for lin in linears:
        w = lin.weight
        full = w.full_tensor() if hasattr(w, "full_tensor") else w
        full = full.detach().double()
        sums.append(full.sum().item())
        abs_sums.append(full.abs().sum().item())
    out["final_weight_sum"], out["final_weight_abs_sum"] = sums, abs_sums
    return out


def worker(rank, world, store_dir, case, out_dir):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(max(1, min(8, (os.cpu_count() or 2) // world)))
    res = {"rank": rank}
    try:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(store_dir, "store"), rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=PG_TIMEOUT_S))
    except Exception as ex:
        res["error"] = f"init_process_group: {errtext(ex)}"
        _dump(res, out_dir, rank)
        return
    try:
        res = run_case(case, rank, world)
    except Exception as ex:
        res["error"] = errtext(ex)
        res["traceback"] = traceback.format_exc().splitlines()[-12:]
    _dump(res, out_dir, rank)
    # Every rank past its last collective, then out without tearing gloo down: its teardown aborted a rank
    # now and then ("terminate called without an active exception", PyTorch 2.11 on CPU) after the results
    # were written, which the parent then recorded as the case's error.
    try:
        dist.barrier()
    except Exception:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _dump(res, out_dir, rank):
    with open(os.path.join(out_dir, f"rank{rank}.json.tmp"), "w") as f:
        json.dump(res, f)
    os.replace(os.path.join(out_dir, f"rank{rank}.json.tmp"), os.path.join(out_dir, f"rank{rank}.json"))


# ---- the parent: spawn, merge, reference -------------------------------------------------------------------
def spawn_case(case):
    """Runs one case on W fresh processes; returns the per-rank results (None for a rank that wrote none)
    and an error text for the spawn itself (timeout, crash) or None."""
    W = case["world"]
    with tempfile.TemporaryDirectory(prefix="ddpbench-fsdp-golden-") as tmp:
        err = None
        try:
            ctx = mp.spawn(worker, args=(W, tmp, case, tmp), nprocs=W, join=False)
            deadline = time.time() + CASE_TIMEOUT_S
            while not ctx.join(timeout=5):
                if time.time() > deadline:
                    for p in ctx.processes:  # this case's own processes
                        if p.is_alive():
                            p.kill()
                    err = f"timed out after {CASE_TIMEOUT_S} s; its processes were killed"
                    break
        except Exception as ex:
            err = f"spawn: {errtext(ex)}"
        ranks = []
        for r in range(W):
            path = os.path.join(tmp, f"rank{r}.json")
            try:
                with open(path) as f:
                    ranks.append(json.load(f))
            except Exception:
                ranks.append(None)
    return ranks, err


def reference(case):
    """fp32: one plain PyTorch process training on the W ranks' samples together, loss / (W*B): what FSDP's
    averaged gradients should reproduce up to summation order."""
    H, L, B, n, W, mom = (case[k] for k in ("hidden", "layers", "batch", "steps", "world", "momentum"))
    model = gg.make_model(H, L, torch.device("cpu"))
    opt = torch.optim.SGD(model.parameters(), lr=gg.LR, momentum=mom) if mom else \
        torch.optim.SGD(model.parameters(), lr=gg.LR)
    x = torch.from_numpy(gg.gen_values(gg.SEED, gg.TAG_INPUT, 0, W * B * H, 1.0).reshape(W * B, H))
    t = torch.from_numpy(gg.gen_values(gg.SEED, gg.TAG_TARGET, 0, W * B * H, 1.0).reshape(W * B, H))
    losses = []
    for _ in range(n):
        opt.zero_grad(set_to_none=True)
        diff = model(x).float() - t
        loss = 0.5 * (diff ** 2).sum() / (W * B)
        losses.append(0.5 * (diff.detach().double() ** 2).sum().item() / (W * B))
        loss.backward()
        opt.step()
    sums = [m.weight.detach().double().sum().item() for m in model if isinstance(m, torch.nn.Linear)]
    return losses, sums


def merge(case, ranks, err):
    W = case["world"]
    c = dict(case)
    pdt = {"bf16": "bfloat16", "fp16": "float16"}.get(case["precision"])
    c["param_dtype"] = pdt or "float32"
    c["reduce_dtype"] = "float32"
    c["mp_policy"] = (f"MixedPrecisionPolicy(param_dtype={pdt}, reduce_dtype=float32)" if pdt else None)
    c["grad_scaler"] = "torch.amp.GradScaler('cpu') defaults" if case["precision"] == "fp16" else None
    c["data"] = "rank r: global samples r*B .. r*B+B-1 (gen_values offsets r*B*H)"
    errors = {}
    if err:
        errors["spawn"] = err
    for r, res in enumerate(ranks):
        if res is None:
            errors[str(r)] = "no result written (crashed or killed)"
        elif "error" in res:
            errors[str(r)] = res["error"]
            if res.get("traceback"):
                errors[f"{r}_traceback"] = res["traceback"]
    r0 = ranks[0] if ranks and ranks[0] else {}
    for k in ("reduction", "reduction_how", "divide_factors", "probe", "output_dtype", "fsdp_modules",
              "recorder_install_errors"):
        if k in r0:
            c[k] = r0[k]
    ok = [res for res in ranks if res and "loss" in res]
    if len(ok) == W and len({len(res["loss"]) for res in ok}) == 1:
        c["rank_loss"] = [res["loss"] for res in ok]
        c["loss"] = [sum(res["loss"][i] for res in ok) / W for i in range(len(ok[0]["loss"]))]
    if "scale" in r0:
        c["scale"], c["skipped"] = r0["scale"], r0["skipped"]
    shards = []
    for l in range(1, case["layers"] + 1):
        per = []
        for r, res in enumerate(ranks):
            got = [s for s in (res or {}).get("shards", []) if s.get("layer") == l]
            per.append(got[0] if got else {"rank": r, "error": "missing"})
        shards.append({"layer": l, "ranks": per})
    c["shards"] = shards
    if "collectives" in r0:
        c["collectives_rank0"] = r0["collectives"]
    if "final_weight_sum" in r0:
        c["final_weight_sum"], c["final_weight_abs_sum"] = r0["final_weight_sum"], r0["final_weight_abs_sum"]
    if case["precision"] == "fp32":
        try:
            ref_loss, ref_sums = reference(case)
            c["reference"] = {"what": "one plain PyTorch process, the W ranks' samples together, loss / (W*B)",
                              "loss": ref_loss, "final_weight_sum": ref_sums}
            if "loss" in c:
                c["reference"]["max_rel_diff"] = gg.rel_diff(c["loss"], ref_loss)
        except Exception as ex:
            c["reference"] = {"error": errtext(ex)}
    if errors:
        c["errors"] = errors
    if "loss" not in c:
        c["unsupported"] = next((v for k, v in errors.items() if not k.endswith("_traceback")), "no losses")
    return c


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="folder for fsdp_cpu.json (created)")
    p.add_argument("--small", action="store_true", help=f"only {','.join(SMALL)}: for trying the script out")
    p.add_argument("--cases", help="comma list of case names (default all): " + ",".join(c["name"] for c in CASES))
    a = p.parse_args()
    names = [c["name"] for c in CASES]
    want = a.cases.split(",") if a.cases else (SMALL if a.small else names)
    unknown = [w for w in want if w not in names]
    if unknown:
        p.error(f"unknown case(s) {unknown}; known: {','.join(names)}")
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    gg.log(f"torch {torch.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs; cases {','.join(want)}")
    cases = []
    for case in (c for c in CASES if c["name"] in want):
        t1 = time.time()
        ranks, err = spawn_case(case)
        c = merge(case, ranks, err)
        c["elapsed_s"] = round(time.time() - t1, 1)
        cases.append(c)
        ref = c.get("reference", {}).get("max_rel_diff")
        gg.log(f"{case['name']}: {'unsupported: ' + c['unsupported'] if 'unsupported' in c else 'done'}"
               f"{', reduction ' + c['reduction'] if 'reduction' in c else ''}"
               f"{f', vs reference {ref:.3g}' if ref is not None else ''}"
               f"{', errors ' + str(sorted(c['errors'])) if 'errors' in c else ''} ({c['elapsed_s']} s)")
    doc = gg.meta("cpu, W processes (torch.multiprocessing), gloo, FSDP2 fully_shard")
    doc["generator"] = GENERATOR
    doc["command"] = " ".join([os.path.relpath(sys.argv[0]) if os.path.exists(sys.argv[0]) else sys.argv[0]]
                              + sys.argv[1:])
    doc["python_command"] = "python3 " + doc["command"]
    doc["fsdp_setup"] = ("fully_shard(layer, mesh=init_device_mesh('cpu', (W,))[, mp_policy]) on each Linear, then "
                         "fully_shard(model, same) on the nn.Sequential root; default reshard_after_forward")
    doc["loss_definition"] = "per step: mean over ranks of 0.5 * sum((y.float() - t)^2) / B, summed in double"
    doc["shard_layout_source"] = SHARD_SOURCE
    doc["collectives_source"] = COLL_SOURCE
    doc["collectives_steps"] = list(RECORD_STEPS)
    doc["reduction_rule"] = ("'avg': FSDP2's ReduceOp.AVG; 'sum, pre X post Y': FSDP2 divides the reduce-scatter "
                             "input by X and its output by Y around a SUM (none = no divide); chosen per case from "
                             "a probe of the backend's AVG reduce-scatter (probe)")
    doc["elapsed_s"] = round(time.time() - t0, 1)
    doc["cases"] = cases
    gg.write_json(os.path.join(a.out, "fsdp_cpu.json"), doc)
    gg.log(f"done in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
