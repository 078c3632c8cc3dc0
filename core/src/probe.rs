//! The probe request the xtask sends to the Worker and the result the Worker answers.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::checksum::Checksum;
use crate::generate::{INTEGER_BYTES, RowGenerator, TextMix, integer_columns};
use crate::limits::MAX_STRING_BYTES;
use crate::refusal::RefusalKind;

/// How a probe writes its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// One prepared statement per row, each its own D1 call.
    PerRow,
    /// Multi-row INSERTs with bound parameters, floor(100/C) rows each, all in one `db.batch()`.
    Bound,
    /// Multi-row INSERTs with the values written into the SQL, as many rows as fit under the
    /// statement limit, all in one `db.batch()`.
    Literal,
    /// `INSERT ... SELECT ... FROM json_each(?)`: the rows as one JSON array bound as the one
    /// parameter of a statement, as many rows as fit the documented string limit, all in one
    /// `db.batch()`.
    Json,
    /// One single-row prepared statement per row, all in one `db.batch()`: one D1 call, as many
    /// statements as rows (what ORMs emit).
    BatchedRows,
    /// Literal multi-row INSERTs (as [`Strategy::Literal`], each on one line) joined into one
    /// script for `db.exec()`: one D1 call, nothing bound.
    Exec,
    /// `COPY t (c0, ...) FROM STDIN`: every row in one COPY data stream, in Postgres's text
    /// format, in one call. Postgres's own bulk path and only Postgres's: D1 has no COPY, so the
    /// variant exists under the `postgres` feature (the xtask's and the Postgres Worker's build
    /// of this crate), and the D1 Worker's build does not know the name.
    #[cfg(feature = "postgres")]
    Copy,
}

impl Strategy {
    pub const ALL: [Strategy; 6] = [
        Strategy::PerRow,
        Strategy::Bound,
        Strategy::Literal,
        Strategy::Json,
        Strategy::BatchedRows,
        Strategy::Exec,
    ];

    /// The order tables, legends and charts list strategies in: the multi-row strategies
    /// first (COPY, where the build knows it, after them), the one-call-per-row baseline last.
    #[cfg(not(feature = "postgres"))]
    pub const REPORT_ORDER: &[Strategy] = &[
        Strategy::Bound,
        Strategy::Literal,
        Strategy::Json,
        Strategy::BatchedRows,
        Strategy::Exec,
        Strategy::PerRow,
    ];
    #[cfg(feature = "postgres")]
    pub const REPORT_ORDER: &[Strategy] = &[
        Strategy::Bound,
        Strategy::Literal,
        Strategy::Json,
        Strategy::BatchedRows,
        Strategy::Exec,
        Strategy::Copy,
        Strategy::PerRow,
    ];

    /// Whether every engine runs the strategy (one of [`Strategy::ALL`]); COPY is Postgres's.
    pub fn on_every_engine(self) -> bool {
        Strategy::ALL.contains(&self)
    }

    pub fn name(self) -> &'static str {
        match self {
            Strategy::PerRow => "per-row",
            Strategy::Bound => "bound",
            Strategy::Literal => "literal",
            Strategy::Json => "json",
            Strategy::BatchedRows => "batched-rows",
            Strategy::Exec => "exec",
            #[cfg(feature = "postgres")]
            Strategy::Copy => "copy",
        }
    }

    /// How the strategy's statements reach D1.
    pub fn calls(self) -> CallShape {
        match self {
            Strategy::PerRow => CallShape::OneCallPerStatement,
            Strategy::Bound | Strategy::Literal | Strategy::Json | Strategy::BatchedRows => {
                CallShape::OneBatch
            }
            Strategy::Exec => CallShape::OneExec,
            #[cfg(feature = "postgres")]
            Strategy::Copy => CallShape::OneCopy,
        }
    }

    /// Whether the strategy writes a fixed one row per statement (no rows-per-statement
    /// override makes sense for it).
    pub fn one_row_per_statement(self) -> bool {
        matches!(self, Strategy::PerRow | Strategy::BatchedRows)
    }
}

/// How a strategy's statements reach D1, which decides its D1 calls and what a failure leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallShape {
    /// Each statement its own call; the statements before a failed one stay.
    OneCallPerStatement,
    /// All statements in one `db.batch()`, rolled back whole when one fails.
    OneBatch,
    /// All statements as one script in one `db.exec()`; local D1 runs the script in one
    /// transaction, so a failure leaves nothing.
    OneExec,
    /// The rows as one COPY data stream (Postgres only), which the server applies whole or
    /// not at all: a failure leaves nothing.
    #[cfg(feature = "postgres")]
    OneCopy,
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Strategy::REPORT_ORDER
            .iter()
            .copied()
            .find(|st| st.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Strategy::REPORT_ORDER.iter().map(|s| s.name()).collect();
                format!(
                    "unknown strategy `{s}`; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}

/// Largest column count a probe may ask for: SQLite's own default ceiling, so ladders can climb
/// past D1's documented 100 and see who refuses.
pub const MAX_PROBE_COLUMNS: usize = 2_000;
/// Largest row count of one probe.
pub const MAX_PROBE_ROWS: usize = 1_000_000;
/// Largest payload (rows × row bytes) one probe may generate: keeps a Worker inside its memory.
pub const MAX_PROBE_PAYLOAD_BYTES: usize = 64 * 1024 * 1024;

// The cap keeps every probe's content checksum exact in a JavaScript number.
const _: () = assert!(MAX_PROBE_PAYLOAD_BYTES <= crate::checksum::MAX_EXACT_PAYLOAD_BYTES);
/// Most secondary indexes a probe's table may have (index `k` is on column `k`).
pub const MAX_PROBE_INDEXES: usize = 64;

/// A deliberate corruption of the probe's table after its rows are written, for proving that
/// reconciliation catches a wrong row. Debugging the harness only: no experiment asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Corruption {
    /// Change the last byte of the first row's first text value (column 0).
    TextByte,
    /// Add one to the first row's first integer (column 2).
    Integer,
    /// Swap the first text values (column 0) of the first two rows: every byte is still there,
    /// in another row.
    SwapRows,
    /// Swap the first two text values (columns 0 and 1) of the first row: every byte is still
    /// in that row, in another column.
    SwapColumns,
}

impl Corruption {
    pub const ALL: [Corruption; 4] = [
        Corruption::TextByte,
        Corruption::Integer,
        Corruption::SwapRows,
        Corruption::SwapColumns,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Corruption::TextByte => "text-byte",
            Corruption::Integer => "integer",
            Corruption::SwapRows => "swap-rows",
            Corruption::SwapColumns => "swap-columns",
        }
    }

    /// Rows the corruption changes.
    pub fn rows_changed(self) -> usize {
        match self {
            Corruption::SwapRows => 2,
            Corruption::TextByte | Corruption::Integer | Corruption::SwapColumns => 1,
        }
    }

    /// What a probe's table must have for the corruption to change it: (columns, rows).
    fn needs(self) -> (usize, usize) {
        match self {
            Corruption::TextByte => (1, 1),
            Corruption::Integer => (3, 1),
            Corruption::SwapRows => (1, 2),
            Corruption::SwapColumns => (2, 1),
        }
    }
}

/// One probe: a fresh table of `columns` columns, `rows` rows of `row_bytes` bytes, written with
/// `strategy` inside one Worker invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeRequest {
    /// Names the probe's table (`t_<probe_id>`); unique within a run.
    pub probe_id: u64,
    pub strategy: Strategy,
    pub columns: usize,
    pub rows: usize,
    /// Payload bytes per row (see [`crate::generate`]).
    pub row_bytes: usize,
    /// Seed of the row generator.
    pub seed: u64,
    /// Overrides the planner's rows per statement (not for per-row and batched-rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_per_statement: Option<usize>,
    /// Caps the bytes of one `json` statement's JSON payload below the documented string limit
    /// ([`crate::limits::MAX_STRING_BYTES`], the default); `json` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_payload_bytes: Option<usize>,
    #[serde(default)]
    pub text: TextMix,
    /// Secondary indexes created with the table, before the rows are written: index `k` is on
    /// column `k`.
    #[serde(default)]
    pub indexes: usize,
    /// Debugging the harness only: corrupt one row after the writes so that reconciliation
    /// must fail. Never set by an experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug_corrupt: Option<Corruption>,
    /// Debugging the harness only (`--debug-slow`): after the writes, still inside the timed
    /// window, the target waits this percentage of the time the window had taken so far, so
    /// the window comes out that much longer: a known slowdown for the comparisons to catch.
    /// Never set by an experiment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug_slow_percent: Option<u32>,
}

/// Most `debug_slow_percent` a probe may ask for: ten times its own time.
pub const MAX_DEBUG_SLOW_PERCENT: u32 = 1_000;

impl ProbeRequest {
    /// How long to wait inside the timed window, in ms, after writes that took `elapsed_ms`:
    /// `debug_slow_percent` of it (none without one).
    pub fn debug_slow_ms(&self, elapsed_ms: f64) -> f64 {
        self.debug_slow_percent
            .map_or(0.0, |percent| elapsed_ms * f64::from(percent) / 100.0)
    }
}

/// A probe request that cannot be performed, naming the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for ProbeError {}

impl ProbeRequest {
    /// The table this probe writes.
    pub fn table(&self) -> String {
        format!("t_{}", self.probe_id)
    }

    /// Checks every field against what a probe can mean; the first problem wins.
    pub fn validate(&self) -> Result<(), ProbeError> {
        let fail = |field, message: String| Err(ProbeError { field, message });
        if self.columns == 0 || self.columns > MAX_PROBE_COLUMNS {
            return fail(
                "columns",
                format!("must be 1 to {MAX_PROBE_COLUMNS}, got {}", self.columns),
            );
        }
        if self.rows == 0 || self.rows > MAX_PROBE_ROWS {
            return fail(
                "rows",
                format!("must be 1 to {MAX_PROBE_ROWS}, got {}", self.rows),
            );
        }
        if self.row_bytes == 0 {
            return fail(
                "row_bytes",
                "must be at least 1: a row without payload measures nothing".into(),
            );
        }
        // Below the minimum the generator would make rows bigger than asked: integers take
        // their 8 bytes whatever `row_bytes` says.
        let min_row_bytes = RowGenerator::min_row_bytes(self.columns);
        if self.row_bytes < min_row_bytes {
            return fail(
                "row_bytes",
                format!(
                    "{} columns take at least {min_row_bytes} bytes ({} integer columns of \
                     {INTEGER_BYTES} bytes each), got {}: rows would be written at \
                     {min_row_bytes} bytes",
                    self.columns,
                    integer_columns(self.columns),
                    self.row_bytes
                ),
            );
        }
        if self.rows.saturating_mul(self.row_bytes) > MAX_PROBE_PAYLOAD_BYTES {
            return fail(
                "row_bytes",
                format!(
                    "rows × row bytes = {} exceeds the {MAX_PROBE_PAYLOAD_BYTES}-byte payload cap of one probe",
                    self.rows.saturating_mul(self.row_bytes)
                ),
            );
        }
        match (self.strategy, self.rows_per_statement) {
            (strategy, Some(_)) if strategy.one_row_per_statement() => {
                return fail(
                    "rows_per_statement",
                    format!("{strategy} writes one row per statement; leave it unset"),
                );
            }
            (_, Some(0)) => return fail("rows_per_statement", "must be at least 1".into()),
            _ => {}
        }
        match (self.strategy, self.json_payload_bytes) {
            (Strategy::Json, Some(bytes)) if bytes == 0 || bytes > MAX_STRING_BYTES => {
                return fail(
                    "json_payload_bytes",
                    format!(
                        "must be 1 to the documented {MAX_STRING_BYTES}-byte string limit, got \
                         {bytes}: the planner never plans past a documented limit"
                    ),
                );
            }
            (Strategy::Json, _) | (_, None) => {}
            (strategy, Some(_)) => {
                return fail(
                    "json_payload_bytes",
                    format!("{strategy} binds no JSON payload; leave it unset"),
                );
            }
        }
        for (field, share) in [
            ("text.escape-share", self.text.escape_share),
            ("text.nul-share", self.text.nul_share),
            ("text.non-ascii-share", self.text.non_ascii_share),
        ] {
            if !(0.0..=1.0).contains(&share) {
                return fail(field, format!("must be between 0 and 1, got {share}"));
            }
        }
        if let Some(percent) = self.debug_slow_percent
            && !(1..=MAX_DEBUG_SLOW_PERCENT).contains(&percent)
        {
            return fail(
                "debug_slow_percent",
                format!("must be 1 to {MAX_DEBUG_SLOW_PERCENT}, got {percent}"),
            );
        }
        if self.indexes > self.columns.min(MAX_PROBE_INDEXES) {
            return fail(
                "indexes",
                format!(
                    "must be 0 to the column count ({}) and at most {MAX_PROBE_INDEXES}, got {}",
                    self.columns, self.indexes
                ),
            );
        }
        if let Some(corruption) = self.debug_corrupt {
            let (columns, rows) = corruption.needs();
            if self.columns < columns || self.rows < rows {
                return fail(
                    "debug_corrupt",
                    format!(
                        "`{}` needs {columns} columns and {rows} rows or more, but the probe has \
                         {} columns and {} rows",
                        corruption.name(),
                        self.columns,
                        self.rows
                    ),
                );
            }
        }
        Ok(())
    }
}

/// How a probe ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every statement succeeded.
    Ok,
    /// D1 or the Workers runtime refused a statement for a known reason (see `refusal`): a
    /// limit, or a transient refusal such as D1's overload ([`RefusalKind::d1_advice`]).
    Refused,
    /// Anything else went wrong; `error` has the text.
    Error,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Ok, Outcome::Refused, Outcome::Error];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused => "refused",
            Outcome::Error => "error",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Outcome {
    type Err = String;
    /// The outcome [`Outcome::name`] names, as results.csv and rungs.csv hold it.
    fn from_str(s: &str) -> Result<Self, String> {
        Outcome::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| format!("unknown outcome `{s}`; expected one of: ok, refused, error"))
    }
}

/// What `POST /setup` answers: whether the probe's table (and its indexes) could be created.
/// A refusal here (a table of more columns than D1 allows) is data, like any other refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupResult {
    pub probe_id: u64,
    /// D1's error text when the setup batch failed, verbatim.
    pub error: Option<String>,
}

/// What `POST /verify` answers, from an invocation of its own after the probe's: whether the
/// table exists, the rows present and their checksum, computed in SQL by the target just before
/// it drops the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyResult {
    pub probe_id: u64,
    pub table_exists: bool,
    /// Rows counted in the table (`SELECT COUNT(*)`); 0 when there is no table.
    pub rows_present: usize,
    /// The content checksum of the rows present; `None` when there is no table.
    pub checksum: Option<Checksum>,
    /// Where D1 ran the verification's queries, when it says (production does; local D1 does
    /// not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_by: Option<ServedBy>,
}

/// What the Worker measured for one probe, inside one invocation. Its clocks, in the order they
/// run: [`ProbeResult::prepare_ms`], [`ProbeResult::handover_ms`], then the window of
/// [`ProbeResult::inside_ms`], whose parts are, in order, [`ProbeResult::bind_ms`],
/// [`ProbeResult::call_ms`] (D1's own share of it is [`ProbeResult::d1_ms`]) and
/// [`ProbeResult::read_ms`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeResult {
    pub probe_id: u64,
    pub strategy: Strategy,
    pub columns: usize,
    /// Payload bytes of every row as generated.
    pub row_bytes: usize,
    /// Rows D1 (or SQLite) said the INSERTs changed, summed over the statements it reported
    /// done (D1's `meta.changes`; a statement that reports none counts nothing): what must be
    /// present afterwards (counted by `POST /verify`, in an invocation of its own). Not taken
    /// from the plan, so reconciliation can hold the two against each other.
    pub rows_expected: usize,
    /// INSERT statements the plan holds.
    pub statements_planned: usize,
    /// INSERT statements handed to D1 (fewer than planned when a per-row probe stops early).
    pub statements_sent: usize,
    /// D1 API calls made for the INSERTs (a `db.batch()` is one call).
    pub d1_calls: usize,
    /// Rows in the largest INSERT statement.
    pub rows_per_statement: usize,
    /// UTF-8 bytes of the longest INSERT statement's SQL text.
    pub max_statement_bytes: usize,
    /// Milliseconds generating the rows and building the statements (SQL text, and the values
    /// to bind encoded for JavaScript), before the inside clock starts. `None` from a target
    /// that does not say.
    #[serde(default)]
    pub prepare_ms: Option<f64>,
    /// Milliseconds of the window around the writes: handing every statement and its values to
    /// the binding ([`ProbeResult::bind_ms`]), then the D1 calls until their answers arrive,
    /// then reading those answers (on the sqlite target: running the statements). The
    /// Worker's clock only advances on I/O in production (locally it runs on), so there the
    /// window's start reads the time of the last I/O before it, and the preparation falls in.
    pub inside_ms: f64,
    /// Before the window, after `prepare_ms`: milliseconds making the values JavaScript values
    /// (the Rust Worker: its values, payloads or script and the SQL texts handed over, one
    /// `JSON.parse` of the values; the JavaScript Worker: its one `JSON.parse` of the request).
    /// Outside the window so that both Workers' windows time the same work: this part is the
    /// instrument's own cost, reported beside it. `None` from a target that does not say.
    #[serde(default)]
    pub handover_ms: Option<f64>,
    /// The window's first part: milliseconds preparing each statement on the binding and
    /// binding its values (`prepare` and `bind`), before the first D1 call. `None` from a
    /// target that does not say.
    #[serde(default)]
    pub bind_ms: Option<f64>,
    /// The window's second part: milliseconds from the first D1 call until its last answer
    /// arrived. `None` from a target that does not say.
    #[serde(default)]
    pub call_ms: Option<f64>,
    /// The window's last part: milliseconds reading D1's answers (`meta.changes` and
    /// `meta.duration` of each). `None` from a target that does not say.
    #[serde(default)]
    pub read_ms: Option<f64>,
    /// Milliseconds D1 reported in `meta.duration`, summed over the INSERT statements; `None`
    /// when D1 answered none, or one without a duration (never a made-up 0).
    pub d1_ms: Option<f64>,
    pub outcome: Outcome,
    /// The limit D1 refused on, or `other` for an error text no rule knows.
    pub refusal: Option<RefusalKind>,
    /// D1's error text, kept verbatim.
    pub error: Option<String>,
}

/// Where D1 says it ran a query: `meta.served_by_region`, `meta.served_by_colo` and
/// `meta.served_by_primary`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServedBy {
    /// The region of the database instance (`WEUR`, `ENAM`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The data centre (an airport code such as `AMS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colo: Option<String>,
    /// Whether the primary answered (`false`: a read replica did, which only a read in a D1
    /// session of a database with read replication can be).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<bool>,
}

impl ServedBy {
    /// What D1 reported, or `None` when it reported none of the three.
    pub fn reported(
        region: Option<String>,
        colo: Option<String>,
        primary: Option<bool>,
    ) -> Option<ServedBy> {
        (region.is_some() || colo.is_some() || primary.is_some()).then_some(ServedBy {
            region,
            colo,
            primary,
        })
    }
}

#[cfg(test)]
mod tests;
