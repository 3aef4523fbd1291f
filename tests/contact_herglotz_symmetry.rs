//! The second-order Herglotz step G(h) is symmetric, G(−h) ∘ G(h) = id: a step of h from t
//! followed by a step of −h from t + h returns to the start up to round-off, with
//! time-dependent B and C too (B sampled at the step's ends and C at its midpoint, the same
//! times read backwards). This is what lets a symmetric composition
//! G(γ_s h) ∘ … ∘ G(γ_1 h) raise the order to the composition's (Yoshida's trick on the
//! slides of Vermeeren, Bravetti & Seri 2019; the orders are measured in
//! `tests/contact_orders.rs`), and the compositions are symmetric as well.
//!
//! That the check can fail: the same step with C sampled at t_k instead of t_{k+½} is not
//! symmetric once C depends on t (its defect is O(h² Ċ) ≫ round-off), nor is the Lie
//! splitting φ_C(h) φ_B(h) φ_A(h).

use harbor::contact::flows::{self as contact_flows, flow_a, flow_b, flow_c, herglotz_at};
use harbor::contact::{ContactMethod, ContactSystem, Damping, KeplerOrbit, Potential};
use harbor::model::Signal;
use harbor::tableau::Composition;
use nalgebra::DMatrix;

/// Start time (a generic phase of the time-dependent terms).
const T0: f64 = 0.37;
/// |G(−h) G(h) y − y| allowed, relative to max(1, |y|): a few hundred ulps.
const TOLERANCE: f64 = 1e-13;

/// (name, system, start state, whether B or C depends on t).
fn cases() -> Vec<(&'static str, ContactSystem, Vec<f64>, bool)> {
    let orbit = KeplerOrbit::new("test", 0.2).unwrap();
    vec![
        (
            "damped oscillator",
            ContactSystem::new(
                "test",
                DMatrix::identity(1, 1),
                vec![Potential::Harmonic {
                    k: DMatrix::identity(1, 1),
                }],
                Damping::Constant { alpha: 0.1 },
            )
            .unwrap(),
            vec![0.5, 0.5, 0.2],
            false,
        ),
        (
            "spin-orbit + tidal",
            ContactSystem::new(
                "test",
                DMatrix::identity(1, 1),
                vec![Potential::SpinOrbit {
                    epsilon: 0.3,
                    orbit,
                }],
                Damping::Tidal { eta: 0.05, orbit },
            )
            .unwrap(),
            vec![0.3, 1.2, -0.4],
            true,
        ),
        (
            "coupled, signal damping",
            ContactSystem::new(
                "test",
                DMatrix::from_row_slice(2, 2, &[1.5, 0.4, 0.4, 0.9]),
                vec![
                    Potential::Harmonic {
                        k: DMatrix::from_row_slice(2, 2, &[2.0, -0.5, -0.5, 1.0]),
                    },
                    Potential::Pendulum { omega: 0.8 },
                ],
                Damping::Signal {
                    alpha: 0.4,
                    signal: Signal::Harmonic {
                        amplitude: 0.5,
                        omega: 0.9,
                        phase: 0.3,
                        offset: 1.0,
                    },
                },
            )
            .unwrap(),
            vec![0.4, -0.2, 0.3, 0.5, 0.1],
            true,
        ),
    ]
}

/// max_i |a_i − b_i| / max(1, |b|_∞).
fn defect(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(1.0_f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .map(|(u, v)| (u - v).abs())
        .fold(0.0, f64::max)
        / scale
}

/// y ← step(t + h, −h) step(t, h) y with `step(t, h, y)`, and its defect.
fn there_and_back(y0: &[f64], h: f64, mut step: impl FnMut(f64, f64, &mut [f64])) -> f64 {
    let mut y = y0.to_vec();
    step(T0, h, &mut y);
    assert!(
        defect(&y, y0) > 1e-3 * h,
        "the step must move the state for the check to mean anything"
    );
    step(T0 + h, -h, &mut y);
    defect(&y, y0)
}

#[test]
fn the_herglotz_step_and_its_compositions_are_symmetric() {
    for (name, system, y0, _) in cases() {
        let n = system.dof();
        let mut gradient = vec![0.0; n];
        for composition in ["strang", "triple-jump-4", "suzuki-4", "yoshida-6a"] {
            let method = ContactMethod::Herglotz(Composition::by_name(composition).unwrap());
            for h in [0.05, 0.25, 0.5] {
                let d = there_and_back(&y0, h, |t, h, y| {
                    contact_flows::step(&method, &system, t, h, y, &mut gradient)
                });
                eprintln!(
                    "{name:24} {:24} h = {h:<5}: |G(−h) G(h) y − y| = {d:.1e}",
                    method.label()
                );
                assert!(
                    d <= TOLERANCE,
                    "{name}, {}, h = {h}: the step is not symmetric (defect {d:e})",
                    method.label()
                );
            }
        }
    }
}

#[test]
fn steps_that_are_not_symmetric_are_caught() {
    for (name, system, y0, time_dependent) in cases() {
        let n = system.dof();
        let mut gradient = vec![0.0; n];
        let h = 0.25;
        // Lie splitting φ_C(h) φ_B(h) φ_A(h) (applied right to left), t frozen.
        let lie = there_and_back(&y0, h, |t, h, y| {
            flow_a(&system, h, y);
            flow_b(&system, t, h, y, &mut gradient);
            flow_c(&system, t, h, y);
        });
        eprintln!("{name:24} Lie splitting: defect {lie:.1e}");
        assert!(lie > 1e4 * TOLERANCE, "{name}: Lie passed ({lie:e})");
        if time_dependent {
            // Herglotz with C sampled at the step's start instead of its midpoint.
            let start = there_and_back(&y0, h, |t, h, y| {
                herglotz_at(&system, [t, t, t + h], h, y, &mut gradient)
            });
            eprintln!("{name:24} Herglotz, C at t_k: defect {start:.1e}");
            assert!(
                start > 1e4 * TOLERANCE,
                "{name}: C at t_k passed ({start:e})"
            );
        }
    }
}
