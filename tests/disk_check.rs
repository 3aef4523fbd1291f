//! The disk check before a run: the output and a stated margin (5 % of it, at least 1 MiB)
//! against the free space, with the free space injected so that no small filesystem is
//! needed. The refusal says what is needed, what is free and the margin, and advises only
//! changes that would help.

use harbor::backend::Footprint;
use harbor::io::resources::{DISK_MARGIN_FLOOR, RunEstimate, disk_margin};
use harbor::plan::MemoryBudget;

const MIB: u64 = 1 << 20;

/// A run of `members` × `steps` recorded every `every` steps, writing `output_bytes` of
/// which each record point adds `record_point_bytes`, with `free` bytes free.
fn estimate(
    members: usize,
    steps: usize,
    every: usize,
    output_bytes: u64,
    record_point_bytes: u64,
    free: u64,
) -> RunEstimate {
    RunEstimate {
        footprint: Footprint {
            members,
            steps,
            record_every: every,
            members_per_chunk: members,
            member_bytes: 1024,
            host_bytes: MIB,
            device_bytes: None,
        },
        sink_bytes: 0,
        budget: MemoryBudget::default(),
        output_bytes,
        record_point_bytes,
        available_memory: None,
        free_disk: Some(free),
    }
}

fn refusal(estimate: &RunEstimate) -> String {
    estimate.check_disk().unwrap_err().to_string()
}

#[test]
fn the_margin_is_five_percent_with_a_floor_of_one_mebibyte() {
    assert_eq!(DISK_MARGIN_FLOOR, MIB);
    assert_eq!(disk_margin(71 << 10), MIB);
    assert_eq!(disk_margin(100 * MIB), 5 * MIB);
}

/// The case: a 71 KiB output on a filesystem with 10 MiB free runs.
#[test]
fn a_small_output_fits_a_small_filesystem() {
    assert!(
        estimate(1, 1000, 1000, 71 << 10, 0, 10 * MIB)
            .check_disk()
            .is_ok()
    );
    // Exactly the output and its margin fit; one byte less does not.
    let output = 3 * MIB;
    assert!(
        estimate(1, 10, 10, output, 0, output + MIB)
            .check_disk()
            .is_ok()
    );
    assert!(
        estimate(1, 10, 10, output, 0, output + MIB - 1)
            .check_disk()
            .is_err()
    );
}

/// Nothing is recorded per step and there is one member: neither output.every nor the
/// member count would help, only space.
#[test]
fn with_nothing_recorded_per_step_the_advice_is_space_alone() {
    let text = refusal(&estimate(1, 1000, 1, 9 * MIB, 0, 9 * MIB + MIB / 2));
    assert_eq!(
        text,
        "--out: the run writes 9.00 MiB (1 member(s), nothing recorded per step) and keeps a margin of 1.00 MiB free (5 % of the output, at least 1.00 MiB): 10.00 MiB needed, but only 9.50 MiB is free there; free space there or write to another filesystem (--out)"
    );
    assert!(!text.contains("output.every") && !text.contains("ensemble.members"));
}

/// Many members, nothing per step: fewer members help, output.every does not.
#[test]
fn an_ensemble_without_records_is_advised_fewer_members() {
    let text = refusal(&estimate(100_000, 1000, 1, 40 * MIB, 0, 20 * MIB));
    assert!(text.contains("ensemble.members"), "{text}");
    assert!(!text.contains("output.every"), "{text}");
}

/// Recorded every step: the cadence that fits is named. Output 100 000 B fixed + 1000
/// records × 16 000 B; 8 MiB free leave 8 MiB − 1 MiB (the floor exceeds 5 %) for the
/// output, so (7 340 032 − 100 000) / 16 000 = 452 records fit: every ⌈1000 / 452⌉ = 3.
#[test]
fn recorded_runs_are_advised_the_cadence_that_fits() {
    let output = 100_000 + 1000 * 16_000;
    let text = refusal(&estimate(1000, 1000, 1, output, 16_000, 8 * MIB));
    assert!(
        text.contains("1000 record point(s) of 1 step(s) each"),
        "{text}"
    );
    assert!(
        text.contains("record less often (output.every ≥ 3)"),
        "{text}"
    );
    assert!(
        text.contains("run fewer members (ensemble.members)"),
        "{text}"
    );
    assert!(
        text.contains("16.35 MiB needed, but only 8.00 MiB is free"),
        "{text}"
    );
    // every = 3 does fit: 334 records.
    let fitting = 100_000 + 334 * 16_000;
    assert!(
        estimate(1000, 1000, 3, fitting, 16_000, 8 * MIB)
            .check_disk()
            .is_ok()
    );
}
