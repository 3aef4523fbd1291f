//! The fast CPU engine of the linear-PH family: the step of the GPU kernel and its twin
//! (`linear_ph_step`), applied to blocks of members side by side.
//!
//! ```text
//!   δ = Δ v,  x_{k+1} = x_k + δ                       (Kahan-compensated)
//!   y = Y v,  port = h yᵀ U_k,  dissipated = h ‖W v‖²
//!   stored = δᵀ Q (x_k + δ/2),  supplied = port − dissipated
//! ```
//!
//! A block holds [`LANES`]·G members structure-of-arrays: every operator entry, state
//! component and energy sum is a [`Lanes`] value (one SIMD register with AVX-512), so each
//! operation advances [`LANES`] members. A block runs its steps window by window with all G
//! groups interleaved per step — independent work that hides the latency of one member's
//! chain of dependent operations — while its operators stay in L1/L2 (G is chosen from the
//! operator size). Only what the recording switches on is computed: a final-state-only run
//! applies Δ and nothing else; y is formed at record points unless the energy balance needs
//! it every step.
//!
//! The non-finite status (the first step after which x or a step energy was not finite)
//! costs nothing while members stay finite: non-finite values are absorbing in x and in
//! the energy totals, so each window of at most [`CHECK_WINDOW`] steps is checked once at
//! its end, from a snapshot taken at its start; a group with a member that went bad is
//! rewound and replays the window checking every step. A member whose sums overflowed
//! while every step stayed finite keeps its group checking every step from then on.
//!
//! With FMA ([`SimdLevel::Avx512`], [`SimdLevel::Avx2`]) multiply-adds are rounded once;
//! the portable level rounds them like the twin, whose results it reproduces bit for bit.

#[cfg(target_arch = "x86_64")]
use super::lanes::{Avx2, Avx512};
use super::lanes::{LANES, Lanes, Portable, Simd, SimdLevel, ZERO};
use crate::error::Result;
use crate::method::StepOperators;
use crate::plan::{LinearPhPlan, Member, MemberResult, Recording};

/// Steps between the finiteness checks of a block (see the module documentation).
pub const CHECK_WINDOW: usize = 64;

/// Bytes of one group's operators the block sizing aims to keep in L1.
const OPERATOR_CACHE_BYTES: usize = 32 << 10;

/// Most groups per block.
const MAX_GROUPS: usize = 8;

/// The sizes of a block's step: what is applied under the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StepShape {
    /// n.
    states: usize,
    /// s·m stage inputs.
    inputs: usize,
    /// Rows of Y applied (s·m, or 0 when neither outputs nor energies are recorded).
    y_rows: usize,
    /// Rows of W (s·rank with energies, else 0).
    w_rows: usize,
    recording: Recording,
}

impl StepShape {
    /// The step of n states, s stages and m inputs with W of s·`rank` rows, as far as
    /// `recording` needs it.
    fn new(n: usize, stages: usize, m: usize, rank: usize, recording: Recording) -> Self {
        let sm = stages * m;
        StepShape {
            states: n,
            inputs: sm,
            y_rows: if recording.energy || recording.outputs {
                sm
            } else {
                0
            },
            w_rows: if recording.energy { stages * rank } else { 0 },
            recording,
        }
    }

    /// p = n + s·m.
    fn width(&self) -> usize {
        self.states + self.inputs
    }

    /// Entries per member: Δ, Y, W (p each row), Q (n² with energies).
    fn entries(&self) -> usize {
        let q = if self.recording.energy {
            self.states * self.states
        } else {
            0
        };
        (self.states + self.y_rows + self.w_rows) * self.width() + q
    }

    /// Groups per block: as many as keep the block's operators within
    /// [`OPERATOR_CACHE_BYTES`], at least 1, at most [`MAX_GROUPS`].
    fn groups(&self) -> usize {
        (OPERATOR_CACHE_BYTES / (self.entries() * std::mem::size_of::<Lanes>()).max(1))
            .clamp(1, MAX_GROUPS)
    }
}

/// Members of the fast engine's blocks for `plan`.
pub fn block_members(plan: &LinearPhPlan) -> usize {
    // rank ≤ n bounds the block's operator size.
    let (n, stages) = (plan.states(), plan.scheme.stages);
    let shape = StepShape::new(n, stages, plan.inputs_count(), n, plan.recording());
    LANES * shape.groups()
}

/// The compensated energy sums of one group (Neumaier), as the kernel keeps them.
#[derive(Debug, Clone, Copy)]
struct Sums {
    totals: [Lanes; 4],
    totals_comp: [Lanes; 4],
    window: [Lanes; 4],
    window_comp: [Lanes; 4],
    max_residual: Lanes,
}

impl Default for Sums {
    fn default() -> Self {
        Sums {
            totals: [ZERO; 4],
            totals_comp: [ZERO; 4],
            window: [ZERO; 4],
            window_comp: [ZERO; 4],
            max_residual: ZERO,
        }
    }
}

/// One group's state and work buffers.
#[derive(Debug, Clone)]
struct Group {
    /// Δ | Y | W | Q, row-major, one [`Lanes`] per entry.
    ops: Vec<Lanes>,
    x: Vec<Lanes>,
    carry: Vec<Lanes>,
    sums: Sums,
    /// y of the last step that formed it.
    y: Vec<Lanes>,
    /// 0 while finite, else the first step after which the member was not.
    status: [u64; LANES],
    /// Checks every step (a member's sums overflowed while its steps stayed finite).
    checking: bool,
}

/// What a window restores when a group replays it.
#[derive(Debug, Clone)]
struct Snapshot {
    x: Vec<Lanes>,
    carry: Vec<Lanes>,
    sums: Sums,
}

/// A block of members prepared for the fast engine.
#[derive(Debug, Clone)]
pub struct FastBlock {
    shape: StepShape,
    /// Members (the last group may be padded with copies of the block's first member).
    members: usize,
    groups: Vec<Group>,
    results: Vec<MemberResult>,
}

impl FastBlock {
    /// Builds the step operators of `members` (at least one, at most [`block_members`])
    /// under `plan` and lays them out lane by lane.
    pub fn new(plan: &LinearPhPlan, members: &[Member]) -> Result<FastBlock> {
        assert!(!members.is_empty(), "a block has at least one member");
        let operators: Vec<StepOperators> = members
            .iter()
            .map(|member| StepOperators::recording(plan, member, plan.recording()))
            .collect::<Result<_>>()?;
        let recording = plan.recording();
        let first = &operators[0];
        let (n, sm) = (first.states, first.stages * first.inputs);
        let rank = operators.iter().map(|o| o.rank).max().unwrap_or(0);
        let shape = StepShape::new(n, first.stages, first.inputs, rank, recording);
        let spec = plan.record_spec();
        let records = plan.grid.records();
        let results = members
            .iter()
            .map(|member| {
                let mut result = MemberResult::with_capacity(spec, records);
                if recording.trajectory {
                    result.trajectory.extend(member.x0.iter());
                }
                result
            })
            .collect();
        let groups = (0..members.len().div_ceil(LANES))
            .map(|g| {
                // Lane l of group g is member g·LANES + l, or a copy of the block's first.
                let lane = |l: usize| {
                    let i = g * LANES + l;
                    if i < members.len() { i } else { 0 }
                };
                let mut ops = Vec::with_capacity(shape.entries());
                let gather = |value: &dyn Fn(&StepOperators) -> f64| -> Lanes {
                    std::array::from_fn(|l| value(&operators[lane(l)]))
                };
                let p = shape.width();
                for row in 0..n {
                    for c in 0..p {
                        ops.push(gather(&|o| o.delta[row * p + c]));
                    }
                }
                for row in 0..shape.y_rows {
                    for c in 0..p {
                        ops.push(gather(&|o| o.output[row * p + c]));
                    }
                }
                if shape.w_rows > 0 {
                    for stage in 0..first.stages {
                        for k in 0..rank {
                            for c in 0..p {
                                // Rows beyond a member's rank are zero and change nothing.
                                ops.push(gather(&|o| {
                                    if k < o.rank {
                                        o.dissipation[(stage * o.rank + k) * p + c]
                                    } else {
                                        0.0
                                    }
                                }));
                            }
                        }
                    }
                }
                if recording.energy {
                    for e in 0..n * n {
                        ops.push(gather(&|o| o.q[e]));
                    }
                }
                let x = (0..n)
                    .map(|r| std::array::from_fn(|l| members[lane(l)].x0[r]))
                    .collect();
                Group {
                    ops,
                    x,
                    carry: vec![ZERO; n],
                    sums: Sums::default(),
                    y: vec![ZERO; sm],
                    status: [0; LANES],
                    checking: false,
                }
            })
            .collect();
        Ok(FastBlock {
            shape,
            members: members.len(),
            groups,
            results,
        })
    }

    /// Integrates the block through `plan`'s grid with the instruction set `level` and
    /// returns its members' results.
    pub fn run(mut self, plan: &LinearPhPlan, level: SimdLevel) -> Vec<MemberResult> {
        let grid = &plan.grid;
        let h = grid.h;
        let mut snapshots: Vec<Snapshot> = Vec::with_capacity(self.groups.len());
        let mut k = 0;
        while k < grid.steps {
            let next_record = ((k / grid.record_every + 1) * grid.record_every).min(grid.steps);
            let end = (k + CHECK_WINDOW).min(next_record);
            let record = end == next_record;
            let inputs = plan.inputs.window(k, end - k);
            snapshots.clear();
            snapshots.extend(self.groups.iter().map(|g| Snapshot {
                x: g.x.clone(),
                carry: g.carry.clone(),
                sums: g.sums,
            }));
            let window = Window {
                shape: self.shape,
                h,
                first_step: k,
                steps: end - k,
                inputs: &inputs,
                y_at_end: record && self.shape.recording.outputs,
            };
            for checking in [false, true] {
                let mut selected: Vec<&mut Group> = self
                    .groups
                    .iter_mut()
                    .filter(|g| g.checking == checking)
                    .collect();
                if !selected.is_empty() {
                    advance(level, &window, &mut selected, checking);
                }
            }
            // A member that went bad in a window that did not check: rewind and replay.
            for (group, snapshot) in self.groups.iter_mut().zip(&snapshots) {
                if group.checking {
                    continue;
                }
                let suspect = suspects(group, self.shape.recording);
                if suspect.iter().any(|&s| s) {
                    group.x.clone_from(&snapshot.x);
                    group.carry.clone_from(&snapshot.carry);
                    group.sums = snapshot.sums;
                    advance(level, &window, &mut [&mut *group], true);
                    // Sums that overflowed while every step stayed finite.
                    if (0..LANES).any(|l| suspect[l] && group.status[l] == 0) {
                        group.checking = true;
                    }
                }
            }
            if record {
                self.record();
            }
            k = end;
        }
        self.finish()
    }

    /// Appends the record point's values of every member and opens a new energy window.
    fn record(&mut self) {
        let recording = self.shape.recording;
        let outputs_channel = usize::from(recording.energy);
        for (g, group) in self.groups.iter_mut().enumerate() {
            for l in 0..LANES {
                let Some(result) = self.results.get_mut(g * LANES + l) else {
                    break;
                };
                if recording.trajectory {
                    result.trajectory.extend(group.x.iter().map(|x| x[l]));
                }
                if recording.energy {
                    let sums = &group.sums;
                    result.channels[0]
                        .extend((0..4).map(|c| sums.window[c][l] + sums.window_comp[c][l]));
                }
                if recording.outputs {
                    result.channels[outputs_channel].extend(group.y.iter().map(|y| y[l]));
                }
            }
            group.sums.window = [ZERO; 4];
            group.sums.window_comp = [ZERO; 4];
        }
    }

    /// The members' final states, totals and status.
    fn finish(mut self) -> Vec<MemberResult> {
        let energy = self.shape.recording.energy;
        for (i, result) in self.results.iter_mut().enumerate() {
            let (group, l) = (&self.groups[i / LANES], i % LANES);
            result.final_state = group.x.iter().map(|x| x[l]).collect();
            if energy {
                let sums = &group.sums;
                result.totals = (0..4)
                    .map(|c| sums.totals[c][l] + sums.totals_comp[c][l])
                    .collect();
                result.totals.push(sums.max_residual[l]);
            }
            result.nonfinite_step = (group.status[l] != 0).then_some(group.status[l]);
        }
        debug_assert_eq!(self.results.len(), self.members);
        self.results
    }
}

/// Lanes still marked finite whose state or energy sums are not: they went bad in the
/// window (or their sums overflowed).
fn suspects(group: &Group, recording: Recording) -> [bool; LANES] {
    std::array::from_fn(|l| {
        if group.status[l] != 0 {
            return false;
        }
        let state = group.x.iter().chain(&group.carry).all(|v| v[l].is_finite());
        let sums = !recording.energy || {
            let s = &group.sums;
            s.totals
                .iter()
                .chain(&s.totals_comp)
                .chain(std::iter::once(&s.max_residual))
                .all(|v| v[l].is_finite())
        };
        !(state && sums)
    })
}

/// One window of steps for some groups of a block.
struct Window<'a> {
    shape: StepShape,
    h: f64,
    /// Steps completed before the window.
    first_step: usize,
    steps: usize,
    /// The window's stage inputs, `steps` × s·m.
    inputs: &'a [f64],
    /// Whether the window's last step forms y for a record point.
    y_at_end: bool,
}

/// The sizes n and s·m of a step: n known at compile time ([`Fixed`], for small members:
/// the state loops unroll and the state lives in registers) or at run time ([`Dynamic`]).
trait Dims: Copy {
    /// n values (a local array for [`Fixed`] sizes, so that they live in registers).
    type States: Buffer;
    /// s·m values.
    type Inputs: Buffer;
    fn n(self) -> usize;
    fn sm(self) -> usize;
    fn states(self) -> Self::States;
    fn inputs(self) -> Self::Inputs;
}

/// Storage of [`Lanes`] values.
trait Buffer {
    fn lanes(&self) -> &[Lanes];
    fn lanes_mut(&mut self) -> &mut [Lanes];
}

/// Arrays (registers for small n) and vectors alike.
impl<T: AsRef<[Lanes]> + AsMut<[Lanes]>> Buffer for T {
    #[inline(always)]
    fn lanes(&self) -> &[Lanes] {
        self.as_ref()
    }
    #[inline(always)]
    fn lanes_mut(&mut self) -> &mut [Lanes] {
        self.as_mut()
    }
}

#[derive(Clone, Copy)]
struct Fixed<const N: usize> {
    sm: usize,
}

impl<const N: usize> Dims for Fixed<N> {
    type States = [Lanes; N];
    type Inputs = Vec<Lanes>;
    #[inline(always)]
    fn states(self) -> [Lanes; N] {
        [ZERO; N]
    }
    fn inputs(self) -> Vec<Lanes> {
        vec![ZERO; self.sm]
    }
    #[inline(always)]
    fn n(self) -> usize {
        N
    }
    #[inline(always)]
    fn sm(self) -> usize {
        self.sm
    }
}

#[derive(Clone, Copy)]
struct Dynamic {
    n: usize,
    sm: usize,
}

impl Dims for Dynamic {
    type States = Vec<Lanes>;
    type Inputs = Vec<Lanes>;
    fn states(self) -> Vec<Lanes> {
        vec![ZERO; self.n]
    }
    fn inputs(self) -> Vec<Lanes> {
        vec![ZERO; self.sm]
    }
    #[inline(always)]
    fn n(self) -> usize {
        self.n
    }
    #[inline(always)]
    fn sm(self) -> usize {
        self.sm
    }
}

/// Advances `groups` through `window` with `level`'s instructions; `checking` checks every
/// step's values and sets the status of members that go bad.
fn advance(level: SimdLevel, window: &Window, groups: &mut [&mut Group], checking: bool) {
    let energy = window.shape.recording.energy;
    match level {
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx512 => {
            let simd = Avx512::new().expect("SimdLevel::get found AVX-512");
            // SAFETY: the token exists, so the CPU has the wrapper's features.
            unsafe { advance_avx512(simd, window, groups, checking, energy) }
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => {
            let simd = Avx2::new().expect("SimdLevel::get found AVX2");
            // SAFETY: as above.
            unsafe { advance_avx2(simd, window, groups, checking, energy) }
        }
        _ => advance_in(Portable, window, groups, checking, energy),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
fn advance_avx512(
    simd: Avx512,
    window: &Window,
    groups: &mut [&mut Group],
    checking: bool,
    energy: bool,
) {
    advance_in(simd, window, groups, checking, energy);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn advance_avx2(
    simd: Avx2,
    window: &Window,
    groups: &mut [&mut Group],
    checking: bool,
    energy: bool,
) {
    advance_in(simd, window, groups, checking, energy);
}

/// Calls `advance_with` with the state size as [`Fixed`] when it is small (n ≤ 8), else
/// [`Dynamic`].
#[inline(always)]
fn advance_in<S: Simd>(
    simd: S,
    window: &Window,
    groups: &mut [&mut Group],
    checking: bool,
    energy: bool,
) {
    let sm = window.shape.inputs;
    macro_rules! dispatch {
        ($($n:literal),*) => {
            match (window.shape.states, energy) {
                $(
                    ($n, false) => advance_with::<S, Fixed<$n>, false>(
                        simd, Fixed { sm }, window, groups, checking),
                    ($n, true) => advance_with::<S, Fixed<$n>, true>(
                        simd, Fixed { sm }, window, groups, checking),
                )*
                (n, false) => advance_with::<S, Dynamic, false>(
                    simd, Dynamic { n, sm }, window, groups, checking),
                (n, true) => advance_with::<S, Dynamic, true>(
                    simd, Dynamic { n, sm }, window, groups, checking),
            }
        };
    }
    dispatch!(1, 2, 3, 4, 5, 6, 7, 8)
}

/// A group's values while it runs a window, in local storage (registers for small n):
/// x, its Kahan carry, δ, x + δ/2, y, the energy sums and the last step's energies.
struct Work<D: Dims> {
    x: D::States,
    carry: D::States,
    delta: D::States,
    mid: D::States,
    y: D::Inputs,
    sums: Sums,
    /// stored, port and dissipated energies of the last step (with energies).
    last: [Lanes; 3],
}

impl<D: Dims> Work<D> {
    #[inline(always)]
    fn load(dims: D, group: &Group) -> Self {
        let mut work: Work<D> = Work {
            x: dims.states(),
            carry: dims.states(),
            delta: dims.states(),
            mid: dims.states(),
            y: dims.inputs(),
            sums: group.sums,
            last: [ZERO; 3],
        };
        work.x.lanes_mut().copy_from_slice(&group.x);
        work.carry.lanes_mut().copy_from_slice(&group.carry);
        work
    }

    /// Writes the window's results back to `group` (y when the window formed it).
    #[inline(always)]
    fn store(&self, group: &mut Group, y_formed: bool) {
        group.x.copy_from_slice(self.x.lanes());
        group.carry.copy_from_slice(self.carry.lanes());
        group.sums = self.sums;
        if y_formed {
            let y = self.y.lanes();
            group.y[..y.len()].copy_from_slice(y);
        }
    }
}

/// The window's steps for `groups`, two at a time: each pair keeps its values in local
/// storage for the whole window and interleaves its two independent steps.
#[inline(always)]
fn advance_with<S: Simd, D: Dims, const ENERGY: bool>(
    simd: S,
    dims: D,
    window: &Window,
    groups: &mut [&mut Group],
    checking: bool,
) {
    let y_formed = ENERGY || window.y_at_end;
    let y_formed = y_formed && window.shape.y_rows > 0;
    for pair in groups.chunks_mut(2) {
        match pair {
            [a, b] => {
                let mut wa = Work::load(dims, a);
                let mut wb = Work::load(dims, b);
                for k in 0..window.steps {
                    let (u, form_y) = window.step_inputs::<ENERGY>(k, dims.sm());
                    step::<S, D, ENERGY>(simd, dims, window, u, form_y, &a.ops, &mut wa);
                    step::<S, D, ENERGY>(simd, dims, window, u, form_y, &b.ops, &mut wb);
                    if checking {
                        let done = (window.first_step + k + 1) as u64;
                        check(&wa, &mut a.status, done, ENERGY);
                        check(&wb, &mut b.status, done, ENERGY);
                    }
                }
                wa.store(a, y_formed);
                wb.store(b, y_formed);
            }
            [a] => {
                let mut wa = Work::load(dims, a);
                for k in 0..window.steps {
                    let (u, form_y) = window.step_inputs::<ENERGY>(k, dims.sm());
                    step::<S, D, ENERGY>(simd, dims, window, u, form_y, &a.ops, &mut wa);
                    if checking {
                        let done = (window.first_step + k + 1) as u64;
                        check(&wa, &mut a.status, done, ENERGY);
                    }
                }
                wa.store(a, y_formed);
            }
            _ => unreachable!("chunks of at most two"),
        }
    }
}

impl Window<'_> {
    /// Step k's stage inputs, and whether the step forms y.
    #[inline(always)]
    fn step_inputs<const ENERGY: bool>(&self, k: usize, sm: usize) -> (&[f64], bool) {
        let form_y = ENERGY || (self.y_at_end && k + 1 == self.steps);
        (&self.inputs[k * sm..(k + 1) * sm], form_y)
    }
}

/// `rows` rows of `ops` (each p = n + s·m wide) applied to v = [x; u]:
/// `out(row, Σ_c ops[row, c] v_c)` with the sum in column order, [`Simd::ACCUMULATORS`]
/// rows at a time (independent accumulators that share the loads of v).
#[inline(always)]
fn apply_rows<S: Simd, D: Dims>(
    simd: S,
    dims: D,
    ops: &[Lanes],
    rows: usize,
    x: &[Lanes],
    u: &[f64],
    out: impl FnMut(usize, S::V),
) {
    if S::ACCUMULATORS >= 8 {
        apply_row_blocks::<S, D, 8>(simd, dims, ops, rows, x, u, out)
    } else {
        apply_row_blocks::<S, D, 4>(simd, dims, ops, rows, x, u, out)
    }
}

/// [`apply_rows`] in blocks of `BLOCK` rows, then row by row.
#[inline(always)]
fn apply_row_blocks<S: Simd, D: Dims, const BLOCK: usize>(
    simd: S,
    dims: D,
    ops: &[Lanes],
    rows: usize,
    x: &[Lanes],
    u: &[f64],
    mut out: impl FnMut(usize, S::V),
) {
    let (n, sm) = (dims.n(), dims.sm());
    let p = n + sm;
    let (x, u) = (&x[..n], &u[..sm]);
    let mut row = 0;
    while row + BLOCK <= rows {
        let block = &ops[row * p..(row + BLOCK) * p];
        let mut acc = [simd.zero(); BLOCK];
        for (c, xc) in x.iter().enumerate() {
            let xc = simd.load(xc);
            for (b, acc) in acc.iter_mut().enumerate() {
                *acc = simd.mul_add(simd.load(&block[b * p + c]), xc, *acc);
            }
        }
        for (j, &uj) in u.iter().enumerate() {
            let uj = simd.splat(uj);
            for (b, acc) in acc.iter_mut().enumerate() {
                *acc = simd.mul_add(simd.load(&block[b * p + n + j]), uj, *acc);
            }
        }
        for (b, acc) in acc.into_iter().enumerate() {
            out(row + b, acc);
        }
        row += BLOCK;
    }
    while row < rows {
        let entries = &ops[row * p..(row + 1) * p];
        let mut acc = simd.zero();
        for (o, xc) in entries[..n].iter().zip(x) {
            acc = simd.mul_add(simd.load(o), simd.load(xc), acc);
        }
        for (o, &uj) in entries[n..].iter().zip(u) {
            acc = simd.mul_add(simd.load(o), simd.splat(uj), acc);
        }
        out(row, acc);
        row += 1;
    }
}

/// Lane by lane Neumaier addition of `part` to (`sum`, `comp`) (as `CompensatedSum::add`).
#[inline(always)]
fn neumaier<S: Simd>(simd: S, sum: &mut Lanes, comp: &mut Lanes, part: S::V) {
    let s = simd.load(sum);
    let t = simd.add(s, part);
    let lost = simd.select_abs_ge(
        s,
        part,
        simd.add(simd.sub(s, t), part),
        simd.add(simd.sub(part, t), s),
    );
    simd.store(comp, simd.add(simd.load(comp), lost));
    simd.store(sum, t);
}

/// One step of one group (the twin's `linear_ph_step`, lane by lane), on its operators
/// `ops` and its values in `work`.
#[inline(always)]
fn step<S: Simd, D: Dims, const ENERGY: bool>(
    simd: S,
    dims: D,
    window: &Window,
    u: &[f64],
    form_y: bool,
    ops: &[Lanes],
    work: &mut Work<D>,
) {
    let shape = &window.shape;
    let (n, p) = (dims.n(), dims.n() + dims.sm());
    let (delta_ops, rest) = ops.split_at(n * p);
    let (y_ops, rest) = rest.split_at(shape.y_rows * p);
    let (w_ops, q_ops) = rest.split_at(shape.w_rows * p);
    let x = work.x.lanes_mut();
    let carry = work.carry.lanes_mut();
    let delta = work.delta.lanes_mut();
    let mid = work.mid.lanes_mut();
    apply_rows(simd, dims, delta_ops, n, x, u, |r, d| {
        simd.store(&mut delta[r], d)
    });
    let mut port = simd.zero();
    if form_y {
        let y = work.y.lanes_mut();
        apply_rows(simd, dims, y_ops, shape.y_rows, x, u, |row, acc| {
            simd.store(&mut y[row], acc);
            port = simd.mul_add(acc, simd.splat(u[row]), port);
        });
    }
    let mut stored = simd.zero();
    let mut dissipated = simd.zero();
    if ENERGY {
        apply_rows(simd, dims, w_ops, shape.w_rows, x, u, |_, w| {
            dissipated = simd.mul_add(w, w, dissipated);
        });
        let half = simd.splat(0.5);
        for ((m, x), d) in mid.iter_mut().zip(x.iter()).zip(delta.iter()) {
            simd.store(m, simd.add(simd.load(x), simd.mul(half, simd.load(d))));
        }
        for (row, d) in q_ops.chunks_exact(n).zip(delta.iter()) {
            let mut q_mid = simd.zero();
            for (q, m) in row.iter().zip(mid.iter()) {
                q_mid = simd.mul_add(simd.load(q), simd.load(m), q_mid);
            }
            stored = simd.mul_add(simd.load(d), q_mid, stored);
        }
    }
    // x ← x + δ, Kahan-compensated.
    for ((x, c), d) in x.iter_mut().zip(carry.iter_mut()).zip(delta.iter()) {
        let (xv, cv) = (simd.load(x), simd.load(c));
        let y = simd.sub(simd.load(d), cv);
        let t = simd.add(xv, y);
        simd.store(c, simd.sub(simd.sub(t, xv), y));
        simd.store(x, t);
    }
    if ENERGY {
        let h = simd.splat(window.h);
        let port_h = simd.mul(h, port);
        let dissipated_h = simd.mul(h, dissipated);
        let supplied = simd.sub(port_h, dissipated_h);
        let sums = &mut work.sums;
        for (c, part) in [stored, supplied, port_h, dissipated_h]
            .into_iter()
            .enumerate()
        {
            neumaier(simd, &mut sums.totals[c], &mut sums.totals_comp[c], part);
            neumaier(simd, &mut sums.window[c], &mut sums.window_comp[c], part);
        }
        let max = simd.running_max_abs(simd.load(&sums.max_residual), simd.sub(stored, supplied));
        simd.store(&mut sums.max_residual, max);
        for (last, value) in work.last.iter_mut().zip([stored, port_h, dissipated_h]) {
            simd.store(last, value);
        }
    }
}

/// Marks the members whose step `done` left x or (with `energy`) a step energy
/// non-finite in `work`, unless `status` already marks them.
#[inline(always)]
fn check<D: Dims>(work: &Work<D>, status: &mut [u64; LANES], done: u64, energy: bool) {
    for (l, status) in status.iter_mut().enumerate() {
        if *status != 0 {
            continue;
        }
        let energies = !energy || work.last.iter().all(|e| e[l].is_finite());
        if !(energies && work.x.lanes().iter().all(|x| x[l].is_finite())) {
            *status = done;
        }
    }
}
