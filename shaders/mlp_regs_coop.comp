#version 460
// A block's MLP in one dispatch with its activations in registers (docs/ENGINE.md, "The MLP in
// registers"): the same specialisation and push constants, grid and result as
// mlp_direct_coop.comp, x += fc2(SiLU(fc1(LN2(x)))), and with TS_MLP_PROJ=1 the block's attention
// projection first (x += proj(o)). It reads the matrices by the layout the layout probe checks
// (vk-stages/src/layout.rs; NVIDIA's driver): a subgroup of 32, invocation l's element i of a
// 16 x 16 matrix at row l / 4 + 8 ((i >> 2) & 1), column 2 (l % 4) + (i & 1) + 8 ((i >> 1) & 1),
// alike for accumulators and A matrices. So each subgroup keeps its 16-row block's stream in
// accumulators, takes norm2's statistics from them (four invocations a row), writes the
// normalised rows straight into fc1's A matrices, and hands each hidden chunk, after SiLU, to
// fc2 as an A matrix element for element: no rows, hidden activations or biases in shared
// memory. fc2 accumulates into the stream's accumulators, stored once at the end.
// With TS_MLP_W_SHARED=1 both weight matrices are copied into shared memory once a workgroup.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "linear_params.glsl"
#include "coop_types.glsl"
layout(constant_id = TS_SPEC_ROWS) const int ROWS = TS_COOP_ROWS;
layout(local_size_x_id = TS_SPEC_THREADS) in;
const uint THREADS = gl_WorkGroupSize.x;
const uint C = IN, HID = OUT;
// fc1's IN_F16: the model keeps its residual streams in f16 (docs/ENGINE.md, "The streams in f16").
const bool STREAM16 = IN_F16 != 0;
// 16-column tiles of the stream: at most TS_MLP_REGS_TILES (level widths up to 96).
const uint NT = C / 16;
#ifndef TS_MLP_REGS_TILES
#define TS_MLP_REGS_TILES 6
#endif
// Hidden chunks of 16 in flight at once.
#ifndef TS_MLP_HG
#define TS_MLP_HG 2
#endif
#ifndef TS_MLP_PROJ
#define TS_MLP_PROJ 0
#endif
#ifndef TS_MLP_W_SHARED
#define TS_MLP_W_SHARED 0
#endif
#ifndef TS_MLP_W_HALVES
#define TS_MLP_W_HALVES 0
#endif
#if TS_MLP_W_HALVES
// TS_MLP_W_HALVES=1 (mlp_regs_wh_coop, mlp_proj_regs_wh_coop): the weights in shared memory a
// half of the hidden at a time (fc1's rows and fc2's columns of that half), for levels whose
// whole weights do not fit (level 2 of tessel-v12: 39 KiB a half). At 4K on the H100 level 2's
// proj and MLP 0.091 -> 0.050 ms, where fc1's weights alone in shared memory gave 0.078
// (forty-sixth session). Every subgroup takes one 16-row block and passes every barrier.
const uint HH = HID / 2, C_S = C + TS_SHARED_PAD, HH_S = HH + TS_SHARED_PAD;
shared float16_t W1s[HH * C_S];
shared float16_t W2s[C * HH_S];
#endif
#if TS_MLP_W_SHARED
const uint C_S = C + TS_SHARED_PAD, HID_S = HID + TS_SHARED_PAD;
// fc1's weights [HID][C] and fc2's [C][HID], as in their buffers but for the rows' padding.
shared float16_t W1s[HID * C_S];
shared float16_t W2s[C * HID_S];
#endif
#include "frag_rows.glsl"
#ifndef TS_MLP_HEAD
#define TS_MLP_HEAD 0
#endif
#if TS_MLP_HEAD && !TS_MLP_W_SHARED
#error "TS_MLP_HEAD copies the head's weights beside the MLP's (TS_MLP_W_SHARED)"
#endif
#if TS_MLP_HEAD
// TS_MLP_HEAD=1 (mlp_proj_head_regs_w_coop, the network's last block): the head follows the MLP
// in the same dispatch, from the new stream rows still in the accumulators, which are not
// stored (nothing reads them after the head). pc.head_pack holds the head's tensors as the host
// packs them (vk-stages/src/model.rs, head_pack): the per-pixel path's 16 x 16 block-diagonal
// matrix (pixel_head.weight^T twice, zero without the path), head_norm's weight and bias (f16),
// the head's bias with the per-pixel path's joined (f32), head.weight [128][C] (f16).
const uint HO = 16 * TS_HEAD_CHANNELS;
const uint HEAD_PACK_PM = 0, HEAD_PACK_GAMMA = 512, HEAD_PACK_BETA = 512 + 2 * C;
const uint HEAD_PACK_BIAS = 512 + 4 * C, HEAD_PACK_W = HEAD_PACK_BIAS + 4 * HO;
shared float16_t Hw[HO * (C + TS_SHARED_PAD)];
#endif
// Where fc1's and fc2's weights go into shared memory, the projection's do too (WP, rows WP_S
// apart), before the products that read them: at 4K on the H100 level 0's proj and MLP 0.073 ->
// 0.067 ms, level 2's 0.050 -> 0.045 (forty-sixth session). With the weights a half at a time
// they wait in the first half's fc1 rows (HID / 2 >= C), which the first half's copy overwrites
// only after a barrier.
#define TS_MLP_PROJ_W (TS_MLP_PROJ && (TS_MLP_W_SHARED || TS_MLP_W_HALVES))
#if TS_MLP_PROJ_W
#if TS_MLP_W_HALVES
#define WP W1s
#define WP_S C_S
#else
shared float16_t Wp[C * (C + TS_SHARED_PAD)];
#define WP Wp
#define WP_S (C + TS_SHARED_PAD)
#endif
#endif

// A vector of C or HID halves at v, element for element as in tile `tile`'s columns, added to c.
ACC add_columns(ACC c, uint64_t v, uint tile) {
    return frag_add_columns(c, v, 16 * tile);
}

// c + a x the fc1 (second: fc2) weights' output columns n..n+15 at inputs k..k+15.
ACC mul1(ACC c, MATA a, uint n, uint k) {
    MATB b;
#if TS_MLP_W_SHARED
    coopMatLoad(b, W1s, n * C_S + k, C_S, gl_CooperativeMatrixLayoutColumnMajor);
#else
    coopMatLoad(b, F16Rows(pc.w).v, n * C + k, C, gl_CooperativeMatrixLayoutColumnMajor);
#endif
    return coopMatMulAdd(a, b, c);
}
ACC mul2(ACC c, MATA a, uint n, uint k) {
    MATB b;
#if TS_MLP_W_SHARED
    coopMatLoad(b, W2s, n * HID_S + k, HID_S, gl_CooperativeMatrixLayoutColumnMajor);
#else
    coopMatLoad(b, F16Rows(pc.aux).v, n * HID + k, HID, gl_CooperativeMatrixLayoutColumnMajor);
#endif
    return coopMatMulAdd(a, b, c);
}

#if TS_MLP_W_HALVES
// Half hf of fc1's rows and of fc2's columns into W1s and W2s, TS_HALF_BATCH items of each an
// invocation at a time, their loads issued before their stores. One item of each at a time, each
// store waiting for its load: at 4K on the H100 level 2's proj and MLP 0.0378 and 0.0340 ms, four
// at a time 0.0356 and 0.0317, eight 0.0363 and 0.0323; the first half's fc2 columns copied at
// the start instead, beside the projection's weights, 0.0411 and 0.0372 (forty-eighth session).
#ifndef TS_HALF_BATCH
#define TS_HALF_BATCH 4
#endif
void copy_half(uint hf) {
    const uint N1 = HH * C / 4;
    for (uint e0 = gl_LocalInvocationID.x; e0 < N1; e0 += TS_HALF_BATCH * THREADS) {
        f16vec4 v[TS_HALF_BATCH], u[TS_HALF_BATCH];
        [[unroll]] for (uint i = 0; i < TS_HALF_BATCH; i++) {
            uint e = e0 + i * THREADS;
            if (e < N1) {
                v[i] = F16x4Buf(pc.w).v[hf * HH * C / 4 + e];
                uint n = (e * 4) / HH, kk = (e * 4) % HH;
                u[i] = F16x4Buf(pc.aux).v[(n * HID + hf * HH + kk) / 4];
            }
        }
        [[unroll]] for (uint i = 0; i < TS_HALF_BATCH; i++) {
            uint e = e0 + i * THREADS;
            if (e < N1) {
                uint o = (e * 4) / C * C_S + (e * 4) % C;
                for (int j = 0; j < 4; j++) W1s[o + j] = v[i][j];
                uint n = (e * 4) / HH, kk = (e * 4) % HH;
                for (int j = 0; j < 4; j++) W2s[n * HH_S + kk + j] = u[i][j];
            }
        }
    }
}

// mul1 and mul2 on the half in shared memory: n and k within it.
ACC mul1h(ACC c, MATA a, uint n, uint k) {
    MATB b;
    coopMatLoad(b, W1s, n * C_S + k, C_S, gl_CooperativeMatrixLayoutColumnMajor);
    return coopMatMulAdd(a, b, c);
}
ACC mul2h(ACC c, MATA a, uint n, uint k) {
    MATB b;
    coopMatLoad(b, W2s, n * HH_S + k, HH_S, gl_CooperativeMatrixLayoutColumnMajor);
    return coopMatMulAdd(a, b, c);
}
#endif

void main() {
    uint t0 = gl_WorkGroupID.x * ROWS;
#if TS_MLP_PROJ_W
    COPY_WEIGHTS(WP, pc.aux2, C, C, WP_S)
#if !TS_MLP_W_SHARED
    barrier();
#endif
#endif
#if TS_MLP_W_SHARED
    COPY_WEIGHTS(W1s, pc.w, HID, C, C_S)
    COPY_WEIGHTS(W2s, pc.aux, C, HID, HID_S)
#if TS_MLP_HEAD
    COPY_WEIGHTS(Hw, pc.head_pack + HEAD_PACK_W, HO, C, C + TS_SHARED_PAD)
#endif
    barrier();
#endif
#if TS_MLP_W_HALVES
    {
        // Subgroups of 32: one 16-row block each. A block past the tokens works on the
        // workgroup's first (always in) and stores nothing, so that every barrier is passed.
        uint rb = gl_SubgroupID;
        bool live = t0 + rb * 16 < pc.tokens;
        uint row0 = live ? t0 + rb * 16 : t0;
#else
    for (uint rb = gl_SubgroupID; rb < ROWS / 16; rb += gl_NumSubgroups) {
        uint row0 = t0 + rb * 16;
        if (row0 >= pc.tokens) break;
#endif
        // The block's stream rows.
        ACC x[TS_MLP_REGS_TILES];
        [[unroll]] for (uint j = 0; j < NT; j++) {
            x[j] = load_stream(pc.x, row0 * C + j * 16, C, STREAM16);
        }
#if TS_MLP_PROJ
        // x += proj(o) + proj's bias, o the attention's output rows (f16).
        [[unroll]] for (uint j = 0; j < NT; j++) x[j] = add_columns(x[j], pc.aux_b, j);
        [[unroll]] for (uint k = 0; k < NT; k++) {
            MATA a;
            coopMatLoad(a, F16Rows(pc.y).v, row0 * C + k * 16, C, gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (uint j = 0; j < NT; j++) {
                MATB b;
#if TS_MLP_PROJ_W
                coopMatLoad(b, WP, j * 16 * WP_S + k * 16, WP_S, gl_CooperativeMatrixLayoutColumnMajor);
#else
                coopMatLoad(b, F16Rows(pc.aux2).v, j * 16 * C + k * 16, C, gl_CooperativeMatrixLayoutColumnMajor);
#endif
                x[j] = coopMatMulAdd(a, b, x[j]);
            }
        }
#endif
        // norm2 from the accumulators straight into fc1's A matrices.
        MATA a[TS_MLP_REGS_TILES];
#define X_AT(j, i) x[j][i]
        FRAG_LAYERNORM(X_AT, NT, C, pc.gamma, pc.beta, a)
        // fc2 starts from the stream and its bias.
        [[unroll]] for (uint j = 0; j < NT; j++) x[j] = add_columns(x[j], pc.aux_w, j);
        // The hidden, TS_MLP_HG chunks of 16 at a time: fc1 from fc1's bias, SiLU, rounded to
        // f16 into an A matrix, fc2's products into the stream's accumulators.
#if TS_MLP_W_HALVES
        for (uint hf = 0; hf < 2; hf++) {
            barrier();
            copy_half(hf);
            barrier();
            for (uint hl = 0; hl < HH; hl += 16 * TS_MLP_HG) {
                uint h0 = hf * HH + hl;
                ACC f[TS_MLP_HG];
                [[unroll]] for (uint g = 0; g < TS_MLP_HG; g++) {
                    f[g] = add_columns(ACC(0.0), pc.b, h0 / 16 + g);
                    [[unroll]] for (uint k = 0; k < NT; k++) f[g] = mul1h(f[g], a[k], hl + 16 * g, 16 * k);
                }
                [[unroll]] for (uint g = 0; g < TS_MLP_HG; g++) {
                    MATA h;
                    [[unroll]] for (int i = 0; i < 8; i++) {
                        float v = f[g][i];
                        h[i] = float16_t(v / (1.0 + exp(-v)));
                    }
                    [[unroll]] for (uint j = 0; j < NT; j++) x[j] = mul2h(x[j], h, 16 * j, hl + 16 * g);
                }
            }
        }
        if (live) {
            [[unroll]] for (uint j = 0; j < NT; j++) {
                store_stream(x[j], pc.x, row0 * C + j * 16, C, STREAM16);
            }
        }
    }
}
#else
        for (uint h0 = 0; h0 < HID; h0 += 16 * TS_MLP_HG) {
            ACC f[TS_MLP_HG];
            [[unroll]] for (uint g = 0; g < TS_MLP_HG; g++) {
                f[g] = add_columns(ACC(0.0), pc.b, h0 / 16 + g);
                [[unroll]] for (uint k = 0; k < NT; k++) f[g] = mul1(f[g], a[k], h0 + 16 * g, 16 * k);
            }
            [[unroll]] for (uint g = 0; g < TS_MLP_HG; g++) {
                MATA h;
                [[unroll]] for (int i = 0; i < 8; i++) {
                    float v = f[g][i];
                    h[i] = float16_t(v / (1.0 + exp(-v)));
                }
                [[unroll]] for (uint j = 0; j < NT; j++) x[j] = mul2(x[j], h, 16 * j, h0 + 16 * g);
            }
        }
#if TS_MLP_HEAD
        // The head: head_norm from the accumulators into A matrices, then 16 head channels (two
        // pixels) at a time: the bias, the products with head.weight, the two pixels'
        // embeddings (token channels n .. n + 15, P = 8) times the block-diagonal matrix, stored
        // as f16. Every chunk's embeddings are asked for first, so that their loads overlap
        // head_norm and the products (121 registers against 93, still two workgroups an SM):
        // the dispatch 0.188 -> 0.161 ms at 4K on the H100, where asking before the MLP's hidden
        // loop gave 0.164 (forty-seventh session, call 8).
        MATA emb[HO / 16];
        if (pc.head_tokens != 0ul) {
            [[unroll]] for (uint q = 0; q < HO / 16; q++) coopMatLoad(emb[q], F16Rows(pc.head_tokens).v, row0 * 16 * P + 16 * q, 16 * P, gl_CooperativeMatrixLayoutRowMajor);
        }
        FRAG_LAYERNORM(X_AT, NT, C, pc.head_pack + HEAD_PACK_GAMMA, pc.head_pack + HEAD_PACK_BETA, a)
        MATB pm;
        coopMatLoad(pm, F16Rows(pc.head_pack).v, HEAD_PACK_PM / 2, 16, gl_CooperativeMatrixLayoutRowMajor);
        const uint HW_S = C + TS_SHARED_PAD;
        [[unroll]] for (uint n = 0; n < HO; n += 16) {
            ACC c = frag_add_columns32(ACC(0.0), pc.head_pack + HEAD_PACK_BIAS, n);
            [[unroll]] for (uint k = 0; k < NT; k++) {
                MATB b;
                coopMatLoad(b, Hw, n * HW_S + 16 * k, HW_S, gl_CooperativeMatrixLayoutColumnMajor);
                c = coopMatMulAdd(a[k], b, c);
            }
            if (pc.head_tokens != 0ul) c = coopMatMulAdd(emb[n / 16], pm, c);
            ACC16 h = ACC16(c);
            coopMatStore(h, F16Rows(pc.head_out).v, row0 * HO + n, HO, gl_CooperativeMatrixLayoutRowMajor);
        }
#else
        [[unroll]] for (uint j = 0; j < NT; j++) {
            store_stream(x[j], pc.x, row0 * C + j * 16, C, STREAM16);
        }
#endif
    }
}
#endif
