//! The `[system]` of linear port-Hamiltonian runs — `kind = "linear-ph"` (J, R, Q, B, x0)
//! and `kind = "mechanical"` (K, P, D, G, q0, p0) — and their translation into validated
//! members.

use nalgebra::DMatrix;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::linear_ph::LinearPhMember;
use crate::linear_ph::{LinearPh, mechanical_system};
use crate::model::validate::{matrix_from_rows, vector_from_slice};

type Rows = Vec<Vec<f64>>;

/// `kind = "linear-ph"`: ẋ = (J − R) Q x + B u, y = Bᵀ Q x.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinearPhSpec {
    /// Interconnection J, n × n rows, skew-symmetric.
    #[serde(rename = "J")]
    pub j: Rows,
    /// Dissipation R, n × n rows, symmetric positive semidefinite; zero when omitted.
    #[serde(rename = "R", default)]
    pub r: Option<Rows>,
    /// Energy matrix Q of H = ½ xᵀ Q x, n × n rows, symmetric positive definite.
    #[serde(rename = "Q")]
    pub q: Rows,
    /// Input matrix B, n × m rows (one column per input); no inputs when omitted.
    #[serde(rename = "B", default)]
    pub b: Option<Rows>,
    /// Initial state x(0); its length sets n.
    pub x0: Vec<f64>,
}

/// `kind = "mechanical"`: q̇ = P p, ṗ = −K q − D P p + G u, y = Gᵀ P p.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MechanicalSpec {
    /// Stiffness K of ½ qᵀ K q, n × n rows, symmetric positive definite.
    #[serde(rename = "K")]
    pub k: Rows,
    /// Inverse mass P of ½ pᵀ P p, n × n rows, symmetric positive definite.
    #[serde(rename = "P")]
    pub p: Rows,
    /// Damping D, n × n rows, symmetric positive semidefinite; zero when omitted.
    #[serde(rename = "D", default)]
    pub d: Option<Rows>,
    /// Input matrix G, n × m rows (forces on the momenta); no inputs when omitted.
    #[serde(rename = "G", default)]
    pub g: Option<Rows>,
    /// Initial positions q(0); its length sets n (the state x = (q, p) has 2n entries).
    pub q0: Vec<f64>,
    /// Initial momenta p(0), n entries.
    pub p0: Vec<f64>,
}

/// Validates a `kind = "linear-ph"` spec into a member.
pub fn build_linear_ph_member(prefix: &str, spec: &LinearPhSpec) -> Result<LinearPhMember> {
    let LinearPhSpec { j, r, q, b, x0 } = spec;
    let n = x0.len();
    if n == 0 {
        return Err(Error::invalid(
            format!("{prefix}.x0"),
            "must have at least one entry",
        ));
    }
    let why = format!("n = {n} from {prefix}.x0");
    let x0 = vector_from_slice(&format!("{prefix}.x0"), x0, n, &why)?;
    let j = matrix_from_rows(&format!("{prefix}.J"), j, n, n, &why)?;
    let q = matrix_from_rows(&format!("{prefix}.Q"), q, n, n, &why)?;
    let r = match r {
        Some(r) => matrix_from_rows(&format!("{prefix}.R"), r, n, n, &why)?,
        None => DMatrix::zeros(n, n),
    };
    let b = input_matrix(&format!("{prefix}.B"), b.as_ref(), n, &why)?;
    Ok(LinearPhMember {
        system: LinearPh::new(prefix, j, r, q, b)?,
        x0,
    })
}

/// Validates a `kind = "mechanical"` spec into a member with x = (q, p).
pub fn build_mechanical_member(prefix: &str, spec: &MechanicalSpec) -> Result<LinearPhMember> {
    let MechanicalSpec { k, p, d, g, q0, p0 } = spec;
    let n = q0.len();
    if n == 0 {
        return Err(Error::invalid(
            format!("{prefix}.q0"),
            "must have at least one entry",
        ));
    }
    let why = format!("n = {n} from {prefix}.q0");
    let q0 = vector_from_slice(&format!("{prefix}.q0"), q0, n, &why)?;
    let p0 = vector_from_slice(&format!("{prefix}.p0"), p0, n, &why)?;
    let k = matrix_from_rows(&format!("{prefix}.K"), k, n, n, &why)?;
    let p = matrix_from_rows(&format!("{prefix}.P"), p, n, n, &why)?;
    let d = match d {
        Some(d) => matrix_from_rows(&format!("{prefix}.D"), d, n, n, &why)?,
        None => DMatrix::zeros(n, n),
    };
    let g = input_matrix(&format!("{prefix}.G"), g.as_ref(), n, &why)?;
    let x0 = nalgebra::DVector::from_iterator(2 * n, q0.iter().chain(p0.iter()).copied());
    Ok(LinearPhMember {
        system: mechanical_system(prefix, k, p, d, g)?,
        x0,
    })
}

/// An n×m input matrix; m is the length of its first row, zero when the matrix is omitted.
fn input_matrix(field: &str, rows: Option<&Rows>, n: usize, why: &str) -> Result<DMatrix<f64>> {
    match rows {
        None => Ok(DMatrix::zeros(n, 0)),
        Some(rows) => {
            let m = rows.first().map_or(0, Vec::len);
            matrix_from_rows(field, rows, n, m, why)
        }
    }
}
