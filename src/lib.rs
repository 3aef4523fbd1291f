//! harbor: structure-preserving ensembles of port-Hamiltonian and contact-Hamiltonian
//! systems on the GPU, with an f64 CPU reference for every result.
//!
//! Layers point one way, each importing only those before it:
//! [`tableau`] and [`model`] (coefficients, systems) → [`plan`] (plain data: grid, members,
//! shared streams, what to record) → [`method`] (stage solves, step operators, flows) →
//! [`kernels`] (model families: layouts, WGSL, CPU twins, the [`kernels::Family`] trait) →
//! [`results`] (a run's records in memory) → [`backend`] (CPU, the one GPU executor,
//! [`backend::Backend`]) → [`io`] (config, the family registry, files) → [`study`] and
//! [`bench`] → the `harbor` binary; [`identify`] (cost and adjoint gradients of candidate
//! models) sits beside [`io`], on the backends. [`error`] and [`compensated`] sit below everything;
//! [`reference`] (independent high-accuracy solutions) sits beside [`method`] and is used by
//! studies and tests, never by the integrators it checks.

pub mod backend;
pub mod bench;
pub mod bounded_read;
pub mod compensated;
pub mod error;
pub mod identify;
pub mod io;
pub mod kernels;
pub mod method;
pub mod model;
pub mod plan;
pub mod reference;
pub mod results;
pub mod study;
pub mod tableau;

pub use error::{Error, Result};
