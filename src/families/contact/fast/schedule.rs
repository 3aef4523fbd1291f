//! A contact method as the fast engine runs it: a composition of base steps, each of size
//! γ_i h, and the fractions of a step (stream offsets) at which its time-dependent terms
//! are sampled:
//!
//! ```text
//!   Ψ(h) = B_s(γ_s h) ∘ … ∘ B_1(γ_1 h),   B_i a Strang step S or a Herglotz step
//!   time point j of step k:  t_j = (k + offset_j) h       (ContactMethod::offsets)
//! ```
//!
//! A Strang step samples its opening half at one point and its closing half at another,
//! a Herglotz step samples B at its two ends and C at its middle. A method built by
//! composing either base step (a new [`ContactMethod`] variant) needs only its line in
//! [`Schedule::of`].

use super::super::plan::ContactMethod;

/// One base step of a composition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BaseStep {
    /// S(γ h) = φ_C(τ/2) φ_B(τ/2) φ_A(τ) φ_B(τ/2) φ_C(τ/2), τ = γ h, its opening half
    /// φ_C φ_B sampled at time point `points[0]`, its closing half at `points[1]`.
    Strang { gamma: f64, points: [usize; 2] },
    /// The Herglotz step of size τ = γ h sampled at the time points of t_k, t_{k+½} and
    /// t_{k+1}.
    Herglotz { gamma: f64, points: [usize; 3] },
}

/// The base steps of one step of a method and its time points.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Fractions of a step at which the time functions are needed.
    pub offsets: Vec<f64>,
    /// Applied first to last.
    pub steps: Vec<BaseStep>,
}

impl Schedule {
    /// The schedule of `method`: its composition of base steps with their coefficients
    /// and time points, as the reference integrator's `step_at` applies them.
    pub fn of(method: &ContactMethod) -> Schedule {
        let steps = match method {
            ContactMethod::Splitting(composition, _) => composition
                .coefficients
                .iter()
                .zip(method.stage_points())
                .map(|(&gamma, points)| BaseStep::Strang { gamma, points })
                .collect(),
            // Step i of the composition samples t_i, t_i + γ_i h/2 and t_i + γ_i h:
            // points 2i, 2i + 1, 2i + 2 (the reference's `step_at`).
            ContactMethod::Herglotz(composition) => composition
                .coefficients
                .iter()
                .enumerate()
                .map(|(i, &gamma)| BaseStep::Herglotz {
                    gamma,
                    points: [2 * i, 2 * i + 1, 2 * i + 2],
                })
                .collect(),
        };
        Schedule {
            offsets: method.offsets(),
            steps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::contact::TimeSampling;
    use crate::tableau::Composition;

    #[test]
    fn compositions_are_strang_steps_at_their_stage_points() {
        let c = Composition::by_name("triple-jump-4").unwrap();
        let s = Schedule::of(&ContactMethod::Splitting(c.clone(), TimeSampling::Midpoint));
        assert_eq!(s.steps.len(), 3);
        assert_eq!(s.offsets.len(), 4);
        for (i, step) in s.steps.iter().enumerate() {
            assert_eq!(
                *step,
                BaseStep::Strang {
                    gamma: c.coefficients[i],
                    points: [i, i]
                }
            );
        }
        let s = Schedule::of(&ContactMethod::Splitting(c, TimeSampling::Endpoints));
        assert!(matches!(
            s.steps[2],
            BaseStep::Strang { points: [2, 3], .. }
        ));
        let s = Schedule::of(&ContactMethod::Herglotz(
            Composition::by_name("strang").unwrap(),
        ));
        assert_eq!(s.offsets, [0.0, 0.5, 1.0]);
        assert_eq!(
            s.steps,
            [BaseStep::Herglotz {
                gamma: 1.0,
                points: [0, 1, 2]
            }]
        );
    }
}
