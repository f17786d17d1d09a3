//! The network of the CPU reference (f32): embedding, encoder levels with 2x2 merging, bottleneck,
//! decoder levels with 2x2 expansion and skip additions, head. docs/NETWORK.md, "Network".

pub mod attention;
pub mod layers;

use crate::config::{BlockSpec, NetworkConfig, TokenGrid, HEAD_DIM};
use crate::package::ModelPackage;
use crate::shifts::{window_shift, WindowPartition};
use layers::{depth_to_space2, round_f16, silu, space_to_depth2, Linear, Norm};

/// One pre-norm transformer block: x += proj(attn(LN1 x)); x += fc2(SiLU(fc1(LN2 x))).
pub struct Block {
    pub spec: BlockSpec,
    pub norm1: Norm,
    pub qkv: Linear,
    pub rpb: Vec<f32>,
    pub proj: Linear,
    pub norm2: Norm,
    pub fc1: Linear,
    pub fc2: Linear,
}

impl Block {
    fn from_package(pkg: &ModelPackage, spec: BlockSpec) -> Block {
        let n = spec.name.clone();
        Block {
            norm1: Norm::from_package(pkg, &format!("{n}.norm1")),
            qkv: Linear::from_package(pkg, &format!("{n}.qkv")),
            rpb: pkg.tensor(&format!("{n}.rpb")).data.clone(),
            proj: Linear::from_package(pkg, &format!("{n}.proj")),
            norm2: Norm::from_package(pkg, &format!("{n}.norm2")),
            fc1: Linear::from_package(pkg, &format!("{n}.fc1")),
            fc2: Linear::from_package(pkg, &format!("{n}.fc2")),
            spec,
        }
    }

    pub fn forward(&self, x: &mut [f32], w: usize, h: usize, phase: usize) {
        let c = self.spec.channels;
        debug_assert_eq!(c % HEAD_DIM, 0);
        let part = WindowPartition::new(w, h, window_shift(self.spec.layer, phase));
        let qkv = self.qkv.forward(&self.norm1.forward(x));
        let a = self.proj.forward(&attention::window_attention(&qkv, c, &part, &self.rpb));
        x.iter_mut().zip(&a).for_each(|(xi, ai)| *xi += ai);
        let mut hid = self.fc1.forward(&self.norm2.forward(x));
        hid.iter_mut().for_each(|v| *v = silu(*v));
        let m = self.fc2.forward(&hid);
        x.iter_mut().zip(&m).for_each(|(xi, mi)| *xi += mi);
    }
}

/// The network with weights laid out for the reference's layers.
pub struct Network {
    pub config: NetworkConfig,
    pub pixel_embed: Linear,
    pub embed: Linear,
    /// merges[l - 1]: level l-1 -> l.
    pub merges: Vec<Linear>,
    /// expands[l - 1]: level l -> l-1.
    pub expands: Vec<Linear>,
    /// All blocks in execution order.
    pub blocks: Vec<Block>,
    pub head_norm: Norm,
    pub head: Linear,
    /// The per-pixel head path (config `pixel_head`).
    pub pixel_head: Option<Linear>,
}

impl Network {
    pub fn from_package(pkg: &ModelPackage) -> Network {
        let cfg = pkg.config.clone();
        let deep = cfg.levels() - 1;
        Network {
            pixel_embed: Linear::from_package(pkg, "pixel_embed"),
            embed: Linear::from_package(pkg, "embed"),
            merges: (1..=deep).map(|l| Linear::from_package(pkg, &format!("merge{l}"))).collect(),
            expands: (1..=deep).map(|l| Linear::from_package(pkg, &format!("expand{l}"))).collect(),
            blocks: cfg.blocks().into_iter().map(|s| Block::from_package(pkg, s)).collect(),
            head_norm: Norm::from_package(pkg, "head_norm"),
            head: Linear::from_package(pkg, "head"),
            pixel_head: cfg.pixel_head.then(|| Linear::from_package(pkg, "pixel_head")),
            config: cfg,
        }
    }

    fn run_blocks(&self, x: &mut [f32], grid: &TokenGrid, name_prefix: &str, phase: usize) {
        for b in self.blocks.iter().filter(|b| b.spec.name.starts_with(name_prefix) && b.spec.name[name_prefix.len()..].starts_with('.')) {
            let (w, h) = grid.level_dims(b.spec.level);
            b.forward(x, w, h, phase);
        }
    }

    /// Tokens ([padded tokens, 16 * P], f16 values) -> head ([padded tokens, 16 * 8], rounded to f16).
    pub fn forward(&self, tokens: &[f32], grid: &TokenGrid, phase: usize) -> Vec<f32> {
        let cfg = &self.config;
        let deep = cfg.levels() - 1;
        let mut x = self.embed.forward(tokens);
        let mut skips = Vec::with_capacity(deep);
        for lvl in 0..deep {
            self.run_blocks(&mut x, grid, &format!("enc{lvl}"), phase);
            skips.push(x.clone());
            let (w, h) = grid.level_dims(lvl);
            x = self.merges[lvl].forward(&space_to_depth2(&x, w, h, cfg.channels[lvl]));
        }
        self.run_blocks(&mut x, grid, "mid", phase);
        for lvl in (0..deep).rev() {
            let (w, h) = grid.level_dims(lvl + 1);
            let up = self.expands[lvl].forward(&x);
            x = depth_to_space2(&up, w, h, cfg.channels[lvl]);
            x.iter_mut().zip(&skips[lvl]).for_each(|(a, s)| *a += s);
            self.run_blocks(&mut x, grid, &format!("dec{lvl}"), phase);
        }
        let mut head = self.head.forward(&self.head_norm.forward(&x));
        if let Some(ph) = &self.pixel_head {
            // Read as rows of P, the token buffer is one row per pixel in the head buffer's
            // (token, slot) order; each row maps to that pixel's HEAD_CHANNELS.
            head.iter_mut().zip(&ph.forward(tokens)).for_each(|(h, p)| *h += p);
        }
        head.iter_mut().for_each(|v| *v = round_f16(*v));
        head
    }
}
