//! Compiles every shaders/*.comp to SPIR-V (glslc, Vulkan 1.3 target) and turns
//! shaders/include/bindings.h into Rust constants. A missing compiler is a build error.

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
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "comp"))
        .collect();
    entries.sort();
    let mut table = String::from("/// SPIR-V of every compute shader, by file stem.\npub const SPIRV: &[(&str, &[u8])] = &[\n");
    for src in &entries {
        let stem = src.file_stem().unwrap().to_str().unwrap().to_string();
        let spv = out.join(format!("{stem}.spv"));
        let st = Command::new(&glslc)
            .args(["--target-env=vulkan1.3", "-O", "-I"])
            .arg(root.join("include"))
            .arg("-o")
            .arg(&spv)
            .arg(src)
            .status()
            .expect("running glslc");
        assert!(st.success(), "glslc failed on {}", src.display());
        table.push_str(&format!("    (\"{stem}\", include_bytes!(\"{}\")),\n", spv.display()));
    }
    table.push_str("];\n");
    std::fs::write(out.join("spirv.rs"), table).unwrap();

    let header = std::fs::read_to_string(root.join("include/bindings.h")).unwrap();
    let mut consts = String::new();
    for line in header.lines() {
        let mut it = line.split_whitespace();
        if it.next() == Some("#define") {
            if let (Some(name), Some(value)) = (it.next(), it.next()) {
                if let Some(n) = name.strip_prefix("TS_") {
                    let v: u32 = value.parse().unwrap_or_else(|_| panic!("bindings.h: {name}: '{value}' is not an integer"));
                    consts.push_str(&format!("pub const {n}: u32 = {v};\n"));
                }
            }
        }
    }
    std::fs::write(out.join("bindings.rs"), consts).unwrap();
}
