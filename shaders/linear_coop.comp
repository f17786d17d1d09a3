#version 460
// The cooperative-matrix path of linear.comp (same variants, same results up to f16 rounding
// of the inputs): a workgroup computes 64 tokens x 64 outputs. The input rows are converted to
// f16 in shared memory, each subgroup multiplies 16-row blocks by W^T (read straight from the
// weights as column-major 16x16 tiles) with f32 accumulators, and the shared epilogue writes.
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

void main() {
    uint t0 = gl_WorkGroupID.x * TS_COOP_ROWS;
    uint n0 = gl_WorkGroupID.y * TS_COOP_COLS;
    uint nblocks = min(uint(TS_COOP_COLS / 16), uint(OUT - n0) / 16);
    for (uint e = gl_LocalInvocationID.x; e < TS_COOP_ROWS * IN; e += TS_COOP_THREADS) {
        uint r = e / IN, i = e % IN;
        uint t = t0 + r;
        As[e] = float16_t(t < pc.tokens ? linear_input(t, i) : 0.0);
    }
    barrier();
    for (uint rb = gl_SubgroupID; rb < TS_COOP_ROWS / 16; rb += gl_NumSubgroups) {
        ACC c0 = ACC(0.0);
        ACC c1 = ACC(0.0);
        ACC c2 = ACC(0.0);
        ACC c3 = ACC(0.0);
        for (uint k = 0; k < IN; k += 16) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
            coopMatLoad(a, As, rb * 16 * IN + k, IN, gl_CooperativeMatrixLayoutRowMajor);
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> bm;
            coopMatLoad(bm, F16Buf(pc.w).v, (n0 + 0) * IN + k, IN, gl_CooperativeMatrixLayoutColumnMajor);
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
    uint cols = nblocks * 16;
    for (uint e = gl_LocalInvocationID.x; e < TS_COOP_ROWS * cols; e += TS_COOP_THREADS) {
        uint r = e / cols, c = e % cols;
        uint t = t0 + r;
        if (t < pc.tokens) linear_store(t, n0 + c, Cs[r * TS_COOP_COLS + c]);
    }
}
