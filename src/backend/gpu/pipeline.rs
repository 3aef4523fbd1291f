//! Compute pipelines of assembled kernels; [`GpuContext::kernel`] caches them by source, so
//! a variant is compiled once per device. The bind-group layout is generated from the
//! engine's declared bindings ([`crate::kernels::abi::BINDINGS`]).

use super::context::GpuContext;
use crate::error::{Error, Result};
use crate::kernels::abi::{Access, BINDINGS};
use crate::kernels::wgsl::validate;

/// A compiled kernel with its bind-group layout.
pub struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

/// The bind-group layout entries of the declared bindings.
pub fn layout_entries() -> Vec<wgpu::BindGroupLayoutEntry> {
    BINDINGS
        .iter()
        .enumerate()
        .map(|(index, b)| wgpu::BindGroupLayoutEntry {
            binding: index as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match b.access {
                    Access::Uniform => wgpu::BufferBindingType::Uniform,
                    Access::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Access::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect()
}

/// Validates and compiles an assembled kernel `source`; `label` names it in errors.
pub fn build_kernel(ctx: &GpuContext, label: &str, source: &str) -> Result<Kernel> {
    validate(source, ctx.precision)?;
    let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = ctx
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
    let layout = ctx
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(label),
            entries: &layout_entries(),
        });
    let pipeline_layout = ctx
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
    let pipeline = ctx
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
    if let Some(error) = pollster::block_on(scope.pop()) {
        return Err(Error::Gpu(format!(
            "kernel {label} was rejected by the device: {error}"
        )));
    }
    Ok(Kernel { pipeline, layout })
}
