// Every linear layer outside the blocks (embedding, merges, expansions, the head) on matrix
// cores: the same arguments and variants as linear.hip (include/tessel_linear.h), except that
// `w` is in fragment order (include/tessel_mma.h); one warp per 16
// tokens, four warps per workgroup. A warp holds its 16 input rows as A tiles in registers
// (LayerNorm applied, rounded to f16) and walks the outputs 8 at a time, reading the weights as
// B tiles; the epilogue adds the bias, applies SiLU, the per-pixel head path, the expansion's
// scatter and the residual add, as the portable kernel does.
// Kernels by the widest input they take: tessel_linear_mma_k128, _k256, _k512.
#include "tessel_linear.h"
#include "tessel_mma.h"

#if defined(TS_HAS_MMA)
// Input elements k, k+1 of a row (k even): merge gather, f16 or f32 rows.
TS_INLINE ts_float2 linear_pair(const LinearArgs& a, ts_uint mode, ts_uint row, ts_uint k) {
    if (mode == TS_MODE_MERGE) {
        ts_uint cin = a.in / 4, q = k / cin, c = k % cin;
        ts_uint tx = row % a.width, ty = row / a.width;
        ts_uint src = (2 * ty + q / 2) * (2 * a.width) + 2 * tx + q % 2;
        return *(const ts_float2*)((const float*)a.x + src * cin + c);
    }
    if (a.flags & TS_IN_F16) {
        ts_half2 h = *(const ts_half2*)((const ts_half*)a.x + row * a.in + k);
        return ts_float2{(float)h.x, (float)h.y};
    }
    return *(const ts_float2*)((const float*)a.x + row * a.in + k);
}

// Mean and 1/sigma of a row over its `in` inputs; each lane of the quad reads a quarter.
TS_INLINE void linear_stats(const LinearArgs& a, ts_uint mode, ts_uint row, ts_uint t, float& mean, float& inv) {
    float s = 0.0f;
    for (ts_uint k = 2 * t; k < a.in; k += 8) {
        ts_float2 v = linear_pair(a, mode, row, k);
        s += v.x + v.y;
    }
    mean = ts_quad_sum(s) / (float)a.in;
    float q = 0.0f;
    for (ts_uint k = 2 * t; k < a.in; k += 8) {
        ts_float2 v = linear_pair(a, mode, row, k);
        q += (v.x - mean) * (v.x - mean) + (v.y - mean) * (v.y - mean);
    }
    inv = ts_rsqrt(ts_quad_sum(q) / (float)a.in + 1e-5f);
}

// The A-tile register of a row's inputs k, k+1 (normalised where the layer asks).
TS_INLINE ts_uint linear_a(const LinearArgs& a, ts_uint mode, ts_uint row, ts_uint k, float mean, float inv) {
    ts_float2 v = linear_pair(a, mode, row, k);
    if (a.flags & TS_LAYER_NORM) {
        v.x = (v.x - mean) * inv * (float)a.gamma[k] + (float)a.beta[k];
        v.y = (v.y - mean) * inv * (float)a.gamma[k + 1] + (float)a.beta[k + 1];
    }
    return ts_pack(v.x, v.y);
}

// Outputs o, o+1 of a row: bias added by the caller; activation, head path, scatter, store.
TS_INLINE void linear_pair_store(const LinearArgs& a, ts_uint mode, ts_uint row, ts_uint o, float v0, float v1) {
    if (a.flags & TS_ACT_SILU) {
        v0 = ts_silu(v0);
        v1 = ts_silu(v1);
    }
    if (mode == TS_MODE_HEAD && a.aux) {
        ts_uint s = o / TS_HEAD_CHANNELS, k = o % TS_HEAD_CHANNELS;
        const ts_half* px = a.aux + (row * TS_TOKEN_PIXELS + s) * a.p;
        float p0 = (float)a.aux_b[k], p1 = (float)a.aux_b[k + 1];
        for (ts_uint q = 0; q < a.p; q++) {
            float e = (float)px[q];
            p0 += (float)a.aux_w[k * a.p + q] * e;
            p1 += (float)a.aux_w[(k + 1) * a.p + q] * e;
        }
        v0 += p0;
        v1 += p1;
    }
    ts_uint dst;
    if (mode == TS_MODE_EXPAND) {
        ts_uint cout = a.out / 4, q = o / cout, c = o % cout;
        ts_uint tx = row % a.width, ty = row / a.width;
        dst = ((2 * ty + q / 2) * (2 * a.width) + 2 * tx + q % 2) * cout + c;
    } else {
        dst = row * a.out + o;
    }
    if (a.flags & TS_OUT_F16) {
        *(ts_uint*)((ts_half*)a.y + dst) = ts_pack(v0, v1);
    } else {
        ts_float2* y = (ts_float2*)((float*)a.y + dst);
        if (a.flags & TS_RESIDUAL) {
            ts_float2 old = *y;
            v0 += old.x;
            v1 += old.y;
        }
        *y = ts_float2{v0, v1};
    }
}

template <int MAXKT>
TS_INLINE void linear_mma_body(const LinearArgs& a) {
    ts_uint lane = ts_lane(), warp = ts_thread_x() / 32, g = lane / 4, t = lane % 4;
    ts_uint mode = (a.flags >> TS_MODE_SHIFT) & 3u;
    ts_uint row0 = ts_block_x() * 64 + warp * 16 + g, row1 = row0 + 8;
    // Rows past the end compute on the last row and store nothing (every lane takes part in
    // the products).
    ts_uint last = a.tokens - 1;
    ts_uint in0 = row0 < a.tokens ? row0 : last, in1 = row1 < a.tokens ? row1 : last;
    float mean0 = 0.0f, inv0 = 1.0f, mean1 = 0.0f, inv1 = 1.0f;
    if (a.flags & TS_LAYER_NORM) {
        linear_stats(a, mode, in0, t, mean0, inv0);
        linear_stats(a, mode, in1, t, mean1, inv1);
    }
    ts_uint kts = a.in / 16;
    ts_uint xa[MAXKT][4];
#pragma unroll
    for (int kt = 0; kt < MAXKT; kt++) {
        if (kt < (int)kts) {
            ts_uint k = 16 * kt + 2 * t;
            xa[kt][0] = linear_a(a, mode, in0, k, mean0, inv0);
            xa[kt][1] = linear_a(a, mode, in1, k, mean1, inv1);
            xa[kt][2] = linear_a(a, mode, in0, k + 8, mean0, inv0);
            xa[kt][3] = linear_a(a, mode, in1, k + 8, mean1, inv1);
        }
    }
#pragma unroll 1
    for (ts_uint n0 = 0; n0 < a.out; n0 += 8) {
        float d[4];
        d[0] = d[2] = (float)a.b[n0 + 2 * t];
        d[1] = d[3] = (float)a.b[n0 + 2 * t + 1];
        const ts_uint2* w = ts_frag(a.w, n0 / 8, kts, 0);
#pragma unroll
        for (int kt = 0; kt < MAXKT; kt++) {
            if (kt < (int)kts) {
                ts_uint2 b = w[kt * 32];
                ts_mma(d, xa[kt], b.x, b.y);
            }
        }
        if (row0 < a.tokens) linear_pair_store(a, mode, row0, n0 + 2 * t, d[0], d[1]);
        if (row1 < a.tokens) linear_pair_store(a, mode, row1, n0 + 2 * t, d[2], d[3]);
    }
}

#define TS_LINEAR_MMA(K) \
    TS_KERNEL TS_BOUNDS(128) void tessel_linear_mma_k##K(LinearArgs a) { linear_mma_body<K / 16>(a); }
TS_LINEAR_MMA(128)
TS_LINEAR_MMA(256)
TS_LINEAR_MMA(512)
#endif
