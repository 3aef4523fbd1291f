//! The draws of a group of [`LANES`] consecutive members of a drawn ensemble (n ≤ 5) side
//! by side, member l in lane l, written where the set-up builds from
//! ([`GroupMatrices`]). Each member's standard normals come from its own stream, in the
//! order [`DrawnLinearPhEnsemble::draw`] takes them; the arithmetic that turns them into
//! J, R, Q, B and x0 is the draw's, operation for operation, in every lane at once:
//!
//! ```text
//!          perturb (σ)                              random (scale)
//!   J      J + σ s_J (A − Aᵀ)/√2                    (A − Aᵀ) scale/√(2n)
//!   R      ½ (Y + Yᵀ), Y = S R Sᵀ, S = I + σ E/√n    C Cᵀ scale/n
//!   Q      ½ (Y + Yᵀ), Y = S Q Sᵀ, S = I + σ E/√n    (I + D Dᵀ/n) scale
//!   B      B_ij (1 + σ ξ_ij)                         ξ_ij scale
//!   x0     x0 + ξ σ                                  ξ scale
//! ```
//!
//! with A, C, D, E, ξ the member's standard normals, s_J = max(1, max |J_ij|), and, for
//! the Lobatto pair, E, R and Q masked block-diagonal; the n × n products formed as
//! nalgebra's gemm forms them for n ≤ 5: column by column, P[r, c] = Σ_k A[r, k] B[k, c]
//! summed from the first product on. So lane l holds member l's values bit for bit
//! (`group_draws_equal_member_draws`).

use super::lane_square::{
    Square, entrywise, gram, identity, lanewise, minus_transpose, product, scaled, transpose,
};
use super::setup::GroupMatrices;
use super::stage_lu::add;
use crate::error::Result;
use crate::kernels::lanes::{LANES, Lanes, SimdLevel, ZERO};
use crate::linear_ph::DrawnLinearPhEnsemble;
use crate::linear_ph::drawn_checks::certified_lanes;
use crate::linear_ph::ensemble::{Draw, StackMember};
use crate::model::member_streams::MemberStreams;
use crate::model::ziggurat_normals::standard_normal;

/// Largest n of a group draw.
pub(super) const MAX_GROUP_DRAW_STATES: usize = 5;

/// Entries of x0 and Q up to this size give a finite H(x0) = ½ x0ᵀ Q x0 for n ≤ 5
/// (|(Q x0)_i| ≤ n 10²⁰⁰ and |x0ᵀ Q x0| ≤ n² 10³⁰⁰ ≤ 2.5 · 10³⁰¹, in any order of
/// summation): such a member passes the energy check, and x0's finiteness check, without
/// them.
const MAX_ENERGY_ENTRY: f64 = 1e100;

/// The work of a block's group draws, reused from group to group.
pub(super) struct GroupDraw {
    /// The group's standard normals, normal k of lane l member l's k-th.
    normals: Vec<Lanes>,
    /// The group's x0 (n values).
    x0: [Lanes; MAX_GROUP_DRAW_STATES],
}

impl GroupDraw {
    pub fn new(drawn: &DrawnLinearPhEnsemble) -> Self {
        GroupDraw {
            normals: vec![ZERO; drawn.normals_per_member()],
            x0: [ZERO; MAX_GROUP_DRAW_STATES],
        }
    }

    /// Draws members `first` … `first + members − 1` (1 ≤ `members` ≤ [`LANES`]; n = `N`)
    /// into `group`, lanes past the last member copies of the first, and checks them as
    /// [`DrawnLinearPhEnsemble::draw`] does: the first member refused, in member order,
    /// is the error. `streams` holds the members' streams.
    pub fn draw<const N: usize, const NN: usize>(
        &mut self,
        drawn: &DrawnLinearPhEnsemble,
        streams: &MemberStreams,
        first: usize,
        members: usize,
        group: &mut GroupMatrices,
    ) -> Result<()> {
        /// [`GroupDraw::draw_sized`] compiled with the instruction set `$feature`.
        #[cfg(target_arch = "x86_64")]
        macro_rules! with_feature {
            ($feature:literal) => {{
                #[target_feature(enable = $feature)]
                fn compiled<const N: usize, const NN: usize>(
                    draw: &mut GroupDraw,
                    drawn: &DrawnLinearPhEnsemble,
                    streams: &MemberStreams,
                    first: usize,
                    members: usize,
                    group: &mut GroupMatrices,
                ) -> Result<()> {
                    draw.draw_sized::<N, NN>(drawn, streams, first, members, group)
                }
                // SAFETY: chosen only where `SimdLevel::get` found the instruction set.
                unsafe { compiled::<N, NN>(self, drawn, streams, first, members, group) }
            }};
        }
        #[cfg(target_arch = "x86_64")]
        match SimdLevel::get() {
            SimdLevel::Avx512 => return with_feature!("avx2,avx512f,avx512dq,avx512vl"),
            SimdLevel::Avx2 => return with_feature!("avx2"),
            SimdLevel::Portable => {}
        }
        self.draw_sized::<N, NN>(drawn, streams, first, members, group)
    }

    /// [`GroupDraw::draw`], inlined into a build for each instruction set (Rust contracts
    /// no multiply-add, so the bits are the portable build's).
    #[inline(always)]
    fn draw_sized<const N: usize, const NN: usize>(
        &mut self,
        drawn: &DrawnLinearPhEnsemble,
        streams: &MemberStreams,
        first: usize,
        members: usize,
        group: &mut GroupMatrices,
    ) -> Result<()> {
        const { assert!(N <= MAX_GROUP_DRAW_STATES && NN == N * N) };
        debug_assert!((1..=LANES).contains(&members));
        for lane in 0..LANES {
            if lane < members {
                let mut stream = streams.stream(first + lane);
                for normal in &mut self.normals {
                    normal[lane] = standard_normal(&mut stream);
                }
            } else {
                for normal in &mut self.normals {
                    normal[lane] = normal[0];
                }
            }
            group.copies[lane] = lane >= members;
        }
        let mut normals = self.normals.iter();
        let mut normal = || *normals.next().expect("the draw takes the normals counted");
        draw_square::<N, NN>(drawn, &mut normal, group);
        draw_b_x0::<N>(drawn, &mut normal, group, &mut self.x0);
        debug_assert!(
            normals.next().is_none(),
            "the draw takes every normal counted"
        );
        // The cheap checks in every lane at once; a lane they do not settle is checked as
        // its member alone would be (which words the error).
        let certified = certified_lanes::<N, NN>(&group.j, &group.r, &group.q);
        let moderate = |values: &[Lanes], lane: usize| {
            values.iter().all(|v| v[lane].abs() <= MAX_ENERGY_ENTRY)
        };
        for (lane, &certified) in certified.iter().enumerate().take(members) {
            let settled =
                certified && moderate(&self.x0[..N], lane) && moderate(&group.q[..NN], lane);
            if !settled {
                drawn.check_stack_member(first + lane, &self.member::<N>(group, lane))?;
            }
        }
        Ok(())
    }

    /// Lane `lane`'s x0 of the last draw.
    pub fn x0<const N: usize>(&self, lane: usize) -> [f64; N] {
        let mut x0 = [0.0; N];
        for (x0, entry) in x0.iter_mut().zip(&self.x0) {
            *x0 = entry[lane];
        }
        x0
    }

    /// Lane `lane`'s member of the last draw.
    fn member<const N: usize>(&self, group: &GroupMatrices, lane: usize) -> StackMember<N> {
        let matrix = |lanes: &[Lanes]| {
            nalgebra::SMatrix::<f64, N, N>::from_fn(|r, c| lanes[c * N + r][lane])
        };
        let mut member = StackMember {
            j: matrix(&group.j),
            r: matrix(&group.r),
            q: matrix(&group.q),
            b: [0.0; 5 * crate::linear_ph::ensemble::MAX_STACK_INPUTS],
            x0: self.x0::<N>(lane),
        };
        for (value, entry) in member.b.iter_mut().zip(&group.b) {
            *value = entry[lane];
        }
        member
    }
}

/// J, R and Q of a group (the draw's first normals), as `draw_square_in` forms them.
#[inline(always)]
fn draw_square<const N: usize, const NN: usize>(
    drawn: &DrawnLinearPhEnsemble,
    normal: &mut impl FnMut() -> Lanes,
    group: &mut GroupMatrices,
) {
    let system = &drawn.nominal.system;
    let (nf, split) = (N as f64, drawn.split);
    let j = match drawn.spec.j {
        Draw::Fixed => nominal(&system.j),
        Draw::Perturb { sigma } => {
            let a = square::<NN>(normal);
            let scale = system.j.amax().max(1.0);
            let skew = scaled(&minus_transpose::<N, NN>(&a), sigma * scale / 2f64.sqrt());
            entrywise(&nominal(&system.j), &skew, add)
        }
        Draw::Random { scale } => {
            let a = square::<NN>(normal);
            scaled(&minus_transpose::<N, NN>(&a), scale / (2.0 * nf).sqrt())
        }
    };
    let r = match drawn.spec.r {
        Draw::Fixed => nominal(&system.r),
        Draw::Perturb { sigma } => {
            congruence::<N, NN>(split, &nominal(&system.r), sigma, square(normal))
        }
        Draw::Random { scale } => {
            let gram = gram::<N, NN>(&square(normal));
            mask::<N, NN>(split, scaled(&gram, scale / nf))
        }
    };
    let q = match drawn.spec.q {
        Draw::Fixed => nominal(&system.q),
        Draw::Perturb { sigma } => {
            congruence::<N, NN>(split, &nominal(&system.q), sigma, square(normal))
        }
        Draw::Random { scale } => {
            let gram = gram::<N, NN>(&square(normal));
            let mut over_n = [ZERO; NN];
            for (out, v) in over_n.iter_mut().zip(&gram) {
                *out = lanewise(v, |v| v / nf);
            }
            let shifted = entrywise(&identity::<N, NN>(), &over_n, add);
            mask::<N, NN>(split, scaled(&shifted, scale))
        }
    };
    group.j[..NN].copy_from_slice(&j);
    group.r[..NN].copy_from_slice(&r);
    group.q[..NN].copy_from_slice(&q);
}

/// The group's next n² normals as a matrix, column by column (`from_fn_generic`'s order).
#[inline(always)]
fn square<const NN: usize>(normal: &mut impl FnMut() -> Lanes) -> Square<NN> {
    let mut a = [ZERO; NN];
    for entry in &mut a {
        *entry = normal();
    }
    a
}

/// The nominal matrix `a` in every lane.
#[inline(always)]
fn nominal<const NN: usize>(a: &nalgebra::DMatrix<f64>) -> Square<NN> {
    let values = a.as_slice();
    let mut out = [ZERO; NN];
    for (out, &value) in out.iter_mut().zip(values) {
        *out = [value; LANES];
    }
    out
}

/// `a` with the entries between the Lobatto pair's blocks zeroed, where the draw is split
/// at `split`.
#[inline(always)]
fn mask<const N: usize, const NN: usize>(split: Option<usize>, mut a: Square<NN>) -> Square<NN> {
    if let Some(half) = split {
        for i in 0..N {
            for k in 0..N {
                if (i < half) != (k < half) {
                    a[k * N + i] = ZERO;
                }
            }
        }
    }
    a
}

/// S X Sᵀ symmetrised, S = I + mask(E) σ/√n: `draw_square_in`'s congruence.
#[inline(always)]
fn congruence<const N: usize, const NN: usize>(
    split: Option<usize>,
    x: &Square<NN>,
    sigma: f64,
    e: Square<NN>,
) -> Square<NN> {
    let step = scaled(&mask::<N, NN>(split, e), sigma / (N as f64).sqrt());
    let s = entrywise(&identity::<N, NN>(), &step, add);
    let y = product::<N, NN>(&product::<N, NN>(&s, x), &transpose::<N, NN>(&s));
    scaled(&entrywise(&y, &transpose::<N, NN>(&y), add), 0.5)
}

/// B (column-major, n × m) and x0 of a group, the draw's normals after J, R and Q, as
/// `draw_b_x0` forms them.
fn draw_b_x0<const N: usize>(
    drawn: &DrawnLinearPhEnsemble,
    normal: &mut impl FnMut() -> Lanes,
    group: &mut GroupMatrices,
    x0: &mut [Lanes],
) {
    let nominal = &drawn.nominal;
    for (b, &value) in group.b.iter_mut().zip(nominal.system.b.as_slice()) {
        *b = match drawn.spec.b {
            Draw::Fixed => [value; LANES],
            Draw::Perturb { sigma } => lanewise(&normal(), |xi| value * (1.0 + sigma * xi)),
            Draw::Random { scale } => lanewise(&normal(), |xi| xi * scale),
        };
    }
    for (x0, &value) in x0[..N].iter_mut().zip(nominal.x0.as_slice()) {
        *x0 = match drawn.spec.x0 {
            Draw::Fixed => [value; LANES],
            Draw::Perturb { sigma } => lanewise(&normal(), |xi| value + xi * sigma),
            Draw::Random { scale } => lanewise(&normal(), |xi| xi * scale),
        };
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::{DMatrix, DVector};

    use super::*;
    use crate::linear_ph::ensemble::LinearPhEnsembleSpec;
    use crate::linear_ph::{LinearPh, LinearPhMember};

    /// A nominal member of n states and m inputs: J skew, R diagonal ⪰ 0 (one zero), Q ≻ 0.
    fn nominal(n: usize, m: usize) -> LinearPhMember {
        let j = DMatrix::from_fn(n, n, |i, k| (k as f64 - i as f64) * 0.5);
        let r = DMatrix::from_fn(n, n, |i, k| if i == k { 0.1 * i as f64 } else { 0.0 });
        let q = DMatrix::from_fn(n, n, |i, k| if i == k { 2.0 } else { 0.3 });
        let b = DMatrix::from_fn(n, m, |i, k| 1.0 + i as f64 - k as f64);
        LinearPhMember {
            system: LinearPh::new("system", j, r, q, b).unwrap(),
            x0: DVector::from_fn(n, |i, _| i as f64 - 1.0),
        }
    }

    /// Zeroed matrices of a group of n states and m inputs.
    fn group_matrices(n: usize, m: usize) -> GroupMatrices {
        GroupMatrices {
            j: vec![ZERO; n * n],
            r: vec![ZERO; n * n],
            q: vec![ZERO; n * n],
            b: vec![ZERO; n * m],
            copies: [false; LANES],
        }
    }

    /// Draws a group of `members` members from member 3 on and checks each lane against
    /// the member's own draw.
    fn group_draw<const N: usize, const NN: usize>(drawn: &DrawnLinearPhEnsemble, members: usize) {
        let m = drawn.nominal.system.inputs();
        let mut group = group_matrices(N, m);
        let mut draw = GroupDraw::new(drawn);
        let first = 3;
        let streams = drawn.streams(first..first + members);
        draw.draw::<N, NN>(drawn, &streams, first, members, &mut group)
            .unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for lane in 0..LANES {
            let index = first + if lane < members { lane } else { 0 };
            let want = drawn.draw(index).unwrap();
            let lane_of = |lanes: &[Lanes]| lanes.iter().map(|e| e[lane]).collect::<Vec<_>>();
            let system = &want.system;
            let what = format!("n = {N}, m = {m}, {:?}, lane {lane}", drawn.spec);
            let drawn_lanes = [
                ("J", lane_of(&group.j), system.j.as_slice()),
                ("R", lane_of(&group.r), system.r.as_slice()),
                ("Q", lane_of(&group.q), system.q.as_slice()),
                ("B", lane_of(&group.b), system.b.as_slice()),
                ("x0", draw.x0::<N>(lane).to_vec(), want.x0.as_slice()),
            ];
            for (name, got, want) in drawn_lanes {
                assert_eq!(bits(&got), bits(want), "{name} {what}");
            }
            assert_eq!(group.copies[lane], lane >= members);
        }
    }

    /// Each lane holds the member that [`DrawnLinearPhEnsemble::draw`] draws, bit for bit,
    /// for every kind of draw, n ≤ 5, with and without the Lobatto pair's mask, in full
    /// and partial groups.
    #[test]
    fn group_draws_equal_member_draws() {
        let kinds = [
            Draw::Fixed,
            Draw::Perturb { sigma: 0.3 },
            Draw::Random { scale: 0.7 },
        ];
        for n in 1..=MAX_GROUP_DRAW_STATES {
            for (case, &kind) in kinds.iter().enumerate() {
                for other in kinds {
                    let split = (case == 2 && n % 2 == 0).then_some(n / 2);
                    let spec = LinearPhEnsembleSpec {
                        members: 64,
                        seed: 27 + n as u64,
                        j: if split.is_some() { Draw::Fixed } else { kind },
                        r: kind,
                        q: other,
                        b: other,
                        x0: kind,
                    };
                    let m = 1 + case % 2;
                    let drawn = DrawnLinearPhEnsemble::new(nominal(n, m), spec, split).unwrap();
                    for members in [LANES, 3] {
                        match n {
                            1 => group_draw::<1, 1>(&drawn, members),
                            2 => group_draw::<2, 4>(&drawn, members),
                            3 => group_draw::<3, 9>(&drawn, members),
                            4 => group_draw::<4, 16>(&drawn, members),
                            _ => group_draw::<5, 25>(&drawn, members),
                        }
                    }
                }
            }
        }
    }

    /// A group's error is its first refused member's, in member order, with the words of
    /// that member's own draw: x0 drawn so wide that H(x0) overflows for about one member
    /// in 16 (groups refused and groups accepted), and so wide that x0 itself, or H(x0),
    /// overflows for most members.
    #[test]
    fn a_group_refuses_its_first_refused_member() {
        for (sigma, words) in [(4e153, "H(x0)"), (f64::MAX, "x0")] {
            let spec = LinearPhEnsembleSpec {
                members: 64,
                seed: 5,
                j: Draw::Fixed,
                r: Draw::Fixed,
                q: Draw::Perturb { sigma: 0.3 },
                b: Draw::Fixed,
                x0: Draw::Perturb { sigma },
            };
            let drawn = DrawnLinearPhEnsemble::new(nominal(2, 1), spec, None).unwrap();
            let mut group = group_matrices(2, 1);
            let mut draw = GroupDraw::new(&drawn);
            let streams = drawn.streams(0..64);
            let (mut refused, mut accepted) = (0, 0);
            for first in (0..64).step_by(LANES) {
                let got = draw.draw::<2, 4>(&drawn, &streams, first, LANES, &mut group);
                let want = (first..first + LANES).find_map(|i| drawn.draw(i).err());
                match (got, want) {
                    (Ok(()), None) => accepted += 1,
                    (Err(got), Some(want)) => {
                        assert_eq!(got.to_string(), want.to_string());
                        assert!(got.to_string().contains(words), "{got}");
                        refused += 1;
                    }
                    (got, want) => panic!("group {first}: {got:?} against {want:?}"),
                }
            }
            assert!(refused > 0, "σ = {sigma}: no group refused");
            assert!(
                sigma == f64::MAX || accepted > 0,
                "σ = {sigma}: every group refused"
            );
        }
    }
}
