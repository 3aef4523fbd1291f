//! Model families as kernels: per family its declared layouts, its WGSL kernel source and
//! its CPU twin of the same name and loop shape, behind the [`Family`] trait that the
//! backends run.

pub mod abi;
pub mod family;
pub mod lanes;
pub mod layout;
pub mod math;
pub mod precision;
pub mod wgsl;

// The linear-PH kernels live in their wing (`crate::families::linear_ph`); these paths
// re-export them until every caller names the wing.
pub use crate::families::linear_ph::{
    adjoint, adjoint_twin, fast as linear_ph_fast, kernel as linear_ph, shape as linear_ph_shape,
    twin as linear_ph_twin,
};

pub use family::{CpuPath, Direction, Family, KernelChunk, KernelSource};
pub use layout::{Field, Layout, MemberView};
pub use precision::Precision;
