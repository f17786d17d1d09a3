//! Builds the network kernels with clang-19 (no ROCm or CUDA installed): every `.hip` file of
//! this folder goes into one translation unit, compiled to an AMD code object per architecture
//! (HSACO, code object v5) and to NVIDIA PTX per target; reads each code object's resource
//! figures (llvm-readelf-19 --notes for AMD, the PTX text for NVIDIA); writes the table the
//! crate embeds. A missing compiler is a build error.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// AMD architectures (issue 12): RDNA2/3/4 and CDNA2/3.
const AMD: &[&str] = &["gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201", "gfx90a", "gfx942"];
/// NVIDIA PTX targets: sm_90a is sm_90 with its architecture-specific instructions (warpgroup
/// products), for compute capability 9.0 only.
const NVIDIA: &[&str] = &["sm_80", "sm_90", "sm_90a"];

fn tool(env: &str, default: &str) -> String {
    println!("cargo:rerun-if-env-changed={env}");
    std::env::var(env).unwrap_or_else(|_| default.to_string())
}

fn run(cmd: &mut Command, what: &str) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("tessel-kernels: could not run {what}: {e}. Install clang-19, lld-19 and llvm-19 (Debian: scripts/setup.sh), or point TESSEL_CLANG / TESSEL_READELF at them.")
    });
    if !out.status.success() {
        panic!("tessel-kernels: {what} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    out
}

#[derive(Default)]
struct Kernel {
    name: String,
    vgpr: u64,
    sgpr: u64,
    lds: u64,
    private: u64,
    vgpr_spill: u64,
    sgpr_spill: u64,
    wavefront: u64,
    max_threads: u64,
}

/// Per-kernel figures from `llvm-readelf --notes` (the AMDGPU metadata, YAML lines). Each
/// kernel is a top-level item of `amdhsa.kernels:` ("  - " at two spaces); its keys follow in
/// alphabetical order at four spaces (the arguments are nested deeper and skipped).
fn amd_metadata(notes: &str) -> Vec<Kernel> {
    let mut out: Vec<Kernel> = Vec::new();
    let mut in_kernels = false;
    for line in notes.lines() {
        if line.starts_with("amdhsa.kernels:") {
            in_kernels = true;
            continue;
        }
        if !in_kernels {
            continue;
        }
        if !line.starts_with(' ') {
            in_kernels = false;
            continue;
        }
        let body = if let Some(rest) = line.strip_prefix("  - ") {
            out.push(Kernel::default());
            rest
        } else if let Some(rest) = line.strip_prefix("    ") {
            if rest.starts_with(' ') {
                continue;
            }
            rest
        } else {
            continue;
        };
        let (Some(k), Some((key, v))) = (out.last_mut(), body.split_once(':')) else { continue };
        let v = v.trim();
        let num = v.parse::<u64>().unwrap_or(0);
        match key.trim() {
            ".name" => k.name = v.to_string(),
            ".vgpr_count" => k.vgpr = num,
            ".sgpr_count" => k.sgpr = num,
            ".group_segment_fixed_size" => k.lds = num,
            ".private_segment_fixed_size" => k.private = num,
            ".vgpr_spill_count" => k.vgpr_spill = num,
            ".sgpr_spill_count" => k.sgpr_spill = num,
            ".wavefront_size" => k.wavefront = num,
            ".max_flat_workgroup_size" => k.max_threads = num,
            _ => {}
        }
    }
    out
}

/// `.shared .align 4 .b8 name[bytes];` → (name, bytes).
fn shared_decl(line: &str) -> Option<(String, u64)> {
    let l = line.trim();
    if !l.starts_with(".shared") {
        return None;
    }
    let decl = l.trim_end_matches(';').split_whitespace().last()?;
    let (name, rest) = decl.split_once('[')?;
    Some((name.to_string(), rest.trim_end_matches(']').parse().ok()?))
}

/// Kernels of a PTX module with their static shared memory and maximum threads. Shared
/// variables used by one kernel are declared inside its body; those used by several (a helper
/// instantiated in more than one kernel) at module scope, counted for each kernel naming them.
fn ptx_metadata(ptx: &str) -> Vec<Kernel> {
    let mut out: Vec<Kernel> = Vec::new();
    let mut module_shared: Vec<(String, u64)> = Vec::new();
    let mut bodies: Vec<String> = Vec::new();
    let mut depth = 0i32;
    for line in ptx.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix(".visible .entry ").or_else(|| l.strip_prefix(".entry ")) {
            let name = rest.split('(').next().unwrap_or("").trim().to_string();
            out.push(Kernel { name, wavefront: 32, ..Default::default() });
            bodies.push(String::new());
            continue;
        }
        if out.is_empty() || (depth == 0 && !l.starts_with('{') && !l.starts_with(".maxntid") && !l.starts_with(')') && !l.starts_with(".param")) {
            if let Some(d) = shared_decl(l) {
                module_shared.push(d);
            }
            if depth == 0 && !l.starts_with('{') {
                continue;
            }
        }
        let k = out.last_mut().unwrap();
        depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
        if let Some(rest) = l.strip_prefix(".maxntid") {
            k.max_threads = rest.split(',').next().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
        } else if let Some((_, n)) = shared_decl(l) {
            k.lds += n;
        } else {
            let b = bodies.last_mut().unwrap();
            b.push_str(l);
            b.push('\n');
        }
    }
    for (k, body) in out.iter_mut().zip(&bodies) {
        for (name, bytes) in &module_shared {
            if body.contains(name.as_str()) {
                k.lds += bytes;
            }
        }
    }
    out
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let clang = tool("TESSEL_CLANG", "clang-19");
    let readelf = tool("TESSEL_READELF", "llvm-readelf-19");
    // Extra compiler flags for kernel experiments (e.g. "-DTS_MLP_GROUP(C)=2"): a variant built
    // beside the default and timed against it on the same machine in one call.
    let extra: Vec<String> = tool("TESSEL_KERNEL_CFLAGS", "").split_whitespace().map(String::from).collect();
    // What the code objects were built with, for the start-up line (tessel_kernels::wgmma_build_words).
    println!("cargo:rustc-env=TESSEL_KERNEL_CFLAGS_BUILT={}", extra.join(" "));
    println!("cargo:rerun-if-changed={}", dir.join("include").display());
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "hip")).collect();
    sources.sort();
    let mut unit = String::from("// Generated by kernels/build.rs: every kernel file in one unit.\n");
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
        writeln!(unit, "#include \"{}\"", s.display()).unwrap();
    }
    let unit_path = out.join("tessel_kernels.hip");
    std::fs::write(&unit_path, unit).unwrap();
    let inc = format!("-I{}", dir.join("include").display());
    let mut table = String::from("pub static CODE_OBJECTS: &[CodeObject] = &[\n");
    let mut push = |target: &str, platform: &str, file: &Path, kernels: &[Kernel]| {
        writeln!(table, "    CodeObject {{ target: \"{target}\", platform: Platform::{platform}, bytes: include_bytes!(\"{}\"), kernels: &[", file.display()).unwrap();
        for k in kernels {
            writeln!(
                table,
                "        KernelInfo {{ name: \"{}\", vgpr: {}, sgpr: {}, lds: {}, private: {}, vgpr_spill: {}, sgpr_spill: {}, wavefront: {}, max_threads: {} }},",
                k.name, k.vgpr, k.sgpr, k.lds, k.private, k.vgpr_spill, k.sgpr_spill, k.wavefront, k.max_threads
            )
            .unwrap();
        }
        writeln!(table, "    ] }},").unwrap();
    };
    for arch in AMD {
        let obj = out.join(format!("tessel-{arch}.hsaco"));
        run(
            Command::new(&clang)
                .args(["-x", "hip", &format!("--offload-arch={arch}"), "--cuda-device-only", "-nogpulib", "-nogpuinc", "-O3", "--no-gpu-bundle-output", &inc, "-c"])
                .args(&extra)
                .arg(&unit_path)
                .arg("-o")
                .arg(&obj),
            &format!("{clang} for {arch}"),
        );
        let notes = run(Command::new(&readelf).arg("--notes").arg(&obj), &format!("{readelf} --notes on {arch}"));
        push(arch, "Amd", &obj, &amd_metadata(&String::from_utf8_lossy(&notes.stdout)));
    }
    for sm in NVIDIA {
        let ptx = out.join(format!("tessel-{sm}.ptx"));
        run(
            Command::new(&clang)
                // PTX ISA 7.8 (what clang-19 emits for sm_80/sm_90) for the warp shuffles and mma.sync,
                // 8.0 for sm_90a's wgmma: without a CUDA install clang assumes no PTX features.
                .args(["-x", "cuda", &format!("--cuda-gpu-arch={sm}"), "--cuda-device-only", "-nocudalib", "-nocudainc", "-Xclang", "-target-feature", "-Xclang", if sm.ends_with('a') { "+ptx80" } else { "+ptx78" }, "-S", "-O3", &inc])
                .args(&extra)
                .arg(&unit_path)
                .arg("-o")
                .arg(&ptx),
            &format!("{clang} for {sm}"),
        );
        // cuModuleLoadData takes a NUL-terminated PTX string.
        let mut text = std::fs::read(&ptx).unwrap();
        let meta = ptx_metadata(&String::from_utf8_lossy(&text));
        text.push(0);
        std::fs::write(&ptx, &text).unwrap();
        push(sm, "Nvidia", &ptx, &meta);
    }
    table.push_str("];\n");
    std::fs::write(out.join("objects.rs"), table).unwrap();
}
