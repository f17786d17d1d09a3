// Launch bounds of the fused block kernels (kernels/block_mma.hip's variant table at its end).
#pragma once

// Launch bounds: the thread bound, and above 64 channels also "one workgroup per SM at least",
// which lets the JIT take more registers (192-199 at C = 96 instead of 166: 7 % faster on the
// H200). Asking five workgroups per SM of the narrower kernels (96 registers at C = 48, from 103)
// made them 3 % slower (BENCHMARKS.md, tenth session).
#define TS_BLOCK_BOUNDS_NARROW TS_BOUNDS(TS_BLOCK_THREADS)
#define TS_BLOCK_BOUNDS_WIDE TS_BOUNDS_OCC(TS_BLOCK_THREADS, 1)
// TS_MERGE_OCC (4 by default on sm_90a): the workgroups per SM the merge into a level above 64
// channels asks for. At 3840x2160 level 2 has 510 windows: at the 167 registers of "one at least"
// three fit an SM, 396 on the H100's 132 SMs, and a second wave of 114 follows; four (at most 128
// registers, 8 bytes on the stack) take them in one wave: merge2+mid.0 0.042 -> 0.032 ms
// (BENCHMARKS.md, fifty-third session). The plain block at 96 channels gained as much (mid.1
// 0.036 -> 0.028 ms) but spills 40 bytes at 128 registers, past the static checks' 16: it keeps
// "one at least" until it fits (-DTS_WIDE_OCC=4 builds every block above 64 channels so, for
// timing). -DTS_MERGE_OCC=1 restores the merge's former bound.
#if !defined(TS_HAS_WGMMA)
#undef TS_MERGE_OCC
#undef TS_WIDE_OCC
#define TS_MERGE_OCC 1
#define TS_WIDE_OCC 1
#endif
#ifndef TS_MERGE_OCC
#define TS_MERGE_OCC 4
#endif
#ifndef TS_WIDE_OCC
#define TS_WIDE_OCC 1
#endif
#define TS_BLOCK_BOUNDS_WIDER TS_BOUNDS_OCC(TS_BLOCK_THREADS, TS_WIDE_OCC)
#define TS_BLOCK_BOUNDS_MERGE TS_BOUNDS_OCC(TS_BLOCK_THREADS, TS_MERGE_OCC)
