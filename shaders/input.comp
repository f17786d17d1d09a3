#version 460
// The input stage (docs/NETWORK.md §3): per output pixel of the padded token grid, the 16
// features, the per-pixel embedding SiLU(W f + b) and its place in the token (4x4 space to
// depth). Pixels outside the output give 0.
#include "common.glsl"
#include "context.glsl"
layout(local_size_x = TS_INPUT_WG_X, local_size_y = TS_INPUT_WG_Y,
       local_size_x_id = TS_SPEC_INPUT_WG_X, local_size_y_id = TS_SPEC_INPUT_WG_Y) in;
layout(constant_id = 0) const int P = 8;
layout(constant_id = 1) const bool EMBED_FROM_SPEC = false;
layout(constant_id = TS_SPEC_INPUT_ACCUMULATE) const bool ACCUMULATE = false;
// The history kernel's Keys parameter (config `history_a`, docs/NETWORK.md §2).
layout(constant_id = TS_SPEC_INPUT_HISTORY_A) const float HISTORY_A = -0.5;
layout(constant_id = TS_SPEC_INPUT_STREAM) const bool STREAM = false;
#include "embed_spec.glsl"
layout(push_constant) uniform PC {
    ParamsBuf params;
    F32Buf prep_c;
    F32Buf prep_m;
    F16Buf hist;     // the history written by the previous frame
    F16Buf weight;   // pixel_embed.weight [P, 16]
    F16Buf bias;     // pixel_embed.bias [P]
    F16Buf tokens;   // out
    uint padded_w;   // token grid width
    F32Buf pos;      // the frame's position table (include/context.glsl)
    F32Buf context;  // out: per output pixel, (history colour, its weight) for the reconstruction
} pc;

// The 3x3's running reductions: the nearness's and luma's extremes and the largest squared
// motion difference from the nearest sample's.
struct Extremes {
    float nmin, nmax, lmin, lmax, mdisc;
};

// Folds one sample (tonemapped colour c, nearness, motion difference dm) into e.
void fold_tap(inout Extremes e, vec3 c, float near, vec2 dm) {
    e.nmin = min(e.nmin, near);
    e.nmax = max(e.nmax, near);
    float l = luma(c);
    e.lmin = min(e.lmin, l);
    e.lmax = max(e.lmax, l);
    e.mdisc = max(e.mdisc, dm.x * dm.x + dm.y * dm.y);
}

// The features of output pixel xy, and the history part the reconstruction reads (its colour
// and weight): from the whole context, or (STREAM) the nearest sample first, then the 3x3 reduced
// as its samples load, so that the nine samples need not all stay live, then the history. Both
// give the same features: the same operations on the same values, and minima and maxima do not
// depend on order.
void pixel_features(uvec2 xy, FrameParams fp, out float f[TS_FEATURES], out vec4 stored) {
    Extremes e = Extremes(3.4e38, -3.4e38, 3.4e38, -3.4e38, 0.0);
    vec3 c4;
    float a;
    vec2 offset;
    HistorySample h;
    if (STREAM) {
        int rw = int(fp.render.x);
        Nearest s = nearest_sample(xy, fp, pc.pos);
        offset = s.offset;
        vec4 cn4 = Vec4Buf(pc.prep_c).v[s.n.y * rw + s.n.x];
        vec2 m4 = Vec2Buf(pc.prep_m).v[s.n.y * rw + s.n.x];
        for (int k = 0; k < 9; k++) {
            ivec2 t = tap_pixel(s, k, fp);
            int pi = t.y * rw + t.x;
            vec4 cn = k == 4 ? cn4 : Vec4Buf(pc.prep_c).v[pi];
            vec2 mk = k == 4 ? m4 : Vec2Buf(pc.prep_m).v[pi];
            fold_tap(e, cn.rgb, cn.a, mk - m4);
        }
        // The history last: its taps wait for the motion, while the 3x3's loads need only the
        // nearest sample (0.240 -> 0.235 ms at 3840x2160 on the H200, BENCHMARKS.md, thirty-fifth
        // session).
        h = sample_history(xy, m4, fp, pc.hist, HISTORY_A);
        c4 = cn4.rgb;
        a = cn4.a;
    } else {
        PixelContext ctx = pixel_neighbourhood(xy, fp, pc.prep_c, pc.prep_m, pc.pos);
        h = sample_history(xy, ctx.motion[4], fp, pc.hist, HISTORY_A);
        for (int k = 0; k < 9; k++) fold_tap(e, ctx.c[k], ctx.near[k], ctx.motion[k] - ctx.motion[4]);
        c4 = ctx.c[4];
        a = ctx.near[4];
        offset = ctx.offset;
    }
    f[0] = c4.r; f[1] = c4.g; f[2] = c4.b;
    f[3] = offset.x; f[4] = offset.y;
    f[5] = h.hist.r; f[6] = h.hist.g; f[7] = h.hist.b;
    // The largest distance is the root of the largest square (the root is monotonic): one root.
    float mdisc = sqrt(e.mdisc);
    f[8] = (e.nmax - e.nmin) / (e.nmax + 1e-3);
    f[9] = mdisc / (1.0 + mdisc);
    f[10] = abs(a - h.prev_near) / (max(a, h.prev_near) + 1e-3);
    f[11] = h.valid;
    f[12] = e.lmin; f[13] = e.lmax;
    f[14] = h.memory.x; f[15] = h.memory.y;
    stored = vec4(h.hist, history_weight(h.valid, h.count, ACCUMULATE));
}

void main() {
    FrameParams fp = pc.params.p;
    uvec2 xy = gl_GlobalInvocationID.xy;
    uint tx = xy.x / TS_TOKEN, ty = xy.y / TS_TOKEN;
    uint slot = (xy.y % TS_TOKEN) * TS_TOKEN + xy.x % TS_TOKEN;
    uint base = ((ty * pc.padded_w + tx) * (TS_TOKEN * TS_TOKEN) + slot) * P;
    bool outside = xy.x >= fp.out_size.x || xy.y >= fp.out_size.y;
    if (outside && P % 4 == 0) {
        for (int p = 0; p < P; p += 4) F16x4Buf(pc.tokens).v[(base + p) / 4] = f16vec4(0.0);
        return;
    }
    if (outside) {
        for (int p = 0; p < P; p++) pc.tokens.v[base + p] = float16_t(0.0);
        return;
    }
    float f[TS_FEATURES];
    vec4 stored;
    pixel_features(xy, fp, f, stored);
    Vec4Buf(pc.context).v[xy.y * fp.out_size.x + xy.x] = stored;
    vec4 e4 = vec4(0.0);
    float spec[TS_EMBED_SPEC_P];
    if (EMBED_FROM_SPEC) embed_from_spec(f, spec);
    for (int p = 0; p < P; p++) {
        float acc = 0.0;
        if (EMBED_FROM_SPEC) {
            acc = spec[min(p, TS_EMBED_SPEC_P - 1)];
        } else {
            // A row of 16 weights is four 8-byte loads (the tensor is 256-byte aligned): a
            // quarter of the load instructions of per-half loads, the same sums in the same order.
            for (int i = 0; i < TS_FEATURES / 4; i++) {
                vec4 w = vec4(F16x4Buf(pc.weight).v[p * (TS_FEATURES / 4) + i]);
                acc += w.x * f[4 * i];
                acc += w.y * f[4 * i + 1];
                acc += w.z * f[4 * i + 2];
                acc += w.w * f[4 * i + 3];
            }
            acc += float(pc.bias.v[p]);
        }
        if (P % 4 == 0) {
            e4[p % 4] = silu(acc);
            if (p % 4 == 3) F16x4Buf(pc.tokens).v[(base + p - 3) / 4] = f16vec4(e4);
        } else {
            pc.tokens.v[base + p] = float16_t(silu(acc));
        }
    }
}
