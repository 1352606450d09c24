#!/usr/bin/env bash
# GPU call 2 (the first call's "default job" passed --json, so it was not the default job): the GPU default job
# as a user runs it, no options at all, from the issue 24 tree (04f29b1, carried as .new-src).
source .device-deps/env.sh; cd .new-src && (cmake --preset gpu >/dev/null && cmake --build --preset gpu --target ddpbench -j 16) > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }; t=$(date +%s); ./build/gpu/ddpbench > $OUT/default-job-noargs.txt 2>$OUT/default-job-noargs.err; echo "rc=$? wall $(( $(date +%s) - t )) s"; tail -8 $OUT/default-job-noargs.txt; tail -3 $OUT/default-job-noargs.err
