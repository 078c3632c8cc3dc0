//! The SQL of every rung: what each ladder's rung sends, step by step ([`plan`]), and the sizes
//! it is built to (padding of an exact byte count, JSON payloads of an exact byte count).
//!
//! The Worker and the in-process SQLite target both run these plans, so they send exactly the
//! same statements.

use std::fmt::Write;

use super::{CallMode, LadderKind, RungRequest, TextKind};
use crate::generate::{ColumnType, Value, column_type};
use crate::sql::{Statement, create_table, json_insert_sql};

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
