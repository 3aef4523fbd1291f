//! An ensemble of 4096 damped oscillators ẋ = (J − R) Q x + B u, drawn around a nominal
//! one (R and x0 varied per member), integrated by 2-stage Gauss collocation on the best
//! backend this machine has, then read as `ndarray` arrays.
//!
//! Gauss collocation keeps the discrete energy balance exactly: per member, the stored
//! energy H(x_N) − H(x_0) equals the supplied energy (port − dissipated) up to round-off,
//! which this example checks for every member.
//!
//! ```text
//! cargo run --release --example linear_ph_ensemble
//! ```

use harbor::backend::{Backend, BackendKind, BackendRequest};
use harbor::linear_ph::{
    Draw, DrawnLinearPhEnsemble, LinearPh, LinearPhEnsembleSpec, LinearPhMember, LinearPhPlan,
};
use harbor::model::Signal;
use harbor::tableau::{Scheme, SchemeFamily};
use nalgebra::{DMatrix, dmatrix, dvector};

fn main() -> harbor::Result<()> {
    // A unit oscillator damped in its momentum, driven by a force on the momentum.
    let nominal = LinearPhMember {
        system: LinearPh::new(
            "system",
            dmatrix![0.0, 1.0; -1.0, 0.0], // J, skew
            dmatrix![0.0, 0.0; 0.0, 0.1],  // R, positive semidefinite
            DMatrix::identity(2, 2),       // Q, positive definite
            dmatrix![0.0; 1.0],            // B
        )?,
        x0: dvector![1.0, 0.0],
    };
    // Member i depends on (seed, i) alone: R drawn anew (structure kept), x0 perturbed.
    let spec = LinearPhEnsembleSpec {
        members: 4096,
        seed: 7,
        j: Draw::Fixed,
        r: Draw::Random { scale: 0.2 },
        q: Draw::Fixed,
        b: Draw::Fixed,
        x0: Draw::Perturb { sigma: 0.1 },
    };
    let ensemble = DrawnLinearPhEnsemble::new(nominal, spec, None)?;
    // h = 0.01 up to t = 10 (1000 steps), u(t) = sin t, recorded every 100 steps.
    let force = Signal::Harmonic {
        amplitude: 1.0,
        omega: 1.0,
        phase: 0.0,
        offset: 0.0,
    };
    let scheme = Scheme::new(SchemeFamily::Gauss, 2)?;
    let plan = LinearPhPlan::new(scheme, 0.01, 10.0, ensemble, &[force], 100)?;

    // The best hardware GPU, else the CPU's SIMD engine (software rasterisers are slower
    // than the CPU, so `auto` leaves them).
    let request = BackendRequest {
        kind: BackendKind::Auto,
        ..BackendRequest::default()
    };
    let (backend, choice) = Backend::open(&request)?;
    println!("backend: {}", choice.description);
    let results = backend.run(&plan)?;

    let trajectories = results
        .trajectories()
        .expect("the plan records the trajectory");
    let totals = results.totals(); // stored, supplied, port, dissipated, max residual
    println!(
        "trajectories: {:?} (members × samples × states), totals: {:?} ({})",
        trajectories.shape(),
        totals.shape(),
        results.spec.totals.join(", ")
    );
    let worst = totals
        .rows()
        .into_iter()
        .map(|row| (row[0] - row[1]).abs())
        .fold(0.0, f64::max);
    println!("worst |stored − supplied| over the ensemble: {worst:.2e}");
    // f64 backends keep the balance to round-off; an f32 GPU to its own epsilon.
    let tolerance = match results.precision {
        harbor::kernels::Precision::F64 => 1e-12,
        harbor::kernels::Precision::F32 => 1e-4,
    };
    assert!(worst <= tolerance, "energy balance broken: {worst:e}");
    let mean_final: Vec<f64> = results
        .final_states()
        .mean_axis(ndarray::Axis(0))
        .expect("members")
        .to_vec();
    println!("mean final state: {mean_final:.4?}");
    Ok(())
}
