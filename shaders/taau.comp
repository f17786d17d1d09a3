#version 460
// The classical TAAU (`--network none`; model/src/taau.rs is the reference, step for step): a
// jitter-aware 4x4 Gaussian gather of the current frame with a confidence, the nearest surface's
// motion in the 3x3, the history by Keys' cubic with a disocclusion test, YCoCg clipping toward
// the neighbourhood mean, a per-pixel sample count and a thin-feature lock kept in the history
// record's second part (where the network's reconstruction keeps its memory channels).
#include "common.glsl"
#include "context.glsl"
layout(local_size_x = TS_WG_PIXELS_X, local_size_y = TS_WG_PIXELS_Y) in;

struct TaauParams {
    float sigma;
    float confidence_sigma;
    float gamma;
    float box_floor;
    float cap;
    float cap_static;
    float keys_a;
    float depth_tolerance;
    float reactive;
    float disagree;
    float disagree_floor;
    float motion_edge;
    float lock_threshold;
    float lock_cap;
    float lock_decay;
};

layout(push_constant) uniform PC {
    ParamsBuf params;
    F32Buf prep_c;      // per render pixel: tonemapped exposed r, g, b, nearness
    F32Buf prep_m;      // per render pixel: motion, output px
    F16Buf hist_in;
    F16Buf hist_out;
    HistStateBuf hist_state;
    F32Buf out_rgba;    // linear RGBA, output size
    F32Buf pos;         // the frame's position table (include/context.glsl)
    uint hist_write;    // index of hist_out in hist_state
    TaauParams t;
} pc;

vec4 prep(ivec2 s, ivec2 r) {
    ivec2 q = clamp(s, ivec2(0), r - 1);
    return Vec4Buf(pc.prep_c).v[q.y * r.x + q.x];
}

vec2 motion_at(ivec2 s, ivec2 r) {
    ivec2 q = clamp(s, ivec2(0), r - 1);
    return Vec2Buf(pc.prep_m).v[q.y * r.x + q.x];
}

// The history record (include/context.glsl's hist_at, hist_bilinear): part 0 (r, g, b,
// nearness), part 1 here (sample count, thin-feature lock, -, -).

// The smallest 3x3 luma range in which a ridge can lock a pixel (taau.rs LOCK_MIN_RANGE).
const float LOCK_MIN_RANGE = 0.02;

// 1 where the centre of the 3x3's lumas is a ridge or a valley along a row, a column or a
// diagonal by more than `threshold` of their range (taau.rs thin_feature).
float thin_feature(float l[9], float threshold) {
    float lo = l[0], hi = l[0];
    for (int k = 1; k < 9; k++) {
        lo = min(lo, l[k]);
        hi = max(hi, l[k]);
    }
    float c = l[4];
    float ridge = 0.0;
    ivec2 axes[4] = ivec2[4](ivec2(3, 5), ivec2(1, 7), ivec2(0, 8), ivec2(2, 6));
    for (int k = 0; k < 4; k++) {
        float a = l[axes[k].x], b = l[axes[k].y];
        ridge = max(max(ridge, min(c - a, c - b)), min(a - c, b - c));
    }
    return (hi - lo > LOCK_MIN_RANGE && ridge > threshold * (hi - lo)) ? 1.0 : 0.0;
}

// (keys_weights: include/context.glsl.)
vec3 hist_keys(vec2 p, ivec2 size, float a) {
    vec2 u = p - 0.5;
    vec2 i = floor(u);
    vec4 wx = keys_weights(u.x - i.x, a);
    vec4 wy = keys_weights(u.y - i.y, a);
    ivec2 b = ivec2(i);
    vec3 o = vec3(0.0);
    for (int j = 0; j < 4; j++) {
        for (int k = 0; k < 4; k++) o += (wy[j] * wx[k]) * hist_at(pc.hist_in, b + ivec2(k - 1, j - 1), size, 0).rgb;
    }
    return o;
}

vec3 ycocg(vec3 c) {
    float co = 0.5 * (c.r - c.b);
    float tmp = c.b + co;
    float cg = 0.5 * (c.g - tmp);
    return vec3(tmp + cg, co, cg);
}

vec3 rgb_of(vec3 y) {
    float tmp = y.x - y.z;
    float g = y.x + y.z;
    float b = tmp - y.y;
    return vec3(b + 2.0 * y.y, g, b);
}

float frac_blur(float v) {
    float f = v - floor(v);
    return 4.0 * f * (1.0 - f);
}

void write_pixel(uvec2 xy, FrameParams fp, vec3 o, float near, float count, float lock) {
    uint pix = xy.y * fp.out_size.x + xy.x;
    vec3 lin = vec3(untonemap(o.r), untonemap(o.g), untonemap(o.b)) / fp.exposure;
    Vec4Buf(pc.out_rgba).v[pix] = vec4(lin, 1.0);
    F16x4Buf(pc.hist_out).v[pix * 2] = f16vec4(vec4(o, near));
    F16x4Buf(pc.hist_out).v[pix * 2 + 1] = f16vec4(vec4(count, lock, 0.0, 0.0));
}

void main() {
    FrameParams fp = pc.params.p;
    uvec2 xy = gl_GlobalInvocationID.xy;
    if (xy.x == 0 && xy.y == 0) {
        pc.hist_state.s[pc.hist_write].exposure = fp.exposure;
        pc.hist_state.s[pc.hist_write].valid = 1u;
    }
    if (xy.x >= fp.out_size.x || xy.y >= fp.out_size.y) return;
    TaauParams t = pc.t;
    ivec2 r = ivec2(fp.render);
    ivec2 o = ivec2(fp.out_size);
    precise vec2 pr = vec2(pc.pos.v[xy.x], pc.pos.v[o.x + xy.y]);
    vec2 j = fp.jitter;
    precise float ux = pr.x - j.x;
    precise float uy = pr.y - j.y;
    int nx = int(floor(ux)), ny = int(floor(uy));
    // The 4x4 around the nearest sample: a Gaussian gather; the closest sample's distance.
    float inv = 1.0 / (2.0 * t.sigma * t.sigma);
    vec3 acc = vec3(0.0);
    float wsum = 0.0, d2min = 3.4028235e38;
    vec2 so = vec2(o) / vec2(r);
    int ox = (ux - float(nx) >= 0.5) ? 0 : -1;
    int oy = (uy - float(ny) >= 0.5) ? 0 : -1;
    for (int dy = -1; dy < 3; dy++) {
        for (int dx = -1; dx < 3; dx++) {
            ivec2 s = ivec2(nx + dx + ox, ny + dy + oy);
            precise float qx = float(s.x) + 0.5 + j.x;
            precise float qy = float(s.y) + 0.5 + j.y;
            float d2 = (pr.x - qx) * (pr.x - qx) + (pr.y - qy) * (pr.y - qy);
            float wt = exp(-d2 * inv);
            acc += wt * prep(s, r).rgb;
            wsum += wt;
            float ex = (pr.x - qx) * so.x, ey = (pr.y - qy) * so.y;
            d2min = min(d2min, ex * ex + ey * ey);
        }
    }
    vec3 cur = wsum > 1e-12 ? acc / wsum : prep(ivec2(nx, ny), r).rgb;
    // The 3x3: YCoCg moments and extremes, the nearest surface, the motions.
    vec3 m1 = vec3(0.0), m2 = vec3(0.0), lo = vec3(3.4028235e38), hi = vec3(-3.4028235e38);
    ivec2 best = clamp(ivec2(nx, ny), ivec2(0), r - 1);
    float best_near = -3.4028235e38;
    vec2 motions[9];
    float luma[9];
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            ivec2 s = clamp(ivec2(nx + dx, ny + dy), ivec2(0), r - 1);
            vec4 cn = prep(s, r);
            vec3 c = ycocg(cn.rgb);
            m1 += c / 9.0;
            m2 += c * c / 9.0;
            lo = min(lo, c);
            hi = max(hi, c);
            motions[(dy + 1) * 3 + dx + 1] = motion_at(s, r);
            luma[(dy + 1) * 3 + dx + 1] = c.x;
            if (cn.a > best_near) {
                best_near = cn.a;
                best = s;
            }
        }
    }
    float q = clamp(exp(-d2min / (2.0 * t.confidence_sigma * t.confidence_sigma)), 1e-3, 1.0);
    float thin = t.lock_cap > 0.0 ? thin_feature(luma, t.lock_threshold) : 0.0;
    if (fp.hist_valid == 0u) {
        write_pixel(xy, fp, cur, best_near, q, thin);
        return;
    }
    vec2 m = motion_at(best, r);
    vec2 prev = vec2(float(xy.x) + 0.5 + m.x, float(xy.y) + 0.5 + m.y);
    if (prev.x < 0.0 || prev.y < 0.0 || prev.x > float(o.x) || prev.y > float(o.y)) {
        write_pixel(xy, fp, cur, best_near, q, thin);
        return;
    }
    float prev_near = hist_bilinear(pc.hist_in, prev, o, 0).a;
    if (abs(best_near - prev_near) > t.depth_tolerance * max(max(best_near, prev_near), 1e-3)) {
        write_pixel(xy, fp, cur, best_near, q, thin);
        return;
    }
    vec3 hk = hist_keys(prev, o, t.keys_a);
    vec3 hc;
    for (int c = 0; c < 3; c++) hc[c] = reexpose(clamp(hk[c], 0.0, Y_MAX), fp.hist_exposure, fp.exposure);
    vec2 nl = hist_bilinear(pc.hist_in, prev, o, 1).xy;
    float n_prev = max(nl.x, 0.0);
    // A lock follows its feature with the history and fades unless the ridge is seen again; a
    // locked pixel may accumulate longer.
    float lock = max(clamp(nl.y, 0.0, 1.0) * t.lock_decay, thin);
    // Clip toward the mean into mean +- gamma sigma, never narrower than the floor nor than the
    // neighbourhood's own extremes.
    vec3 sd = sqrt(max(m2 - m1 * m1, vec3(0.0)));
    vec3 ext = max(max(t.gamma * sd, vec3(t.box_floor)), max(hi - m1, m1 - lo));
    vec3 hy = ycocg(hc);
    float tc = 1.0;
    for (int c = 0; c < 3; c++) {
        float d = abs(hy[c] - m1[c]);
        if (d > ext[c]) tc = min(tc, ext[c] / d);
    }
    vec3 clipped = m1 + (hy - m1) * tc;
    float outside = tc < 1.0 ? 1.0 / tc : 1.0;
    vec3 hist_rgb = rgb_of(clipped);
    // Whole-pixel motion resamples the history exactly; half-pixel motion blurs it most.
    float blur = 0.5 * (frac_blur(m.x) + frac_blur(m.y));
    float cap = t.cap_static + (t.cap - t.cap_static) * blur;
    cap = cap + lock * max(t.lock_cap - cap, 0.0);
    float edge = 0.0;
    for (int k = 0; k < 9; k++) {
        vec2 d = motions[k] - m;
        edge = max(edge, sqrt(d.x * d.x + d.y * d.y));
    }
    float z = abs(hy.x - ycocg(cur).x) / (sd.x + t.disagree_floor);
    float shrink = (1.0 + t.reactive * (outside - 1.0)) * (1.0 + t.motion_edge * edge) * (1.0 + t.disagree * max(z - 1.0, 0.0));
    float n = min(n_prev / shrink, cap);
    vec3 res = clamp((n * hist_rgb + q * cur) / (n + q), 0.0, Y_MAX);
    write_pixel(xy, fp, res, best_near, min(n + q, cap), lock);
}
