//! The private `XDG_RUNTIME_DIR` of a run: Mesa's Wayland probe stays quiet with it, and
//! directories of runs killed outright are swept by the next one.

/// The name of [`quiet_wayland_probe`]'s directories: `harbor-runtime-<pid>-<random>`.
const RUNTIME_PREFIX: &str = "harbor-runtime-";

/// Removes the runtime directories in `temp` of harbor processes that no longer exist (a
/// run killed outright leaves its directory behind).
fn remove_stale_runtime_dirs(temp: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|name| name.strip_prefix(RUNTIME_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !harbor::io::output_target::process_alive(pid)
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Points `XDG_RUNTIME_DIR` at a fresh private directory when it is unset or not an
/// absolute path, and returns that directory (removed when dropped).
///
/// Opening a Vulkan instance makes Mesa probe for a Wayland display, and libwayland prints
/// `error: XDG_RUNTIME_DIR is invalid or not set in the environment.` for every probe
/// without a valid one — lines that read like harbor's own errors. With an empty private
/// directory the probe finds no display and stays quiet; a valid setting is left alone.
pub fn quiet_wayland_probe() -> Option<tempfile::TempDir> {
    if !cfg!(all(unix, not(target_os = "macos"))) {
        return None;
    }
    let valid = std::env::var_os("XDG_RUNTIME_DIR")
        .is_some_and(|dir| std::path::Path::new(&dir).is_absolute());
    if valid {
        return None;
    }
    let temp = std::env::temp_dir();
    remove_stale_runtime_dirs(&temp);
    let dir = tempfile::Builder::new()
        .prefix(&format!("{RUNTIME_PREFIX}{}-", std::process::id()))
        .tempdir_in(&temp)
        .ok()?;
    // SAFETY: called from `main` right after argument parsing, before anything (the
    // interrupt handler, rayon, wgpu) has started a thread, so no other thread can read or
    // write the environment concurrently.
    unsafe { std::env::set_var("XDG_RUNTIME_DIR", dir.path()) };
    Some(dir)
}
