//! Merging `harbor simulate --shard` directories into the directory the unsharded run
//! writes: the plan is rebuilt from the config the shards recorded, and their members are
//! streamed in member order, a block at a time, through the same
//! [`SimulationWriter`] that a run feeds. The arrays are the shards' values in order, and
//! every statistic of summary.json is computed by the same code over the same members in
//! the same order, so it has the unsharded run's bits whatever the split. The exceptions
//! are the wall-time fields: `seconds` is the shards' times added up and
//! `member_steps_per_second` follows from it.

use std::path::Path;

use super::member_range::MemberRange;
use super::npy_rows::NpyRows;
use super::set::ShardSet;
use crate::error::{Error, Result};
use crate::io::npy_stream::Element;
use crate::io::output::SimulationWriter;
use crate::io::run_arrays::run_arrays;
use crate::io::summary::RunLabels;
use crate::io::{Config, FamilyVisitor};
use crate::kernels::Family;
use crate::plan::{MemberResult, ResultBlock, ResultSink};

/// Bytes of member results held at once while merging.
const BLOCK_BYTES: usize = 64 << 20;

/// Writes the merge of the `simulate` shards of `set` into `dir`; returns the members
/// merged.
pub fn merge_simulation(set: &ShardSet, dir: &Path) -> Result<usize> {
    let resolved = set.config()?;
    let config = Config::from_table(resolved.table, &resolved.origin, resolved.base_dir)?;
    config.run_plan()?.visit(MergeSimulation { set, dir })
}

struct MergeSimulation<'a> {
    set: &'a ShardSet,
    dir: &'a Path,
}

impl FamilyVisitor for MergeSimulation<'_> {
    type Output = Result<usize>;

    fn visit<F: Family>(self, family: &F) -> Result<usize> {
        let total = self.set.manifest().members.total;
        if family.member_count() != total {
            return Err(Error::invalid(
                "shard directories",
                format!(
                    "the recorded config plans {} members, the shards say {total}",
                    family.member_count()
                ),
            ));
        }
        let spec = family.record_spec();
        let records = family.grid().records();
        let mut writer = SimulationWriter::create(self.dir, family)?;
        let member_values: usize = run_arrays(&MemberRange::new(family, 0..1)?)
            .iter()
            .map(|a| a.len())
            .sum();
        let block = (BLOCK_BYTES / (8 * member_values.max(1))).max(1);
        for (dir, manifest) in &self.set.shards {
            let span = manifest.members;
            let range = MemberRange::new(family, span.first..span.first + span.count)?;
            // The shard's arrays after times.npy, in the order of `run_arrays`.
            let mut files = run_arrays(&range)
                .into_iter()
                .skip(1)
                .map(|array| {
                    let element = if array.name == "nonfinite_step" {
                        Element::I64
                    } else {
                        Element::F64
                    };
                    NpyRows::open(
                        &dir.join(format!("{}.npy", array.name)),
                        &array.shape,
                        element,
                    )
                })
                .collect::<Result<Vec<_>>>()?;
            let (status, rest) = files
                .split_last_mut()
                .expect("every run has nonfinite_step");
            let mut done = 0;
            while done < span.count {
                let rows = block.min(span.count - done);
                let mut members: Vec<MemberResult> = (0..rows)
                    .map(|_| MemberResult {
                        final_state: Vec::new(),
                        trajectory: Vec::new(),
                        channels: Vec::with_capacity(spec.channels.len()),
                        totals: Vec::new(),
                        nonfinite_step: None,
                    })
                    .collect();
                let mut arrays = rest.iter_mut();
                if spec.trajectory {
                    let file = arrays.next().expect("a trajectory file");
                    for (m, row) in members.iter_mut().zip(file.next_f64(rows)?) {
                        m.trajectory = row;
                    }
                }
                for _ in &spec.channels {
                    let file = arrays.next().expect("a channel file");
                    for (m, row) in members.iter_mut().zip(file.next_f64(rows)?) {
                        m.channels.push(row);
                    }
                }
                let totals = arrays.next().expect("a totals file");
                for (m, row) in members.iter_mut().zip(totals.next_f64(rows)?) {
                    m.totals = row;
                }
                let final_state = arrays.next().expect("a final-state file");
                for (m, row) in members.iter_mut().zip(final_state.next_f64(rows)?) {
                    m.final_state = row;
                }
                for (m, step) in members.iter_mut().zip(status.next_i64(rows)?) {
                    m.nonfinite_step = (step != 0).then_some(step as u64);
                }
                let members = ResultBlock::from_members(spec, records, members);
                writer.accept(span.first + done, members)?;
                done += rows;
            }
        }
        let run = &self.set.manifest().run;
        let labels = RunLabels {
            backend: &run.backend,
            engine: &run.engine,
            precision: &run.precision,
            seconds: self.set.seconds(),
        };
        writer.finish(&labels, family)?;
        Ok(total)
    }
}
