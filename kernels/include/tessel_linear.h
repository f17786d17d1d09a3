// The argument struct of the linear-layer kernels (linear.hip, the portable path, and
// linear_mma.hip, the matrix-core path): both take the same struct and flags, so hip-net's plan
// switches kernels without changing arguments (hip-net/src/plan.rs, `LinearArgs`).
#pragma once
#include "tessel_gpu.h"

struct LinearArgs {
    const void* x;
    void* y;
    const ts_half* w;
    const ts_half* b;
    const ts_half* aux;    // MODE_HEAD: the token buffer (null: no per-pixel head path)
    const ts_half* aux_w;  // MODE_HEAD: pixel_head.weight [8, p]
    const ts_half* aux_b;  // MODE_HEAD: pixel_head.bias [8]
    const ts_half* gamma;  // LAYER_NORM: weight [in]
    const ts_half* beta;   // LAYER_NORM: bias [in]
    ts_uint tokens;        // output tokens (MODE_EXPAND: input tokens)
    ts_uint width;         // grid width in tokens: of the output (MERGE) or of the input (EXPAND)
    ts_uint in;
    ts_uint out;
    ts_uint p;             // pixel embedding width
    ts_uint flags;
};
