//! Fixes glibc's malloc thresholds for the xtask process before the first in-process SQLite
//! session opens, so that a probe's large blocks come from the heap and stay there, in every run.
//!
//! Why: glibc serves a block above its mmap threshold (128 KiB at start) with its own mapping and
//! returns it on free, and gives back free memory at the heap's top above its trim threshold;
//! both thresholds then move with what the process has freed so far (its "dynamic" thresholds).
//! A probe's blocks are larger than 128 KiB (json's payload at one column of a smoke probe is
//! about 500 KB, and SQLite's own JSON parse beside it), so whether they were mapped, faulted in
//! page by page and unmapped again in every probe was a matter of the process's history.
//! Measured on 2026-12-07 (bare SQLite, compare's A/A shape, `docs/runs/heap-layout-aa/`): of 40
//! runs without this, 5 had json at one column 1.5–2.0× slower in all six sessions, with 35,000–
//! 55,000 minor page faults against 8,100–9,600 in the others: a state of the whole process that
//! the per-session heap offset ([`super::heap_offset`]) cannot move, mapped blocks lying outside
//! the heap. With it, 20 runs interleaved with 20 of the build before: none slow, 6,900–7,500
//! faults, the spread of the runs' means at that point 3.8% instead of 22.6%, the fast runs'
//! times unchanged (1.47 against 1.45 ms per 1,000 rows).
//! Fixed thresholds also switch the dynamic adjustment off. glibc's `mallopt` has no crate
//! wrapping it beyond `libc`'s declaration, so this is the call itself.

/// The mmap threshold: glibc's largest (`HEAP_MAX_SIZE / 2` on 64-bit); larger blocks, which a
/// probe does not make, are still mapped.
pub const MMAP_THRESHOLD_BYTES: i32 = 32 * 1024 * 1024;
/// The trim threshold: free memory at the heap's top is kept up to this much, so a block freed
/// at the top is not faulted in again by the next probe.
pub const TRIM_THRESHOLD_BYTES: i32 = 1024 * 1024 * 1024;

/// Sets both thresholds once per process; later calls do nothing. Whether glibc took them is
/// returned (false off glibc, where there is no such allocator to fix).
pub fn fix() -> bool {
    static FIXED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FIXED.get_or_init(set)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set() -> bool {
    // SAFETY: mallopt only sets allocator parameters; both values are in its accepted range
    // (the mmap threshold at most HEAP_MAX_SIZE / 2), and it returns 0 when it refuses one.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set() -> bool {
    false
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    #[test]
    fn glibc_takes_both_thresholds() {
        assert!(super::fix());
        // The second call is the first's answer, not a second setting.
        assert!(super::fix());
    }

    #[test]
    fn a_block_of_a_probes_size_comes_from_the_heap_not_its_own_mapping() {
        assert!(super::fix());
        // glibc counts the blocks it has mapped on their own (`hblks`, the whole process's).
        // 4 MiB is past glibc's default threshold and a smoke probe's json payload; other tests
        // running beside this one can only free mapped blocks, which lowers the count.
        // SAFETY: mallinfo2 reads the allocator's statistics and takes no arguments.
        let before = unsafe { libc::mallinfo2() }.hblks;
        let block = std::hint::black_box(vec![1u8; 4 * 1024 * 1024]);
        let during = unsafe { libc::mallinfo2() }.hblks;
        drop(block);
        assert!(
            during <= before,
            "mapped blocks {before} before, {during} during"
        );
    }
}
