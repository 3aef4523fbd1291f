//! `[study]`: the schemes and step sizes swept by `harbor study energy-order`, with the
//! checks that need nothing but the section itself.
//!
//! ```toml
//! [study]
//! schemes = [{ family = "gauss", stages = 2 }, { family = "lobatto-pair", stages = 3 }]
//!                       # default: the family's (gauss 1–3 and lobatto-pair 3–4 for
//!                       # linear systems; gauss and energy-preserving 1–3 for nonlinear PH)
//! h = [0.1, 0.05, 0.025]
//! fit_floor = 1e-13     # errors at or below are left out of the slope fit
//! fit_decades = 1.0     # the fit uses the finest points within this many decades of h
//! ```

use serde::Deserialize;

use crate::error::{Error, Num, Result};
use crate::io::config::MethodFamily;
use crate::plan::step_count;

/// One scheme of a study.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct SchemeChoice {
    /// The method family (`gauss`, `lobatto-iiia`, `lobatto-pair`, `energy-preserving`:
    /// whichever the system's kind integrates).
    pub family: MethodFamily,
    /// Its number of stages s.
    pub stages: usize,
}

/// `[study]`: the schemes and step sizes swept by `harbor study energy-order`.
#[derive(Debug, Clone, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StudySpec {
    /// The schemes compared, `{ family, stages }` each; absent: the system kind's default
    /// set.
    #[serde(default)]
    pub schemes: Option<Vec<SchemeChoice>>,
    /// The step sizes swept (at least two, each dividing scheme.t_end).
    #[serde(default = "default_study_steps")]
    pub h: Vec<f64>,
    /// Relative errors at or below this are treated as round-off dominated and left out of
    /// the slope fit (the measured round-off floor of the paper's experiments is ~5e-16).
    #[serde(default = "default_fit_floor")]
    pub fit_floor: f64,
    /// The fit uses the finest points above the floor within this many decades of h.
    #[serde(default = "default_fit_decades")]
    pub fit_decades: f64,
}

fn default_fit_floor() -> f64 {
    1e-13
}

fn default_fit_decades() -> f64 {
    1.0
}

/// Step sizes spanning [0.005, 0.5] that divide 2, 8, 10 and 18 (the pulse edges and the
/// end times of the paper's experiments).
fn default_study_steps() -> Vec<f64> {
    vec![0.5, 0.25, 0.2, 0.1, 0.05, 0.04, 0.025, 0.02, 0.01, 0.005]
}

impl StudySpec {
    /// Checks what `[study]` holds on its own, naming the entry at fault: at least one
    /// scheme and two step sizes (a slope needs two points), no repeats, stage counts in
    /// range, each step size finite and > 0, a finite fit floor ≥ 0 and fit window > 0.
    /// Whether a step size divides `scheme.t_end` is checked by [`StudySpec::step_count`].
    pub fn check(&self) -> Result<()> {
        let schemes = self.schemes.as_deref().unwrap_or_default();
        if self.schemes.is_some() && schemes.is_empty() {
            return Err(Error::invalid(
                "study.schemes",
                "is empty; list at least one scheme",
            ));
        }
        if self.h.len() < 2 {
            return Err(Error::invalid(
                "study.h",
                format!(
                    "has {} step size(s); the slope fit needs at least two",
                    self.h.len()
                ),
            ));
        }
        for (i, choice) in schemes.iter().enumerate() {
            if let Some(first) = schemes[..i].iter().position(|c| c == choice) {
                return Err(Error::invalid(
                    format!("study.schemes[{i}]"),
                    format!(
                        "{}-{} repeats study.schemes[{first}]",
                        choice.family.name(),
                        choice.stages
                    ),
                ));
            }
            let Some(range) = choice.family.stage_range() else {
                return Err(Error::invalid(
                    format!("study.schemes[{i}].family"),
                    format!(
                        "{} has no stage count to sweep; energy-order studies compare gauss, lobatto-iiia, lobatto-pair or energy-preserving schemes",
                        choice.family.name()
                    ),
                ));
            };
            if !range.contains(&choice.stages) {
                return Err(Error::invalid(
                    format!("study.schemes[{i}].stages"),
                    format!(
                        "{} supports {}..={} stages, got {}",
                        choice.family.name(),
                        range.start(),
                        range.end(),
                        choice.stages
                    ),
                ));
            }
        }
        for (i, &h) in self.h.iter().enumerate() {
            if !(h.is_finite() && h > 0.0) {
                return Err(Error::invalid(
                    format!("study.h[{i}]"),
                    format!("must be a finite number > 0, got {}", Num(h)),
                ));
            }
            if let Some(first) = self.h[..i].iter().position(|&g| g == h) {
                return Err(Error::invalid(
                    format!("study.h[{i}]"),
                    format!("h = {} repeats study.h[{first}]", Num(h)),
                ));
            }
        }
        if !(self.fit_floor.is_finite() && self.fit_floor >= 0.0) {
            return Err(Error::invalid(
                "study.fit_floor",
                format!("must be a finite number ≥ 0, got {}", Num(self.fit_floor)),
            ));
        }
        if !(self.fit_decades.is_finite() && self.fit_decades > 0.0) {
            return Err(Error::invalid(
                "study.fit_decades",
                format!("must be a finite number > 0, got {}", Num(self.fit_decades)),
            ));
        }
        Ok(())
    }
}

impl StudySpec {
    /// The number of steps t_end / `study.h[index]`, a whole number; a step size that
    /// does not fit is blamed on `study.h[index]`.
    pub fn step_count(&self, index: usize, t_end: f64) -> Result<usize> {
        let field = format!("study.h[{index}]");
        let h = *self.h.get(index).ok_or_else(|| {
            Error::invalid(
                field.clone(),
                format!("does not exist: study.h has {} entries", self.h.len()),
            )
        })?;
        step_count(h, t_end).map_err(|e| match e {
            Error::Invalid { field: f, problem } if f == "scheme.h" => {
                Error::invalid(field, problem)
            }
            other => other,
        })
    }
}

impl Default for StudySpec {
    fn default() -> Self {
        StudySpec {
            schemes: None,
            h: default_study_steps(),
            fit_floor: default_fit_floor(),
            fit_decades: default_fit_decades(),
        }
    }
}
