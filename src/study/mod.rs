//! Numerical studies built on the planner and the backends.

pub mod energy_order;
pub mod precision_drift;
