//! The Cloudflare REST API calls a remote run makes itself, where wrangler 4 has no command for
//! them or would put a secret on a command line: turning on D1 read replication for the run's
//! database (`PUT /accounts/{account}/d1/database/{id}` with `{"read_replication": {"mode":
//! "auto"}}`), and the Hyperdrive configuration of a `remote-hyperdrive` session ([`hyperdrive`]:
//! `wrangler hyperdrive create` takes the server's password only as an argument).
//!
//! Only runs whose plan reads in D1 sessions turn on replication: without the Sessions API every
//! query goes to the primary, replicas or not. The answer must say the mode is now `auto`;
//! anything else is an error naming what the API said, and the run's setup is torn down like any
//! failed step.

pub mod hyperdrive;

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use super::wrangler::{Credentials, Pacing};

/// Overrides the API's address; the tests point it at a stand-in on a loopback port.
pub const API_VAR: &str = "D1BENCH_CLOUDFLARE_API";

/// Cloudflare's API, v4.
pub const DEFAULT_API: &str = "https://api.cloudflare.com/client/v4";

/// A whole call (connect, send, answer) is bounded by this.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer read: the database's details are well under a kilobyte.
const MAX_ANSWER_BYTES: u64 = 256 * 1024;

/// The Cloudflare API as a remote run uses it.
pub struct Api {
    base: String,
    agent: ureq::Agent,
    authorization: String,
    account_id: String,
    pacing: Pacing,
}

/// Cloudflare's answer envelope, as far as it is read here (this call's and the REST writes'
/// of [`super::rest`]), around the `result` of type `R`.
#[derive(Debug, Deserialize)]
pub(super) struct Envelope<R> {
    #[serde(default)]
    pub(super) success: bool,
    #[serde(default)]
    pub(super) errors: Vec<ApiMessage>,
    #[serde(default = "Option::default")]
    pub(super) result: Option<R>,
}

/// One of an envelope's `errors`.
#[derive(Debug, Deserialize)]
pub(super) struct ApiMessage {
    #[serde(default)]
    pub(super) code: Option<i64>,
    #[serde(default)]
    pub(super) message: String,
}

#[derive(Debug, Deserialize)]
struct DatabaseDetails {
    #[serde(default)]
    read_replication: Option<ReadReplication>,
}

#[derive(Debug, Deserialize)]
struct ReadReplication {
    mode: String,
}

impl Api {
    /// The API at [`API_VAR`] (or [`DEFAULT_API`]) with the run's credentials.
    pub fn from_env(credentials: &Credentials, pacing: Pacing) -> Self {
        let base = std::env::var(API_VAR)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_API.to_owned());
        Self::new(&base, credentials, pacing, CALL_TIMEOUT)
    }

    /// The API at `base`; each call (connect, send, answer) is bounded by `timeout`.
    pub fn new(base: &str, credentials: &Credentials, pacing: Pacing, timeout: Duration) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build();
        Api {
            base: base.trim_end_matches('/').to_owned(),
            agent: ureq::Agent::new_with_config(config),
            authorization: format!("Bearer {}", credentials.api_token.expose()),
            account_id: credentials.account_id.clone(),
            pacing,
        }
    }

    /// Turns on read replication (`auto`) for the database `database_id`, retrying a
    /// rate-limited call as the wrangler runner does; the mode the API then reports.
    pub fn enable_read_replication(&self, database_id: &str) -> Result<String> {
        let url = format!(
            "{}/accounts/{}/d1/database/{database_id}",
            self.base, self.account_id
        );
        let body = r#"{"read_replication":{"mode":"auto"}}"#;
        let what = || format!("PUT {url} (turning on read replication)");
        let (status, text) = self.call("PUT", &url, Some(body)).with_context(what)?;
        mode_from_answer(status, &text).with_context(what)
    }

    /// The account's address under the API: `<base>/accounts/<account id>`.
    fn account_url(&self) -> String {
        format!("{}/accounts/{}", self.base, self.account_id)
    }

    /// One call, retried while the API answers 429 (waits doubling from the pacing's first);
    /// its status and body.
    fn call(&self, method: &str, url: &str, body: Option<&str>) -> Result<(u16, String)> {
        let mut backoff = self.pacing.first_backoff;
        let mut attempt = 1;
        loop {
            let (status, text) = self.send(method, url, body)?;
            if status == 429 && attempt < self.pacing.attempts {
                std::thread::sleep(backoff);
                backoff *= 2;
                attempt += 1;
                continue;
            }
            return Ok((status, text));
        }
    }

    fn send(&self, method: &str, url: &str, body: Option<&str>) -> Result<(u16, String)> {
        let authorization = self.authorization.as_str();
        let mut response = match (method, body) {
            ("PUT", Some(body)) => self
                .agent
                .put(url)
                .header("Authorization", authorization)
                .header("Content-Type", "application/json")
                .send(body)?,
            ("POST", Some(body)) => self
                .agent
                .post(url)
                .header("Authorization", authorization)
                .header("Content-Type", "application/json")
                .send(body)?,
            ("GET", None) => self
                .agent
                .get(url)
                .header("Authorization", authorization)
                .call()?,
            ("DELETE", None) => self
                .agent
                .delete(url)
                .header("Authorization", authorization)
                .call()?,
            _ => bail!("no {method} call with body {} here", body.is_some()),
        };
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()?;
        Ok((status, text))
    }
}

/// The `result` of a successful answer (2xx and `success`); otherwise what went wrong, in the
/// API's own words where it gave any.
fn result_of<R: serde::de::DeserializeOwned>(status: u16, text: &str) -> Result<Option<R>> {
    let envelope: Envelope<R> = serde_json::from_str(text).with_context(|| {
        format!(
            "the API answered {status} with something that is not its JSON envelope: {}",
            excerpt(text)
        )
    })?;
    if !(200..300).contains(&status) || !envelope.success {
        let errors: Vec<String> = envelope
            .errors
            .iter()
            .map(|e| match e.code {
                Some(code) => format!("{} (code {code})", e.message),
                None => e.message.clone(),
            })
            .collect();
        bail!(
            "the API answered {status}: {}",
            if errors.is_empty() {
                excerpt(text)
            } else {
                errors.join("; ")
            }
        );
    }
    Ok(envelope.result)
}

/// The replication mode an answer reports, when it is `auto`; otherwise what went wrong, in the
/// API's own words where it gave any.
fn mode_from_answer(status: u16, text: &str) -> Result<String> {
    let details: Option<DatabaseDetails> = result_of(status, text)?;
    match details.and_then(|r| r.read_replication) {
        Some(ReadReplication { mode }) if mode == "auto" => Ok(mode),
        Some(ReadReplication { mode }) => {
            bail!("the API accepted the change but reports read replication `{mode}`, not `auto`")
        }
        None => bail!(
            "the API accepted the change but its answer has no read_replication.mode: {}",
            excerpt(text)
        ),
    }
}

/// At most 300 characters of an answer, for an error message.
fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(300) {
        Some((cut, _)) => format!("{}… ({} bytes in all)", &text[..cut], text.len()),
        None => text.to_owned(),
    }
}

/// An API on a loopback port for the unit tests of the calls made through it: each connection
/// answered with the next of `answers` (status, body); joined, the requests it read. Its
/// account is `acct-9`, its token `tok-123`, and a rate-limited call is tried twice more.
#[cfg(test)]
pub(crate) fn on_loopback(
    answers: Vec<(u16, &'static str)>,
) -> (Api, std::thread::JoinHandle<Vec<String>>) {
    use crate::targets::loopback;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/client/v4", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let mut requests = Vec::new();
        for (status, body) in answers {
            let (stream, _) = listener.accept().unwrap();
            requests.push(loopback::read_request(&stream));
            loopback::answer(&stream, status, body);
        }
        requests
    });
    let credentials = Credentials {
        api_token: super::wrangler::Secret::new("tok-123".into()),
        account_id: "acct-9".into(),
    };
    let pacing = Pacing {
        min_interval: Duration::ZERO,
        first_backoff: Duration::from_millis(10),
        attempts: 3,
    };
    let api = Api::new(&base, &credentials, pacing, Duration::from_secs(5));
    (api, server)
}

#[cfg(test)]
mod tests;
