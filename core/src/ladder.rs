//! Ladders: the rung a ladder sends to a target, the SQL every rung runs, and what it answers.
//!
//! A ladder climbs one parameter (queries per invocation, statements per batch, statement
//! bytes, ...) one rung at a time until D1 refuses. Each rung runs in three steps, each its own
//! Worker invocation so that only the measured calls count against the invocation's budget:
//! [`Step::Prepare`] creates the rung's table, [`Step::Climb`] sends the measured calls,
//! [`Step::Finish`] counts the rows present and drops the table. The SQL of all three is planned
//! here, so the Worker and the in-process SQLite target run exactly the same statements.
//!
//! One file past 600 lines on purpose: a ladder is a kind, its request's validation, its plan
//! and its answer, and a new ladder touches all four in one place ([`plan`] is one `match` over
//! the kinds). Split it into `ladder/` by those four parts when the next ladder is added.

use std::fmt::{self, Write};

use serde::{Deserialize, Serialize};

use crate::generate::{ColumnType, Value, column_type};
use crate::limits;
use crate::probe::Outcome;
use crate::refusal::RefusalKind;
use crate::sql::{Statement, create_table};

/// The ladders d1bench knows: each climbs one parameter towards one documented limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LadderKind {
    /// K one-row INSERTs, each its own D1 call, in one invocation.
    QueryBudget,
    /// N one-row INSERTs sent one at a time, in one `db.batch()`, or in several batches.
    BatchAccounting,
    /// N one-row INSERTs in one `db.batch()`.
    BatchCeiling,
    /// One bound INSERT of R rows × C columns (C held fixed).
    ParamCeiling,
    /// One INSERT whose SQL text is exactly N UTF-8 bytes.
    StatementLength,
    /// CREATE TABLE with N columns, then one row into it.
    Columns,
    /// One INSERT of one bound text value of N bytes.
    RowSize,
    /// One INSERT of `max(1, 2, ..., N)`.
    FunctionArgs,
    /// One INSERT of `subject LIKE pattern` with a pattern of N bytes.
    LikePattern,
    /// One INSERT of a recursive CTE's count, sized to run about N milliseconds.
    QueryDuration,
}

impl LadderKind {
    pub const ALL: [LadderKind; 10] = [
        LadderKind::QueryBudget,
        LadderKind::BatchAccounting,
        LadderKind::BatchCeiling,
        LadderKind::ParamCeiling,
        LadderKind::StatementLength,
        LadderKind::Columns,
        LadderKind::RowSize,
        LadderKind::FunctionArgs,
        LadderKind::LikePattern,
        LadderKind::QueryDuration,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LadderKind::QueryBudget => "query-budget",
            LadderKind::BatchAccounting => "batch-accounting",
            LadderKind::BatchCeiling => "batch-ceiling",
            LadderKind::ParamCeiling => "param-ceiling",
            LadderKind::StatementLength => "statement-length",
            LadderKind::Columns => "columns",
            LadderKind::RowSize => "row-size",
            LadderKind::FunctionArgs => "function-args",
            LadderKind::LikePattern => "like-pattern",
            LadderKind::QueryDuration => "query-duration",
        }
    }

    /// What the rung's value counts, with its unit.
    pub fn unit(self) -> &'static str {
        match self {
            LadderKind::QueryBudget => "queries",
            LadderKind::BatchAccounting | LadderKind::BatchCeiling => "statements",
            LadderKind::ParamCeiling => "rows per statement",
            LadderKind::StatementLength => "statement bytes",
            LadderKind::Columns => "columns",
            LadderKind::RowSize => "value bytes",
            LadderKind::FunctionArgs => "arguments",
            LadderKind::LikePattern => "pattern bytes",
            LadderKind::QueryDuration => "ms",
        }
    }

    /// The documented limit this ladder looks for, as the parity table names it.
    pub fn limit(self) -> &'static str {
        match self {
            LadderKind::QueryBudget => "queries per Worker invocation",
            LadderKind::BatchAccounting => "what a `db.batch()` costs of the query budget",
            LadderKind::BatchCeiling => "statements per `db.batch()`",
            LadderKind::ParamCeiling => "bound parameters per statement",
            LadderKind::StatementLength => "SQL statement length",
            LadderKind::Columns => "columns per table",
            LadderKind::RowSize => "string, BLOB or row size",
            LadderKind::FunctionArgs => "arguments per SQL function",
            LadderKind::LikePattern => "LIKE/GLOB pattern length",
            LadderKind::QueryDuration => "query duration",
        }
    }

    /// The documented value, in this ladder's unit when it has one.
    pub fn documented(self) -> Documented {
        let exact = |value: usize, text: &'static str| Documented {
            value: Some(value),
            text,
        };
        match self {
            LadderKind::QueryBudget => exact(
                limits::QUERIES_PER_INVOCATION_PAID,
                "1,000 (Paid) / 50 (Free)",
            ),
            LadderKind::BatchAccounting => Documented {
                value: None,
                text: "not stated",
            },
            LadderKind::BatchCeiling => Documented {
                value: None,
                text: "no count; the batch must finish in time",
            },
            LadderKind::ParamCeiling => exact(limits::MAX_BOUND_PARAMETERS, "100"),
            LadderKind::StatementLength => exact(limits::MAX_STATEMENT_BYTES, "100,000 bytes"),
            LadderKind::Columns => exact(limits::MAX_COLUMNS, "100"),
            LadderKind::RowSize => exact(limits::MAX_ROW_BYTES, "2,000,000 bytes"),
            LadderKind::FunctionArgs => exact(limits::MAX_FUNCTION_ARGS, "32"),
            LadderKind::LikePattern => exact(limits::MAX_LIKE_PATTERN_BYTES, "50 bytes"),
            LadderKind::QueryDuration => exact(limits::MAX_QUERY_DURATION_MS, "30 s"),
        }
    }

    /// The refusal a climb past the documented limit should meet. A batch and a long query meet
    /// D1's clock, not the Worker's: a climb stopped by the Worker's CPU time or by D1's queue
    /// was stopped by something else.
    pub fn expected_refusal(self) -> RefusalKind {
        match self {
            LadderKind::QueryBudget | LadderKind::BatchAccounting => RefusalKind::QueryBudget,
            LadderKind::BatchCeiling | LadderKind::QueryDuration => RefusalKind::QueryTimeout,
            LadderKind::ParamCeiling => RefusalKind::TooManyVariables,
            LadderKind::StatementLength => RefusalKind::StatementTooLong,
            LadderKind::Columns => RefusalKind::TooManyColumns,
            LadderKind::RowSize => RefusalKind::StringOrBlobTooBig,
            LadderKind::FunctionArgs => RefusalKind::TooManyFunctionArgs,
            LadderKind::LikePattern => RefusalKind::LikePatternTooComplex,
        }
    }

    /// Whether the limit belongs to SQLite itself, so the in-process SQLite target can climb it.
    /// The query budget and the batch limits belong to the Workers runtime and D1's service.
    pub fn runs_on_sqlite(self) -> bool {
        !matches!(
            self,
            LadderKind::QueryBudget
                | LadderKind::BatchAccounting
                | LadderKind::BatchCeiling
                | LadderKind::QueryDuration
        )
    }

    /// Largest value a rung may ask for: keeps one invocation inside a Worker's memory and time.
    pub fn max_value(self) -> usize {
        match self {
            LadderKind::QueryBudget => 100_000,
            LadderKind::BatchAccounting => 100_000,
            LadderKind::BatchCeiling => 1_000_000,
            LadderKind::ParamCeiling => 100_000,
            LadderKind::StatementLength => 16 * 1024 * 1024,
            LadderKind::Columns => 32_767,
            LadderKind::RowSize => 64 * 1024 * 1024,
            LadderKind::FunctionArgs => 10_000,
            LadderKind::LikePattern => 1_000_000,
            LadderKind::QueryDuration => 600_000,
        }
    }

    /// Smallest value a rung may ask for.
    pub fn min_value(self) -> usize {
        match self {
            // `max()` with one argument is the aggregate, not the scalar function.
            LadderKind::FunctionArgs => 2,
            LadderKind::QueryDuration => 0,
            // Above the statement's own head and tail at any rung id.
            LadderKind::StatementLength => 64,
            _ => 1,
        }
    }
}

impl fmt::Display for LadderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LadderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        LadderKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = LadderKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown ladder `{s}`; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}

/// A documented limit: its value in the ladder's unit (when it is one number) and as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Documented {
    pub value: Option<usize>,
    pub text: &'static str,
}

/// How batch-accounting sends its statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallMode {
    /// Each statement its own D1 call.
    OneAtATime,
    /// All statements in one `db.batch()`.
    OneBatch,
    /// The statements split evenly over `batches` `db.batch()` calls.
    Batches,
}

impl CallMode {
    pub fn name(self) -> &'static str {
        match self {
            CallMode::OneAtATime => "one-at-a-time",
            CallMode::OneBatch => "one-batch",
            CallMode::Batches => "batches",
        }
    }
}

/// What the padding text of statement-length and like-pattern is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextKind {
    /// One byte per character.
    Ascii,
    /// Three bytes per character (`日`), so bytes and characters part ways.
    Multibyte,
}

impl TextKind {
    pub fn name(self) -> &'static str {
        match self {
            TextKind::Ascii => "ascii",
            TextKind::Multibyte => "multibyte",
        }
    }
}

/// What a ladder holds fixed while its value climbs; which fields a ladder needs is checked by
/// [`RungRequest::validate`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Held {
    /// Columns of the table (param-ceiling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<usize>,
    /// How the statements are sent (batch-accounting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<CallMode>,
    /// Number of `db.batch()` calls (batch-accounting with mode `batches`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batches: Option<usize>,
    /// What padding text is made of (statement-length, like-pattern; default ASCII).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextKind>,
    /// Recursive-CTE steps per millisecond, measured by a calibration rung (query-duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_ms: Option<u64>,
}

impl Held {
    /// `columns=8, mode=one-batch`: how the CSV and the summary name a climb.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.columns {
            parts.push(format!("columns={c}"));
        }
        if let Some(m) = self.mode {
            parts.push(format!("mode={}", m.name()));
        }
        if let Some(b) = self.batches {
            parts.push(format!("batches={b}"));
        }
        if let Some(t) = self.text {
            parts.push(format!("text={}", t.name()));
        }
        if let Some(s) = self.steps_per_ms {
            parts.push(format!("steps-per-ms={s}"));
        }
        parts.join(", ")
    }
}

/// Largest number of recursive-CTE steps per millisecond a calibration may report.
pub const MAX_STEPS_PER_MS: u64 = 1_000_000;

/// One rung: the ladder, the value it tries, and what is held fixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RungRequest {
    /// Names the rung's table (`r_<rung_id>`); unique within a run.
    pub rung_id: u64,
    pub ladder: LadderKind,
    /// The climbed parameter, in [`LadderKind::unit`].
    pub value: usize,
    #[serde(default)]
    pub held: Held,
}

/// Which step of a rung a request asks for; each is its own invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Create the rung's table (nothing for the columns ladder, whose CREATE is measured).
    Prepare,
    /// Send the measured calls.
    Climb,
    /// Count the rows present and drop the table.
    Finish,
}

/// The body of `POST /rung`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RungCall {
    pub step: Step,
    pub rung: RungRequest,
}

/// A rung that cannot be planned, naming the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RungError {
    pub field: &'static str,
    pub message: String,
}

impl fmt::Display for RungError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for RungError {}

impl RungRequest {
    pub fn table(&self) -> String {
        format!("r_{}", self.rung_id)
    }

    /// Checks the value and that exactly the held fields this ladder uses are set.
    pub fn validate(&self) -> Result<(), RungError> {
        let fail = |field, message: String| Err(RungError { field, message });
        let (lo, hi) = (self.ladder.min_value(), self.ladder.max_value());
        if !(lo..=hi).contains(&self.value) {
            return fail(
                "value",
                format!(
                    "{} takes {lo} to {hi} {}, got {}",
                    self.ladder,
                    self.ladder.unit(),
                    self.value
                ),
            );
        }
        let held = &self.held;
        let uses = |field: &str| -> bool {
            matches!(
                (self.ladder, field, held.mode),
                (LadderKind::ParamCeiling, "columns", _)
                    | (LadderKind::BatchAccounting, "mode", _)
                    | (
                        LadderKind::BatchAccounting,
                        "batches",
                        Some(CallMode::Batches)
                    )
                    | (LadderKind::StatementLength, "text", _)
                    | (LadderKind::LikePattern, "text", _)
                    | (LadderKind::QueryDuration, "steps-per-ms", _)
            )
        };
        let set = [
            ("columns", held.columns.is_some()),
            ("mode", held.mode.is_some()),
            ("batches", held.batches.is_some()),
            ("text", held.text.is_some()),
            ("steps-per-ms", held.steps_per_ms.is_some()),
        ];
        for (field, is_set) in set {
            let optional = field == "text";
            if is_set && !uses(field) {
                return fail(
                    held_field(field),
                    format!(
                        "{} does not hold `{field}` fixed; leave it unset",
                        self.ladder
                    ),
                );
            }
            if !is_set && uses(field) && !optional {
                return fail(
                    held_field(field),
                    format!("{} needs `{field}`", self.ladder),
                );
            }
        }
        if let Some(c) = held.columns
            && !(1..=limits::MAX_COLUMNS).contains(&c)
        {
            return fail(
                "held.columns",
                format!("must be 1 to {}, got {c}", limits::MAX_COLUMNS),
            );
        }
        if let Some(b) = held.batches
            && !(1..=self.value).contains(&b)
        {
            return fail(
                "held.batches",
                format!("must be 1 to the {} statements, got {b}", self.value),
            );
        }
        if let Some(s) = held.steps_per_ms
            && !(1..=MAX_STEPS_PER_MS).contains(&s)
        {
            return fail(
                "held.steps-per-ms",
                format!("must be 1 to {MAX_STEPS_PER_MS}, got {s}"),
            );
        }
        if self.ladder == LadderKind::ParamCeiling {
            let params = self.value.saturating_mul(held.columns.unwrap_or(1));
            if params > MAX_RUNG_PARAMETERS {
                return fail(
                    "value",
                    format!(
                        "{} rows × {} columns = {params} parameters; a rung binds at most {MAX_RUNG_PARAMETERS}",
                        self.value,
                        held.columns.unwrap_or(1)
                    ),
                );
            }
        }
        Ok(())
    }
}

fn held_field(field: &str) -> &'static str {
    match field {
        "columns" => "held.columns",
        "mode" => "held.mode",
        "batches" => "held.batches",
        "text" => "held.text",
        _ => "held.steps-per-ms",
    }
}

/// Most values one param-ceiling rung binds (SQLite's own compile-time ceiling is 32,766).
pub const MAX_RUNG_PARAMETERS: usize = 32_766;

/// One D1 call of a rung: a single statement (`.run()`) or a `db.batch()`.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    One(Statement),
    Batch(Vec<Statement>),
}

impl Call {
    pub fn statements(&self) -> &[Statement] {
        match self {
            Call::One(s) => std::slice::from_ref(s),
            Call::Batch(s) => s,
        }
    }

    /// Rows the call writes when it succeeds (a failed batch writes none).
    pub fn rows(&self) -> usize {
        self.statements().iter().map(|s| s.rows).sum()
    }
}

/// Everything a rung sends, step by step.
#[derive(Debug, Clone, PartialEq)]
pub struct RungPlan {
    pub table: String,
    /// Step [`Step::Prepare`]: run as one batch (empty for the columns ladder).
    pub prepare: Vec<String>,
    /// Step [`Step::Climb`]: the measured calls, in order; the first failure ends the step.
    pub calls: Vec<Call>,
    /// Step [`Step::Finish`]: answers one column `n`, 1 when the table exists.
    pub exists: String,
    /// Step [`Step::Finish`] when the table exists: answers one column `n`, the rows present.
    pub count: String,
    /// Step [`Step::Finish`], last.
    pub teardown: String,
}

impl RungPlan {
    pub fn statements(&self) -> usize {
        self.calls.iter().map(|c| c.statements().len()).sum()
    }

    /// UTF-8 bytes of the longest measured statement.
    pub fn max_statement_bytes(&self) -> usize {
        self.all_statements()
            .map(|s| s.sql.len())
            .max()
            .unwrap_or(0)
    }

    /// Characters of the longest measured statement (differs from bytes for multi-byte text).
    pub fn max_statement_chars(&self) -> usize {
        self.all_statements()
            .max_by_key(|s| s.sql.len())
            .map_or(0, |s| s.sql.chars().count())
    }

    /// Rows the rung writes when every call succeeds.
    pub fn rows(&self) -> usize {
        self.calls.iter().map(Call::rows).sum()
    }

    /// Statements and rows of the first `calls` calls: what completed calls acknowledge.
    pub fn completed(&self, calls: usize) -> (usize, usize) {
        self.calls[..calls.min(self.calls.len())]
            .iter()
            .fold((0, 0), |(s, r), c| (s + c.statements().len(), r + c.rows()))
    }

    fn all_statements(&self) -> impl Iterator<Item = &Statement> {
        self.calls.iter().flat_map(|c| c.statements())
    }
}

fn statement(sql: String, rows: usize) -> Statement {
    Statement {
        sql,
        params: Vec::new(),
        rows,
    }
}

/// `INSERT INTO r_<id> (c0) VALUES (<i>)`: the cheapest statement that leaves a row to count.
fn one_row_insert(table: &str, i: usize) -> Statement {
    statement(format!("INSERT INTO {table} (c0) VALUES ({i})"), 1)
}

/// The head and tail around statement-length's padding.
fn statement_length_parts(table: &str) -> (String, &'static str) {
    (format!("INSERT INTO {table} (c0) VALUES ('"), "')")
}

/// Exactly `bytes` UTF-8 bytes of text: `日` (3 bytes) for multi-byte text, then `x` for the
/// remainder; all `x` for ASCII. Never a quote, so it needs no escaping.
pub fn padding(bytes: usize, text: TextKind) -> String {
    match text {
        TextKind::Ascii => "x".repeat(bytes),
        TextKind::Multibyte => {
            let mut s = "日".repeat(bytes / 3);
            s.push_str(&"x".repeat(bytes % 3));
            s
        }
    }
}

/// Plans a rung; call [`RungRequest::validate`] first (a plan of an invalid rung may panic).
pub fn plan(rung: &RungRequest) -> RungPlan {
    let table = rung.table();
    let n = rung.value;
    let held = rung.held;
    let integer_table = format!("CREATE TABLE {table} (c0 INTEGER)");
    let text_table = format!("CREATE TABLE {table} (c0 TEXT)");
    let (prepare, calls) = match rung.ladder {
        LadderKind::QueryBudget => (
            vec![integer_table],
            (0..n)
                .map(|i| Call::One(one_row_insert(&table, i)))
                .collect(),
        ),
        LadderKind::BatchAccounting => {
            let inserts: Vec<Statement> = (0..n).map(|i| one_row_insert(&table, i)).collect();
            let calls = match held.mode.unwrap_or(CallMode::OneBatch) {
                CallMode::OneAtATime => inserts.into_iter().map(Call::One).collect(),
                CallMode::OneBatch => vec![Call::Batch(inserts)],
                CallMode::Batches => split_evenly(inserts, held.batches.unwrap_or(1))
                    .into_iter()
                    .map(Call::Batch)
                    .collect(),
            };
            (vec![integer_table], calls)
        }
        LadderKind::BatchCeiling => (
            vec![integer_table],
            vec![Call::Batch(
                (0..n).map(|i| one_row_insert(&table, i)).collect(),
            )],
        ),
        LadderKind::ParamCeiling => {
            let columns = held.columns.unwrap_or(1);
            let mut sql = format!("INSERT INTO {table} (");
            for j in 0..columns {
                if j > 0 {
                    sql.push(',');
                }
                write!(sql, "c{j}").unwrap();
            }
            sql.push_str(") VALUES ");
            let mut params = Vec::with_capacity(n * columns);
            for i in 0..n {
                sql.push_str(if i == 0 { "(" } else { ",(" });
                for j in 0..columns {
                    sql.push_str(if j == 0 { "?" } else { ",?" });
                    params.push(match column_type(j) {
                        ColumnType::Integer => Value::Integer(i as i64),
                        ColumnType::Text => Value::Text(format!("{i}.{j}")),
                    });
                }
                sql.push(')');
            }
            (
                vec![create_table(&table, columns)],
                vec![Call::One(Statement {
                    sql,
                    params,
                    rows: n,
                })],
            )
        }
        LadderKind::StatementLength => {
            let (head, tail) = statement_length_parts(&table);
            let pad = padding(
                n - head.len() - tail.len(),
                held.text.unwrap_or(TextKind::Ascii),
            );
            (
                vec![text_table],
                vec![Call::One(statement(format!("{head}{pad}{tail}"), 1))],
            )
        }
        LadderKind::Columns => {
            let mut insert = format!("INSERT INTO {table} VALUES (");
            for j in 0..n {
                if j > 0 {
                    insert.push(',');
                }
                match column_type(j) {
                    ColumnType::Integer => write!(insert, "{j}").unwrap(),
                    ColumnType::Text => insert.push_str("'x'"),
                }
            }
            insert.push(')');
            (
                Vec::new(),
                vec![
                    Call::One(statement(create_table(&table, n), 0)),
                    Call::One(statement(insert, 1)),
                ],
            )
        }
        LadderKind::RowSize => (
            vec![text_table],
            vec![Call::One(Statement {
                sql: format!("INSERT INTO {table} (c0) VALUES (?)"),
                params: vec![Value::Text("x".repeat(n))],
                rows: 1,
            })],
        ),
        LadderKind::FunctionArgs => {
            let args: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
            (
                vec![integer_table],
                vec![Call::One(statement(
                    format!("INSERT INTO {table} (c0) VALUES (max({}))", args.join(", ")),
                    1,
                ))],
            )
        }
        LadderKind::LikePattern => {
            // The subject is the pattern without its final `%`, so the pattern matches.
            let text = held.text.unwrap_or(TextKind::Ascii);
            let subject = padding(n - 1, text);
            (
                vec![integer_table],
                vec![Call::One(statement(
                    format!("INSERT INTO {table} (c0) VALUES ('{subject}' LIKE '{subject}%')"),
                    1,
                ))],
            )
        }
        LadderKind::QueryDuration => {
            let steps = (n as u64)
                .saturating_mul(held.steps_per_ms.unwrap_or(1))
                .max(1);
            (
                vec![integer_table],
                vec![Call::One(statement(
                    format!(
                        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {steps}) \
                         INSERT INTO {table} (c0) SELECT count(*) FROM c"
                    ),
                    1,
                ))],
            )
        }
    };
    RungPlan {
        exists: format!(
            "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '{table}'"
        ),
        count: format!("SELECT COUNT(*) AS n FROM {table}"),
        teardown: format!("DROP TABLE IF EXISTS {table}"),
        table,
        prepare,
        calls,
    }
}

/// `items` in `parts` consecutive groups whose sizes differ by at most one.
fn split_evenly<T>(items: Vec<T>, parts: usize) -> Vec<Vec<T>> {
    let parts = parts.max(1);
    let (base, extra) = (items.len() / parts, items.len() % parts);
    let mut out = Vec::with_capacity(parts);
    let mut rest = items.into_iter();
    for k in 0..parts {
        out.push(rest.by_ref().take(base + usize::from(k < extra)).collect());
    }
    out
}

/// What step [`Step::Prepare`] answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrepareResult {
    pub rung_id: u64,
    /// The target's error text when the table could not be created.
    pub error: Option<String>,
}

/// What step [`Step::Climb`] measured, inside one invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RungResult {
    pub rung_id: u64,
    /// D1 calls the plan holds.
    pub calls_planned: usize,
    /// Statements the plan holds.
    pub statements_planned: usize,
    /// UTF-8 bytes of the longest statement as the target planned it.
    pub max_statement_bytes: usize,
    /// D1 calls that succeeded before the first failure (all of them when none failed).
    pub calls_completed: usize,
    /// Statements in the calls that succeeded.
    pub statements_completed: usize,
    /// Rows of the calls that succeeded: what must be present afterwards.
    pub rows_acknowledged: usize,
    /// Milliseconds on the target's clock around the measured calls.
    pub inside_ms: f64,
    /// Milliseconds D1 reported in `meta.duration`, summed over the succeeded statements
    /// (0 where the target has no such clock).
    pub d1_ms: f64,
    pub outcome: Outcome,
    /// The limit that refused, or `other` for an error text no rule knows.
    pub refusal: Option<RefusalKind>,
    /// The target's error text, verbatim.
    pub error: Option<String>,
}

/// What step [`Step::Finish`] found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishResult {
    pub rung_id: u64,
    /// Whether the rung's table existed (false after a refused CREATE TABLE).
    pub table_exists: bool,
    /// Rows counted in the table (0 when it did not exist).
    pub rows_present: usize,
    /// The target's error text when counting or dropping failed.
    pub error: Option<String>,
}

/// Tallies the calls of a climb as they complete; one definition for every target.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    calls_completed: usize,
    d1_ms: f64,
    error: Option<String>,
}

impl Tally {
    /// A call succeeded; `d1_ms` is D1's duration summed over its statements.
    pub fn succeeded(&mut self, d1_ms: f64) {
        self.calls_completed += 1;
        self.d1_ms += d1_ms;
    }

    /// A call failed with `text`; the climb stops here.
    pub fn failed(&mut self, text: String) {
        self.error = Some(text);
    }

    pub fn into_result(self, rung_id: u64, plan: &RungPlan, inside_ms: f64) -> RungResult {
        let (statements_completed, rows_acknowledged) = plan.completed(self.calls_completed);
        let (outcome, refusal) = classify(self.error.as_deref());
        RungResult {
            rung_id,
            calls_planned: plan.calls.len(),
            statements_planned: plan.statements(),
            max_statement_bytes: plan.max_statement_bytes(),
            calls_completed: self.calls_completed,
            statements_completed,
            rows_acknowledged,
            inside_ms,
            d1_ms: self.d1_ms,
            outcome,
            refusal,
            error: self.error,
        }
    }
}

/// The outcome of an error text (or of none): a text [`RefusalKind::classify`] knows is a
/// refusal (a limit, or a transient refusal such as D1's overload), anything else an error.
pub fn classify(error: Option<&str>) -> (Outcome, Option<RefusalKind>) {
    match error {
        None => (Outcome::Ok, None),
        Some(text) => match RefusalKind::classify(text) {
            RefusalKind::Other => (Outcome::Error, Some(RefusalKind::Other)),
            kind => (Outcome::Refused, Some(kind)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rung(ladder: LadderKind, value: usize) -> RungRequest {
        RungRequest {
            rung_id: 7,
            ladder,
            value,
            held: Held::default(),
        }
    }

    fn with(mut r: RungRequest, f: impl FnOnce(&mut Held)) -> RungRequest {
        f(&mut r.held);
        r
    }

    #[test]
    fn every_ladder_name_parses_back_and_serializes_the_same() {
        for kind in LadderKind::ALL {
            assert_eq!(kind.name().parse::<LadderKind>().unwrap(), kind);
            assert_eq!(
                serde_json::to_string(&kind).unwrap(),
                format!("\"{}\"", kind.name())
            );
        }
        let err = "query-budgets".parse::<LadderKind>().unwrap_err();
        assert!(err.contains("query-budget, batch-accounting"), "{err}");
    }

    #[test]
    fn query_budget_is_k_separate_one_row_calls() {
        let plan = plan(&rung(LadderKind::QueryBudget, 1001));
        assert_eq!(plan.calls.len(), 1001);
        assert!(plan.calls.iter().all(|c| matches!(c, Call::One(_))));
        assert_eq!(plan.rows(), 1001);
        assert_eq!(plan.completed(1000), (1000, 1000));
        assert_eq!(plan.prepare, ["CREATE TABLE r_7 (c0 INTEGER)"]);
    }

    #[test]
    fn batch_accounting_modes_split_the_same_statements() {
        let base = rung(LadderKind::BatchAccounting, 2000);
        let one = plan(&with(base.clone(), |h| h.mode = Some(CallMode::OneAtATime)));
        assert_eq!(one.calls.len(), 2000);
        let batch = plan(&with(base.clone(), |h| h.mode = Some(CallMode::OneBatch)));
        assert_eq!(batch.calls.len(), 1);
        let split = plan(&with(base, |h| {
            h.mode = Some(CallMode::Batches);
            h.batches = Some(3)
        }));
        let sizes: Vec<usize> = split.calls.iter().map(|c| c.statements().len()).collect();
        assert_eq!(sizes, [667, 667, 666]);
        for p in [&one, &batch, &split] {
            assert_eq!(p.statements(), 2000);
            assert_eq!(p.rows(), 2000);
        }
        // A failed second batch leaves the first batch's rows only.
        assert_eq!(split.completed(1), (667, 667));
    }

    #[test]
    fn param_ceiling_binds_rows_times_columns() {
        let r = with(rung(LadderKind::ParamCeiling, 34), |h| h.columns = Some(3));
        let plan = plan(&r);
        let Call::One(s) = &plan.calls[0] else {
            panic!("one statement")
        };
        assert_eq!(s.params.len(), 102);
        assert_eq!(s.sql.matches('?').count(), 102);
        assert_eq!(s.rows, 34);
        assert_eq!(
            plan.prepare,
            ["CREATE TABLE r_7 (c0 TEXT, c1 TEXT, c2 INTEGER)"]
        );
    }

    #[test]
    fn statement_length_is_exact_in_bytes_for_both_texts() {
        for text in [TextKind::Ascii, TextKind::Multibyte] {
            for bytes in [100, 99_999, 100_000, 100_001] {
                let r = with(rung(LadderKind::StatementLength, bytes), |h| {
                    h.text = Some(text)
                });
                r.validate().unwrap();
                let plan = plan(&r);
                assert_eq!(plan.max_statement_bytes(), bytes, "{text:?}");
                if text == TextKind::Multibyte {
                    let overhead = plan.prepare.len() + "INSERT INTO r_7 (c0) VALUES ('')".len();
                    assert!(
                        plan.max_statement_chars() <= bytes / 3 + overhead,
                        "{bytes}"
                    );
                } else {
                    assert_eq!(plan.max_statement_chars(), bytes);
                }
            }
        }
        let err = rung(LadderKind::StatementLength, 10)
            .validate()
            .unwrap_err();
        assert_eq!(err.field, "value");
    }

    #[test]
    fn like_pattern_is_exact_in_bytes() {
        for text in [TextKind::Ascii, TextKind::Multibyte] {
            let r = with(rung(LadderKind::LikePattern, 51), |h| h.text = Some(text));
            let plan = plan(&r);
            let sql = &plan.calls[0].statements()[0].sql;
            let pattern = sql.split('\'').nth(3).unwrap();
            assert_eq!(pattern.len(), 51, "{sql}");
            assert!(pattern.ends_with('%'));
        }
    }

    #[test]
    fn columns_measures_the_create_table_itself() {
        let plan = plan(&rung(LadderKind::Columns, 101));
        assert!(plan.prepare.is_empty());
        assert_eq!(plan.calls.len(), 2);
        assert!(
            plan.calls[0].statements()[0]
                .sql
                .starts_with("CREATE TABLE r_7 (c0 TEXT")
        );
        assert_eq!(plan.rows(), 1);
    }

    #[test]
    fn bad_rungs_name_their_field() {
        let cases = [
            (rung(LadderKind::QueryBudget, 0), "value"),
            (rung(LadderKind::FunctionArgs, 1), "value"),
            (rung(LadderKind::ParamCeiling, 5), "held.columns"),
            (
                with(rung(LadderKind::ParamCeiling, 5), |h| h.columns = Some(101)),
                "held.columns",
            ),
            (
                with(rung(LadderKind::ParamCeiling, 20_000), |h| {
                    h.columns = Some(100)
                }),
                "value",
            ),
            (
                with(rung(LadderKind::QueryBudget, 5), |h| h.columns = Some(3)),
                "held.columns",
            ),
            (rung(LadderKind::BatchAccounting, 5), "held.mode"),
            (
                with(rung(LadderKind::BatchAccounting, 5), |h| {
                    h.mode = Some(CallMode::Batches)
                }),
                "held.batches",
            ),
            (
                with(rung(LadderKind::BatchAccounting, 5), |h| {
                    h.mode = Some(CallMode::Batches);
                    h.batches = Some(6)
                }),
                "held.batches",
            ),
            (rung(LadderKind::QueryDuration, 5), "held.steps-per-ms"),
            (rung(LadderKind::RowSize, 64 * 1024 * 1024 + 1), "value"),
        ];
        for (r, field) in cases {
            assert_eq!(r.validate().unwrap_err().field, field, "{r:?}");
        }
    }

    #[test]
    fn unknown_json_fields_are_rejected() {
        let err = serde_json::from_str::<RungCall>(
            r#"{"step":"climb","rung":{"rung_id":1,"ladder":"columns","value":3,"sql":"DROP TABLE x"}}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown field `sql`"), "{err}");
    }

    #[test]
    fn a_tally_acknowledges_only_completed_calls() {
        let r = with(rung(LadderKind::BatchAccounting, 10), |h| {
            h.mode = Some(CallMode::Batches);
            h.batches = Some(2)
        });
        let plan = plan(&r);
        let mut tally = Tally::default();
        tally.succeeded(1.5);
        tally.failed("D1_ERROR: Too many API requests by single Worker invocation.".into());
        let result = tally.into_result(7, &plan, 3.0);
        assert_eq!(result.calls_completed, 1);
        assert_eq!(result.statements_completed, 5);
        assert_eq!(result.rows_acknowledged, 5);
        assert_eq!(result.outcome, Outcome::Refused);
        assert_eq!(result.refusal, Some(RefusalKind::QueryBudget));
        let (outcome, kind) = classify(Some("Network connection lost."));
        assert_eq!((outcome, kind), (Outcome::Error, Some(RefusalKind::Other)));
    }

    #[test]
    fn time_ladders_expect_d1s_clock_and_other_stops_are_told_apart() {
        for ladder in [LadderKind::BatchCeiling, LadderKind::QueryDuration] {
            assert_eq!(ladder.expected_refusal(), RefusalKind::QueryTimeout);
        }
        let refused = |text: &str| classify(Some(text));
        assert_eq!(
            refused(
                "D1_ERROR: D1 DB storage operation exceeded timeout which caused object to be reset."
            ),
            (Outcome::Refused, Some(RefusalKind::QueryTimeout))
        );
        assert_eq!(
            refused("Worker exceeded CPU time limit."),
            (Outcome::Refused, Some(RefusalKind::CpuTimeLimit))
        );
        assert_eq!(
            refused("D1_ERROR: D1 DB is overloaded. Too many requests queued."),
            (Outcome::Refused, Some(RefusalKind::Overloaded))
        );
    }

    /// The planned SQL runs on real SQLite and refuses where SQLite's limits say.
    #[test]
    fn plans_run_on_sqlite_and_refuse_at_the_limits() {
        use rusqlite::limits::Limit;
        let db = rusqlite::Connection::open_in_memory().unwrap();
        for (limit, value) in [
            (Limit::SQLITE_LIMIT_VARIABLE_NUMBER, 100),
            (Limit::SQLITE_LIMIT_SQL_LENGTH, 100_000),
            (Limit::SQLITE_LIMIT_COLUMN, 100),
            (Limit::SQLITE_LIMIT_FUNCTION_ARG, 32),
            (Limit::SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 50),
        ] {
            db.set_limit(limit, value).unwrap();
        }
        let run = |r: &RungRequest| -> Result<usize, String> {
            let plan = plan(r);
            for sql in &plan.prepare {
                db.execute(sql, []).unwrap();
            }
            let mut outcome = Ok(());
            'calls: for call in &plan.calls {
                for s in call.statements() {
                    let params = s.params.iter().map(|v| match v {
                        Value::Integer(n) => rusqlite::types::Value::Integer(*n),
                        Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
                    });
                    if let Err(e) = db.execute(&s.sql, rusqlite::params_from_iter(params)) {
                        outcome = Err(e.to_string());
                        break 'calls;
                    }
                }
            }
            let exists: usize = db.query_row(&plan.exists, [], |row| row.get(0)).unwrap();
            let rows = if exists == 1 {
                db.query_row(&plan.count, [], |row| row.get(0)).unwrap()
            } else {
                0
            };
            db.execute(&plan.teardown, []).unwrap();
            outcome.map(|()| rows)
        };
        let c8 = |rows| {
            with(rung(LadderKind::ParamCeiling, rows), |h| {
                h.columns = Some(8)
            })
        };
        assert_eq!(run(&c8(12)), Ok(12));
        assert!(run(&c8(13)).unwrap_err().contains("too many SQL variables"));
        let length = |bytes| {
            with(rung(LadderKind::StatementLength, bytes), |h| {
                h.text = Some(TextKind::Multibyte)
            })
        };
        assert_eq!(run(&length(100_000)), Ok(1));
        let err = run(&length(100_001)).unwrap_err();
        assert!(err.contains("too big") || err.contains("too long"), "{err}");
        assert_eq!(run(&rung(LadderKind::Columns, 100)), Ok(1));
        let err = run(&rung(LadderKind::Columns, 101)).unwrap_err();
        assert!(err.contains("too many columns"), "{err}");
        assert_eq!(run(&rung(LadderKind::FunctionArgs, 32)), Ok(1));
        assert!(
            run(&rung(LadderKind::FunctionArgs, 33))
                .unwrap_err()
                .contains("too many arguments on function max")
        );
        assert_eq!(run(&rung(LadderKind::LikePattern, 50)), Ok(1));
        assert!(
            run(&rung(LadderKind::LikePattern, 51))
                .unwrap_err()
                .contains("LIKE or GLOB pattern too complex")
        );
        let duration = with(rung(LadderKind::QueryDuration, 2), |h| {
            h.steps_per_ms = Some(50)
        });
        assert_eq!(run(&duration), Ok(1));
        let query: i64 = db
            .query_row(
                &plan(&duration).calls[0].statements()[0]
                    .sql
                    .replace("INSERT INTO r_7 (c0) ", ""),
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(query, 100);
    }
}
