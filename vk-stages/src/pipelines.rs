//! The shader table and the pipelines built from it. Every pipeline uses one layout: no
//! descriptor sets, only push constants (buffer addresses and sizes), so a dispatch is a push
//! and a dispatch. Specialisation constants give each variant its widths (the model's config).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use ash::vk;

use crate::device::DeviceShared;
use crate::error::{Check, Result, VkError};

mod spirv {
    include!(concat!(env!("OUT_DIR"), "/spirv.rs"));
}

/// Bytes of push constants every pipeline may use.
pub const PUSH_BYTES: u32 = 128;

/// A pipeline variant: shader stem and its specialisation constants (id = index).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    pub shader: &'static str,
    pub spec: Vec<u32>,
}

impl Variant {
    pub fn new(shader: &'static str, spec: &[u32]) -> Variant {
        Variant { shader, spec: spec.to_vec() }
    }
}

/// SPIR-V of a shader by stem.
pub fn spirv(stem: &str) -> Option<&'static [u8]> {
    spirv::SPIRV.iter().find(|(n, _)| *n == stem).map(|(_, b)| *b)
}

/// SPIR-V bytes as words (little-endian, as glslang writes them).
fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// `TESSEL_VK_SHADER_DIR`: a folder of `<stem>.spv` files that replace the built-in shaders of
/// those names, so that a shader's variants can be timed on a GPU machine with one binary (each
/// replacement is named on stderr). The file must be SPIR-V (its magic number checked); the
/// specialisation constants and push constants stay the built-in shader's.
fn override_spirv(stem: &str) -> Result<Option<Vec<u32>>> {
    match std::env::var_os("TESSEL_VK_SHADER_DIR") {
        Some(dir) => spirv_in(std::path::Path::new(&dir), stem),
        None => Ok(None),
    }
}

/// `<dir>/<stem>.spv` as SPIR-V words, None where there is no such file.
fn spirv_in(dir: &std::path::Path, stem: &str) -> Result<Option<Vec<u32>>> {
    let path = dir.join(format!("{stem}.spv"));
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(VkError::Shader(format!("{}: {e}", path.display()))),
    };
    if bytes.len() % 4 != 0 || bytes.len() < 20 || bytes[..4] != [0x03, 0x02, 0x23, 0x07] {
        return Err(VkError::Shader(format!("{}: not a SPIR-V module (magic number or length)", path.display())));
    }
    eprintln!("tessel: shader '{stem}' from {} (TESSEL_VK_SHADER_DIR)", path.display());
    Ok(Some(words_of(&bytes)))
}

/// Every shader stem built into this library.
pub fn shader_names() -> Vec<&'static str> {
    spirv::SPIRV.iter().map(|(n, _)| *n).collect()
}

pub struct Pipelines {
    shared: Arc<DeviceShared>,
    pub layout: vk::PipelineLayout,
    cache: vk::PipelineCache,
    cache_path: Option<PathBuf>,
    modules: HashMap<&'static str, vk::ShaderModule>,
    map: HashMap<Variant, vk::Pipeline>,
}

fn cache_path(shared: &DeviceShared) -> Option<PathBuf> {
    if std::env::var("TESSEL_PIPELINE_CACHE").is_ok_and(|v| v == "0") {
        return None;
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let uuid: String = shared.caps.uuid.iter().map(|b| format!("{b:02x}")).collect();
    Some(base.join("tessel").join(format!("pipelines-{uuid}.bin")))
}

impl Pipelines {
    pub fn new(shared: &Arc<DeviceShared>) -> Result<Pipelines> {
        let d = &shared.device;
        let range = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).offset(0).size(PUSH_BYTES)];
        let layout = unsafe { d.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&range), None) }
            .call("vkCreatePipelineLayout")?;
        let cache_path = cache_path(shared);
        // A cache that the driver does not like is ignored by the driver (header check).
        let initial = cache_path.as_ref().and_then(|p| std::fs::read(p).ok()).unwrap_or_default();
        let cache = unsafe { d.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default().initial_data(&initial), None) }
            .or_else(|_| unsafe { d.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) })
            .call("vkCreatePipelineCache")?;
        Ok(Pipelines { shared: shared.clone(), layout, cache, cache_path, modules: HashMap::new(), map: HashMap::new() })
    }

    fn module(&mut self, stem: &'static str) -> Result<vk::ShaderModule> {
        if let Some(m) = self.modules.get(stem) {
            return Ok(*m);
        }
        let built = spirv(stem).unwrap_or_else(|| panic!("shader '{stem}' is not in the build's shader table"));
        let words = match override_spirv(stem)? {
            Some(words) => words,
            None => words_of(built),
        };
        let m = unsafe { self.shared.device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) }
            .call("vkCreateShaderModule")?;
        self.modules.insert(stem, m);
        Ok(m)
    }

    /// Builds (once) the pipeline of a variant.
    pub fn build(&mut self, v: &Variant) -> Result<vk::Pipeline> {
        if let Some(p) = self.map.get(v) {
            return Ok(*p);
        }
        let module = self.module(v.shader)?;
        let entries: Vec<vk::SpecializationMapEntry> =
            (0..v.spec.len()).map(|i| vk::SpecializationMapEntry::default().constant_id(i as u32).offset(4 * i as u32).size(4)).collect();
        let data: Vec<u8> = v.spec.iter().flat_map(|x| x.to_le_bytes()).collect();
        let spec = vk::SpecializationInfo::default().map_entries(&entries).data(&data);
        let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(c"main").specialization_info(&spec);
        let flags = if self.shared.exec_props.is_some() { vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR } else { vk::PipelineCreateFlags::empty() };
        let info = [vk::ComputePipelineCreateInfo::default().stage(stage).layout(self.layout).flags(flags)];
        let p = unsafe { self.shared.device.create_compute_pipelines(self.cache, &info, None) }
            .map_err(|(_, r)| r)
            .call("vkCreateComputePipelines")?[0];
        self.map.insert(v.clone(), p);
        self.print_stats(v, p);
        Ok(p)
    }

    /// With TESSEL_PIPELINE_STATS=1 on a device that reports them: the driver's statistics of
    /// the pipeline (registers, shared memory, spills, ...), one line to stderr.
    fn print_stats(&self, v: &Variant, p: vk::Pipeline) {
        let Some(ext) = &self.shared.exec_props else { return };
        let info = vk::PipelineInfoKHR::default().pipeline(p);
        let Ok(execs) = (unsafe { ext.get_pipeline_executable_properties(&info) }) else { return };
        for i in 0..execs.len() as u32 {
            let ei = vk::PipelineExecutableInfoKHR::default().pipeline(p).executable_index(i);
            let Ok(stats) = (unsafe { ext.get_pipeline_executable_statistics(&ei) }) else { continue };
            let line: Vec<String> = stats
                .iter()
                .map(|st| {
                    let name = unsafe { std::ffi::CStr::from_ptr(st.name.as_ptr()) }.to_string_lossy().into_owned();
                    let val = unsafe {
                        match st.format {
                            vk::PipelineExecutableStatisticFormatKHR::BOOL32 => st.value.b32.to_string(),
                            vk::PipelineExecutableStatisticFormatKHR::INT64 => st.value.i64.to_string(),
                            vk::PipelineExecutableStatisticFormatKHR::UINT64 => st.value.u64.to_string(),
                            _ => format!("{:.3}", st.value.f64),
                        }
                    };
                    format!("{name}={val}")
                })
                .collect();
            eprintln!("pipeline {} {:?}: {}", v.shader, v.spec, line.join(", "));
        }
    }

    pub fn get(&self, v: &Variant) -> vk::Pipeline {
        *self.map.get(v).unwrap_or_else(|| panic!("pipeline {v:?} was not built at model load"))
    }

    pub fn device_caps(&self) -> &crate::device::Caps {
        &self.shared.caps
    }

    pub fn count(&self) -> usize {
        self.map.len()
    }

    /// Writes the pipeline cache to disk (best effort: a read-only home only loses speed).
    pub fn save_cache(&self) {
        let Some(path) = &self.cache_path else { return };
        if let Ok(data) = unsafe { self.shared.device.get_pipeline_cache_data(self.cache) } {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let tmp = path.with_extension("partial");
            if std::fs::write(&tmp, &data).is_ok() {
                let _ = std::fs::rename(&tmp, path);
            }
        }
    }
}

impl Drop for Pipelines {
    fn drop(&mut self) {
        let d = &self.shared.device;
        unsafe {
            for p in self.map.values() {
                d.destroy_pipeline(*p, None);
            }
            for m in self.modules.values() {
                d.destroy_shader_module(*m, None);
            }
            d.destroy_pipeline_cache(self.cache, None);
            d.destroy_pipeline_layout(self.layout, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shader_dir_replaces_by_stem_and_refuses_what_is_not_spirv() {
        let dir = std::env::temp_dir().join(format!("tessel-shader-dir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let built = spirv("linear").unwrap();
        std::fs::write(dir.join("linear.spv"), built).unwrap();
        std::fs::write(dir.join("attention.spv"), b"#version 460\nvoid main() {}\n").unwrap();
        assert_eq!(spirv_in(&dir, "linear").unwrap(), Some(words_of(built)));
        assert_eq!(spirv_in(&dir, "input").unwrap(), None, "a stem without a file keeps the built-in shader");
        let err = spirv_in(&dir, "attention").unwrap_err().to_string();
        assert!(err.contains("attention.spv") && err.contains("not a SPIR-V module"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
