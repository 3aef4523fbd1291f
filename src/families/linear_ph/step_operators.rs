//! Per-member step operators: for a linear time-invariant member, one step of Definition 1 is
//! linear in v = [x_k; U_k] (the state and the step's s·m stage inputs), so the planner
//! factors the stage matrix once, applies the step to the unit vectors of v, and hands the
//! backends plain matrices:
//!
//! ```text
//!   δ = Δ v                     (n × p, p = n + s m)       x_{k+1} = x_k + δ
//!   y = Y v                     (s m × p)                  discrete output y^k
//!   w = W v                     (s r × p)                  dissipated = h ‖w‖²
//!   stored = δᵀ Q (x_k + δ/2)   (Q: n × n)                 supplied = h yᵀ U − dissipated
//! ```
//!
//! W comes from M ⊗ R = (L_M ⊗ F)(L_M ⊗ F)ᵀ with M = L_M L_Mᵀ (Cholesky) and R = F Fᵀ
//! (F from the eigenvectors of R with eigenvalues above 1e-14·λ_max), so W = (L_M ⊗ F)ᵀ E
//! where E maps v to the stage efforts; a sum of squares stays ≥ 0 in any precision.

use nalgebra::{DMatrix, SymmetricEigen};

use super::collocation_step::{CollocationStepper, StepScratch};
use crate::error::{Error, Result};
use crate::linear_ph::{LinearPhMember, LinearPhPlan};
use crate::plan::Recording;

/// The step maps of one member, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOperators {
    pub states: usize,
    pub inputs: usize,
    pub stages: usize,
    /// Rank r of the dissipation factor F (0 for lossless members).
    pub rank: usize,
    /// Δ, n × p.
    pub delta: Vec<f64>,
    /// Y, (s m) × p.
    pub output: Vec<f64>,
    /// W, (s r) × p.
    pub dissipation: Vec<f64>,
    /// Q, n × n.
    pub q: Vec<f64>,
}

impl StepOperators {
    /// Width p = n + s·m of v = [x; U].
    pub fn width(&self) -> usize {
        self.states + self.stages * self.inputs
    }

    /// Builds the operators of `member` under `plan`'s scheme and step size.
    pub fn new(plan: &LinearPhPlan, member: &LinearPhMember) -> Result<Self> {
        Self::recording(plan, member, Recording::default())
    }

    /// Builds the operators `recording` needs: Δ always, Y with outputs or energies, W and
    /// Q with energies (the others are left empty, W with rank 0).
    pub fn recording(
        plan: &LinearPhPlan,
        member: &LinearPhMember,
        recording: Recording,
    ) -> Result<Self> {
        Self::recording_in(plan, member, recording, &mut OperatorWorkspace::default())
    }

    /// [`StepOperators::recording`] in the buffers of `work`, which building the operators
    /// of many members of one plan reuses (the same operators, bit for bit).
    pub fn recording_in(
        plan: &LinearPhPlan,
        member: &LinearPhMember,
        recording: Recording,
        work: &mut OperatorWorkspace,
    ) -> Result<Self> {
        let OperatorWorkspace {
            stepper,
            scratch,
            mass,
            x,
            u,
            y,
        } = work;
        match stepper {
            Some(stepper) => stepper.rebuild(plan, member)?,
            None => *stepper = Some(CollocationStepper::new(plan, member)?),
        }
        let stepper = stepper.as_ref().expect("built above");
        if !scratch
            .as_ref()
            .is_some_and(|scratch| stepper.fits(scratch))
        {
            *scratch = Some(stepper.scratch());
        }
        let scratch = scratch.as_mut().expect("made above");
        let (n, m, s) = (
            member.system.states(),
            member.system.inputs(),
            plan.scheme.stages,
        );
        let p = n + s * m;
        let factor = if recording.energy {
            dissipation_factor(&member.system.r)
        } else {
            DMatrix::zeros(n, 0)
        };
        let outputs = recording.energy || recording.outputs;
        let rank = factor.ncols();
        let lm = mass_factor(mass, &plan.scheme.m)?;
        let mut ops = StepOperators {
            states: n,
            inputs: m,
            stages: s,
            rank,
            delta: vec![0.0; n * p],
            output: vec![0.0; if outputs { s * m * p } else { 0 }],
            dissipation: vec![0.0; s * rank * p],
            q: if recording.energy {
                (0..n * n)
                    .map(|k| member.system.q[(k / n, k % n)])
                    .collect()
            } else {
                Vec::new()
            },
        };
        x.resize(n, 0.0);
        u.resize(s * m, 0.0);
        y.resize(s * m, 0.0);
        for col in 0..p {
            x.iter_mut().for_each(|v| *v = 0.0);
            u.iter_mut().for_each(|v| *v = 0.0);
            if col < n {
                x[col] = 1.0;
            } else {
                u[col - n] = 1.0;
            }
            stepper.solve_stages(x, u, y, scratch);
            for r in 0..n {
                ops.delta[r * p + col] = scratch.delta[r];
            }
            if outputs {
                for (row, &y_row) in y.iter().enumerate() {
                    ops.output[row * p + col] = y_row;
                }
            }
            // w_(i,k) = Σ_j L_M[j, i] Σ_c F[c, k] e_j[c].
            for i in 0..s {
                for k in 0..rank {
                    let mut acc = 0.0;
                    for j in i..s {
                        let fe: f64 = (0..n)
                            .map(|c| factor[(c, k)] * scratch.efforts[j * n + c])
                            .sum();
                        acc += lm[(j, i)] * fe;
                    }
                    ops.dissipation[(i * rank + k) * p + col] = acc;
                }
            }
        }
        Ok(ops)
    }
}

/// Buffers for building the operators of many members of one plan: the collocation
/// stepper, its scratch, the unit vectors, and the Cholesky factor L_M of the mass matrix
/// (M = L_M L_Mᵀ, computed once).
#[derive(Default)]
pub struct OperatorWorkspace {
    stepper: Option<CollocationStepper>,
    scratch: Option<StepScratch>,
    /// M and its factor L_M.
    mass: Option<(DMatrix<f64>, DMatrix<f64>)>,
    x: Vec<f64>,
    u: Vec<f64>,
    y: Vec<f64>,
}

/// L_M with M = L_M L_Mᵀ (Cholesky) from `held`, which keeps the last M and its factor.
fn mass_factor<'a>(
    held: &'a mut Option<(DMatrix<f64>, DMatrix<f64>)>,
    m: &DMatrix<f64>,
) -> Result<&'a DMatrix<f64>> {
    if held.as_ref().is_none_or(|(last, _)| last != m) {
        let factor = m.clone().cholesky().ok_or_else(|| Error::Numerical {
            context: "mass matrix".into(),
            problem: "M is not positive definite".into(),
        })?;
        *held = Some((m.clone(), factor.l()));
    }
    Ok(&held.as_ref().expect("set above").1)
}

/// F with R = F Fᵀ: eigenvectors of R scaled by √λ for the eigenvalues above
/// 1e-14 · λ_max (R is symmetric PSD, checked when the system was built).
pub fn dissipation_factor(r: &DMatrix<f64>) -> DMatrix<f64> {
    let n = r.nrows();
    if r.amax() == 0.0 {
        return DMatrix::zeros(n, 0);
    }
    let eigen = SymmetricEigen::new(r.clone());
    let largest = eigen.eigenvalues.max();
    let kept: Vec<usize> = (0..n)
        .filter(|&k| eigen.eigenvalues[k] > 1e-14 * largest)
        .collect();
    DMatrix::from_fn(n, kept.len(), |row, col| {
        let k = kept[col];
        eigen.eigenvectors[(row, k)] * eigen.eigenvalues[k].sqrt()
    })
}
