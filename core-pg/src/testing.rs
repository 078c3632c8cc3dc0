//! The probe the crate's tests start from: one place for its fields, which each test changes
//! by struct update.

use d1bench_core::{ProbeRequest, Strategy, TextMix};

/// `rows` rows of `columns` columns, 100 bytes a row, plain text, no indexes.
pub fn probe(strategy: Strategy, columns: usize, rows: usize) -> ProbeRequest {
    ProbeRequest {
        probe_id: 7,
        strategy,
        columns,
        rows,
        row_bytes: 100,
        seed: 1,
        rows_per_statement: None,
        json_payload_bytes: None,
        text: TextMix::default(),
        indexes: 0,
        debug_corrupt: None,
        debug_slow_percent: None,
    }
}
