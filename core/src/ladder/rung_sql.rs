//! The SQL of every rung: what each ladder's rung sends, step by step ([`plan`]), and the sizes
//! it is built to (padding of an exact byte count, JSON payloads and results of an exact byte
//! count).
//!
//! The Worker and the in-process SQLite target both run these plans, so they send exactly the
//! same statements.

use std::fmt::Write;

use super::{CallMode, LadderKind, RungRequest, TextKind};
use crate::generate::{ColumnType, Value, column_type};
use crate::sql::{Statement, create_table, json_insert_sql};

/// One D1 call of a rung: a single statement (`.run()`), a `db.batch()`, or a read whose rows
/// come back (`.all()`).
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    One(Statement),
    Batch(Vec<Statement>),
    Read(Read),
}

/// A SELECT whose rows come back to the caller, which counts the bytes of their one text column
/// [`RESULT_COLUMN`] as they arrive; it writes nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    pub statement: Statement,
    /// Rows the SELECT answers.
    pub rows: usize,
    /// UTF-8 bytes of text those rows hold in all.
    pub bytes: usize,
}

impl Call {
    pub fn statements(&self) -> &[Statement] {
        match self {
            Call::One(s) => std::slice::from_ref(s),
            Call::Batch(s) => s,
            Call::Read(r) => std::slice::from_ref(&r.statement),
        }
    }

    /// Rows the call writes when it succeeds (a failed batch writes none).
    pub fn rows(&self) -> usize {
        self.statements().iter().map(|s| s.rows).sum()
    }

    /// Rows the call reads back when it succeeds.
    pub fn rows_returned(&self) -> usize {
        match self {
            Call::Read(r) => r.rows,
            Call::One(_) | Call::Batch(_) => 0,
        }
    }
}

/// How the measured calls of a rung are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    /// One after another, each awaited before the next starts; the first failure ends the step.
    InOrder,
    /// Every call started before any is awaited (`Promise.all`), then all awaited together; a
    /// failure ends none of the others.
    AllAtOnce,
}

/// Everything a rung sends, step by step.
#[derive(Debug, Clone, PartialEq)]
pub struct RungPlan {
    pub table: String,
    /// Step [`Step::Prepare`]: run as one batch (empty for the columns ladder).
    pub prepare: Vec<String>,
    /// Step [`Step::Climb`]: the measured calls, sent as [`RungPlan::dispatch`] says.
    pub calls: Vec<Call>,
    pub dispatch: Dispatch,
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

    /// Whether any call reads rows back (the rung's result then carries the bytes counted).
    pub fn reads(&self) -> bool {
        self.calls.iter().any(|c| matches!(c, Call::Read(_)))
    }

    /// Bytes of text the reads of the first `calls` calls return.
    pub fn result_bytes(&self, calls: usize) -> usize {
        self.calls[..calls.min(self.calls.len())]
            .iter()
            .map(|c| match c {
                Call::Read(r) => r.bytes,
                Call::One(_) | Call::Batch(_) => 0,
            })
            .sum()
    }

    /// Rows D1 bills as read when every call succeeds: the rows the reads answer, and the
    /// count afterwards scanning the rows written.
    pub fn rows_read(&self) -> usize {
        self.rows() + self.calls.iter().map(Call::rows_returned).sum::<usize>()
    }

    /// Statements and rows of the first `calls` calls: what completed calls acknowledge. All at
    /// once, calls may complete out of order; every such plan's calls are alike (one row each),
    /// so any `calls` of them acknowledge what the first `calls` do.
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
    let dispatch = match rung.ladder {
        LadderKind::ConcurrentCalls => Dispatch::AllAtOnce,
        _ => Dispatch::InOrder,
    };
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
        LadderKind::JsonPayload => (
            vec![text_table],
            vec![Call::One(Statement {
                sql: json_insert_sql(&table, 1),
                params: vec![Value::Text(json_payload(n))],
                rows: json_payload_rows(n),
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
        // The table only gives the finish step something to count (nothing is written).
        LadderKind::ResultSize => (vec![integer_table], vec![Call::Read(result_read(n))]),
        LadderKind::ConcurrentCalls => (
            vec![integer_table],
            (0..n)
                .map(|i| Call::One(one_row_insert(&table, i)))
                .collect(),
        ),
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
        dispatch,
    }
}

/// Text bytes of one row of a result-size rung's result (the last row takes the remainder):
/// half the documented 2,000,000-byte row limit, so only the result grows towards a limit.
pub const RESULT_ROW_BYTES: usize = 1_000_000;

/// The one column a result-size read answers, whose text bytes the caller counts.
pub const RESULT_COLUMN: &str = "b";

/// A SELECT answering exactly `bytes` bytes of ASCII text (at least one): rows of
/// [`RESULT_ROW_BYTES`], the last the remainder, made by a recursive CTE and
/// `substr(hex(zeroblob(..)))` (`0`s), so the statement stays short whatever the result. Not
/// `printf('%.*c', n, 'x')`: local D1's SQLite caps printf's precision at 100,000 (a 1,000,000
/// byte row came back 100,000 bytes long, 2026-12-03), where in-process SQLite does not.
fn result_read(bytes: usize) -> Read {
    let bytes = bytes.max(1);
    let rows = bytes.div_ceil(RESULT_ROW_BYTES);
    let last = bytes - (rows - 1) * RESULT_ROW_BYTES;
    let sql = format!(
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < {rows}) \
         SELECT substr(hex(zeroblob({half})), 1, CASE WHEN i < {rows} THEN {RESULT_ROW_BYTES} \
         ELSE {last} END) AS {RESULT_COLUMN} FROM r",
        half = RESULT_ROW_BYTES / 2
    );
    Read {
        statement: statement(sql, 0),
        rows,
        bytes,
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

/// Text bytes of one row of a json-payload rung's payload (the last rows take one byte less):
/// rows far below every row and string limit, so only the payload grows towards one.
pub const JSON_PAYLOAD_ROW_BYTES: usize = 100_000;

/// The smallest JSON payload of one row: `[[""]]`.
pub const MIN_JSON_PAYLOAD_BYTES: usize = 6;

/// Rows of the json-payload rung of `bytes` bytes: one per [`JSON_PAYLOAD_ROW_BYTES`] begun.
pub fn json_payload_rows(bytes: usize) -> usize {
    bytes.div_ceil(JSON_PAYLOAD_ROW_BYTES).max(1)
}

/// A JSON array of exactly `bytes` UTF-8 bytes (at least [`MIN_JSON_PAYLOAD_BYTES`]) holding
/// [`json_payload_rows`] rows of one text column, `[["xx..."],["xx..."],...]`, as the `json`
/// strategy binds its rows. k rows of b₁..b_k text bytes take 2 + (k − 1) + Σ(bᵢ + 4) =
/// 1 + 5k + Σbᵢ bytes; the text is spread evenly over the rows. `x` needs no escaping.
pub fn json_payload(bytes: usize) -> String {
    let rows = json_payload_rows(bytes);
    let text = bytes.saturating_sub(1 + 5 * rows);
    let (base, extra) = (text / rows, text % rows);
    let mut json = String::with_capacity(bytes);
    json.push('[');
    for i in 0..rows {
        if i > 0 {
            json.push(',');
        }
        json.push_str("[\"");
        json.push_str(&"x".repeat(base + usize::from(i < extra)));
        json.push_str("\"]");
    }
    json.push(']');
    json
}
