//! Running one case as its own `harbor simulate`, `gradient` or `identify` process (so that
//! aborts, OOM kills, panics and hangs are all observable) under a time limit and memory and
//! file-size caps, and judging what it did: each subcommand's output checked on exit 0
//! (summary.json and the arrays; gradient.json; identification.json), a refusal checked to
//! name the field where the case says which (`Case::names_field`), a `narrowing` result
//! compared with the `--backend reference` run of the same config.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cases::{Case, Class, ConfigArg, OutSetup, SPARSE_BYTES, Subcommand};

/// Per-process limits.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Wall-clock limit of an ordinary case: beyond it the case hangs.
    pub timeout: Duration,
    /// Wall-clock limit of a case too large by design: beyond it the case "ran long".
    pub size_timeout: Duration,
    /// Address-space cap of CPU cases (GPU drivers reserve much address space).
    pub memory_bytes: u64,
    /// Largest file a case may write.
    pub file_bytes: u64,
    /// Memory and swap of this machine: a size-extreme case that aborts on an allocation
    /// no larger than this failed only because of the fuzzer's cap.
    pub machine_bytes: u64,
}

/// The least wall-clock limit of a GPU case (its kernel's compilation included).
pub const GPU_CASE_TIMEOUT: Duration = Duration::from_secs(120);

/// MemTotal + SwapTotal from /proc/meminfo (0 where unknown).
pub fn machine_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("MemTotal:") || l.starts_with("SwapTotal:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum::<u64>()
        * 1024
}

/// N of "memory allocation of N bytes failed".
fn failed_allocation(stderr: &str) -> Option<u64> {
    let rest = stderr.split("memory allocation of ").nth(1)?;
    rest.split_whitespace().next()?.parse().ok()
}

/// What a case did, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// Exit 0, every result finite.
    Finite,
    /// Exit 0 under `--keep-nonfinite`, with the non-finite members listed.
    KeptNonfinite,
    /// Exit 1 with an error message.
    Error,
    /// Exit 2: the command line was refused (clap).
    Usage,
    /// A size-extreme case refused with exit 1.
    Refused,
    /// A size-extreme case still running at its limit, killed.
    RanLong,
    /// A size-extreme case that hit the fuzzer's file-size cap (SIGXFSZ).
    FileCap,
    /// A size-extreme case that aborted on an allocation this machine could have served
    /// but the fuzzer's address-space cap did not.
    MemCap,
    /// Anything that fails the test.
    Failed,
}

impl Outcome {
    pub const ALL: [Outcome; 9] = [
        Outcome::Finite,
        Outcome::KeptNonfinite,
        Outcome::Error,
        Outcome::Usage,
        Outcome::Refused,
        Outcome::RanLong,
        Outcome::FileCap,
        Outcome::MemCap,
        Outcome::Failed,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Finite => "exit 0 finite",
            Outcome::KeptNonfinite => "exit 0 kept non-finite",
            Outcome::Error => "exit 1 error",
            Outcome::Usage => "exit 2 usage",
            Outcome::Refused => "size: refused",
            Outcome::RanLong => "size: ran long",
            Outcome::FileCap => "size: file cap",
            Outcome::MemCap => "size: memory cap",
            Outcome::Failed => "FAILED",
        }
    }

    pub fn short(self) -> &'static str {
        match self {
            Outcome::Finite => "ok",
            Outcome::KeptNonfinite => "kept",
            Outcome::Error => "err",
            Outcome::Usage => "usage",
            Outcome::Refused => "refused",
            Outcome::RanLong => "long",
            Outcome::FileCap => "fcap",
            Outcome::MemCap => "mcap",
            Outcome::Failed => "FAIL",
        }
    }
}

/// The judgement of one case.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub outcome: Outcome,
    /// Why it failed (empty unless `Failed`).
    pub problems: Vec<String>,
    /// The first `error` line of stderr, if any.
    pub message: Option<String>,
    pub seconds: f64,
    /// The command line, shell-quoted, to reproduce it.
    pub command: String,
    pub stderr: String,
    /// For a case with a located mutation that ended in an error: whether the message names
    /// the mutated config path (informational).
    pub names_target: Option<bool>,
}

/// Where a case's files are.
struct Layout {
    config: PathBuf,
    /// The directory `--out` lies in (or would); nothing else writes there.
    out_parent: PathBuf,
    out: Option<PathBuf>,
    /// FIFOs the fuzzer holds open for writing while the case runs (closed with the layout).
    _held: Vec<std::fs::File>,
}

pub(super) const FOREIGN: &[u8] = b"someone else's file\n";
pub(super) const OLD_SUMMARY: &[u8] = b"OLD\n";

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

fn mkdir(path: &Path) {
    std::fs::create_dir_all(path).unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
}

/// Writes the case's files under `dir` and sets up `--out`.
fn prepare(case: &Case, dir: &Path) -> Layout {
    let cfg = dir.join("cfg");
    let out_parent = dir.join("out");
    mkdir(&cfg);
    mkdir(&out_parent);
    write(&cfg.join("config.toml"), &case.config);
    for (name, bytes) in &case.files {
        write(&cfg.join(name), bytes);
    }
    let mut held = Vec::new();
    for (name, kind) in &case.special_files {
        special_file(&cfg.join(name), *kind, b"t,u\n0.0,1.0\n", &mut held);
    }
    let config = match case.config_arg {
        ConfigArg::File => cfg.join("config.toml"),
        ConfigArg::Missing => cfg.join("missing.toml"),
        ConfigArg::Directory => cfg.clone(),
        ConfigArg::DevNull => PathBuf::from("/dev/null"),
        ConfigArg::DevZero => PathBuf::from("/dev/zero"),
        ConfigArg::Fifo | ConfigArg::HeldFifo | ConfigArg::Sparse => {
            let path = cfg.join("stream.toml");
            special_file(&path, case.config_arg, &case.config, &mut held);
            path
        }
    };
    let run = out_parent.join("run");
    let out = match case.out {
        OutSetup::Fresh => Some(run),
        OutSetup::EmptyDir => {
            mkdir(&run);
            Some(run)
        }
        OutSetup::PreviousOutput => {
            mkdir(&run);
            write(&run.join(".harbor-output"), b"written by harbor\n");
            write(&run.join("summary.json"), OLD_SUMMARY);
            Some(run)
        }
        OutSetup::ForeignDir => {
            mkdir(&run);
            write(&run.join("notes.txt"), FOREIGN);
            Some(run)
        }
        OutSetup::ExistingFile => {
            write(&run, FOREIGN);
            Some(run)
        }
        OutSetup::InsideFile => {
            write(&out_parent.join("file"), FOREIGN);
            Some(out_parent.join("file").join("run"))
        }
        OutSetup::MissingParents => Some(out_parent.join("a").join("b").join("run")),
        OutSetup::LongName => Some(out_parent.join("r".repeat(300))),
        OutSetup::Omitted => None,
        OutSetup::Empty => Some(PathBuf::new()),
    };
    Layout {
        config,
        out_parent,
        out,
        _held: held,
    }
}

/// Makes `path` a FIFO (held open for writing after the first bytes of `start`, when
/// `kind` says so) or a sparse file of [`SPARSE_BYTES`] beginning with `start`.
fn special_file(path: &Path, kind: ConfigArg, start: &[u8], held: &mut Vec<std::fs::File>) {
    use std::io::Write as _;
    if kind == ConfigArg::Sparse {
        let mut file = std::fs::File::create(path)
            .unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
        file.write_all(start).unwrap();
        file.set_len(SPARSE_BYTES)
            .unwrap_or_else(|e| panic!("extending {}: {e}", path.display()));
        return;
    }
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap_or_else(|e| panic!("running mkfifo: {e}"));
    assert!(made.success(), "mkfifo {} failed", path.display());
    if kind == ConfigArg::HeldFifo {
        // Read and write: opening does not wait for a reader, and the reader never sees
        // the end. A pipe buffer holds 4 KiB without blocking.
        let mut fifo = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
        fifo.write_all(&start[..start.len().min(4096)]).unwrap();
        held.push(fifo);
    }
}

fn argv(case: &Case, layout: &Layout) -> Vec<OsString> {
    let backend = if case.gpu { "gpu" } else { "cpu" };
    argv_for(case, &layout.config, layout.out.as_deref(), backend)
}

/// The command line of `case` on `config` into `out` with `--backend backend`.
fn argv_for(case: &Case, config: &Path, out: Option<&Path>, backend: &str) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![case.command.name().into(), config.into()];
    if let Some(out) = out {
        args.push("--out".into());
        args.push(out.into());
    }
    args.push("--backend".into());
    args.push(backend.into());
    if case.keep_nonfinite && case.command == Subcommand::Simulate {
        args.push("--keep-nonfinite".into());
    }
    for set in &case.sets {
        args.push("--set".into());
        args.push(set.clone());
    }
    args.extend(case.extra_args.iter().cloned());
    args
}

/// `arg` quoted for a POSIX shell.
fn quote(arg: &std::ffi::OsStr) -> String {
    let s = arg.to_string_lossy();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    let shown = if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    };
    if shown.len() > 300 {
        format!(
            "{}…[{} bytes in all]",
            shown.chars().take(200).collect::<String>(),
            shown.len()
        )
    } else {
        shown
    }
}

pub fn command_line(bin: &Path, cwd: &Path, args: &[OsString]) -> String {
    let mut text = format!(
        "cd {} && {}",
        quote(cwd.as_os_str()),
        quote(bin.as_os_str())
    );
    for a in args {
        text.push(' ');
        text.push_str(&quote(a));
    }
    text
}

/// Every path under `dir` with its file contents (None for directories).
pub(super) fn snapshot(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path);
            if meta.as_ref().is_ok_and(|m| m.is_dir()) {
                out.insert(rel, None);
                walk(base, &path, out);
            } else {
                let len = meta.map(|m| m.len()).unwrap_or(0);
                let content = if len <= 1 << 20 {
                    std::fs::read(&path).unwrap_or_default()
                } else {
                    format!("<{len} bytes>").into_bytes()
                };
                out.insert(rel, Some(content));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Runs the binary with `args` in `cwd` under the limits; returns the exit status (None if
/// it could not be waited for), whether it was killed at the limit, and the seconds taken.
pub(super) fn execute(
    bin: &Path,
    args: &[OsString],
    cwd: &Path,
    log_dir: &Path,
    limit: Duration,
    limits: &Limits,
    gpu: bool,
) -> (Option<ExitStatus>, bool, f64) {
    let mut child = spawn(bin, args, cwd, log_dir, "", limits, gpu);
    wait(&mut child, Instant::now(), limit)
}

/// Starts the binary with `args` in `cwd` under the memory and file-size caps (the process
/// is the binary itself: the shell that sets the caps `exec`s it), its stdout and stderr
/// going to `stdout{tag}.txt` and `stderr{tag}.txt` in `log_dir`.
pub(super) fn spawn(
    bin: &Path,
    args: &[OsString],
    cwd: &Path,
    log_dir: &Path,
    tag: &str,
    limits: &Limits,
    gpu: bool,
) -> std::process::Child {
    let mut script = String::new();
    if !gpu {
        script.push_str(&format!(
            "ulimit -v {} 2>/dev/null; ",
            limits.memory_bytes / 1024
        ));
    }
    // POSIX shells count file sizes in 512-byte blocks.
    script.push_str(&format!(
        "ulimit -f {} 2>/dev/null; exec \"$0\" \"$@\"",
        limits.file_bytes / 512
    ));
    let stdout = std::fs::File::create(log_dir.join(format!("stdout{tag}.txt"))).unwrap();
    let stderr = std::fs::File::create(log_dir.join(format!("stderr{tag}.txt"))).unwrap();
    Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .arg(bin)
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("spawning /bin/sh for {}: {e}", bin.display()))
}

/// Waits for `child` (started at `started`) up to `limit`, killing it there; returns the
/// exit status (None if it could not be waited for), whether it was killed at the limit,
/// and the seconds taken.
pub(super) fn wait(
    child: &mut std::process::Child,
    started: Instant,
    limit: Duration,
) -> (Option<ExitStatus>, bool, f64) {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (Some(status), false, started.elapsed().as_secs_f64()),
            Ok(None) => {}
            Err(_) => return (None, false, started.elapsed().as_secs_f64()),
        }
        let elapsed = started.elapsed();
        if elapsed > limit {
            let _ = child.kill();
            let status = child.wait().ok();
            return (status, true, elapsed.as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(if elapsed.as_millis() < 100 {
            1
        } else {
            10
        }));
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        25 => "SIGXFSZ",
        _ => "signal",
    }
}

const SIGXFSZ: i32 = 25;

/// Mesa's complaint about XDG_RUNTIME_DIR is noise.
pub(super) fn relevant_stderr(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| !l.contains("XDG_RUNTIME_DIR is invalid or not set"))
        .collect()
}

/// Runs `case` in `dir` and judges it.
pub fn run_case(bin: &Path, case: &Case, dir: &Path, limits: &Limits) -> Verdict {
    let layout = prepare(case, dir);
    let args = argv(case, &layout);
    let command = command_line(bin, &layout.out_parent, &args);
    let before = snapshot(&layout.out_parent);
    let limit = if case.large {
        limits.size_timeout
    } else if case.gpu {
        // A software rasteriser with a cold shader cache compiles a large generated
        // kernel for tens of seconds (lavapipe: 24.5 s for the cart-pole boundary-value
        // kernel): that is not a hang.
        limits.timeout.max(GPU_CASE_TIMEOUT)
    } else {
        limits.timeout
    };
    let (status, timed_out, seconds) =
        execute(bin, &args, &layout.out_parent, dir, limit, limits, case.gpu);
    let stderr =
        String::from_utf8_lossy(&std::fs::read(dir.join("stderr.txt")).unwrap_or_default())
            .into_owned();
    let after = snapshot(&layout.out_parent);
    let mut verdict = Verdict {
        outcome: Outcome::Failed,
        problems: Vec::new(),
        message: None,
        seconds,
        command,
        stderr: stderr.clone(),
        names_target: None,
    };
    let lines = relevant_stderr(&stderr);
    verdict.message = lines
        .iter()
        .find(|l| l.starts_with("error"))
        .map(|l| l.to_string());
    let problems = &mut verdict.problems;
    // The allocation-failure abort also suggests RUST_BACKTRACE; it is an abort, not a panic.
    let alloc_failure = stderr.contains("memory allocation of");
    let panicked = stderr.contains("panicked")
        || stderr.contains("stack backtrace")
        || (stderr.contains("RUST_BACKTRACE") && !alloc_failure);
    if panicked {
        problems.push("panicked (stderr has a panic message)".into());
    }
    let Some(status) = status else {
        problems.push("the process could not be waited for".into());
        return verdict;
    };
    if timed_out {
        if case.must_refuse {
            problems.push(format!(
                "ran past the limit of {:.0} s instead of refusing",
                limit.as_secs_f64()
            ));
        } else if case.large && !panicked {
            verdict.outcome = Outcome::RanLong;
        } else {
            problems.push(format!(
                "hang: still running after {:.0} s, killed",
                limit.as_secs_f64()
            ));
        }
        return verdict;
    }
    if let Some(signal) = status.signal() {
        if signal == SIGXFSZ && case.large && !panicked {
            verdict.outcome = Outcome::FileCap;
            return verdict;
        }
        let mut what = format!("killed by {} ({signal})", signal_name(signal));
        if let Some(bytes) = failed_allocation(&stderr) {
            if case.large && !panicked && !case.must_refuse && bytes <= limits.machine_bytes {
                verdict.outcome = Outcome::MemCap;
                return verdict;
            }
            what.push_str(&format!(
                ": an allocation of {bytes} bytes failed ({:.1} GiB; the fuzzer caps CPU cases at {} GiB of address space, this machine has {:.1} GiB of memory and swap)",
                bytes as f64 / (1u64 << 30) as f64,
                limits.memory_bytes >> 30,
                limits.machine_bytes as f64 / (1u64 << 30) as f64
            ));
        } else if alloc_failure {
            what.push_str(": an allocation failed");
        }
        if stderr.contains("has overflowed its stack") {
            what.push_str(": stack overflow");
        }
        problems.push(what);
        return verdict;
    }
    let code = status.code().unwrap_or(-1);
    match code {
        0 => {
            if case.must_refuse {
                problems.push(format!(
                    "exit 0 although the run must be refused ({})",
                    case.log.join("; ")
                ));
            }
            if case.exit0_impossible {
                problems.push(format!(
                    "exit 0 after {seconds:.1} s for a run that cannot finish within the limit: a count was truncated ({})",
                    case.log.join("; ")
                ));
            }
            let kept = check_success(case, &layout, &before, &after, problems);
            if case.reference_check && problems.is_empty() {
                compare_with_reference(bin, case, &layout, dir, limits, problems);
            }
            verdict.outcome = if kept {
                Outcome::KeptNonfinite
            } else {
                Outcome::Finite
            };
        }
        1 | 2 => {
            match &verdict.message {
                None => problems.push(format!("exit {code} without an `error: …` line on stderr")),
                Some(line) => {
                    let text = line
                        .trim_start_matches("error")
                        .trim_start_matches(':')
                        .trim();
                    if text.is_empty() {
                        problems.push(format!("exit {code} with an empty error message"));
                    }
                }
            }
            if code == 2 && !matches!(case.class, Class::Cli | Class::Out) && case.sets.is_empty() {
                problems.push("exit 2 (usage) for an ordinary command line".into());
            }
            check_failure_left_nothing(&before, &after, problems);
            let message = verdict.message.clone().unwrap_or_default();
            if case.gpu
                && (message.contains("no GPU adapter found")
                    || message.contains("device request on"))
            {
                problems.push(
                    "GPU cases need a GPU adapter with f64 (lavapipe: apt-get install mesa-vulkan-drivers); they never skip — set HARBOR_FUZZ_GPU_CASES=0 to run none".into(),
                );
            }
            for internal in [
                "WGSL parse error",
                "SPIR-V generation failed",
                "was rejected by the device",
                "dispatch failed",
                "unknown module",
            ] {
                if message.contains(internal) {
                    problems.push(format!("internal GPU error ({internal})"));
                }
            }
            verdict.outcome = if code == 2 {
                Outcome::Usage
            } else if case.large {
                Outcome::Refused
            } else {
                Outcome::Error
            };
            if code == 1
                && let Some(target) = &case.target
            {
                verdict.names_target = Some(names(&message, target));
            }
            if !case.names_field.is_empty() && !case.names_field.iter().any(|f| names(&message, f))
            {
                problems.push(format!(
                    "the refusal does not name {}",
                    case.names_field.join(" or ")
                ));
            }
        }
        101 => problems.push("exit 101 (panic)".into()),
        other => problems.push(format!("exit code {other}, expected 0, 1 or 2")),
    }
    if !problems.is_empty() {
        verdict.outcome = Outcome::Failed;
    }
    verdict
}

/// Whether an error message names the config path `target` (`system.J`,
/// `input[0].amplitude`): in full, dotted (`input.0.amplitude`), or as its parent and the
/// key in backticks (`system: missing field `Q``).
fn names(message: &str, target: &str) -> bool {
    let target: String = target
        .split('.')
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(".");
    let dotted = target.replace('[', ".").replace(']', "");
    if message.contains(&target) || message.contains(&dotted) {
        return true;
    }
    match target.rsplit_once('.') {
        Some((parent, last)) => {
            message.contains(&format!("{parent}:")) && message.contains(&format!("`{last}`"))
        }
        None => message.contains(&format!("`{target}`")),
    }
}

/// A failed run leaves the output location exactly as it was: no new `--out`, no parent
/// directories, no staging or replaced directories, nothing changed.
fn check_failure_left_nothing(
    before: &BTreeMap<String, Option<Vec<u8>>>,
    after: &BTreeMap<String, Option<Vec<u8>>>,
    problems: &mut Vec<String>,
) {
    let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let removed: Vec<&String> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let changed: Vec<&String> = before
        .iter()
        .filter(|(k, v)| after.get(*k).is_some_and(|w| w != *v))
        .map(|(k, _)| k)
        .collect();
    if !added.is_empty() {
        problems.push(format!("a failed run left {added:?} behind"));
    }
    if !removed.is_empty() {
        problems.push(format!("a failed run removed {removed:?}"));
    }
    if !changed.is_empty() {
        problems.push(format!("a failed run changed {changed:?}"));
    }
}

/// Checks a successful run: the output location, summary.json and the arrays. Returns
/// whether non-finite members were kept.
fn check_success(
    case: &Case,
    layout: &Layout,
    before: &BTreeMap<String, Option<Vec<u8>>>,
    after: &BTreeMap<String, Option<Vec<u8>>>,
    problems: &mut Vec<String>,
) -> bool {
    let must_refuse = match case.out {
        OutSetup::ForeignDir => Some("a directory of someone else's files"),
        OutSetup::ExistingFile => Some("an existing file"),
        OutSetup::InsideFile => Some("a path inside a file"),
        OutSetup::LongName => Some("a 300-byte directory name"),
        OutSetup::Omitted => Some("no --out at all"),
        OutSetup::Empty => Some("an empty --out"),
        _ => None,
    };
    if let Some(what) = must_refuse {
        problems.push(format!("exit 0 although --out was {what}"));
    }
    let Some(out) = &layout.out else {
        return false;
    };
    let rel = out
        .strip_prefix(&layout.out_parent)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Everything outside --out (and the parents it needed) is as before.
    for (k, v) in after {
        let inside = !rel.is_empty() && (*k == rel || k.starts_with(&format!("{rel}/")));
        let parent_of_out = !rel.is_empty() && rel.starts_with(&format!("{k}/")) && v.is_none();
        if inside || parent_of_out {
            continue;
        }
        if before.get(k) != Some(v) {
            problems.push(format!(
                "a successful run left or changed {k:?} beside --out"
            ));
        }
    }
    for k in before.keys() {
        let inside = !rel.is_empty() && (*k == rel || k.starts_with(&format!("{rel}/")));
        if !inside && !after.contains_key(k) {
            problems.push(format!("a successful run removed {k:?}"));
        }
    }
    if !out.is_dir() {
        problems.push(format!("exit 0 but {} is not a directory", out.display()));
        return false;
    }
    if case.command != Subcommand::Simulate {
        check_model_output(case.command, out, problems);
        return false;
    }
    let summary_path = out.join("summary.json");
    let text = match std::fs::read(&summary_path) {
        Ok(t) => t,
        Err(e) => {
            problems.push(format!("exit 0 but summary.json cannot be read: {e}"));
            return false;
        }
    };
    if text == OLD_SUMMARY {
        problems.push("exit 0 but summary.json is the previous run's".into());
        return false;
    }
    let summary: Value = match serde_json::from_slice(&text) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("summary.json does not parse: {e}"));
            return false;
        }
    };
    check_summary(case, out, &summary, problems)
}

pub(super) fn check_summary(
    case: &Case,
    out: &Path,
    summary: &Value,
    problems: &mut Vec<String>,
) -> bool {
    let members = summary["members"].as_u64();
    let nonfinite = summary["nonfinite"]["members"].as_u64();
    let (Some(members), Some(nonfinite)) = (members, nonfinite) else {
        problems.push("summary.json lacks `members` or `nonfinite.members`".into());
        return false;
    };
    let listed: BTreeSet<u64> = summary["nonfinite"]["first"]
        .as_array()
        .map(|items| items.iter().filter_map(|i| i["member"].as_u64()).collect())
        .unwrap_or_default();
    if nonfinite > 0 && !case.keep_nonfinite {
        problems.push(format!(
            "exit 0 with {nonfinite} non-finite member(s) without --keep-nonfinite"
        ));
    }
    if nonfinite > 0 && listed.len() as u64 != nonfinite.min(1000) {
        problems.push(format!(
            "nonfinite.members = {nonfinite} but {} listed",
            listed.len()
        ));
    }
    let complete = nonfinite <= 1000;
    let allowed = |member: Option<u64>| {
        case.keep_nonfinite && (!complete || member.is_some_and(|m| listed.contains(&m)))
    };
    match summary["final_state"].as_array() {
        Some(states) if states.len() as u64 == members => {}
        _ => problems.push("final_state does not hold one state per member".into()),
    }
    // Nulls are how serde_json writes NaN and ±inf.
    let Some(top) = summary.as_object() else {
        problems.push("summary.json is not an object".into());
        return false;
    };
    check_statistics(summary, members, case.keep_nonfinite, problems);
    for (name, value) in top {
        if name == "nonfinite" || name == "files" || name == "statistics" {
            continue;
        }
        let per_member = name == "final_state"
            || value.as_object().is_some_and(|o| {
                !o.is_empty()
                    && o.values()
                        .all(|v| v.as_array().is_some_and(|a| a.len() as u64 == members))
            });
        let mut nulls = Vec::new();
        find_nulls(value, name.clone(), None, &mut nulls);
        for (path, index) in nulls {
            let member = if per_member { index } else { None };
            if !(per_member && allowed(member)) {
                problems.push(format!("exit 0 with a non-finite (null) value at {path}"));
                break;
            }
        }
    }
    check_arrays(out, members, &|m| allowed(Some(m)), problems);
    check_status_file(out, members, nonfinite, &listed, problems);
    nonfinite > 0
}

/// Every column of `statistics` counts each member once (finite values plus non-finite
/// ones); min, max, mean and quantiles are null only without finite values, which only
/// `--keep-nonfinite` allows.
fn check_statistics(summary: &Value, members: u64, keep: bool, problems: &mut Vec<String>) {
    let Some(groups) = summary["statistics"].as_object() else {
        problems.push("summary.json lacks `statistics`".into());
        return;
    };
    let mut columns = Vec::new();
    for (group, value) in groups {
        match value {
            Value::Object(map) => {
                columns.extend(map.iter().map(|(k, v)| (format!("{group}.{k}"), v)));
            }
            Value::Array(items) => columns.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (format!("{group}[{i}]"), v)),
            ),
            _ => {}
        }
    }
    for (name, column) in columns {
        let (count, nonfinite) = (column["count"].as_u64(), column["nonfinite"].as_u64());
        if count.zip(nonfinite).map(|(c, n)| c + n) != Some(members) {
            problems.push(format!(
                "statistics.{name}: count {count:?} + nonfinite {nonfinite:?} ≠ {members} members"
            ));
        }
        let mut nulls = Vec::new();
        find_nulls(column, name.clone(), None, &mut nulls);
        // A quantile between two values whose difference overflows is NaN, as in NumPy.
        let spread = column["max"]
            .as_f64()
            .zip(column["min"].as_f64())
            .map(|(a, b)| a - b);
        if spread.is_some_and(|d| d.is_infinite()) {
            nulls.retain(|(path, _)| !path.contains(".quantiles."));
        }
        if !(nulls.is_empty() || keep && count == Some(0)) {
            problems.push(format!(
                "exit 0 with a null statistic at statistics.{}",
                nulls[0].0
            ));
        }
    }
}

/// nonfinite_step.npy (int64) is non-zero exactly for the non-finite members.
fn check_status_file(
    out: &Path,
    members: u64,
    nonfinite: u64,
    listed: &BTreeSet<u64>,
    problems: &mut Vec<String>,
) {
    let path = out.join("nonfinite_step.npy");
    let status: ndarray::ArrayD<i64> = match ndarray_npy::read_npy(&path) {
        Ok(a) => a,
        Err(e) => {
            problems.push(format!("nonfinite_step.npy does not read as int64: {e}"));
            return;
        }
    };
    if status.len() as u64 != members {
        problems.push(format!(
            "nonfinite_step.npy has {} entries for {members} members",
            status.len()
        ));
    }
    let flagged: Vec<u64> = (0..status.len() as u64)
        .filter(|&m| status.as_slice().is_some_and(|s| s[m as usize] != 0))
        .collect();
    if flagged.len() as u64 != nonfinite || flagged.iter().take(1000).any(|m| !listed.contains(m)) {
        problems.push(format!(
            "nonfinite_step.npy flags {} member(s), summary.json counts {nonfinite}",
            flagged.len()
        ));
    }
}

/// The output of `harbor gradient` (gradient.json) or `harbor identify`
/// (identification.json): present, parsing, every number finite (nulls are how serde_json
/// writes NaN and ±inf).
fn check_model_output(command: Subcommand, out: &Path, problems: &mut Vec<String>) {
    let name = match command {
        Subcommand::Gradient => "gradient.json",
        _ => "identification.json",
    };
    let value: Value = match std::fs::read(out.join(name))
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_slice(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("exit 0 but {name} does not read: {e}"));
            return;
        }
    };
    let mut nulls = Vec::new();
    find_nulls(&value, name.to_string(), None, &mut nulls);
    if let Some((path, _)) = nulls.first() {
        problems.push(format!("exit 0 with a non-finite (null) value at {path}"));
    }
    if command == Subcommand::Gradient {
        let costs = match &value {
            Value::Array(items) => items.iter().all(|i| i["cost"].is_number()),
            other => other["cost"].is_number(),
        };
        if !costs {
            problems.push("gradient.json lacks a numeric `cost`".into());
        }
    }
}

/// Runs the case's config on `--backend reference` and compares what both runs wrote:
/// times.npy, and `final_state` and `energy` of summary.json, to 1e-9 relative to the
/// largest magnitude of each. A reference run that fails or runs long compares nothing.
fn compare_with_reference(
    bin: &Path,
    case: &Case,
    layout: &Layout,
    dir: &Path,
    limits: &Limits,
    problems: &mut Vec<String>,
) {
    let (Some(out), true) = (&layout.out, case.command == Subcommand::Simulate) else {
        return;
    };
    let reference_dir = dir.join("reference");
    mkdir(&reference_dir);
    let reference_out = reference_dir.join("run");
    let args = argv_for(case, &layout.config, Some(&reference_out), "reference");
    let (status, timed_out, _) = execute(
        bin,
        &args,
        &reference_dir,
        &reference_dir,
        limits.timeout,
        limits,
        false,
    );
    if timed_out || status.and_then(|s| s.code()) != Some(0) {
        return;
    }
    let read = |dir: &Path| -> Option<Value> {
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).ok()?).ok()
    };
    let (Some(found), Some(expected)) = (read(out), read(&reference_out)) else {
        problems.push("summary.json of the run or of its reference run does not read".into());
        return;
    };
    for key in ["final_state", "energy"] {
        if let Some(difference) = differ(&found[key], &expected[key], key.to_string()) {
            problems.push(format!(
                "the result differs from --backend reference: {difference}"
            ));
        }
    }
    let times = |dir: &Path| -> Option<Vec<f64>> {
        let a: ndarray::ArrayD<f64> = ndarray_npy::read_npy(dir.join("times.npy")).ok()?;
        Some(a.iter().copied().collect())
    };
    let (found, expected) = (times(out), times(&reference_out));
    if found != expected {
        let show = |t: &Option<Vec<f64>>| match t {
            Some(t) if t.len() > 6 => format!("{} times ending {:?}", t.len(), &t[t.len() - 3..]),
            other => format!("{other:?}"),
        };
        problems.push(format!(
            "times.npy differs from --backend reference: {} against {}",
            show(&found),
            show(&expected)
        ));
    }
}

/// Where two JSON values differ (numbers beyond 1e-9 relative to the larger magnitude of
/// the two or 1), as `path: found vs expected`.
fn differ(found: &Value, expected: &Value, path: String) -> Option<String> {
    match (found, expected) {
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| differ(x, y, format!("{path}[{i}]"))),
        (Value::Object(a), Value::Object(b)) if a.len() == b.len() => {
            a.iter().find_map(|(k, x)| match b.get(k) {
                Some(y) => differ(x, y, format!("{path}.{k}")),
                None => Some(format!("{path}.{k}: only in the run")),
            })
        }
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64()?, y.as_f64()?);
            let scale = x.abs().max(y.abs()).max(1.0);
            ((x - y).abs() > 1e-9 * scale).then(|| format!("{path}: {x:e} vs {y:e}"))
        }
        (x, y) if x == y => None,
        (x, y) => Some(format!(
            "{path}: {} vs {}",
            x.to_string().chars().take(80).collect::<String>(),
            y.to_string().chars().take(80).collect::<String>()
        )),
    }
}

/// Paths of nulls under `value`, each with the first array index on its way.
fn find_nulls(
    value: &Value,
    path: String,
    first: Option<u64>,
    out: &mut Vec<(String, Option<u64>)>,
) {
    match value {
        Value::Null => out.push((path, first)),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                find_nulls(item, format!("{path}[{i}]"), first.or(Some(i as u64)), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                find_nulls(v, format!("{path}.{k}"), first, out);
            }
        }
        _ => {}
    }
}

/// The NPY arrays: times finite and non-decreasing; per-member arrays finite for every
/// member not allowed to be non-finite.
fn check_arrays(
    out: &Path,
    members: u64,
    allowed: &dyn Fn(u64) -> bool,
    problems: &mut Vec<String>,
) {
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".npy"))
        .collect();
    names.sort();
    for name in names {
        if name == "nonfinite_step.npy" {
            continue; // int64, checked by check_status_file
        }
        let path = out.join(&name);
        if std::fs::metadata(&path).map_or(0, |m| m.len()) > 64 << 20 {
            continue;
        }
        let array: ndarray::ArrayD<f64> = match ndarray_npy::read_npy(&path) {
            Ok(a) => a,
            Err(e) => {
                problems.push(format!("{name} does not read as an f64 array: {e}"));
                continue;
            }
        };
        if name == "times.npy" {
            let times: Vec<f64> = array.iter().copied().collect();
            if times.iter().any(|t| !t.is_finite()) {
                problems.push("times.npy holds non-finite times".into());
            } else if times.windows(2).any(|w| w[1] < w[0]) {
                problems.push("times.npy is not sorted".into());
            }
            continue;
        }
        if array.ndim() == 0 || array.shape()[0] as u64 != members {
            problems.push(format!(
                "{name} has shape {:?}, expected {members} members first",
                array.shape()
            ));
            continue;
        }
        for (m, slab) in array.outer_iter().enumerate() {
            if !allowed(m as u64) && slab.iter().any(|v| !v.is_finite()) {
                problems.push(format!(
                    "exit 0 with non-finite values in {name} for member {m}"
                ));
                break;
            }
        }
    }
}
