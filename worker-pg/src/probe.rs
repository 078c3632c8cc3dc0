//! `POST /probe`: a probe's rows written to Postgres through the Hyperdrive binding, and the
//! Worker's clocks.
//!
//! In the order they run, each on the Worker's clock (`Date.now()`):
//! - `prepare_ms`: generating the rows and planning every statement (`d1bench_core_pg::sql`),
//!   then opening the connection through the binding (a socket, the startup and the password
//!   exchange). D1's binding has no connection to open, so this part has no counterpart there,
//!   and it stays out of the window as the D1 Worker's preparation does;
//! - no `handover_ms`: the values go from the Worker's memory to the socket with no JavaScript
//!   values made;
//! - `inside_ms`, the window, in three parts: `bind_ms` (each distinct statement text prepared
//!   on the server: a Parse and Describe round trip each; none for `exec`), `call_ms` (the
//!   statements executed until the last answer: per-row one autocommit statement at a time; the
//!   batch strategies `BEGIN`, every statement pipelined on the connection, `COMMIT`, so a
//!   failure rolls all back as D1's batch does; `exec` one simple-protocol query of the script;
//!   `copy` one `COPY ... FROM STDIN` with its rows sent as one chunk of its data stream),
//!   `read_ms` (the rows each statement reports changed, summed).
//!
//! No D1 clock (`d1_ms` empty): the server reports no time of its own per statement.

use bytes::Bytes;
use d1bench_core::generate::Value;
use d1bench_core::{CallShape, ProbeRequest, ProbeResult, Statement, Strategy};
use futures_util::SinkExt;
use futures_util::future::join_all;
use js_sys::Date;
use std::time::Duration;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, SimpleQueryMessage};
use worker::{Delay, Request, Response, Result, RouteContext};

use crate::{connect, error_text, json_error, read_probe};

pub async fn handle_probe(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let probe = match read_probe(&mut req).await? {
        Ok(probe) => probe,
        Err(rejected) => return Ok(rejected),
    };
    let started = Date::now();
    let mut plan = d1bench_core_pg::sql::plan(&probe);
    let copy_data = take_copy_data(probe.strategy, &mut plan);
    let connection = match connect(&ctx.env).await {
        Ok(connection) => connection,
        // The server answered and refused the connection (too many clients, its resources):
        // a classified refusal of the probe, nothing written; a server that cannot be reached
        // or an error no rule knows is a 502 naming it.
        Err(e) => {
            return match refused_before_writing(&probe, &plan, Date::now() - started, e) {
                Ok(result) => Response::from_json(&result),
                Err(e) => json_error(502, &e),
            };
        }
    };
    let prepare_ms = Date::now() - started;
    let performed = perform(&connection.client, &probe, &plan, copy_data, prepare_ms).await;
    connection.close().await;
    match performed {
        Ok(result) => Response::from_json(&result),
        Err(e) => json_error(
            500,
            &format!("probe {} failed outside its writes: {e}", probe.probe_id),
        ),
    }
}

/// The probe's answer when the server refused its connection for a reason the classifier
/// knows: refused, no statement sent, nothing written (and so nothing the host expects to
/// find); otherwise the error back.
fn refused_before_writing(
    probe: &ProbeRequest,
    plan: &d1bench_core::Plan,
    prepare_ms: f64,
    error: String,
) -> std::result::Result<ProbeResult, String> {
    let (outcome, refusal) = d1bench_core_pg::refusal::classify(Some(&error));
    if outcome != d1bench_core::Outcome::Refused {
        return Err(error);
    }
    Ok(ProbeResult {
        probe_id: probe.probe_id,
        strategy: probe.strategy,
        columns: probe.columns,
        row_bytes: probe.row_bytes,
        rows_expected: 0,
        statements_planned: plan.inserts.len(),
        statements_sent: 0,
        // A batch or exec is one call, and that one was refused; per-row and COPY sent none.
        d1_calls: match probe.strategy.calls() {
            CallShape::OneCallPerStatement | CallShape::OneCopy => 0,
            CallShape::OneBatch | CallShape::OneExec => 1,
        },
        rows_per_statement: plan.rows_per_statement(),
        max_statement_bytes: plan.max_statement_bytes(),
        prepare_ms: Some(prepare_ms),
        inside_ms: 0.0,
        handover_ms: None,
        bind_ms: None,
        call_ms: None,
        read_ms: None,
        d1_ms: None,
        outcome,
        refusal,
        error: Some(error),
    })
}

/// What the statements' calls came to.
struct Calls {
    statements_sent: usize,
    calls: usize,
    /// Rows each executed statement reported, in order.
    changed: Vec<u64>,
    error: Option<String>,
}

/// A `copy` plan's data, each statement's moved out of its one parameter into the chunk its
/// stream sends (no copy of the bytes, and before the window opens); empty for the others.
fn take_copy_data(strategy: Strategy, plan: &mut d1bench_core::Plan) -> Vec<Bytes> {
    if strategy != Strategy::Copy {
        return Vec::new();
    }
    plan.inserts
        .iter_mut()
        .map(|s| match s.params.pop() {
            Some(Value::Text(data)) => Bytes::from(data),
            other => unreachable!("a COPY statement's one parameter is its text data: {other:?}"),
        })
        .collect()
}

async fn perform(
    client: &Client,
    probe: &ProbeRequest,
    plan: &d1bench_core::Plan,
    copy_data: Vec<Bytes>,
    prepare_ms: f64,
) -> std::result::Result<ProbeResult, String> {
    let opened = Date::now();
    let prepared = match probe.strategy {
        Strategy::Exec => Ok(Vec::new()),
        _ => prepare(client, &plan.inserts).await,
    };
    let bound_at = Date::now();
    let calls = match prepared {
        Err(e) => Calls {
            statements_sent: 0,
            calls: 0,
            changed: Vec::new(),
            error: Some(e),
        },
        Ok(prepared) => match probe.strategy.calls() {
            CallShape::OneExec => exec(client, &plan.inserts).await,
            CallShape::OneCallPerStatement => one_by_one(client, &plan.inserts, &prepared).await,
            CallShape::OneBatch => in_one_transaction(client, &plan.inserts, &prepared).await,
            CallShape::OneCopy => copy(client, &plan.inserts, &prepared, copy_data).await,
        },
    };
    let called_at = Date::now();
    // A failed batch or exec is rolled back whole: nothing it reported stays.
    let rows_expected = match (&calls.error, probe.strategy.calls()) {
        (Some(_), CallShape::OneBatch | CallShape::OneExec | CallShape::OneCopy) => 0,
        _ => calls.changed.iter().sum::<u64>() as usize,
    };
    let read_at = Date::now();
    let slow_ms = probe.debug_slow_ms(read_at - opened);
    let closed = if slow_ms > 0.0 {
        Delay::from(Duration::from_micros((slow_ms * 1000.0) as u64)).await;
        Date::now()
    } else {
        read_at
    };
    if let Some(corrupt) = &plan.corrupt {
        client
            .batch_execute(corrupt)
            .await
            .map_err(|e| format!("the debugging corruption failed: {}", error_text(&e)))?;
    }
    let (outcome, refusal) = d1bench_core_pg::refusal::classify(calls.error.as_deref());
    Ok(ProbeResult {
        probe_id: probe.probe_id,
        strategy: probe.strategy,
        columns: probe.columns,
        row_bytes: probe.row_bytes,
        rows_expected,
        statements_planned: plan.inserts.len(),
        statements_sent: calls.statements_sent,
        d1_calls: calls.calls,
        rows_per_statement: plan.rows_per_statement(),
        max_statement_bytes: plan.max_statement_bytes(),
        prepare_ms: Some(prepare_ms),
        inside_ms: closed - opened,
        handover_ms: None,
        bind_ms: Some(bound_at - opened),
        call_ms: Some(called_at - bound_at),
        read_ms: Some(read_at - called_at),
        d1_ms: None,
        outcome,
        refusal,
        error: calls.error,
    })
}

/// Each distinct statement text prepared once, in order of first use; which one each
/// statement runs is found by its text.
async fn prepare(
    client: &Client,
    statements: &[Statement],
) -> std::result::Result<Vec<(String, tokio_postgres::Statement)>, String> {
    let mut prepared: Vec<(String, tokio_postgres::Statement)> = Vec::new();
    for statement in statements {
        if prepared.iter().any(|(sql, _)| *sql == statement.sql) {
            continue;
        }
        let done = client
            .prepare(&statement.sql)
            .await
            .map_err(|e| error_text(&e))?;
        prepared.push((statement.sql.clone(), done));
    }
    Ok(prepared)
}

fn prepared_for<'a>(
    prepared: &'a [(String, tokio_postgres::Statement)],
    statement: &Statement,
) -> &'a tokio_postgres::Statement {
    &prepared
        .iter()
        .find(|(sql, _)| *sql == statement.sql)
        .expect("every statement's text was prepared")
        .1
}

/// A statement's values as tokio-postgres binds them: `bigint` and `text`.
fn params(statement: &Statement) -> Vec<&(dyn ToSql + Sync)> {
    statement
        .params
        .iter()
        .map(|value| match value {
            Value::Integer(n) => n as &(dyn ToSql + Sync),
            Value::Text(s) => s as &(dyn ToSql + Sync),
        })
        .collect()
}

/// Per-row: each statement its own autocommit call, stopping at the first failure.
async fn one_by_one(
    client: &Client,
    statements: &[Statement],
    prepared: &[(String, tokio_postgres::Statement)],
) -> Calls {
    let mut calls = Calls {
        statements_sent: 0,
        calls: 0,
        changed: Vec::with_capacity(statements.len()),
        error: None,
    };
    for statement in statements {
        calls.statements_sent += 1;
        calls.calls += 1;
        match client
            .execute(prepared_for(prepared, statement), &params(statement))
            .await
        {
            Ok(n) => calls.changed.push(n),
            Err(e) => {
                calls.error = Some(error_text(&e));
                break;
            }
        }
    }
    calls
}

/// The batch strategies: `BEGIN`, every statement pipelined (sent without waiting for the one
/// before), `COMMIT`; on a failure `ROLLBACK`, and the first statement's error is the one kept.
async fn in_one_transaction(
    client: &Client,
    statements: &[Statement],
    prepared: &[(String, tokio_postgres::Statement)],
) -> Calls {
    let mut calls = Calls {
        statements_sent: statements.len(),
        calls: 1,
        changed: Vec::new(),
        error: None,
    };
    if let Err(e) = client.batch_execute("BEGIN").await {
        calls.error = Some(error_text(&e));
        return calls;
    }
    let values: Vec<Vec<&(dyn ToSql + Sync)>> = statements.iter().map(params).collect();
    let answers = join_all(
        statements
            .iter()
            .zip(&values)
            .map(|(statement, values)| client.execute(prepared_for(prepared, statement), values)),
    )
    .await;
    for answer in answers {
        match answer {
            Ok(n) => calls.changed.push(n),
            Err(e) => {
                calls.error = Some(error_text(&e));
                break;
            }
        }
    }
    let end = if calls.error.is_some() {
        "ROLLBACK"
    } else {
        "COMMIT"
    };
    if let Err(e) = client.batch_execute(end).await
        && calls.error.is_none()
    {
        calls.error = Some(error_text(&e));
    }
    calls
}

/// `exec`: the script in one simple-protocol query; each statement's `INSERT 0 n` summed.
async fn exec(client: &Client, statements: &[Statement]) -> Calls {
    let script = d1bench_core_pg::sql::exec_script(statements);
    let mut calls = Calls {
        statements_sent: statements.len(),
        calls: 1,
        changed: Vec::new(),
        error: None,
    };
    match client.simple_query(&script).await {
        Ok(messages) => calls
            .changed
            .extend(messages.iter().filter_map(|m| match m {
                SimpleQueryMessage::CommandComplete(n) => Some(*n),
                _ => None,
            })),
        Err(e) => calls.error = Some(error_text(&e)),
    }
    calls
}

/// `copy`: each statement's data sent as one chunk into its COPY, and the rows Postgres reports
/// copied summed. One COPY is applied whole or not at all; when a fixed rows per statement splits
/// the rows into several, they run inside `BEGIN` and `COMMIT` (as a batch), so a failure still
/// leaves nothing.
async fn copy(
    client: &Client,
    statements: &[Statement],
    prepared: &[(String, tokio_postgres::Statement)],
    data: Vec<Bytes>,
) -> Calls {
    let mut calls = Calls {
        statements_sent: 0,
        calls: 0,
        changed: Vec::with_capacity(statements.len()),
        error: None,
    };
    let several = statements.len() > 1;
    if several && let Err(e) = client.batch_execute("BEGIN").await {
        calls.error = Some(error_text(&e));
        return calls;
    }
    for (statement, chunk) in statements.iter().zip(data) {
        calls.statements_sent += 1;
        calls.calls += 1;
        match copy_one(client, prepared_for(prepared, statement), chunk).await {
            Ok(n) => calls.changed.push(n),
            Err(e) => {
                calls.error = Some(error_text(&e));
                break;
            }
        }
    }
    if several {
        let end = if calls.error.is_some() {
            "ROLLBACK"
        } else {
            "COMMIT"
        };
        if let Err(e) = client.batch_execute(end).await
            && calls.error.is_none()
        {
            calls.error = Some(error_text(&e));
        }
    }
    calls
}

/// One COPY: the stream opened by the prepared statement, the chunk sent, the stream ended; the
/// rows the server reports copied.
async fn copy_one(
    client: &Client,
    statement: &tokio_postgres::Statement,
    chunk: Bytes,
) -> std::result::Result<u64, tokio_postgres::Error> {
    let sink = client.copy_in::<_, Bytes>(statement).await?;
    let mut sink = std::pin::pin!(sink);
    sink.as_mut().send(chunk).await?;
    sink.as_mut().finish().await
}
