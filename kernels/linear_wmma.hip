// Every linear layer of the network on AMD matrix cores (WMMA on gfx11 and gfx12, MFMA on gfx90a
// and gfx942; emulated on NVIDIA for the checks, include/tessel_wmma.h): the same arguments, flags
// and weights as the portable tessel_linear (W [out, in] as stored), so hip-net's plan swaps the
// kernel and its launch shape only. One wave per 16 tokens, TS_WMMA_WAVES waves per workgroup
// (128 threads in waves of 32, 256 in waves of 64). A wave stages its 16 input rows
// in shared memory (the merge's gather and the LayerNorm applied, rounded to f16), then walks the
// outputs 16 at a time: per 16-wide slice of the inputs one product of its rows (A, from shared
// memory) and 16 weight rows (B, from global memory, each lane one row's consecutive halves); the
// portable kernel's store does the epilogue per output. Inputs a multiple of 16 up to
// TS_WMMA_MAX_IN, outputs a multiple of 16 (kernels/src/lib.rs `wmma_linear_fits`).
#include "tessel_linear.h"
#include "tessel_wmma.h"

#if defined(TS_HAS_WMMA)
#define TS_WMMA_WAVES 4
#define TS_WMMA_MAX_IN 256
// Halves per staged row: 8 more than the widest input, so consecutive rows start 16 bytes apart
// in the banks and every 16-wide slice stays 16-byte aligned.
#define TS_WMMA_ROW (TS_WMMA_MAX_IN + 8)

TS_KERNEL TS_BOUNDS(TS_WMMA_WAVE * TS_WMMA_WAVES) void tessel_linear_wmma(LinearArgs a) {
    TS_SHARED ts_half rows[TS_WMMA_WAVES][16][TS_WMMA_ROW] __attribute__((aligned(16)));  // operands are read 16 bytes at a time
    ts_uint lane = ts_lane(), wave = ts_thread_x() / TS_WMMA_WAVE;
    ts_uint n = lane % 16u, h = lane / 16u;
    ts_uint row0 = (ts_block_x() * TS_WMMA_WAVES + wave) * 16u;
    ts_uint mode = (a.flags >> TS_MODE_SHIFT) & 3u;
    // Staging: the lanes n, n + 16, ... share row n, each an equal part of its inputs (the
    // LayerNorm's sums combined across them). Rows past the last token are zeros, never stored.
    ts_uint t = row0 + n, half = a.in / (TS_WMMA_WAVE / 16u), i0 = h * half;
    bool live = t < a.tokens;
    float mean = 0.0f, inv = 1.0f;
    if (a.flags & TS_LAYER_NORM) {
        float s = 0.0f;
        for (ts_uint i = i0; live && i < i0 + half; i++) s += linear_input(a, mode, t, i);
        mean = ts_wmma_row_sum(s) / (float)a.in;
        float q = 0.0f;
        for (ts_uint i = i0; live && i < i0 + half; i++) {
            float d = linear_input(a, mode, t, i) - mean;
            q += d * d;
        }
        inv = ts_rsqrt(ts_wmma_row_sum(q) / (float)a.in + 1e-5f);
    }
    for (ts_uint i = i0; i < i0 + half; i++) {
        float v = 0.0f;
        if (live) {
            v = linear_input(a, mode, t, i);
            if (a.flags & TS_LAYER_NORM) v = (v - mean) * inv * (float)a.gamma[i] + (float)a.beta[i];
        }
        rows[wave][n][i] = (ts_half)v;
    }
    ts_sync();
    const ts_wfrag_mem* arow = (const ts_wfrag_mem*)&rows[wave][n][ts_wmma_k0(lane)];
    for (ts_uint o0 = 0; o0 < a.out; o0 += 16u) {
        const ts_wfrag_mem* brow = (const ts_wfrag_mem*)(a.w + (o0 + n) * a.in + ts_wmma_k0(lane));
        ts_wacc acc = {};
        for (ts_uint kt = 0; kt < a.in / 16u; kt++) acc = ts_wmma(arow[kt * (16 / TS_WMMA_K)], brow[kt * (16 / TS_WMMA_K)], acc);
#pragma unroll
        for (int i = 0; i < TS_WMMA_D; i++) {
            ts_uint r = row0 + ts_wmma_row(lane, (ts_uint)i);
            if (r < a.tokens) linear_store(a, mode, r, o0 + n, acc[i]);
        }
    }
}
#endif
