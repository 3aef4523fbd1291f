//! The high-accuracy reference against closed-form solutions.

use harbor::io::Config;
use harbor::linear_ph::LinearFlow;
use harbor::linear_ph::LinearPhConfig;
use std::f64::consts::PI;

/// Exact final state of the §5.1 oscillator (J = [[0, 1], [−1, 0]], Q = I, g = (0, 1),
/// x0 = (0, −1), u = sin²(π(t − 8)/2) on [8, 10], T = 18), derived by hand:
/// e^{Jθ} = [[cos θ, sin θ], [−sin θ, cos θ]], e^{Jθ} g = (sin θ, cos θ), and with
/// τ = s − 8, A = T − 8, u = ½ − ½ cos πτ, product-to-sum gives
///   I_s = ½[cos(A−2) − cos A] − ¼[−cos(A+2(π−1))/(π−1) + cos A/(π−1)
///                                 + cos(A−2(π+1))/(π+1) − cos A/(π+1)],
///   I_c = ½[sin A − sin(A−2)] − ¼[sin(A+2(π−1))/(π−1) − sin A/(π−1)
///                                 − sin(A−2(π+1))/(π+1) + sin A/(π+1)],
/// x(T) = e^{JT} x0 + (I_s, I_c).
fn pulse_oscillator_exact(t_end: f64) -> [f64; 2] {
    let a = t_end - 8.0;
    let (p1, p2) = (PI - 1.0, PI + 1.0);
    let i_s = 0.5 * ((a - 2.0).cos() - a.cos())
        - 0.25
            * (-(a + 2.0 * p1).cos() / p1 + a.cos() / p1 + (a - 2.0 * p2).cos() / p2
                - a.cos() / p2);
    let i_c = 0.5 * (a.sin() - (a - 2.0).sin())
        - 0.25
            * ((a + 2.0 * p1).sin() / p1 - a.sin() / p1 - (a - 2.0 * p2).sin() / p2 + a.sin() / p2);
    let (c, s) = (t_end.cos(), t_end.sin());
    // e^{JT} (0, −1) = (−sin T, −cos T).
    [-s + i_s, -c + i_c]
}

fn config(name: &str) -> Config {
    Config::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(name),
        &[],
    )
    .unwrap()
}

#[test]
fn pulse_oscillator_matches_the_closed_form() {
    let cfg = config("oscillator_pulse.toml");
    let member = cfg.member().unwrap();
    let signals = cfg.signals().unwrap();
    let flow = LinearFlow::new(&member.system, &signals);
    let x = flow.state_at(&member.x0, 18.0);
    let exact = pulse_oscillator_exact(18.0);
    for r in 0..2 {
        let err = (x[r] - exact[r]).abs();
        assert!(
            err < 1e-15,
            "x[{r}]: reference {:.17e}, closed form {:.17e}, error {err:.2e}",
            x[r],
            exact[r]
        );
    }
    let exact_dh = 0.5 * (exact[0] * exact[0] + exact[1] * exact[1]) - 0.5;
    let dh = flow.energy_change(&member.x0, 18.0);
    assert!(
        ((dh - exact_dh) / exact_dh).abs() < 2e-15,
        "ΔH: reference {dh:.17e}, closed form {exact_dh:.17e}"
    );
}

/// Damped oscillator x' = (J − R) x, R = diag(0, r): the characteristic polynomial is
/// λ² + rλ + 1, λ = −r/2 ± iω with ω = √(1 − r²/4). From x0 = (0, −1):
/// q(t) = −e^{−rt/2} sin(ωt)/ω, p(t) = −e^{−rt/2} (cos ωt − (r/2) sin(ωt)/ω).
#[test]
fn damped_oscillator_matches_the_closed_form() {
    let cfg = config("oscillator_damped.toml");
    let member = cfg.member().unwrap();
    let signals = cfg.signals().unwrap();
    let flow = LinearFlow::new(&member.system, &signals);
    let (r, t) = (0.1, 10.0);
    let w = (1.0 - r * r / 4.0f64).sqrt();
    let decay = (-r * t / 2.0).exp();
    let exact = [
        -decay * (w * t).sin() / w,
        -decay * ((w * t).cos() - 0.5 * r * (w * t).sin() / w),
    ];
    let x = flow.state_at(&member.x0, t);
    for r in 0..2 {
        let err = (x[r] - exact[r]).abs();
        assert!(
            err < 1e-15,
            "x[{r}]: reference {:.17e}, closed form {:.17e}, error {err:.2e}",
            x[r],
            exact[r]
        );
    }
}

/// The node bound and, when `count` is set, the exact node count of the pulse oscillator's
/// reference with `overrides`.
fn flow_work(overrides: &[&str], t_end: f64, count: bool) -> (f64, u64) {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let cfg = Config::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join("oscillator_pulse.toml"),
        &overrides,
    )
    .unwrap();
    let member = cfg.member().unwrap();
    let signals = cfg.signals().unwrap();
    let flow = LinearFlow::new(&member.system, &signals);
    let nodes = if count { flow.nodes(t_end) } else { 0 };
    (flow.node_bound(t_end), nodes)
}

fn flow_nodes(overrides: &[&str], t_end: f64) -> (f64, u64) {
    flow_work(overrides, t_end, true)
}

/// The work bound that studies check before running the reference is an upper bound of the
/// nodes the reference visits, and grows with ‖(J − R)Q‖, with t_end, with the input
/// frequency and with the number of square-wave edges.
#[test]
fn node_bound_bounds_the_work_and_grows_with_its_drivers() {
    let mut previous = 0.0;
    for q in ["1.0", "10.0", "100.0", "1000.0"] {
        let set = format!("system.Q=[[{q}, 0.0], [0.0, {q}]]");
        let (bound, nodes) = flow_nodes(&[&set], 18.0);
        assert!(
            nodes as f64 <= bound,
            "Q = {q}: {nodes} nodes > bound {bound}"
        );
        assert!(bound > previous, "Q = {q}: bound {bound} ≤ {previous}");
        previous = bound;
    }
    let (short, _) = flow_nodes(&[], 9.0);
    let (long, _) = flow_nodes(&[], 18.0);
    assert!(long > short, "t_end 18: {long}, t_end 9: {short}");
    let mut previous = 0.0;
    for f in ["1.0", "10.0", "100.0"] {
        for kind in ["sine", "square"] {
            let set = format!("input=[{{kind = '{kind}', frequency = {f}}}]");
            let (bound, nodes) = flow_nodes(&[&set], 18.0);
            assert!(
                nodes as f64 <= bound,
                "{kind} {f} Hz: {nodes} nodes > bound {bound}"
            );
            if kind == "sine" {
                assert!(bound > previous, "{f} Hz: bound {bound} ≤ {previous}");
                previous = bound;
            }
        }
    }
    // A square wave too fast to list its edges (3.6e13 of them) is bounded without listing
    // them.
    let (bound, _) = flow_work(
        &["input=[{kind = 'square', frequency = 1e12}]"],
        18.0,
        false,
    );
    assert!(bound > 1e13, "square 1e12 Hz: bound {bound}");
}

/// The progress of the reference counts every node, ending at `nodes`.
#[test]
fn reference_progress_ends_at_the_node_count() {
    let cfg = config("oscillator_pulse.toml");
    let member = cfg.member().unwrap();
    let signals = cfg.signals().unwrap();
    let flow = LinearFlow::new(&member.system, &signals);
    let mut reports = Vec::new();
    let dh = flow.energy_change_with_progress(&member.x0, 18.0, &mut |done| reports.push(done));
    assert_eq!(dh, flow.energy_change(&member.x0, 18.0));
    assert!(reports.windows(2).all(|w| w[0] < w[1]), "not increasing");
    assert_eq!(reports.last().copied(), Some(flow.nodes(18.0)));
}
