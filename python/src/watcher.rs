//! What a long call does while it runs with the GIL released: at every progress report of
//! the library (between blocks of members, dispatch windows, batches of evaluations), at
//! most every [`REPORT_INTERVAL`], it takes the GIL back for a moment to run Python's signal
//! handlers — Ctrl-C raises `KeyboardInterrupt` there — and to tell the reporter the
//! `progress` argument asked for (`harbor._progress`: a tqdm bar, a line on stderr, or the
//! user's callable). An exception from either stops the run at that point; nothing of it is
//! returned, and the call raises that exception.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// The shortest time between two reports (the last one always goes through).
pub const REPORT_INTERVAL: Duration = Duration::from_millis(100);

/// What the watcher holds between reports.
struct WatchState {
    /// `harbor._progress.reporter(progress)`: None, or a callable (phase, done, total,
    /// best_cost) with a `close()`.
    reporter: Option<Py<PyAny>>,
    /// The exception that stopped the run.
    stopped: Option<PyErr>,
    last: Option<Instant>,
}

/// The watcher of one call, shared with the closures the library calls.
#[derive(Clone)]
pub struct Watcher {
    state: Arc<Mutex<WatchState>>,
}

impl Watcher {
    /// The watcher of a call whose `progress` argument is `progress` (None or False: no
    /// reporter; True: a tqdm bar when tqdm is installed, else a line on stderr; a
    /// callable: called with a `harbor.Progress`).
    pub fn new(py: Python<'_>, progress: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let reporter = py
            .import("harbor._progress")?
            .getattr("reporter")?
            .call1((progress,))?;
        Ok(Watcher {
            state: Arc::new(Mutex::new(WatchState {
                reporter: (!reporter.is_none()).then(|| reporter.unbind()),
                stopped: None,
                last: None,
            })),
        })
    }

    /// Reports `done` of `total` in `phase` (with the best cost so far, where there is
    /// one) and checks for Ctrl-C — at most every [`REPORT_INTERVAL`], and always when
    /// `done` reaches `total`; called without the GIL. An exception stops the run: the
    /// error returned here carries it to the library, [`Watcher::finish`] gives it back.
    pub fn report(
        &self,
        phase: &str,
        done: u64,
        total: u64,
        best_cost: Option<f64>,
    ) -> harbor::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.stopped.is_some() {
            return Err(stopped());
        }
        let now = Instant::now();
        let due = done >= total || state.last.is_none_or(|last| now - last >= REPORT_INTERVAL);
        if !due {
            return Ok(());
        }
        state.last = Some(now);
        let outcome = Python::attach(|py| -> PyResult<()> {
            py.check_signals()?;
            if let Some(reporter) = &state.reporter {
                reporter.call1(py, (phase, done, total, best_cost))?;
            }
            Ok(())
        });
        match outcome {
            Ok(()) => Ok(()),
            Err(e) => {
                state.stopped = Some(e);
                Err(stopped())
            }
        }
    }

    /// Closes the reporter (a bar is cleared) and returns the exception that stopped the
    /// run, if one did; call with the GIL, once the run has returned.
    pub fn finish(&self, py: Python<'_>) -> Option<PyErr> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(reporter) = state.reporter.take()
            && let Err(e) = reporter.call_method0(py, "close")
            && state.stopped.is_none()
        {
            state.stopped = Some(e);
        }
        state.stopped.take()
    }
}

/// The library error that carries a stop to the library's caller.
fn stopped() -> harbor::Error {
    harbor::Error::Stopped("by Python (Ctrl-C or an exception in the progress reporter)".into())
}
