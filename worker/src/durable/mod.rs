//! The `do` target: the Worker's routes under `/do/` that write through a SQLite-backed Durable
//! Object (`object.rs`) instead of D1, one object per database, on the same runtime.
//!
//! `POST /do/setup`, `/do/verify` and `/do/rung` pass their body to the object, which answers
//! as the D1 routes do (a rung's climb timed here, from the Worker's side of the call).
//! `POST /do/probe` plans the same INSERTs as for D1 ([`Inserts`]) and times them as `probe.rs`
//! does, on the Worker's clock: `prepare_ms` (the rows generated and the statements built),
//! `handover_ms` (the request body written: the SQL texts, and the values as the one JSON text
//! D1's Worker hands to JavaScript), then the window `inside_ms` in three parts: `bind_ms` (the
//! request to the object made, its body a JavaScript string), `call_ms` (the object's answer
//! arriving: the body parsed once and every statement run on its storage, in one transaction
//! where D1 would take one `db.batch()`), `read_ms` (the answer read). The object has no clock
//! of its own worth recording, so `d1_ms` is absent.
//!
//! The Worker calls the object once for every strategy. Inside it, each statement of a per-row
//! probe is a call of its own on the storage (`sql.exec`, committed on its own), so `d1_calls`
//! and `statements_sent` count those up to and with the first failure, as for D1; the other
//! strategies are one call, a transaction or one script.

mod object;

use d1bench_core::handover::{Inserts, Values};
use d1bench_core::ladder::{RungResult, Step};
use d1bench_core::{CallShape, ProbeRequest, ProbeResult};
use js_sys::Date;
use object::{Mode, Written};
use wasm_bindgen::JsValue;
use worker::{Env, Method, Request, RequestInit, Response, Result, RouteContext, Stub};

use crate::{error_text, json_error, read_probe};

/// The binding of the Durable Object namespace.
const BINDING: &str = "STORE";
/// The one object the probes write to (its SQLite database is the D1 database's counterpart).
const OBJECT: &str = "d1bench";

fn stub(env: &Env) -> Result<Stub> {
    env.durable_object(BINDING)?.get_by_name(OBJECT)
}

/// A POST to the object's `path` with `body`.
fn post(path: &str, body: &str) -> Result<Request> {
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(JsValue::from_str(body)));
    Request::new_with_init(&format!("https://store{path}"), &init)
}

pub async fn handle_setup(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let probe = match read_probe(&mut req).await? {
        Ok(probe) => probe,
        Err(rejected) => return Ok(rejected),
    };
    let body = serde_json::to_string(&probe)?;
    stub(&ctx.env)?
        .fetch_with_request(post("/setup", &body)?)
        .await
}

pub async fn handle_verify(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let probe = match read_probe(&mut req).await? {
        Ok(probe) => probe,
        Err(rejected) => return Ok(rejected),
    };
    let body = serde_json::to_string(&probe)?;
    let mut answer = stub(&ctx.env)?
        .fetch_with_request(post("/verify", &body)?)
        .await?;
    if answer.status_code() != 200 {
        let text = answer.text().await?;
        return json_error(
            500,
            &format!("probe {} could not be verified: {text}", probe.probe_id),
            None,
        );
    }
    Ok(answer)
}

/// A rung's step on the object; the climb's `inside_ms` is the Worker's time around it.
pub async fn handle_rung(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let body = req.text().await?;
    let call = match crate::rung::read_rung(&body) {
        Ok(call) => call,
        Err(rejected) => return rejected,
    };
    if call.step != Step::Climb {
        return pass_text(&ctx.env, "/rung", &body).await;
    }
    let stub = stub(&ctx.env)?;
    let request = post("/rung", &body)?;
    let started = Date::now();
    let mut answer = stub.fetch_with_request(request).await?;
    let mut result: RungResult = answer.json().await?;
    result.inside_ms = Date::now() - started;
    Response::from_json(&result)
}

/// Passes `body` to the object's `path`, and its answer back.
async fn pass_text(env: &Env, path: &str, body: &str) -> Result<Response> {
    stub(env)?.fetch_with_request(post(path, body)?).await
}

/// The body of `POST /write`: how the statements run, the SQL texts, which text each statement
/// runs and their values (the JSON text D1's Worker hands to JavaScript, embedded as it is),
/// written without a second encoding of the values.
fn write_body(prepared: &mut Inserts, shape: CallShape) -> Result<String> {
    let values = std::mem::replace(&mut prepared.values, Values::None);
    let mode = match shape {
        CallShape::OneCallPerStatement => Mode::Each,
        CallShape::OneBatch => Mode::Transaction,
        CallShape::OneExec => Mode::Script,
    };
    let (texts, text_of, values) = match values {
        // One `sql.exec` of the script: its statements are one a line, and the object's SQL
        // interface takes many statements separated by semicolons.
        Values::Script(script) => (
            serde_json::to_string(&[script.replace('\n', ";\n")])?,
            "[0]".to_owned(),
            "null".to_owned(),
        ),
        values => {
            let values = match values {
                Values::None => "null".to_owned(),
                Values::Json(json) => json,
                Values::Payloads(payloads) => {
                    serde_json::to_string(&payloads.into_iter().map(|p| [p]).collect::<Vec<_>>())?
                }
                Values::Script(_) => unreachable!("matched above"),
            };
            (
                serde_json::to_string(&prepared.texts)?,
                serde_json::to_string(&prepared.text_of)?,
                values,
            )
        }
    };
    let mode = serde_json::to_string(&mode)?;
    Ok(format!(
        "{{\"mode\":{mode},\"texts\":{texts},\"textOf\":{text_of},\"values\":{values}}}"
    ))
}

pub async fn handle_probe(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let probe = match read_probe(&mut req).await? {
        Ok(probe) => probe,
        Err(rejected) => return Ok(rejected),
    };
    let stub = stub(&ctx.env)?;
    crate::probe_answer(&probe, perform(&stub, &probe).await)
}

async fn perform(stub: &Stub, probe: &ProbeRequest) -> Result<ProbeResult> {
    let started = Date::now();
    let mut prepared = Inserts::of(probe);
    let prepare_ms = Date::now() - started;
    let shape = probe.strategy.calls();

    let handing = Date::now();
    let body = write_body(&mut prepared, shape)?;
    let opened = Date::now();
    let request = post("/write", &body);
    drop(body);
    let bound_at = Date::now();
    let answered = match request {
        Ok(request) => stub.fetch_with_request(request).await,
        Err(e) => Err(e),
    };
    let called_at = Date::now();
    let written: std::result::Result<Written, String> = match answered {
        Ok(mut answer) if answer.status_code() == 200 => {
            answer.json().await.map_err(|e| error_text(&e))
        }
        Ok(mut answer) => Err(answer.text().await.unwrap_or_default()),
        Err(e) => Err(error_text(&e)),
    };
    let read_at = Date::now();
    let slow_ms = probe.debug_slow_ms(read_at - opened);
    let closed = if slow_ms > 0.0 {
        worker::Delay::from(std::time::Duration::from_micros((slow_ms * 1000.0) as u64)).await;
        Date::now()
    } else {
        read_at
    };

    // Debugging the harness only (see `ProbeRequest::debug_corrupt`): after the clock stopped.
    if let Some(corrupt) = &prepared.corrupt {
        stub.fetch_with_request(post("/exec", corrupt)?).await?;
    }

    let (ran, error) = match written {
        Ok(Written { ran, error }) => (ran, error),
        Err(text) => (0, Some(text)),
    };
    let (statements_sent, d1_calls) = match shape {
        CallShape::OneCallPerStatement => {
            let calls = (ran + usize::from(error.is_some())).min(prepared.statements());
            (calls, calls)
        }
        CallShape::OneBatch | CallShape::OneExec => (prepared.statements(), 1),
    };
    // The rows of the statements the object kept: all or none of a transaction and of a
    // script that ran whole, those before the failure of statements run on their own.
    let rows_expected = match shape {
        CallShape::OneExec if error.is_none() && ran == 1 => prepared.statement_rows.iter().sum(),
        CallShape::OneExec => 0,
        _ => prepared.statement_rows.iter().take(ran).sum(),
    };
    let (outcome, refusal) = d1bench_core::ladder::classify(error.as_deref());
    Ok(ProbeResult {
        probe_id: probe.probe_id,
        strategy: probe.strategy,
        columns: probe.columns,
        row_bytes: probe.row_bytes,
        rows_expected,
        statements_planned: prepared.statements(),
        statements_sent,
        d1_calls,
        rows_per_statement: prepared.rows_per_statement,
        max_statement_bytes: prepared.max_statement_bytes,
        prepare_ms: Some(prepare_ms),
        inside_ms: closed - opened,
        handover_ms: Some(opened - handing),
        bind_ms: Some(bound_at - opened),
        call_ms: Some(called_at - bound_at),
        read_ms: Some(read_at - called_at),
        d1_ms: None,
        outcome,
        refusal,
        error,
    })
}
