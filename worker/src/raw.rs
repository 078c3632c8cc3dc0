//! D1 calls through the JS binding itself, for workload operations: the worker crate's
//! `D1ResultMeta` drops `meta.served_by_region` / `served_by_colo` / `served_by_primary` (where
//! D1 ran a statement), `total_attempts` and `timings`, so `all`, `run` and `batch` are made here on the statements the crate
//! prepared and bound, and their answers read from the JS objects; reads in a D1 session (`withSession`) run on a
//! statement prepared on the session. Failures read as the crate's own calls word them.

use d1bench_core::ServedBy;
use wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{D1Database, D1DatabaseSession, D1PreparedStatement};

/// D1's answer to one statement.
pub struct Answered {
    /// The rows, as JSON (reads).
    pub rows: Vec<serde_json::Value>,
    pub changes: usize,
    pub d1_ms: Option<f64>,
    pub rows_read: Option<u64>,
    pub rows_written: Option<u64>,
    /// `meta.total_attempts`: how many times D1 ran the statement (its own retries included).
    pub d1_attempts: Option<u32>,
    /// `meta.timings.sql_duration_ms`: SQLite's time on the statement.
    pub sql_duration_ms: Option<f64>,
    pub served_by: Option<ServedBy>,
}

/// A D1 error's message with its cause, as `crate::error_text` writes a `worker::Error::D1`.
fn d1_error_text(e: &js_sys::Error) -> String {
    let message = String::from(e.message());
    match e.cause().dyn_into::<js_sys::Error>() {
        Ok(cause) => {
            let cause = String::from(cause.message());
            if message.contains(&cause) {
                message
            } else {
                format!("{message} (cause: {cause})")
            }
        }
        Err(_) => message,
    }
}

/// The text of a failed call: `run` and `batch` turn errors whose message starts with `D1` into
/// D1 errors (as the crate does), `all` does not.
fn failure(error: JsValue, d1: bool) -> String {
    if d1
        && let Some(e) = error.dyn_ref::<js_sys::Error>()
        && String::from(e.message()).starts_with("D1")
    {
        return d1_error_text(e);
    }
    crate::error_text(&worker::Error::from(error))
}

/// Reads one `D1Result` object.
fn answered(result: JsValue) -> Result<Answered, String> {
    let result: worker::worker_sys::D1Result = result.unchecked_into();
    let text = |e: JsValue| crate::error_text(&worker::Error::from(e));
    let rows = match result.results().map_err(text)? {
        Some(rows) => rows
            .iter()
            .map(|row| {
                let json: String = js_sys::JSON::stringify(&row).map_err(text)?.into();
                serde_json::from_str(&json).map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<serde_json::Value>, String>>()?,
        None => Vec::new(),
    };
    let meta = result.meta().map_err(text)?;
    let get = |key: &str| js_sys::Reflect::get(&meta, &JsValue::from_str(key)).ok();
    let number = |key: &str| get(key).and_then(|v| v.as_f64());
    let served_by = ServedBy::reported(
        get("served_by_region").and_then(|v| v.as_string()),
        get("served_by_colo").and_then(|v| v.as_string()),
        get("served_by_primary").and_then(|v| v.as_bool()),
    );
    let sql_duration_ms = get("timings")
        .filter(|t| t.is_object())
        .and_then(|t| js_sys::Reflect::get(&t, &JsValue::from_str("sql_duration_ms")).ok())
        .and_then(|v| v.as_f64());
    Ok(Answered {
        rows,
        changes: number("changes").map_or(0, |n| n as usize),
        d1_ms: number("duration"),
        rows_read: number("rows_read").map(|n| n as u64),
        rows_written: number("rows_written").map(|n| n as u64),
        d1_attempts: number("total_attempts").map(|n| n as u32),
        sql_duration_ms,
        served_by,
    })
}

/// `statement.all()`: every row and the meta.
pub async fn all(statement: &D1PreparedStatement) -> Result<Answered, String> {
    let promise = statement.inner().all().map_err(|e| failure(e, false))?;
    let result = JsFuture::from(promise)
        .await
        .map_err(|e| failure(e, false))?;
    answered(result)
}

/// `statement.run()`: the meta of a write.
pub async fn run(statement: &D1PreparedStatement) -> Result<Answered, String> {
    let promise = statement.inner().run().map_err(|e| failure(e, true))?;
    let result = JsFuture::from(promise)
        .await
        .map_err(|e| failure(e, true))?;
    answered(result)
}

/// Starts `statement.run()` and hands back its promise unawaited: the call is under way.
pub fn start_run(statement: &D1PreparedStatement) -> Result<js_sys::Promise, String> {
    statement.inner().run().map_err(|e| failure(e, true))
}

/// Awaits a call [`start_run`] started.
pub async fn settle(promise: js_sys::Promise) -> Result<Answered, String> {
    let result = JsFuture::from(promise)
        .await
        .map_err(|e| failure(e, true))?;
    answered(result)
}

/// `statement.all()`, counting the UTF-8 bytes of text in `column` of every row, one row at a
/// time (never the whole result in the Worker's memory twice), and D1's `meta.duration`.
pub async fn all_text_bytes(
    statement: &D1PreparedStatement,
    column: &str,
) -> Result<(usize, Option<f64>), String> {
    let promise = statement.inner().all().map_err(|e| failure(e, false))?;
    let result = JsFuture::from(promise)
        .await
        .map_err(|e| failure(e, false))?;
    let result: worker::worker_sys::D1Result = result.unchecked_into();
    let text = |e: JsValue| crate::error_text(&worker::Error::from(e));
    let key = JsValue::from_str(column);
    let mut bytes = 0;
    if let Some(rows) = result.results().map_err(text)? {
        for row in rows.iter() {
            let value = js_sys::Reflect::get(&row, &key).map_err(text)?;
            let value = value
                .as_string()
                .ok_or_else(|| format!("a result row's `{column}` is not text"))?;
            bytes += value.len();
        }
    }
    let meta = result.meta().map_err(text)?;
    let d1_ms = js_sys::Reflect::get(&meta, &JsValue::from_str("duration"))
        .ok()
        .and_then(|v| v.as_f64());
    Ok((bytes, d1_ms))
}

/// `db.batch(statements)`: one transaction, each statement's answer.
pub async fn batch(
    db: &D1Database,
    statements: Vec<D1PreparedStatement>,
) -> Result<Vec<Answered>, String> {
    let binding: &worker::worker_sys::D1Database = db.as_ref().unchecked_ref();
    let array: js_sys::Array = statements
        .iter()
        .map(|s| JsValue::from(s.inner().clone()))
        .collect();
    let promise = binding.batch(array).map_err(|e| failure(e, true))?;
    let results = JsFuture::from(promise)
        .await
        .map_err(|e| failure(e, true))?;
    let results: js_sys::Array = results
        .dyn_into()
        .map_err(|_| "db.batch() answered no array".to_owned())?;
    results.iter().map(answered).collect()
}

/// A D1 session opened per request (`db.withSession(constraint)`) and a statement prepared on
/// it: the statement, and the session to ask for its bookmark after the read. Errors are
/// returned, where the crate's `D1DatabaseSession::prepare` would panic.
pub fn session_statement(
    db: &D1Database,
    constraint: &str,
    sql: &str,
) -> Result<(D1PreparedStatement, D1DatabaseSession), String> {
    let session = db
        .with_session(Some(constraint))
        .map_err(|e| crate::error_text(&e))?;
    let binding: &worker::worker_sys::D1DatabaseSession = session.as_ref().unchecked_ref();
    let statement = binding
        .session_prepare(sql)
        .map_err(|e| failure(e, false))?;
    Ok((D1PreparedStatement::from(statement), session))
}

/// Whether the session has a bookmark (`getBookmark()` answered one); only its presence is
/// kept, never its value.
pub fn has_bookmark(session: &D1DatabaseSession) -> Result<bool, String> {
    session
        .get_bookmark()
        .map(|bookmark| bookmark.is_some())
        .map_err(|e| crate::error_text(&e))
}

/// Where the first answer that says so was served.
pub fn served_by(answers: &[Answered]) -> Option<ServedBy> {
    answers.iter().find_map(|a| a.served_by.clone())
}
