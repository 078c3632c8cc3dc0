//! The host's reference workload: fixed work that depends on nothing d1bench measures (not the
//! planner, the generator, the Worker or D1), timed in every run before, between and after its
//! sessions, so that a run records how fast its machine was while it measured.
//!
//! Two parts, each deterministic and checked against its known result so the optimiser cannot
//! drop it and a change to it cannot pass unseen:
//! - [`cpu_loop`]: integer mixing over a 64 KiB table (arithmetic, branches and L1/L2 loads);
//! - [`sqlite_probe`]: an in-memory SQLite database, 20,000 fixed rows inserted through one
//!   prepared statement in one transaction, then an indexed and a scanning query.
//!
//! It imports nothing of d1bench, so a change to d1bench's code never changes what it times. It
//! is compiled with the xtask (its SQLite at -O3 as the baseline's, the loop in the xtask's own
//! profile, which [`PROFILE`] names and each reading records): readings of two versions or two
//! profiles are never compared. Changing it changes every reading: bump [`VERSION`]. (Not a
//! crate of its own: a workspace member changes the root Cargo.toml, which the committed Worker
//! build's hash covers, and would make every committed run stale.)

use std::hint::black_box;
use std::time::Instant;

/// The version of the reference workload; readings are compared only within one version.
pub const VERSION: u32 = 1;

/// The build profile the loop was compiled in (`debug` for `cargo xtask`).
pub const PROFILE: &str = if cfg!(debug_assertions) {
    "debug"
} else {
    "release"
};

/// The CPU loop's iterations (about 0.1 s unoptimised on the 2-core machines d1bench is developed on).
const CPU_ITERATIONS: u64 = 2_000_000;
/// What [`cpu_loop`] returns: a change to it is caught by the tests.
const CPU_RESULT: u64 = 0x03e6_8957_cf63_6f5a;
/// The rows the SQLite probe inserts.
const SQLITE_ROWS: i64 = 20_000;

/// The CPU half: a xorshift generator indexing a table it rewrites, `CPU_ITERATIONS` times.
pub fn cpu_loop() -> u64 {
    let mut table = [0u64; 8192];
    for (i, slot) in table.iter_mut().enumerate() {
        *slot = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut acc: u64 = 0;
    for i in 0..black_box(CPU_ITERATIONS) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let slot = (x as usize) & (table.len() - 1);
        let v = table[slot];
        acc = acc.rotate_left(5) ^ v.wrapping_add(i);
        table[slot] = if v & 1 == 0 {
            v ^ x
        } else {
            v.wrapping_add(acc)
        };
    }
    acc
}

/// The SQLite half: creates, fills and queries an in-memory table; returns what the queries
/// read (a fixed number).
pub fn sqlite_probe() -> rusqlite::Result<i64> {
    let mut db = rusqlite::Connection::open_in_memory()?;
    db.execute_batch(
        "CREATE TABLE r (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, name TEXT NOT NULL, v REAL);
         CREATE INDEX r_k ON r (k);",
    )?;
    let tx = db.transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO r (id, k, name, v) VALUES (?1, ?2, ?3, ?4)")?;
        for id in 0..SQLITE_ROWS {
            let k = (id * 7919) % 1000;
            insert.execute(rusqlite::params![
                id,
                k,
                format!("row-{id:08}"),
                id as f64 / 3.0
            ])?;
        }
    }
    tx.commit()?;
    let by_index: i64 = db.query_row(
        "SELECT count(*) FROM r WHERE k BETWEEN 100 AND 199",
        [],
        |r| r.get(0),
    )?;
    let by_scan: i64 = db.query_row(
        "SELECT sum(length(name)) FROM r WHERE name LIKE '%7%'",
        [],
        |r| r.get(0),
    )?;
    Ok(by_index + by_scan)
}

/// What the SQLite probe returns: a change to it is caught by the tests.
/// (2,000 keys in 100..=199; 6,878 of the ids 0..19,999 hold a 7, each name 12 bytes long.)
const SQLITE_RESULT: i64 = 2000 + 6878 * 12;

/// One timing of each half, in milliseconds: `(cpu_ms, sqlite_ms)`. Fails if either half
/// computed something other than its known result (the reference would then not be the
/// reference).
pub fn time_once() -> Result<(f64, f64), String> {
    let start = Instant::now();
    let cpu = black_box(cpu_loop());
    let cpu_ms = start.elapsed().as_secs_f64() * 1e3;
    if cpu != CPU_RESULT {
        return Err(format!(
            "the reference CPU loop computed {cpu:#x}, not {CPU_RESULT:#x}"
        ));
    }
    let start = Instant::now();
    let read =
        black_box(sqlite_probe()).map_err(|e| format!("the reference SQLite probe failed: {e}"))?;
    let sqlite_ms = start.elapsed().as_secs_f64() * 1e3;
    if read != SQLITE_RESULT {
        return Err(format!(
            "the reference SQLite probe read {read}, not {SQLITE_RESULT}"
        ));
    }
    Ok((cpu_ms, sqlite_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_halves_compute_their_known_results() {
        assert_eq!(cpu_loop(), CPU_RESULT, "{:#x}", cpu_loop());
        assert_eq!(sqlite_probe().unwrap(), SQLITE_RESULT);
        let (cpu_ms, sqlite_ms) = time_once().unwrap();
        assert!(cpu_ms > 0.0 && sqlite_ms > 0.0);
    }
}
