//! The command line end to end: tables, simulations with overrides, studies, and that
//! outputs are complete and replaced only on success.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use ndarray::{Array1, Array3, Array4};
use ndarray_npy::read_npy;

/// [`common::run_harbor`] that must succeed.
fn harbor(args: &[&str]) -> Output {
    let output = common::run_harbor(args);
    assert!(
        output.status.success(),
        "harbor {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn tableau_json_has_the_documented_fields() {
    let out = harbor(&["tableau", "lobatto-iiia", "3", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["family"], "lobatto-iiia");
    assert_eq!(doc["stages"], 3);
    assert_eq!(doc["order"], 4);
    assert_eq!(doc["c"], serde_json::json!([0.0, 0.5, 1.0]));
    assert_eq!(doc["a"][1][0].as_f64().unwrap(), 5.0 / 24.0);
    assert_eq!(doc["m"][1][1].as_f64().unwrap(), 8.0 / 15.0);
    assert_eq!(doc["b"].as_array().unwrap().len(), 3);
    let text = String::from_utf8(harbor(&["tableau", "gauss", "2"]).stdout).unwrap();
    assert!(text.contains("gauss with s = 2, order 4"), "{text}");
}

#[test]
fn simulate_writes_summary_and_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pulse");
    let config = common::example_path("oscillator_pulse.toml");
    let stdout = harbor(&[
        "simulate",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
        "--set",
        "output.every=7",
    ])
    .stdout;
    let stdout = String::from_utf8(stdout).unwrap();
    assert!(stdout.contains("gauss-2 (order 4)"), "{stdout}");
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["members"], 1);
    assert_eq!(summary["steps"], 1800);
    assert_eq!(summary["h"], 0.01);
    assert_eq!(summary["backend"], "cpu");
    assert_eq!(summary["scheme"]["label"], "gauss-2");
    let stored = summary["energy"]["stored_total"][0].as_f64().unwrap();
    let supplied = summary["energy"]["supplied_total"][0].as_f64().unwrap();
    assert!((stored - supplied).abs() < 1e-13);
    // Within the order-4 error of the exact ΔH = 1.2914982459916…
    assert!((stored - 1.291498245991649).abs() < 1e-10, "{stored}");
    assert!(summary["energy"]["max_abs_residual"][0].as_f64().unwrap() < 1e-14);
    let final_state: Vec<f64> = serde_json::from_value(summary["final_state"][0].clone()).unwrap();

    // 1800 steps recorded every 7: 257 full windows + the last partial one, plus t = 0.
    let times: Array1<f64> = read_npy(out.join("times.npy")).unwrap();
    assert_eq!(times.len(), 259);
    assert_eq!(times[0], 0.0);
    assert!((times[1] - 0.07).abs() < 1e-15 && (times[258] - 18.0).abs() < 1e-12);
    let trajectory: Array3<f64> = read_npy(out.join("trajectory.npy")).unwrap();
    assert_eq!(trajectory.shape(), &[1, 259, 2]);
    assert_eq!(trajectory[[0, 0, 1]], -1.0);
    assert_eq!(trajectory[[0, 258, 0]], final_state[0]);
    let energy: Array3<f64> = read_npy(out.join("energy.npy")).unwrap();
    assert_eq!(energy.shape(), &[1, 258, 4]);
    let summed: f64 = (0..258).map(|w| energy[[0, w, 0]]).sum();
    assert!(
        (summed - stored).abs() < 1e-13,
        "windows add up to the total"
    );
    let outputs: Array4<f64> = read_npy(out.join("outputs.npy")).unwrap();
    assert_eq!(outputs.shape(), &[1, 258, 2, 1]);
}

#[test]
fn set_overrides_change_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("oscillator_pulse.toml");
    let run = |name: &str, sets: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "simulate",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        for s in sets {
            args.extend(["--set", s]);
        }
        harbor(&args);
        json(&out.join("summary.json"))
    };
    let free = run(
        "free",
        &[
            "input.0.amplitude=0.0",
            "system.x0=[0.6, 0.8]",
            "scheme.family=lobatto-pair",
            "scheme.stages=4",
        ],
    );
    // Lossless and unforced: no energy change at all, from H(x0) = 1/2.
    assert!(free["energy"]["stored_total"][0].as_f64().unwrap().abs() < 1e-14);
    assert_eq!(free["scheme"]["label"], "lobatto-pair-4");
    let x: Vec<f64> = serde_json::from_value(free["final_state"][0].clone()).unwrap();
    // Exact rotation: x(18) = e^{J·18} (0.6, 0.8); order-6 error at h = 0.01.
    let (c, s) = (18f64.cos(), 18f64.sin());
    assert!(
        (x[0] - (c * 0.6 + s * 0.8)).abs() < 1e-10 && (x[1] - (-s * 0.6 + c * 0.8)).abs() < 1e-10,
        "{x:?}"
    );
}

#[test]
fn failed_run_keeps_the_previous_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let config = common::example_path("oscillator_damped.toml");
    harbor(&[
        "simulate",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let before = std::fs::read(out.join("summary.json")).unwrap();
    let failed = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args([
            "simulate",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--set",
            "system.Q=[[1.0,0.0],[0.0,-1.0]]",
        ])
        .output()
        .unwrap();
    assert!(!failed.status.success());
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), before);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["run".to_string()],
        "no staging directories left behind"
    );
}

#[test]
fn study_writes_table_csv_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    let config = common::example_path("oscillator_damped.toml");
    let stdout = harbor(&[
        "study",
        "energy-order",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "study.schemes=[{family='gauss', stages=2}]",
        "--set",
        "study.h=[0.1, 0.05, 0.025]",
    ])
    .stdout;
    let stdout = String::from_utf8(stdout).unwrap();
    assert!(
        stdout.contains("ΔH_tot of the exact reference flow = -3.24108107492456"),
        "{stdout}"
    );
    let points = std::fs::read_to_string(out.join("energy_order.csv")).unwrap();
    assert_eq!(points.lines().count(), 4);
    let slopes = std::fs::read_to_string(out.join("energy_order_slopes.csv")).unwrap();
    let row: Vec<&str> = slopes.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[0], "gauss-2");
    assert!(
        (row[2].parse::<f64>().unwrap() - 4.0).abs() < 0.05,
        "{slopes}"
    );
    let svg = std::fs::read_to_string(out.join("energy_order.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("gauss-2 supplied"));
}

/// `simulate --backend gpu` and `--backend cpu` write the same energy totals (≤ 1e-12
/// relative in f64), and the summary says which backend ran.
#[test]
fn gpu_and_cpu_backends_agree_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("oscillator_pulse.toml");
    let run = |backend: &str| {
        let out = dir.path().join(backend);
        harbor(&[
            "simulate",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            backend,
            "--precision",
            "f64",
        ]);
        json(&out.join("summary.json"))
    };
    let (gpu, cpu) = (run("gpu"), run("cpu"));
    assert!(
        gpu["backend"].as_str().unwrap().starts_with("gpu: "),
        "{}",
        gpu["backend"]
    );
    assert_eq!(gpu["precision"], "f64");
    assert_eq!(cpu["backend"], "cpu");
    for key in ["stored_total", "supplied_total", "port_total"] {
        let (a, b) = (
            gpu["energy"][key][0].as_f64().unwrap(),
            cpu["energy"][key][0].as_f64().unwrap(),
        );
        assert!(
            (a - b).abs() <= 1e-12 * b.abs(),
            "{key}: gpu {a:e}, cpu {b:e}"
        );
    }
}

#[test]
fn unknown_adapter_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("oscillator_pulse.toml");
    for backend in ["gpu", "auto"] {
        let out = dir.path().join(backend);
        let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
            .args([
                "simulate",
                config.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--backend",
                backend,
            ])
            .args(["--adapter", "no-such-gpu-xyz"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success(),
            "{backend}: an adapter that matches nothing must fail"
        );
        assert!(
            stderr.contains("--adapter")
                && stderr.contains("no adapter name contains \"no-such-gpu-xyz\"")
                && stderr.contains("available:"),
            "{stderr}"
        );
        assert!(!out.exists());
    }
    // The same selector from the environment is reported as HARBOR_ADAPTER.
    let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .env("HARBOR_ADAPTER", "no-such-gpu-xyz")
        .args([
            "simulate",
            config.to_str().unwrap(),
            "--out",
            dir.path().join("env").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("HARBOR_ADAPTER: no adapter name contains \"no-such-gpu-xyz\"")
            && !stderr.contains("--adapter:"),
        "{stderr}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args([
            "simulate",
            config.to_str().unwrap(),
            "--out",
            dir.path().join("x").to_str().unwrap(),
            "--backend",
            "cpu",
            "--precision",
            "f32",
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("--precision: the CPU paths run in f64 only")
    );
}

#[test]
fn devices_lists_the_adapters() {
    let output = harbor(&["devices", "--json"]);
    let adapters: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let list = adapters.as_array().unwrap();
    assert!(
        !list.is_empty(),
        "the GPU tests need at least one adapter (lavapipe in CI)"
    );
    for key in [
        "name",
        "backend",
        "device_type",
        "driver",
        "shader_f64",
        "max_storage_buffer_binding_size",
        "max_compute_workgroups_per_dimension",
    ] {
        assert!(list[0].get(key).is_some(), "missing {key}");
    }
}

/// With no usable adapter (here: only a wgpu backend the platform lacks — DX12 on macOS,
/// Metal elsewhere), `auto` runs the CPU path and says so in one line; an explicit `gpu`
/// fails with a clear error.
#[test]
fn auto_falls_back_to_the_cpu_and_gpu_fails_without_an_adapter() {
    let missing_backend = if cfg!(target_os = "macos") {
        "dx12"
    } else {
        "metal"
    };
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("oscillator_pulse.toml");
    let run = |backend: &str| {
        Command::new(env!("CARGO_BIN_EXE_harbor"))
            .env("WGPU_BACKEND", missing_backend)
            .args([
                "simulate",
                config.to_str().unwrap(),
                "--out",
                dir.path().join(backend).to_str().unwrap(),
                "--backend",
                backend,
            ])
            .output()
            .unwrap()
    };
    let auto = run("auto");
    let stderr = String::from_utf8_lossy(&auto.stderr);
    assert!(auto.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("backend:"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("backend: cpu") && lines[0].contains("no usable GPU"),
        "{stderr}"
    );
    assert_eq!(
        json(&dir.path().join("auto").join("summary.json"))["backend"],
        "cpu"
    );
    let gpu = run("gpu");
    let stderr = String::from_utf8_lossy(&gpu.stderr);
    assert!(!gpu.status.success());
    assert!(stderr.contains("gpu: no GPU adapter found"), "{stderr}");
    assert!(!dir.path().join("gpu").exists());
}

/// The adapters as `harbor devices --json` lists them, best first.
fn adapters() -> Vec<serde_json::Value> {
    let output = harbor(&["devices", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    doc.as_array().unwrap().clone()
}

/// `auto` never prefers a software rasteriser (llvmpipe, lavapipe) to the CPU path, which is
/// faster: with only software adapters it runs the CPU path and says why in its one line;
/// `--backend gpu` and an explicit `--adapter` still use them. With a hardware adapter,
/// `auto` takes it.
#[test]
fn auto_prefers_the_cpu_path_to_a_software_adapter() {
    let adapters = adapters();
    let best = &adapters[0];
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("oscillator_pulse.toml");
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
            .env_remove("HARBOR_ADAPTER")
            .args(["simulate", config.to_str().unwrap(), "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{stderr}");
        let line = stderr
            .lines()
            .find(|l| l.starts_with("backend:"))
            .unwrap_or_default()
            .to_string();
        (line, json(&out.join("summary.json"))["backend"].clone())
    };
    let (line, backend) = run("auto", &["--backend", "auto"]);
    let name = best["name"].as_str().unwrap();
    if best["software"] == true {
        assert!(
            line.starts_with("backend: cpu")
                && line.contains(name)
                && line.contains("software rasteriser")
                && line.contains("--backend gpu uses"),
            "{line}"
        );
        assert_eq!(backend, "cpu");
    } else {
        assert!(line.starts_with("backend: gpu on"), "{line}");
    }
    let (_, backend) = run("gpu", &["--backend", "gpu"]);
    assert!(backend.as_str().unwrap().starts_with("gpu: "), "{backend}");
    let (line, backend) = run("named", &["--backend", "auto", "--adapter", name]);
    assert!(line.starts_with("backend: gpu on"), "{line}");
    assert!(backend.as_str().unwrap().contains(name), "{backend}");
}

/// Mesa's Wayland probe prints `error: XDG_RUNTIME_DIR is invalid or not set` when the
/// variable is unset or relative; harbor keeps those lines out of a GPU command's stderr.
#[test]
fn gpu_commands_print_no_xdg_runtime_dir_noise() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("oscillator_pulse.toml");
    for setting in [None, Some("relative/dir")] {
        let command = |args: &[&str]| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_harbor"));
            match setting {
                None => cmd.env_remove("XDG_RUNTIME_DIR"),
                Some(value) => cmd.env("XDG_RUNTIME_DIR", value),
            };
            let output = cmd.args(args).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            assert!(output.status.success(), "{args:?}: {stderr}");
            assert!(
                !stderr.contains("XDG_RUNTIME_DIR"),
                "{args:?} with XDG_RUNTIME_DIR={setting:?}: {stderr}"
            );
        };
        command(&["devices"]);
        let out = dir.path().join(setting.map_or("unset", |_| "relative"));
        command(&[
            "simulate",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "gpu",
        ]);
    }
}

/// Every list flag of `bench` takes space- and comma-separated values, as `--help` shows
/// its defaults, and `--json FILE` says where it wrote.
#[test]
fn bench_lists_take_spaces_or_commas_and_json_says_where_it_went() {
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("spaces", ["--members", "64", "128", "--states", "2", "4"]),
        ("commas", ["--members", "64,128", "--states", "2,4", "", ""]),
    ] {
        let path = dir.path().join(format!("{name}.json"));
        let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).collect();
        let mut all = vec!["bench", "--steps", "1", "--precision", "f32", "f64"];
        all.extend(args);
        all.extend(["--json", path.to_str().unwrap()]);
        let stdout = String::from_utf8(harbor(&all).stdout).unwrap();
        assert!(
            stdout.contains(&format!("wrote {}", path.display())),
            "{stdout}"
        );
        let rows = json(&path);
        let cases: Vec<(u64, u64)> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let case = &r["case"];
                (
                    case["states"].as_u64().unwrap(),
                    case["members"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(cases.len(), 4, "{name}: 2 sizes × 2 ensembles");
        for row in rows.as_array().unwrap() {
            let backends: Vec<&str> = row["measurements"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["backend"].as_str().unwrap())
                .collect();
            // The engine alone, `simulate` as a user runs it, then the reference.
            assert!(
                backends.starts_with(&["cpu", "simulate", "reference"]),
                "{name}: {backends:?}"
            );
        }
        for case in [(2, 64), (2, 128), (4, 64), (4, 128)] {
            assert!(
                cases.contains(&case),
                "{name}: {case:?} missing in {cases:?}"
            );
        }
    }
}

/// The positional CONFIG, a study's --out and every --set are described in --help, and
/// energy-order says that it runs on the CPU.
#[test]
fn help_describes_every_argument() {
    for command in [
        &["simulate"][..],
        &["study", "energy-order"],
        &["study", "precision-drift"],
        &["study", "contact-energy"],
    ] {
        let mut args = command.to_vec();
        args.push("-h");
        let help = String::from_utf8(harbor(&args).stdout).unwrap();
        for item in ["<CONFIG>", "--out <OUT>", "--set <KEY=VALUE>"] {
            let line = help
                .lines()
                .find(|l| l.trim_start().starts_with(item))
                .unwrap_or_else(|| panic!("{command:?}: no {item} in {help}"));
            let description = line.trim_start()[item.len()..].trim();
            assert!(
                !description.is_empty(),
                "{command:?}: {item} has no description: {help}"
            );
        }
    }
    let help = String::from_utf8(harbor(&["study", "energy-order", "-h"]).stdout).unwrap();
    assert!(help.contains("Runs on the CPU"), "{help}");
}

/// `tableau lobatto-pair` prints the pair as configs mean it: IIIA for positions, IIIB for
/// momenta, on the same c, b and M.
#[test]
fn tableau_prints_the_lobatto_pair() {
    let table = |family: &str| -> serde_json::Value {
        serde_json::from_slice(&harbor(&["tableau", family, "3", "--json"]).stdout).unwrap()
    };
    let (pair, iiia, iiib) = (
        table("lobatto-pair"),
        table("lobatto-iiia"),
        table("lobatto-iiib"),
    );
    assert_eq!(pair["family"], "lobatto-pair");
    assert_eq!(pair["order"], 4);
    assert_eq!(pair["a_positions"], iiia["a"]);
    assert_eq!(pair["a_momenta"], iiib["a"]);
    for key in ["c", "b", "m"] {
        assert_eq!(pair[key], iiia[key], "{key}");
        assert_eq!(pair[key], iiib[key], "{key}");
    }
    let text = String::from_utf8(harbor(&["tableau", "lobatto-pair", "3"]).stdout).unwrap();
    assert!(
        text.contains("lobatto-pair with s = 3, order 4")
            && text.contains("positions q: lobatto-iiia")
            && text.contains("momenta p: lobatto-iiib"),
        "{text}"
    );
}

/// `study precision-drift --steps` takes space-separated counts too.
#[test]
fn precision_drift_steps_take_spaces() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("drift");
    let config = common::example_path("oscillator_pulse.toml");
    harbor(&[
        "study",
        "precision-drift",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--steps",
        "10",
        "20",
    ]);
    let csv = std::fs::read_to_string(out.join("precision_drift.csv")).unwrap();
    for steps in ["10", "20"] {
        assert!(
            csv.lines()
                .skip(1)
                .any(|l| l.split(',').nth(1) == Some(steps)),
            "{csv}"
        );
    }
}

/// `auto` with an adapter named runs the CPU engine when the GPU kernels cannot run the
/// plan (n = 130 states, above their limit of 128), and says why; `--backend gpu` fails.
#[test]
fn auto_runs_the_cpu_engine_where_the_gpu_kernels_cannot() {
    let n = 130;
    let matrix = |diagonal: f64| {
        let rows: Vec<String> = (0..n)
            .map(|i| {
                let row: Vec<String> = (0..n)
                    .map(|j| if i == j { diagonal } else { 0.0 }.to_string())
                    .collect();
                format!("[{}]", row.join(", "))
            })
            .collect();
        format!("[{}]", rows.join(", "))
    };
    let x0: Vec<String> = (0..n).map(|i| format!("{}.0", i % 3)).collect();
    let config = format!(
        "[system]\nkind = \"linear-ph\"\nJ = {}\nQ = {}\nx0 = [{}]\n\n[scheme]\nfamily = \"gauss\"\nstages = 1\nh = 0.1\nt_end = 1.0\n",
        matrix(0.0),
        matrix(1.0),
        x0.join(", ")
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.toml");
    std::fs::write(&path, config).unwrap();
    let out = dir.path().join("out");
    let output = harbor(&[
        "simulate",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--adapter",
        "llvmpipe",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("backend: cpu (f64 SIMD engine")
            && stderr.contains("the GPU kernels cannot run this plan")
            && stderr.contains("n = 130"),
        "{stderr}"
    );
    assert_eq!(json(&out.join("summary.json"))["backend"], "cpu");
    let output = common::run_harbor(&[
        "simulate",
        path.to_str().unwrap(),
        "--out",
        dir.path().join("gpu").to_str().unwrap(),
        "--backend",
        "gpu",
    ]);
    assert!(!output.status.success());
}

/// Runs harbor with `stdout` as its standard output; returns (success, stderr).
fn harbor_into(args: &[&str], stdout: std::process::Stdio) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(args)
        .stdout(stdout)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Every command that prints fails with a clear error when stdout cannot be written (a full
/// device), and ends quietly with success when its reader has gone (a closed pipe, as
/// `harbor … | head -1`).
#[test]
fn printing_to_a_full_device_fails_and_to_a_closed_pipe_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_path("oscillator_pulse.toml");
    let out = dir.path().join("run");
    let simulate = [
        "simulate",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--backend",
        "cpu",
        "--set",
        "scheme.t_end=0.1",
    ];
    let commands: [&[&str]; 8] = [
        &["tableau", "gauss", "2"],
        &["tableau", "lobatto-pair", "3", "--json"],
        &["splitting", "--list"],
        &["splitting", "strang", "--json"],
        &["devices"],
        &["devices", "--json"],
        &["--help"],
        &simulate,
    ];
    for args in commands {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let (success, stderr) = harbor_into(args, full.into());
        assert!(!success, "{args:?} > /dev/full succeeded: {stderr}");
        assert!(
            stderr.contains("error: stdout: No space left on device"),
            "{args:?} > /dev/full: {stderr}"
        );
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let (success, stderr) = harbor_into(args, writer.into());
        assert!(success, "{args:?} | (closed): {stderr}");
        assert!(!stderr.contains("error"), "{args:?} | (closed): {stderr}");
    }
}

/// `--out` states its rule wherever it is taken, and `--backend cpu` says what contact
/// systems and gradients run there.
#[test]
fn help_states_the_out_rule_and_what_the_cpu_backend_runs() {
    for command in [
        &["simulate"][..],
        &["export-members"],
        &["gradient"],
        &["identify"],
        &["study", "energy-order"],
        &["study", "precision-drift"],
        &["study", "contact-energy"],
    ] {
        let mut args = command.to_vec();
        args.push("--help");
        let help = String::from_utf8(harbor(&args).stdout).unwrap();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            help.contains("a new path, an empty directory or an earlier harbor output")
                && help.contains("anything else there is refused, never replaced"),
            "{command:?}: {help}"
        );
        if help.contains("--backend") {
            assert!(
                help.contains(
                    "families without one (variational) run their f64 reference integrator there"
                ),
                "{command:?}: {help}"
            );
        }
    }
}

/// A bad `--set` value is blamed on the `--set` argument as typed, then its key path, with
/// the expected type in words; a bad value in the file is blamed on the file, also in words.
#[test]
fn set_and_config_errors_name_the_argument_and_the_type_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let pulse = common::example_path("oscillator_pulse.toml");
    let identify = common::example_path("identify_synthetic.toml");
    let fails = |command: &str, config: &Path, set: Option<&str>| -> String {
        let out = dir.path().join("never");
        let mut args = vec![
            command,
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
        ];
        if let Some(set) = set {
            args.extend(["--set", set]);
        }
        let output = common::run_harbor(&args);
        assert!(!output.status.success(), "{args:?} succeeded");
        assert!(!out.exists());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let sets = [
        (
            "simulate",
            &pulse,
            "output.every=abc",
            "error: --set output.every=abc: output.every: expected a whole number ≥ 0, got the string \"abc\"",
        ),
        (
            "simulate",
            &pulse,
            "output.every=-3",
            "error: --set output.every=-3: output.every: expected a whole number ≥ 0, got -3",
        ),
        (
            "simulate",
            &pulse,
            "scheme.h=true",
            "error: --set scheme.h=true: scheme.h: expected a number, got true",
        ),
        (
            "simulate",
            &pulse,
            "system.x0=[0.5, \"a\"]",
            "error: --set 'system.x0=[0.5, \"a\"]': system.x0[1]: expected a number, got the string \"a\"",
        ),
        (
            "simulate",
            &pulse,
            "system.x0=0.5",
            "error: --set system.x0=0.5: system.x0: expected a list [ … ], got 0.5",
        ),
        (
            "simulate",
            &pulse,
            "input.0.amplitude=loud",
            "error: --set input.0.amplitude=loud: input[0]: expected a number, got the string \"loud\"",
        ),
        (
            "simulate",
            &pulse,
            "output=3",
            "error: --set output=3: output: expected a table { … }, got 3",
        ),
        (
            "simulate",
            &pulse,
            "output.every=0",
            "error: --set output.every=0: output.every: must be ≥ 1",
        ),
        (
            "identify",
            &identify,
            "model.order=1.5",
            "error: --set model.order=1.5: model.order: expected a whole number ≥ 0, got 1.5",
        ),
        (
            "identify",
            &identify,
            "monte_carlo.seed=-1",
            "error: --set monte_carlo.seed=-1: monte_carlo.seed: expected a whole number ≥ 0, got -1",
        ),
    ];
    let rust_names = [
        "usize", "u64", "f64", "i64", "Vec<", "Option<", "struct ", "sequence", "enum ",
    ];
    for (command, config, set, expected) in sets {
        let stderr = fails(command, config, Some(set));
        assert!(stderr.starts_with(expected), "--set {set}: {stderr}");
        for rust in rust_names {
            assert!(!stderr.contains(rust), "--set {set}: {rust} in {stderr}");
        }
    }
    let bad_file = dir.path().join("bad.toml");
    let text = std::fs::read_to_string(&pulse).unwrap();
    for (from, to, expected) in [
        (
            "h = 0.01",
            "h = \"0.01\"",
            "scheme.h: expected a number, got the string \"0.01\"",
        ),
        (
            "every = 10",
            "every = 2.5",
            "output.every: expected a whole number ≥ 0, got 2.5",
        ),
    ] {
        assert!(text.contains(from), "{from}");
        std::fs::write(&bad_file, text.replacen(from, to, 1)).unwrap();
        let stderr = fails("simulate", &bad_file, None);
        assert!(
            stderr.starts_with(&format!("error: config {}: {expected}", bad_file.display())),
            "{stderr}"
        );
    }
}

/// identify prints the cost reduction as a ratio and its "wrote" line lists exactly the
/// files of the output directory.
#[test]
fn identify_prints_the_cost_ratio_and_every_file_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fit");
    let config = common::example_path("identify_synthetic.toml");
    let stdout = String::from_utf8(
        harbor(&[
            "identify",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
            "--set",
            "scheme.h=0.01",
            "--set",
            "monte_carlo.candidates=8",
            "--set",
            "monte_carlo.keep=2",
            "--set",
            "optimizer.max_iterations=5",
        ])
        .stdout,
    )
    .unwrap();
    assert!(stdout.contains(" of the first)"), "{stdout}");
    assert!(!stdout.contains("%"), "{stdout}");
    let prefix = format!("wrote {}/{{", out.display());
    let listed = stdout
        .lines()
        .find_map(|line| line.strip_prefix(&prefix)?.strip_suffix('}'))
        .unwrap_or_else(|| panic!("no {prefix}…}} line in {stdout}"));
    let mut listed: Vec<String> = listed.split(", ").map(String::from).collect();
    let mut present = Vec::new();
    let mut pending = vec![out.clone()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if !path.file_name().unwrap().to_str().unwrap().starts_with('.') {
                let relative = path.strip_prefix(&out).unwrap();
                present.push(relative.to_str().unwrap().replace('\\', "/"));
            }
        }
    }
    listed.sort();
    present.sort();
    assert_eq!(listed, present);
    assert!(present.contains(&"cross_validation.csv".to_string()));
}

/// `bench` prints the machine's load before its table and gives it with every JSON row.
#[test]
fn bench_prints_and_records_the_machine_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.json");
    let stdout = String::from_utf8(
        harbor(&[
            "bench",
            "--steps",
            "1",
            "--members",
            "64",
            "--states",
            "2",
            "--no-gpu",
            "--no-reference",
            "--json",
            path.to_str().unwrap(),
        ])
        .stdout,
    )
    .unwrap();
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with("machine: load ") && first.contains(" CPUs, "),
        "{stdout}"
    );
    let rows = json(&path);
    let machine = &rows[0]["machine"];
    assert!(machine["cpus"].as_u64().unwrap() >= 1, "{machine}");
    assert!(machine["threads"].as_u64().unwrap() >= 1, "{machine}");
    for key in ["load_1min", "other_processes_cpus"] {
        assert!(
            machine[key].is_null() || machine[key].as_f64().unwrap() >= 0.0,
            "{key}: {machine}"
        );
    }
}

/// Without a valid XDG_RUNTIME_DIR the CLI points it at a private directory of its own
/// (harbor-runtime-<pid>-…): removed when the run ends, and one left by a run that was
/// killed outright is removed by the next run.
#[test]
fn private_runtime_directories_do_not_pile_up() {
    let temp = tempfile::tempdir().unwrap();
    let mut finished = Command::new("true").spawn().unwrap();
    let dead = finished.id();
    finished.wait().unwrap();
    let left = temp.path().join(format!("harbor-runtime-{dead}-killed"));
    std::fs::create_dir(&left).unwrap();
    let unrelated = temp.path().join("harbor-runtime-notapid");
    std::fs::create_dir(&unrelated).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(["tableau", "gauss", "1"])
        .env_remove("XDG_RUNTIME_DIR")
        .env("TMPDIR", temp.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let mut names: Vec<String> = std::fs::read_dir(temp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["harbor-runtime-notapid".to_string()]);
}
