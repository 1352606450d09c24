#!/usr/bin/env bash
# GPU call 3 (issue 23 §1): the order test, launch/order-test.sh, 3 rounds, on this tree's build.
# Output: $OUT/order.txt and $OUT/runs.tgz.
set -uo pipefail
source .device-deps/env.sh
{ cmake --preset gpu >/dev/null && cmake --build --preset gpu --target ddpbench -j 16; } >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
launch/order-test.sh build/gpu/ddpbench /tmp/order 3; rc=$?
cp /tmp/order/order.txt $OUT/; tar -czf $OUT/runs.tgz -C /tmp order
echo "order-test exit $rc"
