//! `harbor identify`: every iterate and every line-search trial keeps the structure
//! exactly (J skew, R = L Lᵀ symmetric PSD, Q symmetric PD), the cost never increases
//! along a start (Armijo), the run reduces the cost of the synthetic example, and
//! identification.json has the documented shape.

mod common;

use common::{example_path, run_harbor};
use harbor::backend::Backend;
use harbor::identify::conjugate_gradient::minimize;
use harbor::identify::{CgSettings, Geometry, Point, evaluate_points};
use harbor::io::identify_spec::IdentifyConfig;
use harbor::kernels::CpuPath;
use harbor::plan::MemoryBudget;
use serde_json::Value;

/// Minimises from a few Monte-Carlo candidates of `example` with `overrides`, checking
/// the structure of every point handed to the evaluator; returns the histories.
fn checked_descent(example: &str, overrides: &[&str], settings: CgSettings) -> Vec<Vec<f64>> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let config = IdentifyConfig::load(&example_path(example), &overrides)
        .unwrap()
        .problem(&MemoryBudget::default())
        .unwrap();
    let setup = &config.setup;
    let backend = Backend::Cpu(CpuPath::Fast);
    let budget = MemoryBudget::default();
    let starts: Vec<Point> = (0..3)
        .map(|i| {
            setup
                .monte_carlo
                .draw(&setup.template, setup.fit, i)
                .unwrap()
        })
        .collect();
    let evaluations = evaluate_points(&backend, &budget, &config.problem, &starts).unwrap();
    let mut checked = 0;
    let (results, _) = minimize(
        &Geometry { fit: setup.fit },
        starts.into_iter().zip(evaluations).collect(),
        &settings,
        &mut |points| {
            for p in points {
                let defects = p.structure_defects();
                assert!(
                    defects.is_empty(),
                    "a trial point breaks the structure: {defects:?}"
                );
                checked += 1;
            }
            evaluate_points(&backend, &budget, &config.problem, points)
        },
        &mut |_| Ok(()),
    )
    .unwrap();
    assert!(checked > 0);
    for r in &results {
        assert!(r.point.structure_defects().is_empty());
    }
    results.into_iter().map(|r| r.history).collect()
}

#[test]
fn every_iterate_keeps_the_structure_and_the_cost_never_increases() {
    // Everything fitted, R of rank 2 < n, and a first move far too long (initial_step =
    // 100): the trials reach wild points, which must still be structured.
    let settings = CgSettings {
        max_iterations: 12,
        initial_step: 100.0,
        ..CgSettings::default()
    };
    for (example, overrides) in [
        (
            "identify_synthetic_all.toml",
            vec!["model.dissipation_rank=2", "scheme.t_end=0.2"],
        ),
        ("identify_synthetic_q.toml", vec!["scheme.t_end=0.2"]),
        ("identify_synthetic.toml", vec!["scheme.t_end=0.2"]),
    ] {
        for history in checked_descent(example, &overrides, settings.clone()) {
            assert!(history.len() > 1, "{example}: the start moved");
            for pair in history.windows(2) {
                assert!(
                    pair[1] <= pair[0],
                    "{example}: cost rose {} → {}",
                    pair[0],
                    pair[1]
                );
            }
            assert!(history.last().unwrap() < &history[0]);
        }
    }
}

#[test]
fn identification_json_has_the_documented_shape_and_the_cost_falls() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let output = run_harbor(&[
        "identify",
        example_path("identify_synthetic.toml").to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--backend",
        "cpu",
        "--set",
        "monte_carlo.candidates=200",
        "--set",
        "monte_carlo.keep=3",
        "--set",
        "optimizer.max_iterations=40",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("cross-validation"), "{stdout}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("identification.json")).unwrap())
            .unwrap();
    let initial = json["cost_initial"].as_f64().unwrap();
    let last = json["cost_final"].as_f64().unwrap();
    assert!(last < 0.1 * initial, "cost {initial} → {last}");
    assert!(json["relative_max_error"].as_f64().unwrap() > 0.0);
    assert!(json["cross_validation"]["l2"].as_f64().unwrap() > 0.0);
    assert!(json["cross_validation"]["max"].as_f64().unwrap() > 0.0);
    let starts = json["starts"].as_array().unwrap();
    assert_eq!(starts.len(), 3);
    for s in starts {
        assert!(s["cost_final"].as_f64().unwrap() <= s["cost_initial"].as_f64().unwrap());
        assert!(s["iterations"].as_u64().unwrap() >= 1);
    }
    assert!(json["gradient_evaluations"].as_u64().unwrap() > 200);
    assert!(json["wall_seconds"].as_f64().unwrap() > 0.0);
    let q = json["model"]["Q"].as_array().unwrap();
    for (i, row) in q.iter().enumerate() {
        for (k, v) in row.as_array().unwrap().iter().enumerate() {
            assert_eq!(
                v.as_f64().unwrap(),
                if i == k { 1.0 } else { 0.0 },
                "Q = I stays fixed"
            );
        }
    }
    for file in [
        "model/J.npy",
        "model/R.npy",
        "model/Q.npy",
        "model/B.npy",
        "model/x0.npy",
        "cost_history.csv",
        "outputs.csv",
        "cross_validation.csv",
        "cost.svg",
        "outputs.svg",
        "cross_validation.svg",
    ] {
        assert!(dir.join(file).is_file(), "{file} is written");
    }
}

#[test]
fn bad_configs_get_clear_errors() {
    use common::{assert_mentions, command_outcome};
    let config = example_path("identify_synthetic.toml");
    let fails = |overrides: &[&str]| {
        let mut all = vec!["monte_carlo.candidates=8", "monte_carlo.keep=2"];
        all.extend_from_slice(overrides);
        match command_outcome("identify", &config, &all) {
            Ok(stdout) => panic!("{overrides:?} should fail, printed {stdout}"),
            Err(stderr) => stderr,
        }
    };
    let cases: [(&[&str], &[&str]); 19] = [
        (&["model.fit=[\"J\", \"K\"]"], &["model.fit", "\"K\""]),
        (&["model.fit=[]"], &["model.fit", "no part"]),
        (&["model.order=0"], &["model.order", "got 0"]),
        (&["monte_carlo.keep=9"], &["monte_carlo.keep", "got 9"]),
        (&["optimizer.armijo=1.5"], &["optimizer.armijo", "1.5"]),
        (&["optimizer.trials=0"], &["optimizer.trials", "got 0"]),
        (
            &["model.dissipation_rank=6"],
            &["model.dissipation_rank", "n = 5", "got 6"],
        ),
        (
            &["model.fit=[\"J\", \"R\", \"Q\"]"],
            &["model.B", "required"],
        ),
        (&["model.Q=[[1.0, 0.0], [0.0, 1.0]]"], &["model.Q"]),
        (
            &[
                "model.fit=[\"J\", \"R\", \"B\"]",
                "model.Q=[[1,0,0,0,0],[0,1,0,0,0],[0,0,-1,0,0],[0,0,0,1,0],[0,0,0,0,1]]",
            ],
            &["model.Q", "positive definite"],
        ),
        (
            &["optimizer.evaluation_budget=8"],
            &["optimizer.evaluation_budget", "Monte-Carlo"],
        ),
        (
            &["test_input=[{kind = \"sine\", frequency = 1.0}]"],
            &["test_input", "1 signal", "has 2"],
        ),
        (&["data.noise=-1.0"], &["data.noise", "-1"]),
        (&["optimizer.max_iteration=3"], &["max_iteration"]),
        (
            &["optimizer.stall_window=0"],
            &["optimizer.stall_window", "got 0"],
        ),
        (&["optimizer.prune_every=-2"], &["prune_every", "-2"]),
        (&["optimizer.refine=\"yes\""], &["refine"]),
        // Outputs identically 0 (the relative error would be 0/0, written as null).
        (
            &["data.reference.B=[[0,0],[0,0],[0,0],[0,0],[0,0]]"],
            &["data:", "output samples is 0", "nothing to identify"],
        ),
        // Outputs of ~10⁻³²⁰, subnormal (the relative error overflowed, written as null).
        (
            &["data.reference.B=[[1e-160,0],[0,0],[0,0],[0,0],[0,0]]"],
            &[
                "data:",
                "below the smallest normal f64",
                "nothing to identify",
            ],
        ),
    ];
    for (overrides, expected) in cases {
        assert_mentions(&fails(overrides), expected);
    }
}
