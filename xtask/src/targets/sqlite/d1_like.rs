//! SQLite limited as D1 documents its limits, for the `sqlite` target's probes, rungs and
//! workloads.

use anyhow::{Context, Result};
use d1bench_core::limits::{
    MAX_BOUND_PARAMETERS, MAX_COLUMNS, MAX_FUNCTION_ARGS, MAX_LIKE_PATTERN_BYTES, MAX_ROW_BYTES,
    MAX_STATEMENT_BYTES,
};
use rusqlite::Connection;
use rusqlite::limits::Limit;

/// An in-memory SQLite database limited as D1 documents: 100 bound parameters, 100,000-byte
/// statements, 100 columns, 2,000,000-byte strings and BLOBs, 32 arguments per function,
/// 50-byte LIKE and GLOB patterns.
pub fn open_d1_like() -> Result<Connection> {
    d1_like(Connection::open_in_memory().context("cannot open an in-memory SQLite database")?)
}

/// `db` with D1's limits applied.
pub fn d1_like(db: Connection) -> Result<Connection> {
    for (limit, value) in [
        (Limit::SQLITE_LIMIT_VARIABLE_NUMBER, MAX_BOUND_PARAMETERS),
        (Limit::SQLITE_LIMIT_SQL_LENGTH, MAX_STATEMENT_BYTES),
        (Limit::SQLITE_LIMIT_COLUMN, MAX_COLUMNS),
        (Limit::SQLITE_LIMIT_LENGTH, MAX_ROW_BYTES),
        (Limit::SQLITE_LIMIT_FUNCTION_ARG, MAX_FUNCTION_ARGS),
        (
            Limit::SQLITE_LIMIT_LIKE_PATTERN_LENGTH,
            MAX_LIKE_PATTERN_BYTES,
        ),
    ] {
        db.set_limit(limit, value as i32)
            .with_context(|| format!("cannot set SQLite's {limit:?} to {value}"))?;
    }
    Ok(db)
}
