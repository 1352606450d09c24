#!/usr/bin/env python3
"""pytorch_ref.py: the PyTorch reference for ddpbench's benchmarks: the same model trained the way people train it.

L x Linear(H, H, bias=False) + ReLU, loss 0.5 * sum over features of (y - t)^2, mean over the batch, SGD,
torch.amp autocast (bf16, or fp16 with GradScaler), plain eager PyTorch. Under torchrun with more than one
process the model is wrapped in DistributedDataParallel (default buckets) and the same step is timed; with
--no-ddp every rank trains alone (the 'local' baseline). Weights and data are uniform like ddpbench's
(Kaiming bound sqrt(6/H) for weights, 1 for data): GEMM speed depends a little on the values.

--strategy fsdp trains with FSDP2 instead (torch.distributed.fsdp.fully_shard on each Linear, then on the
container, default reshard_after_forward), also on one GPU: a process group is made even for one process
(NCCL; MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE default to 127.0.0.1, a free port, 0, 1 outside torchrun).
Mixed precision is FSDP2's module-level MixedPrecisionPolicy(param_dtype=bf16/fp16, reduce_dtype=fp32), no
autocast (none for fp32/tf32); fp16 adds the same GradScaler. Gradients are zeroed with set_to_none=True,
as FSDP2 is usually driven (the DDP path keeps set_to_none=False).

Prints one line per rank-0 result and, with --json, writes {config, step_ms: [...], median_ms, strategy,
max_memory_allocated_bytes (torch.cuda.max_memory_allocated after the timed steps), ...}.
Timing: CUDA events around each whole step (forward, backward with DDP's allreduces or FSDP's all-gathers
and reduce-scatters, optimizer), after --warmup untimed steps; the median of --steps timed steps.

  python3 launch/pytorch_ref.py --hidden 8192 --layers 8 --batch 8192 --precision bf16
  torchrun --nproc_per_node 2 launch/pytorch_ref.py --hidden 8192 --layers 8 --batch 8192 --precision bf16
  python3 launch/pytorch_ref.py --strategy fsdp --hidden 8192 --layers 8 --batch 8192 --precision bf16
"""
import argparse
import json
import os
import socket
import statistics
import sys

import torch
import torch.distributed as dist


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def shard_fsdp(model, world, param_dtype):
    """FSDP2 as docs/fsdp.md section 1 sets it up: fully_shard on each Linear, then on the container (the
    root), on a 1-D mesh over all ranks; MixedPrecisionPolicy(param_dtype, reduce_dtype=fp32) for 16-bit."""
    try:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    except ImportError:  # before the public export
        from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.device_mesh import init_device_mesh
    kw = {"mesh": init_device_mesh("cuda", (world,))}
    if param_dtype is not None:
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=param_dtype, reduce_dtype=torch.float32)
    for m in model:
        if isinstance(m, torch.nn.Linear):
            fully_shard(m, **kw)
    fully_shard(model, **kw)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=256, help="per rank")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--precision", choices=["fp32", "tf32", "bf16", "fp16"], default="bf16")
    p.add_argument("--no-ddp", action="store_true", help="train each rank alone even under torchrun")
    p.add_argument("--strategy", choices=["ddp", "fsdp"], default="ddp",
                   help="ddp (default: DistributedDataParallel under torchrun) or fsdp (FSDP2 fully_shard, "
                        "also on one process)")
    p.add_argument("--json", help="write the result here (rank 0)")
    a = p.parse_args()
    fsdp = a.strategy == "fsdp"
    if fsdp and a.no_ddp:
        p.error("--no-ddp is for --strategy ddp")
    if fsdp and "WORLD_SIZE" not in os.environ:  # one process outside torchrun: FSDP2 still needs a group
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(free_port()))
        os.environ.setdefault("RANK", "0")
        os.environ.setdefault("LOCAL_RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    use_ddp = world > 1 and not a.no_ddp and not fsdp
    if world > 1 or fsdp:
        dist.init_process_group("nccl", device_id=dev)
    torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = a.precision == "tf32"

    H, L, B = a.hidden, a.layers, a.batch
    layers = []
    for _ in range(L):
        lin = torch.nn.Linear(H, H, bias=False)
        torch.nn.init.uniform_(lin.weight, -(6.0 / H) ** 0.5, (6.0 / H) ** 0.5)
        layers += [lin, torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(dev)
    if use_ddp:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.precision)
    if fsdp:
        shard_fsdp(model, world, amp_dtype)
        amp_dtype = None  # FSDP2's mixed precision is the module's own: no autocast
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    g = torch.Generator(device=dev).manual_seed(1234 + rank)
    x = torch.rand(B, H, device=dev, generator=g) * 2 - 1
    t = torch.rand(B, H, device=dev, generator=g) * 2 - 1
    scaler = torch.amp.GradScaler("cuda", enabled=a.precision == "fp16")

    def step():
        opt.zero_grad(set_to_none=fsdp)
        with torch.autocast("cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            y = model(x)
        loss = 0.5 * ((y.float() - t) ** 2).sum() / B
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(a.steps + 1)]
    for i in range(a.steps):
        ev[i].record()
        step()
    ev[a.steps].record()
    torch.cuda.synchronize()
    ms = [ev[i].elapsed_time(ev[i + 1]) for i in range(a.steps)]
    max_mem = torch.cuda.max_memory_allocated(dev)
    if world > 1:  # the slowest rank per step, as ddpbench reports
        m = torch.tensor(ms, device=dev)
        dist.all_reduce(m, op=dist.ReduceOp.MAX)
        ms = m.tolist()
    med = statistics.median(ms)
    if rank == 0:
        flops = (6 * L - 2) * B * H * H
        mode = "fsdp" if fsdp else "ddp" if use_ddp else "local"
        print(f"pytorch {torch.__version__} nccl {'.'.join(map(str, torch.cuda.nccl.version()))} "
              f"world {world} {mode} H {H} L {L} B {B} {a.precision}: step {med:.3f} ms "
              f"(p10 {statistics.quantiles(ms, n=10)[0]:.3f}, p90 {statistics.quantiles(ms, n=10)[-1]:.3f}), "
              f"{flops / med / 1e9:.1f} TFLOP/s per rank", flush=True)
        if a.json:
            doc = {"tool": "pytorch_ref.py", "torch": torch.__version__, "world": world, "mode": mode,
                   "hidden": H, "layers": L, "batch": B, "precision": a.precision, "steps": a.steps,
                   "warmup": a.warmup, "step_ms": ms, "median_ms": med, "gpu": torch.cuda.get_device_name(dev),
                   "command_line": " ".join(sys.argv), "strategy": a.strategy,
                   "max_memory_allocated_bytes": max_mem}
            if fsdp:
                doc["fsdp"] = {"fully_shard": "each Linear, then the root", "reshard_after_forward": "default",
                               "mp_policy": (f"param_dtype={a.precision}, reduce_dtype=fp32"
                                             if a.precision in ("bf16", "fp16") else None),
                               "autocast": False, "zero_grad_set_to_none": True}
            with open(a.json + ".tmp", "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(a.json + ".tmp", a.json)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
