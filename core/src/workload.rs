//! Workload experiments' shared definitions: the table a workload reads and writes, its
//! operations and the SQL each runs, how the table is seeded within D1's limits, and what the
//! Worker (or in-process SQLite) answers for a seed batch, an operation and a table check.
//!
//! The table is `wl (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, c0 …)`: `id` from 1, `k` the
//! row's group (`id % groups`, what the aggregate filters on), then the row generator's columns
//! (text, text, integer, repeating). Row `id`'s columns are the generator's row `id − 1`, so the
//! content checksum of [`crate::checksum`] over `c0 …` says whether every seeded and written row
//! is present with its content, and the sums of `id` and `k` say whether they sit under their
//! ids and groups.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::checksum::Checksum;
use crate::generate::{RowGenerator, TextMix, Value, column_type};
use crate::limits::{MAX_BOUND_PARAMETERS, MAX_COLUMNS, QUERIES_PER_INVOCATION_FREE};
use crate::probe::{Outcome, ServedBy};
use crate::refusal::RefusalKind;
use crate::sql::Statement;

pub mod cache;
pub mod session;
use cache::{CacheLookup, CacheParams};
pub use session::SessionMode;

/// The workload's table.
pub const TABLE: &str = "wl";

/// Columns the workload table has besides the generator's: `id` and `k`.
pub const KEY_COLUMNS: usize = 2;

/// The first id a write takes: far above any seeded id, so writes never collide with the
/// table's growth and reads (which pick seeded ids) never see them.
pub const FIRST_WRITE_ID: u64 = 1 << 40;

/// Most statements in one seed batch: the Free plan's per-invocation query budget, so a seed
/// request is within every plan's budget even if D1 counted each statement of a batch.
pub const MAX_SEED_STATEMENTS: usize = QUERIES_PER_INVOCATION_FREE;

/// Most payload bytes one seed request generates and sends to D1.
pub const MAX_SEED_BATCH_BYTES: usize = 4 * 1024 * 1024;

/// Most rows a range scan or a batched write may touch in one operation.
pub const MAX_OPERATION_ROWS: usize = 1_000;

/// What a workload asks of its table, one per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// `SELECT * FROM wl WHERE id = ?`: one row by primary key.
    PointRead,
    /// `SELECT * FROM wl WHERE id >= ? ORDER BY id LIMIT K`: K rows in key order.
    RangeScan,
    /// `SELECT count(*), total(c2) FROM wl WHERE k = ?`: one group's count and sum (an index on
    /// `k` finds the group; a covering index on `(k, c2)` answers without the table).
    Aggregate,
    /// One `INSERT` of one new row.
    Write,
    /// One `db.batch()` of N single-row `INSERT`s (one transaction).
    BatchWrite,
    /// A point read through a Workers KV read-through cache: the row from KV when cached
    /// within the TTL, else from D1 with its version, then put into KV (see [`cache`]).
    CachedRead,
    /// One row's version bumped in D1 (`wl_ver`), the cache left as it is: the write a cached
    /// read may not see yet.
    Update,
}

impl Operation {
    pub const ALL: [Operation; 7] = [
        Operation::PointRead,
        Operation::RangeScan,
        Operation::Aggregate,
        Operation::Write,
        Operation::BatchWrite,
        Operation::CachedRead,
        Operation::Update,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Operation::PointRead => "point-read",
            Operation::RangeScan => "range-scan",
            Operation::Aggregate => "aggregate",
            Operation::Write => "write",
            Operation::BatchWrite => "batch-write",
            Operation::CachedRead => "cached-read",
            Operation::Update => "update",
        }
    }

    /// Whether it changes the database (and is retried, acknowledged and reconciled as a write).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Operation::Write | Operation::BatchWrite | Operation::Update
        )
    }

    /// Whether it inserts new rows (with ids from [`FIRST_WRITE_ID`]).
    pub fn inserts(self) -> bool {
        matches!(self, Operation::Write | Operation::BatchWrite)
    }

    /// Whether it needs a Workers KV namespace.
    pub fn needs_kv(self) -> bool {
        self == Operation::CachedRead
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Operation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Operation::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| format!("unknown operation `{s}`"))
    }
}

/// The secondary index the table carries while a series runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexKind {
    /// No secondary index: the aggregate scans the table.
    None,
    /// `CREATE INDEX wl_k ON wl (k)`: finds a group, then reads each row for `c2`.
    Key,
    /// `CREATE INDEX wl_kc ON wl (k, c2)`: answers the aggregate from the index alone.
    Covering,
}

impl IndexKind {
    pub const ALL: [IndexKind; 3] = [IndexKind::None, IndexKind::Key, IndexKind::Covering];

    pub fn name(self) -> &'static str {
        match self {
            IndexKind::None => "none",
            IndexKind::Key => "key",
            IndexKind::Covering => "covering",
        }
    }

    /// The statements that leave exactly these indexes on the table (dropping the others):
    /// the arms of one load point share one table, each read naming the index it goes through
    /// ([`IndexKind::clause`]).
    pub fn sql(indexes: &[IndexKind]) -> Vec<String> {
        let mut sql = vec![
            format!("DROP INDEX IF EXISTS {TABLE}_k"),
            format!("DROP INDEX IF EXISTS {TABLE}_kc"),
        ];
        if indexes.contains(&IndexKind::Key) {
            sql.push(format!("CREATE INDEX {TABLE}_k ON {TABLE} (k)"));
        }
        if indexes.contains(&IndexKind::Covering) {
            sql.push(format!("CREATE INDEX {TABLE}_kc ON {TABLE} (k, c2)"));
        }
        sql
    }

    /// What follows the table's name in the aggregate so that it goes through this index and
    /// no other, whatever else the table carries: SQLite's `INDEXED BY` (an error, not a
    /// silent other plan, when the index is missing) or `NOT INDEXED` (a scan).
    pub fn clause(self) -> String {
        match self {
            IndexKind::None => " NOT INDEXED".to_owned(),
            IndexKind::Key => format!(" INDEXED BY {TABLE}_k"),
            IndexKind::Covering => format!(" INDEXED BY {TABLE}_kc"),
        }
    }
}

impl fmt::Display for IndexKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether an operation's statement is prepared once and reused across calls, or per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preparation {
    /// Prepared on first use and kept for the life of the Worker isolate (a module-level cache
    /// keyed by SQL), or by rusqlite's statement cache in-process.
    Reuse,
    /// `db.prepare(sql)` on every call.
    PerCall,
}

impl Preparation {
    pub const ALL: [Preparation; 2] = [Preparation::Reuse, Preparation::PerCall];

    pub fn name(self) -> &'static str {
        match self {
            Preparation::Reuse => "reuse",
            Preparation::PerCall => "per-call",
        }
    }
}

impl fmt::Display for Preparation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The shape and content of the workload's table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Generator columns (`c0 …`), besides `id` and `k`; at least 3, so `c2` (an integer) exists.
    pub columns: usize,
    /// Payload bytes of the generator's columns in every row.
    pub row_bytes: usize,
    /// The generator's seed.
    pub seed: u64,
    /// Groups of `k`: row `id` is in group `id % groups`.
    pub groups: u64,
}

impl TableSpec {
    pub fn generator(&self) -> RowGenerator {
        RowGenerator::new(self.columns, self.row_bytes, self.seed, TextMix::default())
    }

    /// Row `id`'s values in column order (`id`, `k`, then the generator's).
    pub fn row(&self, generator: &RowGenerator, id: u64) -> Vec<Value> {
        let mut row = Vec::with_capacity(self.columns + KEY_COLUMNS);
        row.push(Value::Integer(id as i64));
        row.push(Value::Integer((id % self.groups) as i64));
        row.extend(generator.row(id - 1));
        row
    }

    /// Why this table cannot be a workload's, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        if self.columns < 3 {
            return Err("a workload table needs at least 3 columns (the aggregate sums c2)".into());
        }
        if self.columns + KEY_COLUMNS > MAX_COLUMNS {
            return Err(format!(
                "{} columns and `id` and `k` are more than D1's {MAX_COLUMNS} columns per table",
                self.columns
            ));
        }
        if self.row_bytes < RowGenerator::min_row_bytes(self.columns) {
            return Err(format!(
                "{} columns take at least {} bytes a row",
                self.columns,
                RowGenerator::min_row_bytes(self.columns)
            ));
        }
        if self.row_bytes > crate::checksum::MAX_CHECKSUMMED_ROW_BYTES {
            return Err(format!(
                "rows above {} bytes cannot be checksummed within D1's string limit",
                crate::checksum::MAX_CHECKSUMMED_ROW_BYTES
            ));
        }
        if self.groups == 0 {
            return Err("groups must be at least 1".into());
        }
        Ok(())
    }

    /// Rows in one bound INSERT: as many as D1's 100 bound parameters carry.
    pub fn rows_per_statement(&self) -> usize {
        (MAX_BOUND_PARAMETERS / (self.columns + KEY_COLUMNS)).max(1)
    }

    /// Rows one seed request writes: within [`MAX_SEED_STATEMENTS`] statements and
    /// [`MAX_SEED_BATCH_BYTES`] of payload.
    pub fn seed_batch_rows(&self) -> usize {
        let by_statements = self.rows_per_statement() * MAX_SEED_STATEMENTS;
        let by_bytes = (MAX_SEED_BATCH_BYTES / self.row_bytes.max(1)).max(1);
        by_statements.min(by_bytes)
    }

    /// The content checksum the table must hold when exactly the rows `ids` are present.
    pub fn expected_checksum(&self, ids: impl IntoIterator<Item = u64>) -> Checksum {
        let generator = self.generator();
        Checksum::of_rows(ids.into_iter().map(|id| generator.row(id - 1)))
    }
}

/// `DROP TABLE IF EXISTS wl` then `CREATE TABLE wl (id INTEGER PRIMARY KEY, k INTEGER NOT NULL,
/// c0 TEXT, …)`.
pub fn create_table(spec: &TableSpec) -> Vec<String> {
    let mut sql = format!("CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, k INTEGER NOT NULL");
    for j in 0..spec.columns {
        sql.push_str(&format!(", c{j} {}", column_type(j).sql()));
    }
    sql.push(')');
    let mut all = vec![format!("DROP TABLE IF EXISTS {TABLE}"), sql];
    all.extend(cache::create_version_table());
    all
}

/// `INSERT INTO wl (id, k, c0, …) VALUES (?, …), …` for `rows` rows.
pub fn insert_sql(spec: &TableSpec, rows: usize) -> String {
    let names: Vec<String> = ["id".to_owned(), "k".to_owned()]
        .into_iter()
        .chain((0..spec.columns).map(|j| format!("c{j}")))
        .collect();
    let one = format!("({})", vec!["?"; names.len()].join(","));
    format!(
        "INSERT INTO {TABLE} ({}) VALUES {}",
        names.join(","),
        vec![one; rows].join(",")
    )
}

/// The one-row INSERT of a workload write: idempotent, so a write sent again (a client's retry
/// after an answer it never saw) leaves the row once: `… ON CONFLICT (id) DO NOTHING` changes
/// nothing when the id is already there. Write ids are chosen by the client (the plan), never by
/// the database.
pub fn write_sql(spec: &TableSpec) -> String {
    format!("{} ON CONFLICT (id) DO NOTHING", insert_sql(spec, 1))
}

/// The INSERTs that write rows `from ..= to` (ids), each within D1's bound-parameter limit.
pub fn seed_statements(spec: &TableSpec, from: u64, to: u64) -> Vec<Statement> {
    let generator = spec.generator();
    let per = spec.rows_per_statement() as u64;
    let mut statements = Vec::new();
    let mut first = from;
    while first <= to {
        let last = (first + per - 1).min(to);
        let rows = (last - first + 1) as usize;
        let params = (first..=last)
            .flat_map(|id| spec.row(&generator, id))
            .collect();
        statements.push(Statement {
            sql: insert_sql(spec, rows),
            params,
            rows,
        });
        first = last + 1;
    }
    statements
}

/// The SQL of a read operation, with one `?` for its key; the aggregate through `index` when
/// one is named (reads by primary key use no secondary index either way).
pub fn read_sql(op: Operation, range_rows: usize, index: Option<IndexKind>) -> Option<String> {
    match op {
        Operation::PointRead => Some(format!("SELECT * FROM {TABLE} WHERE id = ?")),
        Operation::RangeScan => Some(format!(
            "SELECT * FROM {TABLE} WHERE id >= ? ORDER BY id LIMIT {range_rows}"
        )),
        // `total`, not `sum`: c2 holds integers up to ±2^53, and `sum` fails with `integer
        // overflow` when a running sum leaves 64 bits, which a covering index reaching the
        // values in order makes happen at a few thousand rows (seen at 21,000 rows a group).
        Operation::Aggregate => Some(format!(
            "SELECT count(*) AS n, total(c2) AS s FROM {TABLE}{} WHERE k = ?",
            index.map_or(String::new(), IndexKind::clause)
        )),
        Operation::CachedRead => Some(cache::versioned_read_sql()),
        Operation::Write | Operation::BatchWrite | Operation::Update => None,
    }
}

/// `POST /workload/seed`: create the table (when `create`), then write rows `from ..= to`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedRequest {
    pub spec: TableSpec,
    pub create: bool,
    pub from: u64,
    pub to: u64,
}

impl SeedRequest {
    pub fn validate(&self) -> Result<(), String> {
        self.spec.check()?;
        if self.from == 0 || self.to < self.from {
            return Err(format!("no rows between ids {} and {}", self.from, self.to));
        }
        if (self.to - self.from + 1) as usize > self.spec.seed_batch_rows() {
            return Err(format!(
                "{} rows are more than one seed batch of {}",
                self.to - self.from + 1,
                self.spec.seed_batch_rows()
            ));
        }
        Ok(())
    }
}

/// What a seed batch did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedResult {
    /// Rows D1 said the INSERTs changed.
    pub rows_written: usize,
    pub statements: usize,
    /// D1's `meta.duration`, summed; `None` where there is none.
    pub d1_ms: Option<f64>,
    pub error: Option<String>,
}

/// `POST /workload/index`: leave exactly these indexes on the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexRequest {
    pub indexes: Vec<IndexKind>,
}

/// `POST /workload/op`: one operation, timed inside the invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpRequest {
    pub spec: TableSpec,
    pub op: Operation,
    /// The id read from (point read, range scan), the group (aggregate), or the first id
    /// written (writes).
    pub key: u64,
    /// Rows of a range scan, or of a batched write; 1 otherwise.
    pub rows: usize,
    pub preparation: Preparation,
    /// The version an update writes (from 1, per row, in the plan's order); 0 otherwise.
    #[serde(default)]
    pub version: u64,
    /// A cached read's TTL and KV key generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheParams>,
    /// The D1 session the read runs in (the plain binding when `none`).
    #[serde(default, skip_serializing_if = "SessionMode::is_none")]
    pub session: SessionMode,
    /// The index the aggregate goes through (`INDEXED BY`), when the table carries several;
    /// none: SQLite's planner chooses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexKind>,
}

impl OpRequest {
    pub fn validate(&self) -> Result<(), String> {
        self.spec.check()?;
        if self.rows == 0 || self.rows > MAX_OPERATION_ROWS {
            return Err(format!(
                "an operation touches 1 to {MAX_OPERATION_ROWS} rows, not {}",
                self.rows
            ));
        }
        if self.op.inserts() && self.key < FIRST_WRITE_ID {
            return Err(format!("writes take ids from {FIRST_WRITE_ID}"));
        }
        match (self.op, &self.cache) {
            (Operation::CachedRead, Some(cache)) => cache.check()?,
            (Operation::CachedRead, None) => return Err("a cached read needs its TTL".into()),
            (_, Some(_)) => return Err(format!("`{}` does not go through the cache", self.op)),
            (_, None) => {}
        }
        if self.op == Operation::Update && self.version == 0 {
            return Err("an update writes a version from 1".into());
        }
        if let Some(refused) = self.session.refuses(self.op, self.preparation) {
            return Err(refused);
        }
        Ok(())
    }

    /// The ids a write operation inserts.
    pub fn written_ids(&self) -> std::ops::Range<u64> {
        match self.op {
            Operation::Write => self.key..self.key + 1,
            Operation::BatchWrite => self.key..self.key + self.rows as u64,
            _ => self.key..self.key,
        }
    }
}

/// What one operation did, measured inside the invocation that ran it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpResult {
    pub outcome: Outcome,
    pub refusal: Option<RefusalKind>,
    /// D1's error text, verbatim.
    pub error: Option<String>,
    /// Rows the reads answered.
    pub rows_returned: usize,
    /// Rows the writes changed (`meta.changes`).
    pub changes: usize,
    /// Milliseconds from handing the statement to the binding to having read its answer.
    pub inside_ms: f64,
    /// D1's `meta.duration`, summed; `None` where there is none.
    pub d1_ms: Option<f64>,
    /// D1's `meta.rows_read` and `meta.rows_written`, summed: what the user pays for.
    pub rows_read: Option<u64>,
    pub rows_written: Option<u64>,
    /// D1's `meta.total_attempts`: how many times D1 itself ran the call (it retries read-only
    /// queries up to twice), the most over a batch's statements; `None` where D1 does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d1_attempts: Option<u32>,
    /// D1's `meta.timings.sql_duration_ms`, summed: the time SQLite spent on the statements;
    /// `None` where D1 does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql_duration_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_by: Option<ServedBy>,
    /// What a cached read found in KV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheLookup>,
    /// The row version a cached read returned, or an update wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// The Cloudflare data centre the Worker ran in (`request.cf.colo`); none locally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_colo: Option<String>,
    /// Whether the read's session had a bookmark after it (`getBookmark()`; its value is not
    /// kept); none without a session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_bookmark: Option<bool>,
}

/// `POST /workload/check`: count and checksum the table (and drop it, when `drop`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRequest {
    pub spec: TableSpec,
    pub drop: bool,
}

/// One row's version at the end, as [`cache::versions_sql`] answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowVersion {
    pub id: u64,
    pub version: u64,
}

/// The SELECT of the table check's sums: rows, `sum(id)` modulo a prime below 2^53 (so it stays
/// exact as a JavaScript number; the sum itself stays far below 2^63 for any table a workload
/// can write), and the rows whose `k` is not their group.
pub fn sums_sql(spec: &TableSpec) -> String {
    format!(
        "SELECT count(*) AS n, coalesce(sum(id), 0) % 9007199254740881 AS ids, \
         coalesce(sum(k <> id % {}), 0) AS misplaced FROM {TABLE}",
        spec.groups
    )
}

/// [`sums_sql`]'s `ids` as the host computes it for `ids`.
pub fn id_sum(ids: impl IntoIterator<Item = u64>) -> u64 {
    ids.into_iter().fold(0u128, |s, id| s + u128::from(id)) as u64 % 9_007_199_254_740_881
}

/// What the table check answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckResult {
    pub rows_present: u64,
    /// [`sums_sql`]'s `ids`.
    pub id_sum: u64,
    /// Rows whose `k` is not `id % groups`.
    pub misplaced: u64,
    pub checksum: Checksum,
    /// Every id at or above [`FIRST_WRITE_ID`] present, ascending, as often as each is present:
    /// what the exactly-once reconciliation of the writes compares with their acknowledgements.
    #[serde(default)]
    pub write_ids: Vec<u64>,
    /// Every row's version in `wl_ver`, ascending by id: what the updates left.
    #[serde(default)]
    pub versions: Vec<RowVersion>,
}

/// The SELECT of the ids the writes left: [`CheckResult::write_ids`].
pub fn write_ids_sql() -> String {
    format!("SELECT id FROM {TABLE} WHERE id >= {FIRST_WRITE_ID} ORDER BY id")
}

#[cfg(test)]
mod tests;
