#!/usr/bin/env bash
# Fiftieth session, call 2: native kernel variants in alternated rounds (scripts/device_variants.sh):
# base   the default build;
# pairs  -DTS_RPB_PAIRS=1: each lane's two bias entries of neighbouring keys as one 8-byte shared
#        load (from the table or its copy one entry later) instead of two 4-byte loads;
# l2     the default build with TESSEL_HIP_L2_WEIGHTS=1 (the weights in a persisting L2 window;
#        call 1's standalone figures were lost to the reply's tail).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
tar xzf .carrypack/variants.tgz
OUT=$OUT/var timeout 500 bash scripts/device_variants.sh run 3 > $OUT/var.log 2>&1
tail -12 $OUT/var.log
(cd $OUT && tar czf var.tgz var && rm -rf var)
