#version 460
// The cooperative-matrix path of linear.comp (same variants; the inputs are rounded to f16):
// a workgroup takes 64 tokens. It loads their input rows once (gathered, LayerNorm applied)
// as f16 into shared memory, then for each 64-output chunk every subgroup multiplies 16-row
// blocks by W^T (read from the weights as column-major 16x16 tiles) into f32 accumulators,
// and the shared epilogue writes four outputs per invocation.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "linear_params.glsl"
#include "linear_epilogue.glsl"
layout(local_size_x = TS_COOP_THREADS) in;

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

shared float16_t As[TS_COOP_ROWS * IN];
shared float Cs[TS_COOP_ROWS * TS_COOP_COLS];
shared vec2 stats[TS_COOP_ROWS];

void load_rows(uint t0) {
    if (LN != 0) {
        for (uint r = gl_LocalInvocationID.x; r < TS_COOP_ROWS; r += TS_COOP_THREADS)
            stats[r] = t0 + r < pc.tokens ? ln_stats(t0 + r) : vec2(0.0, 1.0);
        barrier();
    }
    const uint Q = IN / 4;
    for (uint e = gl_LocalInvocationID.x; e < TS_COOP_ROWS * Q; e += TS_COOP_THREADS) {
        uint r = e / Q, i = (e % Q) * 4;
        uint t = t0 + r;
        vec4 v = vec4(0.0);
        if (t < pc.tokens) {
            v = linear_input4(t, i);
            if (LN != 0) v = ln_affine4(v, i, stats[r].x, stats[r].y);
        }
        for (int j = 0; j < 4; j++) As[r * IN + i + j] = float16_t(v[j]);
    }
    barrier();
}

void main() {
    uint t0 = gl_WorkGroupID.x * TS_COOP_ROWS;
    load_rows(t0);
    for (uint n0 = 0; n0 < OUT; n0 += TS_COOP_COLS) {
        uint nblocks = min(uint(TS_COOP_COLS / 16), uint(OUT - n0) / 16);
        for (uint rb = gl_SubgroupID; rb < TS_COOP_ROWS / 16; rb += gl_NumSubgroups) {
            ACC c0 = ACC(0.0);
            ACC c1 = ACC(0.0);
            ACC c2 = ACC(0.0);
            ACC c3 = ACC(0.0);
            for (uint k = 0; k < IN; k += 16) {
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
                coopMatLoad(a, As, rb * 16 * IN + k, IN, gl_CooperativeMatrixLayoutRowMajor);
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> bm;
                coopMatLoad(bm, F16Buf(pc.w).v, n0 * IN + k, IN, gl_CooperativeMatrixLayoutColumnMajor);
                c0 = coopMatMulAdd(a, bm, c0);
                if (nblocks > 1) {
                    coopMatLoad(bm, F16Buf(pc.w).v, (n0 + 16) * IN + k, IN, gl_CooperativeMatrixLayoutColumnMajor);
                    c1 = coopMatMulAdd(a, bm, c1);
                }
                if (nblocks > 2) {
                    coopMatLoad(bm, F16Buf(pc.w).v, (n0 + 32) * IN + k, IN, gl_CooperativeMatrixLayoutColumnMajor);
                    c2 = coopMatMulAdd(a, bm, c2);
                }
                if (nblocks > 3) {
                    coopMatLoad(bm, F16Buf(pc.w).v, (n0 + 48) * IN + k, IN, gl_CooperativeMatrixLayoutColumnMajor);
                    c3 = coopMatMulAdd(a, bm, c3);
                }
            }
            uint base = rb * 16 * TS_COOP_COLS;
            coopMatStore(c0, Cs, base, TS_COOP_COLS, gl_CooperativeMatrixLayoutRowMajor);
            if (nblocks > 1) coopMatStore(c1, Cs, base + 16, TS_COOP_COLS, gl_CooperativeMatrixLayoutRowMajor);
            if (nblocks > 2) coopMatStore(c2, Cs, base + 32, TS_COOP_COLS, gl_CooperativeMatrixLayoutRowMajor);
            if (nblocks > 3) coopMatStore(c3, Cs, base + 48, TS_COOP_COLS, gl_CooperativeMatrixLayoutRowMajor);
        }
        barrier();
        uint q = nblocks * 4;
        for (uint e = gl_LocalInvocationID.x; e < TS_COOP_ROWS * q; e += TS_COOP_THREADS) {
            uint r = e / q, c = (e % q) * 4;
            uint t = t0 + r;
            uint ci = r * TS_COOP_COLS + c;
            if (t < pc.tokens) linear_store4(t, n0 + c, vec4(Cs[ci], Cs[ci + 1], Cs[ci + 2], Cs[ci + 3]));
        }
        barrier();
    }
}
