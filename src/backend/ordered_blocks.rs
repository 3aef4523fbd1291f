//! Blocks of work run on all cores and handed back in order, with no barrier between them:
//! each block is a rayon job, a bounded window of them in flight, and the caller's thread
//! takes block i's result once it and every block before it are done. So the caller's work
//! on the results (appending, writing, statistics) overlaps the blocks still running, and
//! no core waits for the slowest block of a group before the next group starts.
//!
//! The jobs refill the window themselves, and the caller's thread sleeps until a batch of
//! results is ready (half the window, the rest of the run, or a result that stops it), or
//! for at most [`MAX_BATCH_WAIT`] once the next one is: it wakes once per batch rather than
//! once per block. Each wake-up of a thread beside the pool's takes a core from a block: woken
//! per block, `harbor simulate` of 2¹⁶ small members (512 blocks, 18 ms on 2 cores) switched
//! context 700–800 times; woken per batch, about 120.
//!
//! Where the results may be taken on any thread ([`run_in_order_on_pool`]), a thread of the
//! pool takes them between blocks, and no thread beside the pool's wakes at all.
//!
//! The results are taken in block order whatever the thread count, and the first error in
//! that order is the one returned: blocks after it may be skipped, blocks before it all ran
//! and were taken.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use rayon::ScopeFifo;

use crate::error::Result;

/// Longest the caller's thread waits for a batch once the next result is ready: the most a
/// progress report (and so a stop) is held back beyond its block.
const MAX_BATCH_WAIT: Duration = Duration::from_millis(20);

/// What a block's job leaves: its result, nothing where the run had stopped before it
/// started, or the payload of its panic (raised again on the caller's thread).
enum Outcome<T> {
    Ran(Result<T>),
    Skipped,
    Panicked(Box<dyn Any + Send>),
}

impl<T> Outcome<T> {
    /// Whether taking this outcome ends the run (an error or a panic).
    fn stops(&self) -> bool {
        !matches!(self, Outcome::Ran(Ok(_)))
    }
}

/// The blocks between the caller's next one and the last one spawned.
struct Ledger<T> {
    /// done[k]: the outcome of block `next + k`, once it has arrived.
    done: VecDeque<Option<Outcome<T>>>,
    /// The block the caller takes next.
    next: usize,
    /// Blocks spawned so far (`0..spawned`).
    spawned: usize,
    /// Whether the caller's thread sleeps until a batch is ready.
    waiting: bool,
}

impl<T> Ledger<T> {
    /// Outcomes arrived at the front, one after another.
    fn ready(&self) -> usize {
        self.done
            .iter()
            .take_while(|outcome| outcome.is_some())
            .count()
    }
}

/// What the caller's thread and the blocks' jobs share.
struct Blocks<'a, T, R> {
    count: usize,
    /// Most blocks spawned and not yet taken.
    window: usize,
    /// Results ready at the front that wake the caller's thread.
    batch: usize,
    run: &'a R,
    stopped: AtomicBool,
    ledger: Mutex<Ledger<T>>,
    arrived: Condvar,
}

impl<'a, T: Send, R: Fn(usize) -> Result<T> + Sync> Blocks<'a, T, R> {
    /// `count` blocks run by `run`, at most `window` of them (at least one) spawned and not
    /// yet taken.
    fn new(count: usize, window: usize, run: &'a R) -> Self {
        let window = window.max(1);
        Blocks {
            count,
            window,
            batch: window.div_ceil(2),
            run,
            stopped: AtomicBool::new(false),
            ledger: Mutex::new(Ledger {
                done: VecDeque::with_capacity(window),
                next: 0,
                spawned: 0,
                waiting: false,
            }),
            arrived: Condvar::new(),
        }
    }

    /// Spawns the blocks in `scope` and calls `take` with each result in block order on
    /// this thread, until the last one or the first that stops the run.
    fn take_in_order<'s>(
        &'s self,
        scope: &ScopeFifo<'s>,
        mut take: impl FnMut(T) -> Result<()>,
    ) -> Result<()>
    where
        'a: 's,
    {
        let mut outcome = Ok(());
        for _ in 0..self.count {
            self.spawn_more(scope);
            let taken = match self.take_next() {
                Outcome::Ran(result) => result.and_then(&mut take),
                Outcome::Panicked(payload) => {
                    self.stopped.store(true, Ordering::Relaxed);
                    resume_unwind(payload)
                }
                Outcome::Skipped => unreachable!("blocks are skipped only after a stop"),
            };
            if let Err(error) = taken {
                outcome = Err(error);
                break;
            }
        }
        // The scope waits for the jobs in flight; those not yet started skip their block.
        self.stopped.store(true, Ordering::Relaxed);
        outcome
    }

    fn lock(&self) -> MutexGuard<'_, Ledger<T>> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the caller has work enough to wake for: a batch ready at the front, every
    /// block left ready, or a front that stops the run.
    fn batch_ready(&self, ledger: &Ledger<T>) -> bool {
        let ready = ledger.ready();
        ready >= self.batch
            || ledger.next + ready == self.count
            || matches!(ledger.done.front(), Some(Some(outcome)) if outcome.stops())
    }

    /// Spawns the blocks the window has room for (none once the run has stopped).
    fn spawn_more<'s>(&'s self, scope: &ScopeFifo<'s>)
    where
        'a: 's,
    {
        let blocks = {
            let mut ledger = self.lock();
            if self.stopped.load(Ordering::Relaxed) {
                return;
            }
            let start = ledger.spawned;
            let end = self.count.min(ledger.next + self.window).max(start);
            ledger.spawned = end;
            start..end
        };
        for i in blocks {
            scope.spawn_fifo(move |scope| self.run_block(scope, i));
        }
    }

    /// Runs block `i` (unless the run has stopped), leaves its outcome in the ledger, wakes
    /// the caller where a batch is ready, and refills the window.
    fn run_block<'s>(&'s self, scope: &ScopeFifo<'s>, i: usize)
    where
        'a: 's,
    {
        let outcome = if self.stopped.load(Ordering::Relaxed) {
            Outcome::Skipped
        } else {
            match catch_unwind(AssertUnwindSafe(|| (self.run)(i))) {
                Ok(result) => Outcome::Ran(result),
                Err(payload) => Outcome::Panicked(payload),
            }
        };
        let wake = {
            let mut ledger = self.lock();
            let slot = i - ledger.next;
            if ledger.done.len() <= slot {
                ledger.done.resize_with(slot + 1, || None);
            }
            ledger.done[slot] = Some(outcome);
            ledger.waiting && self.batch_ready(&ledger)
        };
        if wake {
            self.arrived.notify_one();
        }
        self.spawn_more(scope);
    }

    /// The next block's outcome, taken off the ledger. Outside the pool the caller's
    /// thread sleeps until a batch is ready, or [`MAX_BATCH_WAIT`] has passed with the
    /// front ready. On a pool thread (a run started inside another parallel job) it runs
    /// pending jobs while it waits — the blocks may be queued on it — instead of sleeping.
    fn take_next(&self) -> Outcome<T> {
        let on_pool = rayon::current_thread_index().is_some();
        let mut ledger = self.lock();
        if !matches!(ledger.done.front(), Some(Some(_))) {
            if on_pool {
                while !matches!(ledger.done.front(), Some(Some(_))) {
                    drop(ledger);
                    if rayon::yield_now() != Some(rayon::Yield::Executed) {
                        std::thread::yield_now();
                    }
                    ledger = self.lock();
                }
            } else {
                let deadline = Instant::now() + MAX_BATCH_WAIT;
                ledger.waiting = true;
                while !self.batch_ready(&ledger) {
                    let now = Instant::now();
                    if now >= deadline && matches!(ledger.done.front(), Some(Some(_))) {
                        break;
                    }
                    let wait = deadline
                        .saturating_duration_since(now)
                        .max(MAX_BATCH_WAIT / 4);
                    ledger = self
                        .arrived
                        .wait_timeout(ledger, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
                ledger.waiting = false;
            }
        }
        ledger.next += 1;
        ledger
            .done
            .pop_front()
            .flatten()
            .expect("the front has arrived")
    }
}

/// Runs `run(i)` for every block i in `0..count` on the rayon pool, at most `window`
/// blocks spawned and not yet taken (at least one), and calls `take` with each result on
/// the caller's thread, in increasing i. Stops at the first error, from `run` (in block
/// order) or from `take`, and returns it once the blocks in flight have ended; blocks not
/// yet started then do not run. A panic in a block is raised again on the caller's thread.
pub fn run_in_order<T: Send>(
    count: usize,
    window: usize,
    run: impl Fn(usize) -> Result<T> + Sync,
    take: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let blocks = Blocks::new(count, window, &run);
    // Jobs spawned from a pool thread run there first in spawn order (FIFO).
    rayon::in_place_scope_fifo(|scope| blocks.take_in_order(scope, take))
}

/// [`run_in_order`] with `take` called on a thread of the pool, between blocks, rather
/// than on the caller's (which waits): no thread beside the pool's wakes to take the
/// results, and none takes a core from a block while it does.
pub fn run_in_order_on_pool<T: Send>(
    count: usize,
    window: usize,
    run: impl Fn(usize) -> Result<T> + Sync,
    take: impl FnMut(T) -> Result<()> + Send,
) -> Result<()> {
    let blocks = Blocks::new(count, window, &run);
    rayon::scope_fifo(|scope| blocks.take_in_order(scope, take))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::sync::atomic::AtomicUsize;

    /// The window of the tests' runs.
    const WINDOW: usize = 8;

    /// Block i of 64, later blocks faster: they end out of order.
    fn later_blocks_faster(i: usize) -> Result<usize> {
        std::thread::sleep(std::time::Duration::from_micros(((64 - i) * 30) as u64));
        Ok(i)
    }

    /// Block i of 40: block 30 fails first in time, block 17 first in order.
    fn block_17_fails_first_in_order(i: usize) -> Result<usize> {
        match i {
            30 => Err(Error::invalid("block", "30 fails first in time")),
            17 => {
                std::thread::sleep(std::time::Duration::from_millis(20));
                Err(Error::invalid("block", "17 fails first in order"))
            }
            _ => Ok(i),
        }
    }

    /// Blocks that end out of order (later ones faster) are taken in order.
    #[test]
    fn results_are_taken_in_block_order() {
        let mut taken = Vec::new();
        run_in_order(64, WINDOW, later_blocks_faster, |i| {
            taken.push(i);
            Ok(())
        })
        .unwrap();
        assert_eq!(taken, (0..64).collect::<Vec<_>>());
    }

    /// The first failing block in order is reported, whichever fails first in time, and
    /// nothing after it is taken.
    #[test]
    fn the_first_error_in_order_is_returned() {
        let mut taken = Vec::new();
        let error = run_in_order(40, WINDOW, block_17_fails_first_in_order, |i| {
            taken.push(i);
            Ok(())
        })
        .unwrap_err();
        assert!(
            error.to_string().contains("17 fails first in order"),
            "{error}"
        );
        assert_eq!(taken, (0..17).collect::<Vec<_>>());
    }

    /// An error from the taker stops the run: later blocks are not started once the
    /// blocks in flight end.
    #[test]
    fn a_taker_error_stops_the_blocks() {
        let ran = AtomicUsize::new(0);
        let error = run_in_order(
            10_000,
            WINDOW,
            |i| {
                ran.fetch_add(1, Ordering::Relaxed);
                Ok(i)
            },
            |i| {
                if i == 3 {
                    return Err(Error::invalid("progress", "interrupted"));
                }
                Ok(())
            },
        )
        .unwrap_err();
        assert!(error.to_string().contains("interrupted"));
        assert!(ran.load(Ordering::Relaxed) <= 4 + WINDOW, "{ran:?}");
    }

    /// A run started inside a parallel job (on a pool thread, here a pool of one thread,
    /// where waiting without working would never end) completes.
    #[test]
    fn runs_nested_in_a_one_thread_pool() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let sums: Vec<usize> = pool.install(|| {
            use rayon::prelude::*;
            (0..3)
                .into_par_iter()
                .map(|k| {
                    let (mut on_caller, mut on_pool) = (0, 0);
                    let add = |sum: &mut usize, v| {
                        *sum += v;
                        Ok(())
                    };
                    run_in_order(9, WINDOW, |i| Ok(i * k), |v| add(&mut on_caller, v)).unwrap();
                    run_in_order_on_pool(9, WINDOW, |i| Ok(i * k), |v| add(&mut on_pool, v))
                        .unwrap();
                    on_caller + on_pool
                })
                .collect()
        });
        assert_eq!(sums, vec![0, 72, 144]);
    }

    /// Blocks run no further ahead of the taker than the window, however slow the taker.
    #[test]
    fn the_window_bounds_the_blocks_not_taken() {
        let taken = AtomicUsize::new(0);
        let furthest_ahead = AtomicUsize::new(0);
        run_in_order(
            200,
            WINDOW,
            |i| {
                let ahead = i - taken.load(Ordering::SeqCst).min(i);
                furthest_ahead.fetch_max(ahead, Ordering::SeqCst);
                Ok(i)
            },
            |i| {
                std::thread::sleep(std::time::Duration::from_micros(200));
                taken.store(i + 1, Ordering::SeqCst);
                Ok(())
            },
        )
        .unwrap();
        // Block i is spawned once block i − WINDOW is being taken.
        let ahead = furthest_ahead.load(Ordering::SeqCst);
        assert!((WINDOW - 1..=WINDOW).contains(&ahead), "{ahead}");
    }

    /// A result at the front is taken while its batch is still running: a slow last block
    /// holds back no earlier one.
    #[test]
    fn a_ready_result_is_not_held_for_its_batch() {
        let last_done = AtomicBool::new(false);
        let mut first_taken_while_last_ran = None;
        run_in_order(
            4,
            WINDOW,
            |i| {
                if i == 3 {
                    std::thread::sleep(std::time::Duration::from_secs(2));
                    last_done.store(true, Ordering::SeqCst);
                }
                Ok(i)
            },
            |i| {
                if i == 0 {
                    first_taken_while_last_ran = Some(!last_done.load(Ordering::SeqCst));
                }
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(first_taken_while_last_ran, Some(true));
    }

    /// On the pool, too, the results are taken in block order, on a thread of the pool,
    /// and the first error in order is returned.
    #[test]
    fn the_pool_takes_in_order_on_its_threads() {
        let mut taken = Vec::new();
        run_in_order_on_pool(64, WINDOW, later_blocks_faster, |i| {
            taken.push((i, rayon::current_thread_index().is_some()));
            Ok(())
        })
        .unwrap();
        assert_eq!(taken, (0..64).map(|i| (i, true)).collect::<Vec<_>>());
        let mut taken = Vec::new();
        let error = run_in_order_on_pool(40, WINDOW, block_17_fails_first_in_order, |i| {
            taken.push(i);
            Ok(())
        })
        .unwrap_err();
        assert!(error.to_string().contains("17 fails first"), "{error}");
        assert_eq!(taken, (0..17).collect::<Vec<_>>());
    }

    /// A block's panic reaches the caller.
    #[test]
    #[should_panic(expected = "block 5 panics")]
    fn a_block_panic_reaches_the_caller() {
        let _ = run_in_order(
            8,
            WINDOW,
            |i| {
                assert!(i != 5, "block 5 panics");
                Ok(i)
            },
            |_| Ok(()),
        );
    }
}
