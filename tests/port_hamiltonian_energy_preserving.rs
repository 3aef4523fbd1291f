//! `[scheme] family = "energy-preserving"` for port-Hamiltonian models written as
//! expressions: the energy balance stored = supplied holds to round-off per step for a
//! polynomial H the projection's quadrature integrates exactly (state-dependent J, R, G and
//! an input), where Gauss shows a residual of order 2s; the state converges with order 2s on
//! a forced damped pendulum against an independent reference of the continuous system; with
//! quadratic H (or a rule on the collocation nodes, q = s) it is Gauss; the quadrature comes
//! from the config or its default s(s + 1); bad settings are refused naming the key.

mod common;

use harbor::backend::Backend;
use harbor::io::Config;
use harbor::kernels::{CpuPath, Family};
use harbor::linear_ph::LinearPhConfig;
use harbor::plan::MemberResult;
use harbor::port_hamiltonian::{PortHamiltonianConfig, PortHamiltonianPlan};

fn config(text: &str, overrides: &[String]) -> Config {
    Config::from_str_with(text, overrides, "test").unwrap()
}

fn plan(text: &str, overrides: &[String]) -> PortHamiltonianPlan {
    config(text, overrides).port_hamiltonian_plan().unwrap()
}

fn run(plan: &PortHamiltonianPlan) -> MemberResult {
    let mut results = Backend::Cpu(CpuPath::Reference).run(plan).unwrap();
    results.members.swap_remove(0)
}

fn set(items: &[String]) -> Vec<String> {
    items.to_vec()
}

/// Numbers as `[1.234e-5, …]`.
fn short(values: &[f64]) -> String {
    let parts: Vec<String> = values.iter().map(|v| format!("{v:.3e}")).collect();
    format!("[{}]", parts.join(", "))
}

/// A quartic H with a state-dependent J, a state-dependent R ⪰ 0, a state-dependent G and a
/// sine input, recorded every step.
const QUARTIC: &str = r#"
[system]
kind = "port-hamiltonian"
states = ["q", "p"]
parameters = { k = 1.0, a = 0.8, b = 0.3, c = 0.2, g = 0.4 }
H = "p^2/2 + k*q^2/2 + a*q^4/4 + b*q^2*p^2/2"
J = [[0, "1 + g*q^2"], ["-(1 + g*q^2)", 0]]
R = [[0, 0], [0, "c*(1 + p^2)"]]
G = [[0], ["1 + 0.5*q"]]
x0 = [1.2, -0.3]
newton = { tolerance = 1e-15, max_iterations = 60 }

[[input]]
kind = "sine"
amplitude = 0.8
frequency = 0.5

[scheme]
family = "energy-preserving"
stages = 1
h = 0.1
t_end = 4.0

[output]
every = 1
"#;

/// Per step k: |stored − supplied| and its scale max(|H(x_k)|, |H(x_{k+1})|, |port|,
/// |dissipated|), with H evaluated at the recorded states by the model's energy tape.
fn residuals(plan: &PortHamiltonianPlan, member: &MemberResult) -> Vec<(f64, f64)> {
    let n = plan.model.n();
    let parameters = &plan.nominal.parameters;
    let hamiltonian = |x: &[f64]| {
        let vars: Vec<f64> = x.iter().chain(parameters).copied().collect();
        let mut out = [0.0];
        plan.model.energy.eval(&vars, &mut out, &mut Vec::new());
        out[0]
    };
    let states: Vec<&[f64]> = member.trajectory.chunks(n).collect();
    let energies = &member.channels[0];
    assert_eq!(states.len(), plan.grid.steps + 1);
    assert_eq!(energies.len(), 4 * plan.grid.steps);
    energies
        .chunks(4)
        .enumerate()
        .map(|(k, e)| {
            let scale = hamiltonian(states[k])
                .abs()
                .max(hamiltonian(states[k + 1]).abs())
                .max(e[2].abs())
                .max(e[3].abs());
            ((e[0] - e[1]).abs(), scale)
        })
        .collect()
}

#[test]
fn the_balance_is_exact_for_a_quartic_hamiltonian_where_gauss_is_of_order_2s() {
    for stages in 1..=3 {
        let p = plan(QUARTIC, &[format!("scheme.stages={stages}")]);
        let member = run(&p);
        assert_eq!(*member.totals.last().unwrap(), 0.0, "no failed stage solve");
        let worst = residuals(&p, &member)
            .into_iter()
            .map(|(r, scale)| r / scale)
            .fold(0.0, f64::max);
        let dissipated = member.totals[3];
        eprintln!(
            "energy-preserving s = {stages} (q = {}): worst relative residual per step {worst:.2e}, dissipated {dissipated:.3}",
            p.method.quadrature().unwrap()
        );
        assert!(dissipated > 0.1, "R ≠ 0 is exercised: {dissipated}");
        assert!(worst <= 1e-13, "s = {stages}: residual {worst:e}");
    }
    // Gauss on the same model: the residual summed over the run, Σ_k |stored − supplied|,
    // falls as h^(2s) (per step as h^(2s+1)).
    for (stages, steps) in [
        (1, [0.1, 0.05, 0.025]),
        (2, [0.2, 0.1, 0.05]),
        (3, [0.1, 0.05, 0.025]),
    ] {
        let sums: Vec<f64> = steps
            .iter()
            .map(|h| {
                let p = plan(
                    QUARTIC,
                    &[
                        "scheme.family=gauss".into(),
                        format!("scheme.stages={stages}"),
                        format!("scheme.h={h}"),
                    ],
                );
                residuals(&p, &run(&p)).iter().map(|(r, _)| r).sum()
            })
            .collect();
        let orders: Vec<f64> = sums.windows(2).map(|e| (e[0] / e[1]).log2()).collect();
        eprintln!(
            "gauss s = {stages}: Σ|residual| {} at h = {steps:?}, orders {orders:.3?}",
            short(&sums)
        );
        let last = *orders.last().unwrap();
        let expected = 2.0 * stages as f64;
        assert!(
            (last - expected).abs() <= 0.3,
            "gauss s = {stages}: residual order {last:.2}, expected {expected}"
        );
        assert!(
            sums[2] > 1e-11,
            "gauss s = {stages}: {sums:?} is above round-off"
        );
    }
}

const PENDULUM: &str = r#"
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
kind = "sine"
amplitude = 0.7
frequency = 0.4

[scheme]
family = "energy-preserving"
stages = 1
h = 0.1
t_end = 2.0

[output]
every = 1000000
"#;

#[test]
fn energy_preserving_converges_with_order_2s_on_the_forced_pendulum() {
    let exact = common::pendulum_reference(2.0);
    for (stages, steps) in [
        (1, [0.05, 0.025, 0.0125]),
        (2, [0.1, 0.05, 0.025]),
        (3, [0.25, 0.125, 0.0625]),
    ] {
        let errors: Vec<f64> = steps
            .iter()
            .map(|h| {
                let x = run(&plan(
                    PENDULUM,
                    &[format!("scheme.stages={stages}"), format!("scheme.h={h}")],
                ))
                .final_state;
                (x[0] - exact[0]).abs().max((x[1] - exact[1]).abs())
            })
            .collect();
        let orders: Vec<f64> = errors.windows(2).map(|e| (e[0] / e[1]).log2()).collect();
        eprintln!(
            "energy-preserving s = {stages}: errors {} at h = {steps:?}, orders {orders:.3?}",
            short(&errors)
        );
        let expected = 2.0 * stages as f64;
        let last = *orders.last().unwrap();
        assert!(
            (last - expected).abs() <= 0.3,
            "s = {stages}: order {last:.2}, expected {expected}"
        );
    }
}

/// Trajectory, outputs, energies and totals of `a` and `b` agree to `tolerance`.
fn assert_same_run(a: &MemberResult, b: &MemberResult, tolerance: f64, what: &str) {
    let close = |x: f64, y: f64| (x - y).abs() <= tolerance;
    assert_eq!(a.trajectory.len(), b.trajectory.len());
    let worst = |u: &[f64], v: &[f64]| {
        u.iter()
            .zip(v)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    let mut largest = worst(&a.trajectory, &b.trajectory);
    for (x, y) in a.trajectory.iter().zip(&b.trajectory) {
        assert!(close(*x, *y), "{what}: trajectory {x:e} vs {y:e}");
    }
    for (channel, (u, v)) in a.channels.iter().zip(&b.channels).enumerate() {
        assert_eq!(u.len(), v.len());
        largest = largest.max(worst(u, v));
        for (x, y) in u.iter().zip(v) {
            assert!(close(*x, *y), "{what}: channel {channel}: {x:e} vs {y:e}");
        }
    }
    for c in 0..4 {
        assert!(
            close(a.totals[c], b.totals[c]),
            "{what}: total {c}: {:e} vs {:e}",
            a.totals[c],
            b.totals[c]
        );
    }
    eprintln!("{what}: largest difference {largest:.2e}");
}

/// With quadratic H, ∇H(x(τ)) is a polynomial of degree s, so its projection onto ℓ_i is
/// ∇H at the stage point: energy-preserving is Gauss, here with state-dependent J and R.
#[test]
fn with_a_quadratic_hamiltonian_energy_preserving_is_gauss() {
    let quadratic = QUARTIC
        .replace(
            r#"H = "p^2/2 + k*q^2/2 + a*q^4/4 + b*q^2*p^2/2""#,
            r#"H = "p^2/2 + k*q^2/2 + a*q*p/4""#,
        )
        .replace("every = 1\n", "every = 5\n");
    for stages in 1..=3 {
        let s = format!("scheme.stages={stages}");
        let gauss = run(&plan(
            &quadratic,
            &set(&["scheme.family=gauss".into(), s.clone()]),
        ));
        let projected = run(&plan(&quadratic, &set(std::slice::from_ref(&s))));
        assert_same_run(
            &gauss,
            &projected,
            1e-13,
            &format!("quadratic H, s = {stages}"),
        );
        assert!(projected.totals[4] <= 1e-13, "{:e}", projected.totals[4]);
    }
}

/// A q = s rule has the collocation nodes as its nodes: ē_i = ∇H(x_i) for any H, so the
/// pendulum runs as under Gauss.
#[test]
fn a_rule_on_the_collocation_nodes_is_gauss_for_any_hamiltonian() {
    for stages in 1..=3 {
        let s = format!("scheme.stages={stages}");
        let every = "output.every=1".to_string();
        let gauss = run(&plan(
            PENDULUM,
            &["scheme.family=gauss".into(), s.clone(), every.clone()],
        ));
        let on_nodes = run(&plan(
            PENDULUM,
            &[s.clone(), format!("scheme.quadrature={stages}"), every],
        ));
        assert_same_run(
            &gauss,
            &on_nodes,
            1e-13,
            &format!("pendulum, q = s = {stages}"),
        );
    }
}

/// The default rule is s(s + 1) nodes, and `scheme.quadrature` sets it: with s = 2 and the
/// quartic H (d = 4) q = 4 = d s / 2 is still exact, q = 3 is not.
#[test]
fn the_quadrature_comes_from_the_config_or_its_default() {
    for stages in 1..=3 {
        let p = plan(QUARTIC, &[format!("scheme.stages={stages}")]);
        let q = stages * (stages + 1);
        assert_eq!(p.method.quadrature(), Some(q));
        assert_eq!(
            p.method_label(),
            format!("energy-preserving-{stages} (q = {q})")
        );
        let scheme = &p.describe()["scheme"];
        assert_eq!(scheme["family"], "energy-preserving");
        assert_eq!(scheme["quadrature"], q);
        assert_eq!(scheme["order"], 2 * stages);
        assert_eq!(scheme["exact_for_polynomial_H_of_degree"], 2 * stages + 2);
        assert!(!p.method.is_gauss());
    }
    let gauss = plan(QUARTIC, &["scheme.family=gauss".into()]);
    assert!(gauss.method.is_gauss());
    assert_eq!(gauss.method_label(), "gauss-1");
    assert!(gauss.describe()["scheme"].get("quadrature").is_none());

    let worst = |q: usize| {
        let p = plan(
            QUARTIC,
            &["scheme.stages=2".into(), format!("scheme.quadrature={q}")],
        );
        assert_eq!(p.method_label(), format!("energy-preserving-2 (q = {q})"));
        let member = run(&p);
        residuals(&p, &member)
            .into_iter()
            .map(|(r, scale)| r / scale)
            .fold(0.0, f64::max)
    };
    let (exact, short) = (worst(4), worst(3));
    eprintln!("s = 2, quartic H: worst relative residual {exact:.2e} (q = 4), {short:.2e} (q = 3)");
    assert!(exact <= 1e-13, "q = 4: {exact:e}");
    assert!(short > 1e-9, "q = 3 is not exact for degree 4: {short:e}");
}

#[test]
fn bad_settings_are_refused_naming_the_key() {
    let error = |text: &str, overrides: &[&str]| {
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        match Config::from_str_with(text, &overrides, "test") {
            Ok(config) => match config.run_plan() {
                Ok(_) => panic!("{overrides:?} accepted"),
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        }
    };
    let cases: [(&[&str], &str, &[&str]); 6] = [
        (
            &["scheme.quadrature=0"],
            "scheme.quadrature: ",
            &["at least s = 1", "got 0"],
        ),
        (
            &["scheme.stages=3", "scheme.quadrature=2"],
            "scheme.quadrature: ",
            &["at least s = 3", "q = s is Gauss collocation", "got 2"],
        ),
        (
            &["scheme.quadrature=100000"],
            "scheme.quadrature: ",
            &["at most 128", "got 100000"],
        ),
        (
            &["scheme.family=gauss", "scheme.quadrature=4"],
            "scheme.quadrature: ",
            &["is 4", "energy-preserving schemes only, not gauss"],
        ),
        (
            &["scheme.stages=9"],
            "scheme.stages: ",
            &["energy-preserving takes 1 to 8 stages, got 9"],
        ),
        (
            &["scheme.family=lobatto-iiia"],
            "scheme.family: ",
            &[
                "lobatto-iiia is not available",
                "gauss or energy-preserving",
            ],
        ),
    ];
    for (overrides, field, parts) in cases {
        let e = error(QUARTIC, overrides);
        assert!(e.starts_with(field), "{overrides:?}: {e}");
        common::assert_mentions(&e, parts);
    }
    let negative = error(QUARTIC, &["scheme.quadrature=-1"]);
    common::assert_mentions(&negative, &["quadrature", "-1"]);

    // Other families refuse the scheme and the key.
    let pulse = std::fs::read_to_string(common::example_path("oscillator_pulse.toml")).unwrap();
    let e = error(&pulse, &["scheme.family=energy-preserving"]);
    assert!(e.starts_with("scheme.family: "), "{e}");
    common::assert_mentions(
        &e,
        &[
            "energy-preserving integrates port-hamiltonian systems",
            "a linear-ph system takes gauss, lobatto-iiia or lobatto-pair",
        ],
    );
    let e = error(&pulse, &["scheme.quadrature=3"]);
    assert!(e.starts_with("scheme.quadrature: "), "{e}");
    common::assert_mentions(&e, &["energy-preserving schemes only, not gauss"]);
    assert!(config(&pulse, &[]).plan().is_ok());
    let contact =
        std::fs::read_to_string(common::example_path("contact_damped_oscillator.toml")).unwrap();
    let e = error(&contact, &["scheme.family=energy-preserving"]);
    assert!(e.starts_with("scheme.family: "), "{e}");
    common::assert_mentions(
        &e,
        &[
            "energy-preserving integrates port-hamiltonian systems",
            "contact systems take splitting or herglotz",
        ],
    );
    let e = error(&contact, &["scheme.quadrature=3"]);
    assert!(e.starts_with("scheme.quadrature: "), "{e}");
    common::assert_mentions(&e, &["energy-preserving schemes only, not splitting"]);
}

/// A stage solve that cannot converge ends its member with a flag at that step, the state
/// NaN from there on, as under Gauss.
#[test]
fn a_failed_stage_solve_flags_its_member_and_step() {
    let member = run(&plan(
        PENDULUM,
        &[
            "scheme.stages=2".into(),
            "system.newton.max_iterations=1".into(),
            "system.newton.tolerance=1e-300".into(),
        ],
    ));
    assert_eq!(member.nonfinite_step, Some(1));
    assert_eq!(*member.totals.last().unwrap(), 1.0);
    assert!(member.final_state.iter().all(|v| v.is_nan()));
}

/// The example runs from the command line under its scheme and, with
/// `--set scheme.family=gauss`, under Gauss: the energy-preserving balance is at round-off,
/// Gauss's is not.
#[test]
fn the_example_compares_the_two_schemes_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let example = common::example_path("ph_nonquadratic_energy.toml");
    let residual = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "simulate",
            example.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
        ];
        args.extend_from_slice(extra);
        let output = common::run_harbor(&args);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        let value = summary["energy"]["max_abs_residual"][0].as_f64().unwrap();
        (value, stdout)
    };
    let (projected, stdout) = residual("ep", &[]);
    assert!(stdout.contains("energy-preserving-2 (q = 6)"), "{stdout}");
    let (gauss, stdout) = residual("gauss", &["--set", "scheme.family=gauss"]);
    assert!(stdout.contains("gauss-2"), "{stdout}");
    eprintln!(
        "example: max |stored − supplied| per step {projected:.2e} (energy-preserving), {gauss:.2e} (gauss)"
    );
    // H(x0) = 1.5²/2 + 2 · 1.5⁴/4 = 3.65625: round-off is a few 1e-16 of it.
    assert!(projected <= 1e-13 * 3.65625, "{projected:e}");
    assert!(gauss > 1e-9, "{gauss:e}");
}
