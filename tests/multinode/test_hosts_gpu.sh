#!/usr/bin/env bash
# test_hosts_gpu.sh: two emulated hosts (lib.sh) on a machine with at least 2 GPUs, one GPU and one rank per
# host (each host's CUDA_VISIBLE_DEVICES names a different GPU, as two real nodes each see their own), NCCL
# between them through its socket transport on the harness's interface (NCCL_SOCKET_IFNAME): the path two
# nodes without InfiniBand take. Asserts: the CUDA device and NCCL comm on both; each host's rank on its own
# GPU (PCI bus id against nvidia-smi's); NCCL really went through NET/Socket; weights identical, and equal to
# the same job on one host through NVLink/P2P (with 2 ranks an allreduce is one IEEE addition, a + b = b + a,
# so the transport cannot change a bit). Exits 77 with fewer than 2 GPUs or where namespaces are refused.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mn_bound 240 "$@"
command -v nvidia-smi >/dev/null || mn_skip "no nvidia-smi: no GPU on this machine"
mapfile -t bus < <(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader 2>/dev/null)
[ "${#bus[@]}" -ge 2 ] || mn_skip "needs 2 GPUs, sees ${#bus[@]}"
mn_init
mn_hosts_up 2 1 || { echo "harness set-up failed"; echo "0 passed, 1 failed"; exit 1; }
cd "$MN_DIR" || exit 1
mn_env_set "${MN_HOSTS[0]}" CUDA_VISIBLE_DEVICES=0
mn_env_set "${MN_HOSTS[1]}" CUDA_VISIBLE_DEVICES=1
args=("$MN_BIN" --config "$MN_SRC/configs/ci.ini" --hidden 1024 --layers 4 --batch 64 --steps 10 --warmup 3
  --device cuda --comm nccl --progress none --timeout 120)
mn_mpirun 200 -np 2 -x NCCL_SOCKET_IFNAME="$MN_PREFIX" -x NCCL_IB_DISABLE=1 -x NCCL_NVLS_ENABLE=0 \
  -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=ALL "${args[@]}" --json gpu.json >gpu.txt 2>gpu.err
rc=$?
mn_eq "mpirun across 2 GPU hosts exits 0" "$rc" 0
[ -s gpu.json ] || { tail -n 40 gpu.txt gpu.err; mn_done; exit 1; }
mn_eq "cuda device, nccl comm, 2 nodes" "$(jq -r '[.device, .comm, (.nodes | tostring)] | join(" ")' gpu.json)" "cuda nccl 2"
norm() { tr 'A-F' 'a-f' | sed 's/^[0-9a-f]*://'; }
for r in 0 1; do
  got=$(jq -r ".ranks[$r].device.pci_bus_id" gpu.json | norm)
  want=$(echo "${bus[$r]}" | norm)
  mn_eq "rank $r on host ${MN_HOSTS[$r]} uses GPU $r ($want)" "$got" "$want"
done
# gpu_index counts in the host's own PCI list (both GPUs are on every emulated host): host 2's rank is on GPU1.
mn_eq "each host sees one GPU, its local rank 0 takes it" \
  "$(jq -c '[.topology.ranks[] | [.local_rank, .visible_gpus, .gpu_index]]' gpu.json)" "[[0,1,0],[0,1,1]]"
mn_check "NCCL connected through NET/Socket (not P2P/SHM)" grep -q "via NET/Socket" gpu.txt gpu.err
mn_eq "weights identical across hosts" "$(jq .weights_identical gpu.json)" true

timeout -k 5 200 mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE=0 "${args[@]}" \
  --json onehost.json >onehost.txt 2>onehost.err
mn_eq "same job on one host (NVLink/P2P) exits 0" "$?" 0
mn_eq "weights over NCCL sockets across hosts = over NVLink on one host" \
  "$(jq -r .weights_checksum gpu.json)" "$(jq -r .weights_checksum onehost.json)"
mn_done
