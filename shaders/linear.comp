#version 460
// y = x W^T + b over tokens (W stored [OUT, IN], f16; f32 accumulation): the scalar path.
// Variants by specialisation constants (include/linear_params.glsl):
//   MODE_PLAIN   rows of x in, rows of y out;
//   MODE_MERGE   x gathered by 2x2 space to depth (output grid width `width`);
//   MODE_EXPAND  y scattered by 2x2 depth to space (input grid width `width`), added to y (skip);
//   MODE_HEAD    f16 head out, plus the per-pixel head path on the token buffer (aux).
// LN 1: LayerNorm of each input row first. ACT 1: SiLU on the output. RESIDUAL 1: y += result.
// IN_F16 / OUT_F16: f16 input / output rows.
// One invocation per token computes TS_LINEAR_OUTS outputs (workgroup y picks which).
#include "common.glsl"
#include "linear_params.glsl"
#include "linear_epilogue.glsl"
layout(local_size_x = TS_WG_TOKENS) in;

void main() {
    uint t = gl_GlobalInvocationID.x;
    if (t >= pc.tokens) return;
    uint o0 = gl_WorkGroupID.y * TS_LINEAR_OUTS;
    F16Buf w = F16Buf(pc.w);
    vec2 st = LN != 0 ? ln_stats(t) : vec2(0.0, 1.0);
    float acc[TS_LINEAR_OUTS];
    for (int k = 0; k < TS_LINEAR_OUTS; k++) acc[k] = 0.0;
    for (uint i = 0; i < IN; i += 4) {
        vec4 v = linear_input4(t, i);
        if (LN != 0) v = ln_affine4(v, i, st.x, st.y);
        for (int k = 0; k < TS_LINEAR_OUTS; k++) {
            uint wi = (o0 + k) * IN + i;
            acc[k] += v.x * float(w.v[wi]) + v.y * float(w.v[wi + 1]) + v.z * float(w.v[wi + 2]) + v.w * float(w.v[wi + 3]);
        }
    }
    // Values and residual reads first, then the stores (loads batch; no round trip per store).
    const int G = TS_LINEAR_OUTS / 4;
    vec4 val[G], old[G];
    uint dst[G];
    for (int g = 0; g < G; g++) {
        val[g] = linear_value4(t, o0 + 4 * g, vec4(acc[4 * g], acc[4 * g + 1], acc[4 * g + 2], acc[4 * g + 3]));
        dst[g] = linear_dst(t, o0 + 4 * g);
        old[g] = linear_old4(dst[g]);
    }
    for (int g = 0; g < G; g++) linear_write4(dst[g], val[g], old[g]);
}
