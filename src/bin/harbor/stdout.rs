//! Everything harbor prints on stdout goes through [`print`]: a closed pipe (`harbor … |
//! head -1`) ends the printing quietly, any other failure (a full disk, an I/O error) is
//! kept and returned by [`finish`], so that the command exits with an error instead of
//! losing its output silently.

use std::io::{ErrorKind, Write};
use std::sync::Mutex;

/// What became of stdout so far.
enum State {
    Open,
    /// The reader went away (EPIPE): nothing more is printed, and that is not an error.
    Closed,
    /// The first write or flush error other than a closed pipe.
    Failed(std::io::Error),
}

static STATE: Mutex<State> = Mutex::new(State::Open);

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Records the outcome of a write to stdout.
fn note(result: std::io::Result<()>, state: &mut State) {
    if let Err(e) = result {
        *state = if e.kind() == ErrorKind::BrokenPipe {
            State::Closed
        } else {
            State::Failed(e)
        };
    }
}

/// Writes `args` to stdout unless an earlier write ended the printing.
pub fn print(args: std::fmt::Arguments) {
    let mut state = state();
    if matches!(*state, State::Open) {
        note(std::io::stdout().lock().write_fmt(args), &mut state);
    }
}

/// Flushes stdout (it is buffered) and returns the first failure of any write, a closed
/// pipe excepted.
pub fn finish() -> std::io::Result<()> {
    let mut state = state();
    if matches!(*state, State::Open) {
        note(std::io::stdout().lock().flush(), &mut state);
    }
    match std::mem::replace(&mut *state, State::Closed) {
        State::Failed(e) => Err(e),
        State::Open | State::Closed => Ok(()),
    }
}
