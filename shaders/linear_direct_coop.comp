#version 460
// The cooperative-matrix linear layer without staging (docs/ENGINE.md, "Results straight from the
// accumulators"): the plain, merge, head (P = 8) and expansion variants of linear_coop.comp (same
// specialisation and push constants, same grid of ROWS tokens a workgroup, 2 ROWS invocations).
// Each subgroup owns 16-row blocks and, chunk by chunk, up to four 16x16
// accumulators that start as the bias (and, for a residual layer, the stream's old values), take
// the products with B read straight from the weights, get SiLU element by element, and are stored
// straight into the output rows. Only the inputs go through shared memory, and only where they
// need work first (LayerNorm, the merge gather, f32 rows): nothing waits for a barrier between
// chunks, and a workgroup needs 1 to 32 KiB of shared memory instead of 9 to 47.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "linear_params.glsl"
#include "linear_epilogue.glsl"
layout(constant_id = TS_SPEC_ROWS) const int ROWS = TS_COOP_ROWS;
layout(local_size_x_id = TS_SPEC_THREADS) in;
const uint THREADS = gl_WorkGroupSize.x;

// TS_IN_REGS=1 (the variants linear_regs_coop, linear_regs_w_coop): the input rows that this
// shader would stage (a LayerNorm's, the merge's gather, f32 rows) go from the buffer straight
// into A matrices in registers instead (rows_regs below), by the layout the layout probe checks
// (vk-stages/src/layout.rs): nothing is staged. The merge out of level 0 0.095 -> 0.039 ms at
// 4K on the H200 (forty-sixth session). The host takes them only for inputs up to
// 16 TS_IN_REGS_TILES wide.
#ifndef TS_IN_REGS
#define TS_IN_REGS 0
#endif
#ifndef TS_IN_REGS_TILES
#define TS_IN_REGS_TILES 8
#endif
#if TS_IN_REGS
// (Written with || alone: glslang 13 emitted specialisation constants built with && or ! from
// others after their first use, which spirv-val refuses and the H100's driver crashed on.)
const bool IN_REGS = LN != 0 || MODE == TS_MODE_MERGE || IN_F16 == 0;
const bool STAGED = false;
#else
// Inputs read as matrices straight from the buffer: f16 rows that need nothing first (a plain
// layer's, an expansion's).
const bool STAGED = LN != 0 || MODE == TS_MODE_MERGE || IN_F16 == 0;
#endif
// The head (P = 8): the per-pixel path is one more product per 16 outputs (two pixels' 8 head
// channels), of those pixels' 16 embedding values and a 16 x 16 block-diagonal matrix holding
// pixel_head.weight^T twice; its bias joins the head's, so the bias rows are f32.
const bool HEAD = MODE == TS_MODE_HEAD;
// The staged input rows (f16); a token array when unused.
shared float16_t As[STAGED ? ROWS * IN_S : 16];
// The bias in 16 equal rows: each accumulator starts from 16 x 16 of it (f32 for the head).
shared float16_t Bs[HEAD ? 16 : 16 * OUT];
shared float Bf[HEAD ? 16 * OUT : 4];
shared float16_t Pm[HEAD ? 256 : 16];
#include "coop_direct.glsl"
#ifndef TS_W_SHARED
#define TS_W_SHARED 0
#endif
#if TS_W_SHARED
// The variant linear_direct_w_coop: the weights [OUT][IN], as in their buffer, copied into shared
// memory once a workgroup, and every B operand loaded from there (the host takes it only where
// they fit beside the rows: NetTiles::direct_weights_shared), rows IN_S apart.
shared float16_t Ws[OUT * IN_S];
#endif

MATA load_a(uint row0, uint rb, uint k) {
    MATA a;
    if (STAGED) coopMatLoad(a, As, rb * 16 * IN_S + k, IN_S, gl_CooperativeMatrixLayoutRowMajor);
    else coopMatLoad(a, F16Rows(pc.x).v, row0 * IN + k, IN, gl_CooperativeMatrixLayoutRowMajor);
    return a;
}

// Where output columns n..n+15 of rows row0..row0+15 start in y, and the distance between their
// rows: rows of OUT, or for the expansion (the depth-to-space scatter) the level below's rows of
// OUT / 4, two tokens apart, since the 16 rows are consecutive tokens of one grid row (the host
// takes this shader for an expansion only where every grid row is whole 16s: LinearSpec::rows16).
uint out_at(uint row0, uint n) {
    return MODE == TS_MODE_EXPAND ? linear_dst(row0, n) : row0 * OUT + n;
}
uint out_stride() {
    return MODE == TS_MODE_EXPAND ? 2 * (OUT / 4) : OUT;
}

// Output columns n..n+15 of rows row0..row0+15 before the products: the bias, plus the old
// values of a residual stream.
ACC start(uint row0, uint n) {
    ACC c;
    if (HEAD) {
        coopMatLoad(c, Bf, n, OUT, gl_CooperativeMatrixLayoutRowMajor);
    } else {
        ACC16 b16;
        coopMatLoad(b16, Bs, n, OUT, gl_CooperativeMatrixLayoutRowMajor);
        c = ACC(b16);
    }
    if (RESIDUAL != 0) c += load_stream(pc.y, out_at(row0, n), out_stride(), OUT_F16 != 0);
    return c;
}

void finish(ACC c, uint row0, uint n) {
    if (ACT == 1) {
        for (int i = 0; i < c.length(); i++) c[i] = c[i] / (1.0 + exp(-c[i]));
    }
    store_stream(c, pc.y, out_at(row0, n), out_stride(), OUT_F16 != 0);
}

#if TS_IN_REGS
#include "frag_rows.glsl"

// Input channels c and c + 1 of row t before any LayerNorm: a plain row or the merge's gather
// (linear_input4's order), f32 or f16.
vec2 input_pair(uint t, uint c) {
    if (MODE == TS_MODE_MERGE) {
        const uint CIN = IN / 4;
        uint q = c / CIN, ch = c % CIN;
        uint tx = t % pc.width, ty = t / pc.width;
        uint src = (2 * ty + q / 2) * (2 * pc.width) + 2 * tx + q % 2;
        return IN_F16 != 0 ? vec2(F16x2Buf(pc.x).v[(src * CIN + ch) / 2]) : Vec2Buf(pc.x).v[(src * CIN + ch) / 2];
    }
    return IN_F16 != 0 ? vec2(F16x2Buf(pc.x).v[(t * IN + c) / 2]) : Vec2Buf(pc.x).v[(t * IN + c) / 2];
}

// Input rows row0 .. row0 + 15, through their LayerNorm where the layer has one
// (frag_rows.glsl), straight into A matrices: invocation l holds rows row0 + l / 4 (elements 0 to
// 3 of each tile) and row0 + l / 4 + 8 (4 to 7), columns 2 (l % 4) + (i & 1) + 8 ((i >> 1) & 1)
// of each tile (the layout the probe checks): the f32 values stage_rows would take, rounded once
// to f16.
void rows_regs(uint row0, out MATA la[TS_IN_REGS_TILES]) {
    uint l = gl_SubgroupInvocationID, t = l % 4;
    uint ra = row0 + l / 4, rb = ra + 8;
    const uint NT = IN / 16;
    float v[TS_IN_REGS_TILES * 8];
    [[unroll]] for (uint j = 0; j < NT; j++) {
        [[unroll]] for (uint p = 0; p < 2; p++) {
            uint c = 16 * j + 2 * t + 8 * p;
            vec2 a = input_pair(ra, c), b = input_pair(rb, c);
            v[8 * j + 2 * p] = a.x;
            v[8 * j + 2 * p + 1] = a.y;
            v[8 * j + 2 * p + 4] = b.x;
            v[8 * j + 2 * p + 5] = b.y;
        }
    }
    if (LN == 0) {
        [[unroll]] for (uint j = 0; j < NT; j++) {
            [[unroll]] for (int i = 0; i < 8; i++) la[j][i] = float16_t(v[8 * j + i]);
        }
        return;
    }
#define V_AT(j, i) v[8 * (j) + (i)]
    FRAG_LAYERNORM(V_AT, NT, IN, pc.gamma, pc.beta, la)
}
#endif

void main() {
    uint t0 = gl_WorkGroupID.x * ROWS;
    const uint Q = OUT / 4;
    const bool pixel = HEAD && pc.aux != 0ul;
    for (uint e = gl_LocalInvocationID.x; e < 16 * Q; e += THREADS) {
        f16vec4 v = F16x4Buf(pc.b).v[e % Q];
        for (int j = 0; j < 4; j++) {
            if (!HEAD) Bs[e * 4 + j] = v[j];
            else Bf[e * 4 + j] = float(v[j]) + (pixel ? float(F16Buf(pc.aux_b).v[(e * 4 + j) % TS_HEAD_CHANNELS]) : 0.0);
        }
    }
    // Pm[k][n] (row-major B): pixel_head.weight[n % 8][k % 8] where k and n are the same pixel.
    for (uint e = gl_LocalInvocationID.x; HEAD && e < 256; e += THREADS) {
        uint k = e / 16, n = e % 16;
        Pm[e] = pixel && k / 8 == n / 8 ? F16Buf(pc.aux_w).v[(n % 8) * P + k % 8] : float16_t(0.0);
    }
#if TS_W_SHARED
    COPY_WEIGHTS(Ws, pc.w, OUT, IN, IN_S)
#endif
    if (STAGED) stage_rows(t0);
#if TS_IN_REGS
    // Each subgroup takes one 16-row block (ROWS / 16 of them, subgroups of 32), its rows
    // loaded before the barrier.
    MATA la[TS_IN_REGS_TILES];
    if (IN_REGS) {
        if (t0 + gl_SubgroupID * 16 < pc.tokens) rows_regs(t0 + gl_SubgroupID * 16, la);
    }
#endif
    barrier();
    F16Rows w = F16Rows(pc.w);
    for (uint rb = gl_SubgroupID; rb < ROWS / 16; rb += gl_NumSubgroups) {
        uint row0 = t0 + rb * 16;
        // Token counts are whole windows (multiples of 64), so a block is all in or all out.
        if (row0 >= pc.tokens) break;
        for (uint n0 = 0; n0 < OUT; n0 += COLS) {
            uint nb = min(uint(COLS / 16), uint(OUT - n0) / 16);
            ACC c0 = ACC(0.0); ACC c1 = ACC(0.0); ACC c2 = ACC(0.0); ACC c3 = ACC(0.0);
#define START_(c, n) c = start(row0, n)
            ACC4_EACH(START_, n0, nb)
#if TS_IN_REGS
            [[unroll]] for (uint k = 0; k < IN; k += 16) {
                MATA a;
                if (IN_REGS) a = la[k / 16];
                else a = load_a(row0, rb, k);
#else
            for (uint k = 0; k < IN; k += 16) {
                MATA a = load_a(row0, rb, k);
#endif
#if TS_W_SHARED
#define MUL_(c, n) MUL_SHARED(c, a, Ws, n, k, IN_S)
#else
#define MUL_(c, n) c = mul_w(c, a, w, n, k, IN)
#endif
                ACC4_EACH(MUL_, n0, nb)
            }
            if (pixel) {
                // Outputs n..n+15 are pixels n/8 and n/8+1 of each token: their embeddings are
                // token channels n..n+15 (P = 8).
                MATB pm;
                coopMatLoad(pm, Pm, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
                F16Rows tok = F16Rows(pc.aux);
                MATA e;
#define PIXEL_(c, n) coopMatLoad(e, tok.v, row0 * 16 * P + (n), 16 * P, gl_CooperativeMatrixLayoutRowMajor); c = coopMatMulAdd(e, pm, c)
                ACC4_EACH(PIXEL_, n0, nb)
            }
#define FINISH_(c, n) finish(c, row0, n)
            ACC4_EACH(FINISH_, n0, nb)
        }
    }
}
