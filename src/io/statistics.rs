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
#[path = "statistics_tests.rs"]
mod tests;
