//! The library reports what the user should know but did not ask for (a stale staging
//! directory removed, a previous output that could not be deleted) through the `log`
//! facade and prints nothing itself; the CLI prints those lines to stderr as they are.

use log::{Level, LevelFilter, Log, Metadata, Record};

/// Prints warnings and errors to stderr, each as one line.
struct StderrNotices;

impl Log for StderrNotices {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= Level::Warn
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) && record.target().starts_with("harbor") {
            eprintln!("{}", record.args());
        }
    }

    fn flush(&self) {}
}

/// Routes the library's notices to stderr; call once, early.
pub fn print_library_notices() {
    static NOTICES: StderrNotices = StderrNotices;
    if log::set_logger(&NOTICES).is_ok() {
        log::set_max_level(LevelFilter::Warn);
    }
}
