//! PostgreSQL's limits that decide how a probe's rows are split into statements, beside D1's
//! (`d1bench_core::limits`), each with where it comes from.

/// Bound parameters allowed in one statement: the protocol's Bind message counts them in a
/// 16-bit integer, and the server refuses more ("number of parameters must be between 0 and
/// 65535").
pub const MAX_BOUND_PARAMETERS: usize = 65_535;

/// Bytes of one protocol message, and so of one statement's text: the server refuses a message
/// longer than `PQ_LARGE_MESSAGE_LIMIT` (1 GiB less 2 bytes: `MaxAllocSize - 1`) as an
/// "invalid message length". Postgres documents no shorter limit on a statement.
pub const MAX_STATEMENT_BYTES: usize = (1 << 30) - 2;

/// Bytes of one text value (a field is at most 1 GB: the documentation's "Appendix K.
/// PostgreSQL Limits"); what caps a `json` statement's payload.
pub const MAX_TEXT_BYTES: usize = (1 << 30) - 1;

/// Columns one table may have (`MaxHeapAttributeNumber`; fewer when the row is wide).
pub const MAX_COLUMNS: usize = 1_600;

/// Rows per bound-parameter statement that fit the parameter limit at `columns` columns:
/// floor(65,535 / C), never less than one row.
pub fn bound_rows_per_statement(columns: usize) -> usize {
    (MAX_BOUND_PARAMETERS / columns.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_rows_follow_floor_of_65535_over_columns() {
        assert_eq!(bound_rows_per_statement(1), 65_535);
        assert_eq!(bound_rows_per_statement(8), 8_191);
        assert_eq!(bound_rows_per_statement(100), 655);
        assert_eq!(bound_rows_per_statement(65_536), 1);
    }
}
