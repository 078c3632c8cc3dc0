//! Real SQLite in-process with D1's documented limits applied: the bare baseline every target
//! is compared with (never presented as D1), and the `sqlite` target that runs probes on it.

use std::time::Instant;

use anyhow::{Context, Result};
use d1bench_core::limits::{
    MAX_BOUND_PARAMETERS, MAX_COLUMNS, MAX_FUNCTION_ARGS, MAX_LIKE_PATTERN_BYTES, MAX_ROW_BYTES,
    MAX_STATEMENT_BYTES,
};
use d1bench_core::sql::{self, Plan};
use d1bench_core::{
    Checksum, Outcome, ProbeRequest, ProbeResult, RefusalKind, Strategy, Value, VerifyResult,
};
use rusqlite::limits::Limit;
use rusqlite::{Connection, params_from_iter};

use crate::client::Timed;
use crate::target::ProbeTarget;

/// An in-memory SQLite database limited as D1 documents: 100 bound parameters, 100,000-byte
/// statements, 100 columns, 2,000,000-byte strings and BLOBs, 32 arguments per function,
/// 50-byte LIKE and GLOB patterns.
pub fn open_d1_like() -> Result<Connection> {
    let db = Connection::open_in_memory().context("cannot open an in-memory SQLite database")?;
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

/// The SQLite version linked in (the bundled one), for run.toml.
pub fn version() -> String {
    rusqlite::version().to_owned()
}

/// The `sqlite` target: every probe planned by the shared planner and run in-process on
/// [`open_d1_like`], as D1 runs it: a batch in one transaction (rolled back whole when a
/// statement fails), per-row as one autocommit statement per row. Its one clock, around the
/// writes, is both `inside_ms` and `outside_ms`; it has no D1 clock.
pub struct SqliteTarget {
    db: Connection,
}

/// The INSERTs of a plan, with their values converted before the clock starts.
type Prepared<'a> = Vec<(&'a str, Vec<rusqlite::types::Value>)>;

/// What the INSERTs did.
struct Writes {
    statements_sent: usize,
    calls: usize,
    rows_acknowledged: usize,
    error: Option<String>,
}

impl SqliteTarget {
    pub fn open() -> Result<Self> {
        Ok(SqliteTarget {
            db: open_d1_like()?,
        })
    }

    /// Creates the table, writes the rows (timed), counts them; the table stays for `verify`.
    fn perform(&self, probe: &ProbeRequest, plan: &Plan) -> Result<(ProbeResult, f64), String> {
        let outside =
            |e: rusqlite::Error| format!("probe {} failed outside its writes: {e}", probe.probe_id);
        for statement in &plan.setup {
            self.db.execute(statement, []).map_err(outside)?;
        }
        let prepared: Prepared = plan
            .inserts
            .iter()
            .map(|s| (s.sql.as_str(), s.params.iter().map(to_sqlite).collect()))
            .collect();

        let started = Instant::now();
        let writes = self.write_rows(probe.strategy, &prepared, plan);
        let elapsed_ms = started.elapsed().as_secs_f64() * 1_000.0;

        // Debugging the harness only (see `ProbeRequest::debug_corrupt`): after the clock.
        if let Some(corrupt) = &plan.corrupt {
            self.db.execute(corrupt, []).map_err(outside)?;
        }
        let rows_present: i64 = self
            .db
            .query_row(&plan.count, [], |r| r.get("n"))
            .map_err(outside)?;
        let (outcome, refusal) = match &writes.error {
            None => (Outcome::Ok, None),
            Some(text) => match RefusalKind::classify(text) {
                RefusalKind::Other => (Outcome::Error, Some(RefusalKind::Other)),
                kind => (Outcome::Refused, Some(kind)),
            },
        };
        let result = ProbeResult {
            probe_id: probe.probe_id,
            strategy: probe.strategy,
            columns: probe.columns,
            row_bytes: probe.row_bytes,
            rows_expected: writes.rows_acknowledged,
            rows_present: rows_present as usize,
            statements_planned: plan.inserts.len(),
            statements_sent: writes.statements_sent,
            d1_calls: writes.calls,
            rows_per_statement: plan.rows_per_statement(),
            max_statement_bytes: plan.max_statement_bytes(),
            inside_ms: elapsed_ms,
            d1_ms: 0.0,
            outcome,
            refusal,
            error: writes.error,
            served_by: None,
        };
        Ok((result, elapsed_ms))
    }

    fn write_rows(&self, strategy: Strategy, prepared: &Prepared, plan: &Plan) -> Writes {
        let execute = |(sql, values): &(&str, Vec<rusqlite::types::Value>)| {
            self.db
                .prepare(sql)
                .and_then(|mut statement| statement.execute(params_from_iter(values.iter())))
                .map_err(|e| e.to_string())
        };
        let mut writes = Writes {
            statements_sent: 0,
            calls: 0,
            rows_acknowledged: 0,
            error: None,
        };
        match strategy {
            // One autocommit statement per row: each is its own call, and stays when a later
            // one fails.
            Strategy::PerRow => {
                for (statement, planned) in prepared.iter().zip(&plan.inserts) {
                    writes.statements_sent += 1;
                    writes.calls += 1;
                    match execute(statement) {
                        Ok(_) => writes.rows_acknowledged += planned.rows,
                        Err(e) => {
                            writes.error = Some(e);
                            break;
                        }
                    }
                }
            }
            // One transaction, as D1 runs a batch: all or nothing.
            Strategy::Bound | Strategy::Literal => {
                writes.statements_sent = prepared.len();
                writes.calls = 1;
                let outcome = self
                    .db
                    .execute_batch("BEGIN")
                    .map_err(|e| e.to_string())
                    .and_then(|()| prepared.iter().try_for_each(|s| execute(s).map(drop)))
                    .and_then(|()| self.db.execute_batch("COMMIT").map_err(|e| e.to_string()));
                match outcome {
                    Ok(()) => writes.rows_acknowledged = plan.rows(),
                    Err(e) => {
                        if !self.db.is_autocommit() {
                            // If even the rollback fails, the count and the checksum show it.
                            let _ = self.db.execute_batch("ROLLBACK");
                        }
                        writes.error = Some(e);
                    }
                }
            }
        }
        writes
    }
}

fn to_sqlite(value: &Value) -> rusqlite::types::Value {
    match value {
        Value::Integer(n) => rusqlite::types::Value::Integer(*n),
        Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
    }
}

impl ProbeTarget for SqliteTarget {
    fn probe(&self, probe: &ProbeRequest) -> Timed {
        match self.perform(probe, &sql::plan(probe)) {
            Ok((result, elapsed_ms)) => Timed {
                outside_ms: elapsed_ms,
                result: Ok(result),
            },
            Err(e) => Timed {
                outside_ms: 0.0,
                result: Err(e),
            },
        }
    }

    fn verify(&self, probe: &ProbeRequest) -> Result<VerifyResult, String> {
        let [checksum_sql, teardown] = sql::verification(probe);
        let checksum = self
            .db
            .query_row(&checksum_sql, [], |r| Checksum::read(|c| r.get(c)))
            .map_err(|e| format!("probe {} could not be verified: {e}", probe.probe_id))?;
        self.db
            .execute(&teardown, [])
            .map_err(|e| format!("cannot drop the table of probe {}: {e}", probe.probe_id))?;
        Ok(VerifyResult {
            probe_id: probe.probe_id,
            checksum,
        })
    }

    fn has_d1_clock(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::{self, ContentCheck};
    use d1bench_core::{Corruption, TextMix};

    fn probe(strategy: Strategy, columns: usize, rows: usize, row_bytes: usize) -> ProbeRequest {
        ProbeRequest {
            probe_id: 11,
            strategy,
            columns,
            rows,
            row_bytes,
            seed: 2,
            rows_per_statement: None,
            text: TextMix::HOSTILE,
            indexes: 1,
            debug_corrupt: None,
        }
    }

    /// Runs a probe on the sqlite target and reconciles it as a run does.
    fn run(target: &SqliteTarget, p: &ProbeRequest) -> (ProbeResult, ContentCheck) {
        let timed = target.probe(p);
        let result = timed.result.unwrap();
        assert_eq!(timed.outside_ms, result.inside_ms, "one clock");
        let plan_check = reconcile::check(p, &sql::plan(p), &result);
        assert_eq!(plan_check, Ok(()), "{result:?}");
        let content = ContentCheck::of(p, &result, target.verify(p));
        (result, content)
    }

    #[test]
    fn every_strategy_writes_what_the_generator_makes() {
        let target = SqliteTarget::open().unwrap();
        for strategy in Strategy::ALL {
            let p = probe(strategy, 7, 120, 300);
            let (result, content) = run(&target, &p);
            assert_eq!(result.outcome, Outcome::Ok);
            assert_eq!(result.rows_present, 120);
            assert!(content.equal(), "{strategy}: {:?}", content.problem());
        }
        // Every probe dropped its table.
        let tables: i64 = target
            .db
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 0);
    }

    #[test]
    fn a_literal_row_over_the_statement_limit_is_refused_and_leaves_nothing() {
        let target = SqliteTarget::open().unwrap();
        let mut p = probe(Strategy::Literal, 4, 3, 120_000);
        p.text = TextMix::default();
        let (result, content) = run(&target, &p);
        assert_eq!(result.outcome, Outcome::Refused, "{result:?}");
        assert_eq!(result.refusal, Some(RefusalKind::StatementTooLong));
        assert_eq!((result.rows_expected, result.rows_present), (0, 0));
        assert!(content.equal(), "{:?}", content.problem());
        assert_eq!(content.expected, Checksum::default());
        // Bound writes the same rows without trouble.
        p.strategy = Strategy::Bound;
        let (result, content) = run(&target, &p);
        assert_eq!(result.outcome, Outcome::Ok);
        assert!(content.equal());
    }

    #[test]
    fn a_deliberately_corrupted_row_is_caught() {
        let target = SqliteTarget::open().unwrap();
        for corruption in [Corruption::TextByte, Corruption::Integer] {
            for strategy in Strategy::ALL {
                let mut p = probe(strategy, 5, 40, 200);
                p.debug_corrupt = Some(corruption);
                let (result, content) = run(&target, &p);
                // The counts agree: only the content shows the corruption.
                assert_eq!(result.rows_present, 40);
                let problem = content.problem().expect("the corruption went unnoticed");
                assert!(
                    problem.starts_with("content checksum: expected 40:"),
                    "{problem}"
                );
            }
        }
    }

    #[test]
    fn the_limits_refuse_as_d1_documents() {
        let db = open_d1_like().unwrap();
        let hundred = vec!["?"; 100].join(",");
        db.prepare(&format!("SELECT {hundred}")).unwrap();
        let err = db
            .prepare(&format!("SELECT {hundred},?"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("too many SQL variables"), "{err}");
        let long = format!("SELECT '{}'", "x".repeat(MAX_STATEMENT_BYTES));
        let err = db.prepare(&long).unwrap_err().to_string();
        assert!(err.contains("too big") || err.contains("too long"), "{err}");
        let columns: Vec<String> = (0..101).map(|j| format!("c{j}")).collect();
        let err = db
            .execute(&format!("CREATE TABLE t ({})", columns.join(",")), [])
            .unwrap_err()
            .to_string();
        assert!(err.contains("too many columns"), "{err}");
    }
}
