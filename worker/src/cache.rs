//! The Worker's side of the cache workload: `cached-read` (a point read through a Workers KV
//! read-through cache with a TTL kept by the entry, see `d1bench_core::workload::cache`) and
//! `update` (a row's version bumped in D1, the cache left alone). Both run their D1 statement
//! through the JS binding directly, so D1's `meta.served_by_region` / `served_by_colo` (which
//! the worker crate's `D1ResultMeta` drops) reach the answer.

use d1bench_core::workload::cache::{CacheLookup, KV_BINDING, update_sql};
use d1bench_core::workload::{self, OpRequest, OpResult, Operation};
use d1bench_core::{Outcome, ServedBy};
use js_sys::Date;
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{D1Database, Env};

/// What a KV entry of the cache holds: the row, its version and when it was cached.
#[derive(Serialize, Deserialize)]
struct CacheEntry {
    /// The row's version when it was read from D1.
    version: u64,
    /// When it was read from D1 and cached, Unix ms on the Worker's clock.
    cached_at_ms: f64,
    /// The row as D1 answered it.
    row: serde_json::Value,
}

/// D1's answer to one statement, read from the JS objects.
struct Answered {
    rows: Vec<serde_json::Value>,
    changes: usize,
    d1_ms: Option<f64>,
    rows_read: Option<u64>,
    rows_written: Option<u64>,
    served_by: Option<ServedBy>,
}

/// A failure's text: D1's message with its cause, as `crate::error_text` writes it.
fn js_error_text(error: JsValue) -> String {
    match error.dyn_into::<js_sys::Error>() {
        Ok(e) => {
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
        Err(other) => other
            .as_string()
            .unwrap_or_else(|| "an error that is not an Error".to_owned()),
    }
}

/// Runs `sql` with `params` through `statement.all()` of the JS binding.
async fn all(db: &D1Database, sql: &str, params: &[JsValue]) -> Result<Answered, String> {
    let statement = db.prepare(sql);
    let statement = statement.bind(params).map_err(|e| e.to_string())?;
    let promise = statement.inner().all().map_err(js_error_text)?;
    let result: worker::worker_sys::D1Result = JsFuture::from(promise)
        .await
        .map_err(js_error_text)?
        .unchecked_into();
    let rows = match result.results().map_err(js_error_text)? {
        Some(rows) => rows
            .iter()
            .map(|row| {
                let text: String = js_sys::JSON::stringify(&row).map_err(js_error_text)?.into();
                serde_json::from_str(&text).map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<serde_json::Value>, String>>()?,
        None => Vec::new(),
    };
    let meta = result.meta().map_err(js_error_text)?;
    let get = |key: &str| js_sys::Reflect::get(&meta, &JsValue::from_str(key)).ok();
    let number = |key: &str| get(key).and_then(|v| v.as_f64());
    let served_by = ServedBy {
        region: get("served_by_region").and_then(|v| v.as_string()),
        colo: get("served_by_colo").and_then(|v| v.as_string()),
    };
    let reported = served_by.region.is_some() || served_by.colo.is_some();
    Ok(Answered {
        rows,
        changes: number("changes").map_or(0, |n| n as usize),
        d1_ms: number("duration"),
        rows_read: number("rows_read").map(|n| n as u64),
        rows_written: number("rows_written").map(|n| n as u64),
        served_by: reported.then_some(served_by),
    })
}

/// The answer of an operation that failed with `text`.
fn failed(text: String, inside_ms: f64, cache: Option<CacheLookup>) -> OpResult {
    let (outcome, refusal) = d1bench_core::ladder::classify(Some(&text));
    OpResult {
        outcome,
        refusal,
        error: Some(text),
        rows_returned: 0,
        changes: 0,
        inside_ms,
        d1_ms: None,
        rows_read: None,
        rows_written: None,
        served_by: None,
        cache,
        version: None,
        worker_colo: None,
    }
}

fn answered(a: Answered, inside_ms: f64, cache: Option<CacheLookup>, version: u64) -> OpResult {
    OpResult {
        outcome: Outcome::Ok,
        refusal: None,
        error: None,
        rows_returned: a.rows.len(),
        changes: a.changes,
        inside_ms,
        d1_ms: a.d1_ms,
        rows_read: a.rows_read,
        rows_written: a.rows_written,
        served_by: a.served_by,
        cache,
        version: Some(version),
        worker_colo: None,
    }
}

/// Runs a `cached-read` or an `update`, timed from the first call to the last answer.
pub async fn perform(env: &Env, db: &D1Database, op: &OpRequest) -> OpResult {
    let opened = Date::now();
    let elapsed = || Date::now() - opened;
    match op.op {
        Operation::Update => {
            let params = [
                JsValue::from_f64(op.key as f64),
                JsValue::from_f64(op.version as f64),
            ];
            match all(db, &update_sql(), &params).await {
                Ok(a) => answered(a, elapsed(), None, op.version),
                Err(e) => failed(e, elapsed(), None),
            }
        }
        _ => cached_read(env, db, op, opened).await,
    }
}

async fn cached_read(env: &Env, db: &D1Database, op: &OpRequest, opened: f64) -> OpResult {
    let elapsed = || Date::now() - opened;
    let Some(cache) = op.cache else {
        return failed("a cached read without its TTL".into(), 0.0, None);
    };
    let kv = match env.kv(KV_BINDING) {
        Ok(kv) => kv,
        Err(e) => {
            return failed(
                format!("no KV namespace bound as {KV_BINDING}: {e}"),
                0.0,
                None,
            );
        }
    };
    let key = cache.key(op.key);
    let found = match kv.get(&key).text().await {
        Ok(found) => found,
        Err(e) => return failed(format!("KV get of {key}: {e}"), elapsed(), None),
    };
    let entry = found.and_then(|text| serde_json::from_str::<CacheEntry>(&text).ok());
    let lookup = match &entry {
        Some(e) if cache.fresh(e.cached_at_ms, Date::now()) => {
            let version = e.version;
            return OpResult {
                rows_returned: 1,
                ..answered_empty(elapsed(), CacheLookup::Hit, version)
            };
        }
        Some(_) => CacheLookup::Expired,
        None => CacheLookup::Miss,
    };
    let sql = workload::read_sql(Operation::CachedRead, 1).expect("a cached read has SQL");
    let read = match all(db, &sql, &[JsValue::from_f64(op.key as f64)]).await {
        Ok(read) => read,
        Err(e) => return failed(e, elapsed(), Some(lookup)),
    };
    let Some(row) = read.rows.first().cloned() else {
        return failed(
            format!("row {} is not in the table", op.key),
            elapsed(),
            Some(lookup),
        );
    };
    let version = row.get("version").and_then(|v| v.as_f64()).unwrap_or(0.0) as u64;
    let entry = CacheEntry {
        version,
        cached_at_ms: Date::now(),
        row,
    };
    let text = serde_json::to_string(&entry).unwrap_or_default();
    let put = match kv.put(&key, text) {
        Ok(put) => put.expiration_ttl(cache.expiration_ttl_s()).execute().await,
        Err(e) => Err(e),
    };
    if let Err(e) = put {
        return failed(format!("KV put of {key}: {e}"), elapsed(), Some(lookup));
    }
    answered(read, elapsed(), Some(lookup), version)
}

/// A hit's answer: D1 was not asked.
fn answered_empty(inside_ms: f64, cache: CacheLookup, version: u64) -> OpResult {
    answered(
        Answered {
            rows: Vec::new(),
            changes: 0,
            d1_ms: None,
            rows_read: None,
            rows_written: None,
            served_by: None,
        },
        inside_ms,
        Some(cache),
        version,
    )
}
