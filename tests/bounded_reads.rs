//! Every file a user names is read up to a documented cap: an endless stream (`/dev/zero`)
//! or an oversized file ends in one error line naming the file, its setting and the cap,
//! instead of a read that grows until memory runs out.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::example_path;
use harbor::bounded_read::{CONFIG_FILE_CAP, DATA_FILE_CAP};

/// Runs `harbor <command> <config> --out <tmp>/run --backend cpu`; returns the exit code
/// and stderr after checking that nothing was written.
fn run(command: &str, config: &Path) -> (Option<i32>, String) {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_harbor"))
        .arg(command)
        .arg(config)
        .arg("--out")
        .arg(out.path().join("run"))
        .args(["--backend", "cpu"])
        .output()
        .unwrap();
    assert!(!out.path().join("run").exists());
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A sparse file of `len` bytes (no disk blocks are written).
fn sparse(dir: &Path, name: &str, len: u64) -> PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path).unwrap().set_len(len).unwrap();
    path
}

#[test]
fn an_endless_config_stream_is_refused_at_the_cap() {
    let zero = Path::new("/dev/zero");
    for command in ["simulate", "gradient", "identify"] {
        let (code, stderr) = run(command, zero);
        assert_eq!(code, Some(1), "{command}: {stderr}");
        assert!(
            stderr.starts_with("error: config /dev/zero: the file is larger than 64 MiB"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn an_oversized_config_file_is_refused_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = sparse(dir.path(), "huge.toml", CONFIG_FILE_CAP + 1);
    let (code, stderr) = run("simulate", &config);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("huge.toml: the file is larger than 64 MiB"),
        "{stderr}"
    );
}

#[test]
fn an_oversized_data_file_is_refused_naming_its_setting() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["y.csv", "y.npy"] {
        sparse(dir.path(), name, DATA_FILE_CAP + 1);
        let config = dir.path().join("problem.toml");
        let example = std::fs::read_to_string(example_path("gradient_check.toml")).unwrap();
        // The example's data come from [data.reference]; read them from the file instead.
        let text = strip_table(&example, "[data.reference]")
            .replace("[data]", &format!("[data]\nfile = \"{name}\""));
        std::fs::write(&config, text).unwrap();
        let (code, stderr) = run("gradient", &config);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(
            stderr.starts_with("error: data.file: ")
                && stderr.contains(name)
                && stderr.contains("is larger than 1024 MiB"),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn an_oversized_input_signal_file_is_refused_naming_its_setting() {
    let dir = tempfile::tempdir().unwrap();
    sparse(dir.path(), "u.csv", DATA_FILE_CAP + 1);
    let example = std::fs::read_to_string(example_path("oscillator_pulse.toml")).unwrap();
    let config = dir.path().join("run.toml");
    let text = strip_table(&example, "[[input]]") + "[[input]]\nkind = \"csv\"\npath = \"u.csv\"\n";
    std::fs::write(&config, text).unwrap();
    let (code, stderr) = run("simulate", &config);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: input[0].path: ")
            && stderr.contains("u.csv is larger than 1024 MiB"),
        "{stderr}"
    );
}

/// `text` without the table headed `header` and its keys.
fn strip_table(text: &str, header: &str) -> String {
    let mut inside = false;
    text.lines()
        .filter(|line| {
            if line.starts_with('[') {
                inside = line.starts_with(header);
            }
            !inside
        })
        .map(|line| format!("{line}\n"))
        .collect()
}
