//! The GPU backend: adapter selection, compiled pipelines, and the one executor that runs
//! every family.

pub mod chunk_stage;
pub mod chunking;
pub mod context;
pub mod executor;
pub mod pipeline;
pub mod transfer;

pub use context::{AdapterSummary, GpuContext, Precision, list_adapters};
pub use executor::{GpuRunOptions, GpuRunStats, backend_name, run, run_into};
