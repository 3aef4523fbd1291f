//! The fast CPU engine of the contact family: the reference integrator's step
//! ([`super::flows`]) on a block of members side by side, each member's result equal to the
//! reference's to the last bit.
//!
//! A block holds G groups of [`LANES`](crate::kernels::lanes::LANES) members (lanes)
//! structure-of-arrays: an n-vector of a group is n [`crate::kernels::lanes::Lanes`] values,
//! each one AVX-512 register of f64. A method is a composition of base steps with
//! coefficients (`schedule.rs`): Strang steps S(γ_i h) of the splitting compositions, the
//! Herglotz step, or any composition of them. Every step runs each flow of the reference
//! on the lanes of a chunk of groups at once (`lane_flows.rs`), one operation after the
//! other over every group of the chunk, so that the groups' independent dependency chains
//! overlap in the out-of-order core, the time functions are paid once per block, the
//! per-term dispatch once per chunk and the matrices' entries once per group, and the
//! arithmetic runs as vector instructions over the lanes, its products P v, K x summed in
//! registers. A chunk holds as many groups as keep its states and work buffers in a core's
//! L1 cache, and runs a tile of steps before the next chunk; every vector of lanes starts a
//! cache line (`lane_vec.rs`):
//!
//! ```text
//!   t_j = (k + offset_j) h:  s_j(t), c(t), (1/r)³, 2f, (1/r)⁶ ḟ   once per block (time_values.rs)
//!   Ψ(h) = B_s(γ_s h) ∘ … ∘ B_1(γ_1 h)                             all lanes (lane_flows.rs)
//!   B(t, x), ∇ₓB(t, x), C(t) = α c(t)                               per lane (lane_system.rs)
//! ```
//!
//! B(t, x) and ∇ₓB(t, x) are evaluated only where they are not already held for the same
//! t and x: a Strang step at the endpoints sampling closes at the time the next one opens,
//! with x unchanged by the φ_C and φ_B between, so it evaluates them once, not twice.
//!
//! Expression terms go through their tape over all lanes ([`crate::expr::Tape::eval_lanes_inline`],
//! equal to [`crate::expr::Tape::eval`] to the last bit); transcendental functions are
//! std's, as in the reference; with constant damping the factors e^{−α γ_i h/2} are computed
//! once per block. The vector arithmetic is written once against
//! [`crate::kernels::lanes::Simd`] and nothing is fused (no multiply-add is rounded once),
//! so the results are the same at every [`SimdLevel`]; the level only sets the vector
//! width. A lane whose state stops being finite goes on as the reference's member
//! does, and is flagged at the same step.
//!
//! Every contact method and term runs here. A block whose members do not share what a
//! block keeps once (P, K, the terms' kinds, signals, orbits and expressions: members of
//! one plan always do, since only coefficients and initial states are drawn) is integrated
//! by the reference integrator instead, member by member.
//!
//! A block's set-up (`prepare.rs`) draws its members straight from the plan into their
//! lanes, the block's random streams computed side by side, and writes each member's
//! results in place in one [`ResultBlock`] per block.

mod integrate;
mod lane_flows;
mod lane_system;
mod lane_vec;
mod prepare;
mod schedule;
mod time_values;

use std::ops::Range;

use super::model::ContactMember;
use super::plan::ContactPlan;
use crate::error::{Error, Result};
use crate::kernels::family::{Family, FastEngine};
#[cfg(target_arch = "x86_64")]
use crate::kernels::lanes::{Avx2, Avx512};
use crate::kernels::lanes::{Portable, SimdLevel};
use crate::plan::{ResultBlock, StepGrid};
use integrate::{LaneBlock, NonfiniteStart, integrate};
pub use schedule::{BaseStep, Schedule};

/// Consecutive members prepared for the fast engine.
#[derive(Debug, Clone)]
pub enum ContactBlock {
    /// Laid out lane by lane.
    Lanes(Box<LaneBlock>),
    /// Members that do not share what a block keeps once: integrated by the reference.
    Reference(Vec<ContactMember>),
}

impl ContactPlan {
    /// Integrates a prepared block with its loops compiled for `level` (a level this CPU
    /// lacks runs the portable code).
    pub fn run_fast_block(&self, block: ContactBlock, level: SimdLevel) -> Result<ResultBlock> {
        let block = match block {
            ContactBlock::Lanes(block) => *block,
            ContactBlock::Reference(members) => {
                let results = members.iter().map(|m| self.reference(m));
                let (spec, records) = (self.record_spec(), self.grid().records());
                return Ok(ResultBlock::from_members(
                    spec,
                    records,
                    results.collect::<Result<_>>()?,
                ));
            }
        };
        if block.members == 0 {
            return Ok(block.results);
        }
        let schedule = Schedule::of(self.method());
        let grid = self.grid();
        let (n, first) = (block.system.n, block.first);
        let integrated = match level {
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 if Avx512::new().is_some() => {
                let simd = Avx512::new().expect("checked just above");
                // SAFETY: the CPU has the instructions (checked just above).
                unsafe {
                    match n {
                        1 => integrate_avx512::<1>(simd, block, &schedule, grid),
                        2 => integrate_avx512::<2>(simd, block, &schedule, grid),
                        3 => integrate_avx512::<3>(simd, block, &schedule, grid),
                        4 => integrate_avx512::<4>(simd, block, &schedule, grid),
                        8 => integrate_avx512::<8>(simd, block, &schedule, grid),
                        _ => integrate_avx512::<0>(simd, block, &schedule, grid),
                    }
                }
            }
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 if Avx2::new().is_some() => {
                let simd = Avx2::new().expect("checked just above");
                // SAFETY: the CPU has the instructions (checked just above).
                unsafe {
                    match n {
                        1 => integrate_avx2::<1>(simd, block, &schedule, grid),
                        2 => integrate_avx2::<2>(simd, block, &schedule, grid),
                        3 => integrate_avx2::<3>(simd, block, &schedule, grid),
                        4 => integrate_avx2::<4>(simd, block, &schedule, grid),
                        8 => integrate_avx2::<8>(simd, block, &schedule, grid),
                        _ => integrate_avx2::<0>(simd, block, &schedule, grid),
                    }
                }
            }
            _ => integrate::<_, 0>(Portable, block, &schedule, grid),
        };
        integrated.map_err(|start| self.nonfinite_start_error(first, start))
    }

    /// [`ContactPlan::member`]'s error for the block member whose H(0, x0, p0, z0) is not
    /// finite, the block's first member being the plan's member `first` (`None` for members
    /// handed over built: the error then names the member by its place in the block).
    fn nonfinite_start_error(&self, first: Option<usize>, start: NonfiniteStart) -> Error {
        let checked = first.and_then(|first| self.member(first + start.member).err());
        checked.unwrap_or_else(|| {
            let prefix = format!("member {} of a block: system", start.member);
            ContactMember::nonfinite_energy(&prefix, start.energy)
        })
    }
}

/// [`integrate`] compiled for AVX-512 (F, DQ, VL): the block's loops, inlined into it, run
/// 8 lanes per instruction; `N` the block's n (its loops over n values unrolled), or 0
/// for any n.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
fn integrate_avx512<const N: usize>(
    simd: Avx512,
    block: LaneBlock,
    schedule: &Schedule,
    grid: &StepGrid,
) -> std::result::Result<ResultBlock, NonfiniteStart> {
    integrate::<_, N>(simd, block, schedule, grid)
}

/// [`integrate`] compiled for AVX2: the block's loops, inlined into it, run 4 lanes per
/// instruction; `N` as for `integrate_avx512`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn integrate_avx2<const N: usize>(
    simd: Avx2,
    block: LaneBlock,
    schedule: &Schedule,
    grid: &StepGrid,
) -> std::result::Result<ResultBlock, NonfiniteStart> {
    integrate::<_, N>(simd, block, schedule, grid)
}

impl FastEngine for ContactPlan {
    type Member = ContactMember;
    type Block = ContactBlock;
    type Shared = ();

    fn block_members(&self) -> usize {
        self.fast_block_members()
    }

    fn prepare(&self, members: Vec<ContactMember>) -> Result<ContactBlock> {
        Ok(self.fast_block(members))
    }

    fn prepare_range(&self, _: &(), members: Range<usize>) -> Option<Result<ContactBlock>> {
        Some(self.fast_block_range(members))
    }

    fn run(&self, block: ContactBlock) -> Result<ResultBlock> {
        self.run_fast_block(block, SimdLevel::get())
    }
}
