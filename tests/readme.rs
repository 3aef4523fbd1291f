//! The README against what it describes: the Rust version and licence that `Cargo.toml`
//! declares, its contents list against its headings, the paths it names, and the output
//! it shows for the deterministic commands (`tableau`, `splitting`, `study energy-order`,
//! a refused `simulate`) against what the binary prints today.

use std::io::Read;
use std::path::Path;
use std::process::Command;

/// A file of the repository as text.
fn repository_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn readme() -> String {
    repository_file("README.md")
}

fn cargo_manifest() -> toml::Table {
    repository_file("Cargo.toml").parse().unwrap()
}

/// The README's lines outside fenced code blocks, with their line numbers (1-based).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut in_fence = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// The anchor GitHub gives a heading: lower case, characters other than letters, digits,
/// `-`, `_` and spaces dropped, spaces turned into `-`.
fn github_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// (level, text) of every Markdown heading outside code blocks.
fn headings(text: &str) -> Vec<(usize, String)> {
    prose_lines(text)
        .into_iter()
        .filter_map(|(_, line)| {
            let level = line.chars().take_while(|&c| c == '#').count();
            let rest = line.get(level..)?;
            (level > 0 && rest.starts_with(' ')).then(|| (level, rest.trim().to_string()))
        })
        .collect()
}

/// Every `](#anchor)` link target in the README's prose.
fn anchor_links(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    for (number, line) in prose_lines(text) {
        let mut rest = line;
        while let Some(start) = rest.find("](#") {
            let after = &rest[start + 3..];
            let end = after.find(')').expect("an anchor link is closed");
            links.push((number, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    links
}

#[test]
fn readme_states_the_rust_version_that_cargo_toml_requires() {
    let manifest = cargo_manifest();
    let required = manifest["package"]["rust-version"].as_str().unwrap();
    let text = readme();
    let stated: Vec<&str> = text
        .match_indices("Rust ≥ ")
        .map(|(i, marker)| {
            let version = &text[i + marker.len()..];
            let end = version
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(version.len());
            version[..end].trim_end_matches('.')
        })
        .collect();
    assert!(!stated.is_empty(), "README states no `Rust ≥ <version>`");
    for version in stated {
        assert_eq!(
            version, required,
            "README says Rust ≥ {version}, Cargo.toml's rust-version is {required}"
        );
    }
}

#[test]
fn readme_contents_list_links_every_section_heading() {
    let text = readme();
    let anchors: Vec<String> = headings(&text)
        .iter()
        .map(|(_, heading)| github_anchor(heading))
        .collect();
    let links = anchor_links(&text);
    assert!(!links.is_empty(), "README has no contents list");
    for (line, link) in &links {
        assert!(
            anchors.contains(link),
            "README line {line}: #{link} is no heading's anchor; anchors: {anchors:?}"
        );
    }
    for (level, heading) in headings(&text) {
        let anchor = github_anchor(&heading);
        if (2..=3).contains(&level) {
            assert!(
                links.iter().any(|(_, link)| *link == anchor),
                "the contents list lacks \"{heading}\" (#{anchor})"
            );
        }
    }
}

#[test]
fn github_anchors_follow_githubs_rule() {
    assert_eq!(
        github_anchor("Peers: `export-members` and `benches/peers/`"),
        "peers-export-members-and-benchespeers"
    );
    assert_eq!(
        github_anchor("Measured (CPU fallback, this 2-core machine)"),
        "measured-cpu-fallback-this-2-core-machine"
    );
}

#[test]
fn the_declared_licences_ship_with_their_texts() {
    let manifest = cargo_manifest();
    assert_eq!(
        manifest["package"]["license"].as_str(),
        Some("MIT OR Apache-2.0")
    );
    let mit = repository_file("LICENSE-MIT");
    assert!(mit.contains("Permission is hereby granted, free of charge"));
    assert!(mit.contains("Copyright (c) the harbor developers"));
    let apache = repository_file("LICENSE-APACHE");
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0, January 2004"));
    assert!(apache.contains("END OF TERMS AND CONDITIONS"));
}

/// Every repository path the README names (`src/…`, `tests/…`, `examples/…`, …) exists;
/// placeholders such as `examples/<file>.toml` are skipped.
#[test]
fn readme_names_only_paths_that_exist() {
    let text = readme();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let roots = [
        "src/",
        "tests/",
        "benches/",
        "examples/",
        "shaders/",
        "docs/",
        "scripts/",
    ];
    let mut missing = Vec::new();
    for (number, line) in text.lines().enumerate() {
        for word in line.split(|c: char| c.is_whitespace() || "`()[]{},;:'\"".contains(c)) {
            if !roots.iter().any(|r| word.starts_with(r)) {
                continue;
            }
            let path = word.trim_end_matches(['.', '/']);
            if path.contains(['<', '…', '*']) {
                continue;
            }
            if !root.join(path).exists() {
                missing.push(format!("line {}: {path}", number + 1));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "README names missing paths: {missing:#?}"
    );
}

/// One command of a `console` block and the output the README shows for it.
struct ShownCommand {
    line: usize,
    args: Vec<String>,
    output: Vec<String>,
}

/// The commands of the README's `console` blocks, `$ cargo run --release -- …` or
/// `$ harbor …`, split as the shell would (single quotes, a trailing `# comment`).
fn shown_commands(text: &str) -> Vec<ShownCommand> {
    let mut commands: Vec<ShownCommand> = Vec::new();
    let mut in_console = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_console = !in_console && line.trim() == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            let command = command.split(" # ").next().unwrap().trim();
            let command = command
                .strip_prefix("cargo run --release -- ")
                .or_else(|| command.strip_prefix("harbor "))
                .unwrap_or_else(|| panic!("README line {}: unknown command {command}", i + 1));
            commands.push(ShownCommand {
                line: i + 1,
                args: shell_words(command),
                output: Vec::new(),
            });
        } else if let Some(last) = commands.last_mut() {
            last.output.push(line.to_string());
        }
    }
    commands
}

/// Splits a command line at spaces, keeping single-quoted words together.
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            _ => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether `printed` is the line the README shows as `shown`, where `…` stands for any
/// text: the pieces between the `…` appear in order, the first at the start unless `shown`
/// starts with `…`, the last at the end unless `shown` ends with `…`.
fn line_matches(shown: &str, printed: &str) -> bool {
    let mut pieces = shown.split('…');
    let head = pieces.next().unwrap_or_default().trim_end();
    let Some(mut rest) = printed.trim_end().strip_prefix(head) else {
        return false;
    };
    let tail: Vec<&str> = pieces.map(str::trim).collect();
    let Some((last, middle)) = tail.split_last() else {
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether the output `printed` is what the README shows as `shown`, line by line: a line
/// of only `…` stands for any number of lines, every other line matches one printed line
/// ([`line_matches`]), in order and with nothing left out.
fn output_matches(shown: &[String], printed: &[&str]) -> bool {
    // reachable[j]: the shown lines so far match the first j printed lines.
    let mut reachable = vec![false; printed.len() + 1];
    reachable[0] = true;
    for line in shown {
        if line.trim() == "…" {
            for j in 1..=printed.len() {
                reachable[j] |= reachable[j - 1];
            }
        } else {
            for j in (1..=printed.len()).rev() {
                reachable[j] = reachable[j - 1] && line_matches(line, printed[j - 1]);
            }
            reachable[0] = false;
        }
    }
    reachable[printed.len()]
}

/// The output of `harbor args` in the order a terminal shows it: stdout and stderr share
/// one pipe, as with `2>&1`.
fn terminal_output(args: &[String]) -> String {
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_harbor"));
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(writer.try_clone().unwrap())
        .stderr(writer);
    let mut child = command.spawn().unwrap();
    drop(command);
    let mut printed = String::new();
    reader.read_to_string(&mut printed).unwrap();
    child.wait().unwrap();
    printed
}

/// The output the README shows for each deterministic command — `tableau`, `splitting`,
/// `study energy-order` and a `simulate` refused before any work — is what the binary
/// prints, line for line (`…` elides).
#[test]
fn readme_output_of_deterministic_commands_is_what_the_binary_prints() {
    let text = readme();
    let (mut checked, mut differences) = (0, Vec::new());
    for shown in shown_commands(&text) {
        let deterministic = match shown.args[0].as_str() {
            "tableau" | "splitting" => true,
            "study" => shown.args[1] == "energy-order",
            "simulate" => shown.output.iter().any(|l| l.starts_with("error: ")),
            _ => false,
        };
        if !deterministic {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let args: Vec<String> = shown
            .args
            .iter()
            .map(|a| match a.strip_prefix("out/") {
                Some(name) => out.join(name).to_string_lossy().into_owned(),
                None => a.clone(),
            })
            .collect();
        let printed = terminal_output(&args).replace(&*out.to_string_lossy(), "out");
        let printed_lines: Vec<&str> = printed.lines().collect();
        if !output_matches(&shown.output, &printed_lines) {
            differences.push(format!(
                "README line {}: `harbor {}` shows\n{}\nbut the binary prints\n{printed}",
                shown.line,
                shown.args.join(" "),
                shown.output.join("\n"),
            ));
        }
        checked += 1;
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert!(checked >= 6, "only {checked} README commands checked");
}

#[test]
fn elisions_match_what_they_stand_for() {
    let shown = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(line_matches(
        "strang  1  G. Strang, … (1968) …",
        "strang  1  G. Strang, On the construction (1968) 506"
    ));
    assert!(line_matches("{\"a\": [0.5, …]}", "{\"a\": [0.5, 0.25]}"));
    assert!(!line_matches("{\"a\": [0.5, …]}", "{\"a\": [0.4, 0.25]}"));
    assert!(!line_matches("exact", "exact and more"));
    assert!(output_matches(
        &shown(&["a", "…", "d"]),
        &["a", "b", "c", "d"]
    ));
    assert!(output_matches(&shown(&["a", "…", "b"]), &["a", "b"]));
    assert!(!output_matches(&shown(&["a", "c"]), &["a", "b", "c"]));
    assert!(!output_matches(&shown(&["a", "b"]), &["a", "b", "c"]));
    assert!(!output_matches(&shown(&["b", "…"]), &["a", "b", "c"]));
}
