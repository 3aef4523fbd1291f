//! `[[paper]]` of an identify config: the numbers a paper reports for the same experiment,
//! printed beside harbor's and written into identification.json (`paper`).
//!
//! ```toml
//! [[paper]]
//! source = "Günther, Jacob & Totzeck 2023, §5.2, fit of x0 (Fig. 8, cross-validation Fig. 10)"
//! # sigma = 0.05            # the data.noise.sigma the numbers belong to (absent: any)
//! cost_initial = 1.16e-1      # 𝒥 in the first iteration
//! cost_final = 1.05e-3        # 𝒥 in the last iteration
//! max_error_initial = 6.38e-1 # ‖y − y_ref‖∞ in the first iteration
//! max_error_final = 8.75e-2   # ‖y − y_ref‖∞ in the last iteration
//! cross_validation_l2 = 4.58e-2
//! cross_validation_max = 8.75e-2
//! ```
//!
//! A run uses the first table whose `sigma` equals its `data.noise.sigma` (or that has
//! none); `harbor study identify-noise` runs every σ of the tables. harbor's side of each
//! row ([`ExperimentNumbers`]): the best start's first and last cost, ‖y − y_ref‖∞ of its
//! first and last outputs against the noise-free outputs of `[data.reference]` (against the
//! data when they are measured), and the cross-validation errors L2 = (Σ_k ω_k |e_k|²)^{1/2}
//! and max = max_{k,c} |e_{k,c}|.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// One `[[paper]]` table: the paper's numbers for one experiment (each optional).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PaperNumbers {
    /// Where the numbers come from: paper, section, table or figure.
    pub source: String,
    /// The output noise σ (data.noise.sigma) the numbers belong to; absent: any.
    #[serde(default)]
    pub sigma: Option<f64>,
    /// The cost in the paper's first iteration.
    #[serde(default)]
    pub cost_initial: Option<f64>,
    /// The cost in the paper's last iteration.
    #[serde(default)]
    pub cost_final: Option<f64>,
    /// ‖y − y_ref‖∞ in the first iteration.
    #[serde(default)]
    pub max_error_initial: Option<f64>,
    /// ‖y − y_ref‖∞ in the last iteration.
    #[serde(default)]
    pub max_error_final: Option<f64>,
    /// ‖y − y_test‖ in L²((0, T); ℝᵐ) of the cross-validation.
    #[serde(default)]
    pub cross_validation_l2: Option<f64>,
    /// ‖y − y_test‖∞ of the cross-validation.
    #[serde(default)]
    pub cross_validation_max: Option<f64>,
}

/// harbor's side of the comparison (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExperimentNumbers {
    pub cost_initial: f64,
    pub cost_final: f64,
    pub max_error_initial: f64,
    pub max_error_final: f64,
    pub cross_validation_l2: Option<f64>,
    pub cross_validation_max: Option<f64>,
}

/// The quantities compared, in the order printed: (key, label).
pub const QUANTITIES: [(&str, &str); 6] = [
    ("cost_initial", "cost in first iteration"),
    ("cost_final", "cost in last iteration"),
    ("max_error_initial", "‖y − y_ref‖∞ in first iteration"),
    ("max_error_final", "‖y − y_ref‖∞ in last iteration"),
    ("cross_validation_l2", "cross-validation ‖y − y_test‖_L2"),
    ("cross_validation_max", "cross-validation ‖y − y_test‖∞"),
];

impl PaperNumbers {
    /// Refuses a table without a source or with a number that is not finite, naming the
    /// field (`paper[i].…`).
    pub fn check(&self, index: usize) -> Result<()> {
        if self.source.trim().is_empty() {
            return Err(Error::invalid(
                format!("paper[{index}].source"),
                "is empty: say where the numbers come from (paper, section, table)",
            ));
        }
        let mut values = vec![("sigma", self.sigma)];
        values.extend(QUANTITIES.iter().map(|(key, _)| (*key, self.value(key))));
        for (key, value) in values {
            if let Some(v) = value
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(Error::invalid(
                    format!("paper[{index}].{key}"),
                    format!("must be a finite number ≥ 0, got {v}"),
                ));
            }
        }
        Ok(())
    }

    /// The paper's value of quantity `key` (one of [`QUANTITIES`]).
    pub fn value(&self, key: &str) -> Option<f64> {
        match key {
            "cost_initial" => self.cost_initial,
            "cost_final" => self.cost_final,
            "max_error_initial" => self.max_error_initial,
            "max_error_final" => self.max_error_final,
            "cross_validation_l2" => self.cross_validation_l2,
            "cross_validation_max" => self.cross_validation_max,
            _ => None,
        }
    }

    /// Whether the table belongs to a run with output noise `sigma`.
    pub fn matches(&self, sigma: f64) -> bool {
        self.sigma.is_none_or(|s| s == sigma)
    }
}

impl ExperimentNumbers {
    /// harbor's value of quantity `key` (one of [`QUANTITIES`]).
    pub fn value(&self, key: &str) -> Option<f64> {
        match key {
            "cost_initial" => Some(self.cost_initial),
            "cost_final" => Some(self.cost_final),
            "max_error_initial" => Some(self.max_error_initial),
            "max_error_final" => Some(self.max_error_final),
            "cross_validation_l2" => self.cross_validation_l2,
            "cross_validation_max" => self.cross_validation_max,
            _ => None,
        }
    }

    /// `{"cost_initial": …, …}` (absent cross-validation as null).
    pub fn json(&self) -> Value {
        let mut value = json!({});
        for (key, _) in QUANTITIES {
            value[key] = json!(self.value(key));
        }
        value
    }
}

/// identification.json's `paper`: `{"source", "sigma", "rows": {key: {"harbor", "paper"}}}`
/// for the quantities the paper gives (`sigma` where the table names one).
pub fn comparison_json(paper: &PaperNumbers, harbor: &ExperimentNumbers) -> Value {
    let mut rows = json!({});
    for (key, _) in QUANTITIES {
        if let Some(theirs) = paper.value(key) {
            rows[key] = json!({"harbor": harbor.value(key), "paper": theirs});
        }
    }
    // `sigma` only where the table belongs to one noise level (no nulls in the file).
    let mut value = json!({"source": paper.source, "rows": rows});
    if let Some(sigma) = paper.sigma {
        value["sigma"] = json!(sigma);
    }
    value
}

/// The printed table: one row per quantity the paper gives, harbor's value beside it.
pub fn comparison_table(paper: &PaperNumbers, harbor: &ExperimentNumbers) -> String {
    let mut text = format!("beside {}:\n", paper.source);
    text.push_str(&format!(
        "{:<36} {:>11} {:>11}\n",
        "quantity", "harbor", "paper"
    ));
    for (key, label) in QUANTITIES {
        if let Some(theirs) = paper.value(key) {
            let ours = harbor
                .value(key)
                .map_or_else(|| "—".to_string(), |v| format!("{v:.3e}"));
            text.push_str(&format!("{label:<36} {ours:>11} {theirs:>11.3e}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper() -> PaperNumbers {
        PaperNumbers {
            source: "seed §5.2".into(),
            sigma: None,
            cost_initial: Some(1.16e-1),
            cost_final: None,
            max_error_initial: None,
            max_error_final: Some(8.75e-2),
            cross_validation_l2: Some(4.58e-2),
            cross_validation_max: None,
        }
    }

    fn harbor() -> ExperimentNumbers {
        ExperimentNumbers {
            cost_initial: 0.115,
            cost_final: 1e-20,
            max_error_initial: 0.6,
            max_error_final: 2e-10,
            cross_validation_l2: None,
            cross_validation_max: Some(1e-9),
        }
    }

    #[test]
    fn rows_are_those_the_paper_gives_with_harbors_value_beside() {
        let table = comparison_table(&paper(), &harbor());
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2 + 3, "{table}");
        assert!(
            lines[2].contains("1.150e-1") && lines[2].contains("1.160e-1"),
            "{table}"
        );
        assert!(
            lines[3].contains("2.000e-10") && lines[3].contains("8.750e-2"),
            "{table}"
        );
        assert!(
            lines[4].contains('—') && lines[4].contains("4.580e-2"),
            "{table}"
        );
        let json = comparison_json(&paper(), &harbor());
        assert_eq!(json["rows"]["cost_initial"]["paper"], 1.16e-1);
        assert_eq!(json["rows"]["cost_initial"]["harbor"], 0.115);
        assert!(json["rows"]["cost_final"].is_null());
        assert!(json["rows"]["cross_validation_l2"]["harbor"].is_null());
    }

    #[test]
    fn bad_tables_name_the_field() {
        let mut p = paper();
        p.cost_final = Some(f64::NAN);
        let text = p.check(2).unwrap_err().to_string();
        assert!(text.contains("paper[2].cost_final"), "{text}");
        let mut p = paper();
        p.source = " ".into();
        assert!(
            p.check(0)
                .unwrap_err()
                .to_string()
                .contains("paper[0].source")
        );
        let mut p = paper();
        p.sigma = Some(0.05);
        assert!(p.matches(0.05) && !p.matches(0.01));
        p.sigma = None;
        assert!(p.matches(0.25));
    }
}
