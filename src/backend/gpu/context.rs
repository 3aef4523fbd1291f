//! Adapter discovery and selection, and the device harbor computes on.
//!
//! Adapters are ranked discrete GPU > integrated GPU > virtual GPU > CPU (software, e.g.
//! lavapipe) > other, then by f64 support. `--adapter <substring>` or the `HARBOR_ADAPTER`
//! environment variable picks by case-insensitive name substring instead. `--backend auto`
//! opens only hardware adapters ([`GpuContext::open_hardware`]): a software rasteriser is
//! slower than harbor's CPU path. Backends default to the primary ones (Vulkan, Metal,
//! DX12); `WGPU_BACKEND` overrides.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::pipeline::{Kernel, build_kernel};
use crate::error::{Error, Result};
pub use crate::kernels::Precision;

/// What harbor needs to know about an adapter.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AdapterSummary {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    /// A software (CPU) adapter such as llvmpipe, whose shader loops are truncated after
    /// 65535 iterations per invocation.
    pub software: bool,
    pub driver: String,
    pub driver_info: String,
    pub shader_f64: bool,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroup_storage_size: u32,
}

impl AdapterSummary {
    fn of(adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        let limits = adapter.limits();
        AdapterSummary {
            name: info.name,
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            software: info.device_type == wgpu::DeviceType::Cpu,
            driver: info.driver,
            driver_info: info.driver_info,
            shader_f64: adapter.features().contains(wgpu::Features::SHADER_F64),
            max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
            max_buffer_size: limits.max_buffer_size,
            max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
            max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
        }
    }

    /// One line for messages: name (backend, type).
    pub fn describe(&self) -> String {
        format!("{} ({}, {})", self.name, self.backend, self.device_type)
    }
}

fn instance() -> wgpu::Instance {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
    descriptor.backends = wgpu::Backends::PRIMARY.with_env();
    wgpu::Instance::new(descriptor)
}

fn rank(adapter: &wgpu::Adapter) -> (u8, bool) {
    let kind = match adapter.get_info().device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    };
    (
        kind,
        !adapter.features().contains(wgpu::Features::SHADER_F64),
    )
}

/// Every adapter wgpu can reach, best first.
pub fn list_adapters() -> Vec<AdapterSummary> {
    sorted_adapters().iter().map(AdapterSummary::of).collect()
}

/// An adapter name substring and where it came from, so that errors name what the user
/// set (in the CLI: `--adapter` or the `HARBOR_ADAPTER` environment variable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterSelector {
    pub pattern: String,
    /// `--adapter` or `HARBOR_ADAPTER`.
    pub source: &'static str,
}

impl AdapterSelector {
    /// Adapters whose name contains `pattern` (case-insensitive); `source` names the
    /// setting in errors (`--adapter`, `HARBOR_ADAPTER`).
    pub fn new(pattern: impl Into<String>, source: &'static str) -> Self {
        AdapterSelector {
            pattern: pattern.into(),
            source,
        }
    }
}

/// What `--backend auto` found: a hardware adapter, opened, or only software rasterisers
/// (listed best first), which it leaves unopened because the CPU path is faster.
pub enum AutoAdapter {
    Hardware(Box<GpuContext>),
    SoftwareOnly(Vec<AdapterSummary>),
}

/// The precision of a run on `adapter`: the requested one if the adapter supports it
/// (an error naming the adapter otherwise), else f64 where supported, else f32.
pub fn choose_precision(
    adapter: &AdapterSummary,
    requested: Option<Precision>,
) -> Result<Precision> {
    match requested {
        Some(Precision::F64) if !adapter.shader_f64 => Err(Error::invalid(
            "--precision",
            format!(
                "f64 is not supported by {} (no SHADER_F64); use --precision f32",
                adapter.describe()
            ),
        )),
        Some(p) => Ok(p),
        None if adapter.shader_f64 => Ok(Precision::F64),
        None => Ok(Precision::F32),
    }
}

/// Every adapter wgpu can reach as handles, best first.
fn sorted_adapters() -> Vec<wgpu::Adapter> {
    let mut adapters = pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all()));
    adapters.sort_by_key(rank);
    adapters
}

/// The error when no adapter exists at all.
fn no_adapter() -> Error {
    Error::Gpu("no GPU adapter found (install a Vulkan driver; lavapipe runs on the CPU)".into())
}

/// The first of `adapters` (best first) whose name contains the selector's pattern,
/// case-insensitive; an error naming the selector's source and listing them otherwise.
fn select(adapters: Vec<wgpu::Adapter>, selector: &AdapterSelector) -> Result<wgpu::Adapter> {
    let available: Vec<String> = adapters
        .iter()
        .map(|a| AdapterSummary::of(a).describe())
        .collect();
    let needle = selector.pattern.to_lowercase();
    adapters
        .into_iter()
        .find(|a| a.get_info().name.to_lowercase().contains(&needle))
        .ok_or_else(|| {
            Error::invalid(
                selector.source,
                format!(
                    "no adapter name contains {:?}; available: {}",
                    selector.pattern,
                    if available.is_empty() {
                        "none".into()
                    } else {
                        available.join(", ")
                    }
                ),
            )
        })
}

/// A device and queue on the chosen adapter, with its compiled kernels.
pub struct GpuContext {
    pub adapter: AdapterSummary,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub limits: wgpu::Limits,
    pub precision: Precision,
    kernels: Mutex<HashMap<String, Arc<Kernel>>>,
}

impl GpuContext {
    /// Opens the adapter whose name contains `adapter` (case-insensitive), else the best
    /// one. `precision` None means f64 where supported, else f32. A pattern that matches
    /// nothing is an error naming `adapter`.
    pub fn open(adapter: Option<&str>, precision: Option<Precision>) -> Result<GpuContext> {
        let selector = adapter.map(|pattern| AdapterSelector::new(pattern, "adapter"));
        Self::open_with(selector.as_ref(), precision)
    }

    /// Opens the best adapter, or the one whose name contains `selector.pattern`
    /// (case-insensitive); an error names `selector.source` when nothing matches.
    pub fn open_with(
        selector: Option<&AdapterSelector>,
        precision: Option<Precision>,
    ) -> Result<GpuContext> {
        let adapters = sorted_adapters();
        let adapter = match selector {
            Some(selector) => select(adapters, selector)?,
            None => adapters.into_iter().next().ok_or_else(no_adapter)?,
        };
        Self::on(adapter, precision)
    }

    /// For `--backend auto`: the best adapter when it is a hardware one; when every adapter
    /// is a software rasteriser (llvmpipe, lavapipe, WARP) nothing is opened and their
    /// summaries come back instead.
    pub fn open_hardware(precision: Option<Precision>) -> Result<AutoAdapter> {
        let mut adapters = sorted_adapters();
        let Some(best) = adapters.first() else {
            return Err(no_adapter());
        };
        // Ranked best first, so the first adapter is software only when all are.
        if AdapterSummary::of(best).software {
            let summaries = adapters.iter().map(AdapterSummary::of).collect();
            return Ok(AutoAdapter::SoftwareOnly(summaries));
        }
        let best = adapters.swap_remove(0);
        Ok(AutoAdapter::Hardware(Box::new(Self::on(best, precision)?)))
    }

    /// A device and queue on `adapter` in the requested (or best supported) precision.
    fn on(adapter: wgpu::Adapter, precision: Option<Precision>) -> Result<GpuContext> {
        let summary = AdapterSummary::of(&adapter);
        let precision = choose_precision(&summary, precision)?;
        let mut features = wgpu::Features::empty();
        if precision == Precision::F64 {
            features |= wgpu::Features::SHADER_F64;
        }
        let limits = adapter.limits();
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("harbor"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&descriptor)).map_err(|e| {
                Error::Gpu(format!(
                    "device request on {} failed: {e}",
                    summary.describe()
                ))
            })?;
        Ok(GpuContext {
            adapter: summary,
            device,
            queue,
            limits,
            precision,
            kernels: Mutex::default(),
        })
    }

    /// The compiled kernel of an assembled WGSL `source`, built on first use.
    pub fn kernel(&self, label: &str, source: &str) -> Result<Arc<Kernel>> {
        let mut cache = self
            .kernels
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(kernel) = cache.get(source) {
            return Ok(kernel.clone());
        }
        let kernel = Arc::new(build_kernel(self, label, source)?);
        cache.insert(source.to_string(), kernel.clone());
        Ok(kernel)
    }
}

#[cfg(test)]
impl AdapterSummary {
    /// A Vulkan adapter with typical limits, for unit tests: a discrete GPU, or a CPU
    /// (software) one.
    pub(crate) fn for_tests(name: &str, software: bool, shader_f64: bool) -> Self {
        AdapterSummary {
            name: name.into(),
            backend: "Vulkan".into(),
            device_type: if software { "Cpu" } else { "DiscreteGpu" }.into(),
            software,
            driver: String::new(),
            driver_info: String::new(),
            shader_f64,
            max_storage_buffer_binding_size: 1 << 27,
            max_buffer_size: 1 << 30,
            max_compute_workgroups_per_dimension: 65535,
            max_compute_invocations_per_workgroup: 256,
            max_compute_workgroup_storage_size: 16384,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(shader_f64: bool) -> AdapterSummary {
        AdapterSummary::for_tests("Test GPU", false, shader_f64)
    }

    #[test]
    fn f64_on_an_adapter_without_it_is_a_clear_error() {
        let e = choose_precision(&adapter(false), Some(Precision::F64))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--precision")
                && e.contains("f64 is not supported by Test GPU")
                && e.contains("SHADER_F64"),
            "{e}"
        );
    }

    #[test]
    fn default_precision_follows_the_adapter() {
        assert_eq!(
            choose_precision(&adapter(true), None).unwrap(),
            Precision::F64
        );
        assert_eq!(
            choose_precision(&adapter(false), None).unwrap(),
            Precision::F32
        );
        assert_eq!(
            choose_precision(&adapter(true), Some(Precision::F32)).unwrap(),
            Precision::F32
        );
    }
}
