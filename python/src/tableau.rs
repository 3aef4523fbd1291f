//! `harbor.tableau`: a collocation Butcher table with the mass matrix of its Lagrange
//! basis, as `harbor tableau` prints it ([`NamedTableau`]), its coefficients as NumPy
//! arrays.

use harbor::tableau::{NamedTableau, Tableau as Table};
use pyo3::prelude::*;

use crate::arrays::{matrix, shaped};
use crate::errors::{Kind, error, from_harbor, guarded};

/// A Butcher table (c, a, b) with the mass matrix m_ij = ∫₀¹ ℓ_i ℓ_j of its Lagrange basis.
/// For `lobatto-pair`, `a` is Lobatto IIIA's (the positions') and `a_momenta` Lobatto
/// IIIB's; the pair shares c, b and m.
#[pyclass(frozen, get_all, module = "harbor")]
pub struct Tableau {
    /// gauss, lobatto-iiia, lobatto-iiib or lobatto-pair.
    family: String,
    /// s.
    stages: usize,
    /// The order of the method.
    order: usize,
    /// Nodes c_i: (s,).
    c: Py<PyAny>,
    /// Weights b_j: (s,).
    b: Py<PyAny>,
    /// Coefficients a_ij: (s, s).
    a: Py<PyAny>,
    /// Lobatto IIIB's a_ij for `lobatto-pair`, else None.
    a_momenta: Py<PyAny>,
    /// The mass matrix: (s, s).
    m: Py<PyAny>,
}

#[pymethods]
impl Tableau {
    fn __repr__(&self) -> String {
        format!(
            "Tableau(family={:?}, stages={}, order={})",
            self.family, self.stages, self.order
        )
    }
}

/// The table of `family` (gauss s = 1…8, lobatto-iiia, lobatto-iiib or lobatto-pair s =
/// 2…6) with `stages` stages; every coefficient correct to the last bit or within one unit
/// of it.
#[pyfunction]
pub fn tableau(py: Python<'_>, family: &str, stages: i64) -> PyResult<Tableau> {
    guarded(|| {
        let stages = usize::try_from(stages).map_err(|_| {
            error(
                Kind::Config,
                format!("stages: must be a whole number ≥ 1, got {stages}"),
            )
        })?;
        let named = py
            .detach(|| NamedTableau::new(family, stages))
            .map_err(from_harbor)?;
        let vector = |v: &[f64]| shaped(py, vec![v.len()], v.to_vec());
        let of = |name: &str, t: &Table, a_momenta: Py<PyAny>| -> PyResult<Tableau> {
            Ok(Tableau {
                family: name.to_string(),
                stages: t.stages,
                order: t.order,
                c: vector(&t.c)?,
                b: vector(&t.b)?,
                a: matrix(py, &t.a)?,
                a_momenta,
                m: matrix(py, &t.m)?,
            })
        };
        match &named {
            NamedTableau::Collocation(family, t) => of(family.name(), t, py.None()),
            NamedTableau::Pair(pair) => {
                let mut table = of(
                    "lobatto-pair",
                    &pair.positions,
                    matrix(py, &pair.momenta.a)?,
                )?;
                table.order = pair.order();
                Ok(table)
            }
        }
    })
}
