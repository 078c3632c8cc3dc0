//! Ladder rungs on PostgreSQL: which of the core's ladders mean something there, what a rung may
//! ask for ([`validate`]), the SQL of each step in Postgres's dialect ([`plan`]), as
//! `d1bench_core::ladder::plan` plans D1's, and the errors only a ladder meets ([`refusal`]).
//! The Postgres ladder Worker (`worker-pg-ladder/`) runs these plans (`POST /rung`) and the xtask
//! reconciles its answers against them, so both hold the same statements.
//!
//! Why a crate of its own and not a module of `core-pg/`: `core-pg/src` is one of the inputs of
//! the Postgres probe Worker's build hash (`worker_build::pg_sources_hash`), which the committed
//! Postgres runs are checked against; a ladder module there would make them "measured by another
//! Worker build" though not a byte of the probe path changed.
//!
//! What differs from D1's rungs, and why:
//! - tables are `bigint`/`text` ([`d1bench_core_pg::sql::create_table`]), parameters `$n`;
//! - function-args calls `num_nonnulls(1, ..., N)`: Postgres's `max` is an aggregate only and
//!   `GREATEST` is an expression, not a function call, so neither meets `FUNC_MAX_ARGS`;
//! - like-pattern writes its boolean as `(... LIKE ...)::int` (no cast from boolean to bigint);
//! - result-size's rows are `repeat('0', n)` over `generate_series`;
//! - json-payload reads the core's payload with `json_array_elements` ([`d1bench_core_pg::sql`]);
//! - the finish step asks `pg_tables` whether the table exists.
//!
//! The ladders of the Workers runtime and D1's service (the query budget, what a batch costs of
//! it, statements per batch, simultaneous calls, D1's 30 s query clock) have no counterpart on
//! one Postgres connection: [`runs_on_postgres`] says so, and nothing plans them here.

use std::fmt::Write;

use d1bench_core::Statement;
use d1bench_core::generate::{ColumnType, Value, column_type};
use d1bench_core::ladder::{
    Call, Dispatch, Held, LadderKind, RESULT_COLUMN, RESULT_ROW_BYTES, Read, RungError, RungPlan,
    RungRequest, TextKind, json_payload, json_payload_rows, padding,
};

use d1bench_core_pg::limits::{MAX_BOUND_PARAMETERS, MAX_COLUMNS};
use d1bench_core_pg::sql::{create_table, json_insert_sql};

pub mod refusal;

/// Most values one param-ceiling rung binds on Postgres: four times the protocol's 65,535 (and
/// one), so a climb that doubles its rows can pass the limit and confirm the refusal at any
/// column count (SQLite's rungs stop at 32,766).
pub const MAX_RUNG_PARAMETERS: usize = 4 * (MAX_BOUND_PARAMETERS + 1);

/// Whether a ladder climbs something Postgres has: its own limits (parameters, columns,
/// function arguments, sizes), and a result read back through the Worker. Not the limits of the
/// Workers runtime and D1's service, which one Postgres connection does not have.
pub fn runs_on_postgres(kind: LadderKind) -> bool {
    matches!(
        kind,
        LadderKind::ParamCeiling
            | LadderKind::StatementLength
            | LadderKind::Columns
            | LadderKind::RowSize
            | LadderKind::JsonPayload
            | LadderKind::FunctionArgs
            | LadderKind::LikePattern
            | LadderKind::ResultSize
    )
}

/// Checks a rung for Postgres: a ladder it has, the core's range of values and held fields, and
/// param-ceiling's columns and parameters against Postgres's limits (1,600 columns; at most
/// [`MAX_RUNG_PARAMETERS`] values, however many rows) where the core checks D1's.
pub fn validate(rung: &RungRequest) -> Result<(), RungError> {
    if !runs_on_postgres(rung.ladder) {
        return Err(RungError {
            field: "ladder",
            message: format!(
                "{} climbs a limit of the Workers runtime and D1's service, which a Postgres \
                 connection does not have",
                rung.ladder
            ),
        });
    }
    if rung.ladder != LadderKind::ParamCeiling {
        return rung.validate();
    }
    // The core checks the held fields and the value's range; its column and parameter caps are
    // D1's, so it sees one column and one row, and Postgres's caps are checked here.
    let columns = rung.held.columns;
    let as_core = RungRequest {
        value: 1,
        held: Held {
            columns: columns.map(|_| 1),
            ..rung.held
        },
        ..rung.clone()
    };
    as_core.validate()?;
    // Rows are bounded by the values they bind (below), not by the core's 100,000 rows.
    if rung.value == 0 {
        return Err(RungError {
            field: "value",
            message: format!(
                "{} takes at least 1 {}, got 0",
                rung.ladder,
                rung.ladder.unit()
            ),
        });
    }
    let columns = columns.unwrap_or(1);
    if !(1..=MAX_COLUMNS).contains(&columns) {
        return Err(RungError {
            field: "held.columns",
            message: format!("must be 1 to {MAX_COLUMNS} on Postgres, got {columns}"),
        });
    }
    let params = rung.value.saturating_mul(columns);
    if params > MAX_RUNG_PARAMETERS {
        return Err(RungError {
            field: "value",
            message: format!(
                "{} rows × {columns} columns = {params} parameters; a Postgres rung binds at most \
                 {MAX_RUNG_PARAMETERS}",
                rung.value
            ),
        });
    }
    Ok(())
}

fn statement(sql: String, rows: usize) -> Statement {
    Statement {
        sql,
        params: Vec::new(),
        rows,
    }
}

/// Plans a rung in Postgres's dialect; call [`validate`] first (a ladder Postgres does not
/// climb plans no calls).
pub fn plan(rung: &RungRequest) -> RungPlan {
    let table = rung.table();
    let n = rung.value;
    let held = rung.held;
    let bigint_table = format!("CREATE TABLE {table} (c0 bigint)");
    let text_table = format!("CREATE TABLE {table} (c0 text)");
    let (prepare, calls) = match rung.ladder {
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
                    if j > 0 {
                        sql.push(',');
                    }
                    write!(sql, "${}", params.len() + 1).unwrap();
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
            let head = format!("INSERT INTO {table} (c0) VALUES ('");
            let tail = "')";
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
                sql: format!("INSERT INTO {table} (c0) VALUES ($1)"),
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
                vec![bigint_table],
                vec![Call::One(statement(
                    format!(
                        "INSERT INTO {table} (c0) VALUES (num_nonnulls({}))",
                        args.join(", ")
                    ),
                    1,
                ))],
            )
        }
        LadderKind::LikePattern => {
            // The subject is the pattern without its final `%`, so the pattern matches.
            let subject = padding(n - 1, held.text.unwrap_or(TextKind::Ascii));
            (
                vec![bigint_table],
                vec![Call::One(statement(
                    format!(
                        "INSERT INTO {table} (c0) VALUES (('{subject}' LIKE '{subject}%')::int)"
                    ),
                    1,
                ))],
            )
        }
        // The table only gives the finish step something to count (nothing is written).
        LadderKind::ResultSize => (vec![bigint_table], vec![Call::Read(result_read(n))]),
        LadderKind::QueryBudget
        | LadderKind::BatchAccounting
        | LadderKind::BatchCeiling
        | LadderKind::QueryDuration
        | LadderKind::ConcurrentCalls => (Vec::new(), Vec::new()),
    };
    RungPlan {
        exists: format!("SELECT COUNT(*) AS n FROM pg_tables WHERE tablename = '{table}'"),
        count: format!("SELECT COUNT(*) AS n FROM {table}"),
        teardown: format!("DROP TABLE IF EXISTS {table}"),
        table,
        prepare,
        calls,
        dispatch: Dispatch::InOrder,
    }
}

/// A SELECT answering exactly `bytes` bytes of ASCII text (at least one) in column
/// [`RESULT_COLUMN`]: rows of [`RESULT_ROW_BYTES`], the last the remainder, as the core's.
fn result_read(bytes: usize) -> Read {
    let bytes = bytes.max(1);
    let rows = bytes.div_ceil(RESULT_ROW_BYTES);
    let last = bytes - (rows - 1) * RESULT_ROW_BYTES;
    let sql = format!(
        "SELECT repeat('0', CASE WHEN i < {rows} THEN {RESULT_ROW_BYTES} ELSE {last} END) \
         AS {RESULT_COLUMN} FROM generate_series(1, {rows}) AS i"
    );
    Read {
        statement: statement(sql, 0),
        rows,
        bytes,
    }
}

#[cfg(test)]
mod tests;
