// tessel's portability header for the network kernels: neutral names over clang's device
// compilation for AMD GPUs (HIP, amdgcn) and NVIDIA GPUs (CUDA, nvptx), with no vendor headers.
// Every kernel file includes this and nothing else from outside kernels/.
#pragma once

#define TS_KERNEL extern "C" __attribute__((global))
#define TS_DEVICE static __attribute__((device)) inline
#define TS_SHARED __attribute__((shared))

typedef _Float16 ts_half;
typedef unsigned int ts_uint;

#if defined(__AMDGPU__)
#define TS_BOUNDS(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
// A workgroup bound and the least number of workgroups a compute unit should hold at once
// (the register budget follows from it on NVIDIA; AMD takes only the bound).
#define TS_BOUNDS_OCC(n, m) __attribute__((amdgpu_flat_work_group_size(1, n)))
TS_DEVICE ts_uint ts_thread_x() { return __builtin_amdgcn_workitem_id_x(); }
TS_DEVICE ts_uint ts_block_x() { return __builtin_amdgcn_workgroup_id_x(); }
TS_DEVICE ts_uint ts_block_y() { return __builtin_amdgcn_workgroup_id_y(); }
// This thread's lane in its wave (32 or 64 lanes).
TS_DEVICE ts_uint ts_lane() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
TS_DEVICE void ts_sync() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
#define TS_LOG2E 1.4426950408889634f
TS_DEVICE float ts_exp2(float x) { return __builtin_amdgcn_exp2f(x); }
TS_DEVICE float ts_exp(float x) { return ts_exp2(x * TS_LOG2E); }
// Hardware reciprocal and reciprocal square root (about 1 ulp): every use rounds to f16 soon
// after, and the IEEE sequences cost many instructions each.
TS_DEVICE float ts_rcp(float x) { return __builtin_amdgcn_rcpf(x); }
TS_DEVICE float ts_rsqrt(float x) { return __builtin_amdgcn_rsqf(x); }
#elif defined(__NVPTX__)
#define TS_BOUNDS(n) __attribute__((launch_bounds(n)))
#define TS_BOUNDS_OCC(n, m) __attribute__((launch_bounds(n, m)))
TS_DEVICE ts_uint ts_thread_x() { return __nvvm_read_ptx_sreg_tid_x(); }
TS_DEVICE ts_uint ts_block_x() { return __nvvm_read_ptx_sreg_ctaid_x(); }
TS_DEVICE ts_uint ts_block_y() { return __nvvm_read_ptx_sreg_ctaid_y(); }
// This thread's lane in its warp.
TS_DEVICE ts_uint ts_lane() { return __nvvm_read_ptx_sreg_laneid(); }
TS_DEVICE void ts_sync() { __syncthreads(); }
#define TS_LOG2E 1.4426950408889634f
// The flush-to-zero forms: one MUFU instruction each. Without .ftz the JIT wraps every one in a
// range test and two scalings for subnormal inputs and results, which nothing here produces or
// needs (an exponential below 2^-126 rounds to 0 in f16 anyway).
TS_DEVICE float ts_exp2(float x) { return __nvvm_ex2_approx_ftz_f(x); }
TS_DEVICE float ts_exp(float x) { return ts_exp2(x * TS_LOG2E); }
TS_DEVICE float ts_rcp(float x) { return __nvvm_rcp_approx_ftz_f(x); }
TS_DEVICE float ts_rsqrt(float x) { return __nvvm_rsqrt_approx_ftz_f(x); }
#else
#error "tessel kernels build only for amdgcn or nvptx device targets"
#endif

TS_DEVICE float ts_max(float a, float b) { return __builtin_fmaxf(a, b); }  // one instruction; no NaN reaches it
TS_DEVICE float ts_silu(float x) { return x * ts_rcp(1.0f + ts_exp(-x)); }

// Geometry shared with the Vulkan shaders (shaders/include/bindings.h) and docs/NETWORK.md.
#define TS_WINDOW 8
#define TS_WINDOW_TOKENS 64
#define TS_HEAD_DIM 16
#define TS_RPB_ENTRIES 225
#define TS_HEAD_CHANNELS 8
#define TS_TOKEN_PIXELS 16
#define TS_LINEAR_OUTS 16
#define TS_BLOCK_TOKENS 64

// Flags of tessel_linear (hip-net's plan sets them; the same variants as shaders/linear.comp).
#define TS_ACT_SILU 1u
#define TS_RESIDUAL 2u
#define TS_IN_F16 4u
#define TS_OUT_F16 8u
#define TS_LAYER_NORM 16u
#define TS_MODE_SHIFT 5u
#define TS_MODE_PLAIN 0u
#define TS_MODE_MERGE 1u
#define TS_MODE_EXPAND 2u
#define TS_MODE_HEAD 3u
