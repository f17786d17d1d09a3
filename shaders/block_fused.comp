#version 460
// One whole transformer block for one window (docs/NETWORK.md §4, §8), the activations on chip:
// the window's 64 residual rows are read once and written once; LayerNorm, the three products
// of each head, attention, the projection and the MLP run in between, one invocation per token.
// Scalar f32 arithmetic (any Vulkan 1.3 device); the MLP's hidden units are consumed as they are
// made, so no hidden row is stored. Opt-in with TESSEL_VK_FUSED=1 where its shared memory fits.
#include "common.glsl"
layout(local_size_x = TS_WINDOW_TOKENS) in;
layout(constant_id = 0) const int C = 32;
layout(constant_id = 1) const int M = 64;
layout(push_constant) uniform PC {
    F32Buf x;      // the level's residual rows [tokens, C], read and written in place
    F16Buf n1g; F16Buf n1b;
    F16Buf wqkv; F16Buf bqkv;   // [3C, C], [3C]
    F16Buf rpb;                 // [C/16, 225]
    F16Buf wp; F16Buf bp;       // [C, C], [C]
    F16Buf n2g; F16Buf n2b;
    F16Buf w1; F16Buf b1;       // [M, C], [M]
    F16Buf w2; F16Buf b2;       // [C, M], [C]
    uint width; uint height; uint shift_x; uint shift_y;
} pc;

shared float xs[TS_WINDOW_TOKENS * C];
shared float16_t as_[TS_WINDOW_TOKENS * C];
shared float ks[TS_WINDOW_TOKENS * TS_HEAD_DIM];
shared float vs[TS_WINDOW_TOKENS * TS_HEAD_DIM];
shared float bias[TS_RPB_ENTRIES];

// LayerNorm of row i of xs into as_ (two passes, as the reference).
void layer_norm(uint i, F16Buf g, F16Buf b) {
    float mean = 0.0;
    for (int c = 0; c < C; c++) mean += xs[i * C + c];
    mean /= float(C);
    float var = 0.0;
    for (int c = 0; c < C; c++) { float d = xs[i * C + c] - mean; var += d * d; }
    float inv = 1.0 / sqrt(var / float(C) + 1e-5);
    for (int c = 0; c < C; c++) as_[i * C + c] = float16_t((xs[i * C + c] - mean) * inv * float(g.v[c]) + float(b.v[c]));
}

// Output row `o` of a linear layer W [., C] applied to row i of as_.
float dot_row(uint i, F16Buf w, uint o) {
    float acc = 0.0;
    for (int c = 0; c < C; c++) acc += float(as_[i * C + c]) * float(w.v[o * C + c]);
    return acc;
}

void main() {
    uint i = gl_LocalInvocationID.x;
    uint ix = i % TS_WINDOW, iy = i / TS_WINDOW;
    uint t = window_token(gl_WorkGroupID.x, i, pc.width, pc.height, pc.shift_x, pc.shift_y);
    for (int c = 0; c < C; c++) xs[i * C + c] = pc.x.v[t * C + c];
    layer_norm(i, pc.n1g, pc.n1b);
    // Attention, head by head; the heads' outputs (rounded to f16 like the unfused path's
    // attention buffer) gather in o.
    float o[C];
    for (int h = 0; h < C / TS_HEAD_DIM; h++) {
        float q[TS_HEAD_DIM];
        for (int d = 0; d < TS_HEAD_DIM; d++) {
            uint r = h * TS_HEAD_DIM + d;
            q[d] = float(float16_t(dot_row(i, pc.wqkv, r) + float(pc.bqkv.v[r])));
            ks[i * TS_HEAD_DIM + d] = float(float16_t(dot_row(i, pc.wqkv, C + r) + float(pc.bqkv.v[C + r])));
            vs[i * TS_HEAD_DIM + d] = float(float16_t(dot_row(i, pc.wqkv, 2 * C + r) + float(pc.bqkv.v[2 * C + r])));
        }
        for (uint e = i; e < TS_RPB_ENTRIES; e += TS_WINDOW_TOKENS) bias[e] = float(pc.rpb.v[h * TS_RPB_ENTRIES + e]);
        barrier();
        float m = -3.4e38;
        for (uint j = 0; j < TS_WINDOW_TOKENS; j++) {
            float s = 0.0;
            for (int d = 0; d < TS_HEAD_DIM; d++) s += q[d] * ks[j * TS_HEAD_DIM + d];
            uint jx = j % TS_WINDOW, jy = j / TS_WINDOW;
            m = max(m, s * 0.25 + bias[(iy - jy + 7) * 15 + (ix - jx + 7)]);
        }
        float sum = 0.0;
        float acc[TS_HEAD_DIM];
        for (int d = 0; d < TS_HEAD_DIM; d++) acc[d] = 0.0;
        for (uint j = 0; j < TS_WINDOW_TOKENS; j++) {
            float s = 0.0;
            for (int d = 0; d < TS_HEAD_DIM; d++) s += q[d] * ks[j * TS_HEAD_DIM + d];
            uint jx = j % TS_WINDOW, jy = j / TS_WINDOW;
            float e = exp(s * 0.25 + bias[(iy - jy + 7) * 15 + (ix - jx + 7)] - m);
            sum += e;
            for (int d = 0; d < TS_HEAD_DIM; d++) acc[d] += e * vs[j * TS_HEAD_DIM + d];
        }
        for (int d = 0; d < TS_HEAD_DIM; d++) o[h * TS_HEAD_DIM + d] = float(float16_t(acc[d] / sum));
        barrier();
    }
    // Projection and residual.
    for (int c = 0; c < C; c++) {
        float acc = float(pc.bp.v[c]);
        for (int k = 0; k < C; k++) acc += o[k] * float(pc.wp.v[c * C + k]);
        xs[i * C + c] += acc;
    }
    // MLP: each hidden unit (rounded to f16 like the unfused path's hidden buffer) is added
    // into the output as soon as it is made.
    layer_norm(i, pc.n2g, pc.n2b);
    float out_[C];
    for (int c = 0; c < C; c++) out_[c] = float(pc.b2.v[c]);
    for (int j = 0; j < M; j++) {
        float hj = float(float16_t(silu(dot_row(i, pc.w1, j) + float(pc.b1.v[j]))));
        for (int c = 0; c < C; c++) out_[c] += hj * float(pc.w2.v[c * M + j]);
    }
    for (int c = 0; c < C; c++) pc.x.v[t * C + c] = xs[i * C + c] + out_[c];
}
