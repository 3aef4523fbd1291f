//! The systems harbor integrates and the input signals that drive them.

pub mod input;
pub mod sampled;
pub mod validate;

// The linear-PH models live in their wing (`crate::families::linear_ph`); these paths
// re-export them until every caller names the wing.
pub use crate::families::linear_ph::{
    LinearPh, chain, mechanical, mechanical_system, model as linear_ph,
};
pub use input::{Signal, SignalSpec};
