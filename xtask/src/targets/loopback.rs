//! Test support: the two halves of a one-request HTTP/1.1 exchange on a loopback socket, for
//! tests that stand in for a server (the Worker, Cloudflare's API) without a framework.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// Reads one request from `stream`: its head (request line and headers) and, after a blank
/// line, its body (as long as its `Content-Length`).
pub fn read_request(stream: &TcpStream) -> String {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let (mut head, mut length) = (String::new(), 0);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    format!("{head}\n{}", String::from_utf8(body).unwrap())
}

/// Answers on `stream` with `status` and a JSON `body`, closing the connection after it.
pub fn answer(stream: &TcpStream, status: u16, body: &str) {
    answer_with(stream, status, &[], body);
}

/// [`answer`] with extra `headers` (name, value).
pub fn answer_with(mut stream: &TcpStream, status: u16, headers: &[(&str, &str)], body: &str) {
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         {extra}Connection: close\r\n\r\n{body}",
        body.len()
    );
}
