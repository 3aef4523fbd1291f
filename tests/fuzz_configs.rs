//! A config fuzzer of `harbor simulate`: every case runs the real binary as its own process
//! on a config derived from one of `examples/*.toml` (malformed, extreme, oversized, with
//! odd `--set` overrides, CSV inputs and output locations; see `fuzz/cases.rs`), and must
//! not panic, abort, hang past its limit, or exit 0 with a non-finite result; a failure
//! must say `error: …` and leave the output location as it was (see `fuzz/run.rs`).
//!
//! ```text
//! cargo test --release --test fuzz_configs -- --nocapture                  # 1000 cases
//! HARBOR_FUZZ_CASES=100000 cargo test --release --test fuzz_configs -- --nocapture
//! ```
//!
//! Environment: `HARBOR_FUZZ_CASES` (default 1000), `HARBOR_FUZZ_SEED` (else
//! `HARBOR_TEST_SEED`, else a fresh seed, printed), `HARBOR_FUZZ_JOBS` (default: all
//! cores), `HARBOR_FUZZ_GPU_CASES` (default 8; they run `--backend gpu` and, like the other
//! GPU tests, fail rather than skip without an adapter), `HARBOR_FUZZ_ONLY` (case indices to
//! replay), `HARBOR_FUZZ_TIMEOUT_S` (default 20), `HARBOR_FUZZ_SIZE_TIMEOUT_S` (default 5).
//! The counts per outcome, class, mutation kind and example are printed and written to
//! `target/tmp/fuzz_configs_report.txt`.

mod fuzz;

#[test]
fn simulate_survives_fuzzed_configs() {
    fuzz::fuzz(&fuzz::Settings::from_env());
}
