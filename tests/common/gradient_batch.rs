//! A batch of gradient candidates for the adjoint's tests: candidates drawn like an
//! ensemble around a random nominal model, data simulated from another random model.

use harbor::identify::simulate_outputs;
use harbor::linear_ph::Regularization;
use harbor::linear_ph::{
    Draw, DrawnLinearPhEnsemble, GradientPlan, LinearPhEnsembleSpec, LinearPhMember, LinearPhPlan,
    Quadrature,
};
use harbor::model::Signal;
use harbor::tableau::{Scheme, SchemeFamily};
use rand::Rng;

pub fn signals(m: usize) -> Vec<Signal> {
    (0..m)
        .map(|c| Signal::Harmonic {
            amplitude: 1.0,
            omega: 2.0 * std::f64::consts::PI * (3.0 + 2.0 * c as f64),
            phase: 0.3 * c as f64,
            offset: 0.0,
        })
        .collect()
}

/// `members` candidates drawn around a random nominal, data from another random model.
pub fn plan(
    rng: &mut rand_chacha::ChaCha8Rng,
    n: usize,
    m: usize,
    stages: usize,
    steps: usize,
    members: usize,
    checkpoint_every: Option<usize>,
) -> GradientPlan {
    plan_with_inputs(
        rng,
        n,
        &signals(m),
        stages,
        steps,
        members,
        checkpoint_every,
    )
}

/// [`plan`] driven by `inputs` (m = their number).
pub fn plan_with_inputs(
    rng: &mut rand_chacha::ChaCha8Rng,
    n: usize,
    inputs: &[Signal],
    stages: usize,
    steps: usize,
    members: usize,
    checkpoint_every: Option<usize>,
) -> GradientPlan {
    let m = inputs.len();
    let scheme = Scheme::new(SchemeFamily::Gauss, stages).unwrap();
    let h = 1.0 / steps as f64;
    let (system, x0) = super::random_linear_ph(rng, n, m, 1.0);
    let nominal = LinearPhMember { system, x0 };
    let spec = LinearPhEnsembleSpec {
        members,
        seed: rng.random(),
        j: Draw::Perturb { sigma: 0.2 },
        r: Draw::Perturb { sigma: 0.2 },
        q: Draw::Perturb { sigma: 0.2 },
        b: Draw::Perturb { sigma: 0.2 },
        x0: Draw::Perturb { sigma: 0.2 },
    };
    let ensemble = DrawnLinearPhEnsemble::new(nominal, spec, None).unwrap();
    let model = LinearPhPlan::new(scheme, h, 1.0, ensemble, inputs, steps).unwrap();
    let (reference, x_ref) = super::random_linear_ph(rng, n, m, 1.0);
    let data = simulate_outputs(
        &model,
        &LinearPhMember {
            system: reference,
            x0: x_ref,
        },
        None,
    )
    .unwrap();
    GradientPlan::new(
        model,
        data,
        Quadrature::Trapezoid,
        checkpoint_every,
        Regularization::none(n, m),
    )
    .unwrap()
}
