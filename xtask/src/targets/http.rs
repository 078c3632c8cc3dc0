//! HTTP to the d1bench Worker, wherever it runs: `/health`, and `/setup`, `/probe`, `/verify` and
//! `/rung`, each request timed from the outside and bounded as a whole: the measured request by
//! [`REQUEST_TIMEOUT`], the requests around it by [`STEP_TIMEOUT`], `/health` by
//! [`HEALTH_TIMEOUT`].

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use d1bench_core::ladder::{RungCall, RungRequest, Step};
use d1bench_core::{ProbeRequest, ProbeResult, SetupResult, VerifyResult, handover};
use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::base::WorkerKind;
use crate::base::orm::{OrmWrite, Sent, table_columns};

use super::{HEALTH_TIMEOUT, REQUEST_TIMEOUT, STEP_TIMEOUT, TargetError};

/// What `GET /health` answers.
#[derive(Debug, Clone, Deserialize)]
pub struct Health {
    pub name: String,
    pub version: String,
}

/// An answer as seen from outside the target.
#[derive(Debug)]
pub struct Timed<T> {
    /// Milliseconds on the xtask's clock from sending the request to reading the whole answer.
    pub outside_ms: f64,
    /// The target's answer, or why there is none (HTTP status and body, transport error, time-out).
    pub result: Result<T, TargetError>,
}

/// What the ORM Worker's `POST /orm/probe` answers: the probe's result as the JavaScript
/// Worker's, its statements, rows per statement and D1 calls those the library sent; and what the
/// library sent in detail.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrmAnswer {
    pub result: ProbeResult,
    pub sent: Sent,
}

#[derive(Clone)]
pub struct WorkerClient {
    agent: ureq::Agent,
    base_url: String,
    authorization: String,
    /// Which Worker answers: the JavaScript Worker takes the statements the host planned in
    /// each probe's bodies ([`d1bench_core::handover`]), the Rust Worker the probe alone.
    worker: WorkerKind,
    /// Where the probes and rungs go: `""` (D1), or `"/do"`, the Worker's routes that write
    /// through its Durable Object (the `do` target).
    store: &'static str,
}

/// Largest answer accepted from the Worker (a result is a few hundred bytes; an error page more).
const MAX_ANSWER_BYTES: u64 = 1024 * 1024;

/// Largest answer to a workload's check, which lists the id of every write present and the
/// version of every row (about 8 bytes each): room for about 8 million of them. A full
/// write-contention run leaves over half a million, 4 MB of ids.
const MAX_CHECK_ANSWER_BYTES: u64 = 64 * 1024 * 1024;

impl WorkerClient {
    /// A client of the Rust Worker (the remote target's, and the default).
    pub fn new(base_url: &str, token: &str) -> Self {
        WorkerClient::of(WorkerKind::Rust, base_url, token)
    }

    /// A client of `worker` at `base_url`.
    pub fn of(worker: WorkerKind, base_url: &str, token: &str) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .timeout_connect(Some(Duration::from_secs(10)))
            .build();
        WorkerClient {
            agent: ureq::Agent::new_with_config(config),
            base_url: base_url.trim_end_matches('/').to_owned(),
            authorization: format!("Bearer {token}"),
            worker,
            store: "",
        }
    }

    /// Where the Worker answers, and the bearer token it takes: for the shard processes that
    /// share it (`--shards`).
    pub fn address(&self) -> (&str, &str) {
        let token = self
            .authorization
            .strip_prefix("Bearer ")
            .unwrap_or_default();
        (&self.base_url, token)
    }

    /// The same client, its probes and rungs sent to the Worker's Durable Object instead of D1.
    pub fn through_durable_object(mut self) -> Self {
        self.store = "/do";
        self
    }

    /// Whether the probes and rungs go to the Durable Object.
    pub fn through_do(&self) -> bool {
        !self.store.is_empty()
    }

    /// `GET /health`; an error when the Worker is not (yet) answering within
    /// [`HEALTH_TIMEOUT`].
    pub fn health(&self) -> Result<Health> {
        let url = format!("{}/health", self.base_url);
        let mut response = self
            .agent
            .get(&url)
            .config()
            .timeout_global(Some(HEALTH_TIMEOUT))
            .build()
            .header("Authorization", &self.authorization)
            .call()
            .with_context(|| format!("GET {url}"))?;
        let status = response.status();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()?;
        if !status.is_success() {
            bail!("GET {url} answered {status}: {body}");
        }
        serde_json::from_str(&body).with_context(|| {
            format!("GET {url} answered something else than d1bench health: {body}")
        })
    }

    /// The body of a probe's step for this client's Worker: the probe request for the Rust
    /// Worker; for the JavaScript Worker, the probe with the SQL the step runs, planned here by
    /// the same planner the Rust Worker runs ([`d1bench_core::handover`]).
    fn probe_body(&self, path: &str, probe: &ProbeRequest) -> String {
        let probe_json = serde_json::to_string(probe).expect("a probe always serializes");
        match (self.worker.takes_statements(), path) {
            (false, _) => probe_json,
            (true, "/setup") => handover::js_setup_body(probe, &probe_json),
            (true, "/verify") => handover::js_verify_body(probe, &probe_json),
            (true, _) => handover::Inserts::of(probe).js_body(&probe_json),
        }
    }

    /// `POST /ping` of the Postgres Worker: a connection through its Hyperdrive binding and the
    /// server's version, or the Worker's words for why there is none.
    pub fn ping(&self) -> Result<String> {
        #[derive(Deserialize)]
        struct Ping {
            server_version: String,
        }
        let answer: Timed<Ping> = self.post("/ping", String::new(), STEP_TIMEOUT, MAX_ANSWER_BYTES);
        Ok(answer.result?.server_version)
    }

    /// `POST /setup`: the probe's table, in an invocation of its own.
    pub fn setup(&self, probe: &ProbeRequest) -> Result<SetupResult, TargetError> {
        let body = self.probe_body("/setup", probe);
        self.post(
            &format!("{}/setup", self.store),
            body,
            STEP_TIMEOUT,
            MAX_ANSWER_BYTES,
        )
        .result
    }

    /// `POST /probe`: the writes, timed around the whole exchange (the body is built before
    /// the clock starts). The JavaScript Worker leaves the classification of D1's error texts
    /// to the host, which applies the Rust Worker's rules ([`d1bench_core::ladder::classify`]).
    pub fn probe(&self, probe: &ProbeRequest) -> Timed<ProbeResult> {
        let body = self.probe_body("/probe", probe);
        let mut timed: Timed<ProbeResult> = self.post(
            &format!("{}/probe", self.store),
            body,
            REQUEST_TIMEOUT,
            MAX_ANSWER_BYTES,
        );
        if let (true, Ok(result)) = (self.worker.takes_statements(), &mut timed.result) {
            (result.outcome, result.refusal) =
                d1bench_core::ladder::classify(result.error.as_deref());
        }
        timed
    }

    /// `POST /orm/probe` of the ORM Worker: the probe's rows written by `orm`'s bulk insert,
    /// timed as [`Self::probe`]. The body is the JavaScript Worker's probe body of the rows as
    /// single-row statements (the probe names `batched-rows`),
    /// plus `orm`: the library, its idiom, the table and its columns.
    pub fn orm_probe(&self, probe: &ProbeRequest, orm: OrmWrite) -> Timed<OrmAnswer> {
        let probe_json = serde_json::to_string(probe).expect("a probe always serializes");
        let mut body = handover::Inserts::of(probe).js_body(&probe_json);
        let described = serde_json::json!({
            "library": orm.orm.name(),
            "idiom": orm.idiom.name(),
            "table": probe.table(),
            "columns": table_columns(probe.columns),
        });
        body.pop();
        body.push_str(&format!(",\"orm\":{described}}}"));
        let mut timed: Timed<OrmAnswer> = self.post(
            &format!("{}/orm/probe", self.store),
            body,
            REQUEST_TIMEOUT,
            MAX_ANSWER_BYTES,
        );
        if let Ok(answer) = &mut timed.result {
            (answer.result.outcome, answer.result.refusal) =
                d1bench_core::ladder::classify(answer.result.error.as_deref());
        }
        timed
    }

    /// `POST /verify`: whether the probe's table exists, its rows and their checksum, computed in
    /// SQL by the Worker, which then drops the table. Not part of any measurement.
    pub fn verify(&self, probe: &ProbeRequest) -> Result<VerifyResult, TargetError> {
        let body = self.probe_body("/verify", probe);
        self.post(
            &format!("{}/verify", self.store),
            body,
            STEP_TIMEOUT,
            MAX_ANSWER_BYTES,
        )
        .result
    }

    /// `POST /rung`: one step of a ladder rung, in an invocation of its own; the climb is the
    /// measured one.
    pub fn rung<T: DeserializeOwned>(&self, step: Step, rung: &RungRequest) -> Timed<T> {
        let timeout = match step {
            Step::Climb => REQUEST_TIMEOUT,
            Step::Prepare | Step::Finish => STEP_TIMEOUT,
        };
        self.post_json(
            &format!("{}/rung", self.store),
            &RungCall {
                step,
                rung: rung.clone(),
            },
            timeout,
            MAX_ANSWER_BYTES,
        )
    }

    /// `POST /workload/...`: a workload's call (seed, index, operation, check), timed around
    /// the whole exchange and bounded by [`REQUEST_TIMEOUT`] (a check of millions of rows
    /// takes seconds).
    pub fn workload<T: DeserializeOwned>(&self, path: &str, body: &impl Serialize) -> Timed<T> {
        self.post_json(path, body, REQUEST_TIMEOUT, MAX_ANSWER_BYTES)
    }

    /// `POST /workload/check`: as [`Self::workload`], with room for its lists of every write id
    /// and row version ([`MAX_CHECK_ANSWER_BYTES`]).
    pub fn workload_check<T: DeserializeOwned>(&self, body: &impl Serialize) -> Timed<T> {
        self.post_json(
            "/workload/check",
            body,
            REQUEST_TIMEOUT,
            MAX_CHECK_ANSWER_BYTES,
        )
    }

    /// `POST <path>` with a JSON body, timed around the whole exchange and bounded by
    /// `timeout`, its answer by `limit` bytes; the answer decoded as `T`, or why there is none
    /// (HTTP status and body, or transport error).
    fn post_json<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
        timeout: Duration,
        limit: u64,
    ) -> Timed<T> {
        let body = serde_json::to_string(body).expect("a request always serializes");
        self.post(path, body, timeout, limit)
    }

    /// [`Self::post_json`] with the body's JSON text already written.
    fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: String,
        timeout: Duration,
        limit: u64,
    ) -> Timed<T> {
        let url = format!("{}{path}", self.base_url);
        let started = Instant::now();
        let answer = self
            .agent
            .post(&url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("Authorization", &self.authorization)
            .header("Content-Type", "application/json")
            .send(body.as_str())
            .and_then(|mut response| {
                let status = response.status();
                let text = response
                    .body_mut()
                    .with_config()
                    .limit(limit)
                    .read_to_string()?;
                Ok((status, text))
            });
        let outside_ms = started.elapsed().as_secs_f64() * 1_000.0;
        let request = || format!("POST {url}");
        let result = match answer {
            Err(e) => Err(TargetError::NoAnswer {
                request: request(),
                why: e.to_string(),
            }),
            Ok((status, body)) if !status.is_success() => Err(TargetError::ErrorStatus {
                request: request(),
                status: status.to_string(),
                body,
            }),
            Ok((_, body)) => {
                serde_json::from_str::<T>(&body).map_err(|e| TargetError::NotAnAnswer {
                    request: request(),
                    why: e.to_string(),
                    body,
                })
            }
        };
        Timed { outside_ms, result }
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;
    use crate::targets::loopback;

    /// A server answering one POST with `body`, once per connection, `times` times.
    fn serve(body: String, times: usize) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for _ in 0..times {
                let (stream, _) = listener.accept().unwrap();
                loopback::read_request(&stream);
                loopback::answer(&stream, 200, &body);
            }
        });
        base
    }

    /// A check listing 600,000 write ids (about 4.7 MB) is read; any other answer that large
    /// is refused, naming the limit.
    #[test]
    fn a_checks_long_lists_are_read_and_other_answers_stay_bounded() {
        let ids: Vec<u64> = (1_000_000_000..1_000_600_000).collect();
        let body = serde_json::to_string(&ids).unwrap();
        assert!(body.len() as u64 > MAX_ANSWER_BYTES * 4);
        let client = WorkerClient::new(&serve(body, 2), "t");
        let read: Vec<u64> = client.workload_check(&()).result.unwrap();
        assert_eq!(read, ids);
        let refused = client
            .workload::<Vec<u64>>("/workload/op", &())
            .result
            .unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("larger than request limit: 1048576"),
            "{refused}"
        );
    }
}
