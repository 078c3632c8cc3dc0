//! HTTP to the d1bench Worker: `/health`, `/probe` and `/rung`, each request timed from the
//! outside, and `/verify`, which no measurement includes.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use d1bench_core::{ProbeRequest, ProbeResult, VerifyResult};
use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// What `GET /health` answers.
#[derive(Debug, Clone, Deserialize)]
pub struct Health {
    pub name: String,
    pub version: String,
}

/// A probe as seen from outside the Worker.
pub struct Timed {
    /// Milliseconds on the xtask's clock from sending the request to reading the whole answer.
    pub outside_ms: f64,
    /// The Worker's result, or why there is none (HTTP status and body, or transport error).
    pub result: Result<ProbeResult, String>,
}

pub struct WorkerClient {
    agent: ureq::Agent,
    base_url: String,
    authorization: String,
}

/// Largest answer accepted from the Worker (a result is a few hundred bytes; an error page more).
const MAX_ANSWER_BYTES: u64 = 1024 * 1024;

impl WorkerClient {
    /// `timeout` bounds each request as a whole.
    pub fn new(base_url: &str, token: &str, timeout: Duration) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build();
        WorkerClient {
            agent: ureq::Agent::new_with_config(config),
            base_url: base_url.trim_end_matches('/').to_owned(),
            authorization: format!("Bearer {token}"),
        }
    }

    /// `GET /health`; an error when the Worker is not (yet) answering.
    pub fn health(&self) -> Result<Health> {
        let url = format!("{}/health", self.base_url);
        let mut response = self
            .agent
            .get(&url)
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

    /// `POST /probe`, timed around the whole exchange.
    pub fn probe(&self, probe: &ProbeRequest) -> Timed {
        let (outside_ms, result) = self.post_json::<ProbeResult>("/probe", probe);
        Timed { outside_ms, result }
    }

    /// `POST <path>` with a JSON body, timed around the whole exchange; the answer decoded as
    /// `T`, or why there is none (HTTP status and body, or transport error).
    pub fn post_json<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> (f64, Result<T, String>) {
        let url = format!("{}{path}", self.base_url);
        let body = serde_json::to_string(body).expect("a request always serializes");
        let started = Instant::now();
        let answer = self
            .agent
            .post(&url)
            .header("Authorization", &self.authorization)
            .header("Content-Type", "application/json")
            .send(body.as_str())
            .and_then(|mut response| {
                let status = response.status();
                let text = response
                    .body_mut()
                    .with_config()
                    .limit(MAX_ANSWER_BYTES)
                    .read_to_string()?;
                Ok((status, text))
            });
        let outside_ms = started.elapsed().as_secs_f64() * 1_000.0;
        let result = match answer {
            Err(e) => Err(format!("POST {url} failed: {e}")),
            Ok((status, text)) if !status.is_success() => {
                Err(format!("POST {url} answered {status}: {text}"))
            }
            Ok((_, text)) => serde_json::from_str::<T>(&text)
                .map_err(|e| format!("POST {url} answered something unexpected ({e}): {text}")),
        };
        (outside_ms, result)
    }
}

impl WorkerClient {
    /// `POST /verify`: the checksum of the probe's table, computed in SQL by the Worker, which
    /// then drops the table. Not part of any measurement: its time is not kept.
    pub fn verify(&self, probe: &ProbeRequest) -> Result<VerifyResult, String> {
        self.post_json::<VerifyResult>("/verify", probe).1
    }
}
