//! The config fuzzer of `harbor simulate`, `gradient` and `identify` (cases in `cases.rs`,
//! `narrowing.rs`, `endless.rs`, `model_cases.rs`; running and judging in `run.rs`) and the
//! commit-window scenarios (`commit.rs`): settings, the parallel driver, and the report.
//! See `tests/fuzz_configs.rs` for how to run it.

pub mod cases;
pub mod commit;
pub mod doc;
pub mod endless;
pub mod expressions;
pub mod model_cases;
pub mod narrowing;
pub mod port_hamiltonian;
pub mod run;
pub mod variational;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cases::{Case, Example, generate};
use run::{Limits, Outcome, Verdict};

/// What to run, from the environment.
#[derive(Debug, Clone)]
pub struct Settings {
    pub cases: usize,
    pub seed: u64,
    pub jobs: usize,
    pub gpu_cases: usize,
    /// Scenarios of the commit window (`commit.rs`).
    pub commit_cases: usize,
    /// Only these case indices (for replaying a failure).
    pub only: Option<Vec<usize>>,
    pub limits: Limits,
}

fn env_parse<T: std::str::FromStr>(name: &str) -> Option<T> {
    let text = std::env::var(name).ok()?;
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(
        text.parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} does not parse")),
    )
}

/// The indices one item of `HARBOR_FUZZ_ONLY` names: `i`, or `a..b` for a ≤ i < b.
fn only_indices(item: &str) -> std::ops::Range<usize> {
    let index = |s: &str| -> usize {
        s.trim().parse().unwrap_or_else(|_| {
            panic!("HARBOR_FUZZ_ONLY: {item:?} is not an index or a range a..b")
        })
    };
    match item.split_once("..") {
        Some((start, end)) => index(start)..index(end),
        None => {
            let i = index(item);
            i..i + 1
        }
    }
}

impl Settings {
    /// `HARBOR_FUZZ_CASES` (default 1000), `HARBOR_FUZZ_COMMIT_CASES` (default a twentieth
    /// of the cases), `HARBOR_FUZZ_SEED` (else `HARBOR_TEST_SEED`, else
    /// fresh), `HARBOR_FUZZ_JOBS` (default: all cores), `HARBOR_FUZZ_GPU_CASES` (default 8),
    /// `HARBOR_FUZZ_ONLY` (comma-separated case indices or half-open ranges
    /// `a..b`: a campaign runs in parts, each case being generated from the seed and its
    /// index alone), `HARBOR_FUZZ_BINARY` (the binary
    /// to run, default this build's), `HARBOR_FUZZ_TIMEOUT_S` (default
    /// 20), `HARBOR_FUZZ_SIZE_TIMEOUT_S` (default 5); `HARBOR_FUZZ_LOG` names a file that
    /// gets one line per case (read in [`fuzz`]).
    pub fn from_env() -> Settings {
        let seed = env_parse("HARBOR_FUZZ_SEED")
            .or_else(|| env_parse("HARBOR_TEST_SEED"))
            .unwrap_or_else(rand::random::<u64>);
        let only = std::env::var("HARBOR_FUZZ_ONLY")
            .ok()
            .map(|text| text.split(',').flat_map(only_indices).collect());
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let cases = env_parse("HARBOR_FUZZ_CASES").unwrap_or(1000);
        Settings {
            cases,
            commit_cases: env_parse("HARBOR_FUZZ_COMMIT_CASES").unwrap_or(cases.div_ceil(20)),
            seed,
            jobs: env_parse("HARBOR_FUZZ_JOBS").unwrap_or(cores).max(1),
            gpu_cases: env_parse("HARBOR_FUZZ_GPU_CASES").unwrap_or(8),
            only,
            limits: Limits {
                timeout: Duration::from_secs_f64(
                    env_parse("HARBOR_FUZZ_TIMEOUT_S").unwrap_or(20.0),
                ),
                size_timeout: Duration::from_secs_f64(
                    env_parse("HARBOR_FUZZ_SIZE_TIMEOUT_S").unwrap_or(5.0),
                ),
                memory_bytes: 4 << 30,
                file_bytes: 256 << 20,
                machine_bytes: run::machine_bytes(),
            },
        }
    }

    /// The GPU cases: `gpu_cases` indices spread evenly over the run.
    fn gpu_indices(&self) -> BTreeSet<usize> {
        let (n, g) = (self.cases, self.gpu_cases.min(self.cases));
        (0..g).map(|k| k * n / g + n / g / 2).collect()
    }
}

/// One finished case.
struct Record {
    case: Case,
    verdict: Verdict,
    kept_at: Option<PathBuf>,
}

/// The binary under test: `HARBOR_FUZZ_BINARY` (a long campaign can run a copy, so that
/// rebuilding meanwhile does not swap it under the running cases), else this build's.
pub fn binary() -> PathBuf {
    std::env::var_os("HARBOR_FUZZ_BINARY").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_harbor")),
        PathBuf::from,
    )
}

/// The examples the cases start from: all of `examples/`, or those whose file name
/// contains one of the comma-separated words of `HARBOR_FUZZ_EXAMPLES` (a targeted
/// campaign, e.g. `HARBOR_FUZZ_EXAMPLES=pendulum,lotka,ph_`); a filter that matches none
/// is an error.
fn examples_of_interest() -> Vec<Example> {
    let all = Example::load_all();
    let Some(filter) = std::env::var("HARBOR_FUZZ_EXAMPLES")
        .ok()
        .filter(|f| !f.trim().is_empty())
    else {
        return all;
    };
    let words: Vec<&str> = filter.split(',').map(str::trim).collect();
    let chosen: Vec<Example> = all
        .into_iter()
        .filter(|e| words.iter().any(|w| e.name.contains(w)))
        .collect();
    assert!(
        !chosen.is_empty(),
        "HARBOR_FUZZ_EXAMPLES={filter:?} matches no example"
    );
    chosen
}

/// Runs the fuzzer; panics with a report when any case fails.
pub fn fuzz(settings: &Settings) {
    let examples = examples_of_interest();
    let bin = binary();
    let root = tempfile::Builder::new()
        .prefix("harbor-fuzz-")
        .tempdir()
        .expect("a temporary directory");
    let indices: Vec<usize> = settings
        .only
        .clone()
        .unwrap_or_else(|| (0..settings.cases).collect());
    let gpu = settings.gpu_indices();
    eprintln!(
        "fuzz_configs: seed {} (replay with HARBOR_FUZZ_SEED={} HARBOR_FUZZ_CASES={}), {} case(s) of which {} on the GPU, {} job(s), {} examples",
        settings.seed,
        settings.seed,
        settings.cases,
        indices.len(),
        indices.iter().filter(|i| gpu.contains(i)).count(),
        settings.jobs,
        examples.len()
    );
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let records: Mutex<Vec<Record>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..settings.jobs {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&index) = indices.get(k) else {
                        break;
                    };
                    let case = generate(settings.seed, index, &examples, gpu.contains(&index));
                    let dir = root.path().join(format!("case-{index}"));
                    std::fs::create_dir_all(&dir).expect("case directory");
                    let verdict = run::run_case(&bin, &case, &dir, &settings.limits);
                    let kept_at = if verdict.outcome == Outcome::Failed {
                        Some(dir)
                    } else {
                        let _ = std::fs::remove_dir_all(&dir);
                        None
                    };
                    records.lock().unwrap().push(Record {
                        case,
                        verdict,
                        kept_at,
                    });
                }
            });
        }
    });
    let mut records = records.into_inner().unwrap();
    records.sort_by_key(|r| r.case.index);
    let report = report(settings, &records, started.elapsed(), &examples);
    let failures: Vec<&Record> = records
        .iter()
        .filter(|r| r.verdict.outcome == Outcome::Failed)
        .collect();
    let mut text = report;
    if !failures.is_empty() {
        let kept = root.keep();
        let _ = writeln!(
            text,
            "\n{} FAILING CASE(S); their files are kept under {}",
            failures.len(),
            kept.display()
        );
        for record in failures.iter().take(25) {
            text.push_str(&describe_failure(settings, record));
        }
        if failures.len() > 25 {
            let _ = writeln!(text, "\n… and {} more:", failures.len() - 25);
            for record in failures.iter().skip(25).take(500) {
                let _ = writeln!(
                    text,
                    "  #{} {} {}: {} [{}]",
                    record.case.index,
                    record.case.class.name(),
                    record.case.example,
                    record.verdict.problems.join("; "),
                    record
                        .case
                        .log
                        .join(" | ")
                        .chars()
                        .take(200)
                        .collect::<String>()
                );
            }
        }
    }
    if let Ok(path) = std::env::var("HARBOR_FUZZ_LOG") {
        let _ = std::fs::write(&path, case_log(&records));
    }
    let report_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz_configs_report.txt");
    let _ = std::fs::write(&report_path, &text);
    println!("{text}");
    println!("(report written to {})", report_path.display());
    assert!(
        failures.is_empty(),
        "{} of {} fuzz case(s) failed (seed {}); see the report above or {}",
        failures.len(),
        records.len(),
        settings.seed,
        report_path.display()
    );
}

fn report(
    settings: &Settings,
    records: &[Record],
    elapsed: Duration,
    examples: &[Example],
) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "fuzz_configs: {} case(s), seed {}, {:.1} s on {} job(s); limits {:.0} s per case ({:.0} s for size-extreme ones), {} GiB address space (CPU cases), {} MiB per file",
        records.len(),
        settings.seed,
        elapsed.as_secs_f64(),
        settings.jobs,
        settings.limits.timeout.as_secs_f64(),
        settings.limits.size_timeout.as_secs_f64(),
        settings.limits.memory_bytes >> 30,
        settings.limits.file_bytes >> 20
    );
    let mut by_outcome: BTreeMap<Outcome, usize> = BTreeMap::new();
    for r in records {
        *by_outcome.entry(r.verdict.outcome).or_default() += 1;
    }
    let _ = writeln!(text, "\noutcomes:");
    for outcome in Outcome::ALL {
        let _ = writeln!(
            text,
            "  {:<24} {:>7}",
            outcome.label(),
            by_outcome.get(&outcome).copied().unwrap_or(0)
        );
    }
    let gpu = records.iter().filter(|r| r.case.gpu).count();
    let keep = records.iter().filter(|r| r.case.keep_nonfinite).count();
    let large = records.iter().filter(|r| r.case.large).count();
    let _ = writeln!(
        text,
        "  ({gpu} on the GPU, {keep} with --keep-nonfinite, {large} size-extreme)"
    );
    let ordinary: Vec<&Record> = records.iter().filter(|r| !r.case.large).collect();
    let slowest = ordinary
        .iter()
        .max_by(|a, b| a.verdict.seconds.total_cmp(&b.verdict.seconds));
    if let Some(r) = slowest {
        let _ = writeln!(
            text,
            "  slowest ordinary case: #{} in {:.2} s",
            r.case.index, r.verdict.seconds
        );
    }

    let table = |text: &mut String, title: &str, key: &dyn Fn(&Record) -> Vec<String>| {
        let mut rows: BTreeMap<String, BTreeMap<Outcome, usize>> = BTreeMap::new();
        for r in records {
            for k in key(r) {
                *rows
                    .entry(k)
                    .or_default()
                    .entry(r.verdict.outcome)
                    .or_default() += 1;
            }
        }
        let _ = write!(text, "\n{title:<26} {:>6}", "cases");
        for o in Outcome::ALL {
            let _ = write!(text, " {:>7}", o.short());
        }
        text.push('\n');
        for (name, counts) in rows {
            let total: usize = counts.values().sum();
            let _ = write!(text, "  {name:<24} {total:>6}");
            for o in Outcome::ALL {
                let _ = write!(text, " {:>7}", counts.get(&o).copied().unwrap_or(0));
            }
            text.push('\n');
        }
    };
    table(&mut text, "by command", &|r| {
        vec![r.case.command.name().to_string()]
    });
    table(&mut text, "by class", &|r| {
        vec![r.case.class.name().to_string()]
    });
    table(&mut text, "by mutation kind", &|r| {
        let mut kinds: Vec<String> = r.case.kinds.iter().map(|k| k.to_string()).collect();
        kinds.sort();
        kinds.dedup();
        if kinds.is_empty() {
            kinds.push("(none)".into());
        }
        kinds
    });
    table(&mut text, "by example", &|r| vec![r.case.example.clone()]);
    let _ = examples;

    let named: Vec<&Record> = records
        .iter()
        .filter(|r| r.verdict.names_target.is_some())
        .collect();
    let unnamed: Vec<&&Record> = named
        .iter()
        .filter(|r| r.verdict.names_target == Some(false))
        .collect();
    let _ = writeln!(
        text,
        "\nerrors after one located mutation: {} name the mutated config path, {} do not (informational; samples below)",
        named.len() - unnamed.len(),
        unnamed.len()
    );
    let mut seen = BTreeSet::new();
    for r in unnamed {
        let kind = r.case.kinds.first().copied().unwrap_or("");
        if !seen.insert((kind, r.case.target.clone())) || seen.len() > 40 {
            continue;
        }
        let _ = writeln!(
            text,
            "  #{} {} [{}]: {}\n      -> {}",
            r.case.index,
            r.case.example,
            r.case.log.join("; ").chars().take(200).collect::<String>(),
            r.case.target.as_deref().unwrap_or(""),
            r.verdict
                .message
                .as_deref()
                .unwrap_or("")
                .chars()
                .take(300)
                .collect::<String>()
        );
    }
    text
}

/// One line per case: index, class, outcome, seconds, mutations, first error line.
fn case_log(records: &[Record]) -> String {
    let mut text = String::new();
    for r in records {
        let message = r.verdict.message.as_deref().unwrap_or("");
        let message = message.split_once(".toml: ").map_or(message, |(_, m)| m);
        let _ = writeln!(
            text,
            "{}\t{}\t{}\t{:.2}\t{}\t{}",
            r.case.index,
            r.case.class.name(),
            r.verdict.outcome.short(),
            r.verdict.seconds,
            r.case.log.join(" | ").chars().take(400).collect::<String>(),
            message.chars().take(400).collect::<String>()
        );
    }
    text
}

fn describe_failure(settings: &Settings, record: &Record) -> String {
    let (case, verdict) = (&record.case, &record.verdict);
    let mut text = String::new();
    let _ = writeln!(
        text,
        "\n--- case {} ({}, from {}{}{}) ---",
        case.index,
        case.class.name(),
        case.example,
        if case.gpu { ", GPU" } else { "" },
        if case.large { ", size-extreme" } else { "" }
    );
    for p in &verdict.problems {
        let _ = writeln!(text, "problem: {p}");
    }
    for l in &case.log {
        let _ = writeln!(
            text,
            "mutation: {}",
            l.chars().take(300).collect::<String>()
        );
    }
    let _ = writeln!(
        text,
        "replay: HARBOR_FUZZ_SEED={} HARBOR_FUZZ_CASES={} HARBOR_FUZZ_ONLY={} cargo test --release --test fuzz_configs -- --nocapture",
        settings.seed, settings.cases, case.index
    );
    let _ = writeln!(text, "command: {}", verdict.command);
    if let Some(dir) = &record.kept_at {
        let _ = writeln!(
            text,
            "config file: {}",
            dir.join("cfg/config.toml").display()
        );
    }
    let stderr: Vec<&str> = verdict.stderr.lines().collect();
    let tail = stderr[stderr.len().saturating_sub(15)..].join("\n");
    let _ = writeln!(
        text,
        "stderr (last lines):\n{}",
        tail.chars().take(3000).collect::<String>()
    );
    let config = String::from_utf8_lossy(&case.config);
    // Long lines (vectors of 10⁵ entries) are cut.
    let shown: String = config
        .lines()
        .map(|l| {
            if l.chars().count() > 200 {
                format!("{}…", l.chars().take(200).collect::<String>())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        .chars()
        .take(2500)
        .collect();
    let _ = writeln!(
        text,
        "config ({} bytes{}):\n{shown}",
        case.config.len(),
        if shown.len() < config.len() {
            ", shortened"
        } else {
            ""
        }
    );
    text
}
