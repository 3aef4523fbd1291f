//! The sbatch scripts of a sharded run on Slurm: a job array whose task I runs shard I of N
//! (`--shard auto` reads `SLURM_ARRAY_TASK_ID` and `SLURM_ARRAY_TASK_COUNT`), then a merge
//! job that Slurm starts only when every task succeeded (`--dependency=afterok:<array>`).
//! An identification is two such pairs in a chain: the Monte-Carlo candidates in N shards
//! and their merge (the best kept), then the descents from the kept starts in D shards and
//! the final merge. The work directory holds the scripts, `logs/`, each stage's shard
//! directories and the merged `result/`.

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What the shards run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardedCommand {
    Simulate,
    Gradient,
    Identify,
}

/// A sharded run to schedule.
#[derive(Debug, Clone)]
pub struct SlurmJob {
    /// The harbor executable the jobs run (absolute).
    pub harbor: PathBuf,
    pub command: ShardedCommand,
    /// The config (absolute).
    pub config: PathBuf,
    /// Array tasks N (the candidate stage's, for an identification).
    pub shards: usize,
    /// Array tasks of an identification's descent stage (at most its kept starts).
    pub descent_shards: usize,
    pub partition: Option<String>,
    pub gpus_per_task: Option<u32>,
    pub time: Option<String>,
    /// Arguments every shard gets after its own (`--backend …`, `--set …`).
    pub run_args: Vec<String>,
    /// The work directory (absolute).
    pub out: PathBuf,
}

/// One sbatch script: its file name, text, and the script (by index) it waits for.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmScript {
    pub name: String,
    pub text: String,
    pub after: Option<usize>,
}

/// `text` quoted for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:,+@%".contains(c))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn path_arg(path: &Path) -> String {
    shell_quote(&path.display().to_string())
}

impl SlurmJob {
    /// The `#SBATCH` lines and shell preamble of a job.
    fn header(&self, name: &str, array: Option<usize>, log: &str, gpus: bool) -> String {
        let mut text = String::from("#!/bin/bash\n");
        let _ = writeln!(text, "#SBATCH --job-name=harbor-{name}");
        // A job whose dependency can no longer be met (a shard failed) is cancelled
        // rather than left pending.
        let _ = writeln!(text, "#SBATCH --kill-on-invalid-dep=yes");
        if let Some(tasks) = array {
            let _ = writeln!(text, "#SBATCH --array=0-{}", tasks - 1);
        }
        let _ = writeln!(text, "#SBATCH --ntasks=1");
        let _ = writeln!(
            text,
            "#SBATCH --output={}",
            self.out.join("logs").join(log).display()
        );
        if let Some(partition) = &self.partition {
            let _ = writeln!(text, "#SBATCH --partition={partition}");
        }
        if let (true, Some(gpus)) = (gpus, self.gpus_per_task) {
            let _ = writeln!(text, "#SBATCH --gpus-per-task={gpus}");
        }
        if let Some(time) = &self.time {
            let _ = writeln!(text, "#SBATCH --time={time}");
        }
        text.push_str("set -euo pipefail\n");
        text
    }

    /// An array of `tasks` shards running `harbor <args> --shard auto --out <dir>/$ID`.
    fn array(&self, name: &str, tasks: usize, args: &[String], dir: &str) -> String {
        let mut text = self.header(name, Some(tasks), &format!("{name}-%a.log"), true);
        let mut line = vec![path_arg(&self.harbor)];
        line.extend(args.iter().map(|a| shell_quote(a)));
        line.extend(["--shard".into(), "auto".into(), "--out".into()]);
        line.push(format!(
            "{}/\"$SLURM_ARRAY_TASK_ID\"",
            path_arg(&self.out.join(dir))
        ));
        line.extend(self.run_args.iter().map(|a| shell_quote(a)));
        let _ = writeln!(text, "exec {}", line.join(" "));
        text
    }

    /// A job merging shards `0 … tasks − 1` of `<out>/<dir>` into `<out>/<into>`.
    fn merge(&self, name: &str, tasks: usize, dir: &str, into: &str) -> String {
        let mut text = self.header(name, None, &format!("{name}.log"), false);
        let mut line = vec![path_arg(&self.harbor), "merge".into()];
        line.extend((0..tasks).map(|i| path_arg(&self.out.join(dir).join(i.to_string()))));
        line.extend(["--out".into(), path_arg(&self.out.join(into))]);
        let _ = writeln!(text, "exec {}", line.join(" "));
        text
    }

    /// The scripts, in submission order.
    pub fn scripts(&self) -> Vec<SlurmScript> {
        let config = self.config.display().to_string();
        let script = |name: &str, text: String, after: Option<usize>| SlurmScript {
            name: format!("{name}.sbatch"),
            text,
            after,
        };
        match self.command {
            ShardedCommand::Simulate | ShardedCommand::Gradient => {
                let command = if self.command == ShardedCommand::Simulate {
                    "simulate"
                } else {
                    "gradient"
                };
                let args = [command.to_string(), config];
                vec![
                    script(
                        "shards",
                        self.array("shard", self.shards, &args, "shards"),
                        None,
                    ),
                    script(
                        "merge",
                        self.merge("merge", self.shards, "shards", "result"),
                        Some(0),
                    ),
                ]
            }
            ShardedCommand::Identify => {
                let kept = self.out.join("kept").display().to_string();
                let candidates = [
                    "identify".into(),
                    config.clone(),
                    "--stage".into(),
                    "candidates".into(),
                ];
                let descent = [
                    "identify".into(),
                    config,
                    "--stage".into(),
                    "descent".into(),
                    "--from".into(),
                    kept,
                ];
                vec![
                    script(
                        "candidates",
                        self.array("candidates", self.shards, &candidates, "candidates"),
                        None,
                    ),
                    script(
                        "kept",
                        self.merge("kept", self.shards, "candidates", "kept"),
                        Some(0),
                    ),
                    script(
                        "descent",
                        self.array("descent", self.descent_shards, &descent, "descent"),
                        Some(1),
                    ),
                    script(
                        "merge",
                        self.merge("merge", self.descent_shards, "descent", "result"),
                        Some(2),
                    ),
                ]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(command: ShardedCommand) -> SlurmJob {
        SlurmJob {
            harbor: "/opt/harbor/bin/harbor".into(),
            command,
            config: "/data/my run/ensemble.toml".into(),
            shards: 8,
            descent_shards: 4,
            partition: Some("gpu".into()),
            gpus_per_task: Some(1),
            time: Some("01:00:00".into()),
            run_args: vec![
                "--backend".into(),
                "gpu".into(),
                "--set".into(),
                "ensemble.members=1000".into(),
            ],
            out: "/scratch/run".into(),
        }
    }

    #[test]
    fn a_simulation_is_an_array_and_a_merge_after_it() {
        let scripts = job(ShardedCommand::Simulate).scripts();
        assert_eq!(scripts.len(), 2);
        let array = &scripts[0].text;
        assert!(array.contains("#SBATCH --array=0-7\n"), "{array}");
        assert!(
            array.contains("#SBATCH --gpus-per-task=1\n#SBATCH --time=01:00:00\n"),
            "{array}"
        );
        assert!(array.contains(
            "exec /opt/harbor/bin/harbor simulate '/data/my run/ensemble.toml' --shard auto --out /scratch/run/shards/\"$SLURM_ARRAY_TASK_ID\" --backend gpu --set ensemble.members=1000\n"
        ), "{array}");
        let merge = &scripts[1];
        assert_eq!(merge.after, Some(0));
        assert!(!merge.text.contains("gpus"), "{}", merge.text);
        assert!(
            merge
                .text
                .contains("merge /scratch/run/shards/0 /scratch/run/shards/1 "),
            "{}",
            merge.text
        );
        assert!(
            merge
                .text
                .contains("/scratch/run/shards/7 --out /scratch/run/result\n"),
            "{}",
            merge.text
        );
    }

    #[test]
    fn an_identification_chains_two_arrays_and_two_merges() {
        let scripts = job(ShardedCommand::Identify).scripts();
        let afters: Vec<Option<usize>> = scripts.iter().map(|s| s.after).collect();
        assert_eq!(afters, vec![None, Some(0), Some(1), Some(2)]);
        assert!(scripts[2].text.contains("--array=0-3\n"));
        assert!(
            scripts[2]
                .text
                .contains("--stage descent --from /scratch/run/kept --shard auto")
        );
        assert!(
            scripts[3]
                .text
                .contains("/scratch/run/descent/3 --out /scratch/run/result")
        );
    }

    #[test]
    fn quoting_survives_every_character() {
        assert_eq!(shell_quote("plain/path-1.toml"), "plain/path-1.toml");
        assert_eq!(shell_quote("it's here"), r"'it'\''s here'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }
}
