// Specialisation and push constants of the linear shaders (linear.comp, linear_coop.comp).
layout(constant_id = TS_SPEC_IN) const int IN = 32;
layout(constant_id = TS_SPEC_OUT) const int OUT = 32;
layout(constant_id = TS_SPEC_ACT) const int ACT = 0;
layout(constant_id = TS_SPEC_MODE) const int MODE = 0;
layout(constant_id = TS_SPEC_RESIDUAL) const int RESIDUAL = 0;
layout(constant_id = TS_SPEC_IN_F16) const int IN_F16 = 0;
layout(constant_id = TS_SPEC_OUT_F16) const int OUT_F16 = 0;
layout(constant_id = TS_SPEC_P) const int P = 8;
// LN 1: a LayerNorm over the IN channels of each input row (gamma, beta) comes first.
layout(constant_id = TS_SPEC_LN) const int LN = 0;
// linear_coop.comp: outputs per chunk (64, 32 or 16: what fits the shared memory with the
// chunk's weights), and the row width of its f32 staging tile (LN: max(IN, COLS); else COLS).
layout(constant_id = TS_SPEC_STAGE) const int STAGE = 64;
layout(constant_id = TS_SPEC_COLS) const int COLS = 64;
// The row stride of staged input rows in shared memory (the shaders with results in the
// accumulators): IN and the padding.
const uint IN_S = IN + TS_SHARED_PAD;
layout(push_constant) uniform PC {
    uint64_t x;
    uint64_t y;
    uint64_t w;
    uint64_t b;
    uint64_t aux;     // MODE_HEAD: the token buffer (0: no per-pixel head path)
    uint64_t aux_w;   // MODE_HEAD: pixel_head.weight [8, P]
    uint64_t aux_b;   // MODE_HEAD: pixel_head.bias [8]
    uint64_t gamma;   // LN: LayerNorm weight [IN]
    uint64_t beta;    // LN: LayerNorm bias [IN]
    uint tokens;      // output tokens (MODE_EXPAND: input tokens)
    uint width;       // grid width in tokens: of the output (MERGE) or of the input (EXPAND)
    uint64_t aux2;    // mlp_direct_coop.comp with TS_MLP_PROJ: proj.weight [C, C]
    // mlp_regs_coop.comp with TS_MLP_HEAD: the head's tensors packed (its HEAD_PACK_* offsets),
    // the token buffer (0: no per-pixel head path) and the head buffer.
    uint64_t head_pack;
    uint64_t head_tokens;
    uint64_t head_out;
} pc;
