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
// (BENCHMARKS.md, fifty-third session). -DTS_MERGE_OCC=1 restores the merge's former bound.
// TS_PLAIN_OCC (4 by default on sm_90a): the same for the plain block at 80 and 96 channels (a
// bottleneck's second block, mid.1): one wave instead of two, 0.033 -> 0.026-0.027 ms on the
// H100, the split frame's network 0.502 -> 0.496 ms (BENCHMARKS.md, fifty-ninth session). At 96
// channels it spills values its end needs past the peak of its attention (32 bytes, stored once
// and loaded once a thread; tessel_kernels::nvidia_spill_allowance), at 80 nothing.
// -DTS_PLAIN_OCC=1 restores "one at least". TS_WIDE_OCC: the bound of the other variants above
// 64 channels (-DTS_WIDE_OCC=4 builds them so too, for timing; most spill).
#if !defined(TS_HAS_WGMMA)
#undef TS_MERGE_OCC
#undef TS_WIDE_OCC
#undef TS_PLAIN_OCC
#define TS_MERGE_OCC 1
#define TS_WIDE_OCC 1
#define TS_PLAIN_OCC 1
#endif
#ifndef TS_MERGE_OCC
#define TS_MERGE_OCC 4
#endif
#ifndef TS_WIDE_OCC
#define TS_WIDE_OCC 1
#endif
#ifndef TS_PLAIN_OCC
#define TS_PLAIN_OCC 4
#endif
#define TS_BLOCK_BOUNDS_WIDER TS_BOUNDS_OCC(TS_BLOCK_THREADS, TS_WIDE_OCC)
#define TS_BLOCK_BOUNDS_MERGE TS_BOUNDS_OCC(TS_BLOCK_THREADS, TS_MERGE_OCC)
#define TS_BLOCK_BOUNDS_PLAIN TS_BOUNDS_OCC(TS_BLOCK_THREADS, TS_PLAIN_OCC)
