//! Where a rung runs: the Worker (one `POST /rung` per step, each its own invocation) or
//! in-process SQLite with D1's documented limits applied. Both run the SQL the core plans for
//! the rung, step for step, so their findings compare.

use std::time::Instant;

use d1bench_core::Value;
use d1bench_core::ladder::{
    self, Call, FinishResult, PrepareResult, RungCall, RungPlan, RungRequest, RungResult, Step,
    Tally,
};
use rusqlite::Connection;

use crate::client::WorkerClient;

/// A target that can run the three steps of a rung. Every `Err` is a harness failure (no
/// answer); D1's and SQLite's errors are data inside the `Ok` answers.
pub trait RungTarget {
    fn prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, String>;
    /// The measured step, with the milliseconds it took seen from outside the target.
    fn climb(&mut self, rung: &RungRequest) -> (f64, Result<RungResult, String>);
    fn finish(&mut self, rung: &RungRequest) -> Result<FinishResult, String>;
}

/// The Worker, through `POST /rung`.
pub struct WorkerRungs<'a>(pub &'a WorkerClient);

impl WorkerRungs<'_> {
    fn call<T: serde::de::DeserializeOwned>(
        &self,
        step: Step,
        rung: &RungRequest,
    ) -> (f64, Result<T, String>) {
        self.0.post_json(
            "/rung",
            &RungCall {
                step,
                rung: rung.clone(),
            },
        )
    }
}

impl RungTarget for WorkerRungs<'_> {
    fn prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, String> {
        self.call(Step::Prepare, rung).1
    }
    fn climb(&mut self, rung: &RungRequest) -> (f64, Result<RungResult, String>) {
        self.call(Step::Climb, rung)
    }
    fn finish(&mut self, rung: &RungRequest) -> Result<FinishResult, String> {
        self.call(Step::Finish, rung).1
    }
}

/// SQLite's own message (what D1 passes on too), without rusqlite's echo of the whole SQL.
fn sqlite_text(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        other => other.to_string(),
    }
}

/// In-process SQLite opened by [`crate::sqlite::open_d1_like`]: a `db.batch()` is a
/// transaction rolled back whole on the first error, as D1 documents.
pub struct SqliteRungs {
    db: Connection,
}

impl SqliteRungs {
    pub fn new(db: Connection) -> Self {
        SqliteRungs { db }
    }

    fn execute(&self, statement: &d1bench_core::Statement) -> rusqlite::Result<()> {
        let params = statement.params.iter().map(|v| match v {
            Value::Integer(n) => rusqlite::types::Value::Integer(*n),
            Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
        });
        // Not the statement cache: rungs are big and never repeat.
        let mut prepared = self.db.prepare(&statement.sql)?;
        prepared.execute(rusqlite::params_from_iter(params))?;
        Ok(())
    }

    fn batch(&self, statements: &[d1bench_core::Statement]) -> rusqlite::Result<()> {
        self.db.execute_batch("BEGIN")?;
        let done = statements.iter().try_for_each(|s| self.execute(s));
        match done {
            Ok(()) => self.db.execute_batch("COMMIT"),
            Err(e) => {
                self.db.execute_batch("ROLLBACK")?;
                Err(e)
            }
        }
    }

    fn count(&self, sql: &str) -> rusqlite::Result<usize> {
        self.db.query_row(sql, [], |row| row.get(0))
    }
}

impl RungTarget for SqliteRungs {
    fn prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, String> {
        let plan = ladder::plan(rung);
        let error = plan
            .prepare
            .iter()
            .try_for_each(|sql| self.db.execute_batch(sql))
            .err()
            .map(|e| sqlite_text(&e));
        Ok(PrepareResult {
            rung_id: rung.rung_id,
            error,
        })
    }

    fn climb(&mut self, rung: &RungRequest) -> (f64, Result<RungResult, String>) {
        let plan: RungPlan = ladder::plan(rung);
        let started = Instant::now();
        let mut tally = Tally::default();
        for call in &plan.calls {
            let outcome = match call {
                Call::One(statement) => self.execute(statement),
                Call::Batch(statements) => self.batch(statements),
            };
            match outcome {
                // In-process SQLite has no clock of D1's own.
                Ok(()) => tally.succeeded(0.0),
                Err(e) => {
                    tally.failed(sqlite_text(&e));
                    break;
                }
            }
        }
        let ms = started.elapsed().as_secs_f64() * 1_000.0;
        (ms, Ok(tally.into_result(rung.rung_id, &plan, ms)))
    }

    fn finish(&mut self, rung: &RungRequest) -> Result<FinishResult, String> {
        let plan = ladder::plan(rung);
        let mut result = FinishResult {
            rung_id: rung.rung_id,
            table_exists: false,
            rows_present: 0,
            error: None,
        };
        let counted = (|| {
            result.table_exists = self.count(&plan.exists)? == 1;
            if result.table_exists {
                result.rows_present = self.count(&plan.count)?;
            }
            self.db.execute_batch(&plan.teardown)
        })();
        if let Err(e) = counted {
            result.error = Some(sqlite_text(&e));
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use d1bench_core::ladder::{CallMode, Held, LadderKind};
    use d1bench_core::{Outcome, RefusalKind};

    #[test]
    fn a_refused_statement_in_a_batch_rolls_the_whole_batch_back() {
        let mut target = SqliteRungs::new(crate::sqlite::open_d1_like().unwrap());
        let rung = RungRequest {
            rung_id: 3,
            ladder: LadderKind::BatchAccounting,
            value: 4,
            held: Held {
                mode: Some(CallMode::Batches),
                batches: Some(2),
                ..Held::default()
            },
        };
        target.prepare(&rung).unwrap();
        // Make the second batch's last statement fail: a value the column cannot take.
        target
            .db
            .execute_batch(
                "CREATE TRIGGER no_three BEFORE INSERT ON r_3 WHEN NEW.c0 = 3 \
                 BEGIN SELECT RAISE(ABORT, 'three refused'); END",
            )
            .unwrap();
        let (_, result) = target.climb(&rung);
        let result = result.unwrap();
        assert_eq!(result.calls_completed, 1);
        assert_eq!(result.rows_acknowledged, 2);
        assert_eq!(result.outcome, Outcome::Error);
        let finish = target.finish(&rung).unwrap();
        assert_eq!(finish.rows_present, 2, "the failed batch left rows behind");
        assert!(finish.table_exists);
    }

    #[test]
    fn a_refused_create_table_is_data() {
        let mut target = SqliteRungs::new(crate::sqlite::open_d1_like().unwrap());
        let rung = RungRequest {
            rung_id: 4,
            ladder: LadderKind::Columns,
            value: 101,
            held: Held::default(),
        };
        assert_eq!(target.prepare(&rung).unwrap().error, None);
        let (_, result) = target.climb(&rung);
        let result = result.unwrap();
        assert_eq!(result.refusal, Some(RefusalKind::TooManyColumns));
        assert_eq!(result.calls_completed, 0);
        let finish = target.finish(&rung).unwrap();
        assert!(!finish.table_exists);
        assert_eq!(finish.error, None);
    }
}
