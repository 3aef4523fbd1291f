//! One window of steps of the fast engine: the kernel's step on a group of [`LANES`]
//! members, in registers for small n ([`Fixed`] sizes), compiled per instruction set
//! ([`advance`] dispatches to the AVX-512, AVX2 or portable build of the same code).
//!
//! ```text
//!   δ = Δ v,  x_{k+1} = x_k + δ                       (Kahan-compensated)
//!   y = Y v,  port = h yᵀ U_k,  dissipated = h ‖W v‖²
//!   stored = δᵀ Q (x_k + δ/2),  supplied = port − dissipated
//! ```

use super::{Group, StepShape, Sums};
#[cfg(target_arch = "x86_64")]
use crate::kernels::lanes::{Avx2, Avx512};
use crate::kernels::lanes::{LANES, Lanes, Portable, Simd, SimdLevel, ZERO};
use crate::plan::StepGrid;

/// One window of steps for some groups of a block.
pub(super) struct Window<'a> {
    pub shape: StepShape,
    /// The run's grid: h, and where its record points lie.
    pub grid: &'a StepGrid,
    /// Steps completed before the window.
    pub first_step: usize,
    pub steps: usize,
    /// The window's stage inputs, `steps` × s·m.
    pub inputs: &'a [f64],
}

/// The sizes n and s·m of a step: n known at compile time ([`Fixed`], for small members:
/// the state loops unroll and the state lives in registers) or at run time ([`Dynamic`]).
trait Dims: Copy {
    /// n where it is known at compile time, else `usize::MAX`.
    const STATES: usize;
    /// n values (a local array for [`Fixed`] sizes, so that they live in registers).
    type States: Buffer;
    fn n(self) -> usize;
    fn sm(self) -> usize;
    fn states(self) -> Self::States;
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

/// n known at compile time, and s·m too where `SM` > 0 (the steps of small members, whose
/// input loops then unroll as well); `SM` = 0 takes s·m from `sm`.
#[derive(Clone, Copy)]
struct Fixed<const N: usize, const SM: usize> {
    sm: usize,
}

impl<const N: usize, const SM: usize> Dims for Fixed<N, SM> {
    const STATES: usize = N;
    type States = [Lanes; N];
    #[inline(always)]
    fn states(self) -> [Lanes; N] {
        [ZERO; N]
    }
    #[inline(always)]
    fn n(self) -> usize {
        N
    }
    #[inline(always)]
    fn sm(self) -> usize {
        if SM > 0 { SM } else { self.sm }
    }
}

#[derive(Clone, Copy)]
struct Dynamic {
    n: usize,
    sm: usize,
}

impl Dims for Dynamic {
    const STATES: usize = usize::MAX;
    type States = Vec<Lanes>;
    fn states(self) -> Vec<Lanes> {
        vec![ZERO; self.n]
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
pub(super) fn advance(
    level: SimdLevel,
    window: &Window,
    groups: &mut [&mut Group],
    checking: bool,
) {
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
/// [`Dynamic`]; a step of n ≤ 2 with s·m ≤ 4 has both sizes fixed, with energies or not.
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
        ($($n:literal),*; $($small_n:literal: $($small_sm:literal),*);*) => {
            match (window.shape.states, sm, energy) {
                $($(
                    ($small_n, $small_sm, false) =>
                        advance_with::<S, Fixed<$small_n, $small_sm>, false>(
                            simd, Fixed { sm }, window, groups, checking),
                    ($small_n, $small_sm, true) =>
                        advance_with::<S, Fixed<$small_n, $small_sm>, true>(
                            simd, Fixed { sm }, window, groups, checking),
                )*)*
                $(
                    ($n, _, false) => advance_with::<S, Fixed<$n, 0>, false>(
                        simd, Fixed { sm }, window, groups, checking),
                    ($n, _, true) => advance_with::<S, Fixed<$n, 0>, true>(
                        simd, Fixed { sm }, window, groups, checking),
                )*
                (n, _, false) => advance_with::<S, Dynamic, false>(
                    simd, Dynamic { n, sm }, window, groups, checking),
                (n, _, true) => advance_with::<S, Dynamic, true>(
                    simd, Dynamic { n, sm }, window, groups, checking),
            }
        };
    }
    dispatch!(1, 2, 3, 4, 5, 6, 7, 8; 1: 1, 2, 3, 4; 2: 1, 2, 3, 4)
}

/// A group's values while it runs a window, in local storage (registers for small n):
/// x, its Kahan carry, δ, x + δ/2, the energy sums and the last step's energies.
struct Work<D: Dims> {
    x: D::States,
    carry: D::States,
    delta: D::States,
    mid: D::States,
    sums: Sums,
    /// stored, port and dissipated energies of the last step (with energies).
    last: [Lanes; 3],
}

impl<D: Dims> Work<D> {
    /// The group's values; its energy sums only with `ENERGY` (a kilobyte that a
    /// final-state step never touches).
    #[inline(always)]
    fn load<const ENERGY: bool>(dims: D, group: &Group) -> Self {
        let mut work: Work<D> = Work {
            x: dims.states(),
            carry: dims.states(),
            delta: dims.states(),
            mid: dims.states(),
            sums: if ENERGY {
                *group.sums()
            } else {
                Sums::default()
            },
            last: [ZERO; 3],
        };
        work.x.lanes_mut().copy_from_slice(&group.x);
        work.carry.lanes_mut().copy_from_slice(&group.carry);
        work
    }

    /// Writes the window's state and (with `ENERGY`) sums back to `group`.
    #[inline(always)]
    fn store<const ENERGY: bool>(&self, group: &mut Group) {
        group.x.copy_from_slice(self.x.lanes());
        group.carry.copy_from_slice(self.carry.lanes());
        if ENERGY {
            *group.sums_mut() = self.sums;
        }
    }
}

/// Largest n whose final-state step interleaves four groups (their values then still fit
/// the registers); other steps interleave two.
const WIDE_TILE_STATES: usize = 2;

/// The window's steps for `groups`, a tile of groups at a time: each tile keeps its
/// values in local storage (registers for small n) for the whole window and interleaves
/// its independent steps, which hides the latency of each group's chain of dependent
/// operations: four groups for the final-state step of n ≤ [`WIDE_TILE_STATES`], else two.
#[inline(always)]
fn advance_with<S: Simd, D: Dims, const ENERGY: bool>(
    simd: S,
    dims: D,
    window: &Window,
    groups: &mut [&mut Group],
    checking: bool,
) {
    // Each group's values in a local of its own (an array of them would live in memory).
    macro_rules! interleaved {
        ($(($group:ident, $work:ident)),+) => {{
            $(let mut $work = Work::load::<ENERGY>(dims, $group);)+
            let width = window.shape.record_width();
            let mut row = 0;
            for k in 0..window.steps {
                let record = window.records_after(k);
                let (u, form_y) = window.step_inputs::<ENERGY>(k, dims.sm(), record);
                $(step::<S, D, ENERGY>(
                    simd, dims, window, u, form_y, $group.ops.entries(), &mut $group.y, &mut $work);)+
                if checking {
                    let done = (window.first_step + k + 1) as u64;
                    $(check(&$work, &mut $group.status, done, ENERGY);)+
                }
                if record {
                    $(record_point::<S, D, ENERGY>(
                        simd,
                        window.shape,
                        &mut $work,
                        &$group.y,
                        &mut $group.records[row * width..(row + 1) * width],
                    );)+
                    row += 1;
                }
            }
            $($work.store::<ENERGY>($group);)+
        }};
    }
    // A constant, so that only the tiles used are compiled.
    if const { !ENERGY && D::STATES <= WIDE_TILE_STATES } {
        for tile in groups.chunks_mut(4) {
            match tile {
                [a, b, c, d] => interleaved!((a, wa), (b, wb), (c, wc), (d, wd)),
                [a, b, c] => {
                    interleaved!((a, wa), (b, wb));
                    interleaved!((c, wc));
                }
                [a, b] => interleaved!((a, wa), (b, wb)),
                [a] => interleaved!((a, wa)),
                _ => unreachable!("tiles of one to four groups"),
            }
        }
    } else {
        for tile in groups.chunks_mut(2) {
            match tile {
                [a, b] => interleaved!((a, wa), (b, wb)),
                [a] => interleaved!((a, wa)),
                _ => unreachable!("tiles of one or two groups"),
            }
        }
    }
}

impl Window<'_> {
    /// Whether the window's step k ends at a record point.
    #[inline(always)]
    fn records_after(&self, k: usize) -> bool {
        self.grid.is_record_point(self.first_step + k + 1)
    }

    /// Step k's stage inputs, and whether the step forms y (`record`: it ends at a record
    /// point).
    #[inline(always)]
    fn step_inputs<const ENERGY: bool>(&self, k: usize, sm: usize, record: bool) -> (&[f64], bool) {
        let form_y = ENERGY || (record && self.shape.recording.outputs);
        (&self.inputs[k * sm..(k + 1) * sm], form_y)
    }
}

/// A record point's values in `row` ([`StepShape::record_width`]): x with trajectories; with
/// energies the window's sums (sum + compensation, as the twin reports them), which then
/// start again from 0; y with outputs.
#[inline(always)]
fn record_point<S: Simd, D: Dims, const ENERGY: bool>(
    simd: S,
    shape: StepShape,
    work: &mut Work<D>,
    y: &[Lanes],
    row: &mut [Lanes],
) {
    if shape.recording.trajectory {
        let x = work.x.lanes();
        row[..x.len()].copy_from_slice(x);
    }
    if ENERGY {
        let at = shape.record_energies_at();
        let sums = &mut work.sums;
        for c in 0..4 {
            let total = simd.add(simd.load(&sums.window[c]), simd.load(&sums.window_comp[c]));
            simd.store(&mut row[at + c], total);
        }
        sums.window = [ZERO; 4];
        sums.window_comp = [ZERO; 4];
    }
    if shape.recording.outputs {
        let at = shape.record_outputs_at();
        row[at..at + y.len()].copy_from_slice(y);
    }
}

/// What [`apply_rows`] does with each row's sum, row after row. A method rather than a
/// closure: a closure is compiled without its caller's instruction set, so the intrinsics
/// in it would stay calls.
trait Rows<S: Simd> {
    fn row(&mut self, simd: S, row: usize, sum: S::V);
}

/// Stores row r's sum in entry r.
struct Store<'a>(&'a mut [Lanes]);

impl<S: Simd> Rows<S> for Store<'_> {
    #[inline(always)]
    fn row(&mut self, simd: S, row: usize, sum: S::V) {
        simd.store(&mut self.0[row], sum);
    }
}

/// y = Y v stored row by row, and the port's yᵀu summed in row order.
struct Outputs<'a, S: Simd> {
    y: &'a mut [Lanes],
    u: &'a [f64],
    port: S::V,
}

impl<S: Simd> Rows<S> for Outputs<'_, S> {
    #[inline(always)]
    fn row(&mut self, simd: S, row: usize, sum: S::V) {
        simd.store(&mut self.y[row], sum);
        self.port = simd.mul_add(sum, simd.splat(self.u[row]), self.port);
    }
}

/// ‖W v‖² summed in row order.
struct SquaredNorm<S: Simd>(S::V);

impl<S: Simd> Rows<S> for SquaredNorm<S> {
    #[inline(always)]
    fn row(&mut self, simd: S, _: usize, sum: S::V) {
        self.0 = simd.mul_add(sum, sum, self.0);
    }
}

/// `rows` rows of `ops` (each p = n + s·m wide) applied to v = [x; u]:
/// `out.row(row, Σ_c ops[row, c] v_c)` with the sum in column order, [`Simd::ACCUMULATORS`]
/// rows at a time (independent accumulators that share the loads of v).
#[inline(always)]
fn apply_rows<S: Simd, D: Dims>(
    simd: S,
    dims: D,
    ops: &[Lanes],
    rows: usize,
    x: &[Lanes],
    u: &[f64],
    out: &mut impl Rows<S>,
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
    out: &mut impl Rows<S>,
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
            out.row(simd, row + b, acc);
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
        out.row(simd, row, acc);
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
/// `ops` and its values in `work`; y goes to `y` when the step forms it.
#[inline(always)]
#[expect(
    clippy::too_many_arguments,
    reason = "the step's inputs and its group's buffers"
)]
fn step<S: Simd, D: Dims, const ENERGY: bool>(
    simd: S,
    dims: D,
    window: &Window,
    u: &[f64],
    form_y: bool,
    ops: &[Lanes],
    y: &mut [Lanes],
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
    apply_rows(simd, dims, delta_ops, n, x, u, &mut Store(delta));
    let mut port = simd.zero();
    if form_y {
        let mut outputs = Outputs { y, u, port };
        apply_rows(simd, dims, y_ops, shape.y_rows, x, u, &mut outputs);
        port = outputs.port;
    }
    let mut stored = simd.zero();
    let mut dissipated = simd.zero();
    if ENERGY {
        let mut norm = SquaredNorm(dissipated);
        apply_rows(simd, dims, w_ops, shape.w_rows, x, u, &mut norm);
        dissipated = norm.0;
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
        let h = simd.splat(window.grid.h);
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
