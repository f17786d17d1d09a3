#!/usr/bin/env bash
# Prepared in the fifty-first session (its device time was spent); run in the fifty-second
# (docs/bench/2026-12-06-s52/call1): bulk and the stream's writes landed, rin and hh2 did not.
# Experiments the call 2 stall profile points at, built as variants of the landed kernels:
#   git apply docs/bench/2026-12-06-s51/next/stream-rows.patch docs/bench/2026-12-06-s51/next/bulk.patch
#   FRAME=1 bash scripts/device_variants.sh build base= bulk='-DTS_BULK=1' rows='-DTS_STREAM_ROWS=3' \
#       rout='-DTS_STREAM_ROWS=2' hh2='-DTS_HEAD_HALVES=2'
# (then `git checkout kernels/`; variants.txz near 20 MB: carry nothing else large).
# - bulk: the weights (the core blob at up to 48 channels, each phase of level 2's stream ring)
#   copied by one thread's bulk copy (cp.async.bulk, the tensor memory accelerator) completing an
#   mbarrier that every thread waits on, instead of every thread's 16-byte cp.async pieces (the
#   copy loops held 3-5 % of the 48-channel launches' stall samples and 8-10 % of level 2's).
#   ptxas takes it for sm_90a with no spills; never run.
# - rows / rout: the level's f16 stream read (1) and/or written (2) by the plain blocks as whole
#   16-byte pieces of each warp's 16 token rows through shared memory (the attention's bytes, or at
#   96 channels the weight ring's at the end), instead of 4-byte pairs straight from and to memory:
#   a quarter of the requests (the input rows held 6-14 % of the stall samples, the stores' drain
#   at the end 6-9 %). Compiles; never run.
# - hh2: the head's token rows both requested before the MLP (the second half's in-place load
#   held 7 % of the head launch's samples; fifteenth session: slower then, 80 -> 91 registers).
# Each variant's agreement is checked first (device_variants.sh's golden cases); `tessel check`
# with the binary of any that wins.
#   device run: tar xJf .carrypack/variants.txz && bash docs/bench/2026-12-06-s51/next/run.sh
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
OUT=$OUT/var timeout 480 bash scripts/device_variants.sh run 2 > "$OUT/var.log" 2>&1
tail -8 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
