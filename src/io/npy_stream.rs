//! NPY files (format version 1.0, little-endian f64, C order) written slab by slab: the
//! header and the full size are fixed up front, then each chunk of the first axis is
//! written at its offset, so a run of any size streams to disk with bounded memory.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// An f64 array file of fixed shape, filled along its first axis.
pub struct NpyStream {
    file: BufWriter<File>,
    path: PathBuf,
    data_offset: u64,
    /// f64 values per index of the first axis.
    row_values: usize,
}

/// The NPY 1.0 header for an f64 C-order array of `shape`, padded so that the data starts
/// at a multiple of 64 bytes.
pub fn npy_header(shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [single] => format!("({single},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {dims}, }}");
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut header = b"\x93NUMPY\x01\x00".to_vec();
    header.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    header.extend_from_slice(dict.as_bytes());
    header
}

impl NpyStream {
    /// Creates `path` with the header of `shape` and room for all its values.
    pub fn create(path: &Path, shape: &[usize]) -> Result<Self> {
        let io = |e| Error::io(path, e);
        let header = npy_header(shape);
        let mut file = File::create(path).map_err(io)?;
        file.write_all(&header).map_err(io)?;
        let values: usize = shape.iter().product();
        file.set_len(header.len() as u64 + 8 * values as u64)
            .map_err(io)?;
        Ok(NpyStream {
            file: BufWriter::with_capacity(1 << 20, file),
            path: path.to_path_buf(),
            data_offset: header.len() as u64,
            row_values: shape[1..].iter().product(),
        })
    }

    /// Writes `values` (whole rows of the first axis) starting at row `first_row`.
    pub fn write_rows(&mut self, first_row: usize, values: &[f64]) -> Result<()> {
        let io = |e| Error::io(&self.path, e);
        let offset = self.data_offset + 8 * (first_row * self.row_values) as u64;
        self.file.seek(SeekFrom::Start(offset)).map_err(io)?;
        for v in values {
            self.file.write_all(&v.to_le_bytes()).map_err(io)?;
        }
        Ok(())
    }

    /// Flushes everything to disk.
    pub fn finish(mut self) -> Result<()> {
        let io = |e| Error::io(&self.path, e);
        self.file.flush().map_err(io)?;
        self.file.get_ref().sync_all().map_err(io)
    }
}
