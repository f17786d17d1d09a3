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

// The token at in-window position i (row-major in the 8 x 8 window) of window `win` under the
// layer's shift, on the torus of the level's grid (docs/NETWORK.md §4).
TS_DEVICE ts_uint att_token(const AttentionArgs& a, ts_uint win, ts_uint i) {
    ts_uint wins_x = a.width / TS_WINDOW;
    ts_uint wx = win % wins_x, wy = win / wins_x;
    ts_uint x = (wx * TS_WINDOW + i % TS_WINDOW + a.width - a.shift_x % a.width) % a.width;
    ts_uint y = (wy * TS_WINDOW + i / TS_WINDOW + a.height - a.shift_y % a.height) % a.height;
    return y * a.width + x;
}

// The relative-position bias entry of query position i and key position j of a window.
TS_DEVICE ts_uint att_bias_index(ts_uint i, ts_uint j) {
    return (i / TS_WINDOW + 7 - j / TS_WINDOW) * 15 + (i % TS_WINDOW + 7 - j % TS_WINDOW);
}
