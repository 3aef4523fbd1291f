//! Reading user-named files with a size cap, so that an endless stream (`/dev/zero`, a FIFO
//! that never closes) or a huge file ends in a clear error instead of exhausting memory.
//!
//! | file                                   | cap                    |
//! |----------------------------------------|------------------------|
//! | config / problem file (TOML)           | [`CONFIG_FILE_CAP`]    |
//! | data files (`data.file`, `test_data.file`: CSV or NPY) | [`DATA_FILE_CAP`] |
//! | sampled input signals (`input[i].path`: CSV) | [`DATA_FILE_CAP`] |
//!
//! A file is read through `take(cap + 1)`: reading one byte more than the cap proves it is
//! larger, whatever its kind (a regular file, a device, a pipe).

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// The largest config or problem file read: 64 MiB (a dense 1000 × 1000 matrix written out
/// in TOML takes about 20 MiB).
pub const CONFIG_FILE_CAP: u64 = 64 << 20;

/// The largest data or signal file read: 1 GiB (about 40 million CSV rows of one time and
/// one value).
pub const DATA_FILE_CAP: u64 = 1 << 30;

/// Why a capped read failed.
#[derive(Debug)]
pub enum CappedReadError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// The file holds more than `cap` bytes.
    TooLarge { cap: u64 },
}

impl CappedReadError {
    /// The failure as an error on `field` (the setting or flag that named the file).
    pub fn into_error(self, field: &str, path: &Path) -> Error {
        match self {
            CappedReadError::Io(e) => {
                Error::invalid(field, format!("cannot read {}: {e}", path.display()))
            }
            CappedReadError::TooLarge { cap } => Error::invalid(field, too_large(path, cap)),
        }
    }
}

/// "<path> is larger than the <cap> cap on …": the text of a refused oversized file.
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
    let file = std::fs::File::open(path).map_err(CappedReadError::Io)?;
    // A regular file's length is known: refuse an oversized one without reading it.
    if let Ok(metadata) = file.metadata()
        && metadata.is_file()
        && metadata.len() > cap
    {
        return Err(CappedReadError::TooLarge { cap });
    }
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(CappedReadError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(CappedReadError::TooLarge { cap });
    }
    Ok(bytes)
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
