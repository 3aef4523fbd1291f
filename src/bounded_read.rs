//! Reading user-named files with a size cap, so that an endless stream (`/dev/zero`, a FIFO
//! that never closes) or a huge file ends in a clear error instead of exhausting memory.
//!
//! | file                                   | cap                    |
//! |----------------------------------------|------------------------|
//! | config / problem file (TOML)           | [`CONFIG_FILE_CAP`]    |
//! | data files (`data.file`, `test_data.file`: CSV or NPY) | [`DATA_FILE_CAP`] |
//! | sampled input signals (`input[i].path`: CSV) | [`DATA_FILE_CAP`] |
//!
//! A regular file longer than the cap is refused without reading it. Anything else (a
//! device, a FIFO, a pipe) is read as a stream: one byte more than the cap proves it is
//! larger, and a stream that stays silent for [`STREAM_IDLE_LIMIT`] — a FIFO whose writer
//! holds it open and writes nothing — is abandoned with an error. The file is opened without
//! blocking, so a FIFO that no process writes to reads as empty instead of hanging.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};

/// The largest config or problem file read: 64 MiB (a dense 1000 × 1000 matrix written out
/// in TOML takes about 20 MiB).
pub const CONFIG_FILE_CAP: u64 = 64 << 20;

/// The largest data or signal file read: 1 GiB (about 40 million CSV rows of one time and
/// one value).
pub const DATA_FILE_CAP: u64 = 1 << 30;

/// How long a stream may stay silent before its read is abandoned: 10 s.
pub const STREAM_IDLE_LIMIT: Duration = Duration::from_secs(10);

/// Why a capped read failed.
#[derive(Debug)]
pub enum CappedReadError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// The file holds more than `cap` bytes.
    TooLarge { cap: u64 },
    /// The stream sent nothing for `idle` (and did not end).
    Silent { idle: Duration },
}

impl CappedReadError {
    /// The failure as an error on `field` (the setting or flag that named the file).
    pub fn into_error(self, field: &str, path: &Path) -> Error {
        match self {
            CappedReadError::Io(e) => {
                Error::invalid(field, format!("cannot read {}: {e}", path.display()))
            }
            CappedReadError::TooLarge { cap } => Error::invalid(field, too_large(path, cap)),
            CappedReadError::Silent { idle } => Error::invalid(field, silent(path, idle)),
        }
    }
}

/// "`<path>` sent nothing for …": the text of an abandoned silent stream.
pub fn silent(path: &Path, idle: Duration) -> String {
    format!(
        "{} is a stream that sent nothing for {} s without ending; harbor reads such a file whole: give a regular file or a stream that ends",
        path.display(),
        idle.as_secs()
    )
}

/// "`<path>` is larger than the `<cap>` cap on …": the text of a refused oversized file.
pub fn too_large(path: &Path, cap: u64) -> String {
    format!(
        "{} is larger than {} ({} bytes), the most harbor reads from such a file (an endless stream such as /dev/zero never ends); give a regular file within that size",
        path.display(),
        mebibytes(cap),
        cap
    )
}

/// `cap` in MiB, as messages state it (the caps are whole MiB).
fn mebibytes(cap: u64) -> String {
    format!("{} MiB", cap >> 20)
}

/// The bytes of the file at `path`, refused when there are more than `cap` of them.
pub fn read_capped(path: &Path, cap: u64) -> std::result::Result<Vec<u8>, CappedReadError> {
    let file = open_without_blocking(path).map_err(CappedReadError::Io)?;
    let regular = file.metadata().is_ok_and(|m| m.is_file());
    // A regular file's length is known: refuse an oversized one without reading it.
    if regular && file.metadata().is_ok_and(|m| m.len() > cap) {
        return Err(CappedReadError::TooLarge { cap });
    }
    let bytes = if regular {
        let mut bytes = Vec::new();
        file.take(cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(CappedReadError::Io)?;
        bytes
    } else {
        read_stream(file, cap, STREAM_IDLE_LIMIT)?
    };
    if bytes.len() as u64 > cap {
        return Err(CappedReadError::TooLarge { cap });
    }
    Ok(bytes)
}

/// Opens `path` for reading; on Unix with `O_NONBLOCK`, so that opening a FIFO does not wait
/// for a writer.
fn open_without_blocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Reads a non-regular file until it ends, stopping after `cap + 1` bytes, or failing when
/// it stays silent for `idle`.
fn read_stream(
    mut file: std::fs::File,
    cap: u64,
    idle: Duration,
) -> std::result::Result<Vec<u8>, CappedReadError> {
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() as u64 > cap {
                    return Ok(bytes);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if !wait_readable(&file, idle).map_err(CappedReadError::Io)? {
                    return Err(CappedReadError::Silent { idle });
                }
            }
            Err(e) => return Err(CappedReadError::Io(e)),
        }
    }
}

/// Waits until `file` has data (or its end) to read; `false` after `limit` without.
#[cfg(unix)]
fn wait_readable(file: &std::fs::File, limit: Duration) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    let mut poll = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = libc::c_int::try_from(limit.as_millis()).unwrap_or(libc::c_int::MAX);
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready >= 0 {
            return Ok(ready > 0);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Without Unix's poll the file was opened blocking: it is always worth reading.
#[cfg(not(unix))]
fn wait_readable(_file: &std::fs::File, _limit: Duration) -> std::io::Result<bool> {
    Ok(true)
}

/// The text of the config or problem file at `path`, at most [`CONFIG_FILE_CAP`] bytes of
/// UTF-8; errors name the file as config errors do.
pub fn read_config_text(path: &Path) -> Result<String> {
    let config_error = |message: String| Error::Config {
        path: path.display().to_string(),
        message,
    };
    let bytes = read_capped(path, CONFIG_FILE_CAP).map_err(|e| match e {
        CappedReadError::Io(e) => Error::io(path, e),
        CappedReadError::TooLarge { cap } => config_error(format!(
            "the file is larger than {} ({cap} bytes), the most a config may hold (an endless stream such as /dev/zero never ends)",
            mebibytes(cap)
        )),
        CappedReadError::Silent { idle } => config_error(silent(path, idle)),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        config_error(format!(
            "is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_writer_reads_empty_and_a_silent_one_is_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // Nobody writes: opening does not wait, and the stream is empty.
        assert!(read_capped(&fifo, 10).unwrap().is_empty());
        // A writer that holds the FIFO open and writes nothing.
        let _writer = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .unwrap();
        let file = open_without_blocking(&fifo).unwrap();
        let idle = Duration::from_millis(200);
        assert!(matches!(
            read_stream(file, 10, idle),
            Err(CappedReadError::Silent { .. })
        ));
    }

    #[test]
    fn a_file_of_exactly_the_cap_is_read_and_one_byte_more_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, [7u8; 10]).unwrap();
        assert_eq!(read_capped(&path, 10).unwrap().len(), 10);
        assert!(matches!(
            read_capped(&path, 9),
            Err(CappedReadError::TooLarge { cap: 9 })
        ));
    }

    #[test]
    fn an_endless_stream_ends_at_the_cap() {
        let path = Path::new("/dev/zero");
        if path.exists() {
            assert!(matches!(
                read_capped(path, 1 << 20),
                Err(CappedReadError::TooLarge { .. })
            ));
        }
    }
}
