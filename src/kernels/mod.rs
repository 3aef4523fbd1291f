//! Model families as kernels: per family its declared layouts, its WGSL kernel source and
//! its CPU twin of the same name and loop shape, behind the [`Family`] trait that the
//! backends run.

pub mod abi;
pub mod dense_lu;
pub mod energy_sums;
pub mod family;
pub mod lanes;
pub mod layout;
pub mod math;
pub mod precision;
pub mod twin;
pub mod wgsl;

pub use family::{
    Absent, CpuPath, Direction, Family, FastEngine, GpuKernel, KernelChunk, KernelSource,
    RangeChunk,
};
pub use layout::{Field, Layout, MemberView};
pub use precision::Precision;
pub use twin::{StorageBuffer, Strided, TwinBindings};
