//! D1's documented limits: the numbers the planner plans against and the reports compare with.
//!
//! These are what Cloudflare documents, not what any runtime enforces; the ladders measure the
//! latter. Keep each value next to what it limits so a reader can check it against the docs.

/// Bound parameters (`?`) allowed in one statement.
pub const MAX_BOUND_PARAMETERS: usize = 100;

/// Bytes (UTF-8) allowed in the text of one SQL statement.
pub const MAX_STATEMENT_BYTES: usize = 100_000;

/// Columns allowed in one table.
pub const MAX_COLUMNS: usize = 100;

/// Bytes allowed in one string, BLOB or row.
pub const MAX_ROW_BYTES: usize = 2_000_000;

/// Bytes allowed in one string (the same documented limit as [`MAX_ROW_BYTES`]): what caps the
/// JSON text a `json` statement binds. Local D1 accepts about 8 MiB; production documents this.
pub const MAX_STRING_BYTES: usize = MAX_ROW_BYTES;

/// Arguments allowed in one call of an SQL function.
pub const MAX_FUNCTION_ARGS: usize = 32;

/// Bytes (UTF-8) allowed in one LIKE or GLOB pattern.
pub const MAX_LIKE_PATTERN_BYTES: usize = 50;

/// Milliseconds one SQL query may run.
pub const MAX_QUERY_DURATION_MS: usize = 30_000;

/// Queries (D1 API calls) allowed in one Worker invocation on the Paid plan.
pub const QUERIES_PER_INVOCATION_PAID: usize = 1_000;

/// Queries (D1 API calls) allowed in one Worker invocation on the Free plan.
pub const QUERIES_PER_INVOCATION_FREE: usize = 50;

/// Bytes the result of one query may hold (D1's limits page: 50 MB).
pub const MAX_RESULT_BYTES: usize = 50_000_000;

/// Connections one Worker invocation may have open at once (D1's and the Workers limits pages:
/// 6); since 2026-04-09 only those still waiting for response headers count, and calls past
/// them wait rather than fail.
pub const SIMULTANEOUS_CONNECTIONS: usize = 6;

/// Bytes one D1 database may hold on the Paid plan (10 GB; the Free plan's is 500 MB).
pub const MAX_DATABASE_BYTES: u64 = 10_000_000_000;

/// Rows per bound-parameter statement that fit the parameter limit at `columns` columns:
/// floor(100 / C), but never less than one row (a wider row cannot be split).
pub fn bound_rows_per_statement(columns: usize) -> usize {
    (MAX_BOUND_PARAMETERS / columns.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_rows_follow_floor_of_100_over_columns() {
        assert_eq!(bound_rows_per_statement(1), 100);
        assert_eq!(bound_rows_per_statement(3), 33);
        assert_eq!(bound_rows_per_statement(50), 2);
        assert_eq!(bound_rows_per_statement(51), 1);
        assert_eq!(bound_rows_per_statement(64), 1);
        assert_eq!(bound_rows_per_statement(100), 1);
        assert_eq!(bound_rows_per_statement(150), 1);
    }
}
