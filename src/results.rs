//! The results of a run collected in memory: the run's description and every member's
//! records, in the family's declared channels, with the records as `ndarray` arrays indexed
//! by member first (members × samples × state, members × rows × channel shape, …). Tests
//! compare two of these member by member.

use ndarray::{Array1, Array2, Array3, ArrayD, IxDyn};

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

impl Results {
    /// The sample times t = 0 and every record point: `samples`.
    pub fn times(&self) -> Array1<f64> {
        Array1::from_vec(self.sample_times.clone())
    }

    /// The states at the sample times: members × samples × state width; `None` when the
    /// run did not record its trajectory.
    pub fn trajectories(&self) -> Option<Array3<f64>> {
        if !self.spec.trajectory {
            return None;
        }
        let shape = (
            self.members.len(),
            self.sample_times.len(),
            self.spec.state_width,
        );
        let values = self
            .members
            .iter()
            .flat_map(|m| m.trajectory.iter().copied())
            .collect();
        Array3::from_shape_vec(shape, values).ok()
    }

    /// The channel `name` (`energy`, `outputs`, `hamiltonian`, as the family declares
    /// them): members × rows × the channel's shape; `None` for a channel this run does not
    /// record.
    pub fn channel(&self, name: &str) -> Option<ArrayD<f64>> {
        let index = self.spec.channels.iter().position(|c| c.name == name)?;
        let channel = &self.spec.channels[index];
        let mut shape = vec![
            self.members.len(),
            channel.rows(self.sample_times.len() - 1),
        ];
        shape.extend(&channel.shape);
        let values = self
            .members
            .iter()
            .flat_map(|m| m.channels[index].iter().copied())
            .collect();
        ArrayD::from_shape_vec(IxDyn(&shape), values).ok()
    }

    /// The final states: members × state width.
    pub fn final_states(&self) -> Array2<f64> {
        self.per_member(self.spec.state_width, |m| &m.final_state)
    }

    /// The totals (`RecordSpec::totals` names the columns): members × totals.
    pub fn totals(&self) -> Array2<f64> {
        self.per_member(self.spec.totals.len(), |m| &m.totals)
    }

    /// Per member, the first step after which it was not finite, −1 for a member that stayed
    /// finite (as `nonfinite_step.npy` holds it).
    pub fn nonfinite_steps(&self) -> Array1<i64> {
        self.members
            .iter()
            .map(|m| {
                m.nonfinite_step
                    .map_or(-1, |k| i64::try_from(k).unwrap_or(i64::MAX))
            })
            .collect()
    }

    /// One row of `width` values per member, from `values`.
    fn per_member(&self, width: usize, values: impl Fn(&MemberResult) -> &Vec<f64>) -> Array2<f64> {
        let mut array = Array2::zeros((self.members.len(), width));
        for (mut row, member) in array.rows_mut().into_iter().zip(&self.members) {
            for (cell, &value) in row.iter_mut().zip(values(member)) {
                *cell = value;
            }
        }
        array
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Channel;

    fn two_members() -> Results {
        let spec = RecordSpec {
            state_width: 2,
            trajectory: true,
            channels: vec![Channel {
                name: "outputs",
                shape: vec![1, 3],
                at_start: false,
                description: String::new(),
            }],
            totals: vec!["stored", "supplied"],
            totals_group: "energy",
        };
        let member = |k: f64| MemberResult {
            final_state: vec![k, k + 1.0],
            trajectory: (0..6).map(|i| k * 100.0 + i as f64).collect(),
            channels: vec![(0..6).map(|i| k * 10.0 + i as f64).collect()],
            totals: vec![k, -k],
            nonfinite_step: (k > 1.0).then_some(7),
        };
        Results {
            backend: "cpu".into(),
            precision: Precision::F64,
            family: "linear-ph",
            method: "gauss-2".into(),
            h: 0.5,
            steps: 2,
            spec,
            sample_times: vec![0.0, 0.5, 1.0],
            members: vec![member(1.0), member(2.0)],
        }
    }

    /// Every accessor puts member i's values in row i, in the declared shapes.
    #[test]
    fn arrays_are_indexed_by_member_then_record() {
        let results = two_members();
        let trajectories = results.trajectories().unwrap();
        assert_eq!(trajectories.shape(), &[2, 3, 2]);
        assert_eq!(trajectories[[1, 2, 1]], 205.0);
        let outputs = results.channel("outputs").unwrap();
        assert_eq!(outputs.shape(), &[2, 2, 1, 3]);
        assert_eq!(outputs[[1, 1, 0, 2]], 25.0);
        assert!(results.channel("energy").is_none());
        assert_eq!(results.final_states()[[1, 1]], 3.0);
        assert_eq!(results.totals()[[1, 1]], -2.0);
        assert_eq!(results.nonfinite_steps().to_vec(), vec![-1, 7]);
        assert_eq!(results.times().to_vec(), vec![0.0, 0.5, 1.0]);
    }
}
