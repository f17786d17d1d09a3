#version 460
// The layout probe (vk-stages/src/layout.rs): where this device keeps a 16 x 16 cooperative
// matrix's elements. One subgroup fills an f32 accumulator, an f16 accumulator and an f16 A
// matrix with element i of invocation l set to 64 l + i (exact in f16 below 2,048) and stores
// them row-major: the f32 matrix at out_, the f16 ones after it. The host reads back which
// invocation and element hold each (row, column).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 32) in;
layout(push_constant) uniform PC {
    uint64_t out_; // 256 f32, then 2 x 256 f16
} pc;

void main() {
    if (gl_SubgroupID != 0) return;
    float l = float(gl_SubgroupInvocationID) * 64.0;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc32;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc16;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a16;
    for (int i = 0; i < acc32.length(); i++) acc32[i] = l + float(i);
    for (int i = 0; i < acc16.length(); i++) acc16[i] = float16_t(l + float(i));
    for (int i = 0; i < a16.length(); i++) a16[i] = float16_t(l + float(i));
    coopMatStore(acc32, F32Buf(pc.out_).v, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(acc16, F16Buf(pc.out_ + 1024).v, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(a16, F16Buf(pc.out_ + 1536).v, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
