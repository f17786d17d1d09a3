// The fused window block's attention half (kernels/block_mma.hip): per head, q, k and v of each
// warp's 16 tokens, the keys and transposed values through shared memory, the 64 scores with the
// level's relative-position bias, the softmax, P V and the head's share of proj accumulated into
// the residual. block_mma.hip includes it where the matrix products exist (TS_HAS_MMA).
#pragma once

// A warp's key and value tile of one head (channels d, d + 1 of query rows r0 and r1, in the
// accumulator layout) into shared memory: keys as f16 pairs, values transposed.
template <int C>
TS_INLINE void store_kv(AttnShared<C>& sm, ts_uint r0, ts_uint r1, ts_uint d, const float k[4], const float v[4]) {
    sm.keys[r0][d / 2] = ts_pack(k[0], k[1]);
    sm.keys[r1][d / 2] = ts_pack(k[2], k[3]);
    sm.values[d][r0] = (ts_half)v[0];
    sm.values[d + 1][r0] = (ts_half)v[1];
    sm.values[d][r1] = (ts_half)v[2];
    sm.values[d + 1][r1] = (ts_half)v[3];
}

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
                store_kv(sm, r0, r1, d, k[nt], v[nt]);
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
            store_kv(sm, r0, r1, d, k[nt], v[nt]);
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
