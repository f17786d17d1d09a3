// How the fused window blocks move rows (kernels/block_mma.hip): the token and head buffers'
// 128-half rows staged a column half at a time, the level's f16 stream as whole 16-byte rows, the
// level below's 2x2 children, and A tiles read from a stream. block_mma.hip includes it where the
// matrix products exist (TS_HAS_MMA).
#pragma once

// How rows_copy moves a column half: into `rows` and wait, from `rows` back to the buffer, or
// into `rows` without waiting (cp.async, sm_80: rows_wait() before reading them).
#define TS_ROWS_LOAD 0
#define TS_ROWS_STORE 1
#define TS_ROWS_PREFETCH 2

// TS_ROWS_ONCE: cache hints for the token and head buffers, which a launch reads or writes once
// (134 MB each at 3840x2160, well over L2): bit 0 reads them evict-first, bit 1 stores them
// streaming, so that they do not push the level's stream and skip, read by the next launch,
// out of L2. 0: no hints (build with TESSEL_KERNEL_CFLAGS=-DTS_ROWS_ONCE=0; at run time the
// TS_ROWS_PLAIN flag, hip-net's TESSEL_HIP_CACHE_HINTS=0, turns them off). Both on the H200
// (BENCHMARKS.md, twenty-fourth session): 0.562 -> 0.560 ms at 3840x2160 as graphs, 0.292 ->
// 0.288 at 2560x1440, the same head to the bit.
#ifndef TS_ROWS_ONCE
#define TS_ROWS_ONCE 3
#endif

// TS_ROWS_POLICY (1 by default): the token rows' cp.async copies take their L2 policy (evict-first,
// or unchanged: TS_ROWS_PLAIN) from one createpolicy a call instead of branching between a hinted
// and a plain copy, each hinted copy making its own policy. 0: the branch per copy.
#ifndef TS_ROWS_POLICY
#define TS_ROWS_POLICY 1
#endif

// Column half `half` (128 bytes) of the warp's 16 token rows of a 128-half buffer into `rows`,
// as 16-byte loads (or, STORE, back from `rows` to the buffer; PREFETCH: issued before the MLP,
// which uses no shared memory, so that the loads overlap it).
template <int MODE>
TS_INLINE void rows_copy(const BlockArgs& p, WindowOrigin o, ts_uint rows[16][TS_STAGE_STRIDE], ts_half* buf, ts_uint warp, ts_uint half) {
    if (MODE != TS_ROWS_PREFETCH) ts_warp_sync();  // every lane is done with what the rows held
    ts_uint lane = ts_lane();
    const ts_uint once = (p.flags & TS_ROWS_PLAIN) ? 0u : (ts_uint)TS_ROWS_ONCE;
#if TS_ROWS_POLICY
    // One policy for the four copies, not a branch and a policy each (TS_ROWS_POLICY).
    unsigned long long pol = MODE == TS_ROWS_PREFETCH ? ts_policy_once(once & 1) : 0;
#endif
#pragma unroll
    for (int i = 0; i < 4; i++) {
        ts_uint idx = i * 32 + lane, row = idx / 8, col = idx % 8;
        ts_uint tok = window_token(p, o, row_pos(o, warp, row));
        ts_uint4* g = (ts_uint4*)(buf + tok * 2 * TS_ROW_WORDS) + 8 * half + col;
        if (MODE == TS_ROWS_STORE) {
            if (once & 2) ts_st16_once(g, ((const ts_uint4*)rows[row])[col]);
            else *g = ((const ts_uint4*)rows[row])[col];
        } else if (MODE == TS_ROWS_PREFETCH) {
#if TS_ROWS_POLICY
            ts_cp_async16_policy((ts_uint4*)rows[row] + col, g, pol);
#else
            if (once & 1) ts_cp_async16_once((ts_uint4*)rows[row] + col, g);
            else ts_cp_async16((ts_uint4*)rows[row] + col, g);
#endif
        } else {
            ((ts_uint4*)rows[row])[col] = (once & 1) ? ts_ld16_once(g) : *g;
        }
    }
    if (MODE == TS_ROWS_PREFETCH) {
        ts_cp_async_commit();
    } else {
        ts_warp_sync();
    }
}
TS_INLINE void rows_wait() {
    ts_cp_async_wait_all();
    ts_warp_sync();
}

// TS_STREAM_ROWS: the level's f16 stream read (bit 0) and written (bit 1) by the fused blocks as
// whole 16-byte pieces of the warp's 16 token rows through a stage in shared memory, instead of
// each lane's 4-byte pairs straight from and to memory: a quarter of the requests (the profile put
// 6-14 % of a launch's stall samples on the input rows and 6-9 % on the stores' drain at the end).
// Writing so paid, reading did not (BENCHMARKS.md, fifty-second session): 2 by default on sm_90a,
// 0 elsewhere (not measured there). The stage: 16 rows of C / 2 words and 4 of padding
// (conflict-free pair writes and reads) a warp. TS_STREAM_PAIRS in the flags takes the pairs at
// run time.
#ifndef TS_STREAM_ROWS
#if defined(TS_HAS_WGMMA)
#define TS_STREAM_ROWS 2
#else
#define TS_STREAM_ROWS 0
#endif
#endif
// Words a stage row takes, and the workgroup's four warps' stages.
template <int C>
constexpr unsigned stream_stage_stride() {
    return C / 2 + 4;
}
template <int C>
constexpr unsigned stream_stage_words() {
    return 4 * 16 * stream_stage_stride<C>();
}
// The warp's 16 rows of the f16 stream at `x` into (LOAD) or out of (STORE) `st`, 16 bytes a
// lane at a time.
template <int C, bool STORE>
TS_INLINE void stream_rows(const BlockArgs& p, WindowOrigin o, ts_uint warp, ts_half* x, ts_uint* st) {
    constexpr ts_uint PIECES = C / 8, STRIDE = stream_stage_stride<C>();
    ts_uint lane = ts_lane();
    ts_warp_sync();
#pragma unroll
    for (ts_uint i = 0; i < (16 * PIECES + 31) / 32; i++) {
        ts_uint idx = i * 32 + lane, row = idx / PIECES, col = idx % PIECES;
        if (idx >= 16 * PIECES) break;
        ts_uint4* g = (ts_uint4*)(x + window_token(p, o, row_pos(o, warp, row)) * C) + col;
        ts_uint4* sh = (ts_uint4*)(st + row * STRIDE) + col;
        if (STORE) {
            *g = *sh;
        } else {
            *sh = *g;
        }
    }
    ts_warp_sync();
}

// The first of the 2x2 children of window row r's token in the level below (a grid twice as
// wide), and where child q (channel block q of the merge, output block q of the expansion) lies
// from it.
TS_INLINE ts_uint lower_base(const BlockArgs& p, WindowOrigin o, ts_uint r) {
    return (2 * window_y(p, o, r)) * (2 * p.width) + 2 * window_x(p, o, r);
}
TS_INLINE ts_uint lower_step(const BlockArgs& p, ts_uint q) {
    return (q / 2) * (2 * p.width) + q % 2;
}

// An A tile of two rows of a stream (rows starting at element offsets row0 and row1; the tile's
// columns at col0 + col1 of each, col1 being the lane's 2t): its f16 pairs as stored (H), or its
// f32 pairs rounded to f16. The merge's gather and the pull's parents load their tiles so.
template <bool H>
TS_INLINE void stream_a_tile(ts_uint a[4], const float* stream, ts_uint row0, ts_uint row1, ts_uint col0, ts_uint col1) {
    if constexpr (H) {
        const ts_half* s0 = (const ts_half*)stream + row0 + col0 + col1;
        const ts_half* s1 = (const ts_half*)stream + row1 + col0 + col1;
        a[0] = ts_ld2(s0), a[1] = ts_ld2(s1), a[2] = ts_ld2(s0 + 8), a[3] = ts_ld2(s1 + 8);
    } else {
        const float* s0 = stream + row0 + col0 + col1;
        const float* s1 = stream + row1 + col0 + col1;
        ts_float2 v0 = *(const ts_float2*)s0, v1 = *(const ts_float2*)s1;
        ts_float2 v2 = *(const ts_float2*)(s0 + 8), v3 = *(const ts_float2*)(s1 + 8);
        a[0] = ts_pack(v0.x, v0.y), a[1] = ts_pack(v1.x, v1.y), a[2] = ts_pack(v2.x, v2.y), a[3] = ts_pack(v3.x, v3.y);
    }
}
