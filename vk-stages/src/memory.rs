//! Buffers with device addresses (the shaders reach every buffer through push-constant
//! pointers), device-local or host-visible, optionally exportable as an OPAQUE_FD.

use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;

use ash::vk;

use crate::device::DeviceShared;
use crate::error::{Check, Result, VkError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// Device-local: what the shaders read and write every frame.
    Device,
    /// Host-visible and coherent (mapped): uploads, small state.
    Host,
    /// Host-visible, coherent and cached where the device offers it: read-backs (uncached
    /// memory is slow for the CPU to read).
    HostRead,
}

/// Every buffer: storage, copy source and target, reached by its device address.
const USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw()
        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS.as_raw(),
);

/// A buffer and its memory. Holds its device (Arc), so it can never outlive it.
pub struct Buffer {
    shared: Arc<DeviceShared>,
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub size: u64,
    /// Bytes of the memory object (what an importer of the exported fd must name).
    pub allocation_size: u64,
    pub address: u64,
    mapped: *mut u8,
    exportable: bool,
    pub name: &'static str,
}

// The mapped pointer is only handed out through &self/&mut self accessors.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    /// A buffer of `size` bytes (rounded up to 256) usable as storage, copy source and target.
    /// `exportable`: allocated so that `export_fd` can hand it to another API or device.
    pub fn new(shared: &Arc<DeviceShared>, name: &'static str, size: u64, loc: Location, exportable: bool) -> Result<Buffer> {
        let size = size.max(4).div_ceil(256) * 256;
        let d = &shared.device;
        let usage = USAGE;
        let mut ext_info = vk::ExternalMemoryBufferCreateInfo::default().handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let mut info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        if exportable {
            info = info.push_next(&mut ext_info);
        }
        let buffer = unsafe { d.create_buffer(&info, None) }.call("vkCreateBuffer")?;
        let req = unsafe { d.get_buffer_memory_requirements(buffer) };
        let flags = match loc {
            Location::Device => vk::MemoryPropertyFlags::DEVICE_LOCAL,
            Location::Host | Location::HostRead => vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        };
        let cached = flags | vk::MemoryPropertyFlags::HOST_CACHED;
        let found = match loc {
            Location::HostRead => shared.memory_type(req.memory_type_bits, cached).or_else(|| shared.memory_type(req.memory_type_bits, flags)),
            _ => shared.memory_type(req.memory_type_bits, flags),
        };
        let Some(mt) = found else {
            unsafe { d.destroy_buffer(buffer, None) };
            return Err(VkError::Memory(format!("buffer '{name}' ({size} bytes, {loc:?})")));
        };
        let mut flags_info = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(buffer);
        let mut alloc = vk::MemoryAllocateInfo::default().allocation_size(req.size).memory_type_index(mt).push_next(&mut flags_info);
        if exportable {
            alloc = alloc.push_next(&mut export).push_next(&mut dedicated);
        }
        let memory = match unsafe { d.allocate_memory(&alloc, None) }.call("vkAllocateMemory") {
            Ok(m) => m,
            Err(e) => {
                unsafe { d.destroy_buffer(buffer, None) };
                return Err(e);
            }
        };
        let mut buf = Buffer { shared: shared.clone(), buffer, memory, size, allocation_size: req.size, address: 0, mapped: std::ptr::null_mut(), exportable, name };
        unsafe { d.bind_buffer_memory(buffer, memory, 0) }.call("vkBindBufferMemory")?;
        buf.address = unsafe { d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer)) };
        if loc != Location::Device {
            buf.mapped = unsafe { d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }.call("vkMapMemory")? as *mut u8;
        }
        Ok(buf)
    }

    /// The mapped bytes of a host-visible buffer.
    pub fn bytes(&self) -> &[u8] {
        assert!(!self.mapped.is_null(), "buffer '{}' is not host-visible", self.name);
        unsafe { std::slice::from_raw_parts(self.mapped, self.size as usize) }
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        assert!(!self.mapped.is_null(), "buffer '{}' is not host-visible", self.name);
        unsafe { std::slice::from_raw_parts_mut(self.mapped, self.size as usize) }
    }

    /// Exports the memory as an OPAQUE_FD. The caller owns the fd; importing it elsewhere
    /// (another Vulkan device, CUDA, HIP) transfers that ownership to the importer.
    pub fn export_fd(&self) -> Result<OwnedFd> {
        if !self.exportable {
            return Err(VkError::Size(format!("buffer '{}' was not created exportable", self.name)));
        }
        let ext = self.shared.ext_memory_fd.as_ref().ok_or_else(|| VkError::MissingFeature {
            device: self.shared.caps.name.clone(),
            feature: "VK_KHR_external_memory_fd".into(),
        })?;
        let info = vk::MemoryGetFdInfoKHR::default().memory(self.memory).handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let fd = unsafe { ext.get_memory_fd(&info) }.call("vkGetMemoryFdKHR")?;
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Imports memory exported by `export_fd` (this process or another, any Vulkan device of
    /// the same physical GPU) as a device-local buffer of `size` bytes. On success Vulkan owns
    /// the fd (it is closed with the memory); on failure it is closed here.
    pub fn import_fd(shared: &Arc<DeviceShared>, name: &'static str, fd: OwnedFd, size: u64) -> Result<Buffer> {
        use std::os::fd::IntoRawFd;
        let d = &shared.device;
        let usage = USAGE;
        let mut ext_info = vk::ExternalMemoryBufferCreateInfo::default().handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE).push_next(&mut ext_info);
        let buffer = unsafe { d.create_buffer(&info, None) }.call("vkCreateBuffer")?;
        let req = unsafe { d.get_buffer_memory_requirements(buffer) };
        let Some(mt) = shared.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::DEVICE_LOCAL) else {
            unsafe { d.destroy_buffer(buffer, None) };
            return Err(VkError::Memory(format!("imported buffer '{name}'")));
        };
        let raw = fd.into_raw_fd();
        let mut import = vk::ImportMemoryFdInfoKHR::default().handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD).fd(raw);
        let mut flags_info = vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().buffer(buffer);
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(mt)
            .push_next(&mut import)
            .push_next(&mut flags_info)
            .push_next(&mut dedicated);
        let memory = match unsafe { d.allocate_memory(&alloc, None) }.call("vkAllocateMemory (import)") {
            Ok(m) => m,
            Err(e) => {
                // Ownership stays with us when the import fails.
                drop(unsafe { OwnedFd::from_raw_fd(raw) });
                unsafe { d.destroy_buffer(buffer, None) };
                return Err(e);
            }
        };
        let mut buf = Buffer { shared: shared.clone(), buffer, memory, size, allocation_size: req.size, address: 0, mapped: std::ptr::null_mut(), exportable: false, name };
        unsafe { d.bind_buffer_memory(buffer, memory, 0) }.call("vkBindBufferMemory")?;
        buf.address = unsafe { d.get_buffer_device_address(&vk::BufferDeviceAddressInfo::default().buffer(buffer)) };
        Ok(buf)
    }

    pub fn is_exportable(&self) -> bool {
        self.exportable
    }
}

/// A device-local buffer holding `bytes` (through a staging buffer; load time only: it submits
/// and waits).
pub fn upload(shared: &Arc<DeviceShared>, name: &'static str, bytes: &[u8]) -> Result<Buffer> {
    let buf = Buffer::new(shared, name, bytes.len() as u64, Location::Device, false)?;
    let mut staging = Buffer::new(shared, "staging", bytes.len() as u64, Location::Host, false)?;
    staging.bytes_mut()[..bytes.len()].copy_from_slice(bytes);
    crate::model::submit_once(shared, |cmd| unsafe {
        shared.device.cmd_copy_buffer(cmd, staging.buffer, buf.buffer, &[vk::BufferCopy::default().size(bytes.len() as u64)]);
    })?;
    Ok(buf)
}

impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe {
            if !self.mapped.is_null() {
                self.shared.device.unmap_memory(self.memory);
            }
            self.shared.device.destroy_buffer(self.buffer, None);
            self.shared.device.free_memory(self.memory, None);
        }
    }
}
