//! The Durable Object `Store` (binding `STORE`, SQLite-backed): runs a probe's or a rung's
//! statements on its own SQLite storage (`ctx.storage.sql`), the counterpart of D1 for the
//! `do` target. Each request is one step, as the Worker's routes for D1 are:
//!
//! - `POST /setup` (a [`ProbeRequest`]): the probe's table and indexes, in one transaction;
//! - `POST /write` (a [`Write`]'s JSON): the INSERTs, each on its own (per-row), all in one
//!   `transactionSync` (the strategies D1 sends as one `db.batch()`), or the exec script as one
//!   `sql.exec` of many statements; answers a [`Written`];
//! - `POST /verify` (a [`ProbeRequest`]): the table's row count and checksum, then the table
//!   dropped, with the same SQL as on D1;
//! - `POST /rung` (a [`RungCall`]): one step of a ladder rung, every SQL error data;
//! - `POST /exec` (SQL text): one statement, for debugging the harness (`--debug-corrupt`).
//!
//! The object has no clock the Worker trusts: on Cloudflare `Date.now()` stands still while
//! synchronous code runs, and SQLite storage is synchronous. The Worker times each request from
//! its side of the call (`super`).

use d1bench_core::ladder::{
    self, Call, Dispatch, FinishResult, PrepareResult, RESULT_COLUMN, RungCall, RungPlan,
    RungRequest, RungResult, Step, Tally,
};
use d1bench_core::sql::{self, Statement};
use d1bench_core::{Checksum, ProbeRequest, SetupResult, Value, VerifyResult};
use js_sys::{Array, Reflect};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;
use worker::{DurableObject, Env, Request, Response, Result, State, durable_object};

#[wasm_bindgen(module = "/src/durable/store.js")]
extern "C" {
    /// Statements run on the storage in one call (see `store.js`): `[ran, error]`.
    #[wasm_bindgen(js_name = runStatements)]
    fn run_statements_in_js(
        storage: &JsValue,
        texts: &Array,
        text_of: &[u32],
        values: &JsValue,
        transaction: bool,
    ) -> Array;
    /// One SELECT's rows read, the bytes of one text column counted (see `store.js`):
    /// `[bytes, error]`.
    #[wasm_bindgen(js_name = readTextBytes)]
    fn read_text_bytes_in_js(storage: &JsValue, text: &str, values: &Array, column: &str) -> Array;
}

/// How the statements of a write run on the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Each statement on its own, stopping at the first failure (per-row).
    Each,
    /// All statements in one `transactionSync` (what D1 takes as one `db.batch()`).
    Transaction,
    /// One `sql.exec` of a script of many statements (exec).
    Script,
}

/// What `POST /write` answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Written {
    /// Statements that ran and were kept (for a script: 1 when it ran whole).
    pub ran: usize,
    /// The storage's error text, verbatim.
    pub error: Option<String>,
}

#[durable_object]
pub struct Store {
    state: State,
}

impl DurableObject for Store {
    fn new(state: State, _env: Env) -> Self {
        Self { state }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let path = req.path();
        let body = req.text().await?;
        let storage = self.state.storage();
        let storage = Storage {
            raw: storage.as_raw().into(),
            sql: storage.sql(),
        };
        match path.as_str() {
            "/setup" => {
                let probe: ProbeRequest = parse(&body)?;
                let setup = sql::setup(&probe);
                let error = storage.run_texts(&setup, true).error;
                Response::from_json(&SetupResult {
                    probe_id: probe.probe_id,
                    error,
                })
            }
            "/write" => Response::from_json(&storage.write(&body)?),
            "/verify" => Response::from_json(&storage.verify(&parse(&body)?)?),
            "/rung" => {
                let call: RungCall = parse(&body)?;
                let plan = ladder::plan(&call.rung);
                match call.step {
                    Step::Prepare => Response::from_json(&storage.prepare(&call.rung, &plan)),
                    Step::Climb => Response::from_json(&storage.climb(&call.rung, &plan)),
                    Step::Finish => Response::from_json(&storage.finish(&call.rung, &plan)),
                }
            }
            "/exec" => Response::from_json(&storage.run_texts(&[body], false)),
            other => Response::error(format!("the store has no route {other}"), 404),
        }
    }
}

/// A statement's bound values as the JavaScript array `sql.exec` spreads.
fn js_values(statement: &Statement) -> Array {
    statement
        .params
        .iter()
        .map(|v| match v {
            // Generated integers stay within 2^53, so a JS number carries them exactly.
            Value::Integer(n) => JsValue::from_f64(*n as f64),
            Value::Text(t) => JsValue::from_str(t),
        })
        .collect()
}

fn parse<T: serde::de::DeserializeOwned>(body: &str) -> Result<T> {
    serde_json::from_str(body).map_err(|e| worker::Error::RustError(format!("invalid body: {e}")))
}

/// The object's storage: the JavaScript object (for `store.js`) and its SQL interface.
struct Storage {
    raw: JsValue,
    sql: worker::SqlStorage,
}

#[derive(Deserialize)]
struct Count {
    n: usize,
}

impl Storage {
    /// Runs statements given as JavaScript values (see `store.js`).
    fn run(&self, texts: &Array, text_of: &[u32], values: &JsValue, mode: Mode) -> Written {
        let answer =
            run_statements_in_js(&self.raw, texts, text_of, values, mode == Mode::Transaction);
        Written {
            ran: answer.get(0).as_f64().unwrap_or(0.0) as usize,
            error: answer.get(1).as_string(),
        }
    }

    /// SQL texts with nothing bound, each on its own or in one transaction.
    fn run_texts(&self, texts: &[String], transaction: bool) -> Written {
        let js: Array = texts.iter().map(|t| JsValue::from_str(t)).collect();
        let text_of: Vec<u32> = (0..texts.len() as u32).collect();
        let mode = if transaction {
            Mode::Transaction
        } else {
            Mode::Each
        };
        self.run(&js, &text_of, &JsValue::UNDEFINED, mode)
    }

    /// Statements with their values, each on its own or in one transaction.
    fn run_statements(&self, statements: &[Statement], transaction: bool) -> Written {
        let texts: Array = statements
            .iter()
            .map(|s| JsValue::from_str(&s.sql))
            .collect();
        let text_of: Vec<u32> = (0..statements.len() as u32).collect();
        let values: Array = statements.iter().map(js_values).collect();
        let mode = if transaction {
            Mode::Transaction
        } else {
            Mode::Each
        };
        self.run(&texts, &text_of, &values.into(), mode)
    }

    /// A write's body (see [`super::write_body`]) parsed once, in JavaScript, and run.
    fn write(&self, body: &str) -> Result<Written> {
        let write = js_sys::JSON::parse(body)?;
        let get = |key: &str| Reflect::get(&write, &JsValue::from_str(key));
        let mode: Mode = serde_json::from_str(&format!(
            "\"{}\"",
            get("mode")?.as_string().unwrap_or_default()
        ))
        .map_err(|e| worker::Error::RustError(format!("invalid write mode: {e}")))?;
        let texts: Array = get("texts")?.into();
        let text_of: Vec<u32> = Array::from(&get("textOf")?)
            .iter()
            .map(|k| k.as_f64().unwrap_or(0.0) as u32)
            .collect();
        Ok(self.run(&texts, &text_of, &get("values")?, mode))
    }

    fn count(&self, query: &str) -> Result<usize> {
        let rows: Vec<Count> = self.sql.exec(query, None)?.to_array()?;
        Ok(rows.first().map_or(0, |c| c.n))
    }

    fn verify(&self, probe: &ProbeRequest) -> Result<VerifyResult> {
        let sql = sql::verification(probe);
        let absent = VerifyResult {
            probe_id: probe.probe_id,
            table_exists: false,
            rows_present: 0,
            checksum: None,
            served_by: None,
        };
        if self.count(&sql.exists)? == 0 {
            return Ok(absent);
        }
        let rows_present = self.count(&sql.count)?;
        let checksums: Vec<Checksum> = self.sql.exec(&sql.checksum, None)?.to_array()?;
        if checksums.len() != 1 {
            return Err(worker::Error::RustError(format!(
                "the checksum answered {} rows, not 1",
                checksums.len()
            )));
        }
        self.sql.exec(&sql.teardown, None)?;
        Ok(VerifyResult {
            table_exists: true,
            rows_present,
            checksum: Some(checksums[0]),
            ..absent
        })
    }

    fn prepare(&self, rung: &RungRequest, plan: &RungPlan) -> PrepareResult {
        PrepareResult {
            rung_id: rung.rung_id,
            error: self.run_texts(&plan.prepare, true).error,
        }
    }

    /// The measured calls, each a statement on its own, a transaction, or a read whose rows
    /// come back and are counted. The object runs one request at a time, so calls the plan
    /// sends all at once run one after another here; in order, the first failure ends the
    /// climb, all at once it ends none of the others. The object's clock is not the rung's: the
    /// Worker replaces `inside_ms` with its own time around this request.
    fn climb(&self, rung: &RungRequest, plan: &RungPlan) -> RungResult {
        let mut tally = Tally::default();
        for call in &plan.calls {
            let error = match call {
                Call::One(statement) => {
                    self.run_statements(std::slice::from_ref(statement), false)
                        .error
                }
                Call::Batch(statements) => self.run_statements(statements, true).error,
                Call::Read(read) => {
                    let answer = read_text_bytes_in_js(
                        &self.raw,
                        &read.statement.sql,
                        &js_values(&read.statement),
                        RESULT_COLUMN,
                    );
                    let error = answer.get(1).as_string();
                    if error.is_none() {
                        tally.returned(answer.get(0).as_f64().unwrap_or(0.0) as usize);
                    }
                    error
                }
            };
            match error {
                // No store clock: the climb treats 0 as absent.
                None => tally.succeeded(0.0),
                Some(text) => {
                    tally.failed(text);
                    if plan.dispatch == Dispatch::InOrder {
                        break;
                    }
                }
            }
        }
        tally.into_result(rung.rung_id, plan, 0.0)
    }

    fn finish(&self, rung: &RungRequest, plan: &RungPlan) -> FinishResult {
        let mut result = FinishResult {
            rung_id: rung.rung_id,
            table_exists: false,
            rows_present: 0,
            error: None,
        };
        let counted = (|| {
            result.table_exists = self.count(&plan.exists)? == 1;
            if result.table_exists {
                result.rows_present = self.count(&plan.count)?;
            }
            self.sql.exec(&plan.teardown, None)?;
            Ok::<_, worker::Error>(())
        })();
        if let Err(e) = counted {
            result.error = Some(e.to_string());
        }
        result
    }
}
