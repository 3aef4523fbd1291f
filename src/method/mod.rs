//! Methods as the planner and the reference integrators use them: the collocation stage
//! solve of Definition 1 and the per-member step operators built from it; the exact flows,
//! splittings and Herglotz step of contact systems.

pub mod collocation_step;
pub mod contact_flows;
pub mod step_operators;

pub use collocation_step::{CollocationStepper, StepScratch};
pub use step_operators::StepOperators;
