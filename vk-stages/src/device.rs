//! The Vulkan instance and device the engine runs on, and what the device can do.

use std::ffi::CStr;
use std::sync::Arc;

use ash::vk;

use crate::error::{Check, Result, VkError};

/// What the engine found on the device: the features it needs and the fast paths it may take.
#[derive(Clone, Debug)]
pub struct Caps {
    pub name: String,
    pub driver: String,
    pub api: (u32, u32, u32),
    pub device_type: vk::PhysicalDeviceType,
    pub uuid: [u8; 16],
    pub subgroup_size: u32,
    pub shared_memory: u32,
    pub max_push_constants: u32,
    pub f16_arithmetic: bool,
    pub storage_16bit: bool,
    pub int64: bool,
    /// f64 arithmetic in shaders (the reference-exact division of the pixel context).
    pub float64: bool,
    pub buffer_device_address: bool,
    pub timeline_semaphore: bool,
    /// VK_KHR_cooperative_matrix with f16 x f16 -> f32 at 16x16x16, subgroup scope.
    pub coopmat_f16_16: bool,
    /// `coopmat_f16_16` only because `TESSEL_VK_COOPMAT_ANY_SIZE=1` asked for it: the driver
    /// lists f16 x f16 -> f32 at other sizes alone ([`coopmat_f16_16`]).
    pub coopmat_forced: bool,
    /// VK_KHR_external_memory_fd (OPAQUE_FD buffers can be exported).
    pub external_memory_fd: bool,
    /// VK_KHR_external_semaphore_fd.
    pub external_semaphore_fd: bool,
    /// VK_NVX_binary_import: CUDA modules (PTX) launched from a command buffer (NVIDIA).
    pub binary_import: bool,
    pub timestamp_period_ns: f32,
    pub timestamps: bool,
    /// The queue family the engine submits to ([`pick_queue_family`]); None: no compute queue.
    pub queue: Option<QueueChoice>,
}

/// A queue family the engine can submit its compute work to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueChoice {
    pub family: u32,
    /// The family has no graphics: a dedicated compute queue.
    pub compute_only: bool,
    /// A compute-only family was asked for (not `TESSEL_VK_COMPUTE_QUEUE=0`).
    pub preferred: bool,
    pub timestamp_bits: u32,
}

/// The queue family for the engine: one with compute and no graphics where the device has one,
/// else the first with compute (also when `prefer_compute_only` is false,
/// `TESSEL_VK_COMPUTE_QUEUE=0`). The engine records compute work and copies only. On the H200 a
/// compute-only family runs kernels with more shared memory at their full occupancy, where the
/// graphics family's share of the SM halves it: the shaders' network 5.55 -> 4.26 ms at 4K,
/// native kernels with 16 KiB more shared memory a workgroup 1.18 ms against 0.66 there and 0.66
/// against 0.64 here (BENCHMARKS.md, thirty-sixth session).
pub fn pick_queue_family(families: &[vk::QueueFamilyProperties], prefer_compute_only: bool) -> Option<QueueChoice> {
    let compute = |q: &vk::QueueFamilyProperties| q.queue_flags.contains(vk::QueueFlags::COMPUTE) && q.queue_count > 0;
    let dedicated = |q: &vk::QueueFamilyProperties| compute(q) && !q.queue_flags.contains(vk::QueueFlags::GRAPHICS);
    let index = families.iter().position(|q| prefer_compute_only && dedicated(q)).or_else(|| families.iter().position(compute))?;
    let q = &families[index];
    Some(QueueChoice { family: index as u32, compute_only: dedicated(q), preferred: prefer_compute_only, timestamp_bits: q.timestamp_valid_bits })
}

/// `TESSEL_VK_COMPUTE_QUEUE=0` keeps the first compute family (with graphics, where the device
/// lists it first) instead of a compute-only one.
fn prefer_compute_only_queue() -> bool {
    !std::env::var("TESSEL_VK_COMPUTE_QUEUE").is_ok_and(|v| v == "0")
}

impl QueueChoice {
    /// "queue family 2 (compute only)" for the start-up line.
    pub fn describe(&self) -> String {
        let what = if self.compute_only {
            "compute only; TESSEL_VK_COMPUTE_QUEUE=0 for the first"
        } else if self.preferred {
            "with graphics: the device has no compute-only family"
        } else {
            "with graphics: TESSEL_VK_COMPUTE_QUEUE=0"
        };
        format!("queue family {} ({what})", self.family)
    }
}

/// Shared memory the scalar network path needs per workgroup (attention: K, V and the bias).
pub const NEEDED_SHARED_MEMORY: u32 = 16 * 1024;

impl Caps {
    /// The one-line summary printed at start-up and by `tessel info`.
    pub fn summary(&self) -> String {
        format!(
            "{} ({}; Vulkan {}.{}.{}): f16 storage {}, f16 math {}, subgroup {}, shared memory {} KiB, cooperative matrix {}, exportable memory {}, external semaphores {}, CUDA modules (VK_NVX_binary_import) {}, {}",
            self.name,
            self.driver,
            self.api.0,
            self.api.1,
            self.api.2,
            yes(self.storage_16bit),
            yes(self.f16_arithmetic),
            self.subgroup_size,
            self.shared_memory / 1024,
            match (self.coopmat_f16_16, self.coopmat_forced) {
                (true, false) => "f16 16x16x16",
                (true, true) => "f16 16x16x16 (forced by TESSEL_VK_COOPMAT_ANY_SIZE=1: the driver lists other sizes; a development harness outside the Vulkan spec)",
                _ => "no",
            },
            yes(self.external_memory_fd),
            yes(self.external_semaphore_fd),
            yes(self.binary_import),
            self.queue.map(|q| q.describe()).unwrap_or_else(|| "no compute queue".into()),
        )
    }

    /// The first missing requirement of the engine, if any.
    pub fn missing(&self) -> Option<String> {
        if self.api < (1, 3, 0) {
            return Some(format!("Vulkan 1.3 (device reports {}.{}.{})", self.api.0, self.api.1, self.api.2));
        }
        let need = [
            (self.storage_16bit, "16-bit storage buffers (storageBuffer16BitAccess): f16 weights and activations"),
            (self.int64, "64-bit integers in shaders (shaderInt64): buffer addresses"),
            (self.buffer_device_address, "buffer device addresses (bufferDeviceAddress)"),
            (self.timeline_semaphore, "timeline semaphores (timelineSemaphore)"),
        ];
        for (ok, what) in need {
            if !ok {
                return Some(what.to_string());
            }
        }
        if self.shared_memory < NEEDED_SHARED_MEMORY {
            return Some(format!("{} KiB of compute shared memory (device has {} KiB)", NEEDED_SHARED_MEMORY / 1024, self.shared_memory / 1024));
        }
        None
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Instance, device and queue, shared (Arc) by models, engines and buffers; destroyed last.
pub struct DeviceShared {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub queue: vk::Queue,
    pub queue_family: u32,
    pub caps: Caps,
    pub mem_props: vk::PhysicalDeviceMemoryProperties,
    pub ext_memory_fd: Option<ash::khr::external_memory_fd::Device>,
    pub ext_semaphore_fd: Option<ash::khr::external_semaphore_fd::Device>,
    /// VK_NVX_binary_import, enabled where present (the native network in the command buffer).
    pub binary_import: Option<ash::nvx::binary_import::Device>,
    /// VK_KHR_pipeline_executable_properties, enabled when TESSEL_PIPELINE_STATS=1 and present.
    pub exec_props: Option<ash::khr::pipeline_executable_properties::Device>,
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn cstr(bytes: &[std::ffi::c_char]) -> String {
    unsafe { CStr::from_ptr(bytes.as_ptr()) }.to_string_lossy().into_owned()
}

fn has_ext(exts: &[vk::ExtensionProperties], name: &CStr) -> bool {
    exts.iter().any(|e| unsafe { CStr::from_ptr(e.extension_name.as_ptr()) } == name)
}

/// Loads the Vulkan loader; a clear error when there is none.
pub fn load_entry() -> Result<ash::Entry> {
    unsafe { ash::Entry::load() }.map_err(|e| VkError::Loader(e.to_string()))
}

fn create_instance(entry: &ash::Entry) -> Result<ash::Instance> {
    let app = vk::ApplicationInfo::default()
        .application_name(c"tessel")
        .engine_name(c"tessel")
        .api_version(vk::make_api_version(0, 1, 3, 0));
    let info = vk::InstanceCreateInfo::default().application_info(&app);
    unsafe { entry.create_instance(&info, None) }.map_err(|r| match r {
        vk::Result::ERROR_INCOMPATIBLE_DRIVER => VkError::NoDevice(
            "the Vulkan loader found no driver (vkCreateInstance: ERROR_INCOMPATIBLE_DRIVER); install one (software: mesa-vulkan-drivers, lavapipe)".into(),
        ),
        r => VkError::Call { call: "vkCreateInstance", result: r },
    })
}

fn query_caps(entry: &ash::Entry, instance: &ash::Instance, pd: vk::PhysicalDevice) -> Caps {
    unsafe {
        let exts = instance.enumerate_device_extension_properties(pd).unwrap_or_default();
        let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
        let mut id = vk::PhysicalDeviceIDProperties::default();
        let mut drv = vk::PhysicalDeviceDriverProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut sub).push_next(&mut id).push_next(&mut drv);
        instance.get_physical_device_properties2(pd, &mut props2);
        let p = props2.properties;
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut f11).push_next(&mut f12);
        instance.get_physical_device_features2(pd, &mut f2);
        let f = f2.features;
        let coopmat_ext = has_ext(&exts, ash::khr::cooperative_matrix::NAME);
        let any_size = std::env::var("TESSEL_VK_COOPMAT_ANY_SIZE").is_ok_and(|v| v == "1");
        let (listed, other_sizes) = if coopmat_ext { coopmat_f16_16(entry, instance, pd) } else { (false, false) };
        let coopmat_forced = !listed && other_sizes && any_size;
        let coopmat_f16_16 = listed || coopmat_forced;
        let qf = instance.get_physical_device_queue_family_properties(pd);
        let queue = pick_queue_family(&qf, prefer_compute_only_queue());
        let ts_bits = queue.map(|q| q.timestamp_bits).unwrap_or(0);
        let driver = format!("{} {}", cstr(&drv.driver_name), cstr(&drv.driver_info)).trim().to_string();
        Caps {
            name: cstr(&p.device_name),
            driver,
            api: (vk::api_version_major(p.api_version), vk::api_version_minor(p.api_version), vk::api_version_patch(p.api_version)),
            device_type: p.device_type,
            uuid: id.device_uuid,
            subgroup_size: sub.subgroup_size,
            shared_memory: p.limits.max_compute_shared_memory_size,
            max_push_constants: p.limits.max_push_constants_size,
            f16_arithmetic: f12.shader_float16 == vk::TRUE,
            storage_16bit: f11.storage_buffer16_bit_access == vk::TRUE,
            int64: f.shader_int64 == vk::TRUE,
            float64: f.shader_float64 == vk::TRUE,
            buffer_device_address: f12.buffer_device_address == vk::TRUE,
            timeline_semaphore: f12.timeline_semaphore == vk::TRUE,
            coopmat_f16_16,
            coopmat_forced,
            external_memory_fd: has_ext(&exts, ash::khr::external_memory_fd::NAME),
            external_semaphore_fd: has_ext(&exts, ash::khr::external_semaphore_fd::NAME),
            binary_import: has_ext(&exts, ash::nvx::binary_import::NAME),
            timestamp_period_ns: p.limits.timestamp_period,
            timestamps: ts_bits > 0 && p.limits.timestamp_compute_and_graphics == vk::TRUE,
            queue,
        }
    }
}

/// Whether the driver lists f16 x f16 -> f32 cooperative matrices of subgroup scope at 16x16x16,
/// and whether it lists them at some other size. Lavapipe (Mesa 26) lists 8x8x8 alone, yet its
/// shader compiler lowers any size to plain arithmetic, so with `TESSEL_VK_COOPMAT_ANY_SIZE=1`
/// the cooperative-matrix shaders run there and can be checked against the CPU reference without
/// a GPU (scripts/lavapipe_coop.sh): a development harness, outside the Vulkan spec.
fn coopmat_f16_16(entry: &ash::Entry, instance: &ash::Instance, pd: vk::PhysicalDevice) -> (bool, bool) {
    let entry_fn = ash::khr::cooperative_matrix::Instance::new(entry, instance);
    let props = unsafe { entry_fn.get_physical_device_cooperative_matrix_properties(pd) }.unwrap_or_default();
    let f16 = |p: &&vk::CooperativeMatrixPropertiesKHR| {
        p.a_type == vk::ComponentTypeKHR::FLOAT16
            && p.b_type == vk::ComponentTypeKHR::FLOAT16
            && p.c_type == vk::ComponentTypeKHR::FLOAT32
            && p.result_type == vk::ComponentTypeKHR::FLOAT32
            && p.scope == vk::ScopeKHR::SUBGROUP
    };
    let listed = props.iter().filter(f16).any(|p| p.m_size == 16 && p.n_size == 16 && p.k_size == 16);
    (listed, props.iter().any(|p| f16(&p)))
}

fn rank(c: &Caps) -> u32 {
    match c.device_type {
        vk::PhysicalDeviceType::DISCRETE_GPU => 4,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 3,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 1,
        _ => 0,
    }
}

/// Every physical device with its capabilities (for `tessel info`).
pub fn list_devices() -> Result<Vec<Caps>> {
    let entry = load_entry()?;
    let instance = create_instance(&entry)?;
    let pds = unsafe { instance.enumerate_physical_devices() }.call("vkEnumeratePhysicalDevices");
    let out = pds.map(|pds| pds.into_iter().map(|pd| query_caps(&entry, &instance, pd)).collect());
    unsafe { instance.destroy_instance(None) };
    out
}

impl DeviceShared {
    /// Opens the best usable device (discrete first; `TESSEL_VK_DEVICE=N` picks the N-th), with
    /// the features the engine needs and the extensions it can use.
    pub fn open() -> Result<Arc<DeviceShared>> {
        let entry = load_entry()?;
        let instance = create_instance(&entry)?;
        match Self::open_on(entry, instance.clone()) {
            Ok(d) => Ok(d),
            Err(e) => {
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    fn open_on(entry: ash::Entry, instance: ash::Instance) -> Result<Arc<DeviceShared>> {
        let pds = unsafe { instance.enumerate_physical_devices() }.call("vkEnumeratePhysicalDevices")?;
        if pds.is_empty() {
            return Err(VkError::NoDevice("the Vulkan loader lists no devices (is a driver installed? lavapipe: mesa-vulkan-drivers)".into()));
        }
        let mut cands: Vec<(vk::PhysicalDevice, Caps)> = pds.iter().map(|&pd| (pd, query_caps(&entry, &instance, pd))).collect();
        if let Some(n) = std::env::var("TESSEL_VK_DEVICE").ok().and_then(|v| v.parse::<usize>().ok()) {
            if n >= cands.len() {
                return Err(VkError::NoDevice(format!("TESSEL_VK_DEVICE={n}, but only {} devices exist", cands.len())));
            }
            cands = vec![cands.swap_remove(n)];
        }
        cands.sort_by_key(|(_, c)| std::cmp::Reverse(rank(c)));
        let mut why = Vec::new();
        let mut chosen = None;
        for (pd, caps) in cands {
            match caps.missing() {
                None => {
                    chosen = Some((pd, caps));
                    break;
                }
                Some(m) => why.push(format!("{} lacks {m}", caps.name)),
            }
        }
        let Some((pd, caps)) = chosen else {
            if why.len() == 1 {
                let (dev, feat) = why[0].split_once(" lacks ").unwrap();
                return Err(VkError::MissingFeature { device: dev.into(), feature: feat.into() });
            }
            return Err(VkError::NoDevice(why.join("; ")));
        };
        let queue_family = caps.queue.ok_or_else(|| VkError::MissingFeature { device: caps.name.clone(), feature: "a compute queue".into() })?.family;
        let mut ext_names = vec![];
        if caps.external_memory_fd {
            ext_names.push(ash::khr::external_memory_fd::NAME.as_ptr());
        }
        if caps.external_semaphore_fd {
            ext_names.push(ash::khr::external_semaphore_fd::NAME.as_ptr());
        }
        if caps.coopmat_f16_16 {
            ext_names.push(ash::khr::cooperative_matrix::NAME.as_ptr());
        }
        if caps.binary_import {
            ext_names.push(ash::nvx::binary_import::NAME.as_ptr());
        }
        let exts = unsafe { instance.enumerate_device_extension_properties(pd) }.unwrap_or_default();
        let stats = std::env::var("TESSEL_PIPELINE_STATS").is_ok_and(|v| v == "1") && has_ext(&exts, ash::khr::pipeline_executable_properties::NAME);
        if stats {
            ext_names.push(ash::khr::pipeline_executable_properties::NAME.as_ptr());
        }
        let prio = [1.0f32];
        let qinfo = [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family).queue_priorities(&prio)];
        let features = vk::PhysicalDeviceFeatures::default().shader_int64(true).shader_float64(caps.float64);
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default().storage_buffer16_bit_access(true);
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
            .buffer_device_address(true)
            .timeline_semaphore(true)
            .shader_float16(caps.f16_arithmetic)
            .vulkan_memory_model(caps.coopmat_f16_16);
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default().synchronization2(true).maintenance4(true);
        let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
        let mut info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qinfo)
            .enabled_extension_names(&ext_names)
            .enabled_features(&features)
            .push_next(&mut f11)
            .push_next(&mut f12)
            .push_next(&mut f13);
        if caps.coopmat_f16_16 {
            info = info.push_next(&mut coop);
        }
        let mut exec = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default().pipeline_executable_info(true);
        if stats {
            info = info.push_next(&mut exec);
        }
        let device = unsafe { instance.create_device(pd, &info, None) }.call("vkCreateDevice")?;
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        let mem_props = unsafe { instance.get_physical_device_memory_properties(pd) };
        let ext_memory_fd = caps.external_memory_fd.then(|| ash::khr::external_memory_fd::Device::new(&instance, &device));
        let ext_semaphore_fd = caps.external_semaphore_fd.then(|| ash::khr::external_semaphore_fd::Device::new(&instance, &device));
        let binary_import = caps.binary_import.then(|| ash::nvx::binary_import::Device::new(&instance, &device));
        let exec_props = stats.then(|| ash::khr::pipeline_executable_properties::Device::new(&instance, &device));
        Ok(Arc::new(DeviceShared { entry, instance, physical: pd, device, queue, queue_family, caps, mem_props, ext_memory_fd, ext_semaphore_fd, binary_import, exec_props }))
    }

    /// Index of a memory type allowed by `bits` with `flags`.
    pub fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
        (0..self.mem_props.memory_type_count)
            .find(|&i| bits & (1 << i) != 0 && self.mem_props.memory_types[i as usize].property_flags.contains(flags))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Caps {
        Caps {
            name: "test device".into(),
            driver: "none".into(),
            api: (1, 3, 0),
            device_type: vk::PhysicalDeviceType::DISCRETE_GPU,
            uuid: [0; 16],
            subgroup_size: 32,
            shared_memory: 48 * 1024,
            max_push_constants: 256,
            f16_arithmetic: true,
            storage_16bit: true,
            int64: true,
            float64: true,
            buffer_device_address: true,
            timeline_semaphore: true,
            coopmat_f16_16: false,
            coopmat_forced: false,
            external_memory_fd: true,
            external_semaphore_fd: false,
            binary_import: false,
            timestamp_period_ns: 1.0,
            timestamps: true,
            queue: Some(QueueChoice { family: 0, compute_only: false, preferred: true, timestamp_bits: 64 }),
        }
    }

    fn family(flags: vk::QueueFlags, count: u32, bits: u32) -> vk::QueueFamilyProperties {
        vk::QueueFamilyProperties { queue_flags: flags, queue_count: count, timestamp_valid_bits: bits, ..Default::default() }
    }

    #[test]
    fn the_engine_takes_a_compute_only_queue_family_where_one_exists() {
        use vk::QueueFlags as F;
        // NVIDIA's order: graphics + compute, transfer, compute only.
        let nv = [family(F::GRAPHICS | F::COMPUTE | F::TRANSFER, 16, 64), family(F::TRANSFER, 2, 64), family(F::COMPUTE | F::TRANSFER, 8, 64)];
        assert_eq!(pick_queue_family(&nv, true), Some(QueueChoice { family: 2, compute_only: true, preferred: true, timestamp_bits: 64 }));
        assert_eq!(pick_queue_family(&nv, false), Some(QueueChoice { family: 0, compute_only: false, preferred: false, timestamp_bits: 64 }));
        assert!(pick_queue_family(&nv, false).unwrap().describe().contains("TESSEL_VK_COMPUTE_QUEUE=0"));
        // lavapipe: one family with everything.
        let one = [family(F::GRAPHICS | F::COMPUTE | F::TRANSFER, 1, 64)];
        assert_eq!(pick_queue_family(&one, true), Some(QueueChoice { family: 0, compute_only: false, preferred: true, timestamp_bits: 64 }));
        assert!(pick_queue_family(&one, true).unwrap().describe().contains("no compute-only family"));
        // A compute-only family listing no queues is not one; no compute at all is None.
        let empty = [family(F::GRAPHICS | F::COMPUTE, 1, 48), family(F::COMPUTE, 0, 64)];
        assert_eq!(pick_queue_family(&empty, true), Some(QueueChoice { family: 0, compute_only: false, preferred: true, timestamp_bits: 48 }));
        assert_eq!(pick_queue_family(&[family(F::TRANSFER, 1, 64)], true), None);
    }

    #[test]
    fn a_device_without_what_the_engine_needs_is_refused_by_name() {
        assert_eq!(good().missing(), None);
        let c = Caps { storage_16bit: false, ..good() };
        assert!(c.missing().unwrap().contains("16-bit storage"), "{:?}", c.missing());
        let c = Caps { shared_memory: 8 * 1024, ..good() };
        assert!(c.missing().unwrap().contains("16 KiB of compute shared memory (device has 8 KiB)"), "{:?}", c.missing());
        let c = Caps { api: (1, 2, 0), ..good() };
        assert!(c.missing().unwrap().contains("Vulkan 1.3"), "{:?}", c.missing());
        // f64 is optional (no shader uses it).
        assert_eq!(Caps { float64: false, ..good() }.missing(), None);
    }
}
