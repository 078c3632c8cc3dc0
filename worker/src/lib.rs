//! The d1bench Worker: each invocation is one step of a probe, a ladder rung or a workload,
//! against the D1 binding `DB`.
//!
//! Routes: `GET /health` answers the Worker's version. A probe is three invocations, each
//! taking a [`d1bench_core::ProbeRequest`] as JSON: `POST /setup` creates the probe's table and
//! indexes (one batch) and answers a [`d1bench_core::SetupResult`]; `POST /probe` writes the rows
//! and nothing else, and answers a [`d1bench_core::ProbeResult`] with its clocks (`probe.rs`);
//! `POST /verify` checks the table exists, counts its rows, computes the content checksum in SQL
//! and drops the table, answering a [`d1bench_core::VerifyResult`]. Setup and verification have
//! invocations of their own so that their cost never reaches the probe's clocks or its query
//! budget. All need `Authorization: Bearer <BENCH_TOKEN>`. The SQL comes from the shared
//! planner, never from the request. `POST /rung` runs one step of a ladder rung (see
//! `rung.rs`); `POST /workload/*` seeds, indexes, loads and checks a workload's table (see
//! `workload.rs`; the KV cache's operations in `cache.rs`). Under `/do/`, the same probes and
//! rungs write through a SQLite-backed Durable Object instead of D1 (`durable/`).

use d1bench_core::sql::{self, Statement};
use d1bench_core::{Checksum, ProbeRequest, ServedBy, SetupResult, Value, VerifyResult};
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{D1Database, D1Result, Env, Request, Response, Result, RouteContext, Router, event};

mod cache;
mod durable;
mod probe;
mod raw;
mod rung;
mod statements;
mod workload;

const BINDING: &str = "DB";
const TOKEN_VAR: &str = "BENCH_TOKEN";

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: worker::Context) -> Result<Response> {
    if let Some(denied) = check_token(&req, &env)? {
        return Ok(denied);
    }
    Router::new()
        .get("/health", handle_health)
        .post_async("/setup", handle_setup)
        .post_async("/probe", probe::handle_probe)
        .post_async("/verify", handle_verify)
        .post_async("/rung", rung::handle_rung)
        .post_async("/workload/seed", workload::handle_seed)
        .post_async("/workload/index", workload::handle_index)
        .post_async("/workload/op", workload::handle_op)
        .post_async("/workload/check", workload::handle_check)
        .post_async("/do/setup", durable::handle_setup)
        .post_async("/do/probe", durable::handle_probe)
        .post_async("/do/verify", durable::handle_verify)
        .post_async("/do/rung", durable::handle_rung)
        .run(req, env)
        .await
}

/// `None` when the request carries the right bearer token; otherwise the response to send.
fn check_token(req: &Request, env: &Env) -> Result<Option<Response>> {
    let Ok(expected) = env.secret(TOKEN_VAR).map(|s| s.to_string()) else {
        return json_error(
            500,
            &format!("the Worker has no {TOKEN_VAR} configured"),
            None,
        )
        .map(Some);
    };
    let given = req.headers().get("Authorization")?.unwrap_or_default();
    let token = given.strip_prefix("Bearer ").unwrap_or("");
    if expected.is_empty() || !constant_time_eq(token.as_bytes(), expected.as_bytes()) {
        return json_error(401, "missing or wrong bearer token", None).map(Some);
    }
    Ok(None)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[derive(Serialize)]
struct Health {
    name: &'static str,
    version: &'static str,
}

fn handle_health(_req: Request, _ctx: RouteContext<()>) -> Result<Response> {
    Response::from_json(&Health {
        name: env!("CARGO_PKG_NAME"),
        version: env!("CARGO_PKG_VERSION"),
    })
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

fn json_error(status: u16, error: &str, field: Option<&str>) -> Result<Response> {
    Ok(Response::from_json(&ErrorBody { error, field })?.with_status(status))
}

/// What `POST /probe` answers: the probe's result, or a 500 naming what failed outside its
/// writes (D1's and the store's refusals are data inside the result).
fn probe_answer(
    probe: &ProbeRequest,
    result: Result<d1bench_core::ProbeResult>,
) -> Result<Response> {
    match result {
        Ok(result) => Response::from_json(&result),
        Err(e) => json_error(
            500,
            &format!(
                "probe {} failed outside its writes: {}",
                probe.probe_id,
                error_text(&e)
            ),
            None,
        ),
    }
}

/// The probe a request carries, or the 400 response naming what is wrong with it.
async fn read_probe(req: &mut Request) -> Result<std::result::Result<ProbeRequest, Response>> {
    let body = req.text().await?;
    let probe: ProbeRequest = match serde_json::from_str(&body) {
        Ok(probe) => probe,
        Err(e) => return json_error(400, &format!("invalid probe: {e}"), None).map(Err),
    };
    if let Err(e) = probe.validate() {
        return json_error(400, &format!("invalid probe: {e}"), Some(e.field)).map(Err);
    }
    Ok(Ok(probe))
}

/// `POST /setup`: the probe's table and indexes, in one batch. A refusal is answered as data.
async fn handle_setup(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let probe = match read_probe(&mut req).await? {
        Ok(probe) => probe,
        Err(rejected) => return Ok(rejected),
    };
    let db = ctx.env.d1(BINDING)?;
    let setup = sql::setup(&probe).iter().map(|s| db.prepare(s)).collect();
    let error = db.batch(setup).await.err().map(|e| error_text(&e));
    Response::from_json(&SetupResult {
        probe_id: probe.probe_id,
        error,
    })
}

/// `POST /verify`: whether the table exists; if it does, its row count and checksum and then
/// the table dropped, in one batch.
async fn handle_verify(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let probe = match read_probe(&mut req).await? {
        Ok(probe) => probe,
        Err(rejected) => return Ok(rejected),
    };
    let db = ctx.env.d1(BINDING)?;
    match verify(&db, &probe).await {
        Ok(result) => Response::from_json(&result),
        Err(e) => json_error(
            500,
            &format!(
                "probe {} could not be verified: {}",
                probe.probe_id,
                error_text(&e)
            ),
            None,
        ),
    }
}

async fn verify(db: &D1Database, probe: &ProbeRequest) -> Result<VerifyResult> {
    let sql = sql::verification(probe);
    let (exists, served_by) = query_count(db, &sql.exists).await?;
    if exists == 0 {
        return Ok(VerifyResult {
            probe_id: probe.probe_id,
            table_exists: false,
            rows_present: 0,
            checksum: None,
            served_by,
        });
    }
    let (rows_present, _) = query_count(db, &sql.count).await?;
    let answered = db
        .batch(vec![db.prepare(&sql.checksum), db.prepare(&sql.teardown)])
        .await?;
    let rows = match answered.first() {
        Some(result) => result.results::<Checksum>()?,
        None => Vec::new(),
    };
    if rows.len() != 1 {
        return Err(worker::Error::RustError(format!(
            "the checksum answered {} rows, not 1",
            rows.len()
        )));
    }
    Ok(VerifyResult {
        probe_id: probe.probe_id,
        table_exists: true,
        rows_present,
        checksum: Some(rows[0]),
        served_by,
    })
}

/// Runs one counting query (answering a column `n`) through the JS binding directly, because
/// the worker crate's `D1ResultMeta` drops `served_by_region`, `served_by_colo` and
/// `served_by_primary`, which say where D1 ran the queries. Answers the count and where it ran.
async fn query_count(db: &D1Database, sql: &str) -> Result<(usize, Option<ServedBy>)> {
    let binding: &worker::worker_sys::D1Database = db.as_ref().unchecked_ref();
    let statements: js_sys::Array = [sql]
        .into_iter()
        .map(|sql| JsValue::from(db.prepare(sql).inner().clone()))
        .collect();
    let answered = JsFuture::from(binding.batch(statements)?).await?;
    let results: js_sys::Array = answered.dyn_into()?;
    let count: worker::worker_sys::D1Result = results.get(0).unchecked_into();
    let n = count
        .results()?
        .map(|rows| rows.get(0))
        .filter(|row| row.is_object())
        .map(|row| js_sys::Reflect::get(&row, &JsValue::from_str("n")))
        .transpose()?
        .and_then(|n| n.as_f64())
        .map_or(0, |n| n as usize);
    let meta = count.meta()?;
    let get = |key: &str| js_sys::Reflect::get(&meta, &JsValue::from_str(key));
    let served_by = ServedBy::reported(
        get("served_by_region")?.as_string(),
        get("served_by_colo")?.as_string(),
        get("served_by_primary")?.as_bool(),
    );
    Ok((n, served_by))
}

fn prepare(db: &D1Database, statement: &Statement) -> Result<worker::D1PreparedStatement> {
    let prepared = db.prepare(&statement.sql);
    if statement.params.is_empty() {
        return Ok(prepared);
    }
    let params: Vec<JsValue> = statement
        .params
        .iter()
        .map(|v| match v {
            // Generated integers stay within 2^53, so a JS number carries them exactly.
            Value::Integer(n) => JsValue::from_f64(*n as f64),
            Value::Text(s) => JsValue::from_str(s),
        })
        .collect();
    prepared.bind(&params)
}

/// D1's `meta.duration` of one answer; `None` when it gives none.
fn duration_ms(result: &D1Result) -> Option<f64> {
    result.meta().ok().flatten().and_then(|m| m.duration)
}

/// D1's error text with its cause, verbatim.
fn error_text(e: &worker::Error) -> String {
    match e {
        worker::Error::D1(d1) => {
            let js: &js_sys::Error = d1.as_ref();
            let message = String::from(js.message());
            let cause = d1.cause();
            if cause == "unknown error" || message.contains(&cause) {
                message
            } else {
                format!("{message} (cause: {cause})")
            }
        }
        other => other.to_string(),
    }
}
