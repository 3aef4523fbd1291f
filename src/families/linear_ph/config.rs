//! A configuration as a linear-PH run: the member `[system]` describes, the collocation
//! scheme of `[scheme]`, the ensemble of `[ensemble]`, and the plan they make
//! ([`LinearPhConfig`]); the registry reaches them through [`SystemKind`].

use super::energy_order::LinearEnergyOrder;
use super::ensemble::{DrawnLinearPhEnsemble, LinearPhEnsembleSpec};
use super::plan::{LinearPhMember, LinearPhPlan};
use super::spec::{LinearPhSpec, MechanicalSpec, build_linear_ph_member, build_mechanical_member};
use crate::error::{Error, Result};
use crate::families::{RunPlan, SystemKind, SystemSpec};
use crate::io::Config;
use crate::io::config::SchemeChoice;
use crate::study::energy_order::EnergyOrderSubject;
use crate::tableau::{Scheme, SchemeFamily};

/// A [`Config`] read as a linear-PH run.
pub trait LinearPhConfig {
    /// The linear-PH system and initial state described by `[system]`.
    fn member(&self) -> Result<LinearPhMember>;

    /// The plan for this configuration with the collocation scheme (`family`, `stages`)
    /// (the configured one unless a study substitutes its own) and step size `h`,
    /// recording everything.
    fn plan_with(&self, family: SchemeFamily, stages: usize, h: f64) -> Result<LinearPhPlan>;

    /// The plan of a study point: `choice` at the step size `study.h[index]`, as
    /// [`LinearPhConfig::plan_with`] but with a step size that does not fit `scheme.t_end`
    /// blamed on `study.h[index]` rather than `scheme.h`.
    fn study_plan(&self, choice: SchemeChoice, index: usize) -> Result<LinearPhPlan>;

    /// The linear-PH plan as configured, recording everything (studies need every
    /// quantity; [`Config::run_plan`] applies the `[output]` switches).
    fn plan(&self) -> Result<LinearPhPlan>;
}

impl LinearPhConfig for Config {
    fn member(&self) -> Result<LinearPhMember> {
        build_member("system", &self.system)
    }

    fn plan_with(&self, family: SchemeFamily, stages: usize, h: f64) -> Result<LinearPhPlan> {
        let scheme = Scheme::new(family, stages)?;
        let nominal = self.member()?;
        let signals = self.signals()?;
        let (t_end, every) = (self.scheme.t_end, self.output.every);
        match self.ensemble_spec::<LinearPhEnsembleSpec>()? {
            Some(spec) => {
                let split = if scheme.is_partitioned() {
                    Some(nominal.system.canonical_split("system")?)
                } else {
                    None
                };
                let drawn = DrawnLinearPhEnsemble::new(nominal, spec, split)?;
                LinearPhPlan::new(scheme, h, t_end, drawn, &signals, every)
            }
            None => LinearPhPlan::new(scheme, h, t_end, vec![nominal], &signals, every),
        }
    }

    fn study_plan(&self, choice: SchemeChoice, index: usize) -> Result<LinearPhPlan> {
        self.study.step_count(index, self.scheme.t_end)?;
        let family = choice.family.collocation().ok_or_else(|| {
            Error::invalid(
                "study.schemes",
                format!(
                    "{} integrates {}; a {} system is studied with gauss, lobatto-iiia or lobatto-pair",
                    choice.family.name(),
                    choice.family.integrates(),
                    self.system.kind()
                ),
            )
        })?;
        self.plan_with(family, choice.stages, self.study.h[index])
    }

    fn plan(&self) -> Result<LinearPhPlan> {
        let (family, stages) = collocation(self)?;
        self.plan_with(family, stages, self.scheme.h)
    }
}

/// The configured collocation scheme's family and stage count s, refusing a contact method,
/// a composition or missing stages.
fn collocation(config: &Config) -> Result<(SchemeFamily, usize)> {
    let family = config.scheme.family.collocation().ok_or_else(|| {
        let method = config.scheme.family;
        Error::invalid(
            "scheme.family",
            format!(
                "{} integrates {}; a {} system takes gauss, lobatto-iiia or lobatto-pair",
                method.name(),
                method.integrates(),
                config.system.kind()
            ),
        )
    })?;
    if config.scheme.composition.is_some() {
        return Err(Error::invalid(
            "scheme.composition",
            format!("applies to splitting schemes, not {}", family.name()),
        ));
    }
    config.scheme.refuse_quadrature()?;
    let stages = config.scheme.stages.ok_or_else(|| {
        Error::invalid(
            "scheme.stages",
            format!("is required for {}", family.name()),
        )
    })?;
    Ok((family, stages))
}

/// Validates a linear-PH or mechanical system spec into a member (system + initial state);
/// any other kind is refused at `<prefix>.kind`.
pub fn build_member(prefix: &str, spec: &SystemSpec) -> Result<LinearPhMember> {
    match spec {
        SystemSpec::LinearPh(spec) => build_linear_ph_member(prefix, spec),
        SystemSpec::Mechanical(spec) => build_mechanical_member(prefix, spec),
        other => Err(Error::invalid(
            format!("{prefix}.kind"),
            format!(
                "is {}; this needs a linear-ph or mechanical system",
                other.kind()
            ),
        )),
    }
}

/// The plan a linear-PH `[system]` runs: the configured collocation scheme, ensemble and
/// inputs, with the `[output]` recording switches.
fn linear_ph_run_plan(config: &Config) -> Result<RunPlan> {
    Ok(RunPlan::LinearPh(Box::new(
        config.plan()?.with_recording(config.output.recording()),
    )))
}

impl SystemKind for LinearPhSpec {
    type Ensemble = LinearPhEnsembleSpec;
    type Problem = crate::families::NoProblem;
    const STARTER: &'static str = include_str!("../../../examples/starters/linear-ph.toml");

    fn run_plan(&self, config: &Config) -> Result<RunPlan> {
        linear_ph_run_plan(config)
    }

    fn energy_order<'c>(
        &self,
        config: &'c Config,
    ) -> Option<Result<Box<dyn EnergyOrderSubject + 'c>>> {
        Some(LinearEnergyOrder::new(config).map(|s| Box::new(s) as Box<dyn EnergyOrderSubject>))
    }
}

impl SystemKind for MechanicalSpec {
    type Ensemble = LinearPhEnsembleSpec;
    type Problem = crate::families::NoProblem;
    const STARTER: &'static str = include_str!("../../../examples/starters/mechanical.toml");

    fn run_plan(&self, config: &Config) -> Result<RunPlan> {
        linear_ph_run_plan(config)
    }

    fn energy_order<'c>(
        &self,
        config: &'c Config,
    ) -> Option<Result<Box<dyn EnergyOrderSubject + 'c>>> {
        Some(LinearEnergyOrder::new(config).map(|s| Box::new(s) as Box<dyn EnergyOrderSubject>))
    }
}
