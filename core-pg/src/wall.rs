//! Postgres's documented limits that stop a probe before it starts, as `d1bench_core::sql::wall`
//! finds D1's: one row alone, planned as its strategy plans it on Postgres, is past a limit, so
//! every statement would be refused. Reports use it to say why a strategy has no time at a cell
//! of a Postgres run, which D1's walls would misname (a 100,000-byte literal row is past D1's
//! statement length, not Postgres's).

use d1bench_core::generate::{RowGenerator, Value};
use d1bench_core::sql::Wall;
use d1bench_core::{ProbeRequest, RefusalKind, Strategy};

use crate::limits::{MAX_BOUND_PARAMETERS, MAX_COLUMNS, MAX_STATEMENT_BYTES, MAX_TEXT_BYTES};
use crate::sql::plan;

/// The Postgres limit `probe` meets by construction, if any; `None` says its first row fits.
pub fn wall(probe: &ProbeRequest) -> Option<Wall> {
    let at = |refusal, limit, needed, unit| {
        Some(Wall {
            refusal,
            limit,
            needed,
            unit,
        })
    };
    if probe.columns > MAX_COLUMNS {
        return at(
            RefusalKind::TooManyColumns,
            "1,600 columns per table",
            probe.columns,
            "columns",
        );
    }
    let text_bytes = |values: &[Value]| {
        values
            .iter()
            .map(|v| match v {
                Value::Text(s) => s.len(),
                Value::Integer(_) => 0,
            })
            .max()
            .unwrap_or(0)
    };
    let row = RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text).row(0);
    let field = text_bytes(&row);
    if field > MAX_TEXT_BYTES {
        return at(
            RefusalKind::StringOrBlobTooBig,
            "1 GB fields",
            field,
            "bytes in one field",
        );
    }
    // COPY's rows follow its statement as a data stream: no statement or parameter limit.
    if probe.strategy == Strategy::Copy {
        return None;
    }
    let one = ProbeRequest {
        rows: 1,
        rows_per_statement: None,
        debug_corrupt: None,
        debug_slow_percent: None,
        ..probe.clone()
    };
    let plan = plan(&one);
    let statement = plan.inserts.first()?;
    if statement.params.len() > MAX_BOUND_PARAMETERS {
        return at(
            RefusalKind::TooManyVariables,
            "65,535 bound parameters per statement",
            statement.params.len(),
            "bound parameters",
        );
    }
    if statement.sql.len() > MAX_STATEMENT_BYTES {
        return at(
            RefusalKind::StatementTooLong,
            "1 GiB protocol messages (a statement's text)",
            statement.sql.len(),
            "bytes of SQL",
        );
    }
    match text_bytes(&statement.params) {
        bytes if bytes > MAX_TEXT_BYTES => at(
            RefusalKind::StringOrBlobTooBig,
            "1 GB text values",
            bytes,
            "bytes in one bound text",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 40 rows of `columns` columns, `row_bytes` bytes each.
    fn probe(strategy: Strategy, columns: usize, row_bytes: usize) -> ProbeRequest {
        ProbeRequest {
            row_bytes,
            ..crate::testing::probe(strategy, columns, 40)
        }
    }

    #[test]
    fn a_row_past_d1s_statement_length_fits_postgres() {
        // 100,000-byte rows: D1's literal and exec cannot carry one (100,000-byte statements);
        // Postgres's every strategy can.
        for strategy in Strategy::REPORT_ORDER {
            let at = probe(*strategy, 8, 100_000);
            assert!(wall(&at).is_none(), "{strategy}: {:?}", wall(&at));
        }
        assert_eq!(
            d1bench_core::sql::wall(&probe(Strategy::Literal, 8, 100_000)).map(|w| w.refusal),
            Some(RefusalKind::StatementTooLong)
        );
    }

    #[test]
    fn more_columns_than_a_table_holds_is_a_wall_for_every_strategy() {
        for strategy in Strategy::REPORT_ORDER {
            let w = wall(&probe(*strategy, MAX_COLUMNS + 1, 20_000)).unwrap();
            assert_eq!(w.refusal, RefusalKind::TooManyColumns, "{strategy}");
            assert_eq!(w.needed, MAX_COLUMNS + 1);
        }
        assert!(wall(&probe(Strategy::Bound, MAX_COLUMNS, 20_000)).is_none());
    }
}
