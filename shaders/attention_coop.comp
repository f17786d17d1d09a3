#version 460
// Window attention on the torus with cooperative matrices (same contract as attention.comp):
// one workgroup per (window, head). S = Q K^T and O = P V are 16x16x16 f16 products with f32
// accumulation; the softmax (scale, relative-position bias, max, exp, sum) runs in f32 between
// them, two invocations per query row; P is rounded to f16 for the second product.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = TS_COOP_THREADS) in;
layout(constant_id = 0) const int C = 32;
layout(push_constant) uniform PC {
    F16Buf qkv;   // [tokens, 3C]
    F16Buf out_;  // [tokens, C]
    F16Buf rpb;   // [heads, 225]
    uint width;   // level grid, tokens
    uint height;
    uint shift_x;
    uint shift_y;
} pc;

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define MATA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MATB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
const uint N = TS_WINDOW_TOKENS;
const uint D = TS_HEAD_DIM;

shared float16_t Qs[N * D];
shared float16_t Ks[N * D];
shared float16_t Vs[N * D];
shared float Ss[N * N];        // scores, then (rows of) the output O = P V
shared float16_t Ps[N * N];
shared float bias[TS_RPB_ENTRIES];
shared float part[TS_COOP_THREADS];
shared float rowinv[N];

uint token_of(uint i) {
    uint wins_x = pc.width / TS_WINDOW;
    uint wx = gl_WorkGroupID.x % wins_x, wy = gl_WorkGroupID.x / wins_x;
    uint x = (wx * TS_WINDOW + i % TS_WINDOW + pc.width - pc.shift_x % pc.width) % pc.width;
    uint y = (wy * TS_WINDOW + i / TS_WINDOW + pc.height - pc.shift_y % pc.height) % pc.height;
    return y * pc.width + x;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint h = gl_WorkGroupID.y;
    F16x4Buf qkv4 = F16x4Buf(pc.qkv);
    // Q and K rows by the first 64 invocations, V rows by the others.
    {
        uint i = tid % N;
        uint base = token_of(i) * 3 * C + h * D;
        for (uint d = 0; d < D; d += 4) {
            if (tid < N) {
                f16vec4 q = qkv4.v[(base + d) / 4];
                f16vec4 k = qkv4.v[(base + C + d) / 4];
                for (int j = 0; j < 4; j++) { Qs[i * D + d + j] = q[j]; Ks[i * D + d + j] = k[j]; }
            } else {
                f16vec4 v = qkv4.v[(base + 2 * C + d) / 4];
                for (int j = 0; j < 4; j++) Vs[i * D + d + j] = v[j];
            }
        }
    }
    for (uint e = tid; e < TS_RPB_ENTRIES; e += TS_COOP_THREADS) bias[e] = float(pc.rpb.v[h * TS_RPB_ENTRIES + e]);
    barrier();
    // S = Q K^T: subgroup rb takes query rows rb*16..; K^T is K read column-major.
    for (uint rb = gl_SubgroupID; rb < N / 16; rb += gl_NumSubgroups) {
        MATA a;
        coopMatLoad(a, Qs, rb * 16 * D, D, gl_CooperativeMatrixLayoutRowMajor);
        for (uint cb = 0; cb < N / 16; cb++) {
            MATB b;
            coopMatLoad(b, Ks, cb * 16 * D, D, gl_CooperativeMatrixLayoutColumnMajor);
            ACC s = coopMatMulAdd(a, b, ACC(0.0));
            coopMatStore(s, Ss, rb * 16 * N + cb * 16, N, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
    barrier();
    // Softmax of row r by two invocations, 32 keys each.
    uint r = tid / 2, j0 = (tid % 2) * (N / 2);
    uint ix = r % TS_WINDOW, iy = r / TS_WINDOW;
    float m = -3.4e38;
    for (uint j = j0; j < j0 + N / 2; j++) {
        uint jx = j % TS_WINDOW, jy = j / TS_WINDOW;
        float s = Ss[r * N + j] * 0.25 + bias[(iy - jy + 7) * 15 + (ix - jx + 7)];
        Ss[r * N + j] = s;
        m = max(m, s);
    }
    part[tid] = m;
    barrier();
    m = max(part[2 * r], part[2 * r + 1]);
    float sum = 0.0;
    for (uint j = j0; j < j0 + N / 2; j++) {
        float e = exp(Ss[r * N + j] - m);
        sum += e;
        Ps[r * N + j] = float16_t(e);
    }
    barrier();
    part[tid] = sum;
    barrier();
    if (tid % 2 == 0) rowinv[r] = 1.0 / (part[tid] + part[tid + 1]);
    // O = P V into Ss (rows r, 16 columns, stride D).
    for (uint rb = gl_SubgroupID; rb < N / 16; rb += gl_NumSubgroups) {
        ACC o = ACC(0.0);
        for (uint kb = 0; kb < N / 16; kb++) {
            MATA a;
            coopMatLoad(a, Ps, rb * 16 * N + kb * 16, N, gl_CooperativeMatrixLayoutRowMajor);
            MATB b;
            coopMatLoad(b, Vs, kb * 16 * D, D, gl_CooperativeMatrixLayoutRowMajor);
            o = coopMatMulAdd(a, b, o);
        }
        coopMatStore(o, Ss, rb * 16 * D, D, gl_CooperativeMatrixLayoutRowMajor);
    }
    barrier();
    // Two invocations per token write 8 channels each.
    {
        uint i = tid / 2, d0 = (tid % 2) * 8;
        uint dst = token_of(i) * C + h * D + d0;
        F16x4Buf out4 = F16x4Buf(pc.out_);
        float inv = rowinv[i];
        for (uint d = 0; d < 8; d += 4) {
            uint s = i * D + d0 + d;
            out4.v[(dst + d) / 4] = f16vec4(vec4(Ss[s], Ss[s + 1], Ss[s + 2], Ss[s + 3]) * inv);
        }
    }
}
