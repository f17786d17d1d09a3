#version 460
// One whole transformer block for one window on cooperative matrices (docs/NETWORK.md §4, §8):
// the same push constants and results as block_fused.comp. 128 invocations in four subgroups of
// 32; subgroup s owns the window's rows 16s .. 16s+15 for every product, and invocations 2r and
// 2r+1 own row r for the element-wise work, each holding the f32 residual of the columns
// c = 2i + half in registers from the load to the store. Only a head's keys and values cross
// subgroups (workgroup barriers); everything else is synchronised within a subgroup.
//
// Per head: q, k, v of the subgroup's rows (16x16 products over C), bias and rounding by the
// row owners; scores q k^T into F, softmax by the row owners (f32, the bias table read in
// place) into P (f16); O = P V, rounded to f16, and proj accumulated per subgroup over the heads
// in up to 8 accumulators (one per 16 output columns). The MLP runs in chunks of 32 hidden
// units: fc1 into F, bias and SiLU by the row owners into P, fc2 accumulated over the chunks.
// Shared memory: LN rows C x 64 f16, q/k/v/o 4 x 64 x 16 f16, F 64 x 64 f32, P 64 x 64 f16:
// 44 KiB at C = 96. Products are f16 x f16 -> f32 like the unfused cooperative-matrix path.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 128) in;
layout(constant_id = 0) const int C = 32;
layout(constant_id = 1) const int M = 64;
layout(push_constant) uniform PC {
    F32Buf x;      // the level's residual rows [tokens, C], read and written in place
    F16Buf n1g; F16Buf n1b;
    F16Buf wqkv; F16Buf bqkv;   // [3C, C], [3C]
    F16Buf rpb;                 // [C/16, 225]
    F16Buf wp; F16Buf bp;       // [C, C], [C]
    F16Buf n2g; F16Buf n2b;
    F16Buf w1; F16Buf b1;       // [M, C], [M]
    F16Buf w2; F16Buf b2;       // [C, M], [C]
    uint width; uint height; uint shift_x; uint shift_y;
} pc;

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define ACC16 coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define MATA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MATB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
const int HALF = C / 2;
const int HID_CHUNK = 32;

shared float16_t As[64 * C];   // LayerNorm output rows (A operands)
shared float16_t Qs[64 * 16];  // one head's q (scaled by 1/4), k, v, and attention output
shared float16_t Ks[64 * 16];
shared float16_t Vs[64 * 16];
shared float16_t Os[64 * 16];
shared float Fs[64 * 64];      // f32 results for the row owners (stride 64)
shared float16_t Ps[64 * 64];  // softmax weights (stride 64), MLP hidden chunks (stride 32)

uint sub;   // this subgroup's row block
uint row;   // this invocation's row
uint half_; // and its column parity
float xr[HALF];

void sync_subgroup() {
    subgroupMemoryBarrierShared();
    subgroupBarrier();
}

// LayerNorm of this invocation's row (its half of the columns, the other half from its
// neighbour) into As.
void layer_norm(F16Buf g, F16Buf b) {
    float s = 0.0;
    for (int i = 0; i < HALF; i++) s += xr[i];
    s += subgroupShuffleXor(s, 1);
    float mean = s / float(C);
    float q = 0.0;
    for (int i = 0; i < HALF; i++) { float d = xr[i] - mean; q += d * d; }
    q += subgroupShuffleXor(q, 1);
    float inv = 1.0 / sqrt(q / float(C) + 1e-5);
    for (int i = 0; i < HALF; i++) {
        uint c = 2 * i + half_;
        As[row * C + c] = float16_t((xr[i] - mean) * inv * float(g.v[c]) + float(b.v[c]));
    }
    sync_subgroup();
}

// acc += As[rows of this subgroup] x W[n0 .. n0+16, 0 .. C]^T, W [., C] row-major in memory.
ACC product_rows(ACC acc, F16Buf w, uint n0) {
    for (int k = 0; k < C; k += 16) {
        MATA a;
        coopMatLoad(a, As, sub * 16 * C + k, C, gl_CooperativeMatrixLayoutRowMajor);
        MATB bm;
        coopMatLoad(bm, w.v, n0 * C + k, C, gl_CooperativeMatrixLayoutColumnMajor);
        acc = coopMatMulAdd(a, bm, acc);
    }
    return acc;
}

// Output tile j (columns 16j..16j+15) of o x W[., k0 .. k0+16]^T added to acc: W [C, ld].
ACC product_tile(ACC acc, MATA o, F16Buf w, uint j, uint ld, uint k0) {
    MATB bm;
    coopMatLoad(bm, w.v, j * 16 * ld + k0, ld, gl_CooperativeMatrixLayoutColumnMajor);
    return coopMatMulAdd(o, bm, acc);
}

// The subgroup's accumulators of up to 8 output tiles into F (columns 16j of this round of
// 64), then the row owners add F (and the bias) into their residual columns of the round.
void add_tiles(ACC t0, ACC t1, ACC t2, ACC t3, ACC t4, ACC t5, ACC t6, ACC t7, F16Buf bias) {
    for (int round = 0; round * 64 < C; round++) {
        uint base = sub * 16 * 64;
        if (round == 0) {
            coopMatStore(t0, Fs, base, 64, gl_CooperativeMatrixLayoutRowMajor);
            if (C > 16) coopMatStore(t1, Fs, base + 16, 64, gl_CooperativeMatrixLayoutRowMajor);
            if (C > 32) coopMatStore(t2, Fs, base + 32, 64, gl_CooperativeMatrixLayoutRowMajor);
            if (C > 48) coopMatStore(t3, Fs, base + 48, 64, gl_CooperativeMatrixLayoutRowMajor);
        } else {
            if (C > 64) coopMatStore(t4, Fs, base, 64, gl_CooperativeMatrixLayoutRowMajor);
            if (C > 80) coopMatStore(t5, Fs, base + 16, 64, gl_CooperativeMatrixLayoutRowMajor);
            if (C > 96) coopMatStore(t6, Fs, base + 32, 64, gl_CooperativeMatrixLayoutRowMajor);
            if (C > 112) coopMatStore(t7, Fs, base + 48, 64, gl_CooperativeMatrixLayoutRowMajor);
        }
        sync_subgroup();
        for (int i = round * 32; i < min(HALF, round * 32 + 32); i++) {
            uint c = 2 * i + half_;
            xr[i] += Fs[row * 64 + c - round * 64] + float(bias.v[c]);
        }
        sync_subgroup();
    }
}

void main() {
    // Row ownership follows the subgroups (the host takes this shader only with subgroups of
    // 32: four per workgroup), so a row's products and its element-wise work share a subgroup.
    sub = gl_SubgroupID;
    row = sub * 16 + gl_SubgroupInvocationID / 2;
    half_ = gl_SubgroupInvocationID % 2;
    uint ix = row % TS_WINDOW, iy = row / TS_WINDOW;
    uint t = window_token(gl_WorkGroupID.x, row, pc.width, pc.height, pc.shift_x, pc.shift_y);
    for (int i = 0; i < HALF; i++) xr[i] = pc.x.v[t * C + 2 * i + half_];

    // Attention.
    layer_norm(pc.n1g, pc.n1b);
    ACC p0 = ACC(0.0);
    ACC p1 = ACC(0.0);
    ACC p2 = ACC(0.0);
    ACC p3 = ACC(0.0);
    ACC p4 = ACC(0.0);
    ACC p5 = ACC(0.0);
    ACC p6 = ACC(0.0);
    ACC p7 = ACC(0.0);
    for (int h = 0; h < C / 16; h++) {
        ACC q = product_rows(ACC(0.0), pc.wqkv, h * 16);
        ACC k = product_rows(ACC(0.0), pc.wqkv, C + h * 16);
        ACC v = product_rows(ACC(0.0), pc.wqkv, 2 * C + h * 16);
        uint base = sub * 16 * 64;
        coopMatStore(q, Fs, base, 64, gl_CooperativeMatrixLayoutRowMajor);
        coopMatStore(k, Fs, base + 16, 64, gl_CooperativeMatrixLayoutRowMajor);
        coopMatStore(v, Fs, base + 32, 64, gl_CooperativeMatrixLayoutRowMajor);
        sync_subgroup();
        // Bias and rounding like the unfused qkv output; q also takes the 1/4 (exact).
        for (int i = 0; i < 24; i++) {
            uint c = 2 * i + half_, part = c / 16, d = c % 16;
            float val = float(float16_t(Fs[row * 64 + c] + float(pc.bqkv.v[part * C + h * 16 + d])));
            if (part == 0) Qs[row * 16 + d] = float16_t(val * 0.25);
            else if (part == 1) Ks[row * 16 + d] = float16_t(val);
            else Vs[row * 16 + d] = float16_t(val);
        }
        barrier();
        // Scores of the subgroup's 16 queries against the 64 keys.
        MATA qa;
        coopMatLoad(qa, Qs, sub * 16 * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
        for (int j = 0; j < 4; j++) {
            MATB kb;
            coopMatLoad(kb, Ks, j * 16 * 16, 16, gl_CooperativeMatrixLayoutColumnMajor);
            ACC s = coopMatMulAdd(qa, kb, ACC(0.0));
            coopMatStore(s, Fs, base + j * 16, 64, gl_CooperativeMatrixLayoutRowMajor);
        }
        sync_subgroup();
        // Softmax of this row over its 32 keys and its neighbour's.
        float m = -3.4e38;
        for (int i = 0; i < 32; i++) {
            uint j = 2 * i + half_, jx = j % TS_WINDOW, jy = j / TS_WINDOW;
            float a = Fs[row * 64 + j] + float(pc.rpb.v[h * TS_RPB_ENTRIES + (iy - jy + 7) * 15 + (ix - jx + 7)]);
            Fs[row * 64 + j] = a;
            m = max(m, a);
        }
        m = max(m, subgroupShuffleXor(m, 1));
        float sum = 0.0;
        for (int i = 0; i < 32; i++) {
            uint j = 2 * i + half_;
            float e = exp(Fs[row * 64 + j] - m);
            Fs[row * 64 + j] = e;
            sum += e;
        }
        sum += subgroupShuffleXor(sum, 1);
        float inv = 1.0 / sum;
        for (int i = 0; i < 32; i++) {
            uint j = 2 * i + half_;
            Ps[row * 64 + j] = float16_t(Fs[row * 64 + j] * inv);
        }
        sync_subgroup();
        // O = P V, rounded to f16 like the unfused attention output, then its share of proj.
        ACC o = ACC(0.0);
        for (int j = 0; j < 4; j++) {
            MATA pa;
            coopMatLoad(pa, Ps, sub * 16 * 64 + j * 16, 64, gl_CooperativeMatrixLayoutRowMajor);
            MATB vb;
            coopMatLoad(vb, Vs, j * 16 * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
            o = coopMatMulAdd(pa, vb, o);
        }
        ACC16 o16 = ACC16(o);
        coopMatStore(o16, Os, sub * 16 * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
        sync_subgroup();
        MATA oa;
        coopMatLoad(oa, Os, sub * 16 * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
        p0 = product_tile(p0, oa, pc.wp, 0, C, h * 16);
        if (C > 16) p1 = product_tile(p1, oa, pc.wp, 1, C, h * 16);
        if (C > 32) p2 = product_tile(p2, oa, pc.wp, 2, C, h * 16);
        if (C > 48) p3 = product_tile(p3, oa, pc.wp, 3, C, h * 16);
        if (C > 64) p4 = product_tile(p4, oa, pc.wp, 4, C, h * 16);
        if (C > 80) p5 = product_tile(p5, oa, pc.wp, 5, C, h * 16);
        if (C > 96) p6 = product_tile(p6, oa, pc.wp, 6, C, h * 16);
        if (C > 112) p7 = product_tile(p7, oa, pc.wp, 7, C, h * 16);
        // Every subgroup is done with this head's keys and values before the next overwrites them.
        barrier();
    }
    add_tiles(p0, p1, p2, p3, p4, p5, p6, p7, pc.bp);

    // MLP.
    layer_norm(pc.n2g, pc.n2b);
    ACC f0 = ACC(0.0);
    ACC f1 = ACC(0.0);
    ACC f2 = ACC(0.0);
    ACC f3 = ACC(0.0);
    ACC f4 = ACC(0.0);
    ACC f5 = ACC(0.0);
    ACC f6 = ACC(0.0);
    ACC f7 = ACC(0.0);
    for (int c0 = 0; c0 < M; c0 += HID_CHUNK) {
        uint base = sub * 16 * 64;
        ACC h0 = product_rows(ACC(0.0), pc.w1, c0);
        ACC h1 = product_rows(ACC(0.0), pc.w1, c0 + 16);
        coopMatStore(h0, Fs, base, 64, gl_CooperativeMatrixLayoutRowMajor);
        coopMatStore(h1, Fs, base + 16, 64, gl_CooperativeMatrixLayoutRowMajor);
        sync_subgroup();
        // Bias, SiLU and rounding like the unfused hidden buffer.
        for (int i = 0; i < HID_CHUNK / 2; i++) {
            uint c = 2 * i + half_;
            Ps[row * HID_CHUNK + c] = float16_t(silu(Fs[row * 64 + c] + float(pc.b1.v[c0 + c])));
        }
        sync_subgroup();
        for (int kk = 0; kk < HID_CHUNK; kk += 16) {
            MATA ha;
            coopMatLoad(ha, Ps, sub * 16 * HID_CHUNK + kk, HID_CHUNK, gl_CooperativeMatrixLayoutRowMajor);
            uint k0 = c0 + kk;
            f0 = product_tile(f0, ha, pc.w2, 0, M, k0);
            if (C > 16) f1 = product_tile(f1, ha, pc.w2, 1, M, k0);
            if (C > 32) f2 = product_tile(f2, ha, pc.w2, 2, M, k0);
            if (C > 48) f3 = product_tile(f3, ha, pc.w2, 3, M, k0);
            if (C > 64) f4 = product_tile(f4, ha, pc.w2, 4, M, k0);
            if (C > 80) f5 = product_tile(f5, ha, pc.w2, 5, M, k0);
            if (C > 96) f6 = product_tile(f6, ha, pc.w2, 6, M, k0);
            if (C > 112) f7 = product_tile(f7, ha, pc.w2, 7, M, k0);
        }
        sync_subgroup();
    }
    add_tiles(f0, f1, f2, f3, f4, f5, f6, f7, pc.b2);
    for (int i = 0; i < HALF; i++) pc.x.v[t * C + 2 * i + half_] = xr[i];
}
