//! What D1's limits let each strategy put in one statement for a row shape: the core's planner
//! plans enough rows for the limits to bind and the largest statement is read back, with the
//! limit that stopped it from holding one more row; or the documented limit that stops even one
//! row ([`d1bench_core::sql::wall`]).

use d1bench_core::limits::{
    MAX_BOUND_PARAMETERS, MAX_ROW_BYTES, MAX_STATEMENT_BYTES, MAX_STRING_BYTES,
};
use d1bench_core::sql::{Wall, plan, wall};
use d1bench_core::{ProbeRequest, Strategy, TextMix};

/// The most rows planned to find a strategy's statements' size.
const MOST_ROWS: usize = 200_000;

/// What bounds a strategy's rows per statement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Binding {
    /// One row per statement by design (per-row, batched-rows).
    OneRowByDesign,
    /// The bound parameters one statement may hold.
    Parameters,
    /// The bytes of one statement's SQL text.
    StatementBytes,
    /// The bytes of one string (a json statement's one parameter).
    StringBytes,
    /// No limit within the rows planned.
    NoneWithin(usize),
    /// Not even one row: this documented limit.
    Wall(Wall),
}

impl Binding {
    pub fn text(&self) -> String {
        match self {
            Binding::OneRowByDesign => "one row per statement by design".into(),
            Binding::Parameters => {
                format!("bound parameters ({MAX_BOUND_PARAMETERS} per statement)")
            }
            Binding::StatementBytes => {
                format!("statement length ({MAX_STATEMENT_BYTES} bytes of SQL)")
            }
            Binding::StringBytes => {
                format!("string size (the JSON payload, {MAX_STRING_BYTES} bytes)")
            }
            Binding::NoneWithin(rows) => format!("no limit within {rows} rows"),
            Binding::Wall(wall) => format!(
                "cannot write one row: {} (one row needs {} {})",
                wall.limit, wall.needed, wall.unit
            ),
        }
    }
}

/// One strategy's rows per statement at a shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    pub strategy: Strategy,
    /// Rows in the largest statement; 0 when not even one row can be written.
    pub rows_per_statement: usize,
    pub binding: Binding,
}

/// The probe of `rows` rows of the shape, for the planner.
pub fn probe(strategy: Strategy, columns: usize, row_bytes: usize, rows: usize) -> ProbeRequest {
    ProbeRequest {
        probe_id: 0,
        strategy,
        columns,
        rows,
        row_bytes,
        seed: 1,
        rows_per_statement: None,
        json_payload_bytes: None,
        text: TextMix {
            escape_share: 0.0,
            nul_share: 0.0,
            non_ascii_share: 0.0,
        },
        indexes: 0,
        debug_corrupt: None,
        debug_slow_percent: None,
    }
}

/// Each of D1's strategies' capacity at `columns` × `row_bytes`, in the reports' order.
pub fn capacities(columns: usize, row_bytes: usize) -> Vec<Capacity> {
    // Enough rows that two json payloads' worth are planned, and no fewer than two statements
    // of bound parameters.
    let rows =
        (2 * MAX_ROW_BYTES / row_bytes.max(1) + 2).clamp(2 * MAX_BOUND_PARAMETERS, MOST_ROWS);
    Strategy::REPORT_ORDER
        .iter()
        .filter(|s| s.on_every_engine())
        .map(|&strategy| {
            let request = probe(strategy, columns, row_bytes, rows);
            if let Some(wall) = wall(&request) {
                return Capacity {
                    strategy,
                    rows_per_statement: 0,
                    binding: Binding::Wall(wall),
                };
            }
            let planned = plan(&request).rows_per_statement();
            let binding = match strategy {
                _ if strategy.one_row_per_statement() => Binding::OneRowByDesign,
                _ if planned >= rows => Binding::NoneWithin(rows),
                Strategy::Bound => Binding::Parameters,
                Strategy::Json => Binding::StringBytes,
                _ => Binding::StatementBytes,
            };
            Capacity {
                strategy,
                rows_per_statement: planned,
                binding,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_strategy_is_bound_by_its_own_limit() {
        let at = |strategy| {
            capacities(24, 2_000)
                .into_iter()
                .find(|c| c.strategy == strategy)
                .unwrap()
        };
        assert_eq!(at(Strategy::Bound).rows_per_statement, 4);
        assert_eq!(at(Strategy::Bound).binding, Binding::Parameters);
        assert_eq!(at(Strategy::Literal).binding, Binding::StatementBytes);
        assert!((40..=50).contains(&at(Strategy::Literal).rows_per_statement));
        assert_eq!(at(Strategy::Json).binding, Binding::StringBytes);
        assert_eq!(at(Strategy::BatchedRows).rows_per_statement, 1);
        let fat = capacities(8, 200_000);
        let literal = fat
            .iter()
            .find(|c| c.strategy == Strategy::Literal)
            .unwrap();
        assert!(matches!(literal.binding, Binding::Wall(_)), "{literal:?}");
    }
}
