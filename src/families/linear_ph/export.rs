//! The members of a linear-PH plan as plain arrays, for programs outside harbor (the peer
//! benchmarks in `benches/peers/`): every member's matrices and initial state, the stage
//! inputs every member shares, each member's one-step operator Δ and the scheme, so that
//! another implementation can integrate exactly the ensemble harbor integrates and compare
//! final states.
//!
//! Files of an export directory (NPY 1.0, little-endian f64, C order; member i is
//! `plan.ensemble.member(i)`, a function of (seed, i) only):
//!
//! | file          | shape                   | holds                                            |
//! |---------------|-------------------------|--------------------------------------------------|
//! | `J.npy`       | members × n × n         | the skew structure matrix J of each member       |
//! | `R.npy`       | members × n × n         | the symmetric PSD dissipation matrix R           |
//! | `Q.npy`       | members × n × n         | the symmetric PD energy matrix Q, H = ½ xᵀ Q x   |
//! | `B.npy`       | members × n × m         | the input matrix B                               |
//! | `x0.npy`      | members × n             | the initial state x_0                            |
//! | `inputs.npy`  | steps × s × m           | U_k: u((k + c_i) h), shared by all members       |
//! | `delta.npy`   | members × n × p         | Δ with x_{k+1} = x_k + Δ [x_k; U_k], p = n + s m |
//! | `scheme.json` |                         | family, stages, order, a, b, c, h, steps, sizes  |
//!
//! `scheme.json` is `{"family", "stages", "order", "a", "b", "c", "h", "steps", "members",
//! "states", "inputs"}` with `a` the s × s stage matrix as nested rows; for the partitioned
//! `lobatto-pair`, `a` is the positions' matrix (IIIA) and `"a_momenta"` (IIIB) and
//! `"split"` (the size of q in x = (q, p)) are added. The system is ẋ = (J − R) Q x + B u.
//! U_k is flattened stage-major (`U_k[i m + c]` is channel c at stage i), the order of the
//! last p − n columns of Δ and of [`LinearPhPlan::inputs`].

use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::families::RunPlan;
use crate::io::config::{Config, SystemSpec};
use crate::io::npy_stream::{NpyStream, npy_file_bytes};
use crate::linear_ph::LinearPhPlan;
use crate::linear_ph::step_operators::StepOperators;

/// Largest export written: 8 GiB over all files.
pub const MAX_EXPORT_BYTES: u64 = 8 << 30;

/// Values buffered before a chunk of members (or of input steps) is written: 32 MiB.
const CHUNK_VALUES: usize = 4 << 20;

/// The files of an export, in the order they are written.
pub const EXPORT_FILES: [&str; 8] = [
    "J.npy",
    "R.npy",
    "Q.npy",
    "B.npy",
    "x0.npy",
    "inputs.npy",
    "delta.npy",
    "scheme.json",
];

/// The linear-PH plan of `config`, or an error naming `system.kind` for a family that has
/// no member matrices to export.
pub fn export_plan(config: &Config) -> Result<LinearPhPlan> {
    let not_linear_ph = |kind: &str| {
        Error::invalid(
            "system.kind",
            format!(
                "is {kind}; export-members exports linear-ph and mechanical systems (members ẋ = (J − R) Q x + B u under a collocation scheme), not {kind} systems"
            ),
        )
    };
    if !matches!(
        config.system,
        SystemSpec::LinearPh(_) | SystemSpec::Mechanical(_)
    ) {
        return Err(not_linear_ph(config.system.kind()));
    }
    match config.run_plan()? {
        RunPlan::LinearPh(plan) => Ok(*plan),
        _ => Err(not_linear_ph(config.system.kind())),
    }
}

/// The array shapes of an export of `plan`, as (file, shape).
pub fn export_shapes(plan: &LinearPhPlan) -> Vec<(&'static str, Vec<usize>)> {
    let (members, n, m) = (plan.ensemble.len(), plan.states(), plan.inputs_count());
    let (s, steps) = (plan.scheme.stages, plan.grid.steps);
    let p = n + s * m;
    vec![
        ("J.npy", vec![members, n, n]),
        ("R.npy", vec![members, n, n]),
        ("Q.npy", vec![members, n, n]),
        ("B.npy", vec![members, n, m]),
        ("x0.npy", vec![members, n]),
        ("inputs.npy", vec![steps, s, m]),
        ("delta.npy", vec![members, n, p]),
    ]
}

/// Bytes of all array files of an export of `plan` (scheme.json, a few kB, aside).
pub fn export_bytes(plan: &LinearPhPlan) -> u64 {
    export_shapes(plan)
        .iter()
        .map(|(_, shape)| npy_file_bytes(shape))
        .fold(0u64, u64::saturating_add)
}

/// Refuses an export beyond [`MAX_EXPORT_BYTES`], naming its size and what sets it.
pub fn check_export_size(plan: &LinearPhPlan) -> Result<u64> {
    let bytes = export_bytes(plan);
    if bytes <= MAX_EXPORT_BYTES {
        return Ok(bytes);
    }
    let delta = npy_file_bytes(&[
        plan.ensemble.len(),
        plan.states(),
        plan.states() + plan.scheme.stages * plan.inputs_count(),
    ]);
    Err(Error::invalid(
        "--out",
        format!(
            "the export of ensemble.members = {} (n = {}, {} steps) would write {bytes} bytes ({:.2} GiB; delta.npy alone {delta} bytes), more than the limit of {MAX_EXPORT_BYTES} bytes (8 GiB): lower ensemble.members (--set ensemble.members=…)",
            plan.ensemble.len(),
            plan.states(),
            plan.grid.steps,
            bytes as f64 / (1u64 << 30) as f64,
        ),
    ))
}

/// What an export wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportSummary {
    pub members: usize,
    pub states: usize,
    pub inputs: usize,
    pub stages: usize,
    pub steps: usize,
    /// Bytes of the array files.
    pub bytes: u64,
}

/// One member's rows of every per-member file.
struct MemberRows {
    j: Vec<f64>,
    r: Vec<f64>,
    q: Vec<f64>,
    b: Vec<f64>,
    x0: Vec<f64>,
    delta: Vec<f64>,
}

fn row_major(matrix: &nalgebra::DMatrix<f64>) -> Vec<f64> {
    let (rows, cols) = matrix.shape();
    (0..rows * cols)
        .map(|k| matrix[(k / cols, k % cols)])
        .collect()
}

fn member_rows(plan: &LinearPhPlan, index: usize) -> Result<MemberRows> {
    let member = plan.ensemble.member(index)?;
    let ops = StepOperators::new(plan, &member)?;
    if let Some(k) = ops.delta.iter().position(|v| !v.is_finite()) {
        return Err(Error::Numerical {
            context: format!("the step operator of member {index}"),
            problem: format!(
                "Δ[{}, {}] = {} is not finite",
                k / ops.width(),
                k % ops.width(),
                ops.delta[k]
            ),
        });
    }
    let system = &member.system;
    Ok(MemberRows {
        j: row_major(&system.j),
        r: row_major(&system.r),
        q: row_major(&system.q),
        b: row_major(&system.b),
        x0: member.x0.iter().copied().collect(),
        delta: ops.delta,
    })
}

/// `scheme.json` of `plan` (see the module docs).
pub fn scheme_json(plan: &LinearPhPlan) -> serde_json::Value {
    let scheme = &plan.scheme;
    let rows = |a: &nalgebra::DMatrix<f64>| -> Vec<Vec<f64>> {
        (0..a.nrows())
            .map(|i| (0..a.ncols()).map(|j| a[(i, j)]).collect())
            .collect()
    };
    let mut json = serde_json::json!({
        "family": scheme.family.name(),
        "stages": scheme.stages,
        "order": scheme.order,
        "a": rows(&scheme.a_positions),
        "b": scheme.b,
        "c": scheme.c,
        "h": plan.grid.h,
        "steps": plan.grid.steps,
        "members": plan.ensemble.len(),
        "states": plan.states(),
        "inputs": plan.inputs_count(),
    });
    if scheme.is_partitioned() {
        json["a_momenta"] = serde_json::json!(rows(&scheme.a_momenta));
        json["split"] = serde_json::json!(plan.split);
    }
    json
}

/// Writes the export of `plan` into the existing directory `dir` (see the module docs),
/// members in chunks of bounded memory, each chunk's members built in parallel. Checks the
/// size ([`check_export_size`]) and the inputs first.
pub fn write_members(plan: &LinearPhPlan, dir: &Path) -> Result<ExportSummary> {
    let bytes = check_export_size(plan)?;
    plan.check_inputs()?;
    let (members, n, m) = (plan.ensemble.len(), plan.states(), plan.inputs_count());
    let (s, steps) = (plan.scheme.stages, plan.grid.steps);
    let shapes = export_shapes(plan);
    let mut streams = shapes
        .iter()
        .map(|(name, shape)| NpyStream::create(&dir.join(name), shape))
        .collect::<Result<Vec<_>>>()?;
    let [j_out, r_out, q_out, b_out, x0_out, inputs_out, delta_out] = &mut streams[..] else {
        unreachable!("export_shapes lists seven arrays");
    };

    let width = s * m;
    let steps_per_chunk = (CHUNK_VALUES / width.max(1)).max(1);
    let mut scratch = Vec::new();
    let mut values = Vec::with_capacity(steps_per_chunk.min(steps) * width);
    for first in (0..steps).step_by(steps_per_chunk) {
        values.clear();
        for k in first..(first + steps_per_chunk).min(steps) {
            values.extend_from_slice(plan.inputs.step(k, &mut scratch));
        }
        inputs_out.write_rows(first, &values)?;
    }

    let per_member = 3 * n * n + n * m + n + n * (n + width);
    let members_per_chunk = (CHUNK_VALUES / per_member.max(1)).max(1);
    for first in (0..members).step_by(members_per_chunk) {
        let last = (first + members_per_chunk).min(members);
        let rows: Vec<MemberRows> = (first..last)
            .into_par_iter()
            .map(|i| member_rows(plan, i))
            .collect::<Result<_>>()?;
        let gather = |part: fn(&MemberRows) -> &Vec<f64>| -> Vec<f64> {
            rows.iter().flat_map(|r| part(r).iter().copied()).collect()
        };
        j_out.write_rows(first, &gather(|r| &r.j))?;
        r_out.write_rows(first, &gather(|r| &r.r))?;
        q_out.write_rows(first, &gather(|r| &r.q))?;
        b_out.write_rows(first, &gather(|r| &r.b))?;
        x0_out.write_rows(first, &gather(|r| &r.x0))?;
        delta_out.write_rows(first, &gather(|r| &r.delta))?;
    }
    NpyStream::finish_all(streams, || Ok(()))?;
    let path = dir.join("scheme.json");
    let text = serde_json::to_string_pretty(&scheme_json(plan)).expect("scheme serialises");
    std::fs::write(&path, text + "\n").map_err(|e| Error::io(&path, e))?;
    Ok(ExportSummary {
        members,
        states: n,
        inputs: m,
        stages: s,
        steps,
        bytes,
    })
}
