//! The column statistics' tests: summaries against sorting, batches against single rows,
//! and the in-memory completion against the passes, bit for bit.

use super::*;
use rand::{Rng, SeedableRng};

/// Runs every pass over `values` (one column) and returns the summary.
fn summarise(values: &[f64]) -> Value {
    let mut stats = ColumnStatistics::new(1);
    let mut passes = 0;
    loop {
        for &v in values {
            stats.observe(&[v]);
        }
        passes += 1;
        if !stats.end_pass() {
            break;
        }
    }
    assert!(passes <= 7, "{passes} passes");
    stats.summary(0)
}

/// The reference: sort, then NumPy's linear interpolation.
fn sorted_quantile(values: &[f64], q: f64) -> f64 {
    let mut finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    finite.sort_by(f64::total_cmp);
    let n = finite.len() as u64;
    let below = (q * (n - 1) as f64).floor() as usize;
    interpolate(
        q,
        n,
        finite[below],
        finite[(below + 1).min(finite.len() - 1)],
    )
}

fn check(values: &[f64]) {
    let summary = summarise(values);
    for q in QUANTILES {
        let got = summary["quantiles"][q.to_string()]
            .as_f64()
            .unwrap_or(f64::NAN);
        let want = sorted_quantile(values, q);
        assert!(
            got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
            "q = {q}: {got} vs {want}"
        );
    }
}

#[test]
fn keys_order_as_the_values() {
    let values = [
        f64::MIN,
        -1e300,
        -1.0,
        -5e-324,
        -0.0,
        0.0,
        5e-324,
        1e-300,
        1.0,
        f64::MAX,
    ];
    for pair in values.windows(2) {
        assert!(key(pair[0]) < key(pair[1]), "{pair:?}");
        assert_eq!(from_key(key(pair[0])).to_bits(), pair[0].to_bits());
    }
}

/// Rows fed in batches (small ones, serial, and large ones, whose columns run in
/// parallel) give the summaries of rows fed one by one, bit for bit, over every pass
/// (the first pass's batches count without looking for bins); the batch's rows are wider
/// than the columns fed, and hold NaN, ±∞ and both zeros (a column of zeros only).
#[test]
fn batches_of_rows_give_the_summaries_of_single_rows() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let (width, columns, members) = (5, 3, 3 * PARALLEL_ROWS + 17);
    // Column 1 holds zeros of both signs and a few NaN only, so that its min and max
    // are zeros.
    let rows: Vec<f64> = (0..members * width)
        .map(|i| match (i % width, i % 7) {
            (1, _) if i % 101 == 1 => f64::NAN,
            (1, _) if (i / width) % 3 == 0 => -0.0,
            (1, _) => 0.0,
            (_, 0) => rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-30..30)),
            (_, 1) if i % 1001 == 1 => f64::NAN,
            (_, 2) if i % 997 == 2 => f64::NEG_INFINITY,
            (_, 3) if i % 991 == 3 => f64::INFINITY,
            (_, 4) if i % 11 == 4 => -0.0,
            _ => 1.0 + rng.random_range(0.0..1e-9),
        })
        .collect();
    let mut single = ColumnStatistics::new(columns);
    loop {
        for row in rows.chunks_exact(width) {
            single.observe(&row[..columns]);
        }
        if !single.end_pass() {
            break;
        }
    }
    for batch in [7, PARALLEL_ROWS, members] {
        let mut batched = ColumnStatistics::new(columns);
        loop {
            for rows in rows.chunks(batch * width) {
                batched.observe_rows(rows, width);
            }
            if !batched.end_pass() {
                break;
            }
        }
        assert_eq!(batched.pass, single.pass, "batches of {batch}: passes");
        for c in 0..columns {
            assert_eq!(batched.summary(c), single.summary(c), "batches of {batch}");
            let (b, s) = (&batched.columns[c], &single.columns[c]);
            let bits = |column: &Column| (column.min.to_bits(), column.max.to_bits());
            assert_eq!(bits(b), bits(s), "batches of {batch}: the zeros' signs");
        }
    }
}

/// Completing from the values in memory gives the statistics of the passes, bit for bit
/// (both zeros' signs, the mean's last bit), on spread, clustered, duplicated, signed,
/// subnormal, overflowing and non-finite values, a column with no finite value, and
/// rows wider than the columns, fed in several batches.
#[test]
fn completing_in_memory_gives_the_statistics_of_the_passes() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut spread = |_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-300..300));
    let columns: Vec<Vec<f64>> = vec![
        (0..20_000).map(&mut spread).collect(),
        (0..20_000)
            .map(|i| 1.0 + (i * 7919 % 20_000) as f64 * 1e-12)
            .collect(),
        (0..20_000).map(|i| (i % 3) as f64 - 1.0).collect(),
        (0..20_000)
            .map(|i| match i % 5 {
                0 => -0.0,
                1 => 0.0,
                2 => 5e-324,
                3 => f64::NAN,
                _ => -2.5e-310,
            })
            .collect(),
        (0..20_000)
            .map(|i| match i % 4 {
                0 => f64::INFINITY,
                1 => f64::NAN,
                _ => f64::NEG_INFINITY,
            })
            .collect(),
        (0..20_000)
            .map(|i| if i % 2 == 0 { f64::MAX } else { -f64::MAX })
            .collect(),
    ];
    let (width, members) = (columns.len() + 1, columns[0].len());
    let rows: Vec<f64> = (0..members)
        .flat_map(|m| columns.iter().map(move |c| c[m]).chain([m as f64]))
        .collect();
    let batches: Vec<&[f64]> = rows.chunks(3001 * width).collect();
    let mut passes = ColumnStatistics::new(columns.len());
    let mut in_memory = ColumnStatistics::new(columns.len());
    for batch in &batches {
        passes.observe_rows(batch, width);
        in_memory.observe_rows(batch, width);
    }
    while passes.end_pass() {
        for batch in &batches {
            passes.observe_rows(batch, width);
        }
    }
    in_memory.complete(&batches, width);
    for c in 0..columns.len() {
        let (got, want) = (in_memory.summary(c), passes.summary(c));
        assert_eq!(got, want, "column {c}");
        let (got, want) = (&in_memory.columns[c], &passes.columns[c]);
        let bits = |column: &Column| {
            let quantiles: Vec<u64> = column
                .ranks
                .iter()
                .map(|r| r.value.unwrap_or(f64::NAN).to_bits())
                .collect();
            let extremes = [column.min, column.max, column.mean.value()];
            (extremes.map(f64::to_bits), quantiles)
        };
        assert_eq!(bits(got), bits(want), "column {c}: bits");
    }
    assert_eq!(
        in_memory.summary(4)["count"],
        0,
        "a column with no finite value"
    );
}

/// Exact quantiles, equal bit for bit to sorting, on spread, clustered, duplicated,
/// signed and subnormal values, and on bins too large to collect at once.
#[test]
fn quantiles_equal_those_of_the_sorted_values() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let spread: Vec<f64> = (0..20_000)
        .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-300..300)))
        .collect();
    check(&spread);
    // 300 000 values within one binade: the first pass leaves them in one bin.
    let clustered: Vec<f64> = (0..300_000)
        .map(|_| 1.0 + rng.random::<f64>() * 1e-3)
        .collect();
    check(&clustered);
    let duplicated: Vec<f64> = (0..200_000).map(|i| (i % 3) as f64 - 1.0).collect();
    check(&duplicated);
    check(&[5e-324, -0.0, 0.0, -5e-324, 2.5e-310]);
    check(&[42.0]);
    check(&[1.0, 2.0]);
    // A whole position next to a pair whose difference overflows: NaN, as in NumPy.
    let mut overflowing = vec![1e308; 101];
    overflowing[0] = -1e308;
    overflowing[1] = -1e308;
    check(&overflowing);
    let summary = summarise(&overflowing);
    assert_eq!(summary["quantiles"]["0.01"], Value::Null);
}

#[test]
fn counts_min_max_mean_skip_nonfinite_values() {
    let summary = summarise(&[1.0, f64::NAN, 3.0, f64::INFINITY, 2.0, f64::MAX, f64::MAX]);
    assert_eq!(summary["count"], 5);
    assert_eq!(summary["nonfinite"], 2);
    assert_eq!(summary["min"], 1.0);
    assert_eq!(summary["max"], f64::MAX);
    // (1 + 3 + 2 + 2 · MAX) / 5 without overflow: 0.4 · MAX + 6/5.
    let mean = summary["mean"].as_f64().unwrap();
    assert!((mean / (0.4 * f64::MAX) - 1.0).abs() < 1e-15, "{mean}");
    let empty = summarise(&[f64::NAN]);
    assert_eq!(empty["count"], 0);
    assert_eq!(empty["min"], Value::Null);
    assert_eq!(empty["quantiles"], json!({}));
}
