//! The systems harbor integrates and the input signals that drive them.

pub mod chain;
pub mod contact;
pub mod contact_time;
pub mod input;
pub mod linear_ph;
pub mod mechanical;
pub mod orbit;
pub mod sampled;
pub mod validate;

pub use contact::{ContactMember, ContactSystem, Damping, Potential};
pub use input::{Signal, SignalSpec};
pub use linear_ph::LinearPh;
pub use mechanical::mechanical_system;
pub use orbit::KeplerOrbit;
