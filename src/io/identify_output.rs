//! What `harbor identify` writes into its output directory:
//!
//! - `identification.json`: `{"cost_initial", "cost_final", "relative_max_error",
//!   "cross_validation": {"l2", "max"} (with test inputs), "starts": [{"cost_initial",
//!   "cost_final", "iterations", "stop", "candidate"}…], "gradient_evaluations",
//!   "monte_carlo_evaluations", "wall_seconds", "backend", "fit", "order",
//!   "model": {"J", "R", "Q", "B", "x0"}, "max_error": {"initial", "final", "against"},
//!   "paper": {"source", "sigma", "rows"} (with [[paper]])}`; `cost_initial` is the best
//!   start's first cost (its Monte-Carlo candidate's or initial guess's), `cost_final` its
//!   final cost, `max_error` ‖y − y_ref‖∞ of its first and last outputs against the
//!   noise-free outputs of `[data.reference]` (the data when measured); a start from an
//!   `[[initial_guess]]` has `"initial_guess": i` in place of `"candidate"`;
//! - `model/{J,R,Q,B,x0}.npy`: the identified matrices;
//! - `cost_history.csv`: `start,iteration,cost` for every start;
//! - `outputs.csv`: `t, data_<c>…, fitted_<c>…, initial_<c>…` on the training inputs;
//! - `cross_validation.csv`: `t, data_<c>…, fitted_<c>…` on the test inputs;
//! - `cost.svg`, `outputs.svg`, `cross_validation.svg`: the same as plots (with the `cli`
//!   feature, which draws them).

use std::io::Write;
use std::path::{Path, PathBuf};

use nalgebra::DMatrix;
use serde_json::{Value, json};

use super::identify_spec::IdentifyProblem;
use super::paper_comparison::{ExperimentNumbers, PaperNumbers, comparison_json, comparison_table};
#[cfg(feature = "cli")]
use super::plot::{Marker, Panel, Series, panels_svg};
use crate::error::{Error, Result};
use crate::identify::{Outcome, OutputError, simulate_outputs};
use crate::linear_ph::OutputData;
use crate::linear_ph::Parts;

/// Outputs on one input set: the data and the fitted model's outputs (and, for training,
/// the best start's outputs before the descent).
#[derive(Debug, Clone)]
pub struct OutputComparison {
    pub h: f64,
    pub data: OutputData,
    pub fitted: OutputData,
    pub initial: Option<OutputData>,
    pub error: OutputError,
}

/// ‖y − y_ref‖∞ of the best start's outputs before and after the descent, y_ref the
/// noise-free outputs of `[data.reference]` (the data when they are measured).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReferenceError {
    pub initial: f64,
    pub last: f64,
    /// Whether y_ref is the reference model's noise-free output (else the data).
    pub noise_free: bool,
}

/// Everything an identification run reports.
#[derive(Debug, Clone)]
pub struct IdentifyReport {
    pub outcome: Outcome,
    pub fit: Parts,
    pub training: OutputComparison,
    pub cross_validation: Option<OutputComparison>,
    pub max_error: ReferenceError,
    /// The paper's numbers for this experiment (`[[paper]]`), if given.
    pub paper: Option<PaperNumbers>,
    pub wall_seconds: f64,
    pub backend: String,
}

impl IdentifyReport {
    /// The report of `outcome` on `problem`: the best start's outputs on the training
    /// inputs against the data (with the outputs of its Monte-Carlo candidate, before the
    /// descent), and on the test inputs against the test data when there are some;
    /// `backend` is the label of the backend that ran it.
    pub fn new(
        problem: &IdentifyProblem,
        outcome: Outcome,
        wall_seconds: f64,
        backend: String,
    ) -> Result<Self> {
        let plan = &problem.problem;
        let setup = &problem.setup;
        let h = plan.grid().h;
        let quadrature = plan.quadrature;
        let best = outcome.best_start();
        let fitted = simulate_outputs(&plan.model, &best.point.member(), None)?;
        let initial_point = outcome.initial_point(setup, outcome.best)?;
        let initial = simulate_outputs(&plan.model, &initial_point.member(), None)?;
        let clean = match &problem.reference {
            Some(reference) => Some(simulate_outputs(&plan.model, reference, None)?),
            None => None,
        };
        let y_ref = clean.as_ref().unwrap_or(&plan.data);
        let max_error = ReferenceError {
            initial: max_difference(&initial, y_ref),
            last: max_difference(&fitted, y_ref),
            noise_free: clean.is_some(),
        };
        let training = OutputComparison {
            h,
            error: OutputError::of(&fitted, &plan.data, quadrature, h),
            data: plan.data.clone(),
            fitted,
            initial: Some(initial),
        };
        let cross_validation = match &problem.cross_validation {
            Some(cv) => {
                let fitted = simulate_outputs(&cv.model, &best.point.member(), None)?;
                Some(OutputComparison {
                    h,
                    error: OutputError::of(&fitted, &cv.data, quadrature, h),
                    data: cv.data.clone(),
                    fitted,
                    initial: None,
                })
            }
            None => None,
        };
        Ok(IdentifyReport {
            outcome,
            fit: setup.fit,
            training,
            cross_validation,
            max_error,
            paper: problem.paper.clone(),
            wall_seconds,
            backend,
        })
    }

    /// harbor's side of a comparison with a paper (src/io/paper_comparison.rs).
    pub fn numbers(&self) -> ExperimentNumbers {
        let best = self.outcome.best_start();
        ExperimentNumbers {
            cost_initial: best.cost_initial,
            cost_final: best.cost,
            max_error_initial: self.max_error.initial,
            max_error_final: self.max_error.last,
            cross_validation_l2: self.cross_validation.as_ref().map(|cv| cv.error.l2),
            cross_validation_max: self.cross_validation.as_ref().map(|cv| cv.error.max),
        }
    }

    /// The printed comparison with the paper's numbers, when `[[paper]]` gave some.
    pub fn paper_table(&self) -> Option<String> {
        self.paper
            .as_ref()
            .map(|paper| comparison_table(paper, &self.numbers()))
    }
}

/// max_{k,c} |a_{k,c} − b_{k,c}|.
fn max_difference(a: &OutputData, b: &OutputData) -> f64 {
    a.values
        .iter()
        .zip(&b.values)
        .fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

fn rows(m: &DMatrix<f64>) -> Value {
    Value::Array(
        m.row_iter()
            .map(|row| json!(row.iter().copied().collect::<Vec<f64>>()))
            .collect(),
    )
}

impl IdentifyReport {
    /// `identification.json` as a value.
    pub fn json(&self) -> Value {
        let best = self.outcome.best_start();
        let w = best.point.parameters();
        let starts: Vec<Value> = self
            .outcome
            .starts
            .iter()
            .enumerate()
            .map(|(i, s)| {
                // A Monte-Carlo start names its candidate, an initial guess its index.
                let (key, index) = match self.outcome.candidate(i) {
                    Some(candidate) => ("candidate", candidate),
                    None => ("initial_guess", i),
                };
                json!({
                    "cost_initial": s.cost_initial,
                    "cost_final": s.cost,
                    "iterations": s.iterations,
                    "stop": s.stop.to_string(),
                    key: index,
                })
            })
            .collect();
        let mut value = json!({
            "cost_initial": best.cost_initial,
            "cost_final": best.cost,
            "relative_max_error": self.training.error.relative_max,
            "starts": starts,
            "gradient_evaluations": self.outcome.evaluations(),
            "monte_carlo_evaluations": self.outcome.monte_carlo_evaluations,
            "wall_seconds": self.wall_seconds,
            "backend": self.backend,
            "fit": self.fit.names(),
            "order": w.q.nrows(),
            "model": {
                "J": rows(&w.j),
                "R": rows(&w.r),
                "Q": rows(&w.q),
                "B": rows(&w.b),
                "x0": w.x0.iter().copied().collect::<Vec<f64>>(),
            },
        });
        if let Some(cv) = &self.cross_validation {
            value["cross_validation"] = json!({"l2": cv.error.l2, "max": cv.error.max});
        }
        value["max_error"] = json!({
            "initial": self.max_error.initial,
            "final": self.max_error.last,
            "against": if self.max_error.noise_free { "noise-free reference outputs" } else { "data" },
        });
        if let Some(paper) = &self.paper {
            value["paper"] = comparison_json(paper, &self.numbers());
        }
        value
    }

    /// Writes every file into `dir` (module docs) and returns their paths relative to
    /// `dir`, in the order written.
    pub fn write(&self, dir: &Path) -> Result<Vec<String>> {
        let mut files = Written {
            dir,
            names: Vec::new(),
        };
        let path = files.path("identification.json");
        let text =
            serde_json::to_string_pretty(&self.json()).map_err(|e| Error::io(&path, e.into()))?;
        std::fs::write(&path, text + "\n").map_err(|e| Error::io(&path, e))?;
        let model = dir.join("model");
        std::fs::create_dir_all(&model).map_err(|e| Error::io(&model, e))?;
        let w = self.outcome.best_start().point.parameters();
        for (name, matrix) in w.parts() {
            let path = files.path(&format!("model/{name}.npy"));
            let array = ndarray::Array2::from_shape_fn(matrix.shape(), |(i, k)| matrix[(i, k)]);
            let array = if name == "x0" {
                array
                    .into_shape_with_order(matrix.nrows())
                    .map(|a| a.into_dyn())
            } else {
                Ok(array.into_dyn())
            }
            .expect("x0 is a column");
            ndarray_npy::write_npy(&path, &array)
                .map_err(|e| Error::io(&path, std::io::Error::other(e.to_string())))?;
        }
        self.write_history(&files.path("cost_history.csv"))?;
        write_outputs(&files.path("outputs.csv"), &self.training)?;
        if let Some(cv) = &self.cross_validation {
            write_outputs(&files.path("cross_validation.csv"), cv)?;
        }
        #[cfg(feature = "cli")]
        self.plots(&mut files)?;
        Ok(files.names)
    }

    fn write_history(&self, path: &Path) -> Result<()> {
        let mut text = String::from("start,iteration,cost\n");
        for (start, s) in self.outcome.starts.iter().enumerate() {
            for (k, cost) in s.history.iter().enumerate() {
                text.push_str(&format!("{start},{k},{cost:e}\n"));
            }
        }
        std::fs::write(path, text).map_err(|e| Error::io(path, e))
    }

    #[cfg(feature = "cli")]
    fn plots(&self, files: &mut Written) -> Result<()> {
        let mut order: Vec<usize> = (0..self.outcome.starts.len()).collect();
        order.sort_by(|&a, &b| {
            self.outcome.starts[a]
                .cost
                .total_cmp(&self.outcome.starts[b].cost)
        });
        let series = order
            .iter()
            .enumerate()
            .map(|(rank, &start)| Series {
                label: if rank == 0 {
                    format!("start {start} (best)")
                } else {
                    format!("start {start}")
                },
                points: self.outcome.starts[start]
                    .history
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| (k as f64, c))
                    .collect(),
                color: rank.min(5),
                width: if rank == 0 { 2 } else { 1 },
                marker: Marker::None,
            })
            .take(6)
            .collect();
        panels_svg(
            &files.path("cost.svg"),
            "identification: cost per start (the six best)",
            &[Panel {
                title: "cost 𝒥(w_k)".into(),
                x_label: "iteration k".into(),
                y_label: "cost".into(),
                log_x: false,
                log_y: true,
                series,
            }],
        )?;
        output_plot(
            &files.path("outputs.svg"),
            "training outputs",
            &self.training,
        )?;
        if let Some(cv) = &self.cross_validation {
            output_plot(
                &files.path("cross_validation.svg"),
                "cross-validation outputs",
                cv,
            )?;
        }
        Ok(())
    }
}

/// The files of an output directory, named as they are written so that the list cannot
/// miss one.
struct Written<'a> {
    dir: &'a Path,
    /// Paths relative to `dir`.
    names: Vec<String>,
}

impl Written<'_> {
    /// The path of `name` (relative to the directory, `/`-separated), recorded as written.
    fn path(&mut self, name: &str) -> PathBuf {
        self.names.push(name.to_string());
        self.dir.join(name)
    }
}

/// `t, data_<c>…, fitted_<c>…[, initial_<c>…]`.
fn write_outputs(path: &Path, comparison: &OutputComparison) -> Result<()> {
    let m = comparison.data.channels;
    let file = std::fs::File::create(path).map_err(|e| Error::io(path, e))?;
    let mut out = std::io::BufWriter::new(file);
    let io = |e: std::io::Error| Error::io(path, e);
    let mut header = vec!["t".to_string()];
    let sets: Vec<(&str, &OutputData)> = [
        Some(("data", &comparison.data)),
        Some(("fitted", &comparison.fitted)),
        comparison.initial.as_ref().map(|d| ("initial", d)),
    ]
    .into_iter()
    .flatten()
    .collect();
    for (name, _) in &sets {
        header.extend((0..m).map(|c| format!("{name}_{c}")));
    }
    writeln!(out, "{}", header.join(",")).map_err(io)?;
    for k in 0..comparison.data.rows() {
        let mut line = format!("{:e}", k as f64 * comparison.h);
        for (_, set) in &sets {
            for v in set.row(k) {
                line.push_str(&format!(",{v:e}"));
            }
        }
        writeln!(out, "{line}").map_err(io)?;
    }
    out.flush().map_err(io)
}

/// One panel per output channel: data, fitted and (when known) initial outputs.
#[cfg(feature = "cli")]
fn output_plot(path: &Path, title: &str, comparison: &OutputComparison) -> Result<()> {
    let m = comparison.data.channels;
    let h = comparison.h;
    let channel = |set: &OutputData, c: usize| -> Vec<(f64, f64)> {
        (0..set.rows())
            .map(|k| (k as f64 * h, set.row(k)[c]))
            .collect()
    };
    let panels: Vec<Panel> = (0..m)
        .map(|c| {
            let mut series = vec![
                Series {
                    label: "data".into(),
                    points: channel(&comparison.data, c),
                    color: 2,
                    width: 2,
                    marker: Marker::None,
                },
                Series {
                    label: "fitted".into(),
                    points: channel(&comparison.fitted, c),
                    color: 4,
                    width: 1,
                    marker: Marker::None,
                },
            ];
            if let Some(initial) = &comparison.initial {
                series.push(Series {
                    label: "initial".into(),
                    points: channel(initial, c),
                    color: 0,
                    width: 1,
                    marker: Marker::None,
                });
            }
            Panel {
                title: format!("output y[{c}]"),
                x_label: "t".into(),
                y_label: format!("y[{c}]"),
                log_x: false,
                log_y: false,
                series,
            }
        })
        .collect();
    panels_svg(path, title, &panels)
}
