#version 460
// Window attention on the torus (docs/NETWORK.md §4): one workgroup per (window, head), each
// invocation QPI query tokens (window positions i, i + 64 / QPI, ...). Scores (q.k)/4 + rpb,
// softmax over the 64 keys, weighted values: in one pass with a running maximum (ONLINE) or in
// two. Every key and value read from shared memory serves QPI queries; each query's arithmetic
// is the same, in the same order, whatever QPI.
#include "common.glsl"
layout(local_size_x = TS_WINDOW_TOKENS, local_size_x_id = 1) in;
layout(constant_id = 0) const int C = 32;
// Queries per invocation (1 or 2; the workgroup is 64 / QPI invocations, constant 1).
layout(constant_id = 2) const int QPI = 1;
// 1: one pass over the keys with a running maximum (the sum and the weighted values rescaled
// when it rises), so each score is computed once; 0: two passes (the maximum, then the sums).
layout(constant_id = 3) const int ONLINE = 0;
layout(push_constant) uniform PC {
    F16Buf qkv;   // [tokens, 3C]
    F16Buf out_;  // [tokens, C]
    F16Buf rpb;   // [heads, 225]
    uint width;   // level grid, tokens
    uint height;
    uint shift_x;
    uint shift_y;
} pc;
// Keys and values as vec4 (four channels per shared-memory read).
shared vec4 ks[TS_WINDOW_TOKENS][TS_HEAD_DIM / 4];
shared vec4 vs[TS_WINDOW_TOKENS][TS_HEAD_DIM / 4];
shared float bias[TS_RPB_ENTRIES];

const int QMAX = 2;
const uint D4 = TS_HEAD_DIM / 4;

// The scores of key j for the invocation's queries: (q . k) / 4 plus the position bias.
void scores(uint j, vec4 q[QMAX][D4], uint ixs[QMAX], uint iys[QMAX], out float s[QMAX]) {
    uint jx = j % TS_WINDOW, jy = j / TS_WINDOW;
    for (int u = 0; u < QPI; u++) s[u] = 0.0;
    for (int d = 0; d < D4; d++) {
        vec4 k = ks[j][d];
        for (int u = 0; u < QPI; u++) s[u] += dot(q[u][d], k);
    }
    for (int u = 0; u < QPI; u++) s[u] = s[u] * 0.25 + bias[(iys[u] - jy + 7) * 15 + (ixs[u] - jx + 7)];
}

// Key j's value, weighted by e, into each query's sum.
void add_value(uint j, float e[QMAX], inout vec4 o[QMAX][D4]) {
    for (int d = 0; d < D4; d++) {
        vec4 v = vs[j][d];
        for (int u = 0; u < QPI; u++) o[u][d] += e[u] * v;
    }
}

void store(vec4 o[QMAX][D4], float sum[QMAX], uint tok[QMAX]) {
    F16x4Buf out4 = F16x4Buf(pc.out_);
    for (int u = 0; u < QPI; u++) {
        float inv = 1.0 / sum[u];
        for (int d = 0; d < D4; d++) out4.v[(tok[u] * C + gl_WorkGroupID.y * TS_HEAD_DIM) / 4 + d] = f16vec4(o[u][d] * inv);
    }
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint n = gl_WorkGroupSize.x;
    uint win = gl_WorkGroupID.x;
    uint h = gl_WorkGroupID.y;
    vec4 q[QMAX][D4];
    uint tok[QMAX], ixs[QMAX], iys[QMAX];
    F16x4Buf qkv4 = F16x4Buf(pc.qkv);
    for (int u = 0; u < QPI; u++) {
        uint i = lid + u * n;
        uint ix = i % TS_WINDOW, iy = i / TS_WINDOW;
        uint t = window_token(win, i, pc.width, pc.height, pc.shift_x, pc.shift_y);
        uint base = t * 3 * C + h * TS_HEAD_DIM;
        tok[u] = t;
        ixs[u] = ix;
        iys[u] = iy;
        for (int d = 0; d < D4; d++) {
            q[u][d] = vec4(qkv4.v[base / 4 + d]);
            ks[i][d] = vec4(qkv4.v[(base + C) / 4 + d]);
            vs[i][d] = vec4(qkv4.v[(base + 2 * C) / 4 + d]);
        }
    }
    for (uint e = lid; e < TS_RPB_ENTRIES; e += n) bias[e] = float(pc.rpb.v[h * TS_RPB_ENTRIES + e]);
    barrier();
    float m[QMAX], sum[QMAX], sc[QMAX], e[QMAX];
    vec4 o[QMAX][D4];
    for (int u = 0; u < QPI; u++) {
        m[u] = -3.4e38;
        sum[u] = 0.0;
        for (int d = 0; d < D4; d++) o[u][d] = vec4(0.0);
    }
    if (ONLINE == 1) {
        // One pass: where a score passes the running maximum, the sum and the values so far are
        // scaled by exp(old - new) first.
        for (uint j = 0; j < TS_WINDOW_TOKENS; j++) {
            scores(j, q, ixs, iys, sc);
            for (int u = 0; u < QPI; u++) {
                if (sc[u] > m[u]) {
                    float c = exp(m[u] - sc[u]);
                    sum[u] *= c;
                    for (int d = 0; d < D4; d++) o[u][d] *= c;
                    m[u] = sc[u];
                }
                e[u] = exp(sc[u] - m[u]);
                sum[u] += e[u];
            }
            add_value(j, e, o);
        }
    } else {
        // Two passes over the 64 keys (the maximum, then the weighted sum), so no per-key array
        // lives in registers or spills to local memory.
        for (uint j = 0; j < TS_WINDOW_TOKENS; j++) {
            scores(j, q, ixs, iys, sc);
            for (int u = 0; u < QPI; u++) m[u] = max(m[u], sc[u]);
        }
        for (uint j = 0; j < TS_WINDOW_TOKENS; j++) {
            scores(j, q, ixs, iys, sc);
            for (int u = 0; u < QPI; u++) {
                e[u] = exp(sc[u] - m[u]);
                sum[u] += e[u];
            }
            add_value(j, e, o);
        }
    }
    store(o, sum, tok);
}
