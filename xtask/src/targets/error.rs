//! A target failing to answer, as a type: what failed (no answer, an error status, something
//! that is not an answer, the target gone or never back), its `Display` the text the records
//! keep in their `error` columns. D1's and SQLite's errors on a measured statement are not this:
//! they are data inside the answers.

use std::time::Duration;

/// Why a target gave no usable answer to a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetError {
    /// The request got no answer: the connection failed, or its time ran out.
    NoAnswer { request: String, why: String },
    /// The target answered with an HTTP error status.
    ErrorStatus {
        request: String,
        status: String,
        body: String,
    },
    /// The target answered something that is not an answer to the request.
    NotAnAnswer {
        request: String,
        why: String,
        body: String,
    },
    /// The target's process died.
    Died(String),
    /// The target stopped answering and did not answer again within `waited`.
    StoppedAnswering { waited: Duration, why: String },
    /// The run was interrupted while the target was waited for.
    Interrupted,
    /// In-process SQLite failed at something around the measured statements (checking,
    /// dropping, its lock, a request it cannot run), with its error text.
    InProcess(String),
}

impl std::fmt::Display for TargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetError::NoAnswer { request, why } => write!(f, "{request} failed: {why}"),
            TargetError::ErrorStatus {
                request,
                status,
                body,
            } => write!(f, "{request} answered {status}: {body}"),
            TargetError::NotAnAnswer { request, why, body } => {
                write!(f, "{request} answered something unexpected ({why}): {body}")
            }
            TargetError::Died(why) => f.write_str(why),
            TargetError::StoppedAnswering { waited, why } => {
                write!(
                    f,
                    "the target did not answer again within {waited:.0?}: {why}"
                )
            }
            TargetError::Interrupted => f.write_str("interrupted"),
            TargetError::InProcess(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for TargetError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts the records kept before the failures were typed.
    #[test]
    fn each_failure_says_what_it_always_said() {
        let request = || "POST http://127.0.0.1:8787/probe".to_owned();
        let texts = [
            (
                TargetError::NoAnswer {
                    request: request(),
                    why: "timeout".into(),
                },
                "POST http://127.0.0.1:8787/probe failed: timeout",
            ),
            (
                TargetError::ErrorStatus {
                    request: request(),
                    status: "500 Internal Server Error".into(),
                    body: "boom".into(),
                },
                "POST http://127.0.0.1:8787/probe answered 500 Internal Server Error: boom",
            ),
            (
                TargetError::NotAnAnswer {
                    request: request(),
                    why: "expected value at line 1 column 1".into(),
                    body: "<html>".into(),
                },
                "POST http://127.0.0.1:8787/probe answered something unexpected (expected value \
                 at line 1 column 1): <html>",
            ),
            (
                TargetError::StoppedAnswering {
                    waited: Duration::from_millis(60_400),
                    why: "GET /health".into(),
                },
                "the target did not answer again within 60s: GET /health",
            ),
            (TargetError::Interrupted, "interrupted"),
        ];
        for (error, text) in texts {
            assert_eq!(error.to_string(), text);
        }
    }
}
