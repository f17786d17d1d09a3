#version 460
// y = x W^T + b over tokens (W stored [OUT, IN], f16; f32 accumulation): the scalar path.
// Variants by specialisation constants (include/linear_params.glsl):
//   MODE_PLAIN   rows of x in, rows of y out;
//   MODE_MERGE   x gathered by 2x2 space to depth (output grid width `width`);
//   MODE_EXPAND  y scattered by 2x2 depth to space (input grid width `width`), added to y (skip);
//   MODE_HEAD    f16 head out, plus the per-pixel head path on the token buffer (aux).
// ACT 1: SiLU on the output. RESIDUAL 1: y += result. IN_F16: x is f16 (the token buffer).
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
    float acc[TS_LINEAR_OUTS];
    for (int k = 0; k < TS_LINEAR_OUTS; k++) acc[k] = 0.0;
    for (int i = 0; i < IN; i++) {
        float v = linear_input(t, i);
        for (int k = 0; k < TS_LINEAR_OUTS; k++) acc[k] += v * float(w.v[(o0 + k) * IN + i]);
    }
    for (int k = 0; k < TS_LINEAR_OUTS; k++) linear_store(t, o0 + k, acc[k]);
}
