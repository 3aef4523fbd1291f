//! The partitioned Lobatto IIIA/IIIB pair: IIIA advances positions q, IIIB momenta p, on the
//! same nodes and weights. The pair is symplectic because b_i â_ij + b_j a_ji = b_i b_j.

use super::collocation::Tableau;
use crate::error::Result;

/// Lobatto IIIA (positions) paired with Lobatto IIIB (momenta), s = 2…6, order 2s − 2.
#[derive(Debug, Clone)]
pub struct LobattoPair {
    /// Lobatto IIIA, applied to the position equations.
    pub positions: Tableau,
    /// Lobatto IIIB, applied to the momentum equations.
    pub momenta: Tableau,
}

impl LobattoPair {
    /// The s-stage pair.
    pub fn new(stages: usize) -> Result<Self> {
        Ok(LobattoPair {
            positions: Tableau::lobatto_iiia(stages)?,
            momenta: Tableau::lobatto_iiib(stages)?,
        })
    }

    pub fn stages(&self) -> usize {
        self.positions.stages
    }

    pub fn order(&self) -> usize {
        self.positions.order
    }
}
