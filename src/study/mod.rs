//! Numerical studies built on the planner and the backends.

pub mod energy_order;
