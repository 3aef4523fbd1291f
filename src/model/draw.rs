//! How one value of a model varies across the members of an ensemble: fixed, perturbed
//! around its nominal value, or drawn afresh from a uniform, normal or lognormal law.
//! Families whose parameters are named in the config (`[ensemble] parameters.c = { kind =
//! "uniform", … }`) share it; member i draws from its own stream of the seed.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Deserialize;

use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// How one value varies across members.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, schemars::JsonSchema, Default)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Draw {
    /// The nominal value for every member.
    #[default]
    Fixed,
    /// The nominal value plus σ ξ, ξ standard normal.
    Perturb {
        /// σ ≥ 0.
        sigma: f64,
    },
    /// Uniform on [low, high), replacing the nominal value.
    Uniform {
        /// Lower end of the interval.
        low: f64,
        /// Upper end of the interval, ≥ low.
        high: f64,
    },
    /// Normal with `mean` and standard deviation `std`, replacing the nominal value.
    Normal {
        /// The mean.
        mean: f64,
        /// The standard deviation, ≥ 0.
        std: f64,
    },
    /// exp(μ + σ ξ), ξ standard normal, replacing the nominal value (positive).
    Lognormal {
        /// μ, the mean of the logarithm.
        mu: f64,
        /// σ ≥ 0, the standard deviation of the logarithm.
        sigma: f64,
    },
}

impl Draw {
    /// Checks the draw's numbers; `field` names it in errors.
    pub fn check(&self, field: &str) -> Result<()> {
        let bad = |what: &str| Err(Error::invalid(field, what.to_string()));
        match *self {
            Draw::Fixed => Ok(()),
            Draw::Perturb { sigma } | Draw::Lognormal { sigma, .. }
                if !(sigma.is_finite() && sigma >= 0.0) =>
            {
                bad(&format!("sigma must be finite and ≥ 0, got {sigma}"))
            }
            Draw::Lognormal { mu, .. } if !mu.is_finite() => {
                bad(&format!("mu must be finite, got {mu}"))
            }
            Draw::Uniform { low, high }
                if !(low.is_finite() && high.is_finite() && low <= high) =>
            {
                bad(&format!(
                    "needs finite low ≤ high, got low = {low}, high = {high}"
                ))
            }
            Draw::Normal { mean, std } if !(mean.is_finite() && std.is_finite() && std >= 0.0) => {
                bad(&format!(
                    "needs a finite mean and std ≥ 0, got mean = {mean}, std = {std}"
                ))
            }
            _ => Ok(()),
        }
    }
}

impl Draw {
    /// The value of one member from its stream: with ξ standard normal and υ uniform on
    /// [0, 1) (both always drawn, so every draw advances the stream alike), nominal,
    /// nominal + σ ξ, low + (high − low) υ, mean + std ξ, or exp(μ + σ ξ).
    pub fn sample(self, nominal: f64, rng: &mut ChaCha8Rng) -> f64 {
        let normal: f64 = StandardNormal.sample(rng);
        let unit: f64 = rng.random();
        match self {
            Draw::Fixed => nominal,
            Draw::Perturb { sigma } => nominal + sigma * normal,
            Draw::Uniform { low, high } => low + (high - low) * unit,
            Draw::Normal { mean, std } => mean + std * normal,
            Draw::Lognormal { mu, sigma } => (mu + sigma * normal).exp(),
        }
    }
}

/// The draws of a model's named parameters, in the model's order (`parameters`: names with
/// nominal values), from `[ensemble] parameters` (`draws`); a draw of a name the model does
/// not have, or with bad numbers, is an error naming `ensemble.parameters.<name>`.
pub fn parameter_draws(
    parameters: &[(String, f64)],
    draws: &BTreeMap<String, Draw>,
) -> Result<Vec<Draw>> {
    for (name, d) in draws {
        if !parameters.iter().any(|(known, _)| known == name) {
            let names: Vec<&str> = parameters.iter().map(|(n, _)| n.as_str()).collect();
            return Err(Error::invalid(
                format!("ensemble.parameters.{name}"),
                format!(
                    "is not a parameter of system.parameters ({})",
                    if names.is_empty() {
                        "it has none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        }
        d.check(&format!("ensemble.parameters.{name}"))?;
    }
    Ok(parameters
        .iter()
        .map(|(name, _)| draws.get(name).copied().unwrap_or_default())
        .collect())
}

/// Checks `[ensemble] members`: at least 1 and at most 2³² − 1 (members are indexed by a
/// u32 on every backend).
pub fn check_members(members: usize) -> Result<()> {
    if members == 0 {
        return Err(Error::invalid("ensemble.members", "must be ≥ 1, got 0"));
    }
    if members > u32::MAX as usize {
        return Err(Error::invalid(
            "ensemble.members",
            format!("{members} exceeds 2³² − 1"),
        ));
    }
    Ok(())
}
