//! `harbor config keys|init`: the listed keys cover every key the examples use, each with a
//! meaning; every starter config runs; the kinds match the kinds the parser knows.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harbor::io::Config;
use harbor::io::config_keys::ConfigKind;
use harbor::io::gradient_spec::GradientConfig;
use harbor::io::identify_spec::IdentifyConfig;

fn harbor(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harbor"))
        .args(args)
        .output()
        .expect("harbor runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The kind of a config: its `[system] kind`, or the section only gradient problems
/// (`[candidate]`) or identify configs (`[model]`) have.
fn kind_of(table: &toml::Table) -> ConfigKind {
    if let Some(kind) = table
        .get("system")
        .and_then(|s| s.get("kind"))
        .and_then(toml::Value::as_str)
    {
        return ConfigKind::by_name(kind).expect("a known system kind");
    }
    if table.contains_key("candidate") {
        ConfigKind::Gradient
    } else if table.contains_key("model") {
        ConfigKind::Identify
    } else {
        panic!("neither a simulate, gradient nor identify config")
    }
}

/// Every dotted key path in `table`, arrays of tables marked `[]`.
fn key_paths(table: &toml::Table, prefix: &str, found: &mut BTreeSet<String>) {
    for (key, value) in table {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        found.insert(path.clone());
        match value {
            toml::Value::Table(inner) => key_paths(inner, &path, found),
            toml::Value::Array(items) => {
                for item in items {
                    if let toml::Value::Table(inner) = item {
                        key_paths(inner, &format!("{path}[]"), found);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The starter with its optional lines (`# [section]`, `# key = …`) switched on.
fn uncommented(starter: &str) -> String {
    starter
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest) if is_setting(rest) => rest,
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_setting(line: &str) -> bool {
    let key: String = line
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    line.starts_with('[') || (!key.is_empty() && line[key.len()..].starts_with(" = "))
}

fn examples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files = vec![];
    for dir in [root.clone(), root.join("starters")] {
        for entry in std::fs::read_dir(&dir).expect("examples/ exists") {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_key_of_every_example_is_listed_for_its_kind() {
    let files = examples();
    assert!(files.len() >= 10, "examples found: {files:?}");
    for path in files {
        let source = std::fs::read_to_string(&path).unwrap();
        let is_starter = path.parent().is_some_and(|p| p.ends_with("starters"));
        let mut texts = vec![source.clone()];
        if is_starter {
            texts.push(uncommented(&source));
        }
        for text in texts {
            let table: toml::Table = text.parse().unwrap();
            let kind = kind_of(&table);
            let listed: BTreeSet<String> = kind.keys().into_iter().map(|k| k.path).collect();
            let mut used = BTreeSet::new();
            key_paths(&table, "", &mut used);
            // A listed `<name>` segment stands for any key of a table the user names.
            let matches = |used: &str, listed: &str| {
                let (u, l): (Vec<&str>, Vec<&str>) =
                    (used.split('.').collect(), listed.split('.').collect());
                u.len() == l.len() && u.iter().zip(&l).all(|(u, l)| u == l || *l == "<name>")
            };
            let missing: Vec<&String> = used
                .iter()
                .filter(|u| !listed.iter().any(|l| matches(u, l)))
                .collect();
            assert!(
                missing.is_empty(),
                "{}: keys not listed by `harbor config keys {}`: {missing:?}",
                path.display(),
                kind.name()
            );
        }
    }
}

#[test]
fn every_key_has_a_type_and_a_meaning() {
    for kind in ConfigKind::all() {
        let keys = kind.keys();
        assert!(keys.len() > 10, "{}: {} keys", kind.name(), keys.len());
        for key in keys {
            assert!(
                !key.meaning.is_empty() && !key.type_name.is_empty() && key.type_name != "any",
                "{}: {key:?} lacks a meaning or a type",
                kind.name()
            );
        }
    }
}

#[test]
fn the_keys_table_shows_type_default_and_meaning() {
    let output = harbor(&["config", "keys", "linear-ph"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let table = text(&output.stdout);
    let row = |key: &str| {
        table
            .lines()
            .find(|line| line.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no row for {key} in\n{table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(row("output.every").starts_with("output.every integer ≥ 0 1 Record"));
    assert!(row("system.J").starts_with("system.J [[number]] required Interconnection"));
    assert!(row("system.R").starts_with("system.R [[number]] — Dissipation"));
    assert!(row("study.fit_floor").starts_with("study.fit_floor number 1e-13"));
    let amplitude = table
        .lines()
        .find(|l| l.starts_with("input[].amplitude") && l.contains("(kind = sine)"))
        .unwrap_or_else(|| panic!("no sine amplitude in\n{table}"));
    assert!(amplitude.contains(" 1.0 "), "{amplitude}");

    let contact = text(&harbor(&["config", "keys", "contact"]).stdout);
    assert!(contact.contains("ensemble.alpha.low"), "{contact}");
    for key in ["system.potential[].B", "system.damping.C"] {
        let row = contact
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no row for {key} in\n{contact}"));
        assert!(
            row.contains("string") && row.contains("(kind = expression)"),
            "{row}"
        );
    }
    assert!(
        !contact.contains("input[]"),
        "contact configs take no [[input]]"
    );

    let json = harbor(&["config", "keys", "identify", "--json"]);
    let schema: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(
        schema["properties"]["optimizer"]["$ref"],
        "#/$defs/CgSettings"
    );
    assert_eq!(
        schema["$defs"]["CgSettings"]["properties"]["max_iterations"]["default"],
        100
    );
}

#[test]
fn an_unknown_kind_is_refused_with_the_kinds() {
    let output = harbor(&["config", "keys", "simulate"]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    for name in ConfigKind::names() {
        assert!(stderr.contains(name), "{name} missing from: {stderr}");
    }
    let error = ConfigKind::by_name("linear_ph").unwrap_err().to_string();
    assert_eq!(
        error,
        "kind: unknown config kind \"linear_ph\"; expected one of linear-ph, mechanical, contact, port-hamiltonian, variational, gradient, identify"
    );
}

/// The names after "expected" in a parser's unknown-kind error ("a, b or c").
fn expected_names(error: &str) -> Vec<String> {
    let list = error.rsplit("expected ").next().unwrap();
    list.split(", ")
        .flat_map(|part| part.split(" or "))
        .map(|name| name.trim().to_string())
        .collect()
}

#[test]
fn the_kinds_listed_are_the_kinds_the_parser_knows() {
    let config = "[system]\nkind = \"bogus\"\n[scheme]\nfamily = \"gauss\"\nh = 1.0\nt_end = 1.0\n";
    let error = Config::from_str_with(config, &[], "test")
        .unwrap_err()
        .to_string();
    let system_kinds = expected_names(&error);
    let simulate: Vec<&str> = ConfigKind::all()
        .into_iter()
        .filter(|k| k.command() == "simulate")
        .map(ConfigKind::name)
        .collect();
    assert_eq!(system_kinds, simulate, "from: {error}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gradient.toml");
    let starter = ConfigKind::Gradient.starter().replace(
        "[candidate]                    # the model whose cost and gradient are computed\nkind = \"random\"",
        "[candidate]\nkind = \"bogus\"",
    );
    std::fs::write(&path, starter).unwrap();
    let error = GradientConfig::load(&path, &[])
        .and_then(|c| c.problem(&harbor::plan::MemoryBudget::default()))
        .err()
        .expect("an unknown candidate kind fails")
        .to_string();
    let model_kinds = expected_names(&error);
    let listed: Vec<String> = ConfigKind::Gradient
        .keys()
        .into_iter()
        .filter(|k| k.path == "candidate.kind")
        .map(|k| k.type_name.trim_matches('"').to_string())
        .collect();
    assert_eq!(model_kinds, listed, "from: {error}");
}

#[test]
fn every_starter_is_written_by_init_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    for kind in ConfigKind::all() {
        let printed = harbor(&["config", "init", kind.name()]);
        assert!(printed.status.success(), "{}", text(&printed.stderr));
        assert_eq!(text(&printed.stdout), kind.starter());

        let file = dir.path().join(format!("{}.toml", kind.name()));
        let file_arg = file.to_str().unwrap();
        let written = harbor(&["config", "init", kind.name(), "--out", file_arg]);
        assert!(written.status.success(), "{}", text(&written.stderr));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), kind.starter());

        let out = dir.path().join(format!("{}-run", kind.name()));
        let run = harbor(&[
            kind.command(),
            file_arg,
            "--out",
            out.to_str().unwrap(),
            "--backend",
            "cpu",
        ]);
        assert!(
            run.status.success(),
            "harbor {} of the {} starter failed: {}",
            kind.command(),
            kind.name(),
            text(&run.stderr)
        );
    }
}

#[test]
fn every_starter_with_its_optional_lines_on_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    for kind in ConfigKind::all() {
        let full = uncommented(kind.starter());
        assert_ne!(full, kind.starter(), "{}: no optional lines", kind.name());
        let path = dir.path().join(format!("{}.toml", kind.name()));
        std::fs::write(&path, &full).unwrap();
        let checked = match kind.command() {
            "simulate" => Config::load(&path, &[]).and_then(|c| c.run_plan().map(|_| ())),
            "gradient" => GradientConfig::load(&path, &[]).and_then(|c| {
                c.problem(&harbor::plan::MemoryBudget::default())
                    .map(|_| ())
            }),
            _ => IdentifyConfig::load(&path, &[]).and_then(|c| {
                c.problem(&harbor::plan::MemoryBudget::default())
                    .map(|_| ())
            }),
        };
        if let Err(e) = checked {
            panic!(
                "{} starter with its optional lines on:\n{full}\n{e}",
                kind.name()
            );
        }
    }
}

#[test]
fn init_never_replaces_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    std::fs::write(&file, "# mine\n").unwrap();
    let output = harbor(&["config", "init", "contact", "--out", file.to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("--out: ") && text(&output.stderr).contains("exists"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "# mine\n");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "a temporary file was left behind");
}
