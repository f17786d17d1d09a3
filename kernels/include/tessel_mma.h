// Matrix-core primitives for the network kernels, behind neutral names: one 16x16x16 f16 tile
// product with f32 accumulation, in the register layout of the platform's matrix instruction,
// and the few warp operations the fused kernels need around it. Only NVIDIA mma.sync
// (m16n8k16, sm_80 and later) is written; a target without it defines no TS_HAS_MMA and its code
// object holds no matrix kernels (hip-net then runs the portable kernels).
//
// Layouts (one warp of 32 lanes, g = lane / 4, t = lane % 4), PTX ISA "mma.m16n8k16":
//   A (16x16, row-major), 4 registers of two halves: [0] row g, cols 2t..2t+1; [1] row g+8, the
//     same cols; [2] row g, cols 2t+8..2t+9; [3] row g+8, cols 2t+8..2t+9.
//   B (16x8, column-major), 2 registers: [0] rows 2t..2t+1 of col g; [1] rows 2t+8..2t+9.
//   C/D (16x8, f32), 4 floats: [0..1] row g, cols 2t..2t+1; [2..3] row g+8, the same cols.
// Two adjacent C tiles (cols 0-7 and 8-15), rounded to f16, are exactly one A tile: a result
// feeds the next product without leaving registers (ts_c_to_a).
#pragma once
#include "tessel_gpu.h"

#if defined(__NVPTX__) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TS_HAS_MMA 1

#define TS_INLINE TS_DEVICE __attribute__((always_inline))

typedef _Float16 ts_half2 __attribute__((ext_vector_type(2)));
typedef float ts_float2 __attribute__((ext_vector_type(2)));

// Two floats rounded to f16 and packed (lo in the low half): one cvt.rn.f16x2.f32 (sm_80),
// the first operand going to the high half.
TS_DEVICE ts_uint ts_pack(float lo, float hi) {
    ts_uint u;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(hi), "f"(lo));
    return u;
}

// SiLU as x sigmoid(x) = h + h tanh(h), h = x / 2 (tessel_block.h's TS_SILU_MODE): tanh.approx
// (sm_75) is one special-function instruction per value, against two (an exponential and a
// reciprocal) for x / (1 + exp(-x)).
TS_DEVICE float ts_silu_tanh(float x) {
    float h = 0.5f * x, t;
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(h));
    return __builtin_fmaf(h, t, h);
}

// Two adjacent halves (4-byte aligned) as one register.
TS_DEVICE ts_uint ts_ld2(const ts_half* p) { return *(const ts_uint*)p; }

// The two halves of a register widened to f32 (exact), the low half first.
TS_DEVICE ts_float2 ts_unpack(ts_uint u) {
    ts_half2 h = __builtin_bit_cast(ts_half2, u);
    return ts_float2{(float)h.x, (float)h.y};
}

// Sum and maximum over the four lanes of a row group (lanes 4g .. 4g+3).
TS_DEVICE float ts_quad_sum(float v) {
    v += __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, 1, 0x1f);
    v += __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, 2, 0x1f);
    return v;
}
TS_DEVICE float ts_quad_max(float v) {
    v = ts_max(v, __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, 1, 0x1f));
    v = ts_max(v, __nvvm_shfl_sync_bfly_f32(0xffffffffu, v, 2, 0x1f));
    return v;
}

// d += a * b: A 16x16 (4 registers), B 16x8 (2 registers), D 16x8 f32.
TS_DEVICE void ts_mma(float d[4], const ts_uint a[4], ts_uint b0, ts_uint b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// d += a * b with k = 8: A 16x8 (2 registers: row g and row g+8, cols 2t..2t+1), B 8x8 (one).
TS_DEVICE void ts_mma_k8(float d[4], ts_uint a0, ts_uint a1, ts_uint b) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(b));
}

TS_DEVICE void ts_warp_sync() { __nvvm_bar_warp_sync(0xffffffffu); }

typedef ts_uint ts_uint4 __attribute__((ext_vector_type(4)));

// 16 bytes from global to shared memory without going through registers (cp.async, sm_80):
// the copy runs while the warp goes on; ts_cp_async_commit closes a group of copies and
// ts_cp_async_wait_all waits for every copy this thread issued.
TS_DEVICE void ts_cp_async16(void* shared_dst, const void* global_src) {
    asm volatile("{\n .reg .u64 s;\n cvta.to.shared.u64 s, %0;\n cp.async.cg.shared.global [s], [%1], 16;\n}" ::"l"(shared_dst), "l"(global_src) : "memory");
}
// The same with L2's evict-first policy for the line (createpolicy, sm_80): data read once,
// which should not push what the next launch reads out of L2.
TS_DEVICE void ts_cp_async16_once(void* shared_dst, const void* global_src) {
    asm volatile("{\n .reg .u64 s, pol;\n cvta.to.shared.u64 s, %0;\n createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
                 " cp.async.cg.shared.global.L2::cache_hint [s], [%1], 16, pol;\n}" ::"l"(shared_dst), "l"(global_src) : "memory");
}
// L2 policies for cp.async (createpolicy, sm_80): evict-first for every line, or the line's
// priority unchanged (as with no hint), chosen at run time without a branch per copy.
TS_DEVICE unsigned long long ts_policy_once(bool first) {
    unsigned long long a, b;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(a));
    asm("createpolicy.fractional.L2::evict_unchanged.b64 %0, 1.0;" : "=l"(b));
    return first ? a : b;
}
// ts_cp_async16 with a policy of ts_policy_once.
TS_DEVICE void ts_cp_async16_policy(void* shared_dst, const void* global_src, unsigned long long pol) {
    asm volatile("{\n .reg .u64 s;\n cvta.to.shared.u64 s, %0;\n cp.async.cg.shared.global.L2::cache_hint [s], [%1], 16, %2;\n}" ::"l"(shared_dst), "l"(global_src), "l"(pol) : "memory");
}
// 16-byte global load and store marked as streaming (.cs: evict first from L1 and L2).
TS_DEVICE ts_uint4 ts_ld16_once(const void* g) {
    ts_uint4 v;
    asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(g));
    return v;
}
TS_DEVICE void ts_st16_once(void* g, ts_uint4 v) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(g), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
TS_DEVICE void ts_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
TS_DEVICE void ts_cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
// Waits until at most the newest of this thread's groups is still in flight.
TS_DEVICE void ts_cp_async_wait_but_one() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
// Waits until at most the newest N of this thread's groups are still in flight.
template <int N>
TS_DEVICE void ts_cp_async_wait_group() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// Ask L2 for the 128-byte line holding `p` without waiting for it (prefetch.global.L2): the
// later load finds it there instead of in device memory.
TS_DEVICE void ts_prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
// The same, the line kept ahead of lines loaded without a policy (L2::evict_last, sm_80).
TS_DEVICE void ts_prefetch_l2_last(const void* p) { asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p)); }
TS_DEVICE ts_uint ts_grid_x() { return __nvvm_read_ptx_sreg_nctaid_x(); }


// The A tile made of two C tiles (cols 0-7: lo, cols 8-15: hi), each scaled per row.
TS_DEVICE void ts_c_to_a(ts_uint a[4], const float lo[4], const float hi[4], float row0, float row1) {
    a[0] = ts_pack(lo[0] * row0, lo[1] * row0);
    a[1] = ts_pack(lo[2] * row1, lo[3] * row1);
    a[2] = ts_pack(hi[0] * row0, hi[1] * row0);
    a[3] = ts_pack(hi[2] * row1, hi[3] * row1);
}

typedef ts_uint ts_uint2 __attribute__((ext_vector_type(2)));

// Weights in fragment order (hip-net/src/weights.rs): a matrix W [n][k] as B tiles, tile
// (nt, kt) of 8 rows and 16 columns being 32 lanes x 2 registers side by side, so a warp reads
// one tile's operands as one coalesced 256-byte load. This lane's registers of tile (nt, kt),
// for a matrix of `kts` = k / 16 column tiles:
TS_DEVICE const ts_uint2* ts_frag(const void* w, ts_uint nt, ts_uint kts, ts_uint kt) {
    return (const ts_uint2*)w + (nt * kts + kt) * 32 + ts_lane();
}

// d += A (KT tiles along k) * W^T for the 8 output columns of one row tile: `wf` is
// ts_frag(w, nt, kts, k0) (consecutive column tiles are 32 slots apart).
template <int KT>
TS_DEVICE void ts_mma_frag(float d[4], const ts_uint a[][4], const ts_uint2* wf) {
#pragma unroll
    for (int kt = 0; kt < KT; kt++) {
        ts_uint2 b = wf[kt * 32];
        ts_mma(d, a[kt], b.x, b.y);
    }
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// sm_90a (the PTX of the `sm_90a` code object, run only on compute capability 9.0): warpgroup
// products (wgmma.mma_async). A window's four warps are one warpgroup; each warp gives its 16 rows
// of A from registers in the mma.sync A layout above and receives its 16 rows of D in the C
// layout (tile i of 8 columns in d[i][0..3]), so the fused blocks keep their register layouts.
// B, K x N, comes from shared memory in K-major core matrices (8 rows of N by 16 bytes of K, 128
// contiguous bytes), read once for the four warps instead of once per warp.
#define TS_HAS_WGMMA 1
typedef unsigned long long ts_u64;

// The shared-memory matrix descriptor of B at `smem` (16-byte aligned): core matrices adjacent in
// K `lbo` bytes apart, adjacent in N `sbo` bytes apart, no swizzle.
TS_DEVICE ts_u64 ts_wgmma_desc(const void* smem, ts_uint lbo, ts_uint sbo) {
    ts_uint a;
    asm("{\n .reg .u64 t;\n cvta.to.shared.u64 t, %1;\n cvt.u32.u64 %0, t;\n}" : "=r"(a) : "l"(smem));
    return (ts_u64)((a & 0x3ffffu) >> 4) | ((ts_u64)((lbo & 0x3ffffu) >> 4) << 16) | ((ts_u64)((sbo & 0x3ffffu) >> 4) << 32);
}
// Before a group of products whose A or D registers ordinary instructions wrote; after it, wait.
TS_DEVICE void ts_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
TS_DEVICE void ts_wgmma_wait() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}
// Shared memory written through ordinary stores or cp.async, made visible to the products.
TS_DEVICE void ts_fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// The tensor memory accelerator's bulk copy (sm_90): one thread copies `bytes` (a multiple of
// 16, both ends 16-byte aligned) from global to shared memory and the copy completes a phase of
// the mbarrier `bar` (one arrival, expecting that many bytes); every thread that needs the data
// waits for the phase's parity.
TS_DEVICE void ts_mbar_init(ts_u64* bar) {
    asm volatile("{\n .reg .u64 b;\n cvta.to.shared.u64 b, %0;\n mbarrier.init.shared::cta.b64 [b], 1;\n}" ::"l"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
TS_DEVICE void ts_bulk_copy(void* dst, const void* src, ts_uint bytes, ts_u64* bar) {
    asm volatile("{\n .reg .u64 d, b;\n .reg .b64 st;\n cvta.to.shared.u64 d, %0;\n cvta.to.shared.u64 b, %3;\n"
                 " mbarrier.arrive.expect_tx.shared::cta.b64 st, [b], %2;\n"
                 " cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [d], [%1], %2, [b];\n}" ::"l"(dst), "l"(src), "r"(bytes), "l"(bar)
                 : "memory");
}
TS_DEVICE void ts_mbar_wait(ts_u64* bar, ts_uint parity) {
    ts_uint done = 0;
    while (!done) {
        asm volatile("{\n .reg .u64 b;\n .reg .pred p;\n cvta.to.shared.u64 b, %1;\n mbarrier.try_wait.parity.shared::cta.b64 p, [b], %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done) : "l"(bar), "r"(parity) : "memory");
    }
}
// B not transposed: K-major. (Built with TS_WGMMA_TRANS_B=1, a wrong layout, the network's head
// fell to 14.8 dB against the CPU reference on the H200 and every agreement test failed:
// BENCHMARKS.md, fourteenth session.)
#ifndef TS_WGMMA_TRANS_B
#define TS_WGMMA_TRANS_B 0
#endif
#define TS_STR2(x) #x
#define TS_STR(x) TS_STR2(x)
// d += A B for N = 16: d[2][4] per warp.
TS_DEVICE void ts_wgmma_n16(float d[2][4], const ts_uint a[4], ts_u64 b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, 1, 1, 1, " TS_STR(TS_WGMMA_TRANS_B) ";"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// d += A B for N = 32: d[4][4] per warp.
TS_DEVICE void ts_wgmma_n32(float d[4][4], const ts_uint a[4], ts_u64 b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, {%16,%17,%18,%19}, %20, 1, 1, 1, " TS_STR(TS_WGMMA_TRANS_B) ";"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// d += A B for N = 48: d[6][4] per warp.
TS_DEVICE void ts_wgmma_n48(float d[6][4], const ts_uint a[4], ts_u64 b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n48k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23}, {%24,%25,%26,%27}, %28, 1, 1, 1, " TS_STR(TS_WGMMA_TRANS_B) ";"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// d += A B for N = 64: d[8][4] per warp.
TS_DEVICE void ts_wgmma_n64(float d[8][4], const ts_uint a[4], ts_u64 b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, 1, 1, 1, " TS_STR(TS_WGMMA_TRANS_B) ";"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// d += A B for N = 80: d[10][4] per warp.
TS_DEVICE void ts_wgmma_n80(float d[10][4], const ts_uint a[4], ts_u64 b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n80k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39}, {%40,%41,%42,%43}, %44, 1, 1, 1, " TS_STR(TS_WGMMA_TRANS_B) ";"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// d += A B for N = 96: d[12][4] per warp.
TS_DEVICE void ts_wgmma_n96(float d[12][4], const ts_uint a[4], ts_u64 b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n96k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47}, {%48,%49,%50,%51}, %52, 1, 1, 1, " TS_STR(TS_WGMMA_TRANS_B) ";"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// d += A B for N = 112: d[14][4] per warp.
TS_DEVICE void ts_wgmma_n112(float d[14][4], const ts_uint a[4], ts_u64 b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n112k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55}, {%56,%57,%58,%59}, %60, 1, 1, 1, " TS_STR(TS_WGMMA_TRANS_B) ";"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// d += A B for N = 128: d[16][4] per warp.
TS_DEVICE void ts_wgmma_n128(float d[16][4], const ts_uint a[4], ts_u64 b) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, 1, 1, 1, " TS_STR(TS_WGMMA_TRANS_B) ";"
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// d += A B for N = 8 NT of 16, 32, 48, 64, 80, 96, 112 or 128.
template <int NT>
TS_DEVICE void ts_wgmma(float d[NT][4], const ts_uint a[4], ts_u64 b) {
    static_assert(NT % 2 == 0 && NT >= 2 && NT <= 16, "wgmma: N of 16 to 128 in steps of 16");
    if constexpr (NT == 2) ts_wgmma_n16(d, a, b);
    if constexpr (NT == 4) ts_wgmma_n32(d, a, b);
    if constexpr (NT == 6) ts_wgmma_n48(d, a, b);
    if constexpr (NT == 8) ts_wgmma_n64(d, a, b);
    if constexpr (NT == 10) ts_wgmma_n80(d, a, b);
    if constexpr (NT == 12) ts_wgmma_n96(d, a, b);
    if constexpr (NT == 14) ts_wgmma_n112(d, a, b);
    if constexpr (NT == 16) ts_wgmma_n128(d, a, b);
}
#endif
#endif
