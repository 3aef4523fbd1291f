//! The commit window of `harbor simulate`: scenarios that interrupt, race or misdirect the
//! moment a run's output replaces `--out`.
//!
//! - `signal`: SIGINT or SIGTERM at a random moment of the run, spread over its measured
//!   duration and most of the time around its end, when the output is committed; `--out` new
//!   or holding a previous output. Judge: exit 130 (SIGINT) or 143 (SIGTERM), or 0 when the
//!   run had finished; the last line of stderr says `interrupted: no output was written`
//!   (and `--out` is exactly as before) or `interrupted after the output was written to
//!   <out>` (and `--out` is the complete new output).
//! - `concurrent`: 2–4 runs (of different ensemble sizes, so that a mixed output shows) into
//!   one `--out`, started together or up to 40 ms apart. Judge: each exits 0 or refuses with
//!   `error: --out: …`; at least one commits; `--out` is one complete output.
//! - `intruder`: someone else's directory (holding a file) or file is put at `--out`
//!   atomically at a random moment of the run. Judge: once it is there the run refuses with
//!   an error naming `--out` and leaves it as it was; if the run committed first, it is an
//!   ordinary success.
//! - `symlink`: `--out` is a dangling symlink, or one to an empty directory or to a previous
//!   output elsewhere. Judge: refused with `error: --out: …`, the link and its target as
//!   they were.
//!
//! Every scenario: no `.harbor-staging-*` or `.harbor-replaced-*` left, nothing beside
//! `--out` changed, no panic.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Settings;
use super::cases::Case;
use super::run::{
    FOREIGN, Limits, OLD_SUMMARY, check_summary, relevant_stderr, snapshot, spawn, wait,
};

/// The signal a `signal` scenario sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Int,
    Term,
}

impl Signal {
    fn number(self) -> i32 {
        match self {
            Signal::Int => 2,
            Signal::Term => 15,
        }
    }

    /// The exit code of a process that handles the signal: 128 + its number.
    pub fn exit_code(self) -> i32 {
        128 + self.number()
    }

    fn name(self) -> &'static str {
        match self {
            Signal::Int => "INT",
            Signal::Term => "TERM",
        }
    }
}

/// What a `symlink` scenario's `--out` points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkTarget {
    Nothing,
    EmptyDirectory,
    PreviousOutput,
}

/// One scenario; delays are fractions of the run's measured duration.
#[derive(Debug, Clone, PartialEq)]
pub enum Scenario {
    Signal {
        signal: Signal,
        delay: f64,
        previous: bool,
    },
    Concurrent {
        /// Start of each run after the first, in milliseconds.
        starts_ms: Vec<u64>,
        previous: bool,
    },
    Intruder {
        file: bool,
        delay: f64,
    },
    Symlink(LinkTarget),
}

impl Scenario {
    pub fn kind(&self) -> &'static str {
        match self {
            Scenario::Signal {
                signal: Signal::Int,
                ..
            } => "signal INT",
            Scenario::Signal { .. } => "signal TERM",
            Scenario::Concurrent { .. } => "concurrent",
            Scenario::Intruder { file: false, .. } => "intruder dir",
            Scenario::Intruder { .. } => "intruder file",
            Scenario::Symlink(_) => "symlink",
        }
    }

    /// Scenario `index` of `seed` (a ChaCha8 stream of its own, apart from the config
    /// cases').
    pub fn generate(seed: u64, index: usize) -> Scenario {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream((1 << 40) + index as u64);
        // Most moments around the end of the run, where the commit is.
        let delay = |rng: &mut ChaCha8Rng| {
            if rng.random_bool(0.6) {
                rng.random_range(0.6..1.15)
            } else {
                rng.random_range(0.0..1.2)
            }
        };
        match rng.random_range(0..20) {
            0..=9 => Scenario::Signal {
                signal: if rng.random_bool(0.5) {
                    Signal::Int
                } else {
                    Signal::Term
                },
                delay: delay(&mut rng),
                previous: rng.random_bool(0.5),
            },
            10..=13 => {
                let runs = rng.random_range(2..=4);
                // Half of them start together, so that their commits meet.
                let spread = if rng.random_bool(0.5) { 1 } else { 40 };
                Scenario::Concurrent {
                    starts_ms: (1..runs).map(|_| rng.random_range(0..spread)).collect(),
                    previous: rng.random_bool(0.4),
                }
            }
            14..=18 => Scenario::Intruder {
                file: rng.random_bool(0.4),
                delay: delay(&mut rng),
            },
            _ => Scenario::Symlink(match rng.random_range(0..3) {
                0 => LinkTarget::Nothing,
                1 => LinkTarget::EmptyDirectory,
                _ => LinkTarget::PreviousOutput,
            }),
        }
    }
}

/// The judgement of one scenario.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// What happened, for the counts (`FAILED` when `problems` is not empty).
    pub outcome: String,
    pub problems: Vec<String>,
    /// The command lines and the stderr of every run.
    pub detail: String,
}

/// The config of the scenarios: examples/oscillator_ensemble.toml over `members` members and
/// `steps` steps, recording every 10th step.
pub fn config_text(members: u64, steps: u64) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/oscillator_ensemble.toml");
    let text = std::fs::read_to_string(path).expect("the example reads");
    let mut table: toml::Table = text.parse().expect("the example parses");
    let h = table["scheme"]["h"].as_float().expect("scheme.h");
    table["scheme"]["t_end"] = toml::Value::Float(h * steps as f64);
    table["ensemble"]["members"] = toml::Value::Integer(members as i64);
    table["output"]["every"] = toml::Value::Integer(10);
    toml::to_string(&table).expect("the config writes")
}

/// The ensemble size of run `k` of a scenario.
fn members(k: usize) -> u64 {
    500 + 7 * k as u64
}

/// The steps of every run.
const STEPS: u64 = 400;

/// A previous harbor output at `dir`: the marker, an old summary and 200 small files, so
/// that removing it takes a while.
fn previous_output(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(".harbor-output"), b"written by harbor\n").unwrap();
    std::fs::write(dir.join("summary.json"), OLD_SUMMARY).unwrap();
    for i in 0..200 {
        std::fs::write(dir.join(format!("old-{i}.npy")), [0u8; 512]).unwrap();
    }
}

/// The seconds one run of the scenarios' config takes here: the slowest of three.
pub fn measure(bin: &Path, root: &Path, limits: &Limits) -> Duration {
    let dir = root.join("calibration");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), config_text(members(0), STEPS)).unwrap();
    let mut slowest = Duration::from_millis(10);
    for i in 0..3 {
        let out = dir.join(format!("run-{i}"));
        let args = arguments(&dir.join("config.toml"), &out);
        let mut child = spawn(bin, &args, &dir, &dir, "", limits, false);
        let (status, _, seconds) = wait(&mut child, Instant::now(), limits.timeout);
        assert!(
            status.is_some_and(|s| s.success()),
            "the commit scenarios' config does not run: {}",
            std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default()
        );
        slowest = slowest.max(Duration::from_secs_f64(seconds));
    }
    let _ = std::fs::remove_dir_all(&dir);
    slowest
}

fn arguments(config: &Path, out: &Path) -> Vec<OsString> {
    vec![
        "simulate".into(),
        config.into(),
        "--out".into(),
        out.into(),
        "--backend".into(),
        "cpu".into(),
    ]
}

/// Names at the top of `after` (a snapshot) that are staging or replaced directories.
fn leftovers(after: &BTreeMap<String, Option<Vec<u8>>>) -> Vec<String> {
    after
        .keys()
        .filter(|k| !k.contains('/'))
        .filter(|k| k.starts_with(".harbor-staging-") || k.starts_with(".harbor-replaced-"))
        .cloned()
        .collect()
}

/// What differs between two snapshots, in words.
fn changes(
    before: &BTreeMap<String, Option<Vec<u8>>>,
    after: &BTreeMap<String, Option<Vec<u8>>>,
) -> Option<String> {
    let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let removed: Vec<&String> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let changed: Vec<&String> = before
        .iter()
        .filter(|(k, v)| after.get(*k).is_some_and(|w| w != *v))
        .map(|(k, _)| k)
        .collect();
    let show = |items: &[&String]| {
        let mut shown: Vec<&str> = items.iter().take(4).map(|s| s.as_str()).collect();
        if items.len() > 4 {
            shown.push("…");
        }
        shown.join(", ")
    };
    if added.is_empty() && removed.is_empty() && changed.is_empty() {
        None
    } else {
        Some(format!(
            "added [{}], removed [{}], changed [{}]",
            show(&added),
            show(&removed),
            show(&changed)
        ))
    }
}

/// `out` is one complete new output: the marker, a summary.json that is not the previous
/// one and whose arrays agree with it.
fn complete_output(out: &Path, problems: &mut Vec<String>) {
    if !out.join(".harbor-output").is_file() {
        problems.push(format!("{} is not a complete harbor output", out.display()));
        return;
    }
    let text = std::fs::read(out.join("summary.json")).unwrap_or_default();
    if text == OLD_SUMMARY {
        problems.push("--out still holds the previous output's summary.json".into());
        return;
    }
    match serde_json::from_slice(&text) {
        Ok(summary) => {
            let mut found = Vec::new();
            check_summary(
                &Case::new(0, "commit", Vec::new()),
                out,
                &summary,
                &mut found,
            );
            problems.extend(found.into_iter().map(|p| format!("--out: {p}")));
        }
        Err(e) => problems.push(format!("--out/summary.json does not parse: {e}")),
    }
    if std::fs::read_dir(out).is_ok_and(|d| {
        d.flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("old-"))
    }) {
        problems.push("--out mixes the previous output's files with the new ones".into());
    }
}

/// The top-level names in a snapshot other than `run` (the `--out` of every scenario).
fn beside_out(after: &BTreeMap<String, Option<Vec<u8>>>) -> Vec<String> {
    after
        .keys()
        .filter(|k| !k.contains('/') && *k != "run")
        .cloned()
        .collect()
}

/// One finished run of a scenario.
struct Run {
    status: Option<ExitStatus>,
    timed_out: bool,
    stderr: String,
    command: String,
}

impl Run {
    fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }

    fn error_line(&self) -> Option<String> {
        relevant_stderr(&self.stderr)
            .into_iter()
            .find(|l| l.starts_with("error"))
            .map(str::to_string)
    }

    fn last_line(&self) -> String {
        relevant_stderr(&self.stderr)
            .last()
            .map_or_else(String::new, |l| l.to_string())
    }

    /// Problems every run can have: a panic, a hang, a crash.
    fn basic_problems(&self, what: &str, problems: &mut Vec<String>) {
        if self.stderr.contains("panicked") {
            problems.push(format!("{what} panicked"));
        }
        if self.timed_out {
            problems.push(format!("{what} hangs"));
        } else if self.status.is_none() {
            problems.push(format!("{what} could not be waited for"));
        }
    }

    /// Exit 1 with `error: --out…` naming `out` (the refusal of the contract).
    fn refused_naming(&self, out: &Path) -> bool {
        self.code() == Some(1)
            && self
                .error_line()
                .is_some_and(|l| l.contains("--out") && l.contains(&*out.to_string_lossy()))
    }
}

/// Runs scenario `scenario` with `bin` in `dir`, a run taking about `duration`.
pub fn run_scenario(
    bin: &Path,
    scenario: &Scenario,
    dir: &Path,
    duration: Duration,
    limits: &Limits,
) -> Judgement {
    let parent = dir.join("out");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&parent).unwrap();
    let out = parent.join("run");
    let configs: Vec<PathBuf> = (0..4)
        .map(|k| {
            let path = dir.join(format!("config-{k}.toml"));
            std::fs::write(&path, config_text(members(k), STEPS)).unwrap();
            path
        })
        .collect();
    match scenario {
        Scenario::Signal { previous, .. } | Scenario::Concurrent { previous, .. } if *previous => {
            previous_output(&out)
        }
        Scenario::Symlink(target) => {
            let to = match target {
                LinkTarget::Nothing => dir.join("nowhere"),
                LinkTarget::EmptyDirectory => {
                    std::fs::create_dir_all(&elsewhere).unwrap();
                    elsewhere.clone()
                }
                LinkTarget::PreviousOutput => {
                    previous_output(&elsewhere);
                    elsewhere.clone()
                }
            };
            std::os::unix::fs::symlink(&to, &out).unwrap();
        }
        _ => {}
    }
    let before = snapshot(&parent);
    let elsewhere_before = snapshot(&elsewhere);
    let limit = limits.timeout;
    let start = |k: usize| {
        let args = arguments(&configs[k], &out);
        let command = super::run::command_line(bin, &parent, &args);
        (
            spawn(bin, &args, &parent, dir, &format!("-{k}"), limits, false),
            command,
        )
    };
    let finish = |k: usize, child: &mut std::process::Child, started: Instant, command: String| {
        let (status, timed_out, _) = wait(child, started, limit);
        Run {
            status,
            timed_out,
            stderr: std::fs::read_to_string(dir.join(format!("stderr-{k}.txt")))
                .unwrap_or_default(),
            command,
        }
    };
    let mut problems = Vec::new();
    let mut detail = String::new();
    let outcome: String;
    match scenario {
        Scenario::Signal { signal, delay, .. } => {
            let (mut child, command) = start(0);
            let started = Instant::now();
            sleep_until(started, duration.mul_f64(*delay));
            let sent = matches!(child.try_wait(), Ok(None))
                && std::process::Command::new("kill")
                    .arg(format!("-{}", signal.name()))
                    .arg(child.id().to_string())
                    .status()
                    .is_ok_and(|s| s.success());
            let run = finish(0, &mut child, started, command);
            let after = snapshot(&parent);
            run.basic_problems("the run", &mut problems);
            outcome = judge_signal(*signal, sent, &run, &out, &before, &after, &mut problems);
            let _ = writeln!(
                detail,
                "{}\nsignal sent after {:.0} ms: {sent}\nstderr:\n{}",
                run.command,
                duration.mul_f64(*delay).as_secs_f64() * 1e3,
                tail(&run.stderr)
            );
        }
        Scenario::Concurrent { starts_ms, .. } => {
            let started = Instant::now();
            let mut children = vec![start(0)];
            for (k, ms) in starts_ms.iter().enumerate() {
                sleep_until(started, Duration::from_millis(*ms));
                children.push(start(k + 1));
            }
            let runs: Vec<Run> = children
                .into_iter()
                .enumerate()
                .map(|(k, (mut child, command))| finish(k, &mut child, started, command))
                .collect();
            let after = snapshot(&parent);
            let mut committed = 0;
            for (k, run) in runs.iter().enumerate() {
                run.basic_problems(&format!("run {k}"), &mut problems);
                match run.code() {
                    Some(0) => committed += 1,
                    Some(1) if run.error_line().is_some_and(|l| l.contains("--out")) => {}
                    _ => problems.push(format!(
                        "run {k} neither committed nor refused with `error: --out…` ({:?}, {:?})",
                        run.status,
                        run.error_line()
                    )),
                }
                let _ = writeln!(detail, "{}\nstderr:\n{}", run.command, tail(&run.stderr));
            }
            if committed == 0 {
                problems.push(format!("none of {} concurrent runs committed", runs.len()));
            } else {
                complete_output(&out, &mut problems);
            }
            let beside = beside_out(&after);
            if !beside.is_empty() {
                problems.push(format!("left {beside:?} beside --out"));
            }
            outcome = format!("{committed} of {} committed", runs.len());
        }
        Scenario::Intruder { file, delay } => {
            // Prepared elsewhere on the same file system, then renamed into place: it
            // appears at once, and only where nothing is yet.
            let staged = dir.join("intruder");
            if *file {
                std::fs::write(&staged, FOREIGN).unwrap();
            } else {
                std::fs::create_dir_all(&staged).unwrap();
                std::fs::write(staged.join("notes.txt"), FOREIGN).unwrap();
            }
            let (mut child, command) = start(0);
            let started = Instant::now();
            sleep_until(started, duration.mul_f64(*delay));
            let placed = !out.exists() && std::fs::rename(&staged, &out).is_ok();
            let placed_after = started.elapsed();
            let intruder = state_of(&out);
            let run = finish(0, &mut child, started, command);
            let after = snapshot(&parent);
            run.basic_problems("the run", &mut problems);
            if placed {
                outcome = "refused".into();
                if !run.refused_naming(&out) {
                    problems.push(format!(
                        "someone else's {} appeared at --out during the run, and the run did not refuse with `error: --out: …` naming {} ({:?}, {:?})",
                        if *file { "file" } else { "directory" },
                        out.display(),
                        run.status,
                        run.error_line()
                    ));
                }
                if state_of(&out) != intruder {
                    problems.push(format!(
                        "someone else's {} at --out was not left as it was (now: {})",
                        if *file { "file" } else { "directory" },
                        match state_of(&out) {
                            None => "gone".to_string(),
                            Some(s) => format!("{:?}", s.keys().take(4).collect::<Vec<_>>()),
                        }
                    ));
                }
            } else {
                outcome = "committed first".into();
                if run.code() != Some(0) {
                    problems.push(format!(
                        "the run failed with nothing in its way ({:?}, {:?})",
                        run.status,
                        run.error_line()
                    ));
                } else {
                    complete_output(&out, &mut problems);
                }
                let beside = beside_out(&after);
                if !beside.is_empty() {
                    problems.push(format!("left {beside:?} beside --out"));
                }
            }
            let _ = writeln!(
                detail,
                "{}\nintruder placed after {:.0} ms: {placed}\nstderr:\n{}",
                run.command,
                placed_after.as_secs_f64() * 1e3,
                tail(&run.stderr)
            );
        }
        Scenario::Symlink(_) => {
            let (mut child, command) = start(0);
            let run = finish(0, &mut child, Instant::now(), command);
            let after = snapshot(&parent);
            run.basic_problems("the run", &mut problems);
            if !run.refused_naming(&out) {
                problems.push(format!(
                    "a symlink --out was not refused with `error: --out: …` naming {} ({:?}, {:?})",
                    out.display(),
                    run.status,
                    run.error_line()
                ));
            }
            if let Some(change) = changes(&before, &after) {
                problems.push(format!("beside the link: {change}"));
            }
            if let Some(change) = changes(&elsewhere_before, &snapshot(&elsewhere)) {
                problems.push(format!("the link's target changed: {change}"));
            }
            if std::fs::symlink_metadata(&out).is_ok_and(|m| !m.file_type().is_symlink()) {
                problems.push("the symlink at --out was replaced".into());
            }
            outcome = if run.code() == Some(1) {
                "refused"
            } else {
                "not refused"
            }
            .into();
            let _ = writeln!(detail, "{}\nstderr:\n{}", run.command, tail(&run.stderr));
        }
    }
    let left = leftovers(&snapshot(&parent));
    if !left.is_empty() && !problems.iter().any(|p| p.contains(".harbor-")) {
        problems.push(format!("left {left:?}"));
    }
    Judgement {
        outcome: if problems.is_empty() {
            outcome
        } else {
            "FAILED".into()
        },
        problems,
        detail,
    }
}

/// Judges a run that was sent `signal` (if `sent`); returns what happened.
fn judge_signal(
    signal: Signal,
    sent: bool,
    run: &Run,
    out: &Path,
    before: &BTreeMap<String, Option<Vec<u8>>>,
    after: &BTreeMap<String, Option<Vec<u8>>>,
    problems: &mut Vec<String>,
) -> String {
    let nothing_changed = |problems: &mut Vec<String>, why: &str| {
        if let Some(change) = changes(before, after) {
            problems.push(format!("{why}, but the output location changed: {change}"));
        }
    };
    let only_out = |problems: &mut Vec<String>| {
        let beside = beside_out(after);
        if !beside.is_empty() {
            problems.push(format!("left {beside:?} beside --out"));
        }
    };
    let Some(status) = run.status else {
        return "FAILED".into();
    };
    if let Some(number) = status.signal() {
        if sent && number == signal.number() {
            // Before harbor's handler was installed the signal ends the process outright.
            nothing_changed(
                problems,
                "the signal ended the run before its handler was installed",
            );
            return "ended by the signal".into();
        }
        problems.push(format!("killed by signal {number}"));
        return "FAILED".into();
    }
    let code = status.code().unwrap_or(-1);
    let last = run.last_line();
    if code == 0 && !last.starts_with("interrupted") {
        complete_output(out, problems);
        only_out(problems);
        return "finished".into();
    }
    if code != signal.exit_code() {
        problems.push(format!(
            "SIG{} ended the run with exit code {code}, expected {} (128 + {})",
            signal.name(),
            signal.exit_code(),
            signal.number()
        ));
    }
    if last == "interrupted: no output was written" {
        nothing_changed(problems, "stderr says no output was written");
        "interrupted, nothing written".into()
    } else if last
        == format!(
            "interrupted after the output was written to {}",
            out.display()
        )
    {
        complete_output(out, problems);
        only_out(problems);
        "interrupted after writing".into()
    } else {
        problems.push(format!(
            "the last line of stderr says neither `interrupted: no output was written` nor `interrupted after the output was written to {}`: {last:?}",
            out.display()
        ));
        "FAILED".into()
    }
}

/// What is at `path`: a file's contents (under the key ""), a directory's snapshot, or
/// None.
fn state_of(path: &Path) -> Option<BTreeMap<String, Option<Vec<u8>>>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.is_dir() {
        Some(snapshot(path))
    } else {
        Some(BTreeMap::from([(String::new(), std::fs::read(path).ok())]))
    }
}

fn sleep_until(started: Instant, at: Duration) {
    if let Some(rest) = at.checked_sub(started.elapsed()) {
        std::thread::sleep(rest);
    }
}

/// The last 12 lines of `text`.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

/// Runs the commit scenarios of `settings` (`commit_cases` of them, `HARBOR_FUZZ_ONLY`
/// applying to them too) and panics with a report when any fails.
pub fn fuzz_commit(settings: &Settings) {
    let bin = super::binary();
    let root = tempfile::Builder::new()
        .prefix("harbor-fuzz-commit-")
        .tempdir()
        .expect("a temporary directory");
    let duration = measure(&bin, root.path(), &settings.limits);
    let indices: Vec<usize> = settings
        .only
        .clone()
        .unwrap_or_else(|| (0..settings.commit_cases).collect());
    eprintln!(
        "fuzz commit: seed {}, {} scenario(s), {} job(s), one run takes ~{:.0} ms",
        settings.seed,
        indices.len(),
        settings.jobs,
        duration.as_secs_f64() * 1e3
    );
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Scenario, Judgement)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..settings.jobs {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&index) = indices.get(k) else {
                        break;
                    };
                    let scenario = Scenario::generate(settings.seed, index);
                    let dir = root.path().join(format!("scenario-{index}"));
                    std::fs::create_dir_all(&dir).unwrap();
                    let judgement = run_scenario(&bin, &scenario, &dir, duration, &settings.limits);
                    if judgement.problems.is_empty() {
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                    results.lock().unwrap().push((index, scenario, judgement));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    let mut counts: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    for (_, scenario, judgement) in &results {
        *counts
            .entry(scenario.kind())
            .or_default()
            .entry(judgement.outcome.clone())
            .or_default() += 1;
    }
    let mut text = format!(
        "fuzz commit: {} scenario(s), seed {}, {:.1} s on {} job(s)\n",
        results.len(),
        settings.seed,
        started.elapsed().as_secs_f64(),
        settings.jobs
    );
    for (kind, outcomes) in &counts {
        let _ = writeln!(text, "  {kind:<14} {outcomes:?}");
    }
    let failed: Vec<_> = results
        .iter()
        .filter(|r| !r.2.problems.is_empty())
        .collect();
    if !failed.is_empty() {
        let kept = root.keep();
        let _ = writeln!(
            text,
            "\n{} FAILING SCENARIO(S); their files are kept under {}",
            failed.len(),
            kept.display()
        );
        let mut kinds = BTreeSet::new();
        for (index, scenario, judgement) in &failed {
            let _ = writeln!(text, "\n--- scenario {index}: {scenario:?} ---");
            for p in &judgement.problems {
                let _ = writeln!(text, "problem: {p}");
            }
            // The details of the first few of each kind.
            if kinds.insert(scenario.kind()) || kinds.len() < 8 {
                let _ = writeln!(text, "{}", judgement.detail);
            }
            let _ = writeln!(
                text,
                "replay: HARBOR_FUZZ_SEED={} HARBOR_FUZZ_ONLY={index} cargo test --release --test fuzz_configs commit -- --nocapture",
                settings.seed
            );
        }
    }
    let report = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz_commit_report.txt");
    let _ = std::fs::write(&report, &text);
    println!("{text}");
    assert!(
        failed.is_empty(),
        "{} of {} commit scenario(s) failed (seed {}); see {}",
        failed.len(),
        results.len(),
        settings.seed,
        report.display()
    );
}
