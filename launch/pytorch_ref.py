#!/usr/bin/env python3
"""The PyTorch reference for ddpbench's benchmarks: the same model trained the way people train it.

L x Linear(H, H, bias=False) + ReLU, loss 0.5 * sum over features of (y - t)^2, mean over the batch, SGD,
torch.amp autocast (bf16, or fp16 with GradScaler), plain eager PyTorch. Under torchrun with more than one
process the model is wrapped in DistributedDataParallel (default buckets) and the same step is timed; with
--no-ddp every rank trains alone (the 'local' baseline). Weights and data are uniform like ddpbench's
(Kaiming bound sqrt(6/H) for weights, 1 for data): GEMM speed depends a little on the values.

Prints one line per rank-0 result and, with --json, writes {config, step_ms: [...], median_ms, ...}.
Timing: CUDA events around each whole step (forward, backward with DDP's allreduces, optimizer), after
--warmup untimed steps; the median of --steps timed steps.

  python3 launch/pytorch_ref.py --hidden 8192 --layers 8 --batch 8192 --precision bf16
  torchrun --nproc_per_node 2 launch/pytorch_ref.py --hidden 8192 --layers 8 --batch 8192 --precision bf16
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist


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
    p.add_argument("--json", help="write the result here (rank 0)")
    a = p.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    use_ddp = world > 1 and not a.no_ddp
    if world > 1:
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
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    g = torch.Generator(device=dev).manual_seed(1234 + rank)
    x = torch.rand(B, H, device=dev, generator=g) * 2 - 1
    t = torch.rand(B, H, device=dev, generator=g) * 2 - 1
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.precision)
    scaler = torch.amp.GradScaler("cuda", enabled=a.precision == "fp16")

    def step():
        opt.zero_grad(set_to_none=False)
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
    if world > 1:  # the slowest rank per step, as ddpbench reports
        m = torch.tensor(ms, device=dev)
        dist.all_reduce(m, op=dist.ReduceOp.MAX)
        ms = m.tolist()
    med = statistics.median(ms)
    if rank == 0:
        flops = (6 * L - 2) * B * H * H
        mode = "ddp" if use_ddp else "local"
        print(f"pytorch {torch.__version__} nccl {'.'.join(map(str, torch.cuda.nccl.version()))} "
              f"world {world} {mode} H {H} L {L} B {B} {a.precision}: step {med:.3f} ms "
              f"(p10 {statistics.quantiles(ms, n=10)[0]:.3f}, p90 {statistics.quantiles(ms, n=10)[-1]:.3f}), "
              f"{flops / med / 1e9:.1f} TFLOP/s per rank", flush=True)
        if a.json:
            doc = {"tool": "pytorch_ref.py", "torch": torch.__version__, "world": world, "mode": mode,
                   "hidden": H, "layers": L, "batch": B, "precision": a.precision, "steps": a.steps,
                   "warmup": a.warmup, "step_ms": ms, "median_ms": med, "gpu": torch.cuda.get_device_name(dev),
                   "command_line": " ".join(sys.argv)}
            with open(a.json + ".tmp", "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(a.json + ".tmp", a.json)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
