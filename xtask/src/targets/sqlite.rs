//! Real SQLite in-process with D1's documented limits applied: the bare baseline every target
//! is compared with (never presented as D1), and the `sqlite` target that runs probes and rungs
//! on it with the same SQL the Worker sends.

use crate::base::clock::ms_since;
use std::time::Instant;

use anyhow::Result;
use d1bench_core::checksum::{StoredRows, StoredValue};
use d1bench_core::ladder::{
    self, Call, FinishResult, PrepareResult, RungPlan, RungRequest, RungResult, Tally,
};
use d1bench_core::sql;
use d1bench_core::{
    CallShape, Checksum, ProbeRequest, ProbeResult, SetupResult, Statement, Strategy, Value,
    VerifyResult,
};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, params_from_iter};

pub mod d1_like;
pub mod heap_offset;
pub mod malloc_thresholds;
pub mod workload;

use d1_like::open_d1_like;

use super::{Described, Probes, Rungs, Target, TargetError, Timed, Workloads};
use crate::base::TargetKind;

/// The SQLite version linked in (the bundled one), for run.toml.
pub fn version() -> String {
    rusqlite::version().to_owned()
}

/// The `sqlite` target: every probe planned by the shared planner and run in-process on
/// [`open_d1_like`], as D1 runs it: a batch in one transaction (rolled back whole when a
/// statement fails), per-row as one autocommit statement per row. Its clocks: `prepare_ms`
/// (planning, and the values converted for rusqlite), then `inside_ms` around the writes
/// (binding happens inside each statement's execution, so there is no `bind_ms`); `outside_ms`
/// is the two together, as the Worker's outside clock holds its own (without HTTP); it has no
/// D1 clock. The rows acknowledged are the changes SQLite reports. Rungs run the SQL the core
/// plans for them, step for step, as the Worker does.
pub struct SqliteSession {
    db: Connection,
    /// Held for the session's life, never read: see [`heap_offset`].
    _heap_offset: Vec<u8>,
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

/// SQLite's own message (what D1 passes on too), without rusqlite's echo of the whole SQL.
fn sqlite_text(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        other => other.to_string(),
    }
}

impl SqliteSession {
    pub fn open() -> Result<Self> {
        malloc_thresholds::fix();
        let heap_offset = heap_offset::draw();
        Ok(SqliteSession {
            db: open_d1_like()?,
            _heap_offset: heap_offset,
        })
    }

    /// Plans the probe and writes its rows, each timed; the table stays for `verify`.
    fn perform(&self, probe: &ProbeRequest) -> Result<ProbeResult, TargetError> {
        let started = Instant::now();
        let plan = sql::plan(probe);
        let prepared: Prepared = plan
            .inserts
            .iter()
            .map(|s| (s.sql.as_str(), s.params.iter().map(to_sqlite).collect()))
            .collect();
        // `exec` hands D1 one script, which D1 splits at its line breaks: the same here.
        let script =
            (probe.strategy.calls() == CallShape::OneExec).then(|| sql::exec_script(&plan.inserts));
        let prepare_ms = ms_since(started);

        let opened = Instant::now();
        let writes = match &script {
            Some(script) => self.exec(script, &plan.inserts),
            None => self.write_rows(probe.strategy, &prepared),
        };
        // Debugging the harness only (`--debug-slow`): a wait inside the window, its share of
        // the window so far. Spun to a deadline, not slept: a sub-millisecond probe's sleep
        // overshot its 20% six- to 38-fold on a loaded machine (the scheduler's wake-up).
        let slow_ms = probe.debug_slow_ms(ms_since(opened));
        if slow_ms > 0.0 {
            let until = Instant::now() + std::time::Duration::from_secs_f64(slow_ms / 1000.0);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        let inside_ms = ms_since(opened);

        // Debugging the harness only (see `ProbeRequest::debug_corrupt`): after the clock.
        if let Some(corrupt) = &plan.corrupt {
            self.db.execute(corrupt, []).map_err(|e| {
                TargetError::InProcess(format!(
                    "probe {} could not be corrupted: {e}",
                    probe.probe_id
                ))
            })?;
        }
        let (outcome, refusal) = d1bench_core::ladder::classify(writes.error.as_deref());
        Ok(ProbeResult {
            probe_id: probe.probe_id,
            strategy: probe.strategy,
            columns: probe.columns,
            row_bytes: probe.row_bytes,
            rows_expected: writes.rows_acknowledged,
            statements_planned: plan.inserts.len(),
            statements_sent: writes.statements_sent,
            d1_calls: writes.calls,
            rows_per_statement: plan.rows_per_statement(),
            max_statement_bytes: plan.max_statement_bytes(),
            prepare_ms: Some(prepare_ms),
            inside_ms,
            handover_ms: None,
            bind_ms: None,
            call_ms: None,
            read_ms: None,
            d1_ms: None,
            outcome,
            refusal,
            error: writes.error,
        })
    }

    /// Runs the INSERTs; the rows acknowledged are the changes SQLite reports for them.
    fn write_rows(&self, strategy: Strategy, prepared: &Prepared) -> Writes {
        // The rows the statement changed.
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
        match strategy.calls() {
            // One autocommit statement per row: each is its own call, and stays when a later
            // one fails.
            CallShape::OneCallPerStatement => {
                for statement in prepared {
                    writes.statements_sent += 1;
                    writes.calls += 1;
                    match execute(statement) {
                        Ok(changed) => writes.rows_acknowledged += changed,
                        Err(e) => {
                            writes.error = Some(e);
                            break;
                        }
                    }
                }
            }
            // One transaction, as D1 runs a batch: all or nothing. (An exec comes here only
            // through `exec`, which runs its script's lines.)
            CallShape::OneCopy => {
                unreachable!("bare SQLite has no COPY: studies name it on Postgres targets only")
            }
            CallShape::OneBatch | CallShape::OneExec => {
                writes.statements_sent = prepared.len();
                writes.calls = 1;
                let outcome = self
                    .db
                    .execute_batch("BEGIN")
                    .map_err(|e| e.to_string())
                    .and_then(|()| prepared.iter().map(execute).sum::<Result<usize, _>>())
                    .and_then(|changed| {
                        let committed = self.db.execute_batch("COMMIT");
                        committed.map(|()| changed).map_err(|e| e.to_string())
                    });
                match outcome {
                    Ok(changed) => writes.rows_acknowledged = changed,
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

    /// Runs a `db.exec()` script as local D1 does: split at its line breaks, every line a
    /// statement, all in one transaction. The rows acknowledged are those of the statements
    /// run, as D1 reports only how many statements it ran.
    fn exec(&self, script: &str, statements: &[Statement]) -> Writes {
        let mut ran = 0;
        let outcome = self
            .db
            .execute_batch("BEGIN")
            .and_then(|()| {
                script.trim().split('\n').try_for_each(|line| {
                    self.db.execute(line, [])?;
                    ran += 1;
                    Ok(())
                })
            })
            .and_then(|()| self.db.execute_batch("COMMIT"));
        let error = outcome.err().map(|e| {
            if !self.db.is_autocommit() {
                // If even the rollback fails, the count and the checksum show it.
                let _ = self.db.execute_batch("ROLLBACK");
            }
            e.to_string()
        });
        Writes {
            statements_sent: statements.len(),
            calls: 1,
            rows_acknowledged: if error.is_none() {
                sql::rows_of_first(statements, ran)
            } else {
                0
            },
            error,
        }
    }

    fn execute(&self, statement: &Statement) -> rusqlite::Result<()> {
        let params = statement.params.iter().map(to_sqlite);
        // Not the statement cache: rungs are big and never repeat.
        let mut prepared = self.db.prepare(&statement.sql)?;
        prepared.execute(params_from_iter(params))?;
        Ok(())
    }

    fn batch(&self, statements: &[Statement]) -> rusqlite::Result<()> {
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

    /// Steps through a read's rows, counting the UTF-8 bytes of [`ladder::RESULT_COLUMN`].
    fn read_text_bytes(&self, statement: &Statement) -> rusqlite::Result<usize> {
        let mut prepared = self.db.prepare(&statement.sql)?;
        let column = prepared.column_index(ladder::RESULT_COLUMN)?;
        let mut rows = prepared.query([])?;
        let mut bytes = 0;
        while let Some(row) = rows.next()? {
            bytes += row.get_ref(column)?.as_str()?.len();
        }
        Ok(bytes)
    }

    fn count(&self, sql: &str) -> rusqlite::Result<usize> {
        self.db.query_row(sql, [], |row| row.get(0))
    }
}

fn to_sqlite(value: &Value) -> rusqlite::types::Value {
    match value {
        Value::Integer(n) => rusqlite::types::Value::Integer(*n),
        Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
    }
}

impl Target for SqliteSession {
    fn target(&self) -> TargetKind {
        TargetKind::Sqlite
    }

    fn has_d1_clock(&self) -> bool {
        false
    }

    fn recover(&mut self) -> Result<(), TargetError> {
        // In-process: nothing restarts it, and nothing needs to.
        Ok(())
    }

    fn describe(&self) -> Described {
        Described {
            worker: format!("not used (in-process SQLite {})", version()),
            remote: None,
        }
    }

    fn close(self: Box<Self>) -> (Described, Result<()>) {
        (self.describe(), Ok(()))
    }
}

impl SqliteSession {
    /// The content checksum of `table` (of `columns` columns), its rows read back and summed
    /// on the host ([`StoredRows`]): the numbers the checksum's SQL gives (a test holds them
    /// equal), in about a tenth of the time, which is most of what verifying a probe cost this
    /// target. The Worker's targets still run the SQL: reading 10 MB back into a Worker costs
    /// more than SQLite summing it where it lies.
    fn checksum_by_reading(&self, table: &str, columns: usize) -> rusqlite::Result<Checksum> {
        let names: Vec<String> = (0..columns).map(|j| format!("c{j}")).collect();
        let mut select = self
            .db
            .prepare(&format!("SELECT {} FROM {table}", names.join(",")))?;
        let mut rows = select.query([])?;
        let mut sum = StoredRows::default();
        while let Some(row) = rows.next()? {
            let values = (0..columns)
                .map(|j| {
                    Ok(match row.get_ref(j)? {
                        ValueRef::Null => StoredValue::Null,
                        ValueRef::Integer(n) => StoredValue::Integer(n),
                        ValueRef::Real(x) => StoredValue::Real(x),
                        ValueRef::Text(b) => StoredValue::Text(b),
                        ValueRef::Blob(b) => StoredValue::Blob(b),
                    })
                })
                .collect::<rusqlite::Result<Vec<_>>>()?;
            sum.add(&values);
        }
        Ok(sum.checksum())
    }
}

impl Probes for SqliteSession {
    fn setup(&mut self, probe: &ProbeRequest) -> Result<SetupResult, TargetError> {
        let error = sql::setup(probe)
            .iter()
            .try_for_each(|statement| self.db.execute(statement, []).map(drop))
            .err()
            .map(|e| sqlite_text(&e));
        Ok(SetupResult {
            probe_id: probe.probe_id,
            error,
        })
    }

    fn probe(&mut self, probe: &ProbeRequest) -> Timed<ProbeResult> {
        match self.perform(probe) {
            // No HTTP around it: the outside clock is the preparation and the writes.
            Ok(result) => Timed {
                outside_ms: result.prepare_ms.unwrap_or_default() + result.inside_ms,
                result: Ok(result),
            },
            Err(e) => Timed {
                outside_ms: 0.0,
                result: Err(e),
            },
        }
    }

    fn verify(&mut self, probe: &ProbeRequest) -> Result<VerifyResult, TargetError> {
        let sql = sql::verification(probe);
        let failed = |e: rusqlite::Error| {
            TargetError::InProcess(format!(
                "probe {} could not be verified: {e}",
                probe.probe_id
            ))
        };
        let exists = self.count(&sql.exists).map_err(failed)? == 1;
        if !exists {
            return Ok(VerifyResult {
                probe_id: probe.probe_id,
                table_exists: false,
                rows_present: 0,
                checksum: None,
                served_by: None,
            });
        }
        let rows_present = self.count(&sql.count).map_err(failed)?;
        let checksum = self
            .checksum_by_reading(&probe.table(), probe.columns)
            .map_err(failed)?;
        self.db.execute(&sql.teardown, []).map_err(|e| {
            TargetError::InProcess(format!(
                "cannot drop the table of probe {}: {e}",
                probe.probe_id
            ))
        })?;
        Ok(VerifyResult {
            probe_id: probe.probe_id,
            table_exists: true,
            rows_present,
            checksum: Some(checksum),
            served_by: None,
        })
    }
}

impl Rungs for SqliteSession {
    fn rung_prepare(&mut self, rung: &RungRequest) -> Result<PrepareResult, TargetError> {
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

    fn rung_climb(&mut self, rung: &RungRequest) -> Timed<RungResult> {
        let plan: RungPlan = ladder::plan(rung);
        let started = Instant::now();
        let mut tally = Tally::default();
        for call in &plan.calls {
            // One connection has no concurrency: a plan to send all at once
            // (concurrent-calls, which does not run here) would still go in order.
            let outcome = match call {
                Call::One(statement) => self.execute(statement),
                Call::Batch(statements) => self.batch(statements),
                Call::Read(read) => self
                    .read_text_bytes(&read.statement)
                    .map(|bytes| tally.returned(bytes)),
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
        Timed {
            outside_ms: ms,
            result: Ok(tally.into_result(rung.rung_id, &plan, ms)),
        }
    }

    fn rung_finish(&mut self, rung: &RungRequest) -> Result<FinishResult, TargetError> {
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

impl Workloads for SqliteSession {
    fn workload(
        &mut self,
    ) -> Result<std::sync::Arc<dyn super::workload::WorkloadClient>, TargetError> {
        workload::SqliteWorkload::open()
            .map(|w| std::sync::Arc::new(w) as _)
            .map_err(|e| TargetError::InProcess(format!("{e:#}")))
    }

    /// In-process SQLite has no REST API: every write goes its one way.
    fn rest_writes(&mut self) -> Option<std::sync::Arc<super::remote::rest::RestClient>> {
        None
    }

    /// Nothing runs apart from this process: the generator's CPU time is all there is.
    fn process_group(&self) -> Option<i32> {
        None
    }
}

#[cfg(test)]
mod tests;

/// The checksum read back against the checksum's SQL, on tables as written and as changed.
#[cfg(test)]
mod checksum_by_reading_tests {
    use d1bench_core::{Corruption, TextMix};

    use super::*;

    fn written(columns: usize, rows: usize, seed: u64) -> (SqliteSession, ProbeRequest) {
        let probe = ProbeRequest {
            probe_id: 5,
            strategy: Strategy::Bound,
            columns,
            rows,
            row_bytes: 120,
            seed,
            rows_per_statement: None,
            json_payload_bytes: None,
            text: TextMix::HOSTILE,
            indexes: 0,
            debug_corrupt: None,
            debug_slow_percent: None,
        };
        let mut target = SqliteSession::open().unwrap();
        assert_eq!(target.setup(&probe).unwrap().error, None);
        assert!(target.probe(&probe).result.is_ok());
        (target, probe)
    }

    fn both(target: &SqliteSession, probe: &ProbeRequest) -> (Checksum, Checksum) {
        let sql = sql::verification(probe);
        let by_sql = target
            .db
            .query_row(&sql.checksum, [], |r| Checksum::read(|c| r.get(c)))
            .unwrap();
        let read = target
            .checksum_by_reading(&probe.table(), probe.columns)
            .unwrap();
        (by_sql, read)
    }

    #[test]
    fn reading_back_gives_the_sqls_numbers_on_tables_as_written_and_as_corrupted() {
        let mut changed = 0;
        for (columns, seed) in [(1, 1), (3, 2), (8, 3), (40, 4), (100, 5)] {
            let (target, probe) = written(columns, 30, seed);
            let (by_sql, read) = both(&target, &probe);
            assert_eq!(by_sql, read, "{columns} columns as written");
            let generator = d1bench_core::RowGenerator::new(columns, 120, seed, TextMix::HOSTILE);
            assert_eq!(read, Checksum::expected(&generator, 30));
            for corruption in Corruption::ALL {
                let corrupted = ProbeRequest {
                    debug_corrupt: Some(corruption),
                    ..probe.clone()
                };
                if corrupted.validate().is_err() {
                    continue;
                }
                let (target, probe) = written(columns, 30, seed);
                target
                    .db
                    .execute(&sql::corrupt(&probe.table(), corruption), [])
                    .unwrap();
                let (by_sql, read) = both(&target, &probe);
                // Whether a change is caught is the mutation tests' (core's checksum/mutations.rs):
                // here, that both ways give the same numbers on the changed table.
                assert_eq!(by_sql, read, "{columns} columns, {corruption:?}");
                changed += usize::from(read != Checksum::expected(&generator, 30));
            }
        }
        assert!(
            changed >= 10,
            "the corruptions changed {changed} tables' checksums"
        );
    }

    #[test]
    fn values_of_another_type_count_as_wrong_types_both_ways() {
        let (target, probe) = written(6, 10, 9);
        let table = probe.table();
        // A NULL and a BLOB in text columns, a text and a NULL in integer columns (an integer
        // set in a text column is stored as text: the column's affinity).
        for change in [
            format!("UPDATE {table} SET c0 = NULL WHERE rowid = 1"),
            format!("UPDATE {table} SET c1 = CAST(c1 AS BLOB) WHERE rowid = 2"),
            format!("UPDATE {table} SET c2 = 'x' || c2 WHERE rowid = 3"),
            format!("UPDATE {table} SET c5 = NULL WHERE rowid = 4"),
        ] {
            target.db.execute(&change, []).unwrap();
        }
        let (by_sql, read) = both(&target, &probe);
        assert_eq!(by_sql, read);
        assert_eq!(read.wrong_types, 4);
        // A REAL (in an integer column, which keeps a fraction as REAL): its text may differ
        // from SQLite's, but it is a wrong type either way.
        target
            .db
            .execute(&format!("UPDATE {table} SET c2 = 1.5 WHERE rowid = 5"), [])
            .unwrap();
        let (by_sql, read) = both(&target, &probe);
        assert_eq!((by_sql.wrong_types, read.wrong_types), (5, 5));
    }
}
