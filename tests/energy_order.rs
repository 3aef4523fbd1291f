//! Convergence orders of the energy errors in Kotyczka & Lefèvre §5.1 (and §5.2): relative
//! errors of total supplied and stored energy against the exact continuous energy change,
//! slopes fitted by `harbor study energy-order` over step sizes where round-off does not
//! dominate. Expected: 2s for Gauss, 2s − 2 for the Lobatto pair, each within ±0.3.

mod common;

use harbor::linear_ph::energy_order::WorkEstimate;
use harbor::study::energy_order;

fn check_orders(example: &str) {
    let study = energy_order::run(&common::example(example, &[])).unwrap();
    print!("{}", study.table());
    assert_eq!(study.fits.len(), 5, "one fit per scheme");
    for fit in &study.fits {
        assert!(
            fit.points >= 3,
            "{}: only {} points above the round-off floor",
            fit.scheme,
            fit.points
        );
        for (what, slope) in [
            ("supplied", fit.supplied_slope),
            ("stored", fit.stored_slope),
        ] {
            assert!(
                (slope - fit.expected_order as f64).abs() <= 0.3,
                "{example} {}: {what} energy slope {slope:.3}, expected {} ± 0.3",
                fit.scheme,
                fit.expected_order
            );
        }
    }
    // Gauss: supplied and stored totals coincide (exact discrete energy balance).
    for p in study
        .points
        .iter()
        .filter(|p| p.scheme.starts_with("gauss"))
    {
        let gap = (p.supplied_total - p.stored_total).abs();
        assert!(
            gap <= 1e-13 * p.stored_total.abs().max(1.0),
            "{} h = {}: supplied − stored = {gap:e}",
            p.scheme,
            p.h
        );
    }
}

#[test]
fn pulse_experiment_energy_errors_converge_with_the_scheme_order() {
    check_orders("oscillator_pulse.toml");
}

#[test]
fn damped_experiment_energy_errors_converge_with_the_scheme_order() {
    check_orders("oscillator_damped.toml");
}

#[test]
fn slope_of_exact_power_laws() {
    let h = [0.1f64, 0.05, 0.02, 0.01];
    let log_h: Vec<f64> = h.iter().map(|h| h.ln()).collect();
    let log_e: Vec<f64> = h.iter().map(|h| (3.0 * h.powi(4)).ln()).collect();
    assert!((energy_order::slope(&log_h, &log_e) - 4.0).abs() < 1e-12);
}

/// The error of `prepare` on the pulse example with `overrides`, as text.
/// Some values (a negative or NaN `study.h`, zero stages) are refused already when the
/// config is loaded, the others by `prepare`; either way before any work.
fn refusal(example: &str, overrides: &[&str]) -> String {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let config = match harbor::io::Config::load(&common::example_path(example), &overrides) {
        Ok(config) => config,
        Err(e) => return e.to_string(),
    };
    match energy_order::prepare(&config) {
        Ok(_) => panic!("{example} {overrides:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

/// An ensemble config is refused before any work: the study would compare perturbed
/// member 0 with the exact flow of the unperturbed system (and integrate every member).
#[test]
fn ensembles_are_refused() {
    let err = refusal("oscillator_ensemble.toml", &[]);
    assert!(
        err.starts_with("ensemble:") && err.contains("1048576"),
        "{err}"
    );
    let err = refusal("oscillator_ensemble.toml", &["ensemble.members=1"]);
    assert!(err.starts_with("ensemble:") && err.contains(" 1 "), "{err}");
}

/// Every scheme and step size of the sweep is checked by `prepare`, which integrates
/// nothing, so a bad entry anywhere in the sweep is reported before the first point runs.
#[test]
fn the_whole_sweep_is_checked_before_any_work() {
    let cases: [(&[&str], &str, &str); 10] = [
        (
            &["system.J=[[0.0, 1.1], [-1.1, 0.0]]"],
            "system.J:",
            "study.schemes[3] = lobatto-pair-3",
        ),
        (&["study.h=[0.1, 0.05, 0.07]"], "study.h[2]:", "18 / 0.07"),
        (&["study.h=[0.1, -0.05]"], "study.h[1]:", "-0.05"),
        (&["study.h=[0.1, nan]"], "study.h[1]:", "NaN"),
        (
            &["study.h=[0.1, 0.05, 0.1]"],
            "study.h[2]:",
            "repeats study.h[0]",
        ),
        (&["study.h=[0.1]"], "study.h:", "1 step size"),
        (&["study.schemes=[]"], "study.schemes:", "empty"),
        (
            &["study.schemes=[{family='gauss', stages=2}, {family='gauss', stages=0}]"],
            "study.schemes[1].stages:",
            "got 0",
        ),
        (
            &["study.schemes=[{family='gauss', stages=2}, {family='gauss', stages=2}]"],
            "study.schemes[1]:",
            "gauss-2 repeats study.schemes[0]",
        ),
        (&["study.fit_decades=0.0"], "study.fit_decades:", "got 0"),
    ];
    for (overrides, field, detail) in cases {
        let err = refusal("oscillator_pulse.toml", overrides);
        assert!(
            err.starts_with(field) && err.contains(detail),
            "{overrides:?}: expected {field} … {detail}, got {err}"
        );
    }
}

/// Work beyond the caps is refused with the estimate, the cap and the setting to change:
/// a stiff drift (Q = 1e6 I: 1.152e9 reference nodes), a 1e5 Hz input (5.76e8 nodes), a
/// square wave too fast to list its edges, and a sweep of 9e7 scheme steps.
#[test]
fn work_beyond_the_caps_is_refused() {
    let cases: [(&str, &str, &str); 4] = [
        ("system.Q=[[1e6, 0.0], [0.0, 1e6]]", "system:", "1.152e9"),
        (
            "input=[{kind = 'sine', frequency = 1e5}]",
            "input[0]:",
            "5.760e8",
        ),
        (
            "input=[{kind = 'square', frequency = 1e12}]",
            "input:",
            "MAX_REFERENCE_WORK",
        ),
        ("study.h=[0.1, 1e-6]", "study.h:", "90000900 scheme steps"),
    ];
    for (set, field, estimate) in cases {
        let err = refusal("oscillator_pulse.toml", &[set]);
        assert!(
            err.starts_with(field) && err.contains(estimate) && err.contains("cap"),
            "{set}: expected {field} … {estimate}, got {err}"
        );
    }
}

fn estimate(overrides: &[&str]) -> WorkEstimate {
    harbor::linear_ph::energy_order::estimate(&common::example("oscillator_pulse.toml", overrides))
        .unwrap()
}

/// The estimate grows with each of its drivers: ‖(J − R)Q‖, the input frequency, t_end,
/// and finer step sizes.
#[test]
fn the_work_estimate_grows_with_its_drivers() {
    let grows = |sets: &[&[&str]], what: &dyn Fn(&WorkEstimate) -> f64| {
        let values: Vec<f64> = sets.iter().map(|s| what(&estimate(s))).collect();
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "{sets:?}: {values:?}"
        );
    };
    let reference = |e: &WorkEstimate| e.reference_work;
    let steps = |e: &WorkEstimate| e.sweep_steps as f64;
    grows(
        &[
            &["system.Q=[[1.0, 0.0], [0.0, 1.0]]"],
            &["system.Q=[[10.0, 0.0], [0.0, 10.0]]"],
            &["system.Q=[[1e3, 0.0], [0.0, 1e3]]"],
        ],
        &reference,
    );
    grows(
        &[
            &["input=[{kind = 'sine', frequency = 1.0}]"],
            &["input=[{kind = 'sine', frequency = 10.0}]"],
            &["input=[{kind = 'sine', frequency = 100.0}]"],
        ],
        &reference,
    );
    grows(
        &[&["scheme.t_end=10.0"], &["scheme.t_end=20.0"]],
        &reference,
    );
    grows(&[&["scheme.t_end=10.0"], &["scheme.t_end=20.0"]], &steps);
    grows(
        &[
            &["study.h=[0.1, 0.05]"],
            &["study.h=[0.1, 0.05, 0.01]"],
            &["study.h=[0.1, 0.05, 0.01, 0.001]"],
        ],
        &steps,
    );
}

/// Progress runs from the reference nodes through the scheme steps and ends at the total.
#[test]
fn progress_reaches_the_total() {
    let config = common::example(
        "oscillator_pulse.toml",
        &[
            "study.schemes=[{family='gauss', stages=1}]",
            "study.h=[0.1, 0.05]",
        ],
    );
    let prepared = energy_order::prepare(&config).unwrap();
    let total = prepared.total_work();
    let nodes = harbor::linear_ph::energy_order::estimate(&config)
        .unwrap()
        .reference_nodes;
    assert_eq!(prepared.sweep_steps, 180 + 360);
    assert!(total > prepared.sweep_steps && (total - prepared.sweep_steps) as f64 <= nodes);
    let mut seen = Vec::new();
    prepared
        .run(&mut |p| {
            assert_eq!(p.total, total);
            seen.push(p.done);
        })
        .unwrap();
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "not monotone");
    assert_eq!(seen.last().copied(), Some(total));
}

fn point(scheme: &str, h: f64, supplied_error: f64, stored_error: f64) -> energy_order::OrderPoint {
    energy_order::OrderPoint {
        scheme: scheme.into(),
        order: 4,
        h,
        steps: 10,
        supplied_total: 1.0,
        stored_total: 1.0,
        supplied_error,
        stored_error,
        state_error: supplied_error,
        fitted: false,
    }
}

/// An error of exactly zero cannot sit on the log axis: it is drawn as a triangle at the
/// floor min(1e-17, smallest non-zero error / 10), in a series of its own, and left off the
/// line.
#[test]
fn zero_errors_are_drawn_at_the_floor() {
    use harbor::io::plot::Marker;
    let study = energy_order::EnergyOrderStudy {
        reference: "exact reference flow".into(),
        reference_energy_change: 1.0,
        points: vec![
            point("gauss-2", 0.1, 1e-8, 1e-8),
            point("gauss-2", 0.05, 0.0, 4e-18),
        ],
        fits: Vec::new(),
    };
    assert!(study.has_zero_errors());
    let floor = study.zero_error_floor();
    assert_eq!(floor, 4e-18 / 10.0);
    let panels = study.panels();
    let series = &panels[0].series;
    let supplied = series
        .iter()
        .find(|s| s.label == "gauss-2 supplied")
        .unwrap();
    assert_eq!(supplied.points, vec![(0.1, 1e-8)]);
    let zeros = series
        .iter()
        .find(|s| s.label.starts_with("gauss-2 supplied = 0"))
        .unwrap();
    assert_eq!(zeros.points, vec![(0.05, floor)]);
    assert_eq!(zeros.marker, Marker::Triangle);
    assert!(zeros.label.contains("drawn at 4e-19"), "{}", zeros.label);
    assert!(
        !series
            .iter()
            .any(|s| s.label.starts_with("gauss-2 stored = 0")),
        "the stored error has no zero"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plot.svg");
    study.svg(&path, "zero errors").unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.contains("gauss-2 supplied = 0, drawn at 4e-19"));
    // Without zero errors the floor is the fixed 1e-17 and no extra series appears.
    let clean = energy_order::EnergyOrderStudy {
        points: vec![point("gauss-2", 0.1, 1e-8, 1e-8)],
        ..study
    };
    assert!(!clean.has_zero_errors());
    assert_eq!(clean.zero_error_floor(), energy_order::ZERO_ERROR_FLOOR);
    assert_eq!(clean.panels()[0].series.len(), 2);
}
