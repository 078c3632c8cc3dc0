//! A stand-in for Cloudflare's REST API on a loopback port, for the remote tests: the calls a
//! remote run makes without wrangler reach it instead of Cloudflare. It turns on read
//! replication (a database's `PUT`), and performs D1 queries for real (`POST .../query` and
//! `.../raw`) on the run's local D1, the SQLite file the stand-in wrangler's `wrangler dev`
//! keeps, opened with rusqlite beside workerd (both take SQLite's own locks on it). Asked to,
//! it answers some queries with HTTP 429 and a `Retry-After`, as the API does past its rate.
//! It keeps Hyperdrive configurations (created, listed, deleted) as files in a directory the
//! stand-in wrangler reads when it deploys a Worker bound to one: `<id>` holds the server's
//! connection string as the request gave it, `<id>.name` the configuration's name.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::types::Value;
use serde_json::{Value as Json, json};

/// Where the database a query names is.
#[derive(Clone)]
pub enum D1File {
    /// No database: a query is answered with an error.
    None,
    /// This SQLite file.
    At(PathBuf),
    /// The local D1 of the one remote run whose name starts with this prefix (its `--tag`'s),
    /// under the project's `target/d1bench/remote/`.
    OfRun(String),
}

/// What the stand-in does besides answering.
#[derive(Clone)]
pub struct Behaviour {
    pub d1: D1File,
    /// Every Nth query (1st, N+1th, ...: counted over `/query` and `/raw`) is answered 429 with
    /// `Retry-After: retry_after_s`, and not performed.
    pub limit_every: Option<usize>,
    pub retry_after_s: u32,
    /// Where Hyperdrive configurations are kept (the stand-in wrangler's
    /// `STAND_IN_HYPERDRIVE_DIR`); none: their calls answer 404.
    pub hyperdrive_dir: Option<PathBuf>,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            d1: D1File::None,
            limit_every: None,
            retry_after_s: 1,
            hyperdrive_dir: None,
        }
    }
}

/// Cloudflare's REST API on a loopback port. It keeps every request, head and body, and serves
/// until the test ends.
pub struct ApiStandIn {
    pub base: String,
    requests: Arc<Mutex<Vec<String>>>,
}

/// One request as read off the socket.
struct Request {
    method: String,
    path: String,
    head: String,
    body: String,
}

impl ApiStandIn {
    pub fn start() -> Self {
        Self::start_with(Behaviour::default())
    }

    pub fn start_with(behaviour: Behaviour) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}/client/v4", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&requests);
        std::thread::spawn(move || {
            let mut queries = 0;
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let Some(request) = read_request(&stream) else {
                    continue;
                };
                let (status, headers, answer) =
                    if request.path.ends_with("/query") || request.path.ends_with("/raw") {
                        queries += 1;
                        let limited = behaviour
                            .limit_every
                            .is_some_and(|n| (queries - 1) % n == 0);
                        if limited {
                            rate_limited(behaviour.retry_after_s)
                        } else {
                            query(&behaviour.d1, &request)
                        }
                    } else if request.method == "PUT" {
                        replication(&request)
                    } else if let (Some(dir), true) = (
                        &behaviour.hyperdrive_dir,
                        request.path.contains("/hyperdrive/configs"),
                    ) {
                        hyperdrive(dir, &request)
                    } else {
                        (
                            404,
                            String::new(),
                            envelope_error(7003, "No route for that URI"),
                        )
                    };
                // Kept before answering: the client may ask for the requests as soon as it
                // has its answer.
                kept.lock()
                    .unwrap()
                    .push(format!("{}\n{}", request.head, request.body));
                respond(&mut stream, status, &headers, &answer);
            }
        });
        ApiStandIn { base, requests }
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let (mut head, mut length) = (String::new(), 0);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let mut first = head.lines().next()?.split_whitespace();
    Some(Request {
        method: first.next()?.to_owned(),
        path: first.next()?.to_owned(),
        body: String::from_utf8_lossy(&body).into_owned(),
        head,
    })
}

fn respond(stream: &mut TcpStream, status: u16, headers: &str, answer: &str) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        429 => "Too Many Requests",
        _ => "Internal Server Error",
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         {headers}Connection: close\r\n\r\n{answer}",
        answer.len()
    );
}

fn envelope_error(code: i64, message: &str) -> String {
    json!({"result": null, "success": false, "errors": [{"code": code, "message": message}],
           "messages": []})
    .to_string()
}

/// A database's `PUT`: its envelope, with the read replication mode the request set.
fn replication(request: &Request) -> (u16, String, String) {
    let mode = serde_json::from_str::<Json>(&request.body)
        .ok()
        .and_then(|v| v["read_replication"]["mode"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "disabled".into());
    let answer = format!(
        r#"{{"success":true,"errors":[],"messages":[],"result":{{"read_replication":{{"mode":"{mode}"}}}}}}"#
    );
    (200, String::new(), answer)
}

/// A Hyperdrive configuration's call: `POST` creates one (query cache off, or refused), `GET`
/// lists them, `DELETE .../<id>` deletes one (404 if there is none).
fn hyperdrive(dir: &Path, request: &Request) -> (u16, String, String) {
    let ok = |result: Json| {
        (
            200,
            String::new(),
            json!({"result": result, "success": true, "errors": [], "messages": []}).to_string(),
        )
    };
    let id_of = |request: &Request| request.path.rsplit('/').next().unwrap_or("").to_owned();
    match request.method.as_str() {
        "POST" => {
            let body: Json = serde_json::from_str(&request.body).unwrap_or(Json::Null);
            let origin = &body["origin"];
            if body["caching"]["disabled"] != json!(true) {
                return (
                    400,
                    String::new(),
                    envelope_error(
                        2001,
                        "the stand-in creates configurations with caching disabled only",
                    ),
                );
            }
            let url = format!(
                "postgresql://{}:{}@{}:{}/{}",
                origin["user"].as_str().unwrap_or(""),
                origin["password"].as_str().unwrap_or(""),
                origin["host"].as_str().unwrap_or(""),
                origin["port"],
                origin["database"].as_str().unwrap_or(""),
            );
            let name = body["name"].as_str().unwrap_or("").to_owned();
            // Unique across the test process's stand-ins: the time, then a count.
            static CREATED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            let count = CREATED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let id = format!("{now:016x}{count:016x}");
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(&id), url).unwrap();
            std::fs::write(dir.join(format!("{id}.name")), &name).unwrap();
            ok(
                json!({"id": id, "name": name, "origin": {"host": origin["host"], "port": origin["port"]},
                      "caching": {"disabled": true}}),
            )
        }
        "GET" => {
            let mut configs = Vec::new();
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let file = entry.file_name().to_string_lossy().into_owned();
                if let Some(id) = file.strip_suffix(".name") {
                    let name = std::fs::read_to_string(entry.path()).unwrap_or_default();
                    configs.push(json!({"id": id, "name": name}));
                }
            }
            ok(Json::Array(configs))
        }
        "DELETE" => {
            let id = id_of(request);
            if std::fs::remove_file(dir.join(&id)).is_err() {
                return (
                    404,
                    String::new(),
                    envelope_error(2007, "Hyperdrive config not found"),
                );
            }
            let _ = std::fs::remove_file(dir.join(format!("{id}.name")));
            ok(Json::Null)
        }
        _ => (
            404,
            String::new(),
            envelope_error(7003, "No route for that URI"),
        ),
    }
}

/// Past the API's rate: 429, `Retry-After`, and the error the API gives (code 971).
fn rate_limited(retry_after_s: u32) -> (u16, String, String) {
    (
        429,
        format!("Retry-After: {retry_after_s}\r\n"),
        envelope_error(
            971,
            "Please wait and consider throttling your request speed",
        ),
    )
}

/// The run's local D1 file: the `.sqlite` wrangler dev keeps for the database (not miniflare's
/// `metadata.sqlite`).
fn database_file(d1: &D1File) -> Result<PathBuf, String> {
    let prefix = match d1 {
        D1File::None => return Err("the stand-in API serves no database".into()),
        D1File::At(path) => return Ok(path.clone()),
        D1File::OfRun(prefix) => prefix,
    };
    let runs = xtask::paths::project_root().join("target/d1bench/remote");
    let mut found = Vec::new();
    for run in std::fs::read_dir(&runs).map_err(|e| format!("{}: {e}", runs.display()))? {
        let run = run.map_err(|e| e.to_string())?.path();
        let named = run
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(prefix.as_str()));
        let objects = run.join("stand-in/d1/v3/d1/miniflare-D1DatabaseObject");
        if !named || !objects.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&objects).map_err(|e| e.to_string())? {
            let file = file.map_err(|e| e.to_string())?.path();
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.ends_with(".sqlite") && name != "metadata.sqlite" {
                found.push(file);
            }
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        n => Err(format!(
            "{n} local D1 files of runs named {prefix}* under {}: {found:?}",
            runs.display()
        )),
    }
}

/// A D1 query, performed: `{"sql", "params"}` or `{"batch": [...]}` (one transaction), each
/// statement's answer as the API gives it (`/query`: rows as objects; `/raw`: columns and rows
/// as arrays), or the API's error envelope with SQLite's message. `rows_written` is the
/// statement's changes; the stand-in counts no rows read.
fn query(d1: &D1File, request: &Request) -> (u16, String, String) {
    let raw = request.path.ends_with("/raw");
    let body: Json = match serde_json::from_str(&request.body) {
        Ok(body) => body,
        Err(e) => return (400, String::new(), envelope_error(7400, &e.to_string())),
    };
    let statements: Vec<Json> = match body.get("batch") {
        Some(Json::Array(batch)) => batch.clone(),
        _ => vec![body],
    };
    let run = || -> Result<Vec<Json>, String> {
        let path = database_file(d1)?;
        let mut db = rusqlite::Connection::open(&path).map_err(|e| e.to_string())?;
        db.busy_timeout(Duration::from_secs(10))
            .map_err(|e| e.to_string())?;
        let tx = db.transaction().map_err(sqlite_error)?;
        let mut answers = Vec::new();
        for statement in &statements {
            answers.push(one_statement(&tx, statement, raw)?);
        }
        tx.commit().map_err(sqlite_error)?;
        Ok(answers)
    };
    match run() {
        Ok(answers) => (
            200,
            String::new(),
            json!({"result": answers, "success": true, "errors": [], "messages": []}).to_string(),
        ),
        Err(message) => (400, String::new(), envelope_error(7500, &message)),
    }
}

/// SQLite's error as D1's API words it: its message, then its code's name.
fn sqlite_error(e: rusqlite::Error) -> String {
    let name = match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy) => "SQLITE_BUSY",
        Some(rusqlite::ErrorCode::ConstraintViolation) => "SQLITE_CONSTRAINT",
        _ => "SQLITE_ERROR",
    };
    format!("{e}: {name}")
}

fn one_statement(db: &rusqlite::Connection, statement: &Json, raw: bool) -> Result<Json, String> {
    let started = Instant::now();
    let sql = statement["sql"]
        .as_str()
        .ok_or("a statement without `sql`")?;
    let params: Vec<Value> = statement["params"]
        .as_array()
        .map(|p| p.iter().map(to_sqlite).collect())
        .unwrap_or_default();
    let mut prepared = db.prepare(sql).map_err(sqlite_error)?;
    let columns: Vec<String> = prepared
        .column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    let mut rows = Vec::new();
    let mut cursor = prepared
        .query(rusqlite::params_from_iter(params))
        .map_err(sqlite_error)?;
    while let Some(row) = cursor.next().map_err(sqlite_error)? {
        let values: Vec<Json> = (0..columns.len())
            .map(|i| from_sqlite(row.get::<_, Value>(i).unwrap_or(Value::Null)))
            .collect();
        rows.push(values);
    }
    drop(cursor);
    let changes = db.changes();
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let results = if raw {
        json!({"columns": columns, "rows": rows})
    } else {
        Json::Array(
            rows.into_iter()
                .map(|r| Json::Object(columns.iter().cloned().zip(r).collect()))
                .collect(),
        )
    };
    Ok(json!({
        "results": results,
        "success": true,
        "meta": {
            "changed_db": changes > 0,
            "changes": changes,
            "duration": ms,
            "last_row_id": db.last_insert_rowid(),
            "rows_read": 0,
            "rows_written": changes,
            "served_by_primary": true,
            "served_by_region": "STAND-IN",
            "total_attempts": 1,
            "timings": {"sql_duration_ms": ms},
        }
    }))
}

fn to_sqlite(v: &Json) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Integer(i64::from(*b)),
        Json::Number(n) => n
            .as_i64()
            .map(Value::Integer)
            .unwrap_or_else(|| Value::Real(n.as_f64().unwrap_or(0.0))),
        Json::String(s) => Value::Text(s.clone()),
        other => Value::Text(other.to_string()),
    }
}

fn from_sqlite(v: Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Integer(i) => json!(i),
        Value::Real(f) => json!(f),
        Value::Text(s) => json!(s),
        Value::Blob(b) => json!(b),
    }
}

/// How many rows `table` holds in the SQLite file at `path`.
pub fn rows_in(path: &Path, table: &str) -> i64 {
    let db = rusqlite::Connection::open(path).unwrap();
    db.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}
