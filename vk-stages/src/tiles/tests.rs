//! The tiles' unit tests: each layer's role, the settings and what the driver reported.
use super::*;

fn spec(inp: usize, out: usize, level: u32) -> LinearSpec {
    LinearSpec { level, ..LinearSpec::plain(inp, out) }
}

#[test]
fn each_layer_takes_its_roles_tile() {
    let t = NetTiles::default();
    let big = 48 * 1024;
    // Rows: 32 over level 0's tokens, 64 below.
    assert_eq!(t.rows(big, &spec(128, 32, 0)), 32);
    assert_eq!(t.rows(big, &spec(96, 288, 2)), 64);
    assert_eq!(NetTiles { rows: Some(128), ..t }.rows(big, &spec(128, 32, 0)), 128);
    // The merge out of level 0 takes 128, the one into level 2 the default.
    let merge = |inp, out, level| LinearSpec { mode: b::MODE_MERGE, ..spec(inp, out, level) };
    assert_eq!(t.rows(64 * 1024, &merge(128, 48, 1)), 128);
    assert_eq!(t.rows(big, &merge(192, 96, 2)), 64);
    assert_eq!(NetTiles { rows: Some(64), ..t }.rows(64 * 1024, &merge(128, 48, 1)), 64);
    assert_eq!(t.rows(big, &merge(128, 48, 1)), 64, "128 padded rows of 128 inputs do not fit 48 KiB");
    // Chunks: 32 for a plain layer and the expansion out of level 1, 64 for a deeper one
    // where they fit (beside 128 rows, 16), the head its own.
    assert_eq!(t.cols(big, &spec(32, 96, 0)), Some(32));
    let expand = LinearSpec { mode: b::MODE_EXPAND, residual: 1, ..spec(48, 128, 1) };
    assert_eq!(t.cols(big, &expand), Some(32));
    assert_eq!(t.rows(big, &expand), 64);
    assert_eq!(NetTiles { cols: Some(64), ..t }.cols(big, &expand), Some(64), "TESSEL_VK_COOP_COLS sets the expansions' too");
    let expand2 = LinearSpec { mode: b::MODE_EXPAND, residual: 1, ..spec(96, 192, 2) };
    assert_eq!((t.rows(big, &expand2), t.cols(big, &expand2)), (128, Some(16)));
    assert_eq!((t.rows(32 * 1024, &expand2), t.cols(32 * 1024, &expand2)), (64, Some(32)), "lavapipe's 32 KiB: 64 rows");
    assert_eq!(NetTiles { rows: Some(64), ..t }.rows(big, &expand2), 64);
    let head = LinearSpec { mode: b::MODE_HEAD, ln: 1, ..spec(32, 128, 0) };
    assert_eq!(t.cols(big, &head), Some(32));
    assert_eq!(NetTiles { head_cols: 16, ..t }.cols(big, &head), Some(16));
    // A residual layer of 48 outputs: chunks of 16 (they divide 48), or 32 without `even`.
    let fc2 = LinearSpec { residual: 1, in_f16: 1, ..spec(96, 48, 1) };
    assert_eq!(t.cols(big, &fc2), Some(16));
    assert_eq!(NetTiles { even: false, ..t }.cols(big, &fc2), Some(32));
    // What does not fit the device's shared memory is not taken; nothing fits: scalar.
    let wide = spec(192, 96, 2);
    let need = |c| wide.coop_shared_bytes(64, c) + 1024;
    assert_eq!(t.cols(need(16), &wide), Some(16));
    assert_eq!(t.cols(need(16) - 1, &wide), None);
    assert_eq!(t.cols(big, &spec(40, 48, 1)), None, "inputs not a multiple of 16 take the scalar shader");
}

#[test]
fn the_start_up_words_name_the_tiles_and_the_attention() {
    let t = NetTiles::default();
    let d = t.describe(true, false, None);
    assert!(d.contains("32 rows at level 0 and its merge (staged: 128 where they fit), its embedding and MLP 64 (in registers every MLP 128), the head 128, the expansion out of level 2 128, 64 below") && d.contains("head 32") && d.contains("attention: one pass, 1 query"), "{d}");
    let d = NetTiles { rows: Some(128), attention_online: false, attention_qpi: 2, ..t }.describe(false, false, None);
    assert!(!d.contains("tiles") && d.contains("attention: two passes, 2 queries"), "{d}");
    assert!(NetTiles { rows: Some(128), ..t }.describe(true, false, None).contains("tiles: 128 rows"));
    let d = t.describe(true, true, None);
    assert!(d.contains("attention: cooperative matrices (TESSEL_VK_ATTENTION_COOP=0") && !d.contains("query"), "{d}");
}

#[test]
fn expansions_scatter_their_accumulators_where_grid_rows_are_whole_16s() {
    let t = NetTiles::default();
    let big = 48 * 1024;
    let cfg = tessel_model::config::NetworkConfig::default();
    let layers = crate::layers::Layers::with_stream16(&cfg, true);
    let (e1, e2) = (layers.expand[0], layers.expand[1]);
    assert_eq!((e1.rows16, e2.rows16), (1, 0), "level 1's rows are 16s of tokens, level 2's only 8s");
    let v = t.direct_dispatch(big, &e1, 8).unwrap();
    assert_eq!((v.0.shader, v.1), ("linear_direct_w_coop", 64), "the expansion into level 0, its weights in shared memory");
    assert_eq!(e1.direct_shared_bytes(64), 32 + 16 * 128 * 2, "its input rows read as matrices from the buffer");
    assert!(t.direct_dispatch(big, &e2, 8).is_none(), "the expansion out of level 2 stays staged");
    assert!(NetTiles { expand_direct: false, ..t }.direct_dispatch(big, &e1, 8).is_none(), "the kill switch");
    assert!(NetTiles { direct: Direct::Off, ..t }.direct_dispatch(big, &e1, 8).is_none());
    assert!(t.describe(true, true, None).contains("expansions too where grid rows are whole 16s (TESSEL_VK_EXPAND_DIRECT=0 stages them)"));
}

#[test]
fn plain_and_merge_layers_keep_their_results_in_the_accumulators() {
    let t = NetTiles::default();
    assert_eq!(t.direct, Direct::Roles, "the default since the H100 timed it");
    let all = NetTiles { direct: Direct::All, ..t };
    let big = 48 * 1024;
    let qkv = LinearSpec { ln: 1, out_f16: 1, ..spec(96, 288, 2) };
    let fc2 = LinearSpec { residual: 1, in_f16: 1, ..spec(64, 32, 0) };
    let merge = LinearSpec { mode: b::MODE_MERGE, ..spec(128, 48, 1) };
    let tile = |rows, cols| Some(DirectTile { rows, cols });
    assert_eq!(t.direct(big, &qkv, 8), tile(64, 64));
    // f16 rows read from the buffer: by role only below level 0 and up to 96 wide, where the
    // weights stay in the buffer (TESSEL_VK_COOP_LINEAR_W=0; with them in shared memory,
    // level 0's as well: the next test).
    let t = NetTiles { linear_weights: Direct::Off, ..t };
    assert_eq!(t.direct(big, &fc2, 8), None);
    assert_eq!(all.direct(big, &fc2, 8), tile(32, 64));
    let proj1 = LinearSpec { residual: 1, in_f16: 1, ..spec(48, 48, 1) };
    let fc2_2 = LinearSpec { residual: 1, in_f16: 1, ..spec(192, 96, 2) };
    let embed = LinearSpec { in_f16: 1, ..spec(128, 32, 0) };
    assert_eq!(t.direct(big, &proj1, 8), tile(64, 64));
    assert_eq!(t.direct(big, &fc2_2, 8), None);
    assert_eq!(t.direct(big, &embed, 8), None);
    let t = NetTiles::default();
    // The merge out of level 0 by role at 32 rows (not its staged 128); the merge into level 2
    // stages its results but with TESSEL_VK_COOP_DIRECT=2.
    assert_eq!(t.direct(big, &merge, 8), tile(32, 64));
    assert_eq!(NetTiles { rows: Some(128), ..t }.direct(big, &merge, 8), tile(128, 64), "the setting rules");
    let merge2 = LinearSpec { mode: b::MODE_MERGE, ..spec(192, 96, 2) };
    assert_eq!(t.direct(big, &merge2, 8), None);
    assert_eq!(all.direct(big, &merge2, 8), tile(64, 64));
    // Staged inputs count, unstaged ones do not: fc2's f16 rows are read as matrices.
    assert_eq!(qkv.direct_shared_bytes(64), 64 * (96 + b::SHARED_PAD) * 2 + 16 * 288 * 2);
    assert_eq!(fc2.direct_shared_bytes(32), 32 + 16 * 32 * 2);
    // The head where pixels have 8 embedding values; the expansion's scatter never.
    let head = LinearSpec { mode: b::MODE_HEAD, ln: 1, out_f16: 1, ..spec(32, 128, 0) };
    assert_eq!(t.direct(big, &head, 8), tile(128, 64), "the head's own rows");
    assert_eq!(t.direct(head.direct_shared_bytes(128) + 1023, &head, 8), tile(32, 64), "level 0's where 128 do not fit");
    assert_eq!(head.direct_shared_bytes(32), 32 * (32 + b::SHARED_PAD) * 2 + 16 * 128 * 4 + 512);
    assert_eq!(t.direct(big, &head, 4), None);
    let expand = LinearSpec { mode: b::MODE_EXPAND, residual: 1, ..spec(48, 128, 1) };
    assert_eq!(all.direct(big, &expand, 8), None);
    // The kill switch, the chunk setting, and a device whose shared memory is too small.
    let off = NetTiles { direct: Direct::Off, ..t };
    assert_eq!(off.direct(big, &qkv, 8), None);
    assert_eq!(NetTiles { cols: Some(32), ..t }.direct(big, &qkv, 8), tile(64, 32));
    assert_eq!(t.direct(qkv.direct_shared_bytes(64) + 1023, &qkv, 8), None);
    assert!(t.describe(true, true, None).contains("results straight from the accumulators where it pays (TESSEL_VK_COOP_DIRECT=0 stages them"));
    assert!(all.describe(true, true, None).contains("results straight from the accumulators in every layer that can (TESSEL_VK_COOP_DIRECT=2)"));
    // The MLP in one dispatch: the level's rows where they fit (level 0's 64, not 32), fewer
    // where not, none without `direct` or with its own switch off. First with its activations
    // in shared memory (TESSEL_VK_MLP_REGS=0, or where the layout probe fails).
    let regs = t;
    let (t, all) = (NetTiles { mlp_regs: false, ..t }, NetTiles { mlp_regs: false, ..all });
    let fc1 = |c: usize, level| LinearSpec { act: 1, ln: 1, out_f16: 1, ..spec(c, 2 * c, level) };
    assert_eq!(t.mlp(big, &fc1(32, 0)), tile(64, 64));
    assert_eq!(t.mlp(fc1(32, 0).mlp_shared_bytes(64) + 1023, &fc1(32, 0)), tile(32, 64), "fewer where 64 do not fit");
    assert_eq!(NetTiles { rows: Some(32), ..t }.mlp(big, &fc1(32, 0)), tile(32, 64), "the setting rules");
    assert_eq!(t.mlp(big, &fc1(48, 1)), tile(64, 64), "{}", fc1(48, 1).mlp_shared_bytes(64));
    assert_eq!(NetTiles { cols: Some(32), ..t }.mlp(big, &fc1(32, 0)), tile(64, 32), "chunks of TESSEL_VK_COOP_COLS");
    // By role not where it needs more than 24 KiB at the level's rows; with
    // TESSEL_VK_COOP_DIRECT=2 wherever it fits.
    assert_eq!(t.mlp(big, &fc1(96, 2)), None, "{}", fc1(96, 2).mlp_shared_bytes(64));
    assert_eq!(all.mlp(big, &fc1(96, 2)), tile(64, 64));
    assert_eq!(all.mlp(32 * 1024, &fc1(96, 2)), tile(32, 64), "lavapipe's 32 KiB");
    assert_eq!(all.mlp(8 * 1024, &fc1(96, 2)), None);
    // Their weights in shared memory where they fit beside the rows: levels 0 and 1 on 48
    // KiB (26.5 and 44.75 KiB with their rows padded), level 0 alone on lavapipe's 32, not
    // level 2, not with the switch.
    let w = |t: &NetTiles, shared, f: &LinearSpec| t.mlp(shared, f).is_some_and(|tl| t.mlp_weights_shared(shared, f, &tl, false));
    assert_eq!(fc1(48, 1).mlp_shared_bytes(64) + fc1(48, 1).mlp_weight_bytes(), 45_824, "as the H100 reports it");
    assert!(w(&t, big, &fc1(32, 0)) && w(&t, big, &fc1(48, 1)));
    assert!(w(&t, 32 * 1024, &fc1(32, 0)) && !w(&t, 32 * 1024, &fc1(48, 1)));
    assert!(!w(&all, big, &fc1(96, 2)));
    assert!(!w(&NetTiles { mlp_weights: false, ..t }, big, &fc1(32, 0)));
    assert!(t.describe(true, true, None).contains("their weights in shared memory where they fit (TESSEL_VK_COOP_MLP_W=0 from the buffer)"));
    assert_eq!(fc1(32, 0).mlp_variant(8, &DirectTile { rows: 32, cols: 64 }, MlpWeights::Shared, false, false).shader, "mlp_direct_w_coop");
    // The attention projection first: levels up to 64 wide where its bias fits as well (level
    // 1 with its weights: 47,360 bytes on 48 KiB), with the weights where they still fit.
    let d = |t: &NetTiles, shared, f: &LinearSpec| t.mlp_dispatch(shared, f, 8).map(|(v, rows, proj)| (v.shader, rows, proj));
    assert_eq!(d(&t, big, &fc1(32, 0)), Some(("mlp_proj_w_coop", 64, true)));
    assert_eq!(d(&t, big, &fc1(48, 1)), Some(("mlp_proj_w_coop", 64, true)));
    assert_eq!(fc1(48, 1).mlp_shared_bytes(64) + fc1(48, 1).mlp_weight_bytes() + fc1(48, 1).mlp_proj_bytes(), 47_360);
    assert_eq!(d(&t, 32 * 1024, &fc1(48, 1)), Some(("mlp_proj_coop", 64, true)), "lavapipe's 32 KiB");
    assert_eq!(d(&all, big, &fc1(96, 2)), Some(("mlp_direct_coop", 64, false)), "96 wide: proj apart");
    assert_eq!(d(&NetTiles { mlp_proj: false, ..t }, big, &fc1(32, 0)), Some(("mlp_direct_w_coop", 64, false)), "the kill switch");
    assert!(t.describe(true, true, None).contains("each with its block's attention projection first where it fits (TESSEL_VK_COOP_MLP_PROJ=0 apart)"));
    assert_eq!(NetTiles { mlp: false, ..t }.mlp(big, &fc1(32, 0)), None);
    assert_eq!(off.mlp(big, &fc1(32, 0)), None, "only with results in the accumulators");
    assert!(off.describe(true, true, None).contains("results staged"));
    // In registers: the weights are all the shared memory it takes, the projection comes
    // first at every width up to 96, and a workgroup takes 128 rows.
    assert_eq!(d(&regs, big, &fc1(32, 0)), Some(("mlp_proj_regs_w_coop", 128, true)));
    assert_eq!(d(&regs, big, &fc1(48, 1)), Some(("mlp_proj_regs_w_coop", 128, true)));
    let small = fc1(48, 1).mlp_weight_bytes() + fc1(48, 1).mlp_proj_weight_bytes() + 1023;
    assert_eq!(d(&regs, small, &fc1(48, 1)), Some(("mlp_proj_regs_coop", 128, true)), "the weights and the projection's where they fit with 1 KiB to spare");
    assert_eq!(d(&NetTiles { mlp_proj: false, ..regs }, small, &fc1(48, 1)), Some(("mlp_regs_w_coop", 128, false)), "without the projection's");
    assert_eq!(fc1(48, 1).mlp_weight_bytes() + fc1(48, 1).mlp_proj_weight_bytes(), 20_736 + 5_376);
    assert_eq!(d(&regs, big, &fc1(96, 2)), Some(("mlp_proj_regs_wh_coop", 128, true)), "96 wide, by role: the projection in registers too, the weights a half at a time");
    assert_eq!(fc1(96, 2).mlp_weight_half_bytes(), 39_936);
    assert_eq!(d(&regs, fc1(96, 2).mlp_weight_half_bytes() + 1023, &fc1(96, 2)), Some(("mlp_proj_regs_coop", 128, true)), "1 KiB to spare");
    assert_eq!(d(&NetTiles { mlp_weights: false, ..regs }, big, &fc1(96, 2)), Some(("mlp_proj_regs_coop", 128, true)), "TESSEL_VK_COOP_MLP_W=0");
    assert_eq!(d(&NetTiles { mlp_proj: false, ..regs }, big, &fc1(96, 2)), Some(("mlp_regs_wh_coop", 128, false)));
    assert!(!regs.mlp_weight_halves(big, &fc1(48, 1)), "the whole fit");
    assert!(!regs.mlp_weight_halves(big, &LinearSpec { act: 1, ln: 1, out_f16: 1, ..spec(96, 160, 2) }), "halves of 80: not whole pairs of chunks");
    assert_eq!(d(&NetTiles { mlp_proj: false, ..regs }, big, &fc1(32, 0)), Some(("mlp_regs_w_coop", 128, false)));
    assert!(!fc1(112, 2).mlp_regs_fits(), "seven tiles");
    assert!(regs.describe(true, true, None).contains("their activations in registers (TESSEL_VK_MLP_REGS=0 in shared memory)"));
    assert!(!t.describe(true, true, None).contains("TESSEL_VK_MLP_REGS"));
    let why = t.describe(true, true, Some("the register paths need subgroups of 32, the device's are 8"));
    assert!(why.contains("their activations in shared memory (the register paths need subgroups of 32"), "{why}");
    // The last block's MLP with the head: only on the register MLP with the projection and
    // both weights in shared memory, at level 0, the head's 128 x (32 + pad) halves beside
    // them with 1 KiB to spare (the driver's 22,528 bytes at 32 channels, forty-seventh
    // session), the per-pixel path (if any) of 8 values a pixel.
    let cfg = tessel_model::config::NetworkConfig::default();
    let h = |t: &NetTiles, shared, f: &LinearSpec, c: &tessel_model::config::NetworkConfig| t.mlp_head_dispatch(shared, f, c).map(|(v, rows)| (v.shader, v.spec, rows));
    let need = fc1(32, 0).mlp_weight_bytes() + fc1(32, 0).mlp_proj_weight_bytes() + 128 * (32 + b::SHARED_PAD) * 2;
    assert_eq!(need, 22_528);
    let (shader, spec, rows) = h(&regs, big, &fc1(32, 0), &cfg).unwrap();
    assert_eq!((shader, rows), ("mlp_proj_head_regs_w_coop", 128));
    assert_eq!(spec, regs.mlp_dispatch(big, &fc1(32, 0), 8).unwrap().0.spec, "the MLP's own constants");
    assert!(h(&regs, need + 1024, &fc1(32, 0), &cfg).is_some() && h(&regs, need + 1023, &fc1(32, 0), &cfg).is_none());
    assert!(h(&NetTiles { mlp_head: false, ..regs }, big, &fc1(32, 0), &cfg).is_none(), "the kill switch");
    assert!(h(&t, big, &fc1(32, 0), &cfg).is_none(), "not without the MLP in registers");
    assert!(h(&NetTiles { mlp_proj: false, ..regs }, big, &fc1(32, 0), &cfg).is_none(), "not without the projection first");
    assert!(h(&NetTiles { mlp_weights: false, ..regs }, big, &fc1(32, 0), &cfg).is_none(), "not with the weights from the buffer");
    assert!(h(&regs, big, &fc1(48, 1), &cfg).is_none(), "level 0 only");
    let p4 = tessel_model::config::NetworkConfig { pixel_embed: 4, pixel_head: true, ..cfg.clone() };
    assert!(h(&regs, big, &fc1(32, 0), &p4).is_none(), "the per-pixel path needs 8 values a pixel");
    assert!(regs.describe(true, true, None).contains("the last block's with the head where it fits (TESSEL_VK_MLP_HEAD=0 apart)"));
}

#[test]
fn direct_layers_take_their_weights_into_shared_memory_where_they_fit() {
    let t = NetTiles::default();
    assert_eq!(t.linear_weights, Direct::Roles, "the default since the H100 timed it");
    let big = 48 * 1024;
    let tile = |rows, cols| Some(DirectTile { rows, cols });
    let embed = LinearSpec { in_f16: 1, ..spec(128, 32, 0) };
    let proj0 = LinearSpec { residual: 1, in_f16: 1, ..spec(32, 32, 0) };
    let proj2 = LinearSpec { residual: 1, in_f16: 1, ..spec(96, 96, 2) };
    let head = LinearSpec { mode: b::MODE_HEAD, ln: 1, out_f16: 1, ..spec(32, 128, 0) };
    let merge1 = LinearSpec { mode: b::MODE_MERGE, ..spec(128, 48, 1) };
    let qkv2 = LinearSpec { ln: 1, out_f16: 1, ..spec(96, 288, 2) };
    // Where the weights go into shared memory: (the layer, its tile by default).
    let shared = |t: &NetTiles, shared: u32, l: &LinearSpec| t.direct(shared, l, 8).map(|tl| (tl, t.direct_weights_shared(shared, l, &tl)));
    // Level 0's layers on f16 rows from the buffer take the shader because their weights fit;
    // the embedding at 64 rows of its own, proj at the level's 32.
    assert_eq!(shared(&t, big, &embed), tile(64, 64).map(|tl| (tl, true)));
    assert_eq!(shared(&t, big, &proj0), tile(32, 64).map(|tl| (tl, true)));
    assert_eq!(shared(&t, big, &proj2), tile(64, 64).map(|tl| (tl, true)), "18 KiB of weights");
    assert_eq!(shared(&t, big, &head), tile(128, 64).map(|tl| (tl, true)));
    // The merge out of level 0 as well; not qkv at level 2 (54 KiB of weights).
    assert_eq!(shared(&t, big, &merge1), tile(32, 64).map(|tl| (tl, true)));
    assert_eq!(shared(&t, big, &qkv2), tile(64, 64).map(|tl| (tl, false)));
    assert_eq!(qkv2.direct_weight_bytes(), 288 * (96 + b::SHARED_PAD) * 2);
    // TESSEL_VK_COOP_LINEAR_W=2: every merge that takes the direct shader; =0: none, and
    // level 0's layers on f16 rows from the buffer go back to linear_coop.comp.
    let all = NetTiles { linear_weights: Direct::All, ..t };
    assert_eq!(shared(&all, big, &merge1), tile(32, 64).map(|tl| (tl, true)));
    let off = NetTiles { linear_weights: Direct::Off, ..t };
    assert_eq!(shared(&off, big, &head), tile(128, 64).map(|tl| (tl, false)));
    assert_eq!(off.direct(big, &embed, 8), None);
    // A smaller device: where the weights do not fit beside the rows, they stay in the buffer,
    // and level 0's layers on f16 rows from the buffer stay on linear_coop.comp.
    let small = embed.direct_shared_bytes(32) + embed.direct_weight_bytes() + 1023;
    assert_eq!(t.direct(small, &embed, 8), None);
    assert_eq!(shared(&t, 16 * 1024, &proj2), tile(64, 64).map(|tl| (tl, false)));
    assert_eq!(embed.direct_variant(8, &DirectTile { rows: 32, cols: 64 }, true, true).shader, "linear_direct_w_coop", "f16 rows from the buffer: nothing to stage");
    assert!(t.describe(true, true, None).contains("the linear layers' weights in shared memory where it pays (TESSEL_VK_COOP_LINEAR_W=0 from the buffer, 2 everywhere they fit)"));
}

#[test]
fn staged_input_rows_go_into_registers_where_the_layout_allows() {
    let t = NetTiles::default();
    let big = 48 * 1024;
    let head = LinearSpec { mode: b::MODE_HEAD, ln: 1, out_f16: 1, ..spec(32, 128, 0) };
    let merge1 = LinearSpec { mode: b::MODE_MERGE, ..spec(128, 48, 1) };
    let merge2 = LinearSpec { mode: b::MODE_MERGE, ..spec(192, 96, 2) };
    let embed = LinearSpec { in_f16: 1, ..spec(128, 32, 0) };
    let qkv2 = LinearSpec { ln: 1, out_f16: 1, ..spec(96, 288, 2) };
    // The head and the merge out of level 0 (its 2 x 2 gather of 32 channels: eight tiles)
    // take the register variants, with their weights in shared memory as before.
    assert_eq!(t.direct_dispatch(big, &head, 8).unwrap().0.shader, "linear_regs_w_coop");
    assert_eq!(t.direct_dispatch(big, &merge1, 8).unwrap().0.shader, "linear_regs_w_coop");
    assert_eq!(t.direct_dispatch(big, &qkv2, 8).unwrap().0.shader, "linear_regs_coop");
    // Nothing to stage (f16 rows from the buffer), or more than eight tiles: as before.
    assert_eq!(t.direct_dispatch(big, &embed, 8).unwrap().0.shader, "linear_direct_w_coop");
    assert!(!merge2.in_regs_fits() && merge1.in_regs_fits() && !embed.in_regs_fits());
    assert_eq!(merge2.direct_variant(8, &DirectTile { rows: 64, cols: 64 }, false, true).shader, "linear_direct_coop");
    // The same tiles either way; TESSEL_VK_LINEAR_REGS=0 (or a refused layout) stages them.
    let off = NetTiles { linear_regs: false, ..t };
    assert_eq!(off.direct_dispatch(big, &head, 8).unwrap(), (head.direct_variant(8, &DirectTile { rows: 128, cols: 64 }, true, false), 128));
    assert_eq!(off.direct_dispatch(big, &head, 8).unwrap().0.shader, "linear_direct_w_coop");
    assert_eq!(t.direct_dispatch(big, &head, 8).unwrap().0.spec, off.direct_dispatch(big, &head, 8).unwrap().0.spec);
    assert!(t.describe(true, true, None).contains("their staged input rows in registers (TESSEL_VK_LINEAR_REGS=0 in shared memory)"));
    assert!(off.describe(true, true, Some("no probe")).contains("their input rows staged in shared memory (no probe)"));
}

#[test]
fn a_setting_outside_its_choices_is_refused_by_name() {
    assert_eq!(choice("TESSEL_VK_COOP_ROWS", None, &[32, 64, 128]), Ok(None));
    assert_eq!(choice("TESSEL_VK_COOP_ROWS", Some("128"), &[32, 64, 128]), Ok(Some(128)));
    let (field, msg) = choice("TESSEL_VK_COOP_ROWS", Some("48"), &[32, 64, 128]).unwrap_err();
    assert_eq!(field, "TESSEL_VK_COOP_ROWS");
    assert!(msg.contains("'48'") && msg.contains("[32, 64, 128]"), "{msg}");
    assert!(choice("TESSEL_VK_ATTENTION_QPI", Some("two"), &[1, 2]).is_err());
}

#[test]
fn the_attention_variant_follows_its_setting() {
    // The softmax in shared memory (TESSEL_VK_ATTENTION_REGS=0, or a device whose layout the
    // register path cannot read); the register variants below.
    let base = NetTiles { attention_regs: false, ..NetTiles::default() };
    let one = base.attention(48, false, false, 48 * 1024);
    let two = NetTiles { attention_qpi: 2, ..base }.attention(48, false, false, 48 * 1024);
    assert_ne!(two, one);
    assert_eq!(one, Variant::new("attention", &[48, b::WINDOW_TOKENS, 1, 1]));
    assert_eq!(two, Variant::new("attention", &[48, b::WINDOW_TOKENS / 2, 2, 1]));
    assert_ne!(one, NetTiles { attention_online: false, ..base }.attention(48, false, false, 48 * 1024));
    assert_eq!(base.attention(48, true, false, 48 * 1024), Variant::new("attention_coop", &[48, 1]));
    // The second constant says whether the stream it reads (with q, k, v in the attention)
    // is f16 (TESSEL_VK_STREAM16).
    assert_eq!(NetTiles { stream16: false, ..base }.attention(48, true, false, 48 * 1024), Variant::new("attention_coop", &[48, 0]));
    assert_eq!(NetTiles { stream16: false, ..NetTiles::default() }.attention(96, true, true, 48 * 1024), Variant::new("attention_qkv_window_regs_ahead_coop", &[96, 0]));
    let d = base;
    assert_eq!(d.attention(48, true, true, 48 * 1024), Variant::new("attention_qkv_window_coop", &[48, 1]), "three heads: a window a workgroup by role");
    assert_eq!(d.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_coop", &[32, 1]), "two heads: a head a workgroup");
    let window = NetTiles { attention_window: Direct::All, ..d };
    assert_eq!(window.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_window_coop", &[32, 1]));
    assert_eq!(window.attention(48, true, false, 48 * 1024), Variant::new("attention_coop", &[48, 1]));
    let off = NetTiles { attention_window: Direct::Off, ..d };
    assert_eq!(off.attention(48, true, true, 48 * 1024), Variant::new("attention_qkv_coop", &[48, 1]));
    assert!(d.describe(true, true, None).contains("a window's heads in one workgroup at levels of 3 heads or more (TESSEL_VK_ATTENTION_WINDOW=0"));
    // TESSEL_VK_ATTENTION_SCORES=32: the same variants with their scores in f32.
    let f32s = NetTiles { attention_scores_f32: true, ..window };
    assert_eq!(f32s.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_window_f32_coop", &[32, 1]));
    assert_eq!(f32s.attention(48, true, false, 48 * 1024), Variant::new("attention_f32_coop", &[48, 1]));
    assert_eq!(NetTiles { attention_scores_f32: true, ..d }.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_f32_coop", &[32, 1]));
    assert_eq!(f32s.attention(32, false, false, 48 * 1024).shader, "attention", "the scalar attention has no such setting");
    assert!(d.describe(true, true, None).contains("scores in f16 (TESSEL_VK_ATTENTION_SCORES=32 for f32)"));
    assert!(f32s.describe(true, true, None).contains("scores in f32 (TESSEL_VK_ATTENTION_SCORES=32)"));
    // With q, k, v from the qkv layer the window setting does nothing, and is not named.
    let qkv_layer = NetTiles { attention_qkv: Direct::Off, ..d };
    assert!(!qkv_layer.describe(true, true, None).contains("TESSEL_VK_ATTENTION_WINDOW"));
    assert!(qkv_layer.describe(true, true, None).contains("q, k, v from the qkv layer (TESSEL_VK_ATTENTION_QKV=0)"));
        // The softmax in registers: one variant a role, whatever the scores' setting.
    let regs = NetTiles::default();
    assert_eq!(regs.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_window_regs_ahead_coop", &[32, 1]), "two heads: a window a workgroup with the softmax in registers, the weights loaded ahead");
    assert_eq!(NetTiles { attention_window: Direct::Off, ..regs }.attention(32, true, true, 48 * 1024), Variant::new("attention_qkv_regs_coop", &[32, 1]));
    assert!(regs.describe(true, true, None).contains("there a window's heads in one workgroup, their weights loaded ahead (TESSEL_VK_ATTENTION_WINDOW=0 a workgroup a head, TESSEL_VK_ATTENTION_AHEAD=0"));
    assert_eq!(regs.attention(48, true, true, 48 * 1024), Variant::new("attention_qkv_window_regs_ahead_coop", &[48, 1]));
    // TESSEL_VK_ATTENTION_AHEAD=0: a head's weights copied at a time.
    let copy = NetTiles { attention_ahead: false, ..regs };
    assert_eq!(copy.attention(48, true, true, 48 * 1024), Variant::new("attention_qkv_window_regs_coop", &[48, 1]));
    assert!(copy.describe(true, true, None).contains("a head's weights copied at a time (TESSEL_VK_ATTENTION_WINDOW=0 a workgroup a head, TESSEL_VK_ATTENTION_AHEAD=0)"));
    // Only the window variant with the softmax in registers has it.
    assert_eq!(NetTiles { attention_window: Direct::Off, ..regs }.attention(48, true, true, 48 * 1024).shader, "attention_qkv_regs_coop");
    assert_eq!(regs.attention(48, true, false, 48 * 1024).shader, "attention_regs_coop");
    assert_eq!(regs.attention(96, true, false, 48 * 1024), Variant::new("attention_regs_coop", &[96, 1]));
    assert_eq!(NetTiles { attention_scores_f32: true, ..regs }.attention(96, true, false, 48 * 1024), Variant::new("attention_regs_coop", &[96, 1]));
    assert_eq!(regs.attention(48, false, false, 48 * 1024).shader, "attention", "the scalar attention has no such setting");
    assert!(regs.describe(true, true, None).contains("its softmax in registers (TESSEL_VK_ATTENTION_REGS=0 in shared memory)"));
    assert!(!regs.describe(true, true, None).contains("TESSEL_VK_ATTENTION_SCORES"), "no scores in memory to keep in f16 or f32");
    let why = base.describe(true, true, Some("the layout probe: no"));
    assert!(why.contains("its softmax in shared memory (the layout probe: no)") && why.contains("scores in f16"), "{why}");
}

#[test]
fn the_attention_takes_q_k_v_in_by_role_where_it_fits() {
    let kb = 1024;
    let roles = NetTiles { attention_regs: false, ..NetTiles::default() };
    assert!(roles.attention_qkv(32, 48 * kb) && roles.attention_qkv(48, 48 * kb), "two or three heads: by role");
    assert!(!roles.attention_qkv(96, 48 * kb), "six heads: the qkv layer");
    let all = NetTiles { attention_qkv: Direct::All, ..roles };
    assert!(all.attention_qkv(48, 48 * kb) && all.attention_qkv(96, 48 * kb));
    let base = attention_coop_shared_bytes(false);
    assert_eq!(attention_qkv_shared_bytes(96, false), base + 13 * kb + 1536);
    assert_eq!(attention_qkv_shared_bytes(48, false), base + 16 + 1536, "rows in the softmax weights' bytes");
    assert!(!all.attention_qkv(96, attention_qkv_shared_bytes(96, false) + 1023), "1 KiB to spare");
    assert!(!NetTiles { attention_qkv: Direct::Off, ..roles }.attention_qkv(32, 48 * kb));
    assert!(roles.describe(true, true, None).contains("q, k, v computed in the attention at levels of up to 3 heads"));
}

#[test]
fn the_cooperative_attention_needs_its_subgroups_and_shared_memory() {
    assert_eq!(attention_coop_shared_bytes(false), 28_816, "the driver's own figure on the H100");
    assert_eq!(attention_coop_shared_bytes(true), 38_032, "the driver's own figure on the H100");
    assert!(attention_coop_fits(32, 48 * 1024, true) && attention_coop_fits(64, 64 * 1024, false));
    assert!(!attention_coop_fits(16, 48 * 1024, false) && !attention_coop_fits(128, 48 * 1024, false), "row owners need 2 or 4 invocations a row");
    assert!(!attention_coop_fits(32, attention_coop_shared_bytes(false) - 1, false));
    assert!(attention_coop_fits(32, 32 * 1024, false) && !attention_coop_fits(32, 32 * 1024, true), "lavapipe's 32 KiB: f16 scores only");
    // With the scores in f32 a window's heads no longer fit one workgroup at 48 channels.
    let shm = NetTiles { attention_regs: false, ..NetTiles::default() };
    let f32s = NetTiles { attention_scores_f32: true, ..shm };
    assert!(shm.window(48, 48 * 1024) && !f32s.window(48, 48 * 1024));
    // The register variants as the H100's driver reports them (forty-fifth session, call 6:
    // 7,312 bytes at 16, 32, 48 and 96 channels with q, k, v in the attention), and a
    // window's six heads of 96 channels in one workgroup there.
    assert_eq!(attention_regs_shared_bytes(96, false), 10_384);
    assert_eq!(attention_regs_shared_bytes(96, true), 7_312 + 9_984);
    assert_eq!(attention_regs_shared_bytes(32, true), 7_312 + 3_840);
    let regs = NetTiles::default();
    assert!(regs.window(96, 48 * 1024) && !NetTiles { attention_regs: false, ..regs }.window(96, 48 * 1024));
    assert!(regs.attention_qkv(96, 48 * 1024), "by role at every level with the softmax in registers");
    assert_eq!(regs.attention(96, true, regs.attention_qkv(96, 48 * 1024), 48 * 1024), Variant::new("attention_qkv_window_regs_ahead_coop", &[96, 1]));
    // The ahead variant as the H100's driver reports it (forty-eighth session, call 3): every
    // head's weights and bias table and k and v twice at up to three heads, else as the plain
    // window variant; where it does not fit with 1 KiB to spare the plain one runs.
    assert_eq!(attention_ahead_shared_bytes(32), 22_048);
    assert_eq!(attention_ahead_shared_bytes(48), 31_408);
    assert_eq!(attention_ahead_shared_bytes(96), attention_regs_shared_bytes(96, true));
    assert_eq!(attention_ahead_shared_bytes(96), 17_296);
    assert_eq!(attention_ahead_shared_bytes(16), 9_616, "one head: a head at a time");
    assert_eq!(regs.attention(48, true, true, 31 * 1024).shader, "attention_qkv_window_regs_coop");
    assert_eq!(regs.attention(48, true, true, 31_408 + 1024).shader, "attention_qkv_window_regs_ahead_coop");
    assert!(!regs.attention_qkv(96, attention_regs_shared_bytes(96, true) + 1023), "1 KiB to spare");
    assert!(regs.describe(true, true, None).contains("q, k, v computed in the attention at every level that fits, with the softmax in registers"));
}
