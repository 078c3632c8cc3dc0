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
        Strategy::Json => json_inserts(
            &table,
            probe.columns,
            probe.rows_per_statement,
            probe.json_payload_bytes.unwrap_or(MAX_STRING_BYTES),
            rows,
        ),
        Strategy::BatchedRows => bound_inserts(&head, probe.columns, 1, rows),
        Strategy::Exec => literal_inserts(&head, probe.rows_per_statement, rows, Lines::One),
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
pub(crate) mod tests {
    use super::*;
    use crate::generate::TextMix;
    use rusqlite::{Connection, params_from_iter, types::ValueRef};

    fn probe(strategy: Strategy, columns: usize, rows: usize, row_bytes: usize) -> ProbeRequest {
        ProbeRequest {
            probe_id: 7,
            strategy,
            columns,
            rows,
            row_bytes,
            seed: 99,
            rows_per_statement: None,
            json_payload_bytes: None,
            text: TextMix::HOSTILE,
            indexes: 0,
            debug_corrupt: None,
        }
    }

    /// Runs a plan against real SQLite with D1's statement and variable limits applied.
    pub(crate) fn execute(plan: &Plan) -> Connection {
        let db = Connection::open_in_memory().unwrap();
        db.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_VARIABLE_NUMBER,
            MAX_BOUND_PARAMETERS as i32,
        )
        .unwrap();
        db.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_SQL_LENGTH,
            MAX_STATEMENT_BYTES as i32,
        )
        .unwrap();
        db.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            MAX_STRING_BYTES as i32,
        )
        .unwrap();
        for sql in &plan.setup {
            db.execute(sql, []).unwrap();
        }
        for s in &plan.inserts {
            let params = s.params.iter().map(|v| match v {
                Value::Integer(n) => rusqlite::types::Value::Integer(*n),
                Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
            });
            db.execute(&s.sql, params_from_iter(params)).unwrap();
        }
        db
    }

    /// Reads the table back in insertion order and compares every value with the generator's.
    fn assert_round_trip(probe: &ProbeRequest, db: &Connection) {
        let generator = RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
        let mut stmt = db
            .prepare(&format!("SELECT * FROM {} ORDER BY rowid", probe.table()))
            .unwrap();
        let mut rows = stmt.query([]).unwrap();
        let mut i = 0u64;
        while let Some(row) = rows.next().unwrap() {
            let expected = generator.row(i);
            for (j, want) in expected.iter().enumerate() {
                match (want, row.get_ref(j).unwrap()) {
                    (Value::Integer(n), ValueRef::Integer(got)) => assert_eq!(*n, got),
                    (Value::Text(s), ValueRef::Text(got)) => {
                        assert_eq!(s.as_bytes(), got, "row {i} column {j} differs")
                    }
                    (want, got) => panic!("row {i} column {j}: wanted {want:?}, got {got:?}"),
                }
            }
            i += 1;
        }
        assert_eq!(i as usize, probe.rows);
    }

    #[test]
    fn literal_escaping_round_trips_hostile_text_byte_for_byte() {
        for columns in [1, 3, 10, 64] {
            for row_bytes in [24, 200, 3_000] {
                let p = probe(Strategy::Literal, columns, 60, row_bytes);
                let plan = plan(&p);
                assert_round_trip(&p, &execute(&plan));
            }
        }
    }

    #[test]
    fn literal_escaping_of_each_awkward_character() {
        for text in [
            "",
            "'",
            "''",
            "it's",
            "\\",
            "\\'",
            "a\nb",
            "\0",
            "x\0'y",
            "é日🦀",
            "--",
            "'; DROP TABLE t; --",
        ] {
            let mut sql = String::from("SELECT ");
            push_literal(&mut sql, &Value::Text(text.into()));
            let db = Connection::open_in_memory().unwrap();
            let got: String = db.query_row(&sql, [], |r| r.get(0)).unwrap();
            assert_eq!(got, text, "{sql}");
        }
    }

    #[test]
    fn bound_values_travel_as_json_that_parses_back_to_the_same_values() {
        let generator = RowGenerator::new(7, 600, 3, TextMix::HOSTILE);
        let mut values: Vec<Value> = (0..40).flat_map(|i| generator.row(i)).collect();
        values.extend(
            ["", "\"", "\\", "\u{1}\u{1f}\u{7f}", "é\0日\"🦀"].map(|s| Value::Text(s.into())),
        );
        values.extend([i64::from(i32::MIN), -(1 << 53) + 1, (1 << 53) - 1, 0].map(Value::Integer));
        let statement = |params: &[Value]| Statement {
            sql: String::new(),
            params: params.to_vec(),
            rows: 1,
        };
        let statements = [
            statement(&values[..100]),
            statement(&[]),
            statement(&values[100..]),
        ];
        let parsed: Vec<Vec<serde_json::Value>> =
            serde_json::from_str(&values_json(&statements)).unwrap();
        assert_eq!(parsed.len(), 3);
        for (statement, parsed) in statements.iter().zip(&parsed) {
            assert_eq!(parsed.len(), statement.params.len());
            for (value, parsed) in statement.params.iter().zip(parsed) {
                match value {
                    Value::Integer(n) => assert_eq!(parsed.as_i64(), Some(*n)),
                    Value::Text(s) => assert_eq!(parsed.as_str(), Some(s.as_str())),
                }
            }
        }
        assert_eq!(values_json(&[]), "[]");
        assert_eq!(
            values_json(&[statement(&[
                Value::Integer(-3),
                Value::Text("a\"b\n".into())
            ])]),
            r#"[[-3,"a\"b\u000a"]]"#
        );
    }

    /// Hostile texts, each alone: what a JSON string encoder gets wrong.
    const AWKWARD: [&str; 16] = [
        "",
        "\"",
        "\\",
        "\\\"",
        "\\u0000",
        "'",
        "\0",
        "a\0b\0",
        "\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1f}",
        "\u{7f}",
        "é日🦀𝄞",
        "\u{2028}\u{2029}",
        "\u{feff}x",
        "]},[\"",
        "/</script>",
        "%_'; DROP TABLE t; --",
    ];

    #[test]
    fn json_strings_read_back_through_sqlite_byte_for_byte_and_as_text() {
        let db = Connection::open_in_memory().unwrap();
        for text in AWKWARD {
            let mut json = String::from("[");
            push_json_string(&mut json, text);
            json.push(']');
            let (valid, kind, got): (i64, String, Vec<u8>) = db
                .query_row(
                    "SELECT json_valid(?1), typeof(?1->>0), CAST(?1->>0 AS BLOB)",
                    [&json],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .unwrap();
            assert_eq!(valid, 1, "{json:?} is not JSON to SQLite");
            assert_eq!(kind, "text", "{json:?}");
            assert_eq!(got, text.as_bytes(), "{json:?} reads back other bytes");
            // The same text through json_each, as the json strategy reads it.
            let got: Vec<u8> = db
                .query_row(
                    "SELECT CAST(value->>0 AS BLOB) FROM json_each(?)",
                    [format!("[{json}]")],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(got, text.as_bytes(), "{json:?} through json_each");
        }
    }

    #[test]
    fn json_integers_read_back_as_integers() {
        let db = Connection::open_in_memory().unwrap();
        for n in [0, -1, 1, i64::from(i32::MIN), -(1 << 53) + 1, (1 << 53) - 1] {
            let mut json = String::new();
            push_json_row(&mut json, &[Value::Integer(n)]);
            let (kind, got): (String, i64) = db
                .query_row("SELECT typeof(?1->>0), ?1->>0", [&json], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .unwrap();
            assert_eq!((kind.as_str(), got), ("integer", n), "{json}");
        }
    }

    #[test]
    fn json_round_trips_hostile_rows_with_their_types() {
        for columns in [1, 2, 3, 10, 64, 100] {
            for row_bytes in [300, 3_000] {
                let p = probe(Strategy::Json, columns, 70, row_bytes);
                let plan = plan(&p);
                assert_eq!(plan.inserts.len(), 1, "70 small rows fit one payload");
                assert_eq!(plan.inserts[0].params.len(), 1, "one parameter");
                assert_round_trip(&p, &execute(&plan));
            }
        }
    }

    #[test]
    fn json_fills_payloads_up_to_the_documented_string_limit_and_no_further() {
        // 10 MB of 1,000-byte rows, hostile text: several payloads, each within 2,000,000 bytes
        // and within one row of it.
        let p = probe(Strategy::Json, 8, 10_000, 1_000);
        let plan = plan(&p);
        assert_eq!(plan.rows(), 10_000);
        assert!(plan.inserts.len() > 2, "{} payloads", plan.inserts.len());
        let biggest_row = 1_000 * 8;
        for (k, s) in plan.inserts.iter().enumerate() {
            let Value::Text(payload) = &s.params[0] else {
                panic!("a json payload is text")
            };
            assert!(payload.len() <= MAX_STRING_BYTES, "payload {k}");
            if k + 1 < plan.inserts.len() {
                assert!(
                    payload.len() + biggest_row > MAX_STRING_BYTES,
                    "payload {k} short"
                );
            }
            assert!(s.sql.len() < 1_000, "the SQL text stays small");
        }
        assert_round_trip(&p, &execute(&plan));
        // A lower cap and a fixed count are both honoured.
        let mut capped = p.clone();
        capped.json_payload_bytes = Some(100_000);
        for s in &super::plan(&capped).inserts {
            let Value::Text(payload) = &s.params[0] else {
                unreachable!()
            };
            assert!(payload.len() <= 100_000);
        }
        let mut fixed = probe(Strategy::Json, 4, 95, 50);
        fixed.rows_per_statement = Some(20);
        assert_eq!(
            super::plan(&fixed)
                .inserts
                .iter()
                .map(|s| s.rows)
                .collect::<Vec<_>>(),
            [20, 20, 20, 20, 15]
        );
    }

    #[test]
    fn a_json_row_past_the_string_limit_is_planned_alone_and_sqlite_refuses_it() {
        let p = probe(Strategy::Json, 1, 2, 1_999_999);
        let plan = plan(&p);
        assert_eq!(plan.inserts.len(), 2);
        let db = Connection::open_in_memory().unwrap();
        db.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            MAX_STRING_BYTES as i32,
        )
        .unwrap();
        db.execute(&plan.setup[1], []).unwrap();
        let Value::Text(payload) = &plan.inserts[0].params[0] else {
            unreachable!()
        };
        let err = db
            .execute(&plan.inserts[0].sql, [payload])
            .unwrap_err()
            .to_string();
        assert!(err.contains("too big"), "{err}");
    }

    #[test]
    fn the_wall_of_each_strategy_is_the_limit_its_first_row_meets() {
        let wall_of = |strategy, columns, row_bytes| {
            let mut p = probe(strategy, columns, 10, row_bytes);
            p.text = TextMix::default();
            wall(&p).map(|w| w.refusal)
        };
        for strategy in Strategy::ALL {
            assert_eq!(wall_of(strategy, 8, 1_000), None, "{strategy}");
            assert_eq!(
                wall_of(strategy, 4, 2_000_001),
                Some(RefusalKind::StringOrBlobTooBig),
                "{strategy}"
            );
        }
        // One literal row of 99,950 payload bytes and its SQL pass 100,000 bytes.
        for strategy in [Strategy::Literal, Strategy::Exec] {
            assert_eq!(
                wall_of(strategy, 4, 99_950),
                Some(RefusalKind::StatementTooLong)
            );
            assert_eq!(wall_of(strategy, 4, 99_000), None);
        }
        for strategy in [Strategy::Bound, Strategy::Json, Strategy::BatchedRows] {
            assert_eq!(wall_of(strategy, 4, 1_000_000), None, "{strategy}");
        }
        // A json row's text near 2,000,000 bytes: its quotes and brackets pass the string limit.
        assert_eq!(
            wall_of(Strategy::Json, 1, 1_999_999),
            Some(RefusalKind::StringOrBlobTooBig)
        );
        assert_eq!(wall_of(Strategy::Bound, 1, 1_999_999), None);
    }

    #[test]
    fn batched_rows_write_one_row_per_statement_and_round_trip() {
        let p = probe(Strategy::BatchedRows, 7, 45, 300);
        let plan = plan(&p);
        assert_eq!(plan.inserts.len(), 45);
        assert_eq!(plan.rows_per_statement(), 1);
        assert_round_trip(&p, &execute(&plan));
    }

    #[test]
    fn exec_statements_are_one_line_each_and_the_script_round_trips() {
        for columns in [1, 3, 10, 64] {
            let p = probe(Strategy::Exec, columns, 300, 1_000);
            let plan = plan(&p);
            assert!(plan.inserts.len() > 1);
            for s in &plan.inserts {
                assert!(
                    !s.sql.contains('\n'),
                    "an exec statement holds a line break"
                );
                assert!(s.sql.len() <= MAX_STATEMENT_BYTES);
                assert!(s.params.is_empty());
            }
            let script = exec_script(&plan.inserts);
            assert_eq!(script.lines().count(), plan.inserts.len());
            // As D1 runs it: line by line, in one transaction.
            let db = execute(&Plan {
                inserts: Vec::new(),
                ..plan.clone()
            });
            db.execute_batch("BEGIN").unwrap();
            for line in script.split('\n') {
                db.execute(line, []).unwrap();
            }
            db.execute_batch("COMMIT").unwrap();
            assert_round_trip(&p, &db);
            assert_eq!(rows_of_first(&plan.inserts, plan.inserts.len()), 300);
            assert_eq!(rows_of_first(&plan.inserts, 1), plan.inserts[0].rows);
        }
    }

    #[test]
    fn bound_and_per_row_round_trip() {
        for strategy in [Strategy::Bound, Strategy::PerRow] {
            let p = probe(strategy, 7, 45, 300);
            assert_round_trip(&p, &execute(&plan(&p)));
        }
    }

    #[test]
    fn bound_carries_floor_100_over_c_rows_and_never_more_than_100_parameters() {
        for columns in [1, 2, 3, 8, 33, 34, 50, 51, 64, 100] {
            let p = probe(Strategy::Bound, columns, 250, 100);
            let plan = plan(&p);
            assert_eq!(plan.rows_per_statement(), 100 / columns, "C={columns}");
            assert_eq!(plan.rows(), 250);
            assert_eq!(plan.inserts.len(), 250usize.div_ceil(100 / columns));
            for s in &plan.inserts {
                assert!(s.params.len() <= MAX_BOUND_PARAMETERS);
                assert_eq!(s.params.len(), s.rows * columns);
                assert_eq!(s.sql.matches('?').count(), s.params.len());
            }
        }
    }

    #[test]
    fn literal_fills_statements_up_to_the_limit_and_no_further() {
        let p = probe(Strategy::Literal, 10, 3_000, 500);
        let plan = plan(&p);
        assert_eq!(plan.rows(), 3_000);
        assert!(plan.inserts.len() > 1);
        for (k, s) in plan.inserts.iter().enumerate() {
            assert!(s.sql.len() <= MAX_STATEMENT_BYTES);
            assert!(s.params.is_empty());
            if k + 1 < plan.inserts.len() {
                // Greedy: the next row would not have fitted (rows are all alike in size, give or
                // take escaping, so a full statement is within one row of the limit).
                assert!(
                    s.sql.len() + 2 * 1_200 > MAX_STATEMENT_BYTES,
                    "statement {k} is only {} bytes",
                    s.sql.len()
                );
            }
        }
    }

    #[test]
    fn a_literal_row_past_the_limit_is_still_planned_alone() {
        let p = probe(Strategy::Literal, 4, 3, 120_000);
        let plan = plan(&p);
        assert_eq!(plan.inserts.len(), 3);
        assert!(plan.max_statement_bytes() > MAX_STATEMENT_BYTES);
    }

    #[test]
    fn override_sets_rows_per_statement() {
        let mut p = probe(Strategy::Bound, 10, 95, 50);
        p.rows_per_statement = Some(11);
        let bound = plan(&p);
        assert_eq!(bound.rows_per_statement(), 11);
        assert_eq!(bound.inserts.len(), 9);
        p.strategy = Strategy::Literal;
        p.rows_per_statement = Some(20);
        let literal = plan(&p);
        assert_eq!(
            literal.inserts.iter().map(|s| s.rows).collect::<Vec<_>>(),
            [20, 20, 20, 20, 15]
        );
    }

    #[test]
    fn indexes_are_created_with_the_table_and_rows_still_round_trip() {
        let mut p = probe(Strategy::Literal, 5, 40, 100);
        p.indexes = 3;
        let plan = plan(&p);
        assert_eq!(
            &plan.setup[2..],
            [
                "CREATE INDEX t_7_i0 ON t_7 (c0)",
                "CREATE INDEX t_7_i1 ON t_7 (c1)",
                "CREATE INDEX t_7_i2 ON t_7 (c2)"
            ]
        );
        let db = execute(&plan);
        let indexes: i64 = db
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 't_7'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(indexes, 3);
        assert_round_trip(&p, &db);
        assert_eq!(plan.corrupt, None, "no corruption unless asked for");
    }

    #[test]
    fn the_swap_corruptions_swap_exactly_the_values_they_name() {
        let text = |s: &Value| match s {
            Value::Text(s) => s.clone(),
            Value::Integer(_) => unreachable!("columns 0 and 1 are text"),
        };
        for (corruption, want) in [
            (Corruption::SwapRows, [[(1, 0), (0, 1)], [(0, 0), (1, 1)]]),
            (
                Corruption::SwapColumns,
                [[(0, 1), (0, 0)], [(1, 0), (1, 1)]],
            ),
        ] {
            let mut p = probe(Strategy::Bound, 4, 5, 100);
            p.debug_corrupt = Some(corruption);
            let plan = plan(&p);
            let db = execute(&plan);
            // Indexes on the swapped columns must not change what the UPDATE sees.
            db.execute_batch(&create_indexes(&p.table(), 2).join(";"))
                .unwrap();
            let changed = db.execute(plan.corrupt.as_deref().unwrap(), []).unwrap();
            assert_eq!(changed, corruption.rows_changed());
            let generator = RowGenerator::new(p.columns, p.row_bytes, p.seed, p.text);
            let rows: Vec<Vec<Value>> = (0..2).map(|i| generator.row(i)).collect();
            let mut stmt = db
                .prepare("SELECT c0, c1 FROM t_7 ORDER BY rowid LIMIT 2")
                .unwrap();
            let got: Vec<[String; 2]> = stmt
                .query_map([], |r| Ok([r.get(0)?, r.get(1)?]))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            // Row r, column c now holds generated row want[r][c].0, column want[r][c].1.
            for (r, row) in want.iter().enumerate() {
                for (c, &(from_row, from_column)) in row.iter().enumerate() {
                    assert_eq!(
                        got[r][c],
                        text(&rows[from_row][from_column]),
                        "{corruption:?}: row {r} column {c}"
                    );
                }
            }
            assert_ne!(rows[0][0], rows[1][0], "the swap changes something");
            assert_ne!(rows[0][0], rows[0][1], "the swap changes something");
        }
    }

    #[test]
    fn create_table_types_follow_the_generator() {
        assert_eq!(
            create_table("t_1", 4),
            "CREATE TABLE t_1 (c0 TEXT, c1 TEXT, c2 INTEGER, c3 TEXT)"
        );
    }
}
