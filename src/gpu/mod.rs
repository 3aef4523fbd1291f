//! The GPU path: adapter selection, specialised WGSL kernels, and the ensemble executor.

pub mod context;
pub mod ensemble;
pub mod layout;
pub mod pipeline;
pub mod shader;

pub use context::{AdapterSummary, GpuContext, Precision, list_adapters};
