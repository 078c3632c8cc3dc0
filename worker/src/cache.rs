//! The Worker's side of the cache workload: `cached-read` (a point read through a Workers KV
//! read-through cache with a TTL kept by the entry, see `d1bench_core::workload::cache`) and
//! `update` (a row's version bumped in D1, the cache left alone). Their D1 statements are
//! prepared as the operation asks (reused or per call) and run through `raw.rs`, so D1's
//! `served_by_region` / `served_by_colo` reach the answer.

use d1bench_core::workload::cache::{CacheLookup, KV_BINDING, update_sql};
use d1bench_core::workload::{self, OpRequest, OpResult, Operation};
use d1bench_core::{Outcome, Value};
use js_sys::Date;
use serde::{Deserialize, Serialize};
use worker::{D1Database, Env};

use crate::raw::{self, Answered};
use crate::statements::{bind, failed, statement};

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
        d1_attempts: a.d1_attempts,
        sql_duration_ms: a.sql_duration_ms,
        served_by: a.served_by,
        cache,
        version: Some(version),
        worker_colo: None,
        session_bookmark: None,
    }
}

/// Runs a `cached-read` or an `update`, timed from the first call to the last answer.
pub async fn perform(env: &Env, db: &D1Database, op: &OpRequest) -> OpResult {
    let opened = Date::now();
    let elapsed = || Date::now() - opened;
    match op.op {
        Operation::Update => {
            let params = [
                Value::Integer(op.key as i64),
                Value::Integer(op.version as i64),
            ];
            let bound = match bind(statement(db, &update_sql(), op.preparation), &params) {
                Ok(bound) => bound,
                Err(e) => return failed(crate::error_text(&e), elapsed(), None),
            };
            match raw::run(&bound).await {
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
    let sql = workload::read_sql(Operation::CachedRead, 1, None).expect("a cached read has SQL");
    let key_value = [Value::Integer(op.key as i64)];
    let bound = match bind(statement(db, &sql, op.preparation), &key_value) {
        Ok(bound) => bound,
        Err(e) => return failed(crate::error_text(&e), elapsed(), Some(lookup)),
    };
    let read = match raw::all(&bound).await {
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
            d1_attempts: None,
            sql_duration_ms: None,
            served_by: None,
        },
        inside_ms,
        Some(cache),
        version,
    )
}
