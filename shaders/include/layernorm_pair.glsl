// LayerNorm statistics of a row held by two adjacent invocations of a subgroup (2r and 2r + 1),
// each with half of the row's W channels in registers as NQ vec4s in the array v: the mean, then
// the variance around it, as the reference takes them (docs/NETWORK.md §4), into mean and inv
// (1 / sqrt(var + 1e-5)). Where a workgroup stages its rows through a norm: stage_rows
// (coop_direct.glsl) and stage_window (attention_coop.comp). Needs
// GL_KHR_shader_subgroup_shuffle.
#ifndef TS_LAYERNORM_PAIR
#define TS_LAYERNORM_PAIR
#define LN_PAIR_STATS(v, NQ, W, mean, inv) { \
    float s_ = 0.0; \
    for (uint j_ = 0; j_ < (NQ); j_++) { s_ += v[j_].x; s_ += v[j_].y; s_ += v[j_].z; s_ += v[j_].w; } \
    mean = (s_ + subgroupShuffleXor(s_, 1)) / float(W); \
    float q_ = 0.0; \
    for (uint j_ = 0; j_ < (NQ); j_++) { \
        vec4 d_ = v[j_] - mean; \
        q_ += d_.x * d_.x; q_ += d_.y * d_.y; q_ += d_.z * d_.z; q_ += d_.w * d_.w; \
    } \
    inv = 1.0 / sqrt((q_ + subgroupShuffleXor(q_, 1)) / float(W) + 1e-5); }
#endif
