//! The D1 statements of workload operations, shared by plain reads and writes (`workload.rs`)
//! and the cache (`cache.rs`): prepared per call or reused from the isolate's cache, their
//! values bound, and the answer of an operation that failed.

use std::cell::RefCell;
use std::collections::HashMap;

use d1bench_core::Value;
use d1bench_core::workload::cache::CacheLookup;
use d1bench_core::workload::{OpResult, Preparation};
use worker::{D1Database, D1PreparedStatement, Result};

thread_local! {
    /// Statements prepared once and reused across invocations of this isolate, keyed by SQL:
    /// [`Preparation::Reuse`], as a module-level cache in a JavaScript Worker does it.
    static PREPARED: RefCell<HashMap<String, D1PreparedStatement>> = RefCell::new(HashMap::new());
}

/// The statement for `sql`, from the isolate's cache or prepared now.
pub(crate) fn statement(
    db: &D1Database,
    sql: &str,
    preparation: Preparation,
) -> D1PreparedStatement {
    match preparation {
        Preparation::PerCall => db.prepare(sql),
        Preparation::Reuse => PREPARED.with(|cache| {
            cache
                .borrow_mut()
                .entry(sql.to_owned())
                .or_insert_with(|| db.prepare(sql))
                .clone()
        }),
    }
}

/// `statement` with `values` bound in order.
pub(crate) fn bind(
    statement: D1PreparedStatement,
    values: &[Value],
) -> Result<D1PreparedStatement> {
    let params: Vec<wasm_bindgen::JsValue> = values
        .iter()
        .map(|v| match v {
            Value::Integer(n) => wasm_bindgen::JsValue::from_f64(*n as f64),
            Value::Text(s) => wasm_bindgen::JsValue::from_str(s),
        })
        .collect();
    statement.bind(&params)
}

/// The answer of an operation that failed with `text`.
pub(crate) fn failed(text: String, inside_ms: f64, cache: Option<CacheLookup>) -> OpResult {
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
        d1_attempts: None,
        sql_duration_ms: None,
        served_by: None,
        cache,
        version: None,
        worker_colo: None,
        session_bookmark: None,
    }
}
