//! Order statistics of values held in memory, several ranks at once, by selection rather
//! than sorting: each selection places one rank's value and splits the values, and the
//! other ranks, between the two sides, so k ranks of n values take O(n log k) comparisons.

/// Puts the value of each rank in `ranks` (0-based, ascending, each below `values.len()`)
/// at that index of `values`: `values[r]` becomes the r-th smallest value in f64's total
/// order (−0 below +0), the value a full sort would put there. The other values end in
/// some order.
pub fn select_ranks(values: &mut [f64], ranks: &[usize]) {
    debug_assert!(ranks.windows(2).all(|pair| pair[0] <= pair[1]));
    debug_assert!(ranks.last().is_none_or(|&last| last < values.len()));
    select_within(values, ranks, 0);
}

/// [`select_ranks`] on `values`, which hold the ranks `offset …` of the whole.
fn select_within(values: &mut [f64], ranks: &[usize], offset: usize) {
    let middle = ranks.len() / 2;
    let Some(&rank) = ranks.get(middle) else {
        return;
    };
    let (below, _, above) = values.select_nth_unstable_by(rank - offset, f64::total_cmp);
    // Ranks equal to `rank` (a repeated one) are placed with it.
    let lower = &ranks[..ranks[..middle].partition_point(|&r| r < rank)];
    let upper = &ranks[middle + ranks[middle..].partition_point(|&r| r <= rank)..];
    select_within(below, lower, offset);
    select_within(above, upper, rank + 1);
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::select_ranks;

    /// Every selected rank holds the value a sort puts there, bit for bit, for spread,
    /// duplicated and signed-zero values, repeated ranks, the first and last ranks, and a
    /// single value.
    #[test]
    fn selected_ranks_hold_the_sorted_values() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let spread: Vec<f64> = (0..10_001)
            .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-30..30)))
            .collect();
        let duplicated: Vec<f64> = (0..5_000).map(|i| (i % 3) as f64 - 1.0).collect();
        let zeros: Vec<f64> = (0..999)
            .map(|i| if i % 2 == 0 { 0.0 } else { -0.0 })
            .collect();
        for values in [spread, duplicated, zeros, vec![7.0]] {
            let n = values.len();
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let rank_sets = [
                vec![0, n - 1],
                vec![n / 100, n / 100, n / 2, n / 2 + 1, n - 1],
                (0..n).step_by(n / 7 + 1).collect(),
                vec![],
            ];
            for ranks in rank_sets {
                let ranks: Vec<usize> = ranks.into_iter().map(|r| r.min(n - 1)).collect();
                let mut selected = values.clone();
                select_ranks(&mut selected, &ranks);
                for &r in &ranks {
                    assert_eq!(
                        selected[r].to_bits(),
                        sorted[r].to_bits(),
                        "rank {r} of {n}"
                    );
                }
            }
        }
    }
}
