//! The systems harbor integrates and the input signals that drive them.

pub mod chain;
pub mod input;
pub mod linear_ph;
pub mod mechanical;
pub mod sampled;
pub mod validate;

pub use input::{Signal, SignalSpec};
pub use linear_ph::LinearPh;
pub use mechanical::mechanical_system;
