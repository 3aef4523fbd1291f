//! Orthogonal polynomials on [0, 1] and the quadrature that integrates Lagrange polynomials
//! exactly. Everything the collocation tables need is computed here from definitions.

/// Legendre polynomial P_n and its derivative at x ∈ [−1, 1], by the three-term recurrence
/// (k+1) P_{k+1} = (2k+1) x P_k − k P_{k−1} and P_n' = n (x P_n − P_{n−1}) / (x² − 1).
/// The derivative formula is only used away from x = ±1.
pub fn legendre(n: usize, x: f64) -> (f64, f64) {
    let (mut p_prev, mut p) = (1.0, x);
    if n == 0 {
        return (1.0, 0.0);
    }
    for k in 1..n {
        let kf = k as f64;
        let p_next = ((2.0 * kf + 1.0) * x * p - kf * p_prev) / (kf + 1.0);
        p_prev = p;
        p = p_next;
    }
    let derivative = n as f64 * (x * p - p_prev) / (x * x - 1.0);
    (p, derivative)
}

/// Newton iteration to full f64 precision for a simple root of `f` near `x`
/// (`f` returns value and derivative).
fn newton(mut x: f64, f: impl Fn(f64) -> (f64, f64)) -> f64 {
    for _ in 0..100 {
        let (value, slope) = f(x);
        let step = value / slope;
        x -= step;
        if step.abs() <= 4.0 * f64::EPSILON * x.abs().max(1e-3) {
            // One more step polishes the last bit.
            let (value, slope) = f(x);
            return x - value / slope;
        }
    }
    x
}

/// The n Gauss–Legendre nodes on [−1, 1] in increasing order, with weights
/// w_i = 2 / ((1 − x_i²) P_n'(x_i)²). Nodes are computed for x ≤ 0 and mirrored, so the
/// rule is exactly symmetric.
pub fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut nodes = vec![0.0; n];
    let mut weights = vec![0.0; n];
    for i in 0..n.div_ceil(2) {
        // Tricomi's initial guess for the i-th root from the left.
        let guess = -(std::f64::consts::PI * (4.0 * i as f64 + 3.0) / (4.0 * n as f64 + 2.0)).cos();
        let guess = if n % 2 == 1 && i == n / 2 { 0.0 } else { guess };
        let x = newton(guess, |x| legendre(n, x));
        let x = if n % 2 == 1 && i == n / 2 { 0.0 } else { x };
        let (_, dp) = legendre(n, x);
        let w = 2.0 / ((1.0 - x * x) * dp * dp);
        nodes[i] = x;
        weights[i] = w;
        nodes[n - 1 - i] = -x;
        weights[n - 1 - i] = w;
    }
    (nodes, weights)
}

/// The interior Lobatto nodes on [−1, 1]: the n − 1 roots of P_n', increasing, mirrored for
/// exact symmetry. Newton on P_n' uses P_n'' = (2x P_n' − n(n+1) P_n) / (1 − x²).
pub fn lobatto_interior(n: usize) -> Vec<f64> {
    let count = n.saturating_sub(1);
    let mut nodes = vec![0.0; count];
    let nf = n as f64;
    let derivative = |x: f64| {
        let (p, dp) = legendre(n, x);
        (dp, (2.0 * x * dp - nf * (nf + 1.0) * p) / (1.0 - x * x))
    };
    for i in 0..count.div_ceil(2) {
        let middle = count % 2 == 1 && i == count / 2;
        // The Chebyshev–Gauss–Lobatto points interlace the roots closely.
        let guess = -(std::f64::consts::PI * (i as f64 + 1.0) / nf).cos();
        let x = if middle { 0.0 } else { newton(guess, derivative) };
        nodes[i] = x;
        nodes[count - 1 - i] = -x;
    }
    nodes
}

/// A Gauss–Legendre rule mapped to [0, 1]: ∫₀¹ p(σ) dσ = Σ_q w_q p(σ_q) exactly for
/// deg p ≤ 2·points − 1.
#[derive(Debug, Clone)]
pub struct UnitQuadrature {
    pub nodes: Vec<f64>,
    pub weights: Vec<f64>,
}

impl UnitQuadrature {
    /// The `points`-point Gauss–Legendre rule on [0, 1].
    pub fn gauss(points: usize) -> Self {
        let (x, w) = gauss_legendre(points);
        UnitQuadrature {
            nodes: x.iter().map(|x| 0.5 * (1.0 + x)).collect(),
            weights: w.iter().map(|w| 0.5 * w).collect(),
        }
    }

    /// ∫_lo^hi f(σ) dσ with the rule mapped affinely onto [lo, hi].
    pub fn integrate(&self, lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> f64 {
        let width = hi - lo;
        let sum: f64 = self
            .nodes
            .iter()
            .zip(&self.weights)
            .map(|(&x, &w)| w * f(lo + width * x))
            .sum();
        width * sum
    }
}

/// The Lagrange basis ℓ_j(τ) = Π_{k≠j} (τ − c_k)/(c_j − c_k) on distinct nodes c.
#[derive(Debug, Clone)]
pub struct LagrangeBasis {
    nodes: Vec<f64>,
}

impl LagrangeBasis {
    pub fn new(nodes: &[f64]) -> Self {
        LagrangeBasis {
            nodes: nodes.to_vec(),
        }
    }

    /// ℓ_j(τ), evaluated by its product form (no monomial coefficients, so no cancellation).
    pub fn eval(&self, j: usize, tau: f64) -> f64 {
        let cj = self.nodes[j];
        self.nodes
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != j)
            .map(|(_, &ck)| (tau - ck) / (cj - ck))
            .product()
    }
}
