//! Which shard a run is: `I/N` from the command line, or `auto` from the scheduler's
//! environment, and the contiguous range of members it owns.
//!
//! Shard I of N over M members owns the members ⌊I·M/N⌋ … ⌊(I+1)·M/N⌋ − 1: contiguous
//! ranges in member order whose sizes differ by at most one, covering 0 … M − 1 once.

use std::ops::Range;

use crate::error::{Error, Result};

/// Shard `index` of `count` (0 ≤ index < count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShardSpec {
    pub index: usize,
    pub count: usize,
}

/// What a scheduler tells a task, read from the environment by [`ShardSpec::auto`]:
/// `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_MIN`, `SLURM_ARRAY_TASK_STEP` and
/// `SLURM_ARRAY_TASK_COUNT` (a Slurm job array), or `JOB_COMPLETION_INDEX` (a Kubernetes
/// Indexed Job, which does not say how many indices there are).
pub trait Environment {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process's environment.
pub struct ProcessEnvironment;

impl Environment for ProcessEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl ShardSpec {
    /// Shard `index` of `count`; `field` names the setting in errors.
    pub fn new(field: &str, index: usize, count: usize) -> Result<Self> {
        if count == 0 {
            return Err(Error::invalid(
                field,
                "the shard count N of I/N must be at least 1, got 0",
            ));
        }
        if index >= count {
            return Err(Error::invalid(
                field,
                format!(
                    "the shard index I of I/N counts from 0 and must be below N = {count}, got {index}"
                ),
            ));
        }
        Ok(ShardSpec { index, count })
    }

    /// Parses `I/N` (`--shard 2/8`); `auto` is [`ShardSpec::auto`]'s business.
    pub fn parse(field: &str, text: &str) -> Result<Self> {
        let number = |part: &str, what: &str| {
            part.trim().parse::<usize>().map_err(|_| {
                Error::invalid(
                    field,
                    format!("expected I/N (shard I of N, e.g. 0/8) or auto; {what} {part:?} is not a whole number ≥ 0"),
                )
            })
        };
        let Some((index, count)) = text.split_once('/') else {
            return Err(Error::invalid(
                field,
                format!("expected I/N (shard I of N, e.g. 0/8) or auto, got {text:?}"),
            ));
        };
        Self::new(field, number(index, "I")?, number(count, "N")?)
    }

    /// The shard a scheduler's task is: from a Slurm job array (index (ID − MIN) / STEP of
    /// COUNT), else from a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` of `count`
    /// (`--shard-count`, which a Slurm array's own count must agree with when given).
    pub fn auto(field: &str, count: Option<usize>, env: &dyn Environment) -> Result<Self> {
        let read = |name: &str| -> Result<Option<usize>> {
            env.var(name)
                .map(|text| {
                    text.trim().parse::<usize>().map_err(|_| {
                        Error::invalid(
                            field,
                            format!("--shard auto reads {name}, which holds {text:?}, not a whole number ≥ 0"),
                        )
                    })
                })
                .transpose()
        };
        if let Some(id) = read("SLURM_ARRAY_TASK_ID")? {
            let Some(array_count) = read("SLURM_ARRAY_TASK_COUNT")? else {
                return Err(Error::invalid(
                    field,
                    "--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not",
                ));
            };
            let min = read("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let step = read("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
            if id < min || (id - min) % step != 0 {
                return Err(Error::invalid(
                    field,
                    format!(
                        "--shard auto: SLURM_ARRAY_TASK_ID = {id} is not in the array {min}, {min}+{step}, …"
                    ),
                ));
            }
            if let Some(given) = count
                && given != array_count
            {
                return Err(Error::invalid(
                    field,
                    format!(
                        "--shard-count {given} disagrees with the Slurm array's SLURM_ARRAY_TASK_COUNT = {array_count}"
                    ),
                ));
            }
            return Self::new(field, (id - min) / step, array_count);
        }
        if let Some(index) = read("JOB_COMPLETION_INDEX")? {
            let Some(count) = count else {
                return Err(Error::invalid(
                    field,
                    "--shard auto under a Kubernetes Indexed Job (JOB_COMPLETION_INDEX is set) needs --shard-count N, the Job's completions",
                ));
            };
            return Self::new(field, index, count);
        }
        Err(Error::invalid(
            field,
            "--shard auto found neither a Slurm job array (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT) nor a Kubernetes Indexed Job (JOB_COMPLETION_INDEX) in the environment; give I/N",
        ))
    }

    /// The members this shard owns of `total`: ⌊I·M/N⌋ … ⌊(I+1)·M/N⌋ − 1. A shard that
    /// would own none is refused (`what` names the members: "members", "candidates").
    pub fn members(&self, field: &str, total: usize, what: &str) -> Result<Range<usize>> {
        if self.count > total {
            return Err(Error::invalid(
                field,
                format!(
                    "{} shards of {total} {what} would leave a shard empty: use at most {total} shards",
                    self.count
                ),
            ));
        }
        Ok(self.range_of(total))
    }

    /// ⌊I·M/N⌋ … ⌊(I+1)·M/N⌋ (possibly empty when N > M).
    pub fn range_of(&self, total: usize) -> Range<usize> {
        let bound = |i: usize| (i as u128 * total as u128 / self.count as u128) as usize;
        bound(self.index)..bound(self.index + 1)
    }

    /// `I/N`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    struct Vars(HashMap<&'static str, &'static str>);

    impl Environment for Vars {
        fn var(&self, name: &str) -> Option<String> {
            self.0.get(name).map(|v| v.to_string())
        }
    }

    #[test]
    fn ranges_are_contiguous_balanced_and_cover_every_member_once() {
        for total in [1usize, 2, 7, 10, 1000, 1001] {
            for count in 1..=total.min(13) {
                let mut next = 0;
                for index in 0..count {
                    let range = ShardSpec::new("s", index, count)
                        .unwrap()
                        .members("s", total, "members")
                        .unwrap();
                    assert_eq!(range.start, next);
                    let size = range.len();
                    assert!(
                        size == total / count || size == total / count + 1,
                        "{total} {count} {index}: {size}"
                    );
                    next = range.end;
                }
                assert_eq!(next, total);
            }
        }
    }

    #[test]
    fn parse_and_refusals_name_the_field_and_the_value() {
        assert_eq!(
            ShardSpec::parse("--shard", "2/8").unwrap(),
            ShardSpec { index: 2, count: 8 }
        );
        for (text, words) in [
            ("8/8", "below N = 8, got 8"),
            ("0/0", "at least 1"),
            ("x/3", "I \"x\""),
            ("3", "got \"3\""),
        ] {
            let e = ShardSpec::parse("--shard", text).unwrap_err().to_string();
            assert!(e.contains("--shard") && e.contains(words), "{text}: {e}");
        }
        let e = ShardSpec::new("--shard", 0, 5)
            .unwrap()
            .members("--shard", 3, "members")
            .unwrap_err();
        assert!(e.to_string().contains("5 shards of 3 members"), "{e}");
    }

    #[test]
    fn auto_reads_slurm_arrays_and_indexed_jobs() {
        let slurm = Vars(HashMap::from([
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "5"),
        ]));
        assert_eq!(
            ShardSpec::auto("s", None, &slurm).unwrap(),
            ShardSpec { index: 3, count: 5 }
        );
        assert!(
            ShardSpec::auto("s", Some(4), &slurm)
                .unwrap_err()
                .to_string()
                .contains("disagrees")
        );
        let k8s = Vars(HashMap::from([("JOB_COMPLETION_INDEX", "2")]));
        assert_eq!(
            ShardSpec::auto("s", Some(3), &k8s).unwrap(),
            ShardSpec { index: 2, count: 3 }
        );
        assert!(
            ShardSpec::auto("s", None, &k8s)
                .unwrap_err()
                .to_string()
                .contains("--shard-count")
        );
        let none = Vars(HashMap::new());
        assert!(
            ShardSpec::auto("s", Some(3), &none)
                .unwrap_err()
                .to_string()
                .contains("neither")
        );
    }
}
