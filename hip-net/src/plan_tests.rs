//! Tests of the launch plan (plan.rs): its launches, arguments, costs and flags against the
//! contract, without a GPU.
use super::*;

/// Every tensor at its own address, with its fragment-ordered copies (weights.rs).
fn fake_tensors(cfg: &NetworkConfig) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for (i, s) in cfg.tensor_specs().iter().enumerate() {
        let base = 0x1000_0000 + 1024 * i as u64;
        m.insert(s.name.clone(), base);
        m.insert(format!("{}#frag", s.name), base + 256);
        m.insert(format!("{}#frag8", s.name), base + 512);
        m.insert(format!("{}#f32", s.name), base + 768);
    }
    m.insert(crate::weights::HEAD_AND_PIXEL_BIAS.to_string(), 0x0fff_0000);
    for (i, b) in cfg.blocks().iter().enumerate() {
        m.insert(format!("{}.core", b.name), 0x2000_0000 + 65536 * i as u64);
        m.insert(format!("{}.stream", b.name), 0x2800_0000 + 65536 * i as u64);
    }
    m
}

#[test]
fn the_plan_follows_the_network_of_the_contract() {
    let cfg = NetworkConfig { pixel_head: true, ..NetworkConfig::default() };
    let g = TokenGrid::new(&cfg, 3840, 2160);
    let bufs = Buffers { tokens: 1, head: 2, x: vec![10, 11, 12], qkv: 20, attn: 21, hidden: 22 };
    let plan = build(&cfg, &g, &bufs, &fake_tensors(&cfg), Kernels::Portable);
    // embed + 8 blocks x 5 + 2 merges + 2 expands + head.
    assert_eq!(plan.len(), 1 + 8 * 5 + 2 + 2 + 1);
    let labels: Vec<&str> = plan.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(&labels[..7], &["embed", "enc0.0.qkv", "enc0.0.attention", "enc0.0.proj", "enc0.0.fc1", "enc0.0.fc2", "merge1"]);
    assert_eq!(*labels.last().unwrap(), "head");
    // The embedding: tokens (f16, 128 channels) -> level-0 activations, 960x544 tokens.
    let Args::Linear(e) = plan[0].args else { panic!() };
    assert_eq!((e.x, e.y, e.inp, e.out, e.tokens, e.flags), (1, 10, 128, 32, 960 * 544, flags::IN_F16));
    assert_eq!(plan[0].grid, ((960 * 544u32).div_ceil(64), 2, 1));
    // The head reads the token buffer for the per-pixel path and normalises first.
    // Merges and expansions take the kernel's modes 1 and 2 (kernels/include/tessel_gpu.h).
    let mode = |label: &str| match plan.iter().find(|l| l.label == label).unwrap().args {
        Args::Linear(a) => a.flags >> flags::MODE_SHIFT,
        _ => panic!("{label} is not a linear layer"),
    };
    assert_eq!((mode("merge1"), mode("expand2"), mode("head")), (1, 2, 3));
    let Args::Linear(h) = plan.last().unwrap().args else { panic!() };
    assert_eq!((h.aux, h.out, h.flags & flags::LAYER_NORM != 0), (1, 128, true));
    // Attention of layer 1 (enc1.0) at phase 1 is shifted (7, 1).
    let att = plan.iter().find(|l| l.label == "enc1.0.attention").unwrap();
    assert_eq!(att.grid, ((480 * 272 / 64) as u32, 3, 1));
    let bytes = att.arg_bytes(1);
    assert_eq!(bytes.len(), 48);
    assert_eq!(u32::from_le_bytes(bytes[32..36].try_into().unwrap()), 7);
    assert_eq!(u32::from_le_bytes(bytes[36..40].try_into().unwrap()), 1);
}

#[test]
fn a_wmma_plan_is_the_portable_plan_on_matrix_cores() {
    let cfg = NetworkConfig { pixel_head: true, ..NetworkConfig::default() };
    let g = TokenGrid::new(&cfg, 3840, 2160);
    let bufs = Buffers { tokens: 1, head: 2, x: vec![10, 11, 12], qkv: 20, attn: 21, hidden: 22 };
    let tensors = fake_tensors(&cfg);
    let (portable, wmma) = (build(&cfg, &g, &bufs, &tensors, Kernels::Portable), build(&cfg, &g, &bufs, &tensors, Kernels::Wmma(128)));
    assert_eq!(portable.len(), wmma.len(), "nothing fused");
    for (p, w) in portable.iter().zip(&wmma) {
        assert_eq!(p.label, w.label);
        match (p.args, w.args) {
            // The shipped widths all fit (inputs up to 192, outputs multiples of 16): every
            // linear layer moves, with the same arguments and the weights as stored.
            (Args::Linear(pa), Args::Linear(wa)) => {
                assert_eq!(w.kernel, tessel_kernels::LINEAR_WMMA, "{}", w.label);
                assert_eq!(pa.w, wa.w, "{}: plain weights, not fragment order", w.label);
                assert_eq!((pa.x, pa.y, pa.tokens, pa.inp, pa.out, pa.flags), (wa.x, wa.y, wa.tokens, wa.inp, wa.out, wa.flags));
                assert_eq!((w.grid, w.block), ((pa.tokens.div_ceil(WMMA_TOKENS), 1, 1), (128, 1, 1)));
            }
            (Args::Attention(..), Args::Attention(..)) => {
                assert_eq!((p.kernel, w.kernel, w.block), ("tessel_attention", tessel_kernels::ATTENTION_WMMA, (128, 1, 1)));
                assert_eq!((p.grid, p.arg_bytes(3)), (w.grid, w.arg_bytes(3)), "{}: the same grid and arguments", w.label);
            }
            _ => panic!("{}: the two plans differ in kind", p.label),
        }
    }
    // A layer wider than the kernel stages stays portable.
    let wide = NetworkConfig { channels: vec![32, 48, 160], ..cfg.clone() };
    let plan = build(&wide, &TokenGrid::new(&wide, 640, 384), &bufs, &fake_tensors(&wide), Kernels::Wmma(256));
    let fc2 = plan.iter().find(|l| l.label == "mid.0.fc2").unwrap();
    assert_eq!(fc2.kernel, "tessel_linear", "320 inputs: over tessel_linear_wmma's 256");
}

/// The shipped widths with the per-pixel head at 3840x2160, buffers at small fake addresses.
fn fixture() -> (NetworkConfig, TokenGrid, Buffers, HashMap<String, u64>) {
    let cfg = NetworkConfig { pixel_head: true, ..NetworkConfig::default() };
    let g = TokenGrid::new(&cfg, 3840, 2160);
    let bufs = Buffers { tokens: 1, head: 2, x: vec![10, 11, 12], qkv: 20, attn: 21, hidden: 22 };
    let tensors = fake_tensors(&cfg);
    (cfg, g, bufs, tensors)
}

#[test]
fn sm_90a_blocks_read_their_core_or_stream_blob() {
    let (cfg, g, bufs, tensors) = fixture();
    let plain = build(&cfg, &g, &bufs, &tensors, Kernels::MmaSync);
    let wg = build(&cfg, &g, &bufs, &tensors, Kernels::Wgmma);
    assert_eq!(plain.len(), wg.len());
    for (a, b) in plain.iter().zip(&wg) {
        let (Args::Block(pa, layer), Args::Block(pb, _)) = (a.args, b.args) else { panic!("{}: not a block", a.label) };
        let spec = cfg.blocks().into_iter().find(|s| s.layer == layer).unwrap();
        let (block, c) = (spec.name.as_str(), cfg.channels[spec.level]);
        // The same kernel, grid and arguments but the first weight pointer.
        assert_eq!((a.kernel, a.grid, a.block), (b.kernel, b.grid, b.block), "{}", a.label);
        assert_eq!(pa.qkv_w, tensors[&format!("{block}.qkv.weight#frag")], "{}", a.label);
        let want = tensors[&format!("{block}.{}", if c <= 48 { "core" } else { "stream" })];
        assert_eq!(pb.qkv_w, want, "{} ({c} channels)", a.label);
        // qkv_w is bytes 8..16 (after x).
        let (mut x, mut y) = (a.arg_bytes(0), b.arg_bytes(0));
        x[8..16].fill(0);
        y[8..16].fill(0);
        assert_eq!(x, y, "{}", a.label);
    }
}

/// BlockArgs::flags of every launch of a plan of fused blocks.
fn block_flags(plan: &[Launch]) -> Vec<u32> {
    plan.iter().map(|l| if let Args::Block(a, _) = l.args { a.flags } else { panic!("{} is not a block", l.label) }).collect()
}

#[test]
fn the_cache_hints_kill_switch_marks_every_fused_block_and_nothing_else() {
    let (cfg, g, bufs, tensors) = fixture();
    let mut fused = build(&cfg, &g, &bufs, &tensors, Kernels::Wgmma);
    assert!(stream_f16(&mut fused, &bufs, 0, (960 * 544 * 32) as u64));
    let streams = block_flags(&fused);
    assert_eq!(set_cache_hints(&mut fused, false), fused.len());
    let plain_flags: Vec<u32> = streams.iter().map(|s| s | ROWS_PLAIN).collect();
    assert_eq!(block_flags(&fused), plain_flags, "the stream flags kept, the hints off");
    // The hints off first: the stream still goes to f16 (the plain flag is not a stream's).
    let mut plain = build(&cfg, &g, &bufs, &tensors, Kernels::Wgmma);
    set_cache_hints(&mut plain, false);
    assert!(stream_f16(&mut plain, &bufs, 0, (960 * 544 * 32) as u64));
    assert_eq!(block_flags(&plain), plain_flags);
    set_cache_hints(&mut fused, true);
    assert_eq!(block_flags(&fused), streams);
    // A portable plan has no block to mark.
    let mut portable = build(&cfg, &g, &bufs, &tensors, Kernels::Portable);
    assert_eq!(set_cache_hints(&mut portable, false), 0);
    assert!(portable.iter().all(|l| !matches!(l.args, Args::Block(..))));
}

#[test]
fn every_other_fused_block_takes_its_windows_in_reverse_and_none_when_off() {
    let (cfg, g, bufs, tensors) = fixture();
    let mut fused = build(&cfg, &g, &bufs, &tensors, Kernels::Wgmma);
    assert!(stream_f16(&mut fused, &bufs, 0, (960 * 544 * 32) as u64));
    let streams = block_flags(&fused);
    assert!(fused.len() >= 4, "{} launches", fused.len());
    assert_eq!(set_order(&mut fused, Some(Order::Alternate)), fused.len());
    for (i, (now, before)) in block_flags(&fused).iter().zip(&streams).enumerate() {
        // Launch i reads what launch i - 1 wrote: the two take their windows in opposite orders.
        let reversed = if i % 2 == 1 { WINDOWS_REVERSED } else { 0 };
        assert_eq!(*now, before | reversed, "launch {i} ({})", fused[i].label);
    }
    assert_eq!(set_order(&mut fused, None), fused.len());
    assert_eq!(block_flags(&fused), streams, "off: no launch reversed, the other flags kept");
    let mut portable = build(&cfg, &g, &bufs, &tensors, Kernels::Portable);
    assert_eq!(set_order(&mut portable, Some(Order::Alternate)), 0);
}

#[test]
fn reversed_at_both_ends_keeps_the_first_and_last_launch_reversed() {
    let pattern = |n: usize| -> String { (0..n).map(|i| if reversed(Order::Ends, i, n) { 'R' } else { 'F' }).collect() };
    // tessel-v12's eight launches: the one pair running the same way is merge2+mid.0 and mid.1,
    // at level 2, whose stream fits L2 whole.
    assert_eq!(pattern(8), "RFRFFRFR");
    // The fast preset's six: merge2+mid.0 and mid.1 again.
    assert_eq!(pattern(6), "RFRRFR");
    assert_eq!(pattern(2), "RR");
    assert_eq!(pattern(1), "R");
    // Every launch but the middle pair runs against the one before it.
    for n in 3..12 {
        let p: Vec<char> = pattern(n).chars().collect();
        assert_eq!(p.windows(2).filter(|w| w[0] == w[1]).count(), usize::from(n % 2 == 0), "{n}: {p:?}");
    }
    let alternate: String = (0..8).map(|i| if reversed(Order::Alternate, i, 8) { 'R' } else { 'F' }).collect();
    assert_eq!(alternate, "FRFRFRFR");
}

#[test]
fn every_fused_block_gets_the_weight_blob_to_prefetch_and_none_when_off() {
    let (cfg, g, bufs, tensors) = fixture();
    let mut fused = build(&cfg, &g, &bufs, &tensors, Kernels::Wgmma);
    let blob = 0x3000_0000u64;
    assert_eq!(set_prefetch(&mut fused, blob, 1_749_000), fused.len());
    for l in &fused {
        let Args::Block(a, _) = l.args else { panic!("{} is not a block", l.label) };
        // 1,749,000 bytes are 13,664.06 lines of 128: the last, partial line counts.
        assert_eq!((a.prefetch, a.prefetch_lines), (blob, 13_665), "{}", l.label);
        // The two fields follow upper_c at the struct's end (kernels/include/tessel_block.h).
        let bytes = l.arg_bytes(0);
        assert_eq!(u32::from_le_bytes(bytes[284..288].try_into().unwrap()), 13_665);
        assert_eq!(u64::from_le_bytes(bytes[288..296].try_into().unwrap()), blob);
    }
    set_prefetch(&mut fused, blob, 0);
    assert!(fused.iter().all(|l| matches!(l.args, Args::Block(a, _) if a.prefetch == 0 && a.prefetch_lines == 0)));
    let mut portable = build(&cfg, &g, &bufs, &tensors, Kernels::Portable);
    assert_eq!(set_prefetch(&mut portable, blob, 1_749_000), 0);
}

#[test]
fn level_0_stream_in_f16_only_where_fused_blocks_alone_touch_it() {
    let (cfg, g, bufs, tensors) = fixture();
    let elems0 = (960 * 544 * 32) as u64;
    // Pushed, then with level 2's expansion pulled (the head does not pull): the same passes
    // over level 0's stream either way.
    let mut plan = Vec::new();
    for (pull, mid, dec) in [(false, "mid.1+expand2", "dec1.0"), (true, "mid.1", "expand2+dec1.0")] {
        plan = build_with(&cfg, &g, &bufs, &tensors, Kernels::Wgmma, pull);
        let before: Vec<u64> = plan.iter().map(|l| l.cost.bytes).collect();
        assert!(stream_f16(&mut plan, &bufs, 0, elems0));
        let flags: Vec<(&str, u32)> = plan.iter().map(|l| (l.label.as_str(), if let Args::Block(a, _) = l.args { a.flags } else { 99 })).collect();
        assert_eq!(
            flags,
            [("embed+enc0.0", STREAM_X_F16), ("merge1+enc1.0", STREAM_LOWER_F16), ("enc1.1", 0), ("merge2+mid.0", 0), (mid, 0), (dec, 0), ("dec1.1+expand1", STREAM_LOWER_F16), ("dec0.0+head", STREAM_X_F16)]
        );
        // Two bytes less per value for each pass: the embedding's store, the merge's gather,
        // the expansion's read and write, the head's load.
        let saved: Vec<u64> = before.iter().zip(&plan).map(|(b, l)| (b - l.cost.bytes) / (2 * elems0)).collect();
        assert_eq!(saved, [1, 1, 0, 0, 0, 0, 2, 1]);
    }
    // The flags sit in the last four bytes of the kernel's argument struct.
    assert_eq!(u32::from_le_bytes(plan[6].arg_bytes(0)[252..256].try_into().unwrap()), STREAM_LOWER_F16);
    // Applied once; and never where a portable kernel reads or writes the stream.
    assert!(!stream_f16(&mut plan, &bufs, 0, elems0));
    let mut portable = build(&cfg, &g, &bufs, &tensors, Kernels::Portable);
    assert!(!stream_f16(&mut portable, &bufs, 0, elems0));
}

/// Every level's stream in f16 (TESSEL_HIP_STREAM16_LEVELS=3): each level's flags on the blocks
/// that store, gather, expand into or pull from it, and two bytes a value less for each such pass.
#[test]
fn every_levels_stream_in_f16_flags_each_pass_over_it() {
    let (cfg, g, bufs, tensors) = fixture();
    let elems: Vec<u64> = (0..3).map(|l| g.level_dims(l)).zip(&cfg.channels).map(|((w, h), c)| (w * h * c) as u64).collect();
    let mut plan = build_with(&cfg, &g, &bufs, &tensors, Kernels::Wgmma, true);
    let before: Vec<u64> = plan.iter().map(|l| l.cost.bytes).collect();
    for (level, &e) in elems.iter().enumerate() {
        assert!(stream_f16(&mut plan, &bufs, level, e), "level {level}");
        assert!(!stream_f16(&mut plan, &bufs, level, e), "level {level} applied twice");
    }
    let (x, lo, up) = (STREAM_X_F16, STREAM_LOWER_F16, STREAM_UPPER_F16);
    assert_eq!(
        plan.iter().map(|l| (l.label.as_str(), if let Args::Block(a, _) = l.args { a.flags } else { 99 })).collect::<Vec<_>>(),
        [("embed+enc0.0", x), ("merge1+enc1.0", x | lo), ("enc1.1", x), ("merge2+mid.0", x | lo), ("mid.1", x), ("expand2+dec1.0", x | up), ("dec1.1+expand1", x | lo), ("dec0.0+head", x)]
    );
    // Per launch, the values saved per level: (level 0, 1, 2) passes.
    let passes = [[1, 0, 0], [1, 1, 0], [0, 2, 0], [0, 1, 1], [0, 0, 2], [0, 2, 1], [2, 1, 0], [1, 0, 0]];
    for ((l, b), p) in plan.iter().zip(&before).zip(passes) {
        let want: u64 = p.iter().zip(&elems).map(|(n, e)| n * e * 2).sum();
        assert_eq!(b - l.cost.bytes, want, "{}", l.label);
    }
    assert!(!stream_f16(&mut plan, &bufs, 3, 1), "no fourth level");
}

#[test]
fn a_decoder_levels_first_block_pulls_the_expansion_above_it() {
    let (cfg, g, bufs, tensors) = fixture();
    let plan = build_with(&cfg, &g, &bufs, &tensors, Kernels::MmaSync, true);
    let labels: Vec<&str> = plan.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["embed+enc0.0", "merge1+enc1.0", "enc1.1", "merge2+mid.0", "mid.1", "expand2+dec1.0", "dec1.1+expand1", "dec0.0+head"]);
    // The last block of the level above stores its stream; the next level's first block reads
    // its own stream (the skip) and the level above's, with the expansion's weights.
    let up = plan.iter().find(|l| l.label == "mid.1").unwrap();
    let Args::Block(a, _) = up.args else { panic!() };
    assert_eq!((up.kernel, a.x, a.lower, a.expand_w), ("tessel_block_mma_c96", 12, 0, 0));
    // The head's launch does not pull (no kernel: it measured no faster), so level 1 pushes.
    let h = plan.iter().find(|l| l.label == "dec0.0+head").unwrap();
    assert_eq!(h.kernel, "tessel_block_head_mma_c32");
    let d = plan.iter().find(|l| l.label == "expand2+dec1.0").unwrap();
    let Args::Block(a, 5) = d.args else { panic!() };
    assert_eq!((d.kernel, a.x, a.upper, a.upper_c, a.pull_w, a.pull_b), ("tessel_block_pull_mma_c48", 11, 12, 96, tensors["expand2.weight#frag"], tensors["expand2.bias#f32"]));
    assert_eq!((a.lower, a.lower_c, a.expand_w), (0, 0, 0), "a pull alone touches no level below");
    // The same FLOPs as the plan without pulls; no more bytes.
    let pushed = build_with(&cfg, &g, &bufs, &tensors, Kernels::MmaSync, false);
    let sum = |p: &[Launch]| p.iter().fold((0u64, 0u64), |(b, f), l| (b + l.cost.bytes, f + l.cost.flops));
    let ((bp, fp), (bq, fq)) = (sum(&plan), sum(&pushed));
    assert_eq!(fp, fq);
    assert!(bp <= bq, "{bp} > {bq}");
    // Without the kernels for it, nothing is pulled.
    let portable = build_with(&cfg, &g, &bufs, &tensors, Kernels::Portable, true);
    assert!(!pulls(&portable) && portable.iter().all(|l| !l.label.starts_with("expand2+")));
    assert!(pulls(&plan) && !pulls(&pushed));
}

/// The fast preset's shape (models/tessel-v12-fast: a decoder level of one block): that block pulls
/// the level above's expansion and pushes its own into level 0, in one launch.
#[test]
fn a_decoder_level_of_one_block_pulls_and_pushes_in_one_launch() {
    let (cfg, g, bufs, _) = fixture();
    let fast = NetworkConfig { channels: vec![16, 48, 96], encoder_depths: vec![1, 1], decoder_depths: vec![1, 1], ..cfg };
    let tensors16 = fake_tensors(&fast);
    let plan = build_with(&fast, &g, &bufs, &tensors16, Kernels::MmaSync, true);
    let labels: Vec<&str> = plan.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["embed+enc0.0", "merge1+enc1.0", "merge2+mid.0", "mid.1", "expand2+dec1.0+expand1", "dec0.0+head"]);
    let d = &plan[4];
    let Args::Block(a, 4) = d.args else { panic!("{}: not layer 4", d.label) };
    assert_eq!((d.kernel, a.x, a.upper, a.upper_c, a.pull_w, a.pull_b), ("tessel_block_pull_expand_mma_c48", 11, 12, 96, tensors16["expand2.weight#frag"], tensors16["expand2.bias#f32"]));
    assert_eq!((a.lower, a.lower_c, a.expand_w, a.expand_b), (10, 16, tensors16["expand1.weight#frag"], tensors16["expand1.bias#f32"]));
    // The same FLOPs as the pushed plan (mid.1+expand2, dec1.0+expand1), no more bytes; with level 0's
    // stream in f16 the expansion into it is flagged like the pushed one's.
    let mut pushed = build_with(&fast, &g, &bufs, &tensors16, Kernels::MmaSync, false);
    assert_eq!(pushed.iter().map(|l| l.label.as_str()).collect::<Vec<_>>(), ["embed+enc0.0", "merge1+enc1.0", "merge2+mid.0", "mid.1+expand2", "dec1.0+expand1", "dec0.0+head"]);
    let sum = |p: &[Launch]| p.iter().fold((0u64, 0u64), |(b, f), l| (b + l.cost.bytes, f + l.cost.flops));
    let ((bp, fp), (bq, fq)) = (sum(&plan), sum(&pushed));
    assert_eq!(fp, fq);
    assert!(bp <= bq, "{bp} > {bq}");
    let mut plan = plan;
    let (w0, h0) = g.level_dims(0);
    assert!(stream_f16(&mut plan, &bufs, 0, (w0 * h0 * 16) as u64) && stream_f16(&mut pushed, &bufs, 0, (w0 * h0 * 16) as u64));
    let Args::Block(a, _) = plan[4].args else { panic!() };
    let Args::Block(b, _) = pushed[4].args else { panic!() };
    assert_eq!((a.flags, b.flags), (STREAM_LOWER_F16, STREAM_LOWER_F16));
}

#[test]
fn with_matrix_kernels_each_block_is_one_launch() {
    let (cfg, g, bufs, tensors) = fixture();
    let plan = build_with(&cfg, &g, &bufs, &tensors, Kernels::MmaSync, false);
    // The embedding and the head ride in the first and last blocks, each merge in the block
    // after it, each expansion in the block before it.
    let labels: Vec<&str> = plan.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["embed+enc0.0", "merge1+enc1.0", "enc1.1", "merge2+mid.0", "mid.1+expand2", "dec1.0", "dec1.1+expand1", "dec0.0+head"]);
    let b = plan.iter().find(|l| l.label == "enc1.1").unwrap();
    assert_eq!((b.kernel, b.grid, b.block), ("tessel_block_mma_c48", ((480 * 272 / 64) as u32, 1, 1), (128, 1, 1)));
    let Args::Block(a, layer) = b.args else { panic!() };
    assert_eq!((a.x, a.hidden, a.width, a.height, a.p, layer), (11, 96, 480, 272, 8, 2));
    assert_eq!(a.rpb, tensors["enc1.1.rpb#f32"]);
    assert_eq!(a.fc2_w, tensors["enc1.1.fc2.weight#frag"]);
    assert_eq!((a.tokens, a.head, a.embed_w, a.head_w, a.pixel_w, a.lower, a.merge_w, a.expand_w), (0, 0, 0, 0, 0, 0, 0, 0), "an inner block takes no ends");
    assert_eq!((a.upper, a.pull_w, a.pull_b, a.upper_c), (0, 0, 0, 0));
    // enc1.1 is layer 2: at phase 3 its shift is (1, 7) (docs/NETWORK.md's table, even
    // layers); 23 pointers, then the level size and the shifts.
    let bytes = b.arg_bytes(3);
    assert_eq!(bytes.len(), 296);
    assert_eq!(u32::from_le_bytes(bytes[192..196].try_into().unwrap()), 1);
    assert_eq!(u32::from_le_bytes(bytes[196..200].try_into().unwrap()), 7);
    // The merge reads the level below; the expansion adds into it.
    let m = plan.iter().find(|l| l.label == "merge2+mid.0").unwrap();
    let Args::Block(a, 3) = m.args else { panic!() };
    assert_eq!((m.kernel, a.x, a.lower, a.lower_c, a.merge_w, a.merge_b, a.expand_w), ("tessel_block_merge_mma_c96", 12, 11, 48, tensors["merge2.weight#frag"], tensors["merge2.bias#f32"], 0));
    let e = plan.iter().find(|l| l.label == "dec1.1+expand1").unwrap();
    let Args::Block(a, 6) = e.args else { panic!() };
    assert_eq!((e.kernel, a.x, a.lower, a.lower_c, a.expand_w, a.expand_b, a.merge_w), ("tessel_block_expand_mma_c48", 11, 10, 32, tensors["expand1.weight#frag"], tensors["expand1.bias#f32"], 0));
    let first = &plan[0];
    let Args::Block(e, 0) = first.args else { panic!() };
    assert_eq!((first.kernel, e.tokens, e.embed_w, e.head), ("tessel_block_embed_mma_c32", 1, tensors["embed.weight#frag"], 0));
    let last = plan.last().unwrap();
    let Args::Block(h, 7) = last.args else { panic!() };
    assert_eq!((last.kernel, h.tokens, h.head, h.head_w, h.pixel_w), ("tessel_block_head_mma_c32", 1, 2, tensors["head.weight#frag"], tensors["pixel_head.weight#frag8"]));
    assert_eq!(h.head_b, tensors[crate::weights::HEAD_AND_PIXEL_BIAS], "the head's bias holds the per-pixel path's");
    // A width without a fused kernel keeps the five portable launches.
    let odd = NetworkConfig { channels: vec![40, 48, 96], ..cfg.clone() };
    let g = TokenGrid::new(&odd, 640, 360);
    let plan = build(&odd, &g, &bufs, &fake_tensors(&odd), Kernels::MmaSync);
    assert!(plan.iter().any(|l| l.label == "enc0.0.attention"));
    assert!(plan.iter().any(|l| l.label == "enc1.0" && l.kernel == "tessel_block_mma_c48"), "a lower width of 40 has no fused merge");
    assert!(plan.iter().any(|l| l.label == "merge1") && plan.iter().any(|l| l.label == "expand1"));
    assert!(plan.iter().any(|l| l.label == "merge2+mid.0"), "48 below 96 fuses");
    // A level of one block takes its merge and its expansion.
    let one = NetworkConfig { encoder_depths: vec![1, 1], bottleneck_depth: 1, decoder_depths: vec![1, 1], ..cfg.clone() };
    let plan = build_with(&one, &TokenGrid::new(&one, 640, 360), &bufs, &fake_tensors(&one), Kernels::MmaSync, false);
    let labels: Vec<&str> = plan.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["embed+enc0.0", "merge1+enc1.0", "merge2+mid.0+expand2", "dec1.0+expand1", "dec0.0+head"]);
    assert_eq!(plan[2].kernel, "tessel_block_merge_expand_mma_c96");
    let plan = build_with(&one, &TokenGrid::new(&one, 640, 360), &bufs, &fake_tensors(&one), Kernels::MmaSync, true);
    let labels: Vec<&str> = plan.iter().map(|l| l.label.as_str()).collect();
    // With pulls on, a decoder level of one block pulls the expansion above it and pushes its own.
    assert_eq!(labels, ["embed+enc0.0", "merge1+enc1.0", "merge2+mid.0", "expand2+dec1.0+expand1", "dec0.0+head"]);
    assert_eq!(plan[3].kernel, "tessel_block_pull_expand_mma_c48");
    // The layers outside the blocks take the matrix-core linear kernel of their input width.
    let kernel = |p: &[Launch], label: &str| p.iter().find(|l| l.label == label).unwrap().kernel;
    let plan = build(&odd, &TokenGrid::new(&odd, 3840, 2160), &bufs, &fake_tensors(&odd), Kernels::MmaSync);
    assert_eq!(kernel(&plan, "merge1"), "tessel_linear_mma_k256", "4 x 40 inputs");
    assert_eq!(kernel(&plan, "expand1"), "tessel_linear_mma_k128", "48 inputs");
    // Level 0 at 128 channels has no fused ends: embed and head are linear launches.
    let wide = NetworkConfig { channels: vec![128, 128, 128], ..cfg.clone() };
    let plan = build(&wide, &TokenGrid::new(&wide, 3840, 2160), &bufs, &fake_tensors(&wide), Kernels::MmaSync);
    assert_eq!(kernel(&plan, "embed"), "tessel_linear_mma_k128");
    assert_eq!(kernel(&plan, "enc0.0"), "tessel_block_mma_c128");
    let head = plan.last().unwrap();
    assert_eq!((head.label.as_str(), head.kernel, head.grid, head.block), ("head", "tessel_linear_mma_k128", ((960 * 544u32).div_ceil(64), 1, 1), (128, 1, 1)));
}

#[test]
fn launch_costs_add_up_to_the_networks_flops_and_fusion_saves_the_residual_round_trips() {
    let (cfg, g, bufs, tensors) = fixture();
    let f = cfg.flops(3840, 2160);
    let network = (f.total() - f.input) as u64;
    let sum = |p: &[Launch]| p.iter().fold(Cost::default(), |a, l| Cost { bytes: a.bytes + l.cost.bytes, flops: a.flops + l.cost.flops });
    let (portable, fused) = (sum(&build(&cfg, &g, &bufs, &tensors, Kernels::Portable)), sum(&build(&cfg, &g, &bufs, &tensors, Kernels::MmaSync)));
    assert_eq!(portable.flops, fused.flops, "fusion moves work, it does not remove it");
    assert_eq!(fused.flops, network, "the launches compute the contract's network (docs/NETWORK.md)");
    // The fused blocks keep the residual on chip: the portable plan moves the activations
    // through memory between its five launches per block; the fused plan also skips the
    // level-0 stream's round trips between the embedding, the first block, the last block and
    // the head (2 x 2 x t0 x c0 x 4 bytes).
    let (t0, c0) = (g.level_tokens(0) as u64, cfg.channels[0] as u64);
    assert!(fused.bytes + 4 * t0 * c0 * 4 <= portable.bytes, "{fused:?} against {portable:?}");
    let fused_plan = build(&cfg, &g, &bufs, &tensors, Kernels::MmaSync);
    let embed = fused_plan[0].cost;
    let inner = block_cost(t0, c0, (cfg.mlp_ratio * cfg.channels[0]) as u64);
    let e = linear_cost(&Layers::new(&cfg).embed, t0, cfg.pixel_embed as u64, false);
    assert_eq!(embed, Cost { bytes: inner.bytes + e.bytes - 2 * t0 * c0 * 4, flops: inner.flops + e.flops });
}

#[test]
fn the_copy_kill_switches_mark_every_fused_block_with_their_own_flag() {
    let (cfg, g, bufs, tensors) = fixture();
    let mut fused = build(&cfg, &g, &bufs, &tensors, Kernels::Wgmma);
    assert!(stream_f16(&mut fused, &bufs, 0, (960 * 544 * 32) as u64));
    let before = block_flags(&fused);
    assert_eq!(set_flag(&mut fused, WEIGHTS_PIECES, true), fused.len());
    assert_eq!(set_flag(&mut fused, STREAM_PAIRS, true), fused.len());
    assert_eq!(block_flags(&fused), before.iter().map(|f| f | WEIGHTS_PIECES | STREAM_PAIRS).collect::<Vec<_>>());
    set_flag(&mut fused, WEIGHTS_PIECES, false);
    assert_eq!(block_flags(&fused), before.iter().map(|f| f | STREAM_PAIRS).collect::<Vec<_>>(), "one switch leaves the other and the streams' flags");
    // The start-up words name the copies for the sm_90a object only (no switch is set in tests).
    let mut plan = build(&cfg, &g, &bufs, &tensors, Kernels::Wgmma);
    let words = copies_choice(&mut plan, Some(tessel_kernels::Matrix::Wgmma)).unwrap();
    assert!(words.starts_with("weights by bulk copies") || words.contains("built with -DTS_BULK=0"), "{words}");
    assert_eq!(block_flags(&plan), block_flags(&build(&cfg, &g, &bufs, &tensors, Kernels::Wgmma)), "nothing marked with the switches unset");
    assert_eq!(copies_choice(&mut plan, Some(tessel_kernels::Matrix::MmaSync)), None);
    assert_eq!(copies_choice(&mut plan, None), None);
}

/// The skip is staged only by the expansions into an f16 level of 16 channels or fewer: none of the
/// shipped model's (level 0 is 32 wide), the fast preset's pull-and-expand into its 16-channel
/// level 0, and only where its stream is f16.
#[test]
fn expansions_into_narrow_f16_levels_stage_their_skip() {
    let (cfg, _, bufs, _) = fixture();
    let fast = NetworkConfig { channels: vec![16, 48, 96], encoder_depths: vec![1, 1], decoder_depths: vec![1, 1], ..cfg.clone() };
    for (cfg, want) in [(&cfg, vec![]), (&fast, vec!["tessel_block_pull_expand_mma_c48"])] {
        let g = TokenGrid::new(cfg, 3840, 2160);
        let mut plan = build(cfg, &g, &bufs, &fake_tensors(cfg), Kernels::Wgmma);
        assert_eq!(mark_expand_stage(&mut plan, true), 0, "every stream still f32: nothing staged");
        assert!(stream16_choice(&mut plan, &bufs, cfg, &g).is_ok());
        let flags = block_flags(&plan);
        assert_eq!(mark_expand_stage(&mut plan, true), want.len());
        let staged: Vec<&str> = plan.iter().filter(|l| matches!(l.args, Args::Block(a, _) if a.flags & EXPAND_STAGED != 0)).map(|l| l.kernel).collect();
        assert_eq!(staged, want, "{:?}", cfg.channels);
        // Only that bit changed, and the switch off clears it.
        let marked: Vec<u32> = block_flags(&plan).iter().map(|f| f & !EXPAND_STAGED).collect();
        assert_eq!(marked, flags);
        assert_eq!(mark_expand_stage(&mut plan, false), 0);
        assert_eq!(block_flags(&plan), flags);
    }
}

/// Every BlockArgs::flags bit has the value kernels/include/tessel_block.h gives it, and no two
/// share a bit.
#[test]
fn block_flags_match_the_kernels_header() {
    let header = include_str!("../../kernels/include/tessel_block.h");
    let value = |name: &str| -> u32 {
        let line = header.lines().find(|l| l.starts_with(&format!("#define {name} "))).unwrap_or_else(|| panic!("{name} is not in tessel_block.h"));
        line.split_whitespace().nth(2).unwrap().trim_end_matches('u').parse().unwrap()
    };
    let flags = [
        ("TS_STREAM_X_F16", STREAM_X_F16),
        ("TS_STREAM_LOWER_F16", STREAM_LOWER_F16),
        ("TS_STREAM_UPPER_F16", STREAM_UPPER_F16),
        ("TS_ROWS_PLAIN", ROWS_PLAIN),
        ("TS_WEIGHTS_PIECES", WEIGHTS_PIECES),
        ("TS_STREAM_PAIRS", STREAM_PAIRS),
        ("TS_WINDOWS_REVERSED", WINDOWS_REVERSED),
        ("TS_EXPAND_STAGED", EXPAND_STAGED),
    ];
    for (name, v) in flags {
        assert_eq!(value(name), v, "{name}");
        assert_eq!(v.count_ones(), 1, "{name}");
    }
    assert_eq!(flags.iter().fold(0, |acc, (_, v)| acc | v).count_ones() as usize, flags.len(), "two flags share a bit");
}
