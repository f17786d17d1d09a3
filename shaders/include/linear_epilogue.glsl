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
        return IN_F16 != 0 ? vec4(F16x4Buf(pc.x).v[(src * CIN + c) / 4]) : Vec4Buf(pc.x).v[(src * CIN + c) / 4];
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

// The pixel embedding (P values) of slot s of token t (the token buffer), for the per-pixel head
// path: 8-byte loads where P allows, straight from the buffer. (The cooperative-matrix shader
// once staged its 64 token rows in shared memory, 16 KiB a workgroup: its head layer took 0.831
// ms against 0.575 this way at 3840x2160 on the H200, BENCHMARKS.md, thirty-fifth session.)
void linear_pixel(uint t, uint s, out float e[TS_FEATURES]) {
    uint at = (t * 16 + s) * P;
    if (P % 4 == 0) {
        for (int p = 0; p < P; p += 4) {
            vec4 v = vec4(F16x4Buf(pc.aux).v[(at + p) / 4]);
            e[p] = v.x; e[p + 1] = v.y; e[p + 2] = v.z; e[p + 3] = v.w;
        }
    } else {
        for (int p = 0; p < P; p++) e[p] = float(F16Buf(pc.aux).v[at + p]);
    }
}

// pixel_head.weight [k][p] and pixel_head.bias [k]: from the buffers, or where a shader keeps
// them in shared memory (LINEAR_PIXEL_W, LINEAR_PIXEL_B), from there.
#ifndef LINEAR_PIXEL_W
#define LINEAR_PIXEL_W(k, p) float(F16Buf(pc.aux_w).v[(k) * P + (p)])
#define LINEAR_PIXEL_B(k) float(F16Buf(pc.aux_b).v[k])
#endif

// Outputs o..o+3 (o a multiple of 4) of token t from their accumulated products: bias, SiLU,
// the per-pixel head path. Loads only, so a caller can batch several before storing.
vec4 linear_value4(uint t, uint o, vec4 acc) {
    vec4 v = acc + vec4(F16x4Buf(pc.b).v[o / 4]);
    if (ACT == 1) v = v / (1.0 + exp(-v));
    if (MODE == TS_MODE_HEAD && pc.aux != 0ul) {
        uint s = o / TS_HEAD_CHANNELS, k0 = o % TS_HEAD_CHANNELS;
        float e[TS_FEATURES];
        linear_pixel(t, s, e);
        for (int j = 0; j < 4; j++) {
            float ph = LINEAR_PIXEL_B(k0 + j);
            for (int p = 0; p < P; p++) ph += LINEAR_PIXEL_W(k0 + j, p) * e[p];
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

// Stores four outputs at element dst; with RESIDUAL, `old` is what y held there. OUT_F16 with
// RESIDUAL: a residual stream kept in f16 (docs/ENGINE.md, "The streams in f16"), the sum rounded
// once.
void linear_write4(uint dst, vec4 v, vec4 old) {
    vec4 r = RESIDUAL != 0 ? old + v : v;
    if (OUT_F16 != 0) {
        F16x4Buf(pc.y).v[dst / 4] = f16vec4(r);
    } else {
        Vec4Buf(pc.y).v[dst / 4] = r;
    }
}

vec4 linear_old4(uint dst) {
    if (RESIDUAL == 0) return vec4(0.0);
    return OUT_F16 != 0 ? vec4(F16x4Buf(pc.y).v[dst / 4]) : Vec4Buf(pc.y).v[dst / 4];
}
