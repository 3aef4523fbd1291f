//! The discrete adjoint gradient against central finite differences of the discrete cost,
//! along random directions tangent to each structure (J skew, R and Q symmetric, B and x0
//! free), for each part separately and for all together, on random problems (n = 3…20,
//! Gauss s = 1…4, both quadratures, with and without regularisation, Q's distance Euclidean
//! or log), relative to
//! max(|⟨∇𝒥, D⟩|, 1e-2 ‖∇𝒥‖ ‖D‖). Run with `--nocapture` for the table.

mod common;

use harbor::backend::Backend;
use harbor::identify::{Evaluation, evaluate, simulate_outputs};
use harbor::kernels::CpuPath;
use harbor::linear_ph::LinearPh;
use harbor::linear_ph::{GradientPlan, LinearPhMember, LinearPhPlan, Parameters, Quadrature};
use harbor::linear_ph::{Parts, QDistance, Regularization};
use harbor::model::Signal;
use harbor::plan::MemoryBudget;
use harbor::tableau::{Scheme, SchemeFamily};
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The identification inputs of the seed: a linear chirp 3 → 20 Hz over [0, 1] and
/// sin 2π·3t (every further channel a sine of another frequency).
pub fn signals(m: usize) -> Vec<Signal> {
    (0..m)
        .map(|c| match c {
            0 => Signal::Chirp {
                amplitude: 1.0,
                f0: 3.0,
                f1: 20.0,
                t1: 1.0,
                phi_rad: 0.0,
            },
            _ => Signal::Harmonic {
                amplitude: 1.0,
                omega: 2.0 * std::f64::consts::PI * (3.0 * c as f64),
                phase: 0.0,
                offset: 0.0,
            },
        })
        .collect()
}

/// One random problem.
struct Problem {
    n: usize,
    m: usize,
    stages: usize,
    h: f64,
    t_end: f64,
    quadrature: Quadrature,
    regularization: f64,
    q_distance: QDistance,
}

fn member(system: LinearPh, x0: DVector<f64>) -> LinearPhMember {
    LinearPhMember { system, x0 }
}

fn moved(w: &LinearPhMember, d: &Parameters, t: f64) -> LinearPhMember {
    let s = &w.system;
    member(
        LinearPh::new(
            "moved",
            &s.j + &d.j * t,
            &s.r + &d.r * t,
            &s.q + &d.q * t,
            &s.b + &d.b * t,
        )
        .unwrap(),
        &w.x0 + &d.x0 * t,
    )
}

fn structured_direction(rng: &mut ChaCha8Rng, n: usize, m: usize) -> Parameters {
    let mut g = |r: usize, c: usize| DMatrix::from_fn(r, c, |_, _| rng.random_range(-1.0..1.0));
    let a = g(n, n);
    let b = g(n, n);
    let c = g(n, n);
    Parameters {
        j: &a - a.transpose(),
        r: (&b + b.transpose()) * 0.5,
        q: (&c + c.transpose()) * 0.5,
        b: g(n, m),
        x0: DVector::from_column_slice(g(n, 1).as_slice()),
    }
}

/// Only part `keep` of `d` (or all of it for "all").
fn only(d: &Parameters, keep: &str) -> Parameters {
    let mut out = Parameters::zeros(d.x0.len(), d.b.ncols());
    match keep {
        "J" => out.j = d.j.clone(),
        "R" => out.r = d.r.clone(),
        "Q" => out.q = d.q.clone(),
        "B" => out.b = d.b.clone(),
        "x0" => out.x0 = d.x0.clone(),
        _ => out = d.clone(),
    }
    out
}

struct Setup {
    scheme: Scheme,
    h: f64,
    t_end: f64,
    signals: Vec<Signal>,
    data: harbor::linear_ph::OutputData,
    quadrature: Quadrature,
    regularization: Regularization,
}

impl Setup {
    fn evaluate(&self, candidate: &LinearPhMember) -> Evaluation {
        let model = LinearPhPlan::new(
            self.scheme.clone(),
            self.h,
            self.t_end,
            vec![candidate.clone()],
            &self.signals,
            1,
        )
        .unwrap();
        let plan = GradientPlan::new(
            model,
            self.data.clone(),
            self.quadrature,
            None,
            self.regularization.clone(),
        )
        .unwrap();
        let mut out = evaluate(
            &Backend::Cpu(CpuPath::Fast),
            &plan,
            &MemoryBudget::default(),
        )
        .unwrap();
        out.pop().unwrap()
    }
}

#[test]
fn the_gradient_matches_central_differences_along_structured_directions() {
    let mut rng = common::fresh_rng("gradient finite differences");
    let problems = [
        Problem {
            n: 5,
            m: 2,
            stages: 2,
            h: 1e-3,
            t_end: 1.0,
            quadrature: Quadrature::Left,
            regularization: 0.0,
            q_distance: QDistance::Euclidean,
        },
        Problem {
            n: 3,
            m: 1,
            stages: 1,
            h: 2e-3,
            t_end: 1.0,
            quadrature: Quadrature::Trapezoid,
            regularization: 0.3,
            q_distance: QDistance::Euclidean,
        },
        Problem {
            n: 8,
            m: 2,
            stages: 3,
            h: 5e-3,
            t_end: 1.0,
            quadrature: Quadrature::Left,
            regularization: 0.0,
            q_distance: QDistance::Euclidean,
        },
        Problem {
            n: 6,
            m: 3,
            stages: 4,
            h: 5e-3,
            t_end: 0.5,
            quadrature: Quadrature::Trapezoid,
            regularization: 0.01,
            q_distance: QDistance::Log,
        },
        Problem {
            n: 20,
            m: 2,
            stages: 1,
            h: 5e-3,
            t_end: 0.5,
            quadrature: Quadrature::Left,
            regularization: 0.0,
            q_distance: QDistance::Euclidean,
        },
        Problem {
            n: 20,
            m: 2,
            stages: 2,
            h: 5e-3,
            t_end: 0.5,
            quadrature: Quadrature::Trapezoid,
            regularization: 0.0,
            q_distance: QDistance::Euclidean,
        },
        Problem {
            n: 20,
            m: 2,
            stages: 3,
            h: 5e-3,
            t_end: 0.5,
            quadrature: Quadrature::Left,
            regularization: 0.1,
            q_distance: QDistance::Log,
        },
        Problem {
            n: 20,
            m: 2,
            stages: 4,
            h: 5e-3,
            t_end: 0.5,
            quadrature: Quadrature::Left,
            regularization: 0.0,
            q_distance: QDistance::Euclidean,
        },
    ];
    println!(
        "| n | m | s | N | quadrature | λ | Q distance | part | ⟨∇𝒥, D⟩ | central difference | relative difference |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut worst: f64 = 0.0;
    for p in &problems {
        let scheme = Scheme::new(SchemeFamily::Gauss, p.stages).unwrap();
        let (reference, x_ref) = common::random_linear_ph(&mut rng, p.n, p.m, 1.0);
        let (candidate, x_cand) = common::random_linear_ph(&mut rng, p.n, p.m, 1.0);
        // R kept away from the PSD cone's boundary, so that R ± t D stays PSD.
        let candidate = LinearPh {
            r: &candidate.r + DMatrix::identity(p.n, p.n) * 0.05,
            ..candidate
        };
        let candidate = member(candidate, x_cand);
        let reference = member(reference, x_ref);
        let model = LinearPhPlan::new(
            scheme.clone(),
            p.h,
            p.t_end,
            vec![candidate.clone()],
            &signals(p.m),
            1,
        )
        .unwrap();
        let data = simulate_outputs(&model, &reference, None).unwrap();
        let mut w_ref = structured_direction(&mut rng, p.n, p.m);
        if p.q_distance == QDistance::Log {
            // The log distance is measured from a positive definite Q_ref.
            w_ref.q = &w_ref.q * w_ref.q.transpose() + DMatrix::identity(p.n, p.n);
        }
        let setup = Setup {
            scheme,
            h: p.h,
            t_end: p.t_end,
            signals: signals(p.m),
            data,
            quadrature: p.quadrature,
            regularization: Regularization {
                weight: p.regularization,
                reference: w_ref,
                parts: Parts::ALL,
                q_distance: p.q_distance,
            },
        };
        let at = setup.evaluate(&candidate);
        let direction = structured_direction(&mut rng, p.n, p.m);
        for part in ["J", "R", "Q", "B", "x0", "all"] {
            let d = only(&direction, part);
            let pairing = at.gradient.dot(&d);
            // Central differences with Richardson extrapolation (t and t/2): O(t⁴).
            let central = |t: f64| {
                (setup.evaluate(&moved(&candidate, &d, t)).cost
                    - setup.evaluate(&moved(&candidate, &d, -t)).cost)
                    / (2.0 * t)
            };
            let t = 1e-3;
            let fd = (4.0 * central(t / 2.0) - central(t)) / 3.0;
            // Relative to the pairing, or to 1e-2 ‖∇𝒥‖ ‖D‖ where a random direction happens
            // to be nearly orthogonal to the gradient (the pairing then cancels).
            let scale = pairing
                .abs()
                .max(1e-2 * at.gradient.dot(&at.gradient).sqrt() * d.dot(&d).sqrt());
            let relative = (fd - pairing).abs() / scale;
            worst = worst.max(relative);
            let quadrature = format!("{:?}", p.quadrature).to_lowercase();
            println!(
                "| {} | {} | {} | {} | {quadrature} | {} | {:?} | {part} | {pairing:.12e} | {fd:.12e} | {relative:.1e} |",
                p.n,
                p.m,
                p.stages,
                (p.t_end / p.h).round(),
                p.regularization,
                p.q_distance
            );
            assert!(
                relative <= 1e-7,
                "n = {}, s = {}, part {part}: gradient pairing {pairing:e}, finite differences {fd:e} (relative {relative:e})",
                p.n,
                p.stages
            );
        }
    }
    println!("worst relative difference: {worst:.1e}");
}

#[test]
fn the_log_distance_adds_half_lambda_times_the_squared_logarithms_of_q() {
    let mut rng = common::fresh_rng("log distance of Q");
    let (n, m, lambda) = (4, 2, 0.7);
    let scheme = Scheme::new(SchemeFamily::Gauss, 2).unwrap();
    let (reference, x_ref) = common::random_linear_ph(&mut rng, n, m, 1.0);
    let (candidate, x_cand) = common::random_linear_ph(&mut rng, n, m, 1.0);
    let (reference, candidate) = (member(reference, x_ref), member(candidate, x_cand));
    let model = LinearPhPlan::new(
        scheme.clone(),
        0.01,
        1.0,
        vec![candidate.clone()],
        &signals(m),
        1,
    )
    .unwrap();
    let data = simulate_outputs(&model, &reference, None).unwrap();
    let setup = |regularization| Setup {
        scheme: scheme.clone(),
        h: 0.01,
        t_end: 1.0,
        signals: signals(m),
        data: data.clone(),
        quadrature: Quadrature::Left,
        regularization,
    };
    let plain = setup(Regularization::none(n, m)).evaluate(&candidate);
    let mut reference_at_identity = Parameters::zeros(n, m);
    reference_at_identity.q = DMatrix::identity(n, n);
    let penalised = setup(Regularization {
        weight: lambda,
        reference: reference_at_identity,
        parts: Parts {
            q: true,
            ..Parts::NONE
        },
        q_distance: QDistance::Log,
    })
    .evaluate(&candidate);
    // Q = V diag(μ) Vᵀ: ½ λ Σ ln² μ_i added to the cost, λ V diag(ln μ_i / μ_i) Vᵀ to ∇Q.
    let eigen = nalgebra::SymmetricEigen::new(candidate.system.q.clone());
    let added: f64 = eigen
        .eigenvalues
        .iter()
        .map(|mu| mu.ln().powi(2))
        .sum::<f64>()
        * lambda
        / 2.0;
    let slope = eigen.eigenvalues.map(|mu| mu.ln() / mu);
    let gradient = &eigen.eigenvectors
        * DMatrix::from_diagonal(&slope)
        * eigen.eigenvectors.transpose()
        * lambda;
    assert!(((penalised.cost - plain.cost) - added).abs() <= 1e-13 * added.max(plain.cost));
    assert!((&penalised.gradient.q - &plain.gradient.q - gradient).amax() <= 1e-12);
    assert_eq!(penalised.gradient.j, plain.gradient.j);
    assert_eq!(penalised.gradient.b, plain.gradient.b);
}
