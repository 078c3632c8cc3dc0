//! A probe's SQL in Postgres's dialect: its table, its verification, and the INSERT plan of each
//! strategy, planned against Postgres's limits ([`crate::limits`]) as the core plans D1's against
//! D1's. The rows are the core's generator's, so the host's checksum of them holds here too.
//!
//! What differs from D1's plan, and why:
//! - parameters are `$1, $2, ...` (tokio-postgres sends the extended protocol's numbered ones);
//! - integer columns are `bigint` (Postgres's `integer` is 32 bits; the generator's reach 2^53);
//! - `json` reads its one parameter with `json_array_elements` (the same payload as D1's: an
//!   array of rows, each an array of values) where D1 has `json_each`;
//! - `exec` is one simple-protocol query of every literal statement, separated by `;`, which
//!   Postgres runs as one implicit transaction (D1's `exec()` splits its script at line ends);
//! - `copy` (Postgres's alone) is one `COPY ... FROM STDIN` whose rows follow as a data stream
//!   in the text format, so no statement or parameter limit splits it;
//! - Postgres text holds no NUL, so a literal of one is written `convert_from('\x..'::bytea,
//!   'UTF8')`, which Postgres refuses by name, where SQLite casts hex back to text.

use std::fmt::Write;

use d1bench_core::generate::{ColumnType, RowGenerator, Value, column_type};
use d1bench_core::sql::push_json_row;
use d1bench_core::{Corruption, Plan, ProbeRequest, Statement, Strategy};

use crate::checksum::checksum_sql;
use crate::limits::{MAX_STATEMENT_BYTES, MAX_TEXT_BYTES, bound_rows_per_statement};

/// A column's type in Postgres: `bigint` for the generator's integers, `text` for its texts.
fn type_of(column: ColumnType) -> &'static str {
    match column {
        ColumnType::Integer => "bigint",
        ColumnType::Text => "text",
    }
}

/// `CREATE TABLE t (c0 text, c1 text, c2 bigint, ...)`.
pub fn create_table(table: &str, columns: usize) -> String {
    let mut sql = format!("CREATE TABLE {table} (");
    for j in 0..columns {
        if j > 0 {
            sql.push_str(", ");
        }
        write!(sql, "c{j} {}", type_of(column_type(j))).unwrap();
    }
    sql.push(')');
    sql
}

/// What `POST /setup` runs before a probe: a leftover table of the same name dropped, the
/// probe's table created, then its secondary indexes (as the core's `setup`).
pub fn setup(probe: &ProbeRequest) -> Vec<String> {
    let table = probe.table();
    let mut setup = vec![
        format!("DROP TABLE IF EXISTS {table}"),
        create_table(&table, probe.columns),
    ];
    setup.extend(d1bench_core::sql::create_indexes(&table, probe.indexes));
    setup
}

/// What `POST /verify` runs after a probe: the core's [`d1bench_core::sql::Verification`] in
/// Postgres's dialect (each count answers one `bigint` column `n`).
pub fn verification(probe: &ProbeRequest) -> d1bench_core::sql::Verification {
    let table = probe.table();
    d1bench_core::sql::Verification {
        exists: format!(
            "SELECT count(*)::bigint AS n FROM pg_catalog.pg_tables \
             WHERE schemaname = current_schema() AND tablename = '{table}'"
        ),
        count: format!("SELECT count(*)::bigint AS n FROM {table}"),
        checksum: checksum_sql(&table, probe.columns),
        teardown: format!("DROP TABLE IF EXISTS {table}"),
    }
}

/// The UPDATE that changes `table` as `corruption` says (debugging the harness), on the row
/// stored first (`ctid`, where SQLite has `rowid`).
pub fn corrupt(table: &str, corruption: Corruption) -> String {
    let first = format!("ctid = (SELECT min(ctid) FROM {table})");
    match corruption {
        Corruption::TextByte => format!(
            "UPDATE {table} SET c0 = CASE WHEN c0 = '' THEN 'a' \
             WHEN right(c0, 1) = 'a' THEN left(c0, -1) || 'b' ELSE left(c0, -1) || 'a' END \
             WHERE {first}"
        ),
        Corruption::Integer => format!("UPDATE {table} SET c2 = c2 + 1 WHERE {first}"),
        Corruption::SwapRows => {
            let two = format!("SELECT ctid AS r, c0 FROM {table} ORDER BY ctid LIMIT 2");
            format!(
                "UPDATE {table} SET c0 = other.c0 FROM ({two}) AS other \
                 WHERE {table}.ctid IN (SELECT r FROM ({two}) AS pair) AND other.r <> {table}.ctid"
            )
        }
        Corruption::SwapColumns => format!("UPDATE {table} SET c0 = c1, c1 = c0 WHERE {first}"),
    }
}

/// `INSERT INTO t (c0,c1,...) VALUES `.
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

/// Appends `value` as a Postgres literal: text quoted with `'` doubled (with
/// `standard_conforming_strings`, on by default since 9.1, a backslash is an ordinary
/// character); a text holding NUL as its UTF-8 bytes decoded by `convert_from`, which Postgres
/// refuses (its text cannot hold NUL).
pub fn push_literal(out: &mut String, value: &Value) {
    match value {
        Value::Text(s) if s.contains('\0') => {
            out.push_str("convert_from('\\x");
            for b in s.bytes() {
                write!(out, "{b:02x}").unwrap();
            }
            out.push_str("'::bytea, 'UTF8')");
        }
        other => d1bench_core::sql::push_literal(out, other),
    }
}

/// Plans a probe on Postgres: the statements its strategy sends, in order.
pub fn plan(probe: &ProbeRequest) -> Plan {
    let table = probe.table();
    let generator = RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
    let rows = (0..probe.rows as u64).map(|i| generator.row(i));
    let head = insert_head(&table, probe.columns);
    let inserts = match probe.strategy {
        Strategy::PerRow | Strategy::BatchedRows => bound_inserts(&head, probe.columns, 1, rows),
        Strategy::Bound => {
            let per = probe
                .rows_per_statement
                .unwrap_or_else(|| bound_rows_per_statement(probe.columns));
            bound_inserts(&head, probe.columns, per, rows)
        }
        Strategy::Literal | Strategy::Exec => {
            literal_inserts(&head, probe.rows_per_statement, rows)
        }
        Strategy::Json => json_inserts(
            &table,
            probe.columns,
            probe.rows_per_statement,
            probe.json_payload_bytes.unwrap_or(MAX_TEXT_BYTES),
            rows,
        ),
        Strategy::Copy => copy_inserts(&table, probe.columns, probe.rows_per_statement, rows),
    };
    Plan {
        setup: setup(probe),
        inserts,
        corrupt: probe.debug_corrupt.map(|c| corrupt(&table, c)),
    }
}

/// Statements of `rows_per_statement` rows, each value a numbered parameter.
fn bound_inserts(
    head: &str,
    columns: usize,
    rows_per_statement: usize,
    rows: impl Iterator<Item = Vec<Value>>,
) -> Vec<Statement> {
    let mut out: Vec<Statement> = Vec::new();
    let mut current: Option<Statement> = None;
    for row in rows {
        let statement = current.get_or_insert_with(|| Statement {
            sql: head.to_owned(),
            params: Vec::with_capacity(columns * rows_per_statement.min(1 << 16)),
            rows: 0,
        });
        if statement.rows > 0 {
            statement.sql.push(',');
        }
        statement.sql.push('(');
        for j in 0..columns {
            if j > 0 {
                statement.sql.push(',');
            }
            write!(statement.sql, "${}", statement.params.len() + j + 1).unwrap();
        }
        statement.sql.push(')');
        statement.params.extend(row);
        statement.rows += 1;
        if statement.rows == rows_per_statement {
            out.extend(current.take());
        }
    }
    out.extend(current);
    out
}

/// Literal statements: `fixed` rows each when given, otherwise as many as keep the text within
/// [`MAX_STATEMENT_BYTES`] (at least one row).
fn literal_inserts(
    head: &str,
    fixed: Option<usize>,
    rows: impl Iterator<Item = Vec<Value>>,
) -> Vec<Statement> {
    let fresh = || Statement {
        sql: head.to_owned(),
        params: Vec::new(),
        rows: 0,
    };
    let mut out = Vec::new();
    let mut current = fresh();
    let mut tuple = String::new();
    for row in rows {
        tuple.clear();
        tuple.push('(');
        for (j, value) in row.iter().enumerate() {
            if j > 0 {
                tuple.push(',');
            }
            push_literal(&mut tuple, value);
        }
        tuple.push(')');
        let full = match fixed {
            Some(n) => current.rows == n,
            None => current.rows > 0 && current.sql.len() + 1 + tuple.len() > MAX_STATEMENT_BYTES,
        };
        if full {
            out.push(std::mem::replace(&mut current, fresh()));
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

/// `INSERT INTO t (c0,...) SELECT e->>0, (e->>2)::bigint, ... FROM json_array_elements($1::text::json)
/// AS e`: one text for every `json` statement, its one parameter the core's payload (a JSON
/// array of rows). The parameter is sent as text, so the client needs no JSON type.
pub fn json_insert_sql(table: &str, columns: usize) -> String {
    let mut sql = insert_head(table, columns);
    sql.truncate(sql.len() - "VALUES ".len());
    sql.push_str("SELECT ");
    for j in 0..columns {
        if j > 0 {
            sql.push(',');
        }
        match column_type(j) {
            ColumnType::Integer => write!(sql, "(e->>{j})::bigint").unwrap(),
            ColumnType::Text => write!(sql, "e->>{j}").unwrap(),
        }
    }
    sql.push_str(" FROM json_array_elements($1::text::json) AS e");
    sql
}

/// `json` statements: `fixed` rows each when given, otherwise as many as keep the payload within
/// `payload_bytes` (at least one row).
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
    let flush = |out: &mut Vec<Statement>, payload: &mut String, in_payload: &mut usize| {
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
            None => in_payload > 0 && payload.len() + 1 + encoded.len() + 1 > payload_bytes,
        };
        if full {
            flush(&mut out, &mut payload, &mut in_payload);
        }
        if in_payload > 0 {
            payload.push(',');
        }
        payload.push_str(&encoded);
        in_payload += 1;
    }
    if in_payload > 0 {
        flush(&mut out, &mut payload, &mut in_payload);
    }
    out
}

/// `COPY t (c0,c1,...) FROM STDIN`: the statement that opens a COPY data stream into `table`,
/// in the text format (the server's default).
pub fn copy_sql(table: &str, columns: usize) -> String {
    let mut sql = insert_head(table, columns);
    sql.replace_range(.."INSERT INTO ".len(), "COPY ");
    sql.truncate(sql.len() - " VALUES ".len());
    sql.push_str(" FROM STDIN");
    sql
}

/// Appends `value` as one field of COPY's text format: an integer in decimal; a text with the
/// four characters that would end or change a field escaped (backslash, tab, line feed,
/// carriage return) and a NUL as `\0`, which Postgres reads back as the byte 0 and refuses
/// (its text cannot hold NUL, as the literal's `convert_from` is refused).
pub fn push_copy_field(out: &mut String, value: &Value) {
    match value {
        Value::Integer(n) => write!(out, "{n}").unwrap(),
        Value::Text(s) => {
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\t' => out.push_str("\\t"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\0' => out.push_str("\\0"),
                    other => out.push(other),
                }
            }
        }
    }
}

/// `copy` statements: one COPY of every row (no statement or parameter limit applies: the rows
/// go as a data stream after the statement, not in it), or of `fixed` rows each when given. A
/// statement's one parameter is its data: each row's fields tab-separated, each row ended by a
/// line feed, encoded here so that the encoding is planning, outside the timed window, as a
/// literal statement's text is.
fn copy_inserts(
    table: &str,
    columns: usize,
    fixed: Option<usize>,
    rows: impl Iterator<Item = Vec<Value>>,
) -> Vec<Statement> {
    let sql = copy_sql(table, columns);
    let fresh = || Statement {
        sql: sql.clone(),
        params: vec![Value::Text(String::new())],
        rows: 0,
    };
    let mut out = Vec::new();
    let mut current = fresh();
    for row in rows {
        if fixed.is_some_and(|n| current.rows == n) {
            out.push(std::mem::replace(&mut current, fresh()));
        }
        let Value::Text(data) = &mut current.params[0] else {
            unreachable!("a COPY statement's one parameter is its text data")
        };
        for (j, value) in row.iter().enumerate() {
            if j > 0 {
                data.push('\t');
            }
            push_copy_field(data, value);
        }
        data.push('\n');
        current.rows += 1;
    }
    if current.rows > 0 {
        out.push(current);
    }
    out
}

/// The one simple-protocol query `exec` sends: every statement, separated by `;` and a line end.
pub fn exec_script(statements: &[Statement]) -> String {
    let mut script =
        String::with_capacity(statements.iter().map(|s| s.sql.len() + 2).sum::<usize>());
    for (k, statement) in statements.iter().enumerate() {
        if k > 0 {
            script.push_str(";\n");
        }
        script.push_str(&statement.sql);
    }
    script
}

/// Which of Postgres's limits sets a strategy's rows per statement at `columns` columns, in
/// words (for `--dry-run`); `None` where one row per statement is the strategy itself.
pub fn binding_limit(strategy: Strategy, columns: usize) -> Option<String> {
    match strategy {
        Strategy::PerRow | Strategy::BatchedRows => None,
        Strategy::Bound => Some(format!(
            "65,535 bound parameters: {} rows of {columns} columns",
            bound_rows_per_statement(columns)
        )),
        Strategy::Literal | Strategy::Exec => {
            Some("1 GiB protocol messages (the statement's text)".to_owned())
        }
        Strategy::Json => Some("1 GB text values (the JSON payload)".to_owned()),
        Strategy::Copy => Some(
            "none: every row in one COPY data stream (the rows follow the statement, not in it)"
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests;
