//! Methods as the planner and the reference integrators use them. The collocation stage
//! solve, the step operators and their pull-back belong to the linear-PH wing
//! (`crate::families::linear_ph`); these paths re-export them until every caller names the
//! wing.

pub use crate::families::linear_ph::{
    CollocationStepper, StepOperators, StepScratch, collocation_step, step_operators, step_pullback,
};
