//! `gradient.json`: `{"cost": c, "grad": {"J": [[…]], "R": [[…]], "Q": [[…]], "B": [[…]],
//! "x0": […]}}` for a single candidate, a list of those (in candidate order) for a batch.
//! Numbers are written so that they read back bit for bit.

use std::io::Write;
use std::path::Path;

use nalgebra::DMatrix;
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::identify::Evaluation;

fn rows(m: &DMatrix<f64>) -> Value {
    Value::Array(
        m.row_iter()
            .map(|row| json!(row.iter().copied().collect::<Vec<f64>>()))
            .collect(),
    )
}

/// One evaluation as its JSON object.
pub fn evaluation_json(evaluation: &Evaluation) -> Value {
    let g = &evaluation.gradient;
    json!({
        "cost": evaluation.cost,
        "grad": {
            "J": rows(&g.j),
            "R": rows(&g.r),
            "Q": rows(&g.q),
            "B": rows(&g.b),
            "x0": g.x0.iter().copied().collect::<Vec<f64>>(),
        }
    })
}

/// Writes `dir/gradient.json`: the object of the one candidate, or the list of all of them
/// when `batch`.
pub fn write_gradient_json(dir: &Path, evaluations: &[Evaluation], batch: bool) -> Result<()> {
    let path = dir.join("gradient.json");
    let file = std::fs::File::create(&path).map_err(|e| Error::io(&path, e))?;
    let mut out = std::io::BufWriter::new(file);
    let io = |e: std::io::Error| Error::io(&path, e);
    let json = |e: serde_json::Error| Error::io(&path, e.into());
    if batch {
        out.write_all(b"[\n").map_err(io)?;
        for (i, evaluation) in evaluations.iter().enumerate() {
            serde_json::to_writer(&mut out, &evaluation_json(evaluation)).map_err(json)?;
            let end: &[u8] = if i + 1 < evaluations.len() {
                b",\n"
            } else {
                b"\n"
            };
            out.write_all(end).map_err(io)?;
        }
        out.write_all(b"]\n").map_err(io)?;
    } else {
        let only = evaluations
            .first()
            .ok_or_else(|| Error::invalid("candidate", "no candidate was evaluated"))?;
        serde_json::to_writer_pretty(&mut out, &evaluation_json(only)).map_err(json)?;
        out.write_all(b"\n").map_err(io)?;
    }
    out.flush().map_err(io)
}
