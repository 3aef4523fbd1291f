//! Input samples and measured outputs written in the config (`[[input]] kind = "samples"`,
//! `data.values`, `test_data.values`; the Python package hands NumPy arrays over this way)
//! against the same values in files: the same runs bit for bit, and bad values refused
//! with the field, the property and the value.

mod common;

use std::fmt::Write as _;

use harbor::Error;
use harbor::backend::Backend;
use harbor::identify::evaluate;
use harbor::io::Config;
use harbor::io::gradient_spec::GradientConfig;
use harbor::kernels::CpuPath;
use harbor::plan::MemoryBudget;

/// Times and values of a sampled input on [0, 18].
fn samples() -> (Vec<f64>, Vec<f64>) {
    let t: Vec<f64> = (0..=180).map(|k| k as f64 * 0.1).collect();
    let u = t.iter().map(|t| (0.7 * t).sin().powi(3)).collect();
    (t, u)
}

/// A TOML array of `values`, every number written to read back as itself.
fn toml_array(values: &[f64]) -> String {
    let items: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[{}]", items.join(", "))
}

const OSCILLATOR: &str = r#"
[system]
kind = "linear-ph"
J = [[0.0, 1.0], [-1.0, 0.0]]
R = [[0.0, 0.0], [0.0, 0.1]]
Q = [[1.0, 0.0], [0.0, 1.0]]
B = [[0.0], [1.0]]
x0 = [0.0, -1.0]

[scheme]
family = "gauss"
stages = 2
h = 0.01
t_end = 18.0

[output]
every = 10
"#;

fn final_states(config: &Config) -> Vec<u64> {
    let plan = config.run_plan().unwrap();
    let harbor::io::RunPlan::LinearPh(plan) = plan else {
        unreachable!("linear PH")
    };
    let results = Backend::Cpu(CpuPath::Reference).run(plan.as_ref()).unwrap();
    results.members[0]
        .final_state
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn input_samples_in_the_config_equal_the_same_samples_in_a_csv_file() {
    let (t, u) = samples();
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::new();
    for (t, u) in t.iter().zip(&u) {
        writeln!(csv, "{t:?},{u:?}").unwrap();
    }
    std::fs::write(dir.path().join("u.csv"), csv).unwrap();
    let from_file = dir.path().join("file.toml");
    std::fs::write(
        &from_file,
        format!("{OSCILLATOR}\n[[input]]\nkind = \"csv\"\npath = \"u.csv\"\n"),
    )
    .unwrap();
    let inline = format!(
        "{OSCILLATOR}\n[[input]]\nkind = \"samples\"\nt = {}\nvalues = {}\n",
        toml_array(&t),
        toml_array(&u)
    );
    assert_eq!(
        final_states(&Config::load(&from_file, &[]).unwrap()),
        final_states(&Config::from_str_with(&inline, &[], "inline").unwrap())
    );
}

#[test]
fn bad_input_samples_are_refused_naming_the_field_and_the_value() {
    for (samples, field, words) in [
        (
            "t = [0.0, 18.0]\nvalues = [1.0]",
            "input[0].values",
            &["1 value(s)", "2 time(s)"][..],
        ),
        (
            "t = [0.0]\nvalues = [1.0]",
            "input[0].t",
            &["1 sample(s)", "at least 2"][..],
        ),
        (
            "t = [0.0, 9.0, 9.0, 18.0]\nvalues = [1.0, 2.0, 3.0, 4.0]",
            "input[0].t",
            &["increase strictly", "t[2] = 9 follows t[1] = 9"][..],
        ),
        (
            "t = [0.0, inf]\nvalues = [1.0, 2.0]",
            "input[0].t",
            &["t[1] is inf", "finite"][..],
        ),
        (
            "t = [0.0, 9.0]\nvalues = [1.0, 2.0]",
            "input[0]",
            &["samples in input[0].t cover [0, 9]", "[0, 18]"][..],
        ),
    ] {
        let text = format!("{OSCILLATOR}\n[[input]]\nkind = \"samples\"\n{samples}\n");
        let error = Config::from_str_with(&text, &[], "inline")
            .and_then(|config| config.run_plan().map(|_| ()))
            .unwrap_err();
        let Error::Invalid {
            field: named,
            problem,
        } = &error
        else {
            panic!("{samples}: {error}")
        };
        assert_eq!(named, field, "{samples}: {error}");
        for word in words {
            assert!(problem.contains(word), "{samples}: {word:?} not in {error}");
        }
    }
}

/// The gradient problem of examples/gradient_check.toml with measured data: `data` is the
/// `[data]` table.
fn measured_problem(data: &str) -> String {
    let text = std::fs::read_to_string(common::example_path("gradient_check.toml")).unwrap();
    let (start, end) = (text.find("[data]").unwrap(), text.find("[cost]").unwrap());
    format!("{}[data]\n{data}\n\n{}", &text[..start], &text[end..])
}

/// Rows [t_k, y_1, y_2] on the problem's grid (h = 1e-3, N = 1000).
fn rows() -> Vec<Vec<f64>> {
    (0..=1000)
        .map(|k| {
            let t = k as f64 * 1e-3;
            vec![t, (3.0 * t).sin(), (5.0 * t).cos() * t]
        })
        .collect()
}

fn cost_and_gradient(text: &str, dir: &std::path::Path) -> (u64, Vec<u64>) {
    let path = dir.join("problem.toml");
    std::fs::write(&path, text).unwrap();
    let budget = MemoryBudget::default();
    let problem = GradientConfig::load(&path, &[])
        .unwrap()
        .problem(&budget)
        .unwrap();
    let evaluations = evaluate(&Backend::Cpu(CpuPath::Fast), &problem.plan, &budget).unwrap();
    let only = &evaluations[0];
    (
        only.cost.to_bits(),
        only.gradient.j.iter().map(|v| v.to_bits()).collect(),
    )
}

#[test]
fn measured_outputs_in_the_config_equal_the_same_rows_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("t,y1,y2\n");
    for row in rows() {
        writeln!(csv, "{:?},{:?},{:?}", row[0], row[1], row[2]).unwrap();
    }
    std::fs::write(dir.path().join("y.csv"), csv).unwrap();
    let inline: Vec<String> = rows().iter().map(|row| toml_array(row)).collect();
    assert_eq!(
        cost_and_gradient(&measured_problem("file = \"y.csv\""), dir.path()),
        cost_and_gradient(
            &measured_problem(&format!("values = [{}]", inline.join(", "))),
            dir.path()
        )
    );
}

#[test]
fn measured_outputs_off_the_grid_or_given_twice_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let budget = MemoryBudget::default();
    for (data, field, words) in [
        (
            "values = [[0.0, 1.0, 2.0], [0.5, 1.0, 2.0]]".to_string(),
            "data.values",
            &["row 1 has t = 0.5", "t_k = k h = 0.001"][..],
        ),
        (
            "values = [[0.0, 1.0]]".to_string(),
            "data.values",
            &["row 0 has 2 column(s)", "1 + m = 3"][..],
        ),
        (
            "values = [[0.0, 1.0, 2.0]]\nfile = \"y.csv\"".to_string(),
            "data",
            &["exactly one of data.file, data.values"][..],
        ),
    ] {
        let path = dir.path().join("problem.toml");
        std::fs::write(&path, measured_problem(&data)).unwrap();
        let error = GradientConfig::load(&path, &[])
            .and_then(|config| config.problem(&budget).map(|_| ()))
            .unwrap_err();
        let Error::Invalid {
            field: named,
            problem,
        } = &error
        else {
            panic!("{data}: {error}")
        };
        assert_eq!(named, field, "{data}: {error}");
        for word in words {
            assert!(problem.contains(word), "{data}: {word:?} not in {error}");
        }
    }
}
