//! The set-up of the fast engine's blocks for small members (n ≤ [`MAX_SETUP_STATES`]):
//! the step operators of a group of [`LANES`] members built side by side, member l in lane
//! l, in stack-sized buffers, with nothing allocated per member.
//!
//! The operators are those of `StepOperators::recording_in` followed by the silent-input
//! columns of `LinearPhPlan::kernel_operators_in`, bit for bit: the same operations in the
//! same order in each lane, with the state size n a compile-time constant so that the loops
//! over it unroll. Per member (h the step, a^{(r)} the stage matrix of component r, b the
//! weights):
//!
//! ```text
//!   L = (J − R) Q                                       (as nalgebra's gemm forms it)
//!   P (I − h (a^{(r)}_ij L[r, c])) = L_u U             (partial pivoting, as nalgebra::LU)
//!   column c of [Δ; Y; W] = one step from v = e_c:      (collocation_step::solve_stages)
//!     Z = h (a ⊗ 1)(L x + B u) solved with L_u U,  x_i = x + Z_i,
//!     δ = h Σ_j b_j (L x_j + B u_j),  y_i = Bᵀ Σ_j m_ij Q x_j,
//!     w_(i,k) = Σ_{j ≥ i} L_M[j, i] F_kᵀ Q x_j            (M = L_M L_Mᵀ, R = F Fᵀ)
//! ```
//!
//! `setup_matches_step_operators` in this module's tests checks the bits against the
//! general path for every n, several stage counts, input counts, schemes and recordings.

use nalgebra::DMatrix;

use super::super::collocation_step::fill_stage_coefficients;
use super::super::step_operators::dissipation_factor;
use super::stage_lu::{StageFactors, add, factor_stage_matrix, mul, solve_factored_columns, sub};
use crate::error::{Error, Result};
use crate::kernels::lanes::{LANES, Lanes, SimdLevel, ZERO};
use crate::linear_ph::{LinearPhMember, LinearPhPlan};
use crate::plan::Recording;

/// Largest n the stack set-up builds for.
pub(super) const MAX_SETUP_STATES: usize = 8;

/// Largest stage matrix n·s the stack set-up factors.
pub(super) const MAX_STAGE_SIZE: usize = 32;

/// Largest s·m (stage inputs per step) of the stack set-up.
pub(super) const MAX_STAGE_INPUTS: usize = 16;

/// Largest n whose L = (J − R) Q nalgebra forms column by column (larger dynamic products
/// go to `matrixmultiply`, whose order the set-up leaves to nalgebra).
const MAX_COLUMN_GEMM_STATES: usize = 5;

/// A member's matrices as the set-up reads them, column-major.
#[derive(Debug, Clone, Copy)]
pub(super) struct MemberParts<'a> {
    pub j: &'a [f64],
    pub r: &'a [f64],
    pub q: &'a [f64],
    /// n × m.
    pub b: &'a [f64],
}

impl MemberParts<'_> {
    /// The matrices of `member`.
    pub fn of(member: &LinearPhMember) -> MemberParts<'_> {
        let system = &member.system;
        MemberParts {
            j: system.j.as_slice(),
            r: system.r.as_slice(),
            q: system.q.as_slice(),
            b: system.b.as_slice(),
        }
    }

    /// Whether `other` reads the same matrices (a group padded with copies of its first
    /// member: their per-member work, done once, is copied).
    fn is(&self, other: &MemberParts) -> bool {
        let same = |a: &[f64], b: &[f64]| std::ptr::eq(a, b);
        same(self.j, other.j)
            && same(self.r, other.r)
            && same(self.q, other.q)
            && same(self.b, other.b)
    }
}

/// Where a member's operators lie in a group's entries: Δ (n × p), then Y (s·m × p) with
/// outputs or energies, then W (s·n × p, row (i·n + k) the stage i's k-th factor column,
/// zero beyond the member's rank) and Q (n × n) with energies; all row-major.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EntryLayout {
    pub states: usize,
    pub stages: usize,
    pub inputs: usize,
    pub outputs: bool,
    pub energy: bool,
}

impl EntryLayout {
    pub fn new(plan: &LinearPhPlan, recording: Recording) -> Self {
        EntryLayout {
            states: plan.states(),
            stages: plan.scheme.stages,
            inputs: plan.inputs_count(),
            outputs: recording.outputs || recording.energy,
            energy: recording.energy,
        }
    }

    /// p = n + s·m.
    pub fn width(&self) -> usize {
        self.states + self.stages * self.inputs
    }

    pub fn output_at(&self) -> usize {
        self.states * self.width()
    }

    pub fn dissipation_at(&self) -> usize {
        self.output_at() + usize::from(self.outputs) * self.stages * self.inputs * self.width()
    }

    pub fn q_at(&self) -> usize {
        self.dissipation_at() + usize::from(self.energy) * self.stages * self.states * self.width()
    }

    /// Entries per member.
    pub fn len(&self) -> usize {
        self.q_at() + usize::from(self.energy) * self.states * self.states
    }
}

/// Whether the stack set-up builds `plan`'s members.
pub(super) fn fits(plan: &LinearPhPlan) -> bool {
    let (n, s, m) = (plan.states(), plan.scheme.stages, plan.inputs_count());
    (1..=MAX_SETUP_STATES).contains(&n)
        && (1..=MAX_SETUP_STAGES).contains(&s)
        && n * s <= MAX_STAGE_SIZE
        && s * m <= MAX_STAGE_INPUTS
}

/// Largest stage count s the stack set-up builds for.
const MAX_SETUP_STAGES: usize = 4;

/// [`SetupScratch::build_sized`] for n states, s stages, and one input or any number.
type BuildFn = fn(&mut SetupScratch, &mut [Lanes]) -> Result<[usize; LANES]>;

/// The builder of n states, s stages and m inputs, n and s compile-time constants in it
/// and m too where it is 1 (the usual single input: its loops then unroll with the rest),
/// compiled for the instruction set the fast engines run with (wider registers for the
/// lanes; Rust contracts no multiply-add, so the bits are the portable build's).
fn builder(n: usize, s: usize, m: usize) -> BuildFn {
    macro_rules! table {
        ($build:ident: $($n:literal),*) => {
            match (n, s, m == 1) {
                $(
                    ($n, 1, true) => $build::<$n, 1, true>,
                    ($n, 2, true) => $build::<$n, 2, true>,
                    ($n, 3, true) => $build::<$n, 3, true>,
                    ($n, 4, true) => $build::<$n, 4, true>,
                    ($n, 1, false) => $build::<$n, 1, false>,
                    ($n, 2, false) => $build::<$n, 2, false>,
                    ($n, 3, false) => $build::<$n, 3, false>,
                    ($n, 4, false) => $build::<$n, 4, false>,
                )*
                _ => unreachable!("the stack set-up builds n ≤ 8, s ≤ 4, not n = {n}, s = {s}"),
            }
        };
    }
    #[cfg(target_arch = "x86_64")]
    match SimdLevel::get() {
        SimdLevel::Avx512 => return table!(build_avx512: 1, 2, 3, 4, 5, 6, 7, 8),
        SimdLevel::Avx2 => return table!(build_avx2: 1, 2, 3, 4, 5, 6, 7, 8),
        SimdLevel::Portable => {}
    }
    table!(build_portable: 1, 2, 3, 4, 5, 6, 7, 8)
}

/// [`SetupScratch::build_sized`] for any x86-64 (or other) CPU.
fn build_portable<const N: usize, const S: usize, const ONE_INPUT: bool>(
    scratch: &mut SetupScratch,
    out: &mut [Lanes],
) -> Result<[usize; LANES]> {
    scratch.build_sized::<N, S, ONE_INPUT>(out)
}

/// [`SetupScratch::build_sized`] compiled with AVX2.
#[cfg(target_arch = "x86_64")]
fn build_avx2<const N: usize, const S: usize, const ONE_INPUT: bool>(
    scratch: &mut SetupScratch,
    out: &mut [Lanes],
) -> Result<[usize; LANES]> {
    #[target_feature(enable = "avx2")]
    fn with_avx2<const N: usize, const S: usize, const ONE_INPUT: bool>(
        scratch: &mut SetupScratch,
        out: &mut [Lanes],
    ) -> Result<[usize; LANES]> {
        scratch.build_sized::<N, S, ONE_INPUT>(out)
    }
    // SAFETY: chosen only where `SimdLevel::get` found AVX2.
    unsafe { with_avx2::<N, S, ONE_INPUT>(scratch, out) }
}

/// [`SetupScratch::build_sized`] compiled with AVX-512 (one register per [`Lanes`]).
#[cfg(target_arch = "x86_64")]
fn build_avx512<const N: usize, const S: usize, const ONE_INPUT: bool>(
    scratch: &mut SetupScratch,
    out: &mut [Lanes],
) -> Result<[usize; LANES]> {
    #[target_feature(enable = "avx2,avx512f,avx512dq,avx512vl")]
    fn with_avx512<const N: usize, const S: usize, const ONE_INPUT: bool>(
        scratch: &mut SetupScratch,
        out: &mut [Lanes],
    ) -> Result<[usize; LANES]> {
        scratch.build_sized::<N, S, ONE_INPUT>(out)
    }
    // SAFETY: chosen only where `SimdLevel::get` found AVX-512 (F, DQ, VL).
    unsafe { with_avx512::<N, S, ONE_INPUT>(scratch, out) }
}

/// What a block's members share: the scheme's coefficients, the mass matrix's Cholesky
/// factor, and work buffers (reused from group to group).
pub(super) struct SetupScratch {
    layout: EntryLayout,
    h: f64,
    /// a^{(r)}_ij as `stage_coef[(r · s + i) · s + j]`.
    stage_coef: Vec<f64>,
    weights: Vec<f64>,
    /// M, column-major.
    mass: Vec<f64>,
    /// L_M, column-major (energies only).
    mass_factor: Vec<f64>,
    silent_inputs: Vec<bool>,
    /// A member's J − R, Q and L for nalgebra's product (n > [`MAX_COLUMN_GEMM_STATES`]).
    j_minus_r: DMatrix<f64>,
    q: DMatrix<f64>,
    l: DMatrix<f64>,
    /// A member's R for the heap dissipation factor (n > 5, energies only).
    r: DMatrix<f64>,
    /// The group's factored stage matrices.
    factors: StageFactors,
    matrices: GroupMatrices,
    work: GroupWork,
    build: BuildFn,
}

/// A group's matrices side by side, lane l member l's, column-major: J, R, Q (n × n) and
/// B (n × m), what the set-up builds from. The fast engine's group draw writes them in
/// place; [`SetupScratch::build`] copies members' in.
pub(super) struct GroupMatrices {
    pub j: Vec<Lanes>,
    pub r: Vec<Lanes>,
    pub q: Vec<Lanes>,
    pub b: Vec<Lanes>,
    /// The lanes that hold a copy of lane 0's member (a group padded past its last member,
    /// or one member in every lane): their per-member work is lane 0's, copied.
    pub copies: [bool; LANES],
}

impl GroupMatrices {
    /// Room for members of `layout`.
    fn new(layout: EntryLayout) -> Self {
        let n = layout.states;
        GroupMatrices {
            j: vec![ZERO; n * n],
            r: vec![ZERO; n * n],
            q: vec![ZERO; n * n],
            b: vec![ZERO; n * layout.inputs],
            copies: [false; LANES],
        }
    }

    /// The members of `parts` in their lanes.
    fn load(&mut self, parts: &[MemberParts; LANES]) {
        for (lane, part) in parts.iter().enumerate() {
            let matrices = [
                (&mut self.j, part.j),
                (&mut self.r, part.r),
                (&mut self.q, part.q),
                (&mut self.b, part.b),
            ];
            for (lanes, values) in matrices {
                for (entry, &value) in lanes.iter_mut().zip(values) {
                    entry[lane] = value;
                }
            }
            self.copies[lane] = lane > 0 && part.is(&parts[0]);
        }
    }

    /// Lane `lane` of the n × n matrix `lanes` into `values` (column-major).
    fn lane_of(lanes: &[Lanes], lane: usize, values: &mut [f64]) {
        for (value, entry) in values.iter_mut().zip(lanes) {
            *value = entry[lane];
        }
    }
}

/// The group's work in lanes (kept between groups, so that nothing is allocated or
/// cleared per group).
struct GroupWork {
    /// J − R, L, F (n × n, column-major, F zero beyond a member's rank).
    j_minus_r: Vec<Lanes>,
    l: Vec<Lanes>,
    factor: Vec<Lanes>,
    /// n values.
    drift0: Vec<Lanes>,
    /// The stage right-hand sides (n·s values) of every column, then their solutions.
    rhs: Vec<Lanes>,
    /// n·s values each.
    stage_states: Vec<Lanes>,
    stage_rates: Vec<Lanes>,
    efforts: Vec<Lanes>,
    weighted: Vec<Lanes>,
}

impl SetupScratch {
    /// The shared data of `plan`'s members under `recording` ([`fits`] holds).
    pub fn new(plan: &LinearPhPlan, recording: Recording) -> Result<Self> {
        let layout = EntryLayout::new(plan, recording);
        let (n, s) = (layout.states, layout.stages);
        let scheme = &plan.scheme;
        let mut stage_coef = Vec::new();
        fill_stage_coefficients(plan, n, &mut stage_coef);
        let mass_factor = if layout.energy {
            let factor = scheme
                .m
                .clone()
                .cholesky()
                .ok_or_else(|| Error::Numerical {
                    context: "mass matrix".into(),
                    problem: "M is not positive definite".into(),
                })?;
            factor.l().as_slice().to_vec()
        } else {
            Vec::new()
        };
        Ok(SetupScratch {
            layout,
            h: plan.grid.h,
            stage_coef,
            weights: scheme.b.clone(),
            mass: scheme.m.as_slice().to_vec(),
            mass_factor,
            silent_inputs: plan.silent_inputs().to_vec(),
            j_minus_r: DMatrix::zeros(n, n),
            q: DMatrix::zeros(n, n),
            l: DMatrix::zeros(n, n),
            r: DMatrix::zeros(n, n),
            factors: StageFactors::new(n * s),
            matrices: GroupMatrices::new(layout),
            work: GroupWork::new(layout),
            build: builder(n, s, layout.inputs),
        })
    }

    /// The layout of a member's operators.
    #[cfg(test)]
    pub fn layout(&self) -> EntryLayout {
        self.layout
    }

    /// Builds the operators of the group `parts` (member l in lane l) into `out` (its
    /// [`EntryLayout::len`] entries, every one written) and returns the rank of each
    /// member's dissipation factor (0 without energies).
    pub fn build(
        &mut self,
        parts: &[MemberParts; LANES],
        out: &mut [Lanes],
    ) -> Result<[usize; LANES]> {
        self.matrices.load(parts);
        (self.build)(self, out)
    }

    /// The group's matrices, for a caller that writes them in place before
    /// [`SetupScratch::build_in_place`].
    pub fn matrices_mut(&mut self) -> &mut GroupMatrices {
        &mut self.matrices
    }

    /// [`SetupScratch::build`] of the members in [`SetupScratch::matrices_mut`].
    pub fn build_in_place(&mut self, out: &mut [Lanes]) -> Result<[usize; LANES]> {
        (self.build)(self, out)
    }

    /// L = (J − R) Q of every lane into the group's work, as `CollocationStepper::rebuild`
    /// forms it with nalgebra's gemm: column by column, L[r, c] = Σ_k (J − R)[r, k] Q[k, c]
    /// summed from the first product on, up to n = 5; by nalgebra itself beyond.
    #[inline(always)]
    fn form_l<const N: usize>(&mut self) {
        let n = N;
        let (work, group) = (&mut self.work, &self.matrices);
        if N <= MAX_COLUMN_GEMM_STATES {
            let j_minus_r = &mut work.j_minus_r[..n * n];
            for ((entry, j), r) in j_minus_r.iter_mut().zip(&group.j).zip(&group.r) {
                *entry = sub(j, r);
            }
            for c in 0..n {
                for r in 0..n {
                    let mut acc = mul(&j_minus_r[r], &group.q[c * n]);
                    for k in 1..n {
                        acc = add(&mul(&j_minus_r[k * n + r], &group.q[c * n + k]), &acc);
                    }
                    work.l[c * n + r] = acc;
                }
            }
            return;
        }
        for lane in 0..LANES {
            if group.copies[lane] {
                for l in &mut work.l[..n * n] {
                    l[lane] = l[0];
                }
                continue;
            }
            let j_minus_r = self.j_minus_r.as_mut_slice();
            for ((a, j), r) in j_minus_r.iter_mut().zip(&group.j).zip(&group.r) {
                *a = j[lane] - r[lane];
            }
            GroupMatrices::lane_of(&group.q, lane, self.q.as_mut_slice());
            self.l.gemm(1.0, &self.j_minus_r, &self.q, 0.0);
            for (l, &value) in work.l.iter_mut().zip(self.l.as_slice()) {
                l[lane] = value;
            }
        }
    }

    /// [`SetupScratch::build`] with n = `N`, s = `S`, and m = 1 where `ONE_INPUT` (else m
    /// read from the layout).
    #[inline(always)]
    fn build_sized<const N: usize, const S: usize, const ONE_INPUT: bool>(
        &mut self,
        out: &mut [Lanes],
    ) -> Result<[usize; LANES]> {
        let layout = self.layout;
        debug_assert_eq!((layout.states, layout.stages), (N, S));
        debug_assert!(!ONE_INPUT || layout.inputs == 1);
        debug_assert_eq!(out.len(), layout.len());
        let m = if ONE_INPUT { 1 } else { layout.inputs };
        let (n, s, h) = (N, S, self.h);
        let (size, sm) = (n * s, s * m);
        let p = n + sm;
        self.form_l::<N>();
        factor_stage_matrix::<N, S>(
            &mut self.factors,
            &self.work.l[..n * n],
            &self.stage_coef,
            h,
        )?;
        let copies = self.matrices.copies;
        // F with R = F Fᵀ (energies only), column-major n × rank in each lane.
        let mut ranks = [0; LANES];
        if layout.energy {
            for (lane, &copy) in copies.iter().enumerate() {
                if copy {
                    ranks[lane] = ranks[0];
                    for entry in &mut self.work.factor[..n * n] {
                        entry[lane] = entry[0];
                    }
                    continue;
                }
                let mut r = [0.0; MAX_SETUP_STATES * MAX_SETUP_STATES];
                GroupMatrices::lane_of(&self.matrices.r, lane, &mut r[..n * n]);
                let mut factor = [0.0; MAX_SETUP_STATES * MAX_SETUP_STATES];
                ranks[lane] = match stack_dissipation_factor(n, &r[..n * n], &mut factor) {
                    Some(rank) => rank,
                    None => {
                        self.r.as_mut_slice().copy_from_slice(&r[..n * n]);
                        let heap = dissipation_factor(&self.r);
                        factor[..heap.len()].copy_from_slice(heap.as_slice());
                        heap.ncols()
                    }
                };
                for (e, entry) in self.work.factor[..n * n].iter_mut().enumerate() {
                    entry[lane] = if e < n * ranks[lane] { factor[e] } else { 0.0 };
                }
            }
        }
        let largest_rank = ranks.iter().copied().max().unwrap_or(0);
        let (stage_coef, weights, mass) = (&self.stage_coef[..], &self.weights[..], &self.mass[..]);
        let (lu, w, group) = (&self.factors, &mut self.work, &self.matrices);
        let efforts_needed = layout.outputs || layout.energy;
        let (output_at, dissipation_at) = (layout.output_at(), layout.dissipation_at());
        // The columns v = e_col: one at a time in every lane, or, where every lane holds
        // the same member (a block whose members share the nominal's operators), column
        // first + l in lane l, each column with the same operations either way.
        let one_member = copies[1..].iter().all(|&copy| copy);
        // Each column's stage equations set up, then solved side by side (independent
        // chains of divisions that overlap), then each column's operators formed; the
        // operations of each column are those of one column alone.
        let batch_width = if one_member { LANES } else { 1 };
        let batches = p.div_ceil(batch_width);
        for batch in 0..batches {
            let columns = ColumnBatch::new(batch * batch_width, p, one_member);
            let unit = |index: usize| columns.unit(index);
            for r in 0..n {
                w.drift0[r] = sum(n, |c| mul(&w.l[c * n + r], &unit(c)));
            }
            let rhs = &mut w.rhs[batch * size..(batch + 1) * size];
            for i in 0..s {
                for r in 0..n {
                    let mut acc = ZERO;
                    for j in 0..s {
                        let forcing = sum(m, |c| mul(&group.b[c * n + r], &unit(n + j * m + c)));
                        let coef = stage_coef[(r * s + i) * s + j];
                        let term = times(coef, &add(&w.drift0[r], &forcing));
                        acc = add(&acc, &term);
                    }
                    rhs[i * n + r] = times(h, &acc);
                }
            }
        }
        solve_factored_columns::<N, S>(lu, &mut w.rhs[..batches * size], batches);
        for batch in 0..batches {
            let columns = ColumnBatch::new(batch * batch_width, p, one_member);
            let unit = |index: usize| columns.unit(index);
            let rhs = &w.rhs[batch * size..(batch + 1) * size];
            for i in 0..s {
                for r in 0..n {
                    w.stage_states[i * n + r] = add(&unit(r), &rhs[i * n + r]);
                }
                let xi = &w.stage_states[i * n..(i + 1) * n];
                for r in 0..n {
                    let drift = sum(n, |c| mul(&w.l[c * n + r], &xi[c]));
                    let forcing = sum(m, |c| mul(&group.b[c * n + r], &unit(n + i * m + c)));
                    w.stage_rates[i * n + r] = add(&drift, &forcing);
                    if efforts_needed {
                        w.efforts[i * n + r] = sum(n, |c| mul(&group.q[c * n + r], &xi[c]));
                    }
                }
            }
            for r in 0..n {
                let rate = sum(s, |j| times(weights[j], &w.stage_rates[j * n + r]));
                columns.store(out, r, times(h, &rate));
            }
            if layout.outputs {
                for i in 0..s {
                    for r in 0..n {
                        w.weighted[i * n + r] =
                            sum(s, |j| times(mass[j * s + i], &w.efforts[j * n + r]));
                    }
                }
                for i in 0..s {
                    for c in 0..m {
                        let y = sum(n, |r| mul(&group.b[c * n + r], &w.weighted[i * n + r]));
                        columns.store(out, output_at / p + i * m + c, y);
                    }
                }
            }
            if layout.energy {
                let lm = &self.mass_factor;
                for i in 0..s {
                    for k in 0..n {
                        let mut acc = ZERO;
                        // Rows past a member's rank are zero (past every member's, no sum).
                        if k < largest_rank {
                            for j in i..s {
                                let fe =
                                    sum(n, |c| mul(&w.factor[k * n + c], &w.efforts[j * n + c]));
                                acc = add(&acc, &times(lm[i * s + j], &fe));
                            }
                            for (lane, acc) in acc.iter_mut().enumerate() {
                                if k >= ranks[lane] {
                                    *acc = 0.0;
                                }
                            }
                        }
                        columns.store(out, dissipation_at / p + i * n + k, acc);
                    }
                }
            }
        }
        // Silent inputs: their columns only ever multiply u = 0 (`kernel_operators_in`).
        let rows = layout.q_at() / p;
        for (channel, _) in self.silent_inputs.iter().enumerate().filter(|(_, s)| **s) {
            for stage in 0..s {
                let column = n + stage * m + channel;
                for row in 0..rows {
                    out[row * p + column] = ZERO;
                }
            }
        }
        if layout.energy {
            let q_at = layout.q_at();
            for row in 0..n {
                for c in 0..n {
                    out[q_at + row * n + c] = group.q[c * n + row];
                }
            }
        }
        Ok(ranks)
    }
}

impl GroupWork {
    /// Room for members of `layout`.
    fn new(layout: EntryLayout) -> Self {
        let (n, size) = (layout.states, layout.states * layout.stages);
        GroupWork {
            j_minus_r: vec![ZERO; n * n],
            l: vec![ZERO; n * n],
            factor: vec![ZERO; n * n],
            drift0: vec![ZERO; n],
            rhs: vec![ZERO; size * layout.width()],
            stage_states: vec![ZERO; size],
            stage_rates: vec![ZERO; size],
            efforts: vec![ZERO; size],
            weighted: vec![ZERO; size],
        }
    }
}

/// A batch of the operators' columns, each formed from the unit vector v = e_col: column
/// `first` in every lane, or (`one_member`, every lane the same member) column first + l
/// in lane l; the operators have p columns.
#[derive(Clone, Copy)]
struct ColumnBatch {
    first: usize,
    p: usize,
    one_member: bool,
}

impl ColumnBatch {
    #[inline(always)]
    fn new(first: usize, p: usize, one_member: bool) -> Self {
        ColumnBatch {
            first,
            p,
            one_member,
        }
    }

    /// Entry `index` of the batch's unit vectors, formed as a value (not written to memory
    /// to be read back).
    #[inline(always)]
    fn unit(&self, index: usize) -> Lanes {
        let mut unit = ZERO;
        for (lane, value) in unit.iter_mut().enumerate() {
            let column = if self.one_member {
                self.first + lane
            } else {
                self.first
            };
            *value = if index == column { 1.0 } else { 0.0 };
        }
        unit
    }

    /// Row `row`'s entries of the batch's columns, `values` lane by lane, into `out` (p
    /// entries per row).
    #[inline(always)]
    fn store(&self, out: &mut [Lanes], row: usize, values: Lanes) {
        if self.one_member {
            store_lanes_as_columns(out, self.p, self.first, row, &values);
        } else {
            out[row * self.p + self.first] = values;
        }
    }
}

/// [`ColumnBatch::store`] of a batch of one member's columns: lane l's value, in every lane, as
/// column first + l. Out of line, so that the usual batch's values stay one vector.
#[cold]
#[inline(never)]
fn store_lanes_as_columns(out: &mut [Lanes], p: usize, first: usize, row: usize, values: &Lanes) {
    for (lane, &value) in values.iter().enumerate().take(p - first) {
        out[row * p + first + lane] = [value; LANES];
    }
}

/// c · v, lane by lane (c the same in every lane).
#[inline(always)]
fn times(c: f64, v: &Lanes) -> Lanes {
    let mut out = [0.0; LANES];
    for (out, v) in out.iter_mut().zip(v) {
        *out = c * v;
    }
    out
}

/// Σ_{t < count} term(t) in order, as `Iterator::sum` adds f64 (from −0, so that the
/// first term is kept as it is).
#[inline(always)]
fn sum(count: usize, term: impl Fn(usize) -> Lanes) -> Lanes {
    let mut acc = [-0.0; LANES];
    for t in 0..count {
        acc = add(&acc, &term(t));
    }
    acc
}

/// `step_operators::dissipation_factor` of the n × n matrix `r` (column-major) for
/// n ≤ 5, on the stack: eigenvectors scaled by √λ for the eigenvalues above 1e-14 · λ_max,
/// written column-major into `factor`; returns the rank, or `None` for a larger n (the
/// caller takes the heap path). nalgebra's symmetric eigen-decomposition runs the same
/// operations on fixed-size and dynamic matrices of these sizes (checked bit for bit by
/// `stack_factor_is_the_heap_factor`).
fn stack_dissipation_factor(n: usize, r: &[f64], factor: &mut [f64]) -> Option<usize> {
    macro_rules! sized {
        ($($n:literal),*) => {
            match n {
                $($n => {
                    let r = nalgebra::SMatrix::<f64, $n, $n>::from_column_slice(r);
                    if r.amax() == 0.0 {
                        return Some(0);
                    }
                    let eigen = nalgebra::SymmetricEigen::new(r);
                    let largest = eigen.eigenvalues.max();
                    let mut rank = 0;
                    for k in 0..$n {
                        if eigen.eigenvalues[k] > 1e-14 * largest {
                            let scale = eigen.eigenvalues[k].sqrt();
                            for row in 0..$n {
                                factor[rank * $n + row] = eigen.eigenvectors[(row, k)] * scale;
                            }
                            rank += 1;
                        }
                    }
                    Some(rank)
                })*
                _ => None,
            }
        };
    }
    sized!(1, 2, 3, 4, 5)
}

#[cfg(test)]
#[path = "setup_tests.rs"]
mod tests;
