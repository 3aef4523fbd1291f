//! The mass–spring–damper chain: k masses in a row, each coupled to its neighbours by
//! springs, the first also to a wall, every mass damped; a force acts on the last mass and
//! the output is its velocity. In mechanical PH form (state n = 2k):
//! K = tridiag(−c, 2c, −c) (last diagonal entry c), P = diag(1/mass), D = d I, G = e_k.

use nalgebra::{DMatrix, DVector};

use super::{LinearPh, mechanical_system};
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
