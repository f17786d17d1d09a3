// The matrix types, row buffers and weight copy of the cooperative-matrix shaders that keep their
// results in the accumulators (coop_direct.glsl, mlp_regs_coop.comp).
#ifndef TS_COOP_TYPES
#define TS_COOP_TYPES
// Matrix loads and stores of whole 16-element rows: the base addresses are 256-byte aligned and
// every row offset is a multiple of 16 elements.
layout(buffer_reference, std430, buffer_reference_align = 16) restrict buffer F16Rows { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) restrict buffer F32Rows { float v[]; };

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define ACC16 coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define MATA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MATB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>

// A weight matrix [out][K] of the buffer at w into a shared array W of rows KS apart, four halves
// an invocation and step (the shader's THREADS invocations).
#define COPY_WEIGHTS(W, w, OUTN, K, KS) \
    for (uint e_ = gl_LocalInvocationID.x; e_ < (OUTN) * (K) / 4; e_ += THREADS) { \
        f16vec4 v_ = F16x4Buf(w).v[e_]; \
        uint o_ = (e_ * 4) / (K) * (KS) + (e_ * 4) % (K); \
        for (int j_ = 0; j_ < 4; j_++) W[o_ + j_] = v_[j_]; \
    }

// A 16 x 16 tile of a residual stream at element `at`, rows `stride` apart, as an f32
// accumulator: the stream in f32, or in f16 (`f16`: the model keeps its streams in f16,
// docs/ENGINE.md, "The streams in f16"); and the store back.
ACC load_stream(uint64_t x, uint at, uint stride, bool f16) {
    ACC m;
    if (f16) {
        ACC16 h;
        coopMatLoad(h, F16Rows(x).v, at, stride, gl_CooperativeMatrixLayoutRowMajor);
        m = ACC(h);
    } else {
        coopMatLoad(m, F32Rows(x).v, at, stride, gl_CooperativeMatrixLayoutRowMajor);
    }
    return m;
}
void store_stream(ACC m, uint64_t x, uint at, uint stride, bool f16) {
    if (f16) {
        ACC16 h = ACC16(m);
        coopMatStore(h, F16Rows(x).v, at, stride, gl_CooperativeMatrixLayoutRowMajor);
    } else {
        coopMatStore(m, F32Rows(x).v, at, stride, gl_CooperativeMatrixLayoutRowMajor);
    }
}
#endif
