//! The d1bench Postgres ladder Worker: each invocation is one step of a limits ladder's rung
//! (`POST /rung`, `rung.rs`), run on PostgreSQL through the Hyperdrive binding `PG` with
//! tokio-postgres over a Worker socket; `GET /health` and `POST /ping` as the probe Worker
//! answers them. All need `Authorization: Bearer <BENCH_TOKEN>`.
//!
//! Why a Worker beside `worker-pg/` and not a route in it: the probe Worker's sources are what
//! its committed runs record (`worker_pg_build`) and are checked against, so a ladder route
//! there would make every quoted Postgres figure "measured by another build" (and it is another
//! binary, whose layout may move a probe's time). The plumbing below (the token check, the
//! connection through the binding, Postgres's error text, `/ping`) is the probe Worker's,
//! copied: fold `rung.rs` into `worker-pg/` and delete this crate when its runs are next made
//! again (`cargo xtask reproduce --only d1-beside-postgres`, `--only decision-map-postgres`).

use d1bench_core::Statement;
use d1bench_core::generate::Value;
use d1bench_core_pg::refusal::with_sqlstate;
use serde::Serialize;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls};
use worker::{
    Env, Request, Response, Result, RouteContext, Router, SecureTransport, Socket, event,
};

mod rung;

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
        .post_async("/rung", rung::handle_rung)
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

/// A statement's values as tokio-postgres binds them: `bigint` and `text`.
pub(crate) fn params(statement: &Statement) -> Vec<&(dyn ToSql + Sync)> {
    statement
        .params
        .iter()
        .map(|value| match value {
            Value::Integer(n) => n as &(dyn ToSql + Sync),
            Value::Text(s) => s as &(dyn ToSql + Sync),
        })
        .collect()
}
