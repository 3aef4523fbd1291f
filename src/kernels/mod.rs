//! Model families as kernels: per family its declared layouts, its WGSL kernel source and
//! its CPU twin of the same name and loop shape, behind the [`Family`] trait that the
//! backends run.

pub mod abi;
pub mod adjoint;
pub mod adjoint_twin;
pub mod family;
pub mod lanes;
pub mod layout;
pub mod linear_ph;
pub mod linear_ph_fast;
pub mod linear_ph_shape;
pub mod linear_ph_twin;
pub mod math;
pub mod precision;
pub mod wgsl;

pub use family::{CpuPath, Direction, Family, KernelChunk, KernelSource};
pub use layout::{Field, Layout, MemberView};
pub use precision::Precision;
