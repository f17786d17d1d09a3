// The pixel context shared by the input stage and the reconstruction (docs/NETWORK.md §2):
// nearest jittered sample, its 3x3 neighbourhood, the reprojected history. Needs `common.glsl`.
// The input stage stores the history part the reconstruction needs (history colour, and its
// weight before the blend: the validity, times n / (n + 1) of the count n for a package that
// accumulates; the "context" buffer, one vec4 per output pixel) so that a frame's back, with the
// input stage in its front, reads it instead of resampling the history a second time.

struct PixelContext {
    vec2 offset;
    float d2[9];
    vec3 c[9];
    float near[9];
    vec2 motion[9];
    vec3 hist;
    float valid;
    float prev_near;
    vec2 memory;
    float count;  // the reprojected accumulation count (config `accumulate`)
};

// Catmull-Rom (Keys, a = -1/2) weights for fraction f, taps -1..2.
vec4 catmull_rom_weights(float f) {
    return vec4(f * (-0.5 + f * (1.0 - 0.5 * f)),
                1.0 + f * f * (-2.5 + 1.5 * f),
                f * (0.5 + f * (2.0 - 1.5 * f)),
                f * f * (-0.5 + 0.5 * f));
}

// Keys' cubic weights with parameter a for fraction f, taps -1..2 (a = -1/2 is Catmull-Rom; below
// it the kernel is sharper).
vec4 keys_weights(float f, float a) {
    float x0 = 1.0 + f, x1 = f, x2 = 1.0 - f, x3 = 2.0 - f;
    float w0 = ((a * x0 - 5.0 * a) * x0 + 8.0 * a) * x0 - 4.0 * a;
    float w1 = ((a + 2.0) * x1 - (a + 3.0)) * x1 * x1 + 1.0;
    float w2 = ((a + 2.0) * x2 - (a + 3.0)) * x2 * x2 + 1.0;
    float w3 = ((a * x3 - 5.0 * a) * x3 + 8.0 * a) * x3 - 4.0 * a;
    return vec4(w0, w1, w2, w3);
}

// The history is two f16vec4 per pixel: (r, g, b, nearness) and (memory 0, memory 1, count, -).
vec4 hist_at(F16Buf h, ivec2 p, ivec2 size, int part) {
    ivec2 q = clamp(p, ivec2(0), size - 1);
    return vec4(F16x4Buf(h).v[(q.y * size.x + q.x) * 2 + part]);
}

// Keys' cubic (parameter a: config `history_a`) of the history colour at p (rgb), and the bilinear
// nearness at p (a) from the same taps: the bilinear's four are the cubic's inner four, so they
// are loaded once (hist_bilinear(h, p, size, 0).a computed exactly the same way).
vec4 hist_cubic(F16Buf h, vec2 p, ivec2 size, float a) {
    vec2 u = p - 0.5;
    vec2 i = floor(u);
    vec2 f = u - i;
    // Catmull-Rom keeps its own arithmetic, as the CPU reference does.
    vec4 wx = a == -0.5 ? catmull_rom_weights(f.x) : keys_weights(f.x, a);
    vec4 wy = a == -0.5 ? catmull_rom_weights(f.y) : keys_weights(f.y, a);
    ivec2 b = ivec2(i);
    vec3 o = vec3(0.0);
    float inner[4];
    for (int j = 0; j < 4; j++) {
        vec3 row = vec3(0.0);
        for (int k = 0; k < 4; k++) {
            vec4 t = hist_at(h, b + ivec2(k - 1, j - 1), size, 0);
            row += wx[k] * t.rgb;
            if (j >= 1 && j <= 2 && k >= 1 && k <= 2) inner[(j - 1) * 2 + (k - 1)] = t.a;
        }
        o += wy[j] * row;
    }
    float top = inner[0] + (inner[1] - inner[0]) * f.x;
    float bot = inner[2] + (inner[3] - inner[2]) * f.x;
    return vec4(o, top + (bot - top) * f.y);
}

// Bilinear sample of one part of the history at p.
vec4 hist_bilinear(F16Buf h, vec2 p, ivec2 size, int part) {
    vec2 u = p - 0.5;
    vec2 f = u - floor(u);
    ivec2 i = ivec2(floor(u));
    vec4 a = hist_at(h, i, size, part);
    vec4 b = hist_at(h, i + ivec2(1, 0), size, part);
    vec4 d = hist_at(h, i + ivec2(0, 1), size, part);
    vec4 e = hist_at(h, i + ivec2(1, 1), size, part);
    vec4 top = a + (b - a) * f.x;
    vec4 bot = d + (e - d) * f.x;
    return top + (bot - top) * f.y;
}

// prep_c: per render pixel (tonemapped exposed r, g, b, nearness); prep_m: motion (output px).
// pos: the frame's position table, (x + 0.5) rw / W for every column x, then (y + 0.5) rh / H for
// every row y, computed by the host with IEEE f32 division exactly as the reference does (the
// nearest sample is a floor of it, and at a tie, 3x with jitter 1/6 say, one ulp decides; Vulkan
// allows '/' 2.5 ulp).
// Output pixel xy's centre in render px (pr), its nearest jittered sample (n) and the offset to it.
struct Nearest {
    vec2 pr;
    ivec2 n;
    vec2 offset;
};

Nearest nearest_sample(uvec2 xy, FrameParams fp, F32Buf pos) {
    Nearest s;
    ivec2 r = ivec2(fp.render);
    precise vec2 pr = vec2(pos.v[xy.x], pos.v[int(fp.out_size.x) + xy.y]);
    vec2 j = fp.jitter;
    precise float ux = pr.x - j.x;
    precise float uy = pr.y - j.y;
    s.n = ivec2(clamp(int(floor(ux)), 0, r.x - 1), clamp(int(floor(uy)), 0, r.y - 1));
    s.offset = vec2(pr.x - (float(s.n.x) + 0.5 + j.x), pr.y - (float(s.n.y) + 0.5 + j.y));
    s.pr = pr;
    return s;
}

// The 3x3's tap k (row-major, 4 the nearest sample): its render pixel, clamped to the image.
ivec2 tap_pixel(Nearest s, int k, FrameParams fp) {
    ivec2 r = ivec2(fp.render);
    return ivec2(clamp(s.n.x + (k % 3) - 1, 0, r.x - 1), clamp(s.n.y + (k / 3) - 1, 0, r.y - 1));
}

// The squared distance d2 from the output pixel's centre to the sample of render pixel t.
float tap_d2(Nearest s, ivec2 t, FrameParams fp) {
    float qx = float(t.x) + 0.5 + fp.jitter.x;
    float qy = float(t.y) + 0.5 + fp.jitter.y;
    return (s.pr.x - qx) * (s.pr.x - qx) + (s.pr.y - qy) * (s.pr.y - qy);
}

// The neighbourhood part of the context: nearest sample, offset, the 3x3 samples and their
// distances; the history part left empty (not valid, zero).
PixelContext pixel_neighbourhood(uvec2 xy, FrameParams fp, F32Buf prep_c, F32Buf prep_m, F32Buf pos) {
    PixelContext ctx;
    Nearest s = nearest_sample(xy, fp, pos);
    ctx.offset = s.offset;
    for (int k = 0; k < 9; k++) {
        ivec2 t = tap_pixel(s, k, fp);
        ctx.d2[k] = tap_d2(s, t, fp);
        int pi = t.y * int(fp.render.x) + t.x;
        vec4 cn = Vec4Buf(prep_c).v[pi];
        ctx.c[k] = cn.rgb;
        ctx.near[k] = cn.a;
        ctx.motion[k] = Vec2Buf(prep_m).v[pi];
    }
    ctx.valid = 0.0;
    ctx.hist = vec3(0.0);
    ctx.prev_near = 0.0;
    ctx.memory = vec2(0.0);
    ctx.count = 0.0;
    return ctx;
}

// The history part of the context: the reprojected colour, its validity, the previous nearness,
// memory and accumulation count (all zero when the history is not valid).
struct HistorySample {
    vec3 hist;
    float valid;
    float prev_near;
    vec2 memory;
    float count;
};

// The history part for output pixel xy whose nearest sample moved by m4 (output px). history_a:
// the history kernel's Keys parameter (config `history_a`; -0.5 for the fixed head).
HistorySample sample_history(uvec2 xy, vec2 m4, FrameParams fp, F16Buf hist, float history_a) {
    HistorySample s = HistorySample(vec3(0.0), 0.0, 0.0, vec2(0.0), 0.0);
    ivec2 o = ivec2(fp.out_size);
    vec2 p = vec2(float(xy.x) + 0.5 + m4.x, float(xy.y) + 0.5 + m4.y);
    if (fp.hist_valid != 0u) {
        float outside = max(max(max(0.0, -p.x), p.x - float(o.x)), max(-p.y, p.y - float(o.y)));
        s.valid = clamp(1.0 - outside, 0.0, 1.0);
        vec4 h = hist_cubic(hist, p, o, history_a);
        for (int c = 0; c < 3; c++) {
            s.hist[c] = reexpose(clamp(h[c], 0.0, Y_MAX), fp.hist_exposure, fp.exposure);
        }
        s.prev_near = h.a;
        vec4 m = hist_bilinear(hist, p, o, 1);
        s.memory = m.xy;
        s.count = m.z;
    }
    return s;
}

PixelContext pixel_context(uvec2 xy, FrameParams fp, F32Buf prep_c, F32Buf prep_m, F16Buf hist, F32Buf pos, float history_a) {
    PixelContext ctx = pixel_neighbourhood(xy, fp, prep_c, prep_m, pos);
    HistorySample s = sample_history(xy, ctx.motion[4], fp, hist, history_a);
    ctx.hist = s.hist;
    ctx.valid = s.valid;
    ctx.prev_near = s.prev_near;
    ctx.memory = s.memory;
    ctx.count = s.count;
    return ctx;
}

// The history's weight before the blend (docs/NETWORK.md §6): the validity, and for a package that
// accumulates also n / (n + 1) of the reprojected count n.
float history_weight(float valid, float count, bool accumulate) {
    return accumulate ? valid * count / (count + 1.0) : valid;
}

float history_weight(PixelContext ctx, bool accumulate) {
    return history_weight(ctx.valid, ctx.count, accumulate);
}
