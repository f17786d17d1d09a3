#version 460
// A block's MLP in one dispatch on cooperative matrices (docs/ENGINE.md, "The MLP in one
// dispatch"): x += fc2(SiLU(fc1(LN2(x)))) over ROWS tokens a workgroup of 2 ROWS invocations,
// with the specialisation and push constants of the linear shaders: IN = C (the level's width),
// OUT = the hidden width; x is the stream (read and written; f32, or f16 where IN_F16 says so),
// w and b fc1's, aux and aux_w
// fc2's weight and bias, gamma and beta norm2's. The LayerNorm's rows are staged as f16 in shared
// memory; each subgroup then takes 16-row blocks: the hidden chunk by chunk as accumulators
// started from fc1's bias, SiLU element by element, rounded to f16 into the block's own rows of
// shared memory (the hidden activations never reach the buffer), then fc2's products from there,
// started from fc2's bias and the stream's old values, stored back into the stream. The same
// arithmetic as fc1 and fc2 in linear_direct_coop.comp, one dispatch and 2 x hidden bytes a token
// fewer.
//
// With TS_MLP_W_SHARED=1 (the variant mlp_direct_w_coop) both weight matrices are copied into
// shared memory once a workgroup and every B operand is loaded from there, not from the buffer:
// level 0's MLP 0.216 -> 0.187 ms and level 1's 0.067 -> 0.056 at 4K on the H100 (forty-first
// session), 8 and 18 KiB more.
//
// With TS_MLP_PROJ=1 (the variants mlp_proj_coop and mlp_proj_w_coop) the dispatch takes the
// block's attention projection first: x += proj(o), with o the attention's output rows (f16, y),
// proj's weight (aux2, read as B straight from the buffer) and bias (aux_b). Each subgroup's
// 16-row block: accumulators started from proj's bias and the stream's old values, the products
// with o's rows read as matrices from the buffer; the new stream rows stay in those accumulators
// (at most four: C <= 64) until fc2 starts from them. For norm2, each value goes to shared memory
// as two f16 halves, hi = f16(x) into the block's rows of As and lo = f16(x - hi) into its rows of
// Hs (x to about 22 bits, the LayerNorm's statistics as from f32), and the block's row owners
// (two invocations a row) normalise them into As. The stream is read once and written once a
// block instead of twice, and one dispatch goes.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "linear_params.glsl"
#include "linear_epilogue.glsl"
layout(constant_id = TS_SPEC_ROWS) const int ROWS = TS_COOP_ROWS;
layout(local_size_x_id = TS_SPEC_THREADS) in;
const uint THREADS = gl_WorkGroupSize.x;
const uint C = IN, HID = OUT;
// fc1's IN_F16: the model keeps its residual streams in f16 (docs/ENGINE.md, "The streams in f16").
const bool STREAM16 = IN_F16 != 0;
// Row strides in shared memory (bindings.h, TS_SHARED_PAD).
const uint C_S = IN_S, HID_S = HID + TS_SHARED_PAD;

shared float16_t As[ROWS * C_S];
// The hidden activations of the workgroup's rows (each 16-row block written and read by the
// subgroup that owns it).
shared float16_t Hs[ROWS * HID_S];
// fc1's and fc2's biases in 16 equal rows.
shared float16_t B1[16 * HID];
shared float16_t B2[16 * C];
#ifndef TS_MLP_PROJ
#define TS_MLP_PROJ 0
#endif
#if TS_MLP_PROJ
// proj's bias in 16 equal rows.
shared float16_t Bp[16 * C];
#endif
#include "coop_direct.glsl"
#ifndef TS_MLP_W_SHARED
#define TS_MLP_W_SHARED 0
#endif
#if TS_MLP_W_SHARED
// fc1's weights [HID][C] and fc2's [C][HID], as in their buffers but for the rows' padding.
shared float16_t W1s[HID * C_S];
shared float16_t W2s[C * HID_S];
#endif

ACC start(uint n, uint width, bool second) {
    ACC16 b16;
    if (second) coopMatLoad(b16, B2, n, width, gl_CooperativeMatrixLayoutRowMajor);
    else coopMatLoad(b16, B1, n, width, gl_CooperativeMatrixLayoutRowMajor);
    return ACC(b16);
}

// fc1's outputs n..n+15 of block rb: SiLU, f16, into Hs.
void hidden_out(ACC c, uint rb, uint n) {
    for (int i = 0; i < c.length(); i++) c[i] = c[i] / (1.0 + exp(-c[i]));
    ACC16 h = ACC16(c);
    coopMatStore(h, Hs, rb * 16 * HID_S + n, HID_S, gl_CooperativeMatrixLayoutRowMajor);
}

#if TS_MLP_PROJ
// Block rb's new stream rows x (held in accumulators, columns n..n+15) as hi = f16(x) in As and
// lo = f16(x - hi) in Hs, the block's own rows of each.
void split_out(ACC x, uint rb, uint n) {
    ACC16 hi = ACC16(x);
    ACC16 lo = ACC16(x - ACC(hi));
    coopMatStore(hi, As, rb * 16 * C_S + n, C_S, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(lo, Hs, rb * 16 * HID_S + n, HID_S, gl_CooperativeMatrixLayoutRowMajor);
}

// norm2 of block rb's 16 rows from their halves (split_out) into As: invocations 2r and 2r + 1
// of the subgroup take half of row r each (layernorm_pair.glsl); with subgroups of fewer than 32
// invocations, rows in turn.
void norm_block(uint rb) {
    const uint H = C / 2;
    uint lane = gl_SubgroupInvocationID, i0 = (lane % 2) * H;
    for (uint r = lane / 2; r < 16; r += gl_SubgroupSize / 2) {
        uint a0 = (rb * 16 + r) * C_S + i0, h0 = (rb * 16 + r) * HID_S + i0;
        vec4 v[H / 4];
        for (uint j = 0; j < H / 4; j++) {
            for (int k = 0; k < 4; k++) v[j][k] = float(As[a0 + 4 * j + k]) + float(Hs[h0 + 4 * j + k]);
        }
        LN_PAIR_STAGE(v, H / 4, C, a0, i0)
    }
}
#endif

void main() {
    uint t0 = gl_WorkGroupID.x * ROWS;
    for (uint e = gl_LocalInvocationID.x; e < 16 * HID / 4; e += THREADS) {
        f16vec4 v = F16x4Buf(pc.b).v[e % (HID / 4)];
        for (int j = 0; j < 4; j++) B1[e * 4 + j] = v[j];
    }
    for (uint e = gl_LocalInvocationID.x; e < 16 * C / 4; e += THREADS) {
        f16vec4 v = F16x4Buf(pc.aux_w).v[e % (C / 4)];
        for (int j = 0; j < 4; j++) B2[e * 4 + j] = v[j];
    }
#if TS_MLP_W_SHARED
    COPY_WEIGHTS(W1s, pc.w, HID, C, C_S)
    COPY_WEIGHTS(W2s, pc.aux, C, HID, HID_S)
#endif
#if TS_MLP_PROJ
    for (uint e = gl_LocalInvocationID.x; e < 16 * C / 4; e += THREADS) {
        f16vec4 v = F16x4Buf(pc.aux_b).v[e % (C / 4)];
        for (int j = 0; j < 4; j++) Bp[e * 4 + j] = v[j];
    }
#else
    stage_rows(t0);
#endif
    barrier();
    F16Rows w1 = F16Rows(pc.w), w2 = F16Rows(pc.aux);
    for (uint rb = gl_SubgroupID; rb < ROWS / 16; rb += gl_NumSubgroups) {
        uint row0 = t0 + rb * 16;
        if (row0 >= pc.tokens) break;
#if TS_MLP_PROJ
        // proj: the new stream rows in x0..x3 (C <= 64), then norm2 of them into As.
        ACC x0 = ACC(0.0); ACC x1 = ACC(0.0); ACC x2 = ACC(0.0); ACC x3 = ACC(0.0);
        {
            ACC c0 = ACC(0.0); ACC c1 = ACC(0.0); ACC c2 = ACC(0.0); ACC c3 = ACC(0.0);
            const uint nb = C / 16;
#define STARTP_(c, n) { ACC16 b16_; coopMatLoad(b16_, Bp, n, C, gl_CooperativeMatrixLayoutRowMajor); c = add_old(ACC(b16_), pc.x, row0, n, C, STREAM16); }
            ACC4_EACH(STARTP_, 0, nb)
            F16Rows wp = F16Rows(pc.aux2);
            for (uint k = 0; k < C; k += 16) {
                MATA a;
                coopMatLoad(a, F16Rows(pc.y).v, row0 * C + k, C, gl_CooperativeMatrixLayoutRowMajor);
#define MULP_(c, n) c = mul_w(c, a, wp, n, k, C)
                ACC4_EACH(MULP_, 0, nb)
            }
#define SPLIT_(c, n) split_out(c, rb, n)
            ACC4_EACH(SPLIT_, 0, nb)
            x0 = c0; x1 = c1; x2 = c2; x3 = c3;
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        norm_block(rb);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
#endif
        // fc1: K = C from As, the hidden in chunks of up to COLS (at most 64).
        for (uint n0 = 0; n0 < HID; n0 += COLS) {
            uint nb = min(uint(COLS / 16), (HID - n0) / 16);
            ACC c0 = ACC(0.0); ACC c1 = ACC(0.0); ACC c2 = ACC(0.0); ACC c3 = ACC(0.0);
#define START1_(c, n) c = start(n, HID, false)
            ACC4_EACH(START1_, n0, nb)
            for (uint k = 0; k < C; k += 16) {
                MATA a;
                coopMatLoad(a, As, rb * 16 * C_S + k, C_S, gl_CooperativeMatrixLayoutRowMajor);
#if TS_MLP_W_SHARED
#define MUL1_(c, n) MUL_SHARED(c, a, W1s, n, k, C_S)
#else
#define MUL1_(c, n) c = mul_w(c, a, w1, n, k, C)
#endif
                ACC4_EACH(MUL1_, n0, nb)
            }
#define HIDDEN_(c, n) hidden_out(c, rb, n)
            ACC4_EACH(HIDDEN_, n0, nb)
        }
        // The block's hidden rows, written by this subgroup, are read back by it as matrices.
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        // fc2: K = the hidden from Hs, C outputs in chunks of up to COLS, added to the stream.
        for (uint n0 = 0; n0 < C; n0 += COLS) {
            uint nb = min(uint(COLS / 16), (C - n0) / 16);
            ACC c0 = ACC(0.0); ACC c1 = ACC(0.0); ACC c2 = ACC(0.0); ACC c3 = ACC(0.0);
#if TS_MLP_PROJ
            // The stream's values are proj's results, still in x0..x3 (storing them at once and
            // reading them back here, 106 -> 90 registers, was slower: level 0's 0.118 -> 0.135
            // ms at 4K on the H100, forty-fourth session).
#define START2_(c, n) { c = start(n, C, true); uint j_ = (n) / 16; if (j_ == 0) c = c + x0; else if (j_ == 1) c = c + x1; else if (j_ == 2) c = c + x2; else c = c + x3; }
#else
#define START2_(c, n) c = add_old(start(n, C, true), pc.x, row0, n, C, STREAM16)
#endif
            ACC4_EACH(START2_, n0, nb)
            for (uint k = 0; k < HID; k += 16) {
                MATA a;
                coopMatLoad(a, Hs, rb * 16 * HID_S + k, HID_S, gl_CooperativeMatrixLayoutRowMajor);
#if TS_MLP_W_SHARED
#define MUL2_(c, n) MUL_SHARED(c, a, W2s, n, k, HID_S)
#else
#define MUL2_(c, n) c = mul_w(c, a, w2, n, k, HID)
#endif
                ACC4_EACH(MUL2_, n0, nb)
            }
#define STORE_(c, n) store_stream(c, pc.x, row0 * C + (n), C, STREAM16)
            ACC4_EACH(STORE_, n0, nb)
        }
    }
}
