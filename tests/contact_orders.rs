//! Convergence orders of the contact integrators (`ContactMethod::Splitting` with every
//! composition of the registry under both time samplings, endpoints and midpoint, and
//! `ContactMethod::Herglotz` with every composition of its symmetric second-order step:
//! `herglotz` itself, order 4 by triple-jump-4 and suzuki-4, 6 by triple-jump-6 and
//! yoshida-6a/b/c and kahan-li-6, 8 by the eighth-order ones) on the full time-dependent
//! contact system, measured against independent high-accuracy solutions.
//!
//! Reference: `reference::ode::converge` (Gauss–Legendre s = 8, order 16, step count doubled
//! until two results agree to 1e-14 relative) applied to `ContactSystem::vector_field` with
//! time t as its own argument — an integrator that shares nothing with the splitting but the
//! field. For the damped oscillator the reference itself is checked against the closed form
//! of (x, p, z), derived below.
//!
//! Runs go through the library as a user would: a `ContactPlan` of N = t_end / h steps run by
//! `Backend::Cpu(CpuPath::Reference)` (the method as defined, `contact::flows`) and by
//! `Backend::Cpu(CpuPath::Twin)` (the CPU twin of the GPU kernel, fed by the plan's shared
//! time-function stream; its errors must equal the reference path's up to round-off, 1e-12).
//! The error is the max-norm over (x, p, z) of final state − reference
//! at t_end. Step counts run through N = 10·2^{i/2} (every second point is a halving of h), so
//! that the eighth-order methods, which fall from 1e-6 to round-off within a factor ~4 in h,
//! still get four or more points in their asymptotic range. The slope of log error against
//! log h is fitted by least squares over the finest few points (five up to order 6, three at
//! order 8: see [`fit_points_for`]) whose error lies in [floor, 1e-3], the floor depending on
//! the order (below it, round-off accumulated over N·s sub-steps, ~1e-13…1e-12 at the finest
//! steps here, would flatten the slope: see [`floor`]), and must be within 0.3 of the
//! classical order. A table of every fit (case, method, h range, errors, local and fitted
//! slopes) is printed; run with `--nocapture` to see it.
//!
//! Controls (to show that the fit tells orders apart): the non-symmetric Lie splitting
//! φ_C(h) φ_B(h) φ_A(h) (order 1), and on the time-dependent cases the Strang step with B
//! and C frozen at the step's start time (order 1 once B or C depends on t) are measured the
//! same way and must come out at order 1.

use std::f64::consts::FRAC_PI_2;

use harbor::backend::Backend;
use harbor::contact::flows::{self as contact_flows, flow_a, flow_b, flow_c};
use harbor::contact::{ContactConfig, ContactMethod, ContactPlan, TimeSampling};
use harbor::contact::{ContactMember, ContactSystem, Damping, KeplerOrbit, Potential};
use harbor::io::Config;
use harbor::kernels::CpuPath;
use harbor::model::Signal;
use harbor::reference::ode;
use harbor::tableau::Composition;
use nalgebra::{DMatrix, DVector};

/// Relative tolerance of the reference solves.
const REFERENCE_TOLERANCE: f64 = 1e-14;
/// Allowed |fitted slope − order|.
const SLOPE_TOLERANCE: f64 = 0.3;
/// Errors above this are not in the asymptotic regime (or have blown up); the order-1
/// controls, whose errors stay above 1e-4 on the ladder, use `CONTROL_CEILING`.
const CEILING: f64 = 1e-3;
const CONTROL_CEILING: f64 = 5e-2;
/// Step counts 10·2^{i/2}, i = 0 … 20: h = t_end/10 … t_end/10240.
const LADDER: usize = 21;

/// The error floor of a fit. The round-off accumulated over N·s sub-steps is ~1e-12 at
/// the finest steps the low-order methods reach (N ≈ 10⁴, s ≤ 27; measured: the order-4
/// errors flatten near 1e-12), ~2e-13 where the sixth-order ones reach 1e-12 (N ≈ 900,
/// s ≤ 9: triple-jump-6 on the Duffing case bends from slope 6.0 to 5.1 there), and
/// ≲1e-14 at the N ≈ 100 where the eighth-order ones do (their errors keep falling to
/// ~1e-14). The floor is two orders of magnitude above that.
fn floor(order: usize) -> f64 {
    match order {
        0..=4 => 1e-10,
        5..=6 => 1e-11,
        _ => 1e-12,
    }
}

/// Points in each fit: five (h over a factor 4, two halvings) up to order 6; three (one
/// halving, a factor 256 in error) at order 8, whose methods with tiny leading error
/// constants (McLachlan's, Kahan & Li's) enter the asymptotic regime only near 1e-11: on
/// the Duffing case McLachlan's local slopes are 8.78, 8.56, 8.35, 8.17 from error 2e-7 to
/// 1e-12 (an h^10 term of the global error still competes).
fn fit_points_for(order: usize) -> usize {
    if order >= 8 { 3 } else { 5 }
}

struct Case {
    name: &'static str,
    member: ContactMember,
    t_end: f64,
    /// Whether B or C depends on t (the frozen-time control then has order 1).
    time_dependent: bool,
}

fn member(system: ContactSystem, x0: &[f64], p0: &[f64], z0: f64) -> ContactMember {
    ContactMember::new(
        "test",
        system,
        DVector::from_column_slice(x0),
        DVector::from_column_slice(p0),
        z0,
    )
    .unwrap()
}

const ALPHA: f64 = 0.1;

/// (a) H = p²/2 + x²/2 + α z, α = 0.1, (x, p, z)(0) = (0.5, 0.5, 0).
fn damped_oscillator() -> Case {
    Case {
        name: "damped oscillator",
        member: member(
            ContactSystem::new(
                "test",
                DMatrix::identity(1, 1),
                vec![Potential::Harmonic {
                    k: DMatrix::identity(1, 1),
                }],
                Damping::Constant { alpha: ALPHA },
            )
            .unwrap(),
            &[0.5],
            &[0.5],
            0.0,
        ),
        t_end: 10.0,
        time_dependent: false,
    }
}

/// (b) Forced, damped Duffing oscillator: H = p²/2 + x²/2 + x⁴/4 − 0.3 cos(1.2 t) x + 0.15 z.
fn forced_duffing() -> Case {
    Case {
        name: "forced Duffing",
        member: member(
            ContactSystem::new(
                "test",
                DMatrix::identity(1, 1),
                vec![
                    Potential::Harmonic {
                        k: DMatrix::identity(1, 1),
                    },
                    Potential::Quartic { beta: 1.0 },
                    Potential::Forcing {
                        amplitude: DVector::from_column_slice(&[0.3]),
                        // sin(1.2 t + π/2) = cos(1.2 t).
                        signal: Signal::Harmonic {
                            amplitude: 1.0,
                            omega: 1.2,
                            phase: FRAC_PI_2,
                            offset: 0.0,
                        },
                    },
                ],
                Damping::Constant { alpha: 0.15 },
            )
            .unwrap(),
            &[0.8],
            &[-0.3],
            0.1,
        ),
        t_end: 10.0,
        time_dependent: true,
    }
}

/// (c) Spin–orbit problem with tidal damping on an e = 0.2 orbit:
/// ẍ = −ε (a/r)³ sin(2x − 2f) − η (a/r)⁶ (ẋ − ḟ), ε = 0.3, η = 0.05.
fn spin_orbit_tidal() -> Case {
    let orbit = KeplerOrbit::new("test", 0.2).unwrap();
    Case {
        name: "spin-orbit + tidal",
        member: member(
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
            &[0.3],
            &[1.2],
            0.0,
        ),
        t_end: 10.0,
        time_dependent: true,
    }
}

/// (d) n = 2, non-diagonal P and K, pendulum, forcing, and the time-dependent damping
/// C(t) = 0.2 (1 + 0.5 sin(0.9 t + 0.3)).
fn coupled_signal_damping() -> Case {
    Case {
        name: "coupled, signal damping",
        member: member(
            ContactSystem::new(
                "test",
                DMatrix::from_row_slice(2, 2, &[1.5, 0.4, 0.4, 0.9]),
                vec![
                    Potential::Harmonic {
                        k: DMatrix::from_row_slice(2, 2, &[2.0, -0.5, -0.5, 1.0]),
                    },
                    Potential::Pendulum { omega: 0.8 },
                    Potential::Forcing {
                        amplitude: DVector::from_column_slice(&[0.2, -0.1]),
                        signal: Signal::Harmonic {
                            amplitude: 1.0,
                            omega: 0.7,
                            phase: 0.0,
                            offset: 0.0,
                        },
                    },
                ],
                Damping::Signal {
                    alpha: 0.2,
                    signal: Signal::Harmonic {
                        amplitude: 0.5,
                        omega: 0.9,
                        phase: 0.3,
                        offset: 1.0,
                    },
                },
            )
            .unwrap(),
            &[0.4, -0.2],
            &[0.3, 0.5],
            0.0,
        ),
        t_end: 10.0,
        time_dependent: true,
    }
}

/// Closed form of the damped oscillator ẍ + α ẋ + x = 0 as a contact system,
/// H = p²/2 + x²/2 + α z (Vermeeren, Bravetti & Seri 2019, §5):
///
/// ```text
///   x = e^{−αt/2} u,  u = A cos ωt + B sin ωt,  ω = √(1 − α²/4),  A = x₀,  B = (p₀ + αA/2)/ω,
///   p = ẋ = e^{−αt/2} (D cos ωt + E sin ωt),  D = Bω − αA/2,  E = −Aω − αB/2,
///   ż = p²/2 − x²/2 − α z  ⇒  z = e^{−αt} (z₀ + I(t)),  I = ∫₀ᵗ e^{αs} (p² − x²)/2 ds,
/// ```
///
/// and e^{αs}(p² − x²) is a trigonometric quadratic in ωs, integrated term by term:
/// I = ½[(D² − A²)(t/2 + sin 2ωt/(4ω)) + (DE − AB)(1 − cos 2ωt)/(2ω)
///       + (E² − B²)(t/2 − sin 2ωt/(4ω))].
fn damped_oscillator_exact(x0: f64, p0: f64, z0: f64, t: f64) -> [f64; 3] {
    let alpha = ALPHA;
    let omega = (1.0 - 0.25 * alpha * alpha).sqrt();
    let (a, b) = (x0, (p0 + 0.5 * alpha * x0) / omega);
    let (d, e) = (b * omega - 0.5 * alpha * a, -a * omega - 0.5 * alpha * b);
    let (s, c) = (omega * t).sin_cos();
    let decay = (-0.5 * alpha * t).exp();
    let x = decay * (a * c + b * s);
    let p = decay * (d * c + e * s);
    let (s2, c2) = (2.0 * omega * t).sin_cos();
    let integral = 0.5
        * ((d * d - a * a) * (0.5 * t + s2 / (4.0 * omega))
            + (d * e - a * b) * (1.0 - c2) / (2.0 * omega)
            + (e * e - b * b) * (0.5 * t - s2 / (4.0 * omega)));
    let z = (-alpha * t).exp() * (z0 + integral);
    [x, p, z]
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0_f64, |m, (x, y)| {
        let d = (x - y).abs();
        // A NaN (a run that blew up) counts as an infinite error.
        if d.is_nan() { f64::INFINITY } else { m.max(d) }
    })
}

fn reference(case: &Case) -> Vec<f64> {
    let system = &case.member.system;
    let y0 = case.member.initial_state();
    let estimate = ode::converge(
        |t, y, dy| system.vector_field(t, y, dy),
        0.0,
        &y0,
        case.t_end,
        REFERENCE_TOLERANCE,
    )
    .unwrap();
    eprintln!(
        "{}: reference y({}) = {:?}, step-doubling difference {:.1e} at {} Gauss steps",
        case.name, case.t_end, estimate.y, estimate.error, estimate.steps
    );
    estimate.y
}

/// Final state of a plan of `steps` steps, by the backend's reference path or its twin.
fn run(method: &ContactMethod, case: &Case, steps: usize, path: CpuPath) -> Vec<f64> {
    let h = case.t_end / steps as f64;
    let plan = ContactPlan::new(
        method.clone(),
        h,
        case.t_end,
        case.member.clone(),
        None,
        steps,
    )
    .unwrap();
    let results = Backend::Cpu(path).run(&plan).unwrap();
    results.members[0].final_state.clone()
}

/// A control integrator written here from the flows.
#[derive(Clone, Copy)]
enum Control {
    /// y ← φ_C(h) φ_B(h) φ_A(h) y, B and C at the step's end time: order 1.
    Lie,
    /// The Strang step with B and C frozen at the step's start time t_k for both halves:
    /// order 1 once B or C depends on t.
    FrozenStrang,
}

fn run_control(control: Control, case: &Case, steps: usize) -> Vec<f64> {
    let system = &case.member.system;
    let h = case.t_end / steps as f64;
    let mut y = case.member.initial_state();
    let mut gradient = vec![0.0; system.dof()];
    for k in 0..steps {
        let t = k as f64 * h;
        match control {
            Control::Lie => {
                flow_a(system, h, &mut y);
                flow_b(system, t + h, h, &mut y, &mut gradient);
                flow_c(system, t + h, h, &mut y);
            }
            Control::FrozenStrang => {
                flow_c(system, t, 0.5 * h, &mut y);
                flow_b(system, t, 0.5 * h, &mut y, &mut gradient);
                flow_a(system, h, &mut y);
                flow_b(system, t, 0.5 * h, &mut y, &mut gradient);
                flow_c(system, t, 0.5 * h, &mut y);
            }
        }
    }
    y
}

fn ladder() -> Vec<usize> {
    (0..LADDER)
        .map(|i| (10.0 * 2f64.powf(0.5 * i as f64)).round() as usize)
        .collect()
}

/// Least-squares slope of ln e against ln h.
fn slope(points: &[(f64, f64)]) -> f64 {
    let m = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (h, e)| (a + h.ln(), b + e.ln()));
    let (mx, my) = (sx / m, sy / m);
    let (mut num, mut den) = (0.0, 0.0);
    for (h, e) in points {
        num += (h.ln() - mx) * (e.ln() - my);
        den += (h.ln() - mx).powi(2);
    }
    num / den
}

/// The window of errors a fit may use and how many of its finest points it takes.
#[derive(Clone, Copy)]
struct Window {
    floor: f64,
    ceiling: f64,
    points: usize,
}

impl Window {
    fn method(order: usize) -> Self {
        Window {
            floor: floor(order),
            ceiling: CEILING,
            points: fit_points_for(order),
        }
    }

    fn control() -> Self {
        Window {
            floor: floor(1),
            ceiling: CONTROL_CEILING,
            points: 5,
        }
    }
}

/// The fit points: the finest `window.points` (h, error) with error in
/// [floor, ceiling], a contiguous run of them (so a stray point beyond a gap is not used).
fn fit_points(errors: &[(f64, f64)], window: Window) -> Vec<(f64, f64)> {
    // errors are ordered from coarse to fine h.
    let inside = |e: f64| e.is_finite() && e >= window.floor && e <= window.ceiling;
    let Some(last) = errors.iter().rposition(|&(_, e)| inside(e)) else {
        return vec![];
    };
    let mut first = last;
    while first > 0 && inside(errors[first - 1].1) && last - first + 1 < window.points {
        first -= 1;
    }
    errors[first..=last].to_vec()
}

struct Row {
    label: String,
    order: usize,
    window: Window,
    errors: Vec<(f64, f64)>,
    fit: Vec<(f64, f64)>,
    slope: f64,
}

fn measure(
    label: String,
    order: usize,
    window: Window,
    run: impl Fn(usize) -> Vec<f64>,
    exact: &[f64],
    t_end: f64,
) -> Row {
    let mut errors = Vec::new();
    let mut below = 0;
    for steps in ladder() {
        let e = max_diff(&run(steps), exact);
        errors.push((t_end / steps as f64, e));
        // Two points in a row below the floor: the rest is round-off.
        below = if e < window.floor { below + 1 } else { 0 };
        if below == 2 {
            break;
        }
    }
    let fit = fit_points(&errors, window);
    let slope = if fit.len() >= 3 {
        slope(&fit)
    } else {
        f64::NAN
    };
    Row {
        label,
        order,
        window,
        errors,
        fit,
        slope,
    }
}

fn print_row(case: &str, row: &Row) {
    let (h_fine, h_coarse) = (
        row.fit.last().map_or(f64::NAN, |p| p.0),
        row.fit.first().map_or(f64::NAN, |p| p.0),
    );
    let fitted: Vec<String> = row
        .fit
        .iter()
        .map(|(h, e)| format!("{:.0}:{e:.2e}", 10.0 / h))
        .collect();
    let local: Vec<String> = row
        .fit
        .windows(2)
        .map(|w| format!("{:.2}", (w[1].1 / w[0].1).ln() / (w[1].0 / w[0].0).ln()))
        .collect();
    eprintln!(
        "| {case:24} | {:26} | {} | {h_coarse:.4}…{h_fine:.5} | {:7.3} | {} | {} |",
        row.label,
        row.order,
        row.slope,
        fitted.join(" "),
        local.join(" ")
    );
}

fn check_case(case: Case) {
    let exact = reference(&case);
    // Every composition with either time sampling: both keep the composition's order.
    let mut methods: Vec<ContactMethod> = Composition::all()
        .into_iter()
        .flat_map(|c| {
            [TimeSampling::Endpoints, TimeSampling::Midpoint]
                .map(|sampling| ContactMethod::Splitting(c.clone(), sampling))
        })
        .collect();
    methods.extend(Composition::all().into_iter().map(ContactMethod::Herglotz));
    let mut rows = Vec::new();
    for method in &methods {
        let order = method.order();
        for (path, name) in [(CpuPath::Reference, "reference"), (CpuPath::Twin, "twin")] {
            rows.push(measure(
                format!("{} ({name})", method.label()),
                order,
                Window::method(order),
                |steps| run(method, &case, steps, path),
                &exact,
                case.t_end,
            ));
        }
        // The twin (f64 kernel functions, time functions from the plan's stream at
        // (k + offset) h) differs from the reference path only by round-off: its errors
        // must match point by point (where the run has not blown up: at h = 1 the
        // triple jumps diverge on the nonlinear cases, and the two overflow differently).
        let (reference, twin) = (&rows[rows.len() - 2], &rows[rows.len() - 1]);
        let pairs = reference.errors.iter().zip(&twin.errors);
        for (&(h, a), &(_, b)) in pairs.filter(|(reference, _)| reference.1 <= 0.1) {
            assert!(
                (a - b).abs() <= 1e-12 + 1e-6 * a,
                "{} / {}: at h = {h} the reference path's error is {a:e}, the twin's {b:e}",
                case.name,
                method.label()
            );
        }
    }
    let mut controls = vec![(Control::Lie, "control: Lie splitting")];
    if case.time_dependent {
        controls.push((Control::FrozenStrang, "control: frozen-t Strang"));
    }
    for (control, label) in controls {
        rows.push(measure(
            label.to_string(),
            1,
            Window::control(),
            |steps| run_control(control, &case, steps),
            &exact,
            case.t_end,
        ));
    }
    eprintln!(
        "| case | method | order | h range of fit | slope | N:error at the fit points | local slopes |"
    );
    eprintln!("|---|---|---|---|---|---|---|");
    for row in &rows {
        print_row(case.name, row);
    }
    for row in &rows {
        assert!(
            row.fit.len() >= 3,
            "{} / {}: fewer than 3 points in [{:e}, {:e}]: {:?}",
            case.name,
            row.label,
            row.window.floor,
            row.window.ceiling,
            row.errors
        );
        assert!(
            (row.slope - row.order as f64).abs() <= SLOPE_TOLERANCE,
            "{} / {}: slope {:.3}, order {}; errors {:?}",
            case.name,
            row.label,
            row.slope,
            row.order,
            row.errors
        );
    }
}

#[test]
fn reference_matches_the_closed_form_of_the_damped_oscillator() {
    let case = damped_oscillator();
    let system = &case.member.system;
    let y0 = case.member.initial_state();
    let times = [0.5, 1.0, 2.5, 5.0, 7.5, 10.0];
    let solutions = ode::solve_at(
        |t, y, dy| system.vector_field(t, y, dy),
        0.0,
        &y0,
        &times,
        REFERENCE_TOLERANCE,
    )
    .unwrap();
    let mut worst = 0.0_f64;
    for (t, y) in times.iter().zip(&solutions) {
        let exact = damped_oscillator_exact(y0[0], y0[1], y0[2], *t);
        let err = max_diff(y, &exact);
        eprintln!("t = {t:4}: reference {y:?}, closed form {exact:?}, difference {err:.1e}");
        worst = worst.max(err);
    }
    let at_end = reference(&case);
    let exact = damped_oscillator_exact(y0[0], y0[1], y0[2], case.t_end);
    let err = max_diff(&at_end, &exact);
    eprintln!("t_end: converge() vs closed form {err:.1e}; worst over the samples {worst:.1e}");
    assert!(
        worst <= 1e-14 && err <= 1e-14,
        "reference off the closed form"
    );
    // And the closed form is a solution: its derivative by differences is the field.
    for t in [0.3, 4.0, 9.1] {
        let d = 1e-3;
        let f = |s: f64| damped_oscillator_exact(y0[0], y0[1], y0[2], s);
        let diff = |i: usize| {
            let c = |d: f64| (f(t + d)[i] - f(t - d)[i]) / (2.0 * d);
            (4.0 * c(0.5 * d) - c(d)) / 3.0
        };
        let mut field = vec![0.0; 3];
        system.vector_field(t, &f(t), &mut field);
        for (i, v) in field.iter().enumerate() {
            assert!((diff(i) - v).abs() < 1e-10, "closed form: d/dt {i} at {t}");
        }
    }
}

#[test]
fn orders_on_the_damped_oscillator() {
    check_case(damped_oscillator());
}

#[test]
fn orders_on_the_forced_duffing_oscillator() {
    check_case(forced_duffing());
}

#[test]
fn orders_on_the_spin_orbit_problem_with_tidal_damping() {
    check_case(spin_orbit_tidal());
}

#[test]
fn orders_with_signal_damping_and_coupling() {
    check_case(coupled_signal_damping());
}

/// The example config builds the same plan as the hand-built damped oscillator, and the
/// backend's reference path is `contact_flows::step` at t = k h, bit for bit.
#[test]
fn example_config_and_backend_match_direct_stepping() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/contact_damped_oscillator.toml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let case = damped_oscillator();
    for (family, composition, method) in [
        (
            "splitting",
            Some("yoshida-6a"),
            ContactMethod::Splitting(
                Composition::by_name("yoshida-6a").unwrap(),
                TimeSampling::default(),
            ),
        ),
        // The example's `composition = "strang"`: the plain Herglotz step.
        (
            "herglotz",
            None,
            ContactMethod::Herglotz(Composition::by_name("strang").unwrap()),
        ),
        (
            "herglotz",
            Some("yoshida-6a"),
            ContactMethod::Herglotz(Composition::by_name("yoshida-6a").unwrap()),
        ),
    ] {
        let mut overrides: Vec<String> = vec![
            format!("scheme.family=\"{family}\""),
            "scheme.h=0.05".into(),
            "scheme.t_end=10.0".into(),
        ];
        if let Some(name) = composition {
            overrides.push(format!("scheme.composition=\"{name}\""));
        }
        let plan = Config::from_str_with(&text, &overrides, "test")
            .unwrap()
            .contact_plan()
            .unwrap();
        assert_eq!(plan.method(), &method);
        let from_config = Backend::Cpu(CpuPath::Reference).run(&plan).unwrap();
        let by_hand = run(&method, &case, 200, CpuPath::Reference);
        let system = &case.member.system;
        let mut y = case.member.initial_state();
        let mut gradient = vec![0.0; 1];
        for k in 0..200 {
            contact_flows::step(
                &method,
                system,
                k as f64 * 0.05,
                0.05,
                &mut y,
                &mut gradient,
            );
        }
        eprintln!(
            "{}: config {:?}, by hand {:?}, direct {:?}",
            method.label(),
            from_config.members[0].final_state,
            by_hand,
            y
        );
        assert_eq!(from_config.members[0].final_state, by_hand);
        assert_eq!(by_hand, y);
    }
}
