//! `harbor config keys|init <kind>`: the keys of each kind of config, listed from the types
//! the parser reads, and a starter config to begin from.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use harbor::io::config_keys::{ConfigKind, table};
use harbor::{Error, Result};

/// Help of every `<KIND>`.
const KIND_HELP: &str = "The kind of config: a simulate (and study) config by its [system] kind, or a gradient or identify config";

#[derive(Subcommand)]
pub enum ConfigCommand {
    /// Print every key of a kind of config: its dotted path (`[]` marks the tables of an
    /// array), type, default and meaning, read from the types the parser uses.
    Keys {
        #[arg(help = KIND_HELP, value_parser = clap::builder::PossibleValuesParser::new(ConfigKind::names()))]
        kind: String,
        /// Print the JSON Schema (draft 2020-12) of the config instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Print a starter config of a kind, with a comment on each key, or write it to a file.
    Init {
        #[arg(help = KIND_HELP, value_parser = clap::builder::PossibleValuesParser::new(ConfigKind::names()))]
        kind: String,
        /// Write the starter here instead of printing it (refused when the file exists).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Runs `harbor config …`.
pub fn config(command: ConfigCommand) -> Result<()> {
    match command {
        ConfigCommand::Keys { kind, json } => {
            let kind = ConfigKind::by_name(&kind)?;
            if json {
                let text = serde_json::to_string_pretty(kind.schema().as_value())
                    .expect("a schema writes as JSON");
                say!("{text}");
            } else {
                say_inline!("{}", table(&kind.keys()));
            }
            Ok(())
        }
        ConfigCommand::Init { kind, out } => {
            let kind = ConfigKind::by_name(&kind)?;
            match out {
                None => say_inline!("{}", kind.starter()),
                Some(path) => {
                    write_new(&path, kind.starter())?;
                    say!(
                        "wrote {}; run it with: harbor {} {} --out <DIR>",
                        path.display(),
                        kind.command(),
                        path.display()
                    );
                }
            }
            Ok(())
        }
    }
}

/// Writes `text` to a new file at `path`, whole or not at all: into a temporary file beside
/// it, then linked into place only if nothing exists there.
fn write_new(path: &Path, text: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| Error::io(file.path(), e))?;
    file.persist_noclobber(path).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            Error::invalid(
                "--out",
                format!(
                    "{} exists; harbor config init writes only new files",
                    path.display()
                ),
            )
        } else {
            Error::io(path, e.error)
        }
    })?;
    Ok(())
}
