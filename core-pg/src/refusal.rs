//! Postgres's errors sorted into the core's refusal kinds ([`RefusalKind`]), by the SQLSTATE the
//! Worker writes into every error text (`... (SQLSTATE 53300)`), and by the client's own words
//! for what it refuses before sending. A code no rule knows is [`RefusalKind::Other`], an error
//! whose text is kept, as the core's classifier does for D1.

use d1bench_core::{Outcome, RefusalKind};

/// How the Worker ends an error text that carries Postgres's code: `(SQLSTATE XXXXX)`.
pub fn with_sqlstate(message: &str, code: &str) -> String {
    format!("{message} (SQLSTATE {code})")
}

/// Each rule: a fragment (matched case-insensitively) and the kind it means; the first match
/// wins.
const RULES: &[(&str, RefusalKind)] = &[
    // The server's answer to a statement with more parameters than the protocol counts, and
    // the client's when it cannot encode that many.
    (
        "number of parameters must be between 0 and 65535",
        RefusalKind::TooManyVariables,
    ),
    ("too many parameters", RefusalKind::TooManyVariables),
    // A message (a statement's text) past the server's 1 GiB: the server drops the connection
    // after `invalid message length`; 54000 program_limit_exceeded covers "statement too
    // complex" and strings past the 1 GB field limit.
    ("invalid message length", RefusalKind::StatementTooLong),
    ("(sqlstate 54001)", RefusalKind::StatementTooLong),
    ("(sqlstate 54011)", RefusalKind::TooManyColumns),
    ("(sqlstate 54000)", RefusalKind::StringOrBlobTooBig),
    // 53300 too_many_connections ("sorry, too many clients already") and 53000
    // insufficient_resources: the server's capacity, a transient refusal, as D1's overload.
    ("(sqlstate 53300)", RefusalKind::Overloaded),
    ("(sqlstate 53000)", RefusalKind::Overloaded),
    ("(sqlstate 53200)", RefusalKind::MemoryLimit),
    // 57014 query_canceled: statement_timeout ran out.
    ("(sqlstate 57014)", RefusalKind::QueryTimeout),
    // 40P01 deadlock_detected, 55P03 lock_not_available, 40001 serialization_failure.
    ("(sqlstate 40p01)", RefusalKind::Busy),
    ("(sqlstate 55p03)", RefusalKind::Busy),
    ("(sqlstate 40001)", RefusalKind::Busy),
    // 57P01 admin_shutdown and friends, and a connection that closed under the query.
    ("(sqlstate 57p01)", RefusalKind::NetworkLost),
    ("connection closed", RefusalKind::NetworkLost),
];

/// The refusal kind of an error text from the Postgres Worker.
pub fn classify_text(text: &str) -> RefusalKind {
    let lower = text.to_ascii_lowercase();
    RULES
        .iter()
        .find(|(fragment, _)| lower.contains(fragment))
        .map_or(RefusalKind::Other, |&(_, kind)| kind)
}

/// The outcome of an error text (or of none), as the core's `ladder::classify` gives D1's.
pub fn classify(error: Option<&str>) -> (Outcome, Option<RefusalKind>) {
    match error {
        None => (Outcome::Ok, None),
        Some(text) => match classify_text(text) {
            RefusalKind::Other => (Outcome::Error, Some(RefusalKind::Other)),
            kind => (Outcome::Refused, Some(kind)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_refusals_are_sorted_by_their_sqlstate() {
        let refused = |message: &str, code: &str| classify_text(&with_sqlstate(message, code));
        assert_eq!(
            refused("sorry, too many clients already", "53300"),
            RefusalKind::Overloaded
        );
        assert_eq!(
            refused("tables can have at most 1600 columns", "54011"),
            RefusalKind::TooManyColumns
        );
        assert_eq!(
            refused("number of parameters must be between 0 and 65535", "08P01"),
            RefusalKind::TooManyVariables
        );
        assert_eq!(
            refused("canceling statement due to statement timeout", "57014"),
            RefusalKind::QueryTimeout
        );
        assert_eq!(refused("deadlock detected", "40P01"), RefusalKind::Busy);
        assert_eq!(
            refused("relation \"t_1\" does not exist", "42P01"),
            RefusalKind::Other
        );
        assert_eq!(classify(None), (Outcome::Ok, None));
        assert_eq!(
            classify(Some(
                "invalid byte sequence for encoding \"UTF8\": 0x00 (SQLSTATE 22021)"
            )),
            (Outcome::Error, Some(RefusalKind::Other))
        );
        assert_eq!(
            classify(Some("sorry, too many clients already (SQLSTATE 53300)")),
            (Outcome::Refused, Some(RefusalKind::Overloaded))
        );
    }
}
