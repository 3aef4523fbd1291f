//! A model family as the backends see it. A family declares, in one place, its members
//! (materialised from (seed, i)), what they record and its f64 reference integrator
//! ([`Family`]), and the capabilities it has: a WGSL kernel with the kernel's layouts and
//! CPU twin ([`GpuKernel`]), a fast CPU engine ([`FastEngine`]). The CPU backend and the one
//! executor (on a GPU, or on the CPU with the twin) run any family through these traits, so
//! adding a family adds implementations and nothing in them.

use std::borrow::Cow;
use std::convert::Infallible;
use std::marker::PhantomData;

use super::layout::{Layout, MemberView};
use super::twin::TwinBindings;
use crate::error::{Error, Result};
use crate::plan::{MemberResult, RecordSpec, ResultBlock, SharedStream, StepGrid};

/// How the CPU backend integrates a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuPath {
    /// The family's reference integrator (f64, the method as defined).
    Reference,
    /// The twin of the GPU kernel: the same operations in the same loop shape, in f64, run
    /// by the executor over the same chunks, buffers and dispatch windows as on a GPU.
    Twin,
    /// The fast engine: the kernel's step on SIMD blocks of members
    /// ([`Family::fast_engine`]); the reference integrator where a family has none.
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
    /// ones in `shaders/shared/`: files of its `shaders/<family>/`, or WGSL the family
    /// generates for the run (a model's expressions as straight-line functions).
    pub modules: Vec<(&'static str, Cow<'static, str>)>,
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
    /// Reals of per-member scratch (the `scratch` buffer, structure-of-arrays: entry e of
    /// member i at e · members + i): the kernel's working memory beyond its registers, of a
    /// size fixed by the plan (a banded Newton matrix of a whole path). It lives on the
    /// device for a chunk's dispatches, zero at the chunk's start, and is never uploaded
    /// or read back; the chunking counts it against the storage-binding limit like any
    /// other per-member buffer. 0 for kernels that need none.
    pub scratch: usize,
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

impl KernelSource {
    /// The specialisation constant `name`, as the kernel sees it.
    ///
    /// # Panics
    /// When the variant declares no such constant (a programming error in a family's twin).
    pub fn constant(&self, name: &str) -> u32 {
        self.constants
            .iter()
            .find(|(known, _)| *known == name)
            .map_or_else(
                || panic!("kernel {} has no constant {name}", self.name),
                |(_, value)| *value,
            )
    }
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

/// A chunk built from member indices ([`GpuKernel::kernel_chunk_range`]).
pub struct RangeChunk {
    pub chunk: KernelChunk,
    /// Per member, its result holding the records at t = 0.
    pub starts: Vec<MemberResult>,
}

/// What every model family describes: its members, what they record, and its f64 reference
/// integrator. Its optional capabilities are traits of their own, reached through
/// [`Family::gpu_kernel`] and [`Family::fast_engine`]; a family without one names
/// [`Absent`] as its type and returns `None`.
pub trait Family: Sync {
    /// One member: its parameters and initial state.
    type Member: Clone + Send + Sync;
    /// Its GPU kernel (with the kernel's CPU twin), or [`Absent`].
    type Kernel: GpuKernel<Member = Self::Member>;
    /// Its fast CPU engine, or [`Absent`].
    type Fast: FastEngine<Member = Self::Member>;

    /// The family's name in configs (`linear-ph`, `contact`).
    fn name(&self) -> &'static str;
    /// The method, as printed and written to summary.json (`gauss-2`, `splitting strang`).
    fn method_label(&self) -> String;
    fn grid(&self) -> &StepGrid;
    fn member_count(&self) -> usize;
    /// The size n of a member as tables report it: its state dimension, or its degrees of
    /// freedom where the state pairs positions with momenta.
    fn states(&self) -> usize;
    /// The same plan with its first `count` members (1 ≤ `count` ≤ the member count):
    /// member i depends on (seed, i) alone, so they are the same members.
    fn with_member_count(&self, count: usize) -> Result<Self>
    where
        Self: Sized;
    /// Member `index`, a function of (seed, index) alone.
    fn member(&self, index: usize) -> Result<Self::Member>;
    /// What each member records.
    fn record_spec(&self) -> &RecordSpec;
    /// The run's description for summary.json (`scheme`, sizes), in order.
    fn describe(&self) -> serde_json::Map<String, serde_json::Value>;

    /// Records the sample at t = 0 (the first trajectory row and the first row of every
    /// `at_start` channel), on the host in f64, for every backend.
    fn record_start(&self, member: &Self::Member, out: &mut MemberResult);

    /// Integrates one member with the family's reference integrator: f64, the method as
    /// defined.
    fn reference(&self, member: &Self::Member) -> Result<MemberResult>;

    /// Values shared by all members per step (inputs at the stage times, time functions),
    /// uploaded to a GPU dispatch by dispatch.
    fn shared_stream(&self) -> &SharedStream;

    /// Checks the values the members share per step (finite, no certain overflow). Plans
    /// check values kept in memory when they are built; a longer stream, sampled per
    /// window, costs a pass over all steps, so the backends check it here once the run's
    /// resources have been checked, before any work.
    fn check_stream(&self) -> Result<()> {
        Ok(())
    }

    /// The family's GPU kernel and its CPU twin; `None` when it has none.
    fn gpu_kernel(&self) -> Option<&Self::Kernel>;

    /// The family's fast CPU engine; `None` when it has none (the CPU path then runs the
    /// reference integrator).
    fn fast_engine(&self) -> Option<&Self::Fast>;

    /// The index, in the plan that [`Family::fast_engine`] and [`Family::gpu_kernel`]
    /// belong to, of this family's member `index`: `index` itself, or the offset index for
    /// a view on some of a plan's members (a shard).
    fn engine_index(&self, index: usize) -> usize {
        index
    }
}

/// Prepares `family`'s members `members` (consecutive, at most
/// [`FastEngine::block_members`]) for `engine`, given what the run's blocks `shared`
/// ([`FastEngine::prepare_shared`]): by the engine itself where it builds them without
/// materialising each member ([`FastEngine::prepare_range`]), else from
/// [`Family::member`].
pub fn prepare_block<F: Family>(
    family: &F,
    engine: &F::Fast,
    shared: &<F::Fast as FastEngine>::Shared,
    members: std::ops::Range<usize>,
) -> Result<<F::Fast as FastEngine>::Block> {
    let first = family.engine_index(members.start);
    if let Some(block) = engine.prepare_range(shared, first..first + members.len()) {
        return block;
    }
    let members = members
        .map(|i| family.member(i))
        .collect::<Result<Vec<_>>>()?;
    engine.prepare(members)
}

/// The GPU kernel of `family`; an error naming `--backend` when it has none.
pub fn kernel_of<F: Family>(family: &F) -> Result<&F::Kernel> {
    family.gpu_kernel().ok_or_else(|| no_kernel(family.name()))
}

/// The error for a GPU path or twin asked of a family without a kernel.
pub fn no_kernel(family: &str) -> Error {
    Error::invalid(
        "--backend",
        format!(
            "{family} runs on the CPU only: the family has no GPU kernel; use --backend cpu or reference"
        ),
    )
}

/// A family's GPU kernel as the executor runs it: its variants and layouts, how a chunk of
/// members is packed and decoded, and its CPU twin (the same operations in the same loop
/// shape, in f64).
pub trait GpuKernel: Sync {
    type Member;

    /// The kernel variant with the largest buffers and loop counts of this run, to size
    /// chunks and dispatches; an error when no variant can run the plan.
    fn kernel_bound(&self) -> Result<KernelSource>;
    /// The kernel variant, packed parameters and initial state of a chunk of members.
    fn kernel_chunk(&self, members: &[Self::Member]) -> Result<KernelChunk>;
    /// The chunk of the plan's members `members` built straight from the plan, with each
    /// member's records at t = 0 ([`Family::record_start`] under `spec`): the chunk
    /// [`GpuKernel::kernel_chunk`] packs from the drawn members, bit for bit, where the
    /// kernel can build it without materialising each member. `None` where it cannot, and
    /// where building fails: the executor then draws the members and reports the error as
    /// they give it.
    fn kernel_chunk_range(
        &self,
        _members: std::ops::Range<usize>,
        _spec: &RecordSpec,
    ) -> Option<RangeChunk> {
        None
    }
    /// The passes over the step grid, in order: the kernel sees the pass's index in
    /// `dispatch.sweep`, and the state persists from one pass to the next. Records are read
    /// back during the first pass only. One forward pass unless a kernel says otherwise.
    fn passes(&self) -> &[Direction] {
        &[Direction::Forward]
    }
    /// The `constants` buffer, in the order of [`KernelSource::constants_layout`].
    fn constants(&self) -> Vec<f64>;
    /// Appends one record slot of one member to its result.
    fn decode_record(&self, record: &MemberView, out: &mut MemberResult);
    /// Fills the final state and the totals of a member from its state at the end of the
    /// run (the engine decodes the `status` field itself).
    fn decode_final(&self, state: &MemberView, out: &mut MemberResult);
    /// The kernel's CPU twin: what the kernel's `main` does for member `member` of a
    /// dispatch (one invocation, or a workgroup's for a cooperative kernel) over the
    /// dispatch's `bindings`, with the same operations in the same loop shape, in f64. The
    /// executor calls it for every member of a dispatch, in parallel, in place of the GPU.
    fn twin(&self, kernel: &KernelSource, bindings: &TwinBindings, member: usize);
}

/// A family's fast CPU engine: the kernel's step on blocks of members side by side (SIMD
/// lanes), set up once per block.
pub trait FastEngine: Sync {
    type Member;
    /// Consecutive members prepared for the engine (their operators built and laid out
    /// side by side).
    type Block: Send;
    /// What every block of one run shares, prepared once before the run's first block
    /// (operators that all members have in common, say); `()` where blocks share nothing.
    type Shared: Sync + Default;

    /// Prepares what the blocks of a run share ([`FastEngine::Shared`]); nothing by
    /// default.
    fn prepare_shared(&self) -> Result<Self::Shared> {
        Ok(Self::Shared::default())
    }

    /// Members the engine integrates together.
    fn block_members(&self) -> usize;
    /// Prepares consecutive members (at most [`FastEngine::block_members`]): the per-member
    /// set-up, timed apart from the stepping by the benchmarks.
    fn prepare(&self, members: Vec<Self::Member>) -> Result<Self::Block>;
    /// Prepares the plan's members `members` (consecutive, at most
    /// [`FastEngine::block_members`]) straight from the plan, with what the run's blocks
    /// `shared`, the same block as [`FastEngine::prepare`] builds from them, where the
    /// engine can do that without materialising each member; `None` where it cannot.
    fn prepare_range(
        &self,
        _shared: &Self::Shared,
        _members: std::ops::Range<usize>,
    ) -> Option<Result<Self::Block>> {
        None
    }
    /// Integrates a prepared block and returns its members' results.
    fn run(&self, block: Self::Block) -> Result<ResultBlock>;
}

/// A capability a family does not have: a type with no values, so that its
/// [`Family::gpu_kernel`] or [`Family::fast_engine`] can only be `None`.
pub struct Absent<M>(Infallible, PhantomData<fn() -> M>);

impl<M> GpuKernel for Absent<M> {
    type Member = M;
    fn kernel_bound(&self) -> Result<KernelSource> {
        match self.0 {}
    }
    fn kernel_chunk(&self, _: &[M]) -> Result<KernelChunk> {
        match self.0 {}
    }
    fn constants(&self) -> Vec<f64> {
        match self.0 {}
    }
    fn decode_record(&self, _: &MemberView, _: &mut MemberResult) {
        match self.0 {}
    }
    fn decode_final(&self, _: &MemberView, _: &mut MemberResult) {
        match self.0 {}
    }
    fn twin(&self, _: &KernelSource, _: &TwinBindings, _: usize) {
        match self.0 {}
    }
}

impl<M> FastEngine for Absent<M> {
    type Member = M;
    type Block = Infallible;
    type Shared = ();
    fn block_members(&self) -> usize {
        match self.0 {}
    }
    fn prepare(&self, _: Vec<M>) -> Result<Infallible> {
        match self.0 {}
    }
    fn run(&self, block: Infallible) -> Result<ResultBlock> {
        match block {}
    }
}
