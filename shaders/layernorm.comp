#version 460
// LayerNorm over the C channels of each token (docs/NETWORK.md §4): f32 in, f32 out.
#include "common.glsl"
layout(local_size_x = TS_WG_TOKENS) in;
layout(constant_id = 0) const int C = 32;
layout(push_constant) uniform PC {
    F32Buf x;
    F32Buf y;
    F16Buf gamma;
    F16Buf beta;
    uint tokens;
} pc;
void main() {
    uint t = gl_GlobalInvocationID.x;
    if (t >= pc.tokens) return;
    uint b = t * C;
    float mean = 0.0;
    for (int i = 0; i < C; i++) mean += pc.x.v[b + i];
    mean /= float(C);
    float var = 0.0;
    for (int i = 0; i < C; i++) { float d = pc.x.v[b + i] - mean; var += d * d; }
    var /= float(C);
    float inv = 1.0 / sqrt(var + 1e-5);
    for (int i = 0; i < C; i++) pc.y.v[b + i] = (pc.x.v[b + i] - mean) * inv * float(pc.gamma.v[i]) + float(pc.beta.v[i]);
}
