// The matrix types and row buffers of the cooperative-matrix shaders that keep their results in
// the accumulators (coop_direct.glsl, mlp_regs_coop.comp).
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
#endif
