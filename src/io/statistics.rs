//! Aggregate statistics of per-member columns (totals, final states) in bounded memory,
//! for summaries of ensembles too large to list member by member: count, non-finite count,
//! min, max, mean and exact quantiles.
//!
//! The values are replayed in passes (the first as members arrive, the later ones from the
//! files they were written to). Quantiles are found by radix selection on an
//! order-preserving 64-bit key of each value: every pass counts the next 12 bits of the
//! keys in the bins that hold the wanted ranks, until a bin is small enough to collect and
//! sort. At most seven passes (usually two or three), with memory bounded by the number of
//! wanted ranks — at most [`MAX_COLUMN_BYTES`] per column — whatever the number of
//! members. Where every value is still in memory, the later passes are one instead
//! ([`ColumnStatistics::complete`]): the mean, and each wanted rank's value by selection.

use rayon::prelude::*;
use serde_json::{Map, Value, json};

use super::rank_selection::select_ranks;
use crate::compensated::CompensatedSum;

/// The quantiles every column reports.
pub const QUANTILES: [f64; 7] = [0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99];

/// Bits of the key resolved per pass.
const RADIX_BITS: u32 = 12;

/// Bins of one radix pass.
const BINS: usize = 1 << RADIX_BITS;

/// A bin with at most this many values is collected and sorted instead of refined.
const COLLECT_LIMIT: u64 = 1 << 13;

/// Most bytes one column holds in any pass: a count array or a collected bin per wanted
/// rank (14 ranks).
pub const MAX_COLUMN_BYTES: usize =
    2 * QUANTILES.len() * 8 * if BINS > 1 << 13 { BINS } else { 1 << 13 };

/// The key of `v`: keys compare as the values do (−0 below +0), for finite values.
fn key(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// Inverse of [`key`].
fn from_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The set of keys sharing their top `bits` bits with `prefix` (`prefix` holds those bits
/// in its low end).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Bin {
    bits: u32,
    prefix: u64,
}

impl Bin {
    const ALL: Bin = Bin { bits: 0, prefix: 0 };

    fn holds(&self, k: u64) -> bool {
        self.bits == 0 || k >> (64 - self.bits) == self.prefix
    }

    /// The next digit of `k` below this bin's prefix: [`RADIX_BITS`] bits, fewer at the
    /// end of the key.
    fn digit(&self, k: u64) -> usize {
        let width = self.digit_bits();
        ((k >> (64 - self.bits - width)) & ((1 << width) - 1)) as usize
    }

    fn digit_bits(&self) -> u32 {
        RADIX_BITS.min(64 - self.bits)
    }

    fn child(&self, digit: usize) -> Bin {
        let width = self.digit_bits();
        Bin {
            bits: self.bits + width,
            prefix: self.prefix << width | digit as u64,
        }
    }
}

/// What a bin is doing in the current pass.
#[derive(Debug)]
enum Work {
    Count(Box<[u64]>),
    Collect(Vec<f64>),
}

/// A wanted order statistic: the value of 0-based rank `rank` among the finite values.
#[derive(Debug, Clone, Copy)]
struct Rank {
    /// The bin known to hold it and its rank within that bin.
    bin: Bin,
    within: u64,
    value: Option<f64>,
}

/// The statistics of one column.
#[derive(Debug)]
struct Column {
    finite: u64,
    nonfinite: u64,
    min: f64,
    max: f64,
    /// Σ xᵢ / n, accumulated in the second pass once n is known (no overflow).
    mean: CompensatedSum,
    ranks: Vec<Rank>,
    /// The bins of this pass (at most one per wanted rank), each with its work.
    work: Vec<(Bin, Work)>,
}

/// The work of `bin` among `work`.
fn work_of(work: &[(Bin, Work)], bin: Bin) -> &Work {
    &work
        .iter()
        .find(|(held, _)| *held == bin)
        .expect("every unresolved rank's bin has work")
        .1
}

impl Column {
    fn new() -> Self {
        let work = vec![(Bin::ALL, Work::Count(vec![0; BINS].into_boxed_slice()))];
        Column {
            finite: 0,
            nonfinite: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            mean: CompensatedSum::default(),
            ranks: Vec::new(),
            work,
        }
    }

    fn observe(&mut self, pass: usize, v: f64) {
        if !v.is_finite() {
            if pass == 0 {
                self.nonfinite += 1;
            }
            return;
        }
        if pass == 0 {
            self.finite += 1;
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        } else if pass == 1 {
            self.mean.add(v / self.finite as f64);
        }
        let k = key(v);
        if let Some((bin, work)) = self.bin_holding(k) {
            match work {
                Work::Count(counts) => counts[bin.digit(k)] += 1,
                Work::Collect(values) => values.push(v),
            }
        }
    }

    /// Feeds `values` to pass `pass` in order: what [`Column::observe`] of each gives. The
    /// first pass counts every finite value's top digit in the one bin of all keys, which
    /// is done here without looking for the bin.
    fn observe_all(&mut self, pass: usize, values: impl Iterator<Item = f64>) {
        match (pass, &mut self.work[..]) {
            (0, [(Bin::ALL, Work::Count(counts))]) => {
                let (mut finite, mut nonfinite) = (self.finite, self.nonfinite);
                let (mut min, mut max) = (self.min, self.max);
                for v in values {
                    if v.is_finite() {
                        finite += 1;
                        min = min.min(v);
                        max = max.max(v);
                        counts[Bin::ALL.digit(key(v))] += 1;
                    } else {
                        nonfinite += 1;
                    }
                }
                (self.finite, self.nonfinite, self.min, self.max) = (finite, nonfinite, min, max);
            }
            _ => values.for_each(|v| self.observe(pass, v)),
        }
    }

    /// The bin of this pass that holds key `k`, with its work, if any. The bins of a pass
    /// are disjoint and of one depth (each a child of a counted bin of the last pass, all
    /// of which had one depth), and `work` is kept sorted, so a binary search on the
    /// prefix finds it.
    fn bin_holding(&mut self, k: u64) -> Option<(Bin, &mut Work)> {
        let bits = self.work.first()?.0.bits;
        let at = if bits == 0 {
            0
        } else {
            let prefix = k >> (64 - bits);
            self.work
                .binary_search_by_key(&prefix, |(bin, _)| bin.prefix)
                .ok()?
        };
        let (bin, work) = &mut self.work[at];
        debug_assert!(bin.holds(k));
        Some((*bin, work))
    }

    /// Completes the statistics after the first pass from `values`, every value of the
    /// column in member order (as a later pass would replay them): the mean summed as the
    /// second pass sums it, and each wanted rank's value selected among the finite values.
    /// The passes would find the same values, bit for bit: they are the order statistics,
    /// and f64's total order is the keys' order on finite values.
    fn complete(&mut self, values: impl Iterator<Item = f64>) {
        let mut finite = Vec::with_capacity(usize::try_from(self.finite).unwrap_or(0));
        for v in values.filter(|v| v.is_finite()) {
            self.mean.add(v / self.finite as f64);
            finite.push(v);
        }
        debug_assert_eq!(finite.len() as u64, self.finite);
        let wanted = quantile_ranks(self.finite);
        let mut ranks: Vec<usize> = wanted.iter().map(|&rank| rank as usize).collect();
        ranks.sort_unstable();
        ranks.dedup();
        select_ranks(&mut finite, &ranks);
        self.ranks = wanted
            .into_iter()
            .map(|rank| Rank {
                bin: Bin::ALL,
                within: rank,
                value: Some(finite[rank as usize]),
            })
            .collect();
        self.work.clear();
    }

    /// Resolves the ranks with this pass's counts; true when another pass is needed.
    fn end_pass(&mut self, pass: usize) -> bool {
        if pass == 0 {
            self.ranks = quantile_ranks(self.finite)
                .into_iter()
                .map(|rank| Rank {
                    bin: Bin::ALL,
                    within: rank,
                    value: None,
                })
                .collect();
        }
        let mut work = std::mem::take(&mut self.work);
        for (_, bin) in &mut work {
            if let Work::Collect(values) = bin {
                values.sort_by(f64::total_cmp);
            }
        }
        for rank in self.ranks.iter_mut().filter(|r| r.value.is_none()) {
            match work_of(&work, rank.bin) {
                Work::Collect(sorted) => rank.value = Some(sorted[rank.within as usize]),
                Work::Count(counts) => {
                    let mut below = 0;
                    for (digit, &count) in counts.iter().enumerate() {
                        if rank.within < below + count {
                            rank.bin = rank.bin.child(digit);
                            rank.within -= below;
                            if rank.bin.bits == 64 {
                                rank.value = Some(from_key(rank.bin.prefix));
                            } else if !self.work.iter().any(|(held, _)| *held == rank.bin) {
                                let work = if count <= COLLECT_LIMIT {
                                    Work::Collect(Vec::new())
                                } else {
                                    Work::Count(vec![0; BINS].into_boxed_slice())
                                };
                                self.work.push((rank.bin, work));
                            }
                            break;
                        }
                        below += count;
                    }
                }
            }
        }
        // Sorted, for `bin_holding`'s search.
        self.work.sort_by_key(|(bin, _)| *bin);
        debug_assert!(self.work.windows(2).all(|w| w[0].0.bits == w[1].0.bits));
        // The second pass also computes the mean, so it always runs when there are values.
        !self.work.is_empty() || (pass == 0 && self.finite > 0)
    }

    fn summary(&self) -> Value {
        let finite = |v: f64| {
            if self.finite > 0 {
                json!(v)
            } else {
                Value::Null
            }
        };
        let mut quantiles = Map::new();
        if self.finite > 0 {
            let values: Vec<f64> = self
                .ranks
                .iter()
                .map(|r| r.value.unwrap_or(f64::NAN))
                .collect();
            for (i, q) in QUANTILES.iter().enumerate() {
                quantiles.insert(
                    q.to_string(),
                    json!(interpolate(
                        *q,
                        self.finite,
                        values[2 * i],
                        values[2 * i + 1]
                    )),
                );
            }
        }
        json!({
            "count": self.finite,
            "nonfinite": self.nonfinite,
            "min": finite(self.min),
            "max": finite(self.max),
            "mean": finite(self.mean.value()),
            "quantiles": quantiles,
        })
    }
}

/// For each of [`QUANTILES`], the ranks i = ⌊q (n − 1)⌋ and min(i + 1, n − 1) among n
/// values (the pair NumPy interpolates between, even when q (n − 1) is whole).
fn quantile_ranks(n: u64) -> Vec<u64> {
    if n == 0 {
        return Vec::new();
    }
    QUANTILES
        .iter()
        .flat_map(|q| {
            let below = (q * (n - 1) as f64).floor() as u64;
            [below, (below + 1).min(n - 1)]
        })
        .collect()
}

/// The q-quantile between the order statistics `below` and `above` at ranks
/// ⌊q (n − 1)⌋ and the next: linear interpolation, computed as NumPy's default
/// (`numpy.quantile(…, method="linear")`) does, so the figures match it to the last bit
/// (including its NaN when `above − below` overflows).
fn interpolate(q: f64, n: u64, below: f64, above: f64) -> f64 {
    let position = q * (n - 1) as f64;
    let t = position - position.floor();
    let difference = above - below;
    if t >= 0.5 {
        above - difference * (1.0 - t)
    } else {
        below + difference * t
    }
}

/// Rows of a batch from which [`ColumnStatistics::observe_rows`] feeds its columns in
/// parallel.
const PARALLEL_ROWS: usize = 4096;

/// Statistics of several columns of per-member values, fed row by row in passes.
#[derive(Debug)]
pub struct ColumnStatistics {
    columns: Vec<Column>,
    pass: usize,
}

impl ColumnStatistics {
    pub fn new(columns: usize) -> Self {
        ColumnStatistics {
            columns: (0..columns).map(|_| Column::new()).collect(),
            pass: 0,
        }
    }

    /// Feeds one member's row (one value per column) to the current pass: the row-by-row
    /// feeding the tests hold [`ColumnStatistics::observe_rows`] to.
    #[cfg(test)]
    fn observe(&mut self, row: &[f64]) {
        debug_assert_eq!(row.len(), self.columns.len());
        for (column, &v) in self.columns.iter_mut().zip(row) {
            column.observe(self.pass, v);
        }
    }

    /// Feeds consecutive members' rows to the current pass: `rows` holds whole rows of
    /// `width` values one after the other, of which the first of each row go to the
    /// columns (`width` ≥ columns). What feeding the rows one by one gives, bit for bit: a
    /// column sees its values in the same order. Columns are fed side by side on the thread
    /// pool when the batch is large enough to pay for it.
    pub fn observe_rows(&mut self, rows: &[f64], width: usize) {
        debug_assert!(width >= self.columns.len() && rows.len().is_multiple_of(width.max(1)));
        if width == 0 {
            return;
        }
        let pass = self.pass;
        let feed = |(c, column): (usize, &mut Column)| {
            column.observe_all(pass, rows.chunks_exact(width).map(|row| row[c]));
        };
        if rows.len() / width >= PARALLEL_ROWS && self.columns.len() > 1 {
            self.columns.par_iter_mut().enumerate().for_each(feed);
        } else {
            self.columns.iter_mut().enumerate().for_each(feed);
        }
    }

    /// Completes every later pass at once after the first, from all the rows in memory
    /// (`batches`: whole rows of `width` values, every member once, in member order): the
    /// statistics that feeding them pass by pass gives, bit for bit, without the passes'
    /// replays. Columns are completed side by side on the thread pool.
    pub fn complete(&mut self, batches: &[&[f64]], width: usize) {
        debug_assert_eq!(self.pass, 0, "the first pass only is done");
        if width == 0 {
            return;
        }
        self.pass = 1;
        self.columns
            .par_iter_mut()
            .enumerate()
            .for_each(|(c, column)| {
                let rows = batches.iter().flat_map(|rows| rows.chunks_exact(width));
                column.complete(rows.map(|row| row[c]));
            });
    }

    /// Ends the current pass; true when the rows must be fed once more.
    pub fn end_pass(&mut self) -> bool {
        let pass = self.pass;
        self.pass += 1;
        let mut again = false;
        for column in &mut self.columns {
            again |= column.end_pass(pass);
        }
        again
    }

    /// Column `index` as JSON: count (finite values), nonfinite, min, max, mean, and the
    /// quantiles keyed by q (`"0.5"`); min, max and mean are null without finite values.
    pub fn summary(&self, index: usize) -> Value {
        self.columns[index].summary()
    }
}

#[cfg(test)]
mod tests {
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
}
