// The input and output sides of a linear layer, shared by the scalar and the cooperative-matrix
// shader. Inputs: plain rows (f32 or f16), the 2x2 merge gather, an optional LayerNorm.
// Outputs, four consecutive channels at a time: bias, SiLU, the per-pixel head path, residual
// add, the depth-to-space scatter, f16 or f32 stores. Needs `pc` and the specialisation
// constants of include/linear_params.glsl.

// Four consecutive input channels i..i+3 of row t (i a multiple of 4), before any LayerNorm.
vec4 linear_input4(uint t, uint i) {
    if (MODE == TS_MODE_MERGE) {
        const uint CIN = IN / 4;
        uint q = i / CIN, c = i % CIN;
        uint tx = t % pc.width, ty = t / pc.width;
        uint src = (2 * ty + q / 2) * (2 * pc.width) + 2 * tx + q % 2;
        return Vec4Buf(pc.x).v[(src * CIN + c) / 4];
    }
    return IN_F16 != 0 ? vec4(F16x4Buf(pc.x).v[(t * IN + i) / 4]) : Vec4Buf(pc.x).v[(t * IN + i) / 4];
}

vec4 ln_affine4(vec4 v, uint i, float mean, float inv) {
    vec4 g = vec4(F16x4Buf(pc.gamma).v[i / 4]);
    vec4 be = vec4(F16x4Buf(pc.beta).v[i / 4]);
    return (v - mean) * inv * g + be;
}

// Mean and 1/sqrt(var + eps) of row t over the IN channels (two passes, like the reference).
vec2 ln_stats(uint t) {
    float s = 0.0;
    for (uint i = 0; i < IN; i += 4) { vec4 v = linear_input4(t, i); s += (v.x + v.y) + (v.z + v.w); }
    float mean = s / float(IN);
    float q = 0.0;
    for (uint i = 0; i < IN; i += 4) { vec4 d = linear_input4(t, i) - mean; q += dot(d, d); }
    return vec2(mean, 1.0 / sqrt(q / float(IN) + 1e-5));
}

// Pixel embedding p of slot s of token t (the token buffer), for the per-pixel head path. A
// shader that keeps the token rows in shared memory defines LINEAR_TOKEN_SHARED(t, i).
float linear_token(uint t, uint s, int p) {
#ifdef LINEAR_TOKEN_SHARED
    return LINEAR_TOKEN_SHARED(t, (s * P + p));
#else
    return float(F16Buf(pc.aux).v[(t * 16 + s) * P + p]);
#endif
}

// Outputs o..o+3 (o a multiple of 4) of token t from their accumulated products: bias, SiLU,
// the per-pixel head path. Loads only, so a caller can batch several before storing.
vec4 linear_value4(uint t, uint o, vec4 acc) {
    vec4 v = acc + vec4(F16x4Buf(pc.b).v[o / 4]);
    if (ACT == 1) v = v / (1.0 + exp(-v));
    if (MODE == TS_MODE_HEAD && pc.aux != 0ul) {
        uint s = o / TS_HEAD_CHANNELS, k0 = o % TS_HEAD_CHANNELS;
        F16Buf pw = F16Buf(pc.aux_w);
        float e[TS_FEATURES];
        for (int p = 0; p < P; p++) e[p] = linear_token(t, s, p);
        for (int j = 0; j < 4; j++) {
            float ph = float(F16Buf(pc.aux_b).v[k0 + j]);
            for (int p = 0; p < P; p++) ph += float(pw.v[(k0 + j) * P + p]) * e[p];
            v[j] += ph;
        }
    }
    return v;
}

// Element index in y of outputs o..o+3 of token t (the depth-to-space scatter for EXPAND).
uint linear_dst(uint t, uint o) {
    if (MODE == TS_MODE_EXPAND) {
        const uint COUT = OUT / 4;
        uint q = o / COUT, c = o % COUT;
        uint tx = t % pc.width, ty = t / pc.width;
        return ((2 * ty + q / 2) * (2 * pc.width) + 2 * tx + q % 2) * COUT + c;
    }
    return t * OUT + o;
}

// Stores four outputs at element dst; with RESIDUAL, `old` is what y held there.
void linear_write4(uint dst, vec4 v, vec4 old) {
    if (OUT_F16 != 0) {
        F16x4Buf(pc.y).v[dst / 4] = f16vec4(v);
    } else {
        Vec4Buf(pc.y).v[dst / 4] = RESIDUAL != 0 ? old + v : v;
    }
}

vec4 linear_old4(uint dst) {
    return (RESIDUAL != 0 && OUT_F16 == 0) ? Vec4Buf(pc.y).v[dst / 4] : vec4(0.0);
}
