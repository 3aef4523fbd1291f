//! The GPU backend: adapter selection, compiled pipelines, and the GPU as a place where the
//! executor ([`crate::backend::executor`]) runs chunks.

pub mod context;
pub mod device;
pub mod pipeline;
pub mod transfer;

pub use crate::backend::executor::{ExecutorOptions, ExecutorStats};
pub use context::{AdapterSummary, GpuContext, Precision, list_adapters};

use crate::backend::executor;
use crate::error::Result;
use crate::kernels::Family;
use crate::plan::ResultSink;
use crate::results::Results;

/// The backend label of results computed on `ctx`.
pub fn backend_name(ctx: &GpuContext) -> String {
    format!("gpu: {}", ctx.adapter.describe())
}

/// Runs every member of `family` on the GPU and collects the results.
pub fn run<F: Family>(ctx: &GpuContext, family: &F, options: &ExecutorOptions) -> Result<Results> {
    executor::run(ctx, family, options)
}

/// Runs every member of `family` on the GPU, streaming each chunk's results into `sink`.
pub fn run_into<F: Family>(
    ctx: &GpuContext,
    family: &F,
    options: &ExecutorOptions,
    sink: &mut dyn ResultSink,
) -> Result<ExecutorStats> {
    executor::run_into(ctx, family, options, sink)
}
