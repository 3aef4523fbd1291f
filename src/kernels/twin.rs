//! What a kernel's CPU twin sees of a dispatch: the engine's bindings
//! ([`crate::kernels::abi::BINDINGS`]) as host memory, in the same structure-of-arrays
//! layouts as on the device. The executor runs the twin of one member at a time over a
//! chunk's buffers ([`crate::kernels::GpuKernel::twin`]), the members of a dispatch in
//! parallel, exactly as the GPU runs the kernel's invocations.

use std::sync::atomic::{AtomicU64, Ordering};

use super::abi::DispatchParams;

/// A read-write storage buffer of reals shared by the twin's invocations of a dispatch,
/// each writing only its own member's entries (entry e of member i at e · members + i), as
/// the kernels do on the device. The values are kept as the bits of f64 in relaxed
/// atomics: concurrent invocations may then share the buffer in safe Rust, and a relaxed
/// load or store is a plain load or store on the targets harbor runs on.
pub struct StorageBuffer {
    values: Vec<AtomicU64>,
}

impl StorageBuffer {
    /// A buffer holding `values`.
    pub fn new(values: &[f64]) -> Self {
        StorageBuffer {
            values: values.iter().map(|v| AtomicU64::new(v.to_bits())).collect(),
        }
    }

    /// A buffer of `len` zeros.
    pub fn zeros(len: usize) -> Self {
        StorageBuffer {
            values: (0..len).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Entry `index`.
    pub fn get(&self, index: usize) -> f64 {
        f64::from_bits(self.values[index].load(Ordering::Relaxed))
    }

    /// Sets entry `index` to `value`.
    pub fn set(&self, index: usize, value: f64) {
        self.values[index].store(value.to_bits(), Ordering::Relaxed);
    }

    /// The first `len` entries.
    pub fn read(&self, len: usize) -> Vec<f64> {
        (0..len).map(|index| self.get(index)).collect()
    }
}

/// The bindings of one dispatch as a twin invocation sees them, named as in WGSL.
pub struct TwinBindings<'a> {
    /// The dispatch's step range and strides (`Dispatch`).
    pub dispatch: &'a DispatchParams,
    /// Per-member parameters in the kernel's packing.
    pub params: &'a [f64],
    /// The shared stream's values for the dispatch's steps.
    pub stream: &'a [f64],
    /// Per-member state (layout `STATE`), persistent across dispatches.
    pub state: &'a StorageBuffer,
    /// The dispatch's record slots (layout `RECORD` per slot).
    pub records: &'a StorageBuffer,
    /// Run-wide constants (layout `CONST`).
    pub constants: &'a [f64],
    /// Per-member scratch ([`crate::kernels::KernelSource::scratch`] reals per member),
    /// persistent across the dispatches of a chunk.
    pub scratch: &'a StorageBuffer,
}

impl TwinBindings<'_> {
    /// Members in the dispatch: the stride of every structure-of-arrays buffer.
    pub fn members(&self) -> usize {
        self.dispatch.members as usize
    }

    /// Whether completing global step `done` records a sample (twin of `records_step` in
    /// shaders/shared/records.wgsl): every `record_every` steps and the run's last step.
    pub fn records_step(&self, done: u32) -> bool {
        done.is_multiple_of(self.dispatch.record_every) || done == self.dispatch.steps_total
    }
}

/// One member's view of a structure-of-arrays buffer: entry e at e · members + member.
pub struct Strided<'a> {
    pub buffer: &'a StorageBuffer,
    pub members: usize,
    pub member: usize,
}

impl Strided<'_> {
    pub fn get(&self, entry: usize) -> f64 {
        self.buffer.get(entry * self.members + self.member)
    }

    pub fn set(&self, entry: usize, value: f64) {
        self.buffer.set(entry * self.members + self.member, value);
    }
}

impl<'a> TwinBindings<'a> {
    /// Member `member`'s entries of the state buffer.
    pub fn state_of(&self, member: usize) -> Strided<'a> {
        Strided {
            buffer: self.state,
            members: self.members(),
            member,
        }
    }

    /// Member `member`'s entries of the record buffer.
    pub fn records_of(&self, member: usize) -> Strided<'a> {
        Strided {
            buffer: self.records,
            members: self.members(),
            member,
        }
    }

    /// Member `member`'s entries of the scratch buffer.
    pub fn scratch_of(&self, member: usize) -> Strided<'a> {
        Strided {
            buffer: self.scratch,
            members: self.members(),
            member,
        }
    }

    /// Member `member`'s first `entries` parameters of a structure-of-arrays `params`
    /// buffer, copied in order (the kernels' private copy of a member's operators).
    pub fn params_of(&self, member: usize, entries: usize) -> Vec<f64> {
        let members = self.members();
        (0..entries)
            .map(|e| self.params[e * members + member])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_storage_buffer_keeps_every_bit() {
        let values = [1.5, -0.0, f64::NAN, f64::INFINITY, 5e-324];
        let buffer = StorageBuffer::new(&values);
        let back = buffer.read(values.len());
        for (a, b) in values.iter().zip(&back) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        buffer.set(1, 2.0);
        assert_eq!(buffer.get(1), 2.0);
        assert_eq!(StorageBuffer::zeros(3).read(3), vec![0.0; 3]);
    }

    #[test]
    fn a_member_view_strides_over_the_members() {
        let buffer = StorageBuffer::zeros(6);
        let view = Strided {
            buffer: &buffer,
            members: 3,
            member: 2,
        };
        view.set(1, 7.0);
        assert_eq!(buffer.get(5), 7.0);
        assert_eq!(view.get(1), 7.0);
    }
}
