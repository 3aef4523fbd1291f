//! Independent high-accuracy references of the continuous systems, against which the
//! discrete schemes are measured.

pub mod linear_flow;
pub mod ode;

pub use linear_flow::LinearFlow;
