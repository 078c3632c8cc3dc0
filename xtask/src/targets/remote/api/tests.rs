//! The read-replication call against a one-connection-per-answer HTTP server on loopback: what
//! is sent, and every way the answer can go wrong.

use std::net::TcpListener;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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

fn quick() -> Pacing {
    Pacing {
        min_interval: Duration::ZERO,
        first_backoff: Duration::from_millis(10),
        attempts: 3,
    }
}

/// A server answering each connection with the next of `answers` (status, body), or holding it
/// open unanswered for `None`; returns its base URL and, when joined, the requests it read.
fn serve(answers: Vec<Option<(u16, &'static str)>>) -> (String, JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/client/v4", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut requests = Vec::new();
        for answer in answers {
            let (stream, _) = listener.accept().unwrap();
            requests.push(loopback::read_request(&stream));
            match answer {
                Some((status, body)) => loopback::answer(&stream, status, body),
                None => std::thread::sleep(Duration::from_secs(2)),
            }
        }
        requests
    });
    (base, handle)
}

fn api(base: &str) -> Api {
    Api::new(base, &credentials(), quick(), Duration::from_millis(500))
}

const AUTO: &str = r#"{"success":true,"errors":[],"messages":[],"result":{"uuid":"x","name":"d1bench-run-x","read_replication":{"mode":"auto"}}}"#;

#[test]
fn it_puts_auto_with_the_token_to_the_databases_address() {
    let (base, server) = serve(vec![Some((200, AUTO))]);
    assert_eq!(api(&base).enable_read_replication(DB).unwrap(), "auto");
    let requests = server.join().unwrap();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert!(
        request.starts_with(&format!(
            "PUT /client/v4/accounts/acct-9/d1/database/{DB} HTTP/1.1"
        )),
        "{request}"
    );
    assert!(
        request
            .to_ascii_lowercase()
            .contains("\nauthorization: bearer tok-123"),
        "{request}"
    );
    let body: serde_json::Value =
        serde_json::from_str(request.rsplit('\n').next().unwrap()).unwrap();
    assert_eq!(body["read_replication"]["mode"], "auto");
}

#[test]
fn a_refusal_is_an_error_in_the_apis_words() {
    let (base, server) = serve(vec![Some((
        403,
        r#"{"success":false,"errors":[{"code":10000,"message":"Authentication error"}],"result":null}"#,
    ))]);
    let e = format!("{:#}", api(&base).enable_read_replication(DB).unwrap_err());
    server.join().unwrap();
    assert!(
        e.contains("answered 403: Authentication error (code 10000)"),
        "{e}"
    );
    assert!(
        e.contains(&format!("accounts/acct-9/d1/database/{DB}")),
        "{e}"
    );
    assert!(!e.contains("tok-123"), "{e}");
}

#[test]
fn a_rate_limited_call_is_tried_again() {
    let (base, server) = serve(vec![
        Some((
            429,
            r#"{"success":false,"errors":[{"code":971,"message":"Please wait"}]}"#,
        )),
        Some((200, AUTO)),
    ]);
    assert_eq!(api(&base).enable_read_replication(DB).unwrap(), "auto");
    assert_eq!(server.join().unwrap().len(), 2);
}

#[test]
fn rate_limits_end_after_the_pacings_attempts() {
    const LIMITED: &str = r#"{"success":false,"errors":[{"code":971,"message":"Please wait"}]}"#;
    let (base, server) = serve(vec![Some((429, LIMITED)); 3]);
    let e = format!("{:#}", api(&base).enable_read_replication(DB).unwrap_err());
    assert_eq!(server.join().unwrap().len(), 3);
    assert!(e.contains("answered 429: Please wait (code 971)"), "{e}");
}

#[test]
fn an_answer_with_another_mode_or_none_is_an_error() {
    let (base, server) = serve(vec![
        Some((
            200,
            r#"{"success":true,"errors":[],"result":{"read_replication":{"mode":"disabled"}}}"#,
        )),
        Some((200, r#"{"success":true,"errors":[],"result":{"uuid":"x"}}"#)),
        Some((200, "<html>gateway</html>")),
    ]);
    let e = format!("{:#}", api(&base).enable_read_replication(DB).unwrap_err());
    assert!(
        e.contains("reports read replication `disabled`, not `auto`"),
        "{e}"
    );
    let e = format!("{:#}", api(&base).enable_read_replication(DB).unwrap_err());
    assert!(e.contains("has no read_replication.mode"), "{e}");
    let e = format!("{:#}", api(&base).enable_read_replication(DB).unwrap_err());
    assert!(
        e.contains(
            "answered 200 with something that is not its JSON envelope: <html>gateway</html>"
        ),
        "{e}"
    );
    server.join().unwrap();
}

#[test]
fn a_silent_api_times_out_and_a_closed_port_is_named() {
    let (base, server) = serve(vec![None]);
    let started = Instant::now();
    let e = format!("{:#}", api(&base).enable_read_replication(DB).unwrap_err());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(e.contains("PUT http://127.0.0.1:"), "{e}");
    server.join().unwrap();

    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/client/v4", closed.local_addr().unwrap());
    drop(closed);
    let e = format!("{:#}", api(&base).enable_read_replication(DB).unwrap_err());
    assert!(e.contains(&format!("PUT {base}/accounts/acct-9")), "{e}");
}
