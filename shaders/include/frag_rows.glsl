// Rows held in the fragment layout that the layout probe checks (vk-stages/src/layout.rs;
// NVIDIA's driver): with subgroups of 32, invocation l holds rows l / 4 (elements 0 to 3 of a
// 16 x 16 matrix) and l / 4 + 8 (elements 4 to 7), columns 2 (l % 4) + (i & 1) + 8 ((i >> 1) & 1),
// alike for f32 and f16 accumulators and f16 A matrices; the four invocations l ^ 1, l ^ 2 share a
// row. The register paths' column adds and LayerNorms over such rows: attention_coop.comp's norm1
// and qkv bias, linear_direct_coop.comp's staged rows, mlp_regs_coop.comp's norm2 and biases.
// Needs GL_KHR_cooperative_matrix, GL_KHR_shader_subgroup_shuffle and
// GL_EXT_control_flow_attributes.
#ifndef TS_FRAG_ROWS
#define TS_FRAG_ROWS
layout(buffer_reference, std430, buffer_reference_align = 4) restrict buffer F16x2Buf { f16vec2 v[]; };

// The column of element i of tile j (channels 16 j .. 16 j + 15) for this invocation.
uint frag_col(uint j, int i) {
    return 16 * j + 2 * (gl_SubgroupInvocationID % 4) + (uint(i) & 1) + 8 * ((uint(i) >> 1) & 1);
}

// s summed over the four invocations that share its row.
float frag_row_sum(float s) {
    s += subgroupShuffleXor(s, 1);
    return s + subgroupShuffleXor(s, 2);
}

// c's columns (the vector's col0 .. col0 + 15) plus the vector's elements, PAIR(q) being its pair
// q as a vec2.
#define FRAG_ADD_COLUMNS(PAIR) \
    [[unroll]] for (int p = 0; p < 2; p++) { \
        vec2 bv = PAIR((col0 + frag_col(0, 2 * p)) / 2); \
        [[unroll]] for (int i = 2 * p; i < 8; i += 4) { \
            c[i] += bv.x; \
            c[i + 1] += bv.y; \
        } \
    }
// c plus a vector of halves at v, element for element as in c's columns, which are the vector's
// col0 .. col0 + 15.
coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> frag_add_columns(coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c, uint64_t v, uint col0) {
    F16x2Buf b = F16x2Buf(v);
#define F16_PAIR(q) vec2(b.v[q])
    FRAG_ADD_COLUMNS(F16_PAIR)
    return c;
}

// The same with a vector of floats at v.
coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> frag_add_columns32(coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c, uint64_t v, uint col0) {
    Vec2Buf b = Vec2Buf(v);
#define F32_PAIR(q) b.v[q]
    FRAG_ADD_COLUMNS(F32_PAIR)
    return c;
}

// The LayerNorm of the invocation's two rows, NT tiles of W channels, whose element i of tile j is
// AT(j, i) (a macro or function of the caller's): the mean, then the variance around it, as the
// reference takes them (docs/NETWORK.md §4), each row's sums over its four invocations; the
// normalised values, with the f16 vectors gamma and beta at buffer addresses G and B, rounded to
// f16 element for element into the A matrices LA[0 .. NT - 1].
#define FRAG_LAYERNORM(AT, NT, W, G, B, LA) { \
    float s0_ = 0.0, s1_ = 0.0; \
    [[unroll]] for (uint j_ = 0; j_ < (NT); j_++) { \
        [[unroll]] for (int i_ = 0; i_ < 4; i_++) { s0_ += AT(j_, i_); s1_ += AT(j_, i_ + 4); } \
    } \
    float m0_ = frag_row_sum(s0_) / float(W), m1_ = frag_row_sum(s1_) / float(W); \
    float q0_ = 0.0, q1_ = 0.0; \
    [[unroll]] for (uint j_ = 0; j_ < (NT); j_++) { \
        [[unroll]] for (int i_ = 0; i_ < 4; i_++) { \
            float d0_ = AT(j_, i_) - m0_, d1_ = AT(j_, i_ + 4) - m1_; \
            q0_ += d0_ * d0_; \
            q1_ += d1_ * d1_; \
        } \
    } \
    float inv0_ = 1.0 / sqrt(frag_row_sum(q0_) / float(W) + 1e-5); \
    float inv1_ = 1.0 / sqrt(frag_row_sum(q1_) / float(W) + 1e-5); \
    F16x2Buf g2_ = F16x2Buf(G), b2_ = F16x2Buf(B); \
    [[unroll]] for (uint j_ = 0; j_ < (NT); j_++) { \
        [[unroll]] for (int p_ = 0; p_ < 2; p_++) { \
            uint c_ = frag_col(j_, 2 * p_) / 2; \
            vec2 g_ = vec2(g2_.v[c_]), be_ = vec2(b2_.v[c_]); \
            int i_ = 2 * p_; \
            LA[j_][i_] = float16_t((AT(j_, i_) - m0_) * inv0_ * g_.x + be_.x); \
            LA[j_][i_ + 1] = float16_t((AT(j_, i_ + 1) - m0_) * inv0_ * g_.y + be_.y); \
            LA[j_][i_ + 4] = float16_t((AT(j_, i_ + 4) - m1_) * inv1_ * g_.x + be_.x); \
            LA[j_][i_ + 5] = float16_t((AT(j_, i_ + 5) - m1_) * inv1_ * g_.y + be_.y); \
        } \
    } }
#endif
