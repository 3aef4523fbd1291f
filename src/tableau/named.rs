//! A collocation table looked up by the family name a user types (`harbor tableau gauss 2`,
//! `harbor.tableau("lobatto-pair", 3)` in Python): one Butcher table with the mass matrix of
//! its Lagrange basis, or both tables of the Lobatto IIIA/IIIB pair as configs mean
//! `scheme.family = "lobatto-pair"`.

use serde_json::{Value, json};

use super::{Family, LobattoPair, Tableau};
use crate::error::{Error, Result};

/// A table found by name.
#[derive(Debug, Clone)]
pub enum NamedTableau {
    /// gauss (s = 1…8), lobatto-iiia or lobatto-iiib (s = 2…6).
    Collocation(Family, Tableau),
    /// lobatto-pair (s = 2…6): IIIA on positions, IIIB on momenta, sharing c, b and M.
    Pair(LobattoPair),
}

impl NamedTableau {
    /// The table of `family` with `stages` stages; an unknown family or a stage count
    /// outside the family's range is an error naming `family` or `stages`.
    pub fn new(family: &str, stages: usize) -> Result<Self> {
        if family == "lobatto-pair" {
            let pair = LobattoPair::new(stages).map_err(|e| match e {
                Error::Invalid { field, problem } => {
                    Error::invalid(field, problem.replace("lobatto-iiia", "lobatto-pair"))
                }
                other => other,
            })?;
            return Ok(NamedTableau::Pair(pair));
        }
        let parsed = Family::parse(family).ok_or_else(|| {
            Error::invalid(
                "family",
                format!(
                    "unknown family {family:?}: expected gauss, lobatto-iiia, lobatto-iiib or lobatto-pair"
                ),
            )
        })?;
        Ok(NamedTableau::Collocation(
            parsed,
            Tableau::new(parsed, stages)?,
        ))
    }

    /// The table as JSON: `{"family", "stages", "order", "c", "b", "a", "m"}`, and for the
    /// pair `"a_positions"` and `"a_momenta"` in place of `"a"`.
    pub fn json(&self) -> Value {
        match self {
            NamedTableau::Collocation(family, t) => json!({
                "family": family.name(),
                "stages": t.stages,
                "order": t.order,
                "c": t.c,
                "b": t.b,
                "a": t.a_rows(),
                "m": t.m_rows(),
            }),
            NamedTableau::Pair(pair) => {
                let (positions, momenta) = (&pair.positions, &pair.momenta);
                json!({
                    "family": "lobatto-pair",
                    "stages": pair.stages(),
                    "order": pair.order(),
                    "c": positions.c,
                    "b": positions.b,
                    "a_positions": positions.a_rows(),
                    "a_momenta": momenta.a_rows(),
                    "m": positions.m_rows(),
                })
            }
        }
    }
}
