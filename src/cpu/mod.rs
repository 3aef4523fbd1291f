//! The CPU paths (f64, all cores): the reference stepper, and one twin per GPU kernel.

pub mod collocation_step;
pub mod ensemble;
pub mod operator_step;

pub use collocation_step::CollocationStepper;
pub use ensemble::{integrate_member, integrate_member_twin, run, run_into, run_twin};
