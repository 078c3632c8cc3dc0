//! The REST client against a one-connection-per-answer HTTP server on loopback: what a write
//! sends, an answer, an error envelope, a 429 with its `Retry-After`, and what is not an answer.

use std::net::TcpListener;
use std::thread::JoinHandle;

use d1bench_core::workload::{FIRST_WRITE_ID, Preparation, TableSpec};

use super::*;
use crate::targets::loopback;
use crate::targets::remote::wrangler::Secret;

const DB: &str = "6b3f3c1e-2a4d-4c8e-9f10-0a1b2c3d4e5f";

fn credentials() -> Credentials {
    Credentials {
        api_token: Secret::new("tok-123".into()),
        account_id: "acct-9".into(),
    }
}

type Answer = (u16, Vec<(&'static str, &'static str)>, &'static str);

/// A server answering each connection with the next of `answers`; returns its base URL and,
/// when joined, the requests it read.
fn serve(answers: Vec<Answer>) -> (String, JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/client/v4", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut requests = Vec::new();
        for (status, headers, body) in answers {
            let (stream, _) = listener.accept().unwrap();
            requests.push(loopback::read_request(&stream));
            loopback::answer_with(&stream, status, &headers, body);
        }
        requests
    });
    (base, handle)
}

fn client(base: &str) -> RestClient {
    RestClient::new(base, &credentials(), DB, Duration::from_millis(500))
}

fn op(op: Operation, rows: usize) -> OpRequest {
    OpRequest {
        spec: TableSpec {
            columns: 3,
            row_bytes: 64,
            seed: 1,
            groups: 10,
        },
        op,
        key: FIRST_WRITE_ID,
        rows,
        preparation: Preparation::Reuse,
        version: 0,
        cache: None,
        session: Default::default(),
        index: None,
    }
}

fn body_of(request: &str) -> serde_json::Value {
    serde_json::from_str(request.rsplit('\n').next().unwrap()).unwrap()
}

const ONE_WRITTEN: &str = r#"{"success":true,"errors":[],"messages":[],"result":[{"results":[],"success":true,"meta":{"changes":1,"duration":0.4,"rows_read":1,"rows_written":2,"total_attempts":1,"timings":{"sql_duration_ms":0.1}}}]}"#;

#[test]
fn a_write_posts_the_bindings_statement_with_the_token_and_reads_its_meta() {
    let (base, server) = serve(vec![(200, vec![], ONE_WRITTEN)]);
    let answer = client(&base).write(&op(Operation::Write, 1), Endpoint::Query);
    let requests = server.join().unwrap();
    let request = &requests[0];
    assert!(
        request.starts_with(&format!(
            "POST /client/v4/accounts/acct-9/d1/database/{DB}/query HTTP/1.1"
        )),
        "{request}"
    );
    assert!(
        request
            .to_ascii_lowercase()
            .contains("\nauthorization: bearer tok-123"),
        "{request}"
    );
    let spec = op(Operation::Write, 1).spec;
    let body = body_of(request);
    assert_eq!(body["sql"], workload::write_sql(&spec));
    let row = spec.row(&spec.generator(), FIRST_WRITE_ID);
    assert_eq!(body["params"].as_array().unwrap().len(), row.len());
    assert_eq!(body["params"][0], FIRST_WRITE_ID);
    let r = answer.timed.result.unwrap();
    assert_eq!((r.outcome, r.refusal, r.changes), (Outcome::Ok, None, 1));
    assert_eq!(r.d1_ms, Some(0.4));
    assert_eq!((r.rows_read, r.rows_written), (Some(1), Some(2)));
    assert_eq!((r.d1_attempts, r.sql_duration_ms), (Some(1), Some(0.1)));
    assert_eq!(answer.retry_after, None);
}

#[test]
fn a_batch_write_goes_to_raw_as_one_batch_of_its_rows() {
    const TWO: &str = r#"{"success":true,"errors":[],"result":[{"results":{"columns":[],"rows":[]},"success":true,"meta":{"changes":1,"duration":0.2}},{"results":{"columns":[],"rows":[]},"success":true,"meta":{"changes":1,"duration":0.3}}]}"#;
    let (base, server) = serve(vec![(200, vec![], TWO)]);
    let answer = client(&base).write(&op(Operation::BatchWrite, 2), Endpoint::Raw);
    let requests = server.join().unwrap();
    assert!(requests[0].contains(&format!("/d1/database/{DB}/raw HTTP/1.1")));
    let batch = body_of(&requests[0])["batch"].as_array().unwrap().clone();
    assert_eq!(batch.len(), 2);
    assert_eq!(batch[1]["params"][0], FIRST_WRITE_ID + 1);
    let r = answer.timed.result.unwrap();
    assert_eq!((r.outcome, r.changes, r.d1_ms), (Outcome::Ok, 2, Some(0.5)));
}

#[test]
fn an_error_envelope_is_ds_text_classified() {
    let (base, server) = serve(vec![
        (
            400,
            vec![],
            r#"{"success":false,"errors":[{"code":7500,"message":"D1 DB is overloaded. Too many requests queued."}],"result":null}"#,
        ),
        (
            400,
            vec![],
            r#"{"success":false,"errors":[{"code":7500,"message":"no such table: wl: SQLITE_ERROR"}],"result":null}"#,
        ),
    ]);
    let c = client(&base);
    let r = c
        .write(&op(Operation::Write, 1), Endpoint::Query)
        .timed
        .result
        .unwrap();
    assert_eq!(
        (r.outcome, r.refusal),
        (Outcome::Refused, Some(RefusalKind::Overloaded))
    );
    assert_eq!(
        r.error.as_deref(),
        Some("D1 DB is overloaded. Too many requests queued. (code 7500)")
    );
    let r = c
        .write(&op(Operation::Write, 1), Endpoint::Query)
        .timed
        .result
        .unwrap();
    assert_eq!(
        (r.outcome, r.refusal),
        (Outcome::Error, Some(RefusalKind::Other))
    );
    server.join().unwrap();
}

#[test]
fn a_429_is_rate_limited_with_its_retry_after() {
    let (base, server) = serve(vec![
        (
            429,
            vec![("Retry-After", "7")],
            r#"{"success":false,"errors":[{"code":971,"message":"Please wait and consider throttling your request speed"}]}"#,
        ),
        (429, vec![], "rate limited"),
    ]);
    let c = client(&base);
    let answer = c.write(&op(Operation::Write, 1), Endpoint::Query);
    let r = answer.timed.result.unwrap();
    assert_eq!(
        (r.outcome, r.refusal),
        (Outcome::Refused, Some(RefusalKind::RateLimited))
    );
    assert!(RefusalKind::RateLimited.is_retryable());
    assert_eq!(answer.retry_after, Some(Duration::from_secs(7)));
    // Without the envelope, or the header, it is still the rate limit.
    let answer = c.write(&op(Operation::Write, 1), Endpoint::Query);
    let r = answer.timed.result.unwrap();
    assert_eq!(r.refusal, Some(RefusalKind::RateLimited));
    assert_eq!(r.error.as_deref(), Some("HTTP 429"));
    assert_eq!(answer.retry_after, None);
    server.join().unwrap();
}

#[test]
fn what_is_not_an_answer_or_not_a_write_is_said_so() {
    let (base, server) = serve(vec![(502, vec![], "<html>gateway</html>")]);
    let c = client(&base);
    let e = c
        .write(&op(Operation::Write, 1), Endpoint::Query)
        .timed
        .result
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("POST {base}/accounts/acct-9")), "{e}");
    assert!(e.contains("HTTP 502, not the API's JSON envelope"), "{e}");
    assert!(!e.contains("tok-123"), "{e}");
    server.join().unwrap();
    let r = c
        .write(&op(Operation::PointRead, 1), Endpoint::Query)
        .timed
        .result
        .unwrap();
    assert_eq!(r.outcome, Outcome::Error);
    assert!(
        r.error.unwrap().contains("only writes do"),
        "a read is refused before anything is sent"
    );
}

#[test]
fn the_busiest_five_minutes_are_counted_across_stretches() {
    let s = |seconds, per_second| Stretch {
        seconds,
        per_second,
    };
    // 4/s for 100 s (400 calls), a pause of 50 s, 4/s for 200 s (800): a window holds the
    // pause and 250 s of calls, 1,000, wherever it starts in the first 50 s.
    let stretches = [s(100.0, 4.0), s(50.0, 0.0), s(200.0, 4.0)];
    let calls = busiest_window(&stretches);
    assert!((calls - 1_000.0).abs() < 1e-9, "{calls}");
    assert_eq!(check_rate_limit(&stretches), Ok(calls));
    // With a pause of 100 s no window holds more than 800.
    let apart = busiest_window(&[s(100.0, 4.0), s(100.0, 0.0), s(200.0, 4.0)]);
    assert!((apart - 800.0).abs() < 1e-9, "{apart}");
    // A short run counts all its calls; exactly the limit passes.
    assert_eq!(busiest_window(&[s(10.0, 2.0)]), 20.0);
    assert!(check_rate_limit(&[s(300.0, 4.0)]).is_ok());
    // 5/s for ten minutes is 1,500 in every window.
    let e = check_rate_limit(&[s(600.0, 5.0)]).unwrap_err();
    assert!(e.contains("up to 1500 calls in 5 minutes"), "{e}");
    assert!(e.contains("limit of 1200 per 5 minutes"), "{e}");
    assert_eq!(busiest_window(&[]), 0.0);
}
