#!/usr/bin/env bash
# NOT RUN: prepared in the fifty-first session for a later one (its device time was spent).
# Two experiments the call 2 stall profile points at, built as variants of the landed kernels:
#   git apply docs/bench/2026-12-06-s51/next/stream-rows.patch
#   FRAME=1 bash scripts/device_variants.sh build base= rows='-DTS_STREAM_ROWS=3' \
#       rin='-DTS_STREAM_ROWS=1' rout='-DTS_STREAM_ROWS=2' hh2='-DTS_HEAD_HALVES=2'
# - rows / rin / rout: the level's f16 stream read (1) and/or written (2) by the plain blocks as
#   whole 16-byte pieces of each warp's 16 token rows through shared memory (the attention's
#   bytes, or at 96 channels the weight ring's at the end), instead of 4-byte pairs straight from
#   and to memory: a quarter of the requests (the input rows held 6-14 % of the stall samples,
#   the stores' drain at the end 6-9 %). Compiles; never run (its agreement is unchecked: the
#   golden cases of device_variants.sh check it first).
# - hh2: the head's token rows both requested before the MLP (the second half's in-place load
#   held 7 % of the head launch's samples; fifteenth session: slower then, 80 -> 91 registers).
#   device run: tar xJf .carrypack/variants.txz && bash docs/bench/2026-12-06-s51/next/run.sh
set -uo pipefail
source scripts/device_env.sh
OUT=${OUT:-out/device}
mkdir -p "$OUT"
OUT=$OUT/var timeout 400 bash scripts/device_variants.sh run 2 > "$OUT/var.log" 2>&1
tail -7 "$OUT/var.log"
(cd "$OUT" && tar czf var.tgz var && rm -rf var)
