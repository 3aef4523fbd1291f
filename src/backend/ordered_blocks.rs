//! Blocks of work run on all cores and handed back in order, with no barrier between them:
//! each block is a rayon job, a bounded window of them in flight, and the caller's thread
//! takes block i's result as soon as it and every block before it are done. So the caller's
//! work on the results (appending, writing, statistics) overlaps the blocks still running,
//! and no core waits for the slowest block of a group before the next group starts.
//!
//! The caller takes the results in block order whatever the thread count, and the first
//! error in that order is the one returned: blocks after it may be skipped, blocks before
//! it all ran and were taken.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, channel};

use crate::error::Result;

/// Blocks queued or running per thread: enough that a thread ending one finds the next
/// one waiting, few enough that the results held out of order stay small.
const BLOCKS_IN_FLIGHT_PER_THREAD: usize = 2;

/// What a block's job sends back: its result, nothing where the run had stopped before it
/// started, or the payload of its panic (raised again on the caller's thread).
enum Outcome<T> {
    Ran(Result<T>),
    Skipped,
    Panicked(Box<dyn Any + Send>),
}

/// Runs `run(i)` for every block i in `0..count` on the rayon pool and calls `take` with
/// each result on the caller's thread, in increasing i, as soon as the blocks up to i are
/// done. Stops at the first error, from `run` (in block order) or from `take`, and returns
/// it once the blocks in flight have ended; blocks not yet started then do not run. A panic
/// in a block is raised again on the caller's thread.
pub fn run_in_order<T: Send>(
    count: usize,
    run: impl Fn(usize) -> Result<T> + Sync,
    mut take: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let window = BLOCKS_IN_FLIGHT_PER_THREAD * rayon::current_num_threads().max(1);
    let stopped = AtomicBool::new(false);
    let (sender, receiver) = channel::<(usize, Outcome<T>)>();
    let (run, stopped_flag) = (&run, &stopped);
    // Jobs spawned from a pool thread run there first in spawn order (FIFO).
    rayon::in_place_scope_fifo(|scope| {
        // done[k]: the outcome of block next + k, once it has arrived.
        let mut done: VecDeque<Option<Outcome<T>>> = VecDeque::with_capacity(window);
        let (mut next, mut spawned) = (0, 0);
        let outcome = 'blocks: loop {
            while spawned < count && spawned < next + window {
                let (sender, i) = (sender.clone(), spawned);
                scope.spawn_fifo(move |_| {
                    let outcome = if stopped_flag.load(Ordering::Relaxed) {
                        Outcome::Skipped
                    } else {
                        match catch_unwind(AssertUnwindSafe(|| run(i))) {
                            Ok(result) => Outcome::Ran(result),
                            Err(payload) => Outcome::Panicked(payload),
                        }
                    };
                    // The receiver outlives the scope, so the send cannot fail.
                    let _ = sender.send((i, outcome));
                });
                spawned += 1;
            }
            if next == count {
                break Ok(());
            }
            let (i, outcome) = receive(&receiver);
            let slot = i - next;
            if done.len() <= slot {
                done.resize_with(slot + 1, || None);
            }
            done[slot] = Some(outcome);
            while let Some(Some(_)) = done.front() {
                let outcome = done.pop_front().flatten().expect("the front has arrived");
                next += 1;
                let taken = match outcome {
                    Outcome::Ran(result) => result.and_then(&mut take),
                    Outcome::Panicked(payload) => {
                        stopped_flag.store(true, Ordering::Relaxed);
                        resume_unwind(payload)
                    }
                    Outcome::Skipped => unreachable!("blocks are skipped only after a stop"),
                };
                if let Err(error) = taken {
                    break 'blocks Err(error);
                }
            }
        };
        // The scope waits for the jobs in flight; those not yet started skip their block.
        stopped_flag.store(true, Ordering::Relaxed);
        outcome
    })
}

/// The next block's outcome. On a pool thread (a run started inside another parallel
/// job) the thread runs pending jobs while it waits — the blocks may be queued on it —
/// instead of blocking.
fn receive<T>(receiver: &Receiver<T>) -> T {
    if rayon::current_thread_index().is_none() {
        return receiver.recv().expect("the sender outlives the blocks");
    }
    loop {
        match receiver.try_recv() {
            Ok(value) => return value,
            Err(TryRecvError::Empty) => {
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    std::thread::yield_now();
                }
            }
            Err(TryRecvError::Disconnected) => unreachable!("the sender outlives the blocks"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::sync::atomic::AtomicUsize;

    /// Blocks that end out of order (later ones faster) are taken in order.
    #[test]
    fn results_are_taken_in_block_order() {
        let mut taken = Vec::new();
        run_in_order(
            64,
            |i| {
                std::thread::sleep(std::time::Duration::from_micros(((64 - i) * 30) as u64));
                Ok(i)
            },
            |i| {
                taken.push(i);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(taken, (0..64).collect::<Vec<_>>());
    }

    /// The first failing block in order is reported, whichever fails first in time, and
    /// nothing after it is taken.
    #[test]
    fn the_first_error_in_order_is_returned() {
        let mut taken = Vec::new();
        let error = run_in_order(
            40,
            |i| {
                if i == 30 {
                    return Err(Error::invalid("block", "30 fails first in time"));
                }
                if i == 17 {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    return Err(Error::invalid("block", "17 fails first in order"));
                }
                Ok(i)
            },
            |i| {
                taken.push(i);
                Ok(())
            },
        )
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
        let window = BLOCKS_IN_FLIGHT_PER_THREAD * rayon::current_num_threads();
        assert!(ran.load(Ordering::Relaxed) <= 4 + window, "{ran:?}");
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
                    let mut sum = 0;
                    run_in_order(
                        9,
                        |i| Ok(i * k),
                        |v| {
                            sum += v;
                            Ok(())
                        },
                    )
                    .unwrap();
                    sum
                })
                .collect()
        });
        assert_eq!(sums, vec![0, 36, 72]);
    }

    /// A block's panic reaches the caller.
    #[test]
    #[should_panic(expected = "block 5 panics")]
    fn a_block_panic_reaches_the_caller() {
        let _ = run_in_order(
            8,
            |i| {
                assert!(i != 5, "block 5 panics");
                Ok(i)
            },
            |_| Ok(()),
        );
    }
}
