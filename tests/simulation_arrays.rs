//! A run held in memory ([`SimulationArrays`], what the Python package returns) against the
//! same run written to files ([`SimulationWriter`], what `harbor simulate` writes): the same
//! arrays bit for bit and the same summary but for the wall time and the list of files, for
//! every family; a sink that stops the run at a progress report ends it early with
//! `Error::Stopped` on every backend.

mod common;

use std::collections::HashMap;

use harbor::Error;
use harbor::backend::{Backend, BackendKind, BackendRequest};
use harbor::io::output::SimulationWriter;
use harbor::io::simulation_arrays::{FlatArray, SimulationArrays};
use harbor::io::summary::RunLabels;
use harbor::io::{Config, FamilyVisitor};
use harbor::kernels::{CpuPath, Family};
use harbor::plan::{MemoryBudget, ResultBlock, ResultSink};
use serde_json::Value;

/// The two ways of keeping a run, compared.
struct BothWays<'a> {
    backend: &'a Backend,
}

const LABELS: RunLabels = RunLabels {
    backend: "cpu",
    engine: "fast",
    precision: "f64",
    seconds: 1.0,
};

impl FamilyVisitor for BothWays<'_> {
    type Output = ();

    fn visit<F: Family>(self, family: &F) {
        let budget = MemoryBudget::default();
        let dir = tempfile::tempdir().unwrap();
        let mut writer = SimulationWriter::create(dir.path(), family).unwrap();
        self.backend
            .run_into_within(family, &budget, &mut writer)
            .unwrap();
        let summary_path = writer.finish(&LABELS, family).unwrap();
        let mut arrays = SimulationArrays::new(family).unwrap();
        self.backend
            .run_into_within(family, &budget, &mut arrays)
            .unwrap();
        let output = arrays.finish(&LABELS, family).unwrap();

        let mut files: HashMap<String, ndarray::ArrayD<f64>> = HashMap::new();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            if path.extension().is_some_and(|e| e == "npy") && stem != "nonfinite_step" {
                files.insert(stem, ndarray_npy::read_npy(&path).unwrap());
            }
        }
        let statuses: ndarray::ArrayD<i64> =
            ndarray_npy::read_npy(dir.path().join("nonfinite_step.npy")).unwrap();
        let mut held: Vec<&FlatArray<f64>> =
            vec![&output.times, &output.totals, &output.final_state];
        held.extend(&output.trajectory);
        held.extend(&output.channels);
        assert_eq!(
            held.len(),
            files.len(),
            "{}: {:?}",
            family.name(),
            files.keys()
        );
        for array in held {
            let file = &files[&array.name];
            assert_eq!(file.shape(), array.shape.as_slice(), "{}", array.name);
            let same = file
                .iter()
                .zip(&array.values)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "{}: {} differs from its file",
                family.name(),
                array.name
            );
        }
        assert_eq!(statuses.shape(), output.nonfinite_step.shape.as_slice());
        assert_eq!(
            statuses.iter().copied().collect::<Vec<_>>(),
            output.nonfinite_step.values
        );
        let mut written: serde_json::Map<String, Value> =
            serde_json::from_str(&std::fs::read_to_string(summary_path).unwrap()).unwrap();
        assert!(written.remove("files").is_some());
        assert_eq!(written, output.summary, "{}", family.name());
    }
}

#[test]
fn runs_in_memory_equal_their_files_for_every_family() {
    for (config, overrides) in [
        ("oscillator_pulse.toml", &[][..]),
        (
            "oscillator_ensemble.toml",
            &["ensemble.members=300", "scheme.t_end=2.0"][..],
        ),
        ("contact_damped_oscillator.toml", &[][..]),
        (
            "pendulum_damped_forced.toml",
            &["ensemble.members=40", "scheme.t_end=1.0"][..],
        ),
        (
            "variational_forced_oscillator.toml",
            &["ensemble.members=8"][..],
        ),
        ("variational_cubic_spline.toml", &[][..]),
    ] {
        let plan = common::example(config, overrides).run_plan().unwrap();
        for backend in [Backend::Cpu(CpuPath::Fast), Backend::Cpu(CpuPath::Twin)] {
            plan.visit(BothWays { backend: &backend });
        }
    }
}

/// Counts the members it receives and stops the run at the first progress report.
struct StopAtFirstReport {
    received: usize,
    reports: usize,
}

impl ResultSink for StopAtFirstReport {
    fn accept(&mut self, _first: usize, members: ResultBlock) -> harbor::Result<()> {
        self.received += members.len();
        Ok(())
    }

    fn progress(&mut self, _member_steps_done: u64) -> harbor::Result<()> {
        self.reports += 1;
        Err(Error::Stopped("by the test".into()))
    }
}

/// An error from `progress` ends the run there, on the CPU engine (between waves of
/// blocks), the reference integrator and the twin (between dispatch windows), and the GPU.
#[test]
fn a_progress_report_can_stop_a_run_on_every_backend() {
    let config: Config = common::example(
        "oscillator_ensemble.toml",
        &["ensemble.members=200000", "scheme.t_end=2.0"],
    );
    let plan = config.run_plan().unwrap();
    let harbor::io::RunPlan::LinearPh(plan) = plan else {
        unreachable!("a linear-PH ensemble")
    };
    let (gpu, _) = Backend::open(&BackendRequest {
        kind: BackendKind::Gpu,
        ..BackendRequest::default()
    })
    .expect("a GPU adapter (lavapipe: apt-get install mesa-vulkan-drivers); never skipped");
    for backend in [
        Backend::Cpu(CpuPath::Fast),
        Backend::Cpu(CpuPath::Reference),
        Backend::Cpu(CpuPath::Twin),
        gpu,
    ] {
        let mut sink = StopAtFirstReport {
            received: 0,
            reports: 0,
        };
        let outcome = backend.run_into_within(plan.as_ref(), &MemoryBudget::default(), &mut sink);
        assert!(
            matches!(outcome, Err(Error::Stopped(_))),
            "{}: {outcome:?}",
            backend.label()
        );
        assert_eq!(sink.reports, 1, "{}", backend.label());
        assert!(
            sink.received < plan.member_count(),
            "{}: every member ran",
            backend.label()
        );
    }
}
