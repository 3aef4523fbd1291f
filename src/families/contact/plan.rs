//! The plan of a contact-Hamiltonian ensemble: the method (a composition of the Strang
//! splitting, or the Herglotz variational integrator), the grid, the members drawn from
//! (seed, i), the system's time functions sampled once at the method's sub-step times, and
//! the records — trajectory samples of (x, p, z) and H along the trajectory.
//!
//! Ensemble draws (`[ensemble]` keys, each `{ kind = … }`, default `fixed`): `x0`, `p0`,
//! `z0` and the scalar parameters `alpha` (the damping coefficient α, or η for tidal
//! damping), `beta` (quartic), `omega` (pendulum), `gamma` (Kepler), `epsilon`
//! (spin–orbit) and `amplitude` (every forcing term's a), each as
//! - `perturb` with `sigma`: v + σ ξ per entry, ξ standard normal;
//! - `uniform` with `low`, `high`: each entry uniform in [low, high) (each forcing term's
//!   amplitude drawn on its own).
//!
//! Member i's draws come from the ChaCha8 stream i of `seed` in that fixed key order, so
//! they do not depend on chunking, threads or which keys are drawn. Terms written as
//! expressions (`kind = "expression"`) have no drawn parameters: their numbers are in
//! their text, the same for every member.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Deserialize;

use super::model::{ContactMember, ContactSystem, Damping, Potential, TimeChannels};
use crate::error::{Error, Num, Result};
use crate::plan::grid::StepGrid;
use crate::plan::record::{Channel, RecordSpec};
use crate::plan::stream::SharedStream;
use crate::tableau::Composition;

/// Where a Strang sub-step S(τ) from t to t + τ samples the time-dependent terms B(t, ·)
/// and C(t) (`[system] time_sampling`). Both keep S(τ) a symmetric composition of exact
/// contact flows of the system extended by time as a coordinate, so a composition keeps its
/// order with either (see [`super::flows`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum TimeSampling {
    /// Time advances with φ_A: the opening half φ_C(τ/2) φ_B(τ/2) samples B and C at t,
    /// the closing half φ_B(τ/2) φ_C(τ/2) at t + τ. The default: at orders 2–6 its error
    /// at t_end was measured smaller than the midpoint's on the perturbed Kepler problem
    /// (by 1.1–1.4×, triple-jump-4 even) and on the spin–orbit example (by 4–43×), larger
    /// on the forced oscillator (by 1.6–5×, triple-jump-6 1.1× smaller); the table is
    /// printed by `tests/contact_time_sampling.rs`.
    #[default]
    Endpoints,
    /// Time advances in two half steps split outermost,
    /// S(τ) = φ_T(τ/2) φ_C(τ/2) φ_B(τ/2) φ_A(τ) φ_B(τ/2) φ_C(τ/2) φ_T(τ/2) with
    /// φ_T(σ): t ← t + σ, so both halves sample B and C at the midpoint t + τ/2.
    Midpoint,
}

impl TimeSampling {
    /// `endpoints` or `midpoint`, as in configs.
    pub fn name(self) -> &'static str {
        match self {
            TimeSampling::Endpoints => "endpoints",
            TimeSampling::Midpoint => "midpoint",
        }
    }
}

/// How a contact system is integrated.
#[derive(Debug, Clone, PartialEq)]
pub enum ContactMethod {
    /// Ψ(h) = S(γ_s h) ∘ … ∘ S(γ_1 h) of the symmetric Strang step
    /// S(τ) = φ_C(τ/2) φ_B(τ/2) φ_A(τ) φ_B(τ/2) φ_C(τ/2) (applied right to left), its
    /// time-dependent terms sampled as the [`TimeSampling`] says.
    Splitting(Composition, TimeSampling),
    /// Ψ(h) = G(γ_s h) ∘ … ∘ G(γ_1 h) of the second-order discrete Herglotz (contact
    /// variational) step G(τ), which samples B at the sub-step's ends and C at its midpoint
    /// by its discrete Lagrangian, whatever the [`TimeSampling`]. G is symmetric,
    /// G(τ) G(−τ) = id, so a symmetric composition has the composition's order (`strang`,
    /// γ = \[1\]: the plain second-order integrator).
    Herglotz(Composition),
}

impl ContactMethod {
    /// `splitting <composition>` (with `, midpoint time sampling` when the sampling is not
    /// the default), `herglotz` or `herglotz <composition>` (any but `strang`).
    pub fn label(&self) -> String {
        match self {
            ContactMethod::Splitting(c, sampling) if *sampling == TimeSampling::default() => {
                format!("splitting {}", c.name)
            }
            ContactMethod::Splitting(c, sampling) => {
                format!("splitting {}, {} time sampling", c.name, sampling.name())
            }
            ContactMethod::Herglotz(c) if c.stages() == 1 => "herglotz".into(),
            ContactMethod::Herglotz(c) => format!("herglotz {}", c.name),
        }
    }

    /// The composition's γ_1 … γ_s (splitting or Herglotz).
    pub fn composition(&self) -> &Composition {
        match self {
            ContactMethod::Splitting(c, _) | ContactMethod::Herglotz(c) => c,
        }
    }

    /// Classical order.
    pub fn order(&self) -> usize {
        match self {
            ContactMethod::Splitting(c, _) | ContactMethod::Herglotz(c) => c.order,
        }
    }

    /// Fractions of a step at which the time functions are needed, one stream point each.
    /// For a composition with partial sums σ_0 = 0, σ_i = γ_1 + … + γ_i (stage i runs
    /// from σ_{i−1} to σ_i, σ_s = 1): with [`TimeSampling::Endpoints`] σ_0, σ_1, …, σ_s;
    /// with [`TimeSampling::Midpoint`] the stages' midpoints σ_{i−1} + γ_i/2, i = 1 … s,
    /// then 1 (where H is recorded). Either way s + 1 points, the last one at the step's
    /// end. Herglotz: each stage's start and midpoint, then 1,
    /// σ_0, σ_0 + γ_1/2, σ_1, σ_1 + γ_2/2, …, σ_s (2s + 1 points; 0, ½, 1 for one stage).
    pub fn offsets(&self) -> Vec<f64> {
        match self {
            ContactMethod::Splitting(c, sampling) => {
                let mut offsets = vec![0.0];
                let mut sum = 0.0;
                for &g in &c.coefficients {
                    match sampling {
                        TimeSampling::Endpoints => {
                            sum += g;
                            offsets.push(sum);
                        }
                        TimeSampling::Midpoint => {
                            *offsets.last_mut().expect("one point per stage") = sum + 0.5 * g;
                            sum += g;
                            offsets.push(sum);
                        }
                    }
                }
                // Σ γ_i = 1 (consistency): the step ends at (k + 1) h exactly, where the
                // next one starts, rather than an ulp off where the rounded sum lands.
                if let Some(last) = offsets.last_mut() {
                    *last = 1.0;
                }
                offsets
            }
            ContactMethod::Herglotz(c) => {
                let mut offsets = vec![0.0];
                let mut sum = 0.0;
                for &g in &c.coefficients {
                    offsets.push(sum + 0.5 * g);
                    sum += g;
                    offsets.push(sum);
                }
                if let Some(last) = offsets.last_mut() {
                    *last = 1.0;
                }
                offsets
            }
        }
    }

    /// For each stage i of a composition, the stream points (indices into
    /// [`ContactMethod::offsets`]) at which its opening half φ_C(τ/2) φ_B(τ/2) and its
    /// closing half φ_B(τ/2) φ_C(τ/2) sample B and C: (i, i + 1) with endpoints, (i, i)
    /// with the midpoint. Herglotz: stage i's ends (2i, 2i + 2) (its C is sampled at point
    /// 2i + 1 between them).
    pub fn stage_points(&self) -> Vec<[usize; 2]> {
        match self {
            ContactMethod::Splitting(c, TimeSampling::Endpoints) => {
                (0..c.stages()).map(|i| [i, i + 1]).collect()
            }
            ContactMethod::Splitting(c, TimeSampling::Midpoint) => {
                (0..c.stages()).map(|i| [i, i]).collect()
            }
            ContactMethod::Herglotz(c) => (0..c.stages()).map(|i| [2 * i, 2 * i + 2]).collect(),
        }
    }
}

/// How one parameter varies across members.
#[derive(
    Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize, schemars::JsonSchema, Default,
)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ParameterDraw {
    /// The nominal value for every member.
    #[default]
    Fixed,
    /// The nominal value plus σ ξ, ξ standard normal.
    Perturb {
        /// σ ≥ 0 of the perturbation.
        sigma: f64,
    },
    /// Uniform on [low, high], replacing the nominal value.
    Uniform {
        /// Lower end of the interval.
        low: f64,
        /// Upper end of the interval, ≥ low.
        high: f64,
    },
}

/// `[ensemble]` of a contact run.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactEnsembleSpec {
    /// Number of members N.
    pub members: usize,
    /// Seed: member i depends only on (seed, i).
    #[serde(default)]
    pub seed: u64,
    /// How each entry of x0 varies.
    #[serde(default)]
    pub x0: ParameterDraw,
    /// How each entry of p0 varies.
    #[serde(default)]
    pub p0: ParameterDraw,
    /// How z0 varies.
    #[serde(default)]
    pub z0: ParameterDraw,
    /// How the damping's α (or the tidal η) varies.
    #[serde(default)]
    pub alpha: ParameterDraw,
    /// How the quartic term's β varies.
    #[serde(default)]
    pub beta: ParameterDraw,
    /// How the pendulum term's ω varies.
    #[serde(default)]
    pub omega: ParameterDraw,
    /// How the Kepler term's γ varies.
    #[serde(default)]
    pub gamma: ParameterDraw,
    /// How the spin-orbit term's ε varies.
    #[serde(default)]
    pub epsilon: ParameterDraw,
    /// How each entry of the forcing amplitude a varies.
    #[serde(default)]
    pub amplitude: ParameterDraw,
}

impl ContactEnsembleSpec {
    /// The draws in their fixed order, with their keys.
    fn draws(&self) -> [(&'static str, ParameterDraw); 9] {
        [
            ("x0", self.x0),
            ("p0", self.p0),
            ("z0", self.z0),
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("omega", self.omega),
            ("gamma", self.gamma),
            ("epsilon", self.epsilon),
            ("amplitude", self.amplitude),
        ]
    }

    fn check(&self) -> Result<()> {
        if self.members == 0 {
            return Err(Error::invalid("ensemble.members", "must be ≥ 1, got 0"));
        }
        if self.members > u32::MAX as usize {
            return Err(Error::invalid(
                "ensemble.members",
                format!("{} exceeds 2³² − 1", self.members),
            ));
        }
        for (key, draw) in self.draws() {
            match draw {
                ParameterDraw::Fixed => {}
                ParameterDraw::Perturb { sigma } => {
                    if !(sigma.is_finite() && sigma >= 0.0) {
                        return Err(Error::invalid(
                            format!("ensemble.{key}.sigma"),
                            format!("must be a finite number ≥ 0, got {sigma}"),
                        ));
                    }
                }
                ParameterDraw::Uniform { low, high } => {
                    if !(low.is_finite() && high.is_finite() && low <= high) {
                        return Err(Error::invalid(
                            format!("ensemble.{key}"),
                            format!("needs finite low ≤ high, got low = {low}, high = {high}"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

impl ContactEnsembleSpec {
    /// Rejects draws of parameters the system does not have (they would change nothing).
    fn check_drawn_terms(&self, system: &ContactSystem) -> Result<()> {
        let has = |kind: &str| system.potential.iter().any(|t| t.kind() == kind);
        for (key, draw) in self.draws() {
            if key == "alpha"
                && draw != ParameterDraw::Fixed
                && let Damping::Expression(e) = &system.damping
            {
                return Err(Error::invalid(
                    "ensemble.alpha",
                    format!(
                        "draws α of C(t) = α c(t), but the damping is the expression C(t) = {}, which has no α: its numbers are written in system.damping.C and are the same for every member",
                        e.text()
                    ),
                ));
            }
            let missing = match key {
                "alpha" => matches!(system.damping, Damping::None).then_some("damping"),
                "beta" => (!has("quartic")).then_some("quartic term"),
                "omega" => (!has("pendulum")).then_some("pendulum term"),
                "gamma" => (!has("kepler")).then_some("kepler term"),
                "epsilon" => (!has("spin-orbit")).then_some("spin-orbit term"),
                "amplitude" => (!has("forcing")).then_some("forcing term"),
                _ => None,
            };
            if let (Some(what), false) = (missing, draw == ParameterDraw::Fixed) {
                return Err(Error::invalid(
                    format!("ensemble.{key}"),
                    format!("draws a parameter of the {what}, which the system does not have"),
                ));
            }
        }
        Ok(())
    }
}

/// Writes `draw` of each entry of `nominal` to the same entry of `values`, consuming the
/// same random numbers whatever the kind (one normal and one uniform per entry), so later
/// keys see the same stream.
fn apply(draw: ParameterDraw, nominal: &[f64], values: &mut [f64], rng: &mut impl Rng) {
    for (v, &nominal) in values.iter_mut().zip(nominal) {
        let normal: f64 = StandardNormal.sample(rng);
        let unit: f64 = rng.random();
        *v = match draw {
            ParameterDraw::Fixed => nominal,
            ParameterDraw::Perturb { sigma } => nominal + sigma * normal,
            ParameterDraw::Uniform { low, high } => low + (high - low) * unit,
        };
    }
}

/// Draws a member's values from `rng` into `member` (of `nominal`'s terms and n), key by key
/// in the fixed order x0, p0, z0, α, β, ω, γ, ε, the forcing amplitudes: every value a
/// draw can change is written, the nominal's where its key is fixed.
fn draw(
    spec: &ContactEnsembleSpec,
    rng: &mut impl Rng,
    nominal: &ContactMember,
    member: &mut ContactMember,
) {
    let ContactMember {
        system, x0, p0, z0, ..
    } = member;
    apply(spec.x0, nominal.x0.as_slice(), x0.as_mut_slice(), rng);
    apply(spec.p0, nominal.p0.as_slice(), p0.as_mut_slice(), rng);
    apply(spec.z0, &[nominal.z0], std::slice::from_mut(z0), rng);
    let mut alpha = [0.0];
    let nominal_alpha = nominal.system.damping_coefficient();
    apply(spec.alpha, &[nominal_alpha], &mut alpha, rng);
    if let Some(coefficient) = system.damping.coefficient_mut() {
        *coefficient = alpha[0];
    }
    // One draw per scalar key whether or not its term exists (draws of absent terms are
    // refused), so every key sees the same random numbers.
    type IsTerm = fn(&Potential) -> bool;
    let keys: [(IsTerm, ParameterDraw); 4] = [
        (|t| matches!(t, Potential::Quartic { .. }), spec.beta),
        (|t| matches!(t, Potential::Pendulum { .. }), spec.omega),
        (|t| matches!(t, Potential::Kepler { .. }), spec.gamma),
        (|t| matches!(t, Potential::SpinOrbit { .. }), spec.epsilon),
    ];
    for (is_term, draw) in keys {
        let term = nominal.system.potential.iter().position(is_term);
        let coefficient = term.and_then(|i| nominal.system.potential[i].coefficient());
        let mut value = [0.0];
        apply(draw, &[coefficient.unwrap_or(0.0)], &mut value, rng);
        if let Some(c) = term.and_then(|i| system.potential[i].coefficient_mut()) {
            *c = value[0];
        }
    }
    let terms = system.potential.iter_mut().zip(&nominal.system.potential);
    for (term, nominal) in terms {
        if let (Potential::Forcing { amplitude, .. }, Potential::Forcing { amplitude: a, .. }) =
            (term, nominal)
        {
            apply(spec.amplitude, a.as_slice(), amplitude.as_mut_slice(), rng);
        }
    }
}

/// Everything a backend needs to run a contact ensemble.
#[derive(Debug, Clone)]
/// The method, the grid and the sampled stream are fixed together at construction (the
/// stream depends on both), so they are read through getters.
pub struct ContactPlan {
    method: ContactMethod,
    grid: StepGrid,
    pub nominal: ContactMember,
    pub ensemble: Option<ContactEnsembleSpec>,
    /// The system's time functions at t = (k + offset_i) h for the method's offsets.
    stream: SharedStream,
    time_channels: TimeChannels,
    records: RecordSpec,
}

impl ContactPlan {
    /// Assembles a plan and checks the ensemble spec.
    pub fn new(
        method: ContactMethod,
        h: f64,
        t_end: f64,
        nominal: ContactMember,
        ensemble: Option<ContactEnsembleSpec>,
        record_every: usize,
    ) -> Result<Self> {
        let grid = StepGrid::new(h, t_end, record_every)?;
        if let Some(spec) = &ensemble {
            spec.check()?;
            spec.check_drawn_terms(&nominal.system)?;
        }
        let system = &nominal.system;
        system.check_signals_cover("system", t_end)?;
        let time_channels = system.time_channels();
        let offsets = method.offsets();
        let sampled = system.time_terms();
        let stream = SharedStream::sample(
            &offsets,
            time_channels.count(),
            h,
            grid.steps,
            move |t, out| sampled.time_functions(t, out),
        );
        let n = system.dof();
        let records = RecordSpec {
            state_width: 2 * n + 1,
            trajectory: true,
            channels: vec![Channel {
                name: "hamiltonian",
                shape: vec![],
                at_start: true,
                description: "H(t, x, p, z) at the sample times (members × samples)".into(),
            }],
            totals: vec!["initial", "final"],
            totals_group: "hamiltonian",
        };
        let plan = ContactPlan {
            method,
            grid,
            nominal,
            ensemble,
            stream,
            time_channels,
            records,
        };
        // A long stream is checked by the backends, after the run's resources (see
        // `Family::check_stream`).
        if plan.stream.is_cached() {
            plan.check_stream()?;
        }
        // Every member must be valid; drawn ones are checked as they are drawn, the first
        // here so that a bad spec fails before any work.
        plan.member(0)?;
        Ok(plan)
    }

    /// What every member records: [x, p, z] samples, the `hamiltonian` channel, and H at
    /// the start and the end.
    pub fn record_spec(&self) -> &RecordSpec {
        &self.records
    }

    /// Degrees of freedom n.
    pub fn dof(&self) -> usize {
        self.nominal.system.dof()
    }

    pub fn method(&self) -> &ContactMethod {
        &self.method
    }

    pub fn grid(&self) -> &StepGrid {
        &self.grid
    }

    /// The time functions sampled at the method's sub-step times.
    pub fn stream(&self) -> &SharedStream {
        &self.stream
    }

    /// Refuses time functions (forcing and damping signals, an expression C(t)) that are
    /// not finite at a sub-step time, naming the field they come from, the time and the
    /// value (a pass over every sub-step time).
    pub fn check_stream(&self) -> Result<()> {
        let offsets = self.method.offsets();
        self.stream
            .max_abs()
            .map(|_| ())
            .map_err(|(step, point, channel, value)| {
                let names = self.nominal.system.time_channel_names("system");
                let (field, what) = names
                    .get(channel)
                    .cloned()
                    .unwrap_or_else(|| ("system".into(), "a time function".into()));
                Error::invalid(
                    field,
                    format!(
                        "{what} is {} at t = {}, where the run evaluates it (step {} of {})",
                        Num(value),
                        Num((step as f64 + offsets[point]) * self.grid.h),
                        step + 1,
                        self.grid.steps
                    ),
                )
            })
    }

    /// Which time functions the stream carries.
    pub fn time_channels(&self) -> TimeChannels {
        self.time_channels
    }

    /// Members of the run.
    pub fn len(&self) -> usize {
        self.ensemble.as_ref().map_or(1, |e| e.members)
    }

    /// The plan of the first `count` members (at least 1), the same members as here.
    pub fn with_members(&self, count: usize) -> Result<Self> {
        if count == 0 {
            return Err(Error::invalid("ensemble.members", "must be ≥ 1, got 0"));
        }
        let mut plan = self.clone();
        if let Some(spec) = &mut plan.ensemble {
            spec.members = spec.members.min(count);
        }
        Ok(plan)
    }

    /// Whether the run has no members (never: plans have at least one).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Member `index`: the nominal one, with the ensemble's draws from stream `index`.
    pub fn member(&self, index: usize) -> Result<ContactMember> {
        let Some(spec) = &self.ensemble else {
            return Ok(self.nominal.clone());
        };
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        rng.set_stream(index as u64);
        let mut member = self.nominal.clone();
        draw(spec, &mut rng, &self.nominal, &mut member);
        let ContactMember { system, x0, p0, z0 } = member;
        // The nominal passed `ContactSystem::new`; the draw changed its coefficients alone.
        let prefix = format!("ensemble member {index}: system");
        system.check_drawn(&prefix)?;
        ContactMember::new(&prefix, system, x0, p0, z0)
    }

    /// Member `index`'s draws, written into `member` (of the nominal's terms and n: every
    /// value a draw changes is written) from `rng` (member `index`'s stream), when they pass
    /// [`ContactPlan::member`]'s checks but the last, a finite H(0, x0, p0, z0) (which the
    /// fast engine evaluates over a block's lanes, see [`ContactMember::nonfinite_energy`]);
    /// else [`ContactPlan::member`]'s error. The draws and values of
    /// [`ContactPlan::member`], with nothing allocated.
    pub fn draw_into(
        &self,
        index: usize,
        rng: &mut impl Rng,
        member: &mut ContactMember,
    ) -> Result<()> {
        let Some(spec) = &self.ensemble else {
            *member = self.nominal.clone();
            return Ok(());
        };
        draw(spec, rng, &self.nominal, member);
        // The checks with no field names (formatted only for an error); an error is
        // `member`'s own, with its names.
        let checked = member.system.check_drawn("").and_then(|()| {
            ContactMember::check_state("", &member.system, &member.x0, &member.p0, member.z0)
        });
        if checked.is_err() {
            *member = self.member(index)?;
        }
        Ok(())
    }

    /// Random words a member's draws take, but for the ziggurat's rejections: one normal
    /// (two words) and one uniform (two words) per drawn entry, of x0, p0, z0, α, the four
    /// scalar keys and every forcing term's amplitude.
    pub fn words_per_member(&self) -> usize {
        let n = self.dof();
        let forcings = self
            .nominal
            .system
            .potential
            .iter()
            .filter(|t| matches!(t, Potential::Forcing { .. }))
            .count();
        4 * (2 * n + 1 + 1 + 4 + forcings * n)
    }
}
