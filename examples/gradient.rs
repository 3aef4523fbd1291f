//! The cost of candidate port-Hamiltonian models against measured outputs, and its exact
//! discrete-adjoint gradient with respect to w = (J, R, Q, B, x0), for a batch of
//! candidates in one pass; checked against a central finite difference of the cost.
//!
//! The data d_k are the outputs y_k = Bᵀ Q x_k of a reference mass–spring–damper chain
//! (n = 4, m = 1) under a chirp; the candidates are that chain with R and B perturbed. The
//! cost is 𝒥(w) = ½ Σ_k h |y_k(w) − d_k|².
//!
//! ```text
//! cargo run --release --example gradient
//! ```

use harbor::backend::Backend;
use harbor::identify::{evaluate, simulate_outputs};
use harbor::kernels::CpuPath;
use harbor::linear_ph::chain::{chain_initial_state, mass_spring_damper_chain};
use harbor::linear_ph::{
    GradientPlan, LinearPh, LinearPhMember, LinearPhPlan, Parameters, Quadrature, Regularization,
};
use harbor::model::Signal;
use harbor::plan::MemoryBudget;
use harbor::tableau::{Scheme, SchemeFamily};
use nalgebra::DMatrix;

/// `base` with R scaled by `r` and B by `b`.
fn candidate(base: &LinearPhMember, r: f64, b: f64) -> harbor::Result<LinearPhMember> {
    let s = &base.system;
    Ok(LinearPhMember {
        system: LinearPh::new("candidate", s.j.clone(), &s.r * r, s.q.clone(), &s.b * b)?,
        x0: base.x0.clone(),
    })
}

fn main() -> harbor::Result<()> {
    let reference = LinearPhMember {
        system: mass_spring_damper_chain(2, 1.0, 0.5)?,
        x0: chain_initial_state(2),
    };
    let chirp = Signal::Chirp {
        amplitude: 1.0,
        f0: 0.1,
        f1: 1.0,
        t1: 5.0,
        phi_rad: 0.0,
    };
    let scheme = Scheme::new(SchemeFamily::Gauss, 2)?;
    let (h, t_end) = (0.01, 5.0);
    let model = |members: Vec<LinearPhMember>| {
        LinearPhPlan::new(
            scheme.clone(),
            h,
            t_end,
            members,
            std::slice::from_ref(&chirp),
            1,
        )
    };
    // The measured outputs: the reference's, without noise.
    let data = simulate_outputs(&model(vec![reference.clone()])?, &reference, None)?;

    // Three candidates, evaluated together.
    let candidates = vec![
        candidate(&reference, 1.0, 1.0)?,
        candidate(&reference, 1.5, 0.8)?,
        candidate(&reference, 0.5, 1.2)?,
    ];
    let plan = |members| {
        GradientPlan::new(
            model(members)?,
            data.clone(),
            Quadrature::Left,
            None,
            Regularization::none(4, 1),
        )
    };
    let backend = Backend::Cpu(CpuPath::Fast);
    let budget = MemoryBudget::default();
    let evaluations = evaluate(&backend, &plan(candidates.clone())?, &budget)?;
    for (i, e) in evaluations.iter().enumerate() {
        println!(
            "candidate {i}: cost {:.6e}, |∂𝒥/∂R| = {:.3e}, |∂𝒥/∂B| = {:.3e}",
            e.cost,
            e.gradient.r.norm(),
            e.gradient.b.norm()
        );
    }
    assert!(
        evaluations[0].cost < 1e-20,
        "the reference fits its own data"
    );

    // The directional derivative along D (B's entries) against central differences.
    let w = &candidates[1];
    let mut direction = Parameters::zeros(4, 1);
    direction.b = DMatrix::from_fn(4, 1, |i, _| 1.0 - 0.5 * i as f64);
    let moved = |t: f64| -> harbor::Result<f64> {
        let mut member = w.clone();
        member.system = LinearPh::new(
            "moved",
            w.system.j.clone(),
            w.system.r.clone(),
            w.system.q.clone(),
            &w.system.b + &direction.b * t,
        )?;
        Ok(evaluate(&backend, &plan(vec![member])?, &budget)?[0].cost)
    };
    let step = 1e-5;
    let finite = (moved(step)? - moved(-step)?) / (2.0 * step);
    let adjoint = evaluations[1].gradient.dot(&direction);
    let relative = (finite - adjoint).abs() / adjoint.abs();
    println!(
        "⟨∇𝒥, D⟩ = {adjoint:.10e}, central difference {finite:.10e} (relative {relative:.1e})"
    );
    assert!(relative < 1e-6, "the gradient disagrees: {relative:e}");
    Ok(())
}
