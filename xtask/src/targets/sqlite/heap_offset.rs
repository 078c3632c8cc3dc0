//! A random heap offset drawn for each in-process SQLite session (and each connection a workload
//! opens), so that where the session's allocations land (and with it a probe's cache and alias
//! behaviour) is randomised per session instead of fixed per process.
//!
//! Why: the in-process database lives in the xtask's own heap, whose layout is a deterministic
//! function of everything allocated before it: the command line, the environment, the rows'
//! seed. Measured on 2026-12-07 (bare SQLite, column-sweep smoke, 6 sessions): json at one column
//! took 2.2–2.6 ms per 1,000 rows in four runs of seed 1 and 1.4 ms in four of seed 2, with the
//! same probes slow in every seed-1 run; a 3,000-byte environment variable made seed 1 slow and a
//! 1,500-byte one fast. One layout per run made that a run effect no session could show (the A/A
//! of `compare` then saw whole strategies move between two runs of one build), and a fresh
//! process per session did not help (same inputs, same layout). A block of random size taken
//! before the database opens shifts every later allocation by it: with it, the slow layout
//! turned up in single sessions of either seed, where the interval over sessions counts it.
//! Randomising the layout so that it averages out is the method of Curtsinger and Berger's
//! Stabilizer (ASPLOS 2013); this does it once per session, for the heap only.

use std::hash::{BuildHasher, Hasher};

/// The largest offset, below glibc's mmap threshold (128 KiB) so the block comes from the heap
/// the database then allocates from.
pub const MAX_OFFSET_BYTES: usize = 64 * 1024;

/// A block of a random size in `0..MAX_OFFSET_BYTES`, a multiple of 16 (malloc's alignment),
/// written so that it is really taken. Its seed is the standard library's per-process random
/// hasher keys, not the run's seeds: a recorded seed would replay one layout again.
pub fn draw() -> Vec<u8> {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    let mut rng = fastrand::Rng::with_seed(hasher.finish());
    let len = rng.usize(0..MAX_OFFSET_BYTES / 16) * 16;
    std::hint::black_box(vec![1u8; len])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_aligned_bounded_and_not_all_alike() {
        let lens: Vec<usize> = (0..32).map(|_| draw().len()).collect();
        assert!(
            lens.iter().all(|l| l % 16 == 0 && *l < MAX_OFFSET_BYTES),
            "{lens:?}"
        );
        let first = lens[0];
        assert!(lens.iter().any(|l| *l != first), "{lens:?}");
    }
}
