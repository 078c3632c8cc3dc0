//! `POST /rung`: one step of one ladder rung per invocation, with the SQL the Postgres planner
//! plans (`d1bench_core_pg_ladder`), as the D1 Worker's `POST /rung` runs the core's.
//!
//! The body is a [`d1bench_core::ladder::RungCall`]; each step opens its own connection through
//! the binding. Every Postgres error is data: it comes back in the step's JSON answer (status
//! 200) with its SQLSTATE, classified by `d1bench_core_pg_ladder::refusal`; a malformed rung, or one
//! of a ladder Postgres does not have, is refused with 400 naming the field; no connection is a
//! 502. `inside_ms` is the Worker's clock around the measured calls, after the connection is
//! open; there is no D1 clock (`d1_ms` 0).

use d1bench_core::ladder::{
    Call, FinishResult, PrepareResult, RESULT_COLUMN, RungCall, RungPlan, RungRequest, RungResult,
    Step, Tally,
};
use d1bench_core_pg_ladder::refusal;
use futures_util::{TryStreamExt, pin_mut};
use js_sys::Date;
use tokio_postgres::Client;
use worker::{Request, Response, Result, RouteContext};

use crate::{connect, error_text, json_error, params};

pub async fn handle_rung(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let body = req.text().await?;
    let call: RungCall = match serde_json::from_str(&body) {
        Ok(call) => call,
        Err(e) => return json_error(400, &format!("invalid rung: {e}")),
    };
    if let Err(e) = d1bench_core_pg_ladder::validate(&call.rung) {
        return json_error(400, &format!("invalid rung: {e}"));
    }
    let plan = d1bench_core_pg_ladder::plan(&call.rung);
    let connection = match connect(&ctx.env).await {
        Ok(connection) => connection,
        Err(e) => return json_error(502, &e),
    };
    let client = &connection.client;
    let answer = match call.step {
        Step::Prepare => Response::from_json(&prepare_table(client, &call.rung, &plan).await),
        Step::Climb => Response::from_json(&climb(client, &call.rung, &plan).await),
        Step::Finish => Response::from_json(&finish(client, &call.rung, &plan).await),
    };
    connection.close().await;
    answer
}

/// The rung's table, in one simple-protocol query (one implicit transaction).
async fn prepare_table(client: &Client, rung: &RungRequest, plan: &RungPlan) -> PrepareResult {
    let error = if plan.prepare.is_empty() {
        None
    } else {
        client
            .batch_execute(&plan.prepare.join(";\n"))
            .await
            .err()
            .map(|e| error_text(&e))
    };
    PrepareResult {
        rung_id: rung.rung_id,
        error,
    }
}

/// Sends the measured calls in order, each one statement in autocommit (every Postgres rung's
/// plan is in order and has no batch); the first failure ends the climb.
async fn climb(client: &Client, rung: &RungRequest, plan: &RungPlan) -> RungResult {
    let mut tally = Tally::default();
    let started = Date::now();
    for call in &plan.calls {
        let outcome = match call {
            Call::One(statement) => client
                .execute(statement.sql.as_str(), &params(statement))
                .await
                .map(|_| ())
                .map_err(|e| error_text(&e)),
            Call::Read(read) => match count_text_bytes(client, &read.statement.sql).await {
                Ok(bytes) => {
                    tally.returned(bytes);
                    Ok(())
                }
                Err(e) => Err(error_text(&e)),
            },
            Call::Batch(_) => Err("a Postgres rung holds no batch".to_owned()),
        };
        match outcome {
            Ok(()) => tally.succeeded(0.0),
            Err(text) => {
                tally.failed(text);
                break;
            }
        }
    }
    let inside_ms = Date::now() - started;
    let mut result = tally.into_result(rung.rung_id, plan, inside_ms);
    // The tally classifies by D1's texts; a Postgres error is classified by its SQLSTATE.
    (result.outcome, result.refusal) = refusal::classify(result.error.as_deref());
    result
}

/// Runs a read and counts the UTF-8 bytes of its column [`RESULT_COLUMN`] one row at a time as
/// the rows arrive, keeping none.
async fn count_text_bytes(
    client: &Client,
    sql: &str,
) -> std::result::Result<usize, tokio_postgres::Error> {
    let no_params: [&(dyn tokio_postgres::types::ToSql + Sync); 0] = [];
    let rows = client.query_raw(sql, no_params).await?;
    pin_mut!(rows);
    let mut bytes = 0;
    while let Some(row) = rows.try_next().await? {
        bytes += row.try_get::<_, &str>(RESULT_COLUMN)?.len();
    }
    Ok(bytes)
}

/// Counts the rows present (when the table exists) and drops the table.
async fn finish(client: &Client, rung: &RungRequest, plan: &RungPlan) -> FinishResult {
    let mut result = FinishResult {
        rung_id: rung.rung_id,
        table_exists: false,
        rows_present: 0,
        error: None,
    };
    let count = |row: tokio_postgres::Row| row.try_get::<_, i64>("n").map(|n| n as usize);
    let counted = async {
        result.table_exists = count(client.query_one(&plan.exists, &[]).await?)? == 1;
        if result.table_exists {
            result.rows_present = count(client.query_one(&plan.count, &[]).await?)?;
        }
        client.batch_execute(&plan.teardown).await
    }
    .await;
    if let Err(e) = counted {
        result.error = Some(error_text(&e));
    }
    result
}
