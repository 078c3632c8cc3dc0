//! A workload on in-process SQLite with SQLite's own single writer: one database file in WAL
//! mode that several connections share (one per request in flight), none of which waits for a
//! lock. Reads run side by side; a write takes the write lock at once (`BEGIN IMMEDIATE`) or is
//! refused with `SQLITE_BUSY` (`database is locked`), as the write-up's SQLite refused them, so
//! the retry policies meet real refusals here (local D1 queues writes instead).
//!
//! Each connection takes its own random heap offset before it opens ([`super::heap_offset`]): a
//! workload has no sessions, so the layout its page caches land in would otherwise be one per
//! run, fixed by the command line and environment, which no figure of the run could show.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use d1bench_core::checksum::checksum_sql;
use d1bench_core::workload::{
    self, CheckRequest, CheckResult, IndexKind, OpRequest, OpResult, Operation, Preparation,
    RowVersion, SeedRequest, SeedResult, cache,
};
use d1bench_core::{Checksum, Value};
use rusqlite::{Connection, TransactionBehavior, params_from_iter};

use super::d1_like::d1_like;
use crate::targets::TargetError;
use crate::targets::http::Timed;
use crate::targets::workload::WorkloadClient;

/// The workload on a SQLite file with D1's limits applied on every connection: a request takes
/// an idle connection (or opens one), so as many run at once as the load generator has in
/// flight; prepared statements are reused through each connection's statement cache, or
/// prepared per call.
pub struct SqliteWorkload {
    path: PathBuf,
    idle: Mutex<Vec<Pooled>>,
    /// Where the file is when this target made it: removed with it.
    _dir: Option<tempfile::TempDir>,
}

impl SqliteWorkload {
    /// The workload on a new file in a directory of its own, removed when dropped.
    pub fn open() -> anyhow::Result<Self> {
        let dir = tempfile::Builder::new().prefix("d1bench-wl-").tempdir()?;
        let mut workload = Self::open_file(&dir.path().join("wl.sqlite"))?;
        workload._dir = Some(dir);
        Ok(workload)
    }

    /// The workload on the SQLite file at `path` (created when missing), in WAL mode.
    pub fn open_file(path: &Path) -> anyhow::Result<Self> {
        let first = connect(path)?;
        let mode: String = first
            .db
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        anyhow::ensure!(
            mode == "wal",
            "{} would not go into WAL mode: {mode}",
            path.display()
        );
        Ok(SqliteWorkload {
            path: path.to_owned(),
            idle: Mutex::new(vec![first]),
            _dir: None,
        })
    }

    /// Runs `f` on an idle connection (or a new one), which goes back to the idle ones after.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, TargetError>,
    ) -> Result<T, TargetError> {
        let lock = || {
            self.idle.lock().map_err(|_| {
                TargetError::InProcess("the connection pool's lock is poisoned".into())
            })
        };
        let taken = lock()?.pop();
        let mut pooled = match taken {
            Some(pooled) => pooled,
            None => connect(&self.path).map_err(|e| TargetError::InProcess(format!("{e:#}")))?,
        };
        let result = f(&mut pooled.db);
        lock()?.push(pooled);
        result
    }
}

/// A connection of the pool and the heap offset taken before it opened, held as long as it.
struct Pooled {
    db: Connection,
    _heap_offset: Vec<u8>,
}

/// A connection to the file with D1's limits, no busy time-out (a held lock is refused at once),
/// `synchronous = NORMAL` (WAL's usual setting: a commit is not synced) and a statement cache,
/// opened after a random heap offset taken on the opening thread.
fn connect(path: &Path) -> anyhow::Result<Pooled> {
    super::malloc_thresholds::fix();
    let heap_offset = super::heap_offset::draw();
    let db = d1_like(Connection::open(path)?)?;
    db.busy_timeout(std::time::Duration::ZERO)?;
    db.execute_batch("PRAGMA synchronous = NORMAL")?;
    db.set_prepared_statement_cache_capacity(64);
    Ok(Pooled {
        db,
        _heap_offset: heap_offset,
    })
}

fn to_sqlite(values: &[Value]) -> Vec<rusqlite::types::Value> {
    values
        .iter()
        .map(|v| match v {
            Value::Integer(n) => rusqlite::types::Value::Integer(*n),
            Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
        })
        .collect()
}

fn sqlite_text(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
        rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        other => other.to_string(),
    }
}

/// Runs `sql` with `params` as prepared per `preparation`: rows answered and rows changed.
fn run(
    db: &Connection,
    sql: &str,
    params: &[Value],
    preparation: Preparation,
    reads: bool,
) -> rusqlite::Result<(usize, usize)> {
    let params = to_sqlite(params);
    let go = |statement: &mut rusqlite::Statement| -> rusqlite::Result<(usize, usize)> {
        if reads {
            let mut rows = statement.query(params_from_iter(params.iter()))?;
            let mut n = 0;
            while let Some(row) = rows.next()? {
                // Read every column, as the Worker turns every row into JSON.
                for j in 0..row.as_ref().column_count() {
                    let _: rusqlite::types::Value = row.get(j)?;
                }
                n += 1;
            }
            Ok((n, 0))
        } else {
            Ok((0, statement.execute(params_from_iter(params.iter()))?))
        }
    };
    match preparation {
        Preparation::Reuse => go(&mut *db.prepare_cached(sql)?),
        Preparation::PerCall => go(&mut db.prepare(sql)?),
    }
}

impl WorkloadClient for SqliteWorkload {
    fn seed(&self, seed: &SeedRequest) -> Result<SeedResult, TargetError> {
        seed.validate().map_err(TargetError::InProcess)?;
        self.with(|db| Ok(seed_batch(db, seed)))
    }

    fn index(&self, indexes: &[IndexKind]) -> Result<(), TargetError> {
        self.with(|db| {
            for sql in IndexKind::sql(indexes) {
                db.execute(&sql, [])
                    .map_err(|e| TargetError::InProcess(sqlite_text(&e)))?;
            }
            Ok(())
        })
    }

    fn op(&self, op: &OpRequest) -> Timed<OpResult> {
        let started = Instant::now();
        let result = op
            .validate()
            .map_err(TargetError::InProcess)
            .and_then(|()| {
                // The pipeline leaves session arms out on this target; one that gets here anyway
                // is refused rather than measured as a plain read.
                if !op.session.is_none() {
                    return Err(TargetError::InProcess(format!(
                        "a `{}` session: in-process SQLite has no D1 Sessions API",
                        op.session
                    )));
                }
                self.with(|db| Ok(timed(db, op)))
            });
        Timed {
            outside_ms: started.elapsed().as_secs_f64() * 1000.0,
            result,
        }
    }

    fn check(&self, check: &CheckRequest) -> Result<CheckResult, TargetError> {
        self.with(|db| check_table(db, check))
    }
}

/// One seed batch, in one transaction.
fn seed_batch(db: &mut Connection, seed: &SeedRequest) -> SeedResult {
    let statements = workload::seed_statements(&seed.spec, seed.from, seed.to);
    let write = |db: &mut Connection| -> rusqlite::Result<usize> {
        if seed.create {
            for sql in workload::create_table(&seed.spec) {
                db.execute(&sql, [])?;
            }
        }
        let tx = db.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut rows = 0;
        for s in &statements {
            rows += run(&tx, &s.sql, &s.params, Preparation::Reuse, false)?.1;
        }
        tx.commit()?;
        Ok(rows)
    };
    match write(db) {
        Ok(rows_written) => SeedResult {
            rows_written,
            statements: statements.len(),
            d1_ms: None,
            error: None,
        },
        Err(e) => SeedResult {
            rows_written: 0,
            statements: statements.len(),
            d1_ms: None,
            error: Some(sqlite_text(&e)),
        },
    }
}

/// One operation, timed around SQLite's work, its error classified as D1's would be.
fn timed(db: &mut Connection, op: &OpRequest) -> OpResult {
    let opened = Instant::now();
    let done = perform(db, op);
    let inside_ms = opened.elapsed().as_secs_f64() * 1000.0;
    let (outcome, refusal) =
        d1bench_core::ladder::classify(done.as_ref().err().map(sqlite_text).as_deref());
    let (rows_returned, changes) = done.as_ref().copied().unwrap_or((0, 0));
    OpResult {
        outcome,
        refusal,
        error: done.err().map(|e| sqlite_text(&e)),
        rows_returned,
        changes,
        inside_ms,
        version: (op.op == Operation::Update).then_some(op.version),
        // SQLite says nothing of D1's meta, a cache, a colo or a session.
        ..crate::targets::workload::no_answer(String::new())
    }
}

/// The table's count, sums, checksum, write ids and versions (dropped after, when asked).
fn check_table(db: &mut Connection, check: &CheckRequest) -> Result<CheckResult, TargetError> {
    let text = |e: rusqlite::Error| TargetError::InProcess(sqlite_text(&e));
    let (n, ids, misplaced): (i64, i64, i64) = db
        .query_row(&workload::sums_sql(&check.spec), [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(text)?;
    let checksum = db
        .query_row(
            &checksum_sql(workload::TABLE, check.spec.columns),
            [],
            |r| Checksum::read(|name| r.get::<_, i64>(name)),
        )
        .map_err(text)?;
    let write_ids = db
        .prepare(&workload::write_ids_sql())
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, i64>(0))?
                .map(|id| id.map(|id| id as u64))
                .collect::<rusqlite::Result<Vec<u64>>>()
        })
        .map_err(text)?;
    let versions = db
        .prepare(&cache::versions_sql())
        .and_then(|mut s| {
            s.query_map([], |r| {
                Ok(RowVersion {
                    id: r.get::<_, i64>(0)? as u64,
                    version: r.get::<_, i64>(1)? as u64,
                })
            })?
            .collect::<rusqlite::Result<Vec<RowVersion>>>()
        })
        .map_err(text)?;
    if check.drop {
        for table in [workload::TABLE, cache::VERSION_TABLE] {
            db.execute(&format!("DROP TABLE IF EXISTS {table}"), [])
                .map_err(text)?;
        }
    }
    Ok(CheckResult {
        rows_present: n as u64,
        id_sum: ids as u64,
        misplaced: misplaced as u64,
        checksum,
        write_ids,
        versions,
    })
}

/// One operation on SQLite: rows answered and rows changed. A batched write is one transaction.
fn perform(db: &mut Connection, op: &OpRequest) -> rusqlite::Result<(usize, usize)> {
    let key = [Value::Integer(op.key as i64)];
    match op.op {
        Operation::PointRead | Operation::RangeScan | Operation::Aggregate => {
            let sql = workload::read_sql(op.op, op.rows, op.index).expect("a read has SQL");
            run(db, &sql, &key, op.preparation, true)
        }
        Operation::Write | Operation::BatchWrite => {
            let generator = op.spec.generator();
            let sql = workload::write_sql(&op.spec);
            // The write lock at once, or SQLITE_BUSY: no connection waits for another's.
            let tx = db.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut changes = 0;
            for id in op.written_ids() {
                changes += run(
                    &tx,
                    &sql,
                    &op.spec.row(&generator, id),
                    op.preparation,
                    false,
                )?
                .1;
            }
            tx.commit()?;
            Ok((0, changes))
        }
        Operation::Update => {
            let params = [
                Value::Integer(op.key as i64),
                Value::Integer(op.version as i64),
            ];
            run(db, &cache::update_sql(), &params, op.preparation, false)
        }
        // Refused before a run starts (in-process SQLite has no Workers KV); a request that
        // gets here anyway fails as SQLite would a statement it cannot run.
        Operation::CachedRead => Err(rusqlite::Error::InvalidParameterName(
            "cached-read: in-process SQLite has no Workers KV".to_owned(),
        )),
    }
}
