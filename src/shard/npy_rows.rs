//! Reading a shard's array files back member by member: the header must be exactly the one
//! harbor writes for the shard's shape ([`crate::io::npy_stream::npy_header`]) and the file
//! exactly as long as its data, so a truncated, padded or reshaped file is refused by name.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::io::npy_stream::{Element, npy_header};

/// An array file of `shape`, read along its first axis.
pub struct NpyRows {
    reader: BufReader<File>,
    path: PathBuf,
    /// Values per index of the first axis.
    row_values: usize,
    bytes: Vec<u8>,
}

impl NpyRows {
    /// Opens `path`, which must hold an array of `shape` and `element`s as harbor writes it.
    pub fn open(path: &Path, shape: &[usize], element: Element) -> Result<Self> {
        let io = |e| Error::io(path, e);
        let refuse = |problem: String| {
            Error::invalid("shard directory", format!("{}: {problem}", path.display()))
        };
        let expected = npy_header(shape, element);
        let file = File::open(path).map_err(io)?;
        let length = file.metadata().map_err(io)?.len();
        let values: u64 = shape.iter().map(|&d| d as u64).product();
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut header = vec![0u8; expected.len()];
        if reader.read_exact(&mut header).is_err() || header != expected {
            return Err(refuse(format!(
                "not the array the shard's run writes (expected shape {shape:?} of {})",
                if element == Element::F64 {
                    "f64"
                } else {
                    "int64"
                }
            )));
        }
        let wanted = expected.len() as u64 + 8 * values;
        if length != wanted {
            return Err(refuse(format!(
                "has {length} bytes, an array of shape {shape:?} takes {wanted}"
            )));
        }
        Ok(NpyRows {
            reader,
            path: path.to_path_buf(),
            row_values: shape[1..].iter().product(),
            bytes: Vec::new(),
        })
    }

    fn next_bytes(&mut self, rows: usize) -> Result<&[u8]> {
        self.bytes.resize(8 * rows * self.row_values, 0);
        self.reader
            .read_exact(&mut self.bytes)
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(&self.bytes)
    }

    /// The next `rows` rows of f64 values, one `Vec` per row.
    pub fn next_f64(&mut self, rows: usize) -> Result<Vec<Vec<f64>>> {
        let width = self.row_values;
        let bytes = self.next_bytes(rows)?;
        Ok(bytes
            .chunks_exact(8 * width.max(1))
            .take(rows)
            .map(|row| {
                row.chunks_exact(8)
                    .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
                    .collect()
            })
            .chain(std::iter::repeat_with(Vec::new))
            .take(rows)
            .collect())
    }

    /// The next `rows` int64 values (a one-dimensional array).
    pub fn next_i64(&mut self, rows: usize) -> Result<Vec<i64>> {
        let bytes = self.next_bytes(rows)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect())
    }
}
