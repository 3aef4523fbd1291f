//! The mass–spring–damper chain: k masses in a row, each coupled to its neighbours by
//! springs, the first also to a wall, every mass damped; a force acts on the last mass and
//! the output is its velocity. In mechanical PH form (state n = 2k):
//! K = tridiag(−c, 2c, −c) (last diagonal entry c), P = diag(1/mass), D = d I, G = e_k.

use nalgebra::{DMatrix, DVector};

use super::mechanical::mechanical_system;
use super::model::LinearPh;
use crate::error::Result;

/// The chain with `masses` unit masses, spring constant `stiffness`, damping `damping`.
pub fn mass_spring_damper_chain(masses: usize, stiffness: f64, damping: f64) -> Result<LinearPh> {
    let k = DMatrix::from_fn(masses, masses, |i, j| {
        if i == j {
            if i + 1 == masses {
                stiffness
            } else {
                2.0 * stiffness
            }
        } else if i.abs_diff(j) == 1 {
            -stiffness
        } else {
            0.0
        }
    });
    let p = DMatrix::identity(masses, masses);
    let d = DMatrix::identity(masses, masses) * damping;
    let mut g = DMatrix::zeros(masses, 1);
    g[(masses - 1, 0)] = 1.0;
    mechanical_system("chain", k, p, d, g)
}

/// A deterministic non-trivial initial state for the chain: q_i = sin(i + 1), p_i = 0.
pub fn chain_initial_state(masses: usize) -> DVector<f64> {
    DVector::from_fn(2 * masses, |i, _| {
        if i < masses {
            ((i + 1) as f64).sin()
        } else {
            0.0
        }
    })
}

/// The single mass–spring–damper chain of the port-Hamiltonian benchmark collection
/// (Schwerdtner 2022; Gugercin et al. 2012): `cells` masses in a row, neighbours coupled by
/// springs, the last mass tied to a wall by a spring, the first free, every mass damped to
/// the ground; forces on masses 1 and 2 are the inputs, their velocities the outputs.
///
/// State x = [q1, p1, …, q_c, p_c] (positions and momenta, n = 2c) with
/// H = Σ p_i²/(2 mass) + (k/2) Σ_{i<c} (q_{i+1} − q_i)² + (k/2) q_c², so
/// Q = K ⊗ e_q e_qᵀ + (1/mass) I ⊗ e_p e_pᵀ with K = k tridiag(−1, 2, −1) except K_11 = k;
/// J pairs each (q_i, p_i) as [[0, 1], [−1, 0]]; R = damping on each p_i; B = [e_{p1},
/// e_{p2}]. Then y = Bᵀ Q x = (p1, p2)/mass.
pub fn msd_benchmark_chain(
    cells: usize,
    mass: f64,
    stiffness: f64,
    damping: f64,
) -> Result<LinearPh> {
    let n = 2 * cells;
    let stiffness_matrix = |i: usize, k: usize| -> f64 {
        if i == k {
            if i == 0 { stiffness } else { 2.0 * stiffness }
        } else if i.abs_diff(k) == 1 {
            -stiffness
        } else {
            0.0
        }
    };
    let q = DMatrix::from_fn(n, n, |a, b| match (a % 2, b % 2) {
        (0, 0) => stiffness_matrix(a / 2, b / 2),
        (1, 1) if a == b => 1.0 / mass,
        _ => 0.0,
    });
    let j = DMatrix::from_fn(n, n, |a, b| {
        if a / 2 != b / 2 || a == b {
            0.0
        } else if a % 2 == 0 {
            1.0
        } else {
            -1.0
        }
    });
    let r = DMatrix::from_fn(
        n,
        n,
        |a, b| if a == b && a % 2 == 1 { damping } else { 0.0 },
    );
    let b = DMatrix::from_fn(
        n,
        2.min(cells),
        |a, c| if a == 2 * c + 1 { 1.0 } else { 0.0 },
    );
    LinearPh::new("msd-chain", j, r, q, b)
}
