//! `harbor study energy-order` on port-Hamiltonian configs: orders 2s of the state and
//! energy errors of `gauss` and `energy-preserving` against the order-16 reference of the
//! continuous system, the energy-preserving balance exact for a quartic H with R ≠ 0 and an
//! input, a quadratic H giving the linear study's numbers (whose reference is the exact
//! flow), and refusals before any work.

mod common;

use harbor::io::Config;
use harbor::study::energy_order::{self, EnergyOrderStudy};

fn check_fits(study: &EnergyOrderStudy, with_state: bool) {
    for fit in &study.fits {
        let expected = fit.expected_order as f64;
        let mut slopes = vec![
            ("supplied", fit.supplied_slope),
            ("stored", fit.stored_slope),
        ];
        if with_state {
            slopes.push(("state", fit.state_slope));
        }
        for (what, slope) in slopes {
            assert!(
                (slope - expected).abs() <= 0.3,
                "{}: {what} slope {slope:.3}, expected {expected} ± 0.3\n{}",
                fit.scheme,
                study.table()
            );
        }
        assert!(fit.points >= 3, "{}: {} points", fit.scheme, fit.points);
    }
}

/// The quartic Duffing oscillator (R ≠ 0, a sine input) under both schemes, s = 1…3:
/// every slope within 2s ± 0.3; the energy-preserving scheme's supplied and stored totals
/// agree to round-off at every h, Gauss's only to its order.
#[test]
fn both_schemes_converge_with_order_2s_and_energy_preserving_balances_exactly() {
    let config = common::example(
        "ph_nonquadratic_energy.toml",
        &["study.h=[0.2, 0.1, 0.05, 0.04, 0.025, 0.02, 0.01]"],
    );
    let study = energy_order::run(&config).unwrap();
    print!("{}", study.table());
    assert_eq!(study.fits.len(), 6, "gauss and energy-preserving, s = 1…3");
    check_fits(&study, true);
    let scale = study.reference_energy_change.abs();
    for p in &study.points {
        let gap = (p.supplied_total - p.stored_total).abs() / scale;
        if p.scheme.starts_with("energy-preserving") {
            assert!(
                gap <= 1e-13,
                "{} h = {}: balance gap {gap:e}",
                p.scheme,
                p.h
            );
        } else if p.h == 0.2 {
            assert!(gap > 1e-9, "{} h = {}: gap {gap:e}", p.scheme, p.h);
        }
    }
}

const PULSED_PENDULUM: &str = r#"
[system]
kind = "port-hamiltonian"
states = ["q", "p"]
parameters = { m = 1.2, l = 0.8, g = 9.81, c = 0.3 }
H = "p^2 / (2*m*l^2) + m*g*l*(1 - cos(q))"
J = [[0, 1], [-1, 0]]
R = [[0, 0], [0, "c"]]
G = [[0], [1]]
x0 = [2.0, 0.0]
newton = { tolerance = 1e-15, max_iterations = 60 }

[[input]]
kind = "pulse"
start = 1.0
end = 2.0
amplitude = 3.0

[scheme]
family = "gauss"
stages = 1
h = 0.1
t_end = 4.0

[study]
schemes = [{ family = "gauss", stages = 1 }, { family = "gauss", stages = 2 }, { family = "gauss", stages = 3 }]
h = [0.1, 0.05, 0.04, 0.025, 0.02, 0.01]
"#;

/// The forced damped pendulum driven by a pulse: the reference integrates between the
/// pulse's edges (grid points of every h), so Gauss keeps order 2s in state and energy.
#[test]
fn gauss_orders_on_the_pulsed_pendulum() {
    let config = Config::from_str_with(PULSED_PENDULUM, &[], "pendulum").unwrap();
    let prepared = energy_order::prepare(&config).unwrap();
    assert!(
        prepared.describe_reference().contains("3 piece(s)"),
        "{}",
        prepared.describe_reference()
    );
    let study = prepared.run(&mut |_| {}).unwrap();
    print!("{}", study.table());
    assert_eq!(study.fits.len(), 3);
    check_fits(&study, true);
}

/// The oscillator of the pulse experiment written as a port-Hamiltonian model
/// (H = (q² + p²)/2): its reference (order-16 integration of the expressions) and every
/// point's totals and final state agree with the linear study's, whose reference is the
/// exact flow.
#[test]
fn a_quadratic_hamiltonian_gives_the_linear_study() {
    let h = "study.h=[0.5, 0.25, 0.1, 0.05]";
    let schemes = "study.schemes=[{family='gauss', stages=1}, {family='gauss', stages=2}, {family='gauss', stages=3}]";
    let linear =
        energy_order::run(&common::example("oscillator_pulse.toml", &[h, schemes])).unwrap();
    let text = r#"
[system]
kind = "port-hamiltonian"
states = ["q", "p"]
H = "q^2/2 + p^2/2"
J = [[0, 1], [-1, 0]]
G = [[0], [1]]
x0 = [0.0, -1.0]

[[input]]
kind = "pulse"
start = 8.0
end = 10.0
amplitude = 1.0

[scheme]
family = "gauss"
stages = 2
h = 0.01
t_end = 18.0
"#;
    let config =
        Config::from_str_with(text, &[h.to_string(), schemes.to_string()], "oscillator").unwrap();
    let nonlinear = energy_order::run(&config).unwrap();
    let relative = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-300);
    let reference_gap = relative(
        nonlinear.reference_energy_change,
        linear.reference_energy_change,
    );
    assert!(
        reference_gap <= 1e-12,
        "ΔH_tot differs by {reference_gap:e}"
    );
    assert_eq!(nonlinear.points.len(), linear.points.len());
    for (a, b) in nonlinear.points.iter().zip(&linear.points) {
        assert_eq!((&a.scheme, a.h), (&b.scheme, b.h));
        for (what, x, y) in [
            ("supplied", a.supplied_total, b.supplied_total),
            ("stored", a.stored_total, b.stored_total),
        ] {
            assert!(
                (x - y).abs() <= 1e-12 * y.abs().max(1.0),
                "{} h = {}: {what} {x:e} vs {y:e}",
                a.scheme,
                a.h
            );
        }
        assert!(
            (a.state_error - b.state_error).abs() <= 1e-12,
            "{} h = {}: state error {:e} vs {:e}",
            a.scheme,
            a.h,
            a.state_error,
            b.state_error
        );
    }
}

/// A scheme for other systems, a kind without a study and a Newton failure are refused
/// with the field, before (or instead of) any output.
#[test]
fn refusals_name_the_field() {
    let refuse = |text: &str, set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        // Some refusals come when the config is loaded, the rest before or during the sweep.
        let config = match Config::from_str_with(text, &set, "pendulum") {
            Ok(config) => config,
            Err(e) => return e.to_string(),
        };
        match energy_order::prepare(&config) {
            Ok(prepared) => prepared.run(&mut |_| {}).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        }
    };
    let e = refuse(
        PULSED_PENDULUM,
        &["study.schemes=[{family='gauss', stages=2}, {family='lobatto-pair', stages=3}]"],
    );
    common::assert_mentions(
        &e,
        &[
            "study.schemes",
            "lobatto-pair integrates",
            "study.schemes[1] = lobatto-pair-3",
        ],
    );
    let e = refuse(
        PULSED_PENDULUM,
        &["study.schemes=[{family='herglotz', stages=2}]"],
    );
    common::assert_mentions(&e, &["study.schemes[0].family", "herglotz"]);
    let e = refuse(
        PULSED_PENDULUM,
        &["system.newton.max_iterations=1", "study.h=[0.1, 0.05]"],
    );
    common::assert_mentions(
        &e,
        &["gauss-1", "did not converge at step", "max_iterations"],
    );
    let contact =
        std::fs::read_to_string(common::example_path("contact_damped_oscillator.toml")).unwrap();
    let e = refuse(&contact, &[]);
    common::assert_mentions(&e, &["system.kind", "contact", "no energy-order study"]);
}

/// `harbor study energy-order` on a port-Hamiltonian config writes the state slope beside
/// the energy slopes.
#[test]
fn the_command_writes_state_slopes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let config = common::example_path("ph_nonquadratic_energy.toml");
    let output = common::run_harbor(&[
        "study",
        "energy-order",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "study.h=[0.05, 0.025]",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("order 16"), "{stderr}");
    let slopes = std::fs::read_to_string(out.join("energy_order_slopes.csv")).unwrap();
    assert!(slopes.starts_with("scheme,expected_order,supplied_slope,stored_slope,state_slope"));
    assert!(slopes.contains("\nenergy-preserving-3,6,"), "{slopes}");
}
