//! The variational family (seed 002): discrete paths against the continuous solutions they
//! approximate — the clamped cubic spline through knots, the clamped beam under load, a
//! forced oscillator — at second order; splines on the sphere on the constraint and
//! through their knots to round-off; the discrete angular momentum of a central potential
//! conserved over 10⁵ steps with bounded energy error; members that depend only on (seed,
//! i); and bad problems refused naming the field.

mod common;

use harbor::backend::Backend;
use harbor::io::Config;
use harbor::kernels::{CpuPath, Family};
use harbor::plan::MemberResult;
use harbor::variational::{VariationalPlan, plan_from_config};

fn config_text(text: &str, overrides: &[&str]) -> Result<Config, String> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Config::from_str_with(text, &overrides, "test").map_err(|e| e.to_string())
}

/// The example's text without its `[ensemble]` section.
fn example_text(name: &str) -> String {
    let text = std::fs::read_to_string(common::example_path(name)).unwrap();
    match text.split_once("[ensemble]") {
        Some((head, _)) => head.to_string(),
        None => text,
    }
}

fn plan(text: &str, overrides: &[&str]) -> VariationalPlan {
    plan_from_config(&config_text(text, overrides).unwrap()).unwrap()
}

fn refusal(text: &str, overrides: &[&str]) -> String {
    match config_text(text, overrides) {
        Err(e) => e,
        Ok(config) => match plan_from_config(&config) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{overrides:?} was accepted"),
        },
    }
}

fn run(plan: &VariationalPlan) -> Vec<MemberResult> {
    Backend::Cpu(CpuPath::Reference).run(plan).unwrap().members
}

/// A channel of a member, by name.
fn channel<'a>(plan: &VariationalPlan, member: &'a MemberResult, name: &str) -> &'a [f64] {
    let index = plan
        .record_spec()
        .channels
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("no channel {name}"));
    &member.channels[index]
}

/// A total of a member, by name.
fn total(plan: &VariationalPlan, member: &MemberResult, name: &str) -> f64 {
    let index = plan
        .record_spec()
        .totals
        .iter()
        .position(|t| *t == name)
        .unwrap_or_else(|| panic!("no total {name}"));
    member.totals[index]
}

/// log2 of successive error ratios under halving h.
fn orders(errors: &[f64]) -> Vec<f64> {
    errors.windows(2).map(|e| (e[0] / e[1]).log2()).collect()
}

/// The clamped cubic spline through (t_i, y_i) with end slopes s0, s1, evaluated at `t`:
/// an independent construction from the moments M_i = S''(t_i) (the tridiagonal system of
/// continuity of S' at the knots and the clamped ends).
fn clamped_spline(knots: &[(f64, f64)], s0: f64, s1: f64, t: f64) -> f64 {
    let n = knots.len() - 1;
    let h: Vec<f64> = (0..n).map(|i| knots[i + 1].0 - knots[i].0).collect();
    let y: Vec<f64> = knots.iter().map(|k| k.1).collect();
    let mut a = nalgebra::DMatrix::<f64>::zeros(n + 1, n + 1);
    let mut b = nalgebra::DVector::<f64>::zeros(n + 1);
    a[(0, 0)] = 2.0 * h[0];
    a[(0, 1)] = h[0];
    b[0] = 6.0 * ((y[1] - y[0]) / h[0] - s0);
    for i in 1..n {
        a[(i, i - 1)] = h[i - 1];
        a[(i, i)] = 2.0 * (h[i - 1] + h[i]);
        a[(i, i + 1)] = h[i];
        b[i] = 6.0 * ((y[i + 1] - y[i]) / h[i] - (y[i] - y[i - 1]) / h[i - 1]);
    }
    a[(n, n - 1)] = h[n - 1];
    a[(n, n)] = 2.0 * h[n - 1];
    b[n] = 6.0 * (s1 - (y[n] - y[n - 1]) / h[n - 1]);
    let m = a.lu().solve(&b).unwrap();
    let i = (0..n).find(|&i| t <= knots[i + 1].0).unwrap_or(n - 1);
    let (t0, t1, hi) = (knots[i].0, knots[i + 1].0, h[i]);
    m[i] * (t1 - t).powi(3) / (6.0 * hi)
        + m[i + 1] * (t - t0).powi(3) / (6.0 * hi)
        + (y[i] / hi - m[i] * hi / 6.0) * (t1 - t)
        + (y[i + 1] / hi - m[i + 1] * hi / 6.0) * (t - t0)
}

#[test]
fn the_euclidean_spline_converges_to_the_clamped_cubic_spline_at_second_order() {
    let text = example_text("variational_cubic_spline.toml");
    // x: (0, 0) → 0.5 → 0.6 → 1 with slopes 1, 0; y: 0 → −0.2 → 0.9 → 1, slopes 0, 1.
    let x_knots = [(0.0, 0.0), (0.25, 0.5), (0.75, 0.6), (1.0, 1.0)];
    let y_knots = [(0.0, 0.0), (0.25, -0.2), (0.75, 0.9), (1.0, 1.0)];
    let mut errors = Vec::new();
    for h in [0.05, 0.025, 0.0125, 0.00625] {
        let plan = plan(&text, &[&format!("scheme.h={h}")]);
        let member = &run(&plan)[0];
        assert_eq!(total(&plan, member, "status"), 0.0);
        let path = channel(&plan, member, "path");
        let mut error = 0.0_f64;
        for (k, q) in path.chunks(2).enumerate() {
            let t = k as f64 * h;
            error = error
                .max((q[0] - clamped_spline(&x_knots, 1.0, 0.0, t)).abs())
                .max((q[1] - clamped_spline(&y_knots, 0.0, 1.0, t)).abs());
        }
        // The knots are hit exactly.
        assert_eq!(&path[2 * (0.25 / h).round() as usize..][..2], &[0.5, -0.2]);
        errors.push(error);
    }
    let orders = orders(&errors);
    eprintln!("spline errors {errors:?}, orders {orders:.3?}");
    let last = *orders.last().unwrap();
    assert!((last - 2.0).abs() <= 0.3, "order {last:.3}");
}

#[test]
fn the_clamped_beam_converges_to_its_exact_deflection_at_second_order() {
    let text = example_text("variational_beam.toml");
    let (mu, rho, l) = (2.0, 3.0, 1.0);
    let exact = |s: f64| rho * s * s * (l - s) * (l - s) / (24.0 * mu);
    let mut errors = Vec::new();
    for h in [0.05, 0.025, 0.0125, 0.00625] {
        let plan = plan(&text, &[&format!("scheme.h={h}")]);
        let member = &run(&plan)[0];
        let path = channel(&plan, member, "path");
        let error = path
            .iter()
            .enumerate()
            .map(|(k, y)| (y - exact(k as f64 * h)).abs())
            .fold(0.0_f64, f64::max);
        errors.push(error);
    }
    let orders = orders(&errors);
    eprintln!("beam errors {errors:?}, orders {orders:.3?}");
    assert!(orders.iter().all(|&o| o >= 1.9), "orders {orders:.3?}");
}

#[test]
fn the_midpoint_rule_converges_at_second_order_on_the_forced_oscillator() {
    let text = example_text("variational_forced_oscillator.toml");
    let (omega, f, big_omega, t_end) = (1.0_f64, 0.5, 0.7_f64, 20.0);
    let particular = f / (omega * omega - big_omega * big_omega);
    let exact = (1.0 - particular) * (omega * t_end).cos() + particular * (big_omega * t_end).cos();
    let mut errors = Vec::new();
    for h in [0.04, 0.02, 0.01, 0.005] {
        let plan = plan(&text, &[&format!("scheme.h={h}")]);
        let member = &run(&plan)[0];
        errors.push((member.final_state[0] - exact).abs());
    }
    let orders = orders(&errors);
    eprintln!("forced oscillator errors {errors:?}, orders {orders:.3?}");
    assert!(
        orders.iter().all(|&o| (o - 2.0).abs() <= 0.3),
        "orders {orders:.3?}"
    );
}

/// 10⁵ steps of an eccentric orbit: J = x p_y − y p_x conserved to ≤ 1e-12 relative; the
/// energy error oscillates without drift (its largest deviation over the whole run is no
/// larger than over the first tenth, up to 10 %).
#[test]
fn the_central_potential_conserves_angular_momentum_over_1e5_steps() {
    let text = example_text("variational_central_potential.toml");
    let plan = plan(&text, &["scheme.t_end=1000.0", "output.every=10"]);
    assert_eq!(plan.grid().steps, 100_000);
    let member = &run(&plan)[0];
    let j0 = total(&plan, member, "momentum_first");
    let drift = total(&plan, member, "momentum_max_abs_change");
    eprintln!("J0 = {j0}, max |J − J0| = {drift:e}");
    assert!(drift <= 1e-12 * j0.abs(), "momentum drift {drift:e}");
    let energy = channel(&plan, member, "energy");
    let e0 = total(&plan, member, "energy_first");
    let deviation = |values: &[f64]| values.iter().fold(0.0_f64, |m, e| m.max((e - e0).abs()));
    let (early, whole) = (deviation(&energy[..energy.len() / 10]), deviation(energy));
    eprintln!("energy deviation: first tenth {early:e}, whole run {whole:e}");
    assert!(
        whole <= 1.1 * early && whole < 1e-3 * e0.abs(),
        "energy drifts: {early:e} → {whole:e}"
    );
}

#[test]
fn sphere_splines_stay_on_the_sphere_and_hit_their_knots() {
    let text =
        std::fs::read_to_string(common::example_path("variational_sphere_spline.toml")).unwrap();
    let plan = plan(&text, &["ensemble.members=64"]);
    let members = run(&plan);
    for (i, member) in members.iter().enumerate() {
        assert_eq!(total(&plan, member, "status"), 0.0, "member {i}");
        assert!(
            total(&plan, member, "constraint_residual_max") <= 1e-12,
            "member {i}"
        );
        assert!(
            total(&plan, member, "equation_residual_max") <= 1e-10,
            "member {i}"
        );
        let path = channel(&plan, member, "path");
        for q in path.chunks(3) {
            let radius2 = q.iter().map(|v| v * v).sum::<f64>();
            assert!(
                (radius2 - 1.0).abs() <= 1e-12,
                "member {i}: |q|² = {radius2}"
            );
        }
        let drawn = plan.member(i).unwrap();
        let harbor::variational::MemberProblem::BoundaryValue(data) = &drawn.problem else {
            unreachable!()
        };
        let (k, knot) = &data.knots[0];
        let hit = &path[3 * k..3 * k + 3];
        let miss = hit
            .iter()
            .zip(knot)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(miss <= 1e-12, "member {i}: knot missed by {miss:e}");
        let knot_radius2: f64 = knot.iter().map(|v| v * v).sum();
        assert!(
            (knot_radius2 - 1.0).abs() <= 1e-14,
            "drawn knots are projected"
        );
    }
    // The drawn knots differ between members.
    assert_ne!(plan.member(0).unwrap(), plan.member(1).unwrap());
    // Member i depends only on (seed, i).
    let small = plan_from_config(&config_text(&text, &["ensemble.members=4"]).unwrap()).unwrap();
    assert_eq!(small.member(3).unwrap(), plan.member(3).unwrap());
}

#[test]
fn bad_problems_are_refused_naming_the_field() {
    let sphere =
        std::fs::read_to_string(common::example_path("variational_sphere_spline.toml")).unwrap();
    let cases: [(&[&str], &[&str]); 10] = [
        (
            &["ensemble.members=9223372036854775807"],
            &["ensemble.members", "exceeds 2³² − 1"],
        ),
        (
            &["scheme.h=1e-7"],
            &[
                "scheme.h",
                "boundary-value solve over 10000000 steps",
                "MAX_SOLVE_BYTES",
            ],
        ),
        (
            &["problem.knots=[{t = 0.505, q = [0.6, 0.8, 0.0]}]"],
            &["problem.knots[0].t", "not a grid point"],
        ),
        (
            &["problem.knots=[{t = 0.5, q = [0.6, 0.9, 0.0]}]"],
            &[
                "problem.knots[0].q",
                "violates system.constraints[0]",
                "inconsistent",
            ],
        ),
        (
            &["problem.start={q = [1.0, 0.0, 0.0], qd = [1.0, 1.0, 0.0]}"],
            &["problem.start.qd", "not tangent"],
        ),
        (
            &["problem.start={q = [1.0, 0.0, 0.0]}"],
            &["problem.start.qd", "required"],
        ),
        (
            &["problem.rule='midpoint'"],
            &["problem.rule", "order 1", "system.order is 2"],
        ),
        (
            &["problem={kind = 'initial-value', q0 = [1.0, 0.0, 0.0], qd0 = [0.0, 1.0, 0.0]}"],
            &["problem.qdd0", "required", "fourth order"],
        ),
        (
            &["system.lagrangian='xdd^2 + qq'"],
            &["system.lagrangian", "qq"],
        ),
        (
            &["scheme.family='gauss'"],
            &["scheme.family", "variational"],
        ),
    ];
    for (set, parts) in cases {
        let e = refusal(&sphere, set);
        common::assert_mentions(&e, parts);
    }
    // Members beyond 2³² − 1 are refused before any work (the fuzzer found a
    // port-Hamiltonian run with 2⁶³ − 1 members aborting on an allocation).
    let e = common::simulate_fails_with(
        &common::example_path("pendulum_damped_forced.toml"),
        &["ensemble.members=9223372036854775807"],
    );
    common::assert_mentions(&e, &["ensemble.members", "exceeds 2³² − 1"]);
    // A [problem] in a config of another kind.
    let e = common::simulate_fails_with(
        &common::example_path("pendulum_damped_forced.toml"),
        &["problem={kind = 'initial-value'}"],
    );
    common::assert_mentions(&e, &["problem", "remove the section"]);
    // A missing [problem].
    let text = example_text("variational_beam.toml");
    let without = text.split_once("[problem]").unwrap().0.to_string()
        + text
            .split_once("[scheme]")
            .map(|(_, s)| format!("[scheme]{s}"))
            .unwrap()
            .as_str();
    common::assert_mentions(&refusal(&without, &[]), &["problem", "is missing"]);
}

/// A Lagrangian that is a total derivative (L = x ẋ) has a discrete Lagrangian with
/// D₁D₂L_d = 0: the Newton matrix is singular, and the member is flagged (status 2 at
/// step 1) rather than given a made-up path.
#[test]
fn a_degenerate_lagrangian_is_flagged_as_singular() {
    let text = example_text("variational_forced_oscillator.toml");
    let plan = plan(&text, &["system.lagrangian='x*xd'"]);
    let member = &run(&plan)[0];
    assert_eq!(total(&plan, member, "status"), 2.0);
    assert_eq!(total(&plan, member, "failed_step"), 1.0);
    assert_eq!(member.nonfinite_step, Some(1));
}

/// `harbor simulate` writes path.npy (members × points × d), multipliers.npy and the
/// totals under `variational` in summary.json; `harbor plot` draws the paths.
#[test]
fn simulate_writes_the_path_and_the_multipliers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let config = common::example_path("variational_sphere_spline.toml");
    let output = common::run_harbor(&[
        "simulate",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "ensemble.members=3",
        "--set",
        "scheme.h=0.05",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let header = |name: &str| {
        let bytes = std::fs::read(out.join(name)).unwrap();
        String::from_utf8_lossy(&bytes[..128]).into_owned()
    };
    assert!(
        header("path.npy").contains("'shape': (3, 21, 3)"),
        "{}",
        header("path.npy")
    );
    assert!(
        header("multipliers.npy").contains("'shape': (3, 21, 1)"),
        "{}",
        header("multipliers.npy")
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let text = summary.to_string();
    assert!(
        text.contains("constraint_residual_max") && text.contains("newton_iterations"),
        "{text}"
    );
}

/// The cart-pole moved from rest to rest minimising ∫ u²/2 (the unactuated equation as a
/// second-order constraint): the cost converges under refinement at second order (its
/// successive differences shrink by 4), the constraint holds to round-off, and the path
/// ends at rest where it should.
#[test]
fn the_cart_pole_cost_converges_at_second_order() {
    let text = example_text("variational_cart_pole.toml");
    let mut costs = Vec::new();
    for h in [0.04, 0.02, 0.01, 0.005] {
        let plan = plan(&text, &[&format!("scheme.h={h}")]);
        let member = &run(&plan)[0];
        assert_eq!(total(&plan, member, "status"), 0.0, "h = {h}");
        assert!(
            total(&plan, member, "constraint_residual_max") <= 1e-10,
            "h = {h}"
        );
        assert_eq!(member.final_state, vec![1.0, 0.0]);
        let u = channel(&plan, member, "observables");
        assert_eq!(u.len(), plan.grid().record_points().len() + 1);
        assert!(u.iter().all(|v| v.is_finite()));
        costs.push(total(&plan, member, "action"));
    }
    let differences: Vec<f64> = costs.windows(2).map(|c| (c[1] - c[0]).abs()).collect();
    let orders = orders(&differences);
    eprintln!("cart-pole ∫u²/2 {costs:?}, observed orders {orders:.3?}");
    assert!(
        orders.iter().all(|&o| (o - 2.0).abs() <= 0.3),
        "orders {orders:.3?}"
    );
}

/// Generalised forces by the Lagrange–d'Alembert principle: the damped oscillator
/// L = ½ẋ² − ½x² with the force −c ẋ converges to x'' + c x' + x = 0 at second order (the
/// Jacobian of the force enters Newton exactly); a second-order model takes no forces.
#[test]
fn forces_damp_the_oscillator_at_second_order() {
    let text = example_text("variational_forced_oscillator.toml");
    let c = 0.3_f64;
    let set = [
        "system.lagrangian='xd^2/2 - x^2/2'",
        "system.forces=['-F*xd']",
        "system.parameters={omega = 1.0, F = 0.3, Omega = 0.7}",
    ];
    let t_end = 20.0_f64;
    let omega = (1.0 - c * c / 4.0).sqrt();
    let exact = (-c * t_end / 2.0).exp()
        * ((omega * t_end).cos() + c / (2.0 * omega) * (omega * t_end).sin());
    let mut errors = Vec::new();
    for h in [0.04, 0.02, 0.01, 0.005] {
        let h_set = format!("scheme.h={h}");
        let overrides: Vec<&str> = set.iter().copied().chain([h_set.as_str()]).collect();
        let plan = plan(&text, &overrides);
        let member = &run(&plan)[0];
        assert_eq!(total(&plan, member, "status"), 0.0);
        errors.push((member.final_state[0] - exact).abs());
    }
    let orders = orders(&errors);
    eprintln!("damped by a force: errors {errors:?}, orders {orders:.3?}");
    assert!(
        orders.iter().all(|&o| (o - 2.0).abs() <= 0.3),
        "orders {orders:.3?}"
    );
    let e = refusal(
        &example_text("variational_beam.toml"),
        &["system.forces=['0']"],
    );
    common::assert_mentions(&e, &["system.forces", "first-order"]);
}

/// x(t) = A cos ω₁t + B sin ω₁t + C cos ω₂t + D sin ω₂t with x, ẋ, ẍ, x⃛ at 0 given: the
/// Pais–Uhlenbeck oscillator's exact solution.
fn pais_uhlenbeck(w1: f64, w2: f64, data: [f64; 4], t: f64) -> f64 {
    let [x, v, a, j] = data;
    // A + C = x, −ω₁²A − ω₂²C = a; ω₁B + ω₂D = v, −ω₁³B − ω₂³D = j.
    let c = (a + w1 * w1 * x) / (w1 * w1 - w2 * w2);
    let big_a = x - c;
    let d = (j + w1 * w1 * v) / (w1 * w1 * w2 - w2 * w2 * w2);
    let b = (v - w2 * d) / w1;
    big_a * (w1 * t).cos() + b * (w1 * t).sin() + c * (w2 * t).cos() + d * (w2 * t).sin()
}

/// A second-order initial-value problem (a fourth-order equation) converges to the exact
/// Pais–Uhlenbeck solution at order 2 from all four data, and the Ostrogradsky energy
/// approaches the exact one at order 2, its largest change over the run too.
#[test]
fn the_pais_uhlenbeck_oscillator_converges_at_second_order() {
    let text = example_text("variational_pais_uhlenbeck.toml");
    let data = [1.0, 0.3, -2.5, -0.7];
    let set = ["problem.qd0=[0.3]", "problem.qddd0=[-0.7]"];
    let (mut errors, mut energy_changes) = (Vec::new(), Vec::new());
    // The exact energy E = p₀ẋ + p₁ẍ − L with p₁ = ẍ, p₀ = −5ẋ − x⃛ (ω₁ = 1, ω₂ = 2).
    let [x, v, a, j] = data;
    let exact_energy = (-5.0 * v - j) * v + a * a - (a * a - 5.0 * v * v + 4.0 * x * x) / 2.0;
    for h in [0.04_f64, 0.02, 0.01, 0.005] {
        let every = format!("output.every={}", (0.2 / h).round() as usize);
        let step = format!("scheme.h={h}");
        let overrides: Vec<&str> = set.iter().copied().chain([&*step, &*every]).collect();
        let plan = plan(&text, &overrides);
        let member = &run(&plan)[0];
        assert_eq!(total(&plan, member, "status"), 0.0);
        let path = channel(&plan, member, "path");
        let error = path
            .iter()
            .enumerate()
            .map(|(r, x)| (x - pais_uhlenbeck(1.0, 2.0, data, r as f64 * 0.2)).abs())
            .fold(0.0, f64::max);
        errors.push(error);
        energy_changes.push(total(&plan, member, "energy_max_abs_change"));
        let first = total(&plan, member, "energy_first");
        assert!(
            (first - exact_energy).abs() <= 20.0 * h * h,
            "h = {h}: E = {first}, exact {exact_energy}"
        );
    }
    let (orders, energy_orders) = (orders(&errors), orders(&energy_changes));
    eprintln!(
        "Pais–Uhlenbeck errors {errors:?}, orders {orders:.3?}; largest energy changes {energy_changes:?}, orders {energy_orders:.3?}"
    );
    assert!(
        orders.iter().all(|&o| (o - 2.0).abs() <= 0.3),
        "orders {orders:.3?}"
    );
    assert!(
        energy_orders.iter().all(|&o| (o - 2.0).abs() <= 0.3),
        "energy orders {energy_orders:.3?}"
    );
}

/// A cubic on the sphere as an initial-value problem: every point on the sphere to
/// round-off, the discrete equations solved, the momentum map of rotations about z
/// conserved to round-off, and self-convergence at second order. (With the ambient
/// acceleration in L the continuous solution, q⁗ = λq with λ = −4 q̇·q⃛ − 3|q̈|², blows up
/// near t = 1.45 from these data — an RK4 solve at h = 1e-4 shows it, and the discrete
/// paths follow it there — so the run stops at t = 1.)
#[test]
fn a_sphere_cubic_initial_value_problem_stays_on_the_sphere_at_second_order() {
    let text = r#"
[system]
kind = "variational"
coordinates = ["x", "y", "z"]
order = 2
lagrangian = "(xdd^2 + ydd^2 + zdd^2)/2"
constraints = ["x^2 + y^2 + z^2 - 1"]
symmetry = ["-y", "x", "0"]

[problem]
kind = "initial-value"
q0 = [1.0, 0.0, 0.0]
qd0 = [0.0, 1.0, 0.0]
qdd0 = [-1.0, 0.0, 0.5]
qddd0 = [0.0, -0.3, 0.2]

[scheme]
family = "variational"
h = 0.01
t_end = 1.0
"#;
    let mut finals = Vec::new();
    for h in [0.02_f64, 0.01, 0.005, 0.0025] {
        let plan = plan(text, &[&format!("scheme.h={h}")]);
        let member = &run(&plan)[0];
        assert_eq!(
            total(&plan, member, "status"),
            0.0,
            "h = {h}: failed at step {}",
            total(&plan, member, "failed_step")
        );
        assert!(total(&plan, member, "constraint_residual_max") <= 1e-12);
        assert!(total(&plan, member, "equation_residual_max") <= 1e-10);
        for q in channel(&plan, member, "path").chunks(3) {
            let radius2: f64 = q.iter().map(|v| v * v).sum();
            assert!((radius2 - 1.0).abs() <= 1e-12, "|q|² = {radius2}");
        }
        let j0 = total(&plan, member, "momentum_first");
        let drift = total(&plan, member, "momentum_max_abs_change");
        eprintln!("h = {h}: J0 = {j0}, max |J − J0| = {drift:e}");
        // J is a sum of products of O(1/h) discrete momenta (p_k, π_{k+1} ~ ∂L/∂q̈ / h)
        // whose O(1) total keeps their absolute round-off: conserved to 1e-12 of them.
        assert!(
            drift <= 1e-12 * j0.abs().max(1.0) / h,
            "momentum drift {drift:e}"
        );
        finals.push(member.final_state.clone());
    }
    let gaps: Vec<f64> = finals
        .windows(2)
        .map(|f| {
            f[0].iter()
                .zip(&f[1])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        })
        .collect();
    let orders = orders(&gaps);
    eprintln!("sphere cubic IVP gaps {gaps:?}, orders {orders:.3?}");
    assert!(
        orders.iter().all(|&o| (o - 2.0).abs() <= 0.3),
        "orders {orders:.3?}"
    );
}

#[test]
fn second_order_initial_values_are_checked() {
    let text = example_text("variational_pais_uhlenbeck.toml");
    common::assert_mentions(
        &refusal(&text, &["problem.qddd0=[1.0, 2.0]"]),
        &["problem.qddd0", "2 entries", "d = 1"],
    );
    let first_order = example_text("variational_forced_oscillator.toml");
    common::assert_mentions(
        &refusal(&first_order, &["problem.qdd0=[1.0]"]),
        &["problem.qdd0", "second-order Lagrangians"],
    );
    let cart_pole = example_text("variational_cart_pole.toml");
    let ivp = "problem={kind = 'initial-value', q0 = [0.0, 0.0], qd0 = [0.0, 0.0], qdd0 = [0.0, 0.0], qddd0 = [0.0, 0.0]}";
    common::assert_mentions(
        &refusal(&cart_pole, &[ivp]),
        &[
            "system.constraints[0]",
            "multipliers' initial values",
            "boundary-value",
        ],
    );
}

/// Boundary-value paths report the energy and the momentum map of every step: between
/// knots a discrete cubic spline keeps its Ostrogradsky energy and its linear momentum
/// (ξ = a translation) to round-off, and a knot changes them; a sphere spline without knots
/// keeps the momentum map of rotations about the z axis (which its ends' data break
/// nothing of: J is conserved whatever the boundary values) to round-off.
#[test]
fn boundary_value_paths_keep_energy_and_momentum_between_knots() {
    let text = example_text("variational_cubic_spline.toml");
    let no_knots = plan(&text, &["problem.knots=[]", "system.symmetry=['1', '0']"]);
    let member = &run(&no_knots)[0];
    let energy = channel(&no_knots, member, "energy");
    let momentum = channel(&no_knots, member, "momentum");
    assert_eq!(energy.len(), no_knots.grid().steps);
    let spread = |values: &[f64]| {
        let (lo, hi) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        hi - lo
    };
    // Both are third differences of the path (÷ h³): their round-off is ~1e-16/h³.
    let h = no_knots.grid().h;
    let round_off = 1e-15 / (h * h * h);
    let scale = energy[0].abs().max(1.0);
    eprintln!(
        "cubic spline: energy {} spread {:e}, momentum {} spread {:e}",
        energy[0],
        spread(energy),
        momentum[0],
        spread(momentum)
    );
    assert!(
        spread(energy) <= round_off * scale,
        "energy spread {:e}",
        spread(energy)
    );
    assert!(spread(momentum) <= round_off * momentum[0].abs().max(1.0));
    assert_eq!(
        total(&no_knots, member, "energy_max_abs_change"),
        energy
            .iter()
            .fold(0.0, |m, e| f64::max(m, (e - energy[0]).abs()))
    );
    // With its knots the energy and momentum are constant on each piece and jump at knots.
    let knotted = plan(&text, &["system.symmetry=['1', '0']"]);
    let member = &run(&knotted)[0];
    let momentum = channel(&knotted, member, "momentum");
    let h = knotted.grid().h;
    let (first_knot, second_knot) = ((0.25 / h).round() as usize, (0.75 / h).round() as usize);
    // Step k ends at q_k; its J is that of the path ending at q_{k+1}: pieces [1, knot − 1].
    let pieces = [
        &momentum[..first_knot - 1],
        &momentum[first_knot..second_knot - 1],
        &momentum[second_knot..],
    ];
    for piece in pieces {
        assert!(
            spread(piece) <= round_off * piece[0].abs().max(1.0),
            "piece spread {:e}",
            spread(piece)
        );
    }
    assert!(
        (pieces[0][0] - pieces[1][0]).abs() > 1e-3,
        "a knot changes J"
    );
    // Sphere splines without knots: J_z of rotations conserved.
    let sphere =
        std::fs::read_to_string(common::example_path("variational_sphere_spline.toml")).unwrap();
    let plan = plan(
        &sphere,
        &[
            "problem.knots=[]",
            "ensemble.members=2",
            "system.symmetry=['-y', 'x', '0']",
        ],
    );
    for member in run(&plan) {
        let j0 = total(&plan, &member, "momentum_first");
        let drift = total(&plan, &member, "momentum_max_abs_change");
        assert!(
            drift <= 1e-12 * j0.abs().max(1.0) / plan.grid().h,
            "drift {drift:e}"
        );
        let energy = channel(&plan, &member, "energy");
        eprintln!(
            "sphere spline: J {j0} drift {drift:e}; energy {} … {}",
            energy[0],
            energy[energy.len() - 1]
        );
    }
}
