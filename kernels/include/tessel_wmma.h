// AMD matrix cores for the network kernels, behind neutral names: one 16x16x16 f16 tile product
// with f32 accumulation per wave (WMMA on RDNA3 gfx11 and RDNA4 gfx12, waves of 32; MFMA on CDNA2
// gfx90a and CDNA3 gfx942, waves of 64), and the few wave operations around it. RDNA2 (gfx1030)
// has no matrix cores and defines no TS_HAS_WMMA.
//
// Layouts, lane = 16 h + n (n = 0..15; h = 0, 1 in a wave of 32, 0..3 in one of 64), per the ISAs'
// matrix-instruction chapters:
//   gfx11  A (16x16): the lane holds row n, k = 0..15 (16 halves); lanes n and n + 16 hold the same.
//          B (16x16): the lane holds column n, k = 0..15, the same in both halves.
//          D (16x16, f32): element i (0..7) is row 2i + h, column n.
//   gfx12  A: the lane holds row n, k = 8h..8h+7 (8 halves); B: column n, k = 8h..8h+7.
//          D: element i is row 8h + i, column n.
//   gfx9   (v_mfma_f32_16x16x16f16) A: the lane holds row n, k = 4h..4h+3 (4 halves); B: column
//          n, k = 4h..4h+3. D (4 floats): element i is row 4h + i, column n.
// So an A row and a B column are each 16 (gfx11) or 8 (gfx12) consecutive halves of a row-major
// matrix (4 on gfx9): the linear layers read W [out][in] as it is stored, no fragment order.
//
// NVIDIA PTX gets the gfx11 layout emulated with warp shuffles (TS_WMMA_EMULATED): slow, but the
// same kernel source runs there and is checked against the CPU reference on an NVIDIA GPU
// (hip-net: TESSEL_HIP_WMMA=1), since no AMD GPU is at hand. What an emulation cannot check is the
// hardware's own layout; hip-net therefore runs a product of known operands through the WMMA
// kernel at load on AMD and keeps the path only if it matches (hip-net/src/network.rs).
#pragma once
#include "tessel_gpu.h"

#if defined(__AMDGPU__) && defined(__GFX9__) && (defined(__gfx90a__) || defined(__gfx942__)) && __AMDGCN_WAVEFRONT_SIZE == 64
#define TS_WMMA_MFMA 1
#endif
#if (defined(__AMDGPU__) && (defined(__GFX11__) || defined(__GFX12__)) && __AMDGCN_WAVEFRONT_SIZE == 32) || defined(TS_WMMA_MFMA) || defined(__NVPTX__)
#define TS_HAS_WMMA 1
#define TS_WMMA_INLINE TS_DEVICE __attribute__((always_inline))

typedef ts_uint ts_uint8v __attribute__((ext_vector_type(8)));

#if defined(TS_WMMA_MFMA)
#define TS_WMMA_WAVE 64
#define TS_WMMA_K 4  // halves of k a lane holds per operand
#define TS_WMMA_D 4  // floats of D a lane holds
#elif defined(__GFX12__)
#define TS_WMMA_WAVE 32
#define TS_WMMA_K 8
#define TS_WMMA_D 8
#else
#define TS_WMMA_WAVE 32
#define TS_WMMA_K 16
#define TS_WMMA_D 8
#endif
typedef _Float16 ts_wfrag __attribute__((ext_vector_type(TS_WMMA_K)));
typedef float ts_wacc __attribute__((ext_vector_type(TS_WMMA_D)));
// An operand read from memory: a slice of a row starts at a multiple of its own size (8 bytes on
// gfx9, 16 elsewhere; the 32 bytes of gfx11's are two slices of 16) and no more.
#if TS_WMMA_K == 4
typedef ts_wfrag ts_wfrag_mem __attribute__((aligned(8)));
#else
typedef ts_wfrag ts_wfrag_mem __attribute__((aligned(16)));
#endif

#if defined(__AMDGPU__)
// The value of lane ^ m.
TS_WMMA_INLINE float ts_wave_xor(float v, ts_uint m) {
    return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((int)((ts_lane() ^ m) << 2), __builtin_bit_cast(int, v)));
}
#else
TS_WMMA_INLINE float ts_wave_xor(float v, ts_uint m) { return __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, (int)m, 0x1f); }
#endif
// The sum of v over the lanes that hold the same row n (2 in a wave of 32, 4 in one of 64).
TS_WMMA_INLINE float ts_wmma_row_sum(float v) {
    v += ts_wave_xor(v, 16u);
#if TS_WMMA_WAVE == 64
    v += ts_wave_xor(v, 32u);
#endif
    return v;
}

// The first k (within a 16-wide tile) of this lane's operand halves.
TS_WMMA_INLINE ts_uint ts_wmma_k0(ts_uint lane) {
#if defined(TS_WMMA_MFMA)
    return 4u * (lane / 16u);
#elif defined(__GFX12__)
    return 8u * (lane / 16u);
#else
    (void)lane;
    return 0u;
#endif
}

// The row of D element i in this lane (its column is lane % 16).
TS_WMMA_INLINE ts_uint ts_wmma_row(ts_uint lane, ts_uint i) {
#if defined(TS_WMMA_MFMA)
    return 4u * (lane / 16u) + i;
#elif defined(__GFX12__)
    return 8u * (lane / 16u) + i;
#else
    return 2u * i + lane / 16u;
#endif
}

// d = a b + c.
TS_WMMA_INLINE ts_wacc ts_wmma(ts_wfrag a, ts_wfrag b, ts_wacc c) {
#if defined(TS_WMMA_MFMA)
    return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
#elif defined(__GFX12__)
    return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, c);
#elif defined(__GFX11__)
    return __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c);
#else
#define TS_WMMA_EMULATED 1
    // gfx11's layout: this lane's element i is row r = 2i + h, column n, the sum over k of
    // A[r][k] B[k][n]; row r of A is lane r's fragment (lanes 0..15), fetched a word at a time.
    ts_uint lane = ts_lane();
    ts_uint8v aw = __builtin_bit_cast(ts_uint8v, a);
#pragma unroll
    for (int i = 0; i < 8; i++) {
        ts_uint r = 2u * (ts_uint)i + lane / 16u;
        float s = c[i];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            ts_uint w = (ts_uint)__nvvm_shfl_sync_idx_i32(0xffffffffu, (int)aw[j], (int)r, 0x1f);
            _Float16 lo = __builtin_bit_cast(_Float16, (unsigned short)(w & 0xffffu));
            _Float16 hi = __builtin_bit_cast(_Float16, (unsigned short)(w >> 16));
            s += (float)lo * (float)b[2 * j] + (float)hi * (float)b[2 * j + 1];
        }
        c[i] = s;
    }
    return c;
#endif
}
#endif
