//! Convergence orders of the energy errors in Kotyczka & Lefèvre §5.1 (and §5.2): relative
//! errors of total supplied and stored energy against the exact continuous energy change,
//! slopes fitted by `harbor study energy-order` over step sizes where round-off does not
//! dominate. Expected: 2s for Gauss, 2s − 2 for the Lobatto pair, each within ±0.3.

mod common;

use harbor::study::energy_order;

fn check_orders(example: &str) {
    let study = energy_order::run(&common::example(example, &[])).unwrap();
    print!("{}", study.table());
    assert_eq!(study.fits.len(), 5, "one fit per scheme");
    for fit in &study.fits {
        assert!(
            fit.points >= 3,
            "{}: only {} points above the round-off floor",
            fit.scheme,
            fit.points
        );
        for (what, slope) in [
            ("supplied", fit.supplied_slope),
            ("stored", fit.stored_slope),
        ] {
            assert!(
                (slope - fit.expected_order as f64).abs() <= 0.3,
                "{example} {}: {what} energy slope {slope:.3}, expected {} ± 0.3",
                fit.scheme,
                fit.expected_order
            );
        }
    }
    // Gauss: supplied and stored totals coincide (exact discrete energy balance).
    for p in study
        .points
        .iter()
        .filter(|p| p.scheme.starts_with("gauss"))
    {
        let gap = (p.supplied_total - p.stored_total).abs();
        assert!(
            gap <= 1e-13 * p.stored_total.abs().max(1.0),
            "{} h = {}: supplied − stored = {gap:e}",
            p.scheme,
            p.h
        );
    }
}

#[test]
fn pulse_experiment_energy_errors_converge_with_the_scheme_order() {
    check_orders("oscillator_pulse.toml");
}

#[test]
fn damped_experiment_energy_errors_converge_with_the_scheme_order() {
    check_orders("oscillator_damped.toml");
}

#[test]
fn slope_of_exact_power_laws() {
    let h = [0.1f64, 0.05, 0.02, 0.01];
    let log_h: Vec<f64> = h.iter().map(|h| h.ln()).collect();
    let log_e: Vec<f64> = h.iter().map(|h| (3.0 * h.powi(4)).ln()).collect();
    assert!((energy_order::slope(&log_h, &log_e) - 4.0).abs() < 1e-12);
}
