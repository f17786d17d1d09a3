#!/usr/bin/env bash
# Fifty-third session, call 2 (on call 1's warm machine, its binaries still there): the occ4
# build's tessel binary through `tessel check` and the latency comparison at 4K.
source scripts/device_env.sh; export TESSEL_SPILL_LIMIT=128; mkdir -p $OUT
(timeout 200 .carry/variants/occ4.tessel check 2>&1 | tail -25) > $OUT/check_occ4.log
timeout 200 .carry/variants/occ4.tessel bench --network vulkan,hip --size 3840x2160 --ratio 2 --frames 200 > $OUT/bench_occ4.log 2>&1
