// The argument struct of the window-attention kernels (attention.hip, the portable path, and
// attention_wmma.hip, AMD matrix cores): both take it with the same launch grid, one workgroup per
// (window, head), so hip-net's plan swaps the kernel and its workgroup size only
// (hip-net/src/plan.rs, `AttentionArgs`).
#pragma once
#include "tessel_gpu.h"

struct AttentionArgs {
    const ts_half* qkv;  // [tokens, 3c]
    ts_half* out;        // [tokens, c]
    const ts_half* rpb;  // [heads, 225]
    ts_uint width;       // level grid, tokens
    ts_uint height;
    ts_uint shift_x;
    ts_uint shift_y;
    ts_uint c;
};
