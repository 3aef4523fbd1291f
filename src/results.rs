//! The results of a run collected in memory: the run's description and every member's
//! records, in the family's declared channels. Tests compare two of these member by member.

use crate::kernels::{Family, Precision};
use crate::plan::{MemberResult, RecordSpec};

/// The results of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Results {
    /// `cpu` or `gpu: <adapter>`.
    pub backend: String,
    pub precision: Precision,
    /// The family (`linear-ph`, `contact`).
    pub family: &'static str,
    /// The method label (`gauss-2`, …).
    pub method: String,
    pub h: f64,
    pub steps: usize,
    pub spec: RecordSpec,
    pub sample_times: Vec<f64>,
    pub members: Vec<MemberResult>,
}

impl Results {
    /// Wraps per-member results with the description of `family`'s run.
    pub fn new<F: Family>(
        family: &F,
        backend: &str,
        precision: Precision,
        members: Vec<MemberResult>,
    ) -> Self {
        let grid = family.grid();
        Results {
            backend: backend.into(),
            precision,
            family: family.name(),
            method: family.method_label(),
            h: grid.h,
            steps: grid.steps,
            spec: family.record_spec().clone(),
            sample_times: grid.sample_times(),
            members,
        }
    }
}
