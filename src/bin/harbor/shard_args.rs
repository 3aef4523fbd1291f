//! `--shard I/N|auto` and `--shard-count N` of the commands that shard.

use clap::Args;
use harbor::Result;
use harbor::shard::{ProcessEnvironment, ShardSpec};

/// Which shard of a run this process is.
#[derive(Args, Debug, Clone, Default)]
pub struct ShardArgs {
    /// Run shard I of N only: members ⌊I·M/N⌋ … ⌊(I+1)·M/N⌋ − 1 of the M members
    /// (contiguous, in member order), into an output directory marked with its shard
    /// (shard.json) for `harbor merge`. `auto` takes I and N from a Slurm job array
    /// (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT) or a Kubernetes Indexed Job
    /// (JOB_COMPLETION_INDEX with --shard-count).
    #[arg(long, value_name = "I/N|auto")]
    pub shard: Option<String>,
    /// N for `--shard auto` where the scheduler does not say it (a Kubernetes Indexed Job:
    /// its completions).
    #[arg(long, value_name = "N", requires = "shard")]
    pub shard_count: Option<usize>,
}

impl ShardArgs {
    /// The shard this process runs; `None` for a whole run.
    pub fn spec(&self) -> Result<Option<ShardSpec>> {
        match self.shard.as_deref() {
            None => Ok(None),
            Some("auto") => {
                ShardSpec::auto("--shard", self.shard_count, &ProcessEnvironment).map(Some)
            }
            Some(text) => {
                if self.shard_count.is_some() {
                    return Err(harbor::Error::invalid(
                        "--shard-count",
                        "applies to --shard auto only; --shard I/N names N itself",
                    ));
                }
                ShardSpec::parse("--shard", text).map(Some)
            }
        }
    }
}
