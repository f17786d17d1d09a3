// One whole window block (docs/NETWORK.md §4) in one launch on matrix cores: a workgroup per
// 8x8 window, four warps of 16 tokens each. The f32 residual stream stays in registers from the
// load to the store (in the accumulator layout, so proj and fc2 accumulate straight into it);
// LayerNorm outputs, queries, softmax weights, attention outputs and MLP hidden chunks go from
// one product to the next in registers (tessel_mma.h). Only a head's keys and values (single
// buffered) and the level's relative-position bias live in shared memory (7.0 KiB at C = 32,
// 10.5 KiB at C = 96); the ends' token-row stage (9 KiB: two column halves in turn) shares
// those bytes, since it is used only before and after the attention. Every kernel stays far
// within the 48 KiB that every launch path allows (§8): inside a Vulkan command buffer the SM's
// shared-memory share is small, and each byte less is occupancy.
//
// Two variants take the network's ends along (docs/NETWORK.md §4): the first block of level 0
// computes its input as the embedding of the token buffer (tessel_block_embed_mma_c<C>), and the
// last computes the head (head_norm, head, the per-pixel head path) into the head buffer instead
// of storing its residual (tessel_block_head_mma_c<C>); each saves a launch and a round trip of
// the level-0 activations through memory. Between levels the same holds for the merges and
// expansions: the first block of an encoder level or of the bottleneck computes its input as the
// merge of the level below (tessel_block_merge_mma_c<C>: 2x2 space-to-depth gather of the lower
// stream, linear `merge`), and the last block of the bottleneck or of a decoder level ends in the
// expansion added into the level below (tessel_block_expand_mma_c<C>: linear `expand`,
// depth-to-space, the skip already there) instead of storing its own stream, which nothing reads
// after the expansion; tessel_block_merge_expand_mma_c<C> does both for a level of one block.
// The first block of a decoder level below the top may instead pull the expansion of the level
// above (tessel_block_pull_mma_c<C>: its input is the skip plus that expansion of its tokens'
// parents); tessel_block_pull_expand_mma_c<C> pulls it and ends in its own level's expansion, for
// a decoder level of one block.
//
// Per head h: q, k, v of the warp's 16 tokens; keys and transposed values to shared memory;
// scores S = q k^T / 4 + rpb for 64 keys, softmax in f32, O = P V, and x += O W_proj[:, h]^T.
// The MLP runs in chunks of 16 hidden channels: x += SiLU(LN2(x) W1[chunk]^T + b1) W2[:, chunk]^T.
// Rounding follows the unfused path: f16 LayerNorm outputs, q, k, v, attention output and hidden
// activations; f32 scores, softmax and accumulation.
#include "tessel_block.h"

#if defined(TS_HAS_MMA)

template <int C>
TS_INLINE void block_attention(bool bulk, const BlockArgs& p, float xr[C / 8][4], const ts_uint an[C / 16][4], WindowOrigin o, ts_uint warp, ts_uint g, ts_uint t, AttnShared<C>& sm, ts_uint* wsm) {
    constexpr int KT = C / 16, H = C / 16;
    auto& keys = sm.keys;
    auto& values = sm.values;
    float* bias = sm.bias;
#if defined(TS_HAS_WGMMA)
    // The staged weights have arrived (every thread's copies, then the barrier below), and the
    // products' proxy sees them.
    if (TS_WG(C) != 0 && !bulk) {
        ts_cp_async_wait_all();
        ts_fence_async_shared();
    }
#endif
    // The embedding variant's stage shares these bytes: every warp is done with it.
    ts_sync();
#if defined(TS_HAS_WGMMA)
    if (TS_WG(C) != 0 && bulk) ts_mbar_wait(weight_bars(), 0);
#endif
    // The level's position-bias tables go to shared memory by cp.async, in 16-byte pieces (the
    // last one reads into the weight blob's padding: every tensor starts 256-byte aligned): the
    // copy runs while head 0's products do, and head 0 waits for it before its barrier.
    constexpr ts_uint RPB_PIECES = (H * TS_RPB_ENTRIES + 3) / 4;
    for (ts_uint e = ts_thread_x(); e < RPB_PIECES; e += TS_BLOCK_THREADS) ts_cp_async16(bias + 4 * e, p.rpb + 4 * e);
    ts_cp_async_commit();
    // Query rows g and g + 8 sit at in-window positions r0 and r1 (row_pos): (ix, iy0), (ix, iy1).
    ts_uint r0 = row_pos(o, warp, g), r1 = row_pos(o, warp, g + 8);
    // (Written out for window rows: the compiler does not know that g < 8.)
    ts_uint ix = o.parity ? r0 % TS_WINDOW : g, iy0 = o.parity ? r0 / TS_WINDOW : 2 * warp, iy1 = o.parity ? r1 / TS_WINDOW : 2 * warp + 1;
#pragma unroll 1
    for (int h = 0; h < H; h++) {
        float q[2][4], k[2][4], v[2][4];
#if defined(TS_HAS_WGMMA)
        // Head h's weights: in the core blob (TS_WG), or its phase of the stream (TS_WS, which
        // also is the barrier after the previous head); byte offsets of its qkv rows (k tile 0;
        // each k tile QKV_KT further) and of its proj columns.
        const ts_uint* wb = wsm;
        constexpr ts_uint QKV_KT = TS_WS(C) ? 6 * 256 : (3 * C / 8) * 256;
        ts_uint qkv_at = TS_CORE_QKV(C) + TS_CORE_AT(3 * C, 0, 6 * h), proj_at = TS_CORE_PROJ(C) + TS_CORE_AT(C, h, 0);
        if constexpr (TS_WS(C) != 0) {
            wb = stream_phase<C>(p, wsm, h);
            qkv_at = 0;
            proj_at = 96 * C;
        }
        if constexpr (TS_WG(C) != 0 || TS_WS(C) != 0) {
            // q, k, v of head h: 48 consecutive rows.
            float qkv[6][4];
#pragma unroll
            for (int i = 0; i < 6; i++) bias_tile(qkv[i], p.qkv_b, (i / 2) * C + 16 * h + 8 * (i % 2), t);
            ts_wgmma_fence();
#pragma unroll
            for (int kt = 0; kt < KT; kt++) ts_wgmma<6>(qkv, an[kt], core_desc(wb, qkv_at + kt * QKV_KT));
            ts_wgmma_wait();
            if (h > 0 && TS_WG(C) != 0) ts_sync();
#pragma unroll
            for (int nt = 0; nt < 2; nt++) {
                ts_uint d = 8 * nt + 2 * t;
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    q[nt][e] = qkv[nt][e];
                    k[nt][e] = qkv[2 + nt][e];
                    v[nt][e] = qkv[4 + nt][e];
                }
                keys[r0][d / 2] = ts_pack(k[nt][0], k[nt][1]);
                keys[r1][d / 2] = ts_pack(k[nt][2], k[nt][3]);
                values[d][r0] = (ts_half)v[nt][0];
                values[d + 1][r0] = (ts_half)v[nt][1];
                values[d][r1] = (ts_half)v[nt][2];
                values[d + 1][r1] = (ts_half)v[nt][3];
            }
        }
#endif
#pragma unroll
        for (int nt = 0; nt < 2 && !TS_WG(C) && !TS_WS(C); nt++) {
            ts_uint n = 16 * h + 8 * nt;
            bias_tile(q[nt], p.qkv_b, n, t);
            bias_tile(k[nt], p.qkv_b, C + n, t);
            bias_tile(v[nt], p.qkv_b, 2 * C + n, t);
            ts_mma_frag<KT>(q[nt], an, ts_frag(p.qkv_w, n / 8, KT, 0));
            ts_mma_frag<KT>(k[nt], an, ts_frag(p.qkv_w, (C + n) / 8, KT, 0));
            ts_mma_frag<KT>(v[nt], an, ts_frag(p.qkv_w, (2 * C + n) / 8, KT, 0));
            ts_uint d = 8 * nt + 2 * t;
            // Every warp is done reading the previous head's keys and values.
            if (h > 0 && nt == 0) ts_sync();
            keys[r0][d / 2] = ts_pack(k[nt][0], k[nt][1]);
            keys[r1][d / 2] = ts_pack(k[nt][2], k[nt][3]);
            values[d][r0] = (ts_half)v[nt][0];
            values[d + 1][r0] = (ts_half)v[nt][1];
            values[d][r1] = (ts_half)v[nt][2];
            values[d + 1][r1] = (ts_half)v[nt][3];
        }
        // Queries as an A tile, rounded to f16 like the unfused qkv output and scaled by 1/4: a
        // power of two, so rounding q / 4 is rounding q, scaled (f16 subnormals aside).
        ts_uint qa[4];
        ts_c_to_a(qa, q[0], q[1], 0.25f, 0.25f);
        if (h == 0) ts_cp_async_wait_all();
        ts_sync();
        // Scores of the 64 keys: key j = 8 jt + 2t + e sits at (2t + e, jt).
        float s[8][4];
        float m0 = -3.4e38f, m1 = -3.4e38f;
        const float* bh = bias + h * TS_RPB_ENTRIES;
#pragma unroll
        for (int jt = 0; jt < 8; jt++) {
            // The bias is the accumulator's start: the product adds q k^T / 4 to it.
#pragma unroll
            for (int e = 0; e < 2; e++) {
                ts_uint dx = ix + 7 - (2 * t + e);
                s[jt][e] = bh[(iy0 + 7 - jt) * 15 + dx];
                s[jt][2 + e] = bh[(iy1 + 7 - jt) * 15 + dx];
            }
            ts_mma(s[jt], qa, keys[8 * jt + g][t], keys[8 * jt + g][t + 4]);
#pragma unroll
            for (int e = 0; e < 2; e++) {
                m0 = ts_max(m0, s[jt][e]);
                m1 = ts_max(m1, s[jt][2 + e]);
            }
        }
        m0 = ts_quad_max(m0);
        m1 = ts_quad_max(m1);
        // exp(s - m) as 2^(s log2 e - m log2 e): one fused multiply-add before the exponential.
        float n0 = -m0 * TS_LOG2E, n1 = -m1 * TS_LOG2E;
#pragma unroll
        for (int jt = 0; jt < 8; jt++) {
            s[jt][0] = ts_exp2(__builtin_fmaf(s[jt][0], TS_LOG2E, n0));
            s[jt][1] = ts_exp2(__builtin_fmaf(s[jt][1], TS_LOG2E, n0));
            s[jt][2] = ts_exp2(__builtin_fmaf(s[jt][2], TS_LOG2E, n1));
            s[jt][3] = ts_exp2(__builtin_fmaf(s[jt][3], TS_LOG2E, n1));
        }
        // O = P V over 4 key tiles, then normalised; the row sums come from the matrix pipe as
        // well, as P times a tile of ones (four products instead of 32 adds and a quad reduction;
        // they sum the f16 weights that P V uses).
        float o[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
        float l[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            ts_uint pa[4];
            ts_c_to_a(pa, s[2 * kk], s[2 * kk + 1], 1.0f, 1.0f);
#pragma unroll
            for (int nt = 0; nt < 2; nt++) {
                const ts_half* vr = &values[8 * nt + g][16 * kk + 2 * t];
                ts_mma(o[nt], pa, ts_ld2(vr), ts_ld2(vr + 8));
            }
            ts_mma(l, pa, TS_ONES_F16X2, TS_ONES_F16X2);
        }
        float l0 = l[0], l1 = l[2];
        ts_uint oa[4];
        ts_c_to_a(oa, o[0], o[1], ts_rcp(l0), ts_rcp(l1));
        // x += O_h W_proj[:, 16h .. 16h + 16]^T
#if defined(TS_HAS_WGMMA)
        if constexpr (TS_WG(C) != 0 || TS_WS(C) != 0) {
            ts_wgmma_fence();
            ts_wgmma<C / 8>(xr, oa, core_desc(wb, proj_at));
            ts_wgmma_wait();
            continue;
        }
#endif
#pragma unroll
        for (int j = 0; j < C / 8; j++) {
            ts_uint2 b = *ts_frag(p.proj_w, j, KT, h);
            ts_mma(xr[j], oa, b.x, b.y);
        }
    }
}

// The MLP's hidden chunks per step (TS_MLP_GROUP, or by width below): a group's fc1 products
// and SiLUs are independent of each other, so a warp has more than one product chain in flight
// while it waits on the matrix pipe and the exponentials; their fc2 products then accumulate
// into the stream in chunk order, the order of one chunk at a time.
// Two chunks from 32 channels up: 0.762 -> 0.745 ms for tessel-v6's network at 3840x2160 on the
// H200 (graphs; BENCHMARKS.md, eleventh session). Four were slower (the head kernel 0.189 ->
// 0.197 ms), and at 16 channels two left the JIT keeping 32 bytes per thread on the stack.
// With the weights in shared memory (sm_90a's warpgroup products), all six chunks of a 48-channel
// block's MLP (hidden width 96) in one step: the JIT gives those kernels 111-125 registers instead
// of 104-111, and the network took 0.574 -> 0.566 ms at 4K (three chunks: 0.569; four at 32
// channels: slower; sixteenth session; both chunks of a 16-channel MLP in one step: the same
// time, twenty-eighth session). The mma.sync kernels keep two. A group that does not
// divide the chunks leaves single chunks at the end; a streamed block (TS_WS) steps by two.
#ifndef TS_MLP_GROUP
#if defined(TS_HAS_WGMMA)
#define TS_MLP_GROUP(C) ((C) == 48 ? 6 : (C) >= 32 ? 2 : 1)
#else
#define TS_MLP_GROUP(C) ((C) >= 32 ? 2 : 1)
#endif
#endif

// x += SiLU(LN2(x) W1[chunks hc0 .. hc0 + N]^T + b1) W2[:, chunks]^T.
template <int C, int N>
TS_INLINE void mlp_chunks(const BlockArgs& p, float xr[C / 8][4], const ts_uint an[C / 16][4], ts_uint hc0, ts_uint t, ts_uint* wsm) {
    constexpr int KT = C / 16;
    ts_uint ha[N][4];
#if defined(TS_HAS_WGMMA)
    if constexpr (TS_WG(C) != 0 || TS_WS(C) != 0) {
        // The chunks' weights: in the core blob (TS_WG), or the step's phase of the stream
        // (TS_WS: two chunks a step, the fc1 rows then the fc2 columns); byte offsets of the fc1
        // rows (k tile 0; each k tile FC1_KT further) and of the first chunk's fc2 columns.
        static_assert(TS_WS(C) == 0 || N == 2, "a stream phase holds two hidden chunks");
        const ts_uint* wb = wsm;
        constexpr ts_uint FC1_KT = TS_WS(C) ? 4 * 256 : (2 * C / 8) * 256;
        ts_uint fc1_at = TS_CORE_FC1(C) + TS_CORE_AT(2 * C, 0, 2 * hc0), fc2_at = TS_CORE_FC2(C) + TS_CORE_AT(C, hc0, 0);
        if constexpr (TS_WS(C) != 0) {
            wb = stream_phase<C>(p, wsm, C / 16 + hc0 / 2);
            fc1_at = 0;
            fc2_at = 64 * C;
        }
        // The group's chunks as one product of 16 N columns, then each chunk's fc2 into the stream.
        float hh[2 * N][4];
#pragma unroll
        for (int i = 0; i < 2 * N; i++) bias_tile(hh[i], p.fc1_b, 16 * hc0 + 8 * i, t);
        ts_wgmma_fence();
#pragma unroll
        for (int kt = 0; kt < KT; kt++) ts_wgmma<2 * N>(hh, an[kt], core_desc(wb, fc1_at + kt * FC1_KT));
        ts_wgmma_wait();
#pragma unroll
        for (int c = 0; c < N; c++) {
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int e = 0; e < 4; e++) hh[2 * c + i][e] = TS_SILU_MODE == 1 ? ts_silu_tanh(hh[2 * c + i][e]) : ts_silu(hh[2 * c + i][e]);
            ts_c_to_a(ha[c], hh[2 * c], hh[2 * c + 1], 1.0f, 1.0f);
        }
        ts_wgmma_fence();
#pragma unroll
        for (int c = 0; c < N; c++) ts_wgmma<C / 8>(xr, ha[c], core_desc(wb, fc2_at + c * (C / 8) * 256));
        ts_wgmma_wait();
        return;
    }
#endif
#pragma unroll
    for (int c = 0; c < N; c++) {
        float hh[2][4];
#pragma unroll
        for (int nt = 0; nt < 2; nt++) {
            ts_uint n = 16 * (hc0 + c) + 8 * nt;
            bias_tile(hh[nt], p.fc1_b, n, t);
            ts_mma_frag<KT>(hh[nt], an, ts_frag(p.fc1_w, n / 8, KT, 0));
#pragma unroll
            for (int e = 0; e < 4; e++) hh[nt][e] = TS_SILU_MODE == 1 ? ts_silu_tanh(hh[nt][e]) : ts_silu(hh[nt][e]);
        }
        ts_c_to_a(ha[c], hh[0], hh[1], 1.0f, 1.0f);
    }
#pragma unroll
    for (int c = 0; c < N; c++) {
#pragma unroll
        for (int j = 0; j < C / 8; j++) {
            ts_uint2 b = *ts_frag(p.fc2_w, j, p.hidden / 16, hc0 + c);
            ts_mma(xr[j], ha[c], b.x, b.y);
        }
    }
}

template <int C>
TS_INLINE void block_mlp(const BlockArgs& p, float xr[C / 8][4], const ts_uint an[C / 16][4], ts_uint g, ts_uint t, ts_uint* wsm) {
    constexpr int N = TS_MLP_GROUP(C);
    ts_uint chunks = p.hidden / 16, hc = 0;
#pragma unroll 1
    for (; hc + N <= chunks; hc += N) mlp_chunks<C, N>(p, xr, an, hc, t, wsm);
    // (A streamed block's MLP of 2C is C / 8 chunks: an even count, no remainder.)
    if constexpr (N > 1 && TS_WS(C) == 0) {
#pragma unroll 1
        for (; hc < chunks; hc++) mlp_chunks<C, 1>(p, xr, an, hc, t, wsm);
    }
}

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

// Column half `half` (128 bytes) of the warp's 16 token rows of a 128-half buffer into `rows`,
// as 16-byte loads (or, STORE, back from `rows` to the buffer; PREFETCH: issued before the MLP,
// which uses no shared memory, so that the loads overlap it).
template <int MODE>
TS_INLINE void rows_copy(const BlockArgs& p, WindowOrigin o, ts_uint rows[16][TS_STAGE_STRIDE], ts_half* buf, ts_uint warp, ts_uint half) {
    if (MODE != TS_ROWS_PREFETCH) ts_warp_sync();  // every lane is done with what the rows held
    ts_uint lane = ts_lane();
    const ts_uint once = (p.flags & TS_ROWS_PLAIN) ? 0u : (ts_uint)TS_ROWS_ONCE;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        ts_uint idx = i * 32 + lane, row = idx / 8, col = idx % 8;
        ts_uint tok = window_token(p, o, row_pos(o, warp, row));
        ts_uint4* g = (ts_uint4*)(buf + tok * 2 * TS_ROW_WORDS) + 8 * half + col;
        if (MODE == TS_ROWS_STORE) {
            if (once & 2) ts_st16_once(g, ((const ts_uint4*)rows[row])[col]);
            else *g = ((const ts_uint4*)rows[row])[col];
        } else if (MODE == TS_ROWS_PREFETCH) {
            if (once & 1) ts_cp_async16_once((ts_uint4*)rows[row] + col, g);
            else ts_cp_async16((ts_uint4*)rows[row] + col, g);
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

// The merge of the level below into the warp's rows (MERGE variant), as the linear kernel computes
// it: gathered inputs in f16 (the f32 stream rounded, or the f16 stream as stored: H), bias
// first, then the k tiles in order. lower_c is a multiple of 16, so each k tile lies within one
// child.
template <int C, bool H>
TS_INLINE void block_merge(const BlockArgs& p, float xr[C / 8][4], WindowOrigin o, ts_uint r0, ts_uint r1, ts_uint t) {
#pragma unroll
    for (int j = 0; j < C / 8; j++) bias_tile(xr[j], p.merge_b, 8 * j, t);
    ts_uint cin = p.lower_c, kts = 4 * cin / 16;
    ts_uint base0 = lower_base(p, o, r0), base1 = lower_base(p, o, r1);
#pragma unroll 4
    for (ts_uint kt = 0; kt < kts; kt++) {
        ts_uint q = 16 * kt / cin, c = 16 * kt % cin + 2 * t, step = lower_step(p, q);
        ts_uint a[4];
        stream_a_tile<H>(a, p.lower, (base0 + step) * cin, (base1 + step) * cin, c, 0);
#pragma unroll
        for (int j = 0; j < C / 8; j++) {
            ts_uint2 b = *ts_frag(p.merge_w, j, kts, kt);
            ts_mma(xr[j], a, b.x, b.y);
        }
    }
}

// The PULL variant's input (the first block of a decoder level below the top): the level's skip
// plus the expansion of the level above (linear `expand`, depth-to-space), computed here for the
// warp's rows instead of added into the skip by the level above's last block. The warp's 16
// tokens are one child quadrant, q = warp (row_pos), so its C outputs of the expansion take one
// quadrant's weights; A is the parents' rows of the level above's stream (`upper`, upper_c
// channels, f32 rounded to f16, or f16 as stored: H, TS_STREAM_UPPER_F16). The same products, in
// the same order, and the same roundings as block_expand followed by the stream's load: bias
// first, then the k tiles; the skip added in f32, and the sum rounded to f16 where the stream is
// stored in f16.
template <int C, bool H>
TS_INLINE void block_pull(const BlockArgs& p, float xr[C / 8][4], WindowOrigin o, ts_uint warp, ts_uint tok0, ts_uint tok1, ts_uint g, ts_uint t) {
    ts_uint cu = p.upper_c, kts = cu / 16, upper_w = p.width / 2;
    ts_uint r0 = row_pos(o, warp, g), r1 = row_pos(o, warp, g + 8);
    ts_uint par0 = (window_y(p, o, r0) / 2) * upper_w + window_x(p, o, r0) / 2;
    ts_uint par1 = (window_y(p, o, r1) / 2) * upper_w + window_x(p, o, r1) / 2;
#pragma unroll
    for (int j = 0; j < C / 8; j++) bias_tile(xr[j], p.pull_b, warp * C + 8 * j, t);
    // One k tile at a time: loading four or eight tiles ahead measured slower (twenty-eighth session).
#pragma unroll 1
    for (ts_uint kt = 0; kt < kts; kt++) {
        ts_uint a[4];
        stream_a_tile<H>(a, p.upper, par0 * cu, par1 * cu, 16 * kt, 2 * t);
#pragma unroll
        for (int j = 0; j < C / 8; j++) {
            ts_uint2 b = *ts_frag(p.pull_w, warp * (C / 8) + j, kts, kt);
            ts_mma(xr[j], a, b.x, b.y);
        }
    }
#pragma unroll
    for (int j = 0; j < C / 8; j++) {
        ts_uint c = 8 * j + 2 * t;
        if (p.flags & TS_STREAM_X_F16) {
            ts_float2 a = ts_unpack(ts_ld2((const ts_half*)p.x + tok0 * C + c));
            ts_float2 b = ts_unpack(ts_ld2((const ts_half*)p.x + tok1 * C + c));
            ts_float2 u = ts_unpack(ts_pack(xr[j][0] + a.x, xr[j][1] + a.y)), v = ts_unpack(ts_pack(xr[j][2] + b.x, xr[j][3] + b.y));
            xr[j][0] = u.x, xr[j][1] = u.y, xr[j][2] = v.x, xr[j][3] = v.y;
        } else {
            ts_float2 a = *(const ts_float2*)(p.x + tok0 * C + c), b = *(const ts_float2*)(p.x + tok1 * C + c);
            xr[j][0] += a.x, xr[j][1] += a.y, xr[j][2] += b.x, xr[j][3] += b.y;
        }
    }
}

// The residual of the warp's rows: the level's stream, the merge of the level below (MERGE), or
// the embedding of the tokens (EMBED; with P = 8 from token rows staged in shared memory, else
// read in place).
template <int C, int IN>
TS_INLINE void block_load(const BlockArgs& p, float xr[C / 8][4], WindowOrigin o, ts_uint warp, ts_uint tok0, ts_uint tok1, ts_uint g, ts_uint t, ts_uint rows[16][TS_STAGE_STRIDE]) {
    if (IN == TS_IN_PULL) {
        if (p.flags & TS_STREAM_UPPER_F16) {
            block_pull<C, true>(p, xr, o, warp, tok0, tok1, g, t);
        } else {
            block_pull<C, false>(p, xr, o, warp, tok0, tok1, g, t);
        }
        return;
    }
    if (IN == TS_IN_MERGE) {
        // The lower stream's storage decides the gather's loop once, outside it.
        if (p.flags & TS_STREAM_LOWER_F16) {
            block_merge<C, true>(p, xr, o, row_pos(o, warp, g), row_pos(o, warp, g + 8), t);
        } else {
            block_merge<C, false>(p, xr, o, row_pos(o, warp, g), row_pos(o, warp, g + 8), t);
        }
        return;
    }
    if (IN == TS_IN_EMBED) {
        ts_uint in = TS_TOKEN_PIXELS * p.p;
#pragma unroll
        for (int j = 0; j < C / 8; j++) bias_tile(xr[j], p.embed_b, 8 * j, t);
        if (in == 2 * TS_ROW_WORDS) {
#pragma unroll 1
            for (ts_uint half = 0; half < 2; half++) {
                // Both halves were requested at the start (block_body); else one at a time.
                constexpr int HALVES = embed_halves<C>();
                ts_uint (*r)[TS_STAGE_STRIDE] = rows + (HALVES == 2 ? 16 * half : 0);
                if (HALVES == 1) rows_copy<TS_ROWS_LOAD>(p, o, rows, (ts_half*)p.tokens, warp, half);
                if (HALVES == 2 && half == 0) rows_wait();
#pragma unroll
                for (ts_uint k4 = 0; k4 < 4; k4++) {
                    ts_uint kt = 4 * half + k4, w = 8 * k4;
                    ts_uint a[4] = {r[g][w + t], r[g + 8][w + t], r[g][w + t + 4], r[g + 8][w + t + 4]};
#pragma unroll
                    for (int j = 0; j < C / 8; j++) {
                        ts_uint2 b = *ts_frag(p.embed_w, j, in / 16, kt);
                        ts_mma(xr[j], a, b.x, b.y);
                    }
                }
            }
            return;
        }
#pragma unroll 1
        for (ts_uint kt = 0; kt < in / 16; kt++) {
            ts_uint k = 16 * kt + 2 * t;
            ts_uint a[4] = {ts_ld2(p.tokens + tok0 * in + k), ts_ld2(p.tokens + tok1 * in + k), ts_ld2(p.tokens + tok0 * in + k + 8), ts_ld2(p.tokens + tok1 * in + k + 8)};
#pragma unroll
            for (int j = 0; j < C / 8; j++) {
                ts_uint2 b = *ts_frag(p.embed_w, j, in / 16, kt);
                ts_mma(xr[j], a, b.x, b.y);
            }
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < C / 8; j++) {
        ts_float2 a, b;
        if (p.flags & TS_STREAM_X_F16) {
            a = ts_unpack(ts_ld2((const ts_half*)p.x + tok0 * C + 8 * j + 2 * t));
            b = ts_unpack(ts_ld2((const ts_half*)p.x + tok1 * C + 8 * j + 2 * t));
        } else {
            a = *(const ts_float2*)(p.x + tok0 * C + 8 * j + 2 * t);
            b = *(const ts_float2*)(p.x + tok1 * C + 8 * j + 2 * t);
        }
        xr[j][0] = a.x;
        xr[j][1] = a.y;
        xr[j][2] = b.x;
        xr[j][3] = b.y;
    }
}

// Whether the head variant stages the token rows (the per-pixel head path with P = 8).
TS_INLINE bool head_staged(const BlockArgs& p) {
    return p.pixel_w && p.p == 8;
}

// The head of the warp's 16 tokens (HEAD variant): LayerNorm, 128 outputs, the per-pixel head
// path (output tile nt is pixel nt of the token: one k = 8 product per P/8), rounded to f16,
// staged in shared memory and written as whole 256-byte token rows. STAGED (P = 8): the token
// rows are staged first (half 0 was prefetched before the MLP): pixel nt's embedding is words
// 4nt .. 4nt+3 of its row, and each lane overwrites exactly the words it read with its head
// outputs. The per-pixel path's bias is already in head_b.
template <int C, bool STAGED>
TS_INLINE void block_head(const BlockArgs& p, const float xr[C / 8][4], ts_uint an[C / 16][4], WindowOrigin o, ts_uint warp, ts_uint tok0, ts_uint tok1, ts_uint g, ts_uint t, ts_uint rows[16][TS_STAGE_STRIDE]) {
    constexpr int KT = C / 16;
    block_norm<C>(xr, p.head_norm_w, p.head_norm_b, t, an);
    ts_uint pw = STAGED ? ((const ts_uint*)p.pixel_w)[ts_lane()] : 0;
#pragma unroll 1
    for (int half = 0; half < 2; half++) {
        // Pixels 0-7 and 8-15 are the two column halves of the rows.
        // Half 0 (both halves where TS_HEAD_HALVES is 2) was requested before the MLP.
        ts_uint (*r)[TS_STAGE_STRIDE] = rows + (TS_HEAD_HALVES == 2 ? 16 * half : 0);
        if (STAGED && half == 0) rows_wait();
        if (STAGED && half == 1 && TS_HEAD_HALVES == 1) rows_copy<TS_ROWS_LOAD>(p, o, rows, (ts_half*)p.tokens, warp, half);
#pragma unroll 4
        for (int n8 = 0; n8 < 8; n8++) {
            int nt = 8 * half + n8;
            ts_uint w = 4 * n8;
            float d[4];
            bias_tile(d, p.head_b, 8 * nt, t);
            ts_mma_frag<KT>(d, an, ts_frag(p.head_w, nt, KT, 0));
            if (STAGED) {
                ts_mma_k8(d, r[g][w + t], r[g + 8][w + t], pw);
            } else if (p.pixel_w) {
                for (ts_uint kt = 0; kt < p.p / 8; kt++) {
                    ts_uint q = 8 * kt + 2 * t;
                    ts_uint a0 = ts_ld2(p.tokens + (tok0 * TS_TOKEN_PIXELS + nt) * p.p + q);
                    ts_uint a1 = ts_ld2(p.tokens + (tok1 * TS_TOKEN_PIXELS + nt) * p.p + q);
                    ts_mma_k8(d, a0, a1, ((const ts_uint*)p.pixel_w)[kt * 32 + ts_lane()]);
                }
            }
            r[g][w + t] = ts_pack(d[0], d[1]);
            r[g + 8][w + t] = ts_pack(d[2], d[3]);
        }
        rows_copy<TS_ROWS_STORE>(p, o, r, p.head, warp, half);
    }
}

// The expansion of the warp's rows added into the level below (EXPAND variant), as the linear
// kernel computes it: the stream rounded to f16, bias first, output o of row (tx, ty) going to
// channel o mod lower_c of child o / lower_c, added to the skip stored there (in f32, or in f16
// and the sum rounded to f16: H).
template <int C, bool H>
TS_INLINE void block_expand(const BlockArgs& p, const float xr[C / 8][4], ts_uint an[C / 16][4], WindowOrigin o, ts_uint r0, ts_uint r1, ts_uint t) {
    constexpr int KT = C / 16;
#pragma unroll
    for (int kt = 0; kt < KT; kt++) ts_c_to_a(an[kt], xr[2 * kt], xr[2 * kt + 1], 1.0f, 1.0f);
    ts_uint cout = p.lower_c;
    ts_uint base0 = lower_base(p, o, r0), base1 = lower_base(p, o, r1);
    // (Loading four tiles' skips before their products and stores ran 3.5x slower at C = 48 on
    // the H200: BENCHMARKS.md, tenth session.)
#pragma unroll 2
    for (ts_uint n0 = 0; n0 < 4 * cout; n0 += 8) {
        float d[4];
        bias_tile(d, p.expand_b, n0, t);
        ts_mma_frag<KT>(d, an, ts_frag(p.expand_w, n0 / 8, KT, 0));
        ts_uint out = n0 + 2 * t, q = out / cout, c = out % cout, step = lower_step(p, q);
        if constexpr (H) {
            ts_uint* y0 = (ts_uint*)((ts_half*)p.lower + (base0 + step) * cout + c);
            ts_uint* y1 = (ts_uint*)((ts_half*)p.lower + (base1 + step) * cout + c);
            ts_float2 s0 = ts_unpack(*y0), s1 = ts_unpack(*y1);
            *y0 = ts_pack(d[0] + s0.x, d[1] + s0.y);
            *y1 = ts_pack(d[2] + s1.x, d[3] + s1.y);
        } else {
            ts_float2* y0 = (ts_float2*)(p.lower + (base0 + step) * cout + c);
            ts_float2* y1 = (ts_float2*)(p.lower + (base1 + step) * cout + c);
            ts_float2 s0 = *y0, s1 = *y1;
            *y0 = ts_float2{d[0] + s0.x, d[1] + s0.y};
            *y1 = ts_float2{d[2] + s1.x, d[3] + s1.y};
        }
    }
}

// TS_PREFETCH_L2: lines a block reads late are asked of L2 ahead (ts_prefetch_l2): at the start,
// the merge's whole gather (then in flight at once, not four k tiles at a time) and the second
// half of the token rows the embedding reads; before the MLP, the level below's skip that the
// expansion adds into and the second half of the token rows the head reads (from the start they
// would leave L2 again before use). 0: no prefetches.
#ifndef TS_PREFETCH_L2
#define TS_PREFETCH_L2 1
#endif
// What block_prefetch asks for: the lower stream's 2x2 children, or the token rows' second half.
#define TS_PREFETCH_LOWER 0
#define TS_PREFETCH_TOKENS 1
template <int WHAT>
TS_INLINE void block_prefetch(const BlockArgs& p, WindowOrigin o, ts_uint warp) {
    if (!TS_PREFETCH_L2) return;
    ts_uint lane = ts_lane(), r = row_pos(o, warp, lane % 16);
    if (WHAT == TS_PREFETCH_LOWER) {
        // The 2x2 children of the warp's 16 tokens: lanes 0-15 children 0 and 2, lanes 16-31
        // children 1 and 3, each row of lower_c values (f32, or f16: TS_STREAM_LOWER_F16) in
        // 128-byte lines.
        ts_uint base = lower_base(p, o, r), cin = p.lower_c, size = (p.flags & TS_STREAM_LOWER_F16) ? 2 : 4;
        for (ts_uint q = lane / 16; q < 4; q += 2) {
            const char* row = (const char*)p.lower + (base + lower_step(p, q)) * cin * size;
            for (ts_uint off = 0; off < cin * size; off += 128) ts_prefetch_l2(row + off);
        }
    }
    if (WHAT == TS_PREFETCH_TOKENS) {
        // The second 128-byte half of each token row (P = 8): lane l takes token l % 16.
        if (lane < 16 && TS_TOKEN_PIXELS * p.p == 2 * TS_ROW_WORDS) ts_prefetch_l2((const ts_half*)p.tokens + window_token(p, o, r) * 2 * TS_ROW_WORDS + TS_ROW_WORDS);
    }
}

// TS_WPREFETCH: the launch's last workgroups ask L2 for the whole weight blob, one line a thread
// (kept ahead of unmarked lines), so that the next launch finds its block's weights there; the
// level streams and the token and head rows of a frame pass through L2 between two launches'
// uses of a block's weights otherwise.
#ifndef TS_WPREFETCH
#define TS_WPREFETCH 1
#endif
TS_INLINE void weights_prefetch(const BlockArgs& p) {
    if (!TS_WPREFETCH || p.prefetch_lines == 0) return;
    ts_uint nb = (p.prefetch_lines + TS_BLOCK_THREADS - 1) / TS_BLOCK_THREADS, b = ts_block_x(), grid = ts_grid_x();
    if (b + nb < grid) return;
    ts_uint line = (b + nb - grid) * TS_BLOCK_THREADS + ts_thread_x();
    if (line < p.prefetch_lines) ts_prefetch_l2_last(p.prefetch + 128 * (unsigned long long)line);
}

template <int C, int IN, int OUT>
TS_INLINE void block_body(const BlockArgs& args) {
    BlockArgs p = args;  // TS_VEC_SHARED points its vectors into shared memory
    weights_prefetch(p);
    ts_uint lane = ts_lane(), warp = ts_thread_x() / 32, g = lane / 4, t = lane % 4;
    WindowOrigin o = window_origin(p, IN == TS_IN_PULL);
    ts_uint tok0 = window_token(p, o, row_pos(o, warp, g)), tok1 = window_token(p, o, row_pos(o, warp, g + 8));
    constexpr int STAGED = (IN == TS_IN_EMBED || OUT == TS_OUT_HEAD) ? TS_BLOCK_THREADS / 32 : 1;
    // Column halves staged at once: the embedding's (TS_STAGE_HALVES), the head's (TS_HEAD_HALVES).
    constexpr int HALVES = IN == TS_IN_EMBED ? embed_halves<C>() : OUT == TS_OUT_HEAD ? TS_HEAD_HALVES : 1;
    TS_SHARED __attribute__((aligned(16))) BlockShared<C, STAGED, HALVES> sm;
    ts_uint (*rows)[TS_STAGE_STRIDE] = sm.stage[STAGED > 1 ? warp : 0][0];
    // The embedding's token rows, both halves, before anything else (TS_STAGE_HALVES).
    constexpr bool EMBED_ROWS = IN == TS_IN_EMBED && HALVES == 2;
    if (EMBED_ROWS && TS_TOKEN_PIXELS * p.p == 2 * TS_ROW_WORDS) {
        rows_copy<TS_ROWS_PREFETCH>(p, o, rows, (ts_half*)p.tokens, warp, 0);
        rows_copy<TS_ROWS_PREFETCH>(p, o, rows + 16, (ts_half*)p.tokens, warp, 1);
    }
    // The block's vectors (TS_VEC_SHARED), a group of copies before the weights'.
    constexpr unsigned VEC = block_vec_floats<C, OUT>();
    constexpr bool VEC_SHARED = TS_VEC_SHARED && (TS_WG(C) || TS_WS(C)) &&
                                sizeof(BlockShared<C, STAGED, HALVES>) + TS_WSM_WORDS(C) * 4 + VEC * 4 <= 48 * 1024;
    TS_SHARED __attribute__((aligned(16))) float vsm[VEC_SHARED ? VEC : 4];
    if constexpr (VEC_SHARED) stage_vectors<C, OUT>(p, vsm);
    // The block's weights in core matrices (TS_WG): copied while the input loads.
    TS_SHARED __attribute__((aligned(128))) ts_uint wsm[TS_WSM_WORDS(C)];
    // The weights by bulk copies (TS_BULK), where the mbarriers' 16 bytes fit as well (with up to
    // 112 of alignment before the 128-byte aligned weights); the streamed widths always do.
    constexpr bool BULK = TS_BULK && (TS_WG(C) || TS_WS(C)) &&
                          sizeof(BlockShared<C, STAGED, HALVES>) + TS_WSM_WORDS(C) * 4 + (VEC_SHARED ? VEC * 4 : 0) + 128 <= 48 * 1024;
    static_assert(!TS_BULK || !TS_WS(C) || BULK, "the stream ring's copies are bulk copies throughout");
    bool bulk = false;
#if defined(TS_HAS_WGMMA)
    bulk = BULK && weights_bulk(p);
    if (bulk) {
        // (Every thread waits on these only after a barrier: the attention's first.)
        if (ts_thread_x() == 0) {
            ts_mbar_init(weight_bars());
            ts_mbar_init(weight_bars() + 1);
            if constexpr (TS_WG(C) != 0) ts_bulk_copy(wsm, p.qkv_w, TS_CORE_BYTES(C), weight_bars());
        }
    }
#endif
    if (TS_WG(C) != 0 && !bulk) {
        for (ts_uint e = ts_thread_x(); e < TS_CORE_BYTES(C) / 16; e += TS_BLOCK_THREADS) ts_cp_async16(wsm + 4 * e, (const ts_uint*)p.qkv_w + 4 * e);
        ts_cp_async_commit();
    }
#if defined(TS_HAS_WGMMA)
    if constexpr (TS_WS(C) != 0) {
        stream_copy<C>(p, wsm, 0);
        stream_copy<C>(p, wsm, 1);
    }
#endif
    float xr[C / 8][4];
    if (IN == TS_IN_MERGE) block_prefetch<TS_PREFETCH_LOWER>(p, o, warp);
    if (IN == TS_IN_EMBED && !EMBED_ROWS) block_prefetch<TS_PREFETCH_TOKENS>(p, o, warp);
    constexpr bool ROWS_IN = (TS_STREAM_ROWS & 1) != 0 && IN == TS_IN_STREAM && sizeof(BlockShared<C, STAGED, HALVES>) >= stream_stage_words<C>() * 4;
    if (ROWS_IN && (p.flags & (TS_STREAM_X_F16 | TS_STREAM_PAIRS)) == TS_STREAM_X_F16) {
        // The stage shares the attention's bytes, unused until its first barrier.
        constexpr ts_uint S = stream_stage_stride<C>();
        ts_uint* st = (ts_uint*)&sm + warp * 16 * S;
        stream_rows<C, false>(p, o, warp, (ts_half*)p.x, st);
#pragma unroll
        for (int j = 0; j < C / 8; j++) {
            ts_float2 a = ts_unpack(st[g * S + 4 * j + t]), b = ts_unpack(st[(g + 8) * S + 4 * j + t]);
            xr[j][0] = a.x, xr[j][1] = a.y, xr[j][2] = b.x, xr[j][3] = b.y;
        }
    } else {
        block_load<C, IN>(p, xr, o, warp, tok0, tok1, g, t, rows);
    }
    if constexpr (VEC_SHARED) {
        // The vectors have arrived (the weights' groups, committed after them, may not have),
        // every thread's share, and every warp sees them.
        if (bulk) {
            ts_cp_async_wait_group<0>();
        } else {
            ts_cp_async_wait_group<(TS_WG(C) ? 1 : 0) + (TS_WS(C) ? 2 : 0)>();
        }
        ts_sync();
    }
    ts_uint an[C / 16][4];
    block_norm<C>(xr, p.norm1_w, p.norm1_b, t, an);
#pragma unroll
    for (int j = 0; j < C / 8; j++) {
        float b[4];
        bias_tile(b, p.proj_b, 8 * j, t);
        for (int e = 0; e < 4; e++) xr[j][e] += b[e];
    }
    block_attention<C>(bulk, p, xr, an, o, warp, g, t, sm.attn, wsm);
    block_norm<C>(xr, p.norm2_w, p.norm2_b, t, an);
#pragma unroll
    for (int j = 0; j < C / 8; j++) {
        float b[4];
        bias_tile(b, p.fc2_b, 8 * j, t);
        for (int e = 0; e < 4; e++) xr[j][e] += b[e];
    }
    if (OUT == TS_OUT_HEAD) {
        // The stage shares the attention's bytes: once every warp is done with them, the token
        // rows of the head's first column half load while the MLP runs.
        ts_sync();
        if (head_staged(p)) {
            rows_copy<TS_ROWS_PREFETCH>(p, o, rows, (ts_half*)p.tokens, warp, 0);
            if (TS_HEAD_HALVES == 2) {
                rows_copy<TS_ROWS_PREFETCH>(p, o, rows + 16, (ts_half*)p.tokens, warp, 1);
            } else {
                block_prefetch<TS_PREFETCH_TOKENS>(p, o, warp);
            }
        }
    }
    if (OUT == TS_OUT_EXPAND) block_prefetch<TS_PREFETCH_LOWER>(p, o, warp);
    block_mlp<C>(p, xr, an, g, t, wsm);
    if (OUT == TS_OUT_HEAD) {
        if (head_staged(p)) {
            block_head<C, true>(p, xr, an, o, warp, tok0, tok1, g, t, rows);
        } else {
            block_head<C, false>(p, xr, an, o, warp, tok0, tok1, g, t, rows);
        }
        return;
    }
    if (OUT == TS_OUT_EXPAND) {
        if (p.flags & TS_STREAM_LOWER_F16) {
            block_expand<C, true>(p, xr, an, o, row_pos(o, warp, g), row_pos(o, warp, g + 8), t);
        } else {
            block_expand<C, false>(p, xr, an, o, row_pos(o, warp, g), row_pos(o, warp, g + 8), t);
        }
        return;
    }
    if constexpr ((TS_STREAM_ROWS & 2) != 0) {
        // The attention's bytes (or, where they are too few, the weights', which the MLP's last
        // products have read) are free once every warp is past the MLP.
        constexpr bool IN_ATTN = sizeof(BlockShared<C, STAGED, HALVES>) >= stream_stage_words<C>() * 4;
        constexpr bool IN_WSM = TS_WSM_WORDS(C) >= stream_stage_words<C>();
        if constexpr (IN_ATTN || IN_WSM) {
            if ((p.flags & (TS_STREAM_X_F16 | TS_STREAM_PAIRS)) == TS_STREAM_X_F16) {
                ts_sync();
                constexpr ts_uint S = stream_stage_stride<C>();
                ts_uint* st = (IN_ATTN ? (ts_uint*)&sm : wsm) + warp * 16 * S;
#pragma unroll
                for (int j = 0; j < C / 8; j++) {
                    st[g * S + 4 * j + t] = ts_pack(xr[j][0], xr[j][1]);
                    st[(g + 8) * S + 4 * j + t] = ts_pack(xr[j][2], xr[j][3]);
                }
                stream_rows<C, true>(p, o, warp, (ts_half*)p.x, st);
                return;
            }
        }
    }
#pragma unroll
    for (int j = 0; j < C / 8; j++) {
        if (p.flags & TS_STREAM_X_F16) {
            *(ts_uint*)((ts_half*)p.x + tok0 * C + 8 * j + 2 * t) = ts_pack(xr[j][0], xr[j][1]);
            *(ts_uint*)((ts_half*)p.x + tok1 * C + 8 * j + 2 * t) = ts_pack(xr[j][2], xr[j][3]);
        } else {
            ts_float2 a = {xr[j][0], xr[j][1]}, b = {xr[j][2], xr[j][3]};
            *(ts_float2*)(p.x + tok0 * C + 8 * j + 2 * t) = a;
            *(ts_float2*)(p.x + tok1 * C + 8 * j + 2 * t) = b;
        }
    }
}

// One kernel per level width (multiples of 16 up to 8 heads) and variant: tessel_block_mma_c<C>,
// the merge and expand variants between levels; the embed and head variants for the widths a
// first level takes (up to 64).
#include "tessel_block_bounds.h"
#define TS_BLOCK_VARIANT(NAME, C, IN, OUT, BOUNDS) \
    TS_KERNEL BOUNDS void tessel_block_##NAME##mma_c##C(BlockArgs p) { block_body<C, IN, OUT>(p); }
#define TS_BLOCK_MMA(C, BOUNDS) TS_BLOCK_MMA_M(C, BOUNDS, BOUNDS)
#define TS_BLOCK_MMA_M(C, BOUNDS, MERGE_BOUNDS) \
    TS_BLOCK_VARIANT(, C, TS_IN_STREAM, TS_OUT_STREAM, BOUNDS) \
    TS_BLOCK_VARIANT(pull_, C, TS_IN_PULL, TS_OUT_STREAM, BOUNDS) \
    TS_BLOCK_VARIANT(merge_, C, TS_IN_MERGE, TS_OUT_STREAM, MERGE_BOUNDS) \
    TS_BLOCK_VARIANT(expand_, C, TS_IN_STREAM, TS_OUT_EXPAND, BOUNDS) \
    TS_BLOCK_VARIANT(merge_expand_, C, TS_IN_MERGE, TS_OUT_EXPAND, BOUNDS) \
    TS_BLOCK_VARIANT(pull_expand_, C, TS_IN_PULL, TS_OUT_EXPAND, BOUNDS)
#define TS_BLOCK_ENDS_MMA(C, BOUNDS) \
    TS_BLOCK_VARIANT(embed_, C, TS_IN_EMBED, TS_OUT_STREAM, BOUNDS) \
    TS_BLOCK_VARIANT(head_, C, TS_IN_STREAM, TS_OUT_HEAD, BOUNDS)
// At 16 channels the JIT's own choice for the head kernel was sometimes 48 registers and 92
// bytes of stack; "one workgroup per SM at least" lets it take the 72 it needs.
TS_BLOCK_ENDS_MMA(16, TS_BLOCK_BOUNDS_WIDE)
TS_BLOCK_ENDS_MMA(32, TS_BLOCK_BOUNDS_NARROW)
TS_BLOCK_ENDS_MMA(48, TS_BLOCK_BOUNDS_NARROW)
TS_BLOCK_ENDS_MMA(64, TS_BLOCK_BOUNDS_NARROW)
TS_BLOCK_MMA(16, TS_BLOCK_BOUNDS_NARROW)
TS_BLOCK_MMA(32, TS_BLOCK_BOUNDS_NARROW)
TS_BLOCK_MMA(48, TS_BLOCK_BOUNDS_NARROW)
TS_BLOCK_MMA(64, TS_BLOCK_BOUNDS_NARROW)
TS_BLOCK_MMA_M(80, TS_BLOCK_BOUNDS_WIDER, TS_BLOCK_BOUNDS_MERGE)
TS_BLOCK_MMA_M(96, TS_BLOCK_BOUNDS_WIDER, TS_BLOCK_BOUNDS_MERGE)
TS_BLOCK_MMA(112, TS_BLOCK_BOUNDS_WIDE)
TS_BLOCK_MMA(128, TS_BLOCK_BOUNDS_WIDE)
#endif
