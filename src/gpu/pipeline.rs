//! Compute pipelines of the specialised kernels; [`GpuContext::kernel`] caches them by
//! [`KernelKey`], so a variant is compiled once per device.

use super::context::GpuContext;
use super::shader::{KernelKey, linear_ph_step_source};
use crate::error::{Error, Result};

/// A compiled kernel with its bind-group layout.
pub struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Specialises, validates and compiles the step kernel for `key`.
pub fn build_kernel(ctx: &GpuContext, key: &KernelKey) -> Result<Kernel> {
    let source = linear_ph_step_source(key);
    super::shader::validate(&source, key.precision)?;
    let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = ctx
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("linear_ph_step"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
    let mut entries = vec![wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }];
    entries.extend([
        storage_entry(1, true),
        storage_entry(2, true),
        storage_entry(3, false),
        storage_entry(4, false),
        storage_entry(5, true),
    ]);
    let layout = ctx
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("linear_ph_step"),
            entries: &entries,
        });
    let pipeline_layout = ctx
        .device
        .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("linear_ph_step"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
    let pipeline = ctx
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("linear_ph_step"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
    if let Some(error) = pollster::block_on(scope.pop()) {
        return Err(Error::Gpu(format!(
            "kernel {key:?} was rejected by the device: {error}"
        )));
    }
    Ok(Kernel { pipeline, layout })
}
