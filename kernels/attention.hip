// Window attention on the torus (docs/NETWORK.md §4), the portable path: one block per
// (window, head), one thread per query token. Scores (q.k)/4 + rpb, softmax over the 64 keys in
// two passes (maximum, then the weighted sum), f16 in and out, f32 inside; as
// shaders/attention.comp.
#include "tessel_attention.h"

TS_KERNEL TS_BOUNDS(TS_WINDOW_TOKENS) void tessel_attention(AttentionArgs a) {
    TS_SHARED float ks[TS_WINDOW_TOKENS][TS_HEAD_DIM];
    TS_SHARED float vs[TS_WINDOW_TOKENS][TS_HEAD_DIM];
    TS_SHARED float bias[TS_RPB_ENTRIES];
    ts_uint i = ts_thread_x(), win = ts_block_x(), h = ts_block_y();
    ts_uint t = att_token(a, win, i);
    ts_uint base = t * 3 * a.c + h * TS_HEAD_DIM;
    float q[TS_HEAD_DIM];
    for (int d = 0; d < TS_HEAD_DIM; d++) {
        q[d] = (float)a.qkv[base + d];
        ks[i][d] = (float)a.qkv[base + a.c + d];
        vs[i][d] = (float)a.qkv[base + 2 * a.c + d];
    }
    for (ts_uint e = i; e < TS_RPB_ENTRIES; e += TS_WINDOW_TOKENS) bias[e] = (float)a.rpb[h * TS_RPB_ENTRIES + e];
    ts_sync();
    float m = -3.4e38f;
    for (ts_uint j = 0; j < TS_WINDOW_TOKENS; j++) {
        float dot = 0.0f;
        for (int d = 0; d < TS_HEAD_DIM; d++) dot += q[d] * ks[j][d];
        m = ts_max(m, dot * 0.25f + bias[att_bias_index(i, j)]);
    }
    float sum = 0.0f, o[TS_HEAD_DIM];
    for (int d = 0; d < TS_HEAD_DIM; d++) o[d] = 0.0f;
    for (ts_uint j = 0; j < TS_WINDOW_TOKENS; j++) {
        float dot = 0.0f;
        for (int d = 0; d < TS_HEAD_DIM; d++) dot += q[d] * ks[j][d];
        float e = ts_exp(dot * 0.25f + bias[att_bias_index(i, j)] - m);
        sum += e;
        for (int d = 0; d < TS_HEAD_DIM; d++) o[d] += e * vs[j][d];
    }
    float inv = 1.0f / sum;
    for (int d = 0; d < TS_HEAD_DIM; d++) a.out[t * a.c + h * TS_HEAD_DIM + d] = (ts_half)(o[d] * inv);
}
