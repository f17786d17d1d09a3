#version 460
// The cooperative-matrix linear layer without staging (docs/ENGINE.md, "Results straight from the
// accumulators"): the plain, merge and head (P = 8) variants of linear_coop.comp (same specialisation and push
// constants, same grid of ROWS tokens a workgroup, 2 ROWS invocations), for layers whose outputs
// are plain rows. Each subgroup owns 16-row blocks and, chunk by chunk, up to four 16x16
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
#include "common.glsl"
#include "linear_params.glsl"
#include "linear_epilogue.glsl"
layout(constant_id = TS_SPEC_ROWS) const int ROWS = TS_COOP_ROWS;
layout(local_size_x_id = TS_SPEC_THREADS) in;
const uint THREADS = gl_WorkGroupSize.x;

// Inputs read as matrices straight from the buffer: f16 rows that need nothing first.
const bool STAGED = LN != 0 || MODE != TS_MODE_PLAIN || IN_F16 == 0;
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
    if (RESIDUAL != 0 && OUT_F16 == 0) c = add_old(c, pc.y, row0, n, OUT);
    return c;
}

void finish(ACC c, uint row0, uint n) {
    if (ACT == 1) {
        for (int i = 0; i < c.length(); i++) c[i] = c[i] / (1.0 + exp(-c[i]));
    }
    if (OUT_F16 != 0) {
        ACC16 h = ACC16(c);
        coopMatStore(h, F16Rows(pc.y).v, row0 * OUT + n, OUT, gl_CooperativeMatrixLayoutRowMajor);
    } else {
        coopMatStore(c, F32Rows(pc.y).v, row0 * OUT + n, OUT, gl_CooperativeMatrixLayoutRowMajor);
    }
}

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
            for (uint k = 0; k < IN; k += 16) {
                MATA a = load_a(row0, rb, k);
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
