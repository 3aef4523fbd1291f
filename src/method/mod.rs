//! Methods as the planner and the reference integrators use them: the collocation stage
//! solve of Definition 1 and the per-member step operators built from it; the exact flows,
//! splittings and Herglotz step of contact systems; the pullback of the step operators to
//! the system matrices (adjoint gradients).

pub mod collocation_step;
pub mod step_operators;
pub mod step_pullback;

pub use collocation_step::{CollocationStepper, StepScratch};
pub use step_operators::StepOperators;
