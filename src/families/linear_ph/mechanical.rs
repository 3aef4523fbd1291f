//! Mechanical port-Hamiltonian systems in partitioned form,
//! q̇ = P p,  ṗ = −K q − D P p + G u,  y = Gᵀ P p,  H = ½ qᵀ K q + ½ pᵀ P p,
//! with stiffness K, inverse mass P, damping D. They are the linear PH system with
//! J = [[0, I], [−I, 0]], Q = diag(K, P), R = diag(0, D), B = [0; G].

use nalgebra::DMatrix;

use super::model::LinearPh;
use crate::error::Result;
use crate::model::validate::{check_pd, check_psd};

/// Builds the equivalent linear PH system after checking K, P symmetric PD and D symmetric
/// PSD; `prefix` names the system in errors.
pub fn mechanical_system(
    prefix: &str,
    k: DMatrix<f64>,
    p: DMatrix<f64>,
    d: DMatrix<f64>,
    g: DMatrix<f64>,
) -> Result<LinearPh> {
    check_pd(&format!("{prefix}.K"), &k)?;
    check_pd(&format!("{prefix}.P"), &p)?;
    check_psd(&format!("{prefix}.D"), &d)?;
    let half = k.nrows();
    let n = 2 * half;
    let mut j = DMatrix::zeros(n, n);
    let mut q = DMatrix::zeros(n, n);
    let mut r = DMatrix::zeros(n, n);
    let mut b = DMatrix::zeros(n, g.ncols());
    for i in 0..half {
        j[(i, half + i)] = 1.0;
        j[(half + i, i)] = -1.0;
    }
    q.view_mut((0, 0), (half, half)).copy_from(&k);
    q.view_mut((half, half), (half, half)).copy_from(&p);
    r.view_mut((half, half), (half, half)).copy_from(&d);
    b.view_mut((half, 0), (half, g.ncols())).copy_from(&g);
    LinearPh::new(prefix, j, r, q, b)
}
