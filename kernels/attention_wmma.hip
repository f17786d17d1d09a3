// Window attention on the torus (docs/NETWORK.md §4) on AMD matrix cores (include/tessel_wmma.h:
// WMMA on gfx11 and gfx12, MFMA on gfx90a and gfx942, emulated on NVIDIA for the checks): the
// portable tessel_attention's arguments and launch grid (one workgroup per window and head), four
// waves of 16 queries each. Per wave: the scores of its 16 queries against the 64 keys are four
// products (Q rows and K rows straight from the qkv buffer: each operand row is a token's 16
// consecutive head channels), scaled, biased and softmaxed in the accumulator layout (a row's 64
// scores lie in the 16 lanes of one column group, four tiles each); the weights, rounded to f16,
// go through shared memory into the operand layout, and the window's values, transposed there
// once, are the second product's B. f32 softmax, f16 in and out, as the portable kernel.
#include "tessel_attention.h"
#include "tessel_wmma.h"

#if defined(TS_HAS_WMMA)
#define TS_ATT_WAVES 4
// Padded rows (halves): 64 keys + 8, so that rows start 16 bytes apart in the banks.
#define TS_ATT_ROW (TS_WINDOW_TOKENS + 8)

// The sum and the maximum over the 16 lanes of one column group (the lanes holding one D row).
TS_WMMA_INLINE float att_row_max(float v) {
    for (ts_uint m = 1; m < 16; m <<= 1) v = ts_max(v, ts_wave_xor(v, m));
    return v;
}
TS_WMMA_INLINE float att_row_sum(float v) {
    for (ts_uint m = 1; m < 16; m <<= 1) v += ts_wave_xor(v, m);
    return v;
}

TS_KERNEL TS_BOUNDS(TS_WMMA_WAVE * TS_ATT_WAVES) void tessel_attention_wmma(AttentionArgs a) {
    // Operands are read 16 bytes at a time from both.
    TS_SHARED ts_half vt[TS_HEAD_DIM][TS_ATT_ROW] __attribute__((aligned(16)));      // V transposed: [dim][key]
    TS_SHARED ts_half p[TS_ATT_WAVES][16][TS_ATT_ROW] __attribute__((aligned(16)));  // softmax weights: [query][key]
    TS_SHARED float bias[TS_RPB_ENTRIES];
    ts_uint lane = ts_lane(), wave = ts_thread_x() / TS_WMMA_WAVE, n = lane % 16u;
    ts_uint win = ts_block_x(), h = ts_block_y();
    ts_uint stride = 3 * a.c, hc = h * TS_HEAD_DIM;
    for (ts_uint e = ts_thread_x(); e < TS_RPB_ENTRIES; e += TS_WMMA_WAVE * TS_ATT_WAVES) bias[e] = (float)a.rpb[h * TS_RPB_ENTRIES + e];
    for (ts_uint e = ts_thread_x(); e < TS_WINDOW_TOKENS * TS_HEAD_DIM; e += TS_WMMA_WAVE * TS_ATT_WAVES) {
        ts_uint key = e / TS_HEAD_DIM, d = e % TS_HEAD_DIM;
        vt[d][key] = a.qkv[att_token(a, win, key) * stride + 2 * a.c + hc + d];
    }
    ts_sync();
    // Scores: this wave's queries q0 .. q0 + 15 (A: lane row n) against key tile j (B: lane column n).
    ts_uint q0 = wave * 16u, k0 = ts_wmma_k0(lane);
    ts_wfrag q = *(const ts_wfrag_mem*)(a.qkv + att_token(a, win, q0 + n) * stride + hc + k0);
    ts_wacc s[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        ts_wfrag k = *(const ts_wfrag_mem*)(a.qkv + att_token(a, win, 16u * j + n) * stride + a.c + hc + k0);
        s[j] = ts_wmma(q, k, ts_wacc{});
    }
    // Element i of tile j: query q0 + ts_wmma_row(lane, i), key 16 j + n.
    float inv[TS_WMMA_D];
#pragma unroll
    for (int i = 0; i < TS_WMMA_D; i++) {
        ts_uint qi = q0 + ts_wmma_row(lane, (ts_uint)i);
        float m = -3.4e38f;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            s[j][i] = s[j][i] * 0.25f + bias[att_bias_index(qi, 16u * j + n)];
            m = ts_max(m, s[j][i]);
        }
        m = att_row_max(m);
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float e = ts_exp(s[j][i] - m);
            sum += e;
            p[wave][qi - q0][16u * j + n] = (ts_half)e;
        }
        inv[i] = 1.0f / att_row_sum(sum);
    }
    ts_sync();
    // Output: the weights (A: lane row n, key tile j) times the values (B: lane column n = dim).
    ts_wacc o = {};
#pragma unroll
    for (int j = 0; j < 4; j++) {
        ts_wfrag pa = *(const ts_wfrag_mem*)&p[wave][n][16u * j + k0];
        ts_wfrag vb = *(const ts_wfrag_mem*)&vt[n][16u * j + k0];
        o = ts_wmma(pa, vb, o);
    }
#pragma unroll
    for (int i = 0; i < TS_WMMA_D; i++) {
        ts_uint qi = q0 + ts_wmma_row(lane, (ts_uint)i);
        a.out[att_token(a, win, qi) * a.c + hc + n] = (ts_half)(o[i] * inv[i]);
    }
}
#endif
