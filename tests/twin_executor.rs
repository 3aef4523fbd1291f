//! The kernels' CPU twins run through the one executor (the CPU as the place where a chunk
//! runs): chunking, dispatch windows, the double-buffered record read-back and the decoding
//! are tested here without an adapter. Every kernel's twin gives the same bits whatever the
//! chunk and window sizes, and those of its family's other CPU paths where both compute
//! the same sums in the same order (the adjoint's reference sweeps here, and its fast
//! engine at every level in tests/adjoint_fast_engine.rs; the linear-PH fast engine's
//! portable level in tests/fast_engine.rs).

mod common;

use harbor::backend::Backend;
use harbor::backend::executor::ExecutorOptions;
use harbor::backend::executor::device::ChunkDevice;
use harbor::backend::twin::{self, TwinDevice};
use harbor::contact::ContactConfig;
use harbor::io::Config;
use harbor::kernels::{CpuPath, Family};
use harbor::linear_ph::{LinearPhConfig, LinearPhPlan};
use harbor::plan::{MemberResult, Recording};
use rand::Rng;

/// Chunk and window caps that cut members and steps unevenly (and one window per step).
const UNEVEN: [(Option<usize>, Option<usize>); 5] = [
    (Some(7), Some(13)),
    (Some(1), Some(1)),
    (Some(10), Some(9)),
    (Some(33), None),
    (None, Some(5)),
];

/// The results of `family` through the twin with members and steps cut by `caps`.
fn twin_with<F: Family>(family: &F, caps: (Option<usize>, Option<usize>)) -> Vec<MemberResult> {
    let options = ExecutorOptions {
        max_chunk_members: caps.0,
        max_steps_per_dispatch: caps.1,
        ..ExecutorOptions::default()
    };
    twin::run(family, &options).unwrap().members
}

/// The drawn oscillator ensemble (pulse input, energy, outputs, trajectory) with `members`
/// members, a cadence that does not divide the steps, and the given recording.
fn oscillator(members: usize, recording: Recording) -> LinearPhPlan {
    common::example(
        "oscillator_ensemble.toml",
        &[
            &format!("ensemble.members={members}"),
            "scheme.t_end=1.37",
            "scheme.h=0.01",
            "output.every=17",
        ],
    )
    .plan()
    .unwrap()
    .with_recording(recording)
}

#[test]
fn linear_ph_twin_does_not_depend_on_chunks_or_windows() {
    let recordings = [
        Recording::default(),
        Recording::FINAL_STATE,
        Recording {
            trajectory: false,
            energy: false,
            outputs: true,
        },
        Recording {
            trajectory: true,
            energy: true,
            outputs: false,
        },
    ];
    for recording in recordings {
        let plan = oscillator(61, recording);
        let whole = twin_with(&plan, (None, None));
        assert_eq!(whole.len(), 61);
        for caps in UNEVEN {
            common::assert_same_bits(
                &whole,
                &twin_with(&plan, caps),
                &format!("{recording:?} {caps:?}"),
            );
        }
        // The CPU backend's twin path is the same executor.
        let backend = Backend::Cpu(CpuPath::Twin).run(&plan).unwrap();
        assert_eq!(backend.backend, "cpu-twin");
        common::assert_same_bits(&whole, &backend.members, "Backend::Cpu(Twin)");
    }
}

/// The cooperative kernel's twin reads the member-major, column-major packing and sums in
/// row order, as the per-invocation twin does: the two give the same bits.
#[test]
fn cooperative_and_per_invocation_twins_agree_bit_for_bit() {
    let mut plan = oscillator(23, Recording::default());
    plan.cooperative = Some(false);
    let per_invocation = twin_with(&plan, (Some(5), Some(11)));
    plan.cooperative = Some(true);
    for caps in UNEVEN {
        common::assert_same_bits(
            &per_invocation,
            &twin_with(&plan, caps),
            &format!("{caps:?}"),
        );
    }
}

/// The twin against the reference integrator (the stage equations solved at every step):
/// the same method, different arithmetic, so agreement to rounding.
#[test]
fn linear_ph_twin_agrees_with_the_reference() {
    let plan = oscillator(12, Recording::default());
    let reference = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap().members;
    let twin = twin_with(&plan, (Some(5), Some(8)));
    for (i, (a, b)) in reference.iter().zip(&twin).enumerate() {
        assert_eq!(a.trajectory.len(), b.trajectory.len());
        for (k, (x, y)) in a.trajectory.iter().zip(&b.trajectory).enumerate() {
            assert!(
                (x - y).abs() <= 1e-12 * x.abs().max(1.0),
                "member {i} entry {k}: {x:e} vs {y:e}"
            );
        }
        for (c, (u, v)) in a.channels.iter().zip(&b.channels).enumerate() {
            assert_eq!(u.len(), v.len(), "member {i} channel {c}");
            for (x, y) in u.iter().zip(v) {
                assert!(
                    (x - y).abs() <= 1e-12 * x.abs().max(1e-3),
                    "member {i} channel {c}: {x:e} vs {y:e}"
                );
            }
        }
    }
}

/// Two degrees of freedom with every time-dependent kind of term the kernel streams
/// (forcing, a damping signal), quartic and harmonic potentials, drawn members.
fn contact_config(method: &str) -> Config {
    let text = format!(
        r#"
[system]
kind = "contact"
x0 = [1.0, -0.3]
p0 = [0.0, 0.4]
potential = [
  {{ kind = "harmonic", K = [[1.0, 0.2], [0.2, 2.0]] }},
  {{ kind = "quartic", beta = 0.3 }},
  {{ kind = "forcing", amplitude = [0.3, -0.1], signal = {{ kind = "cosine", frequency = 0.2 }} }},
]
damping = {{ kind = "signal", alpha = 0.1, signal = {{ kind = "cosine", frequency = 0.5 }} }}
[scheme]
{method}
h = 0.05
t_end = 3.05
[output]
every = 7
[ensemble]
members = 45
seed = 11
x0 = {{ kind = "perturb", sigma = 0.1 }}
p0 = {{ kind = "uniform", low = -1.0, high = 1.0 }}
"#
    );
    Config::from_str_with(&text, &[], "test").unwrap()
}

#[test]
fn contact_twin_does_not_depend_on_chunks_or_windows() {
    for method in [
        "family = \"splitting\"\ncomposition = \"suzuki-4\"",
        "family = \"splitting\"\ncomposition = \"strang\"",
        "family = \"herglotz\"",
    ] {
        let plan = contact_config(method).contact_plan().unwrap();
        let whole = twin_with(&plan, (None, None));
        assert_eq!(whole.len(), 45);
        for caps in UNEVEN {
            common::assert_same_bits(
                &whole,
                &twin_with(&plan, caps),
                &format!("{method} {caps:?}"),
            );
        }
        // The twin and the reference integrator (exact flows, std's functions) agree to
        // rounding.
        let reference = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap().members;
        for (i, (a, b)) in reference.iter().zip(&whole).enumerate() {
            for (x, y) in a.trajectory.iter().zip(&b.trajectory) {
                assert!(
                    (x - y).abs() <= 1e-12 * x.abs().max(1.0),
                    "{method}: member {i}: {x:e} vs {y:e}"
                );
            }
        }
    }
}

/// The adjoint's twin runs forward windows, then backward windows of whole segments, each
/// recomputed from its checkpoint: the same bits as the reference's whole-member sweeps,
/// whatever the chunks, windows and checkpoint spacing.
#[test]
fn adjoint_twin_matches_the_reference_sweeps_bit_for_bit() {
    let mut rng = common::fresh_rng("adjoint twin");
    for (n, m, stages, steps, members, every) in [
        (3, 2, 2, 97, 29, Some(8)),
        (2, 1, 1, 60, 17, Some(1)),
        (4, 1, 3, 45, 11, None),
        (5, 2, 2, 50, 9, Some(50)),
    ] {
        let plan = common::gradient_batch::plan(&mut rng, n, m, stages, steps, members, every);
        let reference = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap().members;
        let segment = plan.segment();
        for caps in [
            (None, None),
            (Some(4), Some(1)),
            (Some(5), Some(2 * segment + 1)),
            (Some(members), Some(rng.random_range(1..=steps))),
        ] {
            let twin = twin_with(&plan, caps);
            common::assert_same_bits(
                &reference,
                &twin,
                &format!("n = {n}, S = {segment}, {caps:?}"),
            );
        }
    }
}

#[test]
fn the_twin_device_declares_a_cpu_run() {
    assert_eq!(TwinDevice.label(), "cpu-twin");
    assert_eq!(TwinDevice.loop_budget(), None);
    assert_eq!(TwinDevice.row_width(17, 64), 17);
}

/// The `.npy` files of a run directory, by name.
fn npy_files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "npy"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// `harbor simulate --backend twin` writes the same files whether a small memory budget
/// cuts the ensemble into many chunks (about 800 members each here) or not.
#[test]
fn the_cli_runs_the_twin_in_chunks_of_any_size() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("oscillator_ensemble.toml");
    let run = |name: &str, budget: &str| {
        let out = dir.path().join(name);
        let output = common::run_harbor(&[
            "simulate",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "twin",
            "--memory-budget",
            budget,
            "--set",
            "ensemble.members=20000",
            "--set",
            "scheme.t_end=2.0",
            "--set",
            "output.every=5",
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["backend"], "cpu-twin");
        out
    };
    let whole = npy_files(&run("whole", "1GiB"));
    let chunked = npy_files(&run("chunked", "16MiB"));
    assert!(whole.iter().any(|(name, _)| name == "trajectory.npy"));
    assert_eq!(whole.len(), chunked.len());
    for ((name, a), (_, b)) in whole.iter().zip(&chunked) {
        assert!(a == b, "{name} differs between one chunk and many");
    }
}

/// `harbor gradient --backend twin` (the adjoint kernel's twin, window by window) writes the
/// gradients of `--backend cpu` (the fast sweeps), bit for bit.
#[test]
fn the_cli_gradient_on_the_twin_equals_the_fast_sweeps() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("gradient_check.toml");
    let gradient = |backend: &str| {
        let out = dir.path().join(backend);
        let output = common::run_harbor(&[
            "gradient",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            backend,
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("gradient.json")).unwrap()).unwrap();
        json
    };
    assert_eq!(gradient("twin"), gradient("cpu"));
}
