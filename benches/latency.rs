//! The latency comparison of the network backends on one GPU, as a cargo bench anyone with a
//! GPU can run: `cargo bench --bench latency` (sizes: TESSEL_BENCH_SIZES, default
//! "2560x1440 3840x2160"). Per size it runs `tessel bench --network vulkan,hip` (on NVIDIA,
//! `vulkan` is the native kernels inside the Vulkan command buffer; `hip` the same network on the
//! GPU runtime between the Vulkan front and back) and then the Vulkan shaders' network alone
//! (`TESSEL_VK_NATIVE=0`), all with GPU timestamps, and prints the tables. A backend that cannot
//! run here is reported by the CLI, and the bench says so instead of failing.

use std::process::Command;

fn run(exe: &str, networks: &str, size: &str, env: &[(&str, &str)]) -> bool {
    let out = Command::new(exe)
        .args(["bench", "--network", networks, "--size", size, "--ratio", "2", "--frames", "200"])
        .envs(env.iter().copied())
        .output()
        .expect("running tessel");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    if !out.status.success() {
        eprintln!("skipped: --network {networks} at {size}: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    out.status.success()
}

fn main() {
    let exe = env!("CARGO_BIN_EXE_tessel");
    let sizes = std::env::var("TESSEL_BENCH_SIZES").unwrap_or_else(|_| "2560x1440 3840x2160".into());
    for size in sizes.split_whitespace() {
        if !run(exe, "vulkan,hip", size, &[]) {
            run(exe, "vulkan", size, &[]);
        }
        println!("the Vulkan shaders' network (TESSEL_VK_NATIVE=0):");
        run(exe, "vulkan", size, &[("TESSEL_VK_NATIVE", "0")]);
    }
}
