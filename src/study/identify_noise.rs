//! `harbor study identify-noise`: one identification per output-noise level σ (the seed's
//! §5.3, Günther, Jacob & Totzeck 2023, Tables 1 and 2), harbor's numbers beside the
//! paper's for each σ. Each run is `harbor identify` with `data.noise.sigma = σ`; this
//! module puts their results side by side.
//!
//! The quantities are those of [`crate::io::paper_comparison`]: the first and last cost,
//! ‖y − y_ref‖∞ of the first and last outputs against the noise-free reference outputs,
//! and the cross-validation errors.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::io::paper_comparison::{ExperimentNumbers, PaperNumbers, QUANTITIES};

/// One noise level's result.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseRun {
    pub sigma: f64,
    pub harbor: ExperimentNumbers,
    /// The `[[paper]]` table for this σ, if the config has one.
    pub paper: Option<PaperNumbers>,
}

/// harbor's numbers from an identification.json (`field` names the file in errors).
pub fn numbers_from_json(field: &str, json: &Value) -> Result<ExperimentNumbers> {
    let number = |path: &[&str]| -> Result<f64> {
        let mut v = json;
        for key in path {
            v = &v[*key];
        }
        v.as_f64().ok_or_else(|| {
            Error::invalid(
                field,
                format!(
                    "has no number at {} (is it an identification.json of this harbor?)",
                    path.join(".")
                ),
            )
        })
    };
    let optional = |path: &[&str]| -> Option<f64> {
        let mut v = json;
        for key in path {
            v = &v[*key];
        }
        v.as_f64()
    };
    Ok(ExperimentNumbers {
        cost_initial: number(&["cost_initial"])?,
        cost_final: number(&["cost_final"])?,
        max_error_initial: number(&["max_error", "initial"])?,
        max_error_final: number(&["max_error", "final"])?,
        cross_validation_l2: optional(&["cross_validation", "l2"]),
        cross_validation_max: optional(&["cross_validation", "max"]),
    })
}

/// The printed table: one row per quantity, harbor's value and the paper's for every σ.
pub fn table(runs: &[NoiseRun]) -> String {
    let mut text = String::new();
    let sources: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.paper.as_ref().map(|p| p.source.as_str()))
        .collect();
    if let Some(first) = sources.first() {
        text.push_str(&format!("paper: {first}\n"));
    }
    text.push_str(&format!("{:<36}", "σ"));
    for run in runs {
        text.push_str(&format!(" {:>23}", run.sigma));
    }
    text.push('\n');
    text.push_str(&format!("{:<36}", ""));
    for _ in runs {
        text.push_str(&format!(" {:>11} {:>11}", "harbor", "paper"));
    }
    text.push('\n');
    for (key, label) in QUANTITIES {
        text.push_str(&format!("{label:<36}"));
        for run in runs {
            let cell = |v: Option<f64>| v.map_or_else(|| "—".to_string(), |v| format!("{v:.3e}"));
            text.push_str(&format!(
                " {:>11} {:>11}",
                cell(run.harbor.value(key)),
                cell(run.paper.as_ref().and_then(|p| p.value(key)))
            ));
        }
        text.push('\n');
    }
    text
}

/// `sigma,quantity,harbor,paper` (an absent value empty).
pub fn csv(runs: &[NoiseRun]) -> String {
    let mut text = String::from("sigma,quantity,harbor,paper\n");
    let cell = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:e}"));
    for run in runs {
        for (key, _) in QUANTITIES {
            text.push_str(&format!(
                "{},{key},{},{}\n",
                run.sigma,
                cell(run.harbor.value(key)),
                cell(run.paper.as_ref().and_then(|p| p.value(key)))
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn runs_are_read_from_their_json_and_tabled_beside_the_paper() {
        let json = json!({
            "cost_initial": 3.6e-2, "cost_final": 1e-4,
            "max_error": {"initial": 0.7, "final": 4e-3},
            "cross_validation": {"l2": 0.2, "max": 0.4},
        });
        let harbor = numbers_from_json("sigma_0.01/identification.json", &json).unwrap();
        assert_eq!(harbor.max_error_final, 4e-3);
        assert_eq!(harbor.cross_validation_max, Some(0.4));
        let paper = PaperNumbers {
            source: "Table 1".into(),
            sigma: Some(0.01),
            cost_initial: Some(3.67e-2),
            cost_final: None,
            max_error_initial: None,
            max_error_final: None,
            cross_validation_l2: None,
            cross_validation_max: None,
        };
        let runs = [
            NoiseRun {
                sigma: 0.01,
                harbor,
                paper: Some(paper),
            },
            NoiseRun {
                sigma: 0.25,
                harbor,
                paper: None,
            },
        ];
        let text = table(&runs);
        let first = text
            .lines()
            .find(|l| l.starts_with("cost in first"))
            .unwrap();
        assert!(
            first.contains("3.600e-2") && first.contains("3.670e-2"),
            "{text}"
        );
        assert_eq!(first.matches('—').count(), 1, "{text}");
        let csv = csv(&runs);
        assert_eq!(csv.lines().count(), 1 + 2 * QUANTITIES.len());
        assert!(csv.contains("0.01,cost_initial,3.6e-2,3.67e-2"), "{csv}");
        assert!(csv.contains("0.25,cost_final,1e-4,\n"), "{csv}");
        let missing = numbers_from_json("x.json", &json!({"cost_initial": 1.0}));
        assert!(missing.unwrap_err().to_string().contains("x.json"));
    }
}
