// What the fused window blocks' variants read first and write last (kernels/block_mma.hip): the
// merge of the level below (MERGE), the pulled expansion of the level above (PULL), the embedding
// of the token rows (EMBED) or the stream, the head into the head buffer (HEAD), the expansion
// added into the level below (EXPAND), and the L2 prefetches ahead of them. block_mma.hip
// includes it where the matrix products exist (TS_HAS_MMA).
#pragma once

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

// TS_EXPAND_STAGE (sm_90a; 1 by default, 0 builds without it): where hip-net's plan marks an
// expansion TS_EXPAND_STAGED, its skip (the level below's f16 rows of the window's 64 tokens'
// children, 512 lower_c bytes) is copied by cp.async into the shared bytes of the attention's
// weights (qkv and proj, 8 C^2 bytes, unused once every warp is past the attention) while the MLP
// runs, and the expansion reads it there instead of waiting on a load per output tile. The sums
// are the same to the bit. On the H100 (BENCHMARKS.md, sixtieth session) the fast preset's
// pull-and-expand launch (a 16-channel level below, 8 KiB a window) went from 74 to 69-70 µs;
// tessel-v12's last level-1 expansion (32 channels, 16 KiB) from 72 to 73, so the plan marks only
// expansions into a level of 16 channels or fewer (hip-net/src/plan.rs, EXPAND_STAGE_MAX_C).
#ifndef TS_EXPAND_STAGE
#if defined(TS_HAS_WGMMA)
#define TS_EXPAND_STAGE 1
#else
#define TS_EXPAND_STAGE 0
#endif
#endif
// Whether this launch stages its skip: marked by the plan, with an f16 lower stream whose rows
// are a power of two of 16-byte pieces and fit the attention's weight bytes.
template <int C>
TS_INLINE bool expand_staged(const BlockArgs& p) {
    return TS_EXPAND_STAGE && TS_WG(C) && (p.flags & TS_EXPAND_STAGED) && (p.flags & TS_STREAM_LOWER_F16) &&
           (p.lower_c & (p.lower_c - 1)) == 0 && p.lower_c >= 16 && 512 * p.lower_c <= TS_CORE_FC1(C);
}
// The stage holds, for window row r and child row dy, the pair of children (dx = 0, 1) as
// lower_c / 4 pieces of 16 bytes, piece j at j ^ skip_key(r): the eight rows a warp's lanes read
// at once (r = 8 iy + ix for ix 0..7, or the PULL variant's rows of one parity class) fall on
// eight different pieces where a pair has eight or more (lower_c of 32 or more), so no two lanes
// of a read meet in one bank; at 16 channels (four pieces a pair) two rows share each piece, a
// two-way conflict.
TS_INLINE ts_uint skip_key(ts_uint r) {
    ts_uint ix = r % TS_WINDOW, iy = r / TS_WINDOW;
    return ((ix >> 1) & 3) | ((((iy >> 1) ^ ix) & 1) << 2);
}
// Where piece j (of np = lower_c / 4) of child row dy of window row r lies in the stage, in
// 16-byte pieces: the one layout skip_copy writes and block_expand reads.
TS_INLINE ts_uint skip_piece(ts_uint r, ts_uint dy, ts_uint j, ts_uint np) {
    return (2 * r + dy) * np + (j ^ (skip_key(r) & (np - 1)));
}
// Every thread's share of the window's skip into `st` (one group of copies, committed).
TS_INLINE void skip_copy(const BlockArgs& p, WindowOrigin o, ts_uint* st) {
    ts_uint np = p.lower_c / 4, sh = __builtin_ctz(np);
    for (ts_uint e = ts_thread_x(); e < 2 * TS_WINDOW_TOKENS * np; e += TS_BLOCK_THREADS) {
        ts_uint j = e & (np - 1), s = e >> sh, r = s / 2;
        const ts_half* src = (const ts_half*)p.lower + (lower_base(p, o, r) + (s % 2) * 2 * p.width) * p.lower_c + 8 * j;
        ts_cp_async16(st + 4 * skip_piece(r, s % 2, j, np), src);
    }
    ts_cp_async_commit();
}

// The expansion of the warp's rows added into the level below (EXPAND variant), as the linear
// kernel computes it: the stream rounded to f16, bias first, output o of row (tx, ty) going to
// channel o mod lower_c of child o / lower_c, added to the skip stored there (in f32, or in f16
// and the sum rounded to f16: H), read from the stage `st` where it was staged (TS_EXPAND_STAGE;
// null: from the stream).
template <int C, bool H>
TS_INLINE void block_expand(const BlockArgs& p, const float xr[C / 8][4], ts_uint an[C / 16][4], WindowOrigin o, ts_uint r0, ts_uint r1, ts_uint t, const ts_uint* st) {
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
            ts_float2 s0, s1;
            if (st) {
                // Piece j of the child pair (q % 2 = dx), word t of it (c mod 8 = 2t).
                ts_uint np = cout / 4, j = (q % 2) * (cout / 8) + c / 8;
                s0 = ts_unpack(st[4 * skip_piece(r0, q / 2, j, np) + t]);
                s1 = ts_unpack(st[4 * skip_piece(r1, q / 2, j, np) + t]);
            } else {
                s0 = ts_unpack(*y0), s1 = ts_unpack(*y1);
            }
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
