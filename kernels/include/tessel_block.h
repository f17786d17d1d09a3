// The fused window block's interface and layout (kernels/block_mma.hip): the argument struct
// hip-net fills (hip-net/src/plan.rs mirrors it byte for byte), what a block reads first and
// writes last, the shared-memory layout and configuration switches, the sm_90a weight staging,
// the LayerNorm and bias tiles every product starts from, and the window geometry on the shifted
// torus. Only block_mma.hip includes it (before the block's parts: tessel_block_attention.h,
// tessel_block_mlp.h, tessel_block_rows.h, tessel_block_ends.h).
#pragma once
#include "tessel_mma.h"

// Weight matrices in fragment order (include/tessel_mma.h, hip-net/src/weights.rs); vectors
// (biases, LayerNorm, rpb) in f32 (`<name>#f32`: the f16 values widened once at upload, so no
// conversion per use).
struct BlockArgs {
    float* x;  // [tokens][c], the level's residual stream, updated in place
    const ts_half* qkv_w;
    const float* qkv_b;
    const ts_half* proj_w;
    const float* proj_b;
    const ts_half* fc1_w;
    const float* fc1_b;
    const ts_half* fc2_w;
    const float* fc2_b;
    const float* norm1_w;
    const float* norm1_b;
    const float* norm2_w;
    const float* norm2_b;
    const float* rpb;  // [c / 16][225]
    // The network's ends (the embed and head variants only; zero otherwise).
    const ts_half* tokens;    // the token buffer, [tokens][16 p] f16
    const ts_half* embed_w;   // [c][16 p]
    const float* embed_b;
    ts_half* head;            // the head buffer, [tokens][128] f16
    const float* head_norm_w;
    const float* head_norm_b;
    const ts_half* head_w;    // [128][c]
    const float* head_b;      // with the per-pixel head path, its bias added per channel (hip-net/src/weights.rs)
    const ts_half* pixel_w;   // pixel_head.weight [8][p] in k = 8 fragment order; null: no per-pixel head path
    ts_uint width;       // level grid, tokens
    ts_uint height;
    ts_uint shift_x;
    ts_uint shift_y;
    ts_uint hidden;      // MLP width, a multiple of 16
    ts_uint p;           // pixel embedding width (head variant: a multiple of 8)
    // Between levels (the merge and expand variants only; zero otherwise): the level below's
    // stream [tokens][lower_c] f32 (or f16: flags), a grid of 2 width x 2 height, which the merge
    // reads and the expansion adds into.
    float* lower;
    const ts_half* merge_w;   // [c][4 lower_c]
    const float* merge_b;
    const ts_half* expand_w;  // [4 lower_c][c]
    const float* expand_b;
    ts_uint lower_c;     // a multiple of 16
    ts_uint flags;       // TS_STREAM_*: how the level's, the lower and the upper level's streams are stored; TS_ROWS_PLAIN
    // The pull variants only (zero otherwise): the level above's stream [tokens][upper_c] (f32, or
    // f16: TS_STREAM_UPPER_F16), a
    // grid of width / 2 x height / 2, and its expansion (linear `expand` of the level above),
    // which the block computes for its own tokens as its input's second term.
    const float* upper;
    const ts_half* pull_w;    // [4 c][upper_c]
    const float* pull_b;
    ts_uint upper_c;     // a multiple of 16
    // The weight blob as 128-byte lines (hip-net sets both; zero: none): what TS_WPREFETCH asks
    // L2 to hold for the launches after this one.
    ts_uint prefetch_lines;
    const char* prefetch;
};

// Streams stored in f16 instead of f32 (BlockArgs::flags; hip-net's plan sets them for the levels
// whose streams only fused blocks touch: every level by default, TESSEL_HIP_STREAM16_LEVELS): half
// the bytes. The merge and the pull round their input to f16 in any case, so only the expansion's
// sum and the blocks' residual between launches round once more.
#define TS_STREAM_X_F16 1u
#define TS_STREAM_LOWER_F16 2u
#define TS_STREAM_UPPER_F16 8u
// The token and head buffers without cache hints (tessel_block_rows.h's TS_ROWS_ONCE): hip-net's kill
// switch, TESSEL_HIP_CACHE_HINTS=0.
#define TS_ROWS_PLAIN 4u
// The weights copied by every thread's cp.async pieces instead of bulk copies (TS_BULK), and the
// level's stream written as each lane's pairs instead of staged 16-byte rows (TS_STREAM_ROWS):
// hip-net's kill switches, TESSEL_HIP_BULK=0 and TESSEL_HIP_STREAM_ROWS=0.
#define TS_WEIGHTS_PIECES 16u
#define TS_STREAM_PAIRS 32u
// The launch takes its windows in reverse order (TS_REVERSE): hip-net sets it on the fused launches
// its plan::Order picks (the first, the last, and every other one inward), unless TESSEL_HIP_ORDER=0.
#define TS_WINDOWS_REVERSED 64u
// The expansion stages its skip in shared memory (tessel_block_ends.h's TS_EXPAND_STAGE): hip-net
// sets it on the expansions its plan picks, unless TESSEL_HIP_EXPAND_STAGE=0.
#define TS_EXPAND_STAGED 128u

// What a block reads first and writes last (template arguments of block_body).
#define TS_IN_STREAM 0
#define TS_IN_EMBED 1
#define TS_IN_MERGE 2
#define TS_IN_PULL 3
#define TS_OUT_STREAM 0
#define TS_OUT_HEAD 1
#define TS_OUT_EXPAND 2

#if defined(TS_HAS_MMA)
#define TS_BLOCK_THREADS 128
// The widths whose blocks take their four products (qkv, proj, fc1, fc2) as warpgroup products
// with the weights in shared memory (sm_90a: tessel_mma.h's ts_wgmma): the block's weights in
// K-major core matrices (hip-net/src/weights.rs, `<block>.core`), 16 C^2 bytes with an MLP of 2C
// (36 KiB at C = 48), are copied in at the start while the block loads its input. hip-net uses the
// sm_90a object only where every such block has an MLP of 2C (tessel_kernels::wgmma_fits).
#if defined(TS_HAS_WGMMA)
#define TS_WG(C) ((C) <= 48)
#else
#define TS_WG(C) 0
#endif
// The wider blocks (64 to 128 channels, TS_WS) take the same products from shared memory, their
// weights too many to hold at once (144 KiB at C = 96): a stream blob (`<block>.stream`) of 2H
// phases of 128 C bytes each, the H heads' (qkv rows of head h, then proj's columns of head h)
// and the H MLP steps' (fc1 rows of two hidden chunks, then fc2's columns of them), copied into a
// ring of two buffers one phase ahead (stream_phase).
#if defined(TS_HAS_WGMMA)
#define TS_WS(C) ((C) > 48 && (C) <= 128)
#else
#define TS_WS(C) 0
#endif
#define TS_PHASE_BYTES(C) (128 * (C))
// TS_BULK (sm_90a; 1 by default, -DTS_BULK=0 builds without it): the weights (the core blob, or
// each phase of the stream) copied by one thread's bulk copy (the tensor memory accelerator)
// completing an mbarrier, instead of every thread's 16-byte cp.async pieces, whose loops held 3-5 %
// of the 48-channel launches' stall samples and 8-10 % of level 2's (BENCHMARKS.md, fifty-first
// and fifty-second sessions). TS_WEIGHTS_PIECES in the flags takes the pieces at run time.
#ifndef TS_BULK
#if defined(TS_HAS_WGMMA)
#define TS_BULK 1
#else
#define TS_BULK 0
#endif
#endif
#if defined(TS_HAS_WGMMA)
// The weights' mbarriers: the core blob's (0), or the stream ring's two buffers'.
TS_INLINE ts_u64* weight_bars() {
    TS_SHARED ts_u64 bars[2];
    return bars;
}
// Whether this launch copies its weights by bulk copies (a build with TS_BULK, not switched off).
TS_INLINE bool weights_bulk(const BlockArgs& p) { return TS_BULK && !(p.flags & TS_WEIGHTS_PIECES); }
#endif
// Shared memory for the weights: the whole core blob (TS_WG), the ring of two phases (TS_WS).
#define TS_WSM_WORDS(C) (TS_WG(C) ? TS_CORE_BYTES(C) / 4 : TS_WS(C) ? 2 * TS_PHASE_BYTES(C) / 4 : 4)
// Byte offsets of the matrices in a block's core blob: qkv (rows per head: q, k, v), proj, fc1,
// fc2; and of the core-matrix pair (8 rows, k tile kt) at 8-row block nb of a matrix of n rows.
#define TS_CORE_QKV(C) 0
#define TS_CORE_PROJ(C) (6 * (C) * (C))
#define TS_CORE_FC1(C) (8 * (C) * (C))
#define TS_CORE_FC2(C) (12 * (C) * (C))
#define TS_CORE_BYTES(C) (16 * (C) * (C))
#define TS_CORE_AT(n, kt, nb) (((kt) * ((n) / 8) + (nb)) * 256)
#define TS_ONES_F16X2 0x3c003c00u  // two f16 ones
// How the fused blocks compute the MLP's SiLU (TS_SILU_MODE): 1 (the default) in f32 through
// tanh.approx, h + h tanh(h) with h = x / 2: one special-function instruction per value; 0 through
// the exponential, x / (1 + exp(-x)): two (ex2 and rcp). On the H200 (BENCHMARKS.md, thirteenth
// session) tanh took the network from 0.690 to 0.678 ms at 3840x2160 and agreed with the shaders'
// network at least as well (the split frame's worst over 1,000 frames 80.5 dB against 78.3). The
// same on packed f16 pairs was 0.004 ms faster still but drifted over long sequences (65.3 dB):
// not kept.
#ifndef TS_SILU_MODE
#define TS_SILU_MODE 1
#endif
#define TS_KEY_STRIDE 24    // halves per key row: conflict-free B reads
#define TS_VALUE_STRIDE 72  // halves per transposed value row
// Token and head buffer rows are 128 halves (P = 8): staged per warp in two column halves
// (pixels 0-7, 8-15) of 16 rows x 32 words, padded to 36 so that A-tile reads (word 4g + t of
// a row group) hit 32 different banks.
#define TS_ROW_WORDS 64
#define TS_HALF_WORDS (TS_ROW_WORDS / 2)
#define TS_STAGE_STRIDE (TS_HALF_WORDS + 4)

// What the attention keeps in shared memory: one head's keys and transposed values, the bias
// table of the level's C / 16 heads. Single buffered: a barrier per head instead of twice the
// bytes (inside a Vulkan command buffer the bytes decide how many workgroups an SM holds).
template <int C>
struct AttnShared {
    ts_uint keys[TS_WINDOW_TOKENS][TS_KEY_STRIDE / 2];  // pairs of halves
    ts_half values[TS_HEAD_DIM][TS_VALUE_STRIDE];
    float bias[((C / 16) * TS_RPB_ENTRIES + 3) / 4 * 4];  // whole 16-byte pieces
};

// Column halves of the token rows the embedding stages at once (TS_STAGE_HALVES): on sm_90a
// both, requested by cp.async before anything else, instead of one half loaded and waited for
// at a time (those waits were about 12 % of its warps' stall samples on the H200: BENCHMARKS.md,
// fifteenth session); elsewhere one at a time, which keeps the workgroup's bytes low where a
// Vulkan command buffer launches the sm_90 object.
#ifndef TS_STAGE_HALVES
#if defined(TS_HAS_WGMMA)
#define TS_STAGE_HALVES 2
#else
#define TS_STAGE_HALVES 1
#endif
#endif

// The head's token rows: one half at a time (1; the first requested before the MLP), or both
// before the MLP (2). Both took the sm_90a head kernel from 80 to 91 registers (five workgroups
// an SM instead of six) and from 0.135 to 0.143 ms at 3840x2160 on the H200, while the
// embedding, with both, went from 0.118 to 0.112 ms (BENCHMARKS.md, fifteenth session).
#ifndef TS_HEAD_HALVES
#define TS_HEAD_HALVES 1
#endif

// The embedding variant's halves at width C: both where its bytes (the attention's or the two
// halves' stage, and the sm_90a weights) stay within the 48 KiB every launch path allows.
template <int C>
constexpr int embed_halves() {
    constexpr unsigned attention = sizeof(AttnShared<C>), stage = 4 * 2 * 16 * TS_STAGE_STRIDE * 4;
    constexpr unsigned weights = TS_WSM_WORDS(C) * 4;
    return TS_STAGE_HALVES == 2 && (attention > stage ? attention : stage) + weights <= 48 * 1024 ? 2 : 1;
}

// A workgroup's shared memory: the attention's, or (the ends only, STAGED = 4 warps) the token
// rows each warp stages; a barrier separates the two uses.
template <int C, int STAGED, int HALVES>
union BlockShared {
    AttnShared<C> attn;
    ts_uint stage[STAGED][HALVES][16][TS_STAGE_STRIDE];
};

#if defined(TS_HAS_WGMMA)
// The descriptor of B at byte `off` of the staged core blob: K-adjacent core matrices 128 bytes
// apart, N-adjacent 256. (Swapped, a wrong layout, the head fell to 13.5 dB on the H200 and every
// agreement test failed: BENCHMARKS.md, fourteenth session.)
#ifndef TS_WG_LBO
#define TS_WG_LBO 128
#define TS_WG_SBO 256
#endif
TS_INLINE ts_u64 core_desc(const ts_uint* wsm, ts_uint off) {
    return ts_wgmma_desc((const char*)wsm + off, TS_WG_LBO, TS_WG_SBO);
}

// Phase q of the block's stream blob (TS_WS) into ring buffer q % 2, every thread its share, as
// one group of copies; nothing past the last phase.
template <int C>
TS_INLINE void stream_copy(const BlockArgs& p, ts_uint* ring, int q) {
    constexpr int WORDS = TS_PHASE_BYTES(C) / 4;
    if (q >= 2 * (C / 16)) return;
    const ts_uint* src = (const ts_uint*)p.qkv_w + q * WORDS;
    ts_uint* dst = ring + (q % 2) * WORDS;
    if (weights_bulk(p)) {
        if (ts_thread_x() == 0) ts_bulk_copy(dst, src, TS_PHASE_BYTES(C), weight_bars() + q % 2);
        return;
    }
    for (ts_uint e = ts_thread_x(); e < WORDS / 4; e += TS_BLOCK_THREADS) ts_cp_async16(dst + 4 * e, src + 4 * e);
    ts_cp_async_commit();
}

// Phase q's weights, ready for every warp in ring buffer q % 2 (phases 0 and 1 were requested at
// the start): after a barrier (every warp is done with phase q - 1, whose buffer phase q + 1
// then takes), phase q's copies have arrived while phase q + 1's may still be on their way.
template <int C>
TS_INLINE const ts_uint* stream_phase(const BlockArgs& p, ts_uint* ring, int q) {
    if (q > 0) {
        ts_sync();
        stream_copy<C>(p, ring, q + 1);
    }
    if (weights_bulk(p)) {
        // Buffer q % 2's (q / 2)-th phase; every thread waits for it itself.
        ts_mbar_wait(weight_bars() + q % 2, (q / 2) & 1);
        return ring + (q % 2) * (TS_PHASE_BYTES(C) / 4);
    }
    if (q + 1 < 2 * (C / 16)) {
        ts_cp_async_wait_but_one();
    } else {
        ts_cp_async_wait_all();
    }
    ts_fence_async_shared();
    ts_sync();
    return ring + (q % 2) * (TS_PHASE_BYTES(C) / 4);
}
#endif

// LayerNorm of the warp's two rows per lane (biased variance, f32) as A tiles in f16.
template <int C>
TS_INLINE void block_norm(const float xr[C / 8][4], const float* gw, const float* gb, ts_uint t, ts_uint an[C / 16][4]) {
    float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
    for (int j = 0; j < C / 8; j++) {
        s0 += xr[j][0] + xr[j][1];
        s1 += xr[j][2] + xr[j][3];
    }
    constexpr float inv_c = 1.0f / (float)C;
    float m0 = ts_quad_sum(s0) * inv_c, m1 = ts_quad_sum(s1) * inv_c;
    float q0 = 0.0f, q1 = 0.0f;
#pragma unroll
    for (int j = 0; j < C / 8; j++) {
        float a = xr[j][0] - m0, b = xr[j][1] - m0, c = xr[j][2] - m1, d = xr[j][3] - m1;
        q0 += a * a + b * b;
        q1 += c * c + d * d;
    }
    float i0 = ts_rsqrt(ts_quad_sum(q0) * inv_c + 1e-5f), i1 = ts_rsqrt(ts_quad_sum(q1) * inv_c + 1e-5f);
#pragma unroll
    for (int j = 0; j < C / 8; j++) {
        ts_uint col = 8 * j + 2 * t;
        ts_float2 gv = *(const ts_float2*)(gw + col), bv = *(const ts_float2*)(gb + col);
        float g0 = gv.x, g1 = gv.y, b0 = bv.x, b1 = bv.y;
        an[j / 2][(j & 1) * 2] = ts_pack((xr[j][0] - m0) * i0 * g0 + b0, (xr[j][1] - m0) * i0 * g1 + b1);
        an[j / 2][(j & 1) * 2 + 1] = ts_pack((xr[j][2] - m1) * i1 * g0 + b0, (xr[j][3] - m1) * i1 * g1 + b1);
    }
}

// TS_VEC_SHARED: the block's f32 vectors (LayerNorm weights and biases, the products' biases; the
// head's and the expansion's in those variants) copied into shared memory by cp.async at the
// start, before the weights, so that the bias tiles every product starts from and the
// LayerNorms' loads read shared memory instead of waiting on global loads, where an Nsight
// Compute profile put up to 13 % of a launch's stall samples (sm_90a only; nothing where the workgroup's
// bytes would pass the 48 KiB every launch path allows). On the H100 (BENCHMARKS.md, fifty-first
// session): 0.555 -> 0.547 ms at 3840x2160 as graphs, the frame with the kernels inside Vulkan
// 1.118 -> 1.105 ms, the head the same. Build-time only (TESSEL_KERNEL_CFLAGS=-DTS_VEC_SHARED=0
// reads them in place): the vectors' pointers chosen at run time instead took the whole gain
// (0.561-0.565 ms), since loads through them can no longer be shared-memory loads. Staging all
// but the embedding's and the pull's vectors: 0.550 ms.
#ifndef TS_VEC_SHARED
#define TS_VEC_SHARED 1
#endif
// Floats of a block's staged vectors: norm1 (2C), qkv (3C), proj (C), norm2 (2C), fc1 (2C, the
// MLP of 2C the sm_90a blocks have), fc2 (C); the head's norm (2C) and bias (128); the
// expansion's bias (4 lower_c: at most 4C, since hip-net takes the sm_90a object only where no
// level is wider than the one above it, tessel_kernels::wgmma_widths_fit).
template <int C, int OUT>
constexpr unsigned block_vec_floats() {
    return 11 * C + (OUT == TS_OUT_HEAD ? 2 * C + 128 : 0) + (OUT == TS_OUT_EXPAND ? 4 * C : 0);
}
// n floats (a multiple of 4, 16-byte aligned) from src into the stage at dst: returns dst.
// TS_VEC_WARPS (1 by default): vector k is copied by warp k mod 4 alone, so that each warp
// passes over a quarter of the vectors' copy loops instead of every thread over all of them.
// 0: every vector by the whole workgroup.
#ifndef TS_VEC_WARPS
#define TS_VEC_WARPS 1
#endif
TS_INLINE const float* stage_vec(float* dst, const float* src, ts_uint n, ts_uint& k) {
    if (TS_VEC_WARPS) {
        if (k++ % (TS_BLOCK_THREADS / 32) == ts_thread_x() / 32)
            for (ts_uint e = ts_lane(); e < n / 4; e += 32) ts_cp_async16(dst + 4 * e, src + 4 * e);
        return dst;
    }
    for (ts_uint e = ts_thread_x(); e < n / 4; e += TS_BLOCK_THREADS) ts_cp_async16(dst + 4 * e, src + 4 * e);
    return dst;
}
// The block's vectors into `v` (one group of copies, committed), and p's pointers to them there.
template <int C, int OUT>
TS_INLINE void stage_vectors(BlockArgs& p, float* v) {
    ts_uint k = 0;
    p.norm1_w = stage_vec(v, p.norm1_w, C, k), v += C;
    p.norm1_b = stage_vec(v, p.norm1_b, C, k), v += C;
    p.qkv_b = stage_vec(v, p.qkv_b, 3 * C, k), v += 3 * C;
    p.proj_b = stage_vec(v, p.proj_b, C, k), v += C;
    p.norm2_w = stage_vec(v, p.norm2_w, C, k), v += C;
    p.norm2_b = stage_vec(v, p.norm2_b, C, k), v += C;
    p.fc1_b = stage_vec(v, p.fc1_b, 2 * C, k), v += 2 * C;
    p.fc2_b = stage_vec(v, p.fc2_b, C, k), v += C;
    if (OUT == TS_OUT_HEAD) {
        p.head_norm_w = stage_vec(v, p.head_norm_w, C, k), v += C;
        p.head_norm_b = stage_vec(v, p.head_norm_b, C, k), v += C;
        p.head_b = stage_vec(v, p.head_b, 128, k), v += 128;
    }
    if (OUT == TS_OUT_EXPAND) p.expand_b = stage_vec(v, p.expand_b, 4 * p.lower_c, k);
    ts_cp_async_commit();
}

// Accumulators of 8 output columns starting at n0, set to the bias (this lane's two columns as
// one 8-byte load: vectors are 256-byte aligned and n0 + 2t is even).
TS_INLINE void bias_tile(float d[4], const float* b, ts_uint n0, ts_uint t) {
    ts_float2 v = *(const ts_float2*)(b + n0 + 2 * t);
    d[0] = d[2] = v.x;
    d[1] = d[3] = v.y;
}

// Where the workgroup's window starts on the shifted torus: the column and row of its in-window
// position 0. The divisions by the runtime grid size happen here once per thread.
// `parity` (the PULL variant): which of the window's tokens a warp holds (row_pos).
struct WindowOrigin {
    ts_uint x0, y0;
    bool parity;
};
// TS_ORIGIN_WRAP (1 by default): the shifted origin wraps by one conditional subtraction, since
// the grid is whole windows and a shift is less than a window (model/src/shifts.rs), so the
// column (win % wins_x) * 8 + width - shift_x lies in [1, 2 width); four divisions by the grid's
// size fewer per thread. 0: the general remainders.
#ifndef TS_ORIGIN_WRAP
#define TS_ORIGIN_WRAP 1
#endif
// TS_LOAD_FIRST (1 by default): a fused block that reads its level's stream (all but the head)
// loads its rows first, before the copies of its vectors and weights (block_mma.hip's
// block_body): the profile put 12-13 % of the plain blocks' stall samples on those rows' wait
// (BENCHMARKS.md, fifty-eighth session; the head, 11 %, measured slower so). 0: after the copies,
// as before.
#ifndef TS_LOAD_FIRST
#define TS_LOAD_FIRST 1
#endif
// TS_REVERSE (1 by default): a launch with TS_WINDOWS_REVERSED in its flags takes the windows in
// reverse order. Every fused launch reads first what the one before it wrote (the stream of its
// level or of the level below or above), and workgroups start roughly in index order, so with
// every other launch reversed the first workgroups of a launch read the rows that the launch before
// wrote last, the likeliest to be still in L2 (the level-0 stream is 33.4 MB at 3840x2160, the
// H100's L2 50 MB); the first and the last launch reversed meet the input stage's last token rows
// and the reconstruction's first head rows the same way. Each window's result is the same; only
// the order in which workgroups take them changes. The L2 prefetch of the next launch's weights
// (weights_prefetch) keeps the workgroup index: it is about when a workgroup runs, not where.
// 0: the flag is ignored.
#ifndef TS_REVERSE
#define TS_REVERSE 1
#endif
TS_INLINE WindowOrigin window_origin(const BlockArgs& p, bool parity) {
    ts_uint wins_x = p.width / TS_WINDOW, win = ts_block_x();
    if (TS_REVERSE && (p.flags & TS_WINDOWS_REVERSED)) win = ts_grid_x() - 1 - win;
    if (TS_ORIGIN_WRAP) {
        ts_uint x = (win % wins_x) * TS_WINDOW + p.width - p.shift_x, y = (win / wins_x) * TS_WINDOW + p.height - p.shift_y;
        return {x >= p.width ? x - p.width : x, y >= p.height ? y - p.height : y, parity};
    }
    return {((win % wins_x) * TS_WINDOW + p.width - p.shift_x % p.width) % p.width,
            ((win / wins_x) * TS_WINDOW + p.height - p.shift_y % p.height) % p.height, parity};
}

// The in-window position (iy * 8 + ix) of row `row` (0-15) of warp `warp`: window rows 2 warp and
// 2 warp + 1, or (parity) the 16 tokens whose grid column and row have the parities of warp % 2
// and warp / 2, in rows of 4: one child quadrant of the level above (dy * 2 + dx = warp), so that
// the PULL variant's expansion takes one quadrant's weights for all of a warp's rows. Grids are
// an even number of tokens wide and high, so a wrap keeps the parity.
TS_INLINE ts_uint row_pos(WindowOrigin o, ts_uint warp, ts_uint row) {
    if (!o.parity) return warp * 16 + row;
    ts_uint ox = (warp + o.x0) & 1, oy = (warp / 2 + o.y0) & 1;
    return (2 * (row / 4) + oy) * TS_WINDOW + 2 * (row % 4) + ox;
}

// Column and row of window row r (in-window position r = iy * 8 + ix): at most one wrap, since
// the origin is inside the grid and the grid is at least a window wide.
TS_INLINE ts_uint window_x(const BlockArgs& p, WindowOrigin o, ts_uint r) {
    ts_uint x = o.x0 + r % TS_WINDOW;
    return x >= p.width ? x - p.width : x;
}
TS_INLINE ts_uint window_y(const BlockArgs& p, WindowOrigin o, ts_uint r) {
    ts_uint y = o.y0 + r / TS_WINDOW;
    return y >= p.height ? y - p.height : y;
}
TS_INLINE ts_uint window_token(const BlockArgs& p, WindowOrigin o, ts_uint r) {
    return window_y(p, o, r) * p.width + window_x(p, o, r);
}
#endif
