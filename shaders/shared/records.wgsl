// The recording rule shared by the kernels (host twins: StepGrid::record_points, TwinBindings::records_step).

// Whether completing global step `done` records a sample: every `record_every` steps and
// the last step of the run.
fn records_step(done: u32) -> bool {
    return done % dispatch.record_every == 0u || done == dispatch.steps_total;
}
