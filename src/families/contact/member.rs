//! A contact system's member: the system and its initial state (x0, p0, z0), checked
//! against each other when the member is built: lengths, finiteness, the domain of every
//! potential term at the start, and a finite H(0, x0, p0, z0).

use nalgebra::DVector;

use super::model::{ContactSystem, Damping, Potential, finite};
use crate::error::{Error, Result};

/// A member: its system and initial (x, p, z).
#[derive(Debug, Clone)]
pub struct ContactMember {
    pub system: ContactSystem,
    pub x0: DVector<f64>,
    pub p0: DVector<f64>,
    pub z0: f64,
}

impl ContactMember {
    /// Checks the initial state against the system: lengths, finiteness, and the domain of
    /// every term (x ≠ 0 for Kepler; expressions finite at t = 0 and x0).
    pub fn new(
        prefix: &str,
        system: ContactSystem,
        x0: DVector<f64>,
        p0: DVector<f64>,
        z0: f64,
    ) -> Result<Self> {
        Self::check_state(prefix, &system, &x0, &p0, z0)?;
        let energy = system.hamiltonian(0.0, x0.as_slice(), p0.as_slice(), z0);
        if !energy.is_finite() {
            return Err(Self::nonfinite_energy(prefix, energy));
        }
        Ok(ContactMember { system, x0, p0, z0 })
    }

    /// The checks of [`ContactMember::new`] but the last, a finite H(0, x0, p0, z0):
    /// lengths, finiteness and the domain of every term at the start.
    pub fn check_state(
        prefix: &str,
        system: &ContactSystem,
        x0: &DVector<f64>,
        p0: &DVector<f64>,
        z0: f64,
    ) -> Result<()> {
        let n = system.dof();
        for (name, v) in [("x0", &x0), ("p0", &p0)] {
            if v.len() != n {
                return Err(Error::invalid(
                    format!("{prefix}.{name}"),
                    format!(
                        "has length {}, the system has n = {n} (from kinetic)",
                        v.len()
                    ),
                ));
            }
            if let Some(bad) = v.iter().find(|v| !v.is_finite()) {
                return Err(Error::invalid(
                    format!("{prefix}.{name}"),
                    format!("entries must be finite, found {bad}"),
                ));
            }
        }
        if !z0.is_finite() {
            finite(&format!("{prefix}.z0"), z0)?;
        }
        // Expressions first, so that a term undefined at the start is named rather than H.
        for (index, term) in system.potential.iter().enumerate() {
            if let Potential::Expression(e) = term {
                e.check_start(&format!("{prefix}.potential[{index}].B"), x0.as_slice())?;
            }
        }
        if let Damping::Expression(e) = &system.damping {
            e.check_start(&format!("{prefix}.damping.C"))?;
        }
        if system
            .potential
            .iter()
            .any(|t| matches!(t, Potential::Kepler { .. }))
        {
            let radius = x0.norm();
            if radius == 0.0 {
                return Err(Error::invalid(
                    format!("{prefix}.x0"),
                    "the Kepler potential −γ/|x| is undefined at x = 0: |x0| = 0",
                ));
            }
        }
        Ok(())
    }

    /// The error of the last check of [`ContactMember::new`]: H(0, x0, p0, z0) = `energy`
    /// is not finite.
    pub fn nonfinite_energy(prefix: &str, energy: f64) -> Error {
        Error::invalid(
            format!("{prefix}.x0"),
            format!(
                "H(0, x0, p0, z0) = {energy} is not finite: the initial state and the parameters overflow the energy before the first step"
            ),
        )
    }

    /// [x0; p0; z0].
    pub fn initial_state(&self) -> Vec<f64> {
        let mut y: Vec<f64> = self.x0.iter().chain(self.p0.iter()).copied().collect();
        y.push(self.z0);
        y
    }
}
