//! The member-steps bar of a run on stderr, shown once the run has taken more than a
//! second (short runs print nothing but their result).

use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// A hidden bar over `total` member-steps, and the observer that moves it (to hand to
/// `SimulationWriter::on_progress`); clear the bar with `finish_and_clear` when the run ends.
pub fn member_steps_bar(total: u64) -> (ProgressBar, impl FnMut(u64) + Send + 'static) {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:40} {percent:>3}% {human_pos}/{human_len} member-steps, {rate}, eta {eta}",
        )
        .expect("the template is valid")
        .with_key(
            "rate",
            |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.3e} member-steps/s", state.per_sec());
            },
        ),
    );
    let watched = bar.clone();
    let started = Instant::now();
    let mut shown = false;
    let observer = move |done: u64| {
        if !shown && started.elapsed().as_secs_f64() > 1.0 {
            watched.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
        watched.set_position(done);
    };
    (bar, observer)
}
