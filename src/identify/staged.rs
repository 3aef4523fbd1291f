//! An identification in stages, each sharded, for a cluster: the Monte-Carlo candidates
//! (`identify --stage candidates --shard I/N`, each shard keeping the best
//! `monte_carlo.keep` of its range) merged into the best of all (`candidates.json` of the
//! merge: the best of the shards' best are the best of all, ties by index as in one run);
//! then the descents from those kept starts (`identify --stage descent --from <merged>
//! --shard I/D`, each start run to its own stop and its walk recorded:
//! [`super::descent_log`]); then the final merge, which replays the walks through the
//! descent loop with the configured successive halving and evaluation budget and writes
//! what `harbor identify` writes — the same identified model, costs and histories.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::conjugate_gradient::minimize_recording;
use super::descent_log::{ReplayedStarts, StartLog};
use super::descent_loop::advance_all;
use super::gradient::Evaluation;
use super::identification::{
    Outcome, Status, best_candidates, check_setup, descent_settings, descent_starts,
    evaluate_points, refuse_none_kept,
};
use super::manifold::Geometry;
use super::monte_carlo::Best;
use super::records::EvaluationRecord;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::io::identify_output::IdentifyReport;
use crate::io::identify_spec::{IdentifyConfig, IdentifyProblem};
use crate::io::output::write_json;
use crate::plan::MemoryBudget;
use crate::shard::{MemberSpan, ResolvedConfig, ShardKind, ShardSet, ShardSpec};

/// The kept candidates' file, of a candidate shard and of their merge.
pub const CANDIDATES_FILE: &str = "candidates.json";
/// The recorded walks of a descent shard.
pub const DESCENT_FILE: &str = "descent.json";

/// A kept Monte-Carlo candidate: its index and evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptCandidate {
    pub index: usize,
    pub evaluation: EvaluationRecord,
}

/// `candidates.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CandidatesFile {
    pub harbor_version: String,
    pub config_hash: String,
    /// Candidates evaluated to find these: the shard's, or all once merged.
    pub evaluated: usize,
    /// Wall seconds spent on them (the shards' added up once merged).
    pub seconds: f64,
    /// What evaluated them (summary's `backend`).
    pub backend: String,
    /// Cheapest first, ties by index.
    pub kept: Vec<KeptCandidate>,
}

/// `descent.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescentFile {
    /// The Monte-Carlo index of each start of the shard, in order; `None` for an initial
    /// guess (the guesses come first).
    pub candidate_indices: Vec<Option<usize>>,
    /// The candidate stage's wall seconds (carried for the final report).
    pub candidate_seconds: f64,
    pub walks: Vec<StartLog>,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| {
        Error::invalid(
            "shard directories",
            format!("{} is not a file harbor can read back: {e}", path.display()),
        )
    })
}

fn write<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    write_json(
        path,
        &serde_json::to_value(value).expect("records serialise"),
    )
}

/// The problem a shard recorded, rebuilt.
fn recorded_problem(config: ResolvedConfig) -> Result<IdentifyProblem> {
    IdentifyConfig::from_table(config.table, &config.origin, config.base_dir)?
        .problem(&MemoryBudget::default())
}

/// The candidate stage of shard `spec`: the best `monte_carlo.keep` of its range.
pub fn candidate_shard(
    backend: &Backend,
    budget: &MemoryBudget,
    problem: &IdentifyProblem,
    spec: ShardSpec,
    status: &mut dyn FnMut(Status) -> Result<()>,
) -> Result<(Vec<(usize, Evaluation)>, MemberSpan)> {
    let setup = &problem.setup;
    check_setup(setup)?;
    let total = setup.monte_carlo.candidates;
    let range = spec.members("--shard", total, "Monte-Carlo candidates")?;
    let span = MemberSpan {
        first: range.start,
        count: range.len(),
        total,
    };
    let kept = best_candidates(backend, budget, &problem.problem, setup, range, status)?;
    Ok((kept, span))
}

/// Writes `candidates.json` of `kept` into `dir`.
pub fn write_candidates(
    dir: &Path,
    config: &ResolvedConfig,
    evaluated: usize,
    seconds: f64,
    backend: &str,
    kept: &[(usize, Evaluation)],
) -> Result<()> {
    let file = CandidatesFile {
        harbor_version: env!("CARGO_PKG_VERSION").into(),
        config_hash: config.hash.clone(),
        evaluated,
        seconds,
        backend: backend.into(),
        kept: kept
            .iter()
            .map(|(index, e)| KeptCandidate {
                index: *index,
                evaluation: EvaluationRecord::of(e),
            })
            .collect(),
    };
    write(&dir.join(CANDIDATES_FILE), &file)
}

/// The merged candidates in `from` (`--from`), checked to belong to `config` and to cover
/// every candidate.
pub fn read_kept(
    from: &Path,
    config: &ResolvedConfig,
    problem: &IdentifyProblem,
) -> Result<CandidatesFile> {
    let path = from.join(CANDIDATES_FILE);
    if !path.is_file() {
        return Err(Error::invalid(
            "--from",
            format!(
                "{} has no {CANDIDATES_FILE}: name the merge of the candidate stage's shards",
                from.display()
            ),
        ));
    }
    let file: CandidatesFile = read_json(&path)?;
    if file.harbor_version != env!("CARGO_PKG_VERSION") {
        return Err(Error::invalid(
            "--from",
            format!(
                "{} was written by harbor {}, this is {}",
                path.display(),
                file.harbor_version,
                env!("CARGO_PKG_VERSION")
            ),
        ));
    }
    if file.config_hash != config.hash {
        return Err(Error::invalid(
            "--from",
            format!(
                "{} belongs to another config ({}; this one, with its --set overrides, is {})",
                path.display(),
                file.config_hash,
                config.hash
            ),
        ));
    }
    let total = problem.setup.monte_carlo.candidates;
    if file.evaluated != total {
        return Err(Error::invalid(
            "--from",
            format!(
                "{} holds the best of {} candidates, not of all {total}: merge every candidate shard first",
                path.display(),
                file.evaluated
            ),
        ));
    }
    Ok(file)
}

/// The descent stage of shard `spec`: the walks from its range of the kept starts, each to
/// its own stop.
pub fn descent_shard(
    backend: &Backend,
    budget: &MemoryBudget,
    problem: &IdentifyProblem,
    kept: &CandidatesFile,
    spec: ShardSpec,
    status: &mut dyn FnMut(Status) -> Result<()>,
) -> Result<(DescentFile, MemberSpan)> {
    let setup = &problem.setup;
    check_setup(setup)?;
    let guesses = setup.initial_guesses.len();
    let total = guesses + kept.kept.len();
    let range = spec.members(
        "--shard",
        total,
        "starts (initial guesses, kept candidates)",
    )?;
    let span = MemberSpan {
        first: range.start,
        count: range.len(),
        total,
    };
    let candidates = kept
        .kept
        .iter()
        .map(|k| Ok((k.index, k.evaluation.evaluation()?)))
        .collect::<Result<Vec<_>>>()?;
    let starts = descent_starts(
        backend,
        budget,
        &problem.problem,
        setup,
        &candidates,
        range.clone(),
    )?;
    let candidate_indices = range
        .map(|i| i.checked_sub(guesses).map(|k| candidates[k].0))
        .collect();
    // Each start to its own stop: halving and the budget act in the merge.
    let mut settings = descent_settings(setup);
    settings.prune_every = 0;
    settings.evaluation_budget = None;
    let geometry = Geometry { fit: setup.fit };
    let (_, _, walks) = minimize_recording(
        &geometry,
        starts,
        &settings,
        &mut |points| evaluate_points(backend, budget, &problem.problem, points),
        &mut |progress| status(Status::Descent(*progress)),
        true,
    )?;
    let file = DescentFile {
        candidate_indices,
        candidate_seconds: kept.seconds,
        walks,
    };
    Ok((file, span))
}

/// Writes `descent.json` into `dir`.
pub fn write_descent(dir: &Path, file: &DescentFile) -> Result<()> {
    write(&dir.join(DESCENT_FILE), file)
}

/// Merges the shards of a stage into `dir`; returns the candidates (starts) merged.
pub fn merge(set: &ShardSet, dir: &Path) -> Result<usize> {
    let config = set.config()?;
    let problem = recorded_problem(config.clone())?;
    match set.kind() {
        ShardKind::IdentifyCandidates => merge_candidates(set, &config, &problem, dir),
        _ => merge_descents(set, &problem, dir),
    }
}

fn merge_candidates(
    set: &ShardSet,
    config: &ResolvedConfig,
    problem: &IdentifyProblem,
    dir: &Path,
) -> Result<usize> {
    let setup = &problem.setup;
    let mut best = Best::new(setup.monte_carlo.keep);
    for (shard_dir, manifest) in &set.shards {
        let file: CandidatesFile = read_json(&shard_dir.join(CANDIDATES_FILE))?;
        let span = manifest.members;
        for k in &file.kept {
            if !(span.first..span.first + span.count).contains(&k.index) {
                return Err(Error::invalid(
                    "shard directories",
                    format!(
                        "{}: candidate {} is outside the shard's range",
                        shard_dir.display(),
                        k.index
                    ),
                ));
            }
            best.offer(k.index, k.evaluation.evaluation()?);
        }
    }
    let kept = refuse_none_kept(setup, best.into_entries())?;
    let run = &set.manifest().run;
    write_candidates(
        dir,
        config,
        setup.monte_carlo.candidates,
        set.seconds(),
        &run.backend,
        &kept,
    )?;
    Ok(setup.monte_carlo.candidates)
}

fn merge_descents(set: &ShardSet, problem: &IdentifyProblem, dir: &Path) -> Result<usize> {
    let setup = &problem.setup;
    let mut candidate_indices = Vec::new();
    let mut walks = Vec::new();
    let mut candidate_seconds = 0.0;
    for (shard_dir, manifest) in &set.shards {
        let file: DescentFile = read_json(&shard_dir.join(DESCENT_FILE))?;
        if file.walks.len() != manifest.members.count
            || file.candidate_indices.len() != file.walks.len()
        {
            return Err(Error::invalid(
                "shard directories",
                format!(
                    "{}: {} walks for the shard's {} starts",
                    shard_dir.display(),
                    file.walks.len(),
                    manifest.members.count
                ),
            ));
        }
        for (i, walk) in file.walks.iter().enumerate() {
            walk.check(&format!("{}: walk {i}", shard_dir.display()))?;
        }
        candidate_seconds = file.candidate_seconds;
        candidate_indices.extend(file.candidate_indices);
        walks.extend(file.walks);
    }
    let mut replay = ReplayedStarts::new(&walks);
    let descent_evaluations = advance_all(&mut replay, &descent_settings(setup), &mut |_| Ok(()))?;
    let starts = replay.results()?;
    // The initial guesses' walks come first, the kept candidates' after them.
    let guesses = candidate_indices.iter().take_while(|i| i.is_none()).count();
    if guesses != setup.initial_guesses.len() {
        return Err(Error::invalid(
            "shard directories",
            format!(
                "{guesses} initial guesses' walks lead, the config gives {} guesses",
                setup.initial_guesses.len()
            ),
        ));
    }
    let candidate_indices: Vec<usize> = candidate_indices[guesses..]
        .iter()
        .map(|i| {
            i.ok_or_else(|| {
                Error::invalid(
                    "shard directories",
                    "an initial guess's walk after a candidate's: the shards are not one run's",
                )
            })
        })
        .collect::<Result<_>>()?;
    let outcome = Outcome::new(
        starts,
        guesses,
        candidate_indices,
        setup.monte_carlo.candidates,
        descent_evaluations,
    );
    let seconds = candidate_seconds + set.seconds();
    let report = IdentifyReport::new(
        problem,
        outcome,
        seconds,
        set.manifest().run.backend.clone(),
    )?;
    report.write(dir)?;
    Ok(walks.len())
}
