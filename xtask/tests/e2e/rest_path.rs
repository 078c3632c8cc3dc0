//! Writes through D1's REST API, end to end: the xtask's REST client against the stand-in API
//! (`/query` and `/raw` performed on a real SQLite file, a 429 with `Retry-After` when the
//! stand-in is told to give one), and a remote run of write-contention through the stand-in
//! wrangler and the stand-in API that sends its writes both ways, interleaved, and reconciles
//! every one exactly once in the table the Worker checks.

use std::time::Duration;

use d1bench_core::workload::{self, FIRST_WRITE_ID, OpRequest, Operation, Preparation, TableSpec};
use d1bench_core::{Outcome, RefusalKind};
use xtask::targets::remote::rest::{Endpoint, RestClient};
use xtask::targets::remote::wrangler::{Credentials, Secret};

use crate::harness::Trial;
use crate::remote::{FAKE_API_TOKEN, remote_run};
use crate::stand_in_api::{ApiStandIn, Behaviour, D1File, rows_in};
use crate::support::read_csv;

/// Longest first.
pub fn tests() -> Vec<Trial> {
    tests!(rest_path:
        write_contention_sends_writes_both_ways_through_the_stand_ins_and_reconciles_them_once,
        the_stand_in_api_performs_query_and_raw_writes_and_answers_429_when_told,
    )
}

const SPEC: TableSpec = TableSpec {
    columns: 4,
    row_bytes: 64,
    seed: 1,
    groups: 10,
};

fn write(op: Operation, key: u64, rows: usize) -> OpRequest {
    OpRequest {
        spec: SPEC,
        op,
        key,
        rows,
        preparation: Preparation::Reuse,
        version: 0,
        cache: None,
        session: Default::default(),
        index: None,
    }
}

fn client(api: &ApiStandIn) -> RestClient {
    let credentials = Credentials {
        api_token: Secret::new(FAKE_API_TOKEN.to_owned()),
        account_id: "stand-in-account".to_owned(),
    };
    RestClient::new(&api.base, &credentials, "db-0", Duration::from_secs(10))
}

pub fn the_stand_in_api_performs_query_and_raw_writes_and_answers_429_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("d1.sqlite");
    let db = rusqlite::Connection::open(&file).unwrap();
    for sql in workload::create_table(&SPEC) {
        db.execute_batch(&sql).unwrap();
    }
    drop(db);
    let api = ApiStandIn::start_with(Behaviour {
        d1: D1File::At(file.clone()),
        ..Behaviour::default()
    });
    let rest = client(&api);

    // One write through /query, a batch of 5 through /raw: performed, their meta read back.
    let one = rest.write(&write(Operation::Write, FIRST_WRITE_ID, 1), Endpoint::Query);
    let one = one.timed.result.unwrap();
    assert_eq!((one.outcome, one.changes), (Outcome::Ok, 1), "{one:?}");
    assert_eq!(one.d1_attempts, Some(1));
    let batch = write(Operation::BatchWrite, FIRST_WRITE_ID + 1, 5);
    let five = rest.write(&batch, Endpoint::Raw).timed.result.unwrap();
    assert_eq!((five.outcome, five.changes), (Outcome::Ok, 5), "{five:?}");
    assert_eq!(rows_in(&file, workload::TABLE), 6);
    // Sent again, the idempotent insert changes nothing.
    let again = rest.write(&batch, Endpoint::Query).timed.result.unwrap();
    assert_eq!(
        (again.outcome, again.changes),
        (Outcome::Ok, 0),
        "{again:?}"
    );
    assert_eq!(rows_in(&file, workload::TABLE), 6);
    // Each request went to the account's database with the run's token.
    let requests = api.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests[0].starts_with(
            "POST /client/v4/accounts/stand-in-account/d1/database/db-0/query HTTP/1.1\r\n"
        ),
        "{}",
        requests[0]
    );
    assert!(requests[1].contains("/d1/database/db-0/raw HTTP/1.1\r\n"));
    assert!(
        requests[0]
            .to_ascii_lowercase()
            .contains(&format!("authorization: bearer {FAKE_API_TOKEN}"))
    );

    // The answers' shapes, as Cloudflare documents them: /query's rows as objects, /raw's as
    // arrays under their columns, each statement with its meta.
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build(),
    );
    let url = |route: &str| format!("{}/accounts/a/d1/database/db-0/{route}", api.base);
    let select =
        format!(r#"{{"sql": "SELECT id, k FROM wl WHERE id = ?", "params": [{FIRST_WRITE_ID}]}}"#);
    for route in ["query", "raw"] {
        let text = agent
            .post(url(route))
            .header("Content-Type", "application/json")
            .send(select.as_str())
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        let answer: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(answer["success"], true, "{text}");
        let statement = &answer["result"][0];
        assert!(statement["meta"]["duration"].is_number(), "{text}");
        let id = FIRST_WRITE_ID as i64;
        if route == "query" {
            assert_eq!(statement["results"][0]["id"], id, "{text}");
        } else {
            assert_eq!(statement["results"]["columns"][0], "id", "{text}");
            assert_eq!(statement["results"]["rows"][0][0], id, "{text}");
        }
    }
    // An SQL error is the API's error envelope with SQLite's words, classified as D1's.
    let bad = agent
        .post(url("query"))
        .send(r#"{"sql": "SELECT * FROM missing"}"#)
        .unwrap();
    assert_eq!(bad.status().as_u16(), 400);

    // Told to, it refuses with 429 and Retry-After, performing nothing: a refusal of its own
    // kind, with the wait it asked for.
    let limited = ApiStandIn::start_with(Behaviour {
        d1: D1File::At(file.clone()),
        limit_every: Some(2),
        retry_after_s: 3,
        ..Behaviour::default()
    });
    let rest = client(&limited);
    let next = write(Operation::Write, FIRST_WRITE_ID + 10, 1);
    let refused = rest.write(&next, Endpoint::Query);
    let result = refused.timed.result.as_ref().unwrap();
    assert_eq!(
        (result.outcome, result.refusal),
        (Outcome::Refused, Some(RefusalKind::RateLimited)),
        "{result:?}"
    );
    assert_eq!(refused.retry_after, Some(Duration::from_secs(3)));
    assert_eq!(rows_in(&file, workload::TABLE), 6);
    let second = rest.write(&next, Endpoint::Query).timed.result.unwrap();
    assert_eq!((second.outcome, second.changes), (Outcome::Ok, 1));
    assert_eq!(rows_in(&file, workload::TABLE), 7);
}

pub fn write_contention_sends_writes_both_ways_through_the_stand_ins_and_reconciles_them_once() {
    // Every 5th REST call is refused with 429 (Retry-After 1 s): the retry policies wait it out,
    // the policy without retries records it.
    let tag = "restpath";
    let api = ApiStandIn::start_with(Behaviour {
        d1: D1File::OfRun(format!("d1bench-run-{tag}-")),
        limit_every: Some(5),
        retry_after_s: 1,
        ..Behaviour::default()
    });
    let (run_dir, _, _dir) = remote_run(
        "write-contention",
        &["--profile", "rest-smoke", "--tag", tag, "--no-baseline"],
        &[("D1BENCH_CLOUDFLARE_API", api.base.as_str())],
    );

    let rows = read_csv(&run_dir.join("results.csv"));
    let writes: Vec<_> = rows
        .iter()
        .filter(|r| ["write", "batch-write"].contains(&r["op"].as_str()))
        .collect();
    let by = |path: &str| writes.iter().filter(|r| r["path"] == path).count();
    let (rest, binding) = (by("rest"), by("binding"));
    assert_eq!(rest + binding, writes.len());
    // Pairs within each point and phase: the two ways differ by at most one per phase (one
    // point: calibration, warm-up, measured load).
    assert!(rest > 0 && binding > 0, "{rest} rest, {binding} binding");
    assert!(
        rest.abs_diff(binding) <= 3,
        "{rest} rest, {binding} binding"
    );
    // Every REST call the stand-in got was one of the run's writes, to its own database.
    let posts: Vec<String> = api
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("POST "))
        .collect();
    let attempts: usize = writes
        .iter()
        .filter(|r| r["path"] == "rest")
        .map(|r| r["attempts"].parse::<usize>().unwrap())
        .sum();
    assert_eq!(posts.len(), attempts);
    assert!(posts.iter().all(|p| p.starts_with(
        "POST /client/v4/accounts/stand-in-account/d1/database/\
         6b3f3c1e-2a4d-4c8e-9f10-0a1b2c3d4e5f/query HTTP/1.1\r\n"
    )));
    // 429s were seen, waited out where a policy retries, final where none does.
    let limited: Vec<_> = writes
        .iter()
        .filter(|r| r["first_refusal"] == "rate-limited")
        .collect();
    assert!(!limited.is_empty());
    for r in &limited {
        assert_eq!(r["path"], "rest", "{r:?}");
        if r["retry"] == "none" {
            assert_eq!(
                (r["outcome"].as_str(), r["refusal"].as_str()),
                ("refused", "rate-limited")
            );
        } else {
            assert_eq!(r["outcome"], "ok", "{r:?}");
            assert!(
                r["retry_wait_ms"].parse::<f64>().unwrap() >= 1000.0,
                "{r:?}"
            );
        }
    }
    // The stand-in's writes take SQLite's write lock beside workerd's: a binding write may
    // find it held (`busy`), as the write-up's did; nothing else refuses, nothing fails.
    for r in &writes {
        assert_eq!(r["target_failed"], "false", "{r:?}");
        assert!(
            r["outcome"] == "ok" || ["rate-limited", "busy"].contains(&r["refusal"].as_str()),
            "{r:?}"
        );
    }

    // The final check through the Worker finds every acknowledged write, by either way, once.
    let checks = read_csv(&run_dir.join("checks.csv"));
    let last = checks.last().unwrap();
    assert_eq!(last["when"], "final");
    assert_eq!(last["reconciled"], "true", "{last:?}");
    assert_eq!(
        (
            last["writes_missing"].as_str(),
            last["writes_duplicated"].as_str()
        ),
        ("0", "0")
    );
    let acknowledged: usize = writes
        .iter()
        .filter(|r| r["outcome"] == "ok")
        .map(|r| r["op_rows"].parse::<usize>().unwrap())
        .sum();
    assert_eq!(
        last["writes_acknowledged"].parse::<usize>().unwrap(),
        acknowledged
    );
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    let section = summary
        .split("\n## ")
        .find(|s| s.starts_with("Binding vs REST API"))
        .unwrap_or_else(|| panic!("no REST section in {summary}"));
    assert!(
        section.contains("| remote | write | none | rest |"),
        "{section}"
    );
    // What it measured through the stand-ins, for whoever reads the test's output.
    eprintln!("## {section}");
}
