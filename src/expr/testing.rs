//! Helpers of the expression layer's unit tests.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The distance between two f64 in units in the last place (the difference of their
/// ordered integer representations); 0 for two NaNs, `u64::MAX` for one.
pub fn ulps(a: f64, b: f64) -> u64 {
    if a.is_nan() && b.is_nan() {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    let key = |x: f64| {
        let bits = x.to_bits() as i64;
        if bits < 0 { i64::MIN - bits } else { bits }
    };
    key(a).abs_diff(key(b))
}

/// A generator with a fresh seed per run, printed so that a failure can be replayed with
/// `HARBOR_TEST_SEED` (as `tests/common/mod.rs` does).
pub fn fresh_rng(test: &str) -> ChaCha8Rng {
    let seed = std::env::var("HARBOR_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random::<u64>());
    eprintln!("{test}: seed {seed} (replay with HARBOR_TEST_SEED={seed})");
    ChaCha8Rng::seed_from_u64(seed)
}
