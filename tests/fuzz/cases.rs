//! The cases: case i of seed s depends only on (s, i) (a ChaCha8 stream per case). Each
//! starts from an example config, bounded to a small run (few steps, few members) so that a
//! case never legitimately runs long, then is varied by one class of mutation:
//!
//! - `valid`: plausible variations (other schemes, random consistent systems of every
//!   kind, signals, ensembles) that mostly run;
//! - `tree`: values replaced by extremes or wrong types, vectors and matrices of the wrong
//!   length or structure, missing and unknown fields, unknown enum names, sections removed
//!   or replaced;
//! - `text`: the written file truncated, with duplicated lines or sections, flipped or
//!   inserted bytes, random bytes, deep nesting, odd line ends, a BOM, invalid UTF-8;
//! - `set`: `--set` overrides, structured (existing or new keys, any value) and malformed;
//! - `csv`: CSV input files with junk, and bad paths, columns and `outside` modes;
//! - `nonfinite`: valid parameters that overflow, some with `--keep-nonfinite`;
//! - `out`: `--out` that exists (empty, a previous output, foreign, a file), inside a
//!   file, under missing parents, or with an overlong name;
//! - `cli`: odd command lines (missing config, unknown flags, invalid UTF-8, …);
//! - `size`: deliberately huge runs (members, steps, recording, state size), whose expected
//!   outcome is a quick refusal; if the program runs them instead they are "ran long";
//! - `narrowing`: values around 2³¹, 2³² and u32::MAX ± 1 for `output.every`, the step
//!   count (h and t_end) and `ensemble.members`, on `--backend cpu` and (few) `gpu`: a run
//!   that finishes must equal the `--backend reference` run of the same config
//!   (`narrowing.rs`);
//! - `endless`: a config that is `/dev/zero`, a FIFO (never written, or held open and never
//!   closed), a huge sparse file, or a CSV input / data file that is one of those: a clear
//!   error within the time limit and memory cap (`endless.rs`);
//! - `dimension` (gradient and identify examples only): model dimensions and counts
//!   (`candidate.states`, `model.order`, `data.reference.cells`, steps, candidates, …) set
//!   to 10³ … 2⁶³ − 1: a refusal naming the field, or a run that finishes or runs long;
//!   dimensions whose matrices cannot fit this machine must be refused (`model_cases.rs`).
//!
//! Cases from the gradient and identify examples run their own subcommand (`Subcommand`) and
//! draw from `valid`, `tree`, `text`, `set`, `out`, `endless` and `dimension`.

use std::ffi::OsString;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::doc::{self, Path, Seg, V, key};

/// The subcommand a case runs, from the sections of its example.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subcommand {
    Simulate,
    Gradient,
    Identify,
}

impl Subcommand {
    pub fn name(self) -> &'static str {
        match self {
            Subcommand::Simulate => "simulate",
            Subcommand::Gradient => "gradient",
            Subcommand::Identify => "identify",
        }
    }

    /// A `harbor identify` config has `[model]`, a `harbor gradient` problem `[candidate]`.
    fn of(doc: &V) -> Subcommand {
        if doc.get_key("model").is_some() {
            Subcommand::Identify
        } else if doc.get_key("candidate").is_some() {
            Subcommand::Gradient
        } else {
            Subcommand::Simulate
        }
    }
}

/// The family an example belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    LinearPh,
    Contact,
    PortHamiltonian,
    Variational,
}

/// An example config, parsed.
#[derive(Debug, Clone)]
pub struct Example {
    pub name: String,
    pub doc: V,
    pub family: Family,
    pub command: Subcommand,
}

impl Example {
    pub fn load_all() -> Vec<Example> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .expect("examples/ is readable")
            .map(|e| e.expect("examples/ lists").path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        names.sort();
        assert!(!names.is_empty(), "no examples in {}", dir.display());
        names
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(&path).expect("example reads");
                let table: toml::Table = text.parse().expect("example parses");
                let doc = V::from_toml(&toml::Value::Table(table));
                let kind = doc
                    .get(&[key("system"), key("kind")])
                    .cloned()
                    .unwrap_or(V::str(""));
                let family = if kind == V::str("contact") {
                    Family::Contact
                } else if kind == V::str("port-hamiltonian") {
                    Family::PortHamiltonian
                } else if kind == V::str("variational") {
                    Family::Variational
                } else {
                    Family::LinearPh
                };
                Example {
                    name: path.file_name().unwrap().to_string_lossy().into_owned(),
                    command: Subcommand::of(&doc),
                    doc,
                    family,
                }
            })
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    Valid,
    Tree,
    Text,
    Set,
    Csv,
    NonFinite,
    Out,
    Cli,
    Size,
    Narrowing,
    Endless,
    Dimension,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Valid => "valid",
            Class::Tree => "tree",
            Class::Text => "text",
            Class::Set => "set",
            Class::Csv => "csv",
            Class::NonFinite => "nonfinite",
            Class::Out => "out",
            Class::Cli => "cli",
            Class::Size => "size",
            Class::Narrowing => "narrowing",
            Class::Endless => "endless",
            Class::Dimension => "dimension",
        }
    }
}

/// What `--out` points at before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutSetup {
    /// A new path.
    Fresh,
    /// An existing empty directory (may be replaced).
    EmptyDir,
    /// A previous harbor output (may be replaced; a failed run leaves it as it was).
    PreviousOutput,
    /// A directory with a file of someone else's: must be refused and left alone.
    ForeignDir,
    /// A regular file: must be refused and left alone.
    ExistingFile,
    /// A path inside a regular file.
    InsideFile,
    /// A path under two directories that do not exist yet.
    MissingParents,
    /// A directory name longer than file systems accept.
    LongName,
    /// `--out` left out.
    Omitted,
    /// `--out ""`.
    Empty,
}

/// What the config argument names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigArg {
    File,
    Missing,
    Directory,
    DevNull,
    /// `/dev/zero`: endless.
    DevZero,
    /// A FIFO nobody writes to.
    Fifo,
    /// A FIFO the fuzzer holds open for writing (after a few bytes of TOML) and never closes.
    HeldFifo,
    /// A sparse file of [`SPARSE_BYTES`].
    Sparse,
}

/// The size of the sparse files of `endless` cases (64 GiB, no blocks on disk).
pub const SPARSE_BYTES: u64 = 1 << 36;

/// One fuzz case: the files to write and the command line to run.
#[derive(Debug, Clone)]
pub struct Case {
    pub index: usize,
    pub command: Subcommand,
    pub class: Class,
    pub example: String,
    /// The mutation kinds applied, for the counts.
    pub kinds: Vec<&'static str>,
    /// What was done, in words.
    pub log: Vec<String>,
    /// The config file's bytes.
    pub config: Vec<u8>,
    /// Further files beside the config (CSV inputs), by relative name.
    pub files: Vec<(String, Vec<u8>)>,
    /// Further special files beside the config: FIFOs and sparse files, by relative name.
    pub special_files: Vec<(String, ConfigArg)>,
    pub sets: Vec<OsString>,
    /// Appended after the standard arguments.
    pub extra_args: Vec<OsString>,
    pub keep_nonfinite: bool,
    pub gpu: bool,
    pub out: OutSetup,
    pub config_arg: ConfigArg,
    /// Too large to finish within the limit by design: running long is not a hang.
    pub large: bool,
    /// For single, located mutations: the config path an error message is expected to name
    /// (informational).
    pub target: Option<String>,
    /// A refusal (exit 1) must name this config path (`dimension` cases).
    pub names_field: Vec<String>,
    /// Exit 0 and running past the limit both fail: the run cannot fit this machine.
    pub must_refuse: bool,
    /// Exit 0 fails: the run cannot finish within the limit on any machine, so finishing
    /// means a count was truncated; running long is fine.
    pub exit0_impossible: bool,
    /// Exit 0 must equal the `--backend reference` run of the same config.
    pub reference_check: bool,
}

impl Case {
    /// A plain CPU case: `config` into a fresh `--out`.
    pub fn new(index: usize, example: &str, config: Vec<u8>) -> Case {
        Case {
            index,
            command: Subcommand::Simulate,
            class: Class::Valid,
            example: example.to_string(),
            kinds: Vec::new(),
            log: Vec::new(),
            config,
            files: Vec::new(),
            special_files: Vec::new(),
            sets: Vec::new(),
            extra_args: Vec::new(),
            keep_nonfinite: false,
            gpu: false,
            out: OutSetup::Fresh,
            config_arg: ConfigArg::File,
            large: false,
            target: None,
            names_field: Vec::new(),
            must_refuse: false,
            exit0_impossible: false,
            reference_check: false,
        }
    }
}

const EXTREME_FLOATS: [f64; 23] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    1e308,
    -1e308,
    f64::MAX,
    -f64::MAX,
    f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    1e-300,
    1e300,
    1e16,
    -1e16,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.30000000000000004,
    1.3407807929942596e154,
    9007199254740993.0,
    -2.5,
    0.9999999999999999,
];

const EXTREME_INTS: [i64; 12] = [
    0,
    -1,
    1,
    2,
    i64::MAX,
    i64::MIN,
    4294967295,
    4294967296,
    9007199254740993,
    1_000_000_000,
    -4294967296,
    255,
];

/// Numbers TOML cannot hold or that only look like numbers, written verbatim.
const RAW_NUMBERS: [&str; 28] = [
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775809",
    "1e400",
    "-1e400",
    "1e-400",
    "+nan",
    "-nan",
    "+inf",
    "0x7fffffffffffffff",
    "0xffffffffffffffff",
    "0o777",
    "0b1",
    "1_000_000",
    "1__0",
    "01",
    "1.",
    ".5",
    "1e",
    "nan(1)",
    "∞",
    "1979-05-27T07:32:00Z",
    "1979-05-27",
    "07:32:00",
    "1,5",
    "0.1.2",
    "--1",
    "Infinity",
];

/// Every enum name the config knows, and some it does not.
const NAMES: [&str; 53] = [
    "linear-ph",
    "mechanical",
    "contact",
    "gauss",
    "lobatto-iiia",
    "lobatto-iiib",
    "lobatto-pair",
    "splitting",
    "herglotz",
    "strang",
    "triple-jump-4",
    "triple-jump-6",
    "triple-jump-8",
    "suzuki-4",
    "yoshida-6a",
    "yoshida-6b",
    "yoshida-6c",
    "kahan-li-6",
    "mclachlan-8",
    "kahan-li-8",
    "harmonic",
    "quartic",
    "pendulum",
    "forcing",
    "kepler",
    "spin-orbit",
    "constant",
    "signal",
    "tidal",
    "expression",
    "zero",
    "sine",
    "cosine",
    "chirp",
    "square",
    "pulse",
    "csv",
    "fixed",
    "perturb",
    "random",
    "uniform",
    "error",
    "hold",
    "",
    " ",
    "Gauss",
    "LINEAR-PH",
    "linear_ph",
    "gauss ",
    "strang\t",
    "yoshida-6d",
    "ÿ",
    "contact\u{0}",
];

const UNKNOWN_KEYS: [&str; 16] = [
    "colour", "x1", "J ", "j", "stage", "H", "t-end", "", "kind2", "α", "members", "h", "seed",
    "alpha", "K", "every",
];

/// Malformed or odd `--set` arguments.
const ODD_SETS: [&str; 104] = [
    "system.x0=[0.5,",
    "=",
    "a..b=1",
    "",
    "=1",
    "system.x0",
    "system",
    ".=1",
    "system.=1",
    ".system.x0=1",
    "system..x0=1",
    " = ",
    "system.x0==1",
    "system.x0=",
    "system.x0=[",
    "system.x0={",
    "system.x0=\"",
    "system.x0='",
    "system.x0='''",
    "system.x0=1 2",
    "system.x0=[1.0, 2.0]]",
    "system.x0=[1.0,,2.0]",
    "system.x0=[nan]",
    "system.x0=[inf, -inf]",
    "scheme.h=0x1p-3",
    "scheme.h=1e999",
    "scheme.h=-0.0",
    "scheme.h=nan",
    "scheme.h=\"0.01\"",
    "scheme.h=[0.01]",
    "scheme.h={}",
    "scheme.h.x=1",
    "scheme.t_end=2024-01-01",
    "system . x0 = [1.0]",
    "system.x0=[1,\n2]",
    "system.x0=1 # comment",
    "scheme.stages=2.0",
    "scheme.stages=-1",
    "scheme.stages=18446744073709551615",
    "scheme.stages=4294967296",
    "ensemble.members=-1",
    "ensemble.members=0",
    "ensemble.members=1.5",
    "ensemble.members=\"3\"",
    "ensemble.seed=-1",
    "ensemble.seed=18446744073709551615",
    "output.every=0",
    "output.every=-1",
    "output.every=1e3",
    "input=1",
    "input=[]",
    "input={}",
    "input.0=1",
    "input.0.kind=csv",
    "input.9.kind=zero",
    "input.-1.kind=zero",
    "input.x.kind=zero",
    "input.99999999999999999999.kind=zero",
    "input.+0.kind=zero",
    "input.00.kind=zero",
    "system=1",
    "system=[]",
    "system={}",
    "scheme=",
    "scheme=\"gauss\"",
    "system.kind=",
    "system.kind=1",
    "system.kind.x=1",
    "system.J.0.5=1",
    "system.J.0.0.0=1",
    "system.J.0=1",
    "system.J=[]",
    "system.J=[[]]",
    "système.x0=1",
    "system.x₀=1",
    "\u{202e}system.x0=1",
    "unknown=1",
    "study.h=[]",
    "study.schemes=[{family=\"gauss\"}]",
    "study.fit_floor=nan",
    "ensemble=1",
    "ensemble.x0.kind=uniform",
    "ensemble.x0={kind=\"uniform\",low=1,high=0}",
    "system.potential.0.kind=kepler",
    "system.potential.9=1",
    "system.damping=1",
    "system.damping.kind=tidal",
    "system.damping={kind=\"expression\",C=\"2/t\"}",
    "system.damping={kind=\"expression\",C=\"1/(t - 0.5)\"}",
    "system.damping={kind=\"expression\",C=\"x\"}",
    "system.damping.C=\"0.1\"",
    "system.potential.0={kind=\"expression\",B=\"p^2\"}",
    "system.potential.0={kind=\"expression\",B=\"x^4/4 - x^2/2\"}",
    "system.potential.0={kind=\"expression\",B=\"x^\"}",
    "system.potential.0={kind=\"expression\",B=1}",
    "output=1",
    "output.every.x=1",
    "scheme.family=GAUSS",
    "scheme.composition=strang,yoshida-6a",
    "scheme.composition=",
    "a=b=c",
    "'system.x0'=[1.0]",
    "\"system\".x0=[1.0]",
    "system.\"x0\"=[1.0]",
];

/// The generator of one case.
pub(super) struct Gen {
    pub(super) rng: ChaCha8Rng,
    /// The config as it will be written.
    pub(super) doc: V,
    /// The config as the program will see it after the structured `--set`s.
    pub(super) shadow: V,
    pub(super) family: Family,
    pub(super) case: Case,
    /// Located mutations, for the informational error-naming check.
    targets: Vec<String>,
}

/// Generates case `index` of `seed`; `gpu` makes it one of the few GPU cases.
pub fn generate(seed: u64, index: usize, examples: &[Example], gpu: bool) -> Case {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(index as u64);
    // GPU cases run simulate (the few there are go where the GPU kernels are).
    let pool: Vec<&Example> = examples
        .iter()
        .filter(|e| !gpu || e.command == Subcommand::Simulate)
        .collect();
    let example = pool[index % pool.len()];
    let mut g = Gen {
        rng,
        doc: example.doc.clone(),
        shadow: V::table(),
        family: example.family,
        case: Case {
            gpu,
            command: example.command,
            ..Case::new(index, &example.name, Vec::new())
        },
        targets: Vec::new(),
    };
    if example.command != Subcommand::Simulate {
        g.case.gpu = false;
        g.model_case();
        return g.finish();
    }
    g.bound();
    let class = if gpu {
        g.weighted(&[
            (Class::Valid, 3),
            (Class::Tree, 2),
            (Class::Set, 2),
            (Class::NonFinite, 1),
            (Class::Narrowing, 5),
        ])
    } else {
        g.weighted(&[
            (Class::Valid, 10),
            (Class::Tree, 30),
            (Class::Text, 10),
            (Class::Set, 20),
            (Class::Csv, 8),
            (Class::NonFinite, 6),
            (Class::Out, 5),
            (Class::Cli, 3),
            (Class::Size, 2),
            (Class::Narrowing, 3),
            (Class::Endless, 2),
        ])
    };
    g.case.class = class;
    let mut text_done = false;
    match class {
        Class::Valid => {
            let n = g.rng.random_range(1..=2);
            for _ in 0..n {
                g.valid_variation();
            }
        }
        Class::Tree => {
            if g.rng.random_bool(0.4) {
                g.valid_variation();
            }
            let n = g.weighted(&[(1, 6), (2, 3), (3, 1)]);
            for _ in 0..n {
                g.tree_mutation();
            }
        }
        Class::Text => {
            if g.rng.random_bool(0.3) {
                g.valid_variation();
            }
            g.text_mutation();
            text_done = true;
        }
        Class::Set => {
            if g.rng.random_bool(0.3) {
                g.valid_variation();
            }
            if g.rng.random_bool(0.15) {
                g.tree_mutation();
            }
            let n = g.weighted(&[(1, 5), (2, 3), (3, 2)]);
            for _ in 0..n {
                g.set_mutation();
            }
        }
        Class::Csv => {
            if g.rng.random_bool(0.2) {
                g.valid_variation();
            }
            g.csv_case();
        }
        Class::NonFinite => {
            g.nonfinite_case();
            g.case.keep_nonfinite = g.rng.random_bool(0.6);
        }
        Class::Out => {
            // Failures before the output location is prepared, after it (non-finite
            // results), and successes.
            match g.rng.random_range(0..10) {
                0..=2 => g.tree_mutation(),
                3..=5 => g.nonfinite_case(),
                _ => {}
            }
            g.out_case();
        }
        Class::Cli => g.cli_case(),
        Class::Size => g.size_case(),
        Class::Narrowing => g.narrowing_case(),
        Class::Endless => g.endless_case(),
        Class::Dimension => unreachable!("dimension cases come from gradient/identify examples"),
    }
    if class != Class::NonFinite && g.rng.random_bool(0.04) {
        g.case.keep_nonfinite = true;
    }
    if gpu && class != Class::Narrowing && g.rng.random_bool(0.4) {
        g.case
            .extra_args
            .extend(["--precision".into(), "f32".into()]);
        g.case.log.push("gpu: --precision f32".into());
    }
    if !text_done {
        g.case.config = doc::write_document(&g.doc).into_bytes();
    }
    g.finish()
}

impl Gen {
    pub(super) fn finish(mut self) -> Case {
        // The program sees the file with the structured `--set`s applied.
        let mut effective = self.doc.clone();
        if let V::Tab(entries) = &self.shadow {
            for (path_text, value) in entries {
                let path: Path = path_text
                    .split('.')
                    .map(|s| match s.parse::<usize>() {
                        Ok(i) => Seg::Idx(i),
                        Err(_) => key(s),
                    })
                    .collect();
                effective.set(&path, value.clone());
            }
        }
        self.case.large |= self.case.class == Class::Size || is_large(&effective);
        if self.targets.len() == 1 && self.case.kinds.len() == 1 {
            self.case.target = self.targets.pop();
        }
        self.case
    }

    pub(super) fn note(&mut self, kind: &'static str, what: String) {
        self.case.kinds.push(kind);
        self.case.log.push(format!("{kind}: {what}"));
    }

    pub(super) fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.rng.random_range(0..items.len())].clone()
    }

    pub(super) fn weighted<T: Copy>(&mut self, items: &[(T, u32)]) -> T {
        let total: u32 = items.iter().map(|(_, w)| w).sum();
        let mut x = self.rng.random_range(0..total);
        for (item, w) in items {
            if x < *w {
                return *item;
            }
            x -= w;
        }
        unreachable!()
    }

    /// An integer log-uniform in [lo, hi].
    pub(super) fn log_int(&mut self, lo: u64, hi: u64) -> u64 {
        let (a, b) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
        (self.rng.random_range(a..b).exp() as u64).clamp(lo, hi)
    }

    /// A plausible number: small, round, often 0 or ±1.
    pub(super) fn nice(&mut self) -> f64 {
        match self.rng.random_range(0..10) {
            0 => 0.0,
            1 => 1.0,
            2 => -1.0,
            3 => 0.5,
            _ => (self.rng.random_range(-2.0..2.0) * 1000.0_f64).round() / 1000.0,
        }
    }

    /// A plausible number, now and then an extreme one.
    fn number(&mut self) -> f64 {
        if self.rng.random_bool(0.1) {
            self.pick(&EXTREME_FLOATS)
        } else {
            self.nice()
        }
    }

    pub(super) fn positive(&mut self) -> f64 {
        if self.rng.random_bool(0.05) {
            self.pick(&EXTREME_FLOATS)
        } else {
            (self.rng.random_range(0.01..2.0) * 1000.0_f64).round() / 1000.0
        }
    }

    fn extreme_value(&mut self) -> V {
        match self.rng.random_range(0..10) {
            0..=5 => V::Float(self.pick(&EXTREME_FLOATS)),
            6..=7 => V::Int(self.pick(&EXTREME_INTS)),
            _ => V::Raw(self.pick(&RAW_NUMBERS).to_string()),
        }
    }

    /// A value of another type than `current`.
    fn wrong_type_value(&mut self, current: &V) -> V {
        loop {
            let v = match self.rng.random_range(0..14) {
                0 => V::str("1.0"),
                1 => V::str(""),
                2 => V::Bool(true),
                3 => V::Arr(Vec::new()),
                4 => V::floats(&[1.0]),
                5 => V::matrix(&[vec![1.0, 0.0], vec![0.0, 1.0]]),
                6 => V::table(),
                7 => V::tab(vec![("kind", V::str("zero"))]),
                8 => V::Raw("1979-05-27T07:32:00Z".into()),
                9 => V::Float(2.5),
                10 => V::Int(2),
                11 => V::Arr(vec![V::str("a"), V::Int(1)]),
                12 => V::Arr(vec![V::Arr(vec![V::Arr(vec![V::Float(1.0)])])]),
                _ => V::Str(self.pick(&NAMES).to_string()),
            };
            if v.type_name() != current.type_name() || self.rng.random_bool(0.1) {
                return v;
            }
        }
    }

    /// Any value at all.
    fn any_value(&mut self) -> V {
        match self.rng.random_range(0..4) {
            0 => self.extreme_value(),
            1 => V::Float(self.number()),
            2 => V::Str(self.pick(&NAMES).to_string()),
            _ => {
                let cur = V::Bool(false);
                self.wrong_type_value(&cur)
            }
        }
    }

    pub(super) fn h(&self) -> f64 {
        self.doc
            .get(&[key("scheme"), key("h")])
            .and_then(V::as_f64)
            .filter(|h| h.is_finite() && *h > 0.0)
            .unwrap_or(0.01)
    }

    pub(super) fn t_end(&self) -> f64 {
        self.doc
            .get(&[key("scheme"), key("t_end")])
            .and_then(V::as_f64)
            .filter(|t| t.is_finite() && *t > 0.0)
            .unwrap_or(1.0)
    }

    pub(super) fn set_steps(&mut self, h: f64, steps: u64) {
        self.doc.set(&[key("scheme"), key("h")], V::Float(h));
        self.doc
            .set(&[key("scheme"), key("t_end")], V::Float(h * steps as f64));
    }

    /// Keeps the run small: at most 2000 steps and 12 members, recorded at any cadence.
    fn bound(&mut self) {
        let h = self.h();
        let original = (self.t_end() / h).round().max(1.0) as u64;
        let steps = if self.rng.random_bool(0.1) {
            original.min(2000)
        } else {
            self.log_int(1, original.clamp(1, 400))
        };
        self.set_steps(h, steps);
        if self.doc.get_key("ensemble").is_some() {
            let members = self.log_int(1, 12);
            self.doc
                .set(&[key("ensemble"), key("members")], V::Int(members as i64));
        }
        let every = self.rng.random_range(1..=steps + 2);
        self.doc
            .set(&[key("output"), key("every")], V::Int(every as i64));
    }

    // ---- plausible building blocks ----

    fn random_matrix(&mut self, rows: usize, cols: usize) -> Vec<Vec<f64>> {
        (0..rows)
            .map(|_| (0..cols).map(|_| self.nice()).collect())
            .collect()
    }

    /// A symmetric positive definite n×n matrix (D Dᵀ / n + I), now and then only
    /// semidefinite or broken.
    fn spd(&mut self, n: usize, shift: f64) -> Vec<Vec<f64>> {
        let d = self.random_matrix(n, n);
        let mut m = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..n {
                let s: f64 = (0..n).map(|k| d[i][k] * d[j][k]).sum();
                m[i][j] = s / n as f64 + if i == j { shift } else { 0.0 };
            }
        }
        m
    }

    fn skew(&mut self, n: usize) -> Vec<Vec<f64>> {
        let a = self.random_matrix(n, n);
        (0..n)
            .map(|i| (0..n).map(|j| a[i][j] - a[j][i]).collect())
            .collect()
    }

    fn vector(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.nice()).collect()
    }

    fn signal(&mut self) -> V {
        let kind = self.pick(&[
            "zero", "constant", "sine", "cosine", "chirp", "square", "pulse",
        ]);
        let mut t = V::tab(vec![("kind", V::str(kind))]);
        let t_end = self.t_end();
        match kind {
            "constant" => {
                let v = self.number();
                t.set_key("value", V::Float(v));
            }
            "sine" | "cosine" => {
                let (a, f, p) = (self.number(), self.positive(), self.number());
                t.set_key("amplitude", V::Float(a));
                t.set_key("frequency", V::Float(f));
                if self.rng.random_bool(0.5) {
                    t.set_key("phase", V::Float(p));
                    let o = self.number();
                    t.set_key("offset", V::Float(o));
                }
            }
            "chirp" => {
                let (f0, f1, t1) = (self.positive(), self.positive(), self.positive());
                t.set_key("f0", V::Float(f0));
                t.set_key("f1", V::Float(f1));
                t.set_key("t1", V::Float(t1));
                if self.rng.random_bool(0.5) {
                    let phi = self.number() * 90.0;
                    t.set_key("phi", V::Float(phi));
                }
            }
            "square" => {
                let (f, duty) = (self.positive(), self.rng.random_range(0.0..=1.0));
                t.set_key("frequency", V::Float(f));
                t.set_key("duty", V::Float(duty));
                let a = self.number();
                t.set_key("amplitude", V::Float(a));
            }
            "pulse" => {
                let start = self.rng.random_range(0.0..t_end);
                let end = start + self.rng.random_range(0.0..t_end) + 1e-3;
                t.set_key("start", V::Float(start));
                t.set_key("end", V::Float(end));
                let a = self.number();
                t.set_key("amplitude", V::Float(a));
            }
            _ => {}
        }
        t
    }

    fn linear_ph_system(&mut self) -> (V, usize) {
        let n = self.rng.random_range(1..=4);
        let m = self.rng.random_range(0..=2);
        let mut s = V::tab(vec![("kind", V::str("linear-ph"))]);
        let j = self.skew(n);
        s.set_key("J", V::matrix(&j));
        if self.rng.random_bool(0.6) {
            let damping = self.rng.random_range(0.0..0.5);
            let r: Vec<Vec<f64>> = self
                .spd(n, 0.0)
                .into_iter()
                .map(|row| row.into_iter().map(|v| v * damping).collect())
                .collect();
            s.set_key("R", V::matrix(&r));
        }
        let q = self.spd(n, 1.0);
        s.set_key("Q", V::matrix(&q));
        if m > 0 {
            let b = self.random_matrix(n, m);
            s.set_key("B", V::matrix(&b));
        }
        let x0 = self.vector(n);
        s.set_key("x0", V::floats(&x0));
        (s, m)
    }

    fn mechanical_system(&mut self) -> (V, usize) {
        let n = self.rng.random_range(1..=3);
        let m = self.rng.random_range(0..=2);
        let mut s = V::tab(vec![("kind", V::str("mechanical"))]);
        let k = self.spd(n, 0.5);
        s.set_key("K", V::matrix(&k));
        let p = self.spd(n, 1.0);
        s.set_key("P", V::matrix(&p));
        if self.rng.random_bool(0.5) {
            let d = self.spd(n, 0.0);
            s.set_key("D", V::matrix(&d));
        }
        if m > 0 {
            let g = self.random_matrix(n, m);
            s.set_key("G", V::matrix(&g));
        }
        let (q0, p0) = (self.vector(n), self.vector(n));
        s.set_key("q0", V::floats(&q0));
        s.set_key("p0", V::floats(&p0));
        (s, m)
    }

    fn potential_term(&mut self, kind: &str, n: usize) -> V {
        let mut t = V::tab(vec![("kind", V::str(kind))]);
        match kind {
            "harmonic" => {
                let k = self.spd(n, 0.5);
                t.set_key("K", V::matrix(&k));
            }
            "quartic" => {
                let b = self.number();
                t.set_key("beta", V::Float(b));
            }
            "pendulum" => {
                let w = self.number();
                t.set_key("omega", V::Float(w));
            }
            "forcing" => {
                let a = self.vector(n);
                t.set_key("amplitude", V::floats(&a));
                let s = self.signal();
                t.set_key("signal", s);
            }
            "kepler" => {
                let g = self.positive();
                t.set_key("gamma", V::Float(g));
            }
            "expression" => return self.expression_potential(n),
            _ => {
                let (e, ecc) = (self.positive() * 0.1, self.rng.random_range(0.0..0.95));
                t.set_key("epsilon", V::Float(e));
                t.set_key("eccentricity", V::Float(ecc));
            }
        }
        t
    }

    fn damping(&mut self) -> V {
        match self.rng.random_range(0..4) {
            3 => self.expression_damping(),
            0 => {
                let a = self.number();
                V::tab(vec![("kind", V::str("constant")), ("alpha", V::Float(a))])
            }
            1 => {
                let a = self.number();
                let s = self.signal();
                V::tab(vec![
                    ("kind", V::str("signal")),
                    ("alpha", V::Float(a)),
                    ("signal", s),
                ])
            }
            _ => {
                let (eta, ecc) = (self.positive() * 0.01, self.rng.random_range(0.0..0.95));
                V::tab(vec![
                    ("kind", V::str("tidal")),
                    ("eta", V::Float(eta)),
                    ("eccentricity", V::Float(ecc)),
                ])
            }
        }
    }

    fn contact_system(&mut self) -> V {
        let n = self.rng.random_range(1..=3);
        let mut s = V::tab(vec![("kind", V::str("contact"))]);
        let (x0, p0) = (self.vector(n), self.vector(n));
        s.set_key("x0", V::floats(&x0));
        s.set_key("p0", V::floats(&p0));
        if self.rng.random_bool(0.3) {
            let z0 = self.nice();
            s.set_key("z0", V::Float(z0));
        }
        if self.rng.random_bool(0.3) {
            let p = self.spd(n, 1.0);
            s.set_key("kinetic", V::matrix(&p));
        }
        let mut terms = Vec::new();
        for kind in [
            "harmonic",
            "quartic",
            "pendulum",
            "forcing",
            "kepler",
            "spin-orbit",
            "expression",
        ] {
            if self.rng.random_bool(0.3) {
                terms.push(self.potential_term(kind, n));
            }
        }
        s.set_key("potential", V::Arr(terms));
        if self.rng.random_bool(0.7) {
            let d = self.damping();
            s.set_key("damping", d);
        }
        s
    }

    fn collocation_scheme(&mut self) {
        let family = self.pick(&["gauss", "gauss", "lobatto-iiia", "lobatto-pair"]);
        let stages = if family == "gauss" {
            self.rng.random_range(1..=8)
        } else {
            self.rng.random_range(2..=6)
        };
        let scheme = self.doc.get_key_mut("scheme");
        if let Some(scheme) = scheme {
            scheme.set_key("family", V::str(family));
            scheme.set_key("stages", V::Int(stages));
            scheme.remove_key("composition");
        }
    }

    fn contact_scheme(&mut self) {
        let herglotz = self.rng.random_bool(0.25);
        let composition = self.pick(&NAMES[9..20]);
        if let Some(scheme) = self.doc.get_key_mut("scheme") {
            scheme.remove_key("stages");
            if herglotz {
                scheme.set_key("family", V::str("herglotz"));
                scheme.remove_key("composition");
            } else {
                scheme.set_key("family", V::str("splitting"));
                scheme.set_key("composition", V::str(composition));
            }
        }
    }

    fn linear_ensemble(&mut self) -> V {
        let members = self.log_int(1, 8) as i64;
        let seed = self.rng.random_range(0..1_i64 << 40);
        let mut e = V::tab(vec![("members", V::Int(members)), ("seed", V::Int(seed))]);
        for name in ["J", "R", "Q", "B", "x0"] {
            let draw = match self.rng.random_range(0..4) {
                0 => continue,
                1 => V::tab(vec![("kind", V::str("fixed"))]),
                2 => {
                    let s = self.positive() * 0.1;
                    V::tab(vec![("kind", V::str("perturb")), ("sigma", V::Float(s))])
                }
                _ => {
                    let s = self.positive();
                    V::tab(vec![("kind", V::str("random")), ("scale", V::Float(s))])
                }
            };
            e.set_key(name, draw);
        }
        e
    }

    fn contact_ensemble(&mut self) -> V {
        let members = self.log_int(1, 8) as i64;
        let seed = self.rng.random_range(0..1_i64 << 40);
        let mut e = V::tab(vec![("members", V::Int(members)), ("seed", V::Int(seed))]);
        let system = self.doc.get_key("system").cloned().unwrap_or(V::table());
        let has = |kind: &str| {
            system
                .get_key("potential")
                .is_some_and(|p| matches!(p, V::Arr(items) if items.iter().any(|t| t.get_key("kind") == Some(&V::str(kind)))))
        };
        let mut keys = vec!["x0", "p0", "z0"];
        for (param, kind) in [
            ("beta", "quartic"),
            ("omega", "pendulum"),
            ("gamma", "kepler"),
            ("epsilon", "spin-orbit"),
            ("amplitude", "forcing"),
        ] {
            if has(kind) || self.rng.random_bool(0.05) {
                keys.push(param);
            }
        }
        // An expression damping has no α to draw (a draw is refused by name).
        let drawable = system
            .get_key("damping")
            .is_some_and(|d| d.get_key("kind") != Some(&V::str("expression")));
        if drawable || self.rng.random_bool(0.05) {
            keys.push("alpha");
        }
        for name in keys {
            let draw = match self.rng.random_range(0..4) {
                0 => continue,
                1 => V::tab(vec![("kind", V::str("fixed"))]),
                2 => {
                    let s = self.positive() * 0.1;
                    V::tab(vec![("kind", V::str("perturb")), ("sigma", V::Float(s))])
                }
                _ => {
                    let low = self.nice();
                    let high = low + self.positive();
                    V::tab(vec![
                        ("kind", V::str("uniform")),
                        ("low", V::Float(low)),
                        ("high", V::Float(high)),
                    ])
                }
            };
            e.set_key(name, draw);
        }
        e
    }

    /// Replaces the system by a random one of `family`, with a matching scheme and inputs.
    fn regenerate_system(&mut self, family: Family, mechanical: bool) {
        if family != Family::Variational {
            self.doc.remove_key("problem");
        }
        match family {
            Family::LinearPh => {
                let (system, m) = if mechanical {
                    self.mechanical_system()
                } else {
                    self.linear_ph_system()
                };
                self.doc.set_key("system", system);
                let inputs: Vec<V> = (0..m).map(|_| self.signal()).collect();
                self.doc.remove_key("input");
                if !inputs.is_empty() {
                    self.doc.set_key("input", V::Arr(inputs));
                }
                if self.family != Family::LinearPh {
                    self.collocation_scheme();
                }
            }
            Family::Contact => {
                let system = self.contact_system();
                self.doc.set_key("system", system);
                self.doc.remove_key("input");
                if self.family != Family::Contact {
                    self.contact_scheme();
                }
            }
            Family::PortHamiltonian => {
                let (system, m) = self.port_hamiltonian_system();
                self.doc.set_key("system", system);
                let inputs: Vec<V> = (0..m).map(|_| self.signal()).collect();
                self.doc.remove_key("input");
                if !inputs.is_empty() {
                    self.doc.set_key("input", V::Arr(inputs));
                }
                if self.family != Family::PortHamiltonian {
                    self.port_hamiltonian_scheme();
                }
            }
            Family::Variational => {
                let (system, problem) = self.variational_system();
                self.doc.set_key("system", system);
                self.doc.set_key("problem", problem);
                self.doc.remove_key("input");
                self.variational_scheme();
            }
        }
        if self.doc.get_key("ensemble").is_some() {
            let e = match family {
                Family::LinearPh => self.linear_ensemble(),
                Family::Contact => self.contact_ensemble(),
                Family::PortHamiltonian => self.port_hamiltonian_ensemble(),
                Family::Variational => self.variational_ensemble(),
            };
            self.doc.set_key("ensemble", e);
        }
        self.family = family;
    }

    fn valid_variation(&mut self) {
        match self.rng.random_range(0..7) {
            0 => self.note("valid-as-is", "the bounded example".into()),
            1 => {
                match self.family {
                    Family::LinearPh => self.collocation_scheme(),
                    Family::Contact => self.contact_scheme(),
                    Family::PortHamiltonian => self.port_hamiltonian_scheme(),
                    Family::Variational => self.variational_scheme(),
                }
                let scheme = self.doc.get_key("scheme").cloned().unwrap_or(V::table());
                self.note("scheme-variant", doc::inline_text(&scheme));
            }
            2 | 3 => {
                let family = if self.rng.random_bool(0.8) {
                    self.family
                } else {
                    self.pick(&[
                        Family::LinearPh,
                        Family::Contact,
                        Family::PortHamiltonian,
                        Family::Variational,
                    ])
                };
                let mechanical = self.rng.random_bool(0.4);
                self.regenerate_system(family, mechanical);
                let kind = self
                    .doc
                    .get(&[key("system"), key("kind")])
                    .map(doc::inline_text)
                    .unwrap_or_default();
                self.note("system-regen", format!("random {kind} system"));
            }
            4 => {
                match self.family {
                    Family::LinearPh => {
                        let m = match self.doc.get(&[key("system"), key("B"), Seg::Idx(0)]) {
                            Some(V::Arr(row)) => row.len(),
                            _ => 0,
                        };
                        let inputs: Vec<V> = (0..m).map(|_| self.signal()).collect();
                        if !inputs.is_empty() {
                            self.doc.set_key("input", V::Arr(inputs));
                        }
                    }
                    Family::Contact => {
                        let d = self.damping();
                        self.doc.set(&[key("system"), key("damping")], d);
                    }
                    Family::PortHamiltonian => {
                        // Half of the time an expression of the model instead.
                        if self.rng.random_bool(0.5) {
                            self.port_hamiltonian_expression();
                            return;
                        }
                        let m = match self.doc.get(&[key("system"), key("G"), Seg::Idx(0)]) {
                            Some(V::Arr(row)) => row.len(),
                            _ => 0,
                        };
                        let inputs: Vec<V> = (0..m).map(|_| self.signal()).collect();
                        if !inputs.is_empty() {
                            self.doc.set_key("input", V::Arr(inputs));
                        }
                    }
                    Family::Variational => {
                        // A new problem for a new Lagrangian.
                        self.regenerate_system(Family::Variational, false);
                        return;
                    }
                }
                self.note("signals", "random input signals or damping".into());
            }
            5 => {
                let e = match self.family {
                    Family::LinearPh => self.linear_ensemble(),
                    Family::Contact => self.contact_ensemble(),
                    Family::PortHamiltonian => self.port_hamiltonian_ensemble(),
                    Family::Variational => self.variational_ensemble(),
                };
                self.doc.set_key("ensemble", e);
                self.note("ensemble-regen", "random ensemble".into());
            }
            _ => {
                let h = self.pick(&[0.5, 0.25, 0.1, 0.05, 0.02, 0.001]);
                let steps = self.log_int(1, 300);
                self.set_steps(h, steps);
                self.note("h-variant", format!("h = {h}, {steps} steps"));
            }
        }
    }

    // ---- tree mutations ----

    /// A random path whose value satisfies `want`.
    fn random_path(&mut self, want: impl Fn(&V) -> bool) -> Option<Path> {
        let paths: Vec<Path> = self
            .doc
            .paths()
            .into_iter()
            .filter(|p| self.doc.get(p).is_some_and(&want))
            .collect();
        if paths.is_empty() {
            None
        } else {
            Some(self.pick(&paths))
        }
    }

    fn target(&mut self, path: &[Seg]) {
        let last_key = path.iter().rposition(|s| matches!(s, Seg::Key(_)));
        if let Some(i) = last_key {
            self.targets.push(doc::display(&path[..=i]));
        }
    }

    fn replace(&mut self, kind: &'static str, path: &Path, value: V) {
        let text = doc::inline_text(&value);
        let shown: String = text.chars().take(120).collect();
        self.doc.set(path, value);
        self.target(path);
        self.note(kind, format!("{} = {shown}", doc::display(path)));
    }

    pub(super) fn tree_mutation(&mut self) {
        let choice = self.weighted(&[
            (0, 4),
            (1, 2),
            (2, 3),
            (3, 2),
            (4, 2),
            (5, 2),
            (6, 3),
            (7, 2),
            (8, 3),
            (9, 2),
        ]);
        match choice {
            0 => {
                if let Some(path) = self.random_path(V::is_number) {
                    let v = self.extreme_value();
                    self.replace("extreme-number", &path, v);
                    return;
                }
            }
            1 => {
                if let Some(path) = self.random_path(V::is_number) {
                    let x = self.doc.get(&path).and_then(V::as_f64).unwrap_or(1.0);
                    let factor = 10f64.powi(self.rng.random_range(-30..=30))
                        * if self.rng.random_bool(0.3) { -1.0 } else { 1.0 };
                    self.replace("scale-number", &path, V::Float(x * factor));
                    return;
                }
            }
            2 => {
                if let Some(path) = self.random_path(|_| true) {
                    let current = self.doc.get(&path).cloned().unwrap();
                    let v = self.wrong_type_value(&current);
                    self.replace("wrong-type", &path, v);
                    return;
                }
            }
            3 => {
                if let Some(path) = self
                    .random_path(|v| matches!(v, V::Arr(items) if items.iter().all(V::is_number)))
                {
                    let V::Arr(mut items) = self.doc.get(&path).cloned().unwrap() else {
                        unreachable!()
                    };
                    match self.rng.random_range(0..5) {
                        0 => {
                            items.pop();
                        }
                        1 => items.push(items.first().cloned().unwrap_or(V::Float(0.0))),
                        2 => items.clear(),
                        3 => items.extend((0..1000).map(|i| V::Float(i as f64 * 1e-3))),
                        _ => items.truncate(1),
                    }
                    self.replace("vector-length", &path, V::Arr(items));
                    return;
                }
            }
            4 => {
                if let Some(path) = self.random_path(is_matrix) {
                    let V::Arr(mut rows) = self.doc.get(&path).cloned().unwrap() else {
                        unreachable!()
                    };
                    match self.rng.random_range(0..6) {
                        0 => {
                            rows.pop();
                        }
                        1 => rows.push(rows[0].clone()),
                        2 => {
                            let i = self.rng.random_range(0..rows.len());
                            if let V::Arr(r) = &mut rows[i] {
                                r.pop();
                            }
                        }
                        3 => {
                            let m = matrix_of(&V::Arr(rows.clone()));
                            let t: Vec<Vec<f64>> = (0..m.first().map_or(0, Vec::len))
                                .map(|j| m.iter().map(|r| r[j]).collect())
                                .collect();
                            rows = V::matrix(&t).into_arr();
                        }
                        4 => rows = vec![V::floats(&[1.0])],
                        _ => rows = vec![V::Arr(rows)],
                    }
                    self.replace("matrix-shape", &path, V::Arr(rows));
                    return;
                }
            }
            5 => {
                if let Some(path) = self.random_path(is_matrix) {
                    let mut m = matrix_of(self.doc.get(&path).unwrap());
                    let n = m.len();
                    let cols = m[0].len();
                    match self.rng.random_range(0..6) {
                        0 if n > 1 && cols > 1 => m[0][1] += 0.5,
                        1 => m[0][0] = 1.0 + m[0][0].abs(),
                        2 => m.iter_mut().flatten().for_each(|v| *v = -*v),
                        3 => m.iter_mut().flatten().for_each(|v| *v = 0.0),
                        4 => m[0][0] = self.pick(&[1e300, 1e-300, -1e300, 1e154]),
                        _ => {
                            for r in m.iter_mut() {
                                r[0] = 1.0;
                            }
                        }
                    }
                    self.replace("matrix-structure", &path, V::matrix(&m));
                    return;
                }
            }
            6 => {
                if let Some(path) = self.random_path(|_| true) {
                    self.doc.remove(&path);
                    self.target(&path);
                    self.note("missing-field", doc::display(&path));
                    return;
                }
            }
            7 => {
                if let Some(mut path) = self.random_path(|v| matches!(v, V::Tab(_))) {
                    if self.rng.random_bool(0.2) {
                        path.clear();
                    }
                    let name = self.pick(&UNKNOWN_KEYS);
                    let value = self.any_value();
                    let mut full = path.clone();
                    full.push(key(name));
                    if let Some(table) = self.doc.get_mut(&path) {
                        if let V::Tab(entries) = table {
                            entries.push((name.to_string(), value));
                        }
                        self.target(&full);
                        self.note("unknown-field", doc::display(&full));
                        return;
                    }
                }
            }
            8 => {
                if let Some(path) = self.random_path(|v| matches!(v, V::Str(_))) {
                    let name = if self.rng.random_bool(0.1) {
                        "x".repeat(self.log_int(100, 100_000) as usize)
                    } else {
                        self.pick(&NAMES).to_string()
                    };
                    self.replace("enum-name", &path, V::Str(name));
                    return;
                }
            }
            _ => {
                self.section_mutation();
                return;
            }
        }
        // Nothing of the wanted sort in this document: remove a section instead.
        self.section_mutation();
    }

    fn section_mutation(&mut self) {
        let sections = ["system", "scheme", "output", "input", "ensemble", "study"];
        let name = self.pick(&sections);
        match self.rng.random_range(0..5) {
            0 => {
                self.doc.remove_key(name);
                self.targets.push(name.to_string());
                self.note("section", format!("[{name}] removed"));
            }
            1 => {
                let v = self.any_value();
                self.doc.set_key(name, v);
                self.targets.push(name.to_string());
                self.note("section", format!("[{name}] replaced by a value"));
            }
            2 => {
                let current = self.doc.get_key(name).cloned().unwrap_or(V::table());
                self.doc
                    .set_key(name, V::Arr(vec![current.clone(), current]));
                self.targets.push(name.to_string());
                self.note("section", format!("[{name}] made an array of two tables"));
            }
            3 => {
                let study = V::tab(vec![
                    (
                        "schemes",
                        V::Arr(vec![V::tab(vec![
                            ("family", V::str("gauss")),
                            ("stages", V::Int(9)),
                        ])]),
                    ),
                    ("h", V::floats(&[0.5, -1.0, f64::NAN])),
                    ("fit_floor", V::Float(-1.0)),
                    ("fit_decades", V::Float(f64::INFINITY)),
                ]);
                self.doc.set_key("study", study);
                self.note("section", "[study] with bad values".into());
            }
            _ => {
                // An ensemble of the other family's keys (or of this one's).
                let e = if self.rng.random_bool(0.5) {
                    self.linear_ensemble()
                } else {
                    self.contact_ensemble()
                };
                self.doc.set_key("ensemble", e);
                self.note("section", "[ensemble] of either family".into());
            }
        }
    }

    // ---- text mutations ----

    pub(super) fn text_mutation(&mut self) {
        let text = doc::write_document(&self.doc);
        let mut bytes = text.clone().into_bytes();
        let kind = self.weighted(&[
            ("truncate", 3),
            ("dup-line", 2),
            ("dup-section", 1),
            ("byte-flip", 2),
            ("insert-junk", 2),
            ("random-bytes", 1),
            ("empty-file", 1),
            ("deep-nesting", 1),
            ("line-ends", 1),
            ("bom", 1),
            ("invalid-utf8", 1),
        ]);
        let what = match kind {
            "truncate" => {
                let at = self.rng.random_range(0..bytes.len());
                bytes.truncate(at);
                format!("cut at byte {at}")
            }
            "dup-line" => {
                let lines: Vec<&str> = text.lines().collect();
                let i = self.rng.random_range(0..lines.len());
                let mut out: Vec<&str> = lines.clone();
                out.insert(i, lines[i]);
                bytes = (out.join("\n") + "\n").into_bytes();
                format!("line {} twice: {:?}", i + 1, lines[i])
            }
            "dup-section" => {
                let headers: Vec<usize> = text.match_indices("\n[").map(|(i, _)| i + 1).collect();
                if let Some(&start) = headers.get(self.rng.random_range(0..headers.len().max(1))) {
                    let end = text[start + 1..]
                        .find("\n[")
                        .map_or(text.len(), |e| start + 1 + e + 1);
                    let section = text[start..end].to_string();
                    bytes = format!("{text}\n{section}").into_bytes();
                    format!(
                        "section repeated: {:?}",
                        section.lines().next().unwrap_or("")
                    )
                } else {
                    bytes.extend_from_slice(b"\n[system]\n");
                    "[system] header repeated".into()
                }
            }
            "byte-flip" => {
                let n = self.rng.random_range(1..=4);
                for _ in 0..n {
                    let i = self.rng.random_range(0..bytes.len());
                    bytes[i] = self.rng.random();
                }
                format!("{n} random byte(s)")
            }
            "insert-junk" => {
                let junk = self.pick(&[
                    "\"",
                    "[",
                    "]",
                    "{",
                    "}",
                    "=",
                    "\n[system]\n",
                    "'''",
                    "\"\"\"",
                    "\\u00",
                    "#",
                    "\r",
                    "\u{feff}",
                    ",",
                    "\n=\n",
                    "1",
                    ".",
                    "\t",
                    "\n[[input]]\n",
                    "x = 1\n",
                    "\nkind = \"contact\"\n",
                    "\u{0}",
                ]);
                let mut at = self.rng.random_range(0..=text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                bytes = format!("{}{junk}{}", &text[..at], &text[at..]).into_bytes();
                format!("{junk:?} inserted at byte {at}")
            }
            "random-bytes" => {
                let n = self.log_int(1, 4096) as usize;
                bytes = (0..n).map(|_| self.rng.random()).collect();
                format!("{n} random bytes")
            }
            "empty-file" => {
                bytes.clear();
                "empty file".into()
            }
            "deep-nesting" => {
                let depth = self.pick(&[64usize, 1000, 20_000, 200_000]);
                let nested = if self.rng.random_bool(0.5) {
                    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
                } else {
                    format!("{}1{}", "{a=".repeat(depth), "}".repeat(depth))
                };
                let field = self.pick(&["x0", "J", "h", "potential", "every"]);
                let section = if field == "every" {
                    "output"
                } else if field == "h" {
                    "scheme"
                } else {
                    "system"
                };
                self.doc.set(&[key(section), key(field)], V::Raw(nested));
                bytes = doc::write_document(&self.doc).into_bytes();
                format!("{section}.{field} nested {depth} deep")
            }
            "line-ends" => {
                let with = self.pick(&["\r\n", "\r", "\n\n\n", "\u{2028}"]);
                bytes = text.replace('\n', with).into_bytes();
                format!("line ends {with:?}")
            }
            "bom" => {
                bytes = format!("\u{feff}{text}").into_bytes();
                "UTF-8 byte order mark".into()
            }
            _ => {
                let at = self.rng.random_range(0..=bytes.len());
                let junk = self.pick(&[&[0xffu8][..], &[0xc3, 0x28], &[0xe2, 0x82], &[0x80]]);
                bytes.splice(at..at, junk.iter().copied());
                format!("invalid UTF-8 {junk:x?} at byte {at}")
            }
        };
        self.case.config = bytes;
        self.note(kind, what);
    }

    // ---- --set overrides ----

    fn push_set(&mut self, text: impl Into<OsString>) {
        self.case.sets.push(text.into());
    }

    /// `--set path=value` with `value` written inline; the shadow config follows it.
    pub(super) fn set_value(&mut self, path: &[Seg], value: V) {
        let text = format!("{}={}", doc::dotted(path), doc::inline_text(&value));
        if let V::Tab(entries) = &mut self.shadow {
            entries.push((doc::dotted(path), value));
        }
        self.push_set(text);
    }

    pub(super) fn set_mutation(&mut self) {
        match self.weighted(&[(0, 5), (1, 2), (2, 4), (3, 1), (4, 1), (5, 1)]) {
            0 => {
                let Some(path) = self.random_path(|_| true) else {
                    return self.set_mutation_fallback();
                };
                let current = self.doc.get(&path).cloned().unwrap();
                let value = match self.rng.random_range(0..3) {
                    0 => self.extreme_value(),
                    1 => self.wrong_type_value(&current),
                    _ => {
                        if current.is_number() {
                            V::Float(self.number())
                        } else {
                            self.any_value()
                        }
                    }
                };
                self.target(&path);
                let shown = format!("{}={}", doc::dotted(&path), doc::inline_text(&value));
                self.set_value(&path, value);
                self.note("set-existing", shown.chars().take(160).collect());
            }
            1 => {
                let Some(mut path) = self.random_path(|v| matches!(v, V::Tab(_))) else {
                    return self.set_mutation_fallback();
                };
                let name = self.pick(&UNKNOWN_KEYS[..7]);
                path.push(key(name));
                let value = self.any_value();
                self.target(&path);
                let shown = format!("{}={}", doc::dotted(&path), doc::inline_text(&value));
                self.set_value(&path, value);
                self.note("set-new-key", shown);
            }
            2 => self.set_mutation_fallback(),
            3 => {
                let segments = self.pick(&[100usize, 5000, 30_000]);
                let text = format!("{}=1", vec!["a"; segments].join("."));
                self.push_set(text);
                self.note("set-deep-key", format!("a key of {segments} segments"));
            }
            4 => {
                let depth = self.pick(&[100usize, 5000, 50_000]);
                let text = format!("system.x0={}{}", "[".repeat(depth), "]".repeat(depth));
                self.push_set(text);
                self.note("set-deep-value", format!("system.x0 nested {depth} deep"));
            }
            _ => {
                // A bad value, then a good one for the same key: the last one wins.
                let Some(path) = self.random_path(V::is_number) else {
                    return self.set_mutation_fallback();
                };
                let good = self.doc.get(&path).cloned().unwrap();
                self.push_set(format!("{}=[nan, \"x\"", doc::dotted(&path)));
                self.set_value(&path, good);
                self.note("set-twice", format!("{} bad then good", doc::dotted(&path)));
            }
        }
    }

    fn set_mutation_fallback(&mut self) {
        let text = self.pick(&ODD_SETS);
        self.push_set(text);
        self.note("set-malformed", format!("{text:?}"));
    }

    // ---- CSV inputs ----

    fn csv_text(&mut self, t_end: f64) -> (Vec<u8>, &'static str) {
        let rows = self.log_int(2, 60) as usize;
        let start = if self.rng.random_bool(0.8) {
            0.0
        } else {
            self.rng.random_range(-1.0..t_end)
        };
        let end = t_end * self.pick(&[1.0, 1.0, 1.5, 0.5]);
        let mut times: Vec<f64> = (0..rows)
            .map(|i| start + (end - start) * i as f64 / (rows - 1) as f64)
            .collect();
        let mut values: Vec<String> = (0..rows).map(|_| format!("{}", self.nice())).collect();
        let header = self.rng.random_bool(0.5);
        let kind = self.weighted(&[
            ("csv-valid", 6),
            ("csv-junk-row", 1),
            ("csv-missing-column", 1),
            ("csv-nonfinite", 1),
            ("csv-unsorted", 1),
            ("csv-empty", 1),
            ("csv-header-only", 1),
            ("csv-one-row", 1),
            ("csv-random-bytes", 1),
            ("csv-huge-values", 1),
            ("csv-extra-columns", 1),
            ("csv-odd-format", 1),
        ]);
        let mut lines: Vec<String> = Vec::new();
        if header {
            lines.push("t,u".into());
        }
        match kind {
            "csv-junk-row" => {
                let i = self.rng.random_range(0..rows);
                values[i] = self
                    .pick(&["abc", "", "1.0.0", "0x10", "--", "1e", "\"\""])
                    .into();
            }
            "csv-nonfinite" => {
                let i = self.rng.random_range(0..rows);
                values[i] = self
                    .pick(&["NaN", "nan", "inf", "-inf", "1e999", "Infinity"])
                    .into();
            }
            "csv-unsorted" => {
                let i = self.rng.random_range(0..rows - 1);
                if self.rng.random_bool(0.5) {
                    times.swap(i, i + 1);
                } else {
                    times[i + 1] = times[i];
                }
            }
            "csv-huge-values" => {
                for v in values.iter_mut() {
                    *v = self
                        .pick(&[
                            "1.7976931348623157e308",
                            "-1.7976931348623157e308",
                            "1e300",
                            "5e-324",
                        ])
                        .into();
                }
            }
            _ => {}
        }
        for i in 0..rows {
            let line = match kind {
                "csv-missing-column" if i == rows / 2 => format!("{}", times[i]),
                "csv-extra-columns" if i == rows / 2 => format!("{},{},7,8", times[i], values[i]),
                _ => format!("{},{}", times[i], values[i]),
            };
            lines.push(line);
        }
        let mut text = lines.join("\n") + "\n";
        let bytes = match kind {
            "csv-empty" => Vec::new(),
            "csv-header-only" => b"t,u\n".to_vec(),
            "csv-one-row" => format!("0,{}\n", values[0]).into_bytes(),
            "csv-random-bytes" => {
                let n = self.log_int(1, 2000) as usize;
                (0..n).map(|_| self.rng.random()).collect()
            }
            "csv-odd-format" => {
                match self.rng.random_range(0..6) {
                    0 => text = text.replace('\n', "\r\n"),
                    1 => text = format!("\u{feff}{text}"),
                    2 => text = format!("# comment\n{text}# tail\n"),
                    3 => text = text.replace(',', " , "),
                    4 => text = text.replace(',', ";"),
                    _ => {
                        text = text
                            .lines()
                            .map(|l| {
                                l.split(',')
                                    .map(|c| format!("\"{c}\""))
                                    .collect::<Vec<_>>()
                                    .join(",")
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    }
                }
                text.into_bytes()
            }
            _ => text.into_bytes(),
        };
        (bytes, kind)
    }

    fn csv_case(&mut self) {
        let t_end = self.t_end();
        let (bytes, kind) = self.csv_text(t_end);
        let file = "signal.csv";
        self.case.files.push((file.to_string(), bytes));
        let path = match self.weighted(&[(0, 8), (1, 1), (2, 1), (3, 1), (4, 1)]) {
            0 => V::str(file),
            1 => V::str("missing.csv"),
            2 => V::str("."),
            3 => V::str("/dev/null"),
            _ => V::str(""),
        };
        let mut signal = V::tab(vec![("kind", V::str("csv")), ("path", path.clone())]);
        if self.rng.random_bool(0.5) {
            let column = self.pick(&[
                V::Int(1),
                V::Int(0),
                V::Int(2),
                V::Int(-1),
                V::Int(4294967296),
                V::str("u"),
                V::str("t"),
                V::str("nope"),
                V::str(""),
                V::Float(1.0),
            ]);
            signal.set_key("column", column);
        }
        if self.rng.random_bool(0.6) {
            let outside = self.pick(&["error", "hold", "zero", "wrap", "Hold"]);
            signal.set_key("outside", V::str(outside));
        }
        let place = match self.family {
            Family::LinearPh | Family::PortHamiltonian | Family::Variational => {
                let inputs = match self.doc.get_key("input") {
                    Some(V::Arr(items)) if !items.is_empty() => items.len(),
                    _ => 0,
                };
                if inputs == 0 {
                    self.doc.set_key("input", V::Arr(vec![signal.clone()]));
                    "input[0] (added)".to_string()
                } else {
                    let i = self.rng.random_range(0..inputs);
                    self.doc.set(&[key("input"), Seg::Idx(i)], signal.clone());
                    format!("input[{i}]")
                }
            }
            Family::Contact => {
                if self.rng.random_bool(0.5) {
                    let alpha = self.nice();
                    let damping = V::tab(vec![
                        ("kind", V::str("signal")),
                        ("alpha", V::Float(alpha)),
                        ("signal", signal.clone()),
                    ]);
                    self.doc.set(&[key("system"), key("damping")], damping);
                    "system.damping.signal".to_string()
                } else {
                    let n = match self.doc.get(&[key("system"), key("x0")]) {
                        Some(V::Arr(items)) => items.len(),
                        _ => 1,
                    };
                    let amplitude = self.vector(n);
                    let term = V::tab(vec![
                        ("kind", V::str("forcing")),
                        ("amplitude", V::floats(&amplitude)),
                        ("signal", signal.clone()),
                    ]);
                    let mut terms = match self.doc.get(&[key("system"), key("potential")]) {
                        Some(V::Arr(items)) => items.clone(),
                        _ => Vec::new(),
                    };
                    terms.retain(|t| t.get_key("kind") != Some(&V::str("forcing")));
                    terms.push(term);
                    self.doc
                        .set(&[key("system"), key("potential")], V::Arr(terms));
                    "system.potential forcing signal".to_string()
                }
            }
        };
        self.note(kind, format!("{place}: {}", doc::inline_text(&signal)));
    }

    // ---- overflow-prone valid parameters ----

    fn nonfinite_case(&mut self) {
        // Fixed extremes, or any magnitude where squares, sums or products start to overflow.
        let huge = if self.rng.random_bool(0.5) {
            self.pick(&[
                1.7976931348623157e308,
                1e300,
                1e200,
                1.3407807929942596e154,
                1e20,
            ])
        } else {
            10f64.powf(self.rng.random_range(100.0..308.0))
        };
        let what = match self.family {
            Family::PortHamiltonian => self.port_hamiltonian_nonfinite(huge),
            Family::Variational => self.variational_nonfinite(huge),
            Family::LinearPh => match self.rng.random_range(0..5) {
                0 => {
                    let signal = V::tab(vec![
                        ("kind", V::str("constant")),
                        ("value", V::Float(huge)),
                    ]);
                    let m = match self.doc.get(&[key("system"), key("B"), Seg::Idx(0)]) {
                        Some(V::Arr(row)) => row.len(),
                        _ => 1,
                    };
                    self.doc.set_key("input", V::Arr(vec![signal; m.max(1)]));
                    format!("constant inputs {huge:e}")
                }
                1 => {
                    let n = match self.doc.get(&[key("system"), key("x0")]) {
                        Some(V::Arr(items)) => items.len(),
                        _ => 2,
                    };
                    self.doc
                        .set(&[key("system"), key("x0")], V::floats(&vec![huge; n]));
                    format!("x0 entries {huge:e}")
                }
                2 => {
                    let h = self.pick(&[10.0, 1e3, 1e6, 1e100]);
                    let steps = self.log_int(1, 100);
                    self.set_steps(h, steps);
                    format!("h = {h:e}, {steps} steps")
                }
                3 => {
                    if let Some(path) = self.random_path(is_matrix) {
                        let mut m = matrix_of(self.doc.get(&path).unwrap());
                        m.iter_mut().flatten().for_each(|v| *v *= huge);
                        self.doc.set(&path, V::matrix(&m));
                        format!("{} scaled by {huge:e}", doc::display(&path))
                    } else {
                        "no matrix".into()
                    }
                }
                _ => {
                    let e = V::tab(vec![
                        ("members", V::Int(3)),
                        (
                            "x0",
                            V::tab(vec![("kind", V::str("perturb")), ("sigma", V::Float(huge))]),
                        ),
                        (
                            "B",
                            V::tab(vec![("kind", V::str("random")), ("scale", V::Float(huge))]),
                        ),
                    ]);
                    self.doc.set_key("ensemble", e);
                    format!("ensemble draws of scale {huge:e}")
                }
            },
            Family::Contact => match self.rng.random_range(0..7) {
                6 => {
                    // A potential that overflows at the start or on the way (x⁶ softening
                    // runs off in finite time), or a damping rate that grows past f64.
                    let (b, c) = self.pick(&[
                        ("exp(x^2)", "0.1"),
                        ("-x^6", "0.1"),
                        ("x^2/2", "exp(exp(t))"),
                        ("x^2/2", "-1e300*t"),
                    ]);
                    self.doc.set(
                        &[key("system"), key("potential")],
                        V::Arr(vec![V::tab(vec![
                            ("kind", V::str("expression")),
                            ("B", V::str(b)),
                        ])]),
                    );
                    self.doc.set(
                        &[key("system"), key("damping")],
                        V::tab(vec![("kind", V::str("expression")), ("C", V::str(c))]),
                    );
                    let x0 = self.pick(&[1.5, 30.0, huge]);
                    self.doc.set(&[key("system"), key("x0")], V::floats(&[x0]));
                    self.doc.set(&[key("system"), key("p0")], V::floats(&[1.0]));
                    self.doc.remove(&[key("system"), key("kinetic")]);
                    self.doc.remove_key("ensemble");
                    self.set_steps(0.1, 400);
                    format!("expression B = {b}, C = {c}, x0 = {x0:e}")
                }
                0 => {
                    let beta = -self.pick(&[1.0, 10.0, 1e3]);
                    self.doc.set(
                        &[key("system"), key("potential")],
                        V::Arr(vec![V::tab(vec![
                            ("kind", V::str("quartic")),
                            ("beta", V::Float(beta)),
                        ])]),
                    );
                    self.doc.set(&[key("system"), key("p0")], V::floats(&[3.0]));
                    self.doc.set(&[key("system"), key("x0")], V::floats(&[1.5]));
                    self.doc.remove(&[key("system"), key("kinetic")]);
                    self.doc.remove_key("ensemble");
                    self.set_steps(0.1, 400);
                    format!("softening quartic beta = {beta}")
                }
                1 => {
                    let alpha = -self.pick(&[10.0, 100.0, 1e6]);
                    self.doc.set(
                        &[key("system"), key("damping")],
                        V::tab(vec![
                            ("kind", V::str("constant")),
                            ("alpha", V::Float(alpha)),
                        ]),
                    );
                    self.doc.remove_key("ensemble");
                    format!("anti-damping alpha = {alpha}")
                }
                2 => {
                    let n = match self.doc.get(&[key("system"), key("x0")]) {
                        Some(V::Arr(items)) => items.len(),
                        _ => 1,
                    };
                    let field = self.pick(&["x0", "p0"]);
                    self.doc
                        .set(&[key("system"), key(field)], V::floats(&vec![huge; n]));
                    format!("{field} entries {huge:e}")
                }
                3 => {
                    self.doc.set(
                        &[key("system"), key("potential")],
                        V::Arr(vec![V::tab(vec![
                            ("kind", V::str("kepler")),
                            ("gamma", V::Float(1.0)),
                        ])]),
                    );
                    self.doc.set(&[key("system"), key("x0")], V::floats(&[0.0]));
                    self.doc.set(&[key("system"), key("p0")], V::floats(&[0.0]));
                    self.doc.remove(&[key("system"), key("kinetic")]);
                    self.doc.remove_key("ensemble");
                    "kepler at the origin".into()
                }
                4 => {
                    let kind = self.pick(&["quartic", "pendulum"]);
                    let param = if kind == "quartic" { "beta" } else { "omega" };
                    self.doc.set(
                        &[key("system"), key("potential")],
                        V::Arr(vec![V::tab(vec![
                            ("kind", V::str(kind)),
                            (param, V::Float(huge)),
                        ])]),
                    );
                    self.doc.remove_key("ensemble");
                    format!("{kind} {param} = {huge:e}")
                }
                _ => {
                    let e = V::tab(vec![
                        ("members", V::Int(3)),
                        (
                            "x0",
                            V::tab(vec![
                                ("kind", V::str("uniform")),
                                ("low", V::Float(-huge)),
                                ("high", V::Float(huge)),
                            ]),
                        ),
                        (
                            "p0",
                            V::tab(vec![("kind", V::str("perturb")), ("sigma", V::Float(huge))]),
                        ),
                    ]);
                    self.doc.set_key("ensemble", e);
                    format!("ensemble draws of scale {huge:e}")
                }
            },
        };
        self.note("overflow", what);
    }

    // ---- output locations ----

    pub(super) fn out_case(&mut self) {
        let setup = self.pick(&[
            OutSetup::EmptyDir,
            OutSetup::PreviousOutput,
            OutSetup::ForeignDir,
            OutSetup::ExistingFile,
            OutSetup::InsideFile,
            OutSetup::MissingParents,
            OutSetup::LongName,
            OutSetup::Empty,
        ]);
        self.case.out = setup;
        self.note("out", format!("{setup:?}"));
    }

    // ---- command lines ----

    fn cli_case(&mut self) {
        let kind = self.pick(&[
            "missing-config",
            "config-is-directory",
            "config-is-dev-null",
            "unknown-flag",
            "bad-backend",
            "f32-on-cpu",
            "adapter-on-cpu",
            "set-without-value",
            "set-invalid-utf8",
            "no-out",
            "two-configs",
            "keep-nonfinite-value",
        ]);
        let args: &[&str] = match kind {
            "missing-config" => {
                self.case.config_arg = ConfigArg::Missing;
                &[]
            }
            "config-is-directory" => {
                self.case.config_arg = ConfigArg::Directory;
                &[]
            }
            "config-is-dev-null" => {
                self.case.config_arg = ConfigArg::DevNull;
                &[]
            }
            "unknown-flag" => &["--bogus"],
            "bad-backend" => &["--backend", "quantum"],
            "f32-on-cpu" => &["--precision", "f32"],
            "adapter-on-cpu" => &["--adapter", "no-such-adapter"],
            "set-without-value" => &["--set"],
            "no-out" => {
                self.case.out = OutSetup::Omitted;
                &[]
            }
            "two-configs" => &["other.toml"],
            "keep-nonfinite-value" => &["--keep-nonfinite=yes"],
            _ => {
                use std::os::unix::ffi::OsStringExt;
                self.case
                    .sets
                    .push(OsString::from_vec(b"system.x0=[\xff]".to_vec()));
                &[]
            }
        };
        self.case.extra_args.extend(args.iter().map(OsString::from));
        self.note("cli", kind.to_string());
    }

    // ---- deliberately huge runs ----

    fn size_case(&mut self) {
        let via_set = self.rng.random_bool(0.3);
        let put = |g: &mut Gen, path: Path, value: V| {
            if via_set {
                g.set_value(&path, value);
            } else {
                g.doc.set(&path, value);
            }
        };
        let kind = self.pick(&[
            "size-members",
            "size-steps",
            "size-every-1",
            "size-wide",
            "size-both",
        ]);
        let what = match kind {
            "size-members" => {
                let members = self.pick(&[
                    1_000_000_000i64,
                    4294967295,
                    4294967296,
                    100_000_000,
                    10_000_000,
                    1 << 31,
                ]);
                put(self, vec![key("ensemble"), key("members")], V::Int(members));
                format!("ensemble.members = {members}")
            }
            "size-steps" => {
                let steps = self.pick(&[1e9, 4294967295.0, 4294967296.0, 1e8, 3e7, 1e12]);
                let h = 1.0 / steps;
                put(self, vec![key("scheme"), key("h")], V::Float(h));
                put(self, vec![key("scheme"), key("t_end")], V::Float(1.0));
                format!("h = {h:e}, t_end = 1 ({steps:e} steps)")
            }
            "size-every-1" => {
                let steps = self.pick(&[1e7, 1e8, 1e9]);
                let h = 1.0 / steps;
                put(self, vec![key("scheme"), key("h")], V::Float(h));
                put(self, vec![key("scheme"), key("t_end")], V::Float(1.0));
                put(self, vec![key("output"), key("every")], V::Int(1));
                format!("output.every = 1 with {steps:e} steps")
            }
            "size-wide" => {
                let n = self.pick(&[100_000usize, 1_000_000]);
                let system = V::tab(vec![
                    ("kind", V::str("contact")),
                    ("x0", V::floats(&vec![0.1; n])),
                    ("p0", V::floats(&vec![0.0; n])),
                    (
                        "potential",
                        V::Arr(vec![V::tab(vec![
                            ("kind", V::str("quartic")),
                            ("beta", V::Float(1.0)),
                        ])]),
                    ),
                ]);
                self.doc.set_key("system", system);
                self.doc.remove_key("input");
                self.doc.remove_key("ensemble");
                self.doc.set_key(
                    "scheme",
                    V::tab(vec![
                        ("family", V::str("splitting")),
                        ("composition", V::str("strang")),
                        ("h", V::Float(0.01)),
                        ("t_end", V::Float(100.0)),
                    ]),
                );
                self.doc
                    .set_key("ensemble", V::tab(vec![("members", V::Int(1000))]));
                format!("contact system with n = {n}, 1000 members, 10⁴ steps")
            }
            _ => {
                put(self, vec![key("ensemble"), key("members")], V::Int(100_000));
                let h = self.h();
                put(self, vec![key("scheme"), key("t_end")], V::Float(h * 1e5));
                "10⁵ members × 10⁵ steps".to_string()
            }
        };
        self.note(
            kind,
            format!("{what}{}", if via_set { " (by --set)" } else { "" }),
        );
    }
}

trait IntoArr {
    fn into_arr(self) -> Vec<V>;
}

impl IntoArr for V {
    fn into_arr(self) -> Vec<V> {
        match self {
            V::Arr(items) => items,
            other => vec![other],
        }
    }
}

/// A non-empty array of non-empty rows of numbers of equal length.
fn is_matrix(v: &V) -> bool {
    match v {
        V::Arr(rows) if !rows.is_empty() => {
            let width = match &rows[0] {
                V::Arr(r) if !r.is_empty() => r.len(),
                _ => return false,
            };
            rows.iter().all(|r| {
                matches!(r, V::Arr(items) if items.len() == width && items.iter().all(V::is_number))
            })
        }
        _ => false,
    }
}

fn matrix_of(v: &V) -> Vec<Vec<f64>> {
    match v {
        V::Arr(rows) => rows
            .iter()
            .map(|r| match r {
                V::Arr(items) => items.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect(),
                _ => Vec::new(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The number a value reads as in TOML, verbatim text included (`1_000_000`, `0o777`).
fn number_of(v: &V) -> Option<f64> {
    match v {
        V::Raw(text) => {
            let t = text.replace('_', "");
            let (sign, t) = match t.strip_prefix('-') {
                Some(rest) => (-1.0, rest.to_string()),
                None => (1.0, t.strip_prefix('+').unwrap_or(&t).to_string()),
            };
            let radix = [("0x", 16), ("0o", 8), ("0b", 2)]
                .iter()
                .find_map(|(p, r)| t.strip_prefix(p).map(|digits| (digits.to_string(), *r)));
            match radix {
                Some((digits, r)) => u64::from_str_radix(&digits, r)
                    .ok()
                    .map(|n| sign * n as f64),
                None => t.parse::<f64>().ok().map(|x| sign * x),
            }
        }
        other => other.as_f64(),
    }
}

/// Whether the run the config describes may be too big to finish well within the limit:
/// its member-steps, recorded values or state size (a case this says is small and that
/// runs past the limit hangs).
pub fn is_large(doc: &V) -> bool {
    let field = |section: &str, name: &str| doc.get(&[key(section), key(name)]).and_then(number_of);
    let members = field("ensemble", "members")
        .filter(|m| *m >= 1.0)
        .unwrap_or(1.0);
    let steps = match (field("scheme", "h"), field("scheme", "t_end")) {
        (Some(h), Some(t)) if h > 0.0 && t > 0.0 && (t / h).is_finite() => (t / h).round(),
        _ => 0.0,
    };
    let every = field("output", "every")
        .filter(|e| *e >= 1.0)
        .unwrap_or(1.0);
    let width = ["x0", "q0"]
        .iter()
        .filter_map(|k| match doc.get(&[key("system"), key(k)]) {
            Some(V::Arr(items)) => Some(items.len() as f64),
            _ => None,
        })
        .fold(1.0_f64, f64::max);
    let member_steps = members * steps;
    let recorded = members * (steps / every + 2.0) * (2.0 * width + 1.0);
    // gradient and identify: dense work on the model (stage solves, structure checks) grows
    // as n³, so a model of a few hundred states may take tens of seconds, and so may 10⁵
    // candidates.
    let path = |keys: &[&str]| {
        let keys: Vec<_> = keys.iter().map(|k| key(k)).collect();
        doc.get(&keys).and_then(number_of)
    };
    let model_states = [
        path(&["data", "reference", "cells"]).map(|c| 2.0 * c),
        path(&["data", "reference", "states"]),
        path(&["candidate", "states"]),
        path(&["model", "order"]),
    ]
    .into_iter()
    .flatten()
    .fold(0.0_f64, f64::max);
    let candidates = [
        path(&["monte_carlo", "candidates"]),
        path(&["candidates", "members"]),
    ]
    .into_iter()
    .flatten()
    .fold(0.0_f64, f64::max);
    // The slowest family (spin-orbit under yoshida-6a) manages ~10⁵ member-steps/s on one
    // busy core: beyond these a run may legitimately take seconds.
    members > 2e4
        || steps > 2e5
        || member_steps > 2e5
        || member_steps * width > 2e6
        || recorded > 5e6
        || width > 1e4
        || model_states >= 200.0
        || candidates > 1e5
}
