//! Collocation tables against closed forms derived by hand for s ≤ 4.
//!
//! Derivations: Gauss nodes are the roots of P_s(2τ − 1); for s = 2, 3, 4 these are
//! ½ ∓ √3/6; ½ ∓ √15/10, ½; ½ ∓ ½√(3/7 ± (2/7)√(6/5)). Weights on [0, 1] are half the
//! classical [−1, 1] weights: (1/2, 1/2); (5/18, 4/9, 5/18); (18 ∓ √30)/72 for the outer and
//! inner pairs. a_ij = ∫₀^{c_i} ℓ_j was integrated symbolically for s ≤ 3. Lobatto nodes are
//! 0, 1 and the roots of P'_{s−1}(2τ − 1): ½ for s = 3, ½ ∓ √5/10 for s = 4; IIIA rows
//! integrate ℓ_j from 0 to c_i, IIIB rows follow from D(s) in the Lagrange basis,
//! b_i â_ij = b_j ∫_{c_j}^1 ℓ_i. Mass matrices m_ij = ∫₀¹ ℓ_i ℓ_j for the Lobatto nodes:
//! s = 2, ℓ = (1 − τ, τ): [[1/3, 1/6], [1/6, 1/3]]; s = 3 with ℓ₁ = (2τ − 1)(τ − 1),
//! ℓ₂ = 4τ(1 − τ), ℓ₃ = τ(2τ − 1): [[2/15, 1/15, −1/30], [1/15, 8/15, 1/15],
//! [−1/30, 1/15, 2/15]] (the seed paper's eq. 59 misprints the middle row).

use harbor::tableau::{Family, Tableau};

const TOL: f64 = 1e-14;

fn assert_close(what: &str, found: f64, expected: f64) {
    let err = (found - expected).abs();
    assert!(
        err <= TOL,
        "{what}: found {found:.17e}, expected {expected:.17e}, |error| = {err:.2e} > {TOL:.0e}"
    );
}

fn check(t: &Tableau, c: &[f64], b: &[f64], a: Option<&[&[f64]]>, m: Option<&[&[f64]]>) {
    let name = format!("{}-{}", t.family.name(), t.stages);
    for i in 0..t.stages {
        assert_close(&format!("{name} c[{i}]"), t.c[i], c[i]);
        assert_close(&format!("{name} b[{i}]"), t.b[i], b[i]);
        for j in 0..t.stages {
            if let Some(a) = a {
                assert_close(&format!("{name} a[{i}][{j}]"), t.a[(i, j)], a[i][j]);
            }
            if let Some(m) = m {
                assert_close(&format!("{name} m[{i}][{j}]"), t.m[(i, j)], m[i][j]);
            }
        }
    }
}

#[test]
fn gauss_one_stage_is_the_implicit_midpoint_rule() {
    let t = Tableau::gauss(1).unwrap();
    check(&t, &[0.5], &[1.0], Some(&[&[0.5]]), Some(&[&[1.0]]));
    assert_eq!(t.order, 2);
}

#[test]
fn gauss_two_stages() {
    let r3 = 3f64.sqrt();
    let t = Tableau::gauss(2).unwrap();
    check(
        &t,
        &[0.5 - r3 / 6.0, 0.5 + r3 / 6.0],
        &[0.5, 0.5],
        Some(&[&[0.25, 0.25 - r3 / 6.0], &[0.25 + r3 / 6.0, 0.25]]),
        Some(&[&[0.5, 0.0], &[0.0, 0.5]]),
    );
    assert_eq!(t.order, 4);
}

#[test]
fn gauss_three_stages() {
    let r = 15f64.sqrt();
    let t = Tableau::gauss(3).unwrap();
    check(
        &t,
        &[0.5 - r / 10.0, 0.5, 0.5 + r / 10.0],
        &[5.0 / 18.0, 4.0 / 9.0, 5.0 / 18.0],
        Some(&[
            &[5.0 / 36.0, 2.0 / 9.0 - r / 15.0, 5.0 / 36.0 - r / 30.0],
            &[5.0 / 36.0 + r / 24.0, 2.0 / 9.0, 5.0 / 36.0 - r / 24.0],
            &[5.0 / 36.0 + r / 30.0, 2.0 / 9.0 + r / 15.0, 5.0 / 36.0],
        ]),
        Some(&[
            &[5.0 / 18.0, 0.0, 0.0],
            &[0.0, 4.0 / 9.0, 0.0],
            &[0.0, 0.0, 5.0 / 18.0],
        ]),
    );
}

#[test]
fn gauss_four_stages_nodes_and_weights() {
    let r = (6.0f64 / 5.0).sqrt();
    let outer = 0.5 * (3.0 / 7.0 + 2.0 / 7.0 * r).sqrt();
    let inner = 0.5 * (3.0 / 7.0 - 2.0 / 7.0 * r).sqrt();
    let w_outer = (18.0 - 30f64.sqrt()) / 72.0;
    let w_inner = (18.0 + 30f64.sqrt()) / 72.0;
    let t = Tableau::gauss(4).unwrap();
    let diag = [w_outer, w_inner, w_inner, w_outer];
    let m: Vec<Vec<f64>> = (0..4)
        .map(|i| (0..4).map(|j| if i == j { diag[i] } else { 0.0 }).collect())
        .collect();
    let m_rows: Vec<&[f64]> = m.iter().map(|r| r.as_slice()).collect();
    check(
        &t,
        &[0.5 - outer, 0.5 - inner, 0.5 + inner, 0.5 + outer],
        &diag,
        None,
        Some(&m_rows),
    );
    assert_eq!(t.order, 8);
}

#[test]
fn lobatto_two_stages_trapezoidal_pair() {
    let iiia = Tableau::lobatto_iiia(2).unwrap();
    let mass: &[&[f64]] = &[&[1.0 / 3.0, 1.0 / 6.0], &[1.0 / 6.0, 1.0 / 3.0]];
    check(
        &iiia,
        &[0.0, 1.0],
        &[0.5, 0.5],
        Some(&[&[0.0, 0.0], &[0.5, 0.5]]),
        Some(mass),
    );
    let iiib = Tableau::lobatto_iiib(2).unwrap();
    check(
        &iiib,
        &[0.0, 1.0],
        &[0.5, 0.5],
        Some(&[&[0.5, 0.0], &[0.5, 0.0]]),
        Some(mass),
    );
    assert_eq!(iiia.order, 2);
}

#[test]
fn lobatto_three_stages() {
    let mass: &[&[f64]] = &[
        &[2.0 / 15.0, 1.0 / 15.0, -1.0 / 30.0],
        &[1.0 / 15.0, 8.0 / 15.0, 1.0 / 15.0],
        &[-1.0 / 30.0, 1.0 / 15.0, 2.0 / 15.0],
    ];
    let c = [0.0, 0.5, 1.0];
    let b = [1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0];
    let iiia = Tableau::lobatto_iiia(3).unwrap();
    check(
        &iiia,
        &c,
        &b,
        Some(&[
            &[0.0, 0.0, 0.0],
            &[5.0 / 24.0, 1.0 / 3.0, -1.0 / 24.0],
            &[1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0],
        ]),
        Some(mass),
    );
    let iiib = Tableau::lobatto_iiib(3).unwrap();
    check(
        &iiib,
        &c,
        &b,
        Some(&[
            &[1.0 / 6.0, -1.0 / 6.0, 0.0],
            &[1.0 / 6.0, 1.0 / 3.0, 0.0],
            &[1.0 / 6.0, 5.0 / 6.0, 0.0],
        ]),
        Some(mass),
    );
    assert_eq!(iiia.order, 4);
}

#[test]
fn lobatto_four_stages() {
    let r5 = 5f64.sqrt();
    let c = [0.0, 0.5 - r5 / 10.0, 0.5 + r5 / 10.0, 1.0];
    let b = [1.0 / 12.0, 5.0 / 12.0, 5.0 / 12.0, 1.0 / 12.0];
    let iiia = Tableau::lobatto_iiia(4).unwrap();
    check(
        &iiia,
        &c,
        &b,
        Some(&[
            &[0.0, 0.0, 0.0, 0.0],
            &[
                (11.0 + r5) / 120.0,
                (25.0 - r5) / 120.0,
                (25.0 - 13.0 * r5) / 120.0,
                (-1.0 + r5) / 120.0,
            ],
            &[
                (11.0 - r5) / 120.0,
                (25.0 + 13.0 * r5) / 120.0,
                (25.0 + r5) / 120.0,
                (-1.0 - r5) / 120.0,
            ],
            &[1.0 / 12.0, 5.0 / 12.0, 5.0 / 12.0, 1.0 / 12.0],
        ]),
        None,
    );
    let iiib = Tableau::lobatto_iiib(4).unwrap();
    check(
        &iiib,
        &c,
        &b,
        Some(&[
            &[1.0 / 12.0, (-1.0 - r5) / 24.0, (-1.0 + r5) / 24.0, 0.0],
            &[
                1.0 / 12.0,
                (25.0 + r5) / 120.0,
                (25.0 - 13.0 * r5) / 120.0,
                0.0,
            ],
            &[
                1.0 / 12.0,
                (25.0 + 13.0 * r5) / 120.0,
                (25.0 - r5) / 120.0,
                0.0,
            ],
            &[1.0 / 12.0, (11.0 - r5) / 24.0, (11.0 + r5) / 24.0, 0.0],
        ]),
        None,
    );
    assert_eq!(iiib.order, 6);
}

#[test]
fn stage_counts_outside_the_supported_range_are_rejected() {
    for (family, s) in [
        (Family::Gauss, 0),
        (Family::Gauss, 9),
        (Family::LobattoIiia, 1),
        (Family::LobattoIiib, 7),
    ] {
        let err = Tableau::new(family, s).unwrap_err().to_string();
        assert!(
            err.contains("stages") && err.contains(&format!("got {s}")),
            "{err}"
        );
    }
}

/// Entries that are rational numbers must equal the correctly rounded f64 of that rational
/// (a single f64 division p/q is correctly rounded), bit for bit.
#[test]
fn rational_entries_are_correctly_rounded() {
    let exact = |what: &str, found: f64, p: f64, q: f64| {
        assert_eq!(
            found.to_bits(),
            (p / q).to_bits(),
            "{what}: found {found:e}, expected {p}/{q} = {:e}",
            p / q
        );
    };
    let g2 = Tableau::gauss(2).unwrap();
    for i in 0..2 {
        exact("gauss-2 b", g2.b[i], 1.0, 2.0);
        exact("gauss-2 a_ii", g2.a[(i, i)], 1.0, 4.0);
        exact("gauss-2 m_ii", g2.m[(i, i)], 1.0, 2.0);
        assert_eq!(
            g2.m[(i, 1 - i)],
            0.0,
            "gauss-2 off-diagonal of M is exactly zero"
        );
    }
    let g3 = Tableau::gauss(3).unwrap();
    exact("gauss-3 b_1", g3.b[0], 5.0, 18.0);
    exact("gauss-3 b_2", g3.b[1], 4.0, 9.0);
    exact("gauss-3 a_11", g3.a[(0, 0)], 5.0, 36.0);
    exact("gauss-3 a_22", g3.a[(1, 1)], 2.0, 9.0);
    exact("gauss-3 c_2", g3.c[1], 1.0, 2.0);
    let l3a = Tableau::lobatto_iiia(3).unwrap();
    let l3b = Tableau::lobatto_iiib(3).unwrap();
    for (i, j, p, q) in [
        (1, 0, 5.0, 24.0),
        (1, 1, 1.0, 3.0),
        (1, 2, -1.0, 24.0),
        (2, 1, 2.0, 3.0),
    ] {
        exact(&format!("lobatto-iiia-3 a[{i}][{j}]"), l3a.a[(i, j)], p, q);
    }
    for (i, j, p, q) in [
        (0, 0, 1.0, 6.0),
        (0, 1, -1.0, 6.0),
        (1, 1, 1.0, 3.0),
        (2, 1, 5.0, 6.0),
    ] {
        exact(&format!("lobatto-iiib-3 a[{i}][{j}]"), l3b.a[(i, j)], p, q);
    }
    for (i, j, p, q) in [
        (0, 0, 2.0, 15.0),
        (0, 1, 1.0, 15.0),
        (0, 2, -1.0, 30.0),
        (1, 1, 8.0, 15.0),
    ] {
        exact(&format!("lobatto-3 m[{i}][{j}]"), l3a.m[(i, j)], p, q);
    }
    let l4 = Tableau::lobatto_iiia(4).unwrap();
    exact("lobatto-4 b_1", l4.b[0], 1.0, 12.0);
    exact("lobatto-4 b_2", l4.b[1], 5.0, 12.0);
}
