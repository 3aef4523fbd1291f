//! Orthogonal polynomials on [0, 1] and the quadrature that integrates Lagrange polynomials
//! exactly. Everything the collocation tables need is computed here from definitions, in
//! double-double arithmetic (about 32 significant digits), so that the tables rounded to
//! f64 are correct to the last bit or within one unit of it.

pub use super::double_double::Dd;

fn dd(v: f64) -> Dd {
    Dd::from(v)
}

/// Legendre polynomial P_n and its derivative at x ∈ (−1, 1), by the three-term recurrence
/// (k+1) P_{k+1} = (2k+1) x P_k − k P_{k−1} and P_n' = n (x P_n − P_{n−1}) / (x² − 1).
pub fn legendre(n: usize, x: Dd) -> (Dd, Dd) {
    if n == 0 {
        return (dd(1.0), dd(0.0));
    }
    let (mut p_prev, mut p) = (dd(1.0), x);
    for k in 1..n {
        let kf = k as f64;
        let p_next = (x * p * (2.0 * kf + 1.0) - p_prev * kf) / (kf + 1.0);
        p_prev = p;
        p = p_next;
    }
    let derivative = (x * p - p_prev) * n as f64 / (x * x - 1.0);
    (p, derivative)
}

/// Newton iteration for a simple root of `f` (value, derivative) from the f64 guess `x`:
/// iterate in f64 until the step stalls, then polish in double-double (quadratic
/// convergence takes 1e-16 to beyond 1e-30 in one step; two are taken).
fn newton(guess: f64, f: impl Fn(Dd) -> (Dd, Dd)) -> Dd {
    let mut x = dd(guess);
    for _ in 0..60 {
        let (value, slope) = f(x);
        let step = value / slope;
        x -= step;
        if step.hi().abs() <= 1e-15 * x.hi().abs().max(1e-3) {
            break;
        }
    }
    for _ in 0..2 {
        let (value, slope) = f(x);
        x -= value / slope;
    }
    x
}

/// The n Gauss–Legendre nodes on [−1, 1] in increasing order, with weights
/// w_i = 2 / ((1 − x_i²) P_n'(x_i)²). Nodes are computed for x ≤ 0 and mirrored, so the
/// rule is exactly symmetric.
pub fn gauss_legendre(n: usize) -> (Vec<Dd>, Vec<Dd>) {
    let mut nodes = vec![dd(0.0); n];
    let mut weights = vec![dd(0.0); n];
    for i in 0..n.div_ceil(2) {
        let middle = n % 2 == 1 && i == n / 2;
        // Tricomi's initial guess for the i-th root from the left.
        let guess = -(std::f64::consts::PI * (4.0 * i as f64 + 3.0) / (4.0 * n as f64 + 2.0)).cos();
        let x = if middle {
            dd(0.0)
        } else {
            newton(guess, |x| legendre(n, x))
        };
        let (_, dp) = legendre(n, x);
        let w = dd(2.0) / ((dd(1.0) - x * x) * dp * dp);
        nodes[i] = x;
        weights[i] = w;
        nodes[n - 1 - i] = -x;
        weights[n - 1 - i] = w;
    }
    (nodes, weights)
}

/// The interior Lobatto nodes on [−1, 1]: the n − 1 roots of P_n', increasing, mirrored for
/// exact symmetry. Newton on P_n' uses P_n'' = (2x P_n' − n(n+1) P_n) / (1 − x²).
pub fn lobatto_interior(n: usize) -> Vec<Dd> {
    let count = n.saturating_sub(1);
    let mut nodes = vec![dd(0.0); count];
    let nf = n as f64;
    let derivative = |x: Dd| {
        let (p, dp) = legendre(n, x);
        (
            dp,
            (x * dp * 2.0 - p * (nf * (nf + 1.0))) / (dd(1.0) - x * x),
        )
    };
    for i in 0..count.div_ceil(2) {
        let middle = count % 2 == 1 && i == count / 2;
        // The Chebyshev–Gauss–Lobatto points interlace the roots closely.
        let guess = -(std::f64::consts::PI * (i as f64 + 1.0) / nf).cos();
        let x = if middle {
            dd(0.0)
        } else {
            newton(guess, derivative)
        };
        nodes[i] = x;
        nodes[count - 1 - i] = -x;
    }
    nodes
}

/// A Gauss–Legendre rule mapped to [0, 1]: ∫₀¹ p(σ) dσ = Σ_q w_q p(σ_q) exactly for
/// deg p ≤ 2·points − 1.
#[derive(Debug, Clone)]
pub struct UnitQuadrature {
    pub nodes: Vec<Dd>,
    pub weights: Vec<Dd>,
}

impl UnitQuadrature {
    /// The `points`-point Gauss–Legendre rule on [0, 1].
    pub fn gauss(points: usize) -> Self {
        let (x, w) = gauss_legendre(points);
        UnitQuadrature {
            nodes: x.iter().map(|&x| (x + 1.0) * 0.5).collect(),
            weights: w.iter().map(|&w| w * 0.5).collect(),
        }
    }

    /// ∫_lo^hi f(σ) dσ with the rule mapped affinely onto [lo, hi].
    pub fn integrate(&self, lo: Dd, hi: Dd, f: impl Fn(Dd) -> Dd) -> Dd {
        let width = hi - lo;
        let mut sum = dd(0.0);
        for (&x, &w) in self.nodes.iter().zip(&self.weights) {
            sum += w * f(lo + width * x);
        }
        width * sum
    }

    /// Nodes and weights rounded to f64.
    pub fn to_f64(&self) -> (Vec<f64>, Vec<f64>) {
        (
            self.nodes.iter().map(|&v| f64::from(v)).collect(),
            self.weights.iter().map(|&v| f64::from(v)).collect(),
        )
    }
}

/// The Lagrange basis ℓ_j(τ) = Π_{k≠j} (τ − c_k)/(c_j − c_k) on distinct nodes c.
#[derive(Debug, Clone)]
pub struct LagrangeBasis {
    nodes: Vec<Dd>,
}

impl LagrangeBasis {
    pub fn new(nodes: &[Dd]) -> Self {
        LagrangeBasis {
            nodes: nodes.to_vec(),
        }
    }

    /// ℓ_j(τ), evaluated by its product form (no monomial coefficients, so no cancellation).
    pub fn eval(&self, j: usize, tau: Dd) -> Dd {
        let cj = self.nodes[j];
        let mut product = dd(1.0);
        for (k, &ck) in self.nodes.iter().enumerate() {
            if k != j {
                product *= (tau - ck) / (cj - ck);
            }
        }
        product
    }
}
