//! A model family as the backends see it. A family declares, in one place, its members
//! (materialised from (seed, i)), what they record, its f64 CPU integrators, and its WGSL
//! kernel with the kernel's layouts; the CPU backend and the one GPU executor run any family
//! through this trait, so adding a family adds an implementation and nothing in them.

use super::layout::{Layout, MemberView};
use crate::error::Result;
use crate::plan::{MemberResult, RecordSpec, SharedStream, StepGrid};

/// How the CPU backend integrates a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuPath {
    /// The family's reference integrator (f64, the method as defined).
    Reference,
    /// The twin of the GPU kernel: the same operations in the same loop shape, in f64.
    Twin,
    /// The fast engine: the kernel's step on SIMD blocks of members
    /// ([`Family::run_fast`]); the reference integrator where a family has none.
    Fast,
}

/// The direction in which a pass walks the step grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Dispatch windows in increasing step order.
    Forward,
    /// Dispatch windows in decreasing step order (a backward sweep: adjoints).
    Backward,
}

/// One specialised variant of a family's kernel, before the engine assembles it.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSource {
    /// The kernel's name: its file `shaders/<name>.wgsl` and its CPU twin's function.
    pub name: &'static str,
    /// The kernel body, whose `#import <module>` lines the engine resolves.
    pub body: &'static str,
    /// The family's own importable modules (name, source), looked up before the shared
    /// ones in `shaders/shared/`.
    pub modules: &'static [(&'static str, &'static str)],
    /// Specialisation constants, prepended as `const NAME: u32 = value;`.
    pub constants: Vec<(&'static str, u32)>,
    // Each layout below is prepended as its generated `<PREFIX>_<FIELD>` constants.
    /// Per-member state that persists across dispatches (read-write, structure-of-arrays).
    /// Every family declares a `status` field here: 0 while the member is finite, else the
    /// first step after which it was not; the kernel maintains it, the engine decodes it.
    pub state: Layout,
    /// One record slot (written at record points, read back after each dispatch).
    pub record: Layout,
    /// Run-wide reals in the `constants` buffer (h, method coefficients).
    pub constants_layout: Layout,
    /// Per-member parameters (the read-only `params` buffer).
    pub params: Layout,
    /// Members per workgroup: the workgroup size when one invocation runs a member, 1 when
    /// the whole workgroup cooperates on one member.
    pub members_per_workgroup: u32,
    /// Loop iterations one invocation executes per step, an upper bound counted from the
    /// kernel's loops (llvmpipe leaves a loop silently after 65535 iterations).
    pub loop_iterations_per_step: usize,
    /// Floating-point operations per member-step, counted from the kernel.
    pub flops_per_step: usize,
    /// Global-memory bytes per member-step, counted from the kernel in f64 (every buffer
    /// holds reals, so f32 moves half): what it loads and stores at every step in steady
    /// state. Loads and stores once per dispatch (state, a private copy of parameters) or
    /// per record point are not included.
    pub bytes_per_step: usize,
    /// Dispatch windows start at multiples of this many steps (1: anywhere), so that a
    /// kernel's segments (checkpoint intervals of a backward sweep) never straddle two
    /// dispatches.
    pub step_multiple: usize,
}

/// A chunk of members ready for the GPU.
#[derive(Debug, Clone)]
pub struct KernelChunk {
    pub kernel: KernelSource,
    /// The `params` buffer (f64, converted to the run's precision on upload).
    pub params: Vec<f64>,
    /// The initial `state` buffer, structure-of-arrays over the chunk's members.
    pub state: Vec<f64>,
}

/// What every model family provides to the backends.
pub trait Family: Sync {
    /// One member: its parameters and initial state.
    type Member: Send + Sync;

    /// The family's name in configs (`linear-ph`, `contact`).
    fn name(&self) -> &'static str;
    /// The method, as printed and written to summary.json (`gauss-2`, `splitting strang`).
    fn method_label(&self) -> String;
    fn grid(&self) -> &StepGrid;
    fn member_count(&self) -> usize;
    /// Member `index`, a function of (seed, index) alone.
    fn member(&self, index: usize) -> Result<Self::Member>;
    /// What each member records.
    fn record_spec(&self) -> &RecordSpec;
    /// The run's description for summary.json (`scheme`, sizes), in order.
    fn describe(&self) -> serde_json::Map<String, serde_json::Value>;

    /// Records the sample at t = 0 (the first trajectory row and the first row of every
    /// `at_start` channel), on the host in f64, for both backends.
    fn record_start(&self, member: &Self::Member, out: &mut MemberResult);

    /// Integrates one member on the CPU in f64 ([`CpuPath::Fast`] integrates it as a
    /// block of one).
    fn integrate(&self, member: &Self::Member, path: CpuPath) -> Result<MemberResult>;

    /// Consecutive members prepared for the fast CPU engine (their operators built and laid
    /// out side by side); the members themselves for a family without a fast engine.
    type FastBlock: Send;

    /// Members the fast CPU engine integrates together; 1 for a family without one.
    fn fast_block_members(&self) -> usize {
        1
    }

    /// Prepares consecutive members (at most [`Family::fast_block_members`]) for
    /// [`Family::run_fast`]: the per-member set-up, timed apart from the stepping by the
    /// benchmarks.
    fn prepare_fast(&self, members: Vec<Self::Member>) -> Result<Self::FastBlock>;

    /// Integrates a prepared block with the fast CPU engine (a family without one
    /// integrates each member by its reference integrator).
    fn run_fast(&self, block: Self::FastBlock) -> Result<Vec<MemberResult>>;

    /// The kernel variant with the largest buffers and loop counts of this run, to size
    /// chunks and dispatches; an error when no variant can run the plan.
    fn kernel_bound(&self) -> Result<KernelSource>;
    /// The kernel variant, packed parameters and initial state of a chunk of members.
    fn kernel_chunk(&self, members: &[Self::Member]) -> Result<KernelChunk>;
    /// The passes over the step grid, in order: the kernel sees the pass's index in
    /// `dispatch.sweep`, and the state persists from one pass to the next. Records are read
    /// back during the first pass only. One forward pass unless a family says otherwise.
    fn passes(&self) -> &[Direction] {
        &[Direction::Forward]
    }
    /// Values shared by all members per step (uploaded dispatch by dispatch).
    fn shared_stream(&self) -> &SharedStream;
    /// Checks the shared stream's values (finite, no certain overflow). Plans check a
    /// stream kept in memory when they are built; a longer one, sampled per window, costs a
    /// pass over all steps, so the backends check it here once the run's resources have been
    /// checked, before any work.
    fn check_stream(&self) -> Result<()> {
        Ok(())
    }
    /// The `constants` buffer, in the order of [`KernelSource::constants_layout`].
    fn constants(&self) -> Vec<f64>;
    /// Appends one record slot of one member to its result.
    fn decode_record(&self, record: &MemberView, out: &mut MemberResult);
    /// Fills the final state and the totals of a member from its state at the end of the
    /// run (the engine decodes the `status` field itself).
    fn decode_final(&self, state: &MemberView, out: &mut MemberResult);
}

/// The running maximum of |r| that keeps a NaN or an infinity once one arrives, where
/// `f64::max` would skip it (twin of `running_max` in shaders/shared/finite.wgsl).
#[expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "a NaN r must count as not below the maximum, as in the WGSL twin"
)]
pub fn running_max(current: f64, r: f64) -> f64 {
    if current.is_finite() && !(r <= current) {
        r
    } else {
        current
    }
}
