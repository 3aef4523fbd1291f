//! A time-stepping scheme as the integrators see it: nodes c, weights b, mass matrix M and
//! one stage matrix per state partition (equal for monolithic collocation).

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use super::{Family, LobattoPair, Tableau};
use crate::error::{Error, Result};

/// The schemes a simulation can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SchemeFamily {
    /// Gauss–Legendre collocation on the whole state, s = 1…8.
    Gauss,
    /// Lobatto IIIA collocation on the whole state, s = 2…6.
    LobattoIiia,
    /// Lobatto IIIA on positions q and IIIB on momenta p, s = 2…6.
    LobattoPair,
}

impl SchemeFamily {
    pub fn name(self) -> &'static str {
        match self {
            SchemeFamily::Gauss => "gauss",
            SchemeFamily::LobattoIiia => "lobatto-iiia",
            SchemeFamily::LobattoPair => "lobatto-pair",
        }
    }

    /// The stage counts harbor supports for this family.
    pub fn stage_range(self) -> std::ops::RangeInclusive<usize> {
        match self {
            SchemeFamily::Gauss => Family::Gauss.stage_range(),
            SchemeFamily::LobattoIiia | SchemeFamily::LobattoPair => {
                Family::LobattoIiia.stage_range()
            }
        }
    }
}

/// Coefficients of an s-stage (possibly partitioned) collocation scheme.
///
/// The state is split as x = (q, p) with q = x[..split]; stage i of component r uses
/// a_ij from `a_positions` when r < split and from `a_momenta` otherwise. Monolithic schemes
/// have identical matrices, so `split` does not matter for them.
#[derive(Debug, Clone)]
pub struct Scheme {
    pub family: SchemeFamily,
    pub stages: usize,
    pub order: usize,
    pub c: Vec<f64>,
    pub b: Vec<f64>,
    pub m: DMatrix<f64>,
    pub a_positions: DMatrix<f64>,
    pub a_momenta: DMatrix<f64>,
}

impl Scheme {
    /// Builds the s-stage scheme of `family`.
    pub fn new(family: SchemeFamily, stages: usize) -> Result<Self> {
        let with_field = |e: Error| match e {
            Error::Invalid { problem, .. } => Error::invalid("scheme.stages", problem),
            other => other,
        };
        let (positions, momenta) = match family {
            SchemeFamily::Gauss => {
                let t = Tableau::gauss(stages).map_err(with_field)?;
                (t.clone(), t)
            }
            SchemeFamily::LobattoIiia => {
                let t = Tableau::lobatto_iiia(stages).map_err(with_field)?;
                (t.clone(), t)
            }
            SchemeFamily::LobattoPair => {
                let pair = LobattoPair::new(stages).map_err(|e| match e {
                    Error::Invalid { problem, .. } => Error::invalid(
                        "scheme.stages",
                        problem.replace("lobatto-iiia", "lobatto-pair"),
                    ),
                    other => other,
                })?;
                (pair.positions, pair.momenta)
            }
        };
        Ok(Scheme {
            family,
            stages,
            order: positions.order,
            c: positions.c.clone(),
            b: positions.b.clone(),
            m: positions.m.clone(),
            a_positions: positions.a,
            a_momenta: momenta.a,
        })
    }

    /// Whether positions and momenta use different stage matrices.
    pub fn is_partitioned(&self) -> bool {
        self.family == SchemeFamily::LobattoPair
    }

    /// The stage matrix A (of the positions) row-major: entry i·s + j is a_ij.
    pub fn a_row_major(&self) -> Vec<f64> {
        let s = self.stages;
        (0..s * s)
            .map(|e| self.a_positions[(e / s, e % s)])
            .collect()
    }

    /// A short label such as `gauss-3` or `lobatto-pair-4`.
    pub fn label(&self) -> String {
        format!("{}-{}", self.family.name(), self.stages)
    }
}
