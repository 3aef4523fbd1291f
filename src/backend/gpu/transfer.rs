//! Moving values between the host and a GPU: buffer creation, and reading a mapped buffer
//! back (converted to f64 by [`from_bytes`]).

use std::sync::mpsc;

use super::context::GpuContext;
use crate::backend::executor::conversion::from_bytes;
use crate::error::{Error, Result};

/// A buffer of at least `bytes` (16 at least, a multiple of 8).
pub fn buffer(
    ctx: &GpuContext,
    label: &str,
    bytes: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16).next_multiple_of(8),
        usage,
        mapped_at_creation: false,
    })
}

/// A buffer holding `bytes` (values already in the run's precision).
pub fn upload(
    ctx: &GpuContext,
    label: &str,
    bytes: &[u8],
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    let target = buffer(
        ctx,
        label,
        bytes.len() as u64,
        usage | wgpu::BufferUsages::COPY_DST,
    );
    if !bytes.is_empty() {
        ctx.queue.write_buffer(&target, 0, bytes);
    }
    target
}

/// Waits for `submission` (which copied `bytes` into `readback`), maps them and returns
/// them as f64.
pub fn read_mapped(
    ctx: &GpuContext,
    readback: &wgpu::Buffer,
    bytes: u64,
    submission: wgpu::SubmissionIndex,
) -> Result<Vec<f64>> {
    let slice = readback.slice(..bytes);
    let (sender, receiver) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = sender.send(result);
    });
    ctx.device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(submission),
            timeout: None,
        })
        .map_err(|e| Error::Gpu(format!("waiting for the device failed: {e}")))?;
    receiver
        .recv()
        .map_err(|_| Error::Gpu("the read-back was dropped".into()))?
        .map_err(|e| Error::Gpu(format!("mapping the read-back buffer failed: {e}")))?;
    let values = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| Error::Gpu(format!("reading mapped memory failed: {e}")))?;
        from_bytes(&view, ctx.precision)
    };
    readback.unmap();
    Ok(values)
}

/// Copies `bytes` of `source` into `readback` and returns them as f64 once the device has
/// done so.
pub fn read_back(
    ctx: &GpuContext,
    source: &wgpu::Buffer,
    readback: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<f64>> {
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("read back"),
        });
    encoder.copy_buffer_to_buffer(source, 0, readback, 0, bytes);
    let submission = ctx.queue.submit([encoder.finish()]);
    read_mapped(ctx, readback, bytes, submission)
}
