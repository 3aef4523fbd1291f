//! The contact kernel's variants: `shaders/contact/step.wgsl`, one invocation per member
//! (n ≤ 32), specialised by [`ContactShape`] (which terms are present, the composition's
//! length, of Strang or of Herglotz steps), with its declared layouts.
//!
//! Parameters per member (layout `PARAM`, fields of length 0 when the term is absent):
//! P (n·n) | K (n·n) | β | ω | γ | ε | forcing amplitudes (F·n, the tidal one last) | α.
//! The shared stream holds per step and per sub-step time point the F forcing signals,
//! c(t) of the damping, (a/r)³ cos 2f, (a/r)³ sin 2f of the spin–orbit term, and t when a
//! potential expression uses it. A potential expression has no parameters: its tape is
//! generated into the kernel as the module `potential_expression` (a function returning
//! [B, ∇ₓB] at [x, t]), called when the constant `POTENTIAL_EXPRESSION` is 1.

use std::borrow::Cow;
use std::sync::Arc;

use super::expression::{POTENTIAL_MODULE, PotentialExpression};
use super::model::{ContactMember, Damping, Potential, TimeChannels};
use super::plan::{ContactMethod, ContactPlan};
use crate::kernels::family::KernelSource;
use crate::kernels::layout::Layout;
use crate::kernels::wgsl::WORKGROUP_SIZE;

/// The kernel.
pub const CONTACT_STEP: &str = include_str!("../../../shaders/contact/step.wgsl");

/// Largest n of the kernel (private arrays of n reals).
pub const MAX_DOF: usize = 32;

/// What a contact kernel variant is specialised for.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactShape {
    pub dof: usize,
    pub harmonic: bool,
    pub quartic: bool,
    pub pendulum: bool,
    pub kepler: bool,
    /// The potential written as an expression, if any (its tape becomes WGSL).
    pub expression: Option<Arc<PotentialExpression>>,
    pub time: TimeChannels,
    /// Stages of the composition (of Strang steps, or of Herglotz steps).
    pub stages: usize,
    pub herglotz: bool,
}

impl ContactShape {
    /// The shape of `plan`'s members (they share their terms).
    pub fn of(plan: &ContactPlan) -> Self {
        let system = &plan.nominal.system;
        let has = |kind: &str| system.potential.iter().any(|t| t.kind() == kind);
        let (stages, herglotz) = match plan.method() {
            ContactMethod::Splitting(c, _) => (c.stages(), false),
            ContactMethod::Herglotz(c) => (c.stages(), true),
        };
        ContactShape {
            dof: system.dof(),
            harmonic: has("harmonic"),
            quartic: has("quartic"),
            pendulum: has("pendulum"),
            kepler: has("kepler"),
            expression: system.potential.iter().find_map(|t| match t {
                Potential::Expression(e) => Some(Arc::clone(e)),
                _ => None,
            }),
            time: plan.time_channels(),
            stages,
            herglotz,
        }
    }

    /// The per-member parameters.
    pub fn param_layout(&self) -> Layout {
        let n = self.dof;
        let flag = |on: bool| usize::from(on);
        Layout::new("PARAM")
            .field("kinetic", n * n)
            .field("harmonic", flag(self.harmonic) * n * n)
            .field("quartic", flag(self.quartic))
            .field("pendulum", flag(self.pendulum))
            .field("kepler", flag(self.kepler))
            .field("spin_orbit", flag(self.time.spin_orbit))
            .field("forcing", self.time.forcings * n)
            .field("damping", flag(self.time.damping))
    }

    /// x, p, z, and the non-finite status.
    pub fn state_layout(&self) -> Layout {
        Layout::new("STATE")
            .field("x", self.dof)
            .field("p", self.dof)
            .field("z", 1)
            .field("status", 1)
    }

    /// x, p, z and H after the step.
    pub fn record_layout(&self) -> Layout {
        Layout::new("RECORD")
            .field("x", self.dof)
            .field("p", self.dof)
            .field("z", 1)
            .field("hamiltonian", 1)
    }

    /// h, the composition's γ_i, and per stage the stream point at which its closing half
    /// φ_B(τ/2) φ_C(τ/2) samples B and C (i + 1 with endpoint time sampling, i with the
    /// midpoint: [`ContactMethod::stage_points`]; unused by Herglotz, whose stage i reads
    /// points 2i, 2i + 1, 2i + 2). The sampling is
    /// data, not a variant: both samplings run the same kernel.
    pub fn constants_layout(&self) -> Layout {
        Layout::new("CONST")
            .field("h", 1)
            .field("gamma", self.stages)
            .field("closing", self.stages)
    }

    /// Stream sample points per step: s + 1 for a splitting, 2s + 1 for Herglotz
    /// ([`ContactMethod::offsets`]).
    pub fn points(&self) -> usize {
        if self.herglotz {
            2 * self.stages + 1
        } else {
            self.stages + 1
        }
    }

    /// Evaluations of (B, ∇B) per step.
    fn potential_evaluations(&self) -> usize {
        2 * self.stages
    }

    /// Floating-point operations per member-step, counted from the kernel (transcendental
    /// functions counted as 30).
    pub fn flops_per_step(&self) -> usize {
        let n = self.dof;
        let mut potential = 0;
        if self.harmonic {
            potential += 2 * n * n + 4 * n;
        }
        if self.quartic {
            potential += 6 * n;
        }
        if self.pendulum {
            potential += 65 * n;
        }
        potential += self.time.forcings * 5 * n;
        if self.kepler {
            potential += 3 * n + 40;
        }
        if self.time.spin_orbit {
            potential += 70 * n;
        }
        if let Some(e) = &self.expression {
            potential += e.kernel_flops() + n + 1;
        }
        let flow_a = 2 * n * n + 4 * n + 4;
        let flow_c = 2 * n + 35;
        self.potential_evaluations() * (potential + 2 * n + 2)
            + if self.herglotz {
                self.stages * (flow_a + 10 * n + 13)
            } else {
                self.stages * (flow_a + 2 * flow_c)
            }
    }

    /// Global-memory reals one member reads per step, counted from the kernel: every use of
    /// a parameter and of a stream value is a load (the kernel keeps no private copy). Per
    /// stage of a splitting: the kinetic matrix once (φ_A), the potential's parameters and
    /// stream values twice (φ_B), α and c(t) twice (φ_C), γ_i and the closing half's stream
    /// point; per stage of Herglotz: the kinetic matrix once, the potential twice, α and
    /// c(t) once, γ_i. Record points (H) and the state,
    /// once per dispatch, are not included.
    pub fn reals_per_step(&self) -> usize {
        let n = self.dof;
        let flag = |on: bool| usize::from(on);
        let potential = flag(self.harmonic) * n * n
            + flag(self.quartic)
            + flag(self.pendulum)
            + self.time.forcings * (1 + n)
            + flag(self.kepler)
            + flag(self.time.spin_orbit) * 3
            + flag(self.time.time);
        let damping = 2 * flag(self.time.damping);
        if self.herglotz {
            self.stages * (n * n + 2 * potential + damping + 1)
        } else {
            self.stages * (n * n + 2 * potential + 2 * damping + 2)
        }
    }

    /// Loop iterations per step, an upper bound counted from the kernel's loops.
    pub fn loop_iterations_per_step(&self) -> usize {
        let n = self.dof;
        let expression = if self.expression.is_some() { 2 * n } else { 0 };
        let potential =
            n + 2 * n * n + 3 * n + self.time.forcings * (n + 1) + 2 * n + 2 + expression;
        let flows = n * n + 2 * n + 2 * n + 2;
        self.potential_evaluations() * potential + self.stages * (flows + 1) + 5 * n + 5
    }

    /// The kernel variant of this shape.
    pub fn kernel(&self) -> KernelSource {
        let time = self.time;
        KernelSource {
            name: "contact_step",
            body: CONTACT_STEP,
            modules: vec![(
                POTENTIAL_MODULE,
                Cow::Owned(PotentialExpression::wgsl_module(
                    self.expression.as_deref(),
                    self.dof,
                )),
            )],
            constants: vec![
                ("N", self.dof as u32),
                ("STAGES", self.stages as u32),
                ("HERGLOTZ", u32::from(self.herglotz)),
                ("POINTS", self.points() as u32),
                ("TIME_CHANNELS", time.count().max(1) as u32),
                ("FORCINGS", time.forcings as u32),
                ("STREAM_DAMPING", time.damping_channel() as u32),
                ("STREAM_SPIN", time.spin_orbit_channel() as u32),
                ("STREAM_TIME", time.time_channel() as u32),
                ("TIME_IN_STREAM", u32::from(time.time)),
                ("POTENTIAL_EXPRESSION", u32::from(self.expression.is_some())),
            ],
            state: self.state_layout(),
            record: self.record_layout(),
            constants_layout: self.constants_layout(),
            params: self.param_layout(),
            members_per_workgroup: WORKGROUP_SIZE,
            loop_iterations_per_step: self.loop_iterations_per_step(),
            flops_per_step: self.flops_per_step(),
            // In f64 (8-byte reals).
            bytes_per_step: 8 * self.reals_per_step(),
            step_multiple: 1,
            scratch: 0,
        }
    }

    /// One member's parameters in the layout order.
    pub fn params(&self, member: &ContactMember) -> Vec<f64> {
        let system = &member.system;
        let n = self.dof;
        let mut values = Vec::with_capacity(self.param_layout().entries());
        values.extend((0..n * n).map(|e| system.kinetic[(e / n, e % n)]));
        let term = |kind: &str| system.potential.iter().find(|t| t.kind() == kind);
        if let Some(Potential::Harmonic { k }) = term("harmonic") {
            values.extend((0..n * n).map(|e| k[(e / n, e % n)]));
        }
        if let Some(Potential::Quartic { beta }) = term("quartic") {
            values.push(*beta);
        }
        if let Some(Potential::Pendulum { omega }) = term("pendulum") {
            values.push(*omega);
        }
        if let Some(Potential::Kepler { gamma }) = term("kepler") {
            values.push(*gamma);
        }
        if let Some(Potential::SpinOrbit { epsilon, .. }) = term("spin-orbit") {
            values.push(*epsilon);
        }
        for t in &system.potential {
            if let Potential::Forcing { amplitude, .. } = t {
                values.extend(amplitude.iter());
            }
        }
        if let Damping::Tidal { eta, .. } = system.damping {
            values.extend(std::iter::repeat_n(eta, n));
        }
        if self.time.damping {
            values.push(system.damping_coefficient());
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Precision;
    use crate::kernels::wgsl::{assemble, translate, validate};

    /// A potential expression in every position, with t or without.
    fn expression(dof: usize, time: bool) -> Arc<PotentialExpression> {
        let names = super::super::expression::position_names(dof);
        let last = &names[dof - 1];
        let text = format!(
            "{first}^4/4 - cos({last}) + atan({first}*{last}){}",
            if time { " * exp(-t)" } else { "" },
            first = names[0]
        );
        Arc::new(PotentialExpression::compile("test", &text, dof).unwrap())
    }

    /// Every contact kernel variant harbor can generate — each term on and off (a potential
    /// expression in a third of them, with t in the stream or without), splitting and
    /// Herglotz, several composition lengths, n up to the limit, both precisions — passes
    /// naga and translates to SPIR-V.
    #[test]
    fn every_variant_validates() {
        let mut checked = 0;
        let mut with_expression = 0;
        for precision in [Precision::F32, Precision::F64] {
            for dof in [1, 2, 5, MAX_DOF] {
                let expressions = [expression(dof, false), expression(dof, true)];
                for mask in 0..64u32 {
                    let on = |bit: u32| mask & (1 << bit) != 0;
                    let time = on(5);
                    let expression =
                        (mask % 3 == 0).then(|| Arc::clone(&expressions[usize::from(time)]));
                    for (stages, herglotz) in
                        [(1, false), (7, false), (27, false), (1, true), (7, true)]
                    {
                        with_expression += usize::from(expression.is_some());
                        let shape = ContactShape {
                            dof,
                            harmonic: on(0),
                            quartic: on(1),
                            pendulum: on(2),
                            kepler: on(3),
                            expression: expression.clone(),
                            time: TimeChannels {
                                forcings: usize::from(on(4)) * 2,
                                damping: on(5),
                                spin_orbit: on(4) && on(5),
                                time: expression.is_some() && time,
                            },
                            stages,
                            herglotz,
                        };
                        if let Err(e) = translate(&shape.kernel(), precision) {
                            panic!("{shape:?}: {e}");
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 2 * 4 * 64 * 5);
        assert_eq!(with_expression, 2 * 4 * 22 * 5);
    }

    /// Without an expression the kernel never calls the generated stub; with one, the
    /// module holds the tape's function and the helpers, and the kernel reads t from the
    /// stream only when the expression uses it.
    #[test]
    fn the_expression_module_follows_the_shape() {
        let mut shape = ContactShape {
            dof: 2,
            harmonic: true,
            quartic: false,
            pendulum: false,
            kepler: false,
            expression: None,
            time: TimeChannels::default(),
            stages: 1,
            herglotz: false,
        };
        let module = |shape: &ContactShape| shape.kernel().modules[0].1.to_string();
        assert!(module(&shape).contains("never called"));
        assert_eq!(shape.kernel().constant("POTENTIAL_EXPRESSION"), 0);
        shape.expression = Some(expression(2, true));
        shape.time.time = true;
        let kernel = shape.kernel();
        assert_eq!(kernel.constant("POTENTIAL_EXPRESSION"), 1);
        assert_eq!(kernel.constant("TIME_IN_STREAM"), 1);
        assert_eq!(kernel.constant("STREAM_TIME"), 0);
        assert!(
            module(&shape).contains("fn potential_expression(v: array<real, 3>) -> array<real, 3>")
        );
        assert!(module(&shape).contains("fn expr_atan("));
    }

    /// The f64 variant needs FLOAT64, so the validation above is not vacuous.
    #[test]
    fn f64_without_the_capability_is_rejected() {
        let shape = ContactShape {
            dof: 2,
            harmonic: true,
            quartic: false,
            pendulum: true,
            kepler: false,
            expression: None,
            time: TimeChannels::default(),
            stages: 3,
            herglotz: false,
        };
        let source = assemble(&shape.kernel(), Precision::F64).unwrap();
        assert!(validate(&source, Precision::F32).is_err());
        assert!(validate(&source, Precision::F64).is_ok());
    }
}
