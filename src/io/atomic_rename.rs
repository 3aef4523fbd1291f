//! The two renames an output commit needs, atomic where the kernel offers them:
//!
//! - [`rename_noreplace`]: move `from` to `to` only if nothing is at `to` — Linux
//!   `renameat2(…, RENAME_NOREPLACE)`, so a file or directory that appears at `to` at the last
//!   moment is never replaced;
//! - [`exchange`]: swap `a` and `b` in one step — Linux `renameat2(…, RENAME_EXCHANGE)`, so
//!   there is no moment when neither the old nor the new directory is in place.
//!
//! Where the kernel or the file system lacks these flags (other systems; some network file
//! systems answer `EINVAL`), both fall back to a check followed by `rename(2)`, which leaves a
//! window of a few microseconds between the check and the rename; the commit's identity
//! checks before and after the swap still refuse what they did not expect.

use std::io;
use std::path::Path;

/// Moves `from` to `to` unless something exists at `to`; then the error's kind is
/// [`io::ErrorKind::AlreadyExists`] and nothing has moved.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    match renameat2(from, to, Flag::NoReplace) {
        Some(result) => result,
        None => {
            if std::fs::symlink_metadata(to).is_ok() {
                return Err(io::Error::from(io::ErrorKind::AlreadyExists));
            }
            std::fs::rename(from, to)
        }
    }
}

/// Swaps the directories `a` and `b`: afterwards `a` holds what was at `b` and `b` what was
/// at `a`. Both must exist.
pub fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    match renameat2(a, b, Flag::Exchange) {
        Some(result) => result,
        None => {
            // Three renames through a temporary name beside `a`.
            let parent = a.parent().unwrap_or(Path::new("."));
            let spare = tempfile::Builder::new()
                .prefix(".harbor-exchange-")
                .tempdir_in(parent)?
                .keep();
            std::fs::remove_dir(&spare)?;
            std::fs::rename(b, &spare)?;
            if let Err(e) = std::fs::rename(a, b) {
                let _ = std::fs::rename(&spare, b);
                return Err(e);
            }
            std::fs::rename(&spare, a)
        }
    }
}

#[derive(Clone, Copy)]
enum Flag {
    NoReplace,
    Exchange,
}

/// `renameat2(AT_FDCWD, from, AT_FDCWD, to, flag)`, or `None` where the system or the file
/// system does not support the flag.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn renameat2(from: &Path, to: &Path, flag: Flag) -> Option<io::Result<()>> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    let from = CString::new(from.as_os_str().as_bytes()).ok()?;
    let to = CString::new(to.as_os_str().as_bytes()).ok()?;
    let flags = match flag {
        Flag::NoReplace => libc::RENAME_NOREPLACE,
        Flag::Exchange => libc::RENAME_EXCHANGE,
    };
    // SAFETY: both paths are NUL-terminated strings that outlive the call.
    let status = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags as _,
        )
    };
    if status == 0 {
        return Some(Ok(()));
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        // The kernel (ENOSYS) or the file system (EINVAL) does not know the flag.
        Some(libc::ENOSYS) | Some(libc::EINVAL) => None,
        _ => Some(Err(error)),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn renameat2(_from: &Path, _to: &Path, _flag: Flag) -> Option<io::Result<()>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noreplace_moves_into_a_free_name_and_refuses_a_taken_one() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        std::fs::create_dir(&from).unwrap();
        std::fs::write(from.join("x"), "new").unwrap();
        let to = dir.path().join("to");
        rename_noreplace(&from, &to).unwrap();
        assert_eq!(std::fs::read_to_string(to.join("x")).unwrap(), "new");

        // An empty directory at the target would be silently replaced by rename(2).
        std::fs::create_dir(&from).unwrap();
        let taken = dir.path().join("taken");
        std::fs::create_dir(&taken).unwrap();
        let error = rename_noreplace(&from, &taken).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert!(from.is_dir() && taken.is_dir());
    }

    #[test]
    fn exchange_swaps_two_directories() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::create_dir(&a).unwrap();
        std::fs::create_dir(&b).unwrap();
        std::fs::write(a.join("which"), "a").unwrap();
        std::fs::write(b.join("which"), "b").unwrap();
        exchange(&a, &b).unwrap();
        assert_eq!(std::fs::read_to_string(a.join("which")).unwrap(), "b");
        assert_eq!(std::fs::read_to_string(b.join("which")).unwrap(), "a");
    }
}
