//! The network as a list of dispatches, built once per Engine from the model's config: each
//! step holds its pipeline, its push constants (buffer addresses, sizes) and its workgroup
//! counts. Recording a frame replays the list, filling in only the attention window shifts.

use ash::vk;
use tessel_model::config::{BlockSpec, NetOp, HEAD_DIM};

use crate::bindings as b;
use crate::layers::LinearSpec;
use crate::model::Model;
use crate::pipelines::{Variant, PUSH_BYTES};

/// Push-constant bytes, built on the stack.
#[derive(Clone, Copy)]
pub struct Push {
    pub bytes: [u8; PUSH_BYTES as usize],
    pub len: usize,
}

impl Push {
    pub fn new() -> Push {
        Push { bytes: [0; PUSH_BYTES as usize], len: 0 }
    }
    pub fn u64(mut self, v: u64) -> Push {
        self.len = self.len.div_ceil(8) * 8;
        self.bytes[self.len..self.len + 8].copy_from_slice(&v.to_le_bytes());
        self.len += 8;
        self
    }
    pub fn u32(mut self, v: u32) -> Push {
        self.bytes[self.len..self.len + 4].copy_from_slice(&v.to_le_bytes());
        self.len += 4;
        self
    }
    pub fn f32(self, v: f32) -> Push {
        self.u32(v.to_bits())
    }
    pub fn set_u32(&mut self, offset: usize, v: u32) {
        self.bytes[offset..offset + 4].copy_from_slice(&v.to_le_bytes());
    }
    /// The bytes to push (a multiple of 8).
    pub fn data(&self) -> &[u8] {
        &self.bytes[..self.len.div_ceil(8) * 8]
    }
}

impl Default for Push {
    fn default() -> Self {
        Push::new()
    }
}

/// Byte offset of shift_x in the attention shader's push constants (3 addresses, width, height).
pub const ATTENTION_SHIFT_OFFSET: usize = 3 * 8 + 2 * 4;
/// The same in block_fused.comp's push constants (14 addresses, width, height).
pub const FUSED_SHIFT_OFFSET: usize = 14 * 8 + 2 * 4;

#[derive(Clone)]
pub struct Step {
    pub pipeline: vk::Pipeline,
    pub push: Push,
    pub groups: (u32, u32, u32),
    /// Attention steps: the block's layer index (its shift depends on the frame's phase) and
    /// where the shift goes in the push constants.
    pub shift_layer: Option<(usize, usize)>,
    /// Its label in the per-dispatch profile (a timestamp follows each step when profiling).
    pub profile_label: Option<String>,
    /// What it must move and compute at the least (for the per-kernel table).
    pub cost: Cost,
}

/// Bytes a step reads and writes in device memory (each tensor once: its inputs, outputs,
/// residual reads, weights) and the FLOPs of its products (2 per multiply-add).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    pub bytes: u64,
    pub flops: u64,
}

/// Addresses of the buffers the network reads and writes (the Vulkan engine's and hip-net's).
#[derive(Clone, Debug)]
pub struct NetBuffers {
    pub tokens: u64,
    pub head: u64,
    /// The residual stream per level (level l also holds the skip of the encoder): sized for
    /// f32, which the shaders' network halves where it keeps them in f16 (`NetTiles::stream16`).
    pub x: Vec<u64>,
    /// f16 scratch: qkv, attention output, MLP hidden.
    pub qkv: u64,
    pub attn: u64,
    pub hidden: u64,
}

/// The same fields as byte counts: what each buffer needs for a config and grid.
pub type NetSizes = NetBuffers;

pub fn net_sizes(cfg: &tessel_model::config::NetworkConfig, g: &tessel_model::config::TokenGrid) -> NetSizes {
    let t = |l: usize| g.level_tokens(l) as u64;
    let c = |l: usize| cfg.channels[l] as u64;
    let max = |f: &dyn Fn(usize) -> u64| (0..cfg.levels()).map(f).max().unwrap_or(0);
    NetBuffers {
        tokens: t(0) * cfg.token_channels() as u64 * 2,
        head: t(0) * cfg.head_token_channels() as u64 * 2,
        x: (0..cfg.levels()).map(|l| t(l) * c(l) * 4).collect(),
        qkv: max(&|l| t(l) * 3 * c(l)) * 2,
        attn: max(&|l| t(l) * c(l)) * 2,
        hidden: max(&|l| t(l) * cfg.mlp_ratio as u64 * c(l)) * 2,
    }
}

pub struct PlanBuilder<'a> {
    pub model: &'a Model,
    /// (width, height) in tokens per level.
    pub dims: Vec<(usize, usize)>,
    pub bufs: NetBuffers,
    pub steps: Vec<Step>,
}

impl PlanBuilder<'_> {
    fn push_step(&mut self, v: &Variant, push: Push, groups: (u32, u32, u32), label: String, cost: Cost) {
        let pipeline = self.model.pipelines.get(v);
        self.steps.push(Step { pipeline, push, groups, shift_layer: None, profile_label: Some(label), cost });
    }

    /// A linear layer from buffer x to buffer y over `tokens` tokens of a grid `width` wide;
    /// `norm`: the LayerNorm (tensor prefix) its input rows go through first.
    fn linear(&mut self, l: &LinearSpec, (x, y): (u64, u64), prefix: &str, (tokens, width): (usize, usize), aux: [u64; 3], norm: Option<&str>) {
        let m = self.model;
        assert_eq!(norm.is_some(), l.ln == 1, "{prefix}: LayerNorm flag and tensors disagree");
        let (g, be) = match norm {
            Some(n) => (m.tensor(&format!("{n}.weight")), m.tensor(&format!("{n}.bias"))),
            None => (0, 0),
        };
        let push = Push::new()
            .u64(x)
            .u64(y)
            .u64(m.tensor(&format!("{prefix}.weight")))
            .u64(m.tensor(&format!("{prefix}.bias")))
            .u64(aux[0])
            .u64(aux[1])
            .u64(aux[2])
            .u64(g)
            .u64(be)
            .u32(tokens as u32)
            .u32(width as u32);
        let (variant, groups) = m.linear_dispatch(l, tokens);
        let cost = linear_cost(l, tokens as u64, m.config.pixel_embed as u64, aux[0] != 0);
        self.push_step(&variant, push, groups, prefix.to_string(), cost);
    }

    /// The whole block in one dispatch per window (`shader`: block_fused.comp or
    /// block_coop.comp, the same push constants).
    fn fused_block(&mut self, bs: &BlockSpec, shader: &'static str) {
        let m = self.model;
        let (level, n) = (bs.level, bs.name.as_str());
        let c = m.config.channels[level] as u64;
        let hid = m.config.mlp_ratio as u64 * c;
        let (w, h) = self.dims[level];
        let t = (w * h) as u64;
        let mut push = Push::new().u64(self.bufs.x[level]);
        for name in ["norm1.weight", "norm1.bias", "qkv.weight", "qkv.bias", "rpb", "proj.weight", "proj.bias", "norm2.weight", "norm2.bias", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"] {
            push = push.u64(m.tensor(&format!("{n}.{name}")));
        }
        let push = push.u32(w as u32).u32(h as u32).u32(0).u32(0);
        let weights = 2 * (3 * c * c + c * c + 2 * hid * c);
        let cost = Cost { bytes: t * c * 4 * 2 + weights, flops: 2 * t * (3 * c * c + c * c + 2 * hid * c) + 2 * t * 2 * b::WINDOW_TOKENS as u64 * c };
        let windows = (t / b::WINDOW_TOKENS as u64) as u32;
        self.push_step(&Variant::new(shader, &[c as u32, hid as u32]), push, (windows, 1, 1), n.to_string(), cost);
        self.steps.last_mut().unwrap().shift_layer = Some((bs.layer, FUSED_SHIFT_OFFSET));
    }

    /// A block; `head`: the head may follow it in its MLP's dispatch ([`Model::mlp_head_dispatch`]).
    /// Whether it did (only where the block's MLP runs in one dispatch with its projection).
    fn block(&mut self, bs: &BlockSpec, head: Option<(Variant, (u32, u32, u32))>) -> bool {
        if let Some(shader) = self.model.fused_level(bs.level) {
            self.fused_block(bs, shader);
            return false;
        }
        let m = self.model;
        let ly = &m.layers;
        let (level, name) = (bs.level, bs.name.as_str());
        let c = m.config.channels[level];
        let (w, h) = self.dims[level];
        let t = w * h;
        let x = self.bufs.x[level];
        let (qkv, attn, hidden) = (self.bufs.qkv, self.bufs.attn, self.bufs.hidden);
        let none = [0u64; 3];
        let qkv_in = m.attention_qkv(level);
        let mut push = Push::new();
        let mut cost = Cost { bytes: t as u64 * 4 * c as u64 * 2, flops: 2 * t as u64 * 2 * b::WINDOW_TOKENS as u64 * c as u64 };
        if qkv_in {
            // q, k and v from the stream inside the attention: its rows in, no qkv rows.
            let l = &ly.qkv[level];
            let q = linear_cost(l, t as u64, m.config.pixel_embed as u64, false);
            let rows = t as u64 * 3 * c as u64 * 2;
            cost = Cost { bytes: cost.bytes + q.bytes - 2 * rows, flops: cost.flops + q.flops };
            push = push.u64(x);
        } else {
            self.linear(&ly.qkv[level], (x, qkv), &format!("{name}.qkv"), (t, w), none, Some(&format!("{name}.norm1")));
            push = push.u64(qkv);
        }
        let mut push = push.u64(attn).u64(m.tensor(&format!("{name}.rpb"))).u32(w as u32).u32(h as u32).u32(0).u32(0);
        if qkv_in {
            for tensor in ["qkv.weight", "qkv.bias", "norm1.weight", "norm1.bias"] {
                push = push.u64(m.tensor(&format!("{name}.{tensor}")));
            }
        }
        let windows = (t / b::WINDOW_TOKENS as usize) as u32;
        let shared = m.shared_memory();
        let heads = if qkv_in && m.tiles.window(c, shared) { 1 } else { (c / HEAD_DIM) as u32 };
        self.push_step(&m.tiles.attention(c, m.attention_coop, qkv_in, shared), push, (windows, heads, 1), format!("{name}.attention"), cost);
        self.steps.last_mut().unwrap().shift_layer = Some((bs.layer, ATTENTION_SHIFT_OFFSET));
        let mlp = m.mlp_dispatch(level, t);
        let proj_folded = mlp.as_ref().is_some_and(|&(_, _, proj)| proj);
        if !proj_folded {
            self.linear(&ly.proj[level], (attn, x), &format!("{name}.proj"), (t, w), none, None);
        }
        if let Some((variant, groups, proj)) = mlp {
            let with_head = head.is_some() && proj;
            let (variant, groups) = head.filter(|_| proj).unwrap_or((variant, groups));
            self.mlp(&variant, groups, bs, (t, w), proj.then_some(attn), with_head);
            return with_head;
        }
        self.linear(&ly.fc1[level], (x, hidden), &format!("{name}.fc1"), (t, w), none, Some(&format!("{name}.norm2")));
        self.linear(&ly.fc2[level], (hidden, x), &format!("{name}.fc2"), (t, w), none, None);
        false
    }

    /// A block's MLP in one dispatch (mlp_direct_coop.comp, the linear layers' push constants:
    /// the stream as x, fc1's weight and bias, fc2's as aux and aux_w, norm2's). `attn`: the
    /// variant takes the attention projection first (mlp_proj_coop), from the attention's output
    /// rows there (y), with proj's bias as aux_b and its weight as aux2; otherwise y is the stream.
    /// `head`: the head follows in the same dispatch (mlp_proj_head_regs_w_coop: the head's
    /// packed tensors, the token buffer where the per-pixel path runs, and the head buffer after
    /// the MLP's push constants).
    fn mlp(&mut self, variant: &Variant, groups: (u32, u32, u32), bs: &BlockSpec, (tokens, width): (usize, usize), attn: Option<u64>, head: bool) {
        let m = self.model;
        let (level, n) = (bs.level, bs.name.as_str());
        let x = self.bufs.x[level];
        let t = |name: &str| m.tensor(&format!("{n}.{name}"));
        let push = Push::new()
            .u64(x)
            .u64(attn.unwrap_or(x))
            .u64(t("fc1.weight"))
            .u64(t("fc1.bias"))
            .u64(t("fc2.weight"))
            .u64(t("fc2.bias"))
            .u64(if attn.is_some() { t("proj.bias") } else { 0 })
            .u64(t("norm2.weight"))
            .u64(t("norm2.bias"))
            .u32(tokens as u32)
            .u32(width as u32)
            .u64(if attn.is_some() { t("proj.weight") } else { 0 });
        let push = if head {
            let pixel = if m.config.pixel_head { self.bufs.tokens } else { 0 };
            push.u64(m.tensor(crate::model::HEAD_PACK)).u64(pixel).u64(self.bufs.head)
        } else {
            push
        };
        let (fc1, fc2) = (&m.layers.fc1[level], &m.layers.fc2[level]);
        let p = m.config.pixel_embed as u64;
        let (a, b) = (linear_cost(fc1, tokens as u64, p, false), linear_cost(fc2, tokens as u64, p, false));
        // Without the hidden activations' store and load, and with the stream read once (fc1's
        // LayerNorm and fc2's residual read the same rows).
        let hidden = 2 * 2 * tokens as u64 * fc1.out as u64;
        let stream = tokens as u64 * fc1.inp as u64 * if fc1.in_f16 == 1 { 2 } else { 4 };
        let mut cost = Cost { bytes: a.bytes + b.bytes - hidden - stream, flops: a.flops + b.flops };
        if attn.is_some() {
            // proj's too, less its store of the stream and the MLP's load of it.
            let pr = linear_cost(&m.layers.proj[level], tokens as u64, p, false);
            cost = Cost { bytes: cost.bytes + pr.bytes - 2 * stream, flops: cost.flops + pr.flops };
        }
        if head {
            // The head's, less its read of the stream and the MLP's store of it.
            let hc = linear_cost(&m.layers.head, tokens as u64, p, m.config.pixel_head);
            cost = Cost { bytes: cost.bytes + hc.bytes - 2 * stream, flops: cost.flops + hc.flops };
        }
        let label = match (attn.is_some(), head) {
            (true, true) => format!("{n}.proj+mlp+head"),
            (true, false) => format!("{n}.proj+mlp"),
            _ => format!("{n}.mlp"),
        };
        self.push_step(variant, push, groups, label, cost);
    }

    /// The whole network in execution order (docs/NETWORK.md §4).
    pub fn build(mut self) -> Vec<Step> {
        let m = self.model;
        let cfg = &m.config;
        let none = [0u64; 3];
        let (w0, h0) = self.dims[0];
        let ops = cfg.ops();
        let mut head_done = false;
        for (i, op) in ops.iter().cloned().enumerate() {
            match op {
                NetOp::Embed => self.linear(&m.layers.embed, (self.bufs.tokens, self.bufs.x[0]), "embed", (w0 * h0, w0), none, None),
                NetOp::Block(bs) => {
                    // The last block at level 0 takes the head along where it can.
                    let head = (bs.level == 0 && matches!(ops.get(i + 1), Some(NetOp::Head))).then(|| m.mlp_head_dispatch(w0 * h0)).flatten();
                    head_done |= self.block(&bs, head);
                }
                NetOp::Head if head_done => {}
                NetOp::Merge(l) => {
                    let (w1, h1) = self.dims[l + 1];
                    let (xa, xb) = (self.bufs.x[l], self.bufs.x[l + 1]);
                    self.linear(&m.layers.merge[l], (xa, xb), &format!("merge{}", l + 1), (w1 * h1, w1), none, None);
                }
                NetOp::Expand(l) => {
                    let (w1, h1) = self.dims[l + 1];
                    let (xa, xb) = (self.bufs.x[l + 1], self.bufs.x[l]);
                    self.linear(&m.layers.expand[l], (xa, xb), &format!("expand{}", l + 1), (w1 * h1, w1), none, None);
                }
                NetOp::Head => {
                    let (x0, head, tokens) = (self.bufs.x[0], self.bufs.head, self.bufs.tokens);
                    let aux = if cfg.pixel_head { [tokens, m.tensor("pixel_head.weight"), m.tensor("pixel_head.bias")] } else { none };
                    self.linear(&m.layers.head, (x0, head), "head", (w0 * h0, w0), aux, Some("head_norm"));
                }
            }
        }
        self.steps
    }
}

/// The least a linear layer moves and computes over `tokens` rows (output rows; for the
/// expansion, input rows): input rows, output rows (read too when added to), weights, and for the
/// head with the per-pixel path, the token rows.
pub fn linear_cost(l: &LinearSpec, tokens: u64, p: u64, pixel_head: bool) -> Cost {
    let (inp, out) = (l.inp as u64, l.out as u64);
    let in_bytes = tokens * inp * if l.in_f16 == 1 { 2 } else { 4 };
    let out_elem = if l.out_f16 == 1 { 2 } else { 4 };
    let out_bytes = tokens * out * out_elem * if l.residual == 1 { 2 } else { 1 };
    let mut cost = Cost { bytes: in_bytes + out_bytes + out * inp * 2, flops: 2 * tokens * inp * out };
    if pixel_head {
        cost.bytes += tokens * 16 * p * 2;
        cost.flops += 2 * tokens * 16 * p * 8;
    }
    cost
}
