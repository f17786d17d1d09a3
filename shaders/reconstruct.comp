#version 460
// The reconstruction (docs/NETWORK.md §5-6): head decoding, jitter-aware Gaussian gather,
// history rectification and blend, bounded residual; linear RGBA out; the new history (f16).
#include "common.glsl"
#include "context.glsl"
layout(local_size_x = TS_WG_PIXELS_X, local_size_y = TS_WG_PIXELS_Y) in;
// Whether the frame's input stage ran and stored the history part of the context (a back after
// the network); otherwise (fixed controls without the input stage) it is resampled here.
layout(constant_id = 0) const bool STORED_CONTEXT = false;
// Whether the package accumulates (config `accumulate`, docs/NETWORK.md §6): with the network's
// head, the history's weight takes the count, the clip box is the mean +- a deviation, and the
// count goes into the history. Fixed controls never accumulate.
layout(constant_id = 1) const bool ACCUMULATE = false;
layout(push_constant) uniform PC {
    ParamsBuf params;
    F32Buf prep_c;
    F32Buf prep_m;
    F16Buf hist_in;
    F16Buf hist_out;
    HistStateBuf hist_state;
    F16Buf head;        // 0: fixed controls below
    F32Buf out_rgba;    // linear RGBA, output size
    uint padded_w;
    uint hist_write;    // index of hist_out in hist_state
    float fixed_blend;
    float fixed_sigma;
    float fixed_clamp;
    F32Buf pos;         // the frame's position table (include/context.glsl)
    F32Buf context;     // STORED_CONTEXT: (history colour, its weight) from the input stage
} pc;

void main() {
    FrameParams fp = pc.params.p;
    uvec2 xy = gl_GlobalInvocationID.xy;
    if (xy.x == 0 && xy.y == 0) {
        pc.hist_state.s[pc.hist_write].exposure = fp.exposure;
        pc.hist_state.s[pc.hist_write].valid = 1u;
    }
    if (xy.x >= fp.out_size.x || xy.y >= fp.out_size.y) return;
    uint pix = xy.y * fp.out_size.x + xy.x;
    PixelContext ctx;
    bool accumulate = ACCUMULATE && uint64_t(pc.head) != 0ul;
    float weight;  // the history's weight before the blend
    if (STORED_CONTEXT) {
        ctx = pixel_neighbourhood(xy, fp, pc.prep_c, pc.prep_m, pc.pos);
        vec4 s = Vec4Buf(pc.context).v[pix];
        ctx.hist = s.rgb;
        weight = s.a;
    } else {
        // Only fixed controls come here (a back after the network reads the stored context):
        // the contract's Catmull-Rom history.
        ctx = pixel_context(xy, fp, pc.prep_c, pc.prep_m, pc.hist_in, pc.pos, -0.5);
        weight = history_weight(ctx, accumulate);
    }
    float blend, sigma, strength;
    vec3 residual = vec3(0.0);
    vec2 memory = vec2(0.0);
    if (uint64_t(pc.head) != 0ul) {
        uint token = (xy.y / TS_TOKEN) * pc.padded_w + xy.x / TS_TOKEN;
        uint hi = (token * (TS_TOKEN * TS_TOKEN) + (xy.y % TS_TOKEN) * TS_TOKEN + xy.x % TS_TOKEN) * TS_HEAD_CHANNELS;
        // Eight halves per pixel (16-byte aligned): two 8-byte loads.
        vec4 h0 = vec4(F16x4Buf(pc.head).v[hi / 4]), h1 = vec4(F16x4Buf(pc.head).v[hi / 4 + 1]);
        float h[TS_HEAD_CHANNELS] = float[](h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w);
        blend = sigmoid(h[0]);
        sigma = exp(clamp(h[1], -2.5, 1.0));
        strength = sigmoid(h[2]);
        residual = 0.5 * vec3(tanh_safe(h[3]), tanh_safe(h[4]), tanh_safe(h[5]));
        memory = vec2(tanh_safe(h[6]), tanh_safe(h[7]));
    } else {
        blend = pc.fixed_blend;
        sigma = pc.fixed_sigma;
        strength = pc.fixed_clamp;
    }
    float d2min = 3.4e38;
    for (int k = 0; k < 9; k++) d2min = min(d2min, ctx.d2[k]);
    float inv = 1.0 / (2.0 * sigma * sigma);
    vec3 acc = vec3(0.0), mn = vec3(3.4e38), mx = vec3(-3.4e38), s1 = vec3(0.0), s2 = vec3(0.0);
    float wsum = 0.0;
    for (int k = 0; k < 9; k++) {
        float wk = exp(-(ctx.d2[k] - d2min) * inv);
        wsum += wk;
        acc += wk * ctx.c[k];
        mn = min(mn, ctx.c[k]);
        mx = max(mx, ctx.c[k]);
        s1 += ctx.c[k];
        s2 += ctx.c[k] * ctx.c[k];
    }
    // The clip box: the neighbourhood's extremes, or (accumulating) its mean +- a deviation.
    vec3 lo = mn, hi = mx;
    if (accumulate) {
        vec3 mean = s1 / 9.0;
        vec3 dev = sqrt(max(s2 / 9.0 - mean * mean, vec3(0.0)));
        lo = mean - float(TS_ACCUM_GAMMA) * dev;
        hi = mean + float(TS_ACCUM_GAMMA) * dev;
    }
    float alpha = blend * weight;
    vec3 res;
    for (int c = 0; c < 3; c++) {
        float cur = acc[c] / wsum;
        float hc = ctx.hist[c];
        float rect = hc + strength * (clamp(hc, lo[c], hi[c]) - hc);
        float o = clamp(alpha * rect + (1.0 - alpha) * cur + residual[c] * (mx[c] - mn[c]), 0.0, Y_MAX);
        res[c] = o;
    }
    Vec4Buf(pc.out_rgba).v[pix] = vec4(untonemap(res.r) / fp.exposure, untonemap(res.g) / fp.exposure, untonemap(res.b) / fp.exposure, 1.0);
    // History record: (r, g, b, nearness), (memory 0, memory 1, count, 0); see include/context.glsl.
    // The count the blend implies: alpha / (1 - alpha) samples of history plus this one.
    float count = accumulate ? min(alpha / (1.0 - alpha) + 1.0, float(TS_ACCUM_MAX)) : 0.0;
    F16x4Buf(pc.hist_out).v[pix * 2] = f16vec4(vec4(res, ctx.near[4]));
    F16x4Buf(pc.hist_out).v[pix * 2 + 1] = f16vec4(vec4(memory, count, 0.0));
}
