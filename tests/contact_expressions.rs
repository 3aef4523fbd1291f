//! Contact terms written as expressions (`potential = [{ kind = "expression", B = … }]`,
//! `damping = { kind = "expression", C = … }`) on the three paths: the CPU reference
//! integrator, the kernel's CPU twin and the GPU kernel (lavapipe in CI; a missing adapter
//! fails these tests).
//!
//! - An expression equal to a built-in term gives the built-in term's results: bit for bit
//!   where the two evaluate the same operations (x²/2 against ½ xᵀ K x: (x·x)/2 and
//!   (0.5·x)·x round alike, and the derivative (2x)/2 = x is exact; −4 cos x against the
//!   pendulum with ω = 2 on the twin and the GPU, which call the same `math_cos`), to
//!   ≤ 1e-13 where they sum their terms in another order or where the reference uses
//!   std's cos rather than harbor's.
//! - The Lane–Emden equation θ'' + (2/ξ) θ' + θⁿ = 0 is the contact system
//!   H = p²/2 + θⁿ⁺¹/(n + 1) + C z with C = 2/ξ. Runs start at t = 0, where 2/t is
//!   infinite, so C = 2/t is refused before any work; C = 2/(t + 1) integrates it from
//!   ξ = t + 1 = 1, where the exact solutions of n = 1 (sin ξ / ξ) and n = 5
//!   ((1 + ξ²/3)^(−1/2)) give the initial state and the reference, and an independent
//!   order-16 solution (`reference::ode`) of the contact field gives (x, p, z) for n = 1,
//!   3, 5. The measured orders of convergence are those of the methods.
//! - Bad input: parse errors with their position, names that are not positions or t
//!   (momenta) with the names that exist, C or B not finite where the run evaluates them,
//!   draws of parameters an expression does not have — each refused before any work,
//!   naming the field.
//!
//! Run with `--nocapture` to see the measured gaps and orders.

mod common;

use harbor::backend::Backend;
use harbor::backend::gpu::{ExecutorOptions, Precision, run};
use harbor::contact::{ContactConfig, ContactPlan};
use harbor::io::Config;
use harbor::kernels::CpuPath;
use harbor::reference::ode;
use harbor::results::Results;

use common::{assert_mentions, simulate_fails_with};

fn plan_from(text: &str) -> ContactPlan {
    Config::from_str_with(text, &[], "contact expressions test")
        .and_then(|c| c.contact_plan())
        .unwrap_or_else(|e| panic!("bad test config: {e}\n{text}"))
}

fn plan_error(text: &str) -> String {
    match Config::from_str_with(text, &[], "contact expressions test")
        .and_then(|c| c.contact_plan())
    {
        Ok(_) => panic!("expected an error for\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn cpu(plan: &ContactPlan, path: CpuPath) -> Results {
    Backend::Cpu(path)
        .run(plan)
        .unwrap_or_else(|e| panic!("CPU {path:?} run failed: {e}"))
}

fn gpu(plan: &ContactPlan, options: &ExecutorOptions) -> Results {
    run(common::gpu_context(Precision::F64), plan, options)
        .unwrap_or_else(|e| panic!("GPU run failed: {e}"))
}

/// A TOML float that reads back as the same f64.
fn num(v: f64) -> String {
    format!("{v:?}")
}

/// A contact config: `system` lines (after `kind`), the scheme, h, t_end, `[ensemble]`
/// lines (none: a single member).
fn config(system: &str, scheme: &str, h: f64, t_end: f64, ensemble: &str) -> String {
    let scheme = match scheme {
        "herglotz" => "family = \"herglotz\"".to_string(),
        composition => format!("family = \"splitting\"\ncomposition = \"{composition}\""),
    };
    let ensemble = if ensemble.is_empty() {
        String::new()
    } else {
        format!("\n[ensemble]\n{ensemble}\n")
    };
    format!(
        "[system]\nkind = \"contact\"\n{system}\n\n[scheme]\n{scheme}\nh = {}\nt_end = {}\n\n[output]\nevery = 7\n{ensemble}",
        num(h),
        num(t_end)
    )
}

/// The recorded values of a run: trajectories, H samples, totals and final states; with
/// `stepped_only`, without H at t = 0 (`channels[0][0]` and `totals[0]`), which every
/// path computes on the host with the reference model (std's cos for the pendulum).
fn values(results: &Results, stepped_only: bool) -> Vec<f64> {
    let mut out = Vec::new();
    let skip = usize::from(stepped_only);
    for m in &results.members {
        out.extend(&m.trajectory);
        out.extend(m.channels.iter().flat_map(|c| c.iter().skip(skip)));
        out.extend(m.totals.iter().skip(skip));
        out.extend(&m.final_state);
    }
    out
}

/// Whether two runs recorded the same values bit for bit (see [`values`]).
fn same_bits(a: &Results, b: &Results, stepped_only: bool) -> bool {
    let (a, b) = (values(a, stepped_only), values(b, stepped_only));
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Whether two runs recorded the same values bit for bit, H at t = 0 included.
fn bit_identical(a: &Results, b: &Results) -> bool {
    same_bits(a, b, false)
}

/// The worst gap between two runs of the same plan: for each member, each state component
/// (x_j, p_j, z) and H, max |a − b| over the samples relative to the largest |b| of that
/// component over the run; with where it is.
fn gap(a: &Results, b: &Results, width: usize) -> (f64, String) {
    assert_eq!(a.members.len(), b.members.len(), "member counts");
    let mut worst = (0.0_f64, String::from("nowhere"));
    for (i, (ma, mb)) in a.members.iter().zip(&b.members).enumerate() {
        assert_eq!(
            ma.trajectory.len(),
            mb.trajectory.len(),
            "member {i} samples"
        );
        assert_eq!(ma.nonfinite_step, None, "member {i} stayed finite");
        let mut series: Vec<(String, Vec<f64>, Vec<f64>)> = (0..width)
            .map(|j| {
                let column = |m: &[f64]| m.iter().skip(j).step_by(width).copied().collect();
                (
                    format!("state[{j}]"),
                    column(&ma.trajectory),
                    column(&mb.trajectory),
                )
            })
            .collect();
        series.push(("H".into(), ma.channels[0].clone(), mb.channels[0].clone()));
        for (name, xa, xb) in series {
            let scale = xb.iter().fold(f64::MIN_POSITIVE, |m, v| m.max(v.abs()));
            for (k, (va, vb)) in xa.iter().zip(&xb).enumerate() {
                let g = (va - vb).abs() / scale;
                let g = if g.is_nan() { f64::INFINITY } else { g };
                if g > worst.0 {
                    worst = (g, format!("member {i} {name} sample {k}: {va:e} vs {vb:e}"));
                }
            }
        }
    }
    worst
}

/// The criterion of `tests/contact_gpu_vs_cpu.rs`: GPU, twin and reference agree to
/// 1e-12 relative.
const F64_TOLERANCE: f64 = 1e-12;
/// An expression against the built-in term it equals, where they round differently.
const SAME_TERM_TOLERANCE: f64 = 1e-13;

// ---------------------------------------------------------------------------------------
// (a) An expression equal to a built-in term.

struct Pair {
    label: &'static str,
    /// `x0`, `p0`, `kinetic` and `damping` lines.
    common: &'static str,
    builtin: &'static str,
    expression: &'static str,
    /// Whether the reference path evaluates the same operations for both.
    reference_bits: bool,
    /// Whether the twin (and so the GPU, up to Mesa's rewrites) does (H at t = 0 aside:
    /// the host computes it with the reference model).
    twin_bits: bool,
}

const PAIRS: [Pair; 4] = [
    Pair {
        label: "½ K x² (K = 1) as x^2/2, constant damping",
        common: "x0 = [0.7]\np0 = [-0.3]\nz0 = 0.2\ndamping = { kind = \"constant\", alpha = 0.1 }",
        builtin: "{ kind = \"harmonic\", K = [[1.0]] }",
        expression: "{ kind = \"expression\", B = \"x^2/2\" }",
        reference_bits: true,
        twin_bits: true,
    },
    Pair {
        label: "diagonal ½ xᵀ K x (n = 2) as x1^2 + x2^2/4, signal damping",
        common: "x0 = [0.7, -0.4]\np0 = [-0.3, 0.5]\nkinetic = [[1.5, 0.25], [0.25, 0.75]]\n\
                 damping = { kind = \"signal\", alpha = 0.2, signal = { kind = \"sine\", frequency = 0.3, offset = 1.0 } }",
        builtin: "{ kind = \"harmonic\", K = [[2.0, 0.0], [0.0, 0.5]] }",
        expression: "{ kind = \"expression\", B = \"x1^2 + x2^2/4\" }",
        reference_bits: true,
        twin_bits: true,
    },
    Pair {
        label: "pendulum ω = 2 as -4*cos(x)",
        common: "x0 = [2.5]\np0 = [0.4]\ndamping = { kind = \"constant\", alpha = 0.05 }",
        builtin: "{ kind = \"pendulum\", omega = 2.0 }",
        expression: "{ kind = \"expression\", B = \"-4*cos(x)\" }",
        // The reference's pendulum calls std's sin and cos, the tape harbor's.
        reference_bits: false,
        twin_bits: true,
    },
    Pair {
        label: "quartic + forcing + harmonic, the harmonic as an expression",
        common: "x0 = [0.7]\np0 = [-0.3]\ndamping = { kind = \"constant\", alpha = 0.1 }",
        builtin: "{ kind = \"quartic\", beta = 0.5 }, { kind = \"forcing\", amplitude = [0.3], signal = { kind = \"cosine\", frequency = 0.2 } }, { kind = \"harmonic\", K = [[1.0]] }",
        expression: "{ kind = \"quartic\", beta = 0.5 }, { kind = \"forcing\", amplitude = [0.3], signal = { kind = \"cosine\", frequency = 0.2 } }, { kind = \"expression\", B = \"x^2/2\" }",
        // Three terms summed in another order (the kernel adds the expression last).
        reference_bits: true,
        twin_bits: false,
    },
];

/// Every pair under Strang, Suzuki's fourth-order composition and Herglotz, over an
/// ensemble of 9 members with perturbed initial states, 300 steps: the expression's runs
/// against the built-in term's on each path, and the GPU against the reference.
#[test]
fn expressions_equal_to_built_in_terms_give_their_results() {
    let ensemble = "members = 9\nseed = 11\nx0 = { kind = \"perturb\", sigma = 0.2 }\np0 = { kind = \"perturb\", sigma = 0.2 }";
    let mut worst_gpu_pair = (0.0_f64, String::new());
    let mut worst_gpu_reference = (0.0_f64, String::new());
    for pair in &PAIRS {
        for scheme in ["strang", "suzuki-4", "herglotz"] {
            let text = |terms: &str| {
                config(
                    &format!("{}\npotential = [{terms}]", pair.common),
                    scheme,
                    0.01,
                    3.0,
                    ensemble,
                )
            };
            let (builtin, expression) = (
                plan_from(&text(pair.builtin)),
                plan_from(&text(pair.expression)),
            );
            let width = 2 * builtin.dof() + 1;
            let what = format!("{} under {scheme}", pair.label);
            let run = |plan: &ContactPlan| {
                (
                    cpu(plan, CpuPath::Reference),
                    cpu(plan, CpuPath::Twin),
                    gpu(plan, &ExecutorOptions::default()),
                )
            };
            let (ref_b, twin_b, gpu_b) = run(&builtin);
            let (ref_e, twin_e, gpu_e) = run(&expression);
            // The twin's H at t = 0 is the host's, from the reference model.
            for (path, a, b, bits, stepped_only) in [
                ("reference", &ref_e, &ref_b, pair.reference_bits, false),
                ("twin", &twin_e, &twin_b, pair.twin_bits, true),
            ] {
                let g = gap(a, b, width);
                if bits {
                    assert!(
                        same_bits(a, b, stepped_only),
                        "{what}, {path}: expression and built-in term differ ({:.2e} at {})",
                        g.0,
                        g.1
                    );
                } else {
                    assert!(
                        g.0 <= SAME_TERM_TOLERANCE,
                        "{what}, {path}: gap {:.2e} at {}",
                        g.0,
                        g.1
                    );
                }
            }
            let pair_gap = gap(&gpu_e, &gpu_b, width);
            assert!(
                pair_gap.0 <= SAME_TERM_TOLERANCE,
                "{what}, gpu: expression vs built-in gap {:.2e} at {}",
                pair_gap.0,
                pair_gap.1
            );
            for (label, a, b) in [
                ("gpu vs reference", &gpu_e, &ref_e),
                ("gpu vs twin", &gpu_e, &twin_e),
                ("twin vs reference", &twin_e, &ref_e),
            ] {
                let g = gap(a, b, width);
                assert!(
                    g.0 <= F64_TOLERANCE,
                    "{what}, {label}: gap {:.2e} at {}",
                    g.0,
                    g.1
                );
            }
            let gpu_reference = gap(&gpu_e, &ref_e, width);
            eprintln!(
                "{what}: gpu expression vs built-in {:.2e} (bit-identical: {}), vs reference {:.2e}",
                pair_gap.0,
                bit_identical(&gpu_e, &gpu_b),
                gpu_reference.0
            );
            for (worst, g) in [
                (&mut worst_gpu_pair, pair_gap),
                (&mut worst_gpu_reference, gpu_reference),
            ] {
                if g.0 >= worst.0 {
                    *worst = (g.0, format!("{what}: {}", g.1));
                }
            }
        }
    }
    eprintln!(
        "worst gpu expression vs gpu built-in: {:.2e} ({}); worst gpu vs cpu reference: {:.2e} ({})",
        worst_gpu_pair.0, worst_gpu_pair.1, worst_gpu_reference.0, worst_gpu_reference.1
    );
}

/// B(t, x) that uses t reads t from the shared stream on the twin and the GPU: the forced
/// double well x⁴/4 − x²/2 − 0.3 x cos(2π f t) as one expression against quartic +
/// harmonic + a cosine forcing (the same function; the forcing's phase 2π f t is rounded
/// differently), on every path, and chunked GPU runs (windows of the stream cut at odd
/// steps) equal the whole run bit for bit.
#[test]
fn an_expression_in_t_reads_t_from_the_stream() {
    let f = 0.2;
    let common =
        "x0 = [0.5, -0.8]\np0 = [0.1, 0.3]\ndamping = { kind = \"constant\", alpha = 0.25 }";
    let expression = format!(
        "potential = [{{ kind = \"expression\", B = \"x1^4/4 - x1^2/2 + x2^4/4 - x2^2/2 - 0.3*(x1 + x2)*cos({} * t)\" }}]",
        num(2.0 * std::f64::consts::PI * f)
    );
    let builtin = format!(
        "potential = [{{ kind = \"quartic\", beta = 1.0 }}, {{ kind = \"harmonic\", K = [[-1.0, 0.0], [0.0, -1.0]] }}, \
         {{ kind = \"forcing\", amplitude = [0.3, 0.3], signal = {{ kind = \"cosine\", frequency = {} }} }}]",
        num(f)
    );
    let ensemble = "members = 13\nseed = 5\nx0 = { kind = \"perturb\", sigma = 0.3 }";
    for scheme in ["yoshida-6a", "herglotz"] {
        let text = |potential: &str| {
            config(
                &format!("{common}\n{potential}"),
                scheme,
                0.01,
                4.0,
                ensemble,
            )
        };
        let plan = plan_from(&text(&expression));
        assert!(plan.time_channels().time, "t is a stream channel");
        let other = plan_from(&text(&builtin));
        let width = 2 * plan.dof() + 1;
        let reference = cpu(&plan, CpuPath::Reference);
        let twin = cpu(&plan, CpuPath::Twin);
        let device = gpu(&plan, &ExecutorOptions::default());
        let builtin_reference = cpu(&other, CpuPath::Reference);
        for (label, a, b, tolerance) in [
            ("gpu vs reference", &device, &reference, F64_TOLERANCE),
            ("gpu vs twin", &device, &twin, F64_TOLERANCE),
            ("twin vs reference", &twin, &reference, F64_TOLERANCE),
            (
                "expression vs built-in terms",
                &reference,
                &builtin_reference,
                SAME_TERM_TOLERANCE,
            ),
        ] {
            let g = gap(a, b, width);
            eprintln!("forced double well under {scheme}, {label}: {:.2e}", g.0);
            assert!(
                g.0 <= tolerance,
                "{scheme}, {label}: gap {:.2e} > {tolerance:e} at {}",
                g.0,
                g.1
            );
        }
        for (chunk, dispatch) in [(1, 1), (4, 7), (5, 23)] {
            let options = ExecutorOptions {
                max_chunk_members: Some(chunk),
                max_steps_per_dispatch: Some(dispatch),
                ..Default::default()
            };
            assert!(
                bit_identical(&gpu(&plan, &options), &device),
                "{scheme}: chunks of {chunk} members and {dispatch} steps differ from one chunk"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// (b) The Lane–Emden equation.

/// A Lane–Emden case: polytropic index n, its potential θⁿ⁺¹/(n + 1), and the exact
/// (θ, θ')(ξ) where one is known.
struct LaneEmden {
    index: u32,
    potential: &'static str,
    exact: Option<fn(f64) -> [f64; 2]>,
}

/// n = 1: θ = sin ξ / ξ, θ' = cos ξ / ξ − sin ξ / ξ².
fn lane_emden_1(xi: f64) -> [f64; 2] {
    [xi.sin() / xi, xi.cos() / xi - xi.sin() / (xi * xi)]
}

/// n = 5: θ = (1 + ξ²/3)^(−1/2), θ' = −(ξ/3)(1 + ξ²/3)^(−3/2).
fn lane_emden_5(xi: f64) -> [f64; 2] {
    let u = 1.0 + xi * xi / 3.0;
    [u.powf(-0.5), -(xi / 3.0) * u.powf(-1.5)]
}

const LANE_EMDEN: [LaneEmden; 3] = [
    LaneEmden {
        index: 1,
        potential: "x^2/2",
        exact: Some(lane_emden_1),
    },
    LaneEmden {
        index: 3,
        potential: "x^4/4",
        exact: None,
    },
    LaneEmden {
        index: 5,
        potential: "x^6/6",
        exact: Some(lane_emden_5),
    },
];

/// ξ runs from 1 (t = 0) to 1 + T.
const LANE_EMDEN_T: f64 = 9.0;

/// The Lane–Emden system from ξ = 1: on the exact solution where there is one, else (n = 3)
/// from the n = 1 solution's (θ, θ')(1) — any solution of the equation will do for orders.
fn lane_emden_system(case: &LaneEmden) -> String {
    let [x0, p0] = case.exact.unwrap_or(lane_emden_1)(1.0);
    format!(
        "x0 = [{}]\np0 = [{}]\npotential = [{{ kind = \"expression\", B = \"{}\" }}]\ndamping = {{ kind = \"expression\", C = \"2/(t + 1)\" }}",
        num(x0),
        num(p0),
        case.potential
    )
}

/// C = 2/t is infinite at t = 0, where every run starts: refused before any work, naming
/// the field, the time and the value, and suggesting the shifted time.
#[test]
fn lane_emden_with_2_over_t_is_refused_before_any_work() {
    let text = config(
        "x0 = [1.0]\np0 = [0.0]\npotential = [{ kind = \"expression\", B = \"x^2/2\" }]\ndamping = { kind = \"expression\", C = \"2/t\" }",
        "strang",
        0.01,
        1.0,
        "",
    );
    let expected = [
        "system.damping.C",
        "C(t) = 2/t is inf at t = 0",
        "where every run starts",
        "2/(t + 1)",
    ];
    assert_mentions(&plan_error(&text), &expected);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lane_emden.toml");
    std::fs::write(&path, &text).unwrap();
    // `harbor simulate` exits with the error and writes nothing (asserted by the helper).
    assert_mentions(&simulate_fails_with(&path, &[]), &expected);
}

/// The least-squares slope of log error against log h.
fn slope(points: &[(f64, f64)]) -> f64 {
    let logs: Vec<(f64, f64)> = points.iter().map(|&(h, e)| (h.ln(), e.ln())).collect();
    let n = logs.len() as f64;
    let (mx, my) = logs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let sxy: f64 = logs.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = logs.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// Lane–Emden with C = 2/(t + 1) from ξ = 1 to 10 for n = 1, 3, 5 (B = θⁿ⁺¹/(n + 1), an
/// expression), on the reference path. The error is the max-norm of (x, p, z) at t = 9
/// against an order-16 Gauss solution of the contact field (`ode::converge` to 1e-14),
/// which shares nothing with the splitting but the field, and which is itself checked
/// against the exact θ, θ' of n = 1 and n = 5 (≤ 1e-13). Step counts N = N₀·2^i,
/// i = 0…5, N₀ chosen per order so that the errors span the asymptotic range; the slope of
/// log error against log h over the finest points with error in [1e-12, 1e-3] (four, three
/// at order 6, whose coarsest steps h ≥ 0.5 are not yet asymptotic: local slope 5.7 at
/// h = 1 → 0.5 for n = 5) must be within 0.3 of the method's order. The finest run of each
/// method is as close to the exact θ, θ' of n = 1 and 5 as to the reference.
#[test]
fn shifted_lane_emden_converges_at_the_methods_orders() {
    let methods: [(&str, usize, usize); 4] = [
        ("strang", 2, 90),
        ("herglotz", 2, 90),
        ("suzuki-4", 4, 18),
        ("yoshida-6a", 6, 9),
    ];
    for case in &LANE_EMDEN {
        let plan = plan_from(&config(
            &lane_emden_system(case),
            "strang",
            0.1,
            LANE_EMDEN_T,
            "",
        ));
        let member = plan.member(0).unwrap();
        let y0 = member.initial_state();
        let field = |t: f64, y: &[f64], dy: &mut [f64]| member.system.vector_field(t, y, dy);
        let reference = ode::converge(field, 0.0, &y0, LANE_EMDEN_T, 1e-14)
            .unwrap_or_else(|e| panic!("n = {}: reference: {e}", case.index))
            .y;
        let exact = case.exact.map(|f| f(1.0 + LANE_EMDEN_T));
        if let Some([theta, dtheta]) = exact {
            let e = (reference[0] - theta)
                .abs()
                .max((reference[1] - dtheta).abs());
            assert!(
                e <= 1e-13,
                "n = {}: the reference misses the exact θ, θ' by {e:.2e}",
                case.index
            );
        }
        for &(scheme, order, n0) in &methods {
            let mut points = Vec::new();
            let mut rows = String::new();
            let (mut finest, mut finest_error) = (Vec::new(), f64::INFINITY);
            for i in 0..6 {
                let steps = n0 << i;
                let h = LANE_EMDEN_T / steps as f64;
                let plan = plan_from(&config(
                    &lane_emden_system(case),
                    scheme,
                    h,
                    LANE_EMDEN_T,
                    "",
                ));
                assert_eq!(plan.grid().steps, steps);
                let result = cpu(&plan, CpuPath::Reference);
                finest = result.members[0].final_state.clone();
                let error = finest
                    .iter()
                    .zip(&reference)
                    .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
                finest_error = error;
                rows.push_str(&format!(" h = {h:.4}: {error:.2e};"));
                if (1e-12..=1e-3).contains(&error) {
                    points.push((h, error));
                }
            }
            let fit = if order >= 6 { 3 } else { 4 };
            assert!(
                points.len() >= fit,
                "n = {}, {scheme}: fewer than {fit} errors in [1e-12, 1e-3]:{rows}",
                case.index
            );
            let fitted = slope(&points[points.len() - fit..]);
            eprintln!(
                "Lane–Emden n = {}, {scheme} (order {order}): slope {fitted:.2} over the finest {fit} points;{rows}",
                case.index
            );
            assert!(
                (fitted - order as f64).abs() <= 0.3,
                "n = {}, {scheme}: fitted order {fitted:.2}, expected {order}:{rows}",
                case.index
            );
            if let Some([theta, dtheta]) = exact {
                // The finest run is as close to the closed form as to the reference.
                let e = (finest[0] - theta).abs().max((finest[1] - dtheta).abs());
                assert!(
                    e <= finest_error + 1e-13,
                    "n = {}, {scheme}: θ, θ' miss the closed form by {e:.2e}, the reference by {finest_error:.2e}",
                    case.index
                );
            }
        }
    }
}

/// The Lane–Emden ensemble (n = 5 potential, θ(1) perturbed) on the GPU: C = 2/(t + 1)
/// comes from the shared stream, B from the generated WGSL; GPU, twin and reference agree
/// to the f64 criterion, and chunking changes no bit.
#[test]
fn lane_emden_on_the_gpu_matches_the_reference() {
    let ensemble = "members = 17\nseed = 3\nx0 = { kind = \"perturb\", sigma = 0.05 }\np0 = { kind = \"perturb\", sigma = 0.05 }";
    for scheme in ["suzuki-4", "herglotz"] {
        let plan = plan_from(&config(
            &lane_emden_system(&LANE_EMDEN[2]),
            scheme,
            0.01,
            LANE_EMDEN_T,
            ensemble,
        ));
        let reference = cpu(&plan, CpuPath::Reference);
        let twin = cpu(&plan, CpuPath::Twin);
        let device = gpu(&plan, &ExecutorOptions::default());
        for (label, a, b) in [
            ("gpu vs reference", &device, &reference),
            ("gpu vs twin", &device, &twin),
            ("twin vs reference", &twin, &reference),
        ] {
            let g = gap(a, b, 3);
            eprintln!(
                "Lane–Emden n = 5 ensemble under {scheme}, {label}: {:.2e}",
                g.0
            );
            assert!(
                g.0 <= F64_TOLERANCE,
                "{scheme}, {label}: gap {:.2e} at {}",
                g.0,
                g.1
            );
        }
        let options = ExecutorOptions {
            max_chunk_members: Some(5),
            max_steps_per_dispatch: Some(61),
            ..Default::default()
        };
        assert!(
            bit_identical(&gpu(&plan, &options), &device),
            "{scheme}: chunked run differs"
        );
    }
}

/// The f32 unit roundoff u = 2⁻²⁴.
const F32_UNIT_ROUNDOFF: f64 = 5.960_464_477_539_063e-8;

/// The Lane–Emden ensemble in f32 on the GPU (the expression's constants rounded to f32 by
/// the WGSL compiler, its helpers and harbor's f32 math library) against the f64
/// reference, within the bound of `tests/contact_gpu_vs_cpu.rs`: 64 u per sub-step of the
/// quantity's scale, N · s sub-steps (s = 5 for Suzuki's composition, 1 for Herglotz).
#[test]
fn lane_emden_in_f32_stays_within_the_drift_bound() {
    let ensemble = "members = 9\nseed = 3\nx0 = { kind = \"perturb\", sigma = 0.05 }";
    for (scheme, stages) in [("suzuki-4", 5), ("herglotz", 1)] {
        let plan = plan_from(&config(
            &lane_emden_system(&LANE_EMDEN[2]),
            scheme,
            0.01,
            LANE_EMDEN_T,
            ensemble,
        ));
        let reference = cpu(&plan, CpuPath::Reference);
        let device = run(
            common::gpu_context(Precision::F32),
            &plan,
            &ExecutorOptions::default(),
        )
        .unwrap_or_else(|e| panic!("f32 GPU run failed: {e}"));
        let g = gap(&device, &reference, 3);
        let sub_steps = (plan.grid().steps * stages) as f64;
        let bound = 64.0 * sub_steps * F32_UNIT_ROUNDOFF;
        eprintln!(
            "Lane–Emden n = 5 in f32 under {scheme}: gap {:.2e} = {:.2} u per sub-step (bound {bound:.2e})",
            g.0,
            g.0 / (sub_steps * F32_UNIT_ROUNDOFF)
        );
        assert!(
            g.0 <= bound,
            "{scheme}: f32 gap {:.2e} > {bound:.2e} at {}",
            g.0,
            g.1
        );
        assert!(
            g.0 > 1e-9,
            "{scheme}: f32 agrees with f64 to {:.2e}: was it f32?",
            g.0
        );
    }
}

// ---------------------------------------------------------------------------------------
// (c) Bad input.

/// A valid system with both expressions, n = 1 or 2, Strang, h = 0.1, t_end = 2.
fn base(n: usize, potential: &str, damping: &str) -> String {
    let (x0, p0) = if n == 1 {
        ("[0.5]", "[0.0]")
    } else {
        ("[0.5, 0.1]", "[0.0, 0.2]")
    };
    config(
        &format!(
            "x0 = {x0}\np0 = {p0}\npotential = [{{ kind = \"expression\", B = \"{potential}\" }}]\ndamping = {{ kind = \"expression\", C = \"{damping}\" }}"
        ),
        "strang",
        0.1,
        2.0,
        "",
    )
}

/// The error of `text` from the library and from `harbor simulate` (which must write
/// nothing); both must mention `parts`.
fn refused(text: &str, parts: &[&str]) {
    assert_mentions(&plan_error(text), parts);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("contact.toml");
    std::fs::write(&path, text).unwrap();
    assert_mentions(&simulate_fails_with(&path, &[]), parts);
}

#[test]
fn parse_errors_name_the_field_and_the_position() {
    refused(
        &base(1, "x^4/4 - (x^2", "0.1"),
        &[
            "system.potential[0].B: ",
            "unclosed \"(\" at 8; the text ends at 12 without its \")\"",
        ],
    );
    refused(
        &base(1, "x^4/4 - ", "0.1"),
        &["system.potential[0].B: ", "at 8"],
    );
    refused(
        &base(1, "", "0.1"),
        &["system.potential[0].B: ", "empty expression at 0"],
    );
    refused(&base(1, "x^2/2", "2 t"), &["system.damping.C: ", "at 2"]);
    refused(
        &base(1, "x^2/2", "sinn(t)"),
        &[
            "system.damping.C: ",
            "unknown function \"sinn\" at 0",
            "the functions are sin, cos",
        ],
    );
    refused(
        &base(1, "1e400*x", "0.1"),
        &["system.potential[0].B: ", "at 0"],
    );
}

#[test]
fn momenta_and_unknown_names_are_refused_with_the_names_that_exist() {
    refused(
        &base(1, "x^2/2 + p^2/2", "0.1"),
        &[
            "system.potential[0].B: unknown name \"p\" at 8; the names are x, t",
            "the momenta enter through `kinetic`",
        ],
    );
    refused(
        &base(1, "x^2/2 + z", "0.1"),
        &[
            "system.potential[0].B: unknown name \"z\" at 8; the names are x, t",
            "z through `damping`",
        ],
    );
    refused(
        &base(2, "x^2/2", "0.1"),
        &["system.potential[0].B: unknown name \"x\" at 0; the names are x1, x2, t"],
    );
    refused(
        &base(2, "x1^2/2 + x3", "0.1"),
        &["unknown name \"x3\" at 9; the names are x1, x2, t"],
    );
    refused(
        &base(1, "x^2/2", "0.1*x"),
        &[
            "system.damping.C: unknown name \"x\" at 4; the names are t",
            "C(t) depends on t only",
        ],
    );
}

#[test]
fn a_rate_not_finite_where_the_run_evaluates_it_is_refused_before_any_work() {
    // 1/(t − 1) at the step boundary t = 10·0.1 = 1 (the end of step 10, the start of 11).
    refused(
        &base(1, "x^2/2", "1/(t - 1)"),
        &[
            "system.damping.C: C(t) = 1/(t - 1) is inf at t = 1, where the run evaluates it (step 10 of 20)",
        ],
    );
    // sqrt(1 − t) is NaN from the first time past 1, t = 11·0.1.
    refused(
        &base(1, "x^2/2", "sqrt(1 - t)"),
        &["system.damping.C: C(t) = sqrt(1 - t) is NaN at t = 1.1"],
    );
    // Herglotz steps at mid-steps too: 1/(t − 0.375) is infinite at t = 1.5·0.25.
    let herglotz = base(1, "x^2/2", "1/(t - 0.375)")
        .replace(
            "family = \"splitting\"\ncomposition = \"strang\"",
            "family = \"herglotz\"",
        )
        .replace("h = 0.1\n", "h = 0.25\n");
    refused(
        &herglotz,
        &[
            "system.damping.C: C(t) = 1/(t - 0.375) is inf at t = 0.375, where the run evaluates it (step 2 of 8)",
        ],
    );
    // C at t = 0 itself, and C = log(t).
    refused(
        &base(1, "x^2/2", "log(t)"),
        &["system.damping.C: C(t) = log(t) is -inf at t = 0, where every run starts"],
    );
}

#[test]
fn a_potential_not_finite_at_the_start_is_refused() {
    refused(
        &base(1, "log(x - 0.5)", "0.1"),
        &[
            "system.potential[0].B: B(t, x) = log(x - 0.5) is -inf at t = 0, x = x0 = [0.5], where the run starts",
        ],
    );
    refused(
        &base(2, "x1^2 + sqrt(x2 - 0.1)", "0.1"),
        &["system.potential[0].B: ∂B/∂x2 of B(t, x) = x1^2 + sqrt(x2 - 0.1) is inf at t = 0"],
    );
    // A drawn member outside the domain is named with its index (members are drawn as
    // the run goes: the first ones of 50 drawn uniformly in [−1, 1] that is negative).
    let text = base(1, "sqrt(x)", "0.1")
        + "\n[ensemble]\nmembers = 50\nseed = 1\nx0 = { kind = \"uniform\", low = -1.0, high = 1.0 }\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("contact.toml");
    std::fs::write(&path, text).unwrap();
    assert_mentions(
        &simulate_fails_with(&path, &[]),
        &[
            "ensemble member ",
            ": system.potential[0].B: B(t, x) = sqrt(x) is NaN at t = 0",
        ],
    );
}

#[test]
fn expressions_have_no_drawn_parameters_and_come_one_at_a_time() {
    let draw = base(1, "x^2/2", "0.1")
        + "\n[ensemble]\nmembers = 4\nalpha = { kind = \"uniform\", low = 0.0, high = 1.0 }\n";
    refused(
        &draw,
        &[
            "ensemble.alpha: draws α of C(t) = α c(t), but the damping is the expression C(t) = 0.1, which has no α",
        ],
    );
    let draw = base(1, "x^2/2", "0.1")
        + "\n[ensemble]\nmembers = 4\nbeta = { kind = \"perturb\", sigma = 0.1 }\n";
    refused(
        &draw,
        &[
            "ensemble.beta",
            "quartic term, which the system does not have",
        ],
    );
    let two = base(1, "x^2/2", "0.1").replace(
        "potential = [",
        "potential = [{ kind = \"expression\", B = \"x^4\" }, ",
    );
    refused(
        &two,
        &[
            "system.potential: at most one expression term (write their sum as one expression), found 2",
        ],
    );
}
