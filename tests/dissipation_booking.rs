//! How the dissipated energy is booked (Kotyczka & Lefèvre 2019, §5.2): harbor books
//! h eᵀ(M ⊗ R)e per step, the dissipation term of the supplied energy (24) with R in the
//! dynamics, where the paper prints (71), ΔH̃^k = −r h (y^k)ᵀ y^k + h (y^k)ᵀ v^k, with the
//! discrete output y^k = Gᵀ M e^k of (30). For the damped oscillator (R = r g gᵀ,
//! y_i = gᵀ (M e)_i) the two are
//!
//! ```text
//!   harbor:  h eᵀ(M ⊗ R)e = r h Σ_ij m_ij (gᵀe_i)(gᵀe_j) = r h yᵀ (M⁻¹ ⊗ 1) y
//!   (71):    r h yᵀ y      = r h Σ_i (Σ_j m_ij gᵀe_j)²    = r h eᵀ(M² ⊗ g gᵀ)e
//! ```
//!
//! equal exactly when M = I (s = 1, the implicit midpoint rule). For s ≥ 2 (71) read
//! with y^k of (30) books Σ_i b_i² of the dissipation under Gauss (M = diag(b)), while
//! h eᵀ(M ⊗ R)e is what the stored energy loses, exactly for Gauss.

use harbor::linear_ph::{CollocationStepper, LinearPh, LinearPhMember, LinearPhPlan};
use harbor::model::Signal;
use harbor::tableau::{Scheme, SchemeFamily};
use nalgebra::{DMatrix, DVector};

const R: f64 = 0.1;

/// The damped oscillator of §5.2: J = [[0, 1], [−1, 0]], R = diag(0, r), Q = I, g = (0, 1),
/// x0 = (0, −1), v = 0.
fn oscillator() -> LinearPhMember {
    LinearPhMember {
        system: LinearPh::new(
            "system",
            DMatrix::from_row_slice(2, 2, &[0.0, 1.0, -1.0, 0.0]),
            DMatrix::from_row_slice(2, 2, &[0.0, 0.0, 0.0, R]),
            DMatrix::identity(2, 2),
            DMatrix::from_row_slice(2, 1, &[0.0, 1.0]),
        )
        .unwrap(),
        x0: DVector::from_vec(vec![0.0, -1.0]),
    }
}

/// Per step: (harbor's dissipated, r h yᵀ (M⁻¹ ⊗ 1) y, (71)'s r h yᵀy, ΔH̄), over [0, 10].
fn steps(family: SchemeFamily, stages: usize, h: f64) -> (Scheme, Vec<[f64; 4]>) {
    let scheme = Scheme::new(family, stages).unwrap();
    let member = oscillator();
    let plan = LinearPhPlan::new(
        scheme.clone(),
        h,
        10.0,
        vec![member.clone()],
        &[Signal::Zero],
        1,
    )
    .unwrap();
    let stepper = CollocationStepper::new(&plan, &member).unwrap();
    let mut scratch = stepper.scratch();
    let s = scheme.stages;
    let m_inverse = scheme.m.clone().try_inverse().unwrap();
    let (mut x, mut carry) = (member.x0.as_slice().to_vec(), vec![0.0; 2]);
    let (u, mut y) = (vec![0.0; s], vec![0.0; s]);
    let mut out = Vec::new();
    for _ in 0..plan.grid.steps {
        let energy = stepper.step(&mut x, &mut carry, &u, &mut y, &mut scratch);
        let y = DVector::from_column_slice(&y);
        let weighted = R * h * (y.transpose() * &m_inverse * &y)[(0, 0)];
        let printed = R * h * y.norm_squared();
        out.push([energy.dissipated, weighted, printed, energy.stored]);
    }
    (scheme, out)
}

#[test]
fn the_booked_dissipation_is_r_h_y_m_inverse_y_for_every_scheme() {
    for (family, stages) in [
        (SchemeFamily::Gauss, 1),
        (SchemeFamily::Gauss, 2),
        (SchemeFamily::Gauss, 3),
        (SchemeFamily::LobattoPair, 3),
        (SchemeFamily::LobattoPair, 4),
    ] {
        let (_, steps) = steps(family, stages, 0.05);
        for (k, [booked, weighted, _, _]) in steps.into_iter().enumerate() {
            assert!(
                booked > 0.0,
                "{family:?}-{stages} step {k}: nothing dissipated"
            );
            assert!(
                (booked - weighted).abs() <= 1e-13 * booked,
                "{family:?}-{stages} step {k}: h eᵀ(M⊗R)e = {booked:e}, r h yᵀM⁻¹y = {weighted:e}"
            );
        }
    }
}

#[test]
fn the_printed_eq_71_agrees_with_the_booking_exactly_where_m_is_the_identity() {
    // s = 1 (implicit midpoint): M = [1], y = gᵀe, and (71) is h eᵀ(M ⊗ R)e.
    let (_, midpoint) = steps(SchemeFamily::Gauss, 1, 0.05);
    for (k, [booked, _, printed, stored]) in midpoint.into_iter().enumerate() {
        assert!(
            (booked - printed).abs() <= 1e-14 * booked,
            "midpoint step {k}: booked {booked:e}, (71) {printed:e}"
        );
        assert!((stored + booked).abs() <= 1e-14, "step {k}");
    }
    // s ≥ 2: (71) with y of (30) books Σ b_i² of what the stored energy loses (Gauss,
    // M = diag(b)); the booking loses nothing of it.
    for stages in [2, 3, 4] {
        let (scheme, steps) = steps(SchemeFamily::Gauss, stages, 0.01);
        let total = |i: usize| steps.iter().map(|e| e[i]).sum::<f64>();
        let (booked, printed, lost) = (total(0), total(2), -total(3));
        assert!(
            (booked - lost).abs() <= 1e-13,
            "gauss-{stages}: booked {booked:e}, stored energy lost {lost:e}"
        );
        let squares: f64 = scheme.b.iter().map(|b| b * b).sum();
        let ratio = printed / booked;
        assert!(
            (ratio - squares).abs() <= 1e-3 * squares,
            "gauss-{stages}: (71)/booked = {ratio}, Σ b_i² = {squares}"
        );
        assert!(
            ratio < 0.6,
            "gauss-{stages}: (71) is no approximation of the loss"
        );
    }
}
