//! A stand-in for Cloudflare's REST API on a loopback port, for the remote tests: the one call a
//! remote run makes without wrangler (turning on read replication) reaches it instead of
//! Cloudflare.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// Cloudflare's REST API on a loopback port, for the one call a run makes without wrangler: it
/// answers a database's `PUT` as the API does (its envelope, with the mode the request set) and
/// keeps every request, head and body. It serves until the test ends.
pub struct ApiStandIn {
    pub base: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl ApiStandIn {
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}/client/v4", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
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
                let _ = reader.read_exact(&mut body);
                let body = String::from_utf8_lossy(&body).into_owned();
                let mode = serde_json::from_str::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|v| v["read_replication"]["mode"].as_str().map(str::to_owned))
                    .unwrap_or_else(|| "disabled".into());
                let answer = format!(
                    r#"{{"success":true,"errors":[],"messages":[],"result":{{"read_replication":{{"mode":"{mode}"}}}}}}"#
                );
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{answer}",
                    answer.len()
                );
                kept.lock().unwrap().push(format!("{head}\n{body}"));
            }
        });
        ApiStandIn { base, requests }
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}
