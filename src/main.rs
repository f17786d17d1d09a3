//! tessel: an open neural temporal upscaler. The command-line front end.

/// println! that ends the program quietly when stdout's reader has gone (`tessel info | head`)
/// instead of panicking.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write;
        if let Err(e) = writeln!(std::io::stdout(), $($t)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}

mod cli;
mod scene;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use cli::common::{parse_size, NetworkChoice};
use scene::{SceneKind, SceneSpec};

#[derive(Parser)]
#[command(name = "tessel", version, about = "An open neural temporal upscaler: colour, depth and motion at render size in, a sharp stable frame at display size out.")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The shipped model on a built-in scene: images, a side-by-side picture, the quality table.
    Demo {
        #[arg(long, default_value = "out/demo")]
        out: PathBuf,
        /// Model package: a folder, or a shipped package's name (tessel-v12, the default; tessel-v12-fast, the fast preset).
        #[arg(long)]
        model: Option<PathBuf>,
        #[arg(long, default_value = "640x360", value_parser = parse_size)]
        size: (usize, usize),
        #[arg(long, default_value_t = 2.0)]
        ratio: f32,
        #[arg(long, default_value_t = 32)]
        frames: usize,
    },
    /// Write a deterministic procedural sequence with ground truth (frame-sequence format).
    Scene {
        #[arg(long, value_enum, default_value = "mixed")]
        kind: SceneKind,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output/render size ratio (1.5, 2, 3, ...).
        #[arg(long, default_value_t = 2.0)]
        ratio: f32,
        #[arg(long, default_value_t = 32)]
        frames: usize,
        /// Output size.
        #[arg(long, default_value = "640x360", value_parser = parse_size)]
        size: (usize, usize),
        /// Ground-truth samples per output pixel (at least 16).
        #[arg(long, default_value_t = 16)]
        spp: usize,
        /// Frame of the camera cut with a reset (default: the middle); 0 for none.
        #[arg(long)]
        reset_at: Option<usize>,
        /// Float width of the frame files: 16 or 32.
        #[arg(long, default_value_t = 16)]
        bits: u32,
        #[arg(long)]
        out: PathBuf,
    },
    /// Run a frame sequence through a network backend; write outputs and report.json.
    Replay {
        frames: PathBuf,
        #[arg(long, value_enum, default_value = "auto")]
        network: NetworkChoice,
        /// Model package: a folder, or a shipped package's name (tessel-v12, the default; tessel-v12-fast, the fast preset).
        #[arg(long)]
        model: Option<PathBuf>,
        #[arg(long)]
        out: PathBuf,
        /// Also write tonemapped PNGs.
        #[arg(long)]
        png: bool,
        /// Also write half-float EXRs.
        #[arg(long)]
        exr: bool,
    },
    /// PSNR, SSIM and temporal stability of replay outputs against the references, with bicubic.
    Compare {
        out_dir: PathBuf,
        frames: PathBuf,
        /// More replay output folders to score in the same table.
        #[arg(long = "also")]
        also: Vec<PathBuf>,
        /// First frame scored (earlier frames are warm-up).
        #[arg(long, default_value_t = 8)]
        from: usize,
        /// Where to write the JSON (default: OUT_DIR/compare.json).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Also write a side-by-side PNG (bicubic, each method, ground truth) of one frame here.
        #[arg(long)]
        picture: Option<PathBuf>,
        /// Frame of the picture (default: the last).
        #[arg(long, requires = "picture")]
        picture_frame: Option<usize>,
        /// The picture shows only the 3x magnified centre crops (default: full frames above them).
        #[arg(long, requires = "picture")]
        crops_only: bool,
    },
    /// Per-stage timing of one or more backends on the same generated frames (GPU: timestamps,
    /// median and p99; CPU: wall time).
    Bench {
        /// Comma list of backends: cpu,vulkan,none,auto.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "auto")]
        network: Vec<NetworkChoice>,
        /// Model package: a folder, or a shipped package's name (tessel-v12, the default; tessel-v12-fast, the fast preset).
        #[arg(long)]
        model: Option<PathBuf>,
        #[arg(long, default_value = "640x360", value_parser = parse_size)]
        size: (usize, usize),
        #[arg(long, default_value_t = 2.0)]
        ratio: f32,
        /// Timed frames of a GPU backend.
        #[arg(long, default_value_t = 200)]
        frames: usize,
        /// Timed frames of a CPU backend.
        #[arg(long, default_value_t = 4)]
        cpu_frames: usize,
        /// Untimed frames first (GPU backends; the CPU ones warm up with at most one).
        #[arg(long, default_value_t = 20)]
        warmup: usize,
        /// Also write the figures here as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Every backend present against the CPU reference: golden cases, and a generated sequence
    /// with a reset, a render-size change and NaN/Inf inputs. Fails below the thresholds.
    Check {
        /// Comma list of backends to check (default: every one present but the CPU itself).
        #[arg(long, value_enum, value_delimiter = ',')]
        network: Vec<NetworkChoice>,
        /// Model of the generated sequence and of golden cases that name none.
        #[arg(long)]
        model: Option<PathBuf>,
        /// Folder of golden cases (default: $TESSEL_GOLDEN_DIR, else model/tests/golden here or
        /// beside the executable).
        #[arg(long)]
        golden: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Many frames through one backend: host RSS after frame 100 and at the end must not grow
    /// past a bound; outputs must stay finite.
    Soak {
        #[arg(long, value_enum, default_value = "auto")]
        network: NetworkChoice,
        /// Model package: a folder, or a shipped package's name (tessel-v12, the default; tessel-v12-fast, the fast preset).
        #[arg(long)]
        model: Option<PathBuf>,
        #[arg(long, default_value = "64x36", value_parser = parse_size)]
        size: (usize, usize),
        #[arg(long, default_value_t = 2.0)]
        ratio: f32,
        #[arg(long, default_value_t = 10000)]
        frames: usize,
        /// Largest RSS growth (KiB) from frame 100 to the end that passes (a driver's allocator
        /// may settle late: lavapipe's grows up to about 6 MiB over the first 2,000 frames).
        #[arg(long, default_value_t = 8192)]
        max_growth_kib: u64,
        /// Largest RSS growth (KiB) over the second half of the run that passes (a leak).
        #[arg(long, default_value_t = 1024)]
        max_late_growth_kib: u64,
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Tune the classical TAAU (`--network none`) on training scenes (seeds from 100; never the
    /// held-out 1001 and 1002); prints the best parameters as JSON.
    TuneTaau {
        #[arg(long, default_value = "192x108", value_parser = parse_size)]
        size: (usize, usize),
        #[arg(long, default_value_t = 24)]
        frames: usize,
        /// Scenes per kind and ratio.
        #[arg(long, default_value_t = 1)]
        seeds: u64,
        #[arg(long, default_value_t = 2)]
        rounds: usize,
        /// The first round's factor around each parameter.
        #[arg(long, default_value_t = 2.0)]
        step: f32,
        /// First scored frame.
        #[arg(long, default_value_t = 4)]
        from: usize,
        /// Start from these parameters (JSON as the command prints them; missing fields take
        /// the defaults) instead of the defaults; several files: each is scored and the search
        /// starts from the best.
        #[arg(long, num_args = 1..)]
        start: Vec<PathBuf>,
        /// The package whose fixed-head baseline is reported beside.
        #[arg(long)]
        model: Option<PathBuf>,
    },
    /// The model package, its network and its cost at common output sizes.
    Info {
        /// Model package: a folder, or a shipped package's name (tessel-v12, the default; tessel-v12-fast, the fast preset).
        #[arg(long)]
        model: Option<PathBuf>,
    },
    /// Write a deterministic UNTRAINED model package (for tests and development only).
    InitModel {
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
}

fn run() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Demo { out, model, size, ratio, frames } => cli::demo::demo(&cli::demo::DemoOptions { out, model, output: size, ratio, frames }),
        Cmd::Scene { kind, seed, ratio, frames, size, spp, reset_at, bits, out } => {
            anyhow::ensure!(spp >= 16, "--spp {spp}: ground truth needs at least 16 samples per pixel");
            anyhow::ensure!(bits == 16 || bits == 32, "--bits {bits}: must be 16 or 32");
            anyhow::ensure!((1.0..=4.0).contains(&ratio), "--ratio {ratio}: must lie in 1..=4");
            anyhow::ensure!(frames >= 1, "--frames must be at least 1");
            let reset_at = match reset_at {
                Some(0) => None,
                Some(r) => Some(r),
                None => Some(frames / 2),
            };
            let spec = SceneSpec { kind, seed, ratio, frames, output: size, spp, reset_at };
            let p = cli::scene::write_scene(&spec, &out, bits, false)?;
            let (rw, rh) = spec.render_size();
            say!("{}: {:?} seed {seed}, {frames} frames, {rw}x{rh} -> {}x{}, jitter period {}", p.display(), kind, size.0, size.1, spec.jitter_period());
            Ok(())
        }
        Cmd::Replay { frames, network, model, out, png, exr } => {
            let r = cli::replay::replay(&frames, &out, &cli::replay::ReplayOptions { network, model, png, exr, quiet: false })?;
            say!("{} frames -> {}; mean {:.1} ms/frame ({:.1} ms wall)", r.frames.len(), out.display(), r.mean_frame_ms, r.mean_wall_ms);
            if let Some(p) = r.mean_psnr_from_8 {
                say!("mean PSNR frames 8..: {p:.3} dB");
            }
            Ok(())
        }
        Cmd::Compare { out_dir, frames, also, from, json, picture, picture_frame, crops_only } => {
            let mut dirs = vec![out_dir.clone()];
            dirs.extend(also);
            let r = cli::compare::compare(&dirs, &frames, from)?;
            cli::compare::print_table(&r);
            let jp = json.unwrap_or_else(|| out_dir.join("compare.json"));
            tessel_model::error::write_file_atomic(&jp, &serde_json::to_vec_pretty(&r)?)?;
            if let Some(pic) = picture {
                use cli::picture::{side_by_side, Layout};
                let seq = tessel_model::sequence::Sequence::open(&frames)?;
                let i = picture_frame.unwrap_or(seq.len().saturating_sub(1));
                let layout = if crops_only { Layout::CropsOnly } else { Layout::FramesAndCrops };
                let panels = side_by_side(&seq, i, &dirs, layout, &pic)?;
                say!("picture of frame {i}: {} (left to right: {panels})", pic.display());
            }
            Ok(())
        }
        Cmd::Bench { network, model, size, ratio, frames, cpu_frames, warmup, json } => {
            cli::bench::bench(&cli::bench::BenchOptions { networks: network, model, output: size, ratio, frames, cpu_frames, warmup, json }).map(drop)
        }
        Cmd::Check { network, model, golden, json } => cli::check::check(&cli::check::CheckOptions { networks: network, model, golden, json }).map(drop),
        Cmd::TuneTaau { size, frames, seeds, rounds, step, from, start, model } => {
            let fixed = cli::common::find_model(model.as_deref())?.map(|p| p.baseline).unwrap_or_default();
            let start = start.iter().map(|p| cli::tune_taau::read_params(p)).collect::<Result<Vec<_>>>()?;
            cli::tune_taau::tune(&cli::tune_taau::TuneOptions { output: size, frames, seeds, rounds, step, from, start, fixed }).map(drop)
        }
        Cmd::Soak { network, model, size, ratio, frames, max_growth_kib, max_late_growth_kib, json } => {
            cli::soak::soak(&cli::soak::SoakOptions { network, model, output: size, ratio, frames, max_growth_kib, max_late_growth_kib, json }).map(drop)
        }
        Cmd::Info { model } => cli::info::info(model.as_deref()),
        Cmd::InitModel { seed, out } => {
            let pkg = tessel_model::package::ModelPackage::untrained(Default::default(), seed);
            pkg.write(&out)?;
            say!("{}: untrained package '{}' ({} parameters) — for tests only", out.display(), pkg.name, pkg.config.parameter_count());
            Ok(())
        }
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("tessel: error: {e:#}");
        std::process::exit(1);
    }
}
