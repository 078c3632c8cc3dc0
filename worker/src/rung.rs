//! `POST /rung`: one step of one ladder rung per invocation, with the SQL the core plans.
//!
//! The body is a [`d1bench_core::ladder::RungCall`]. Every D1 error is data: it comes back in
//! the step's JSON answer (with status 200), never as a failed request; only a malformed rung
//! is refused, with 400 naming the field.

use d1bench_core::ladder::{
    self, Call, Dispatch, FinishResult, PrepareResult, RESULT_COLUMN, RungCall, RungPlan,
    RungRequest, RungResult, Step, Tally,
};
use worker::{D1Database, Request, Response, Result, RouteContext};

use crate::{BINDING, duration_ms, error_text, json_error, prepare, raw};

/// The rung call a request's body holds, or the 400 response naming what is wrong with it.
pub(crate) fn read_rung(body: &str) -> std::result::Result<RungCall, Result<Response>> {
    let call: RungCall = serde_json::from_str(body)
        .map_err(|e| json_error(400, &format!("invalid rung: {e}"), None))?;
    call.rung
        .validate()
        .map_err(|e| json_error(400, &format!("invalid rung: {e}"), Some(e.field)))?;
    Ok(call)
}

pub async fn handle_rung(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let body = req.text().await?;
    let call = match read_rung(&body) {
        Ok(call) => call,
        Err(rejected) => return rejected,
    };
    let db = ctx.env.d1(BINDING)?;
    let plan = ladder::plan(&call.rung);
    match call.step {
        Step::Prepare => Response::from_json(&prepare_table(&db, &call.rung, &plan).await),
        Step::Climb => Response::from_json(&climb(&db, &call.rung, &plan).await),
        Step::Finish => Response::from_json(&finish(&db, &call.rung, &plan).await),
    }
}

async fn prepare_table(db: &D1Database, rung: &RungRequest, plan: &RungPlan) -> PrepareResult {
    let error = if plan.prepare.is_empty() {
        None
    } else {
        let statements = plan.prepare.iter().map(|s| db.prepare(s)).collect();
        db.batch(statements).await.err().map(|e| error_text(&e))
    };
    PrepareResult {
        rung_id: rung.rung_id,
        error,
    }
}

/// Sends the measured calls as the plan's [`Dispatch`] says.
async fn climb(db: &D1Database, rung: &RungRequest, plan: &RungPlan) -> RungResult {
    match plan.dispatch {
        Dispatch::InOrder => climb_in_order(db, rung, plan).await,
        Dispatch::AllAtOnce => climb_all_at_once(db, rung, plan).await,
    }
}

/// Starts every call (a JavaScript promise runs from its creation) before awaiting any, then
/// awaits them all: `Promise.all` that waits for every one. Each success counts; the first
/// failure in the plan's order is the text kept.
async fn climb_all_at_once(db: &D1Database, rung: &RungRequest, plan: &RungPlan) -> RungResult {
    let mut tally = Tally::default();
    let started = js_sys::Date::now();
    let mut pending = Vec::with_capacity(plan.calls.len());
    for call in &plan.calls {
        let started = call
            .statements()
            .first()
            .ok_or_else(|| "an all-at-once call holds no statement".to_owned())
            .and_then(|s| prepare(db, s).map_err(|e| error_text(&e)))
            .and_then(|prepared| raw::start_run(&prepared));
        pending.push(started);
    }
    for started in pending {
        let outcome = match started {
            Ok(promise) => raw::settle(promise).await,
            Err(e) => Err(e),
        };
        match outcome {
            Ok(answer) => tally.succeeded(answer.d1_ms.unwrap_or(0.0)),
            Err(text) => tally.failed(text),
        }
    }
    let inside_ms = js_sys::Date::now() - started;
    tally.into_result(rung.rung_id, plan, inside_ms)
}

/// Sends the measured calls in order; the first failure ends the climb.
async fn climb_in_order(db: &D1Database, rung: &RungRequest, plan: &RungPlan) -> RungResult {
    let mut tally = Tally::default();
    let started = js_sys::Date::now();
    for call in &plan.calls {
        let outcome = match call {
            Call::One(statement) => match prepare(db, statement) {
                // A rung's D1 clock reads 0 when D1 gives no duration: the climb treats 0 as
                // absent and falls back to the inside clock.
                Ok(prepared) => prepared.run().await.map(|r| duration_ms(&r).unwrap_or(0.0)),
                Err(e) => Err(e),
            },
            Call::Batch(statements) => {
                let prepared: Result<Vec<_>> = statements.iter().map(|s| prepare(db, s)).collect();
                match prepared {
                    Ok(prepared) => db
                        .batch(prepared)
                        .await
                        .map(|results| results.iter().filter_map(duration_ms).sum()),
                    Err(e) => Err(e),
                }
            }
            Call::Read(read) => {
                // The rows come back to the Worker; their bytes are counted one row at a time.
                let counted = match prepare(db, &read.statement) {
                    Ok(prepared) => raw::all_text_bytes(&prepared, RESULT_COLUMN).await,
                    Err(e) => Err(error_text(&e)),
                };
                match counted {
                    Ok((bytes, d1_ms)) => {
                        tally.returned(bytes);
                        Ok(d1_ms.unwrap_or(0.0))
                    }
                    Err(text) => {
                        tally.failed(text);
                        break;
                    }
                }
            }
        };
        match outcome {
            Ok(d1_ms) => tally.succeeded(d1_ms),
            Err(e) => {
                tally.failed(error_text(&e));
                break;
            }
        }
    }
    let inside_ms = js_sys::Date::now() - started;
    tally.into_result(rung.rung_id, plan, inside_ms)
}

#[derive(serde::Deserialize)]
struct Count {
    n: usize,
}

/// Reads the single `n` of a one-statement batch.
async fn count(db: &D1Database, sql: &str) -> Result<usize> {
    let results = db.batch(vec![db.prepare(sql)]).await?;
    Ok(results
        .first()
        .map(|r| r.results::<Count>())
        .transpose()?
        .and_then(|rows| rows.first().map(|c| c.n))
        .unwrap_or(0))
}

/// Counts the rows present (when the table exists) and drops the table.
async fn finish(db: &D1Database, rung: &RungRequest, plan: &RungPlan) -> FinishResult {
    let mut result = FinishResult {
        rung_id: rung.rung_id,
        table_exists: false,
        rows_present: 0,
        error: None,
    };
    let counted = async {
        result.table_exists = count(db, &plan.exists).await? == 1;
        if result.table_exists {
            result.rows_present = count(db, &plan.count).await?;
        }
        db.batch(vec![db.prepare(&plan.teardown)]).await?;
        Ok::<_, worker::Error>(())
    }
    .await;
    if let Err(e) = counted {
        result.error = Some(error_text(&e));
    }
    result
}
