//! The Worker's side of workload experiments: `POST /workload/seed` (create the table and write
//! one batch of its rows, generated here from the seed), `/workload/index` (leave one secondary
//! index), `/workload/op` (one operation, timed inside its own invocation, with D1's `meta`) and
//! `/workload/check` (count, sums and content checksum of the table; dropped when asked). The
//! SQL comes from `d1bench_core::workload`, never from the request. Operations run through the
//! JS binding (`raw.rs`) so D1's `served_by_region` / `served_by_colo` reach the answer; a
//! read asked to run in a D1 session opens its own (`withSession`) and reports its bookmark.

use d1bench_core::checksum::checksum_sql;
use d1bench_core::workload::{
    self, CheckRequest, CheckResult, IndexKind, IndexRequest, OpRequest, OpResult, Operation,
    RowVersion, SeedRequest, SeedResult,
};
use d1bench_core::{Checksum, Outcome, Value};
use js_sys::Date;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use worker::{D1Database, Request, Response, Result, RouteContext};

use crate::raw::{self, Answered};
use crate::statements::{bind, failed, statement};
use crate::{BINDING, error_text, json_error, prepare};

/// The request's JSON as `T`, or the 400 response saying why not.
async fn read<T: DeserializeOwned>(req: &mut Request) -> Result<std::result::Result<T, Response>> {
    let body = req.text().await?;
    match serde_json::from_str(&body) {
        Ok(value) => Ok(Ok(value)),
        Err(e) => json_error(400, &format!("invalid request: {e}"), None).map(Err),
    }
}

/// `POST /workload/seed`.
pub async fn handle_seed(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let seed: SeedRequest = match read(&mut req).await? {
        Ok(seed) => seed,
        Err(rejected) => return Ok(rejected),
    };
    if let Err(e) = seed.validate() {
        return json_error(400, &format!("invalid seed request: {e}"), None);
    }
    let db = ctx.env.d1(BINDING)?;
    if seed.create {
        let create = workload::create_table(&seed.spec)
            .iter()
            .map(|s| db.prepare(s))
            .collect();
        if let Err(e) = db.batch(create).await {
            return Response::from_json(&SeedResult {
                rows_written: 0,
                statements: 0,
                d1_ms: None,
                error: Some(error_text(&e)),
            });
        }
    }
    let statements = workload::seed_statements(&seed.spec, seed.from, seed.to);
    let prepared = statements
        .iter()
        .map(|s| prepare(&db, s))
        .collect::<Result<Vec<_>>>()?;
    let answer = match db.batch(prepared).await {
        Ok(results) => {
            let metas: Vec<_> = results.iter().map(|r| r.meta().ok().flatten()).collect();
            SeedResult {
                rows_written: metas.iter().flatten().filter_map(|m| m.changes).sum(),
                statements: statements.len(),
                d1_ms: metas
                    .iter()
                    .map(|m| m.as_ref().and_then(|m| m.duration))
                    .sum(),
                error: None,
            }
        }
        Err(e) => SeedResult {
            rows_written: 0,
            statements: statements.len(),
            d1_ms: None,
            error: Some(error_text(&e)),
        },
    };
    Response::from_json(&answer)
}

/// `POST /workload/index`.
pub async fn handle_index(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let index: IndexRequest = match read(&mut req).await? {
        Ok(index) => index,
        Err(rejected) => return Ok(rejected),
    };
    let db = ctx.env.d1(BINDING)?;
    let statements = IndexKind::sql(&index.indexes)
        .iter()
        .map(|s| db.prepare(s))
        .collect();
    match db.batch(statements).await {
        Ok(_) => Response::from_json(&serde_json::json!({ "indexes": index.indexes })),
        Err(e) => json_error(
            500,
            &format!("the index could not be set: {}", error_text(&e)),
            None,
        ),
    }
}

/// `POST /workload/op`: one operation, the window around handing it to D1 and reading its answer.
pub async fn handle_op(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let op: OpRequest = match read(&mut req).await? {
        Ok(op) => op,
        Err(rejected) => return Ok(rejected),
    };
    if let Err(e) = op.validate() {
        return json_error(400, &format!("invalid operation: {e}"), None);
    }
    let db = ctx.env.d1(BINDING)?;
    let worker_colo = req.cf().map(|cf| cf.colo());
    if matches!(op.op, Operation::CachedRead | Operation::Update) {
        let mut result = crate::cache::perform(&ctx.env, &db, &op).await;
        result.worker_colo = worker_colo;
        return Response::from_json(&result);
    }
    let opened = Date::now();
    let answered = perform(&db, &op).await;
    let inside_ms = Date::now() - opened;
    let result = match answered {
        Ok(Performed {
            answers,
            rows_returned,
            session_bookmark,
        }) => {
            let sum =
                |f: fn(&Answered) -> Option<u64>| -> Option<u64> { answers.iter().map(f).sum() };
            OpResult {
                outcome: Outcome::Ok,
                refusal: None,
                error: None,
                rows_returned,
                changes: answers.iter().map(|a| a.changes).sum(),
                inside_ms,
                d1_ms: answers.iter().map(|a| a.d1_ms).sum(),
                rows_read: sum(|a| a.rows_read),
                rows_written: sum(|a| a.rows_written),
                d1_attempts: answers.iter().filter_map(|a| a.d1_attempts).max(),
                sql_duration_ms: answers.iter().map(|a| a.sql_duration_ms).sum(),
                served_by: raw::served_by(&answers),
                cache: None,
                version: None,
                worker_colo,
                session_bookmark,
            }
        }
        Err(text) => OpResult {
            worker_colo,
            ..failed(text, inside_ms, None)
        },
    };
    Response::from_json(&result)
}

/// What an operation got from D1: its answers, the rows the reads returned, and whether the
/// read's session had a bookmark after it (none without a session).
struct Performed {
    answers: Vec<Answered>,
    rows_returned: usize,
    session_bookmark: Option<bool>,
}

impl Performed {
    fn plain(answers: Vec<Answered>, rows_returned: usize) -> Self {
        Performed {
            answers,
            rows_returned,
            session_bookmark: None,
        }
    }
}

/// Runs the operation through the JS binding ([`raw`]), a read in its own D1 session when the
/// request asks for one; or the error's text.
async fn perform(db: &D1Database, op: &OpRequest) -> std::result::Result<Performed, String> {
    let key = Value::Integer(op.key as i64);
    match op.op {
        Operation::PointRead | Operation::RangeScan | Operation::Aggregate => {
            let sql = workload::read_sql(op.op, op.rows, op.index).expect("a read has SQL");
            let Some(constraint) = op.session.constraint() else {
                let bound = bind(statement(db, &sql, op.preparation), &[key])
                    .map_err(|e| error_text(&e))?;
                let answer = raw::all(&bound).await?;
                let rows = answer.rows.len();
                return Ok(Performed::plain(vec![answer], rows));
            };
            let (prepared, session) = raw::session_statement(db, constraint, &sql)?;
            let bound = bind(prepared, &[key]).map_err(|e| error_text(&e))?;
            let answer = raw::all(&bound).await?;
            let rows = answer.rows.len();
            Ok(Performed {
                answers: vec![answer],
                rows_returned: rows,
                session_bookmark: Some(raw::has_bookmark(&session)?),
            })
        }
        Operation::Write | Operation::BatchWrite => {
            let generator = op.spec.generator();
            let sql = workload::write_sql(&op.spec);
            let statements = op
                .written_ids()
                .map(|id| {
                    bind(
                        statement(db, &sql, op.preparation),
                        &op.spec.row(&generator, id),
                    )
                })
                .collect::<Result<Vec<_>>>()
                .map_err(|e| error_text(&e))?;
            let answers = if op.op == Operation::Write {
                vec![raw::run(&statements[0]).await?]
            } else {
                raw::batch(db, statements).await?
            };
            Ok(Performed::plain(answers, 0))
        }
        Operation::CachedRead | Operation::Update => {
            Err(format!("`{}` runs in the cache module", op.op))
        }
    }
}

/// The sums row of [`workload::sums_sql`].
#[derive(Deserialize)]
struct Sums {
    n: f64,
    ids: f64,
    misplaced: f64,
}

/// A row of [`workload::write_ids_sql`]: ids below 2^53 are exact as JavaScript numbers.
#[derive(Deserialize)]
struct WriteId {
    id: f64,
}

/// A row of [`workload::cache::versions_sql`].
#[derive(Deserialize)]
struct Version {
    id: f64,
    version: f64,
}

/// `POST /workload/check`: rows, sums and the content checksum, in one batch (and the table
/// dropped after them, when asked).
pub async fn handle_check(mut req: Request, ctx: RouteContext<()>) -> Result<Response> {
    let check: CheckRequest = match read(&mut req).await? {
        Ok(check) => check,
        Err(rejected) => return Ok(rejected),
    };
    let db = ctx.env.d1(BINDING)?;
    let mut statements = vec![
        db.prepare(workload::sums_sql(&check.spec)),
        db.prepare(checksum_sql(workload::TABLE, check.spec.columns)),
        db.prepare(workload::write_ids_sql()),
        db.prepare(workload::cache::versions_sql()),
    ];
    if check.drop {
        statements.push(db.prepare(format!("DROP TABLE IF EXISTS {}", workload::TABLE)));
        statements.push(db.prepare(format!(
            "DROP TABLE IF EXISTS {}",
            workload::cache::VERSION_TABLE
        )));
    }
    let answered = match db.batch(statements).await {
        Ok(answered) => answered,
        Err(e) => {
            return json_error(
                500,
                &format!("the table could not be checked: {}", error_text(&e)),
                None,
            );
        }
    };
    let sums = answered[0].results::<Sums>()?;
    let checksums = answered[1].results::<Checksum>()?;
    let write_ids: Vec<u64> = answered[2]
        .results::<WriteId>()?
        .into_iter()
        .map(|w| w.id as u64)
        .collect();
    let versions = answered[3]
        .results::<Version>()?
        .into_iter()
        .map(|v| RowVersion {
            id: v.id as u64,
            version: v.version as u64,
        })
        .collect();
    let (Some(sums), Some(checksum)) = (sums.first(), checksums.first()) else {
        return json_error(500, "the table check answered no row", None);
    };
    Response::from_json(&CheckResult {
        rows_present: sums.n as u64,
        id_sum: sums.ids as u64,
        misplaced: sums.misplaced as u64,
        checksum: *checksum,
        write_ids,
        versions,
    })
}
