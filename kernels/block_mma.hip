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
//
// This file holds the block's order of work (block_body) and the kernel table; its parts are in
// include/: the interface, shared-memory layout and switches (tessel_block.h), the attention half
// (tessel_block_attention.h), the MLP half (tessel_block_mlp.h), how rows of the token, head and
// stream buffers move (tessel_block_rows.h), the variants' inputs and outputs (tessel_block_ends.h)
// and the launch bounds (tessel_block_bounds.h).
#include "tessel_block.h"

#if defined(TS_HAS_MMA)

#include "tessel_block_attention.h"
#include "tessel_block_mlp.h"
#include "tessel_block_rows.h"
#include "tessel_block_ends.h"

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
    // A block reading its level's stream loads its rows before it issues the copies of its
    // vectors and weights, whose asm statements the compiler may not move loads across, so that
    // the rows' wait overlaps them (TS_LOAD_FIRST; not the head, which measured slower so).
    float xr[C / 8][4];
    constexpr bool ROWS_IN = (TS_STREAM_ROWS & 1) != 0 && IN == TS_IN_STREAM && sizeof(BlockShared<C, STAGED, HALVES>) >= stream_stage_words<C>() * 4;
    constexpr bool LOAD_FIRST = TS_LOAD_FIRST && IN == TS_IN_STREAM && OUT != TS_OUT_HEAD && !ROWS_IN;
    if (LOAD_FIRST) block_load<C, IN>(p, xr, o, warp, tok0, tok1, g, t, rows);
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
    if (IN == TS_IN_MERGE) block_prefetch<TS_PREFETCH_LOWER>(p, o, warp);
    if (IN == TS_IN_EMBED && !EMBED_ROWS) block_prefetch<TS_PREFETCH_TOKENS>(p, o, warp);
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
    } else if (!LOAD_FIRST) {
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
    // The expansion's skip into the attention's weight bytes, once every warp is done with them
    // (TS_EXPAND_STAGE), or asked of L2 (TS_PREFETCH_LOWER).
    const ts_uint* skip = nullptr;
    if constexpr (OUT == TS_OUT_EXPAND) {
        if (expand_staged<C>(p)) {
            ts_sync();
            skip_copy(p, o, wsm);
            skip = wsm;
        } else {
            block_prefetch<TS_PREFETCH_LOWER>(p, o, warp);
        }
    }
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
        if (skip) {
            // Every thread's pieces have arrived, and every warp sees all of them.
            ts_cp_async_wait_all();
            ts_sync();
        }
        if (p.flags & TS_STREAM_LOWER_F16) {
            block_expand<C, true>(p, xr, an, o, row_pos(o, warp, g), row_pos(o, warp, g + 8), t, skip);
        } else {
            block_expand<C, false>(p, xr, an, o, row_pos(o, warp, g), row_pos(o, warp, g + 8), t, nullptr);
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
#if defined(TS_HAS_WGMMA)
    // The plain block above 64 channels (sm_90a): the rows' addresses made again from the token
    // indices, not kept from the load's (four 64-bit pointers live through the whole block, which
    // spilled at four workgroups an SM: TS_PLAIN_OCC).
    if constexpr (C > 64 && IN == TS_IN_STREAM) asm volatile("" : "+r"(tok0), "+r"(tok1));
#endif
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
#define TS_BLOCK_MMA(C, BOUNDS) TS_BLOCK_MMA_M(C, BOUNDS, BOUNDS, BOUNDS)
#define TS_BLOCK_MMA_M(C, BOUNDS, MERGE_BOUNDS, PLAIN_BOUNDS) \
    TS_BLOCK_VARIANT(, C, TS_IN_STREAM, TS_OUT_STREAM, PLAIN_BOUNDS) \
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
TS_BLOCK_MMA_M(80, TS_BLOCK_BOUNDS_WIDER, TS_BLOCK_BOUNDS_MERGE, TS_BLOCK_BOUNDS_PLAIN)
TS_BLOCK_MMA_M(96, TS_BLOCK_BOUNDS_WIDER, TS_BLOCK_BOUNDS_MERGE, TS_BLOCK_BOUNDS_PLAIN)
TS_BLOCK_MMA(112, TS_BLOCK_BOUNDS_WIDE)
TS_BLOCK_MMA(128, TS_BLOCK_BOUNDS_WIDE)
#endif
