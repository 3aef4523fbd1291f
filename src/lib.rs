//! harbor: structure-preserving ensembles of port-Hamiltonian systems.
//!
//! The data flow is config → [`plan::Plan`] (host planner: collocation tables, sampled
//! inputs, members) → backend ([`cpu`]) → [`results::Results`] → files ([`io`]).

pub mod bench;
pub mod compensated;
pub mod cpu;
pub mod error;
pub mod gpu;
pub mod io;
pub mod model;
pub mod plan;
pub mod reference;
pub mod results;
pub mod study;
pub mod tableau;

pub use error::{Error, Result};
