//! SIGINT, SIGTERM and SIGHUP: the handler thread that undoes a run in progress
//! (`harbor::io::interrupt`), prints what happened and exits with 128 + the signal.

/// Installs the handler; call once, early. An error only when it cannot be installed.
#[cfg(unix)]
pub fn install_interrupt_cleanup() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;

    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("harbor-interrupt".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                eprintln!("{}", harbor::io::interrupt::undo_for_interrupt());
                std::process::exit(128 + signal);
            }
        })?;
    Ok(())
}

/// On systems without Unix signals there is nothing to install.
#[cfg(not(unix))]
pub fn install_interrupt_cleanup() -> std::io::Result<()> {
    Ok(())
}
