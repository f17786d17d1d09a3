// The fused window block's MLP half (kernels/block_mma.hip): fc1, SiLU and fc2 in chunks of 16
// hidden channels, a group of chunks a step, accumulated into the residual. block_mma.hip includes
// it where the matrix products exist (TS_HAS_MMA).
#pragma once

// The MLP's hidden chunks per step (TS_MLP_GROUP, or by width below): a group's fc1 products
// and SiLUs are independent of each other, so a warp has more than one product chain in flight
// while it waits on the matrix pipe and the exponentials; their fc2 products then accumulate
// into the stream in chunk order, the order of one chunk at a time.
// Two chunks from 32 channels up: 0.762 -> 0.745 ms for tessel-v6's network at 3840x2160 on the
// H200 (graphs; BENCHMARKS.md, eleventh session). Four were slower (the head kernel 0.189 ->
// 0.197 ms), and at 16 channels two left the JIT keeping 32 bytes per thread on the stack.
// With the weights in shared memory (sm_90a's warpgroup products), all six chunks of a 48-channel
// block's MLP (hidden width 96) in one step: the JIT gives those kernels 111-125 registers instead
// of 104-111, and the network took 0.574 -> 0.566 ms at 4K (three chunks: 0.569; four at 32
// channels: slower; sixteenth session; both chunks of a 16-channel MLP in one step: the same
// time, twenty-eighth session). The mma.sync kernels keep two. A group that does not
// divide the chunks leaves single chunks at the end; a streamed block (TS_WS) steps by two.
#ifndef TS_MLP_GROUP
#if defined(TS_HAS_WGMMA)
#define TS_MLP_GROUP(C) ((C) == 48 ? 6 : (C) >= 32 ? 2 : 1)
#else
#define TS_MLP_GROUP(C) ((C) >= 32 ? 2 : 1)
#endif
#endif

// x += SiLU(LN2(x) W1[chunks hc0 .. hc0 + N]^T + b1) W2[:, chunks]^T.
template <int C, int N>
TS_INLINE void mlp_chunks(const BlockArgs& p, float xr[C / 8][4], const ts_uint an[C / 16][4], ts_uint hc0, ts_uint t, ts_uint* wsm) {
    constexpr int KT = C / 16;
    ts_uint ha[N][4];
#if defined(TS_HAS_WGMMA)
    if constexpr (TS_WG(C) != 0 || TS_WS(C) != 0) {
        // The chunks' weights: in the core blob (TS_WG), or the step's phase of the stream
        // (TS_WS: two chunks a step, the fc1 rows then the fc2 columns); byte offsets of the fc1
        // rows (k tile 0; each k tile FC1_KT further) and of the first chunk's fc2 columns.
        static_assert(TS_WS(C) == 0 || N == 2, "a stream phase holds two hidden chunks");
        const ts_uint* wb = wsm;
        constexpr ts_uint FC1_KT = TS_WS(C) ? 4 * 256 : (2 * C / 8) * 256;
        ts_uint fc1_at = TS_CORE_FC1(C) + TS_CORE_AT(2 * C, 0, 2 * hc0), fc2_at = TS_CORE_FC2(C) + TS_CORE_AT(C, hc0, 0);
        if constexpr (TS_WS(C) != 0) {
            wb = stream_phase<C>(p, wsm, C / 16 + hc0 / 2);
            fc1_at = 0;
            fc2_at = 64 * C;
        }
        // The group's chunks as one product of 16 N columns, then each chunk's fc2 into the stream.
        float hh[2 * N][4];
#pragma unroll
        for (int i = 0; i < 2 * N; i++) bias_tile(hh[i], p.fc1_b, 16 * hc0 + 8 * i, t);
        ts_wgmma_fence();
#pragma unroll
        for (int kt = 0; kt < KT; kt++) ts_wgmma<2 * N>(hh, an[kt], core_desc(wb, fc1_at + kt * FC1_KT));
        ts_wgmma_wait();
#pragma unroll
        for (int c = 0; c < N; c++) {
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int e = 0; e < 4; e++) hh[2 * c + i][e] = TS_SILU_MODE == 1 ? ts_silu_tanh(hh[2 * c + i][e]) : ts_silu(hh[2 * c + i][e]);
            ts_c_to_a(ha[c], hh[2 * c], hh[2 * c + 1], 1.0f, 1.0f);
        }
        ts_wgmma_fence();
#pragma unroll
        for (int c = 0; c < N; c++) ts_wgmma<C / 8>(xr, ha[c], core_desc(wb, fc2_at + c * (C / 8) * 256));
        ts_wgmma_wait();
        return;
    }
#endif
#pragma unroll
    for (int c = 0; c < N; c++) {
        float hh[2][4];
#pragma unroll
        for (int nt = 0; nt < 2; nt++) {
            ts_uint n = 16 * (hc0 + c) + 8 * nt;
            bias_tile(hh[nt], p.fc1_b, n, t);
            ts_mma_frag<KT>(hh[nt], an, ts_frag(p.fc1_w, n / 8, KT, 0));
#pragma unroll
            for (int e = 0; e < 4; e++) hh[nt][e] = TS_SILU_MODE == 1 ? ts_silu_tanh(hh[nt][e]) : ts_silu(hh[nt][e]);
        }
        ts_c_to_a(ha[c], hh[0], hh[1], 1.0f, 1.0f);
    }
#pragma unroll
    for (int c = 0; c < N; c++) {
#pragma unroll
        for (int j = 0; j < C / 8; j++) {
            ts_uint2 b = *ts_frag(p.fc2_w, j, p.hidden / 16, hc0 + c);
            ts_mma(xr[j], ha[c], b.x, b.y);
        }
    }
}

template <int C>
TS_INLINE void block_mlp(const BlockArgs& p, float xr[C / 8][4], const ts_uint an[C / 16][4], ts_uint g, ts_uint t, ts_uint* wsm) {
    constexpr int N = TS_MLP_GROUP(C);
    ts_uint chunks = p.hidden / 16, hc = 0;
#pragma unroll 1
    for (; hc + N <= chunks; hc += N) mlp_chunks<C, N>(p, xr, an, hc, t, wsm);
    // (A streamed block's MLP of 2C is C / 8 chunks: an even count, no remainder.)
    if constexpr (N > 1 && TS_WS(C) == 0) {
#pragma unroll 1
        for (; hc < chunks; hc++) mlp_chunks<C, 1>(p, xr, an, hc, t, wsm);
    }
}
