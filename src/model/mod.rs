//! The systems harbor integrates and the input signals that drive them.

pub mod chacha_lanes;
pub mod draw;
pub mod input;
pub mod member_streams;
pub mod sampled;
pub mod validate;
pub mod ziggurat_normals;

pub use draw::Draw;
pub use input::{Signal, SignalSpec};
