//! The arrays of a simulation's results, by name and shape, in one order for whatever holds
//! them (the files of `harbor simulate`, `<name>.npy`, and the arrays of a run kept in
//! memory): `times` (samples), `trajectory` (members × samples × state, when recorded), each
//! channel the family declares (members × rows × the channel's shape), `totals` (members ×
//! totals), `final_state` (members × state) and `nonfinite_step` (members, int64).

use crate::kernels::Family;

/// One array of a run: its name and shape (C order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunArray {
    pub name: String,
    pub shape: Vec<usize>,
}

impl RunArray {
    fn new(name: impl Into<String>, shape: Vec<usize>) -> Self {
        RunArray {
            name: name.into(),
            shape,
        }
    }

    /// The number of values it holds.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether it holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The arrays of `family`'s run, in the order of the module docs.
pub fn run_arrays<F: Family>(family: &F) -> Vec<RunArray> {
    let members = family.member_count();
    let spec = family.record_spec();
    let records = family.grid().records();
    let mut arrays = vec![RunArray::new("times", vec![records + 1])];
    if spec.trajectory {
        arrays.push(RunArray::new(
            "trajectory",
            vec![members, records + 1, spec.state_width],
        ));
    }
    for c in &spec.channels {
        let mut shape = vec![members, c.rows(records)];
        shape.extend(&c.shape);
        arrays.push(RunArray::new(c.name, shape));
    }
    arrays.push(RunArray::new("totals", vec![members, spec.totals.len()]));
    arrays.push(RunArray::new(
        "final_state",
        vec![members, spec.state_width],
    ));
    arrays.push(RunArray::new("nonfinite_step", vec![members]));
    arrays
}
