//! `POST /probe`: a probe's rows written through the D1 binding, and the Worker's clocks.
//!
//! In the order they run, each on the Worker's clock (`Date.now()`, whole milliseconds):
//! - `prepare_ms`: generating the rows and building every statement (its SQL text, and the
//!   bound values of all statements as one JSON text, see [`d1bench_core::sql::values_json`];
//!   for `json`, each statement's JSON payload; for `exec`, the script: see
//!   [`d1bench_core::handover`]);
//! - `handover_ms`: one `JSON.parse` of those values, and each distinct SQL text, payload or
//!   the script made a JavaScript string, each freed from the Worker's memory as JavaScript
//!   gets it. Also before the window: the JavaScript Worker's counterpart is its `JSON.parse`
//!   of the request, and both windows open with the values JavaScript's, so the two
//!   instruments' windows time the same work and this part is the Rust Worker's own cost;
//! - `inside_ms`, the window, in three parts: `bind_ms` (each statement prepared on the
//!   binding and its values bound, in one call into JavaScript: `bind.js`), `call_ms` (the D1
//!   calls until their answers arrive), `read_ms` (D1's answers read in one call into
//!   JavaScript: `meta.changes`, the rows acknowledged, and `meta.duration`, `d1_ms`; for
//!   `exec`, `count`, the statements D1 ran, whose planned rows are the rows acknowledged, and
//!   `duration`).
//!
//! With `debug_slow_percent` (`--debug-slow`, debugging the harness), the window ends with a
//! timer of that share of its time so far.
//!
//! Its D1 calls are exactly the INSERT calls, so only they meet the per-invocation query budget.

use d1bench_core::handover::{Inserts, Values};
use d1bench_core::{CallShape, ProbeRequest, ProbeResult, Strategy};
use js_sys::{Array, Date, Function, JsString, Reflect};
use std::time::Duration;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::worker_sys::{D1Database as Binding, D1PreparedStatement as Bound};

use worker::{D1Database, Delay, Request, Response, Result, RouteContext};

use crate::{BINDING, error_text, probe_answer, read_probe};

pub async fn handle_probe(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let probe = match read_probe(&mut req).await? {
        Ok(probe) => probe,
        Err(rejected) => return Ok(rejected),
    };
    let db = ctx.env.d1(BINDING)?;
    let started = Date::now();
    let prepared = Inserts::of(&probe);
    let prepare_ms = Date::now() - started;
    probe_answer(&probe, perform(&db, &probe, prepared, prepare_ms).await)
}

/// A probe's INSERTs handed over to JavaScript, before any statement is prepared.
enum Handed {
    /// Each distinct SQL text as a JavaScript string, and each statement's array of values
    /// (`undefined`: nothing bound).
    Statements { texts: Array, values: JsValue },
    /// The script for `db.exec()`.
    Script(JsValue),
}

#[wasm_bindgen(module = "/src/bind.js")]
extern "C" {
    /// Every statement prepared and bound, in one call (see `bind.js`).
    #[wasm_bindgen(catch, js_name = bindAll)]
    fn bind_all_in_js(
        db: &Binding,
        texts: &Array,
        text_of: &[u32],
        values: &JsValue,
    ) -> std::result::Result<Array, JsValue>;
    /// `meta.changes` and `meta.duration` of every answer summed, in one call (see `bind.js`).
    #[wasm_bindgen(js_name = readAnswers)]
    fn read_answers_in_js(answers: &Array) -> Vec<f64>;
}

/// The INSERTs handed to JavaScript, ready for their D1 calls.
enum Ready {
    /// Prepared statements with their values bound, as `db.batch()` takes them.
    Statements(Array),
    /// The script for `db.exec()`, and the statements (lines) it holds.
    Script(JsValue, usize),
}

/// Writes the rows, and nothing else: the table was created by `POST /setup`, and the rows are
/// counted by `POST /verify`. Handing the values over is timed before the window, and the window's
/// three parts apart: preparing and binding, the D1 calls, reading the answers.
async fn perform(
    db: &D1Database,
    probe: &ProbeRequest,
    mut prepared: Inserts,
    prepare_ms: f64,
) -> Result<ProbeResult> {
    let binding: &Binding = db.as_ref().unchecked_ref();

    // Handing over comes before the window, as the JavaScript Worker's `JSON.parse` of its
    // body does: both windows open with the values JavaScript values already, so they time
    // the same work (the D1 binding is JavaScript's, whatever the Worker is written in). The
    // values leave the Worker's memory as they are handed over: no second copy of them stays
    // alive during the call.
    let handing = Date::now();
    let values = std::mem::replace(&mut prepared.values, Values::None);
    let handed = hand_over(&prepared.texts, values);
    let opened = Date::now();
    let prepared = &prepared;
    let bound = handed.and_then(|handed| bind_all(binding, prepared, handed));
    let bound_at = Date::now();
    let calls = match bound {
        Ok(ready) => call(binding, probe.strategy, ready).await,
        Err(e) => Calls::failed(0, 0, e),
    };
    let called_at = Date::now();
    let answers = match &calls.exec {
        Some(answer) => Answers::read_exec(answer, &prepared.statement_rows)?,
        None => Answers::read(&calls.answers),
    };
    let read_at = Date::now();
    // Debugging the harness only (`--debug-slow`): a wait inside the window, its share of the
    // window so far (a timer, so the clock moves on Cloudflare too); in none of its parts.
    let slow_ms = probe.debug_slow_ms(read_at - opened);
    // Without the wait, the window closes where the reading ended, so that its three parts add
    // up to it exactly (the local runtime's clock may tick between two statements).
    let closed = if slow_ms > 0.0 {
        Delay::from(Duration::from_micros((slow_ms * 1000.0) as u64)).await;
        Date::now()
    } else {
        read_at
    };
    let inside_ms = closed - opened;

    // Debugging the harness only (see `ProbeRequest::debug_corrupt`): after the clock stopped.
    if let Some(corrupt) = &prepared.corrupt {
        db.prepare(corrupt).run().await?;
    }

    let (outcome, refusal) = d1bench_core::ladder::classify(calls.error.as_deref());
    let error = calls.error.clone();
    Ok(ProbeResult {
        probe_id: probe.probe_id,
        strategy: probe.strategy,
        columns: probe.columns,
        row_bytes: probe.row_bytes,
        rows_expected: answers.changes,
        statements_planned: prepared.statements(),
        statements_sent: calls.statements_sent,
        d1_calls: calls.d1_calls,
        rows_per_statement: prepared.rows_per_statement,
        max_statement_bytes: prepared.max_statement_bytes,
        prepare_ms: Some(prepare_ms),
        inside_ms,
        handover_ms: Some(opened - handing),
        bind_ms: Some(bound_at - opened),
        call_ms: Some(called_at - bound_at),
        read_ms: Some(read_at - called_at),
        d1_ms: answers.duration_ms,
        outcome,
        refusal,
        error,
    })
}

/// The values, payloads or script and each distinct SQL text made JavaScript values (one
/// `JSON.parse` for all the values of a bound probe, one string per payload), each freed from
/// the Worker's memory once JavaScript has it.
fn hand_over(texts: &[String], values: Values) -> std::result::Result<Handed, String> {
    let texts = || texts.iter().map(|t| JsValue::from_str(t)).collect();
    Ok(match values {
        Values::Script(script) => Handed::Script(JsValue::from_str(&script)),
        Values::None => Handed::Statements {
            texts: texts(),
            values: JsValue::UNDEFINED,
        },
        Values::Json(json) => Handed::Statements {
            texts: texts(),
            values: js_sys::JSON::parse(&json).map_err(js_error_text)?,
        },
        // One string per statement, each its one parameter.
        Values::Payloads(payloads) => Handed::Statements {
            texts: texts(),
            values: payloads
                .into_iter()
                .map(|p| Array::of1(&JsValue::from_str(&p)))
                .collect::<Array>()
                .into(),
        },
    })
}

/// Every INSERT prepared on the binding with its values bound, in an array as `db.batch()`
/// takes them, in one call into JavaScript for the whole batch (`bind.js`), which text each
/// statement runs given as a typed array viewing the Worker's memory. From Rust, each
/// statement's `prepare`, `bind` and array of values would cost a crossing each (the `worker`
/// crate's `bind` one per value, its `prepare` the text decoded every time).
fn bind_all(
    binding: &Binding,
    prepared: &Inserts,
    handed: Handed,
) -> std::result::Result<Ready, String> {
    let (texts, values) = match handed {
        Handed::Script(script) => return Ok(Ready::Script(script, prepared.statements())),
        Handed::Statements { texts, values } => (texts, values),
    };
    let text_of: Vec<u32> = prepared.text_of.iter().map(|&t| t as u32).collect();
    bind_all_in_js(binding, &texts, &text_of, &values)
        .map(Ready::Statements)
        .map_err(js_error_text)
}

/// The D1 calls of a probe and D1's answers to them, before they are read.
struct Calls {
    statements_sent: usize,
    d1_calls: usize,
    /// D1's answer (a `D1Result`) to each statement it reported done, in order, left in
    /// JavaScript until they are read.
    answers: Array,
    /// D1's answer to a `db.exec()` (a `D1ExecResult`: `count` and `duration`).
    exec: Option<JsValue>,
    /// D1's error text, when a call failed.
    error: Option<String>,
}

impl Calls {
    fn failed(statements_sent: usize, d1_calls: usize, error: String) -> Self {
        Calls {
            statements_sent,
            d1_calls,
            answers: Array::new(),
            exec: None,
            error: Some(error),
        }
    }
}

/// Per-row: one call per statement, stopping at the first failure. Bound, literal, json and
/// batched-rows: one `db.batch()`, which D1 rolls back whole when a statement fails. Exec: one
/// `db.exec()` of the script.
async fn call(binding: &Binding, strategy: Strategy, ready: Ready) -> Calls {
    let statements = match ready {
        Ready::Script(script, lines) => return exec(binding, &script, lines).await,
        Ready::Statements(statements) => statements,
    };
    let planned = statements.length() as usize;
    match strategy.calls() {
        CallShape::OneCallPerStatement => {
            let mut calls = Calls {
                statements_sent: 0,
                d1_calls: 0,
                answers: Array::new(),
                exec: None,
                error: None,
            };
            for statement in statements.iter() {
                calls.statements_sent += 1;
                calls.d1_calls += 1;
                match settle(statement.unchecked_into::<Bound>().run()).await {
                    Ok(answer) => {
                        calls.answers.push(&answer);
                    }
                    Err(e) => {
                        calls.error = Some(e);
                        break;
                    }
                }
            }
            calls
        }
        CallShape::OneBatch | CallShape::OneExec => match settle(binding.batch(statements)).await {
            Ok(answers) => Calls {
                statements_sent: planned,
                d1_calls: 1,
                answers: answers.unchecked_into(),
                exec: None,
                error: None,
            },
            Err(e) => Calls::failed(planned, 1, e),
        },
    }
}

/// One `db.exec()` of the script: one D1 call, every line of it a statement sent.
async fn exec(binding: &Binding, script: &JsValue, lines: usize) -> Calls {
    let called = Reflect::get(binding, &JsValue::from_str("exec")).and_then(|exec| {
        exec.unchecked_into::<Function>()
            .call1(binding, script)
            .map(JsCast::unchecked_into::<js_sys::Promise>)
    });
    match settle(called).await {
        Ok(answer) => Calls {
            statements_sent: lines,
            d1_calls: 1,
            answers: Array::new(),
            exec: Some(answer),
            error: None,
        },
        Err(e) => Calls::failed(lines, 1, e),
    }
}

/// The value a binding call's promise resolves to, or D1's error text.
async fn settle(
    promise: std::result::Result<js_sys::Promise, JsValue>,
) -> std::result::Result<JsValue, String> {
    JsFuture::from(promise.map_err(js_error_text)?)
        .await
        .map_err(js_error_text)
}

/// What D1's answers say.
struct Answers {
    /// `meta.changes` summed.
    changes: usize,
    /// `meta.duration` summed; `None` when there is no answer or one has no duration.
    duration_ms: Option<f64>,
}

impl Answers {
    /// Reads a `db.exec()` answer: `count` statements ran, so the rows of the first `count`
    /// planned statements are acknowledged (D1 reports no changes for an exec); `duration` is
    /// D1's time for all of them.
    fn read_exec(answer: &JsValue, statement_rows: &[usize]) -> Result<Self> {
        let count = Reflect::get(answer, &JsValue::from_str("count"))?.as_f64();
        let duration_ms = Reflect::get(answer, &JsValue::from_str("duration"))?.as_f64();
        let ran = count.unwrap_or(0.0) as usize;
        Ok(Answers {
            changes: statement_rows.iter().take(ran).sum(),
            duration_ms,
        })
    }

    /// Reads `meta.changes` and `meta.duration` of every answer in one call into JavaScript
    /// (`bind.js`): from Rust each field of each answer is a crossing (three per answer, and
    /// the `worker` crate's `meta()` converts every field of every answer).
    fn read(answers: &Array) -> Self {
        match read_answers_in_js(answers)[..] {
            [changes, duration] => Answers {
                changes: changes as usize,
                duration_ms: (!duration.is_nan()).then_some(duration),
            },
            _ => unreachable!("readAnswers answers two numbers"),
        }
    }
}

/// A binding call's error as text, as [`error_text`] words the `worker` crate's: a D1 error's
/// message with its cause, anything else as the crate converts it.
fn js_error_text(e: JsValue) -> String {
    match e.dyn_into::<js_sys::Error>() {
        Ok(error) if String::from(error.message()).starts_with("D1") => {
            let message = String::from(error.message());
            let cause = error
                .cause()
                .dyn_into::<js_sys::Error>()
                .map(|c| String::from(c.message()))
                .unwrap_or_else(|_| "unknown error".to_owned());
            if cause == "unknown error" || message.contains(&cause) {
                message
            } else {
                format!("{message} (cause: {cause})")
            }
        }
        Ok(error) => error_text(&worker::Error::from(JsValue::from(error))),
        Err(other) => match other.dyn_ref::<JsString>() {
            Some(text) => String::from(text),
            None => error_text(&worker::Error::from(other)),
        },
    }
}
