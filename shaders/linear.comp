#version 460
// y = x W^T + b over tokens (W stored [OUT, IN], f16; f32 accumulation), with the variants the
// network needs, chosen by specialisation constants:
//   MODE_PLAIN   rows of x in, rows of y out;
//   MODE_MERGE   x gathered by 2x2 space to depth (output grid width `width`);
//   MODE_EXPAND  y scattered by 2x2 depth to space (input grid width `width`), added to y (skip);
//   MODE_HEAD    f16 head out, plus the per-pixel head path on the token buffer (aux).
// ACT 1: SiLU on the output. RESIDUAL 1: y += result. IN_F16: x is f16 (the token buffer).
#include "common.glsl"
layout(local_size_x = TS_WG_TOKENS) in;
layout(constant_id = TS_SPEC_IN) const int IN = 32;
layout(constant_id = TS_SPEC_OUT) const int OUT = 32;
layout(constant_id = TS_SPEC_ACT) const int ACT = 0;
layout(constant_id = TS_SPEC_MODE) const int MODE = 0;
layout(constant_id = TS_SPEC_RESIDUAL) const int RESIDUAL = 0;
layout(constant_id = TS_SPEC_IN_F16) const int IN_F16 = 0;
layout(constant_id = TS_SPEC_OUT_F16) const int OUT_F16 = 0;
layout(constant_id = TS_SPEC_P) const int P = 8;
layout(push_constant) uniform PC {
    uint64_t x;
    uint64_t y;
    uint64_t w;
    uint64_t b;
    uint64_t aux;     // MODE_HEAD: the token buffer
    uint64_t aux_w;   // MODE_HEAD: pixel_head.weight [8, P]
    uint64_t aux_b;   // MODE_HEAD: pixel_head.bias [8]
    uint tokens;      // output tokens (MODE_EXPAND: input tokens)
    uint width;       // grid width in tokens (see above)
} pc;

float xin(uint t, uint i) {
    return IN_F16 != 0 ? float(F16Buf(pc.x).v[t * IN + i]) : F32Buf(pc.x).v[t * IN + i];
}

void main() {
    uint t = gl_GlobalInvocationID.x;
    if (t >= pc.tokens) return;
    uint o0 = gl_WorkGroupID.y * TS_LINEAR_OUTS;
    F16Buf w = F16Buf(pc.w);
    float acc[TS_LINEAR_OUTS];
    for (int k = 0; k < TS_LINEAR_OUTS; k++) acc[k] = 0.0;
    if (MODE == TS_MODE_MERGE) {
        const int CIN = IN / 4;
        uint tx = t % pc.width, ty = t / pc.width;
        for (int q = 0; q < 4; q++) {
            uint src = (2 * ty + uint(q / 2)) * (2 * pc.width) + 2 * tx + uint(q % 2);
            for (int c = 0; c < CIN; c++) {
                float v = F32Buf(pc.x).v[src * CIN + c];
                int i = q * CIN + c;
                for (int k = 0; k < TS_LINEAR_OUTS; k++) acc[k] += v * float(w.v[(o0 + k) * IN + i]);
            }
        }
    } else {
        for (int i = 0; i < IN; i++) {
            float v = xin(t, i);
            for (int k = 0; k < TS_LINEAR_OUTS; k++) acc[k] += v * float(w.v[(o0 + k) * IN + i]);
        }
    }
    F16Buf bias = F16Buf(pc.b);
    for (int k = 0; k < TS_LINEAR_OUTS; k++) {
        uint o = o0 + k;
        float v = acc[k] + float(bias.v[o]);
        if (ACT == 1) v = silu(v);
        if (MODE == TS_MODE_HEAD && pc.aux != 0ul) {
            uint s = o / TS_HEAD_CHANNELS, kk = o % TS_HEAD_CHANNELS;
            F16Buf tok = F16Buf(pc.aux);
            F16Buf pw = F16Buf(pc.aux_w);
            float ph = 0.0;
            for (int p = 0; p < P; p++) ph += float(pw.v[kk * P + p]) * float(tok.v[(t * 16 + s) * P + p]);
            v += ph + float(F16Buf(pc.aux_b).v[kk]);
        }
        uint dst;
        if (MODE == TS_MODE_EXPAND) {
            const int COUT = OUT / 4;
            uint q = o / COUT, c = o % COUT;
            uint tx = t % pc.width, ty = t / pc.width;
            dst = ((2 * ty + q / 2) * (2 * pc.width) + 2 * tx + q % 2) * COUT + c;
        } else {
            dst = t * OUT + o;
        }
        if (OUT_F16 != 0) {
            F16Buf(pc.y).v[dst] = float16_t(v);
        } else if (RESIDUAL != 0) {
            F32Buf(pc.y).v[dst] += v;
        } else {
            F32Buf(pc.y).v[dst] = v;
        }
    }
}
