//! Ensembles: either an explicit list of members, or N members drawn around a nominal
//! system. Member i's draw depends only on (seed, i) — a ChaCha8 stream selected by i — so
//! results are identical for any chunk size, thread count or sharding, and members are
//! materialised chunk by chunk with bounded memory.
//!
//! Draws (`[ensemble]` keys `J`, `R`, `Q`, `B`, `x0`, each `{ kind = … }`):
//! - `fixed` (default): the nominal value;
//! - `perturb` with `sigma`, keeping the structure:
//!   J + σ s_J (A − Aᵀ)/√2 (skew); S R Sᵀ and S Q Sᵀ with S = I + σ E/√n (PSD, PD, rank
//!   kept); B_ij (1 + σ ξ_ij) (zero pattern kept); x0 + σ ξ;
//! - `random` with `scale`, fresh structured draws of the nominal's sizes:
//!   J = scale (A − Aᵀ)/√(2n); R = scale C Cᵀ/n; Q = scale (I + D Dᵀ/n); B = scale ξ;
//!   x0 = scale ξ;
//!
//! with A, C, D, E, ξ standard normal and s_J = max(1, max |J|). For the Lobatto pair
//! (canonical form) J must stay fixed and the R and Q draws are masked block-diagonal.

use nalgebra::allocator::Allocator;
use nalgebra::{Const, DMatrix, DVector, DefaultAllocator, Dim, Dyn, Matrix, OMatrix, RawStorage};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Deserialize;
use std::borrow::Cow;
use std::ops::Range;

use super::drawn_checks::{check_drawn_pd, check_drawn_psd, check_drawn_skew};
use super::plan::LinearPhMember;
use crate::error::{Error, Result};
use crate::linear_ph::LinearPh;
use crate::model::chacha_lanes::PrefetchedStream;
use crate::model::member_streams::{MemberStreams, REJECTION_WORDS};
use crate::model::ziggurat_normals::standard_normal;

/// How one parameter varies across members.
#[derive(
    Debug, Clone, Copy, PartialEq, Deserialize, serde::Serialize, schemars::JsonSchema, Default,
)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Draw {
    /// The nominal value for every member.
    #[default]
    Fixed,
    /// The nominal value perturbed, keeping its structure: J + σ s_J (A − Aᵀ)/√2,
    /// S R Sᵀ and S Q Sᵀ with S = I + σ E/√n, B_ij (1 + σ ξ_ij), x0 + σ ξ.
    Perturb {
        /// Relative size σ ≥ 0 of the perturbation.
        sigma: f64,
    },
    /// A fresh structured draw of the nominal's size: J = scale (A − Aᵀ)/√(2n),
    /// R = scale C Cᵀ/n, Q = scale (I + D Dᵀ/n), B = scale ξ, x0 = scale ξ.
    Random {
        /// Scale > 0 of the draw.
        scale: f64,
    },
}

/// `[ensemble]`.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinearPhEnsembleSpec {
    /// Number of members N.
    pub members: usize,
    /// Seed: member i depends only on (seed, i).
    #[serde(default)]
    pub seed: u64,
    /// How J varies across members.
    #[serde(rename = "J", default)]
    pub j: Draw,
    /// How R varies across members.
    #[serde(rename = "R", default)]
    pub r: Draw,
    /// How Q varies across members.
    #[serde(rename = "Q", default)]
    pub q: Draw,
    /// How B varies across members.
    #[serde(rename = "B", default)]
    pub b: Draw,
    /// How x0 varies across members.
    #[serde(default)]
    pub x0: Draw,
}

/// Most inputs m of a [`StackMember`].
pub const MAX_STACK_INPUTS: usize = 4;

/// A drawn member on the stack (n = `N` ≤ 5): what [`LinearPhMember`] holds, without a heap
/// allocation.
#[derive(Debug, Clone, Copy)]
pub struct StackMember<const N: usize> {
    pub j: nalgebra::SMatrix<f64, N, N>,
    pub r: nalgebra::SMatrix<f64, N, N>,
    pub q: nalgebra::SMatrix<f64, N, N>,
    /// B column-major (n × m) in its first n·m entries.
    pub b: [f64; 5 * MAX_STACK_INPUTS],
    pub x0: [f64; N],
}

/// Members drawn around a nominal one.
#[derive(Debug, Clone)]
pub struct DrawnLinearPhEnsemble {
    pub nominal: LinearPhMember,
    pub spec: LinearPhEnsembleSpec,
    /// Size of q under a partitioned scheme: draws keep the (q, p) block structure.
    pub split: Option<usize>,
}

/// The members of a run.
#[derive(Debug, Clone)]
pub enum LinearPhEnsemble {
    List(Vec<LinearPhMember>),
    Drawn(Box<DrawnLinearPhEnsemble>),
}

impl LinearPhEnsemble {
    /// The first `count` members (the same members: member i depends on (seed, i) alone).
    pub fn prefix(&self, count: usize) -> LinearPhEnsemble {
        match self {
            LinearPhEnsemble::List(members) => {
                LinearPhEnsemble::List(members[..count.min(members.len())].to_vec())
            }
            LinearPhEnsemble::Drawn(d) => {
                let mut drawn = d.clone();
                drawn.spec.members = count.min(d.spec.members);
                LinearPhEnsemble::Drawn(drawn)
            }
        }
    }

    pub fn len(&self) -> usize {
        match self {
            LinearPhEnsemble::List(members) => members.len(),
            LinearPhEnsemble::Drawn(d) => d.spec.members,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A member with the shapes every member has (the first, or the nominal).
    pub fn prototype(&self) -> &LinearPhMember {
        match self {
            LinearPhEnsemble::List(members) => &members[0],
            LinearPhEnsemble::Drawn(d) => &d.nominal,
        }
    }

    /// Member i.
    pub fn member(&self, index: usize) -> Result<LinearPhMember> {
        self.member_borrowed(index).map(Cow::into_owned)
    }

    /// Member i, borrowed where the ensemble holds its members (a list), drawn otherwise.
    pub fn member_borrowed(&self, index: usize) -> Result<Cow<'_, LinearPhMember>> {
        match self {
            LinearPhEnsemble::List(members) => Ok(Cow::Borrowed(&members[index])),
            LinearPhEnsemble::Drawn(d) => d.draw(index).map(Cow::Owned),
        }
    }

    /// Members `range`, in order, drawn on this thread (the first error in member order).
    pub fn members_in_order(&self, range: std::ops::Range<usize>) -> Result<Vec<LinearPhMember>> {
        range.map(|i| self.member(i)).collect()
    }

    /// Members `range`, in order.
    pub fn members(&self, range: std::ops::Range<usize>) -> Result<Vec<LinearPhMember>> {
        use rayon::prelude::*;
        range.into_par_iter().map(|i| self.member(i)).collect()
    }
}

fn check_parameter(field: &str, value: f64) -> Result<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!("must be a finite number ≥ 0, got {value}"),
        ))
    }
}

/// H(x0) = ½ x0ᵀ Q x0 as `LinearPh::hamiltonian` forms it (Q x0 by nalgebra's product,
/// then the dot), with Q x0 on the stack for n ≤ 8.
fn initial_energy(q: &DMatrix<f64>, x0: &[f64]) -> f64 {
    let n = x0.len();
    let x = nalgebra::DVectorView::from_slice(x0, n);
    let (mut stack, mut heap) = ([0.0; 8], Vec::new());
    let qx = if n <= stack.len() {
        &mut stack[..n]
    } else {
        heap.resize(n, 0.0);
        &mut heap[..]
    };
    let mut qx = nalgebra::DVectorViewMut::from_slice(qx, n);
    q.mul_to(&x, &mut qx);
    0.5 * x.dot(&qx)
}

impl DrawnLinearPhEnsemble {
    /// Checks the spec against the nominal member and the scheme's partition.
    pub fn new(
        nominal: LinearPhMember,
        spec: LinearPhEnsembleSpec,
        split: Option<usize>,
    ) -> Result<Self> {
        if spec.members == 0 {
            return Err(Error::invalid("ensemble.members", "must be ≥ 1, got 0"));
        }
        if spec.members > u32::MAX as usize {
            return Err(Error::invalid(
                "ensemble.members",
                format!("{} exceeds 2³² − 1", spec.members),
            ));
        }
        for (name, draw) in [
            ("J", spec.j),
            ("R", spec.r),
            ("Q", spec.q),
            ("B", spec.b),
            ("x0", spec.x0),
        ] {
            match draw {
                Draw::Fixed => {}
                Draw::Perturb { sigma } => {
                    check_parameter(&format!("ensemble.{name}.sigma"), sigma)?
                }
                Draw::Random { scale } => {
                    check_parameter(&format!("ensemble.{name}.scale"), scale)?
                }
            }
        }
        if split.is_some() && spec.j != Draw::Fixed {
            return Err(Error::invalid(
                "ensemble.J",
                "lobatto-pair needs the canonical J = [[0, I], [−I, 0]] in every member; use kind = \"fixed\"",
            ));
        }
        Ok(DrawnLinearPhEnsemble {
            nominal,
            spec,
            split,
        })
    }

    /// Member i's random stream: ChaCha8 seeded with the ensemble's seed, stream i.
    fn stream(&self, index: usize) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.spec.seed);
        rng.set_stream(index as u64);
        rng
    }

    /// The streams of the members `members`, for the fast engine's group draws and
    /// [`DrawnLinearPhEnsemble::draw_initial_state`].
    pub fn streams(&self, members: Range<usize>) -> MemberStreams {
        // Two words per normal, and room for a few of the ziggurat's rejections (past
        // them a stream goes on as ChaCha8Rng, exactly, only slower).
        let words = 2 * self.normals_per_member() + REJECTION_WORDS;
        MemberStreams::new(self.spec.seed, members, words)
    }

    /// The standard normals a member draws, but for the ziggurat's rejections: n² for each
    /// of J, R and Q drawn, n·m for B, n for x0.
    pub fn normals_per_member(&self) -> usize {
        let system = &self.nominal.system;
        let (n, m) = (system.states(), system.inputs());
        let spec = &self.spec;
        let drawn = |draw: Draw, count: usize| if draw == Draw::Fixed { 0 } else { count };
        drawn(spec.j, n * n)
            + drawn(spec.r, n * n)
            + drawn(spec.q, n * n)
            + drawn(spec.b, n * m)
            + drawn(spec.x0, n)
    }

    /// Member `index`, from its own random stream.
    pub fn draw(&self, index: usize) -> Result<LinearPhMember> {
        let mut rng = self.stream(index);
        // Up to n = 5 the n × n draws live on the stack: nalgebra multiplies matrices of at
        // most 5 rows or columns column by column whatever their storage, so these are the
        // dynamic draws' operations, bit for bit (larger dynamic products go to
        // `matrixmultiply`).
        let [j, r, q] = match self.nominal.system.states() {
            1 => self.draw_square(Const::<1>, &mut rng),
            2 => self.draw_square(Const::<2>, &mut rng),
            3 => self.draw_square(Const::<3>, &mut rng),
            4 => self.draw_square(Const::<4>, &mut rng),
            5 => self.draw_square(Const::<5>, &mut rng),
            n => self.draw_square(Dyn(n), &mut rng),
        };
        let system = &self.nominal.system;
        let (n, m) = (system.states(), system.inputs());
        let mut b = DMatrix::zeros(n, m);
        let mut x0 = DVector::zeros(n);
        let mut normal = || StandardNormal.sample(&mut rng);
        self.draw_b_x0(&mut normal, b.as_mut_slice(), x0.as_mut_slice());
        self.check_draw(index, &j, &r, &q, x0.as_slice())?;
        let member = LinearPhMember {
            system: LinearPh { j, r, q, b },
            x0,
        };
        if !member.system.hamiltonian(&member.x0).is_finite() {
            super::plan::check_initial_energy(&format!("ensemble member {index}"), &member)?;
        }
        Ok(member)
    }

    /// The checks of [`DrawnLinearPhEnsemble::draw`] on member `index` drawn on the stack
    /// (n = `N` ≤ 5, m ≤ [`MAX_STACK_INPUTS`]): the same decisions and errors.
    pub fn check_stack_member<const N: usize>(
        &self,
        index: usize,
        member: &StackMember<N>,
    ) -> Result<()> {
        let system = &self.nominal.system;
        let (n, m) = (system.states(), system.inputs());
        assert!(
            n == N && N <= 5 && m <= MAX_STACK_INPUTS,
            "a stack member of n = {n}, m = {m} as n = {N}"
        );
        self.check_draw(index, &member.j, &member.r, &member.q, &member.x0)?;
        let x0 = nalgebra::SVector::<f64, N>::from_column_slice(&member.x0);
        if !(0.5 * x0.dot(&(member.q * x0))).is_finite() {
            let heap = LinearPhMember {
                system: LinearPh {
                    j: to_dynamic(n, member.j.iter().copied()),
                    r: to_dynamic(n, member.r.iter().copied()),
                    q: to_dynamic(n, member.q.iter().copied()),
                    b: DMatrix::from_column_slice(n, m, &member.b[..n * m]),
                },
                x0: DVector::from_column_slice(&member.x0),
            };
            super::plan::check_initial_energy(&format!("ensemble member {index}"), &heap)?;
        }
        Ok(())
    }

    /// Whether only x0 varies across members (J, R, Q and B are the nominal's): then every
    /// member has the nominal's step operators.
    pub fn only_x0_drawn(&self) -> bool {
        let spec = &self.spec;
        [spec.j, spec.r, spec.q, spec.b]
            .iter()
            .all(|draw| *draw == Draw::Fixed)
    }

    /// Member `index`'s x0 where only x0 is drawn ([`DrawnLinearPhEnsemble::only_x0_drawn`]):
    /// the x0 of [`DrawnLinearPhEnsemble::draw`], bit for bit, with its checks (the nominal
    /// system was checked when the ensemble was built); `rng` is member `index`'s stream
    /// ([`MemberStreams::stream`]).
    pub fn draw_initial_state(
        &self,
        rng: &mut PrefetchedStream<'_>,
        index: usize,
        x0: &mut [f64],
    ) -> Result<()> {
        debug_assert!(self.only_x0_drawn());
        self.draw_b_x0(&mut || standard_normal(rng), &mut [], x0);
        check_drawn_x0(index, x0)?;
        if !initial_energy(&self.nominal.system.q, x0).is_finite() {
            let member = LinearPhMember {
                system: self.nominal.system.clone(),
                x0: DVector::from_column_slice(x0),
            };
            super::plan::check_initial_energy(&format!("ensemble member {index}"), &member)?;
        }
        Ok(())
    }

    /// B (column-major, n × m) and x0 of a member, the draw's random numbers after J, R
    /// and Q.
    fn draw_b_x0(&self, normal: &mut impl FnMut() -> f64, b: &mut [f64], x0: &mut [f64]) {
        let system = &self.nominal.system;
        for (b, &nominal) in b.iter_mut().zip(system.b.as_slice()) {
            *b = match self.spec.b {
                Draw::Fixed => nominal,
                Draw::Perturb { sigma } => nominal * (1.0 + sigma * normal()),
                Draw::Random { scale } => normal() * scale,
            };
        }
        for (x0, &nominal) in x0.iter_mut().zip(self.nominal.x0.as_slice()) {
            *x0 = match self.spec.x0 {
                Draw::Fixed => nominal,
                Draw::Perturb { sigma } => nominal + normal() * sigma,
                Draw::Random { scale } => normal() * scale,
            };
        }
    }

    /// The checks of `LinearPh::new` on a draw (the shapes are the nominal's), decided
    /// cheaply where the draw keeps the structure by construction, and x0 finite.
    fn check_draw<D: Dim, S: RawStorage<f64, D, D>>(
        &self,
        index: usize,
        j: &Matrix<f64, D, D, S>,
        r: &Matrix<f64, D, D, S>,
        q: &Matrix<f64, D, D, S>,
        x0: &[f64],
    ) -> Result<()> {
        check_drawn_x0(index, x0)?;
        let field = |name: &'static str| move || format!("ensemble member {index}.{name}");
        check_drawn_skew(field("J"), j)?;
        check_drawn_psd(field("R"), r)?;
        check_drawn_pd(field("Q"), q)
    }

    /// J, R and Q of a member as heap matrices ([`DrawnLinearPhEnsemble::draw_square_in`]).
    fn draw_square<D: Dim>(&self, d: D, rng: &mut impl Rng) -> [DMatrix<f64>; 3]
    where
        DefaultAllocator: Allocator<D, D>,
    {
        let n = self.nominal.system.states();
        self.draw_square_in(d, &mut || StandardNormal.sample(rng))
            .map(|a| to_dynamic(n, a.iter().copied()))
    }

    /// J, R and Q of a member (the draw's first random numbers), drawn as `d` × `d`
    /// matrices (n = `d`).
    fn draw_square_in<D: Dim>(
        &self,
        d: D,
        normal: &mut impl FnMut() -> f64,
    ) -> [OMatrix<f64, D, D>; 3]
    where
        DefaultAllocator: Allocator<D, D>,
    {
        let system = &self.nominal.system;
        let n = system.states();
        let mut square =
            || -> OMatrix<f64, D, D> { OMatrix::from_fn_generic(d, d, |_, _| normal()) };
        let nominal =
            |a: &DMatrix<f64>| OMatrix::<f64, D, D>::from_fn_generic(d, d, |i, k| a[(i, k)]);
        let identity = || OMatrix::<f64, D, D>::identity_generic(d, d);
        let mask = |mut a: OMatrix<f64, D, D>| -> OMatrix<f64, D, D> {
            if let Some(half) = self.split {
                for i in 0..n {
                    for k in 0..n {
                        if (i < half) != (k < half) {
                            a[(i, k)] = 0.0;
                        }
                    }
                }
            }
            a
        };
        let nf = n as f64;
        let j = match self.spec.j {
            Draw::Fixed => nominal(&system.j),
            Draw::Perturb { sigma } => {
                let a = square();
                let scale = system.j.amax().max(1.0);
                nominal(&system.j) + (&a - a.transpose()) * (sigma * scale / 2f64.sqrt())
            }
            Draw::Random { scale } => {
                let a = square();
                (&a - a.transpose()) * (scale / (2.0 * nf).sqrt())
            }
        };
        let congruence = |x: OMatrix<f64, D, D>, sigma: f64, e: OMatrix<f64, D, D>| {
            let s = identity() + mask(e) * (sigma / nf.sqrt());
            let y = &s * x * s.transpose();
            (&y + y.transpose()) * 0.5
        };
        let r = match self.spec.r {
            Draw::Fixed => nominal(&system.r),
            Draw::Perturb { sigma } => congruence(nominal(&system.r), sigma, square()),
            Draw::Random { scale } => {
                let c = square();
                mask(&c * c.transpose() * (scale / nf))
            }
        };
        let q = match self.spec.q {
            Draw::Fixed => nominal(&system.q),
            Draw::Perturb { sigma } => congruence(nominal(&system.q), sigma, square()),
            Draw::Random { scale } => {
                let d = square();
                mask((identity() + &d * d.transpose() / nf) * scale)
            }
        };
        [j, r, q]
    }
}

/// Refuses a drawn x0 that is not finite.
fn check_drawn_x0(index: usize, x0: &[f64]) -> Result<()> {
    match x0.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::invalid(
            "ensemble.x0",
            format!(
                "draws x0[{i}] = {} for member {index}: the draw's sigma or scale overflows the initial state",
                x0[i]
            ),
        )),
    }
}

/// The n × n matrix of `values` in column-major order.
fn to_dynamic(n: usize, values: impl Iterator<Item = f64>) -> DMatrix<f64> {
    DMatrix::from_iterator(n, n, values)
}

impl From<Vec<LinearPhMember>> for LinearPhEnsemble {
    fn from(members: Vec<LinearPhMember>) -> Self {
        LinearPhEnsemble::List(members)
    }
}

impl From<DrawnLinearPhEnsemble> for LinearPhEnsemble {
    fn from(drawn: DrawnLinearPhEnsemble) -> Self {
        LinearPhEnsemble::Drawn(Box::new(drawn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A nominal member of n states and 2 inputs: J skew, R diagonal ⪰ 0 (one zero), Q ≻ 0.
    fn nominal(n: usize) -> LinearPhMember {
        let j = DMatrix::from_fn(n, n, |i, k| (k as f64 - i as f64) * 0.5);
        let r = DMatrix::from_fn(n, n, |i, k| if i == k { 0.1 * i as f64 } else { 0.0 });
        let q = DMatrix::from_fn(n, n, |i, k| if i == k { 2.0 } else { 0.3 });
        let b = DMatrix::from_fn(n, 2, |i, k| 1.0 + i as f64 - k as f64);
        LinearPhMember {
            system: LinearPh::new("system", j, r, q, b).unwrap(),
            x0: DVector::from_fn(n, |i, _| i as f64 - 1.0),
        }
    }

    /// The stack draws (n ≤ 5) equal the dynamic ones bit for bit, for every kind of draw,
    /// with and without the Lobatto pair's mask.
    #[test]
    fn stack_draws_equal_dynamic_draws() {
        let kinds = [
            Draw::Fixed,
            Draw::Perturb { sigma: 0.3 },
            Draw::Random { scale: 0.7 },
        ];
        for n in 1..=5 {
            for (case, &kind) in kinds.iter().enumerate() {
                let split = (case == 2 && n % 2 == 0).then_some(n / 2);
                let spec = LinearPhEnsembleSpec {
                    members: 16,
                    seed: 27 + n as u64,
                    j: if split.is_some() { Draw::Fixed } else { kind },
                    r: kind,
                    q: kind,
                    b: kind,
                    x0: kind,
                };
                let drawn = DrawnLinearPhEnsemble::new(nominal(n), spec.clone(), split).unwrap();
                for index in 0..16u64 {
                    let stream = || {
                        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
                        rng.set_stream(index);
                        rng
                    };
                    let dynamic = drawn.draw_square(Dyn(n), &mut stream());
                    let stack = match n {
                        1 => drawn.draw_square(Const::<1>, &mut stream()),
                        2 => drawn.draw_square(Const::<2>, &mut stream()),
                        3 => drawn.draw_square(Const::<3>, &mut stream()),
                        4 => drawn.draw_square(Const::<4>, &mut stream()),
                        _ => drawn.draw_square(Const::<5>, &mut stream()),
                    };
                    let bits = |a: &[DMatrix<f64>; 3]| -> Vec<u64> {
                        a.iter()
                            .flat_map(|a| a.iter())
                            .map(|v| v.to_bits())
                            .collect()
                    };
                    assert_eq!(bits(&stack), bits(&dynamic), "n = {n}, {kind:?}, {index}");
                    let member = drawn.draw(index as usize).unwrap();
                    let system = member.system;
                    assert_eq!(bits(&[system.j, system.r, system.q]), bits(&stack));
                }
            }
        }
    }
}
