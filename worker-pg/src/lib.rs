//! The d1bench Postgres Worker: each invocation is one step of a probe, written to PostgreSQL
//! through the Hyperdrive binding `PG` with tokio-postgres over a Worker socket.
//!
//! The D1 Worker's protocol (`worker/src/lib.rs`), so the xtask drives both alike: `GET /health`
//! answers the Worker's version; `POST /ping` opens a connection through the binding and answers
//! the server's version (the xtask asks it once at start, so an unreachable server or a wrong
//! connection string is said before anything is measured); `POST /setup`, `POST /probe` and
//! `POST /verify` take a [`d1bench_core::ProbeRequest`] as JSON and answer a
//! [`d1bench_core::SetupResult`], a [`d1bench_core::ProbeResult`] (`probe.rs`) and a
//! [`d1bench_core::VerifyResult`], each an invocation with a connection of its own. The SQL comes
//! from the Postgres planner (`d1bench_core_pg`), never from the request; a refusal is data, an
//! error naming its SQLSTATE. All need `Authorization: Bearer <BENCH_TOKEN>`.

use d1bench_core::{Checksum, ProbeRequest, SetupResult, VerifyResult};
use d1bench_core_pg::refusal::with_sqlstate;
use serde::Serialize;
use tokio_postgres::{Client, NoTls};
use worker::{
    Env, Request, Response, Result, RouteContext, Router, SecureTransport, Socket, event,
};

mod probe;

/// The Hyperdrive binding's name in wrangler.toml.
const BINDING: &str = "PG";
const TOKEN_VAR: &str = "BENCH_TOKEN";

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: worker::Context) -> Result<Response> {
    if let Some(denied) = check_token(&req, &env)? {
        return Ok(denied);
    }
    Router::new()
        .get("/health", handle_health)
        .post_async("/ping", handle_ping)
        .post_async("/setup", handle_setup)
        .post_async("/probe", probe::handle_probe)
        .post_async("/verify", handle_verify)
        .run(req, env)
        .await
}

/// `None` when the request carries the right bearer token; otherwise the response to send.
fn check_token(req: &Request, env: &Env) -> Result<Option<Response>> {
    let Ok(expected) = env.secret(TOKEN_VAR).map(|s| s.to_string()) else {
        return json_error(500, &format!("the Worker has no {TOKEN_VAR} configured")).map(Some);
    };
    let given = req.headers().get("Authorization")?.unwrap_or_default();
    let token = given.strip_prefix("Bearer ").unwrap_or("");
    let equal = token.len() == expected.len()
        && token
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0;
    if expected.is_empty() || !equal {
        return json_error(401, "missing or wrong bearer token").map(Some);
    }
    Ok(None)
}

#[derive(Serialize)]
struct Health {
    name: &'static str,
    version: &'static str,
}

fn handle_health(_req: Request, _ctx: RouteContext<()>) -> Result<Response> {
    Response::from_json(&Health {
        name: env!("CARGO_PKG_NAME"),
        version: env!("CARGO_PKG_VERSION"),
    })
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

fn json_error(status: u16, error: &str) -> Result<Response> {
    Ok(Response::from_json(&ErrorBody { error })?.with_status(status))
}

/// A connection to the server: the client, and what closes it.
pub(crate) struct Connection {
    pub client: Client,
    /// Fired when the connection's task has ended.
    ended: futures_channel::oneshot::Receiver<()>,
}

impl Connection {
    /// Ends the session (tokio-postgres sends Terminate and closes the socket once the client
    /// is gone) and waits until it has, so no invocation leaves a server backend behind it for
    /// the runtime to reap: a probe is three invocations, and a session's connections would
    /// otherwise pile up towards the server's `max_connections`.
    pub async fn close(self) {
        drop(self.client);
        let _ = self.ended.await;
    }
}

/// A connection to the server behind the binding: a socket to the host and port the binding
/// gives (locally, its `localConnectionString`'s), the startup and password exchange over it,
/// and the connection's task spawned to run beside the request. An error names the binding and
/// where it points.
pub(crate) async fn connect(env: &Env) -> std::result::Result<Connection, String> {
    let hyperdrive = env
        .hyperdrive(BINDING)
        .map_err(|e| format!("the Worker has no Hyperdrive binding {BINDING}: {e}"))?;
    let (host, port) = (hyperdrive.host(), hyperdrive.port());
    let at = format!(
        "{}@{host}:{port}/{} (binding {BINDING})",
        hyperdrive.user(),
        hyperdrive.database()
    );
    let socket = Socket::builder()
        .secure_transport(SecureTransport::Off)
        .connect(host.clone(), port)
        .map_err(|e| format!("cannot open a socket to {at}: {e}"))?;
    let mut config = tokio_postgres::Config::new();
    config
        .host(&host)
        .port(port)
        .user(hyperdrive.user())
        .password(hyperdrive.password())
        .dbname(hyperdrive.database());
    let (client, connection) = config
        .connect_raw(socket, NoTls)
        .await
        .map_err(|e| format!("cannot connect to {at}: {}", error_text(&e)))?;
    let (done, ended) = futures_channel::oneshot::channel();
    worker::wasm_bindgen_futures::spawn_local(async move {
        // The connection ends when the client is dropped; an error then is the server's, and
        // every query waiting on it has failed with it already.
        let _ = connection.await;
        let _ = done.send(());
    });
    Ok(Connection { client, ended })
}

/// Postgres's error text with its SQLSTATE (`... (SQLSTATE 53300)`), which the classifier
/// sorts into refusal kinds; the client's own errors (a closed connection) as it words them.
pub(crate) fn error_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => with_sqlstate(db.message(), db.code().code()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        }
    }
}

#[derive(Serialize)]
struct Ping {
    server_version: String,
}

/// `POST /ping`: a connection through the binding and the server's version, or a 502 naming
/// why there is none.
async fn handle_ping(_req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let connection = match connect(&ctx.env).await {
        Ok(connection) => connection,
        Err(e) => return json_error(502, &e),
    };
    let answer = connection
        .client
        .query_one("SHOW server_version", &[])
        .await;
    connection.close().await;
    match answer {
        Ok(row) => Response::from_json(&Ping {
            server_version: row.get(0),
        }),
        Err(e) => json_error(
            502,
            &format!("the server did not answer: {}", error_text(&e)),
        ),
    }
}

/// The probe a request carries, or the 400 response naming what is wrong with it.
pub(crate) async fn read_probe(
    req: &mut Request,
) -> Result<std::result::Result<ProbeRequest, Response>> {
    let body = req.text().await?;
    let probe: ProbeRequest = match serde_json::from_str(&body) {
        Ok(probe) => probe,
        Err(e) => return json_error(400, &format!("invalid probe: {e}")).map(Err),
    };
    if let Err(e) = probe.validate() {
        return json_error(400, &format!("invalid probe: {e}")).map(Err);
    }
    Ok(Ok(probe))
}

/// `POST /setup`: the probe's table and indexes, in one simple-protocol query (one implicit
/// transaction). A refusal is answered as data; no connection is a 502.
async fn handle_setup(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let probe = match read_probe(&mut req).await? {
        Ok(probe) => probe,
        Err(rejected) => return Ok(rejected),
    };
    let connection = match connect(&ctx.env).await {
        Ok(connection) => connection,
        Err(e) => return json_error(502, &e),
    };
    let setup = d1bench_core_pg::sql::setup(&probe).join(";\n");
    let error = connection
        .client
        .batch_execute(&setup)
        .await
        .err()
        .map(|e| error_text(&e));
    connection.close().await;
    Response::from_json(&SetupResult {
        probe_id: probe.probe_id,
        error,
    })
}

/// `POST /verify`: whether the table exists; if it does, its row count and checksum, then the
/// table dropped.
async fn handle_verify(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let probe = match read_probe(&mut req).await? {
        Ok(probe) => probe,
        Err(rejected) => return Ok(rejected),
    };
    let connection = match connect(&ctx.env).await {
        Ok(connection) => connection,
        Err(e) => return json_error(502, &e),
    };
    let verified = verify(&connection.client, &probe).await;
    connection.close().await;
    match verified {
        Ok(result) => Response::from_json(&result),
        Err(e) => json_error(
            500,
            &format!(
                "probe {} could not be verified: {}",
                probe.probe_id,
                error_text(&e)
            ),
        ),
    }
}

async fn verify(
    client: &Client,
    probe: &ProbeRequest,
) -> std::result::Result<VerifyResult, tokio_postgres::Error> {
    let sql = d1bench_core_pg::sql::verification(probe);
    let count = |row: tokio_postgres::Row| row.try_get::<_, i64>("n").map(|n| n as usize);
    let exists = count(client.query_one(&sql.exists, &[]).await?)?;
    if exists == 0 {
        return Ok(VerifyResult {
            probe_id: probe.probe_id,
            table_exists: false,
            rows_present: 0,
            checksum: None,
            served_by: None,
        });
    }
    let rows_present = count(client.query_one(&sql.count, &[]).await?)?;
    let row = client.query_one(&sql.checksum, &[]).await?;
    let checksum = Checksum::read(|column| row.try_get::<_, i64>(column))?;
    client.batch_execute(&sql.teardown).await?;
    Ok(VerifyResult {
        probe_id: probe.probe_id,
        table_exists: true,
        rows_present,
        checksum: Some(checksum),
        served_by: None,
    })
}
