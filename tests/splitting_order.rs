//! The order of every composition method, verified two independent ways.
//!
//! 1. Algebraic: in the free algebra on X, Y₃, Y₅, Y₇, Y₉ (weights 1, 3, 5, 7, 9; truncated
//!    at weight 9), log(exp(Z(γ_s)) ⋯ exp(Z(γ₁))) with Z(γ) = γX + γ³Y₃ + … must equal
//!    X + O(h^{p+1}): every word of weight 2 … p vanishes (all words, not only the Lyndon words
//!    the construction solved for), and the weight p + 1 part does not (the order is not
//!    higher than claimed). Evaluated in double-double on the f64 coefficients, so the
//!    residuals measure the coefficients, not the arithmetic; the f64 evaluation is reported
//!    beside it. The closed conditions Σγ = 1, Σγ³ = Σγ⁵ = Σγ⁷ = 0 and the symmetry
//!    γ_i = γ_{s+1−i} are checked separately.
//! 2. Numerical: random 6×6 matrices A, B, C = A + B; S₂(h) = e^{hA/2} e^{hB} e^{hA/2}; the
//!    local error of Ψ(h) against e^{hC} must fall like h^{p+1}. The plain error
//!    Ψ − e^{hC} = C_{p+1} h^{p+1} (1 + O(h)) has an h^{p+2} correction that keeps the
//!    methods with tiny leading constants (Kahan & Li, McLachlan order 8) out of the
//!    asymptotic range until the error nears round-off. The symmetrised error
//!    e^{−hC/2} Ψ(h) e^{−hC/2} − I = h^{p+1} E_{p+1} + O(h^{p+3}) (log Ψ is odd in h, and the
//!    symmetric BCH formula has only odd brackets) is the same local error conjugated by
//!    e^{hC/2}, with the correction one order further down. Its log–log slope, fitted where
//!    it lies in [1e-12, 1e-7] (round-off is ~1e-14), must be within 0.3 of p + 1; the plain
//!    error's slope must be at least p + 0.7.

use harbor::tableau::Composition;
use harbor::tableau::bch::FreeAlgebra;
use harbor::tableau::double_double::Dd;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

const MAX_WEIGHT: usize = 9;

/// max |coefficient| over the words of each weight 0 … 9 of log Ψ − X.
fn residuals_by_weight<T: harbor::tableau::bch::Scalar>(
    algebra: &FreeAlgebra,
    gammas: &[f64],
) -> Vec<f64> {
    let gammas: Vec<T> = gammas.iter().map(|&g| T::from(g)).collect();
    let mut log = algebra.composition_log(&gammas);
    let x = algebra.index_of(&[0]).unwrap();
    log[x] = log[x] - T::from(1.0);
    let mut worst = vec![0.0f64; MAX_WEIGHT + 1];
    for (i, &c) in log.iter().enumerate() {
        let w = algebra.weight(i);
        worst[w] = worst[w].max(c.into().abs());
    }
    worst
}

/// Σ γ_iᵏ in double-double.
fn power_sum(gammas: &[f64], k: u32) -> f64 {
    gammas
        .iter()
        .map(|&g| (1..k).fold(Dd::new(g), |acc, _| acc * g))
        .fold(Dd::new(0.0), |a, b| a + b)
        .hi()
}

#[test]
fn composition_methods_have_their_order_in_the_free_algebra() {
    let algebra = FreeAlgebra::new(MAX_WEIGHT);
    println!(
        "{:14} {:>3} {:>2}  {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}   (max |coef| of log Psi - X per weight, double-double on the f64 coefficients)",
        "name", "s", "p", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9"
    );
    for c in Composition::all() {
        let p = c.order;
        let exact = residuals_by_weight::<Dd>(&algebra, &c.coefficients);
        let rounded = residuals_by_weight::<f64>(&algebra, &c.coefficients);
        let row = |r: &[f64]| {
            r[1..]
                .iter()
                .map(|v| format!("{v:9.1e}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!("{:14} {:>3} {:>2}  {}", c.name, c.stages(), p, row(&exact));
        println!("{:14} {:>3} {:>2}  {}   (f64)", "", "", "", row(&rounded));

        // Coefficient size: the scale of the terms that cancel at weight n is (Σ|γ_i|)ⁿ
        // over n!, bounded below by 1.
        let spread: f64 = c.coefficients.iter().map(|g| g.abs()).sum();
        for w in 1..=p {
            let scale = (1..=w).fold(1.0, |acc, k| acc * spread / k as f64).max(1.0);
            assert!(
                exact[w] <= 1e-15 * scale,
                "{}: weight-{w} residual {:e} (scale {scale:.1e}) in double-double",
                c.name,
                exact[w]
            );
            assert!(
                rounded[w] <= 1e-14 * scale,
                "{}: weight-{w} residual {:e} (scale {scale:.1e}) in f64",
                c.name,
                rounded[w]
            );
        }
        assert!(
            exact[p + 1] > 1e-6,
            "{}: weight-{} part vanishes ({:e}): order higher than {p}?",
            c.name,
            p + 1,
            exact[p + 1]
        );
        // Symmetric: the even weights vanish identically, also beyond the order.
        for w in (2..=MAX_WEIGHT).step_by(2) {
            assert!(exact[w] <= 1e-14, "{}: even weight {w}", c.name);
        }
    }
}

#[test]
fn closed_order_conditions_and_symmetry() {
    println!(
        "{:14} {:>3} {:>2}  {:>10} {:>10} {:>10} {:>10}",
        "name", "s", "p", "sum-1", "sum g^3", "sum g^5", "sum g^7"
    );
    for c in Composition::all() {
        let g = &c.coefficients;
        let s = g.len();
        for i in 0..s {
            assert_eq!(g[i], g[s - 1 - i], "{}: not symmetric at {i}", c.name);
        }
        let sums = [
            power_sum(g, 1) - 1.0,
            power_sum(g, 3),
            power_sum(g, 5),
            power_sum(g, 7),
        ];
        println!(
            "{:14} {:>3} {:>2}  {:10.1e} {:10.1e} {:10.1e} {:10.1e}",
            c.name, s, c.order, sums[0], sums[1], sums[2], sums[3]
        );
        // Σγᵏ = 0 for k = 1 (minus one), 3, …, order − 1; the first one beyond is nonzero.
        for (j, &sum) in sums.iter().enumerate() {
            let k = 2 * j + 1;
            let scale: f64 = g.iter().map(|x| x.abs().powi(k as i32)).sum();
            if k < c.order {
                assert!(
                    sum.abs() <= 1e-15 * scale.max(1.0),
                    "{}: sum of gamma^{k} = {sum:e}",
                    c.name
                );
            } else if k == c.order + 1 {
                assert!(sum.abs() > 1e-6, "{}: sum of gamma^{k} = {sum:e}", c.name);
            }
        }
    }
}

fn random_matrix(rng: &mut rand_chacha::ChaCha8Rng, n: usize) -> DMatrix<f64> {
    let scale = 1.0 / (n as f64).sqrt();
    DMatrix::from_fn(n, n, |_, _| {
        let z: f64 = StandardNormal.sample(rng);
        z * scale
    })
}

/// Ψ(h) = S₂(γ_s h) ⋯ S₂(γ₁ h) with S₂(τ) = e^{τA/2} e^{τB} e^{τA/2}.
fn composition(a: &DMatrix<f64>, b: &DMatrix<f64>, gammas: &[f64], h: f64) -> DMatrix<f64> {
    let n = a.nrows();
    let mut psi = DMatrix::<f64>::identity(n, n);
    for &g in gammas {
        let tau = g * h;
        let half = (a * (tau / 2.0)).exp();
        let step = &half * (b * tau).exp() * &half;
        psi = step * psi;
    }
    psi
}

/// Least-squares slope of log err against log h.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (xs, ys): (Vec<f64>, Vec<f64>) = points.iter().map(|&(h, e)| (h.ln(), e.ln())).unzip();
    let mx = xs.iter().sum::<f64>() / n;
    let my = ys.iter().sum::<f64>() / n;
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

#[test]
fn local_error_on_random_matrices_scales_like_h_to_the_order_plus_one() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20240607);
    let n = 6;
    let a = random_matrix(&mut rng, n);
    let b = random_matrix(&mut rng, n);
    let sum = &a + &b;
    let identity = DMatrix::<f64>::identity(n, n);
    // h = 2^{-j/4}: 1 down to 2^{-16}.
    let steps: Vec<f64> = (0..=64).map(|j| 2f64.powf(-(j as f64) / 4.0)).collect();
    println!(
        "{:14} {:>3} {:>2} {:>4}  {:>9} {:>9} {:>9} {:>3}  {:>10} {:>9} {:>9} {:>3}",
        "name",
        "s",
        "p",
        "p+1",
        "symmetric",
        "h max",
        "h min",
        "pts",
        "plain",
        "h max",
        "h min",
        "pts"
    );
    for c in Composition::all() {
        let (mut symmetric, mut plain) = (Vec::new(), Vec::new());
        for &h in &steps {
            let psi = composition(&a, &b, &c.coefficients, h);
            let exact = (&sum * h).exp();
            let half_back = (&sum * (-h / 2.0)).exp();
            let err_plain = (&psi - exact).norm();
            let err_symmetric = (&half_back * &psi * &half_back - &identity).norm();
            for (points, err) in [(&mut plain, err_plain), (&mut symmetric, err_symmetric)] {
                if (1e-12..=1e-7).contains(&err) {
                    points.push((h, err));
                }
            }
        }
        for (what, points) in [("symmetric", &symmetric), ("plain", &plain)] {
            assert!(
                points.len() >= 4,
                "{}: only {} step sizes with {what} error in [1e-12, 1e-7]",
                c.name,
                points.len()
            );
        }
        let (fit_symmetric, fit_plain) = (slope(&symmetric), slope(&plain));
        let span = |p: &[(f64, f64)]| (p[0].0, p[p.len() - 1].0, p.len());
        let (s_max, s_min, s_n) = span(&symmetric);
        let (p_max, p_min, p_n) = span(&plain);
        println!(
            "{:14} {:>3} {:>2} {:>4}  {fit_symmetric:9.2} {s_max:9.2e} {s_min:9.2e} {s_n:>3}  {fit_plain:10.2} {p_max:9.2e} {p_min:9.2e} {p_n:>3}",
            c.name,
            c.stages(),
            c.order,
            c.order + 1,
        );
        let expected = (c.order + 1) as f64;
        assert!(
            (fit_symmetric - expected).abs() <= 0.3,
            "{}: fitted slope {fit_symmetric:.3} of the symmetric local error, expected {expected}",
            c.name,
        );
        assert!(
            fit_plain >= expected - 0.3,
            "{}: fitted slope {fit_plain:.3} of the plain local error, expected at least {expected}",
            c.name,
        );
    }
}
