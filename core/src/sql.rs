//! The SQL of a probe: its table, literal escaping, and the INSERT plan of each strategy.
//!
//! The planner never refuses: when one literal row is longer than the statement limit it still
//! plans a one-row statement, so D1 (not d1bench) says where the wall is.

use std::fmt::Write;

use crate::checksum::checksum_sql;
use crate::generate::{ColumnType, RowGenerator, Value, column_type};
use crate::limits::{
    MAX_BOUND_PARAMETERS, MAX_COLUMNS, MAX_ROW_BYTES, MAX_STATEMENT_BYTES, MAX_STRING_BYTES,
    bound_rows_per_statement,
};
use crate::probe::{Corruption, ProbeRequest, Strategy};
use crate::refusal::RefusalKind;

/// One INSERT statement: its SQL text, the values bound to its `?`s, and the rows it writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub sql: String,
    pub params: Vec<Value>,
    pub rows: usize,
}

/// Everything a probe sends to D1, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Drops a leftover table of the same name, creates the probe's table, then its secondary
    /// indexes.
    pub setup: Vec<String>,
    pub inserts: Vec<Statement>,
    /// Debugging the harness only: changes one row after the writes (see
    /// [`crate::probe::Corruption`]).
    pub corrupt: Option<String>,
}

impl Plan {
    /// Rows in the largest INSERT.
    pub fn rows_per_statement(&self) -> usize {
        self.inserts.iter().map(|s| s.rows).max().unwrap_or(0)
    }

    /// UTF-8 bytes of the longest INSERT's SQL text.
    pub fn max_statement_bytes(&self) -> usize {
        self.inserts.iter().map(|s| s.sql.len()).max().unwrap_or(0)
    }

    pub fn rows(&self) -> usize {
        self.inserts.iter().map(|s| s.rows).sum()
    }
}

/// `CREATE TABLE t (c0 TEXT, c1 TEXT, c2 INTEGER, ...)`.
pub fn create_table(table: &str, columns: usize) -> String {
    let mut sql = format!("CREATE TABLE {table} (");
    for j in 0..columns {
        if j > 0 {
            sql.push_str(", ");
        }
        write!(sql, "c{j} {}", column_type(j).sql()).unwrap();
    }
    sql.push(')');
    sql
}

/// `DROP TABLE IF EXISTS t`: clears a leftover table before a probe and the probe's own after.
pub fn drop_table(table: &str) -> String {
    format!("DROP TABLE IF EXISTS {table}")
}

/// What `POST /setup` runs before a probe, in one batch and an invocation of its own: drops a
/// leftover table of the same name, creates the probe's table, then its secondary indexes.
pub fn setup(probe: &ProbeRequest) -> Vec<String> {
    let table = probe.table();
    let mut setup = vec![drop_table(&table), create_table(&table, probe.columns)];
    setup.extend(create_indexes(&table, probe.indexes));
    setup
}

/// What `POST /verify` runs after a probe, in an invocation of its own that no clock sees.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    /// Whether the probe's table exists (a refused CREATE leaves none); answers `n` = 0 or 1.
    pub exists: String,
    /// Counts the rows present; answers one column named `n`.
    pub count: String,
    /// Computes the content checksum ([`crate::checksum`]) of the rows present.
    pub checksum: String,
    /// Drops the table.
    pub teardown: String,
}

/// Plans the verification of a probe's table, without planning the whole probe.
pub fn verification(probe: &ProbeRequest) -> Verification {
    let table = probe.table();
    Verification {
        exists: format!(
            "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '{table}'"
        ),
        count: format!("SELECT COUNT(*) AS n FROM {table}"),
        checksum: checksum_sql(&table, probe.columns),
        teardown: drop_table(&table),
    }
}

/// `CREATE INDEX t_i<k> ON t (c<k>)` for the first `indexes` columns.
pub fn create_indexes(table: &str, indexes: usize) -> Vec<String> {
    (0..indexes)
        .map(|k| format!("CREATE INDEX {table}_i{k} ON {table} (c{k})"))
        .collect()
}

/// The UPDATE that changes `table` as `corruption` says: the row with the smallest rowid (the
/// two smallest for [`Corruption::SwapRows`]), so a table without rows stays as it is.
pub fn corrupt(table: &str, corruption: Corruption) -> String {
    let first = format!("rowid = (SELECT min(rowid) FROM {table})");
    match corruption {
        // The last byte becomes `a`, or `b` when it was `a`: exactly one byte differs.
        Corruption::TextByte => {
            debug_assert_eq!(column_type(0), ColumnType::Text);
            let b = "CAST(c0 AS BLOB)";
            format!(
                "UPDATE {table} SET c0 = CAST(CASE WHEN length({b}) = 0 THEN X'61' \
                 ELSE substr({b}, 1, length({b}) - 1) || \
                 CASE WHEN substr({b}, -1, 1) = X'61' THEN X'62' ELSE X'61' END END AS TEXT) \
                 WHERE {first}"
            )
        }
        Corruption::Integer => {
            debug_assert_eq!(column_type(2), ColumnType::Integer);
            format!("UPDATE {table} SET c2 = c2 + 1 WHERE {first}")
        }
        // UPDATE ... FROM computes every new value before it changes a row, so each of the two
        // rows gets the other's old value (a subquery in SET would see the first row changed).
        Corruption::SwapRows => {
            let two = format!("SELECT rowid AS r, c0 FROM {table} ORDER BY rowid LIMIT 2");
            format!(
                "UPDATE {table} SET c0 = other.c0 FROM ({two}) AS other \
                 WHERE {table}.rowid IN (SELECT r FROM ({two})) AND other.r <> {table}.rowid"
            )
        }
        // Within one row, SET reads the row's old values.
        Corruption::SwapColumns => {
            debug_assert_eq!(column_type(1), ColumnType::Text);
            format!("UPDATE {table} SET c0 = c1, c1 = c0 WHERE {first}")
        }
    }
}

/// `INSERT INTO t (c0,c1,...) VALUES `: the head every INSERT of the table starts with.
fn insert_head(table: &str, columns: usize) -> String {
    let mut sql = format!("INSERT INTO {table} (");
    for j in 0..columns {
        if j > 0 {
            sql.push(',');
        }
        write!(sql, "c{j}").unwrap();
    }
    sql.push_str(") VALUES ");
    sql
}

/// Appends `value` as an SQLite literal. Text is quoted with `'` doubled; backslashes and
/// non-ASCII characters are ordinary in SQLite strings and pass unchanged. A text holding NUL
/// cannot travel inside a quoted literal (SQL text ends at NUL), so it is written as its UTF-8
/// bytes in hex, cast back to TEXT.
pub fn push_literal(out: &mut String, value: &Value) {
    push_literal_as(out, value, Lines::Any)
}

/// Whether a literal may hold a line break. `db.exec()` splits its script at every `\n` and
/// runs each line as a statement of its own, so an exec statement must be one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lines {
    Any,
    One,
}

/// [`push_literal`], with a text holding `\n` also written in hex when `lines` is
/// [`Lines::One`].
fn push_literal_as(out: &mut String, value: &Value, lines: Lines) {
    match value {
        Value::Integer(n) => write!(out, "{n}").unwrap(),
        Value::Text(s) if s.contains('\0') || (lines == Lines::One && s.contains('\n')) => {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.reserve(2 * s.len() + 16);
            out.push_str("CAST(X'");
            for b in s.bytes() {
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 0xF)]));
            }
            out.push_str("' AS TEXT)");
        }
        Value::Text(s) => {
            out.reserve(s.len() + 2);
            out.push('\'');
            // Whole runs between quotes at once; each quote doubled.
            let mut runs = s.split('\'');
            out.push_str(runs.next().unwrap_or_default());
            for run in runs {
                out.push_str("''");
                out.push_str(run);
            }
            out.push('\'');
        }
    }
}

/// Appends `(v0,v1,...)` with every value a literal.
fn push_literal_tuple(out: &mut String, row: &[Value], lines: Lines) {
    out.push('(');
    for (j, value) in row.iter().enumerate() {
        if j > 0 {
            out.push(',');
        }
        push_literal_as(out, value, lines);
    }
    out.push(')');
}

/// The bound values of `statements` as one JSON array holding an array per statement
/// (`[[1,"a\u0000b"],[2,"c"]]`; `[]` for a statement without values): how the Worker hands
/// them to JavaScript, where one `JSON.parse` makes every array `bind` takes, instead of a call
/// into JavaScript (and a string decoded) per value. Integers stay exact: they are within
/// 2^53, and a JSON number is a JavaScript number.
pub fn values_json(statements: &[Statement]) -> String {
    let bytes: usize = statements
        .iter()
        .flat_map(|s| &s.params)
        .map(|v| match v {
            Value::Integer(_) => 21,
            Value::Text(s) => s.len() + 3,
        })
        .sum();
    let mut json = String::with_capacity(bytes + 3 * statements.len() + 2);
    json.push('[');
    for (k, statement) in statements.iter().enumerate() {
        if k > 0 {
            json.push(',');
        }
        json.push('[');
        for (j, value) in statement.params.iter().enumerate() {
            if j > 0 {
                json.push(',');
            }
            match value {
                Value::Integer(n) => write!(json, "{n}").unwrap(),
                Value::Text(s) => push_json_string(&mut json, s),
            }
        }
        json.push(']');
    }
    json.push(']');
    json
}

/// Appends `s` as a JSON string: `"` and `\` escaped, control characters as `\u00XX`, the rest
/// (non-ASCII included) as it is, a run at a time. SQLite's `json_each` reads it back to the
/// same bytes (NUL included; tested against SQLite itself).
pub fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    let mut run_start = 0;
    for (i, b) in s.bytes().enumerate() {
        if b != b'"' && b != b'\\' && b >= 0x20 {
            continue;
        }
        out.push_str(&s[run_start..i]);
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            _ => write!(out, "\\u{b:04x}").unwrap(),
        }
        run_start = i + 1;
    }
    out.push_str(&s[run_start..]);
    out.push('"');
}

/// `(?,?,...)` for one row of `columns` values.
fn placeholder_tuple(columns: usize) -> String {
    let mut tuple = String::with_capacity(columns * 2 + 1);
    tuple.push('(');
    for j in 0..columns {
        tuple.push_str(if j == 0 { "?" } else { ",?" });
    }
    tuple.push(')');
    tuple
}

/// Plans a probe: the statements its strategy sends, in order.
pub fn plan(probe: &ProbeRequest) -> Plan {
    let table = probe.table();
    let generator = RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
    let rows = (0..probe.rows as u64).map(|i| generator.row(i));
    let head = insert_head(&table, probe.columns);
    let inserts = match probe.strategy {
        Strategy::PerRow => bound_inserts(&head, probe.columns, 1, rows),
        Strategy::Bound => {
            let per = probe
                .rows_per_statement
                .unwrap_or_else(|| bound_rows_per_statement(probe.columns));
            bound_inserts(&head, probe.columns, per, rows)
        }
        Strategy::Literal => literal_inserts(&head, probe.rows_per_statement, rows, Lines::Any),
        Strategy::Json => {
            let payload = probe.json_payload_bytes.unwrap_or(MAX_STRING_BYTES);
            let per = probe.rows_per_statement;
            json_inserts(&table, probe.columns, per, payload, rows)
        }
        Strategy::BatchedRows => bound_inserts(&head, probe.columns, 1, rows),
        Strategy::Exec => literal_inserts(&head, probe.rows_per_statement, rows, Lines::One),
        #[cfg(feature = "postgres")]
        Strategy::Copy => unreachable!("D1 has no COPY: studies name it on Postgres targets only"),
    };
    Plan {
        setup: setup(probe),
        inserts,
        corrupt: probe.debug_corrupt.map(|c| corrupt(&table, c)),
    }
}

fn bound_inserts(
    head: &str,
    columns: usize,
    rows_per_statement: usize,
    rows: impl Iterator<Item = Vec<Value>>,
) -> Vec<Statement> {
    let tuple = placeholder_tuple(columns);
    let mut out: Vec<Statement> = Vec::new();
    let mut current: Option<Statement> = None;
    for row in rows {
        let statement = current.get_or_insert_with(|| Statement {
            sql: head.to_owned(),
            params: Vec::with_capacity(columns * rows_per_statement),
            rows: 0,
        });
        if statement.rows > 0 {
            statement.sql.push(',');
        }
        statement.sql.push_str(&tuple);
        statement.params.extend(row);
        statement.rows += 1;
        if statement.rows == rows_per_statement {
            out.extend(current.take());
        }
    }
    out.extend(current);
    out
}

/// Literal INSERTs: `fixed` rows each when given, otherwise as many as keep the SQL text within
/// [`MAX_STATEMENT_BYTES`] (at least one, even when that one is too long).
fn literal_inserts(
    head: &str,
    fixed: Option<usize>,
    rows: impl Iterator<Item = Vec<Value>>,
    lines: Lines,
) -> Vec<Statement> {
    let mut out = Vec::new();
    let mut current = Statement {
        sql: head.to_owned(),
        params: Vec::new(),
        rows: 0,
    };
    // One buffer for every row's tuple: measured against the statement before it is copied in.
    let mut tuple = String::new();
    for row in rows {
        tuple.clear();
        push_literal_tuple(&mut tuple, &row, lines);
        let full = match fixed {
            Some(n) => current.rows == n,
            None => current.rows > 0 && current.sql.len() + 1 + tuple.len() > MAX_STATEMENT_BYTES,
        };
        if full {
            out.push(std::mem::replace(
                &mut current,
                Statement {
                    sql: head.to_owned(),
                    params: Vec::new(),
                    rows: 0,
                },
            ));
        }
        if current.rows > 0 {
            current.sql.push(',');
        }
        current.sql.push_str(&tuple);
        current.rows += 1;
    }
    if current.rows > 0 {
        out.push(current);
    }
    out
}

/// `INSERT INTO t (c0,...) SELECT value->>0, ... FROM json_each(?)`: one statement text for
/// every `json` statement, its one parameter a JSON array of rows, each row an array of values.
/// `->>` answers an SQL integer for a JSON integer and SQL text for a JSON string, so the types
/// come back as generated; `json_each` walks the array in order, so rowids follow the rows.
pub fn json_insert_sql(table: &str, columns: usize) -> String {
    let mut sql = format!("INSERT INTO {table} (");
    for j in 0..columns {
        if j > 0 {
            sql.push(',');
        }
        write!(sql, "c{j}").unwrap();
    }
    sql.push_str(") SELECT ");
    for j in 0..columns {
        if j > 0 {
            sql.push(',');
        }
        write!(sql, "value->>{j}").unwrap();
    }
    sql.push_str(" FROM json_each(?)");
    sql
}

/// Appends one row as a JSON array: `[text,text,integer,...]`.
pub fn push_json_row(out: &mut String, row: &[Value]) {
    out.push('[');
    for (j, value) in row.iter().enumerate() {
        if j > 0 {
            out.push(',');
        }
        match value {
            Value::Integer(n) => write!(out, "{n}").unwrap(),
            Value::Text(s) => push_json_string(out, s),
        }
    }
    out.push(']');
}

/// `json` INSERTs: `fixed` rows each when given, otherwise as many as keep the JSON payload
/// within `payload_bytes` (at least one row, even when that one is bigger: SQLite or D1 then
/// says where the wall is).
fn json_inserts(
    table: &str,
    columns: usize,
    fixed: Option<usize>,
    payload_bytes: usize,
    rows: impl Iterator<Item = Vec<Value>>,
) -> Vec<Statement> {
    let sql = json_insert_sql(table, columns);
    let mut out = Vec::new();
    let mut payload = String::from("[");
    let mut in_payload = 0;
    let mut encoded = String::new();
    let mut flush = |payload: &mut String, in_payload: &mut usize| {
        payload.push(']');
        out.push(Statement {
            sql: sql.clone(),
            params: vec![Value::Text(std::mem::replace(payload, String::from("[")))],
            rows: std::mem::take(in_payload),
        });
    };
    for row in rows {
        encoded.clear();
        push_json_row(&mut encoded, &row);
        let full = match fixed {
            Some(n) => in_payload == n,
            // The comma before the row and the closing bracket after it.
            None => in_payload > 0 && payload.len() + 1 + encoded.len() + 1 > payload_bytes,
        };
        if full {
            flush(&mut payload, &mut in_payload);
        }
        if in_payload > 0 {
            payload.push(',');
        }
        payload.push_str(&encoded);
        in_payload += 1;
    }
    if in_payload > 0 {
        flush(&mut payload, &mut in_payload);
    }
    out
}

/// A documented limit that stops a probe before it starts: even one of its rows cannot be
/// written the way its strategy writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wall {
    /// The refusal the limit gives.
    pub refusal: RefusalKind,
    /// The limit, in words with its documented value.
    pub limit: &'static str,
    /// What one row needs of it, in [`Wall::unit`].
    pub needed: usize,
    /// What `needed` counts: `bytes of SQL`, `bound parameters`, ...
    pub unit: &'static str,
}

/// The documented limit `probe` meets by construction, if any: its first row alone, planned as
/// its strategy plans it, is past a limit, so every statement would be refused. `None` says
/// the first row fits; later rows of a mix of escaped text may still differ a little.
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
            "100 columns per table",
            probe.columns,
            "columns",
        );
    }
    if probe.row_bytes > MAX_ROW_BYTES {
        return at(
            RefusalKind::StringOrBlobTooBig,
            "2,000,000-byte rows",
            probe.row_bytes,
            "bytes of payload",
        );
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
            "100 bound parameters per statement",
            statement.params.len(),
            "bound parameters",
        );
    }
    if statement.sql.len() > MAX_STATEMENT_BYTES {
        return at(
            RefusalKind::StatementTooLong,
            "100,000-byte statements",
            statement.sql.len(),
            "bytes of SQL",
        );
    }
    let longest_text = statement.params.iter().map(|v| match v {
        Value::Text(s) => s.len(),
        Value::Integer(_) => 0,
    });
    match longest_text.max() {
        Some(bytes) if bytes > MAX_STRING_BYTES => at(
            RefusalKind::StringOrBlobTooBig,
            "2,000,000-byte strings",
            bytes,
            "bytes in one bound string",
        ),
        _ => None,
    }
}

/// The script a `db.exec()` runs: the statements' SQL, one a line.
pub fn exec_script(statements: &[Statement]) -> String {
    let mut script =
        String::with_capacity(statements.iter().map(|s| s.sql.len() + 1).sum::<usize>());
    for (k, statement) in statements.iter().enumerate() {
        if k > 0 {
            script.push('\n');
        }
        debug_assert!(
            !statement.sql.contains('\n'),
            "an exec statement is one line"
        );
        script.push_str(&statement.sql);
    }
    script
}

/// Rows written by the first `count` statements: what a `db.exec()` that reports `count`
/// statements run has written.
pub fn rows_of_first(statements: &[Statement], count: usize) -> usize {
    statements.iter().take(count).map(|s| s.rows).sum()
}

#[cfg(test)]
pub(crate) mod tests;
