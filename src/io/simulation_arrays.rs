//! A simulation's results held in memory, for front ends that hand arrays to their users
//! (the Python package): the arrays of [`super::run_arrays`], each filled as member chunks
//! arrive with every value copied once from the backend's results into its place, and the
//! run's [`RunSummary`] — summary.json without its list of files. The filled buffers move
//! out of [`SimulationArrays::finish`] without another copy.

use serde_json::{Map, Value};

use super::output::nonfinite_step_entry;
use super::resources::available_memory;
use super::run_arrays::run_arrays;
use super::summary::{RunLabels, RunSummary};
use crate::backend::Footprint;
use crate::error::{Error, Result};
use crate::kernels::Family;
use crate::plan::{RecordSpec, ResultBlock, ResultSink, format_bytes};

/// One array of a finished run: its name (as in [`super::run_arrays`]), its shape (C order)
/// and its values.
#[derive(Debug, Clone, PartialEq)]
pub struct FlatArray<T> {
    pub name: String,
    pub shape: Vec<usize>,
    pub values: Vec<T>,
}

/// The arrays of a finished run and its summary.
#[derive(Debug, Clone)]
pub struct SimulationOutput {
    /// Sample times, t = 0 first.
    pub times: FlatArray<f64>,
    /// States at the sample times (members × samples × state), when recorded.
    pub trajectory: Option<FlatArray<f64>>,
    /// The family's channels in declared order (members × rows × the channel's shape).
    pub channels: Vec<FlatArray<f64>>,
    /// Per-member totals (members × totals), named by `totals_names`.
    pub totals: FlatArray<f64>,
    pub totals_names: Vec<&'static str>,
    /// Per-member final states (members × state).
    pub final_state: FlatArray<f64>,
    /// Per member: 0 while finite, else the first step after which it was not.
    pub nonfinite_step: FlatArray<i64>,
    /// The run's summary: summary.json without `files`.
    pub summary: Map<String, Value>,
}

/// Fills a run's arrays in memory as member chunks arrive (a [`ResultSink`]).
pub struct SimulationArrays {
    spec: RecordSpec,
    times: Vec<f64>,
    /// `None` when the run records no trajectory.
    trajectory: Option<Vec<f64>>,
    channels: Vec<Vec<f64>>,
    totals: Vec<f64>,
    final_state: Vec<f64>,
    nonfinite_step: Vec<i64>,
    /// The shapes of the arrays, in the order of [`run_arrays`].
    shapes: Vec<Vec<usize>>,
    summary: RunSummary,
    /// Told the member-steps done whenever the backend reports progress; its error stops
    /// the run.
    progress: Option<Box<dyn FnMut(u64) -> Result<()>>>,
}

/// An empty vector with room for `len` values, or an error naming the array and its size
/// when the allocation fails.
fn reserved<T>(name: &str, len: usize) -> Result<Vec<T>> {
    let mut values = Vec::new();
    values.try_reserve_exact(len).map_err(|_| {
        Error::invalid(
            "ensemble.members",
            format!(
                "the {name} array of {len} values ({}) cannot be allocated; run fewer members, record less often (output.every) or less (output.trajectory = false)",
                format_bytes((len as u64).saturating_mul(std::mem::size_of::<T>() as u64))
            ),
        )
    })?;
    Ok(values)
}

impl SimulationArrays {
    /// Bytes of the arrays of `family`'s run: what the run holds at its end.
    pub fn bytes<F: Family>(family: &F) -> u64 {
        run_arrays(family)
            .iter()
            .map(|array| 8 * array.len() as u64)
            .fold(0, u64::saturating_add)
    }

    /// Refuses a run whose arrays, with what the backend holds in flight (`footprint`),
    /// exceed the memory available, before any work.
    pub fn check_memory<F: Family>(family: &F, footprint: &Footprint) -> Result<()> {
        let arrays = Self::bytes(family);
        let needed = arrays.saturating_add(footprint.host_bytes);
        match available_memory() {
            Some(available) if needed > available => Err(Error::invalid(
                "ensemble.members",
                format!(
                    "the run returns {} of arrays ({} member(s)) and holds {} in flight, {} in all, but only {} is available; run fewer members, record less often (output.every) or less (output.trajectory, output.energy, output.outputs = false)",
                    format_bytes(arrays),
                    family.member_count(),
                    format_bytes(footprint.host_bytes),
                    format_bytes(needed),
                    format_bytes(available)
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Reserves the arrays of `family`'s run; an allocation that fails is an error naming
    /// the array.
    pub fn new<F: Family>(family: &F) -> Result<Self> {
        let spec = family.record_spec().clone();
        let arrays = run_arrays(family);
        let length = |name: &str| {
            arrays
                .iter()
                .find(|array| array.name == name)
                .map_or(0, |array| array.len())
        };
        let trajectory = if spec.trajectory {
            Some(reserved("trajectory", length("trajectory"))?)
        } else {
            None
        };
        let channels = spec
            .channels
            .iter()
            .map(|c| reserved(c.name, length(c.name)))
            .collect::<Result<_>>()?;
        Ok(SimulationArrays {
            times: family.grid().sample_times(),
            trajectory,
            channels,
            totals: reserved("totals", length("totals"))?,
            final_state: reserved("final_state", length("final_state"))?,
            nonfinite_step: reserved("nonfinite_step", length("nonfinite_step"))?,
            shapes: arrays.into_iter().map(|array| array.shape).collect(),
            summary: RunSummary::new(&spec, family.member_count()),
            spec,
            progress: None,
        })
    }

    /// Calls `observer` with the member-steps done so far (of members × steps) whenever
    /// the backend reports progress; an error it returns stops the run.
    pub fn on_progress(&mut self, observer: impl FnMut(u64) -> Result<()> + 'static) {
        self.progress = Some(Box::new(observer));
    }

    /// Members received so far.
    pub fn members_received(&self) -> usize {
        self.summary.members_received()
    }

    /// What happened when members did not stay finite
    /// ([`RunSummary::nonfinite_description`]); `None` when all did.
    pub fn nonfinite_description(&self) -> Option<String> {
        self.summary.nonfinite_description()
    }

    /// The filled arrays and the summary of `family`'s run (`labels`: what ran it).
    pub fn finish<F: Family>(self, labels: &RunLabels, family: &F) -> Result<SimulationOutput> {
        let SimulationArrays {
            spec,
            times,
            trajectory,
            channels,
            totals,
            final_state,
            nonfinite_step,
            shapes,
            summary,
            ..
        } = self;
        let summary = summary.finish_in_memory(family, labels, &totals, &final_state)?;
        let mut shapes = shapes.into_iter();
        let mut next_shape = || shapes.next().expect("every array has a shape");
        let times = flat("times", next_shape(), times)?;
        let trajectory = trajectory
            .map(|values| flat("trajectory", next_shape(), values))
            .transpose()?;
        let channels = spec
            .channels
            .iter()
            .zip(channels)
            .map(|(c, values)| flat(c.name, next_shape(), values))
            .collect::<Result<_>>()?;
        let totals = flat("totals", next_shape(), totals)?;
        let final_state = flat("final_state", next_shape(), final_state)?;
        let nonfinite_step = flat("nonfinite_step", next_shape(), nonfinite_step)?;
        Ok(SimulationOutput {
            times,
            trajectory,
            channels,
            totals,
            totals_names: spec.totals.clone(),
            final_state,
            nonfinite_step,
            summary,
        })
    }
}

/// The array `name` of `shape` holding `values`; an error (of the backend, not of the
/// input) when the backend delivered another number of values than the shape holds.
fn flat<T>(name: &str, shape: Vec<usize>, values: Vec<T>) -> Result<FlatArray<T>> {
    let expected: usize = shape.iter().product();
    if values.len() != expected {
        return Err(Error::Numerical {
            context: format!("the {name} array"),
            problem: format!(
                "the backend delivered {} values for a shape {shape:?} of {expected}",
                values.len()
            ),
        });
    }
    Ok(FlatArray {
        name: name.to_string(),
        shape,
        values,
    })
}

impl ResultSink for SimulationArrays {
    fn accept(&mut self, first: usize, members: ResultBlock) -> Result<()> {
        debug_assert_eq!(first, self.summary.members_received());
        if let Some(trajectory) = &mut self.trajectory {
            trajectory.extend_from_slice(&members.trajectory);
        }
        for (values, recorded) in self.channels.iter_mut().zip(&members.channels) {
            values.extend_from_slice(recorded);
        }
        self.totals.extend_from_slice(&members.totals);
        self.final_state.extend_from_slice(&members.final_state);
        self.nonfinite_step.extend(
            members
                .nonfinite_step
                .iter()
                .map(|&step| nonfinite_step_entry(step)),
        );
        self.summary.observe(first, &members);
        Ok(())
    }

    fn progress(&mut self, member_steps_done: u64) -> Result<()> {
        match &mut self.progress {
            Some(observer) => observer(member_steps_done),
            None => Ok(()),
        }
    }
}
