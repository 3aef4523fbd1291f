//! Configuration in, result files and plots out.

pub mod atomic_rename;
pub mod config;
pub mod config_keys;
pub mod cost_spec;
pub mod gradient_output;
pub mod gradient_spec;
pub mod identify_output;
pub mod identify_spec;
pub mod interrupt;
pub mod npy_stream;
pub mod output;
pub mod output_target;
pub mod overrides;
pub mod plot;
pub mod problem_spec;
pub mod resources;
pub mod serde_words;
pub mod statistics;
pub mod study_spec;

pub use crate::families::{FamilyVisitor, RunPlan, SystemSpec};
// The linear-PH config sections and member export live in their wing; these paths
// re-export them until every caller names the wing.
pub use crate::families::linear_ph::{export as member_export, spec as linear_ph_spec};

pub use config::Config;
