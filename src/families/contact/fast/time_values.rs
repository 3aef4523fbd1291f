//! The scalar functions of t that a block's members share, evaluated once per time point
//! for the whole block with the reference's own expressions:
//!
//! ```text
//!   forcing j:   s_j(t)                                   (signal.value(t))
//!   spin–orbit:  (a/r)³ = (1/r(t))³,  2 f(t)
//!   tidal:       (a/r)⁶ = (1/r(t))⁶,  g(t) = (1/r(t))⁶ ḟ(t)
//!   damping:     c(t) of C = α c(t): 1, s(t), (a/r)⁶, or C(t) itself for an expression
//! ```
//!
//! Each is the f64 value [`ContactSystem::potential`] and [`ContactSystem::damping_rate`]
//! compute per call, so a lane's arithmetic on them is the reference's.

use std::sync::Arc;

use super::super::model::{ContactSystem, Damping, DampingExpression, Potential};
use super::super::orbit::KeplerOrbit;
use crate::model::Signal;

/// How c(t) of C(t) = α c(t) depends on t.
#[derive(Debug, Clone)]
pub enum DampingTime {
    /// C = 0.
    None,
    /// C = α.
    Constant,
    /// C = α s(t).
    Signal(Signal),
    /// C = η (1/r(t))⁶, with the tidal forcing η (1/r)⁶ ḟ in B.
    Tidal(KeplerOrbit),
    /// C = C(t), the expression's value.
    Expression(Arc<DampingExpression>),
}

impl PartialEq for DampingTime {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (DampingTime::None, DampingTime::None)
            | (DampingTime::Constant, DampingTime::Constant) => true,
            (DampingTime::Signal(a), DampingTime::Signal(b)) => a == b,
            (DampingTime::Tidal(a), DampingTime::Tidal(b)) => a == b,
            (DampingTime::Expression(a), DampingTime::Expression(b)) => {
                Arc::ptr_eq(a, b) || a.text() == b.text()
            }
            _ => false,
        }
    }
}

impl DampingTime {
    /// The time dependence of `damping`.
    pub fn of(damping: &Damping) -> Self {
        match damping {
            Damping::None => DampingTime::None,
            Damping::Constant { .. } => DampingTime::Constant,
            Damping::Signal { signal, .. } => DampingTime::Signal(signal.clone()),
            Damping::Tidal { orbit, .. } => DampingTime::Tidal(*orbit),
            Damping::Expression(e) => DampingTime::Expression(Arc::clone(e)),
        }
    }

    /// Whether C(t) changes with t.
    pub fn varies(&self) -> bool {
        !matches!(self, DampingTime::None | DampingTime::Constant)
    }
}

/// The time-dependent parts of a system that every member of a block shares: the forcing
/// signals in term order, the spin–orbit term's orbit and the damping's c(t).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSource {
    forcings: Vec<Signal>,
    spin_orbit: Option<KeplerOrbit>,
    damping: DampingTime,
}

/// The values of a [`TimeSource`] at one time t.
#[derive(Debug, Clone, Default)]
pub struct TimeValues {
    pub t: f64,
    /// s_j(t) per forcing term, in term order.
    pub forcing: Vec<f64>,
    /// (1/r)³ and 2 f of the spin–orbit term.
    pub spin_cube: f64,
    pub spin_two_f: f64,
    /// g(t) = (1/r)⁶ ḟ of the tidal forcing.
    pub tidal_forcing: f64,
    /// c(t): 1 (constant), s(t), (1/r)⁶ (tidal) or C(t) (expression); 0 without damping.
    pub damping: f64,
}

impl TimeSource {
    /// The time-dependent parts of `system`.
    pub fn of(system: &ContactSystem) -> Self {
        TimeSource {
            forcings: system
                .potential
                .iter()
                .filter_map(|term| match term {
                    Potential::Forcing { signal, .. } => Some(signal.clone()),
                    _ => None,
                })
                .collect(),
            spin_orbit: system.potential.iter().find_map(|term| match term {
                Potential::SpinOrbit { orbit, .. } => Some(*orbit),
                _ => None,
            }),
            damping: DampingTime::of(&system.damping),
        }
    }

    pub fn damping(&self) -> &DampingTime {
        &self.damping
    }

    /// Fills `out` with the values at t (0 for parts the source does not have).
    pub fn at(&self, t: f64, out: &mut TimeValues) {
        out.t = t;
        out.forcing.clear();
        out.forcing.extend(self.forcings.iter().map(|s| s.value(t)));
        (out.spin_cube, out.spin_two_f, out.tidal_forcing) = (0.0, 0.0, 0.0);
        if let Some(orbit) = &self.spin_orbit {
            out.spin_cube = orbit.radius(t).recip().powi(3);
            out.spin_two_f = 2.0 * orbit.true_anomaly(t);
        }
        out.damping = match &self.damping {
            DampingTime::None => 0.0,
            DampingTime::Constant => 1.0,
            DampingTime::Signal(signal) => signal.value(t),
            DampingTime::Tidal(orbit) => {
                let sixth = orbit.radius(t).recip().powi(6);
                out.tidal_forcing = sixth * orbit.true_anomaly_rate(t);
                sixth
            }
            DampingTime::Expression(e) => e.rate(t),
        };
    }
}
