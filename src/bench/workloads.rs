//! What `harbor bench` runs: a family's benchmark systems (each family's workload, from the
//! registry in `crate::families`) or a user's configuration, each as a plan of any member
//! count.

use super::{BenchCase, BenchRow, GpuContexts, measure, measure_baseline};
use crate::error::{Error, Result};
use crate::families::{BenchWorkload, FamilyVisitor, FamilyWorkload, WorkloadVisitor};
use crate::io::Config;
use crate::kernels::Family;

/// What a benchmark runs.
#[derive(Debug, Clone)]
pub enum Workload {
    /// A family's benchmark systems (`--family`), sized by `--states`.
    Family(FamilyWorkload),
    /// A configuration as `harbor simulate` runs it (its members, steps and `[output]`
    /// switches).
    Config(Box<Config>),
}

impl Workload {
    /// The family's name in tables.
    pub fn family(&self) -> Result<&'static str> {
        match self {
            Workload::Family(workload) => Ok(workload.family()),
            Workload::Config(config) => Ok(config.run_plan()?.visit(FamilyName)),
        }
    }

    /// Checks a size n (`--states`) of a family's workload.
    pub fn check_size(&self, n: usize) -> Result<()> {
        match self {
            Workload::Family(workload) => workload.visit(CheckSize(n)),
            Workload::Config(_) => Ok(()),
        }
    }

    /// The case a configuration describes (its members, n, steps and recording).
    pub fn config_case(config: &Config) -> Result<BenchCase> {
        let recording = config.output.recording();
        Ok(config.run_plan()?.visit(ConfigCase(recording)))
    }

    /// Measures `case` (its `states` is the size n) with [`measure`].
    pub fn measure(
        &self,
        case: BenchCase,
        gpus: GpuContexts,
        max_param_bytes: u64,
    ) -> Result<BenchRow> {
        match self {
            Workload::Family(workload) => workload.visit(Measure {
                case,
                gpus,
                max_param_bytes,
            }),
            Workload::Config(config) => config.run_plan()?.visit(Measure {
                case,
                gpus,
                max_param_bytes,
            }),
        }
    }
}

/// The family's name.
struct FamilyName;

impl FamilyVisitor for FamilyName {
    type Output = &'static str;
    fn visit<F: Family>(self, family: &F) -> &'static str {
        family.name()
    }
}

/// [`BenchWorkload::check_size`].
struct CheckSize(usize);

impl WorkloadVisitor for CheckSize {
    type Output = Result<()>;
    fn visit<W: BenchWorkload>(self, workload: &W) -> Result<()> {
        workload.check_size(self.0)
    }
}

/// The case of a configured plan, recording what `[output]` switches on.
struct ConfigCase(crate::plan::Recording);

impl FamilyVisitor for ConfigCase {
    type Output = BenchCase;
    fn visit<F: Family>(self, family: &F) -> BenchCase {
        BenchCase {
            family: family.name(),
            members: family.member_count(),
            states: family.states(),
            steps: family.grid().steps,
            recording: self.0,
            reference: true,
        }
    }
}

/// Measures a case: a family's workload at the case's size n, or a configured plan, on its
/// first members where a timing takes fewer (member i depends on (seed, i) alone, so a
/// prefix is the same members).
struct Measure<'a> {
    case: BenchCase,
    gpus: GpuContexts<'a>,
    max_param_bytes: u64,
}

impl WorkloadVisitor for Measure<'_> {
    type Output = Result<BenchRow>;
    fn visit<W: BenchWorkload>(self, workload: &W) -> Result<BenchRow> {
        let (n, recording) = (self.case.states, self.case.recording);
        let mut row = measure(
            self.case,
            |members, steps| workload.plan(members, n, steps, recording),
            self.gpus,
            self.max_param_bytes,
        )?;
        if let Some(description) = workload.hand_written() {
            let plan = workload.plan(self.case.members, n, self.case.steps, recording)?;
            measure_baseline(&mut row, description, |count| {
                workload.time_hand_written(&plan, n, count)
            })?;
        }
        Ok(row)
    }
}

impl FamilyVisitor for Measure<'_> {
    type Output = Result<BenchRow>;
    fn visit<F: Family>(self, family: &F) -> Result<BenchRow> {
        measure(
            self.case,
            |members, _| {
                if members == 0 {
                    return Err(Error::invalid("ensemble.members", "must be ≥ 1, got 0"));
                }
                family.with_member_count(members.min(family.member_count()))
            },
            self.gpus,
            self.max_param_bytes,
        )
    }
}
