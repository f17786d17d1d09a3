#version 460
// The cooperative-matrix path of linear.comp (same variants; the inputs are rounded to f16):
// a workgroup takes 64 tokens. It loads their input rows once (gathered, LayerNorm applied)
// as f16 into shared memory; then for each chunk of COLS outputs it loads those rows of W
// (= W^T column-major) into shared memory, every subgroup multiplies 16-row blocks into f32
// accumulators, and the epilogue writes four outputs (f32) or eight (f16) per item.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "linear_params.glsl"
// Tokens per workgroup, and its invocations (always 2 ROWS).
layout(constant_id = TS_SPEC_ROWS) const int ROWS = TS_COOP_ROWS;
layout(local_size_x_id = TS_SPEC_THREADS) in;
const uint THREADS = gl_WorkGroupSize.x;
// MODE_HEAD: the per-pixel head path's weights and biases (8 P + 8 values), read by every
// epilogue item (the token rows come straight from the buffer: include/linear_epilogue.glsl).
shared float Pw[TS_HEAD_CHANNELS * TS_FEATURES + TS_HEAD_CHANNELS];
#define LINEAR_PIXEL_W(k, p) Pw[(k) * P + (p)]
#define LINEAR_PIXEL_B(k) Pw[TS_HEAD_CHANNELS * TS_FEATURES + (k)]
#include "linear_epilogue.glsl"

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// Rows of the matrices padded (bindings.h, TS_SHARED_PAD): the input rows and the chunk's
// weights IN_S halves apart, the result tile COLS_S floats.
const uint COLS_S = COLS + TS_SHARED_PAD / 2;
shared float16_t As[ROWS * IN_S];
shared float16_t Ws[COLS * IN_S];
// LN: the f32 input rows (stride IN); afterwards the f32 result tile of one output chunk (stride
// COLS_S).
shared float Fs[ROWS * (STAGE + TS_SHARED_PAD / 2)];
shared vec2 part[THREADS];
shared vec2 stats[ROWS];

// The workgroup's input rows as f16 in As (LN: normalised first, statistics from Fs).
void load_rows(uint t0) {
    const uint Q = IN / 4;
    if (LN == 0) {
        for (uint e = gl_LocalInvocationID.x; e < ROWS * Q; e += THREADS) {
            uint r = e / Q, i = (e % Q) * 4;
            vec4 v = t0 + r < pc.tokens ? linear_input4(t0 + r, i) : vec4(0.0);
            for (int j = 0; j < 4; j++) As[r * IN_S + i + j] = float16_t(v[j]);
        }
        barrier();
        return;
    }
    for (uint e = gl_LocalInvocationID.x; e < ROWS * Q; e += THREADS) {
        uint r = e / Q, i = (e % Q) * 4;
        vec4 v = t0 + r < pc.tokens ? linear_input4(t0 + r, i) : vec4(0.0);
        for (int j = 0; j < 4; j++) Fs[r * IN + i + j] = v[j];
    }
    barrier();
    // Two invocations per row, each over half of it: mean, then the variance around it.
    uint tid = gl_LocalInvocationID.x;
    uint r = tid / 2, half_ = tid % 2;
    uint i0 = half_ * (IN / 2), i1 = i0 + IN / 2;
    float s = 0.0;
    for (uint i = i0; i < i1; i++) s += Fs[r * IN + i];
    part[tid].x = s;
    barrier();
    float mean = (part[2 * r].x + part[2 * r + 1].x) / float(IN);
    float q = 0.0;
    for (uint i = i0; i < i1; i++) { float d = Fs[r * IN + i] - mean; q += d * d; }
    part[tid].y = q;
    barrier();
    if (half_ == 0) stats[r] = vec2(mean, 1.0 / sqrt((part[2 * r].y + part[2 * r + 1].y) / float(IN) + 1e-5));
    barrier();
    for (uint e = gl_LocalInvocationID.x; e < ROWS * Q; e += THREADS) {
        uint r = e / Q, i = (e % Q) * 4;
        vec4 v = vec4(Fs[r * IN + i], Fs[r * IN + i + 1], Fs[r * IN + i + 2], Fs[r * IN + i + 3]);
        v = ln_affine4(v, i, stats[r].x, stats[r].y);
        for (int j = 0; j < 4; j++) As[r * IN_S + i + j] = float16_t(v[j]);
    }
    barrier();
}

// The epilogue of f16 outputs: each invocation takes up to EPI eight-output items (16 bytes: one
// load of a residual stream's old values, one store) instead of four. At 4K on the H100 the
// expansion into level 0 0.082 -> 0.063 ms and into level 1 0.041 -> 0.032 with the streams in
// f16 (forty-seventh session); their values and old values are all read before any store.
layout(buffer_reference, std430, buffer_reference_align = 16) restrict buffer U4Buf { uvec4 v[]; };
uint pack2(vec2 v) { return packFloat2x16(f16vec2(v)); }
vec2 unpack2(uint u) { return vec2(unpackFloat2x16(u)); }
void epilogue8(uint t0, uint n0, uint nblocks) {
    uint q = nblocks * 2;
    const uint EPI = uint(COLS) / 16;
    vec4 va[EPI], vb[EPI];
    uvec4 old[EPI];
    uint dst[EPI];
    bool live[EPI];
    for (uint k = 0; k < EPI; k++) {
        uint e = gl_LocalInvocationID.x + k * THREADS;
        uint r = e / q, c = (e % q) * 8;
        live[k] = e < ROWS * q && t0 + r < pc.tokens;
        if (live[k]) {
            uint ci = r * COLS_S + c;
            va[k] = linear_value4(t0 + r, n0 + c, vec4(Fs[ci], Fs[ci + 1], Fs[ci + 2], Fs[ci + 3]));
            vb[k] = linear_value4(t0 + r, n0 + c + 4, vec4(Fs[ci + 4], Fs[ci + 5], Fs[ci + 6], Fs[ci + 7]));
            dst[k] = linear_dst(t0 + r, n0 + c);
            old[k] = RESIDUAL != 0 ? U4Buf(pc.y).v[dst[k] / 8] : uvec4(0);
        }
    }
    for (uint k = 0; k < EPI; k++) {
        if (!live[k]) continue;
        vec4 a = va[k], b = vb[k];
        if (RESIDUAL != 0) {
            a += vec4(unpack2(old[k].x), unpack2(old[k].y));
            b += vec4(unpack2(old[k].z), unpack2(old[k].w));
        }
        U4Buf(pc.y).v[dst[k] / 8] = uvec4(pack2(a.xy), pack2(a.zw), pack2(b.xy), pack2(b.zw));
    }
}

void main() {
    uint t0 = gl_WorkGroupID.x * ROWS;
    if (MODE == TS_MODE_HEAD && pc.aux != 0ul) {
        // Made visible by load_rows' barriers, long before the first epilogue.
        for (uint e = gl_LocalInvocationID.x; e < TS_HEAD_CHANNELS * (P + 1); e += THREADS) {
            bool bias = e >= TS_HEAD_CHANNELS * P;
            uint at = bias ? TS_HEAD_CHANNELS * TS_FEATURES + e - TS_HEAD_CHANNELS * P : e;
            Pw[at] = float(bias ? F16Buf(pc.aux_b).v[e - TS_HEAD_CHANNELS * P] : F16Buf(pc.aux_w).v[e]);
        }
    }
    load_rows(t0);
    F16x4Buf w4 = F16x4Buf(pc.w);
    for (uint n0 = 0; n0 < OUT; n0 += COLS) {
        uint nblocks = min(uint(COLS / 16), uint(OUT - n0) / 16);
        for (uint e = gl_LocalInvocationID.x; e < nblocks * 16 * IN / 4; e += THREADS) {
            f16vec4 v = w4.v[n0 * IN / 4 + e];
            uint o = (e * 4) / IN * IN_S + (e * 4) % IN;
            for (int j = 0; j < 4; j++) Ws[o + j] = v[j];
        }
        barrier();
        for (uint rb = gl_SubgroupID; rb < ROWS / 16; rb += gl_NumSubgroups) {
            ACC c0 = ACC(0.0);
            ACC c1 = ACC(0.0);
            ACC c2 = ACC(0.0);
            ACC c3 = ACC(0.0);
            for (uint k = 0; k < IN; k += 16) {
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
                coopMatLoad(a, As, rb * 16 * IN_S + k, IN_S, gl_CooperativeMatrixLayoutRowMajor);
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> bm;
                coopMatLoad(bm, Ws, k, IN_S, gl_CooperativeMatrixLayoutColumnMajor);
                c0 = coopMatMulAdd(a, bm, c0);
                if (nblocks > 1) {
                    coopMatLoad(bm, Ws, 16 * IN_S + k, IN_S, gl_CooperativeMatrixLayoutColumnMajor);
                    c1 = coopMatMulAdd(a, bm, c1);
                }
                if (nblocks > 2) {
                    coopMatLoad(bm, Ws, 32 * IN_S + k, IN_S, gl_CooperativeMatrixLayoutColumnMajor);
                    c2 = coopMatMulAdd(a, bm, c2);
                }
                if (nblocks > 3) {
                    coopMatLoad(bm, Ws, 48 * IN_S + k, IN_S, gl_CooperativeMatrixLayoutColumnMajor);
                    c3 = coopMatMulAdd(a, bm, c3);
                }
            }
            uint base = rb * 16 * COLS_S;
            coopMatStore(c0, Fs, base, COLS_S, gl_CooperativeMatrixLayoutRowMajor);
            if (nblocks > 1) coopMatStore(c1, Fs, base + 16, COLS_S, gl_CooperativeMatrixLayoutRowMajor);
            if (nblocks > 2) coopMatStore(c2, Fs, base + 32, COLS_S, gl_CooperativeMatrixLayoutRowMajor);
            if (nblocks > 3) coopMatStore(c3, Fs, base + 48, COLS_S, gl_CooperativeMatrixLayoutRowMajor);
        }
        barrier();
        if (OUT_F16 != 0) {
            epilogue8(t0, n0, nblocks);
            barrier();
            continue;
        }
        // Epilogue of f32 outputs: each invocation takes up to EPI four-output items; their
        // values and residual reads are all issued before any store.
        uint q = nblocks * 4;
        // ROWS * COLS / 4 / THREADS items, THREADS = 2 ROWS: sized by the chunk the pipeline was
        // specialised for, not the widest (81 registers instead of 102 for the head in chunks of
        // 32 on the H200; the network 4.05 -> 3.80 ms at 4K, BENCHMARKS.md, thirty-sixth session).
        const uint EPI = uint(COLS) / 8;
        vec4 val[EPI], old[EPI];
        uint dst[EPI];
        bool live[EPI];
        for (uint k = 0; k < EPI; k++) {
            uint e = gl_LocalInvocationID.x + k * THREADS;
            uint r = e / q, c = (e % q) * 4;
            live[k] = e < ROWS * q && t0 + r < pc.tokens;
            if (live[k]) {
                uint ci = r * COLS_S + c;
                val[k] = linear_value4(t0 + r, n0 + c, vec4(Fs[ci], Fs[ci + 1], Fs[ci + 2], Fs[ci + 3]));
                dst[k] = linear_dst(t0 + r, n0 + c);
                old[k] = linear_old4(dst[k]);
            }
        }
        for (uint k = 0; k < EPI; k++) {
            if (live[k]) linear_write4(dst[k], val[k], old[k]);
        }
        barrier();
    }
}
