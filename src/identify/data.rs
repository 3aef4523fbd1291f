//! Output data made by simulating a reference model: y_k = Bᵀ Q x_k at t_k = k h, k = 0…N,
//! x_k from the same collocation step the gradient differentiates, optionally with seeded
//! Gaussian noise of standard deviation σ.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use crate::error::{Error, Result};
use crate::linear_ph::StepOperators;
use crate::linear_ph::{LinearPhMember, LinearPhPlan, OutputData};
use crate::plan::Recording;

/// Gaussian output noise: d_k = y_k + σ ξ_k, ξ from a ChaCha8 stream seeded by `seed`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    pub sigma: f64,
    pub seed: u64,
}

/// The outputs of `reference` under `model`'s scheme, grid and inputs, with `noise`.
pub fn simulate_outputs(
    model: &LinearPhPlan,
    reference: &LinearPhMember,
    noise: Option<Noise>,
) -> Result<OutputData> {
    let ops = StepOperators::recording(model, reference, Recording::FINAL_STATE)?;
    let (n, p) = (ops.states, ops.width());
    let m = reference.system.inputs();
    let c = reference.system.b.transpose() * &reference.system.q;
    let steps = model.grid.steps;
    let mut values = Vec::with_capacity((steps + 1) * m);
    let mut x = reference.x0.as_slice().to_vec();
    let mut delta = vec![0.0; n];
    let mut scratch = Vec::new();
    for k in 0..=steps {
        values.extend((0..m).map(|row| (0..n).map(|col| c[(row, col)] * x[col]).sum::<f64>()));
        if k == steps {
            break;
        }
        let u = model.inputs.step(k, &mut scratch);
        for (r, out) in delta.iter_mut().enumerate() {
            let row = &ops.delta[r * p..(r + 1) * p];
            *out = row[..n].iter().zip(&x).map(|(a, b)| a * b).sum::<f64>()
                + row[n..].iter().zip(u).map(|(a, b)| a * b).sum::<f64>();
        }
        x.iter_mut().zip(&delta).for_each(|(x, d)| *x += d);
    }
    if let Some(Noise { sigma, seed }) = noise {
        let normal = Normal::new(0.0, sigma).map_err(|_| {
            Error::invalid(
                "data.noise",
                format!("must be a finite number ≥ 0, got {sigma}"),
            )
        })?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        values
            .iter_mut()
            .for_each(|v| *v += normal.sample(&mut rng));
    }
    if let Some(at) = values.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(
            "data.reference",
            format!(
                "its output y[{}] at step {} is {}: the reference model's trajectory overflows",
                at % m.max(1),
                at / m.max(1),
                values[at]
            ),
        ));
    }
    Ok(OutputData {
        channels: m,
        values,
    })
}
