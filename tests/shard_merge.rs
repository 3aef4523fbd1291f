//! Sharded runs merged against the unsharded run, through the binary: every family on the
//! CPU and on the GPU (lavapipe in CI), gradient batches, identification in stages, with
//! shard counts that do not divide the member count; and tampered shard sets, refused
//! with nothing written.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::example_path;
use serde_json::Value;

const HARBOR: &str = env!("CARGO_BIN_EXE_harbor");

/// Runs harbor with `args` (and `env`), asserting success; returns stdout.
fn harbor(args: &[&str], env: &[(&str, &str)]) -> String {
    let output = Command::new(HARBOR)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "harbor {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs harbor with `args`, asserting a clean failure (no panic); returns stderr.
fn harbor_fails(args: &[&str]) -> String {
    let output = Command::new(HARBOR).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "harbor {args:?} succeeded");
    assert!(
        !stderr.contains("panicked"),
        "harbor {args:?} panicked: {stderr}"
    );
    stderr
}

/// Every file under `dir`, relative.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// A JSON file without its wall-time fields (the documented exception of a merge).
fn without_wall_time(path: &Path) -> Value {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let object = value.as_object_mut().unwrap();
    for key in ["seconds", "member_steps_per_second", "wall_seconds"] {
        object.remove(key);
    }
    value
}

/// `merged` holds exactly `whole`'s files: every byte, and the JSON summaries equal but for
/// wall time.
fn assert_same_output(whole: &Path, merged: &Path, what: &str) {
    let names = files(whole);
    assert_eq!(names, files(merged), "{what}: the merged directory's files");
    for name in names {
        let (a, b) = (whole.join(&name), merged.join(&name));
        let is_summary = ["summary.json", "identification.json"]
            .iter()
            .any(|s| name.ends_with(s));
        if is_summary {
            assert_eq!(
                without_wall_time(&a),
                without_wall_time(&b),
                "{what}: {}",
                name.display()
            );
        } else {
            assert!(
                std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                "{what}: {} differs",
                name.display()
            );
        }
    }
}

/// Runs `command config` whole and in `shards` shards (merged in a shuffled order) with
/// `args`, and compares.
fn check_sharded(command: &str, config: &str, shards: usize, args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let config = example_path(config);
    let config = config.to_str().unwrap();
    let whole = dir.path().join("whole");
    let mut base = vec![command, config];
    base.extend(args);
    let run = |extra: &[&str], out: &Path| {
        let mut all = base.clone();
        all.extend(extra);
        all.extend(["--out", out.to_str().unwrap()]);
        harbor(&all, &[]);
    };
    run(&[], &whole);
    let mut dirs: Vec<String> = Vec::new();
    for i in 0..shards {
        let out = dir.path().join(format!("shard{i}"));
        run(&["--shard", &format!("{i}/{shards}")], &out);
        assert!(out.join("shard.json").is_file());
        dirs.push(out.to_str().unwrap().into());
    }
    dirs.rotate_left(shards / 2);
    dirs.swap(0, shards - 1);
    let merged = dir.path().join("merged");
    let mut merge = vec!["merge"];
    merge.extend(dirs.iter().map(String::as_str));
    merge.extend(["--out", merged.to_str().unwrap()]);
    harbor(&merge, &[]);
    assert_same_output(&whole, &merged, &format!("{command} {config} {args:?}"));
}

/// An example of every family (and problem kind), with a member count that 3 does not
/// divide.
const FAMILIES: &[(&str, &[&str])] = &[
    (
        "oscillator_ensemble.toml",
        &["--set", "ensemble.members=7", "--set", "scheme.t_end=2.0"],
    ),
    ("oscillator_damped.toml", &[]),
    (
        "contact_expression_double_well.toml",
        &["--set", "ensemble.members=7", "--set", "scheme.t_end=5.0"],
    ),
    (
        "contact_energy_sweep.toml",
        &["--set", "ensemble.members=8", "--set", "scheme.t_end=5.0"],
    ),
    (
        "pendulum_damped_forced.toml",
        &["--set", "ensemble.members=7", "--set", "scheme.t_end=2.0"],
    ),
    (
        "lotka_volterra_ph.toml",
        &["--set", "ensemble.members=5", "--set", "scheme.t_end=2.0"],
    ),
    (
        "variational_forced_oscillator.toml",
        &["--set", "ensemble.members=7", "--set", "scheme.t_end=4.0"],
    ),
    (
        "variational_pais_uhlenbeck.toml",
        &["--set", "ensemble.members=7", "--set", "scheme.t_end=2.0"],
    ),
    (
        "variational_sphere_spline.toml",
        &["--set", "ensemble.members=7", "--set", "scheme.h=0.02"],
    ),
];

fn check_every_family(backend: &str) {
    for (config, args) in FAMILIES {
        let shards = if *config == "oscillator_damped.toml" {
            1
        } else {
            3
        };
        let mut all = vec!["--backend", backend, "--keep-nonfinite"];
        all.extend(args.iter());
        check_sharded("simulate", config, shards, &all);
    }
}

#[test]
fn every_family_merges_bit_for_bit_on_the_cpu() {
    check_every_family("cpu");
}

#[test]
fn every_family_merges_bit_for_bit_on_the_gpu() {
    check_every_family("gpu");
}

#[test]
fn the_reference_and_twin_paths_merge_bit_for_bit() {
    for backend in ["reference", "twin"] {
        check_sharded(
            "simulate",
            "pendulum_damped_forced.toml",
            4,
            &[
                "--backend",
                backend,
                "--set",
                "ensemble.members=10",
                "--set",
                "scheme.t_end=1.0",
            ],
        );
    }
}

#[test]
fn gradient_batches_merge_byte_for_byte() {
    check_sharded(
        "gradient",
        "gradient_check.toml",
        4,
        &["--backend", "cpu", "--set", "candidates.members=11"],
    );
    check_sharded("gradient", "gradient_check.toml", 1, &["--backend", "cpu"]);
    check_sharded(
        "gradient",
        "gradient_check.toml",
        3,
        &["--backend", "gpu", "--set", "candidates.members=5"],
    );
}

/// `identify` whole against its candidate stage in `candidate_shards` shards, merged, and
/// its descent stage in `descent_shards` shards, merged.
fn check_identification(candidate_shards: usize, descent_shards: usize, settings: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let config = example_path("identify_synthetic.toml");
    let config = config.to_str().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let with = |extra: &[&str]| {
        let mut all = vec!["identify", config, "--backend", "cpu"];
        all.extend(settings);
        all.extend(extra);
        all.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| harbor(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    run(with(&["--out", &path("whole")]));
    let mut merge = vec!["merge".to_string()];
    for i in 0..candidate_shards {
        let shard = format!("{i}/{candidate_shards}");
        run(with(&[
            "--stage",
            "candidates",
            "--shard",
            &shard,
            "--out",
            &path(&format!("c{i}")),
        ]));
        merge.push(path(&format!("c{i}")));
    }
    merge.extend(["--out".into(), path("kept")]);
    run(merge);
    let mut merge = vec!["merge".to_string()];
    for i in (0..descent_shards).rev() {
        let shard = format!("{i}/{descent_shards}");
        run(with(&[
            "--stage",
            "descent",
            "--from",
            &path("kept"),
            "--shard",
            &shard,
            "--out",
            &path(&format!("d{i}")),
        ]));
        merge.push(path(&format!("d{i}")));
    }
    merge.extend(["--out".into(), path("result")]);
    run(merge);
    assert_same_output(
        &dir.path().join("whole"),
        &dir.path().join("result"),
        &format!("identify {settings:?}"),
    );
}

#[test]
fn identification_through_shards_finds_the_same_model() {
    let small = [
        "--set",
        "monte_carlo.candidates=61",
        "--set",
        "monte_carlo.keep=7",
        "--set",
        "optimizer.max_iterations=25",
    ];
    // Successive halving every 3 iterations couples the starts: the merge replays it.
    let mut halving = small.to_vec();
    halving.extend(["--set", "optimizer.prune_every=3"]);
    check_identification(3, 4, &halving);
    // An evaluation budget that stops the descents part-way.
    let mut budget = small.to_vec();
    budget.extend([
        "--set",
        "optimizer.prune_every=0",
        "--set",
        "optimizer.evaluation_budget=200",
    ]);
    check_identification(2, 7, &budget);
}

#[test]
fn shard_auto_reads_slurm_arrays_and_indexed_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let config = example_path("pendulum_damped_forced.toml");
    let config = config.to_str().unwrap();
    let args = [
        "--backend",
        "cpu",
        "--set",
        "ensemble.members=5",
        "--set",
        "scheme.t_end=0.5",
    ];
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let mut run = vec!["simulate", config];
    run.extend(args);
    let whole = out("whole");
    let mut all = run.clone();
    all.extend(["--out", &whole]);
    harbor(&all, &[]);
    let (s0, s1) = (out("s0"), out("s1"));
    let mut slurm = run.clone();
    slurm.extend(["--shard", "auto", "--out", &s0]);
    harbor(
        &slurm,
        &[
            ("SLURM_ARRAY_TASK_ID", "10"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
        ],
    );
    let mut k8s = run.clone();
    k8s.extend(["--shard", "auto", "--shard-count", "2", "--out", &s1]);
    harbor(&k8s, &[("JOB_COMPLETION_INDEX", "1")]);
    let merged = out("merged");
    harbor(&["merge", &s0, &s1, "--out", &merged], &[]);
    assert_same_output(Path::new(&whole), Path::new(&merged), "--shard auto");
    let mut none = run.clone();
    let nowhere = out("none");
    none.extend(["--shard", "auto", "--out", &nowhere]);
    let e = harbor_fails(&none);
    assert!(
        e.contains("--shard") && e.contains("SLURM_ARRAY_TASK_ID"),
        "{e}"
    );
}

/// Shards 0..3 of a small run, and the same with another config.
struct Shards {
    dir: tempfile::TempDir,
}

impl Shards {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = example_path("oscillator_ensemble.toml");
        for (name, members) in [("s", "10"), ("other", "11")] {
            for i in 0..3 {
                let out = dir.path().join(format!("{name}{i}"));
                harbor(
                    &[
                        "simulate",
                        config.to_str().unwrap(),
                        "--backend",
                        "cpu",
                        "--set",
                        &format!("ensemble.members={members}"),
                        "--set",
                        "scheme.t_end=1.0",
                        "--shard",
                        &format!("{i}/3"),
                        "--out",
                        out.to_str().unwrap(),
                    ],
                    &[],
                );
            }
        }
        Shards { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_string()
    }

    /// `harbor merge` of `names` fails naming `words`, and writes nothing.
    fn refused(&self, names: &[&str], words: &[&str]) {
        let out = self.path("merged");
        let mut args = vec!["merge".to_string()];
        args.extend(names.iter().map(|n| self.path(n)));
        args.extend(["--out".into(), out.clone()]);
        let e = harbor_fails(&args.iter().map(String::as_str).collect::<Vec<_>>());
        for w in words {
            assert!(e.contains(w), "{names:?}: expected {w:?} in: {e}");
        }
        assert!(
            !Path::new(&out).exists(),
            "{names:?}: a refused merge wrote {out}"
        );
        let staging: Vec<_> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(".harbor")
            })
            .collect();
        assert!(staging.is_empty(), "{names:?}: leftovers {staging:?}");
    }
}

#[test]
fn tampered_shard_sets_are_refused_and_nothing_is_written() {
    let shards = Shards::new();
    shards.refused(&["s0", "s2"], &["2 of 3 shards given", "missing: 1/3"]);
    shards.refused(&["s0", "s1", "s1", "s2"], &["shard 1/3 is given twice"]);
    shards.refused(&["s0", "other1", "s2"], &["differ in config"]);
    shards.refused(&["s0", "nothing", "s2"], &["nothing is not a directory"]);
    // A truncated array.
    let copy = |from: &str, to: &str| {
        let (from, to) = (shards.dir.path().join(from), shards.dir.path().join(to));
        std::fs::create_dir(&to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
        to
    };
    let truncated = copy("s1", "truncated1");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(truncated.join("trajectory.npy"))
        .unwrap();
    let length = file.metadata().unwrap().len();
    file.set_len(length - 8).unwrap();
    shards.refused(
        &["s0", "truncated1", "s2"],
        &[
            "incomplete shard",
            "trajectory.npy has",
            "bytes, the shard wrote",
        ],
    );
    // A missing file, a missing manifest.
    let missing = copy("s1", "missing1");
    std::fs::remove_file(missing.join("totals.npy")).unwrap();
    shards.refused(&["s0", "missing1", "s2"], &["totals.npy is missing"]);
    let unmarked = copy("s1", "unmarked1");
    std::fs::remove_file(unmarked.join("shard.json")).unwrap();
    shards.refused(&["s0", "unmarked1", "s2"], &["has no shard.json"]);
    // Another version; an edited config.
    let edit = |name: &str, from: &str, to: &str| {
        let dir = copy("s1", name);
        let path = dir.join("shard.json");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{text}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    };
    edit(
        "version1",
        &format!("\"harbor_version\": \"{}\"", env!("CARGO_PKG_VERSION")),
        "\"harbor_version\": \"0.0.1\"",
    );
    shards.refused(
        &["s0", "version1", "s2"],
        &["differ in harbor version", "0.0.1"],
    );
    edit(
        "engine1",
        "\"engine\": \"fast\"",
        "\"engine\": \"reference\"",
    );
    shards.refused(
        &["s0", "engine1", "s2"],
        &["differ in engine: fast vs reference"],
    );
    // A shard directory that is a whole run.
    shards.refused(&["s0", "s1", "s2", "other0"], &["differ in config"]);
    // The untampered set merges.
    harbor(
        &[
            "merge",
            &shards.path("s2"),
            &shards.path("s0"),
            &shards.path("s1"),
            "--out",
            &shards.path("merged"),
        ],
        &[],
    );
}

#[test]
fn shard_counts_beyond_the_members_and_malformed_shards_are_refused() {
    let config = example_path("pendulum_damped_forced.toml");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let run = |shard: &str| {
        harbor_fails(&[
            "simulate",
            config.to_str().unwrap(),
            "--backend",
            "cpu",
            "--set",
            "ensemble.members=3",
            "--shard",
            shard,
            "--out",
            out.to_str().unwrap(),
        ])
    };
    assert!(run("0/4").contains("4 shards of 3 members would leave a shard empty"));
    assert!(run("3/3").contains("below N = 3, got 3"));
    assert!(run("1-3").contains("expected I/N"));
    assert!(!out.exists());
}

#[test]
fn harbor_slurm_writes_the_scripts_and_refuses_more_shards_than_members() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let config = example_path("pendulum_damped_forced.toml");
    let config = config.to_str().unwrap();
    let out = harbor(
        &[
            "slurm",
            config,
            "--shards",
            "3",
            "--partition",
            "gpu",
            "--gpus-per-task",
            "1",
            "--time",
            "00:10:00",
            "--backend",
            "gpu",
            "--set",
            "ensemble.members=5",
            "--dry-run",
            "--out",
            work.to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.contains("not submitted"), "{out}");
    let shards = std::fs::read_to_string(work.join("shards.sbatch")).unwrap();
    for line in [
        "#SBATCH --array=0-2",
        "#SBATCH --partition=gpu",
        "#SBATCH --gpus-per-task=1",
        "#SBATCH --time=00:10:00",
        "--shard auto --out",
        "--backend gpu --set ensemble.members=5",
    ] {
        assert!(shards.contains(line), "{line:?} in {shards}");
    }
    let merge = std::fs::read_to_string(work.join("merge.sbatch")).unwrap();
    assert!(
        merge.contains(" merge ") && merge.contains("shards/2 --out"),
        "{merge}"
    );
    let e = harbor_fails(&[
        "slurm",
        config,
        "--shards",
        "6",
        "--set",
        "ensemble.members=5",
        "--dry-run",
        "--out",
        dir.path().join("refused").to_str().unwrap(),
    ]);
    assert!(e.contains("6 shards of 5 members"), "{e}");
    assert!(!dir.path().join("refused").exists());
}
