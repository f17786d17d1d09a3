#version 460
// The frame's exposure and history state, once per frame (one workgroup): automatic exposure
// from the partials (0.18 / exp(mean ln luma), clamped to [1/256, 256]) or the host's fixed
// value; the history's exposure and validity (none on a reset) for the stages that follow.
#include "common.glsl"
layout(local_size_x = TS_WG_REDUCE) in;
layout(push_constant) uniform PC {
    ParamsBuf params;
    F32Buf partials;
    HistStateBuf hist_state;
    uint partial_count;
} pc;
shared float acc[TS_WG_REDUCE];
void main() {
    uint t = gl_LocalInvocationID.x;
    FrameParams fp = pc.params.p;
    if (fp.auto_exposure != 0u) {
        float v = 0.0;
        for (uint i = t; i < pc.partial_count; i += TS_WG_REDUCE) v += pc.partials.v[i];
        acc[t] = v;
        barrier();
        for (uint s = TS_WG_REDUCE / 2; s > 0; s >>= 1) {
            if (t < s) acc[t] += acc[t + s];
            barrier();
        }
    }
    if (t == 0) {
        if (fp.auto_exposure != 0u) {
            float n = float(fp.render.x * fp.render.y);
            pc.params.p.exposure = clamp(0.18 / exp(acc[0] / n), 1.0 / 256.0, 256.0);
        }
        HistState hs = pc.hist_state.s[fp.hist_read];
        pc.params.p.hist_exposure = hs.exposure;
        pc.params.p.hist_valid = (fp.reset != 0u) ? 0u : hs.valid;
    }
}
