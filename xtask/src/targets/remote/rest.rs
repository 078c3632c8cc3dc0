//! Workload writes sent through D1's REST API instead of the Worker's binding, as the production
//! write-up's fix did: `POST /accounts/{account}/d1/database/{id}/query` (or `/raw`) with the
//! run's token, from the load generator's threads. The same rows as the binding's write: one
//! `write` is the one-row idempotent INSERT as `{"sql", "params"}`, one `batch-write` its N
//! INSERTs as `{"batch": [...]}` (one transaction, like `db.batch()`).
//!
//! An answer becomes an [`OpResult`] as the Worker's does: D1's error texts classified as
//! refusals, and HTTP 429 its own refusal ([`RefusalKind::RateLimited`]) with the wait the
//! answer's `Retry-After` asks for. Only writes go this way: reads stay on the binding.
//! [`check_rate_limit`] prices a timetable against the API's 1,200 calls per 5 minutes.

use std::time::{Duration, Instant};

use d1bench_core::workload::{self, OpRequest, OpResult, Operation};
use d1bench_core::{Outcome, RefusalKind, Value};
use serde::Deserialize;
use serde_json::json;

use super::api::{API_VAR, DEFAULT_API};
use super::wrangler::Credentials;
use crate::targets::TargetError;
use crate::targets::http::Timed;
use crate::targets::workload::no_answer;

/// A whole call (connect, send, answer) is bounded by this.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer read: a write's answer is its meta, well under a kilobyte a statement.
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;

/// Which of the API's two query routes a write goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `/query`: rows as objects.
    Query,
    /// `/raw`: rows as arrays, with the column names apart.
    Raw,
}

impl Endpoint {
    pub fn route(self) -> &'static str {
        match self {
            Endpoint::Query => "query",
            Endpoint::Raw => "raw",
        }
    }
}

/// One write's answer through the API, and the wait a 429 asked for before the next attempt.
#[derive(Debug)]
pub struct RestAnswer {
    pub timed: Timed<OpResult>,
    /// The answer's `Retry-After`, when it refused the call with 429 and said how long.
    pub retry_after: Option<Duration>,
}

/// D1's REST API for one database, as the load generator's threads share it.
pub struct RestClient {
    base: String,
    agent: ureq::Agent,
    authorization: String,
    account_id: String,
    database_id: String,
}

/// The API's envelope around one answer per statement.
type Envelope = super::api::Envelope<Vec<StatementAnswer>>;

/// One statement's answer: its `meta` (the same as the binding's).
#[derive(Debug, Deserialize)]
struct StatementAnswer {
    #[serde(default = "yes")]
    success: bool,
    #[serde(default)]
    meta: Meta,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Default, Deserialize)]
struct Meta {
    #[serde(default)]
    changes: u64,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    rows_read: Option<u64>,
    #[serde(default)]
    rows_written: Option<u64>,
    #[serde(default)]
    total_attempts: Option<u32>,
    #[serde(default)]
    timings: Option<Timings>,
}

#[derive(Debug, Default, Deserialize)]
struct Timings {
    #[serde(default)]
    sql_duration_ms: Option<f64>,
}

impl RestClient {
    /// The API at [`API_VAR`] (or [`DEFAULT_API`]) for the database `database_id`.
    pub fn from_env(credentials: &Credentials, database_id: &str) -> Self {
        let base = std::env::var(API_VAR)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_API.to_owned());
        Self::new(&base, credentials, database_id, CALL_TIMEOUT)
    }

    /// The API at `base`; each call (connect, send, answer) is bounded by `timeout`.
    pub fn new(
        base: &str,
        credentials: &Credentials,
        database_id: &str,
        timeout: Duration,
    ) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build();
        RestClient {
            base: base.trim_end_matches('/').to_owned(),
            agent: ureq::Agent::new_with_config(config),
            authorization: format!("Bearer {}", credentials.api_token.expose()),
            account_id: credentials.account_id.clone(),
            database_id: database_id.to_owned(),
        }
    }

    /// The address a write goes to.
    pub fn url(&self, endpoint: Endpoint) -> String {
        format!(
            "{}/accounts/{}/d1/database/{}/{}",
            self.base,
            self.account_id,
            self.database_id,
            endpoint.route()
        )
    }

    /// Sends one write through `endpoint`, timed around the whole exchange.
    pub fn write(&self, op: &OpRequest, endpoint: Endpoint) -> RestAnswer {
        let url = self.url(endpoint);
        let request = format!("POST {url}");
        let started = Instant::now();
        let body = match body(op) {
            Ok(body) => body,
            Err(why) => {
                return RestAnswer {
                    timed: Timed {
                        outside_ms: 0.0,
                        result: Ok(no_answer(format!("{request}: {why}"))),
                    },
                    retry_after: None,
                };
            }
        };
        let answer = self
            .agent
            .post(&url)
            .header("Authorization", &self.authorization)
            .header("Content-Type", "application/json")
            .send(body.to_string().as_str())
            .and_then(|mut response| {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .map(Duration::from_secs_f64);
                let text = response
                    .body_mut()
                    .with_config()
                    .limit(MAX_ANSWER_BYTES)
                    .read_to_string()?;
                Ok((status, retry_after, text))
            });
        let outside_ms = started.elapsed().as_secs_f64() * 1000.0;
        let (result, retry_after) = match answer {
            Err(e) => (
                Err(TargetError::NoAnswer {
                    request,
                    why: e.to_string(),
                }),
                None,
            ),
            Ok((status, retry_after, text)) => {
                let result = from_answer(status, &text, outside_ms).map_err(|why| {
                    TargetError::NotAnAnswer {
                        request,
                        why,
                        body: text,
                    }
                });
                let limited =
                    matches!(&result, Ok(r) if r.refusal == Some(RefusalKind::RateLimited));
                (result, retry_after.filter(|_| limited))
            }
        };
        RestAnswer {
            timed: Timed { outside_ms, result },
            retry_after,
        }
    }
}

/// The request body of a write: its statement, or a batch of them.
fn body(op: &OpRequest) -> Result<serde_json::Value, String> {
    let generator = op.spec.generator();
    let sql = workload::write_sql(&op.spec);
    let statement = |id: u64| {
        let params: Vec<serde_json::Value> = op
            .spec
            .row(&generator, id)
            .into_iter()
            .map(|v| match v {
                Value::Integer(i) => json!(i),
                Value::Text(s) => json!(s),
            })
            .collect();
        json!({ "sql": sql, "params": params })
    };
    match op.op {
        Operation::Write => Ok(statement(op.key)),
        Operation::BatchWrite => Ok(json!({
            "batch": op.written_ids().map(statement).collect::<Vec<_>>()
        })),
        other => Err(format!(
            "`{other}` does not go through the REST API: only writes do"
        )),
    }
}

/// An answer as an [`OpResult`]; `Err` when it is not the API's envelope.
fn from_answer(status: u16, text: &str, outside_ms: f64) -> Result<OpResult, String> {
    let envelope: Envelope = match serde_json::from_str(text) {
        Ok(envelope) => envelope,
        // Past the rate limit Cloudflare may answer 429 without its envelope.
        Err(_) if status == 429 => Envelope {
            success: false,
            errors: Vec::new(),
            result: None,
        },
        Err(e) => return Err(format!("HTTP {status}, not the API's JSON envelope: {e}")),
    };
    let mut result = no_answer(String::new());
    result.inside_ms = outside_ms;
    let statements = envelope.result.unwrap_or_default();
    let ok =
        (200..300).contains(&status) && envelope.success && statements.iter().all(|s| s.success);
    if ok {
        let sum = |f: fn(&Meta) -> Option<f64>| -> Option<f64> {
            statements.iter().map(|s| f(&s.meta)).sum()
        };
        result.outcome = Outcome::Ok;
        result.error = None;
        result.changes = statements.iter().map(|s| s.meta.changes as usize).sum();
        result.d1_ms = sum(|m| m.duration);
        result.rows_read = statements.iter().map(|s| s.meta.rows_read).sum();
        result.rows_written = statements.iter().map(|s| s.meta.rows_written).sum();
        result.d1_attempts = statements
            .iter()
            .filter_map(|s| s.meta.total_attempts)
            .max();
        result.sql_duration_ms = sum(|m| m.timings.as_ref().and_then(|t| t.sql_duration_ms));
        return Ok(result);
    }
    let words: Vec<String> = envelope
        .errors
        .iter()
        .map(|e| match e.code {
            Some(code) => format!("{} (code {code})", e.message),
            None => e.message.clone(),
        })
        .collect();
    let words = if words.is_empty() {
        format!("HTTP {status}")
    } else {
        words.join("; ")
    };
    let (outcome, refusal) = if status == 429 {
        (Outcome::Refused, Some(RefusalKind::RateLimited))
    } else {
        d1bench_core::ladder::classify(Some(&words))
    };
    result.outcome = outcome;
    result.refusal = refusal;
    result.error = Some(words);
    Ok(result)
}

/// The REST API's rate limit: requests per window per user account (Cloudflare's API
/// documentation: 1,200 per 5 minutes; past it every call answers 429 for 5 minutes).
pub const REQUESTS_PER_WINDOW: f64 = 1_200.0;

/// The window of [`REQUESTS_PER_WINDOW`], seconds.
pub const WINDOW_S: f64 = 300.0;

/// A stretch of a run's timetable that sends REST API calls at a steady rate: `seconds` long,
/// `per_second` calls a second (a point's rate × its share of REST writes × its most attempts).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stretch {
    pub seconds: f64,
    pub per_second: f64,
}

/// The most REST API calls any [`WINDOW_S`] window of `stretches` (laid end to end, in order)
/// holds. The count in a window is piecewise linear in where it starts, so its largest is at a
/// window starting or ending on a boundary between stretches; each of those is tried.
pub fn busiest_window(stretches: &[Stretch]) -> f64 {
    let mut bounds = vec![0.0];
    for s in stretches {
        bounds.push(bounds.last().unwrap() + s.seconds.max(0.0));
    }
    let calls_before = |t: f64| -> f64 {
        let mut calls = 0.0;
        for (s, from) in stretches.iter().zip(&bounds) {
            calls += s.per_second * (t - from).clamp(0.0, s.seconds.max(0.0));
        }
        calls
    };
    bounds
        .iter()
        .flat_map(|&b| [b, b - WINDOW_S])
        .map(|start| calls_before(start + WINDOW_S) - calls_before(start))
        .fold(0.0, f64::max)
}

/// Refuses a timetable whose busiest window would go over the API's rate limit, saying by how
/// much: a run past it would measure the API's 5-minute refusal, not D1.
pub fn check_rate_limit(stretches: &[Stretch]) -> Result<f64, String> {
    let busiest = busiest_window(stretches);
    if busiest > REQUESTS_PER_WINDOW {
        return Err(format!(
            "the REST API would get up to {busiest:.0} calls in 5 minutes, past its limit of \
             {REQUESTS_PER_WINDOW:.0} per 5 minutes per account (HTTP 429 for 5 minutes after): \
             lower the REST series' rates, durations or attempts"
        ));
    }
    Ok(busiest)
}

#[cfg(test)]
mod tests;
