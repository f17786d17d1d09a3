// y = x W^T + b over tokens (W [out, in] f16, f32 accumulation): the portable path of every
// linear layer of the network, the same variants as shaders/linear.comp, chosen by `flags`:
// LayerNorm of each input row first, SiLU, residual add, f16 input / output rows, 2x2 merge
// gather, 2x2 expand scatter added to the skip, the f16 head with the per-pixel head path.
// One thread per token computes TS_LINEAR_OUTS outputs; blockIdx.y picks which.
#include "tessel_linear.h"

TS_DEVICE float linear_input(const LinearArgs& a, ts_uint mode, ts_uint t, ts_uint i) {
    if (mode == TS_MODE_MERGE) {
        ts_uint cin = a.in / 4, q = i / cin, c = i % cin;
        ts_uint tx = t % a.width, ty = t / a.width;
        ts_uint src = (2 * ty + q / 2) * (2 * a.width) + 2 * tx + q % 2;
        return ((const float*)a.x)[src * cin + c];
    }
    if (a.flags & TS_IN_F16) return (float)((const ts_half*)a.x)[t * a.in + i];
    return ((const float*)a.x)[t * a.in + i];
}

TS_DEVICE void linear_store(const LinearArgs& a, ts_uint mode, ts_uint t, ts_uint o, float acc) {
    float v = acc + (float)a.b[o];
    if (a.flags & TS_ACT_SILU) v = ts_silu(v);
    if (mode == TS_MODE_HEAD && a.aux) {
        ts_uint s = o / TS_HEAD_CHANNELS, k = o % TS_HEAD_CHANNELS;
        float ph = (float)a.aux_b[k];
        for (ts_uint q = 0; q < a.p; q++) ph += (float)a.aux_w[k * a.p + q] * (float)a.aux[(t * TS_TOKEN_PIXELS + s) * a.p + q];
        v += ph;
    }
    ts_uint dst;
    if (mode == TS_MODE_EXPAND) {
        ts_uint cout = a.out / 4, q = o / cout, c = o % cout;
        ts_uint tx = t % a.width, ty = t / a.width;
        dst = ((2 * ty + q / 2) * (2 * a.width) + 2 * tx + q % 2) * cout + c;
    } else {
        dst = t * a.out + o;
    }
    if (a.flags & TS_OUT_F16) {
        ((ts_half*)a.y)[dst] = (ts_half)v;
    } else if (a.flags & TS_RESIDUAL) {
        ((float*)a.y)[dst] += v;
    } else {
        ((float*)a.y)[dst] = v;
    }
}

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
