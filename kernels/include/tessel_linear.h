// The argument struct of the linear-layer kernels (linear.hip, the portable path, and
// linear_mma.hip, the matrix-core path): both take the same struct and flags, so hip-net's plan
// switches kernels without changing arguments (hip-net/src/plan.rs, `LinearArgs`).
#pragma once
#include "tessel_gpu.h"

struct LinearArgs {
    const void* x;
    void* y;
    const ts_half* w;
    const ts_half* b;
    const ts_half* aux;    // MODE_HEAD: the token buffer (null: no per-pixel head path)
    const ts_half* aux_w;  // MODE_HEAD: pixel_head.weight [8, p]
    const ts_half* aux_b;  // MODE_HEAD: pixel_head.bias [8]
    const ts_half* gamma;  // LAYER_NORM: weight [in]
    const ts_half* beta;   // LAYER_NORM: bias [in]
    ts_uint tokens;        // output tokens (MODE_EXPAND: input tokens)
    ts_uint width;         // grid width in tokens: of the output (MERGE) or of the input (EXPAND)
    ts_uint in;
    ts_uint out;
    ts_uint p;             // pixel embedding width
    ts_uint flags;
};

// One input element of a token row (the merge's 2x2 gather, f16 or f32 rows) and the store of one
// output (bias, SiLU, the per-pixel head path, the expansion's scatter, f16 or f32, the residual
// add): the portable kernel's semantics, which the AMD matrix-core kernel (linear_wmma.hip) shares.
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
