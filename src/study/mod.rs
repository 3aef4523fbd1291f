//! Numerical studies built on the planner and the backends.

pub mod energy_order;
pub mod gradient_fd;
pub mod identify_noise;
pub mod precision_drift;
