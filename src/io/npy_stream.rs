//! NPY files (format version 1.0, little-endian, C order) written slab by slab: the header
//! and the full size are fixed up front, then each chunk of the first axis is written at
//! its offset, so a run of any size streams to disk with bounded memory. Files written here
//! can be read back row by row ([`read_rows`]) or in batches of rows ([`read_row_batches`]) for the summary's later passes.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The element type of an array file: 8-byte floats or integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    F64,
    I64,
}

impl Element {
    fn descr(self) -> &'static str {
        match self {
            Element::F64 => "<f8",
            Element::I64 => "<i8",
        }
    }
}

/// An array file of fixed shape, filled along its first axis.
pub struct NpyStream {
    file: BufWriter<File>,
    path: PathBuf,
    data_offset: u64,
    /// Values per index of the first axis.
    row_values: usize,
    element: Element,
}

/// The NPY 1.0 header of a C-order array of `shape` and `element`s, padded so that the
/// data starts at a multiple of 64 bytes.
pub fn npy_header(shape: &[usize], element: Element) -> Vec<u8> {
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
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {dims}, }}",
        element.descr()
    );
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut header = b"\x93NUMPY\x01\x00".to_vec();
    header.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    header.extend_from_slice(dict.as_bytes());
    header
}

/// Bytes of the file of an array of `shape`: header and data.
pub fn npy_file_bytes(shape: &[usize]) -> u64 {
    let values: u128 = shape.iter().map(|&d| d as u128).product();
    npy_header(shape, Element::F64).len() as u64 + (8 * values).min(u64::MAX as u128) as u64
}

impl NpyStream {
    /// Creates an f64 array file at `path` with the header of `shape` and room for all its
    /// values.
    pub fn create(path: &Path, shape: &[usize]) -> Result<Self> {
        NpyStream::create_of(path, shape, Element::F64)
    }

    /// Creates an array file of `element`s at `path`.
    pub fn create_of(path: &Path, shape: &[usize], element: Element) -> Result<Self> {
        let io = |e| Error::io(path, e);
        let header = npy_header(shape, element);
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
            element,
        })
    }

    fn seek_row(&mut self, first_row: usize) -> Result<()> {
        let offset = self.data_offset + 8 * (first_row * self.row_values) as u64;
        self.file
            .seek(SeekFrom::Start(offset))
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(())
    }

    /// Writes the 8-byte `values` (whole rows of the first axis) little-endian starting at
    /// row `first_row`: on a little-endian machine their bytes as they lie in memory, in
    /// one write; elsewhere each value's `to_le_bytes`, a slab at a time.
    fn write_le<T: bytemuck::Pod>(
        &mut self,
        first_row: usize,
        values: &[T],
        to_le_bytes: impl Fn(&T) -> [u8; 8],
    ) -> Result<()> {
        debug_assert_eq!(std::mem::size_of::<T>(), 8);
        self.seek_row(first_row)?;
        let io = |e| Error::io(&self.path, e);
        if cfg!(target_endian = "little") {
            return self
                .file
                .write_all(bytemuck::cast_slice(values))
                .map_err(io);
        }
        let mut slab = Vec::with_capacity(8 << 10);
        for values in values.chunks(1 << 10) {
            slab.clear();
            slab.extend(values.iter().flat_map(&to_le_bytes));
            self.file.write_all(&slab).map_err(io)?;
        }
        Ok(())
    }

    /// Writes `values` (whole rows of the first axis) starting at row `first_row`.
    pub fn write_rows(&mut self, first_row: usize, values: &[f64]) -> Result<()> {
        debug_assert_eq!(self.element, Element::F64);
        self.write_le(first_row, values, |v| v.to_le_bytes())
    }

    /// Writes integer `values` (whole rows) starting at row `first_row`.
    pub fn write_rows_i64(&mut self, first_row: usize, values: &[i64]) -> Result<()> {
        debug_assert_eq!(self.element, Element::I64);
        self.write_le(first_row, values, |v| v.to_le_bytes())
    }

    /// Hands the rows written so far to the file system (readable through the path from
    /// then on).
    pub fn flush(&mut self) -> Result<()> {
        self.file.flush().map_err(|e| Error::io(&self.path, e))
    }

    /// Flushes everything to disk.
    pub fn finish(mut self) -> Result<()> {
        self.flush()?;
        self.file
            .get_ref()
            .sync_all()
            .map_err(|e| Error::io(&self.path, e))
    }

    /// Finishes `streams` side by side: all are flushed, then each is synced to disk on
    /// its own thread (a disk serves overlapping syncs together) while `meanwhile` runs
    /// here, free to read the flushed files. Returns the first error in `streams`' order,
    /// else what `meanwhile` returns.
    pub fn finish_all<T>(
        mut streams: Vec<NpyStream>,
        meanwhile: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        for stream in &mut streams {
            stream.flush()?;
        }
        std::thread::scope(|scope| {
            let syncs: Vec<_> = streams
                .into_iter()
                .map(|stream| scope.spawn(move || stream.finish()))
                .collect();
            let result = meanwhile();
            for sync in syncs {
                sync.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            }
            result
        })
    }
}

/// Bytes of rows [`read_rows`] reads at a time.
const READ_ROWS_BYTES: usize = 64 << 10;

/// Reads the f64 array file at `path` (as written by [`NpyStream`]) row by row of
/// `row_values` values, in order, calling `row` for each.
pub fn read_rows(path: &Path, row_values: usize, mut row: impl FnMut(&[f64])) -> Result<()> {
    let row_values = row_values.max(1);
    let batch = (READ_ROWS_BYTES / (8 * row_values)).max(1);
    read_row_batches(path, row_values, batch, |rows| {
        rows.chunks_exact(row_values).for_each(&mut row)
    })
}

/// Reads the f64 array file at `path` (as written by [`NpyStream`]) in batches of up to
/// `batch` rows of `row_values` values, in order, calling `rows` for each batch (whole rows,
/// one after the other: a multiple of `row_values` values). The file is read straight into
/// one batch's buffer, reused from batch to batch.
pub fn read_row_batches(
    path: &Path,
    row_values: usize,
    batch: usize,
    mut rows: impl FnMut(&[f64]),
) -> Result<()> {
    let io = |e| Error::io(path, e);
    let mut file = File::open(path).map_err(io)?;
    let mut preamble = [0u8; 10];
    file.read_exact(&mut preamble).map_err(io)?;
    let header_len = u16::from_le_bytes([preamble[8], preamble[9]]) as u64;
    file.seek(SeekFrom::Start(10 + header_len)).map_err(io)?;
    let row_values = row_values.max(1);
    let mut values = vec![0.0f64; row_values * batch.max(1)];
    loop {
        // Whole rows read, up to a batch; a partial last row is not an array of these rows.
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut values);
        let mut filled = 0;
        while filled < bytes.len() {
            match file.read(&mut bytes[filled..]) {
                Ok(0) => break,
                Ok(read) => filled += read,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io(e)),
            }
        }
        let full = filled == bytes.len();
        let whole = filled / (8 * row_values) * row_values;
        if whole == 0 {
            return Ok(());
        }
        // The file's little-endian values in the machine's order (nothing to do on a
        // little-endian machine).
        for value in &mut values[..whole] {
            *value = f64::from_bits(u64::from_le(value.to_bits()));
        }
        rows(&values[..whole]);
        if !full {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streams finished together are readable, whole, by what runs meanwhile, and after.
    #[test]
    fn streams_finished_together_are_read_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<_> = (0..3)
            .map(|k| dir.path().join(format!("{k}.npy")))
            .collect();
        let streams = (paths.iter().enumerate())
            .map(|(k, path)| {
                let mut stream = NpyStream::create(path, &[2, 2]).unwrap();
                stream.write_rows(0, &[k as f64, 1.0, 2.0, 3.0]).unwrap();
                stream
            })
            .collect();
        let read = |path: &Path| {
            let mut values = Vec::new();
            read_rows(path, 2, |row| values.extend_from_slice(row)).map(|()| values)
        };
        let meanwhile = NpyStream::finish_all(streams, || read(&paths[2])).unwrap();
        assert_eq!(meanwhile, vec![2.0, 1.0, 2.0, 3.0]);
        for (k, path) in paths.iter().enumerate() {
            assert_eq!(read(path).unwrap(), vec![k as f64, 1.0, 2.0, 3.0]);
        }
        let failing = NpyStream::finish_all(Vec::new(), || read(&dir.path().join("none.npy")));
        assert!(failing.is_err());
    }

    #[test]
    fn rows_written_in_any_order_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let mut stream = NpyStream::create(&path, &[3, 2]).unwrap();
        stream.write_rows(2, &[5.0, 6.0]).unwrap();
        stream.write_rows(0, &[1.0, 2.0, 3.0, 4.0]).unwrap();
        stream.finish().unwrap();
        let mut rows = Vec::new();
        read_rows(&path, 2, |r| rows.push(r.to_vec())).unwrap();
        assert_eq!(rows, vec![vec![1.0, 2.0], vec![3.0, 4.0], vec![5.0, 6.0]]);
        let mut batches = Vec::new();
        read_row_batches(&path, 2, 2, |r| batches.push(r.to_vec())).unwrap();
        assert_eq!(batches, vec![vec![1.0, 2.0, 3.0, 4.0], vec![5.0, 6.0]]);
        // A batch that ends where the file does, then nothing more.
        let mut batches = Vec::new();
        read_row_batches(&path, 2, 3, |r| batches.push(r.to_vec())).unwrap();
        assert_eq!(batches, vec![vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            npy_file_bytes(&[3, 2])
        );
        let array: ndarray::Array2<f64> = ndarray_npy::read_npy(&path).unwrap();
        assert_eq!(array[[2, 1]], 6.0);
        let ints = dir.path().join("i.npy");
        let mut stream = NpyStream::create_of(&ints, &[2], Element::I64).unwrap();
        stream.write_rows_i64(0, &[0, 17]).unwrap();
        stream.finish().unwrap();
        let array: ndarray::Array1<i64> = ndarray_npy::read_npy(&ints).unwrap();
        assert_eq!(array.to_vec(), vec![0, 17]);
    }
}
