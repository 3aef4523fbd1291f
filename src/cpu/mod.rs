//! The CPU reference path (f64, all cores): one twin per GPU kernel.

pub mod collocation_step;
pub mod ensemble;

pub use collocation_step::CollocationStepper;
pub use ensemble::{integrate_member, run};
