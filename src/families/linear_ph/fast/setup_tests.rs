//! The stack set-up's tests: its operators against the general path's, bit for bit.

use super::*;
use crate::linear_ph::{LinearPh, LinearPhMember, OperatorWorkspace};
use crate::model::Signal;
use crate::tableau::{Scheme, SchemeFamily};
use nalgebra::DVector;
use rand::{Rng, SeedableRng};

/// A random member of n states and m inputs: J skew, R = C Cᵀ of rank ≤ n/2 + 1 (some
/// singular), Q ≻ 0, B with a zero entry; in the canonical form of the Lobatto pair
/// (J = [[0, I], [−I, 0]], R and Q block-diagonal) when `canonical`.
fn member(rng: &mut impl Rng, n: usize, m: usize, canonical: bool) -> LinearPhMember {
    let mut normal = |rows, cols| DMatrix::from_fn(rows, cols, |_, _| rng.random_range(-1.0..1.0));
    let half = n / 2;
    let mask = |a: DMatrix<f64>| {
        DMatrix::from_fn(n, n, |i, k| {
            if canonical && (i < half) != (k < half) {
                0.0
            } else {
                a[(i, k)]
            }
        })
    };
    let a = normal(n, n);
    let j = if canonical {
        crate::linear_ph::model::canonical_structure(n)
    } else {
        &a - a.transpose()
    };
    let c = normal(n, half + 1);
    let r = mask(&c * c.transpose() * 0.3);
    let d = normal(n, n);
    let q = mask(DMatrix::identity(n, n) + &d * d.transpose() * 0.5);
    let mut b = normal(n, m);
    b[(0, 0)] = 0.0;
    let r = (&r + r.transpose()) * 0.5;
    let q = (&q + q.transpose()) * 0.5;
    LinearPhMember {
        system: LinearPh::new("system", j, r, q, b).unwrap(),
        x0: DVector::from_element(n, 0.5),
    }
}

#[test]
fn setup_matches_step_operators() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(27);
    let recordings = [
        Recording {
            trajectory: false,
            energy: false,
            outputs: false,
        },
        Recording {
            trajectory: true,
            energy: false,
            outputs: true,
        },
        Recording {
            trajectory: true,
            energy: true,
            outputs: true,
        },
    ];
    for n in 1..=MAX_SETUP_STATES {
        for (family, stages) in [
            (SchemeFamily::Gauss, 1),
            (SchemeFamily::Gauss, 2),
            (SchemeFamily::Gauss, 3),
            (SchemeFamily::Gauss, 4),
            (SchemeFamily::LobattoIiia, 3),
            (SchemeFamily::LobattoPair, 2),
        ] {
            if family == SchemeFamily::LobattoPair && n % 2 == 1 {
                continue;
            }
            for m in 1..=2 {
                let scheme = Scheme::new(family, stages).unwrap();
                // The second input is silent: its columns are zeroed.
                let inputs: Vec<Signal> = (0..m)
                    .map(|c| {
                        if c == 0 {
                            Signal::Harmonic {
                                amplitude: 1.0,
                                omega: 1.0,
                                phase: 0.3,
                                offset: 0.1,
                            }
                        } else {
                            Signal::Zero
                        }
                    })
                    .collect();
                for recording in recordings {
                    let members: Vec<LinearPhMember> = (0..LANES)
                        .map(|_| member(&mut rng, n, m, family == SchemeFamily::LobattoPair))
                        .collect();
                    let plan = test_plan(scheme.clone(), &inputs, members.clone(), recording);
                    if !fits(&plan) {
                        continue;
                    }
                    let mut scratch = SetupScratch::new(&plan, recording).unwrap();
                    let layout = scratch.layout();
                    // Lane l holds member l, then every lane member 0 (a group of one
                    // member, built column by column across the lanes).
                    for one_member in [false, true] {
                        let member_of = |lane: usize| &members[if one_member { 0 } else { lane }];
                        let parts: [MemberParts; LANES] =
                            std::array::from_fn(|lane| MemberParts::of(member_of(lane)));
                        let mut out = vec![[f64::NAN; LANES]; layout.len()];
                        let ranks = scratch.build(&parts, &mut out).unwrap();
                        let mut work = OperatorWorkspace::default();
                        for lane in 0..LANES {
                            let member = member_of(lane);
                            let general = plan
                                .kernel_operators_in(member, recording, &mut work)
                                .unwrap();
                            let out: Vec<f64> = out.iter().map(|entry| entry[lane]).collect();
                            let rank = ranks[lane];
                            assert_eq!(rank, general.rank);
                            let p = layout.width();
                            let bits =
                                |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                            assert_eq!(
                                bits(&out[..n * p]),
                                bits(&general.delta),
                                "Δ, n = {n}, {family:?} {stages}, m = {m}, lane {lane}, one member: {one_member}"
                            );
                            if layout.outputs {
                                assert_eq!(
                                    bits(&out[layout.output_at()..layout.dissipation_at()]),
                                    bits(&general.output),
                                    "Y"
                                );
                            }
                            if layout.energy {
                                let mut w = Vec::new();
                                for i in 0..stages {
                                    for k in 0..rank {
                                        let row = layout.dissipation_at() + (i * n + k) * p;
                                        w.extend_from_slice(&out[row..row + p]);
                                    }
                                    for k in rank..n {
                                        let row = layout.dissipation_at() + (i * n + k) * p;
                                        assert!(out[row..row + p].iter().all(|&v| v == 0.0));
                                    }
                                }
                                assert_eq!(bits(&w), bits(&general.dissipation), "W");
                                assert_eq!(bits(&out[layout.q_at()..]), bits(&general.q), "Q");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn stack_factor_is_the_heap_factor() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(28);
    for case in 0..2000 {
        let n = 1 + case % 5;
        let rank = rng.random_range(0..=n);
        let c = DMatrix::from_fn(n, rank, |_, _| rng.random_range(-1.0..1.0));
        let r = &c * c.transpose();
        let r = (&r + r.transpose()) * 0.5;
        let heap = dissipation_factor(&r);
        let mut stack = [f64::NAN; 64];
        let kept = stack_dissipation_factor(n, r.as_slice(), &mut stack).unwrap();
        assert_eq!(kept, heap.ncols(), "{r}");
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&stack[..n * kept]), bits(heap.as_slice()), "{r}");
    }
}

fn test_plan(
    scheme: Scheme,
    inputs: &[Signal],
    members: Vec<LinearPhMember>,
    recording: Recording,
) -> LinearPhPlan {
    LinearPhPlan::new(scheme, 0.01, 1.0, members, inputs, 1)
        .unwrap()
        .with_recording(recording)
}
