// Constants shared by the shaders and the Rust side (vk-stages/build.rs turns every
// `#define TS_NAME value` line of this file into `pub const NAME: u32 = value;`).
// Only integer literals here.

// Workgroup sizes.
#define TS_WG_PIXELS_X 8
#define TS_WG_PIXELS_Y 8
#define TS_WG_REDUCE 256
#define TS_WG_TOKENS 64
// Outputs each invocation of the linear shader computes (OUT must be a multiple of it).
#define TS_LINEAR_OUTS 16

// Frame-parameter slots: frame N uses slot N mod TS_PARAM_SLOTS, so frames can be recorded
// while earlier ones are still queued.
#define TS_PARAM_SLOTS 8

// Per-pixel history record: 8 halves (r, g, b tonemapped; nearness; memory 0, 1; 2 unused).
#define TS_HISTORY_HALVES 8

// Token, window and head geometry (docs/NETWORK.md).
#define TS_TOKEN 4
#define TS_WINDOW 8
#define TS_WINDOW_TOKENS 64
#define TS_HEAD_DIM 16
#define TS_RPB_ENTRIES 225
#define TS_FEATURES 16
#define TS_HEAD_CHANNELS 8

// Spec-constant ids of the linear shader.
#define TS_SPEC_IN 0
#define TS_SPEC_OUT 1
#define TS_SPEC_ACT 2
#define TS_SPEC_MODE 3
#define TS_SPEC_RESIDUAL 4
#define TS_SPEC_IN_F16 5
#define TS_SPEC_OUT_F16 6
#define TS_SPEC_P 7
#define TS_SPEC_LN 8
#define TS_SPEC_STAGE 9
#define TS_SPEC_COLS 10
#define TS_SPEC_TOKEN_TILE 11
#define TS_SPEC_ROWS 12
#define TS_SPEC_THREADS 13

// Linear modes.
#define TS_MODE_PLAIN 0
#define TS_MODE_MERGE 1
#define TS_MODE_EXPAND 2
#define TS_MODE_HEAD 3

// Cooperative-matrix linear tile: rows (tokens) x columns (outputs) per workgroup, threads
// (two invocations per row: the LayerNorm statistics take a row's halves). The rows are a
// specialisation constant (TESSEL_VK_COOP_ROWS=32|64|128 for tuning); these are the defaults
// and the widest output chunk.
#define TS_COOP_ROWS 64
#define TS_COOP_COLS 64
#define TS_COOP_THREADS 128
