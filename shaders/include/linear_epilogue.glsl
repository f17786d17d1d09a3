// The output side of a linear layer, shared by the scalar and the cooperative-matrix shader:
// bias, SiLU, the per-pixel head path, residual add, depth-to-space scatter, f16 head out.
// Needs the push constants `pc` and the specialisation constants of linear.comp.
void linear_store(uint t, uint o, float acc) {
    float v = acc + float(F16Buf(pc.b).v[o]);
    if (ACT == 1) v = silu(v);
    if (MODE == TS_MODE_HEAD && pc.aux != 0ul) {
        uint s = o / TS_HEAD_CHANNELS, kk = o % TS_HEAD_CHANNELS;
        F16Buf tok = F16Buf(pc.aux);
        F16Buf pw = F16Buf(pc.aux_w);
        float ph = 0.0;
        for (int p = 0; p < P; p++) ph += float(pw.v[kk * P + p]) * float(tok.v[(t * 16 + s) * P + p]);
        v += ph + float(F16Buf(pc.aux_b).v[kk]);
    }
    uint dst;
    if (MODE == TS_MODE_EXPAND) {
        const uint COUT = OUT / 4;
        uint q = o / COUT, c = o % COUT;
        uint tx = t % pc.width, ty = t / pc.width;
        dst = ((2 * ty + q / 2) * (2 * pc.width) + 2 * tx + q % 2) * COUT + c;
    } else {
        dst = t * OUT + o;
    }
    if (OUT_F16 != 0) {
        F16Buf(pc.y).v[dst] = float16_t(v);
    } else if (RESIDUAL != 0) {
        F32Buf(pc.y).v[dst] += v;
    } else {
        F32Buf(pc.y).v[dst] = v;
    }
}

// Input element i of output token t (plain rows, f16 tokens, or the 2x2 merge gather).
float linear_input(uint t, uint i) {
    if (MODE == TS_MODE_MERGE) {
        const uint CIN = IN / 4;
        uint q = i / CIN, c = i % CIN;
        uint tx = t % pc.width, ty = t / pc.width;
        uint src = (2 * ty + q / 2) * (2 * pc.width) + 2 * tx + q % 2;
        return F32Buf(pc.x).v[src * CIN + c];
    }
    return IN_F16 != 0 ? float(F16Buf(pc.x).v[t * IN + i]) : F32Buf(pc.x).v[t * IN + i];
}
