//! The latency comparison of the two network backends on one GPU, as a cargo bench anyone with a
//! GPU can run: `cargo bench --bench latency` (sizes: TESSEL_BENCH_SIZES, default
//! "2560x1440 3840x2160"). It runs `tessel bench --network vulkan,hip` (both networks on the
//! same frames, GPU timestamps) and prints its table; a backend that cannot run here is reported
//! by the CLI, and the bench says so instead of failing.

use std::process::Command;

fn main() {
    let exe = env!("CARGO_BIN_EXE_tessel");
    let sizes = std::env::var("TESSEL_BENCH_SIZES").unwrap_or_else(|_| "2560x1440 3840x2160".into());
    for size in sizes.split_whitespace() {
        for networks in ["vulkan,hip", "vulkan"] {
            let out = Command::new(exe).args(["bench", "--network", networks, "--size", size, "--ratio", "2", "--frames", "200"]).output().expect("running tessel");
            print!("{}", String::from_utf8_lossy(&out.stdout));
            if out.status.success() {
                break;
            }
            eprintln!("skipped: --network {networks} at {size}: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
    }
}
