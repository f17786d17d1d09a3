// y = x W^T + b over tokens (W [out, in] f16, f32 accumulation): the portable path of every
// linear layer of the network, the same variants as shaders/linear.comp, chosen by `flags`:
// LayerNorm of each input row first, SiLU, residual add, f16 input / output rows, 2x2 merge
// gather, 2x2 expand scatter added to the skip, the f16 head with the per-pixel head path.
// One thread per token computes TS_LINEAR_OUTS outputs; blockIdx.y picks which.
#include "tessel_linear.h"

TS_KERNEL TS_BOUNDS(TS_BLOCK_TOKENS) void tessel_linear(LinearArgs a) {
    ts_uint t = ts_block_x() * TS_BLOCK_TOKENS + ts_thread_x();
    if (t >= a.tokens) return;
    ts_uint mode = (a.flags >> TS_MODE_SHIFT) & 3u;
    ts_uint o0 = ts_block_y() * TS_LINEAR_OUTS;
    float mean = 0.0f, inv = 1.0f;
    if (a.flags & TS_LAYER_NORM) {
        float s = 0.0f;
        for (ts_uint i = 0; i < a.in; i++) s += linear_input(a, mode, t, i);
        mean = s / (float)a.in;
        float q = 0.0f;
        for (ts_uint i = 0; i < a.in; i++) {
            float d = linear_input(a, mode, t, i) - mean;
            q += d * d;
        }
        inv = ts_rsqrt(q / (float)a.in + 1e-5f);
    }
    float acc[TS_LINEAR_OUTS];
    for (int k = 0; k < TS_LINEAR_OUTS; k++) acc[k] = 0.0f;
    for (ts_uint i = 0; i < a.in; i++) {
        float v = linear_input(a, mode, t, i);
        if (a.flags & TS_LAYER_NORM) v = (v - mean) * inv * (float)a.gamma[i] + (float)a.beta[i];
        for (int k = 0; k < TS_LINEAR_OUTS; k++) acc[k] += v * (float)a.w[(o0 + k) * a.in + i];
    }
    for (int k = 0; k < TS_LINEAR_OUTS; k++) linear_store(a, mode, t, o0 + k, acc[k]);
}
