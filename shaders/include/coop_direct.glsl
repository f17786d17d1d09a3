// Shared by the cooperative-matrix shaders that keep their results in the accumulators
// (linear_direct_coop.comp, mlp_direct_coop.comp): buffer references for whole 16-element rows,
// the matrix types, and the staging of a workgroup's input rows. Needs common.glsl,
// linear_params.glsl and linear_epilogue.glsl, ROWS and THREADS, and `shared float16_t As[]`
// of ROWS x IN_S where inputs are staged (rows of IN_S halves).
#include "layernorm_pair.glsl"

#include "coop_types.glsl"

// A subgroup's outputs in chunks of up to four 16 x 16 accumulators c0..c3, for output columns
// n0, n0 + 16, n0 + 32 and n0 + 48 (the first nb of them): F(c, n), one or more statements, is
// applied to each in turn.
#define ACC4_EACH(F, n0, nb) { \
    { F(c0, (n0)); } \
    if ((nb) > 1) { F(c1, (n0) + 16); } \
    if ((nb) > 2) { F(c2, (n0) + 32); } \
    if ((nb) > 3) { F(c3, (n0) + 48); } }

// c + a x the weights' output columns n..n+15 at inputs k..k+15: B as a column-major matrix
// straight from a weight buffer of [out][K] halves.
ACC mul_w(ACC c, MATA a, F16Rows w, uint n, uint k, uint K) {
    MATB b;
    coopMatLoad(b, w.v, n * K + k, K, gl_CooperativeMatrixLayoutColumnMajor);
    return coopMatMulAdd(a, b, c);
}

// mul_w with the weights copied into a shared array W of [out][K] halves, rows KS apart
// (mlp_direct_w_coop, linear_direct_w_coop): c + a x W's output columns n..n+15 at inputs
// k..k+15.
#define MUL_SHARED(c, a, W, n, k, KS) { \
    MATB b_; \
    coopMatLoad(b_, W, (n) * (KS) + (k), (KS), gl_CooperativeMatrixLayoutColumnMajor); \
    c = coopMatMulAdd(a, b_, c); }

// c plus the old values of a residual stream at x (f32, or f16 with `f16`): columns n..n+15 of
// rows row0..row0+15, rows of `width` values.
ACC add_old(ACC c, uint64_t x, uint row0, uint n, uint width, bool f16) {
    return c + load_stream(x, row0 * width + n, width, f16);
}

// A row's half held by one of its two invocations as NQ vec4s in v (channels i0 onwards, W in
// all): its LayerNorm (layernorm_pair.glsl, then gamma and beta) as f16 into As from a0 on.
#define LN_PAIR_STAGE(v, NQ, W, a0, i0) { \
    float mean_, inv_; \
    LN_PAIR_STATS(v, NQ, W, mean_, inv_) \
    for (uint jl_ = 0; jl_ < (NQ); jl_++) { \
        vec4 al_ = ln_affine4(v[jl_], (i0) + 4 * jl_, mean_, inv_); \
        for (int kl_ = 0; kl_ < 4; kl_++) As[(a0) + 4 * jl_ + kl_] = float16_t(al_[kl_]); \
    } }

// The workgroup's input rows as f16 in As. LayerNorm: two invocations a row (adjacent in their
// subgroup), each over half of it from the buffer into registers (layernorm_pair.glsl).
void stage_rows(uint t0) {
    uint tid = gl_LocalInvocationID.x;
    if (LN == 0) {
        const uint Q = IN / 4;
        for (uint e = tid; e < ROWS * Q; e += THREADS) {
            uint r = e / Q, i = (e % Q) * 4;
            vec4 v = t0 + r < pc.tokens ? linear_input4(t0 + r, i) : vec4(0.0);
            for (int j = 0; j < 4; j++) As[r * IN_S + i + j] = float16_t(v[j]);
        }
        return;
    }
    const uint H = IN / 2;
    uint r = tid / 2, i0 = (tid % 2) * H;
    bool live = t0 + r < pc.tokens;
    vec4 v[H / 4];
    for (uint j = 0; j < H / 4; j++) v[j] = live ? linear_input4(t0 + r, i0 + 4 * j) : vec4(0.0);
    LN_PAIR_STAGE(v, H / 4, IN, r * IN_S + i0, i0)
}

