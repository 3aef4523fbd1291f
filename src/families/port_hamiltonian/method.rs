//! Which stage rule a port-Hamiltonian plan runs on its s Gauss nodes: Gauss collocation
//! (the efforts are ∇H at the stage points) or the energy-preserving collocation (the
//! efforts are projections of ∇H along the collocation polynomial). Both share the Gauss
//! tableau (`plan.scheme`); this says which of the two the steps apply.

use std::sync::Arc;

use crate::error::Result;
use crate::tableau::{ProjectionRule, Scheme};

/// The stage rule of a port-Hamiltonian plan.
#[derive(Debug, Clone, PartialEq)]
pub enum PortHamiltonianMethod {
    /// Gauss collocation, e_i = ∇H(x_i) ([`super::gauss_step`]); order 2s, the energy
    /// balance exact for quadratic H.
    Gauss,
    /// Energy-preserving collocation, ē_i = (1/b_i) ∫₀¹ ℓ_i ∇H(x(τ)) dτ by the rule's
    /// quadrature ([`super::energy_preserving_step`]); order 2s, the energy balance exact for
    /// polynomial H of degree ≤ ⌊2q / s⌋.
    EnergyPreserving(Arc<ProjectionRule>),
}

impl PortHamiltonianMethod {
    /// The energy-preserving method on s stages with a q-node rule (default
    /// [`ProjectionRule::default_quadrature`], s(s + 1)); errors name `scheme.stages` or
    /// `scheme.quadrature`.
    pub fn energy_preserving(stages: usize, quadrature: Option<usize>) -> Result<Self> {
        let quadrature = quadrature.unwrap_or_else(|| ProjectionRule::default_quadrature(stages));
        Ok(PortHamiltonianMethod::EnergyPreserving(Arc::new(
            ProjectionRule::new(stages, quadrature)?,
        )))
    }

    /// Whether the plan runs plain Gauss collocation.
    pub fn is_gauss(&self) -> bool {
        matches!(self, PortHamiltonianMethod::Gauss)
    }

    /// `gauss` or `energy-preserving`, as `scheme.family` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            PortHamiltonianMethod::Gauss => "gauss",
            PortHamiltonianMethod::EnergyPreserving(_) => "energy-preserving",
        }
    }

    /// The quadrature nodes q of the projection (energy-preserving only).
    pub fn quadrature(&self) -> Option<usize> {
        match self {
            PortHamiltonianMethod::Gauss => None,
            PortHamiltonianMethod::EnergyPreserving(rule) => Some(rule.quadrature),
        }
    }

    /// A short label: `gauss-2`, or `energy-preserving-2 (q = 6)`.
    pub fn label(&self, scheme: &Scheme) -> String {
        match self {
            PortHamiltonianMethod::Gauss => scheme.label(),
            PortHamiltonianMethod::EnergyPreserving(rule) => format!(
                "energy-preserving-{} (q = {})",
                scheme.stages, rule.quadrature
            ),
        }
    }
}
