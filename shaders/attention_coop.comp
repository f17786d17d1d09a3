#version 460
// Window attention on cooperative matrices (docs/NETWORK.md §4): the same push constants, grid
// and result as attention.comp, one workgroup per (window, head) of 128 invocations. The head's
// q (scaled by 1/4, exact in f16), k and v go to shared memory as f16; each subgroup takes
// 16-row blocks of queries: scores S = q k^T as four 16x16x16 products (f32 accumulation) into F
// (f16 by default, f32 in the *_f32_coop variants), the softmax by the block's row owners
// (eight rows at a time, gl_SubgroupSize / 8 invocations a row: bias, maximum, exponentials and
// their sum in f32, the exponentials rounded to f16 into P), then O = P V (f32 accumulation)
// through shared memory (as F), divided by the sum and rounded to f16 into the output rows.
//
// With TS_QKV_IN=1 (the variant attention_qkv_coop) the workgroup computes its head's q, k and v
// itself instead of reading them from the qkv layer's output: the window's 64 rows of the f32
// stream go through LayerNorm (norm1) into shared memory as f16, and each subgroup's 16-row block
// takes three 16x16 accumulators started from qkv's bias, with B straight from qkv's weights,
// rounded to f16 (q then scaled) and stored as matrices into Qs, Ks and Vs. The same roundings as
// the qkv layer followed by this shader; the qkv activations never reach memory.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "layernorm_pair.glsl"
layout(local_size_x = 128) in;
layout(constant_id = 0) const int C = 32;
// 1: the residual stream that TS_QKV_IN reads is f16 (docs/ENGINE.md, "The streams in f16").
layout(constant_id = 1) const int STREAM16 = 0;
#ifndef TS_QKV_IN
#define TS_QKV_IN 0
#endif
#ifndef TS_SOFTMAX_REGS
#define TS_SOFTMAX_REGS 0
#endif
// With TS_SOFTMAX_REGS and TS_QKV_IN, norm1 runs in registers too (ln_regs), not staged: level
// 0's attention 0.143 -> 0.120 ms at 4K on the H100 (forty-fifth session).
#define TS_LN_REGS (TS_SOFTMAX_REGS && TS_QKV_IN)
// Tiles of 16 channels ln_regs may hold: level widths up to 96.
#define TS_LN_TILES 6
// TS_QKV_AHEAD=1 (attention_qkv_window_regs_ahead_coop; with TS_QKV_IN=2 and TS_SOFTMAX_REGS):
// qkv's weights and bias tables reach shared memory through registers, every load issued before
// the first store, and ahead of the products that need them. At levels of up to TS_AHEAD_HEADS
// heads (bindings.h) every head's at once, at the start, beside the stream rows' loads, with k and v
// alternating between two buffers, so that a head costs one workgroup barrier; at wider levels
// one head's at a time, the next head's loads in flight while this head runs. At 4K on the H100
// the shaders' network 0.996 -> 0.961 ms: level 0's attention 0.0775 -> 0.0748, level 1's 0.0402
// -> 0.0392 and 0.0346 -> 0.0324, level 2's 0.0439 -> 0.0332 and 0.0375 -> 0.0260 (forty-eighth
// session). Without it each head's copy waits for its loads one step at a time.
#ifndef TS_QKV_AHEAD
#define TS_QKV_AHEAD 0
#endif
#if TS_QKV_AHEAD && !(TS_LN_REGS && TS_QKV_IN == 2)
#error "TS_QKV_AHEAD: with TS_QKV_IN=2 and TS_SOFTMAX_REGS=1"
#endif
layout(push_constant) uniform PC {
    uint64_t in_; // [tokens, 3C] f16: q, k, v; TS_QKV_IN: the stream [tokens, C] (f32; STREAM16 f16)
    F16Buf out_;  // [tokens, C]
    F16Buf rpb;   // [heads, 225]
    uint width;   // level grid, tokens
    uint height;
    uint shift_x;
    uint shift_y;
    // TS_QKV_IN: qkv.weight [3C, C], qkv.bias [3C], norm1.weight and norm1.bias [C].
    uint64_t w;
    uint64_t b;
    uint64_t gamma;
    uint64_t beta;
} pc;

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define MATA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MATB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
const uint D = TS_HEAD_DIM;
const uint N = TS_WINDOW_TOKENS;
// Row strides in shared memory, padded (bindings.h, TS_SHARED_PAD): q, k, v and each block's
// output; the scores and softmax weights; the staged LayerNorm rows.
const uint DS = D + TS_SHARED_PAD, NS = N + TS_SHARED_PAD, CS = C + TS_SHARED_PAD;
// Heads a workgroup takes (TS_QKV_IN=2: all of its window's), and how many of them keep their qkv
// weights and bias table in shared memory at once (TS_QKV_AHEAD), with k and v in two buffers then.
const uint HW = TS_QKV_IN == 2 ? uint(C) / D : 1;
const uint NWH = TS_QKV_AHEAD != 0 && HW <= TS_AHEAD_HEADS ? HW : 1;
const uint NKV = NWH > 1 ? 2 : 1;
// The bias table's entries padded to 16 bytes.
const uint RPBP = (TS_RPB_ENTRIES + 3) / 4 * 4;

#if TS_SOFTMAX_REGS && TS_QKV_IN
shared float16_t Qs[8];       // q stays in its subgroup's registers
#else
shared float16_t Qs[N * DS];  // q / 4
#endif
shared float16_t Ks[N * DS * NKV];
shared float16_t Vs[N * DS * NKV];
// The scores, and afterwards the outputs, rounded to f16 in shared memory: 8 KiB a workgroup
// fewer, level 0's attention 0.289 -> 0.276 ms at 4K on the H100 (forty-second session). The
// variants *_f32_coop (TS_SCORES_F16=0, TESSEL_VK_ATTENTION_SCORES=32) keep them in f32.
#ifndef TS_SCORES_F16
#define TS_SCORES_F16 1
#endif
#if TS_SCORES_F16
#define FS_T float16_t
#define TO_FS(m) coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(m)
#else
#define FS_T float
#define TO_FS(m) (m)
#endif
// TS_SOFTMAX_REGS=1 (the *_regs_coop variants): the softmax in registers, where the device's
// matrices lay their elements out as attend_regs() reads them (vk-stages' layout probe): no
// scores, weights or outputs in shared memory, and with TS_QKV_IN no q either.
#if TS_SOFTMAX_REGS
#include "frag_rows.glsl"
shared FS_T Fs[8];
shared float16_t Ps[8];
#else
shared FS_T Fs[N * NS];       // scores (stride NS); afterwards each row block's output (stride DS)
shared float16_t Ps[N * NS];  // softmax weights (stride NS)
#endif
shared uint toks[N];         // each window position's token
// Every array is a multiple of 16 bytes (the bias table padded to 228 entries), so that whatever
// order the driver lays them out in, each matrix the products load starts 16-byte aligned: with
// the 900-byte table unpadded the H200 loaded misplaced matrices (the head 15 to 24 dB against
// the CPU reference).
shared float bias[RPBP * NWH];
#if TS_QKV_IN
// The window's LayerNorm rows (f16): up to 64 channels in Ps, whose softmax weights are written
// only after the barrier that ends every subgroup's q, k, v products (the workgroup's shared
// memory stays within 33 KiB, occupancy as without them), else in As. qkv's bias for this head's
// q, k and v in 16 equal rows.
// TS_QKV_IN=2 (attention_qkv_window_coop): one workgroup takes every head of its window, the rows
// staged once for all of them; they stay in As while each head's softmax weights come and go.
#if TS_SOFTMAX_REGS && TS_QKV_IN == 2
// (The register variants stage nothing, norm1 being in registers: stage_window is not called.)
const bool IN_PS = false;
#else
const bool IN_PS = C <= N && HW == 1;
#endif
#if TS_LN_REGS
// Each head's rows of qkv's weights (its q, k and v: 3 D rows of C, padded), copied into shared
// memory before its products, which read B from there instead of the buffer: at 4K on the H100
// level 0's attention 0.107 -> 0.082 ms, level 2's 0.067 -> 0.046 (forty-sixth session).
const uint WS = C + TS_SHARED_PAD;
shared float16_t Wq[3 * D * WS * NWH];
shared float16_t As[8];
shared float16_t Bs[8];
#else
shared float16_t As[IN_PS ? 8 : N * CS];
shared float16_t Bs[16 * 3 * HW * D];
#endif
layout(buffer_reference, std430, buffer_reference_align = 16) restrict buffer F16Rows { float16_t v[]; };

// Window position r's stream row through norm1 into As: invocations 2r and 2r + 1 (adjacent in
// their subgroup) take half of it each (layernorm_pair.glsl).
void stage_window(uint lid, uint h) {
    const uint HALF = C / 2;
    uint r = lid / 2, i0 = (lid % 2) * HALF;
    uint t = window_token(gl_WorkGroupID.x, r, pc.width, pc.height, pc.shift_x, pc.shift_y);
    if (lid % 2 == 0) toks[r] = t;
    vec4 v[HALF / 4];
    for (uint j = 0; j < HALF / 4; j++) {
        uint q = (t * C + i0) / 4 + j;
        v[j] = STREAM16 != 0 ? vec4(F16x4Buf(pc.in_).v[q]) : Vec4Buf(pc.in_).v[q];
    }
    float mean, inv;
    LN_PAIR_STATS(v, HALF / 4, C, mean, inv)
    for (uint j = 0; j < HALF / 4; j++) {
        uint i = i0 + 4 * j;
        vec4 a = (v[j] - mean) * inv * vec4(F16x4Buf(pc.gamma).v[i / 4]) + vec4(F16x4Buf(pc.beta).v[i / 4]);
        for (int k = 0; k < 4; k++) {
            if (IN_PS) Ps[r * CS + i + k] = float16_t(a[k]);
            else As[r * CS + i + k] = float16_t(a[k]);
        }
    }
    // qkv's bias for heads h .. h + HW - 1: column j of the 16 rows is part j / (HW D) (q, k, v)
    // of channel h D + j % (HW D).
    for (uint e = lid; e < 16 * 3 * HW * D; e += gl_WorkGroupSize.x) {
        uint j = e % (3 * HW * D);
        Bs[e] = F16Buf(pc.b).v[(j / (HW * D)) * C + h * D + j % (HW * D)];
    }
}

// One of q, k, v (part 0, 1, 2) of block rb's 16 rows for head h (the workgroup's hw-th): the
// bias, then K = C products with B read as column-major matrices from qkv's weights ([3C, C]),
// rounded to f16.
coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> qkv_part(uint rb, uint h, uint hw, uint part) {
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> b16;
    coopMatLoad(b16, Bs, (part * HW + hw) * D, 3 * HW * D, gl_CooperativeMatrixLayoutRowMajor);
    ACC c = ACC(b16);
    F16Rows w = F16Rows(pc.w);
    for (uint k = 0; k < C; k += 16) {
        MATA a;
        if (IN_PS) coopMatLoad(a, Ps, rb * 16 * CS + k, CS, gl_CooperativeMatrixLayoutRowMajor);
        else coopMatLoad(a, As, rb * 16 * CS + k, CS, gl_CooperativeMatrixLayoutRowMajor);
        MATB bm;
        coopMatLoad(bm, w.v, (part * C + h * D) * C + k, C, gl_CooperativeMatrixLayoutColumnMajor);
        c = coopMatMulAdd(a, bm, c);
    }
    return coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(c);
}
#endif

void sync_subgroup() {
    subgroupMemoryBarrierShared();
    subgroupBarrier();
}

// Rows of a 16-row block whose softmax runs at once: 8 by default, the block in two passes, each
// row owned by a quarter of a subgroup of 32 (an eighth of one of 64), so that an invocation
// holds 16 scores at most: registers 86 -> 75 at level 0, 83 -> 75 at level 2, and level 0's
// attention 0.210 -> 0.204 ms at 4K on the H100 (forty-fourth session; half a row and 16 rows at
// once, TS_SOFTMAX_ROWS=16, before; 4 rows at once, an eighth of a row, was slower: 0.224).
// G = gl_SubgroupSize / TS_SOFTMAX_ROWS must divide the window's side.
#ifndef TS_SOFTMAX_ROWS
#define TS_SOFTMAX_ROWS 8
#endif

#if !TS_SOFTMAX_REGS
// Head h of the window from q, k, v and the bias table in shared memory: each subgroup's 16-row
// blocks of queries.
void attend(uint h) {
    // Row ownership inside a pass of RP rows: G invocations a row, each over N / G keys.
    const uint RP = TS_SOFTMAX_ROWS, PASSES = 16 / RP;
    const uint G = gl_SubgroupSize / RP;
    // The most keys an invocation takes (subgroups of 32).
    const uint KMAX = N * RP / 32;
    uint rib = gl_SubgroupInvocationID / G, lane = gl_SubgroupInvocationID % G;
    for (uint rb = gl_SubgroupID; rb < N / 16; rb += gl_NumSubgroups) {
        uint base = rb * 16 * NS;
        MATA qa;
        coopMatLoad(qa, Qs, rb * 16 * DS, DS, gl_CooperativeMatrixLayoutRowMajor);
        for (uint j = 0; j < N / 16; j++) {
            MATB kb;
            coopMatLoad(kb, Ks, j * 16 * DS, DS, gl_CooperativeMatrixLayoutColumnMajor);
            ACC s = coopMatMulAdd(qa, kb, ACC(0.0));
            coopMatStore(TO_FS(s), Fs, base + j * 16, NS, gl_CooperativeMatrixLayoutRowMajor);
        }
        sync_subgroup();
        float sums[PASSES];
        for (uint p = 0; p < PASSES; p++) {
            uint r = rb * 16 + p * RP + rib;
            // Softmax of row r over its keys j = G k + lane: the scores with their bias held in
            // registers and their maximum, then the exponentials (unnormalised, at most 1) into
            // P as f16 and their sum. G divides the window's side, so key j's column is (G k) %
            // TS_WINDOW + lane and its row G k / TS_WINDOW: once the loops unroll, every address
            // is the row's base and a constant. (Keys visited from a per-row start, which kept
            // the rows of unpadded scores off each other's banks, made each address a sum of its
            // own: 126 registers against 86, level 0's attention 0.213 -> 0.211 ms at 4K on the
            // H100.) The loops run to the most keys an invocation takes so that a[] stays in
            // registers; wider subgroups skip the rest. (Reading the scores twice instead of
            // holding them: 79 registers, and slower, 0.254 ms.)
            uint row = r * NS + lane;
            uint b0 = (r / TS_WINDOW + 7) * 15 + r % TS_WINDOW + 7 - lane;
            float a[KMAX];
            float m = -3.4e38;
            for (uint k = 0; k < KMAX; k++) {
                if (k < N / G) {
                    uint g = G * k;
                    a[k] = float(Fs[row + g]) + bias[b0 - 15 * (g / TS_WINDOW) - g % TS_WINDOW];
                    m = max(m, a[k]);
                }
            }
            for (uint o = 1; o < G; o *= 2) m = max(m, subgroupShuffleXor(m, o));
            float sum = 0.0;
            for (uint k = 0; k < KMAX; k++) {
                if (k < N / G) {
                    float e = exp(a[k] - m);
                    Ps[row + G * k] = float16_t(e);
                    sum += e;
                }
            }
            for (uint o = 1; o < G; o *= 2) sum += subgroupShuffleXor(sum, o);
            sums[p] = sum;
        }
        sync_subgroup();
        ACC o = ACC(0.0);
        for (uint j = 0; j < N / 16; j++) {
            MATA pa;
            coopMatLoad(pa, Ps, base + j * 16, NS, gl_CooperativeMatrixLayoutRowMajor);
            MATB vb;
            coopMatLoad(vb, Vs, j * 16 * DS, DS, gl_CooperativeMatrixLayoutRowMajor);
            o = coopMatMulAdd(pa, vb, o);
        }
        // The block's scores are spent: O (stride DS) takes their place, and each row's owners
        // divide their row by its sum, round it to f16 and write D / G channels each.
        coopMatStore(TO_FS(o), Fs, base, DS, gl_CooperativeMatrixLayoutRowMajor);
        sync_subgroup();
        F16x4Buf out4 = F16x4Buf(pc.out_);
        for (uint p = 0; p < PASSES; p++) {
            uint r = rb * 16 + p * RP + rib;
            float inv = 1.0 / sums[p];
            for (uint d = lane * 4; d < D; d += 4 * G) {
                uint f = base + (p * RP + rib) * DS + d;
                vec4 v = vec4(float(Fs[f]), float(Fs[f + 1]), float(Fs[f + 2]), float(Fs[f + 3])) * inv;
                out4.v[(toks[r] * C + h * D + d) / 4] = f16vec4(v);
            }
        }
    }
}

#endif

#if TS_SOFTMAX_REGS
#if TS_WINDOW != 8 || TS_HEAD_DIM != 16
#error "attend_regs: windows of 8 x 8 and heads of 16 channels"
#endif
// Block rb's 16 queries of head h, with q (scaled) as an A matrix, all in registers. It assumes
// the layout NVIDIA's driver gives mma.sync's fragments, which the layout probe
// (vk-stages/src/layout.rs) checks on the device before this variant is chosen: a subgroup of 32,
// and invocation l's element i of a 16 x 16 matrix (f32 or f16 accumulator, f16 A) at row
// l / 4 + 8 ((i >> 2) & 1), column 2 (l % 4) + (i & 1) + 8 ((i >> 1) & 1). So invocation l holds
// rows r0 = l / 4 and r0 + 8 of every score tile, four invocations (l ^ 1, l ^ 2) share a row,
// and an accumulator's elements are an A matrix's, element for element.
// The head's bias table starts at bias[bb], its k and v at Ks[kvb] and Vs[kvb].
void attend_regs(uint h, uint rb, MATA qa, uint bb, uint kvb) {
    uint l = gl_SubgroupInvocationID, t = l % 4;
    ACC s[N / 16];
    [[unroll]] for (uint j = 0; j < N / 16; j++) {
        MATB kb;
        coopMatLoad(kb, Ks, kvb + j * 16 * DS, DS, gl_CooperativeMatrixLayoutColumnMajor);
        s[j] = coopMatMulAdd(qa, kb, ACC(0.0));
    }
    // Query r = rb 16 + l / 4 (+ 8 for elements 4 to 7) against key c = 16 j + 8 ((i >> 1) & 1)
    // + 2 t + (i & 1): key row 2 j + ((i >> 1) & 1), column 2 t + (i & 1), so the bias entry
    // (ry - cy + 7) 15 + rx - cx + 7 is the row's base less a constant.
    uint r0 = rb * 16 + l / 4;
    uint b0 = bb + (r0 / 8 + 7) * 15 + r0 % 8 + 7 - 2 * t;
    float m0 = -3.4e38, m1 = -3.4e38;
    [[unroll]] for (uint j = 0; j < N / 16; j++) {
        [[unroll]] for (int i = 0; i < 8; i++) {
            uint hi = (uint(i) >> 2) & 1;
            s[j][i] += bias[b0 + 15 * hi - 15 * (2 * j + ((uint(i) >> 1) & 1)) - (uint(i) & 1)];
            if (hi == 0) m0 = max(m0, s[j][i]);
            else m1 = max(m1, s[j][i]);
        }
    }
    m0 = max(m0, subgroupShuffleXor(m0, 1));
    m0 = max(m0, subgroupShuffleXor(m0, 2));
    m1 = max(m1, subgroupShuffleXor(m1, 1));
    m1 = max(m1, subgroupShuffleXor(m1, 2));
    float sum0 = 0.0, sum1 = 0.0;
    MATA pa[N / 16];
    [[unroll]] for (uint j = 0; j < N / 16; j++) {
        [[unroll]] for (int i = 0; i < 8; i++) {
            bool hi = ((uint(i) >> 2) & 1) == 1;
            float e = exp(s[j][i] - (hi ? m1 : m0));
            pa[j][i] = float16_t(e);
            if (hi) sum1 += e;
            else sum0 += e;
        }
    }
    sum0 += subgroupShuffleXor(sum0, 1);
    sum0 += subgroupShuffleXor(sum0, 2);
    sum1 += subgroupShuffleXor(sum1, 1);
    sum1 += subgroupShuffleXor(sum1, 2);
    float inv0 = 1.0 / sum0, inv1 = 1.0 / sum1;
    ACC o = ACC(0.0);
    [[unroll]] for (uint j = 0; j < N / 16; j++) {
        MATB vb;
        coopMatLoad(vb, Vs, kvb + j * 16 * DS, DS, gl_CooperativeMatrixLayoutRowMajor);
        o = coopMatMulAdd(pa[j], vb, o);
    }
    // Elements 2k and 2k + 1 are adjacent channels of one row.
    F16x2Buf out2 = F16x2Buf(pc.out_);
    uint t0 = toks[r0] * C + h * D, t1 = toks[r0 + 8] * C + h * D;
    [[unroll]] for (int i = 0; i < 8; i += 2) {
        bool hi = ((uint(i) >> 2) & 1) == 1;
        uint d = 2 * t + 8 * ((uint(i) >> 1) & 1);
        float inv = hi ? inv1 : inv0;
        out2.v[((hi ? t1 : t0) + d) / 2] = f16vec2(o[i] * inv, o[i + 1] * inv);
    }
}
#endif

#if TS_LN_REGS
// norm1 of this subgroup's 16 rows of the window straight from the stream into A matrices (the
// layout attend_regs assumes): invocation l loads its two rows' (window positions r0 = 16 rb +
// l / 4 and r0 + 8) columns 2 (l % 4), +1, +8, +9 of each tile as f32 pairs, and the LayerNorm
// over the fragment layout (frag_rows.glsl) writes the A matrices' own elements. No rows or qkv
// bias in shared memory, no workgroup barrier before the products.
void ln_regs(out MATA la[TS_LN_TILES]) {
    uint rb = gl_SubgroupID, l = gl_SubgroupInvocationID, t = l % 4;
    uint r0 = rb * 16 + l / 4;
    uint tk0 = window_token(gl_WorkGroupID.x, r0, pc.width, pc.height, pc.shift_x, pc.shift_y);
    uint tk1 = window_token(gl_WorkGroupID.x, r0 + 8, pc.width, pc.height, pc.shift_x, pc.shift_y);
    if (t == 0) {
        toks[r0] = tk0;
        toks[r0 + 8] = tk1;
    }
    float v[TS_LN_TILES * 8];
    [[unroll]] for (uint j = 0; j < C / 16; j++) {
        [[unroll]] for (uint p = 0; p < 2; p++) {
            uint c = 16 * j + 2 * t + 8 * p;
            uint q0 = (tk0 * C + c) / 2, q1 = (tk1 * C + c) / 2;
            vec2 a = STREAM16 != 0 ? vec2(F16x2Buf(pc.in_).v[q0]) : Vec2Buf(pc.in_).v[q0];
            vec2 b = STREAM16 != 0 ? vec2(F16x2Buf(pc.in_).v[q1]) : Vec2Buf(pc.in_).v[q1];
            v[8 * j + 2 * p] = a.x;
            v[8 * j + 2 * p + 1] = a.y;
            v[8 * j + 2 * p + 4] = b.x;
            v[8 * j + 2 * p + 5] = b.y;
        }
    }
#define V_AT(j, i) v[8 * (j) + (i)]
    FRAG_LAYERNORM(V_AT, C / 16, C, pc.gamma, pc.beta, la)
}

// One of q, k, v (part 0, 1, 2) of this subgroup's rows for head h from the normalised rows la:
// qkv's bias element for element, then K = C products with B read as column-major matrices from
// the head's rows of qkv's weights ([3C, C]) in Wq from wb on, rounded to f16.
coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> qkv_regs(MATA la[TS_LN_TILES], uint h, uint part, uint wb) {
    ACC c = frag_add_columns(ACC(0.0), pc.b, part * C + h * D);
    [[unroll]] for (uint k = 0; k < C / 16; k++) {
        MATB bm;
        coopMatLoad(bm, Wq, wb + part * D * WS + 16 * k, WS, gl_CooperativeMatrixLayoutColumnMajor);
        c = coopMatMulAdd(la[k], bm, c);
    }
    return coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(c);
}

// Head h's q, k and v from the normalised rows la, with its qkv weights at Wq[wb], k and v to
// Ks[kvb] and Vs[kvb]: one 16-row block a subgroup (subgroups of 32), its q kept in registers as
// an A matrix.
MATA qkv_head(MATA la[TS_LN_TILES], uint h, uint wb, uint kvb) {
    uint rb = gl_SubgroupID;
    MATA qa;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m = qkv_regs(la, h, 0, wb);
    for (int i = 0; i < m.length(); i++) qa[i] = m[i] * float16_t(0.25);
    m = qkv_regs(la, h, 1, wb);
    coopMatStore(m, Ks, kvb + rb * 16 * DS, DS, gl_CooperativeMatrixLayoutRowMajor);
    m = qkv_regs(la, h, 2, wb);
    coopMatStore(m, Vs, kvb + rb * 16 * DS, DS, gl_CooperativeMatrixLayoutRowMajor);
    return qa;
}

// Head h: q, k and v, then (its bias table at bias[bb]) the attention.
void head_regs(MATA la[TS_LN_TILES], uint h, uint wb, uint bb, uint kvb) {
    MATA qa = qkv_head(la, h, wb, kvb);
    barrier();
    attend_regs(h, gl_SubgroupID, qa, bb, kvb);
}
#endif

#if TS_QKV_AHEAD
// Heads h0 .. h0 + nh - 1's rows of qkv's weights (slot w's row r is row (r / D) C + (h0 + w) D +
// r % D of qkv's weights) and their bias tables, loaded into an invocation's registers
// (load_heads) and stored from there into Wq (slot w at Wq[w 3 D WS]) and bias (at bias[w RPBP])
// (store_heads), so that every load is issued before the first store: every head at once where
// NWH = HW (up to TS_AHEAD_HEADS heads), else one at a time (nh = 1, a head of up to 96 channels).
// Each invocation of the 128 holds AHEAD_MAX weight vectors and AHEAD_BIAS bias entries at most.
const uint AHEAD_PER = 3 * D * C / 4;
const uint AHEAD_MAX = max((TS_AHEAD_HEADS * 3 * TS_HEAD_DIM * TS_AHEAD_HEADS * TS_HEAD_DIM / 4 + 127) / 128,
                           (3 * TS_HEAD_DIM * TS_LN_TILES * 16 / 4 + 127) / 128);
const uint AHEAD_BIAS = (TS_AHEAD_HEADS * TS_RPB_ENTRIES + 127) / 128;
struct HeadRegs {
    f16vec4 w[AHEAD_MAX];
    float b[AHEAD_BIAS];
};
void load_heads(uint lid, uint h0, uint nh, inout HeadRegs v) {
    [[unroll]] for (uint i = 0; i < AHEAD_MAX; i++) {
        uint e = lid + gl_WorkGroupSize.x * i;
        if (e < nh * AHEAD_PER) {
            uint w = e / AHEAD_PER, r = (e % AHEAD_PER) * 4 / C, k = (e % AHEAD_PER) * 4 % C;
            v.w[i] = F16x4Buf(pc.w).v[(((r / D) * C + (h0 + w) * D + r % D) * C + k) / 4];
        }
    }
    [[unroll]] for (uint i = 0; i < AHEAD_BIAS; i++) {
        uint e = lid + gl_WorkGroupSize.x * i;
        if (e < nh * TS_RPB_ENTRIES) v.b[i] = float(pc.rpb.v[h0 * TS_RPB_ENTRIES + e]);
    }
}
void store_heads(uint lid, uint nh, HeadRegs v) {
    [[unroll]] for (uint i = 0; i < AHEAD_MAX; i++) {
        uint e = lid + gl_WorkGroupSize.x * i;
        if (e < nh * AHEAD_PER) {
            uint w = e / AHEAD_PER, r = (e % AHEAD_PER) * 4 / C, k = (e % AHEAD_PER) * 4 % C;
            for (int j = 0; j < 4; j++) Wq[w * 3 * D * WS + r * WS + k + j] = v.w[i][j];
        }
    }
    [[unroll]] for (uint i = 0; i < AHEAD_BIAS; i++) {
        uint e = lid + gl_WorkGroupSize.x * i;
        if (e < nh * TS_RPB_ENTRIES) bias[(e / TS_RPB_ENTRIES) * RPBP + e % TS_RPB_ENTRIES] = v.b[i];
    }
}
#endif

void main() {
    uint lid = gl_LocalInvocationID.x;
#if TS_QKV_IN
    uint h0 = gl_WorkGroupID.y * HW;
#if TS_LN_REGS
    MATA la[TS_LN_TILES];
#if TS_QKV_AHEAD
    HeadRegs hr;
    if (NWH > 1) {
        load_heads(lid, 0, HW, hr);
        ln_regs(la);
        store_heads(lid, HW, hr);
        barrier();
        for (uint h = 0; h < HW; h++) head_regs(la, h, h * 3 * D * WS, h * RPBP, (h & 1) * N * DS);
    } else {
        load_heads(lid, 0, 1, hr);
        ln_regs(la);
        for (uint h = 0; h < HW; h++) {
            // The head before is done with shared memory.
            barrier();
            store_heads(lid, 1, hr);
            // The next head's loads are in flight while this head runs.
            if (h + 1 < HW) load_heads(lid, h + 1, 1, hr);
            barrier();
            head_regs(la, h, 0, 0, 0);
        }
    }
    return;
#endif
    ln_regs(la);
#else
    stage_window(lid, h0);
#endif
    for (uint h = h0; h < h0 + HW; h++) {
        // The staged rows and biases are in; the head before is done with shared memory.
        barrier();
        for (uint e = lid; e < TS_RPB_ENTRIES; e += gl_WorkGroupSize.x) bias[e] = float(pc.rpb.v[h * TS_RPB_ENTRIES + e]);
#if TS_LN_REGS
        // Row r of Wq is row (r / D) C + h D + r % D of qkv's weights.
        for (uint e = lid; e < 3 * D * C / 4; e += gl_WorkGroupSize.x) {
            uint r = (e * 4) / C, k = (e * 4) % C;
            f16vec4 v = F16x4Buf(pc.w).v[(((r / D) * C + h * D + r % D) * C + k) / 4];
            for (int j = 0; j < 4; j++) Wq[r * WS + k + j] = v[j];
        }
        barrier();
#endif
#if TS_LN_REGS
        head_regs(la, h, 0, 0, 0);
#else
        for (uint rb = gl_SubgroupID; rb < N / 16; rb += gl_NumSubgroups) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m = qkv_part(rb, h, h - h0, 0);
            for (int i = 0; i < m.length(); i++) m[i] *= float16_t(0.25);
            coopMatStore(m, Qs, rb * 16 * DS, DS, gl_CooperativeMatrixLayoutRowMajor);
            m = qkv_part(rb, h, h - h0, 1);
            coopMatStore(m, Ks, rb * 16 * DS, DS, gl_CooperativeMatrixLayoutRowMajor);
            m = qkv_part(rb, h, h - h0, 2);
            coopMatStore(m, Vs, rb * 16 * DS, DS, gl_CooperativeMatrixLayoutRowMajor);
        }
        barrier();
        attend(h);
#endif
    }
#else
    uint h = gl_WorkGroupID.y;
    for (uint e = lid; e < TS_RPB_ENTRIES; e += gl_WorkGroupSize.x) bias[e] = float(pc.rpb.v[h * TS_RPB_ENTRIES + e]);
    // Each window position's q, k and v (four channels an invocation and step).
    F16x4Buf qkv4 = F16x4Buf(pc.in_);
    for (uint e = lid; e < N * D / 4; e += gl_WorkGroupSize.x) {
        uint i = e / (D / 4), d4 = e % (D / 4);
        uint t = window_token(gl_WorkGroupID.x, i, pc.width, pc.height, pc.shift_x, pc.shift_y);
        if (d4 == 0) toks[i] = t;
        uint base = (t * 3 * C + h * D) / 4 + d4;
        f16vec4 q = qkv4.v[base], k = qkv4.v[base + C / 4], v = qkv4.v[base + 2 * C / 4];
        for (int j = 0; j < 4; j++) {
            Qs[i * DS + d4 * 4 + j] = q[j] * float16_t(0.25);
            Ks[i * DS + d4 * 4 + j] = k[j];
            Vs[i * DS + d4 * 4 + j] = v[j];
        }
    }
    barrier();
#if TS_SOFTMAX_REGS
    MATA qa;
    coopMatLoad(qa, Qs, gl_SubgroupID * 16 * DS, DS, gl_CooperativeMatrixLayoutRowMajor);
    attend_regs(h, gl_SubgroupID, qa, 0, 0);
#else
    attend(h);
#endif
#endif
}
