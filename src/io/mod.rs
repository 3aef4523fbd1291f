//! Configuration in, result files and plots out.

pub mod atomic_rename;
pub mod config;
pub mod config_keys;
pub mod cost_spec;
pub mod energy_plot;
pub mod gradient_output;
pub mod gradient_spec;
pub mod identify_output;
pub mod identify_spec;
pub mod initial_guess_spec;
pub mod interrupt;
pub mod npy_stream;
pub mod output;
pub mod output_target;
pub mod overrides;
pub mod paper_comparison;
pub mod path_plot;
pub mod plot;
pub mod problem_spec;
pub mod rank_selection;
pub mod resources;
pub mod run_arrays;
pub mod serde_words;
pub mod simulation_arrays;
pub mod statistics;
pub mod study_spec;
pub mod summary;

pub use crate::families::{FamilyVisitor, RunPlan, SystemSpec};
pub use config::Config;
