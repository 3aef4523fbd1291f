//! glibc's allocator set for how a run uses memory: a run frees and allocates blocks of the
//! same few MiB again and again (each chunk's operators and results, the writer's buffers),
//! and the default settings hand that memory back to the kernel between them.
//!
//! By default glibc serves a block above a moving threshold (128 KiB, rising up to 32 MiB
//! with the blocks freed) with a mapping of its own, and returns the free top of a heap to
//! the kernel beyond twice that threshold. Each chunk's buffers then arrive as fresh pages,
//! which the kernel zero-fills one page fault at a time on first touch. The settings here
//! keep blocks under 64 MiB in the heap and up to 512 MiB of freed memory mapped for the
//! next chunk: `simulate` of 10⁴ members × 200 steps (final states) takes a quarter to a
//! third less time with them. A block of 64 MiB or more still gets its own mapping, so a
//! large buffer that grows (a capped read of a huge file) moves by `mremap` rather than by
//! a copy that needs twice its size.

/// Sets glibc's mapping and trimming thresholds (module doc); nothing elsewhere. Call it
/// first in `main`, before any thread starts.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// Blocks this large or larger get their own mapping.
        const MMAP_THRESHOLD: libc::c_int = 64 << 20;
        /// Free memory at a heap's top kept mapped, up to this much.
        const TRIM_THRESHOLD: libc::c_int = 512 << 20;
        // SAFETY: `mallopt` only changes the allocator's parameters, and no other thread is
        // allocating yet. A setting it refuses (returns 0) leaves glibc's default, which is
        // correct, only slower.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    }
}
