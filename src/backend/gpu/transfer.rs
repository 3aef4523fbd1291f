//! Moving values between the host (f64) and the device (the run's precision): conversion
//! with the checks f32 needs, buffer creation, and reading a mapped buffer back.

use std::sync::mpsc;

use super::context::{GpuContext, Precision};
use crate::error::{Error, Num, Result};

/// What a buffer holds, for the errors of [`to_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contents {
    /// Run-wide constants (h, method coefficients): a non-zero one must stay non-zero.
    Constants,
    /// Per-member parameters, initial states, shared inputs: each must stay finite.
    Values(&'static str),
}

/// Converts f64 values to the run's precision as bytes. In f32 a finite value beyond the
/// largest f32 (3.4028235e38, where the conversion gives ±∞) is refused, as is a non-zero
/// constant that rounds to 0 (a step h that vanishes would silently freeze the run);
/// values already non-finite pass as they are (the kernels flag them).
pub fn to_bytes(values: &[f64], precision: Precision, contents: Contents) -> Result<Vec<u8>> {
    match precision {
        Precision::F64 => Ok(bytemuck::cast_slice(values).to_vec()),
        Precision::F32 => {
            let mut narrow = Vec::with_capacity(values.len());
            for (index, &v) in values.iter().enumerate() {
                let single = v as f32;
                let lost = match contents {
                    Contents::Constants => {
                        (v.is_finite() && !single.is_finite()) || (v != 0.0 && single == 0.0)
                    }
                    Contents::Values(_) => v.is_finite() && !single.is_finite(),
                };
                if lost {
                    let what = match contents {
                        Contents::Constants => "run constants (h, method coefficients)",
                        Contents::Values(what) => what,
                    };
                    return Err(Error::invalid(
                        "--precision",
                        format!(
                            "f32 cannot represent entry {index} of the {what}, {}: it is {} (f32 holds magnitudes from 1.4e-45 to 3.4028235e38); run with --precision f64",
                            Num(v),
                            if single.is_finite() {
                                "rounded to 0"
                            } else {
                                "beyond the largest f32"
                            }
                        ),
                    ));
                }
                narrow.push(single);
            }
            Ok(bytemuck::cast_slice(&narrow).to_vec())
        }
    }
}

/// The values of `bytes` (in the run's precision) as f64.
pub fn from_bytes(bytes: &[u8], precision: Precision) -> Vec<f64> {
    match precision {
        // Copies without assuming the mapping's alignment (an empty range may have none).
        Precision::F64 => bytemuck::pod_collect_to_vec::<u8, f64>(bytes),
        Precision::F32 => bytemuck::pod_collect_to_vec::<u8, f32>(bytes)
            .iter()
            .map(|&v| v as f64)
            .collect(),
    }
}

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
