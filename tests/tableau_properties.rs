//! Properties every table must satisfy, for every supported stage count (Hairer, Lubich &
//! Wanner, GNI §II.1.4 and §IV.2): simplifying assumptions B(p), C(q), D(r); the symplectic
//! pairing b_i â_ij + b_j a_ji = b_i b_j of IIIA/IIIB; the conservation condition (52) of
//! Kotyczka & Lefèvre for Gauss; M symmetric positive definite with row sums b and
//! m_ij = b_i δ_ij for Gauss.

use harbor::model::validate::smallest_eigenvalue;
use harbor::tableau::{Family, LobattoPair, Tableau};

/// 1e-14 for s ≤ 6 as required; the 7- and 8-stage Gauss tables get 1e-13.
fn tolerance(s: usize) -> f64 {
    if s <= 6 { 1e-14 } else { 1e-13 }
}

fn all_tables() -> Vec<Tableau> {
    let mut tables = Vec::new();
    for family in [Family::Gauss, Family::LobattoIiia, Family::LobattoIiib] {
        for s in family.stage_range() {
            tables.push(Tableau::new(family, s).unwrap());
        }
    }
    tables
}

fn expect(what: &str, found: f64, expected: f64, tol: f64) {
    let err = (found - expected).abs();
    assert!(
        err <= tol,
        "{what}: found {found:.17e}, expected {expected:.17e}, error {err:.2e} > {tol:.0e}"
    );
}

/// (B(p), C(q), D(r)) that each family satisfies.
fn assumptions(t: &Tableau) -> (usize, usize, usize) {
    let s = t.stages;
    match t.family {
        Family::Gauss => (2 * s, s, s),
        Family::LobattoIiia => (2 * s - 2, s, s - 2),
        Family::LobattoIiib => (2 * s - 2, s - 2, s),
    }
}

#[test]
fn simplifying_assumptions_b_c_d() {
    for t in all_tables() {
        let (p, q, r) = assumptions(&t);
        let (s, tol, name) = (
            t.stages,
            tolerance(t.stages),
            format!("{}-{}", t.family.name(), t.stages),
        );
        for k in 1..=p {
            let sum: f64 = (0..s).map(|i| t.b[i] * t.c[i].powi(k as i32 - 1)).sum();
            expect(&format!("{name} B({k})"), sum, 1.0 / k as f64, tol);
        }
        for k in 1..=q {
            for i in 0..s {
                let sum: f64 = (0..s)
                    .map(|j| t.a[(i, j)] * t.c[j].powi(k as i32 - 1))
                    .sum();
                expect(
                    &format!("{name} C({k}) row {i}"),
                    sum,
                    t.c[i].powi(k as i32) / k as f64,
                    tol,
                );
            }
        }
        for k in 1..=r {
            for j in 0..s {
                let sum: f64 = (0..s)
                    .map(|i| t.b[i] * t.c[i].powi(k as i32 - 1) * t.a[(i, j)])
                    .sum();
                let expected = t.b[j] * (1.0 - t.c[j].powi(k as i32)) / k as f64;
                expect(&format!("{name} D({k}) column {j}"), sum, expected, tol);
            }
        }
    }
}

#[test]
fn nodes_are_symmetric_and_increasing() {
    for t in all_tables() {
        let s = t.stages;
        for i in 0..s {
            expect(
                &format!("{}-{s} c symmetry", t.family.name()),
                t.c[i] + t.c[s - 1 - i],
                1.0,
                tolerance(s),
            );
            expect(
                &format!("{}-{s} b symmetry", t.family.name()),
                t.b[i],
                t.b[s - 1 - i],
                tolerance(s),
            );
            if i > 0 {
                assert!(
                    t.c[i] > t.c[i - 1],
                    "{}-{s}: nodes not increasing",
                    t.family.name()
                );
            }
        }
    }
}

#[test]
fn lobatto_pair_is_symplectic() {
    for s in 2..=6 {
        let pair = LobattoPair::new(s).unwrap();
        let (a, ah, b) = (&pair.positions.a, &pair.momenta.a, &pair.positions.b);
        for i in 0..s {
            for j in 0..s {
                expect(
                    &format!("pair-{s} b_i â_ij + b_j a_ji − b_i b_j at ({i},{j})"),
                    b[i] * ah[(i, j)] + b[j] * a[(j, i)],
                    b[i] * b[j],
                    tolerance(s),
                );
            }
        }
        assert_eq!(pair.order(), 2 * s - 2);
        // Lobatto IIIA has a zero first row, IIIB a zero last column.
        for j in 0..s {
            assert_eq!(a[(0, j)], 0.0, "IIIA-{s} first row");
            assert!(
                ah[(j, s - 1)].abs() <= tolerance(s),
                "IIIB-{s} last column: {:e}",
                ah[(j, s - 1)]
            );
        }
    }
}

#[test]
fn gauss_satisfies_the_exact_energy_balance_conditions() {
    // Kotyczka & Lefèvre eq. (52): a_ii = b_i / 2 and a_ij b_i + a_ji b_j = b_i b_j.
    for s in 1..=8 {
        let t = Tableau::gauss(s).unwrap();
        for i in 0..s {
            for j in 0..s {
                let lhs = t.a[(i, j)] * t.b[i] + t.a[(j, i)] * t.b[j];
                expect(
                    &format!("gauss-{s} (52) at ({i},{j})"),
                    lhs,
                    t.b[i] * t.b[j],
                    tolerance(s),
                );
            }
            expect(
                &format!("gauss-{s} a_ii"),
                t.a[(i, i)],
                0.5 * t.b[i],
                tolerance(s),
            );
        }
    }
}

#[test]
fn mass_matrix_is_symmetric_positive_definite_with_row_sums_b() {
    for t in all_tables() {
        let (s, tol) = (t.stages, tolerance(t.stages));
        let name = format!("{}-{s}", t.family.name());
        for i in 0..s {
            let row_sum: f64 = (0..s).map(|j| t.m[(i, j)]).sum();
            expect(&format!("{name} Σ_j m_{i}j = b_{i}"), row_sum, t.b[i], tol);
            for j in 0..s {
                expect(
                    &format!("{name} m symmetry ({i},{j})"),
                    t.m[(i, j)],
                    t.m[(j, i)],
                    tol,
                );
                if t.family == Family::Gauss {
                    let expected = if i == j { t.b[i] } else { 0.0 };
                    expect(
                        &format!("{name} m_ij = b_i δ_ij at ({i},{j})"),
                        t.m[(i, j)],
                        expected,
                        tol,
                    );
                }
            }
        }
        let lambda = smallest_eigenvalue(&t.m);
        assert!(lambda > 1e-3, "{name}: M smallest eigenvalue {lambda:e}");
    }
}
