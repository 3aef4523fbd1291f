//! The exact flows of the three parts of a contact Hamiltonian H = A(p) + B(t, x) + C(t) z
//! (`contact::flows::{flow_a, flow_b, flow_c}`), each checked against a
//! high-accuracy numerical solution of its own vector field, written here from the contact
//! equations
//!
//! ```text
//!   ẋ = ∂H/∂p,   ṗ = −∂H/∂x − p ∂H/∂z,   ż = p·∂H/∂p − H
//! ```
//!
//! applied to each part alone (Bravetti, Cruz & Tapias 2017; Vermeeren, Bravetti & Seri
//! 2019, §2):
//!
//! ```text
//!   X_A  (H = ½ pᵀ P p):  ẋ = P p,   ṗ = 0,          ż = ½ pᵀ P p
//!   X_B  (H = B(t*, x)):  ẋ = 0,     ṗ = −∇B(t*, x), ż = −B(t*, x)
//!   X_Cz (H = C(t*) z):   ẋ = 0,     ṗ = −C(t*) p,   ż = −C(t*) z
//! ```
//!
//! with t* frozen (t* ≠ 0, so a time-dependent term is not evaluated at a trivial phase).
//! The fields use only nalgebra (for P p and ½ pᵀ P p) and the model's `potential` and
//! `damping_rate`; the solutions come from `reference::ode::converge` (Gauss–Legendre
//! s = 8, doubled to 1e-14 agreement). X_A and X_B are constant along their own flows,
//! so the reference there is exact up to rounding; X_Cz is linear, and the Gauss method's
//! Padé approximant of e^{−Cτ} converges to it.
//!
//! What the model's terms are is checked independently too: `potential` against the
//! formulas of `contact::model` coded here (with the Kepler orbit from a Newton solve of
//! Kepler's equation and the true anomaly from its cos/sin formulas, not the half-angle
//! form of `contact::orbit`), ∇B against a Richardson-extrapolated central difference of B,
//! `damping_rate` against its formula (terms written as expressions included: their tapes
//! against the same formulas coded here), and `vector_field` both against X_A + X_B + X_Cz
//! and against the contact equations applied to finite differences of `hamiltonian`.

use std::f64::consts::{PI, TAU};
use std::sync::Arc;

use harbor::contact::flows::{flow_a, flow_b, flow_c};
use harbor::contact::{
    ContactSystem, Damping, DampingExpression, KeplerOrbit, Potential, PotentialExpression,
};
use harbor::model::Signal;
use harbor::reference::ode;
use nalgebra::{DMatrix, DVector};

/// Frozen time of the B and C flows.
const T_STAR: f64 = 1.3;
/// Flow times: a forward one as in the brief, and a negative one as used by the
/// compositions with negative coefficients (triple jump, Suzuki, Yoshida).
const TAUS: [f64; 2] = [0.7, -0.45];
/// Agreement of a flow with its reference, relative to max(1, ‖reference‖∞).
const FLOW_TOLERANCE: f64 = 1e-13;
/// Tolerance of the reference ODE solves (relative step-doubling agreement).
const REFERENCE_TOLERANCE: f64 = 1e-14;

fn kinetic(n: usize) -> DMatrix<f64> {
    match n {
        1 => DMatrix::from_row_slice(1, 1, &[1.3]),
        2 => DMatrix::from_row_slice(2, 2, &[1.5, 0.4, 0.4, 0.9]),
        // Diagonally dominant, so symmetric positive definite; non-diagonal on purpose.
        3 => DMatrix::from_row_slice(3, 3, &[2.0, 0.3, 0.1, 0.3, 1.5, -0.2, 0.1, -0.2, 1.0]),
        _ => unreachable!(),
    }
}

fn orbit(e: f64) -> KeplerOrbit {
    KeplerOrbit::new("test", e).unwrap()
}

fn forcing_signal() -> Signal {
    Signal::Harmonic {
        amplitude: 1.1,
        omega: 1.7,
        phase: 0.4,
        offset: 0.1,
    }
}

/// One system per potential term kind (and the tidal forcing, which lives in B), n = 2.
/// The potential expression of the cases, and its formula in [`term_value`].
const EXPRESSION_B: &str = "x1^4/4 - x1^2/2 + 0.3*sin(t)*x1*x2 + exp(-x2^2)";
/// The damping expression of the cases, and its formula in [`damping_value`].
const EXPRESSION_C: &str = "2/(t + 4) + 0.1*cos(t)";

fn potential_cases() -> Vec<(&'static str, ContactSystem)> {
    let n = 2;
    let system = |potential: Vec<Potential>, damping: Damping| {
        ContactSystem::new("test", kinetic(n), potential, damping).unwrap()
    };
    vec![
        (
            "harmonic",
            system(
                vec![Potential::Harmonic {
                    k: DMatrix::from_row_slice(2, 2, &[2.0, 0.4, 0.4, 1.0]),
                }],
                Damping::None,
            ),
        ),
        (
            "quartic",
            system(vec![Potential::Quartic { beta: 0.8 }], Damping::None),
        ),
        (
            "pendulum",
            system(vec![Potential::Pendulum { omega: 1.3 }], Damping::None),
        ),
        (
            "forcing",
            system(
                vec![Potential::Forcing {
                    amplitude: DVector::from_column_slice(&[0.3, -0.2]),
                    signal: forcing_signal(),
                }],
                Damping::None,
            ),
        ),
        (
            "kepler",
            system(vec![Potential::Kepler { gamma: 1.2 }], Damping::None),
        ),
        (
            "spin-orbit",
            system(
                vec![Potential::SpinOrbit {
                    epsilon: 0.35,
                    orbit: orbit(0.2),
                }],
                Damping::None,
            ),
        ),
        (
            "tidal forcing",
            system(
                vec![],
                Damping::Tidal {
                    eta: 0.05,
                    orbit: orbit(0.3),
                },
            ),
        ),
        (
            "expression",
            system(
                vec![Potential::Expression(Arc::new(
                    PotentialExpression::compile("test", EXPRESSION_B, 2).unwrap(),
                ))],
                Damping::None,
            ),
        ),
        (
            "all terms",
            system(
                vec![
                    Potential::Harmonic {
                        k: DMatrix::from_row_slice(2, 2, &[2.0, 0.4, 0.4, 1.0]),
                    },
                    Potential::Quartic { beta: 0.8 },
                    Potential::Pendulum { omega: 1.3 },
                    Potential::Forcing {
                        amplitude: DVector::from_column_slice(&[0.3, -0.2]),
                        signal: forcing_signal(),
                    },
                    Potential::Forcing {
                        amplitude: DVector::from_column_slice(&[-0.1, 0.25]),
                        signal: Signal::Harmonic {
                            amplitude: 0.7,
                            omega: 0.6,
                            phase: -1.0,
                            offset: 0.0,
                        },
                    },
                    Potential::Kepler { gamma: 1.2 },
                    Potential::SpinOrbit {
                        epsilon: 0.35,
                        orbit: orbit(0.2),
                    },
                ],
                Damping::Tidal {
                    eta: 0.05,
                    orbit: orbit(0.2),
                },
            ),
        ),
    ]
}

fn damping_cases() -> Vec<(&'static str, ContactSystem)> {
    let system = |damping: Damping| {
        ContactSystem::new(
            "test",
            kinetic(2),
            vec![Potential::Quartic { beta: 0.5 }],
            damping,
        )
        .unwrap()
    };
    vec![
        ("constant", system(Damping::Constant { alpha: 0.3 })),
        (
            "signal",
            system(Damping::Signal {
                alpha: 0.4,
                signal: Signal::Harmonic {
                    amplitude: 0.5,
                    omega: 2.1,
                    phase: 0.2,
                    offset: 1.0,
                },
            }),
        ),
        (
            "tidal",
            system(Damping::Tidal {
                eta: 0.08,
                orbit: orbit(0.3),
            }),
        ),
        (
            "expression",
            system(Damping::Expression(Arc::new(
                DampingExpression::compile("test", EXPRESSION_C).unwrap(),
            ))),
        ),
    ]
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
}

/// max |flow − reference| / max(1, ‖reference‖∞).
fn relative(flow: &[f64], reference: &[f64]) -> f64 {
    max_diff(flow, reference) / max_abs(reference).max(1.0)
}

/// A state y = [x; p; z] for n degrees of freedom (x away from 0, for Kepler).
fn state(n: usize) -> Vec<f64> {
    let x = [0.7, -0.45, 0.3];
    let p = [0.35, 0.8, -0.6];
    let mut y: Vec<f64> = x[..n].iter().chain(&p[..n]).copied().collect();
    y.push(0.25);
    y
}

/// X_A from its definition: ẋ = P p, ṗ = 0, ż = ½ pᵀ P p (nalgebra only).
fn field_a(kinetic: &DMatrix<f64>, y: &[f64], dy: &mut [f64]) {
    let n = kinetic.nrows();
    let p = DVector::from_column_slice(&y[n..2 * n]);
    let pp = kinetic * &p;
    dy[..n].copy_from_slice(pp.as_slice());
    dy[n..2 * n].iter_mut().for_each(|v| *v = 0.0);
    dy[2 * n] = 0.5 * p.dot(&pp);
}

/// X_B at frozen t: ẋ = 0, ṗ = −∇B(t, x), ż = −B(t, x).
fn field_b(system: &ContactSystem, t: f64, y: &[f64], dy: &mut [f64]) {
    let n = system.dof();
    let mut gradient = vec![0.0; n];
    let b = system.potential(t, &y[..n], &mut gradient);
    dy[..n].iter_mut().for_each(|v| *v = 0.0);
    for r in 0..n {
        dy[n + r] = -gradient[r];
    }
    dy[2 * n] = -b;
}

/// X_Cz at frozen t: ẋ = 0, ṗ = −C(t) p, ż = −C(t) z.
fn field_c(system: &ContactSystem, t: f64, y: &[f64], dy: &mut [f64]) {
    let n = system.dof();
    let c = system.damping_rate(t);
    dy[..n].iter_mut().for_each(|v| *v = 0.0);
    for i in n..=2 * n {
        dy[i] = -c * y[i];
    }
}

fn reference(f: impl Fn(f64, &[f64], &mut [f64]), y0: &[f64], tau: f64) -> Vec<f64> {
    ode::converge(f, 0.0, y0, tau, REFERENCE_TOLERANCE)
        .unwrap()
        .y
}

#[test]
fn flow_a_is_the_flow_of_x_a() {
    let mut worst = 0.0_f64;
    for n in 1..=3 {
        let system = ContactSystem::new("test", kinetic(n), vec![], Damping::None).unwrap();
        let y0 = state(n);
        for tau in TAUS {
            let exact = reference(|_, y, dy| field_a(&system.kinetic, y, dy), &y0, tau);
            let mut y = y0.clone();
            flow_a(&system, tau, &mut y);
            let err = relative(&y, &exact);
            eprintln!("flow_a  n = {n}  τ = {tau:5}: |φ_A − reference| = {err:.2e}");
            assert!(
                err <= FLOW_TOLERANCE,
                "flow_a, n = {n}, τ = {tau}: {y:?} vs {exact:?}"
            );
            worst = worst.max(err);
        }
    }
    eprintln!("flow_a: worst relative difference {worst:.2e}");
}

#[test]
fn flow_b_is_the_flow_of_x_b_for_every_term() {
    let mut worst = 0.0_f64;
    for (name, system) in potential_cases() {
        let y0 = state(system.dof());
        for tau in TAUS {
            let exact = reference(|_, y, dy| field_b(&system, T_STAR, y, dy), &y0, tau);
            let mut y = y0.clone();
            let mut gradient = vec![0.0; system.dof()];
            flow_b(&system, T_STAR, tau, &mut y, &mut gradient);
            let err = relative(&y, &exact);
            eprintln!(
                "flow_b  {name:14} t* = {T_STAR}  τ = {tau:5}: |φ_B − reference| = {err:.2e}"
            );
            assert!(
                err <= FLOW_TOLERANCE,
                "flow_b, {name}, τ = {tau}: {y:?} vs {exact:?}"
            );
            worst = worst.max(err);
        }
    }
    eprintln!("flow_b: worst relative difference {worst:.2e}");
}

#[test]
fn flow_c_is_the_flow_of_x_c_for_every_damping() {
    let mut worst = 0.0_f64;
    for (name, system) in damping_cases() {
        let y0 = state(system.dof());
        for tau in TAUS {
            let exact = reference(|_, y, dy| field_c(&system, T_STAR, y, dy), &y0, tau);
            let mut y = y0.clone();
            flow_c(&system, T_STAR, tau, &mut y);
            let err = relative(&y, &exact);
            eprintln!(
                "flow_c  {name:9} C(t*) = {:.6}  τ = {tau:5}: |φ_C − reference| = {err:.2e}",
                system.damping_rate(T_STAR)
            );
            assert!(
                err <= FLOW_TOLERANCE,
                "flow_c, {name}, τ = {tau}: {y:?} vs {exact:?}"
            );
            // The flow really damps (C(t*) > 0 in every case here), so a flow_c that did
            // nothing could not pass against a reference that moved.
            assert!(
                max_diff(&exact, &y0) > 1e-3,
                "{name}: reference did not move"
            );
            worst = worst.max(err);
        }
    }
    eprintln!("flow_c: worst relative difference {worst:.2e}");
}

/// A flow that does not move x, p, z would pass the comparison only if its reference
/// did not move either: every case above must move p and z by O(τ).
#[test]
fn every_reference_flow_moves_the_state() {
    for (name, system) in potential_cases() {
        let y0 = state(system.dof());
        let exact = reference(|_, y, dy| field_b(&system, T_STAR, y, dy), &y0, 0.7);
        let n = system.dof();
        let moved = max_diff(&exact[n..], &y0[n..]);
        eprintln!("X_B {name:14}: |Δ(p, z)| over τ = 0.7: {moved:.3e}");
        assert!(moved > 1e-3, "{name}: X_B reference did not move");
    }
}

/// The comparison can fail: the misprinted flows of the seed's slides (φ_B moving x,
/// φ_C as p − τ C p and z e^{+Cτ}) and a φ_B with the sign of its z update flipped are
/// all rejected by the same check, by far more than the tolerance.
#[test]
fn wrong_flows_are_rejected() {
    let (_, system) = potential_cases().pop().unwrap();
    let n = system.dof();
    let y0 = state(n);
    let tau = 0.7;
    let exact_b = reference(|_, y, dy| field_b(&system, T_STAR, y, dy), &y0, tau);
    let mut gradient = vec![0.0; n];
    let b = system.potential(T_STAR, &y0[..n], &mut gradient);
    // φ_B moving x instead of p.
    let mut moves_x = y0.clone();
    for r in 0..n {
        moves_x[r] -= tau * gradient[r];
    }
    moves_x[2 * n] -= tau * b;
    // φ_B with ż = +B.
    let mut z_sign = y0.clone();
    flow_b(&system, T_STAR, tau, &mut z_sign, &mut gradient);
    z_sign[2 * n] += 2.0 * tau * b;
    let (_, damped) = damping_cases().remove(1);
    let c = damped.damping_rate(T_STAR);
    let exact_c = reference(|_, y, dy| field_c(&damped, T_STAR, y, dy), &y0, tau);
    // φ_C as p − τ p C, z e^{Cτ}.
    let mut misprint_c = y0.clone();
    for v in &mut misprint_c[n..2 * n] {
        *v -= tau * c * *v;
    }
    misprint_c[2 * n] *= (c * tau).exp();
    for (name, y, exact) in [
        ("φ_B moving x", &moves_x, &exact_b),
        ("φ_B with ż = +B", &z_sign, &exact_b),
        ("φ_C misprinted", &misprint_c, &exact_c),
    ] {
        let err = relative(y, exact);
        eprintln!("{name:16}: |φ − reference| = {err:.2e} (tolerance {FLOW_TOLERANCE:.0e})");
        assert!(
            err > 1e3 * FLOW_TOLERANCE,
            "{name} was not rejected: {err:e}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The terms themselves, against formulas coded here.

/// E(t) from Kepler's equation E − e sin E = t by Newton's method from E = t
/// (monotone convergence for e ≤ 0.5), to the last bit.
fn eccentric_anomaly(e: f64, t: f64) -> f64 {
    let mut big_e = t;
    for _ in 0..100 {
        let step = (big_e - e * big_e.sin() - t) / (1.0 - e * big_e.cos());
        big_e -= step;
        if step.abs() <= 1e-17 * big_e.abs().max(1.0) {
            break;
        }
    }
    big_e
}

/// (r/a, f) of the orbit at mean anomaly t: r = 1 − e cos E and f from
/// cos f = (cos E − e)/(1 − e cos E), sin f = √(1 − e²) sin E/(1 − e cos E), unwrapped
/// to the branch closest to E (|f − E| < π for e < 1).
fn orbit_at(e: f64, t: f64) -> (f64, f64) {
    let big_e = eccentric_anomaly(e, t);
    let r = 1.0 - e * big_e.cos();
    let cos_f = (big_e.cos() - e) / r;
    let sin_f = (1.0 - e * e).sqrt() * big_e.sin() / r;
    let f = sin_f.atan2(cos_f);
    let f = f + TAU * ((big_e - f) / TAU).round();
    (r, f)
}

/// ḟ by a Richardson-extrapolated central difference of f (error ~1e-11).
fn true_anomaly_rate(e: f64, t: f64) -> f64 {
    let d = |delta: f64| (orbit_at(e, t + delta).1 - orbit_at(e, t - delta).1) / (2.0 * delta);
    let delta = 1e-3;
    (4.0 * d(0.5 * delta) - d(delta)) / 3.0
}

/// B(t, x) of one term from the formulas of `contact::model`'s docs.
fn term_value(term: &Potential, t: f64, x: &[f64]) -> f64 {
    match term {
        Potential::Harmonic { k } => {
            let x = DVector::from_column_slice(x);
            0.5 * x.dot(&(k * &x))
        }
        Potential::Quartic { beta } => 0.25 * beta * x.iter().map(|v| v.powi(4)).sum::<f64>(),
        Potential::Pendulum { omega } => -omega * omega * x.iter().map(|v| v.cos()).sum::<f64>(),
        Potential::Forcing { amplitude, signal } => {
            let s = match signal {
                Signal::Harmonic {
                    amplitude,
                    omega,
                    phase,
                    offset,
                } => offset + amplitude * (omega * t + phase).sin(),
                _ => unreachable!(),
            };
            -s * amplitude.iter().zip(x).map(|(a, v)| a * v).sum::<f64>()
        }
        Potential::Kepler { gamma } => -gamma / x.iter().map(|v| v * v).sum::<f64>().sqrt(),
        Potential::SpinOrbit { epsilon, orbit } => {
            let (r, f) = orbit_at(orbit.eccentricity(), t);
            -0.5 * epsilon * r.powi(-3) * x.iter().map(|v| (2.0 * v - 2.0 * f).cos()).sum::<f64>()
        }
        Potential::Expression(e) => {
            assert_eq!(e.text(), EXPRESSION_B, "the one expression of the cases");
            x[0].powi(4) / 4.0 - x[0] * x[0] / 2.0
                + 0.3 * t.sin() * x[0] * x[1]
                + (-x[1] * x[1]).exp()
        }
    }
}

/// B(t, x) of a system from the formulas: its terms plus the tidal forcing
/// −η (a/r)⁶ ḟ Σ x_i.
fn potential_value(system: &ContactSystem, t: f64, x: &[f64]) -> f64 {
    let mut b: f64 = system
        .potential
        .iter()
        .map(|term| term_value(term, t, x))
        .sum();
    if let Damping::Tidal { eta, orbit } = &system.damping {
        let e = orbit.eccentricity();
        let (r, _) = orbit_at(e, t);
        b -= eta * r.powi(-6) * true_anomaly_rate(e, t) * x.iter().sum::<f64>();
    }
    b
}

/// C(t) from the formulas: α, α s(t), η (a/r)⁶.
fn damping_value(system: &ContactSystem, t: f64) -> f64 {
    match &system.damping {
        Damping::None => 0.0,
        Damping::Constant { alpha } => *alpha,
        Damping::Signal { alpha, signal } => match signal {
            Signal::Harmonic {
                amplitude,
                omega,
                phase,
                offset,
            } => alpha * (offset + amplitude * (omega * t + phase).sin()),
            _ => unreachable!(),
        },
        Damping::Tidal { eta, orbit } => eta * orbit_at(orbit.eccentricity(), t).0.powi(-6),
        Damping::Expression(e) => {
            assert_eq!(e.text(), EXPRESSION_C, "the one expression of the cases");
            2.0 / (t + 4.0) + 0.1 * t.cos()
        }
    }
}

/// Richardson-extrapolated central difference of `f` along coordinate `i` of `at`
/// (truncation O(δ⁴), round-off ~ε/δ: ~1e-11 for δ = 1e-3 and unit-size data).
fn derivative(f: impl Fn(&[f64]) -> f64, at: &[f64], i: usize, delta: f64) -> f64 {
    let d = |h: f64| {
        let mut plus = at.to_vec();
        let mut minus = at.to_vec();
        plus[i] += h;
        minus[i] -= h;
        (f(&plus) - f(&minus)) / (2.0 * h)
    };
    (4.0 * d(0.5 * delta) - d(delta)) / 3.0
}

#[test]
fn terms_match_their_formulas_and_gradients() {
    let times = [T_STAR, 0.0, 4.2, -2.5, 11.0];
    let points: [&[f64]; 3] = [&[0.7, -0.45], &[-1.2, 0.3], &[0.15, 2.4]];
    let mut worst_value = 0.0_f64;
    let mut worst_gradient = 0.0_f64;
    for (name, system) in potential_cases().into_iter().chain(damping_cases()) {
        let n = system.dof();
        for &t in &times {
            for &x in &points {
                let mut gradient = vec![0.0; n];
                let b = system.potential(t, x, &mut gradient);
                let expected = potential_value(&system, t, x);
                // The tidal ḟ comes from a finite difference here (~1e-11).
                let value_err = (b - expected).abs() / expected.abs().max(1.0);
                assert!(
                    value_err <= 1e-10,
                    "{name}: B({t}, {x:?}) = {b} but the formula gives {expected}"
                );
                worst_value = worst_value.max(value_err);
                for (i, &g) in gradient.iter().enumerate() {
                    let fd = derivative(|x| system.potential(t, x, &mut vec![0.0; n]), x, i, 1e-3);
                    let err = (g - fd).abs() / fd.abs().max(1.0);
                    assert!(
                        err <= 1e-9,
                        "{name}: ∂B/∂x_{i}({t}, {x:?}) = {g} but the difference quotient is {fd}"
                    );
                    worst_gradient = worst_gradient.max(err);
                }
                let c = system.damping_rate(t);
                let c_expected = damping_value(&system, t);
                assert!(
                    (c - c_expected).abs() <= 1e-13 * c_expected.abs().max(1.0),
                    "{name}: C({t}) = {c} but the formula gives {c_expected}"
                );
            }
        }
    }
    eprintln!(
        "terms: worst |B − formula| {worst_value:.2e}, worst |∇B − difference quotient| \
         {worst_gradient:.2e}"
    );
}

#[test]
fn orbit_matches_keplers_equation() {
    let mut worst = [0.0_f64; 3];
    for e in [0.0, 0.1, 0.3, 0.5] {
        let orbit = orbit(e);
        for i in -40..=40 {
            let t = 0.37 * i as f64;
            let (r, f) = orbit_at(e, t);
            let rate = true_anomaly_rate(e, t);
            let errs = [
                (orbit.radius(t) - r).abs(),
                (orbit.true_anomaly(t) - f).abs() / f.abs().max(1.0),
                (orbit.true_anomaly_rate(t) - rate).abs(),
            ];
            assert!(
                errs[0] <= 1e-14 && errs[1] <= 1e-14 && errs[2] <= 1e-9,
                "e = {e}, t = {t}: r {} vs {r}, f {} vs {f}, ḟ {} vs {rate}",
                orbit.radius(t),
                orbit.true_anomaly(t),
                orbit.true_anomaly_rate(t)
            );
            for (w, e) in worst.iter_mut().zip(errs) {
                *w = w.max(e);
            }
        }
    }
    // The unwrapping: f advances by 2π per period.
    let orbit = orbit(0.3);
    assert!((orbit.true_anomaly(1.0 + 2.0 * PI) - orbit.true_anomaly(1.0) - TAU).abs() < 1e-13);
    eprintln!(
        "orbit: worst |r − r_Kepler| {:.2e}, |f − f_Kepler| {:.2e}, |ḟ − difference quotient| {:.2e}",
        worst[0], worst[1], worst[2]
    );
}

// ---------------------------------------------------------------------------------------
// The full field.

/// A system with every term (n = 3, non-diagonal P and K) and the given damping.
fn full_system(damping: Damping) -> ContactSystem {
    ContactSystem::new(
        "test",
        kinetic(3),
        vec![
            Potential::Harmonic {
                k: DMatrix::from_row_slice(3, 3, &[2.0, 0.4, 0.0, 0.4, 1.0, -0.3, 0.0, -0.3, 1.5]),
            },
            Potential::Quartic { beta: 0.8 },
            Potential::Pendulum { omega: 1.3 },
            Potential::Forcing {
                amplitude: DVector::from_column_slice(&[0.3, -0.2, 0.1]),
                signal: forcing_signal(),
            },
            Potential::Kepler { gamma: 1.2 },
            Potential::SpinOrbit {
                epsilon: 0.35,
                orbit: orbit(0.2),
            },
        ],
        damping,
    )
    .unwrap()
}

fn full_systems() -> Vec<(&'static str, ContactSystem)> {
    vec![
        ("no damping", full_system(Damping::None)),
        ("constant", full_system(Damping::Constant { alpha: 0.3 })),
        (
            "signal",
            full_system(Damping::Signal {
                alpha: 0.4,
                signal: forcing_signal(),
            }),
        ),
        (
            "tidal",
            full_system(Damping::Tidal {
                eta: 0.05,
                orbit: orbit(0.2),
            }),
        ),
    ]
}

#[test]
fn vector_field_is_the_sum_of_the_three_parts() {
    let mut worst = 0.0_f64;
    for (name, system) in full_systems() {
        for t in [0.0, T_STAR, 5.9] {
            for y in [
                state(3),
                vec![-0.4, 1.1, 0.6, -0.9, 0.2, 0.45, -1.3],
                vec![1.4, 0.2, -0.8, 0.05, -0.7, 1.2, 2.0],
            ] {
                let d = y.len();
                let mut whole = vec![0.0; d];
                system.vector_field(t, &y, &mut whole);
                let (mut a, mut b, mut c) = (vec![0.0; d], vec![0.0; d], vec![0.0; d]);
                field_a(&system.kinetic, &y, &mut a);
                field_b(&system, t, &y, &mut b);
                field_c(&system, t, &y, &mut c);
                let sum: Vec<f64> = (0..d).map(|i| a[i] + b[i] + c[i]).collect();
                let err = relative(&whole, &sum);
                assert!(
                    err <= 1e-14,
                    "{name}, t = {t}: X_H = {whole:?} but X_A + X_B + X_Cz = {sum:?}"
                );
                worst = worst.max(err);
            }
        }
    }
    eprintln!("vector_field vs X_A + X_B + X_Cz: worst relative difference {worst:.2e}");
}

/// `vector_field` is the contact vector field of `hamiltonian`: ẋ = ∂H/∂p,
/// ṗ = −∂H/∂x − p ∂H/∂z, ż = p·∂H/∂p − H, with the derivatives of H by differences.
#[test]
fn vector_field_is_the_contact_field_of_the_hamiltonian() {
    let mut worst = 0.0_f64;
    for (name, system) in full_systems() {
        let n = system.dof();
        let h = |t: f64, y: &[f64]| system.hamiltonian(t, &y[..n], &y[n..2 * n], y[2 * n]);
        for t in [0.0, T_STAR, 5.9] {
            for y in [state(3), vec![-0.4, 1.1, 0.6, -0.9, 0.2, 0.45, -1.3]] {
                let grad: Vec<f64> = (0..=2 * n)
                    .map(|i| derivative(|y| h(t, y), &y, i, 1e-3))
                    .collect();
                let (hx, hp, hz) = (&grad[..n], &grad[n..2 * n], grad[2 * n]);
                let mut expected = vec![0.0; 2 * n + 1];
                for r in 0..n {
                    expected[r] = hp[r];
                    expected[n + r] = -hx[r] - y[n + r] * hz;
                }
                let p_dot_hp: f64 = (0..n).map(|r| y[n + r] * hp[r]).sum();
                expected[2 * n] = p_dot_hp - h(t, &y);
                let mut field = vec![0.0; 2 * n + 1];
                system.vector_field(t, &y, &mut field);
                let err = relative(&field, &expected);
                assert!(
                    err <= 1e-9,
                    "{name}, t = {t}: vector_field {field:?}, contact equations {expected:?}"
                );
                worst = worst.max(err);
            }
        }
    }
    eprintln!("vector_field vs contact equations of H (differences): worst {worst:.2e}");
}
